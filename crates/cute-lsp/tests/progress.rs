//! `cute-lsp check` shows a progress bar on a terminal, and only there: a
//! pseudo-terminal (util-linux's `script`) stands in for the user's.

use std::path::Path;
use std::process::Command;

fn fixtures(dir: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures").join(dir).display().to_string()
}

/// What a terminal shows for `cute-lsp check ARGS`: standard output and
/// standard error together, as `script` records them.
fn on_a_terminal(args: &[&str]) -> String {
    let command = std::iter::once(env!("CARGO_BIN_EXE_cute-lsp").to_string())
        .chain(args.iter().map(|a| a.to_string()))
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect::<Vec<_>>()
        .join(" ");
    let out = Command::new("script").args(["-qec", &command, "/dev/null"]).output().expect("util-linux `script` runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_terminal_shows_the_files_checked_and_a_pipe_does_not() {
    let dirs = [fixtures("untoggled_phase"), fixtures("smem_race")];
    let shown = on_a_terminal(&["check", &dirs[0], &dirs[1]]);
    assert!(shown.contains("files checked"), "{shown}");
    // The report is there in full, above the bar.
    assert!(shown.contains("untoggled-phase") && shown.contains("file(s) checked"), "{shown}");

    let quiet = on_a_terminal(&["check", "--quiet", &dirs[0], &dirs[1]]);
    assert!(!quiet.contains("files checked"), "{quiet}");

    let piped = Command::new(env!("CARGO_BIN_EXE_cute-lsp")).args(["check", &dirs[0], &dirs[1]]).output().unwrap();
    let stderr = String::from_utf8_lossy(&piped.stderr);
    assert!(!stderr.contains("files checked"), "{stderr}");
    assert!(stderr.contains("file(s) checked"), "{stderr}");
}
