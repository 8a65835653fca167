; `import a.b.c` and `import a.b.c as x`
(import_statement
  name: [
    (dotted_name) @module
    (aliased_import name: (dotted_name) @module alias: (identifier) @alias)
  ])

; `from a.b import c` and `from a.b import c as x`, and relative
; imports (`from .a import c`, `from .. import c`)
(import_from_statement
  module_name: [(dotted_name) (relative_import)] @from
  name: [
    (dotted_name) @name
    (aliased_import name: (dotted_name) @name alias: (identifier) @alias)
  ])

; `from a.b import *`
(import_from_statement
  module_name: [(dotted_name) (relative_import)] @from
  (wildcard_import) @wildcard)
