//! Syntax layer of cute-lsp: parse Python with tree-sitter, map byte offsets
//! to editor positions, read the file's imports and find the CuTe DSL kernels.
//!
//! Everything here is purely syntactic. Names are resolved only as far as the
//! import statements allow (`cute.arch.mbarrier_wait` -> the qualified path
//! `cutlass.cute.arch.mbarrier_wait`); meaning is given by `cute-ir`.

mod comment_runs;
mod edit;
mod imports;
pub mod kernels;
mod line_index;
mod parse;
mod queries;
pub mod recover;

pub use comment_runs::{for_the_parser, COMMENT_RUN};
pub use edit::edited_range;
pub use imports::ImportMap;
pub use kernels::{find_kernels, may_define_kernels, DecoratorKind, KernelDef};
pub use line_index::{LineCol, LineIndex, PositionEncoding};
pub use parse::{node_text, parse, ParseError, SyntaxTree};
pub use queries::Queries;
pub use recover::{recover, Recovery};
pub use tree_sitter;

/// A half-open byte range `[start, end)` into the source text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TextRange {
    pub start: u32,
    pub end: u32,
}

impl TextRange {
    pub fn new(start: usize, end: usize) -> Self {
        TextRange { start: start as u32, end: end as u32 }
    }

    pub fn of(node: &tree_sitter::Node<'_>) -> Self {
        TextRange::new(node.start_byte(), node.end_byte())
    }

    pub fn len(&self) -> u32 {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    pub fn contains(&self, offset: u32) -> bool {
        self.start <= offset && offset < self.end
    }
}
