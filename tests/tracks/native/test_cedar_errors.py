"""Cedar import errors are short: file and entity type in two lines, no echoed input data."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from authpairs.tracks.native.byo import import_cedar
from authpairs.tracks.native.errors import NativeImportError

CEDAR_BAD = Path(__file__).parent / "fixtures" / "cedar" / "bad"


def _with_undeclared_entity(tmp_path: Path) -> Path:
    folder = tmp_path / "clinic"
    shutil.copytree(CEDAR_BAD / "undeclared-type", folder)
    entities = json.loads((folder / "entities.json").read_text(encoding="utf-8"))
    entities.append({"uid": {"type": "Clinic::Visitor", "id": "v0"},
                     "attrs": {"note": "x" * 2000}, "parents": []})
    entities += [{"uid": {"type": "Clinic::Staff", "id": f"s{i}"}, "attrs": {}, "parents": []}
                 for i in range(50)]
    (folder / "entities.json").write_text(json.dumps(entities), encoding="utf-8")
    return folder


def test_undeclared_entity_type_names_file_and_type_without_dump(tmp_path: Path) -> None:
    folder = _with_undeclared_entity(tmp_path)
    with pytest.raises(NativeImportError) as info:
        import_cedar(folder)
    message = str(info.value)
    assert message.startswith(f"{folder / 'entities.json'}: ")
    assert "Clinic::Visitor" in message and "--no-schema" in message
    assert "xxxx" not in message and "Clinic::Staff" not in message
    assert len(message.splitlines()) <= 2 and len(message) < 400


def test_undeclared_request_type_suggests_no_schema() -> None:
    with pytest.raises(NativeImportError) as info:
        import_cedar(CEDAR_BAD / "undeclared-type")
    lines = str(info.value).splitlines()
    assert len(lines) == 2
    assert "ALLOW/visitor.json" in lines[0] and "Clinic::Visitor" in lines[0]
    assert "--no-schema" in lines[1]


def test_without_schema_there_is_no_schema_hint() -> None:
    with pytest.raises(NativeImportError) as info:
        import_cedar(CEDAR_BAD / "undeclared-type", use_schema=False)
    assert "--no-schema" not in str(info.value)
