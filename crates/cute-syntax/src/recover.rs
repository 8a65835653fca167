//! A syntax error kept to the top-level section it is in.
//!
//! tree-sitter recovers from an error by reading on: an unclosed `(` typed in
//! one kernel can swallow the functions after it and leave statements of its
//! body at the top level of the file, where they read as module constants.
//! Checked as parsed, a half-typed line makes the model of its own kernel
//! wrong (barriers or loops go missing) and changes what every other kernel
//! sees of the file.
//!
//! So a file with a syntax error is cut into top-level sections (a section
//! starts at each line that starts a statement in column 0, a decorated
//! definition's decorators and `def` line staying together), and a section
//! that holds an error of the file's tree and does not parse on its own is
//! left out: each of its lines becomes a comment of the same length (lines
//! and offsets stay where they are) and the rest is parsed again. Comments,
//! not spaces: tree-sitter re-parses a text incrementally around an edit
//! inside a comment, but an edit inside a run of blank lines makes the
//! Python scanner read everything after it again, which is a whole parse on
//! every keystroke while a section stays broken. What the broken sections define is missing
//! from the file until they parse; the kernels they define are named, so
//! that the user is told they are not checked.

use tree_sitter::{Node, Tree};

use crate::{SyntaxTree, TextRange};

/// A text with its broken sections left out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recovery {
    /// The text with every broken section blanked: the same length and the
    /// same lines.
    pub text: String,
    /// The broken sections (whole lines), in order.
    pub broken: Vec<TextRange>,
    /// The syntax errors of the original text.
    pub errors: Vec<TextRange>,
    /// Kernels defined in broken sections: name and where the name is.
    pub kernels: Vec<(String, TextRange)>,
}

/// Rounds of blanking: a text whose blanked form still has an error is
/// blanked again, at most this many times.
const ROUNDS: usize = 3;

/// How [`recover`] parses. An editor re-parses the same file on every
/// keystroke, so it can reuse the trees of the texts it parsed last and
/// remember which sections parse on their own; [`Fresh`] does neither.
pub trait Parses {
    /// The tree of a whole text; `None` stops the recovery.
    fn parse(&mut self, text: &str) -> Option<Tree>;

    /// Whether `section` parses without error on its own.
    fn parses_alone(&mut self, section: &str) -> bool {
        parses_alone(section)
    }
}

/// Every text parsed from scratch.
pub struct Fresh;

impl Parses for Fresh {
    fn parse(&mut self, text: &str) -> Option<Tree> {
        crate::parse(text).ok().map(|parsed| parsed.tree)
    }
}

/// Whether `section` parses without error on its own, parsed from scratch.
pub fn parses_alone(section: &str) -> bool {
    crate::parse(section).is_ok_and(|t| !t.root().has_error())
}

/// Recovers `parsed` when it has a syntax error. Returns the recovery and
/// the tree of its text, or `None` when there is no error or no section can
/// be left out.
pub fn recover(parsed: &SyntaxTree, parses: &mut dyn Parses) -> Option<(Recovery, Tree)> {
    if !parsed.root().has_error() {
        return None;
    }
    let errors = parsed.error_ranges();
    let mut text = parsed.text.clone();
    let mut tree = parsed.tree.clone();
    let mut broken: Vec<TextRange> = Vec::new();
    for _ in 0..ROUNDS {
        let found = broken_sections(&text, &tree, parses);
        if found.is_empty() {
            break;
        }
        let mut bytes = text.into_bytes();
        for section in &found {
            blank(&mut bytes[section.start as usize..section.end as usize]);
        }
        // Only ASCII bytes were written over whole sections of lines, so
        // the text is still UTF-8.
        text = String::from_utf8(bytes).ok()?;
        tree = parses.parse(&text)?;
        broken.extend(found);
        if !tree.root_node().has_error() {
            break;
        }
    }
    if broken.is_empty() {
        return None;
    }
    broken.sort();
    let kernels = broken.iter().flat_map(|s| kernels_in(&parsed.text, *s)).collect();
    Some((Recovery { text, broken, errors, kernels }, tree))
}

