"""CLI command groups. Each module exposes ``register(app, data_app)`` and stays thin: it parses
arguments and calls the Python API of its area."""
