"""Read Cedar example folders: policies, optional schema, entities, template links, requests.

An example folder holds ``policies.cedar``, ``entities.json`` (or ``*.cedarentities.json``), an
optional schema (``policies.cedarschema`` or ``*.cedarschema.json``), an optional ``linked`` file
of template links (``template_id``, ``link_id``, ``args``) and request files under ``ALLOW/``
and ``DENY/``; the folder name is the expected decision, as in the upstream test scripts.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from authpairs.cases.canonical import canonical_json
from authpairs.tracks.native.errors import NativeImportError

EXPECTATIONS = {"ALLOW": True, "DENY": False}
REQUEST_KEYS = {"principal", "action", "resource", "context"}


@dataclass(frozen=True)
class CedarRequest:
    """One request file: principal, action, resource, context and the expected decision."""

    path: Path
    locator: str
    principal: str
    action: str
    resource: str
    context: dict[str, Any]
    expected: bool

    def as_engine_request(self) -> dict[str, Any]:
        """The request in the form ``cedarpy.is_authorized_batch`` takes."""
        return {"principal": self.principal, "action": self.action,
                "resource": self.resource, "context": self.context}


@dataclass
class CedarExample:
    """One example folder: the policy set, schema, entities, links and requests."""

    folder: Path
    name: str
    policies_path: Path
    policies_text: str
    entities_path: Path
    entities: list[dict[str, Any]]
    schema_path: Path | None = None
    schema_text: str | None = None
    links: list[dict[str, Any]] = field(default_factory=list)
    requests: list[CedarRequest] = field(default_factory=list)

    def sorted_entities(self) -> list[dict[str, Any]]:
        """Entities in canonical order (every value kept)."""
        return sorted(self.entities, key=canonical_json)


def _read_json(path: Path, locator: str | None = None) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise NativeImportError(path, f"cannot read file: {exc.strerror or exc}", locator) from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise NativeImportError(path, f"invalid JSON (line {exc.lineno}, column {exc.colno}): "
                                      f"{exc.msg}", locator) from exc


def _entity_uid(value: Any) -> str:
    """A request entity as Cedar text: strings pass through, ``{type, id}`` dicts are joined."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        inner = value.get("__entity", value)
        if isinstance(inner, dict) and isinstance(inner.get("type"), str) and "id" in inner:
            return f"{inner['type']}::{json.dumps(str(inner['id']))}"
    raise ValueError("not an entity reference")


def read_request(path: Path, expected: bool, locator: str) -> CedarRequest:
    """Parse one request file."""
    raw = _read_json(path, locator)
    if not isinstance(raw, dict):
        raise NativeImportError(path, "a request file must be a JSON object", locator)
    unknown = set(raw) - REQUEST_KEYS
    if unknown:
        raise NativeImportError(path, f"unknown request field(s): {sorted(unknown)}", locator)
    parts: dict[str, str] = {}
    for key in ("principal", "action", "resource"):
        try:
            parts[key] = _entity_uid(raw.get(key))
        except ValueError as exc:
            raise NativeImportError(path, f"'{key}' must be an entity reference such as "
                                          "User::\"alice\"", locator) from exc
    context = raw.get("context") or {}
    if not isinstance(context, dict):
        raise NativeImportError(path, "'context' must be a JSON object", locator)
    return CedarRequest(path, locator, parts["principal"], parts["action"], parts["resource"],
                        context, expected)


def _one(folder: Path, patterns: tuple[str, ...]) -> Path | None:
    for pattern in patterns:
        found = sorted(folder.glob(pattern))
        if found:
            return found[0]
    return None


