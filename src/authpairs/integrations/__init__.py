"""Integrations with other evaluation ecosystems: Inspect AI tasks and log import."""
