"""Clean exits: every expected error prints one clear ``error:`` line naming the file, line,
field or option, exits non-zero, and shows no traceback unless ``--debug``; datasets (effect
descriptors included) are validated before any model call; user text is never markup."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from authpairs.cases.examples import load_examples
from authpairs.cli import app
from tests.conftest import REPO_ROOT


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real entry point in a subprocess (tracebacks would show as they would for users)."""
    full_env = {**os.environ, "PYTHONPATH": f"{REPO_ROOT}{os.pathsep}"
                f"{os.environ.get('PYTHONPATH', '')}", **(env or {})}
    return subprocess.run([sys.executable, "-m", "authpairs.cli", *args], capture_output=True,
                          text=True, timeout=120, env=full_env, cwd=REPO_ROOT)


def _invoke(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The same CLI in-process (faster); an escaped exception fails the test loudly."""
    result = CliRunner().invoke(app, list(args), env=env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(list(args), result.exit_code, result.stdout,
                                       result.stderr)


def _one_clean_error(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    out = done.stdout + done.stderr
    assert done.returncode != 0, out
    assert "Traceback" not in out, out
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, out
    flat = " ".join(done.stderr.split())
    for needle in needles:
        assert needle in flat, out


@pytest.fixture
def bad_effect_dataset(tmp_path: Path) -> Path:
    rows = [c.model_dump(mode="json") for c in load_examples()]
    target = next(r for r in rows if r["public"].get("effect"))
    first_key = next(iter(target["public"]["effect"]["params"]))
    target["public"]["effect"]["params"][first_key] = {"not": "valid"}
    path = tmp_path / "bad-effect.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_bad_inputs_exit_cleanly(tmp_path: Path, bad_effect_dataset: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"case_id": "a"}\nnot json\n')
    _one_clean_error(_cli("run", "--dataset", str(broken), "--baseline", "always-allow",
                          "--records", str(tmp_path / "r.sqlite"), "--quiet"),
                     str(broken), "line 1")
    config = tmp_path / "c.yaml"
    config.write_text("reviewer:\n  interfase: direct\n")
    _one_clean_error(_invoke("run", "--config", str(config), "--quiet"), str(config),
                     "reviewer.interfase")
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"\x00garbage" * 300)
    _one_clean_error(_invoke("score", "x", "--records", str(junk)), str(junk),
                     "not a usable records file")
    _one_clean_error(_invoke("audit", "nope", "--records", str(junk)), "not a usable")


def test_effect_descriptors_are_checked_before_any_model_call(
        tmp_path: Path, bad_effect_dataset: Path) -> None:
    log = tmp_path / "calls.log"
    config = tmp_path / "s.yaml"
    config.write_text("reviewer:\n  interface: direct\n  backend:\n    kind: scripted\n"
                      "    script: tests.runs.scripts:slow_allow_logged\n")
    done = _invoke("run", "--config", str(config), "--dataset", str(bad_effect_dataset),
                "--split", "all", "--records", str(tmp_path / "r.sqlite"), "--quiet",
                env={"AUTHPAIRS_TEST_LOG": str(log)})
    _one_clean_error(done, str(bad_effect_dataset), "public.effect")
    assert not log.exists()  # no model call was made


def test_backend_errors_and_replay_misses_exit_cleanly(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    assert _invoke("run", "--dataset", "examples", "--split", "all", "--baseline",
                   "always-allow", "--records", str(db), "--run-id", "b", "--quiet",
                   "--no-enforce").returncode == 0
    config = tmp_path / "replay.yaml"
    config.write_text(f"reviewer:\n  interface: direct\n  backend:\n    kind: replay\n"
                      f"    store: {db}\n    run_id: b\n")
    done = _invoke("run", "--config", str(config), "--dataset", "examples", "--split", "all",
                   "--records", str(db), "--run-id", "r", "--quiet", "--no-enforce")
    _one_clean_error(done, "replay: run 'b' has no answer")
    scripted = tmp_path / "scripted.yaml"
    scripted.write_text("reviewer:\n  backend:\n    kind: scripted\n    script: no.such:thing\n")
    _one_clean_error(_invoke("run", "--config", str(scripted), "--quiet"), "cannot import")
    debug = _cli("--debug", "score", "x", "--records", str(tmp_path / "missing.sqlite"))
    assert debug.returncode != 0 and "Traceback" in debug.stderr


def test_run_ids_and_case_text_are_never_markup(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    run_id = "[bold red]x[/] [link=http://e]y[/link]"
    done = _invoke("run", "--dataset", "examples", "--split", "all", "--baseline",
                   "always-allow", "--records", str(db), "--run-id", run_id, "--no-enforce",
                   "--quiet")
    assert done.returncode == 0, done.stderr
    assert f"run {run_id}:" in done.stdout
    assert f"{run_id}: 8 of 8 cases" in done.stdout  # the score table's title
    listing = _invoke("runs", "--records", str(db))
    assert run_id in listing.stdout
    missing = _invoke("score", "[red]nope[/]", "--records", str(db))
    assert "[red]nope[/]" in missing.stderr
