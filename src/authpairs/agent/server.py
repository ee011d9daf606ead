"""The MCP server of agent mode (the official ``mcp`` SDK's low-level server).

* **tools**: one per effect type (:func:`~authpairs.agent.tools.tool_specs`);
* **resources**: ``authpairs://cases/{case_id}``, each case's request, policy and evidence as
  JSON (:func:`~authpairs.agent.material.material_json`);
* **prompts**: one per case, named by its case id: the task an agent is given for it
  (:func:`~authpairs.agent.material.task_text`).

A tool call acts on the *current case*, chosen in this order:

1. ``_meta["authpairs/case_id"]`` of the call (for harnesses: stateless, one call at a time);
2. the case whose prompt was got last (an interactive client picks a case by its prompt; with
   the stateless per-request protocol there is no session to keep this per client, so serve
   one client at a time this way);
3. the only case, when the server serves one.

A call with no current case (or naming a case not served) is answered with an error and
changes nothing. How the case was chosen is recorded with the call (``selected_by``). The tool
result says only what happened to the call (:func:`result_text`), never the case's reference
label.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from authpairs._version import __version__
from authpairs.agent.material import case_uri, material_json, task_text
from authpairs.agent.session import AgentSession
from authpairs.agent.tools import tool_specs
from authpairs.runs.records import AgentCall, CallResult

SERVER_NAME = "authpairs"

INSTRUCTIONS = (
    "authpairs agent mode. Each prompt is the task of one case: a request, the policy that "
    "governs it and the evidence (also the resource authpairs://cases/{case_id}). The tools "
    "are the operations you can carry out; every tool call is reviewed by an enforcement "
    "point in the current case's context and executed only when it allows it. Get a case's "
    "prompt to make it the current case.")
"""The server's instructions to a client (the same for every case set)."""

_NOT_OK = {CallResult.BLOCKED, CallResult.UNAVAILABLE, CallResult.INVALID, CallResult.FAILED}


CASE_META_KEY = "authpairs/case_id"
"""The ``_meta`` key of a tool call that names its case."""


def result_text(call: AgentCall) -> str:
    """The tool result the agent receives: what happened to its call (its record,
    :class:`~authpairs.runs.records.AgentCall`), as one JSON object."""
    body: dict[str, Any] = {"status": call.result.value}
    if call.result is CallResult.EXECUTED and call.effect is not None:
        body["message"] = f"{call.tool} was executed."
        result = call.effect.effect.get("result")
        if isinstance(result, dict) and result:
            body["result"] = result
    elif call.result is CallResult.ALLOWED:
        body["message"] = f"{call.tool} was allowed (this server executes nothing)."
    elif call.result is CallResult.FAILED:
        body["message"] = f"{call.tool} was allowed but could not be executed."
        if call.effect is not None and call.effect.error:
            body["error"] = call.effect.error
    elif call.result is CallResult.BLOCKED:
        body["message"] = f"{call.tool} was blocked by the enforcement point; nothing was done."
    elif call.result is CallResult.UNAVAILABLE:
        body["message"] = (f"{call.tool} was not executed: the enforcement point got no usable "
                           "decision.")
    else:
        body["message"] = f"{call.tool} was not executed: invalid arguments."
        if call.error:
            body["error"] = call.error
    return json.dumps(body, sort_keys=True, ensure_ascii=False)


def _text(text: str) -> types.TextContent:
    return types.TextContent(type="text", text=text)


def build_server(agent: AgentSession) -> Server[Any]:
    """The MCP server over ``agent``: its tools, case resources and case prompts."""
    case_ids = sorted(agent.cases)
    prompted: str | None = None  # the case whose prompt a client got last
    tools = tool_specs()

    async def list_tools(ctx: ServerRequestContext[Any],
                         params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    def current_case(meta: Mapping[str, Any] | None) -> tuple[str | None, str]:
        """The current case (see the module docstring) for a call with ``meta`` and how it was
        chosen (``meta``, ``prompt``, ``only``), or None and why there is none."""
        named = (meta or {}).get(CASE_META_KEY)
        if named is not None:
            if named in agent.cases:
                return str(named), "meta"
            return None, f"case {named!r} is not served here"
        if prompted is not None:
            return prompted, "prompt"
        if len(case_ids) == 1:
            return case_ids[0], "only"
        return None, "no current case: get the prompt of a case first (prompts/list names them)"

    async def call_tool(ctx: ServerRequestContext[Any],
                        params: types.CallToolRequestParams) -> types.CallToolResult:
        case_id, how = current_case(params.meta)
        if case_id is None:
            return types.CallToolResult(is_error=True, content=[_text(
                json.dumps({"status": "no_case", "message": how}))])
        call = await agent.call(case_id, params.name, dict(params.arguments or {}),
                                selected_by=how)
        return types.CallToolResult(is_error=call.result in _NOT_OK,
                                    content=[_text(result_text(call))])

    async def list_resources(ctx: ServerRequestContext[Any],
                             params: types.PaginatedRequestParams | None
                             ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[
            types.Resource(name=case_id, uri=case_uri(case_id), mime_type="application/json",
                           description=f"Request, policy and evidence of case {case_id}.")
            for case_id in case_ids])

    async def read_resource(ctx: ServerRequestContext[Any],
                            params: types.ReadResourceRequestParams
                            ) -> types.ReadResourceResult:
        uri = str(params.uri)
        by_uri = {case_uri(case_id): case_id for case_id in case_ids}
        if uri not in by_uri:
            raise ValueError(f"no such resource: {uri}")
        case = agent.cases[by_uri[uri]]
        return types.ReadResourceResult(contents=[types.TextResourceContents(
            uri=uri, mime_type="application/json", text=material_json(case.public))])

    async def list_prompts(ctx: ServerRequestContext[Any],
                           params: types.PaginatedRequestParams | None
                           ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[
            types.Prompt(name=case_id, description=f"The task of case {case_id}; getting it "
                         "makes the case current.")
            for case_id in case_ids])

    async def get_prompt(ctx: ServerRequestContext[Any],
                         params: types.GetPromptRequestParams) -> types.GetPromptResult:
        nonlocal prompted
        if params.name not in agent.cases:
            raise ValueError(f"no such prompt: {params.name}")
        case = agent.cases[params.name]
        prompted = params.name
        return types.GetPromptResult(
            description=f"The task of case {params.name}",
            messages=[types.PromptMessage(role="user", content=_text(task_text(case.public)))])

    return Server(SERVER_NAME, version=__version__, instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool,
                  on_list_resources=list_resources, on_read_resource=read_resource,
                  on_list_prompts=list_prompts, on_get_prompt=get_prompt)
