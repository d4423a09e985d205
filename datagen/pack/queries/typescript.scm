; TypeScript adds `import x = require("...")` to the JavaScript forms.
(import_statement source: (string (string_fragment) @spec))
(export_statement source: (string (string_fragment) @spec))
(import_require_clause source: (string (string_fragment) @spec))
(call_expression
  function: (identifier) @_fn
  arguments: (arguments . (string (string_fragment) @spec))
  (#eq? @_fn "require"))
(call_expression function: (import) arguments: (arguments . (string (string_fragment) @spec)))
