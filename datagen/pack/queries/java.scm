; Java: the file's package and its imports.
(package_declaration (scoped_identifier) @package)
(package_declaration (identifier) @package)
(import_declaration) @import
