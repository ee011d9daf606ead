"""Analysis: reads run records only, never calls a model.

Python API (pure functions over lists of :class:`~authpairs.runs.records.CaseRecord`):

* :mod:`.compare` / :mod:`.contrast` -- request-level comparison (``compare_runs``) with exact
  McNemar, scenario-cluster bootstrap, cluster sign-flip test and the resolved-only view;
* :mod:`.stats` -- the statistics themselves, and Holm;
* :mod:`.study` / :mod:`.family` -- configurations x seeds and declared contrast families;
* :mod:`.compose` -- all-must-allow composition replay (``compose_all``);
* :mod:`.cost` -- count loss, break-even ratios and selection grids;
* :mod:`.gate` -- the acceptance test for a guardrail change (``run_gate``);
* :mod:`.runref` -- ``RUN_ID`` / ``PATH::RUN_ID`` addressing.

Tables and files that show these results live in :mod:`authpairs.report`.

:mod:`.scoring` (per-run scores) belongs to the core.
"""
