"""Usable-CPU detection from affinity and cgroup quotas (fake cgroup folders), and the thread
count the embedded server derives from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from authpairs.backends.cpus import cgroup_cpu_limit, usable_cpus
from authpairs.backends.local_server import default_threads


def _write(root: Path, name: str, text: str) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def test_cgroup_v2_quota(tmp_path: Path) -> None:
    _write(tmp_path, "cpu.max", "150000 100000")
    assert cgroup_cpu_limit(tmp_path) == pytest.approx(1.5)


def test_cgroup_v2_unlimited(tmp_path: Path) -> None:
    _write(tmp_path, "cpu.max", "max 100000")
    assert cgroup_cpu_limit(tmp_path) is None


def test_cgroup_v1_fallback(tmp_path: Path) -> None:
    _write(tmp_path, "cpu/cpu.cfs_quota_us", "200000")
    _write(tmp_path, "cpu/cpu.cfs_period_us", "100000")
    assert cgroup_cpu_limit(tmp_path) == pytest.approx(2.0)


def test_cgroup_v1_unlimited(tmp_path: Path) -> None:
    _write(tmp_path, "cpu/cpu.cfs_quota_us", "-1")
    _write(tmp_path, "cpu/cpu.cfs_period_us", "100000")
    assert cgroup_cpu_limit(tmp_path) is None


def test_no_cgroup_files(tmp_path: Path) -> None:
    assert cgroup_cpu_limit(tmp_path) is None


def test_garbage_is_ignored(tmp_path: Path) -> None:
    _write(tmp_path, "cpu.max", "lots 100000")
    assert cgroup_cpu_limit(tmp_path) is None


def test_quota_caps_affinity_rounding_up(tmp_path: Path) -> None:
    _write(tmp_path, "cpu.max", "150000 100000")
    assert usable_cpus(affinity=16, root=tmp_path) == 2
    assert usable_cpus(affinity=1, root=tmp_path) == 1


def test_affinity_without_quota(tmp_path: Path) -> None:
    assert usable_cpus(affinity=3, root=tmp_path) == 3


def test_tiny_quota_still_one_cpu(tmp_path: Path) -> None:
    _write(tmp_path, "cpu.max", "10000 100000")
    assert usable_cpus(affinity=8, root=tmp_path) == 1


def test_live_values_are_positive() -> None:
    assert usable_cpus() >= 1


@pytest.mark.parametrize(("cpus", "threads"), [(1, 1), (2, 1), (3, 2), (4, 3), (32, 8)])
def test_default_threads_leave_one_cpu_for_the_harness(cpus: int, threads: int) -> None:
    assert default_threads(cpus) == threads
