"""``show-prompt`` writes the exact reviewer input, byte for byte, and the response format."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from authpairs.cli import app
from authpairs.review.interfaces import get_interface
from authpairs.tracks.registry import resolve_dataset

CASE = "AC-8969d4e7cd042c2c"


def test_piped_output_is_the_exact_prompt_and_response_format() -> None:
    result = CliRunner().invoke(app, ["show-prompt", CASE], env={"COLUMNS": "40"})
    assert result.exit_code == 0, result.output
    request = get_interface("schema").render(resolve_dataset("language").by_id()[CASE].public)
    expected = "".join(
        f"===== message: {m['role']} =====\n{m['content']}"
        + ("" if m["content"].endswith("\n") else "\n") for m in request.messages)
    assert result.output.startswith(expected)  # not re-wrapped at 40 columns
    rest = result.output[len(expected):]
    assert rest.startswith("===== response format =====\n")
    body = rest.removeprefix("===== response format =====\n").split("\n=====", 1)[0]
    assert json.loads(body) == request.response_format
    assert rest.rstrip().endswith(f"===== input sha256 {request.sha256()} =====")


def test_unconstrained_interface_shows_the_answer_schema() -> None:
    result = CliRunner().invoke(app, ["show-prompt", CASE, "--interface", "direct"])
    assert result.exit_code == 0, result.output
    assert "none: free text, parsed strictly against the direct interface's answer schema" \
        in result.output
    assert '"decision"' in result.output
