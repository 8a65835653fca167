//! `--format concise`: one line per finding,
//!
//! ```text
//! tests/fixtures/untoggled_phase/jacobi_cluster_bug.py:78:9: CUTE001 untoggled-phase: `jacobi_kernel` can hang at this wait: ...
//! ```
//!
//! as ruff's concise output and compilers print them, for a terminal, a grep
//! or an editor's quickfix list: the path as given (as `human` and `json`
//! print it), the 1-based line and column (in characters, as the `human`
//! header counts them) of the start of the finding, its code and name, and
//! its message, whose line breaks (if any) become spaces so that each finding
//! stays on one line. The trace, notes, help and fixes are left to the other
//! formats. The run's summary follows on stderr, as with `human`.

use std::io::Write;

use cute_lint::Diagnostic;
use cute_syntax::LineIndex;

use super::{position, Columns};

/// The line of one finding, without its line break.
pub fn line(path: &str, text: &str, index: &LineIndex, d: &Diagnostic) -> String {
    let at = position(text, index, d.range.start, Columns::Chars);
    let message = d.message.replace("\r\n", " ").replace(['\n', '\r'], " ");
    format!("{path}:{}:{}: {} {}: {message}", at.line, at.col, d.code, d.name)
}

/// Write the lines of one file's findings to `out`.
pub fn write(out: &mut dyn Write, path: &str, text: &str, index: &LineIndex, diags: &[Diagnostic]) -> std::io::Result<()> {
    for d in diags {
        writeln!(out, "{}", line(path, text, index, d))?;
    }
    Ok(())
}
