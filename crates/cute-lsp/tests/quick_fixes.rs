//! Every quick fix the server offers on a bug twin of `tests/fixtures`, applied
//! the way an editor applies it (the client's own UTF-16 edit application),
//! makes its diagnostic go away, and each rule documented with a quick fix
//! offers one.

mod support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use support::{apply_text_edits, file_uri, is_publish_for, LspClient};

/// Rules whose catalog entry promises a quick fix: some bug twin of each
/// must get one.
const RULES_WITH_FIXES: &[&str] = &[
    "untoggled-phase",
    "smem-race",
    "fence-after-sync",
    "missing-proxy-fence",
    "missing-tmem-fence",
    "missing-acquire",
    "missing-release",
    "scope-too-narrow",
    "arrive-count-mismatch",
    "mbarrier-init-hazard",
    "named-barrier-count-mismatch",
    "tx-count-mismatch",
    "vacuous-wait",
    "read-before-grid-dependency",
    "named-barrier-deadlock",
    "single-lane-collective",
    "read-before-wait",
    "barrier-recycling",
    "tmem-lifetime",
    "bulk-group-in-flight",
    "divergent-barrier",
];

fn bug_twins() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with("_bug.py"))
        .collect();
    files.sort();
    files
}

fn wait_publish(client: &mut LspClient, uri: &str, version: i64) -> Value {
    let what = format!("publishDiagnostics for {uri} version {version}");
    client.wait_for(&what, |m| is_publish_for(m, uri) && m["params"]["version"] == version)
}

fn set_text(client: &mut LspClient, uri: &str, version: i64, text: &str) {
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
    );
}

#[test]
fn quick_fixes_through_the_server_remove_their_diagnostic() {
    let mut client = LspClient::spawn();
    client.initialize(json!({}));
    let mut fixed_rules = BTreeSet::new();
    let mut failures = Vec::new();
    for path in bug_twins() {
        let text = std::fs::read_to_string(&path).unwrap();
        let uri = file_uri(&path.canonicalize().unwrap());
        client.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}),
        );
        let publish = wait_publish(&mut client, &uri, 1);
        let diagnostics = publish["params"]["diagnostics"].as_array().cloned().unwrap_or_default();
        let mut version = 1;
        for diagnostic in &diagnostics {
            let actions = client.request(
                "textDocument/codeAction",
                json!({
                    "textDocument": {"uri": uri},
                    "range": diagnostic["range"],
                    "context": {"diagnostics": [diagnostic], "only": ["quickfix"]},
                }),
            );
            let code = diagnostic["code"].clone();
            let of_the_rule = diagnostics.iter().filter(|d| d["code"] == code).count();
            let name = code.as_str().unwrap_or_default().to_string();
            // Suppression comments are quick fixes too; the repairs are the
            // others, those of this diagnostic.
            let repairs: Vec<Value> = actions
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter(|a| !a["title"].as_str().unwrap_or_default().starts_with("Suppress"))
                .filter(|a| a["diagnostics"].as_array().is_some_and(|ds| ds.iter().any(|d| d["code"] == code)))
                .collect();
            for fix in repairs {
                let Some(edits) = fix["edit"]["changes"][uri.as_str()].as_array() else { continue };
                let fixed = apply_text_edits(&text, edits);
                version += 1;
                set_text(&mut client, &uri, version, &fixed);
                let after = wait_publish(&mut client, &uri, version);
                // With several findings of the rule in the file, the one
                // fixed must go (the others stay); with one, the rule must.
                let still = after["params"]["diagnostics"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|d| d["code"] == code && (of_the_rule == 1 || d["message"] == diagnostic["message"]));
                if still {
                    failures.push(format!("{}: `{}` leaves {code}:\n{fixed}", path.display(), fix["title"]));
                } else {
                    fixed_rules.insert(name.clone());
                }
                // Back to the bug for the next action.
                version += 1;
                set_text(&mut client, &uri, version, &text);
                wait_publish(&mut client, &uri, version);
            }
        }
        client.notify("textDocument/didClose", json!({"textDocument": {"uri": uri}}));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    for rule in RULES_WITH_FIXES {
        let code = cute_lint::rules::find(rule).unwrap().code;
        assert!(fixed_rules.contains(code), "no quick fix of {rule} ({code}) was exercised; fixed: {fixed_rules:?}");
    }
    assert!(client.shutdown().success());
}
