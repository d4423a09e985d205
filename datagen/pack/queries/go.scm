; Go: every import spec's path.
(import_spec path: (interpreted_string_literal (interpreted_string_literal_content) @path))
(import_spec path: (raw_string_literal (raw_string_literal_content) @path))
