//! The text tree-sitter parses for a file: the file's own, except in long
//! runs of comment lines.
//!
//! tree-sitter-python's external scanner, at each line of a run of comment
//! (and blank) lines, reads ahead through the rest of the run to find the
//! indentation of the next statement: a run of thousands of lines (code
//! commented out, a licence pasted at the end, a generated table) takes time
//! quadratic in its length (8,000 lines after a kernel: 20 s for the parse
//! alone). In a run of more than [`COMMENT_RUN`] comment lines, each comment
//! line is given to the parser as spaces, which it reads once.
//!
//! The tree is the file's: the byte offsets and lines are the same, comments
//! are not nodes anything reads, and a blanked line holds no quote and does
//! not end with a backslash, so it can neither open nor close a string (in a
//! string, only the parser's copy of its content changes; the value of a
//! string is read from the file's text, not the parser's). Whether a line is
//! blanked depends on its run, not on where an edit is: an incremental parse
//! describes its edit between the two texts the parser sees (see
//! `cute_lint`'s `incremental/syntax.rs`).

use std::borrow::Cow;

/// Comment lines in a run, at most, that the parser reads as comments.
pub const COMMENT_RUN: usize = 32;

/// The text tree-sitter parses for `text` (see the module's doc): `text`
/// itself unless it has a run of more than [`COMMENT_RUN`] comment lines.
pub fn for_the_parser(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    // (start of the line's `#`, end of its content) of the comment lines of
    // the current run, and the lines to blank.
    let mut run: Vec<(usize, usize)> = Vec::new();
    let mut blanked: Vec<(usize, usize)> = Vec::new();
    let close_run = |run: &mut Vec<(usize, usize)>, blanked: &mut Vec<(usize, usize)>| {
        if run.len() > COMMENT_RUN {
            blanked.extend(run.iter().copied().filter(|&(start, end)| quiet(&bytes[start..end])));
        }
        run.clear();
    };
    let mut start = 0;
    while start < bytes.len() {
        let end = bytes[start..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |i| start + i + 1);
        let content_end = bytes[start..end].iter().rposition(|b| !b.is_ascii_whitespace()).map(|i| start + i + 1);
        let first = bytes[start..end].iter().position(|b| !b.is_ascii_whitespace()).map(|i| start + i);
        match (first, content_end) {
            (Some(hash), Some(content_end)) if bytes[hash] == b'#' => run.push((hash, content_end)),
            (Some(_), _) => close_run(&mut run, &mut blanked),
            // A blank line neither ends a run nor counts in it.
            (None, _) => {}
        }
        start = end;
    }
    close_run(&mut run, &mut blanked);
    if blanked.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = bytes.to_vec();
    for (start, end) in blanked {
        out[start..end].fill(b' ');
    }
    Cow::Owned(String::from_utf8(out).expect("only ASCII bytes of whole lines were replaced by spaces"))
}

/// Whether a comment line can be blanked: no quote (it could close a string
/// the line is inside) and no backslash at its end (it could continue one).
fn quiet(comment: &[u8]) -> bool {
    !comment.iter().any(|&b| b == b'\'' || b == b'"') && comment.last() != Some(&b'\\')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comments(n: usize) -> String {
        "# a comment line\n".repeat(n)
    }

    #[test]
    fn short_runs_are_left_alone() {
        let text = format!("x = 1\n{}y = 2\n", comments(COMMENT_RUN));
        assert!(matches!(for_the_parser(&text), Cow::Borrowed(_)));
    }

    #[test]
    fn a_long_run_is_spaces_of_the_same_length() {
        let text = format!("def f():\n    x = 1\n{}    return x\n", comments(COMMENT_RUN + 1).replace("# a", "    # a"));
        let parsed = for_the_parser(&text);
        assert_eq!(parsed.len(), text.len());
        assert_eq!(parsed.lines().count(), text.lines().count());
        assert!(!parsed.contains('#'));
        assert!(parsed.starts_with("def f():\n    x = 1\n") && parsed.ends_with("    return x\n"));
    }

    #[test]
    fn blank_lines_do_not_break_a_run_and_code_does() {
        let spaced = comments(COMMENT_RUN / 2 + 1).replace('\n', "\n\n");
        let run = format!("{spaced}{spaced}");
        assert!(!for_the_parser(&run).contains('#'));
        let broken = format!("{}x = 1\n{}", comments(COMMENT_RUN / 2 + 1), comments(COMMENT_RUN / 2 + 1));
        assert!(matches!(for_the_parser(&broken), Cow::Borrowed(_)));
    }

    #[test]
    fn lines_with_quotes_or_a_trailing_backslash_stay() {
        let text = format!("{}# it's here\n# continued \\\n# and \"there\"\n", comments(COMMENT_RUN + 1));
        let parsed = for_the_parser(&text);
        assert!(parsed.contains("# it's here\n# continued \\\n# and \"there\"\n"), "{parsed}");
    }

    #[test]
    fn the_tree_is_the_same_but_for_comments() {
        let text = format!(
            "import cutlass\n\n\ndef f(a):\n    s = \"\"\"\n{}\"\"\"\n    return a\n{}\nx = f(1)\n",
            comments(COMMENT_RUN + 5),
            comments(COMMENT_RUN + 5)
        );
        let tree = |t: &str| crate::parse::parse_unchanged(t).unwrap();
        let (original, parsed) = (tree(&text), tree(&for_the_parser(&text)));
        let shape = |t: &crate::SyntaxTree| -> Vec<(String, usize, usize)> {
            let mut out = Vec::new();
            let mut stack = vec![t.root()];
            while let Some(node) = stack.pop() {
                if node.kind() != "comment" {
                    out.push((node.kind().to_string(), node.start_byte(), node.end_byte()));
                }
                let mut cursor = node.walk();
                stack.extend(node.children(&mut cursor));
            }
            out
        };
        assert_eq!(shape(&original), shape(&parsed));
        assert!(!parsed.root().has_error());
    }
}
