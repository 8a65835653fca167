//! `cute-lsp check --statistics`: after the report, how much of the code was
//! checked and what was found.
//!
//! Per path given (and in total when several are): the files checked, the
//! `@cute.kernel` functions found in them (from the syntax tree, named
//! `Class.method` as the diagnostics name them), and of those kernels how
//! many were checked in full (no `analysis-incomplete` note names them),
//! within loop bounds only (every note naming them is the bounded verdict),
//! and not checked (the others: not checked at all, or only in part). Then
//! the `analysis-incomplete` notes grouped by reason, the kernel's name, the
//! receiver of a call and the pipeline holding it and every number taken
//! out, most frequent first; then the findings per rule, `CODE name count`,
//! as `ruff --statistics` counts them.
//!
//! The classification is `scripts/sweep.py`'s, so the two agree: the same
//! kernels, the same notes naming them (a note names the kernel in
//! backticks at its start, or after "the memory accesses of "), the same
//! grouping of reasons. Two cases `sweep.py` does not see, as it needs
//! Python's `ast` to parse a file: a kernel in a section left out for a
//! syntax error (`cute_syntax::recover`) is found here and counted as not
//! checked, and so is every kernel of a file that could not be analysed at
//! all.
//!
//! Coverage is counted from every note the checker gave, before the
//! configuration and the command line select rules: deselecting
//! `analysis-incomplete` hides the notes from the report, not from these
//! figures. The findings per rule are those reported.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use cute_lint::rules::analysis_incomplete;
use cute_lint::Diagnostic;
use cute_syntax::recover::Fresh;
use cute_syntax::{DecoratorKind, ImportMap, SyntaxTree};

/// The verdict of a kernel found clean with its loops explored a bounded
/// number of times.
const BOUNDED: &str = "was checked for a bounded number of loop iterations only";

/// The start of the note on a file that could not be analysed at all.
const NOT_ANALYSED: &str = "this file could not be analysed";

/// What the statistics take of one file, worked out where the file is
/// checked.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct FileFacts {
    kernels: usize,
    full: usize,
    bounded: usize,
    not_checked: usize,
    /// The reason of each `analysis-incomplete` note, grouped form.
    reasons: Vec<String>,
}

/// The facts of a file with the text `text`, from `diagnostics`, every
/// diagnostic the checker gave it (before any rule is deselected).
pub fn facts(text: &str, diagnostics: &[Diagnostic]) -> FileFacts {
    let notes: Vec<&str> =
        diagnostics.iter().filter(|d| d.name == analysis_incomplete::RULE.name).map(|d| d.message.as_str()).collect();
    let mut named: HashMap<&str, Vec<&str>> = HashMap::new();
    for note in &notes {
        if let Some((kernel, _)) = kernel_named(note) {
            named.entry(kernel).or_default().push(note);
        }
    }
    let not_analysed = notes.iter().any(|n| n.starts_with(NOT_ANALYSED));
    let (kernels, left_out) = kernels(text);
    let mut facts = FileFacts {
        kernels: kernels.len() + left_out,
        not_checked: left_out,
        reasons: notes.iter().map(|n| reason(n)).collect(),
        ..FileFacts::default()
    };
    for kernel in &kernels {
        match named.get(kernel.as_str()) {
            _ if not_analysed => facts.not_checked += 1,
            None => facts.full += 1,
            Some(notes) if notes.iter().all(|n| n.contains(BOUNDED)) => facts.bounded += 1,
            Some(_) => facts.not_checked += 1,
        }
    }
    facts
}

/// The `@cute.kernel` functions of `text` by name (`Class.method` or
/// `function`), and how many more are in sections left out for a syntax
/// error.
fn kernels(text: &str) -> (Vec<String>, usize) {
    // As the analysis does: a kernel is recognised through `cutlass.cute`,
    // so a file that never spells `cute` defines none.
    if !text.contains("cute") || !cute_syntax::may_define_kernels(text) {
        return (Vec::new(), 0);
    }
    let Ok(tree) = cute_syntax::parse(text) else { return (Vec::new(), 0) };
    let (tree, left_out) = match cute_syntax::recover(&tree, &mut Fresh) {
        Some((recovery, recovered)) => (SyntaxTree { text: recovery.text, tree: recovered }, recovery.kernels.len()),
        None => (tree, 0),
    };
    let imports = ImportMap::from_tree(&tree);
    let found = cute_syntax::find_kernels(&tree, &imports);
    (found.iter().filter(|k| k.kind == DecoratorKind::Kernel).map(|k| k.display_name()).collect(), left_out)
}

