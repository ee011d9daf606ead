"""Backends: where a rendered chat request is answered."""
