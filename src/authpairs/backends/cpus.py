"""How many CPUs this process may really use: its affinity mask, capped by a cgroup CPU quota.

``os.cpu_count()`` counts the machine's cores, not the ones a container or ``taskset`` grants, so
the embedded server's thread count is derived from :func:`usable_cpus` instead.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def cgroup_cpu_limit(root: Path = CGROUP_ROOT) -> float | None:
    """The cgroup CPU quota in CPUs (quota / period), or None when unlimited or unknown.

    Reads cgroup v2 ``cpu.max`` ("max 100000" or "200000 100000") and falls back to cgroup v1
    ``cpu/cpu.cfs_quota_us`` and ``cpu/cpu.cfs_period_us`` (a quota of -1 means unlimited).
    """
    v2 = _read(root / "cpu.max")
    if v2 is not None:
        fields = v2.split()
        if len(fields) == 2 and fields[0] != "max":
            return _ratio(fields[0], fields[1])
        return None
    for folder in (root / "cpu", root / "cpu,cpuacct", root):
        quota = _read(folder / "cpu.cfs_quota_us")
        period = _read(folder / "cpu.cfs_period_us")
        if quota is not None and period is not None:
            return _ratio(quota, period)
    return None


def _ratio(quota: str, period: str) -> float | None:
    try:
        quota_us, period_us = int(quota), int(period)
    except ValueError:
        return None
    if quota_us <= 0 or period_us <= 0:
        return None
    return quota_us / period_us


def usable_cpus(affinity: int | None = None, *, root: Path = CGROUP_ROOT) -> int:
    """Whole CPUs this process can use: the affinity count, capped by the cgroup quota (read
    under ``root``) rounded up (a quota of 1.5 CPUs still lets two threads make progress), and
    at least 1.

    ``affinity`` defaults to the CPUs in this process's affinity mask (``os.cpu_count()`` where
    affinity is unsupported).
    """
    if affinity is not None:
        count = affinity
    elif hasattr(os, "sched_getaffinity"):
        count = len(os.sched_getaffinity(0))
    else:
        count = os.cpu_count() or 1
    limit = cgroup_cpu_limit(root)
    if limit is not None:
        count = min(count, math.ceil(limit))
    return max(1, count)
