//! The machine- and CI-oriented outputs of `cute-lsp check`, one module each:
//! `concise` (one `path:line:col: CODE name: message` line per finding),
//! `github` (GitHub Actions workflow commands, which become annotations on a
//! pull request's diff) and `sarif` (one SARIF 2.1.0 log, for code scanning).
//! `human` and `json` stay in `check.rs`.
//!
//! What they share is here: 1-based positions, and the path of a file as a
//! repository-relative reference. Diagnostics carry byte ranges; each format
//! counts columns as its consumers do (`concise` and `github` in characters,
//! as the `human` header and ruff do; `sarif` in UTF-16 code units, as its
//! log declares).

pub mod concise;
pub mod github;
pub mod sarif;

use std::path::{Component, Path, PathBuf};

use cute_syntax::{LineIndex, PositionEncoding};

/// A 1-based line and column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    pub line: u32,
    pub col: u32,
}

/// How a column is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Columns {
    /// Unicode scalar values (what an editor's "column N" and codespan-reporting mean).
    Chars,
    /// UTF-16 code units (SARIF's default `columnKind`, `utf16CodeUnits`).
    Utf16,
}

/// The 1-based position of byte `offset` of `text` (clamped to the text and
/// rounded down to a character boundary, as `LineIndex` does).
pub fn position(text: &str, index: &LineIndex, offset: u32, columns: Columns) -> Position {
    let (line, col) = match columns {
        Columns::Utf16 => {
            let at = index.position(offset, PositionEncoding::Utf16);
            (at.line, at.col)
        }
        Columns::Chars => {
            let at = index.position(offset, PositionEncoding::Utf8);
            let start = index.line_start(at.line) as usize;
            let prefix = text.get(start..start + at.col as usize).unwrap_or_default();
            (at.line, prefix.chars().count() as u32)
        }
    };
    Position { line: line + 1, col: col + 1 }
}

/// The start and end of a byte range, 1-based; the end is the position just
/// past the range's last character (an empty range starts and ends at one
/// position). A range whose end precedes its start ends where it starts.
pub fn span(text: &str, index: &LineIndex, range: cute_syntax::TextRange, columns: Columns) -> (Position, Position) {
    (position(text, index, range.start, columns), position(text, index, range.end.max(range.start), columns))
}

/// `path` as a path relative to the working directory, with `/` separators
/// and no `.` components, as CI services resolve paths against a checkout
/// (`./a/b.py` is `a/b.py`; an absolute path below the working directory
/// loses that prefix). `None` for an absolute path elsewhere.
pub fn relative_path(path: &str) -> Option<String> {
    let path = Path::new(path);
    let relative: PathBuf = if path.is_absolute() {
        let cwd = std::env::current_dir().ok()?;
        let cwd = std::fs::canonicalize(&cwd).unwrap_or(cwd);
        let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        absolute.strip_prefix(&cwd).ok()?.to_path_buf()
    } else {
        path.to_path_buf()
    };
    let parts: Vec<String> = relative
        .components()
        .filter_map(|c| match c {
            Component::CurDir => None,
            Component::ParentDir => Some("..".to_string()),
            c => Some(c.as_os_str().to_string_lossy().into_owned()),
        })
        .collect();
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_characters_or_utf16_units() {
        // "é" is 2 bytes, 1 char, 1 UTF-16 unit; "😀" is 4 bytes, 1 char, 2 units.
        let text = "x = 1\ns = \"é😀\"; f()\n";
        let index = LineIndex::new(text);
        let call = text.find("f()").unwrap() as u32;
        assert_eq!(position(text, &index, call, Columns::Chars), Position { line: 2, col: 11 });
        assert_eq!(position(text, &index, call, Columns::Utf16), Position { line: 2, col: 12 });
        assert_eq!(position(text, &index, 0, Columns::Chars), Position { line: 1, col: 1 });
        let range = cute_syntax::TextRange { start: call, end: call + 3 };
        assert_eq!(span(text, &index, range, Columns::Chars).1, Position { line: 2, col: 14 });
    }

    #[test]
    fn paths_become_relative_references() {
        assert_eq!(relative_path("./tests/fixtures/a.py").as_deref(), Some("tests/fixtures/a.py"));
        assert_eq!(relative_path("tests/./x/../y.py").as_deref(), Some("tests/x/../y.py"));
        let cwd = std::env::current_dir().unwrap();
        let inside = cwd.join("src").join("main.rs");
        assert_eq!(relative_path(inside.to_str().unwrap()).as_deref(), Some("src/main.rs"));
        assert_eq!(relative_path("/definitely/not/below/the/cwd.py"), None);
    }
}
