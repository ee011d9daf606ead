"""Every user mistake has one shape: one ``error:`` line on stderr naming the option, file or
field and ending in a hint of what to do, nothing on stdout, exit code 2 (issue 25, point 6).

The table runs each mistake in-process (typer's CliRunner, stderr kept apart); a few run as a
real subprocess too, to prove the shape the shell sees.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from authpairs.cli import app

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A records file holding one two-case baseline run, and broken input files."""
    root = tmp_path_factory.mktemp("mistakes")
    records = root / "runs.sqlite"
    result = CliRunner().invoke(app, ["run", "--baseline", "always-allow", "--limit", "2",
                                      "--run-id", "ok", "--records", str(records), "--quiet"])
    assert result.exit_code == 0, result.output
    (root / "empty.yaml").write_text("")
    (root / "list.yaml").write_text("- a\n- b\n")
    (root / "broken.yaml").write_text("dataset: [unclosed\n")
    (root / "typo.yaml").write_text("datset: language\n")
    (root / "badsplit.yaml").write_text("split: nope\n")
    (root / "notdb.sqlite").write_text("this is not a records file\n")
    (root / "bad.jsonl").write_text("{not json\n")
    return {"records": str(records), "root": str(root)}


# (command line, the text(s) the error line must contain); {records} and {root} are filled in.
MISTAKES: list[tuple[str, str | tuple[str, ...]]] = [
    ("nosuchcommand", "nosuchcommand"),
    ("--bogus", "--bogus"),
    ("run --bogus", "--bogus"),
    ("run --concurrency x", "--concurrency"),
    ("run --concurrency 0", "concurrency"),
    ("run --limit x", "--limit"),
    ("run --limit -1", "limit"),
    ("run --temperature hot", "--temperature"),
    ("run --top-p x", "--top-p"),
    ("run --top-k x", "--top-k"),
    ("run --max-tokens x", "--max-tokens"),
    ("run --seed x", "--seed"),
    ("run --deadline x", "--deadline"),
    ("run --split nope", "split"),
    ("run --interface nosuchinterface", "nosuchinterface"),
    ("run --baseline nosuchbaseline", ("reviewer.baseline", "'nosuchbaseline'")),
    ("run --baseline always-alow", ("'always-alow'", "nearest: 'always-allow'")),
    ("run --split tes", ("'tes'", "nearest: 'test'")),
    ("run --guardrail collections:Counter", ("collections:Counter", "is a class")),
    ("run --guardrail tests.commands.test_user_errors:OneArgument",
     ("OneArgument", "is a class")),
    ("run --dataset examples --baseline always-allow --records {root}/by.sqlite --by nosuch",
     ("--by", "'nosuch'", "case of the run")),
    ("run --guardrail nosuchguardrail", "nosuchguardrail"),
    ("run --guardrail os:getcwd", "os:getcwd"),
    ("run --guardrail os:sep", "os:sep"),
    ("run --guardrail nosuchmodule_xyz:review", "nosuchmodule_xyz"),
    ("run --guardrail collections:Counter.nosuch", "collections:Counter.nosuch"),
    ("run --backend nosuchbackend", "nosuchbackend"),
    ("run --backend openai --model m --base-url 127.0.0.1:9", "base_urls"),
    ("run --backend openai --model m --base-url ftp://host", "base_urls"),
    ("run --config {root}/missing.yaml", "missing.yaml"),
    ("run --config {root}/empty.yaml", "empty.yaml"),
    ("run --config {root}/list.yaml", "list.yaml"),
    ("run --config {root}/broken.yaml", "broken.yaml"),
    ("run --config {root}/typo.yaml", "datset"),
    ("run --config {root}/badsplit.yaml", "split"),
    ("run --dataset {root}/missing.jsonl", "missing.jsonl"),
    ("run --dataset {root}/bad.jsonl", "bad.jsonl"),
    ("run --guardrail-option novalue --guardrail examples.guard:review", "novalue"),
    ("run --enforce x", "x"),
    ("score", "run"),
    ("score nosuchrun --records {records}", "nosuchrun"),
    ("score ok --records {root}/missing.sqlite", "missing.sqlite"),
    ("score ok --records {root}/notdb.sqlite", "notdb.sqlite"),
    ("score ok --records {records} --by nosuchfield", "--by"),
    ("score ok ok --records {records} --by nosuchfield", "nosuchfield"),
    ("export nosuchrun --records {records} --out {root}/x.jsonl", "nosuchrun"),
    ("compare", "run_a"),
    ("compare ok", "run_b"),
    ("compare ok nosuchrun --records {records}", "nosuchrun"),
    ("compare ok ok --records {records} --draws x", "--draws"),
    ("audit nosuchrun --records {records}", "nosuchrun"),
    ("runs --records {root}/missing.sqlite", "missing.sqlite"),
    ("show-prompt", "case_id"),
    ("show-prompt nosuchcase", "nosuchcase"),
    ("show-prompt {case} --interface nosuchinterface", "nosuchinterface"),
    ("report ok --records {root}/missing.sqlite --out {root}/r", "missing.sqlite"),
    ("report --records {records} --out {root}/r", "runs"),
    ("gate", "Missing"),
    ("study {root}/missing.yaml", "missing.yaml"),
    ("contrasts {root}/missing.yaml", "missing.yaml"),
    ("data nosuchsubcommand", "nosuchsubcommand"),
    ("data check --bogus", "--bogus"),
]


