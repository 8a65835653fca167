//! The synchronization IR of cute-lsp.
//!
//! `lower` turns a parsed file into an owned AST (`ast`, a `module` per file)
//! with callee names resolved through the imports; `api` recognises the CuTe
//! DSL sync calls, and `ptx` the synchronization written as inline PTX; `slice`
//! keeps the statements synchronization depends on; `eval` gives values to
//! names (module constants, `cutlass.Constexpr` arguments from the launch,
//! class attributes), `layout` evaluates element types and layouts, and
//! `launch` runs the host code for the launch configuration.
//!
//! Nothing here runs the threads of a kernel: values are evaluated for whoever
//! asks (`cute-check` asks once per thread), and what a call means to a thread
//! is the [`eval::CallHandler`] the caller supplies.

pub mod api;
pub mod ast;
pub mod eval;
pub mod launch;
pub mod layout;
pub mod link;
mod lower;
pub mod module;
pub mod objects;
pub mod ptx;
pub mod slice;

pub use lower::{lower_module, lower_module_importing, lower_recovering};
pub use module::Module;
pub use slice::{slice_kernel, Kept, Slice};

/// Parse and lower a file in one step, a syntax error kept to its section.
pub fn lower_text(text: &str) -> Result<Module, cute_syntax::ParseError> {
    let tree = cute_syntax::parse(text)?;
    Ok(lower_recovering(&tree))
}
