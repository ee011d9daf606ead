"""Read an OpenFGA store test file (``*.fga.yaml``) into typed assertions.

Supported: an inline ``model`` or a ``model_file`` (a ``.fga`` DSL file or an ``fga.mod`` modular
manifest whose ``contents`` list module files), file-level ``tuples``, ``tuple_file`` /
``tuple_files`` (YAML or JSON lists), test-level ``tuples`` (added to the file-level ones),
tuple conditions, and ``check`` / ``list_objects`` / ``list_users`` assertions with an optional
``context``. Every assertion gets a locator such as ``tests[2].check[0].assertions.can_view``.
Nothing is evaluated here; the engine runs in :mod:`authpairs.tracks.native.openfga_engine`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from authpairs.cases.canonical import canonical_json
from authpairs.tracks.native.errors import NativeImportError

FILE_KEYS = {"name", "model", "model_file", "tuples", "tuple_file", "tuple_files", "tests"}
TEST_KEYS = {"name", "description", "tuples", "check", "list_objects", "list_users"}
TUPLE_KEYS = {"user", "relation", "object", "condition"}


@dataclass(frozen=True)
class FgaCheck:
    """One Check assertion: may ``user`` have ``relation`` on ``object`` (under ``context``)?"""

    locator: str
    test_index: int
    test_name: str
    user: str
    relation: str
    object: str
    context: dict[str, Any]
    tuples: tuple[dict[str, Any], ...]
    expected: bool

    def key(self) -> tuple[str, str, str, str]:
        """The request identity used to match an engine result to this assertion."""
        return (self.user, self.relation, self.object, canonical_json(self.context))


@dataclass(frozen=True)
class FgaListObjects:
    """One ListObjects assertion: the objects of ``type`` on which ``user`` has ``relation``."""

    locator: str
    test_index: int
    user: str
    type: str
    relation: str
    context: dict[str, Any]
    expected: tuple[str, ...]

    def key(self) -> tuple[str, str, str, str]:
        """The request identity used to match an engine result to this assertion."""
        return (self.user, self.relation, self.type, canonical_json(self.context))


@dataclass(frozen=True)
class FgaListUsers:
    """One ListUsers assertion: the users (of the filter types) with ``relation`` on ``object``."""

    locator: str
    test_index: int
    object: str
    relation: str
    user_filter: tuple[str, ...]
    context: dict[str, Any]
    expected: tuple[str, ...]

    def key(self) -> tuple[str, str, str, str]:
        """The request identity used to match an engine result to this assertion."""
        return (self.object, self.relation, ",".join(self.user_filter),
                canonical_json(self.context))


@dataclass
class FgaSuite:
    """A parsed store test file: the model text, and every assertion with its effective tuples."""

    path: Path
    name: str
    model_text: str
    model_files: list[Path]
    checks: list[FgaCheck] = field(default_factory=list)
    list_objects: list[FgaListObjects] = field(default_factory=list)
    list_users: list[FgaListUsers] = field(default_factory=list)
    test_names: list[str] = field(default_factory=list)


def _load_yaml(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise NativeImportError(path, f"cannot read file: {exc.strerror or exc}") from exc
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise NativeImportError(path, f"invalid YAML{where}: {problem}") from exc


def _resolve(base: Path, ref: Any, path: Path, what: str) -> Path:
    if not isinstance(ref, str) or not ref.strip():
        raise NativeImportError(path, f"'{what}' must be a file name")
    target = (base / ref).resolve()
    if not target.is_file():
        raise NativeImportError(path, f"'{what}' refers to a missing file: {ref}")
    return target


def read_model(path: Path, doc: dict[str, Any]) -> tuple[str, list[Path]]:
    """The model text of a test file and the model files it was read from.

    A modular ``fga.mod`` model is returned as one text: the manifest followed by each module
    file, each part introduced by a ``# file: <name>`` comment line.
    """
    has_inline = "model" in doc
    has_file = "model_file" in doc
    if has_inline == has_file:
        raise NativeImportError(path, "exactly one of 'model' or 'model_file' is required")
    if has_inline:
        if not isinstance(doc["model"], str) or not doc["model"].strip():
            raise NativeImportError(path, "'model' must be the model DSL text")
        return doc["model"], []
    model_path = _resolve(path.parent, doc["model_file"], path, "model_file")
    text = model_path.read_text(encoding="utf-8")
    if model_path.suffix != ".mod":
        return text, [model_path]
    manifest = _load_yaml(model_path)
    contents = manifest.get("contents") if isinstance(manifest, dict) else None
    if not isinstance(contents, list) or not contents:
        raise NativeImportError(model_path, "an fga.mod manifest needs a 'contents' list")
    parts = [f"# file: {model_path.name}\n{text.rstrip()}\n"]
    files = [model_path]
    for module in contents:
        module_path = _resolve(model_path.parent, module, model_path, "contents")
        parts.append(f"# file: {module}\n{module_path.read_text(encoding='utf-8').rstrip()}\n")
        files.append(module_path)
    return "\n".join(parts), files


def _check_tuple(raw: Any, path: Path, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise NativeImportError(path, "a tuple must be a mapping with user, relation, object",
                                where)
    unknown = set(raw) - TUPLE_KEYS
    if unknown:
        raise NativeImportError(path, f"unknown tuple field(s): {sorted(unknown)}", where)
    for key in ("user", "relation", "object"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise NativeImportError(path, f"tuple field '{key}' must be a non-empty string", where)
    if "condition" in raw:
        cond = raw["condition"]
        if not isinstance(cond, dict) or not isinstance(cond.get("name"), str):
            raise NativeImportError(path, "a tuple condition needs a 'name'", where)
    return dict(raw)


def _tuple_list(raw: Any, path: Path, where: str) -> list[dict[str, Any]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise NativeImportError(path, "'tuples' must be a list", where)
    return [_check_tuple(t, path, f"{where}[{i}]") for i, t in enumerate(raw)]


def _tuple_file(path: Path, ref: Any, key: str) -> list[dict[str, Any]]:
    target = _resolve(path.parent, ref, path, key)
    if target.suffix == ".json":
        try:
            data = json.loads(target.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise NativeImportError(target, f"invalid JSON (line {exc.lineno}): {exc.msg}") from exc
    elif target.suffix in (".yaml", ".yml"):
        data = _load_yaml(target)
    else:
        raise NativeImportError(path, f"unsupported tuple file type (use YAML or JSON): {ref}")
    return _tuple_list(data, target, "tuples")


def file_tuples(path: Path, doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The file-level tuples: ``tuples`` plus those of ``tuple_file`` / ``tuple_files``."""
    tuples = _tuple_list(doc.get("tuples"), path, "tuples")
    if "tuple_file" in doc:
        tuples += _tuple_file(path, doc["tuple_file"], "tuple_file")
    if "tuple_files" in doc:
        refs = doc["tuple_files"]
        if not isinstance(refs, list):
            raise NativeImportError(path, "'tuple_files' must be a list of file names")
        for ref in refs:
            tuples += _tuple_file(path, ref, "tuple_files")
    return tuples


