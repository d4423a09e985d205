"""Conventions of the Hugging Face Hub's dataset card header shared by every build's card."""

from __future__ import annotations

_SIZES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
          (10_000_000, "1M<n<10M"))


def size_category(n: int) -> str:
    """The Hub's ``size_categories`` bucket of a dataset with ``n`` rows."""
    return next((name for limit, name in _SIZES if n < limit), "n>10M")
