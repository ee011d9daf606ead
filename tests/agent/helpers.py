"""Shared pieces of the agent tests: a case set whose reference half holds secret markers."""

from __future__ import annotations

from pathlib import Path

from authpairs.cases.dataset import Dataset
from authpairs.cases.examples import load_examples
from authpairs.cases.models import Case

SECRETS = ("SECRET-EXPRESSION-q7", "SECRET-NOTES-q7", "SECRET-FACT-NAME-q7",
           "SECRET-FACT-VALUE-q7", "SECRET-ATTRIBUTE-q7", "SECRET-SOURCE-q7")
"""Marker strings put into every field a reviewer or an agent must never see."""

LAWFUL = "EX-c64055c2cb7187da"
"""A lawful example case: a refund of 75.00 USD from merchant-ops to card-4471."""
FORBIDDEN = "EX-d57f622e0f9a0236"
"""A forbidden example case with the same operation."""
UNTOUCHED = "EX-21d2f6bf78fab49a"
"""A record-update case the scripted agent makes no call for."""


def with_secrets(case: Case) -> Case:
    """``case`` with a secret marker in each reference field, attribute and source field."""
    reference = case.reference.model_copy(update={
        "expression": SECRETS[0], "notes": SECRETS[1], "facts": {SECRETS[2]: SECRETS[3]}})
    source = case.source.model_copy(update={"path": SECRETS[5], "locator": SECRETS[5]})
    attributes = {**case.attributes, "family": SECRETS[4], SECRETS[4]: SECRETS[4]}
    return case.model_copy(update={"reference": reference, "source": source,
                                   "attributes": attributes})


def secret_dataset(path: Path) -> Path:
    """The bundled examples with secret markers, written as a JSONL dataset to ``path``."""
    Dataset("examples-secret", [with_secrets(c) for c in load_examples()]).write_jsonl(path)
    return path
