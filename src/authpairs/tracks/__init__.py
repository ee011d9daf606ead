"""Benchmark tracks: the language track and the native-policy track."""
