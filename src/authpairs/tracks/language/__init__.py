"""The language track: 50 synthetic scenarios x 4 contexts, backed by typed facts, exact source
spans and one permission expression per scenario, checked by two independent evaluators.

Public API (import from the defining modules):

* :func:`.cases.load_language_dataset` -- the packaged scenarios as a dataset of cases
  (stable order, stable ids).
* :func:`.loader.load_scenarios` -- the typed scenario models (for checks and tooling).
* :func:`.checks.check_language` -- the full data check (format, quotes, evaluators,
  distribution, ...).
"""
