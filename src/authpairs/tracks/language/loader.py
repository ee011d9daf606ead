"""Load scenario YAML files into validated :class:`~.models.Scenario` objects.

Every problem is reported as ``<file>: <field>: <message> (scenario <slug>, context <id>)``,
e.g. ``payments/x.yaml: contexts[2].facts.grant.limit.quote: quote not found in document d1:
'USD 100' (scenario x, context c3)``.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from authpairs.errors import DataError
from authpairs.tracks.language.models import LoadedScenario, Scenario
from authpairs.tracks.language.validate import validate_scenario


@dataclass(frozen=True)
class Issue:
    """One problem in one scenario file."""

    file: str
    field: str
    message: str
    scenario: str = ""
    context: str = ""

    def __str__(self) -> str:
        where = ", ".join(part for part in (
            f"scenario {self.scenario}" if self.scenario else "",
            f"context {self.context}" if self.context else "") if part)
        text = f"{self.file}: {self.field}: {self.message}" if self.field else \
            f"{self.file}: {self.message}"
        return f"{text} ({where})" if where else text

    def to_dict(self) -> dict[str, str]:
        """Plain-JSON form."""
        return asdict(self)


class ScenarioError(DataError):
    """A scenario file is malformed. ``issues`` lists every problem found (file and field)."""

    def __init__(self, issues: list[Issue]) -> None:
        self.issues = issues
        super().__init__("\n".join(str(issue) for issue in issues))


_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available


class _NoTimestampLoader(_BaseLoader):  # type: ignore[misc]  # libyaml or pure loader
    """Safe YAML loader that keeps timestamps as the exact text the author wrote and rejects
    duplicate mapping keys (PyYAML would silently keep the last one)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        """Build a mapping, failing on a key that occurs twice."""
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, str | int | float | bool) and key in seen:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping", node.start_mark,
                    f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        result: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return result


_NoTimestampLoader.yaml_implicit_resolvers = {
    key: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def scenarios_root() -> Path:
    """Directory of the packaged scenario files."""
    return Path(__file__).resolve().parent / "scenarios"


def _field(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


_CONTEXT_INDEX = re.compile(r"^contexts\[(\d+)\]")


def locate(raw: Any, rel: str, field: str, message: str) -> Issue:
    """An issue naming the scenario (slug) and, for a field inside a context, its id."""
    slug = raw.get("slug") if isinstance(raw, dict) else None
    scenario = slug if isinstance(slug, str) else Path(rel).stem
    context = ""
    match = _CONTEXT_INDEX.match(field)
    contexts = raw.get("contexts") if isinstance(raw, dict) else None
    if match and isinstance(contexts, list) and int(match.group(1)) < len(contexts):
        item = contexts[int(match.group(1))]
        context = str(item.get("id", "")) if isinstance(item, dict) else ""
    return Issue(rel, field, message, scenario, context)


def read_scenario(path: Path, rel: str) -> tuple[Scenario | None, list[Issue]]:
    """Parse and validate one file; return the scenario (or None) and every issue found."""
    try:
        raw: Any = yaml.load(path.read_text(encoding="utf-8"), Loader=_NoTimestampLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        return None, [Issue(rel, where, f"invalid YAML: {getattr(exc, 'problem', exc)}",
                            Path(rel).stem)]
    except (OSError, UnicodeDecodeError) as exc:
        return None, [Issue(rel, "", f"cannot read file: {exc}", Path(rel).stem)]
    if not isinstance(raw, dict):
        return None, [Issue(rel, "", "a scenario file must be a YAML mapping", Path(rel).stem)]
    try:
        scenario = Scenario.model_validate(raw)
    except ValidationError as exc:
        return None, [locate(raw, rel, _field(tuple(err["loc"])), err["msg"])
                      for err in exc.errors()]
    problems = validate_scenario(scenario, path)
    return scenario, [locate(raw, rel, field, message) for field, message in problems]


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def load_scenario_file(path: str | Path, root: str | Path | None = None) -> LoadedScenario:
    """Load and validate one file. Raises :class:`ScenarioError` listing every issue."""
    p = Path(path)
    rel = _relative(p, Path(root) if root else p.parent.parent)
    scenario, issues = read_scenario(p, rel)
    if issues or scenario is None:
        raise ScenarioError(issues or [Issue(rel, "", "could not be loaded")])
    return LoadedScenario(scenario=scenario, path=rel)


def scenario_files(root: str | Path | None = None) -> list[Path]:
    """All ``<domain>/<slug>.yaml`` files under ``root`` (default: the packaged scenarios)."""
    base = Path(root) if root else scenarios_root()
    return sorted(base.glob("*/*.yaml")) + sorted(base.glob("*/*.yml"))


def collect_scenarios(root: str | Path | None = None
                      ) -> tuple[list[LoadedScenario], list[Issue]]:
    """Load every file under ``root``; return the valid scenarios and all issues (never raises)."""
    base = Path(root) if root else scenarios_root()
    loaded: list[LoadedScenario] = []
    issues: list[Issue] = []
    for path in scenario_files(base):
        rel = _relative(path, base)
        scenario, problems = read_scenario(path, rel)
        issues.extend(problems)
        if scenario is not None and not problems:
            loaded.append(LoadedScenario(scenario=scenario, path=rel))
    slugs: dict[str, str] = {}
    for item in loaded:
        other = slugs.setdefault(item.scenario.slug, item.path)
        if other != item.path:
            issues.append(Issue(item.path, "slug", f"duplicate slug (also in {other})",
                                item.scenario.slug))
    return loaded, issues


def load_scenarios(root: str | Path | None = None) -> list[LoadedScenario]:
    """Load every scenario under ``root``, sorted by path. Raises :class:`ScenarioError`."""
    loaded, issues = collect_scenarios(root)
    if issues:
        raise ScenarioError(issues)
    return loaded
