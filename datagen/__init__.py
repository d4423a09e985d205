"""datagen: training data for coding-agent language models.

Three builds share one manifest format: a CPT code corpus, verified agent tasks and an
RL instruction pool. Nothing heavy is imported here; docs/layout.md shows where each part
lives and the import floors (tests/test_layers.py holds them).
"""

__version__ = "0.1.0"
