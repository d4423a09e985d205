"""Mutation strategies: one class per kind, registered by name (see ``registry``).

Families: ``procedural`` (python_procedural, python_structural, js_procedural),
``removal`` (removal) and ``feature_removal`` (feature).
"""
