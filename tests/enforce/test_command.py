"""``authpairs data effects-check`` runs effects through a sandbox and reports the audit."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from authpairs.cli import app


@pytest.mark.slow  # several seconds: the slow tier (.ci/run) runs it
def test_effects_check_generated() -> None:
    result = CliRunner().invoke(app, ["data", "effects-check", "--generated"])
    assert result.exit_code == 0, result.output
    assert "all 400 records passed their audit" in result.output
    assert "document_signing" in result.output
