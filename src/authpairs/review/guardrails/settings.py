"""Each native guardrail's recommended sampling and output limit: the vendor's and the paper's.

A guardrail's vendor states how its model is to be sampled (IBM's cookbooks, NVIDIA's NeMo
configurations, OpenAI's gpt-oss README, ...); the paper's configurations (``configs/paper/``)
often differ (a 16K output limit, greedy decoding). A run sends its own ``sampling`` either way:
its reviewer description records the values sent and which recommendation they follow
(:func:`settings_record`, in the run header). The format card of each guardrail shows both as
the table :func:`settings_table` renders (a test keeps the card and this module equal).

Settings keys are interface names, with the option that changes the vendor's advice after a
colon (``granite-guardian:4.x``, ``nemotron-safety:content-safety:think``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SETTINGS = ("temperature", "top_p", "max_tokens")
"""The sampling settings recommendations are stated in and compared on."""


@dataclass(frozen=True)
class Recommended:
    """The sampling values one source states (a setting it leaves out: it states none), the
    source, and the row label on the format card."""

    label: str
    source: str
    values: Mapping[str, float | int] = field(default_factory=dict)


_GREEDY_NEMO = "NeMo 0.24.1 `content_safety_check_input` (temperature 1e-20)"


def _paper(config: str, limit: int, label: str = "paper", **more: float) -> Recommended:
    return Recommended(label, f"the paper, appendix A.2 and Table 4 (`configs/paper/{config}`)",
                       {"temperature": 0.0, **more, "max_tokens": limit})


VENDOR: dict[str, Recommended] = {
    "qwen3guard": Recommended(
        "vendor", "QwenLM/Qwen3Guard `README.md` (019b2e3b), Quick Start: `max_new_tokens=128`; "
        "no sampling values (the vLLM example sends none)", {"max_tokens": 128}),
    "granite-guardian:3.x": Recommended(
        "vendor, `3.x`", "IBM's 3.3 `detailed_guide_think.ipynb` (a409be82): "
        "`SamplingParams(temperature=0.0, max_tokens=2048)`",
        {"temperature": 0.0, "max_tokens": 2048}),
    "granite-guardian:4.x": Recommended(
        "vendor, `4.x`", "IBM's 4.1 `quickstart.ipynb` and `detailed_guide.ipynb` (465fc131): "
        "`SamplingParams(temperature=0.0, max_tokens=2048)`",
        {"temperature": 0.0, "max_tokens": 2048}),
    "nemotron-safety:content-safety": Recommended(
        "vendor, `content-safety`", f"{_GREEDY_NEMO}; NeMo's example `prompts.yml` (6f3ae0eb): "
        "`max_tokens: 100`", {"temperature": 1e-20, "max_tokens": 100}),
    "nemotron-safety:content-safety:think": Recommended(
        "vendor, `content-safety`, thinking", f"{_GREEDY_NEMO}; NeMo's example `README.md` "
        "(6f3ae0eb): raise `max_tokens` to about 512 before enabling thinking",
        {"temperature": 1e-20, "max_tokens": 512}),
    "nemotron-safety:reasoning-4b": Recommended(
        "vendor, `reasoning-4b`", f"{_GREEDY_NEMO}; NeMo's 4B tutorial prompt: `max_tokens: 400`",
        {"temperature": 1e-20, "max_tokens": 400}),
    "nemotron-safety:nemoguard-8b": Recommended(
        "vendor, `nemoguard-8b`", f"{_GREEDY_NEMO}; NeMo's NemoGuard 8B prompt: `max_tokens: 50`",
        {"temperature": 1e-20, "max_tokens": 50}),
    "nemo-self-check": Recommended(
        "vendor", "NeMo 0.24.1 `run_self_check_task`: the task's `max_tokens` (default 1024) at "
        "the configuration's `lowest_temperature` (default 0.001)",
        {"temperature": 0.001, "max_tokens": 1024}),
    "safeguard": Recommended(
        "vendor", "openai/gpt-oss `README.md` (c1390410), recommended sampling parameters of "
        "the gpt-oss models it is fine-tuned from: `temperature=1.0`, `top_p=1.0`; no output "
        "limit stated",
        {"temperature": 1.0, "top_p": 1.0}),
    "llama-guard": Recommended(
        "vendor", "model card `meta-llama/Llama-Guard-3-8B` (revision not pinned), `moderate()` "
        "example: `max_new_tokens=100`, no sampling values; no source read here states Llama "
        "Guard 4's", {"max_tokens": 100}),
    "policyguard": Recommended(
        "vendor", "model card `Rakancorle1/PolicyGuard-4B` (f9060bd9): states no sampling "
        "values or output limit"),
}
"""What each vendor recommends, by settings key."""

PAPER: dict[str, Recommended] = {
    "qwen3guard": _paper("qwen3guard.yaml", 512),
    "granite-guardian:3.x": _paper("granite-guardian.yaml", 16384, "paper, `3.x`"),
    "nemotron-safety:content-safety:think": _paper("nemotron-safety.yaml", 16384,
                                                   "paper, `content-safety`, thinking"),
    "nemo-self-check": _paper("nemo-self-check.yaml", 16384, top_p=1.0),
    "safeguard": _paper("safeguard.yaml", 16384),
    "policyguard": _paper("policyguard.yaml", 4),
}
"""What the paper's configurations use, by settings key (only the configurations it ran)."""


def follows(recommended: Recommended | None, used: Mapping[str, Any]) -> bool:
    """Whether ``used`` sends every value ``recommended`` states (it must state one)."""
    if recommended is None or not recommended.values:
        return False
    return all(used.get(name) == value for name, value in recommended.values.items())


def settings_record(key: str, used: Mapping[str, Any],
                    vendor: Recommended | None = None) -> dict[str, Any] | None:
    """For the run header: the values ``used``, the vendor's and the paper's recommendation for
    ``key`` (``vendor`` replaces the table's, e.g. with a NeMo rails folder's own task
    settings), and which of them the used values follow: ``vendor``, ``paper``, ``vendor and
    paper`` or ``custom``. None when ``key`` has no recommendation at all."""
    vendor = vendor or VENDOR.get(key)
    paper = PAPER.get(key)
    if vendor is None and paper is None:
        return None
    matched = [name for name, rec in (("vendor", vendor), ("paper", paper))
               if follows(rec, used)]

    def stated(rec: Recommended | None) -> dict[str, Any] | None:
        return None if rec is None else {**rec.values, "source": rec.source}

    return {"follows": " and ".join(matched) or "custom",
            "used": {name: used.get(name) for name in SETTINGS},
            "vendor": stated(vendor), "paper": stated(paper)}


def settings_keys(card: str) -> list[str]:
    """The settings keys of a format card (an interface or guardrail name), in table order."""
    return [key for key in dict.fromkeys([*VENDOR, *PAPER])
            if key == card or key.startswith(card + ":")]


def settings_table(card: str) -> str:
    """The Markdown table of every recommendation for ``card``: vendor rows, then the paper's."""
    rows = ["| settings | temperature | top_p | max_tokens | source |",
            "|---|---|---|---|---|"]
    keys = settings_keys(card)
    for table in (VENDOR, PAPER):
        for key in keys:
            rec = table.get(key)
            if rec is not None:
                cells = [repr(rec.values[name]) if name in rec.values else "not stated"
                         for name in SETTINGS]
                rows.append(f"| {rec.label} | {' | '.join(cells)} | {rec.source} |")
    return "\n".join(rows) + "\n"
