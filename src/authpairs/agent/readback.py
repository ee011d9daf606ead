"""Reading an agent run back from its records file: what the agent proposed per case and, for
``authpairs run --agent``, each case's trajectory (its calls are
:meth:`~authpairs.runs.store.RecordStore.agent_calls`)."""

from __future__ import annotations

from authpairs.agent.trajectory import Trajectory
from authpairs.errors import RecordsError
from authpairs.runs.chain import read_hashed
from authpairs.runs.records import AgentCall, Proposal
from authpairs.runs.store import RecordStore


def case_proposals(store: RecordStore, run_id: str) -> dict[str, Proposal]:
    """What the agent proposed for each case the run offered
    (:meth:`Proposal.of <authpairs.runs.records.Proposal.of>` its calls)."""
    run = store.get_run(run_id)
    if run is None:
        raise RecordsError(f"{store.path}: no run '{run_id}'")
    calls: dict[str, list[AgentCall]] = {case_id: [] for case_id in run.expected_case_ids}
    for call in store.agent_calls(run_id):
        calls.setdefault(call.case_id, []).append(call)
    return {case_id: Proposal.of(made) for case_id, made in calls.items()}


def trajectories(store: RecordStore, run_id: str) -> list[Trajectory]:
    """The stored trajectories of ``run_id``, by case id. A row whose text does not match its
    stored SHA-256, or does not parse, is a :class:`RecordsError`."""
    return [read_hashed(text, digest, Trajectory,
                        f"{store.path}: run '{run_id}', trajectory of case '{case_id}'",
                        "stored trajectory")
            for case_id, text, digest in store.agent_trajectory_rows(run_id)]
