; Functions carrying a decorator: the candidates for @cute.kernel / @cute.jit.
; The decorator expression is resolved against the file's imports in Rust,
; so `@cute.kernel`, `@cutlass.cute.kernel`, `@kernel` (from cutlass.cute
; import kernel) and `@cute.jit(...)` all qualify.
(decorated_definition
  (decorator) @decorator
  definition: (function_definition
    name: (identifier) @name)) @definition
