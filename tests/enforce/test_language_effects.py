"""Every authored language-track effect validates, executes and verifies in the sandbox."""

from __future__ import annotations

from pathlib import Path

from authpairs.cases.effect_types import parse_params
from authpairs.cases.models import EffectDescriptor
from authpairs.enforce.enforcer import LocalEnforcer
from authpairs.review.outcome import Dispatch
from authpairs.tracks.language.loader import load_scenario_file, scenario_files


def _effects() -> list[tuple[str, EffectDescriptor]]:
    out = []
    for path in scenario_files():
        loaded = load_scenario_file(path)
        effect = loaded.scenario.effect
        out.append((loaded.path, EffectDescriptor(type=effect.type, params=effect.params)))
    return out


def test_authored_effects_execute_and_verify(tmp_path: Path) -> None:
    effects = _effects()
    assert effects, "no language scenarios found"
    with LocalEnforcer(tmp_path) as enf:
        for path, effect in effects:
            parse_params(effect)
            for context in ("c1", "c2", "c3", "c4"):
                dispatch = Dispatch.ALLOW if context in ("c1", "c3") else Dispatch.BLOCK
                rec = enf.enforce(f"{path}:{context}", effect, dispatch)
                assert rec.audit_ok, (path, context, rec.error, rec.observation.get("judgement"))
                assert rec.verified is (dispatch is Dispatch.ALLOW), path