/// Turns whole lines into comments of the same length: `#` then spaces,
/// line breaks kept.
fn blank(lines: &mut [u8]) {
    let mut line_start = true;
    for b in lines {
        if *b == b'\n' {
            line_start = true;
        } else {
            *b = if line_start { b'#' } else { b' ' };
            line_start = false;
        }
    }
}

/// The sections of `text` that hold one of its errors and do not parse
/// on their own.
fn broken_sections(text: &str, tree: &Tree, parses: &mut dyn Parses) -> Vec<TextRange> {
    let starts = section_starts(text, tree);
    let section_of = |offset: u32| {
        let i = starts.partition_point(|&s| s <= offset as usize).saturating_sub(1);
        let end = starts.get(i + 1).copied().unwrap_or(text.len());
        TextRange::new(starts[i], end)
    };
    let mut candidates: Vec<TextRange> = Vec::new();
    for error in crate::parse::error_ranges(tree) {
        let first = section_of(error.start);
        let last = section_of(error.end.saturating_sub(1).max(error.start));
        for &start in starts.iter().filter(|&&s| s >= first.start as usize && s <= last.start as usize) {
            let section = section_of(start as u32);
            if !candidates.contains(&section) {
                candidates.push(section);
            }
        }
    }
    candidates
        .into_iter()
        .filter(|s| {
            let own = &text[s.start as usize..s.end as usize];
            !own.trim().is_empty() && !parses.parses_alone(own)
        })
        .collect()
}

/// Offsets of the lines that start a section: the first line, and each line
/// that starts in column 0 with a statement (not a comment, a closing
/// bracket or a clause of the statement above), outside strings, unless it
/// is the definition its decorators above belong to.
fn section_starts(text: &str, tree: &Tree) -> Vec<usize> {
    let mut starts = vec![0];
    let mut under_decorator = false;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let at = offset;
        offset += line.len();
        let Some(first) = line.chars().next() else { continue };
        if first.is_whitespace() || matches!(first, '#' | ')' | ']' | '}') || inside_string(tree, at) {
            continue;
        }
        let word = line.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("");
        if matches!(word, "else" | "elif" | "except" | "finally") {
            continue;
        }
        let definition = matches!(word, "def" | "class" | "async") || first == '@';
        if !(under_decorator && definition) && at != 0 {
            starts.push(at);
        }
        under_decorator = first == '@';
    }
    starts
}

/// Whether `offset` lies inside a string literal (past its opening quote).
fn inside_string(tree: &Tree, offset: usize) -> bool {
    let mut node: Option<Node<'_>> = tree.root_node().descendant_for_byte_range(offset, offset);
    while let Some(n) = node {
        if n.kind() == "string" && n.start_byte() < offset {
            return true;
        }
        node = n.parent();
    }
    false
}

