//! `cute-lsp check`'s rule selection and run control as CI meets them:
//! `--select`, `--extend-select`, `--ignore`, `--severity` (by code and by
//! name), a rule that is none, `--exit-zero`, `--output-file`, `--quiet`, and
//! the same keys in `cute-lsp.toml` and `pyproject.toml` under the flags.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn cute_lsp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cute-lsp")).args(args).current_dir(root()).output().expect("cute-lsp runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn tempdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cute-lsp-selection-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The untoggled phase of the two-CTA Jacobi smoother, at line 78.
const BUG: &str = "tests/fixtures/untoggled_phase/jacobi_cluster_bug.py";
/// A kernel that is not checked: one `analysis-incomplete` note.
const NOT_CHECKED: &str = "tests/fixtures/analysis_incomplete/ptx_cas_lock_loop.py";

/// `check --format json` of `path` with `flags`: the exit status and the
/// findings as (code, severity, line).
fn findings(path: &str, flags: &[&str]) -> (Option<i32>, Vec<(String, String, u64)>) {
    let mut args = vec!["check", "--format", "json"];
    args.extend_from_slice(flags);
    args.push(path);
    let out = cute_lsp(&args);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    let found = v
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let line = d["range"]["start"]["line"].as_u64().unwrap() + 1;
            (d["code"].as_str().unwrap().to_string(), d["severity"].as_str().unwrap().to_string(), line)
        })
        .collect();
    (out.status.code(), found)
}

fn untoggled(severity: &str) -> Vec<(String, String, u64)> {
    vec![("CUTE001".to_string(), severity.to_string(), 78)]
}

#[test]
fn select_ignore_and_extend_select_by_code_and_by_name() {
    assert_eq!(findings(BUG, &[]), (Some(1), untoggled("error")));
    for kept in [
        &["--select", "CUTE001"][..],
        &["--select", "untoggled-phase"],
        &["--select", "cute001"],
        &["--select", "deadlock,CUTE001"],
        &["--select", "deadlock", "--select", "untoggled-phase"],
        &["--select", "deadlock", "--extend-select", "CUTE001"],
        &["--select", "CUTE050", "--extend-select", "untoggled-phase"],
        &["--ignore", "deadlock"],
    ] {
        assert_eq!(findings(BUG, kept), (Some(1), untoggled("error")), "{kept:?}");
    }
    for dropped in [
        &["--select", "CUTE050"][..],
        &["--select", "deadlock,smem-race"],
        &["--select", ""],
        &["--ignore", "CUTE001"],
        &["--ignore", "untoggled-phase"],
        &["--ignore", "Cute001"],
        // Within the command line, ignoring wins over selecting.
        &["--select", "CUTE001", "--ignore", "untoggled-phase"],
        &["--extend-select", "untoggled-phase", "--ignore", "CUTE001"],
    ] {
        assert_eq!(findings(BUG, dropped), (Some(0), vec![]), "{dropped:?}");
    }
}

#[test]
fn analysis_incomplete_is_selected_like_any_rule() {
    let note = vec![("CUTE090".to_string(), "info".to_string(), 23)];
    assert_eq!(findings(NOT_CHECKED, &[]), (Some(0), note.clone()));
    assert_eq!(findings(NOT_CHECKED, &["--ignore", "analysis-incomplete"]), (Some(0), vec![]));
    assert_eq!(findings(NOT_CHECKED, &["--select", "CUTE001"]), (Some(0), vec![]));
    assert_eq!(findings(NOT_CHECKED, &["--select", "CUTE001,CUTE090"]), (Some(0), note));
    // The notes as errors fail the run.
    let (status, found) = findings(NOT_CHECKED, &["--severity", "CUTE090=error"]);
    assert_eq!((status, found[0].1.as_str()), (Some(1), "error"));
    let help = stdout(&cute_lsp(&["check", "--help"]));
    assert!(help.contains("silence then no longer means checked"), "{help}");
}

