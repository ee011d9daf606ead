"""The language track: 50 synthetic scenarios x 4 contexts, backed by typed facts, exact source
spans and one permission expression per scenario, checked by two independent evaluators.

Public API:

* :func:`load_language_dataset` -- the packaged scenarios as an :class:`~authpairs.cases.dataset.
  Dataset` of cases (stable order, stable ids).
* :func:`load_scenarios` -- the typed scenario models (for checks and tooling).
* :func:`check_language` -- the full data check (format, quotes, evaluators, distribution, ...).
"""

from __future__ import annotations

from authpairs.tracks.language.cases import build_cases, load_language_dataset
from authpairs.tracks.language.checks import CheckReport, check_language
from authpairs.tracks.language.loader import (
    ScenarioError,
    load_scenario_file,
    load_scenarios,
    scenarios_root,
)
from authpairs.tracks.language.models import Scenario

__all__ = [
    "CheckReport",
    "Scenario",
    "ScenarioError",
    "build_cases",
    "check_language",
    "load_language_dataset",
    "load_scenario_file",
    "load_scenarios",
    "scenarios_root",
]
