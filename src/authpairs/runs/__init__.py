"""Runs: orchestration, the SQLite record store and export."""
