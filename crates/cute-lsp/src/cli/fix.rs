//! `cute-lsp check --fix`, `--unsafe-fixes` and `--diff`: the quick fixes the
//! server offers, applied by the command line.
//!
//! `--fix` applies the fixes marked safe (they only strengthen ordering:
//! `cute_lint::Applicability`), `--unsafe-fixes` the others too. Fixes are
//! applied one at a time, each followed by a check of the new text, so fixes
//! whose edits would overlap never meet, and what is reported is what is left.
//! A fix that adds a syntax error is not applied; neither is one that
//! brings back a text seen before, and one after which the file has as many
//! findings of its rule as before (it did not remove its finding: a
//! barrier placed where the race it was for crosses loop turns), or more
//! findings in all (a barrier added that some thread waits before), is
//! undone.
//! Applying the fixes again changes nothing. `--diff` prints the changes as a
//! unified diff and writes nothing.

use std::collections::HashSet;

use cute_lint::{Applicability, Diagnostic, Fix};

#[derive(clap::Args, Clone, Copy, Default)]
pub struct FixArgs {
    /// Apply the safe quick fixes (a fence added or moved, stronger
    /// semantics, a wider scope, a wait moved up before a read) in place,
    /// then report what is left.
    #[arg(long)]
    pub fix: bool,
    /// With --fix or --diff: the other quick fixes too (a count, a parity, a
    /// barrier added), which change what the kernel synchronizes on.
    #[arg(long)]
    pub unsafe_fixes: bool,
    /// Print the fixes as a unified diff instead of writing them.
    #[arg(long)]
    pub diff: bool,
}

impl FixArgs {
    /// Whether fixes are applied at all (to the file, or to the diff).
    pub fn applies(&self) -> bool {
        self.fix || self.diff
    }

    fn allows(&self, fix: &Fix) -> bool {
        fix.applicability == Applicability::Safe || self.unsafe_fixes
    }
}

/// Fixes applied to one file's text: the text after them and their titles.
pub struct Fixed {
    pub text: String,
    pub applied: Vec<String>,
}

/// Fixes applied at most to one file (each costs a check of the file).
const MAX_FIXES: usize = 64;

/// Applies the fixes `args` allows to `text`, one at a time, checking the
/// new text with `check` after each (see the module's doc). Returns the
/// final text and what was applied, with the findings of the final text.
pub fn apply_fixes(text: &str, found: Vec<Diagnostic>, args: FixArgs, check: impl Fn(&str) -> Vec<Diagnostic>) -> (Fixed, Vec<Diagnostic>) {
    let mut text = text.to_string();
    let mut found = found;
    let mut applied = Vec::new();
    // A fix may not add a syntax error (a file with some keeps them).
    let syntax_errors = |t: &str| cute_syntax::parse(t).map_or(usize::MAX, |t| t.error_ranges().len());
    let allowed_errors = syntax_errors(&text);
    // Texts no fix may lead to: those the file has had, and those that
    // would add a syntax error.
    let mut ruled_out: HashSet<String> = HashSet::from([text.clone()]);
    while applied.len() < MAX_FIXES {
        let next = found
            .iter()
            .flat_map(|d| d.fixes.iter().map(move |f| (d.code, f)))
            .filter(|(_, f)| args.allows(f))
            .map(|(code, f)| (code, f, edited(&text, f)))
            .find(|(_, _, candidate)| !ruled_out.contains(candidate));
        let Some((code, fix, candidate)) = next else { break };
        ruled_out.insert(candidate.clone());
        if syntax_errors(&candidate) > allowed_errors {
            continue;
        }
        let of_rule = |found: &[Diagnostic]| found.iter().filter(|d| d.code == code).count();
        let after = check(&candidate);
        if of_rule(&after) >= of_rule(&found) || after.len() > found.len() {
            continue;
        }
        applied.push(fix.title.clone());
        text = candidate;
        found = after;
    }
    (Fixed { text, applied }, found)
}

/// `text` with the edits of `fix` applied (byte ranges of `text`, which do
/// not overlap).
pub fn edited(text: &str, fix: &Fix) -> String {
    let mut edits: Vec<_> = fix.edits.iter().collect();
    edits.sort_by_key(|e| std::cmp::Reverse((e.range.start, e.range.end)));
    let mut out = text.to_string();
    for e in edits {
        let (start, end) = (e.range.start as usize, e.range.end as usize);
        if start <= end && end <= out.len() && out.is_char_boundary(start) && out.is_char_boundary(end) {
            out.replace_range(start..end, &e.new_text);
        }
    }
    out
}

