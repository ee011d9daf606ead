"""Fixed shape of the language track, taken from the benchmark definition (docs/definitions.md,
from the paper).

These constants drive the distribution checks of ``authpairs data check``: the split sizes, the
per-domain scenario and input counts, the test families with their input counts, the
development-only families and the 40 exact test titles (paper, Figure 4), grouped by domain.
"""

from __future__ import annotations

DATASET_NAME = "language"
DATASET_VERSION = "1.0.0"
CONTEXTS_PER_SCENARIO = 4

DOMAINS: tuple[str, ...] = ("payments", "clinical", "software", "education", "documents")

DOMAIN_TITLES: dict[str, str] = {
    "payments": "Payments and procurement",
    "clinical": "Clinical data",
    "software": "Software operations",
    "education": "Education and research",
    "documents": "Documents and customer operations",
}

#: domain -> (scenarios, dev inputs, test inputs)
DOMAIN_COUNTS: dict[str, tuple[int, int, int]] = {
    "payments": (11, 4, 40),
    "clinical": (6, 0, 24),
    "software": (11, 20, 24),
    "education": (11, 4, 40),
    "documents": (11, 12, 32),
}

SPLIT_SCENARIOS: dict[str, int] = {"dev": 10, "test": 40}

#: test family -> number of test inputs (4 per scenario)
TEST_FAMILY_INPUTS: dict[str, int] = {
    "delegated_scope": 8,
    "purpose_category": 16,
    "relationship": 16,
    "joint_authority": 16,
    "amount_interval": 16,
    "authority_transition": 12,
    "revoke_supersede": 28,
    "consumption": 16,
    "conditional_exception": 16,
    "conflict_exception": 12,
    "public_basis": 4,
}

DEV_ONLY_FAMILIES: tuple[str, ...] = ("ownership", "role_hierarchy", "break_glass")

FAMILIES: tuple[str, ...] = (*TEST_FAMILY_INPUTS, *DEV_ONLY_FAMILIES)

#: the 40 test scenario titles (paper, Figure 4), by domain
TEST_TITLES: dict[str, tuple[str, ...]] = {
    "payments": (
        "Cumulative invoice commitments", "Delegated refund ceiling",
        "Emergency purchase prerequisites", "Grant project and item class",
        "Joint approval and delegation", "New bank account reconfirmation",
        "One-use order and reopening", "Own-expense approval conflict", "Two project stewards",
        "Vendor grant and role withdrawal",
    ),
    "clinical": (
        "Accepted and effective handoff", "Care team or emergency record",
        "Representative consent scope", "Research versus care permission",
        "Sealed-note referral exception", "Study or global consent withdrawal",
    ),
    "software": (
        "Canary percentage ceiling", "New-owner ratification", "One-use signing completion",
        "Service-specific withdrawal", "Superseding build approval",
        "Window and targeted withdrawal",
    ),
    "education": (
        "Delegation after PI departure", "Delegation and self-grade exception",
        "Examiner conflict exception", "Full reservation interval",
        "Independent public-access right", "Named embargo exception",
        "Participant withdrawal before use", "Peer-record owner consent",
        "Project editor membership", "Teaching versus commercial use",
    ),
    "documents": (
        "Audit versus marketing purpose", "Client-specific withdrawal",
        "Completed versus partial download", "Contractor workspace boundary",
        "Document-class signature authority", "Dual approval for bulk export",
        "Purpose and one-use delivery", "Representative address-change scope",
    ),
}

#: giveaway word families: label -> regex (case-insensitive, word-bounded)
GIVEAWAY_WORDS: dict[str, str] = {
    "revoked": r"\brevok\w*|\brevocation\w*",
    "expired": r"\bexpir\w*",
    "withdrawn": r"\bwithdr[ae]w\w*",
    "denied": r"\bden(?:ied|y|ies|ial)\b",
    "rescinded": r"\brescin\w*",
    "terminated": r"\bterminat\w*",
    "suspended": r"\bsuspen\w*",
    "not authorized": r"\bnot\s+authori[sz]ed\b|\bunauthori[sz]ed\b",
}
