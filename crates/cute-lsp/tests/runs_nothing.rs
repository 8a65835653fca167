//! cute-lsp reads kernels; it never runs them. A kernel file whose host code,
//! module body, argparse defaults or `__main__` block would run a command
//! when executed is checked by the command line and by the server, and the
//! command never runs.

mod support;

use std::process::Command;

use serde_json::json;
use support::{file_uri, fixture, is_publish_for, open, LspClient, TempDir};

/// The Jacobi bug twin with a command that touches `marker` wherever
/// Python would run code of the file: at import, in the host function, in an
/// argparse default, in the `__main__` block and in a decorator argument.
fn booby_trapped(marker: &std::path::Path) -> String {
    let touch = format!("os.system('touch {}')", marker.display());
    let bug = fixture("untoggled_phase/jacobi_cluster_bug.py");
    let with_imports = bug.replacen("import cutlass\n", &format!("import os\nimport cutlass\n{touch}\n"), 1);
    assert_ne!(with_imports, bug, "the fixture imports cutlass");
    let host = with_imports.replacen("@cute.jit\n", &format!("TRAP = {touch}\n\n\n@cute.jit\n"), 1);
    format!("{host}\n\nif __name__ == \"__main__\":\n    {touch}\n    import argparse\n    argparse.ArgumentParser().add_argument('--x', default={touch})\n")
}

#[test]
fn a_kernel_file_is_only_ever_read() {
    let dir = TempDir::new("runs-nothing");
    let marker = dir.0.join("ran");
    let kernel = dir.write("kernel.py", &booby_trapped(&marker));

    let out = Command::new(env!("CARGO_BIN_EXE_cute-lsp")).args(["check", "--format", "json"]).arg(&kernel).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("untoggled-phase"), "{out:?}");
    for command in [vec!["slice"], vec!["promela"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_cute-lsp")).args(&command).arg(&kernel).output().unwrap();
        assert!(out.status.success(), "{command:?}: {out:?}");
    }

    let mut client = LspClient::spawn();
    client.initialize(json!({}));
    let uri = file_uri(&kernel);
    open(&mut client, &uri, 1, &std::fs::read_to_string(&kernel).unwrap());
    let publish = client.wait_for("the diagnostics of the kernel", |m| is_publish_for(m, &uri));
    assert!(publish.to_string().contains("CUTE001"), "{publish}");
    let id = client.send_request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": {"line": 80, "character": 20}}));
    client.response(id);
    assert!(client.shutdown().success());

    assert!(!marker.exists(), "a command of the kernel file ran");
}
