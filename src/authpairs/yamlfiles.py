"""Reading the project's YAML files (run configs, study plans, contrast families, cost grids)
and turning pydantic validation errors into messages that name the file and the field."""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError


def read_yaml_mapping(path: str | Path, what: str, error: type[Exception],
                      hint: str = "") -> dict[str, Any]:
    """Load ``path`` and require a mapping at the top; failures raise ``error`` naming the file.

    ``what`` names the kind of file in messages ('configuration', 'study plan', ...); ``hint``
    is appended to the message when the top level is not a mapping. An empty file is an empty
    mapping.
    """
    import yaml  # loaded by the commands that read a YAML file, not by every start

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
    """The dotted location and message of the first error in a pydantic ValidationError.

    A value outside a fixed set of choices (a ``Literal`` or enum field) is named in the
    message with the choices nearest to it: ``'always-alow' is not one of them; nearest:
    'always-allow'``."""
    first = exc.errors()[0]
    message = first["msg"]
    if first.get("type") in ("literal_error", "enum") and isinstance(first.get("input"), str):
        expected = str((first.get("ctx") or {}).get("expected", ""))
        # the quoted names in pydantic's list of choices ('dev', 'test' or 'all')
        choices = [match.group(2) for match in re.finditer(r"(['\"])(.*?)\1", expected)]
        close = difflib.get_close_matches(first["input"], choices, n=3, cutoff=0.5)
        nearest = f"; nearest: {', '.join(repr(c) for c in close)}" if close else ""
        message = f"{message}; got {first['input']!r}{nearest}"
    return ".".join(str(part) for part in first["loc"]), message
