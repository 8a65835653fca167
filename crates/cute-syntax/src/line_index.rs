//! Byte offsets (what tree-sitter speaks) to line/column positions (what
//! editors speak). LSP columns are UTF-16 code units unless the client
//! negotiates UTF-8, so the conversion needs the line's text, not just its
//! start offset.

/// How the column of a position is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PositionEncoding {
    /// Bytes of UTF-8 (tree-sitter's own unit, and LSP's `utf-8`).
    Utf8,
    /// UTF-16 code units: the LSP default.
    #[default]
    Utf16,
}

/// A 0-based line and column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct LineCol {
    pub line: u32,
    pub col: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineIndex {
    text: String,
    /// Byte offset at which each line starts; `line_starts[0] == 0`.
    line_starts: Vec<u32>,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        // Rebuilt on every edit of a file of thousands of lines: memchr
        // finds the line breaks a word at a time.
        let mut line_starts = Vec::with_capacity(text.len() / 32 + 1);
        line_starts.push(0);
        line_starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i as u32 + 1));
        LineIndex { text: text.to_string(), line_starts }
    }

    /// The index of `text`, an edit of this index's text: the line starts
    /// before the first byte that differs and after the last one are taken
    /// over (the latter moved), and only the edited bytes are searched. An
    /// editor sends one keystroke at a time; this is two memory comparisons
    /// and a search of the keystroke, not a search of the whole file.
    pub fn edited(&self, text: &str) -> Self {
        let (prefix, old_end, new_end) = crate::edited_range(&self.text, text);
        let new = text.as_bytes();
        let mut line_starts = Vec::with_capacity(self.line_starts.len() + 1);
        // A start `s` follows the line break at `s - 1`.
        line_starts.extend(self.line_starts.iter().copied().take_while(|&s| s as usize <= prefix));
        line_starts.extend(memchr::memchr_iter(b'\n', &new[prefix..new_end]).map(|i| (prefix + i) as u32 + 1));
        let moved = self.line_starts.iter().copied().filter(|&s| s as usize > old_end);
        line_starts.extend(moved.map(|s| (s as usize - old_end + new_end) as u32));
        LineIndex { text: text.to_string(), line_starts }
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// The 0-based line holding `offset` (clamped to the text).
    pub fn line_of(&self, offset: u32) -> u32 {
        let offset = offset.min(self.text.len() as u32);
        match self.line_starts.binary_search(&offset) {
            Ok(line) => line as u32,
            Err(next) => next as u32 - 1,
        }
    }

    pub fn line_start(&self, line: u32) -> u32 {
        self.line_starts.get(line as usize).copied().unwrap_or(self.text.len() as u32)
    }

    /// The text of a line without its line break.
    pub fn line_text(&self, line: u32) -> &str {
        let start = self.line_start(line) as usize;
        let end = self
            .line_starts
            .get(line as usize + 1)
            .map(|&s| s as usize)
            .unwrap_or(self.text.len());
        self.text[start..end].trim_end_matches(['\n', '\r'])
    }

    pub fn position(&self, offset: u32, encoding: PositionEncoding) -> LineCol {
        let offset = self.clamp_to_char_boundary(offset);
        let line = self.line_of(offset);
        let start = self.line_start(line) as usize;
        let prefix = &self.text[start..offset as usize];
        let col = match encoding {
            PositionEncoding::Utf8 => prefix.len(),
            PositionEncoding::Utf16 => prefix.chars().map(char::len_utf16).sum(),
        };
        LineCol { line, col: col as u32 }
    }

    /// The byte offset of a position. Positions past the end of a line or of
    /// the file are clamped, as LSP asks; a column inside a UTF-16 surrogate
    /// pair or a UTF-8 sequence rounds down to the character's start.
    pub fn offset(&self, pos: LineCol, encoding: PositionEncoding) -> u32 {
        if pos.line as usize >= self.line_starts.len() {
            return self.text.len() as u32;
        }
        let start = self.line_start(pos.line);
        let line = self.line_text(pos.line);
        let mut units = 0u32;
        for (byte, ch) in line.char_indices() {
            let width = match encoding {
                PositionEncoding::Utf8 => ch.len_utf8() as u32,
                PositionEncoding::Utf16 => ch.len_utf16() as u32,
            };
            if units + width > pos.col {
                return start + byte as u32;
            }
            units += width;
        }
        start + line.len() as u32
    }

    fn clamp_to_char_boundary(&self, offset: u32) -> u32 {
        let mut offset = (offset as usize).min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        offset as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edited_index_equals_a_fresh_one() {
        let base = "import cutlass\n\n@cute.kernel\ndef k():\n    x = 1\n\n    y = 2\n".repeat(20);
        // Insertions, deletions and replacements, with and without line
        // breaks, at the ends and in the middle, inside runs of blank lines
        // (where the shared prefix and suffix can overlap).
        let edits: &[(usize, usize, &str)] = &[
            (0, 0, "\n"),
            (0, 5, ""),
            (17, 0, "\n\n"),
            (17, 1, ""),
            (40, 3, "a\nb\nc"),
            (base.len(), 0, "\nlast"),
            (base.len() - 1, 1, ""),
            (base.len() / 2, 0, "é\n"),
            (100, 200, "\n"),
            (0, base.len(), ""),
        ];
        let old = LineIndex::new(&base);
        for &(at, len, new) in edits {
            let mut text = base.clone();
            text.replace_range(at..at + len, new);
            assert_eq!(old.edited(&text), LineIndex::new(&text), "edit ({at}, {len}, {new:?})");
        }
        // Every single-byte deletion of a short text with repeated lines.
        let short = "a\n\nb\n\n\nc\n";
        let old = LineIndex::new(short);
        for at in 0..short.len() {
            let mut text = short.to_string();
            text.remove(at);
            assert_eq!(old.edited(&text), LineIndex::new(&text), "deleting byte {at}");
        }
    }

    #[test]
    fn ascii_round_trip() {
        let idx = LineIndex::new("ab\ncd\n");
        assert_eq!(idx.position(4, PositionEncoding::Utf16), LineCol { line: 1, col: 1 });
        assert_eq!(idx.offset(LineCol { line: 1, col: 1 }, PositionEncoding::Utf16), 4);
    }

    #[test]
    fn utf16_columns_count_code_units() {
        // 'é' is 2 bytes / 1 unit, '𝜙' is 4 bytes / 2 units.
        let text = "x = 'é𝜙'; wait()\n";
        let idx = LineIndex::new(text);
        let at = text.find("wait").unwrap() as u32;
        let pos16 = idx.position(at, PositionEncoding::Utf16);
        let pos8 = idx.position(at, PositionEncoding::Utf8);
        assert_eq!(pos8.col, at);
        assert_eq!(pos16.col, at - 1 - 2);
        assert_eq!(idx.offset(pos16, PositionEncoding::Utf16), at);
        assert_eq!(idx.offset(pos8, PositionEncoding::Utf8), at);
    }

    #[test]
    fn out_of_range_positions_clamp() {
        let idx = LineIndex::new("ab\ncd");
        assert_eq!(idx.offset(LineCol { line: 9, col: 0 }, PositionEncoding::Utf16), 5);
        assert_eq!(idx.offset(LineCol { line: 0, col: 99 }, PositionEncoding::Utf16), 2);
        assert_eq!(idx.position(999, PositionEncoding::Utf16), LineCol { line: 1, col: 2 });
    }
}
