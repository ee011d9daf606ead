"""Token ids through the OpenAI-compatible backend: a request's prompt ids are the body's
``prompt``; the completion's ids are read back from vLLM's ``token_ids`` (``return_token_ids``)
or llama.cpp's ``logprobs.content[].id``, plain or streamed, and kept in the records."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from authpairs.backends.base import ChatRequest
from authpairs.backends.config import SamplingConfig
from authpairs.backends.openai_http import (
    OpenAIBackend,
    StreamAssembler,
    completion_path,
    completion_token_ids,
    parse_completion,
)
from authpairs.cases.canonical import sha256_hex
from authpairs.errors import TransportError
from authpairs.runs.records import AttemptRecord

IDS_REQUEST = ChatRequest(prompt="<|start|>user<|message|>hi<|end|>",
                          prompt_token_ids=[200006, 1428, 200008, 3686, 200007],
                          options={"return_token_ids": True})


async def _sent(request: ChatRequest, body: dict[str, Any]) -> tuple[str, dict[str, Any], Any]:
    seen: list[tuple[str, dict[str, Any]]] = []

    def handler(http: httpx.Request) -> httpx.Response:
        seen.append((http.url.path, json.loads(http.content)))
        return httpx.Response(200, json=body)

    async with OpenAIBackend(["http://guard.test/v1"], "m",
                             transport=httpx.MockTransport(handler)) as backend:
        response = await backend.complete(request, SamplingConfig(max_tokens=8))
    return seen[0][0], seen[0][1], response


async def test_prompt_token_ids_are_the_prompt_sent() -> None:
    body = {"choices": [{"text": "ok", "finish_reason": "stop", "token_ids": [525, 200002]}]}
    path, sent, response = await _sent(IDS_REQUEST, body)
    assert path == "/v1/completions" and completion_path(IDS_REQUEST) == "completions"
    assert sent["prompt"] == IDS_REQUEST.prompt_token_ids and sent["return_token_ids"] is True
    assert response.output_token_ids == [525, 200002] and response.text == "ok"


async def test_a_text_prompt_stays_text_and_a_body_without_ids_has_none() -> None:
    request = ChatRequest(prompt="hello")
    path, sent, response = await _sent(request, {"choices": [{"text": " world",
                                                              "finish_reason": "stop"}]})
    assert path == "/v1/completions" and sent["prompt"] == "hello"
    assert response.output_token_ids is None


def test_llama_cpp_logprobs_carry_the_ids() -> None:
    choice = {"text": "\n#", "finish_reason": "length", "logprobs": {"content": [
        {"id": 198, "token": "\n", "logprob": -2.3}, {"id": 19, "token": "#", "logprob": -2.1}]}}
    assert parse_completion({"choices": [choice]}).output_token_ids == [198, 19]


@pytest.mark.parametrize("logprobs", [
    {"tokens": ["a"], "token_logprobs": [-1.0]},  # vLLM's completions shape: no ids
    {"content": [{"token": "a", "logprob": -1.0}]},  # vLLM's chat shape: no ids
    None,
])
def test_logprobs_without_ids_give_no_ids(logprobs: Any) -> None:
    choice = {"text": "a", "finish_reason": "stop", "logprobs": logprobs}
    assert completion_token_ids(choice) is None


@pytest.mark.parametrize("ids", ["1 2", [1, "2"], [1, -2], [True], [1.5], {"0": 1}])
def test_malformed_token_ids_are_a_malformed_body(ids: Any) -> None:
    with pytest.raises(TransportError, match="token_ids is not a list of token ids"):
        parse_completion({"choices": [{"text": "a", "finish_reason": "stop", "token_ids": ids}]})


def test_streamed_ids_are_joined_in_order() -> None:
    for chunks, key in (([[1, 2], [3], []], "token_ids"), ([[1], [2, 3]], "logprobs")):
        assembler = StreamAssembler(raw=True, max_events=16)
        for ids in chunks:
            choice: dict[str, Any] = {"index": 0, "text": "x" * len(ids)}
            if key == "token_ids":
                choice["token_ids"] = ids
            else:
                choice["logprobs"] = {"content": [{"id": i, "token": "x"} for i in ids]}
            assembler.add_line("data: " + json.dumps({"choices": [choice]}))
        assembler.add_line("data: " + json.dumps({"choices": [{"index": 0, "text": "",
                                                                "finish_reason": "stop"}]}))
        assembler.add_line("data: [DONE]")
        assert parse_completion(assembler.body()).output_token_ids == [1, 2, 3], key
    plain = StreamAssembler(raw=True, max_events=4)
    for line in ('data: {"choices": [{"index": 0, "text": "a"}]}', "data: [DONE]"):
        plain.add_line(line)
    assert "token_ids" not in plain.body()["choices"][0]


def test_request_identity_and_records() -> None:
    """The ids are part of the input identity; a request without them keeps the identity (and
    the stored text) it had before ids existed; an attempt keeps the output's ids."""
    text_only = ChatRequest(prompt=IDS_REQUEST.prompt, options=IDS_REQUEST.options)
    assert text_only.sha256() == sha256_hex({"messages": [], "response_format": None,
                                             "prompt": IDS_REQUEST.prompt,
                                             "options": IDS_REQUEST.options})
    assert IDS_REQUEST.sha256() != text_only.sha256()
    assert "prompt_token_ids" not in text_only.model_dump_json()
    assert ChatRequest.model_validate_json(IDS_REQUEST.model_dump_json()) == IDS_REQUEST
    attempt = AttemptRecord(run_id="r", case_id="c", attempt_no=1, kind="formal",
                            input_sha256="x", output_text="ok", output_token_ids=[1, 2])
    assert AttemptRecord.model_validate_json(attempt.model_dump_json()) == attempt
    bare = attempt.model_copy(update={"output_token_ids": None})
    assert "output_token_ids" not in bare.model_dump_json()
