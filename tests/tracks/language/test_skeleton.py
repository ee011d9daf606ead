"""``data new-scenario``: the skeleton has the full shape, fails ``data check`` on every
placeholder, and passes once filled in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from authpairs.cli import app
from authpairs.tracks.language.checks import check_language
from authpairs.tracks.language.skeleton import skeleton_yaml, write_skeleton

runner = CliRunner()

_TEXTS = {
    "c1": ("Loan desk", "Grant G-1 to Ana Velez: payments up to EUR 500, status active."),
    "c2": ("Treasury office", "Grant G-2 to Ana Velez: payments up to EUR 900, status active."),
    "c3": ("Loan desk", "Grant G-3 to Ana Velez: payments up to EUR 100, status active."),
    "c4": ("Loan desk", "Grant G-4 to Ana Velez: payments up to EUR 500, status lapsed."),
}


def _fill(data: dict[str, Any]) -> None:
    """What an author writes into the skeleton's placeholders."""
    data.update(title="Filled skeleton", policy="Payments need an active grant to the person "
                "whose limit covers the amount.\n")
    data["request"].update(subject="agent acting for Ana Velez", action="pay_supplier",
                           resource="supplier invoice 17", purpose="pay invoice 17")
    data["request"]["arguments"].update(on_behalf_of="Ana Velez", amount=250)
    data["request"]["environment"]["channel"] = "portal"
    data["effect"]["params"].update(from_account="ops-eur", to_account="supplier-17",
                                    amount="250.00", currency="EUR")
    for context in data["contexts"]:
        issuer, text = _TEXTS[context["id"]]
        context["path"] = "grant-path"
        doc = context["documents"][0]
        doc.update(issuer=issuer, text=text)
        limit = text.split("EUR ")[1].split(",")[0]
        status = text.split("status ")[1].rstrip(".")
        context["facts"] = {
            "grant.holder": {"value": "Ana Velez", "type": "string", "source": "d1",
                             "quote": "Ana Velez"},
            "grant.status": {"value": status, "type": "string", "source": "d1",
                             "quote": f"status {status}"},
            "grant.limit": {"value": int(limit), "type": "number", "source": "d1",
                            "quote": f"EUR {limit}"},
        }


def test_skeleton_fails_on_placeholders_then_passes_filled(tmp_path: Path) -> None:
    path = write_skeleton(tmp_path, "payments", "amount_interval")
    assert path == tmp_path / "payments" / "new-amount-interval-scenario.yaml"
    report = check_language(tmp_path)
    placeholders = [e for e in report.errors if "unfilled placeholder" in e.message]
    assert len(placeholders) > 20
    assert {e.context for e in placeholders} == {"", "c1", "c2", "c3", "c4"}
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    _fill(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    report = check_language(tmp_path)
    assert report.ok, [str(e) for e in report.errors]
    assert report.determinate_reproduced == 4


@pytest.mark.parametrize("domain", ["payments", "clinical", "software", "education",
                                    "documents"])
def test_every_domain_skeleton_is_valid_yaml_with_four_contexts(domain: str) -> None:
    text = skeleton_yaml(domain, "relationship", "my-scenario")
    data = yaml.safe_load(text)
    assert [c["id"] for c in data["contexts"]] == ["c1", "c2", "c3", "c4"]
    assert [c["label"] for c in data["contexts"]].count("lawful") == 2
    assert "# " in text  # commented


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="unknown domain"):
        skeleton_yaml("banking", "relationship", "x")
    with pytest.raises(ValueError, match="unknown family"):
        skeleton_yaml("payments", "friendship", "x")
    with pytest.raises(ValueError, match="kebab-case"):
        skeleton_yaml("payments", "relationship", "Bad_Slug")


def test_cli_new_scenario(tmp_path: Path) -> None:
    args = ["data", "new-scenario", "--domain", "clinical", "--family", "break_glass",
            "--out", str(tmp_path), "--slug", "er-access"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "clinical" / "er-access.yaml").is_file()
    again = runner.invoke(app, args)
    assert again.exit_code == 1
    assert "exists" in again.output


@pytest.mark.parametrize("domain", ["payments", "clinical", "software", "education",
                                    "documents"])
def test_skeleton_effect_params_are_the_effect_types_params(tmp_path: Path,
                                                             domain: str) -> None:
    write_skeleton(tmp_path, domain, "relationship", "probe")
    errors = check_language(tmp_path).errors
    effect_errors = [e for e in errors if e.field.startswith("effect.")
                     and "unfilled placeholder" not in e.message]
    # only placeholder-typed values may be wrong (e.g. the decimal), never a missing/extra param
    assert not [e for e in effect_errors if "required" in e.message
                or "not a parameter" in e.message], effect_errors
