"""Process facts shared by the records store and the sandbox (both reclaim what dead processes
left behind)."""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    """True when a process with ``pid`` exists on this host (even one we may not signal)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