/// The kernel a note is about and the text after its name: "`K` was ..."
/// or "the memory accesses of `K` were ...".
fn kernel_named(note: &str) -> Option<(&str, &str)> {
    let rest = note.strip_prefix("the memory accesses of ").unwrap_or(note).strip_prefix('`')?;
    let end = rest.find('`')?;
    (end > 0).then(|| (&rest[..end], &rest[end + 1..]))
}

/// A note's reason, to group notes by: the kernel named first becomes `K`,
/// the receiver of the call it synchronizes through `*` (`*.producer_acquire`),
/// the pipeline or barrier it holds `` `*` ``, every number `N`.
pub fn reason(note: &str) -> String {
    let note = match kernel_named(note) {
        Some((_, rest)) => format!("`K`{rest}"),
        None => note.to_string(),
    };
    numbers_out(&holders_out(&receivers_out(&note)))
}

/// The length of the identifier `s` starts with (0 for none).
fn identifier(s: &str) -> usize {
    match s.chars().next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {
            s.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(s.len())
        }
        _ => 0,
    }
}

/// "through `pipeline_q.producer_acquire`" -> "through `*.producer_acquire`":
/// a dotted name after "through " keeps its last part only.
fn receivers_out(note: &str) -> String {
    const THROUGH: &str = "through ";
    let mut out = String::new();
    let mut rest = note;
    while let Some(at) = rest.find(THROUGH) {
        let (before, after) = rest.split_at(at + THROUGH.len());
        out.push_str(before);
        rest = after;
        let tick = usize::from(rest.starts_with('`'));
        let name = &rest[tick..];
        // Where each part of the dotted name ends.
        let mut ends = Vec::new();
        let mut i = 0;
        loop {
            let part = identifier(&name[i..]);
            if part == 0 {
                break;
            }
            i += part;
            ends.push(i);
            if !(name[i..].starts_with('.') && identifier(&name[i + 1..]) > 0) {
                break;
            }
            i += 1;
        }
        if let [.., receiver_end, _] = ends[..] {
            out.push_str(&rest[..tick]);
            out.push_str("*.");
            rest = &name[receiver_end + 1..];
        }
    }
    out.push_str(rest);
    out
}

/// "on a pipeline it is passed (`acc_pipeline`)" -> "(`*`)", and "on `x.y`"
/// -> "on `*`": the holder of a pipeline or barrier.
fn holders_out(note: &str) -> String {
    let backticked = |s: &str| -> Option<usize> {
        let inner = s.strip_prefix('`')?;
        let n = inner.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.')).unwrap_or(inner.len());
        (n > 0 && inner[n..].starts_with('`')).then_some(n + 2)
    };
    let mut out = String::new();
    let mut i = 0;
    while let Some(c) = note[i..].chars().next() {
        let rest = &note[i..];
        let holder = ["on a pipeline it is passed (", "on "]
            .into_iter()
            .find_map(|prefix| Some((prefix.len(), backticked(rest.strip_prefix(prefix)?)?)));
        match holder {
            Some((prefix, len)) => {
                out.push_str(&rest[..prefix]);
                out.push_str("`*`");
                i += prefix + len;
            }
            None => {
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    out
}

/// Every run of digits becomes `N`.
fn numbers_out(note: &str) -> String {
    let mut out = String::with_capacity(note.len());
    let mut in_number = false;
    for c in note.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('N');
            }
            in_number = true;
        } else {
            out.push(c);
            in_number = false;
        }
    }
    out
}

/// The figures of one path given, or of all.
#[derive(Default)]
struct Group {
    files: usize,
    kernels: usize,
    full: usize,
    bounded: usize,
    not_checked: usize,
    reasons: HashMap<String, usize>,
}

impl Group {
    fn add(&mut self, other: &Group) {
        self.files += other.files;
        self.kernels += other.kernels;
        self.full += other.full;
        self.bounded += other.bounded;
        self.not_checked += other.not_checked;
        for (reason, n) in &other.reasons {
            *self.reasons.entry(reason.clone()).or_default() += n;
        }
    }
}

