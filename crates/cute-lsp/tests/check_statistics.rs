//! `cute-lsp check --statistics` on a tree of copied fixtures: a clean
//! kernel, one with a finding, kernels not checked, checked in part and
//! within loop bounds only, counted per path given and in total.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `cute-lsp` run in `dir`.
fn cute_lsp_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cute-lsp")).args(args).current_dir(dir).output().expect("cute-lsp runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Two directories: `checked` (a clean kernel, one with an untoggled phase,
/// a file without kernels) and `open` (a kernel whose inline PTX is not
/// modelled, a method calling a closure that is not modelled, a kernel
/// checked in part, one checked within loop bounds).
fn tree(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cute-lsp-statistics-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (to, from) in [
        ("checked/clean.py", "untoggled_phase/jacobi_cluster_clean.py"),
        ("checked/bug.py", "untoggled_phase/jacobi_cluster_bug.py"),
        ("open/ptx.py", "analysis_incomplete/ptx_cas_lock_loop.py"),
        ("open/deeper/helper.py", "analysis_incomplete/handed_on_helper.py"),
        ("open/in_part.py", "analysis_incomplete/nested_runtime_condition.py"),
        ("open/bounded.py", "pipeline/order_turns_clean.py"),
    ] {
        let to = dir.join(to);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(root().join("tests/fixtures").join(from), to).unwrap();
    }
    std::fs::write(dir.join("checked/no_kernels.py"), "x = 1\n").unwrap();
    dir
}

/// The numbers of the coverage row of `path`.
fn row(report: &str, path: &str) -> Vec<usize> {
    let line = section(report, "@cute.kernel functions")
        .into_iter()
        .find(|l| l.split_whitespace().next() == Some(path))
        .unwrap_or_else(|| panic!("no row for {path}:\n{report}"));
    line.split_whitespace().skip(1).map(|n| n.parse().unwrap()).collect()
}

/// The lines after `heading` up to the next blank line.
fn section<'r>(report: &'r str, heading: &str) -> Vec<&'r str> {
    let mut lines = report.lines().skip_while(|l| !l.starts_with(heading));
    assert!(lines.next().is_some(), "no `{heading}` in:\n{report}");
    lines.take_while(|l| !l.is_empty()).map(str::trim).collect()
}

#[test]
fn statistics_count_kernels_by_how_far_they_were_checked() {
    let dir = tree("counts");
    let out = cute_lsp_in(&dir, &["check", "--statistics", "checked", "open"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let report = stdout(&out);
    // The report, then the statistics.
    let tables = report.find("@cute.kernel functions").unwrap_or_else(|| panic!("{report}"));
    assert!(report[..tables].contains("error[CUTE001]"), "{report}");
    // Files, kernels, checked in full, within loop bounds, not checked.
    assert_eq!(row(&report, "checked"), [3, 2, 2, 0, 0]);
    assert_eq!(row(&report, "open"), [4, 4, 0, 1, 3]);
    assert_eq!(row(&report, "total"), [7, 6, 2, 1, 3]);
    assert!(report.contains("checked in full: 2 of 6 (33%); in full or within loop bounds: 3 (50%)"), "{report}");

    let reasons = section(&report, "analysis-incomplete notes in open by reason (4 notes, 4 distinct)");
    assert_eq!(reasons.len(), 4, "{reasons:?}");
    for expected in [
        "1  `K` was not checked: its inline PTX uses a `bra` inside the assembly, which is not modelled",
        "1  `K` was checked for a bounded number of loop iterations only",
        "1  `K` was checked only in part: whether its synchronization is correct depends on the condition at line N",
        "1  `K` was not checked: it calls `load_fn`",
    ] {
        assert!(reasons.iter().any(|r| r.starts_with(expected)), "{expected} not in {reasons:?}");
    }
    assert!(!report.contains("notes in checked by reason"), "{report}");
    assert_eq!(section(&report, "analysis-incomplete notes in total by reason").len(), 4);

    let rules = section(&report, "findings per rule:");
    assert_eq!(rules.iter().map(|r| r.split_whitespace().collect::<Vec<_>>()).collect::<Vec<_>>(), [
        ["CUTE090", "analysis-incomplete", "4"],
        ["CUTE001", "untoggled-phase", "1"]
    ]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn coverage_does_not_follow_the_selection_and_findings_do() {
    let dir = tree("selection");
    let out = cute_lsp_in(&dir, &["check", "--statistics", "--ignore", "analysis-incomplete", "--exit-zero", "open"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let report = stdout(&out);
    assert_eq!(row(&report, "open"), [4, 4, 0, 1, 3]);
    assert!(!report.contains("total"), "one path, no total: {report}");
    assert_eq!(section(&report, "findings per rule: none").len(), 0, "{report}");

    // With `--output-file` the tables follow the report there.
    let out = cute_lsp_in(&dir, &["check", "--statistics", "--output-file", "report.txt", "checked/bug.py"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(stdout(&out), "");
    let written = std::fs::read_to_string(dir.join("report.txt")).unwrap();
    assert!(written.contains("untoggled-phase"), "{written}");
    assert_eq!(row(&written, "checked/bug.py"), [1, 1, 1, 0, 0]);
    assert_eq!(section(&written, "findings per rule:"), ["CUTE001 untoggled-phase 1"]);

    // A JSON or SARIF report stays one document; the tables go to stderr.
    for format in ["json", "sarif"] {
        let out = cute_lsp_in(&dir, &["check", "--statistics", "--format", format, "--output-file", "report.json", "checked/bug.py"]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let written = std::fs::read_to_string(dir.join("report.json")).unwrap();
        let v: serde_json::Value = serde_json::from_str(&written).unwrap_or_else(|e| panic!("{format}: {e}: {written}"));
        assert!(v.is_array() || v["runs"].is_array(), "{v}");
        let tables = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(row(&tables, "checked/bug.py"), [1, 1, 1, 0, 0], "{tables}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