/// The unified diff from `before` to `after` of the file at `path`.
pub fn unified_diff(path: &str, before: &str, after: &str) -> String {
    similar::TextDiff::from_lines(before, after).unified_diff().context_radius(3).header(&format!("a/{path}"), &format!("b/{path}")).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cute_lint::{Edit, Severity};
    use cute_syntax::TextRange;

    fn finding(fix: Fix) -> Diagnostic {
        Diagnostic {
            code: "CUTE010",
            name: "fence-after-sync",
            severity: Severity::Error,
            message: String::new(),
            range: TextRange::default(),
            label: String::new(),
            related: Vec::new(),
            notes: Vec::new(),
            help: None,
            fixes: vec![fix],
        }
    }

    fn fix(applicability: Applicability, start: u32, end: u32, new_text: &str) -> Fix {
        Fix { title: format!("replace {start}..{end}"), edits: vec![Edit { range: TextRange { start, end }, new_text: new_text.to_string() }], applicability }
    }

    #[test]
    fn safe_fixes_apply_with_fix_and_the_others_with_unsafe_fixes() {
        let text = "x = 1\n";
        let found = vec![finding(fix(Applicability::Unsafe, 4, 5, "2"))];
        let none = |_: &str| Vec::new();
        let (fixed, _) = apply_fixes(text, found.clone(), FixArgs { fix: true, ..Default::default() }, none);
        assert_eq!(fixed.text, text);
        let (fixed, _) = apply_fixes(text, found, FixArgs { fix: true, unsafe_fixes: true, diff: false }, none);
        assert_eq!(fixed.text, "x = 2\n");
        assert_eq!(fixed.applied.len(), 1);
    }

    #[test]
    fn a_fix_that_breaks_the_syntax_or_comes_back_is_not_applied() {
        let text = "x = 1\n";
        let breaking = vec![finding(fix(Applicability::Safe, 4, 5, "(("))];
        let (fixed, _) = apply_fixes(text, breaking.clone(), FixArgs { fix: true, ..Default::default() }, |_| breaking.clone());
        assert_eq!(fixed.text, text);
        // A fix whose finding stays is undone.
        let flip = |t: &str| vec![finding(if t.contains('1') { fix(Applicability::Safe, 4, 5, "2") } else { fix(Applicability::Safe, 4, 5, "1") })];
        let (fixed, left) = apply_fixes(text, flip(text), FixArgs { fix: true, ..Default::default() }, flip);
        assert_eq!(fixed.text, text);
        assert_eq!(fixed.applied, Vec::<String>::new());
        assert_eq!(left.len(), 1);
        // One that removes its finding and brings another rule's stays;
        // one that brings two is undone.
        let other = |t: &str| if t.contains('1') { vec![finding(fix(Applicability::Safe, 4, 5, "2"))] } else { vec![Diagnostic { code: "CUTE040", ..finding(fix(Applicability::Unsafe, 0, 0, "")) }] };
        let (fixed, left) = apply_fixes(text, other(text), FixArgs { fix: true, ..Default::default() }, other);
        assert_eq!(fixed.text, "x = 2\n");
        assert_eq!(left[0].code, "CUTE040");
        let two = |t: &str| if t.contains('1') { vec![finding(fix(Applicability::Safe, 4, 5, "2"))] } else { vec![Diagnostic { code: "CUTE040", ..finding(fix(Applicability::Unsafe, 0, 0, "")) }; 2] };
        let (fixed, _) = apply_fixes(text, two(text), FixArgs { fix: true, ..Default::default() }, two);
        assert_eq!(fixed.text, text);
    }

    #[test]
    fn edits_apply_from_the_end() {
        let f = Fix {
            title: String::new(),
            edits: vec![
                Edit { range: TextRange { start: 0, end: 1 }, new_text: "yy".into() },
                Edit { range: TextRange { start: 4, end: 5 }, new_text: "22".into() },
            ],
            applicability: Applicability::Safe,
        };
        assert_eq!(edited("x = 1\n", &f), "yy = 22\n");
    }

    #[test]
    fn the_diff_is_unified() {
        let diff = unified_diff("k.py", "a\nb\n", "a\nc\n");
        assert!(diff.starts_with("--- a/k.py\n+++ b/k.py\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"), "{diff}");
    }
}
