"""Generated, realistic effect descriptors (for the benchmark and the effects check when the
language dataset is not available). Deterministic: the nine types in turn, fictional names."""

from __future__ import annotations

from typing import Any

from authpairs.cases.effect_types import BUILT_IN_EFFECT_TYPES as EFFECT_TYPES
from authpairs.cases.models import EffectDescriptor


def generated_descriptors(n: int = 200) -> list[tuple[str, EffectDescriptor]]:
    """``n`` deterministic descriptors, the nine types in turn, with realistic parameters."""
    out: list[tuple[str, EffectDescriptor]] = []
    for i in range(n):
        t = EFFECT_TYPES[i % len(EFFECT_TYPES)]
        k = 1000 + i
        choices: dict[str, dict[str, Any]] = {
            "ledger_transfer": {"from_account": f"merchant-ops-{k}",
                                "to_account": f"card-ending-{k}", "amount": f"{75 + i}.50",
                                "currency": "USD"},
            "order_creation": {"order_id": f"PO-{k}", "vendor": "Aldous Scientific",
                               "item": f"benchtop centrifuge C{i}", "quantity": 1 + i % 7,
                               "unit_price": "2640.00", "currency": "EUR"},
            "record_update": {"record_id": f"careplan-HPG-{k}", "field": "care_plan",
                              "value": f"mobilise twice daily; review on day {i % 9 + 1}"},
            "byte_delivery": {"recipient": f"auditor-{k}", "file_name": f"ledger-{k}.csv",
                              "content": "date,amount\n" + "2026-03-01,75.00\n" * (1 + i % 40)},
            "deployment": {"service": f"checkout-{k}", "version": f"2.{i}.1",
                           "content": f"<html><body>release 2.{i}.1</body></html>" * 10,
                           "percentage": 1 + (i * 7) % 100},
            "document_signing": {"document_id": f"DOC-{k}", "file_name": f"agreement-{k}.txt",
                                 "content": f"Supply agreement {k}.\n" * 30,
                                 "signer": f"Signer {i % 12}"},
            "reservation": {"resource_id": f"lab-{i % 5}", "holder": f"Researcher {i}",
                            "start": f"2026-03-{1 + i % 28:02d}T09:00:00Z",
                            "end": f"2026-03-{1 + i % 28:02d}T17:00:00Z"},
            "analysis_inclusion": {"dataset": f"cohort-{i % 4}", "subject_id": f"P-{k}"},
            "download_delivery": {"recipient": f"client-{k}", "file_name": f"export-{k}.zip",
                                  "content": "export row\n" * (10 + i % 200)},
        }
        params = choices[t]
        out.append((f"AC-bench-{i:03d}", EffectDescriptor(type=t, params=params)))
    return out
