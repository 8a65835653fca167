//! What the tests of quick fixes and fixtures share: reading a fixture,
//! applying a fix, the findings of one rule. Each test file uses a part of
//! it.
#![allow(dead_code)]

use cute_lint::{analyze_text, AnalysisOptions, Diagnostic, Fix};

/// The text of `tests/fixtures/<path>`.
pub fn fixture(path: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures").join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `text` with the edits of `fix` made, the last first.
pub fn apply(text: &str, fix: &Fix) -> String {
    let mut edits = fix.edits.clone();
    edits.sort_by_key(|e| std::cmp::Reverse(e.range.start));
    let mut out = text.to_string();
    for e in edits {
        out.replace_range(e.range.start as usize..e.range.end as usize, &e.new_text);
    }
    out
}

/// The findings of `rule` in `src`.
pub fn of_rule(src: &str, rule: &str) -> Vec<Diagnostic> {
    analyze_text(src, &AnalysisOptions::default()).into_iter().filter(|d| d.name == rule).collect()
}

/// `text` with its first `from` made `to`; `from` must be there.
pub fn replaced(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "{from}");
    text.replacen(from, to, 1)
}
