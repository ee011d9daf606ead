"""Build a backend from its configuration: the config model of each kind names its factory."""

from __future__ import annotations

from authpairs.backends.base import Backend
from authpairs.backends.config import BackendConfigBase


def make_backend(config: BackendConfigBase) -> Backend:
    """Instantiate the backend ``config`` describes (imports only that backend's module)."""
    return config.create()
