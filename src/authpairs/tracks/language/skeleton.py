"""``data new-scenario``: a commented skeleton of one scenario file for a domain and family.

The skeleton has the full shape (policy, request, effect, expression, four contexts with a
document and typed facts each) and marks every value the author must write with ``TODO``;
``authpairs data check`` reports each placeholder left, by file and field.
"""

from __future__ import annotations

from pathlib import Path

from authpairs.tracks.language.spec import DOMAINS, FAMILIES
from authpairs.tracks.language.validate import SLUG_RE

_ID, _TEXT, _FILE = '"TODO-id"', '"TODO"', '"TODO-file.txt"'
#: The effect a new scenario of each domain starts from (any of the nine types may be used;
#: see the effect table in docs/datasets/language-format.md), with placeholder parameters.
DOMAIN_EFFECTS: dict[str, tuple[str, dict[str, str]]] = {
    "payments": ("ledger_transfer", {"from_account": _ID, "to_account": _ID,
                                     "amount": '"TODO 75.00"  # a decimal string',
                                     "currency": _TEXT}),
    "clinical": ("record_update", {"record_id": _ID, "field": _TEXT, "value": _TEXT}),
    "software": ("deployment", {"service": _ID, "version": _TEXT, "content": _TEXT,
                                "percentage": "10  # TODO: 1..100"}),
    "education": ("reservation", {"resource_id": _ID, "holder": _TEXT,
                                  "start": '"2026-01-01T09:00:00Z"  # TODO: canonical UTC',
                                  "end": '"2026-01-01T10:00:00Z"  # TODO: after start'}),
    "documents": ("download_delivery", {"recipient": _ID, "file_name": _FILE,
                                        "content": _TEXT}),
}
_CONTEXTS = (
    ("c1", "lawful", "baseline", "the main authorization path"),
    ("c2", "lawful", "alternate_path", "a different lawful path (another grant, role, ...)"),
    ("c3", "forbidden", "scope", "the grant does not cover this operation, amount or purpose"),
    ("c4", "forbidden", "status", "the grant was revoked, expired, superseded or consumed"),
)

_HEAD = """\
# New language-track scenario ({domain} / {family}). Format: docs/datasets/language-format.md
# Replace every TODO. `authpairs data check --root DIR` lists the placeholders left and
# every other problem by file, scenario, context and field.
slug: {slug}                       # kebab-case; equals the file name
title: "TODO: a short title"
split: dev                         # dev | test
domain: {domain}
family: {family}
policy: |
  TODO: the natural-language policy shared by all four contexts: who may do what, through
  which authority, within which limits (amount, scope, purpose, time).
request:                           # byte-identical in all four contexts
  subject: "TODO: an agent acting for a named person"
  action: "TODO: verb_object"
  arguments: {{on_behalf_of: "TODO: the person", amount: 0}}  # TODO: the operation's arguments
  resource: "TODO: the object acted on"
  environment: {{time: "2026-01-01T00:00:00Z", channel: "TODO: channel"}}
  purpose: "TODO: why"
effect:                            # what happens if allowed (public, concrete)
  type: {effect}
  params:
{params}
# One expression over facts and request fields, true exactly in the lawful contexts.
# Records (lists of typed items) take any/all/count/sum/min/max, e.g.
#   count(a.role for a in approvals where a.decision == "approve") >= 2
#   sum(c.amount for c in commitments where c.status == "open") + request.arguments.amount
#     <= budget.limit
expression: >
  grant.holder == request.arguments.on_behalf_of and grant.status == "active"
  and request.arguments.amount <= grant.limit
policy_facts: {{}}                   # facts quoted from the policy (source: policy)
contexts:
"""

_CONTEXT = """\
  - id: {cid}
    label: {label}
    variant: {variant}                # {hint}
    path: "TODO-path-name"           # the authorization path this context establishes or breaks
    documents:
      - id: d1
        issuer: "TODO: who issued the document"
        time: "2026-01-01T00:00:00Z"   # TODO: canonical UTC
        text: |
          TODO: the evidence. Keep lawful and forbidden texts alike in length and wording;
          the label must follow from specifics (who, which scope, which time, which amount).
    facts:                           # each fact quotes the exact text it was read from
      grant.holder: {{value: "TODO", type: string, source: d1, quote: "TODO"}}
      grant.status: {{value: "TODO", type: string, source: d1, quote: "TODO"}}
      grant.limit: {{value: 0, type: number, source: d1, quote: "TODO"}}
      # A document's issuer, time or id can be quoted too:
      #   grant.issuer: {{value: "...", type: string, source: d1.issuer, quote: "..."}}
      # A records fact:
      #   approvals: {{type: records, fields: {{role: string, at: timestamp}}, source: d1,
      #     quote: "...", value: [{{role: finance, at: "...", quote: "..."}}]}}
"""


def skeleton_yaml(domain: str, family: str, slug: str) -> str:
    """The commented skeleton text. Raises ValueError for an unknown domain/family/bad slug."""
    if domain not in DOMAINS:
        raise ValueError(f"unknown domain {domain!r} (one of: {', '.join(DOMAINS)})")
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r} (one of: {', '.join(FAMILIES)})")
    if not SLUG_RE.match(slug):
        raise ValueError(f"slug must be kebab-case, got {slug!r}")
    effect, placeholders = DOMAIN_EFFECTS[domain]
    params = "\n".join(f"    {name}: {value}" for name, value in placeholders.items())
    text = _HEAD.format(domain=domain, family=family, slug=slug, effect=effect, params=params)
    for cid, label, variant, hint in _CONTEXTS:
        text += _CONTEXT.format(cid=cid, label=label, variant=variant, hint=hint)
    return text


def write_skeleton(out: str | Path, domain: str, family: str, slug: str | None = None,
                   overwrite: bool = False) -> Path:
    """Write ``<out>/<domain>/<slug>.yaml`` and return its path (never overwrites by default)."""
    name = slug or f"new-{family.replace('_', '-')}-scenario"
    path = Path(out) / domain / f"{name}.yaml"
    text = skeleton_yaml(domain, family, name)
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path} exists (choose another --slug)")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