class OneArgument:
    """Not a guardrail, though ``OneArgument(case)`` is a call that works."""

    def __init__(self, case: object) -> None:
        self.case = case


def first_case_id() -> str:
    """The id of one real dev case, for the show-prompt mistakes."""
    from authpairs.api import load_dataset

    return load_dataset("language", "dev", 1).case_ids()[0]


def fill(line: str, files: dict[str, str]) -> list[str]:
    """The argument list of a table line with its placeholders filled in."""
    text = line.replace("{records}", files["records"]).replace("{root}", files["root"])
    if "{case}" in text:
        text = text.replace("{case}", first_case_id())
    return text.split()


def test_the_table_is_large() -> None:
    assert len(MISTAKES) >= 40
    assert len({line for line, _ in MISTAKES}) == len(MISTAKES)


@pytest.mark.parametrize(("line", "named"), MISTAKES, ids=[line for line, _ in MISTAKES])
def test_one_error_line(line: str, named: str | tuple[str, ...], files: dict[str, str]) -> None:
    result = CliRunner().invoke(app, fill(line, files))
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    for text in (named,) if isinstance(named, str) else named:
        assert text in lines[0]
    _message, mark, hint = lines[0].partition("(hint: ")
    assert mark, f"no hint: {lines[0]}"
    assert hint.endswith(")") and len(hint.split()) >= 2, lines[0]


def test_run_with_a_mistyped_by_reviews_nothing(files: dict[str, str]) -> None:
    records = Path(files["root"]) / "by-typo.sqlite"
    result = CliRunner().invoke(app, ["run", "--dataset", "examples", "--baseline",
                                      "always-allow", "--records", str(records), "--by", "famly"])
    assert result.exit_code == 2 and "'famly'" in result.stderr
    assert not records.exists()  # refused before the run opened its records file
    result = CliRunner().invoke(app, ["run", "--dataset", "examples", "--baseline",
                                      "always-allow", "--records", str(records), "--by", "family",
                                      "--quiet"])
    assert result.exit_code == 0, result.output
    assert "by family" in result.stdout


def test_an_error_of_the_family_brings_its_hint() -> None:
    from authpairs.errors import ConfigError, RecordsError, error_message

    assert error_message(RecordsError("x.sqlite: records file not found")).endswith(
        "(hint: 'authpairs runs --records FILE' lists the runs a records file holds; "
        "'authpairs run --records FILE' records a run into it)")
    assert "authpairs study --help" in error_message(ConfigError("bad"), "authpairs study")
    assert error_message(ConfigError("bad", hint="do this")) == "bad (hint: do this)"
    assert error_message("done (hint: already)") == "done (hint: already)"
    assert error_message(ValueError("outside")).startswith("outside (hint: run 'authpairs")


@pytest.mark.slow
@pytest.mark.parametrize("line", ["run --concurrency x", "nosuchcommand", "compare ok",
                                  "run --guardrail os:getcwd"])
def test_the_real_process_shows_the_same_shape(line: str, files: dict[str, str]) -> None:
    done = subprocess.run([sys.executable, "-m", "authpairs.cli", *fill(line, files)],
                          capture_output=True, text=True, cwd=REPO, timeout=120, check=False)
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith("error: ")
