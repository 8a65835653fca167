//! From source text to diagnostics, without the database (the CLI's path,
//! and what every salsa query bottoms out in).

use cute_syntax::LineIndex;

use crate::{suppress, Diagnostic};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnalysisOptions {}

impl Default for AnalysisOptions {
    fn default() -> Self {
        AnalysisOptions {}
    }
}

pub fn analyze_text(text: &str, _options: &AnalysisOptions) -> Vec<Diagnostic> {
    let index = LineIndex::new(text);
    let mut diags: Vec<Diagnostic> = Vec::new();
    diags.retain(|d| !suppress::is_suppressed(d, &index));
    diags.sort_by_key(|d| (d.range.start, d.code));
    diags
}
