"""Task synthesis: code entities, mutation strategies (one class per kind) and their registry.

``entities.extract_entities`` finds functions, methods and classes with tree-sitter;
``strategies.registry`` names every mutation kind. Strategies edit source text by minimal
byte splices, so a candidate's diff touches only the mutated lines.
"""