/// Functions defined in `section` under a decorator that names `kernel`
/// (`@cute.kernel`, `@cute.kernel(...)`), read from the text (the section
/// does not parse).
fn kernels_in(text: &str, section: TextRange) -> Vec<(String, TextRange)> {
    let mut out = Vec::new();
    let mut decorated_kernel = false;
    let mut offset = section.start as usize;
    for line in text[section.start as usize..section.end as usize].split_inclusive('\n') {
        let at = offset;
        offset += line.len();
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if let Some(decorator) = trimmed.strip_prefix('@') {
            decorated_kernel |= decorator.split(['(', ' ', '\n']).next().is_some_and(|d| d.rsplit('.').next() == Some("kernel"));
            continue;
        }
        let after_def = trimmed.strip_prefix("async ").unwrap_or(trimmed).strip_prefix("def ");
        if let (Some(rest), true) = (after_def, decorated_kernel) {
            let name: String = rest.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !name.is_empty() {
                let start = at + indent + (trimmed.len() - rest.trim_start().len());
                out.push((name.clone(), TextRange::new(start, start + name.len())));
            }
        }
        if !trimmed.is_empty() && !trimmed.starts_with('#') {
            decorated_kernel = false;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "import cutlass.cute as cute\n\nN = 4\n\n@cute.kernel\ndef first():\n    x = 1\n    y = (x +\n    cute.arch.sync_threads()\n\n@cute.kernel\ndef second():\n    cur, nxt = 1, 2\n    cute.arch.sync_threads()\n\n\ndef host():\n    first().launch(block=(128, 1, 1))\n";

    #[test]
    fn an_unclosed_bracket_leaves_out_its_section_only() {
        let parsed = crate::parse(FILE).unwrap();
        let (recovery, tree) = recover(&parsed, &mut Fresh).expect("recovered");
        assert!(!tree.root_node().has_error());
        assert_eq!(recovery.text.len(), FILE.len());
        assert_eq!(recovery.text.matches('\n').count(), FILE.matches('\n').count());
        let start = FILE.find("@cute.kernel").unwrap();
        let end = FILE[start + 1..].find("@cute.kernel").unwrap() + start + 1;
        assert_eq!(recovery.broken, [TextRange::new(start, end)]);
        // Every line of the section is a comment now, of the same length.
        let blanked = &recovery.text[start..end];
        assert!(blanked.lines().all(|l| l.is_empty() || (l.starts_with('#') && l[1..].trim().is_empty())), "{blanked:?}");
        assert!(!blanked.trim().is_empty());
        assert_eq!(&recovery.text[end..], &FILE[end..]);
        assert_eq!(&recovery.text[..start], &FILE[..start]);
        let at = FILE.find("first").unwrap();
        assert_eq!(recovery.kernels, [("first".to_string(), TextRange::new(at, at + 5))]);
        assert!(!recovery.errors.is_empty());
    }

    /// Answers `parses_alone` with `alone`, and records what it was asked.
    struct Told {
        alone: bool,
        asked: Vec<String>,
    }

    impl Parses for Told {
        fn parse(&mut self, text: &str) -> Option<Tree> {
            Fresh.parse(text)
        }

        fn parses_alone(&mut self, section: &str) -> bool {
            self.asked.push(section.to_string());
            self.alone
        }
    }

    #[test]
    fn the_caller_decides_which_sections_parse_alone() {
        let parsed = crate::parse(FILE).unwrap();
        // Told that every section parses: nothing is left out.
        let mut told = Told { alone: true, asked: Vec::new() };
        assert!(recover(&parsed, &mut told).is_none());
        assert!(told.asked.iter().any(|s| s.contains("def first")), "{:?}", told.asked);
        // Told that none does: the sections holding the error are left out,
        // the broken one among them.
        let mut told = Told { alone: false, asked: Vec::new() };
        let (recovery, _) = recover(&parsed, &mut told).expect("recovered");
        let start = FILE.find("@cute.kernel").unwrap();
        assert_eq!(recovery.broken.first().map(|r| r.start as usize), Some(start));
    }

    #[test]
    fn a_valid_file_needs_no_recovery() {
        let valid = FILE.replace("y = (x +", "y = (x + 1)");
        assert!(recover(&crate::parse(&valid).unwrap(), &mut Fresh).is_none());
    }

    #[test]
    fn column_zero_lines_in_strings_do_not_start_sections() {
        let text = "def f():\n    s = \"\"\"\nclass Doc:\n\"\"\"\n    y = (1 +\n\ndef g():\n    pass\n";
        let parsed = crate::parse(text).unwrap();
        let starts = section_starts(text, &parsed.tree);
        assert_eq!(starts, [0, text.find("def g").unwrap()]);
    }

    #[test]
    fn decorators_stay_with_their_definition() {
        let text = "@a\n@b(\n    1,\n)\ndef f():\n    pass\nclass C:\n    pass\n";
        let parsed = crate::parse(text).unwrap();
        assert_eq!(section_starts(text, &parsed.tree), [0, text.find("class").unwrap()]);
    }
}
