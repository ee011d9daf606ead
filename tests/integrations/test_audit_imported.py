"""An imported Inspect run is audited by the same rules as any other run: the chain and the
header's seal, completeness, the re-parse with the interface it names, the inputs, effects."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from authpairs.cli import app
from authpairs.integrations.inspect_import import import_inspect_log
from authpairs.integrations.inspect_tasks import cases
from authpairs.runs.audit import audit_run
from authpairs.runs.store import RecordStore
from tests.integrations.conftest import INSPECT_WARNINGS, run_inspect

pytestmark = INSPECT_WARNINGS


@pytest.mark.slow  # several seconds: the slow tier (.ci/run) runs it
def test_an_imported_inspect_run_passes_the_audit(tmp_path: Path) -> None:
    log = run_inspect(cases(dataset="examples", interface="direct", split="all"),
                      tmp_path / "logs")
    records = tmp_path / "records.sqlite"
    import_inspect_log(Path(log.location), "imported", records)
    with RecordStore(records, readonly=True) as store:
        report = audit_run(store, "imported")
    assert report.ok, [str(f) for f in report.findings]
    assert not report.skipped and not report.missing
    assert report.checked["decisions re-parsed"] == 8 and report.checked["header seal"] == 1
    assert report.checked["effects re-judged"] == 8
    result = CliRunner().invoke(app, ["audit", "imported", "--records", str(records)])
    assert result.exit_code == 0 and "audit passed" in result.output, result.output
