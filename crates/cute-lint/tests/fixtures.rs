//! Every fixture kernel under `tests/fixtures/` (and the pasted snippets of
//! `tests/corpus/`) is linted, and the result must match its annotations:
//! a `# expect: RULE` comment (or `RULE, RULE`) on a line means a diagnostic of each rule must
//! start on that line and carry a counterexample trace; a file without
//! annotations is a clean twin and must get no diagnostic at all. Quick fixes
//! are applied and must make their diagnostic go away. Each file is checked
//! as `cute-lsp check` checks it: a module of a package (a fixture directory
//! with an `__init__.py`) with what it imports from the package linked in.

use std::path::{Path, PathBuf};

use cute_lint::{analyze_file, AnalysisOptions, Diagnostic, DiskSources, Severity};
use cute_syntax::LineIndex;

mod support;
use support::{apply};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn python_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("cannot read {}: {e}", d.display())) {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "py") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// (0-based line, rule name) for every `# expect: RULE[, RULE...]`
/// annotation.
fn expectations(text: &str) -> Vec<(u32, String)> {
    text.lines()
        .enumerate()
        .flat_map(|(i, l)| {
            let rules = l.find("# expect: ").map(|at| &l[at + "# expect: ".len()..]).unwrap_or("");
            rules.split(',').map(str::trim).filter(|r| !r.is_empty()).map(move |r| (i as u32, r.to_string())).collect::<Vec<_>>()
        })
        .collect()
}

/// The diagnostics of the file at `path` holding `text`.
fn analyze(path: &Path, text: &str) -> Vec<Diagnostic> {
    analyze_file(path, text, &AnalysisOptions::default(), &DiskSources::default())
}

fn line_of(text: &str, d: &Diagnostic) -> u32 {
    LineIndex::new(text).line_of(d.range.start)
}

fn check_file(path: &Path, strict: bool) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let name = path.strip_prefix(root()).unwrap_or(path).display().to_string();
    let diags = analyze(path, &text);
    let expected = expectations(&text);
    let mut failures = Vec::new();
    for (line, rule) in &expected {
        match diags.iter().find(|d| line_of(&text, d) == *line && d.name == rule) {
            None => failures.push(format!(
                "{name}:{}: expected `{rule}`, got {:?}",
                line + 1,
                diags.iter().map(|d| (d.name, line_of(&text, d) + 1, d.message.clone())).collect::<Vec<_>>()
            )),
            // A finding comes with its interleaving; the note of a check
            // within loop bounds (a kernel whose loops run until a value
            // known at run time says stop) has none.
            Some(d) if d.related.is_empty() && d.name != "analysis-incomplete" => {
                failures.push(format!("{name}:{}: `{rule}` has no trace", line + 1))
            }
            Some(_) => {}
        }
    }
    for d in &diags {
        let line = line_of(&text, d);
        let expected_here = expected.iter().any(|(l, r)| *l == line && r == d.name);
        // Pasted snippets may also be partially checked; fixtures never are.
        let tolerated = !strict && d.severity == Severity::Info;
        if !expected_here && !tolerated {
            failures.push(format!("{name}:{}: unexpected {} `{}`: {}", line + 1, d.severity.as_str(), d.name, d.message));
        }
    }
    failures
}

#[test]
fn fixtures_match_their_annotations() {
    let files = python_files(&root().join("tests/fixtures"));
    assert!(files.len() >= 9, "fixtures missing: found {}", files.len());
    let failures: Vec<String> = files.iter().flat_map(|f| check_file(f, true)).collect();
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn every_rule_with_a_fixture_has_a_bug_twin_and_a_clean_twin() {
    let files = python_files(&root().join("tests/fixtures"));
    let mut bug_rules = std::collections::BTreeSet::new();
    let mut clean = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let e = expectations(&text);
        if e.is_empty() {
            clean += 1;
        }
        bug_rules.extend(e.into_iter().map(|(_, r)| r));
    }
    // Every rule but the report of an incomplete analysis has a bug twin.
    for rule in cute_lint::rules::ALL.iter().filter(|r| r.name != "analysis-incomplete") {
        assert!(bug_rules.contains(rule.name), "no bug twin for {}", rule.name);
    }
    assert!(clean >= bug_rules.len(), "fewer clean twins than rules");
}

#[test]
fn pasted_blog_spellings_are_recognised() {
    let files = python_files(&root().join("tests/corpus"));
    assert!(!files.is_empty());
    let failures: Vec<String> = files.iter().flat_map(|f| check_file(f, false)).collect();
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn quick_fixes_remove_their_diagnostic() {
    let mut fixed = 0;
    for f in python_files(&root().join("tests/fixtures")) {
        let text = std::fs::read_to_string(&f).unwrap();
        let found = analyze(&f, &text);
        for d in &found {
            // With several findings of the rule in the file, the one fixed
            // must go (the others stay); with one, the rule must.
            let of_the_rule = found.iter().filter(|o| o.name == d.name).count();
            for fix in &d.fixes {
                let after = apply(&text, fix);
                let again = analyze(&f, &after);
                assert!(
                    !again.iter().any(|a| a.name == d.name && (of_the_rule == 1 || a.message == d.message)),
                    "{}: fix `{}` leaves {:?}\n--- fixed text ---\n{after}",
                    f.display(),
                    fix.title,
                    again.iter().map(|a| (a.name, a.message.clone())).collect::<Vec<_>>()
                );
                assert!(cute_syntax::parse(&after).unwrap().error_ranges().is_empty(), "fix breaks the syntax");
                fixed += 1;
            }
        }
    }
    assert!(fixed >= 3, "only {fixed} fixes were exercised");
}
