//! The fuzz targets' inputs, replayed on stable Rust: every saved regression
//! under `fuzz/regressions/<target>/` through its target, and every fixture
//! and corpus kernel through all three targets (parse, lower, slice and
//! launch; the whole-file analysis with small budgets; a fixed sequence of
//! edits through the database, compared with the whole-file analysis after
//! each). The functions are those the targets call (`fuzz/src/lib.rs`), each
//! input on a thread with a 2 MiB stack, whose name is the input's path: a
//! stack overflow aborts the process and names it.

#[path = "../../../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod drive;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The fuzz targets, as named by their directories under fuzz/regressions.
const TARGETS: &[&str] = &["parse_lower", "analyze", "edits"];

// known failing: regressions (paths under fuzz/regressions) that still fail,
// skipped until the code they crash is fixed; remove a line with its fix.
const KNOWN_FAILING: &[&str] = &[];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn files_under(dir: &Path, keep: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    fn walk(dir: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, keep, out);
            } else if keep(&path) {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, keep, &mut out);
    out.sort();
    out
}

fn relative(path: &Path) -> String {
    let root = root().canonicalize().unwrap();
    let path = path.canonicalize().unwrap();
    path.strip_prefix(&root).unwrap_or(&path).to_string_lossy().replace('\\', "/")
}

/// An input still running after this long hangs. The campaigns of
/// `scripts/fuzz.sh` call 10 s a hang on a machine that runs nothing else;
/// the replay runs beside the rest of the test suite, on a machine that may
/// be busy (an input that takes 3 s alone took 17 s there), so it asks only
/// that every input ends: every analysis has budgets far below either.
const HANG: Duration = Duration::from_secs(60);

/// Runs `jobs` on two threads (each input on its own small-stack thread
/// inside them); returns the failures, one message each.
fn run_all(jobs: Vec<(String, &'static str, Vec<u8>)>) -> Vec<String> {
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((name, target, bytes)) = jobs.get(i) else { break };
                let started = Instant::now();
                let outcome = catch_unwind(AssertUnwindSafe(|| drive::run_target(target, &format!("{target}:{name}"), bytes)));
                let took = started.elapsed();
                let mut failures = failures.lock().unwrap();
                if let Err(payload) = outcome {
                    let message = payload
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    let first = message.lines().next().unwrap_or("").to_string();
                    failures.push(format!("{target} on {name}: panicked: {first}"));
                } else if took > HANG {
                    failures.push(format!("{target} on {name}: took {took:?} (a hang: over {HANG:?})"));
                }
            });
        }
    });
    failures.into_inner().unwrap()
}

#[test]
fn saved_regressions_replay_without_failure() {
    let mut jobs = Vec::new();
    let mut skipped = Vec::new();
    for &target in TARGETS {
        let dir = root().join("fuzz/regressions").join(target);
        for path in files_under(&dir, &|p| !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'))) {
            let name = relative(&path);
            let under = name.strip_prefix("fuzz/regressions/").unwrap_or(&name).to_string();
            if KNOWN_FAILING.contains(&under.as_str()) {
                skipped.push(under);
                continue;
            }
            jobs.push((name, target, std::fs::read(&path).unwrap()));
        }
    }
    if !skipped.is_empty() {
        eprintln!("skipped, known failing: {skipped:?}");
    }
    let count = jobs.len();
    let failures = run_all(jobs);
    assert!(failures.is_empty(), "{} of {count} regressions fail:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn known_failing_regressions_exist() {
    for name in KNOWN_FAILING {
        assert!(root().join("fuzz/regressions").join(name).is_file(), "fuzz/regressions/{name} is listed as known failing but absent");
    }
}

#[test]
fn fixtures_and_corpus_replay_through_every_target() {
    let is_python = |p: &Path| p.extension().is_some_and(|e| e == "py");
    let mut files = files_under(&root().join("tests/fixtures"), &is_python);
    files.extend(files_under(&root().join("tests/corpus"), &is_python));
    assert!(files.len() >= 20, "fixtures not found: {files:?}");
    let mut jobs = Vec::new();
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        for &target in TARGETS {
            jobs.push((relative(path), target, bytes.clone()));
        }
    }
    let count = jobs.len();
    let failures = run_all(jobs);
    assert!(failures.is_empty(), "{} of {count} runs fail:\n{}", failures.len(), failures.join("\n"));
}

/// The edit scripts of the `edits` target do what they say.
#[test]
fn edit_scripts_apply_at_character_boundaries() {
    use drive::Edit;
    let text = "aé𝜙b\n";
    assert_eq!(Edit::Insert { at: 0, text: "x".into() }.apply(text), "xaé𝜙b\n");
    assert_eq!(Edit::Insert { at: u16::MAX, text: "x".into() }.apply(text), "aé𝜙b\nx");
    // A position inside `é` or `𝜙` rounds down to its start.
    for at in 0..=u16::MAX {
        for edit in [Edit::Delete { at, len: 3 }, Edit::Replace { at, len: 2, text: "-".into() }] {
            let _ = edit.apply(text);
        }
    }
    assert_eq!(Edit::Delete { at: 0, len: 200 }.apply(text), "");
    let (text, edits) = drive::split_edits_input(b"x = 1\n\0\x00\x80\x00\x05\x03\x00\x00\x08ab");
    assert_eq!(text, "x = 1\n");
    assert_eq!(edits.len(), 2);
    assert_eq!(edits[1], Edit::Insert { at: 0, text: "ab".into() });
    // A seed without a script gets edits of its own.
    assert!(!drive::split_edits_input(b"x = 1\n").1.is_empty());
}
