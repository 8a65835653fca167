//! Rules, diagnostics and the incremental database of cute-lsp.
//!
//! The stages (`cute-syntax` -> `cute-ir` -> `cute-check`) are pure functions;
//! this crate wires them into salsa queries keyed by file and kernel so that
//! an edit re-runs only what it invalidates, and turns checker findings into
//! diagnostics through the rule modules.

pub(crate) mod analysis;
pub mod config;
mod context;
mod db;
mod diagnostic;
mod memory;
mod named;
pub mod hover;
mod incremental;
mod linked;
pub mod rules;
pub mod sources;
mod suppress;

pub use analysis::{analyze_file, analyze_text, analyze_text_with, lower_linked, AnalysisOptions, Explorer};
pub use sources::DiskSources;
pub use config::Config;
pub use db::{check_counts, line_index, lint_file, lint_file_with, CheckCounts, Database, Db, Package, SourceFile};
pub use incremental::linked_paths;
pub use cute_check::trace::{BarrierAt, Event as TraceEvent, EventKind, EventOp, Lane};
pub use diagnostic::{Applicability, Diagnostic, Edit, Fix, OtherFile, Related, Severity};
pub use hover::{hover, Hover};
