"""Nothing the server exposes carries a reference field: every tool, resource and prompt of
language-track cases whose reference half holds secret markers, read through the SDK's
in-process client."""

from __future__ import annotations

from pathlib import Path

from mcp import Client

from authpairs.agent.server import INSTRUCTIONS, build_server
from authpairs.agent.session import AgentSession
from authpairs.cases.dataset import Dataset
from authpairs.enforce.enforcer import DecisionOnlyEnforcer
from authpairs.review.reviewers import BaselineReviewer
from authpairs.runs.case_runner import CaseRunner
from authpairs.runs.records import RunInfo
from authpairs.runs.store import RecordStore
from authpairs.tracks.language.cases import load_language_dataset
from tests.agent.helpers import SECRETS, with_secrets


async def test_tools_resources_and_prompts_carry_no_reference_field(tmp_path: Path) -> None:
    cases = Dataset("language", [with_secrets(c) for c in load_language_dataset().cases[:40]])
    exposed = [INSTRUCTIONS]
    with RecordStore(tmp_path / "r.sqlite") as store, DecisionOnlyEnforcer() as enforcer:
        store.open_run(RunInfo(run_id="r", created_at="t", config={}, config_sha256="c",
                               manifest={}, manifest_sha256="m",
                               expected_case_ids=cases.case_ids()))
        session = AgentSession("r", cases, CaseRunner(BaselineReviewer("always-allow"),
                                                      enforcer=enforcer), store)
        async with Client(build_server(session)) as client:
            exposed += [t.model_dump_json() for t in (await client.list_tools()).tools]
            resources = (await client.list_resources()).resources
            prompts = (await client.list_prompts()).prompts
            assert len(resources) == len(prompts) == 40
            for resource in resources:
                exposed.append(resource.model_dump_json())
                read = await client.read_resource(resource.uri)
                exposed += [c.model_dump_json() for c in read.contents]
            for prompt in prompts:
                exposed.append(prompt.model_dump_json())
                exposed.append((await client.get_prompt(prompt.name)).model_dump_json())
                effect = cases.by_id()[prompt.name].public.effect
                assert effect is not None
                result = await client.call_tool(effect.type, dict(effect.params))
                exposed.append(result.model_dump_json())
        session.close()
    text = "\n".join(exposed)
    assert cases.cases[0].public.policy.text[:40] in text.replace("\\n", "\n")
    assert not [secret for secret in SECRETS if secret in text]
    assert '"label":' not in text and '\\"label\\":' not in text
