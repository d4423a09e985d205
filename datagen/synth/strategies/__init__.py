"""Mutation strategies: one class per kind, registered by name (see ``registry``).

Families: ``procedural`` (python_procedural, python_structural, js_procedural, and
``generic`` for Go, Rust, Java, C, C++, Ruby and PHP over the tables of ``grammar_tables``),
``removal`` (removal) and ``feature_removal`` (feature_removal; ``generic.RemoveFunction``).
"""
