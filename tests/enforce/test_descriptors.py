"""Typed descriptors accept exactly the documented params and reject malformed values."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from authpairs.cases.effect_params import MAX_CONTENT_BYTES, DescriptorError, LedgerTransfer
from authpairs.cases.effect_types import BUILT_IN_EFFECT_TYPES as EFFECT_TYPES
from authpairs.cases.effect_types import EFFECT_TYPES as REGISTERED
from authpairs.cases.effect_types import parse_params
from authpairs.cases.models import EffectDescriptor

from .helpers import SAMPLES, sample

DOC = Path(__file__).resolve().parents[2] / "docs" / "datasets" / "language-format.md"


def _documented_params() -> dict[str, set[str]]:
    table: dict[str, set[str]] = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\|\s*`([a-z_]+)`\s*\|(.*)\|\s*$", line)
        if m and m.group(1) in EFFECT_TYPES:
            table[m.group(1)] = set(re.findall(r"`([a-z_]+)`", m.group(2)))
    return table


def test_nine_types_match_the_documented_table() -> None:
    documented = _documented_params()
    assert len(EFFECT_TYPES) == 9
    assert set(documented) == set(EFFECT_TYPES)
    for effect_type in REGISTERED.names():
        model = REGISTERED.get(effect_type).params
        assert set(model.model_fields) == documented[effect_type], effect_type


@pytest.mark.parametrize("effect_type", EFFECT_TYPES)
def test_sample_parses(effect_type: str) -> None:
    params = parse_params(sample(effect_type))
    assert params.model_dump() == SAMPLES[effect_type]


@pytest.mark.parametrize("effect_type", EFFECT_TYPES)
def test_missing_and_extra_params_are_errors(effect_type: str) -> None:
    first = next(iter(SAMPLES[effect_type]))
    params = dict(SAMPLES[effect_type])
    del params[first]
    with pytest.raises(DescriptorError, match=f"effect '{effect_type}', param '{first}': is "
                                              "required"):
        parse_params(EffectDescriptor(type=effect_type, params=params))
    with pytest.raises(DescriptorError, match="param 'label': is not a parameter"):
        parse_params(sample(effect_type, label="lawful"))


def test_unknown_type() -> None:
    with pytest.raises(DescriptorError, match="unknown effect type"):
        parse_params(EffectDescriptor(type="wire_money", params={}))


@pytest.mark.parametrize(("effect_type", "field", "value", "message"), [
    ("ledger_transfer", "amount", 75.0, "valid string"),
    ("ledger_transfer", "amount", "75.001", "at most 2 decimals"),
    ("ledger_transfer", "amount", "0.00", "greater than zero"),
    ("ledger_transfer", "amount", "-5.00", "decimal string"),
    ("ledger_transfer", "currency", "usd", "currency code"),
    ("ledger_transfer", "to_account", "merchant-ops", "must differ"),
    ("order_creation", "quantity", "2", "valid integer"),
    ("order_creation", "quantity", True, "valid integer"),
    ("order_creation", "quantity", 0, "greater than or equal to 1"),
    ("deployment", "percentage", 101, "less than or equal to 100"),
    ("deployment", "version", "1.0 beta", "A-Za-z0-9"),
    ("reservation", "start", "2026-03-04 10:00:00", "canonical UTC"),
    ("reservation", "start", "2026-02-30T10:00:00Z", "not a valid time"),
    ("reservation", "end", "2026-03-04T09:00:00Z", "start must be before end"),
    ("byte_delivery", "file_name", "../x", "no paths"),
    ("byte_delivery", "file_name", "/etc/passwd", "no paths"),
    ("byte_delivery", "file_name", "..", "no paths"),
    ("byte_delivery", "file_name", ".hidden", "not starting with '.'"),
    ("byte_delivery", "recipient", "a\\b", "no paths"),
    ("byte_delivery", "content", "x" * (MAX_CONTENT_BYTES + 1), "the limit is"),
    ("byte_delivery", "content", "nul\x00byte", "control characters"),
    ("record_update", "record_id", "r'; DROP TABLE records;--", "no paths"),
    ("record_update", "field", "care\nplan", "line breaks"),
    ("document_signing", "signer", "   ", "must not be empty"),
    ("analysis_inclusion", "subject_id", "seed:001", "A-Za-z0-9"),
])
def test_bad_values_name_type_and_param(effect_type: str, field: str, value: object,
                                        message: str) -> None:
    with pytest.raises(DescriptorError) as info:
        parse_params(sample(effect_type, **{field: value}))
    text = str(info.value)
    assert text.startswith(f"effect '{effect_type}'")
    assert message in text
    if "must differ" not in message and "before end" not in message:
        assert f"param '{field}'" in text


def test_amount_with_one_decimal_and_none_is_accepted() -> None:
    p = parse_params(sample("ledger_transfer", amount="75"))
    assert isinstance(p, LedgerTransfer)
    assert parse_params(sample("ledger_transfer", amount="75.5")).model_dump()["amount"] == "75.5"


def test_non_descriptor_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="EffectDescriptor"):
        parse_params({"type": "ledger_transfer", "params": SAMPLES["ledger_transfer"]})  # type: ignore[arg-type]
