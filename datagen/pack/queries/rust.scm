; Rust: out-of-line `mod x;`, `use` trees and `extern crate`.
(mod_item name: (identifier) @mod !body)
(use_declaration argument: (_) @use)
(extern_crate_declaration name: (identifier) @crate)