def sort_tuples(tuples: list[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    """Tuples in canonical order; multiplicity and every value are kept."""
    return tuple(sorted(tuples, key=canonical_json))


def _context(raw: dict[str, Any], path: Path, where: str) -> dict[str, Any]:
    ctx = raw.get("context", {})
    if ctx is None:
        return {}
    if not isinstance(ctx, dict):
        raise NativeImportError(path, "'context' must be a mapping", where)
    return ctx


def _str_field(raw: dict[str, Any], key: str, path: Path, where: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str) or not value:
        raise NativeImportError(path, f"'{key}' must be a non-empty string", where)
    return value


def _entries(test: dict[str, Any], kind: str, noun: str, path: Path,
             where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each entry of the test's ``kind`` list with its locator; each must be a mapping."""
    for j, raw in enumerate(test.get(kind) or []):
        loc = f"{where}.{kind}[{j}]"
        if not isinstance(raw, dict):
            raise NativeImportError(path, f"{noun} must be a mapping", loc)
        yield loc, raw


def _assertions(raw: dict[str, Any], path: Path, where: str) -> list[tuple[str, str, Any]]:
    """``(locator, relation, expected)`` of each assertion of one entry."""
    value = raw.get("assertions")
    if not isinstance(value, dict) or not value:
        raise NativeImportError(path, "'assertions' must be a non-empty mapping", where)
    return [(f"{where}.assertions.{relation}", str(relation), expected)
            for relation, expected in value.items()]


def _parse_test(suite: FgaSuite, index: int, test: Any, base: list[dict[str, Any]]) -> None:
    path = suite.path
    where = f"tests[{index}]"
    if not isinstance(test, dict):
        raise NativeImportError(path, "a test must be a mapping", where)
    unknown = set(test) - TEST_KEYS
    if unknown:
        raise NativeImportError(path, f"unknown test field(s): {sorted(unknown)}", where)
    name = str(test.get("name", ""))
    suite.test_names.append(name)
    tuples = sort_tuples(base + _tuple_list(test.get("tuples"), path, f"{where}.tuples"))
    for loc, check in _entries(test, "check", "a check", path, where):
        user, obj = _str_field(check, "user", path, loc), _str_field(check, "object", path, loc)
        context = _context(check, path, loc)
        for aloc, relation, expected in _assertions(check, path, loc):
            if not isinstance(expected, bool):
                raise NativeImportError(path, "a check assertion must be true or false", aloc)
            suite.checks.append(FgaCheck(aloc, index, name, user, relation, obj, context,
                                         tuples, expected))
    for loc, lo in _entries(test, "list_objects", "a list_objects entry", path, where):
        user, typ = _str_field(lo, "user", path, loc), _str_field(lo, "type", path, loc)
        context = _context(lo, path, loc)
        for aloc, relation, expected in _assertions(lo, path, loc):
            if not isinstance(expected, list):
                raise NativeImportError(path, "a list_objects assertion must be a list", aloc)
            suite.list_objects.append(FgaListObjects(aloc, index, user, typ, relation, context,
                                                     tuple(sorted(map(str, expected)))))
    for loc, lu in _entries(test, "list_users", "a list_users entry", path, where):
        obj = _str_field(lu, "object", path, loc)
        filters = lu.get("user_filter")
        if not isinstance(filters, list) or not filters:
            raise NativeImportError(path, "'user_filter' must be a non-empty list", loc)
        flt = tuple(canonical_json(f) for f in filters)
        context = _context(lu, path, loc)
        for aloc, relation, expected in _assertions(lu, path, loc):
            users = expected.get("users") if isinstance(expected, dict) else None
            if not isinstance(users, list):
                raise NativeImportError(path, "a list_users assertion needs a 'users' list", aloc)
            suite.list_users.append(FgaListUsers(aloc, index, obj, relation, flt, context,
                                                 tuple(sorted(map(str, users)))))


def load_fga_suite(path: Path | str) -> FgaSuite:
    """Parse one store test file. Raises :class:`NativeImportError` naming file and assertion."""
    path = Path(path)
    doc = _load_yaml(path)
    if not isinstance(doc, dict):
        raise NativeImportError(path, "a store test file must be a YAML mapping")
    unknown = set(doc) - FILE_KEYS
    if unknown:
        raise NativeImportError(path, f"unknown top-level field(s): {sorted(unknown)}")
    model_text, model_files = read_model(path, doc)
    tests = doc.get("tests")
    if not isinstance(tests, list) or not tests:
        raise NativeImportError(path, "'tests' must be a non-empty list")
    suite = FgaSuite(path=path, name=str(doc.get("name", "")), model_text=model_text,
                     model_files=model_files)
    base = file_tuples(path, doc)
    for index, test in enumerate(tests):
        _parse_test(suite, index, test, base)
    return suite


def find_test_files(root: Path) -> list[Path]:
    """Every ``*.fga.yaml`` under ``root`` (or ``root`` itself), sorted."""
    if root.is_file():
        return [root]
    return sorted(root.rglob("*.fga.yaml"))
