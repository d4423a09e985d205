"""datagen: training data for coding-agent language models.

Three builds share one manifest format: a CPT code corpus, verified agent tasks and an
RL instruction pool. Nothing heavy is imported here; see ARCHITECTURE.md for the floors.
"""

__version__ = "0.1.0"
