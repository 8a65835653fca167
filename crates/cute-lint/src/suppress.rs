//! `# cute-lsp: ignore[name, ...]` on a line silences those rules there;
//! `# cute-lsp: ignore` with no list silences every rule on the line.

use cute_syntax::LineIndex;

use crate::Diagnostic;

pub fn is_suppressed(diag: &Diagnostic, index: &LineIndex) -> bool {
    let line = index.line_of(diag.range.start);
    let text = index.line_text(line);
    let Some(at) = text.find("# cute-lsp: ignore") else { return false };
    let rest = &text[at + "# cute-lsp: ignore".len()..];
    match rest.strip_prefix('[').and_then(|r| r.split_once(']')) {
        Some((list, _)) => list
            .split(',')
            .map(str::trim)
            .any(|n| n == diag.name || n.eq_ignore_ascii_case(diag.code)),
        None => true,
    }
}
