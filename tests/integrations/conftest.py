"""Shared helpers: one deterministic answer per reviewer input, served to Inspect (mockllm) and
to authpairs (scripted backend) alike, so both paths can be compared record by record."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage, GenerateConfig, Model, ModelOutput, ModelUsage, get_model

from authpairs.backends.base import ChatRequest
from authpairs.integrations.inspect_requests import chat_request_of, response_format_of

# Inspect's own retry helper calls tenacity with a deprecated argument, and its eval loop leaves
# anyio memory streams to the garbage collector; neither is authpairs code.
INSPECT_WARNINGS = [
    pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:Unclosed <MemoryObject:ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

ANSWERS = ['{"decision": "ALLOW"}', '{"decision": "BLOCK"}', '{"decision": "UNKNOWN"}',
           "I would allow this.", '{"decision": "ALLOW"}', '{"decision": "BLOCK"}']


def answer_for(request: ChatRequest) -> str:
    """A fixed answer chosen by the input's hash (direct-interface JSON or prose)."""
    return ANSWERS[int(request.sha256()[:8], 16) % len(ANSWERS)]


def mock_model(answer: Any = answer_for) -> Model:
    """Inspect's mockllm answering each input with ``answer(ChatRequest)`` (with token usage,
    so mockllm never needs a tokenizer download)."""

    def output(messages: list[ChatMessage], tools: object, tool_choice: object,
               config: GenerateConfig) -> ModelOutput:
        request = chat_request_of(messages, response_format_of(config))
        result = ModelOutput.from_content(model="mockllm", content=answer(request))
        result.usage = ModelUsage(input_tokens=100, output_tokens=7, total_tokens=107)
        return result

    return get_model("mockllm/model", custom_outputs=output)


def run_inspect(task: Task, log_dir: Path, model: Model | None = None) -> EvalLog:
    """Evaluate ``task`` with the mock model; return its (successful) log."""
    logs = inspect_eval(task, model=model or mock_model(), log_dir=str(log_dir),
                        display="none")
    assert len(logs) == 1
    assert logs[0].status == "success", logs[0].error
    return logs[0]


@pytest.fixture(autouse=True)
def collect_inspect_garbage() -> Iterator[None]:
    """Collect the memory streams Inspect leaves behind while this test's warning filters still
    apply; otherwise the garbage collector finds them during a later test, where the
    ResourceWarning turns into that test's error."""
    yield
    gc.collect()


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    """A folder for Inspect logs."""
    return tmp_path / "logs"
