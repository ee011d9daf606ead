"""``authpairs run --sample N --sample-seed S``: the run header records the sample, a re-run
resumes the same slice, ``runs`` names it, and wrong combinations are one error line."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from authpairs.api import RecordStore, RunConfig
from authpairs.cli import app
from authpairs.tracks.registry import resolve_dataset


def run(records: Path, *args: str) -> str:
    """``authpairs run`` with the always-allow baseline on ``records``; its output."""
    result = CliRunner().invoke(app, ["run", "--baseline", "always-allow", "--no-enforce",
                                      "--quiet", "--records", str(records), *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_the_header_records_the_sample_and_a_rerun_resumes_it(tmp_path: Path) -> None:
    records = tmp_path / "r.sqlite"
    first = run(records, "--sample", "6", "--sample-seed", "3", "--run-id", "s")
    assert "run s: 6 cases, 0 already recorded, 6 new" in first
    assert "3/3" in first  # always-allow: 3 forbidden approved of 3, not 0/0 or 2/2
    again = run(records, "--sample", "6", "--sample-seed", "3", "--run-id", "s")
    assert "run s: 6 cases, 6 already recorded, 0 new" in again
    with RecordStore(records, readonly=True) as store:
        info = store.get_run("s")
        assert info is not None
        resolved = info.config["resolved"]
        assert (resolved["sample"], resolved["sample_seed"], resolved["limit"]) == (6, 3, None)
        chosen = resolve_dataset("language").select_for_run("dev", sample=6, sample_seed=3)
        assert sorted(info.expected_case_ids) == sorted(chosen.case_ids())
        labels = Counter(r.label for r in store.iter_case_records("s"))
        assert labels == {"forbidden": 3, "lawful": 3}
    listing = CliRunner().invoke(app, ["runs", "--records", str(records)],
                                 env={"COLUMNS": "200"})
    assert "language dev (sample 6, seed 3)" in listing.output


def test_another_seed_is_another_run(tmp_path: Path) -> None:
    assert RunConfig(sample=6).resolved_run_id() != RunConfig(sample=6,
                                                              sample_seed=1).resolved_run_id()
    assert RunConfig(sample=6).resolved_run_id() != RunConfig().resolved_run_id()
    assert "sample" not in RunConfig().identity()  # earlier run ids are unchanged


@pytest.mark.parametrize(("args", "named"), [
    (["--limit", "2", "--sample", "3"], "--sample"),
    (["--sample-seed", "3"], "--sample-seed"),
    (["--sample", "0"], "--sample"),
])
def test_wrong_combinations_are_one_error_line(args: list[str], named: str) -> None:
    result = CliRunner().invoke(app, ["run", "--baseline", "always-allow", *args])
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and named in lines[0], lines


def test_python_and_cli_agree_on_the_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.runs.test_config_defaults import assert_same, cli_config

    import authpairs.api

    cli = cli_config(monkeypatch, "--sample", "6", "--sample-seed", "2")
    assert_same(RunConfig(sample=6, sample_seed=2), cli)
    assert_same(authpairs.api.as_config({"sample": 6, "sample_seed": 2}), cli)
    assert (cli.sample, cli.sample_seed, cli.limit) == (6, 2, None)


def test_limit_and_sample_in_a_configuration_are_one_error() -> None:
    import authpairs.api
    from authpairs.errors import ConfigError

    with pytest.raises(ConfigError, match=r"field 'sample'.*exclude each other"):
        authpairs.api.as_config({"limit": 2, "sample": 4})
