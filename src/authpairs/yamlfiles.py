"""Reading the project's YAML files (run configs, study plans, contrast families, cost grids)
and turning pydantic validation errors into messages that name the file and the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError


def read_yaml_mapping(path: str | Path, what: str, error: type[Exception],
                      hint: str = "") -> dict[str, Any]:
    """Load ``path`` and require a mapping at the top; failures raise ``error`` naming the file.

    ``what`` names the kind of file in messages ('configuration', 'study plan', ...); ``hint``
    is appended to the message when the top level is not a mapping. An empty file is an empty
    mapping.
    """
    p = Path(path)
    try:
        raw = yaml.safe_load(p.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise error(f"{p}: cannot read {what}: {exc}") from exc
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise error(f"{p}: a {what} must be a mapping{hint}")
    return raw


def first_error(exc: ValidationError) -> tuple[str, str]:
    """The dotted location and message of the first error in a pydantic ValidationError."""
    first = exc.errors()[0]
    return ".".join(str(part) for part in first["loc"]), first["msg"]
