//! The language server over stdio, driven the way an editor drives it.

mod support;

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::{apply_text_edits, file_uri, is_publish_for, LspClient, TIMEOUT};

const NO_KERNELS: &str = "import os\n\n\ndef main():\n    print(os.getcwd())\n";

fn open(client: &mut LspClient, uri: &str, version: i64, text: &str) {
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text}}),
    );
}

fn change_full(client: &mut LspClient, uri: &str, version: i64, text: &str) {
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
    );
}

fn wait_publish(client: &mut LspClient, uri: &str, version: i64) -> Value {
    let what = format!("publishDiagnostics for {uri} version {version}");
    client.wait_for(&what, |m| is_publish_for(m, uri) && m["params"]["version"] == version)
}

fn codes(publish: &Value) -> Vec<String> {
    publish["params"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn handshake_advertises_incremental_sync_code_actions_and_encoding() {
    let mut client = LspClient::spawn();
    let result = client.initialize(json!({}));
    let caps = &result["capabilities"];
    assert_eq!(caps["positionEncoding"], "utf-16", "{result}");
    assert_eq!(caps["textDocumentSync"]["change"], 2, "incremental sync: {result}");
    assert_eq!(caps["textDocumentSync"]["openClose"], true, "{result}");
    assert!(
        caps["codeActionProvider"] == true || caps["codeActionProvider"].is_object(),
        "codeActionProvider: {result}"
    );
    assert_eq!(result["serverInfo"]["name"], "cute-lsp");
    assert!(client.shutdown().success());

    let mut client = LspClient::spawn();
    let result = client.initialize(json!({"general": {"positionEncodings": ["utf-16", "utf-8"]}}));
    assert_eq!(result["capabilities"]["positionEncoding"], "utf-8", "{result}");
    assert!(client.shutdown().success());

    let mut client = LspClient::spawn();
    let result = client.initialize(json!({"general": {"positionEncodings": ["utf-32", "utf-16"]}}));
    assert_eq!(result["capabilities"]["positionEncoding"], "utf-16", "{result}");
    assert!(client.shutdown().success());
}

#[test]
fn a_file_without_kernels_gets_empty_diagnostics() {
    let mut client = LspClient::spawn();
    client.initialize(json!({}));
    let uri = "file:///tmp/cute-lsp-test/no_kernels.py";
    open(&mut client, uri, 1, NO_KERNELS);
    let publish = wait_publish(&mut client, uri, 1);
    assert_eq!(publish["params"]["diagnostics"], json!([]), "{publish}");
    assert!(client.shutdown().success());
}

#[test]
fn rapid_edits_end_on_the_last_version() {
    let mut client = LspClient::spawn();
    client.initialize(json!({}));
    let uri = "file:///tmp/cute-lsp-test/rapid.py";
    let texts = [
        NO_KERNELS.to_string(),
        "import cutlass.cute as cute\n\n@cute.kernel\ndef k():\n    tid, _, _ = cute.arch.thread_idx()\n".to_string(),
    ];
    open(&mut client, uri, 1, &texts[0]);
    let last = 201;
    let mut pending = Vec::new();
    for version in 2..=last {
        change_full(&mut client, uri, version, &texts[version as usize % 2]);
        // Requests in between make the server run several handlers at once.
        if version % 20 == 0 {
            pending.push(client.send_request(
                "textDocument/codeAction",
                json!({
                    "textDocument": {"uri": uri},
                    "range": {"start": {"line": 0, "character": 0}, "end": {"line": 9, "character": 0}},
                    "context": {"diagnostics": []},
                }),
            ));
        }
    }
    for id in pending {
        let response = client.response(id);
        assert!(response.get("error").is_none(), "{response}");
    }

    let mut published: Vec<i64> = Vec::new();
    let record = |message: &Value, published: &mut Vec<i64>| {
        if is_publish_for(message, uri) {
            let version = message["params"]["version"].as_i64().expect("publish carries a version");
            if let Some(&max) = published.iter().max() {
                assert!(version >= max, "published version {version} after {max}: {published:?}");
            }
            published.push(version);
        }
    };
    // First until the last version is published, then until the server has
    // been quiet for a second, so a late stale publish would be caught.
    let deadline = Instant::now() + TIMEOUT;
    while published.last() != Some(&last) {
        let left = deadline.saturating_duration_since(Instant::now());
        let Some(message) = client.recv(left) else {
            panic!("version {last} never published; published: {published:?}; stderr:\n{}", client.stderr())
        };
        record(&message, &mut published);
    }
    while let Some(message) = client.recv(Duration::from_secs(1)) {
        record(&message, &mut published);
    }
    assert_eq!(published.last(), Some(&last), "published: {published:?}");
    assert!(client.shutdown().success());
}

#[test]
fn a_syntax_error_does_not_crash_the_server() {
    let mut client = LspClient::spawn();
    client.initialize(json!({}));
    let uri = "file:///tmp/cute-lsp-test/broken.py";
    let broken = "import cutlass.cute as cute\n\n@cute.kernel\ndef k(:\n    cute.arch.mbarrier_wait(gate, 0\n    ]]] é𝜙 \"\"\"\n";
    open(&mut client, uri, 1, broken);
    wait_publish(&mut client, uri, 1);
    // An incremental edit that makes it worse, at a position past the end of the line.
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"range": {"start": {"line": 3, "character": 400}, "end": {"line": 3, "character": 400}}, "text": "))(("}],
        }),
    );
    wait_publish(&mut client, uri, 2);
    let actions = client.request(
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 4, "character": 0}, "end": {"line": 4, "character": 10}},
            "context": {"diagnostics": []},
        }),
    );
    assert!(actions.is_null() || actions.is_array(), "{actions}");
    assert!(client.shutdown().success());
}