#[test]
fn severity_changes_the_level_and_the_exit_status() {
    assert_eq!(findings(BUG, &["--severity", "untoggled-phase=warning"]), (Some(0), untoggled("warning")));
    assert_eq!(findings(BUG, &["--severity", "cute001=info"]), (Some(0), untoggled("info")));
    assert_eq!(findings(BUG, &["--severity", "CUTE001=Warning", "--severity", "CUTE001=error"]), (Some(1), untoggled("error")));
    assert_eq!(findings(BUG, &["--severity", "untoggled-phase=off"]), (Some(0), vec![]));
    // A level is not a selection.
    assert_eq!(findings(BUG, &["--ignore", "CUTE001", "--severity", "CUTE001=error"]), (Some(0), vec![]));
}

#[test]
fn a_rule_or_level_that_is_none_stops_the_run() {
    let dir = tempdir("unknown");
    let report = dir.join("report.txt");
    for (flags, message) in [
        (&["--select", "foo"][..], "cute-lsp: unknown rule `foo` in --select; `cute-lsp rules` lists them"),
        (&["--select", "CUTE001,foo"], "cute-lsp: unknown rule `foo` in --select; `cute-lsp rules` lists them"),
        (&["--extend-select", "CUTE999"], "cute-lsp: unknown rule `CUTE999` in --extend-select; `cute-lsp rules` lists them"),
        (&["--ignore", "dedlock"], "cute-lsp: unknown rule `dedlock` in --ignore; `cute-lsp rules` lists them"),
        (&["--severity", "dedlock=error"], "cute-lsp: unknown rule `dedlock` in --severity; `cute-lsp rules` lists them"),
        (&["--severity", "deadlock=loud"], "cute-lsp: unknown level `loud` in --severity deadlock=loud"),
        (&["--severity", "deadlock"], "cute-lsp: --severity takes NAME=LEVEL, not `deadlock`"),
    ] {
        let mut args = vec!["check", "--output-file", report.to_str().unwrap()];
        args.extend_from_slice(flags);
        args.push(BUG);
        let out = cute_lsp(&args);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {out:?}");
        assert!(stderr(&out).starts_with(message), "{flags:?}: {}", stderr(&out));
        // Nothing checked, nothing written.
        assert!(!stderr(&out).contains("file(s) checked"), "{}", stderr(&out));
        assert_eq!(stdout(&out), "");
        assert!(!report.exists(), "{flags:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn exit_zero_passes_with_errors_but_not_with_a_path_not_read() {
    let out = cute_lsp(&["check", "--exit-zero", BUG]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(stdout(&out).contains("error[CUTE001]"), "{}", stdout(&out));
    assert!(stderr(&out).contains("1 finding(s), 1 error(s)"), "{}", stderr(&out));
    assert_eq!(cute_lsp(&["check", "--exit-zero", BUG, "does/not/exist.py"]).status.code(), Some(2));
    assert_eq!(findings(BUG, &["--exit-zero"]), (Some(0), untoggled("error")));
}

#[test]
fn output_file_takes_the_report_and_quiet_the_summary() {
    let dir = tempdir("output");
    for format in ["human", "json"] {
        let report = dir.join(format!("report.{format}"));
        // An existing file is replaced.
        std::fs::write(&report, "stale\n".repeat(10_000)).unwrap();
        let out = cute_lsp(&["check", "--format", format, "--output-file", report.to_str().unwrap(), BUG]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert_eq!(stdout(&out), "");
        let written = std::fs::read_to_string(&report).unwrap();
        assert!(!written.contains("stale"));
        // What standard output would have had.
        assert_eq!(written, stdout(&cute_lsp(&["check", "--format", format, BUG])), "{format}");
    }
    let out = cute_lsp(&["check", "--output-file", dir.join("no/such/dir/r.txt").to_str().unwrap(), BUG]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot write"), "{}", stderr(&out));

    let loud = cute_lsp(&["check", BUG]);
    assert!(stderr(&loud).contains("cute-lsp: 1 file(s) checked, 1 finding(s), 1 error(s)"), "{}", stderr(&loud));
    for quiet in ["--quiet", "-q"] {
        let out = cute_lsp(&["check", quiet, BUG]);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(stderr(&out), "", "{quiet}");
        assert_eq!(stdout(&out), stdout(&loud));
    }
    // Problems are still said.
    let out = cute_lsp(&["check", "--quiet", BUG, "does/not/exist.py"]);
    assert!(stderr(&out).contains("cannot read `does/not/exist.py`") && !stderr(&out).contains("checked"), "{}", stderr(&out));
    std::fs::remove_dir_all(&dir).unwrap();
}

fn check_in(dir: &Path, flags: &[&str]) -> (Option<i32>, Vec<(String, String, u64)>) {
    findings(dir.join("k.py").to_str().unwrap(), flags)
}

#[test]
fn cute_lsp_toml_and_pyproject_select_and_the_flags_override_them() {
    let dir = tempdir("files");
    std::fs::copy(root().join(BUG), dir.join("k.py")).unwrap();
    let (pyproject, own) = (dir.join("pyproject.toml"), dir.join("cute-lsp.toml"));

    std::fs::write(&pyproject, "[project]\nname = \"k\"\n\n[tool.cute-lsp]\nselect = [\"deadlock\"]\n").unwrap();
    assert_eq!(check_in(&dir, &[]), (Some(0), vec![]));
    // The command line's `select` starts anew; its `extend-select` adds to the file's.
    assert_eq!(check_in(&dir, &["--select", "untoggled-phase"]), (Some(1), untoggled("error")));
    assert_eq!(check_in(&dir, &["--extend-select", "CUTE001"]), (Some(1), untoggled("error")));

    std::fs::write(&pyproject, "[tool.cute-lsp]\nselect = [\"deadlock\"]\nextend-select = [\"CUTE001\"]\n").unwrap();
    assert_eq!(check_in(&dir, &[]), (Some(1), untoggled("error")));
    assert_eq!(check_in(&dir, &["--ignore", "untoggled-phase"]), (Some(0), vec![]));

    // A `cute-lsp.toml` beside it wins, keys at its top level.
    std::fs::write(&own, "severity = { untoggled-phase = \"warning\" }\n").unwrap();
    assert_eq!(check_in(&dir, &[]), (Some(0), untoggled("warning")));
    assert_eq!(check_in(&dir, &["--severity", "untoggled-phase=error"]), (Some(1), untoggled("error")));
    std::fs::write(&own, "ignore = [\"CUTE001\"]\n").unwrap();
    assert_eq!(check_in(&dir, &[]), (Some(0), vec![]));
    assert_eq!(check_in(&dir, &["--extend-select", "untoggled-phase"]), (Some(1), untoggled("error")));
    assert_eq!(check_in(&dir, &["--select", "CUTE001"]), (Some(1), untoggled("error")));
    std::fs::write(&own, "select = []\n").unwrap();
    assert_eq!(check_in(&dir, &[]), (Some(0), vec![]));
    // Even empty, it is the configuration: the pyproject's no longer counts.
    std::fs::write(&own, "").unwrap();
    std::fs::write(&pyproject, "[tool.cute-lsp]\nignore = [\"untoggled-phase\"]\n").unwrap();
    assert_eq!(check_in(&dir, &[]), (Some(1), untoggled("error")));
    std::fs::remove_file(&own).unwrap();
    assert_eq!(check_in(&dir, &[]), (Some(0), vec![]));

    // A mistake in the file is said and the rest applies.
    std::fs::write(&own, "select = [\"untoggled-phase\", \"dedlock\"]\nseverity = { CUTE001 = \"warning\" }\n").unwrap();
    let out = cute_lsp(&["check", "--format", "json", dir.join("k.py").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(stderr(&out).contains("cute-lsp.toml: select: unknown rule `dedlock`"), "{}", stderr(&out));
    assert_eq!(check_in(&dir, &[]), (Some(0), untoggled("warning")));
    std::fs::remove_dir_all(&dir).unwrap();
}
