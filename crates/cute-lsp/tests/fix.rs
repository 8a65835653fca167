//! `cute-lsp check --fix`, `--unsafe-fixes` and `--diff` on copies of the
//! fixtures: safe fixes only with `--fix`, the others with `--unsafe-fixes`,
//! nothing written with `--diff`, the same result when run again, and on
//! every bug twin the findings that have a fix gone afterwards.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::{fixture, TempDir};

const FENCE_BUG: &str = "fence_after_sync/persistent_refill_bug.py";
const PHASE_BUG: &str = "untoggled_phase/jacobi_cluster_bug.py";

fn cute_lsp(args: &[&str], file: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cute-lsp")).args(args).arg(file).output().expect("cute-lsp runs")
}

fn findings(file: &Path) -> Vec<(String, bool)> {
    let out = cute_lsp(&["check", "--format", "json"], file);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    json.as_array()
        .unwrap()
        .iter()
        .map(|d| (d["name"].as_str().unwrap().to_string(), d["fixes"].as_array().is_some_and(|f| !f.is_empty())))
        .collect()
}

fn copy(dir: &TempDir, name: &str) -> PathBuf {
    dir.write(Path::new(name).file_name().unwrap().to_str().unwrap(), &fixture(name))
}

#[test]
fn fix_applies_safe_fixes_and_unsafe_fixes_the_others() {
    let dir = TempDir::new("fix-safe");
    let fence = copy(&dir, FENCE_BUG);
    let phase = copy(&dir, PHASE_BUG);

    let out = cute_lsp(&["check", "--fix"], &dir.0);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(findings(&fence), [], "the safe fence fix was not applied");
    assert_eq!(findings(&phase), [("untoggled-phase".to_string(), true)], "an unsafe fix was applied by --fix");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--unsafe-fixes applies it"), "{out:?}");

    let out = cute_lsp(&["check", "--fix", "--unsafe-fixes"], &dir.0);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(findings(&phase), []);

    // Again: nothing left to apply, the files stay as they are.
    let before = (std::fs::read_to_string(&fence).unwrap(), std::fs::read_to_string(&phase).unwrap());
    let out = cute_lsp(&["check", "--fix", "--unsafe-fixes"], &dir.0);
    assert!(String::from_utf8_lossy(&out.stderr).contains("0 fix(es) applied"), "{out:?}");
    assert_eq!(before, (std::fs::read_to_string(&fence).unwrap(), std::fs::read_to_string(&phase).unwrap()));
}

#[test]
fn diff_prints_the_fixes_and_writes_nothing() {
    let dir = TempDir::new("fix-diff");
    let fence = copy(&dir, FENCE_BUG);
    let before = std::fs::read_to_string(&fence).unwrap();
    let out = cute_lsp(&["check", "--diff"], &fence);
    let diff = String::from_utf8_lossy(&out.stdout);
    assert!(diff.starts_with("--- a/") && diff.contains("\n+++ b/"), "{diff}");
    let moved = "cute.arch.fence_proxy(\"async.shared\", space=\"cta\")";
    assert_eq!(diff.lines().filter(|l| l.starts_with('+') && l.contains(moved)).count(), 1, "{diff}");
    assert_eq!(diff.lines().filter(|l| l.starts_with('-') && l.contains(moved)).count(), 1, "{diff}");
    assert_eq!(std::fs::read_to_string(&fence).unwrap(), before);
    // What is left after the fixes decides the exit status: nothing here.
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

#[test]
fn every_finding_with_a_fix_is_gone_after_the_fixes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let dir = TempDir::new("fix-all");
    let mut fixed = 0;
    for rule in std::fs::read_dir(&root).unwrap() {
        let rule = rule.unwrap().path();
        for file in std::fs::read_dir(&rule).unwrap() {
            let file = file.unwrap().path();
            if !file.to_string_lossy().ends_with("_bug.py") {
                continue;
            }
            let name = format!("{}__{}", rule.file_name().unwrap().to_string_lossy(), file.file_name().unwrap().to_string_lossy());
            let copy = dir.write(&name, &std::fs::read_to_string(&file).unwrap());
            let before = findings(&copy);
            if !before.iter().any(|(_, has_fix)| *has_fix) {
                continue;
            }
            cute_lsp(&["check", "--fix", "--unsafe-fixes", "--quiet"], &copy);
            let after = findings(&copy);
            assert!(after.iter().all(|(_, has_fix)| !has_fix), "{}: findings with a fix left: {after:?}", file.display());
            // The rules whose findings had a fix report nothing there any
            // more. (An unsafe fix may leave another finding: lowering an
            // init count to the arrivals made lets the arriving warps run
            // ahead of a warp that only waits, `vacuous-wait`.)
            for (rule, _) in before.iter().filter(|(_, has_fix)| *has_fix) {
                assert!(after.iter().all(|(r, _)| r != rule), "{}: `{rule}` is still reported: {before:?} -> {after:?}", file.display());
            }
            let text = std::fs::read_to_string(&copy).unwrap();
            assert!(!cute_syntax::parse(&text).unwrap().root().has_error(), "{}: the fixed file does not parse", file.display());
            fixed += 1;
        }
    }
    assert!(fixed >= 20, "only {fixed} bug twins have fixes");
}