#[test]
fn malformed_input_is_ignored() {
    let mut client = LspClient::spawn();
    client.initialize(json!({}));
    let uri = "file:///tmp/cute-lsp-test/malformed.py";
    // Changes and requests for a document that was never opened.
    change_full(&mut client, uri, 7, "x = 1\n");
    let actions = client.request(
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
            "context": {"diagnostics": []},
        }),
    );
    assert!(actions.is_null() || actions == json!([]), "{actions}");
    client.notify("textDocument/didClose", json!({"textDocument": {"uri": uri}}));

    open(&mut client, uri, 5, NO_KERNELS);
    wait_publish(&mut client, uri, 5);
    // A stale version, out-of-range positions, an inverted range, a request
    // range far outside the file, and garbage params.
    change_full(&mut client, uri, 3, "stale = True\n");
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": uri, "version": 6},
            "contentChanges": [
                {"range": {"start": {"line": 999, "character": 999}, "end": {"line": 1000, "character": 0}}, "text": "# end\n"},
                {"range": {"start": {"line": 2, "character": 5}, "end": {"line": 0, "character": 3}}, "text": "é𝜙"},
            ],
        }),
    );
    client.notify("textDocument/didChange", json!({"nonsense": true}));
    let publish = wait_publish(&mut client, uri, 6);
    assert!(publish["params"]["diagnostics"].is_array());
    let actions = client.request(
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 4000, "character": 9}, "end": {"line": 2, "character": 0}},
            "context": {"diagnostics": []},
        }),
    );
    assert!(actions.is_null() || actions.is_array(), "{actions}");
    assert!(client.shutdown().success());
}

#[test]
fn close_clears_diagnostics() {
    let mut client = LspClient::spawn();
    client.initialize(json!({}));
    let uri = "file:///tmp/cute-lsp-test/closed.py";
    open(&mut client, uri, 1, NO_KERNELS);
    wait_publish(&mut client, uri, 1);
    client.notify("textDocument/didClose", json!({"textDocument": {"uri": uri}}));
    let publish = client.wait_for("the empty publish after didClose", |m| is_publish_for(m, uri));
    assert_eq!(publish["params"]["diagnostics"], json!([]), "{publish}");
    // Edits to the closed document are ignored; reopening starts over.
    change_full(&mut client, uri, 2, "x = 1\n");
    open(&mut client, uri, 1, NO_KERNELS);
    wait_publish(&mut client, uri, 1);
    assert!(client.shutdown().success());
}

