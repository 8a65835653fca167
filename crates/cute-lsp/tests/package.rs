//! A kernel whose device functions and barrier ids live in sibling modules,
//! checked by the server with its package: an edit to the sibling module
//! (open in the editor, or changed on disk and announced) re-checks the
//! kernel, and its diagnostic appears and goes; the related locations point
//! into the sibling; nothing outside the workspace folder is read.

mod support;

use serde_json::{json, Value};
use support::*;

const FIXTURE: &str = "named_barrier_count_mismatch/handoff_package_clean";

/// The clean package fixture copied into a workspace folder of its own.
fn workspace(name: &str) -> (TempDir, Vec<(String, String)>) {
    let dir = TempDir::new(name);
    let mut files = Vec::new();
    for module in ["__init__.py", "barriers.py", "sync.py", "kernel.py"] {
        let text = fixture(&format!("{FIXTURE}/{module}"));
        let path = dir.write(&format!("handoff_package_clean/{module}"), &text);
        files.push((file_uri(&path), text));
    }
    (dir, files)
}

fn uri_of<'a>(files: &'a [(String, String)], module: &str) -> &'a (String, String) {
    files.iter().find(|(uri, _)| uri.ends_with(&format!("/{module}"))).unwrap()
}

/// The next publish for `uri`, whatever its version (a re-check caused by
/// another document keeps the version).
fn next_publish(client: &mut LspClient, uri: &str) -> Value {
    client.wait_for(&format!("publishDiagnostics for {uri}"), |m| is_publish_for(m, uri))
}

fn initialize_in(client: &mut LspClient, dir: &TempDir) {
    let root = file_uri(&dir.0);
    client.initialize_with(json!({
        "processId": null,
        "rootUri": root,
        "workspaceFolders": [{"uri": root, "name": "w"}],
        "capabilities": {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}},
    }));
}

const BUG: (&str, &str) = ("number_of_threads=Threads.BOTH)\n", "number_of_threads=Threads.CONSUMERS)\n");

#[test]
fn an_edit_to_a_sibling_module_rechecks_the_kernel_that_imports_it() {
    let (dir, files) = workspace("package-edit");
    let (kernel_uri, kernel) = uri_of(&files, "kernel.py").clone();
    let (sync_uri, sync) = uri_of(&files, "sync.py").clone();
    let mut client = LspClient::spawn();
    initialize_in(&mut client, &dir);

    open(&mut client, &kernel_uri, 1, &kernel);
    assert_eq!(codes(&next_publish(&mut client, &kernel_uri)), Vec::<String>::new(), "the clean package");

    // The consumers' wait in the sibling module names the wrong count.
    open(&mut client, &sync_uri, 1, &sync);
    let waits_short = {
        let at = sync.rfind(BUG.0).expect("the wait's count");
        format!("{}{}{}", &sync[..at], BUG.1, &sync[at + BUG.0.len()..])
    };
    change_full(&mut client, &sync_uri, 2, &waits_short);
    let publish = client.wait_for("the kernel's diagnostic after the sibling changed", |m| {
        is_publish_for(m, &kernel_uri) && !codes(m).is_empty()
    });
    assert_eq!(codes(&publish), ["CUTE030"]);
    let diagnostic = &publish["params"]["diagnostics"][0];
    let call_line = kernel.lines().position(|l| l.contains("sync.wait_for_tile()")).unwrap() as u64;
    assert_eq!(diagnostic["range"]["start"]["line"], call_line, "shown on the kernel's call of the helper");
    let related = diagnostic["relatedInformation"].as_array().unwrap();
    assert!(related.iter().any(|r| r["location"]["uri"] == sync_uri.as_str()), "the trace points into the sibling: {related:?}");

    // Fixed again: the diagnostic goes.
    change_full(&mut client, &sync_uri, 3, &sync);
    client.wait_for("the kernel clean again", |m| is_publish_for(m, &kernel_uri) && codes(m).is_empty());
    client.shutdown();
}

#[test]
fn a_sibling_module_changed_on_disk_is_read_again_when_announced() {
    let (dir, files) = workspace("package-disk");
    let (kernel_uri, kernel) = uri_of(&files, "kernel.py").clone();
    let (_, sync) = uri_of(&files, "sync.py").clone();
    let mut client = LspClient::spawn();
    initialize_in(&mut client, &dir);
    open(&mut client, &kernel_uri, 1, &kernel);
    assert_eq!(codes(&next_publish(&mut client, &kernel_uri)), Vec::<String>::new());

    let at = sync.rfind(BUG.0).unwrap();
    let sync_path = dir.write("handoff_package_clean/sync.py", &format!("{}{}{}", &sync[..at], BUG.1, &sync[at + BUG.0.len()..]));
    client.notify("workspace/didChangeWatchedFiles", json!({"changes": [{"uri": file_uri(&sync_path), "type": 2}]}));
    let publish = client.wait_for("the kernel re-checked after the disk change", |m| {
        is_publish_for(m, &kernel_uri) && !codes(m).is_empty()
    });
    assert_eq!(codes(&publish), ["CUTE030"]);
    client.shutdown();
}

