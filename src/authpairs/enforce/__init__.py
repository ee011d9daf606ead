"""Enforcement: the enforcement point, the per-run sandbox, effect executors and verifiers."""
