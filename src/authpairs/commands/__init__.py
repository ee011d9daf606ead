"""CLI command groups. Each module exposes ``register(app, data_app)`` and stays thin: it parses
arguments and calls the Python API of its area, imported inside the command function
(:mod:`authpairs.cli` says why)."""
