"""Label validation kit: blind sheets, Fleiss' kappa, agreement, unanimity, disagreements."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from authpairs.cli import app
from authpairs.commands.authoring import render_public
from authpairs.tracks.language.annotate import (
    AnnotationError,
    export_sheets,
    fleiss_kappa,
    read_answers,
    read_key,
    score_answers,
)
from authpairs.tracks.language.cases import load_language_dataset

KIT = Path(__file__).parent / "fixtures" / "kit"
runner = CliRunner()


def test_fleiss_kappa_known_values() -> None:
    # Perfect agreement on a mix of categories.
    assert fleiss_kappa([{"lawful": 3, "forbidden": 0}, {"lawful": 0, "forbidden": 3}]) == 1.0
    # Worked by hand: 4 items, 3 raters.
    counts = [{"lawful": 3, "forbidden": 0}, {"lawful": 2, "forbidden": 1},
              {"lawful": 0, "forbidden": 3}, {"lawful": 1, "forbidden": 2}]
    p_bar = (1 + 1 / 3 + 1 + 1 / 3) / 4
    p_e = 0.5 ** 2 + 0.5 ** 2
    assert fleiss_kappa(counts) == pytest.approx((p_bar - p_e) / (1 - p_e))
    # Undefined: one rater, or every rating in one category.
    assert fleiss_kappa([{"lawful": 1, "forbidden": 0}]) is None
    assert fleiss_kappa([{"lawful": 2, "forbidden": 0}]) is None
    assert fleiss_kappa([]) is None


def test_export_is_blind_and_shuffled(tmp_path: Path) -> None:
    dataset = load_language_dataset(root=KIT)
    key_path = tmp_path / "key.json"
    assert export_sheets(dataset, tmp_path / "sheets", key_path, render_public, seed=3) == 12
    sheet = (tmp_path / "sheets" / "items.md").read_text(encoding="utf-8")
    handed_out = sheet + (tmp_path / "sheets" / "answers.csv").read_text(encoding="utf-8")
    for case in dataset.cases:
        assert case.case_id not in handed_out
        assert case.attributes["scenario"] not in handed_out
        assert case.attributes["path"] not in handed_out
        assert case.public.policy.text.strip().splitlines()[0] in sheet
    assert "lawful" not in handed_out.replace("**lawful**", "").replace("`lawful`", "")
    assert sorted(p.name for p in (tmp_path / "sheets").iterdir()) == ["answers.csv",
                                                                        "items.md"]
    key = read_key(key_path)
    assert list(key) == [f"item-{n}" for n in range(1, 13)]
    order = list(key.values())
    assert sorted(order) == sorted(c.case_id for c in dataset.cases)
    assert order != [c.case_id for c in dataset.cases]  # shuffled
    export_sheets(dataset, tmp_path / "again", tmp_path / "key2.json", render_public, seed=3)
    assert read_key(tmp_path / "key2.json") == key  # reproducible from the seed


def test_key_may_not_sit_in_the_sheets(tmp_path: Path) -> None:
    with pytest.raises(AnnotationError, match="must not be inside"):
        export_sheets(load_language_dataset(root=KIT), tmp_path, tmp_path / "key.json",
                      render_public)


def _write(path: Path, decisions: dict[str, str]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["item", "decision", "note"])
        for item, decision in decisions.items():
            writer.writerow([item, decision, ""])
    return path


def _flip(label: str) -> str:
    return "forbidden" if label == "lawful" else "lawful"


def test_score(tmp_path: Path) -> None:
    dataset = load_language_dataset(root=KIT)
    export_sheets(dataset, tmp_path / "sheets", tmp_path / "key.json", render_public)
    key = read_key(tmp_path / "key.json")
    labels = {c.case_id: str(c.reference.label) for c in dataset.cases}
    reference = {item: labels[case_id] for item, case_id in key.items()}
    ann = {"ana": dict(reference), "bo": dict(reference), "cy": dict(reference)}
    ann["bo"]["item-2"] = _flip(reference["item-2"])        # one dissent: majority right
    ann["bo"]["item-5"] = _flip(reference["item-5"])        # two dissent: majority wrong
    ann["cy"]["item-5"] = _flip(reference["item-5"])
    score = score_answers(dataset, key, ann)
    assert (score.n_items, score.unanimous, score.unanimous_matching) == (12, 10, 10)
    assert score.agreement == {"ana": 12, "bo": 10, "cy": 11}
    assert score.majority_matching == 11
    assert [(d.item, d.majority) for d in score.disagreements] == [
        ("item-2", reference["item-2"]), ("item-5", _flip(reference["item-5"]))]
    n_lawful = sum(v.count("lawful") for v in ([a[i] for a in ann.values()] for i in key))
    p_l = n_lawful / 36
    p_bar = (10 + 2 * (1 / 3)) / 12
    p_e = p_l ** 2 + (1 - p_l) ** 2
    assert score.kappa == pytest.approx((p_bar - p_e) / (1 - p_e))
    assert "agreed on 10 of 12 contexts (Fleiss' kappa = " in score.summary()

    files = [_write(tmp_path / f"{name}.csv", decisions) for name, decisions in ann.items()]
    result = runner.invoke(app, ["data", "annotate", "score", *map(str, files), "--key",
                                 str(tmp_path / "key.json"), "--root", str(KIT), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["unanimous"] == 10 and report["agreement_with_reference"]["bo"] == 10
    result = runner.invoke(app, ["data", "annotate", "score", *map(str, files), "--key",
                                 str(tmp_path / "key.json"), "--root", str(KIT)])
    assert result.exit_code == 0, result.output
    assert "adjudicate item-5" in result.output


def test_answer_file_errors(tmp_path: Path) -> None:
    items = {"item-1", "item-2"}
    bad = _write(tmp_path / "x.csv", {"item-1": "lawful", "item-2": "maybe"})
    with pytest.raises(AnnotationError, match=r"x.csv: line 3 \(item-2\): decision must be"):
        read_answers(bad, items)
    short = _write(tmp_path / "y.csv", {"item-1": "lawful"})
    with pytest.raises(AnnotationError, match="1 item\\(s\\) without a decision: item-2"):
        read_answers(short, items)
    unknown = _write(tmp_path / "z.csv", {"item-9": "lawful"})
    with pytest.raises(AnnotationError, match="unknown item 'item-9'"):
        read_answers(unknown, items)


def test_cli_export(tmp_path: Path) -> None:
    out = tmp_path / "sheets"
    result = runner.invoke(app, ["data", "annotate", "export", "--root", str(KIT), "--out",
                                 str(out)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "sheets.key.json").is_file()
    assert "wrote 12 items" in result.output
