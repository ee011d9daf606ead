"""The architecture holds: import layers, one registry pattern, plugins, the public API."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import authpairs
from authpairs.backends.config import BACKEND_KINDS
from authpairs.cases.effect_types import EFFECT_TYPES
from authpairs.enforce.implementations import EFFECT_IMPLEMENTATIONS
from authpairs.registry import Registry, RegistryError
from authpairs.review.interfaces import INTERFACES
from authpairs.runs.config import RunConfig, config_from_dict
from authpairs.tracks.registry import TRACKS

from . import toy_plugin

ROOT = Path(__file__).resolve().parents[2]


def test_import_contracts_hold() -> None:
    """import-linter checks the layers in pyproject.toml: a back-edge fails this test."""
    linter = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(linter), "--no-cache"], cwd=ROOT, capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_importing_authpairs_is_cheap() -> None:
    """The package __init__ imports nothing of its subtree but its one-line version module;
    the API loads on first use."""
    code = ("import sys, authpairs\n"
            "print(sorted(m for m in sys.modules if m.startswith('authpairs.')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "['authpairs._version']"


def test_the_package_serves_the_api_in_a_fresh_interpreter() -> None:
    """``authpairs.run`` and ``from authpairs import *`` load the API on first use."""
    code = ("import authpairs\nassert authpairs.run.__module__ == 'authpairs.api'\n"
            "from authpairs import *\nassert RunConfig.__name__ == 'RunConfig'\n"
            "from authpairs import main_job\nprint(main_job.SEED)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0 and result.stdout.strip() == "7", result.stderr[-2000:]


def test_public_api_names() -> None:
    for name in ("RunConfig", "run", "run_async", "load_dataset", "open_records", "score",
                 "compare", "compose", "gate", "AuthpairsError"):
        assert name in authpairs.__all__
        assert getattr(authpairs, name) is not None
    with pytest.raises(AttributeError):
        _ = authpairs.no_such_name  # type: ignore[attr-defined]


@pytest.fixture
def toy() -> Iterator[None]:
    """Register the toy plugin for one test, then restore the registries."""
    saved = [(r, dict(r._loaded), dict(r._lazy)) for r in
             (INTERFACES, BACKEND_KINDS, EFFECT_TYPES, EFFECT_IMPLEMENTATIONS, TRACKS)]
    toy_plugin.register()
    yield
    for registry, loaded, lazy in saved:
        registry._loaded, registry._lazy = loaded, lazy


def test_toy_components_run_end_to_end(toy: None, tmp_path: Path) -> None:
    """One module plus one registration each: interface, backend kind, effect type, track."""
    config = config_from_dict({
        "dataset": "toy", "split": "dev", "records": str(tmp_path / "r.sqlite"),
        "reviewer": {"interface": "toy", "backend": {"kind": "toy", "word": "yes"}}})
    assert isinstance(config.reviewer.backend, toy_plugin.ToyBackendConfig)
    result = authpairs.run(config)
    assert result.scores.n == 2
    assert result.scores.incorrect_approvals == 1 and result.scores.correct == 1
    effects = [r.effect for r in result.records]
    assert all(e is not None and e.effect_type == "raise_flag" and e.executed and e.verified
               for e in effects)


def test_unknown_backend_kind_is_a_config_error() -> None:
    from authpairs.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown backend kind 'nope'"):
        config_from_dict({"reviewer": {"backend": {"kind": "nope"}}})


def test_backend_config_is_one_model_per_kind() -> None:
    openai = config_from_dict({"reviewer": {"backend": {
        "kind": "openai", "model": "m", "base_urls": ["http://127.0.0.1:1/v1"]}}})
    assert type(openai.reviewer.backend).__name__ == "OpenAIBackendConfig"
    from authpairs.errors import ConfigError

    with pytest.raises(ConfigError, match="base_urls"):  # a field of another kind
        config_from_dict({"reviewer": {"backend": {"kind": "local", "base_urls": ["x"]}}})


def test_identity_ignores_concurrency_and_urls() -> None:
    def make(**changes: object) -> RunConfig:
        backend = {"kind": "openai", "model": "m", "base_urls": ["http://a:1/v1"],
                   **{k: v for k, v in changes.items() if k != "concurrency"}}
        return config_from_dict({"reviewer": {"backend": backend},
                                 "concurrency": changes.get("concurrency", 4)})

    base = make()
    assert make(concurrency=32).sha256() == base.sha256()
    assert make(base_urls=["http://b:2/v1", "http://c:3/v1"]).sha256() == base.sha256()
    assert make(concurrency_per_endpoint=16).sha256() == base.sha256()
    assert make(model="other").sha256() != base.sha256()


def test_registry_lazy_loading_and_errors() -> None:
    registry: Registry[object] = Registry("things")
    registry.add_lazy("json-dumps", "json:dumps")
    assert "json-dumps" in registry and registry.names() == ["json-dumps"]
    import json

    assert registry.get("json-dumps") is json.dumps
    registry.add_lazy("broken", "no_such_module_xyz:thing")
    with pytest.raises(RegistryError, match="cannot import 'no_such_module_xyz'"):
        registry.get("broken")
    with pytest.raises(RegistryError, match=r"unknown thing 'zzz' \(known: broken, json-dumps\)"):
        registry.get("zzz")


def test_entry_point_plugins_are_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pip-installed distribution's entry points register components with no code change."""
    dist = tmp_path / "toyplugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toyplugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[authpairs.interfaces]\ntoy = tests.architecture.toy_plugin:ToyInterface\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry: Registry[object] = Registry("interfaces")
    assert "toy" in registry.names()
    entry = next(e for e in registry.entries() if e.name == "toy")
    assert entry.origin == "plugin: toyplugin"
    assert registry.get("toy") is toy_plugin.ToyInterface


def test_switching_backend_kind_drops_the_old_kinds_settings() -> None:
    """`--backend openai` over a file written for the local server is not an error."""
    config = config_from_dict(
        {"reviewer": {"backend": {"kind": "local", "n_ctx": 4096}}},
        {"reviewer.backend.kind": "openai", "reviewer.backend.model": "m",
         "reviewer.backend.base_urls": ["http://127.0.0.1:9/v1"]})
    assert config.reviewer.backend.kind == "openai"


def test_progress_display_protocol(tmp_path: Path) -> None:
    """A run reports through a small protocol; the API is silent unless given a display."""

    class Recorder:
        def __init__(self) -> None:
            self.events: list[str] = []

        def start(self, run_id: str, total: int, done: int) -> None:
            self.events.append(f"start {total} {done}")

        def advance(self) -> None:
            self.events.append("advance")

        def note(self, message: str | None) -> None:
            self.events.append(f"note {message}")

        def close(self) -> None:
            self.events.append("close")

    shown = Recorder()
    authpairs.run({"dataset": "examples", "reviewer": {"baseline": "always-block"},
                   "records": str(tmp_path / "p.sqlite")}, progress=shown)
    assert shown.events[0] == "start 8 0" and shown.events[-1] == "close"
    assert shown.events.count("advance") == 8


def test_run_inside_a_running_event_loop(tmp_path: Path) -> None:
    """`authpairs.run` works where a loop is already running (Jupyter)."""
    import asyncio

    async def notebook_cell() -> authpairs.RunResult:
        return authpairs.run({"dataset": "examples", "reviewer": {"baseline": "always-allow"},
                              "records": str(tmp_path / "nb.sqlite")})

    result = asyncio.run(notebook_cell())
    assert result.scores.n == 8 and len(result.records) == 8
    assert "usable" in result._repr_html_()
