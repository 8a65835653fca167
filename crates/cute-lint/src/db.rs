//! The salsa database: one input per open file, tracked queries over it.

use std::sync::Arc;

use cute_syntax::LineIndex;

use crate::{analysis, Diagnostic};

/// A Python file as the editor or the file system has it.
#[salsa::input]
pub struct SourceFile {
    #[returns(ref)]
    pub path: String,
    #[returns(ref)]
    pub text: String,
}

#[salsa::db]
#[derive(Default, Clone)]
pub struct Database {
    storage: salsa::Storage<Self>,
}

#[salsa::db]
impl salsa::Database for Database {}

/// Line starts of the file, for converting byte ranges to positions.
#[salsa::tracked(returns(ref))]
pub fn line_index(db: &dyn salsa::Database, file: SourceFile) -> Arc<LineIndex> {
    Arc::new(LineIndex::new(file.text(db)))
}

/// Every diagnostic of the file, in source order.
#[salsa::tracked(returns(ref))]
pub fn lint_file(db: &dyn salsa::Database, file: SourceFile) -> Arc<Vec<Diagnostic>> {
    Arc::new(analysis::analyze_text(file.text(db), &analysis::AnalysisOptions::default()))
}
