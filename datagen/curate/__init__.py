"""Curation steps: dedup, quality, syntax, secrets, decontamination."""
