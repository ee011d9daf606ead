"""The reviewer of agent mode is built as ``authpairs run`` builds it, and it reviews the call
the agent proposed: a model reviewer (interface + backend) is sent the proposed arguments."""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path

from authpairs.agent.session import AgentSession
from authpairs.backends.base import ChatRequest
from authpairs.cases.dataset import Dataset
from authpairs.cases.examples import load_examples
from authpairs.enforce.enforcer import LocalEnforcer
from authpairs.runs.case_runner import CaseRunner
from authpairs.runs.config import config_from_dict
from authpairs.runs.records import CallResult, Proposal, RunInfo
from authpairs.runs.reviewers import make_reviewer
from authpairs.runs.store import RecordStore
from tests.agent.helpers import FORBIDDEN

REFUND = {"from_account": "merchant-ops", "to_account": "card-4471", "amount": "75.00",
          "currency": "USD"}
SEEN: list[str] = []


def allow_forty(request: ChatRequest) -> str:
    """A scripted model: ALLOW when the reviewer input names an amount of 40.00."""
    text = "\n".join(m["content"] for m in request.messages)
    SEEN.append(text)
    return '{"decision": "ALLOW"}' if '"40.00"' in text else '{"decision": "BLOCK"}'


async def test_an_interface_and_backend_review_the_proposed_call(tmp_path: Path) -> None:
    SEEN.clear()
    config = config_from_dict({"dataset": "examples", "reviewer": {
        "interface": "direct",
        "backend": {"kind": "scripted", "script": "tests.agent.test_reviewers:allow_forty"}}})
    cases = Dataset("examples", [c for c in load_examples() if c.case_id == FORBIDDEN])
    async with AsyncExitStack() as stack:
        reviewer = await make_reviewer(config.reviewer, stack)
        with RecordStore(tmp_path / "r.sqlite") as store, LocalEnforcer(tmp_path) as enforcer:
            store.open_run(RunInfo(run_id="r", created_at="t", config={}, config_sha256="c",
                                   manifest={}, manifest_sha256="m",
                                   expected_case_ids=[FORBIDDEN]))
            session = AgentSession("r", cases, CaseRunner(reviewer, enforcer=enforcer), store)
            own = await session.call(FORBIDDEN, "ledger_transfer", REFUND)
            other = await session.call(FORBIDDEN, "ledger_transfer",
                                       {**REFUND, "amount": "40.00"})
            session.close()
    assert (own.proposal, own.result) == (Proposal.CASE_OPERATION, CallResult.BLOCKED)
    assert (other.proposal, other.result) == (Proposal.OTHER_OPERATION, CallResult.EXECUTED)
    assert len(SEEN) == 2 and '"40.00"' not in SEEN[0] and '"40.00"' in SEEN[1]
    assert other.effect is not None and other.effect.verified
