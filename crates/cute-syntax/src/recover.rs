//! A syntax error kept to the top-level section it is in.
//!
//! tree-sitter recovers from an error by reading on: an unclosed `(` typed in
//! one kernel can swallow the functions after it and leave statements of its
//! body at the top level of the file, where they read as module constants.
//! Checked as parsed, a half-typed line makes the model of its own kernel wrong
//! (barriers or loops go missing) and changes what every other kernel sees of
//! the file.
//!
//! So a file with a syntax error is cut into top-level sections (a section
//! starts at each line that starts a statement in column 0, outside strings and
//! backslash continuations, a decorated definition's decorators and `def` line
//! staying together), and every section that does not parse on its own is left
//! out: each of its lines becomes a comment of the same length (lines and
//! offsets stay where they are) and the rest is parsed again. The errors
//! reported are those of the sections left out, parsed on their own: where the
//! user typed, not where tree-sitter's recovery gave up. Comments, not spaces:
//! tree-sitter re-parses a text incrementally around an edit inside a comment,
//! but an edit inside a run of blank lines makes the Python scanner read
//! everything after it again, which is a whole parse on every keystroke while a
//! section stays broken. What the broken sections define is missing from the
//! file until they parse; the kernels they define are named, so that the user
//! is told they are not checked, and a half-typed line is kept to its own
//! definition.
//!
//! How the text is parsed is the caller's ([`Parses`]): the editor reuses its
//! trees and remembers which sections parse on their own, [`Fresh`] parses
//! every text from scratch. Both the whole-file path
//! (`cute_ir::lower_recovering`) and the editor's per-chunk layout
//! (`cute-lint`'s `incremental/syntax.rs`) recover through this module.
//! Sections are found from the text alone and judged each on its own, so an
//! editor that knows which sections parse (they did before the edit) finds the
//! same recovery without parsing the whole broken text ([`leave_out`]).

use tree_sitter::Tree;

use crate::{SyntaxTree, TextRange, COMMENT_RUN};

/// A text with its broken sections left out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recovery {
    /// The text with every broken section blanked: the same length and the
    /// same lines.
    pub text: String,
    /// The broken sections (whole lines), in order.
    pub broken: Vec<TextRange>,
    /// The syntax errors of the broken sections, each parsed on its own,
    /// where they are in the text (in the order of the sections).
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
    let broken = broken_sections(&parsed.text, parses);
    leave_out(&parsed.text, broken, parses)
}

/// `text`, which has a syntax error, with the sections `broken` (those
/// that do not parse on their own) left out, and again while what is left
/// has an error and sections that do not parse alone: the recovery and its
/// tree, or `None` when `broken` is empty.
///
/// [`recover`] is this with every broken section of the text. A caller that
/// knows them without parsing the whole text, and knows that what is left
/// parses (an editor, after an edit inside one section, while every other
/// section parses alone), takes the first round alone ([`left_out`]) and
/// avoids tree-sitter's error recovery through the rest of the file, which
/// an open bracket makes slow.
pub fn leave_out(text: &str, broken: Vec<TextRange>, parses: &mut dyn Parses) -> Option<(Recovery, Tree)> {
    if broken.is_empty() {
        return None;
    }
    let mut recovery = left_out(text, broken)?;
    let mut tree = parses.parse(&recovery.text)?;
    for _ in 1..ROUNDS {
        if !tree.root_node().has_error() {
            break;
        }
        let found = broken_sections(&recovery.text, parses);
        if found.is_empty() {
            break;
        }
        recovery = left_out(text, recovery.broken.iter().copied().chain(found).collect())?;
        tree = parses.parse(&recovery.text)?;
    }
    Some((recovery, tree))
}