def _links(folder: Path) -> list[dict[str, Any]]:
    path = folder / "linked"
    if not path.is_file():
        return []
    raw = _read_json(path)
    if not isinstance(raw, list):
        raise NativeImportError(path, "a 'linked' file must be a JSON list of links")
    for i, link in enumerate(raw):
        ok = (isinstance(link, dict) and isinstance(link.get("template_id"), str)
              and isinstance(link.get("link_id"), str) and isinstance(link.get("args"), dict))
        if not ok:
            raise NativeImportError(path, "a link needs 'template_id', 'link_id' and 'args'",
                                    f"[{i}]")
    return raw


def load_cedar_example(folder: Path | str, root: Path | None = None,
                       use_schema: bool = True) -> CedarExample:
    """Parse one example folder; ``root`` sets how request locators are written."""
    folder = Path(folder)
    policies = _one(folder, ("policies.cedar", "*.cedar"))
    if policies is None:
        raise NativeImportError(folder, "no policies.cedar in this folder")
    entities_path = _one(folder, ("entities.json", "*.cedarentities.json"))
    if entities_path is None:
        raise NativeImportError(folder, "no entities.json in this folder")
    entities = _read_json(entities_path)
    if not isinstance(entities, list):
        raise NativeImportError(entities_path, "entities must be a JSON list")
    schema_path = _one(folder, ("*.cedarschema", "*.cedarschema.json")) if use_schema else None
    name = folder.name if root is None else folder.relative_to(root).as_posix()
    example = CedarExample(
        folder=folder, name=name, policies_path=policies,
        policies_text=policies.read_text(encoding="utf-8"), entities_path=entities_path,
        entities=entities, schema_path=schema_path,
        schema_text=schema_path.read_text(encoding="utf-8") if schema_path else None,
        links=_links(folder),
    )
    for label, expected in EXPECTATIONS.items():
        for path in sorted((folder / label).glob("*.json")):
            locator = f"{label}/{path.name}"
            example.requests.append(read_request(path, expected, locator))
    if not example.requests:
        raise NativeImportError(folder, "no request files under ALLOW/ or DENY/")
    return example


def find_example_folders(root: Path) -> list[Path]:
    """Every folder under ``root`` (``root`` included) with ALLOW/ or DENY/ request folders."""
    candidates = [root, *sorted(p for p in root.rglob("*") if p.is_dir())]
    return [p for p in candidates
            if any((p / label).is_dir() for label in EXPECTATIONS)
            and any(p.glob("*.cedar"))]


_UNDECLARED = re.compile(r"(?:entity `(?P<uid>[^`]+)` has )?(?P<role>principal |resource |"
                         r"action )?type `(?P<type>[^`]+)`(?: which)? is not declared in the "
                         r"schema")
_DUMP = re.compile(r"from:\s*[\[{].*[\]}]:\s*", re.DOTALL)
_MAX_DETAIL = 240


def short_engine_error(example: CedarExample, message: str,
                       request: CedarRequest | None = None) -> NativeImportError:
    """A one- or two-line error for a Cedar engine failure, naming the file and entity type.

    Input data echoed by the engine (the whole entities JSON) is cut out. An entity type the
    schema does not declare names the schema file and suggests ``--no-schema``; an entities
    problem names the entities file, a request problem the request file.
    """
    detail = _DUMP.sub("", message).strip()
    entities_problem = "entities" in message and "from:" in message
    if len(detail) > _MAX_DETAIL:
        detail = detail[:_MAX_DETAIL].rstrip() + f"... ({len(detail) - _MAX_DETAIL} more chars)"
    found = _UNDECLARED.search(message)
    if found is not None and example.schema_path is not None:
        what = f"entity {found['uid']}" if found["uid"] else (
            f"the request's {found['role'].strip()}" if found["role"] else "an entity")
        text = (f"{what} has type {found['type']}, which {example.schema_path.name} does not "
                f"declare.\nDeclare {found['type']} in the schema, or import with --no-schema "
                "to label the requests without the schema.")
    else:
        text = f"the Cedar engine failed: {detail}"
    if entities_problem or request is None:
        return NativeImportError(example.entities_path, text)
    return NativeImportError(request.path, text, request.locator)
