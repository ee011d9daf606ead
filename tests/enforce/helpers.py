"""Test helpers: one realistic sample descriptor per effect type."""

from __future__ import annotations

from typing import Any

from authpairs.cases.models import EffectDescriptor

SAMPLES: dict[str, dict[str, Any]] = {
    "ledger_transfer": {"from_account": "merchant-ops", "to_account": "card-ending-4471",
                        "amount": "75.00", "currency": "USD"},
    "order_creation": {"order_id": "PO-77120", "vendor": "Aldous Scientific",
                       "item": "benchtop centrifuge C12", "quantity": 2, "unit_price": "2640.00",
                       "currency": "USD"},
    "record_update": {"record_id": "careplan-HPG-204817", "field": "care_plan",
                      "value": "mobilise twice daily"},
    "byte_delivery": {"recipient": "auditor-7", "file_name": "q1-ledger.csv",
                      "content": "date,amount\n2026-03-01,75.00\n"},
    "deployment": {"service": "checkout", "version": "2.4.1",
                   "content": "<html><body>checkout 2.4.1</body></html>", "percentage": 10},
    "document_signing": {"document_id": "DOC-551", "file_name": "supply-agreement.txt",
                         "content": "Supply agreement between Halvorsen Ltd and Orbis.\n",
                         "signer": "Dana Park"},
    "reservation": {"resource_id": "lab-3", "holder": "Ana Silva",
                    "start": "2026-03-04T10:00:00Z", "end": "2026-03-04T12:00:00Z"},
    "analysis_inclusion": {"dataset": "hf-readmit-cohort", "subject_id": "HFR-00417"},
    "download_delivery": {"recipient": "lina.okafor", "file_name": "export-2026-03.zip",
                          "content": "complete export payload\n" * 20},
}
"""One realistic descriptor per effect type (params exactly as in language-format.md)."""


def sample(effect_type: str, **overrides: Any) -> EffectDescriptor:
    """The sample descriptor of ``effect_type`` with some params replaced."""
    return EffectDescriptor(type=effect_type, params={**SAMPLES[effect_type], **overrides})