/// `text` with the sections `broken` left out, what is left not parsed:
/// the recovery [`leave_out`] gives when what is left parses without error.
pub fn left_out(text: &str, mut broken: Vec<TextRange>) -> Option<Recovery> {
    broken.sort();
    let mut bytes = text.as_bytes().to_vec();
    for section in &broken {
        blank(&mut bytes[section.start as usize..section.end as usize]);
    }
    break_comment_runs(&mut bytes, &broken);
    // Only ASCII bytes were written over whole sections of lines, so the
    // text is still UTF-8.
    let blanked = String::from_utf8(bytes).ok()?;
    let errors = broken.iter().flat_map(|s| section_errors(text, *s)).collect();
    let kernels = broken.iter().flat_map(|s| kernels_in(text, *s)).collect();
    Some(Recovery { text: blanked, broken, errors, kernels })
}

/// The syntax errors of `section` of `text`, parsed on its own, where they
/// are in `text`. They are what the user typed: the whole file's tree may
/// place an error of an unclosed bracket lines or kernels further down.
fn section_errors(text: &str, section: TextRange) -> Vec<TextRange> {
    let own = &text[section.start as usize..section.end as usize];
    match crate::parse(own) {
        Ok(tree) => tree.error_ranges().into_iter().map(|e| TextRange::new((e.start + section.start) as usize, (e.end + section.start) as usize)).collect(),
        Err(_) => vec![section],
    }
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

/// Turns every [`COMMENT_RUN`]-th line of a run of comment and empty lines
/// into the statement `0` (then spaces), where the run goes through the
/// blanked `sections`: tree-sitter's Python scanner reads a run of comment
/// lines once per line in it, so a run of thousands (a broken section of a
/// large file, or many of them, blanked one after another) takes time
/// quadratic in its length. The statement is in column 0 of a line of a
/// section left out, where nothing of the file remains to be indented.
fn break_comment_runs(bytes: &mut [u8], sections: &[TextRange]) {
    let mut run = 0;
    let mut start = 0;
    let mut section = sections.iter().peekable();
    while start < bytes.len() {
        let end = bytes[start..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |i| start + i + 1);
        while section.peek().is_some_and(|s| (s.end as usize) <= start) {
            section.next();
        }
        let blanked = section.peek().is_some_and(|s| (s.start as usize) <= start && end <= s.end as usize);
        let line = &bytes[start..end];
        let content = line.iter().position(|b| !b.is_ascii_whitespace());
        let quiet = content.is_none_or(|i| line[i] == b'#');
        if !quiet {
            run = 0;
        } else if blanked && run >= COMMENT_RUN && content.is_some() {
            bytes[start] = b'0';
            run = 0;
        } else {
            run += 1;
        }
        start = end;
    }
}

/// The sections of `text` that do not parse on their own. Each section is
/// a whole top-level statement (or a decorated definition) starting in
/// column 0 of a line, which parses on its own wherever the file is valid,
/// with one exception: brackets left open over lines that start in column
/// 0, where a later section holds the closing bracket and fails too.
fn broken_sections(text: &str, parses: &mut dyn Parses) -> Vec<TextRange> {
    sections(text).into_iter().filter(|s| is_broken(text, *s, parses)).collect()
}

/// Whether `section` of `text` is one [`recover`] leaves out when the text
/// has an error: it holds code and does not parse on its own.
pub fn is_broken(text: &str, section: TextRange, parses: &mut dyn Parses) -> bool {
    let own = &text[section.start as usize..section.end as usize];
    !own.trim().is_empty() && !parses.parses_alone(own)
}

/// The top-level sections of `text`, in order, covering it.
pub fn sections(text: &str) -> Vec<TextRange> {
    let starts = section_starts(text);
    starts
        .iter()
        .enumerate()
        .map(|(i, &start)| TextRange::new(start, starts.get(i + 1).copied().unwrap_or(text.len())))
        .collect()
}

/// Offsets of the lines that start a section: the first line, and each line
/// that starts in column 0 with a statement (not a comment, a closing
/// bracket or a clause of the statement above), outside strings and not
/// continued from the line above by a backslash, unless it is the
/// definition its decorators above belong to.
///
/// Read from the text alone (not from a tree, which an error can make read
/// strings where there are none), so that an editor finds the same sections
/// as a whole-file parse.
fn section_starts(text: &str) -> Vec<usize> {
    let inside = lines_inside_tokens(text);
    let mut starts = vec![0];
    let mut under_decorator = false;
    let mut offset = 0;
    for (line, inside) in text.split_inclusive('\n').zip(inside) {
        let at = offset;
        offset += line.len();
        let Some(first) = line.chars().next() else { continue };
        if inside || first.is_whitespace() || matches!(first, '#' | ')' | ']' | '}') {
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

/// For each line of `text` (as `split_inclusive('\n')` gives them): whether
/// it starts inside a string literal (a triple-quoted string, or a quoted
/// one continued by a backslash) or continues the line above (a backslash
/// at the end of it, outside strings and comments). A lexical scan: quotes,
/// escapes and comments, as Python's tokenizer reads them.
fn lines_inside_tokens(text: &str) -> Vec<bool> {
    let bytes = text.as_bytes();
    let mut out = vec![false];
    // The open string: its quote and whether it is triple-quoted.
    let mut string: Option<(u8, bool)> = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match string {
            None => match b {
                b'#' => {
                    while i < bytes.len() && bytes[i] != b'\n' {
                        i += 1;
                    }
                    continue;
                }
                b'\'' | b'"' => {
                    let triple = bytes.get(i + 1) == Some(&b) && bytes.get(i + 2) == Some(&b);
                    string = Some((b, triple));
                    i += if triple { 3 } else { 1 };
                    continue;
                }
                b'\\' if matches!(bytes.get(i + 1), Some(b'\n')) || bytes.get(i + 1..i + 3) == Some(b"\r\n") => {
                    i += if bytes[i + 1] == b'\r' { 3 } else { 2 };
                    out.push(true);
                    continue;
                }
                b'\n' => out.push(false),
                _ => {}
            },
            Some((quote, triple)) => match b {
                b'\\' => {
                    if bytes.get(i + 1) == Some(&b'\n') {
                        out.push(true);
                    }
                    i += 2;
                    continue;
                }
                b'\n' if triple => out.push(true),
                // An unterminated quoted string ends with its line.
                b'\n' => {
                    string = None;
                    out.push(false);
                }
                _ if b == quote && (!triple || (bytes.get(i + 1) == Some(&quote) && bytes.get(i + 2) == Some(&quote))) => {
                    string = None;
                    i += if triple { 3 } else { 1 };
                    continue;
                }
                _ => {}
            },
        }
        i += 1;
    }
    out
}

/// Functions defined in `section` under a decorator that names `kernel`
/// (`@cute.kernel`, `@cute.kernel(...)`, or a name it is imported as:
/// `@device` after `kernel as device`), read from the text (the section
/// does not parse).
fn kernels_in(text: &str, section: TextRange) -> Vec<(String, TextRange)> {
    let aliases: Vec<&str> = crate::kernels::renamings(text, "kernel").collect();
    let names_kernel = |d: &str| d.rsplit('.').next().is_some_and(|last| last == "kernel" || aliases.contains(&last));
    let mut out = Vec::new();
    let mut decorated_kernel = false;
    let mut offset = section.start as usize;
    for line in text[section.start as usize..section.end as usize].split_inclusive('\n') {
        let at = offset;
        offset += line.len();
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if let Some(decorator) = trimmed.strip_prefix('@') {
            decorated_kernel |= decorator.split(['(', ' ', '\n']).next().is_some_and(names_kernel);
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

    /// A kernel whose decorator is the name `kernel` is imported as is
    /// named too; one under another decorator is not.
    #[test]
    fn a_kernel_under_a_renamed_decorator_is_named() {
        let file = "from cutlass.cute import kernel as device, jit\n\n@device\ndef first():\n    y = (1 +\n\n@jit\ndef host(x):\n    z = (2 +\n";
        let (recovery, _) = recover(&crate::parse(file).unwrap(), &mut Fresh).expect("recovered");
        let names: Vec<&str> = recovery.kernels.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["first"]);
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
        // Told that none does: every section is left out, the broken one
        // among them.
        let mut told = Told { alone: false, asked: Vec::new() };
        let (recovery, _) = recover(&parsed, &mut told).expect("recovered");
        let start = FILE.find("@cute.kernel").unwrap();
        assert_eq!(recovery.broken.len(), sections(FILE).len());
        assert!(recovery.broken.iter().any(|r| r.start as usize == start));
    }

    #[test]
    fn a_valid_file_needs_no_recovery() {
        let valid = FILE.replace("y = (x +", "y = (x + 1)");
        assert!(recover(&crate::parse(&valid).unwrap(), &mut Fresh).is_none());
    }

    #[test]
    fn column_zero_lines_in_strings_do_not_start_sections() {
        let text = "def f():\n    s = \"\"\"\nclass Doc:\n\"\"\"\n    y = (1 +\n\ndef g():\n    pass\n";
        let starts = section_starts(text);
        assert_eq!(starts, [0, text.find("def g").unwrap()]);
    }

    #[test]
    fn continued_lines_and_quotes_do_not_start_sections() {
        let text = "x = 1 + \\\n2\ns = 'a # not a comment'\nt = \"b\\\"\"\nu = '''\nv\n'''\ny = 3\n";
        let at = |s: &str| text.find(s).unwrap();
        assert_eq!(section_starts(text), [0, at("s ="), at("t ="), at("u ="), at("y =")]);
    }

    #[test]
    fn the_error_reported_is_where_the_section_breaks() {
        let parsed = crate::parse(FILE).unwrap();
        let (recovery, _) = recover(&parsed, &mut Fresh).expect("recovered");
        let section = recovery.broken[0];
        assert!(!recovery.errors.is_empty());
        assert!(recovery.errors.iter().all(|e| section.start <= e.start && e.end <= section.end), "{:?}", recovery.errors);
    }

    #[test]
    fn leaving_out_the_broken_section_is_the_recovery() {
        let parsed = crate::parse(FILE).unwrap();
        let whole = recover(&parsed, &mut Fresh).expect("recovered");
        let broken: Vec<TextRange> =
            sections(FILE).into_iter().filter(|s| !parses_alone(&FILE[s.start as usize..s.end as usize])).collect();
        let given = leave_out(FILE, broken, &mut Fresh).expect("recovered");
        assert_eq!(whole.0, given.0);
    }

    #[test]
    fn decorators_stay_with_their_definition() {
        let text = "@a\n@b(\n    1,\n)\ndef f():\n    pass\nclass C:\n    pass\n";
        assert_eq!(section_starts(text), [0, text.find("class").unwrap()]);
    }

    /// A long broken section (or many in a row) is left out without a run
    /// of thousands of comment lines, which the Python scanner reads in time
    /// quadratic in its length: every [`COMMENT_RUN`]-th blanked line is a
    /// statement of its own, in column 0, and the text still parses, with
    /// its lines and length.
    #[test]
    fn a_long_broken_section_leaves_no_long_run_of_comments() {
        let body: String = (0..500).map(|i| format!("    x{i} = ({i} +\n")).collect();
        let text = format!("import cutlass.cute as cute\n\ndef broken():\n{body}\n\nN = 4\n");
        let parsed = crate::parse(&text).unwrap();
        let (recovery, tree) = recover(&parsed, &mut Fresh).expect("recovered");
        assert!(!tree.root_node().has_error());
        assert_eq!((recovery.text.len(), recovery.text.lines().count()), (text.len(), text.lines().count()));
        let mut run = 0;
        let mut longest = 0;
        for line in recovery.text.lines() {
            let quiet = line.trim().is_empty() || line.starts_with('#');
            run = if quiet { run + 1 } else { 0 };
            longest = longest.max(run);
        }
        assert!(longest <= COMMENT_RUN + 1, "{longest} comment lines in a row");
        assert!(recovery.text.lines().filter(|l| l.starts_with('0')).count() >= 500 / (COMMENT_RUN + 1));
        assert!(recovery.text.ends_with("N = 4\n"));
    }
}
