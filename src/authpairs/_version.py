"""The version of authpairs (pyproject.toml builds the same; a test keeps them equal)."""

__version__ = "0.1.0"
