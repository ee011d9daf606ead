"""The wheel check of CI (scripts/check_wheel.py) fails on a wheel that lacks or adds a file."""

from __future__ import annotations

import importlib
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
ENTRY_POINTS = ("[console_scripts]\nauthpairs = authpairs.cli:main\n\n[inspect_ai]\n"
                "authpairs = authpairs.integrations.inspect_tasks\n\n[authpairs.backends]\n"
                "inspect = authpairs.integrations.inspect_backend:InspectBackendConfig\n")
TRACKED = ["src/authpairs/__init__.py", "src/authpairs/review/templates/direct.j2",
           "src/authpairs/tracks/native/sources_manifest.json", "README.md", "tests/x.py"]


def _script() -> ModuleType:
    sys.path.insert(0, str(SCRIPTS))
    try:
        return importlib.import_module("check_wheel")
    finally:
        sys.path.remove(str(SCRIPTS))


def _wheel(path: Path, members: list[str], entry_points: str = ENTRY_POINTS) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name in members:
            archive.writestr(name, "x")
        archive.writestr("authpairs-0.1.0.dist-info/entry_points.txt", entry_points)
        archive.writestr("authpairs-0.1.0.dist-info/RECORD", "")
    return path


def test_a_complete_wheel_passes(tmp_path: Path) -> None:
    package = [n.removeprefix("src/") for n in TRACKED if n.startswith("src/")]
    _script().check_wheel_contents(_wheel(tmp_path / "ok.whl", package), TRACKED)


@pytest.mark.parametrize(("members", "entry_points", "problem"), [
    (["authpairs/__init__.py", "authpairs/review/templates/direct.j2"], ENTRY_POINTS,
     "missing ['authpairs/tracks/native/sources_manifest.json']"),
    (["authpairs/__init__.py", "authpairs/review/templates/direct.j2",
      "authpairs/tracks/native/sources_manifest.json", "tests/x.py"], ENTRY_POINTS,
     "unexpected ['tests/x.py']"),
    (["authpairs/__init__.py", "authpairs/review/templates/direct.j2",
      "authpairs/tracks/native/sources_manifest.json"], "[console_scripts]\n", "lacks"),
])
def test_a_wheel_without_its_data_or_with_more_fails(tmp_path: Path, members: list[str],
                                                      entry_points: str, problem: str) -> None:
    script = _script()
    with pytest.raises(script.CheckFailed, match=problem.replace("[", r"\[").replace("]", r"\]")):
        script.check_wheel_contents(_wheel(tmp_path / "bad.whl", members, entry_points), TRACKED)