/// The kernel of the package with its buggy device functions imported by
/// `import_line` from a module beside the package, opened in a workspace
/// that is the package's own directory (`inside_only`, the module is then
/// outside it) or the directory above: its diagnostics.
fn kernel_importing_from_outside(name: &str, import_line: &str, link: bool, inside_only: bool) -> Value {
    let (dir, files) = workspace(name);
    let (_, kernel) = uri_of(&files, "kernel.py").clone();
    let (_, sync) = uri_of(&files, "sync.py").clone();
    let at = sync.rfind(BUG.0).unwrap();
    let outside = dir.write("outside.py", &format!("{}{}{}", &sync[..at], BUG.1, &sync[at + BUG.0.len()..]).replace("from .barriers", "from handoff_package_clean.barriers"));
    let kernel = kernel.replace("import handoff_package_clean.sync as sync", import_line);
    let kernel_uri = file_uri(&dir.write("handoff_package_clean/kernel.py", &kernel));
    if link {
        std::os::unix::fs::symlink(&outside, dir.0.join("handoff_package_clean/linked_sync.py")).unwrap();
    }
    let mut client = LspClient::spawn();
    let root = file_uri(&if inside_only { dir.0.join("handoff_package_clean") } else { dir.0.clone() });
    client.initialize_with(json!({"processId": null, "rootUri": root, "workspaceFolders": [{"uri": root, "name": "w"}], "capabilities": {}}));
    open(&mut client, &kernel_uri, 1, &kernel);
    let publish = next_publish(&mut client, &kernel_uri);
    client.shutdown();
    publish
}

#[test]
fn a_module_outside_the_workspace_folder_is_not_read() {
    let publish = kernel_importing_from_outside("package-outside", "import outside as sync", false, true);
    assert!(!codes(&publish).contains(&"CUTE030".to_string()), "{publish}");
    // The same module inside the workspace folder is read.
    let publish = kernel_importing_from_outside("package-outside-read", "import outside as sync", false, false);
    assert_eq!(codes(&publish), ["CUTE030"]);
}

#[test]
fn a_symbolic_link_out_of_the_workspace_folder_is_not_followed() {
    let publish = kernel_importing_from_outside("package-symlink", "from . import linked_sync as sync", true, true);
    assert!(!codes(&publish).contains(&"CUTE030".to_string()), "{publish}");
    let publish = kernel_importing_from_outside("package-symlink-read", "from . import linked_sync as sync", true, false);
    assert_eq!(codes(&publish), ["CUTE030"]);
}

/// A module installed in the project's Python environment, outside the
/// workspace folder: read when the project names the environment
/// (`python` in `[tool.cute-lsp]`), and not otherwise.
#[test]
fn a_module_of_the_projects_environment_is_read() {
    let check = |name: &str, configured: bool| {
        let (dir, files) = workspace(name);
        let (_, kernel) = uri_of(&files, "kernel.py").clone();
        let (_, sync) = uri_of(&files, "sync.py").clone();
        let at = sync.rfind(BUG.0).unwrap();
        // A library of its own: its barrier ids beside it.
        let installed = format!("{}{}{}", &sync[..at], BUG.1, &sync[at + BUG.0.len()..]).replace("from .barriers", "from installed_barriers");
        dir.write("env/lib/python3.11/site-packages/installed_sync.py", &installed);
        dir.write("env/lib/python3.11/site-packages/installed_barriers.py", &fixture(&format!("{FIXTURE}/barriers.py")));
        let kernel = kernel.replace("import handoff_package_clean.sync as sync", "import installed_sync as sync");
        assert!(kernel.contains("import installed_sync as sync"));
        let kernel_uri = file_uri(&dir.write("ws/handoff_package_clean/kernel.py", &kernel));
        for module in ["__init__.py", "barriers.py"] {
            dir.write(&format!("ws/handoff_package_clean/{module}"), &fixture(&format!("{FIXTURE}/{module}")));
        }
        if configured {
            dir.write("ws/pyproject.toml", "[tool.cute-lsp]\npython = \"../env\"\n");
        }
        let mut client = LspClient::spawn();
        let root = file_uri(&dir.0.join("ws"));
        client.initialize_with(json!({"processId": null, "rootUri": root, "workspaceFolders": [{"uri": root, "name": "w"}], "capabilities": {}}));
        open(&mut client, &kernel_uri, 1, &kernel);
        let publish = next_publish(&mut client, &kernel_uri);
        client.shutdown();
        publish
    };
    let publish = check("package-environment-unnamed", false);
    assert!(!codes(&publish).contains(&"CUTE030".to_string()), "{publish}");
    let publish = check("package-environment", true);
    assert_eq!(codes(&publish), ["CUTE030"], "{publish}");
}
