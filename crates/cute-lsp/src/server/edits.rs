//! Applying `textDocument/didChange` content changes to a document's text.
//!
//! Positions arrive in the negotiated encoding (UTF-16 code units unless the
//! client asked for UTF-8), so each change is converted to byte offsets on the
//! text as it stands after the previous change of the same notification.
//! Malformed ranges (past the end, inside a character, end before start) are
//! clamped rather than rejected: the client's copy is the truth and a dropped
//! edit would desynchronise every later one.

use cute_syntax::{LineCol, LineIndex, PositionEncoding};
use tower_lsp_server::ls_types::{Position, Range, TextDocumentContentChangeEvent};

pub fn line_col(position: Position) -> LineCol {
    LineCol { line: position.line, col: position.character }
}

/// Byte offsets of an LSP range in `index`'s text, ordered and clamped.
pub fn byte_range(index: &LineIndex, range: Range, encoding: PositionEncoding) -> (usize, usize) {
    let start = index.offset(line_col(range.start), encoding) as usize;
    let end = index.offset(line_col(range.end), encoding) as usize;
    (start.min(end), start.max(end))
}

/// Applies one content change: a range replacement, or the whole text when
/// the change has no range.
pub fn apply_change(text: &mut String, change: &TextDocumentContentChangeEvent, encoding: PositionEncoding) {
    match change.range {
        None => text.clone_from(&change.text),
        Some(range) => {
            let index = LineIndex::new(text);
            let (start, end) = byte_range(&index, range, encoding);
            text.replace_range(start..end, &change.text);
        }
    }
}

/// Applies the changes of one notification, in order.
#[cfg(test)]
pub fn apply_changes(text: &str, changes: &[TextDocumentContentChangeEvent], encoding: PositionEncoding) -> String {
    apply_changes_indexed(text, None, changes, encoding)
}

/// [`apply_changes`], given the line index of `text` if it is at hand (the
/// database keeps the one of the current text), so that a single change
/// does not index the whole text again.
pub fn apply_changes_indexed(
    text: &str,
    index: Option<&LineIndex>,
    changes: &[TextDocumentContentChangeEvent],
    encoding: PositionEncoding,
) -> String {
    let mut text = text.to_string();
    let mut index = index;
    for change in changes {
        match (change.range, index.take()) {
            (Some(range), Some(index)) => {
                let (start, end) = byte_range(index, range, encoding);
                text.replace_range(start..end, &change.text);
            }
            _ => apply_change(&mut text, change, encoding),
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(sl: u32, sc: u32, el: u32, ec: u32, text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(sl, sc), Position::new(el, ec))),
            range_length: None,
            text: text.to_string(),
        }
    }

    #[test]
    fn a_given_index_serves_the_first_change_only() {
        let text = "a = 'é'\nb = '𝜙'\n";
        let changes = [change(0, 0, 0, 0, "# top\n"), change(2, 5, 2, 7, "phi"), change(1, 7, 2, 0, " ; ")];
        let index = LineIndex::new(text);
        let out = apply_changes_indexed(text, Some(&index), &changes, PositionEncoding::Utf16);
        assert_eq!(out, apply_changes(text, &changes, PositionEncoding::Utf16));
    }

    #[test]
    fn full_replacement() {
        let full = TextDocumentContentChangeEvent { range: None, range_length: None, text: "new\n".into() };
        assert_eq!(apply_changes("old\n", &[full], PositionEncoding::Utf16), "new\n");
    }

    #[test]
    fn utf16_columns_after_non_ascii() {
        // 'é' is 1 UTF-16 unit (2 bytes), '𝜙' is 2 units (4 bytes).
        let text = "x = 'é𝜙'; wait(gate, 0)\nnext\n";
        let col = "x = 'é𝜙'; wait(gate, ".encode_utf16().count() as u32;
        let out = apply_changes(text, &[change(0, col, 0, col + 1, "phase")], PositionEncoding::Utf16);
        assert_eq!(out, "x = 'é𝜙'; wait(gate, phase)\nnext\n");
    }

    #[test]
    fn utf8_columns_after_non_ascii() {
        let text = "x = 'é𝜙'; wait(gate, 0)\n";
        let col = "x = 'é𝜙'; wait(gate, ".len() as u32;
        let out = apply_changes(text, &[change(0, col, 0, col + 1, "phase")], PositionEncoding::Utf8);
        assert_eq!(out, "x = 'é𝜙'; wait(gate, phase)\n");
    }

    #[test]
    fn sequential_changes_see_previous_results() {
        let text = "a = 'é'\nb = '𝜙'\n";
        let changes = [
            // Insert a line at the top; the second change's positions refer to the new text.
            change(0, 0, 0, 0, "# top\n"),
            // Replace '𝜙' (UTF-16 columns 5..7) on what is now line 2.
            change(2, 5, 2, 7, "phi"),
            // Delete across a line break: the end of line 1 and the start of line 2.
            change(1, 7, 2, 0, " ; "),
        ];
        let out = apply_changes(text, &changes, PositionEncoding::Utf16);
        assert_eq!(out, "# top\na = 'é' ; b = 'phi'\n");
    }

    #[test]
    fn multi_line_insertion_and_deletion() {
        let text = "def k():\n    pass\n";
        let out = apply_changes(
            text,
            &[change(1, 4, 1, 8, "x = 1\n    y = 2"), change(0, 0, 1, 0, "")],
            PositionEncoding::Utf16,
        );
        assert_eq!(out, "    x = 1\n    y = 2\n");
    }

    #[test]
    fn malformed_ranges_clamp() {
        let text = "ab\ncd";
        // Past the end of a line and past the end of the file.
        assert_eq!(apply_changes(text, &[change(0, 99, 0, 99, "!")], PositionEncoding::Utf16), "ab!\ncd");
        assert_eq!(apply_changes(text, &[change(7, 0, 9, 9, "!")], PositionEncoding::Utf16), "ab\ncd!");
        // End before start.
        assert_eq!(apply_changes(text, &[change(1, 1, 0, 1, "")], PositionEncoding::Utf16), "ad");
        // Inside a surrogate pair: rounds down to the character's start.
        let out = apply_changes("𝜙x", &[change(0, 1, 0, 1, "_")], PositionEncoding::Utf16);
        assert_eq!(out, "_𝜙x");
        // Inside a UTF-8 sequence.
        let out = apply_changes("éx", &[change(0, 1, 0, 2, "e")], PositionEncoding::Utf8);
        assert_eq!(out, "ex");
    }

    #[test]
    fn crlf_line_ends() {
        let text = "ab\r\ncd\r\n";
        let out = apply_changes(text, &[change(0, 5, 1, 1, "X")], PositionEncoding::Utf16);
        // A column past the end of line 0 stops before its "\r\n".
        assert_eq!(out, "abXd\r\n");
    }
}