#[test]
fn exit_without_shutdown_is_an_error_exit() {
    let mut client = LspClient::spawn();
    client.initialize(json!({}));
    client.notify("exit", Value::Null);
    client.close_stdin();
    assert!(!client.wait_exit().success());
}

/// The acceptance test of the product: a real buggy kernel gets the
/// untoggled-phase diagnostic with its trace, the preferred quick fix is
/// offered, and applying it makes the diagnostic go away.
#[test]
fn untoggled_phase_round_trip() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/untoggled_phase/jacobi_cluster_bug.py");
    let path = std::path::Path::new(path);
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|err| panic!("fixture {} is missing or unreadable: {err}", path.display()));
    let path = path.canonicalize().unwrap();
    let uri = file_uri(&path);
    let expect_line =
        text.lines()
            .position(|l| l.contains("# expect: untoggled-phase"))
            .unwrap_or_else(|| panic!("{} has no `# expect: untoggled-phase` line", path.display())) as u64;

    let mut client = LspClient::spawn();
    client.initialize(json!({}));
    open(&mut client, &uri, 1, &text);

    let publish = wait_publish(&mut client, &uri, 1);
    let diagnostic = publish["params"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "CUTE001" && d["range"]["start"]["line"] == expect_line)
        .cloned()
        .unwrap_or_else(|| {
            panic!("no CUTE001 diagnostic on line {} (0-based {expect_line}); published: {publish:#}", expect_line + 1)
        });
    assert_eq!(diagnostic["source"], "cute-lsp", "{diagnostic:#}");
    let related = diagnostic["relatedInformation"].as_array().cloned().unwrap_or_default();
    assert!(!related.is_empty(), "CUTE001 carries no relatedInformation: {diagnostic:#}");
    for r in &related {
        assert_eq!(r["location"]["uri"], uri.as_str(), "{r}");
        assert!(!r["message"].as_str().unwrap_or_default().is_empty(), "{r}");
    }

    let actions = client.request(
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": uri},
            "range": diagnostic["range"],
            "context": {"diagnostics": [diagnostic], "only": ["quickfix"]},
        }),
    );
    let actions = actions.as_array().cloned().unwrap_or_default();
    let fix = actions
        .iter()
        .find(|a| a["isPreferred"] == true)
        .unwrap_or_else(|| panic!("no preferred quick fix for CUTE001; actions: {actions:#?}"));
    assert_eq!(fix["kind"], "quickfix", "{fix:#}");
    assert!(
        fix["diagnostics"].as_array().is_some_and(|ds| ds.iter().any(|d| d["code"] == "CUTE001")),
        "the fix does not name its diagnostic: {fix:#}"
    );
    let edits = fix["edit"]["changes"][uri.as_str()]
        .as_array()
        .unwrap_or_else(|| panic!("the fix has no edits for {uri}: {fix:#}"));
    assert!(!edits.is_empty(), "{fix:#}");
    let fixed = apply_text_edits(&text, edits);
    assert_ne!(fixed, text, "the fix changes nothing");

    change_full(&mut client, &uri, 2, &fixed);
    let publish = wait_publish(&mut client, &uri, 2);
    assert!(
        !codes(&publish).iter().any(|c| c == "CUTE001"),
        "CUTE001 is still reported after the fix.\nfixed text:\n{fixed}\npublished: {publish:#}"
    );
    assert!(client.shutdown().success());
}

#[test]
fn client_side_edit_application_uses_utf16_columns() {
    // The test's own edit application must be right for the round trip to mean anything.
    let text = "a = 'é𝜙'; wait(g, 0)\nb\n";
    let col = "a = 'é𝜙'; wait(g, ".encode_utf16().count();
    let edits = [
        json!({"range": {"start": {"line": 0, "character": col}, "end": {"line": 0, "character": col + 1}}, "newText": "phase"}),
        json!({"range": {"start": {"line": 1, "character": 1}, "end": {"line": 1, "character": 1}}, "newText": "\nphase ^= 1"}),
        json!({"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "newText": "phase = 0\n"}),
    ];
    assert_eq!(apply_text_edits(text, &edits), "phase = 0\na = 'é𝜙'; wait(g, phase)\nb\nphase ^= 1\n");
}
