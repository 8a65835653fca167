; Every call site; the callee is resolved through the import map to decide
; whether it is part of the synchronization API (see cute-ir's api table).
(call
  function: [
    (identifier)
    (attribute)
  ] @callee) @call
