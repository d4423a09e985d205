"""Repo-level ordering (tree-sitter import graph), tokenization and sequence packing."""