/// The statistics of a run, file by file.
pub struct Statistics {
    paths: Vec<PathBuf>,
    groups: Vec<Group>,
    /// The files of each path given still to come (a file below two of the
    /// paths given is checked, and counted, once for each).
    to_come: Vec<HashMap<PathBuf, usize>>,
    /// Findings reported, by rule code: the rule's name and how many.
    rules: BTreeMap<&'static str, (&'static str, usize)>,
}

impl Statistics {
    pub fn new(paths: &[PathBuf]) -> Statistics {
        let to_come = paths
            .iter()
            .map(|path| {
                let mut files = HashMap::new();
                for file in super::check::collect_files(std::slice::from_ref(path)).0 {
                    *files.entry(file).or_default() += 1;
                }
                files
            })
            .collect();
        Statistics { paths: paths.to_vec(), groups: paths.iter().map(|_| Group::default()).collect(), to_come, rules: BTreeMap::new() }
    }

    /// A file checked: its facts and the diagnostics reported.
    pub fn add(&mut self, file: &Path, facts: FileFacts, reported: &[Diagnostic]) {
        for d in reported {
            self.rules.entry(d.code).or_insert((d.name, 0)).1 += 1;
        }
        let Some(i) = self.to_come.iter().position(|files| files.get(file).is_some_and(|n| *n > 0)) else { return };
        *self.to_come[i].get_mut(file).expect("counted") -= 1;
        let group = &mut self.groups[i];
        group.files += 1;
        group.kernels += facts.kernels;
        group.full += facts.full;
        group.bounded += facts.bounded;
        group.not_checked += facts.not_checked;
        for reason in facts.reasons {
            *group.reasons.entry(reason).or_default() += 1;
        }
    }

    /// The tables, after the report.
    pub fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        let mut total = Group::default();
        for group in &self.groups {
            total.add(group);
        }
        let mut rows: Vec<(String, &Group)> = self.paths.iter().map(|p| p.display().to_string()).zip(&self.groups).collect();
        if rows.len() > 1 {
            rows.push(("total".to_string(), &total));
        }

        writeln!(out)?;
        writeln!(out, "@cute.kernel functions, and how far they were checked:")?;
        let header = ["path", "files", "kernels", "checked in full", "within loop bounds", "not checked"];
        let cells: Vec<[String; 6]> = rows
            .iter()
            .map(|(path, g)| {
                [path.clone(), g.files.to_string(), g.kernels.to_string(), g.full.to_string(), g.bounded.to_string(), g.not_checked.to_string()]
            })
            .collect();
        let widths: Vec<usize> =
            (0..header.len()).map(|c| cells.iter().map(|row| row[c].len()).chain([header[c].len()]).max().unwrap_or(0)).collect();
        let line = |out: &mut dyn Write, row: [&str; 6]| -> io::Result<()> {
            let mut text = format!("  {:<w$}", row[0], w = widths[0]);
            for (c, cell) in row.iter().enumerate().skip(1) {
                text.push_str(&format!("  {:>w$}", cell, w = widths[c]));
            }
            writeln!(out, "{}", text.trim_end())
        };
        line(out, header)?;
        for row in &cells {
            line(out, [&row[0], &row[1], &row[2], &row[3], &row[4], &row[5]])?;
        }
        if total.kernels > 0 {
            let share = |n: usize| 100.0 * n as f64 / total.kernels as f64;
            let either = total.full + total.bounded;
            writeln!(
                out,
                "  checked in full: {} of {} ({:.0}%); in full or within loop bounds: {either} ({:.0}%)",
                total.full,
                total.kernels,
                share(total.full),
                share(either)
            )?;
        }

        for (path, group) in &rows {
            if group.reasons.is_empty() {
                continue;
            }
            let notes: usize = group.reasons.values().sum();
            writeln!(out)?;
            writeln!(
                out,
                "analysis-incomplete notes in {path} by reason ({notes} notes, {} distinct):",
                group.reasons.len()
            )?;
            let mut reasons: Vec<(&String, &usize)> = group.reasons.iter().collect();
            reasons.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            for (reason, n) in reasons {
                writeln!(out, "  {n:5}  {reason}")?;
            }
        }

