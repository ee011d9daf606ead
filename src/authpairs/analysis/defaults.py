"""Defaults of the analysis commands, in a module that imports nothing heavy.

The command line shows them in ``--help``; keeping them here (rather than beside the statistics
that use them) means listing the commands does not load numpy and scipy.
"""

from __future__ import annotations

from pathlib import Path

import authpairs.main_job as main_job

DEFAULT_RECORDS = Path(main_job.RECORDS)
"""The records file a bare ``RUN_ID`` refers to (the one a run writes by default)."""
DEFAULT_DRAWS = 10_000
"""Bootstrap draws of the cluster bootstrap and Monte Carlo tests."""
DEFAULT_SEED = 39039
"""Seed of the bootstrap and Monte Carlo draws."""
