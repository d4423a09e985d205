"""Ecosystem profiles: one class per way of running a test suite (pytest, node, jest, go,
cargo, ...), found through ``registry.py``."""
