"""Format cards: one per native interface, printed by the CLI, reproduced verbatim in the docs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from authpairs.cli import app
from authpairs.errors import ReviewerError
from authpairs.review.guardrails.cards import card_names, read_card
from authpairs.review.guardrails.native import NativeInterface
from authpairs.review.interfaces import INTERFACES

DOCS = Path(__file__).resolve().parents[3] / "docs" / "guardrails.md"
CARD_BLOCK = re.compile(r"<!-- card: (?P<name>[\w.-]+) -->\n(?P<body>.*?)<!-- /card: (?P=name) -->",
                        re.DOTALL)
SECTIONS = ("**Primary sources**", "**Prompt layout as sent**", "**Answer grammar**",
            "**Sampling, output limit and stop tokens**", "**Vendor parsers mirrored**",
            "**Deliberate differences**")


def native_interfaces() -> list[str]:
    """Every registered interface that is a native guardrail format."""
    return [name for name in INTERFACES.names()
            if issubclass(INTERFACES.get(name), NativeInterface)]


def test_every_native_interface_has_a_card() -> None:
    natives = native_interfaces()
    assert {"nemotron-safety", "llama-guard"} <= set(natives)
    missing = sorted(set(natives) - set(card_names()))
    assert not missing, f"native interfaces without a format card: {missing}"


CARDED_GUARDRAILS = {"nemo-self-check"}
"""Built-in guardrails with a vendor, which have a card too."""


def test_every_card_names_a_native_interface_and_has_every_section() -> None:
    natives = set(native_interfaces()) | CARDED_GUARDRAILS
    assert set(card_names()) >= CARDED_GUARDRAILS
    for name in card_names():
        assert name in natives, name
        card = read_card(name)
        assert card.startswith(f"### Format card: `{name}`\n"), name
        for section in SECTIONS:
            assert section in card, (name, section)


def test_docs_reproduce_every_card_verbatim() -> None:
    blocks = {m.group("name"): m.group("body") for m in CARD_BLOCK.finditer(DOCS.read_text())}
    assert sorted(blocks) == card_names()
    for name, body in blocks.items():
        assert body == read_card(name), f"docs/guardrails.md card {name!r} differs from its file"


def test_cli_prints_a_card() -> None:
    result = CliRunner().invoke(app, ["guardrails", "--card", "llama-guard"])
    assert result.exit_code == 0, result.output
    assert result.output == read_card("llama-guard")


def test_unknown_card_is_a_clear_error() -> None:
    with pytest.raises(ReviewerError, match="cards: "):
        read_card("no-such-guard")
    with pytest.raises(ReviewerError):
        read_card("../interfaces")
    result = CliRunner().invoke(app, ["guardrails", "--card", "no-such-guard"])
    assert result.exit_code == 2
    assert "no format card" in result.output