        writeln!(out)?;
        if self.rules.is_empty() {
            writeln!(out, "findings per rule: none")?;
            return Ok(());
        }
        writeln!(out, "findings per rule:")?;
        let mut rules: Vec<(&str, &str, usize)> = self.rules.iter().map(|(code, (name, n))| (*code, *name, *n)).collect();
        rules.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(b.0)));
        let name_width = rules.iter().map(|r| r.1.len()).max().unwrap_or(0);
        let count_width = rules.iter().map(|r| r.2.to_string().len()).max().unwrap_or(0);
        for (code, name, n) in rules {
            writeln!(out, "  {code} {name:<name_width$} {n:>count_width$}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_grouped_as_sweep_groups_them() {
        let cases = [
            (
                "`Gemm.kernel` was not checked: it synchronizes through `pipeline_q.producer_acquire` on a pipeline it is passed (`acc_pipeline`), not one it creates",
                "`K` was not checked: it synchronizes through `*.producer_acquire` on a pipeline it is passed (`*`), not one it creates",
            ),
            (
                "the memory accesses of `k` were not checked for ordering: 12 accesses at line 40",
                "`K` were not checked for ordering: N accesses at line N",
            ),
            (
                "`k` was not checked: it synchronizes through `self.a.b.arrive_and_wait` on `self.epi`, which holds `x`",
                "`K` was not checked: it synchronizes through `*.arrive_and_wait` on `*`, which holds `x`",
            ),
            // A name of one part, and a call that is not a dotted name, stay.
            ("`k` was not checked: it synchronizes through `sync`, on `f(x)`", "`K` was not checked: it synchronizes through `sync`, on `f(x)`"),
            // "on " inside a word counts too, as in sweep.py's pattern.
            ("`k` was checked only in part: the condition `c1` at line 3", "`K` was checked only in part: the condition `*` at line N"),
            ("syntax error: `a` is not checked until it parses", "syntax error: `a` is not checked until it parses"),
            ("this file could not be analysed: it is not valid UTF-8", "this file could not be analysed: it is not valid UTF-N"),
        ];
        for (note, grouped) in cases {
            assert_eq!(reason(note), grouped, "{note}");
        }
        assert_eq!(kernel_named("`Gemm.kernel` was"), Some(("Gemm.kernel", " was")));
        assert_eq!(kernel_named("the memory accesses of `k` were"), Some(("k", " were")));
        assert_eq!(kernel_named("`` was"), None);
        assert_eq!(kernel_named("syntax error: `k`"), None);
    }

    fn note(message: &str) -> Diagnostic {
        let mut d = analysis_incomplete::file_not_parsed("x");
        d.message = message.to_string();
        d
    }

    #[test]
    fn kernels_are_classified_by_the_notes_naming_them() {
        let text = "import cutlass.cute as cute\n\n\
            @cute.kernel\ndef clean(): pass\n\n\
            @cute.kernel\ndef bounded(): pass\n\n\
            @cute.kernel\ndef part(): pass\n\n\
            class G:\n    @cute.kernel\n    def kernel(self): pass\n\n    @cute.jit\n    def run(self): pass\n";
        let diagnostics = [
            note("`bounded` was checked for a bounded number of loop iterations only"),
            note("`part` was checked for a bounded number of loop iterations only"),
            note("the memory accesses of `part` were not checked for ordering: 2 reasons"),
            note("`G.kernel` was not checked: it synchronizes through `p.x`"),
            note("`run` was not checked: it is no kernel"),
        ];
        let facts = facts(text, &diagnostics);
        assert_eq!((facts.kernels, facts.full, facts.bounded, facts.not_checked), (4, 1, 1, 2));
        assert_eq!(facts.reasons.len(), 5);
        // A file that could not be analysed: none of its kernels was checked.
        let facts = super::facts(text, &[note("this file could not be analysed: it is not valid UTF-8")]);
        assert_eq!((facts.kernels, facts.full, facts.not_checked), (4, 0, 4));
        // A kernel in a section left out for a syntax error: not checked.
        let broken = format!("{text}\n@cute.kernel\ndef typing(x:\n    pass\n");
        let facts = super::facts(&broken, &[]);
        assert_eq!((facts.kernels, facts.full, facts.not_checked), (5, 4, 1));
        assert_eq!(super::facts("x = 1\n", &[]), FileFacts::default());
    }
}
