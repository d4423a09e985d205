; Python: `import a.b` and `from X import n` (X absolute or relative).
(import_statement name: (dotted_name) @import)
(import_statement name: (aliased_import name: (dotted_name) @import))
(import_from_statement) @from
