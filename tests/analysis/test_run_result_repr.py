"""A :class:`~authpairs.api.RunResult` is short to print: one line for ``repr``, whatever the
number of records (a notebook cell or a log line never dumps every record)."""

from __future__ import annotations

from pathlib import Path

from authpairs import api


def test_repr_is_one_short_line_with_the_headline_numbers(tmp_path: Path) -> None:
    result = api.run({"reviewer": {"baseline": "always-allow"}, "enforce": False, "limit": 8,
                      "run_id": "short", "records": str(tmp_path / "runs.sqlite")})
    text = repr(result)
    assert "\n" not in text and len(text) < 200, text
    assert text.startswith("<RunResult run 'short': 8 case records")
    assert f"{result.scores.correct}/8 correct" in text
    assert f"{result.scores.unavailable} unavailable" in text
