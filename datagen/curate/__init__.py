"""Curation steps for the CPT corpus: dedup, quality, syntax, secrets, decontamination."""
