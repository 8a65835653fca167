//! The language server over stdio, driven the way an editor drives it.

mod support;

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::{apply_text_edits, change_full, codes, file_uri, fixture, is_publish_for, open, wait_publish, LspClient, TempDir, TIMEOUT};

const NO_KERNELS: &str = "import os\n\n\ndef main():\n    print(os.getcwd())\n";

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
    assert_eq!(caps["hoverProvider"], true, "{result}");
    assert!(caps["diagnosticProvider"].is_null(), "pull diagnostics offered to a client without them: {result}");
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

/// Ten thousand edits as fast as the client can send them, with requests in
/// between: the last version is published, and no older one after it.
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
    let last = 10_001;
    let mut pending = Vec::new();
    for version in 2..=last {
        change_full(&mut client, uri, version, &texts[version as usize % 2]);
        // Requests in between make the server run several handlers at once.
        if version % 200 == 0 {
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
    let published = publishes_until(&mut client, uri, last);
    assert_eq!(published.last(), Some(&last), "published: {published:?}");
    assert!(client.shutdown().success());
}

/// The versions published for `uri` until `last` is, then until the server
/// has been quiet for a second (so a late stale publish would be caught);
/// checks they never go back.
fn publishes_until(client: &mut LspClient, uri: &str, last: i64) -> Vec<i64> {
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
    published
}

/// Ten thousand incremental edits to a real kernel, each undoing the one
/// before (the wait's parity hard-coded, then restored): an edit applied out
/// of order or twice would leave the text broken. The last version's
/// diagnostics are those of the text it names.
#[test]
fn rapid_incremental_edits_end_on_the_last_text() {
    let text = fixture(CLEAN);
    let (line, column) = nth_position(&text, "cute.arch.mbarrier_wait(gate, phase)", 0);
    let column = column + "cute.arch.mbarrier_wait(gate, ".len();
    let uri = "file:///tmp/cute-lsp-test/rapid_incremental.py";
    let mut client = LspClient::spawn();
    client.initialize(json!({}));
    open(&mut client, uri, 1, &text);
    wait_publish(&mut client, uri, 1);
    let last = 10_001;
    let started = Instant::now();
    for version in 2..=last {
        // Even versions hold the bug, odd ones the original text.
        let (old_len, new_text) = if version % 2 == 0 { ("phase".len(), "cutlass.Int32(0)") } else { ("cutlass.Int32(0)".len(), "phase") };
        let range = json!({"start": {"line": line, "character": column}, "end": {"line": line, "character": column + old_len}});
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"range": range, "text": new_text}]}),
        );
    }
    let published = publishes_until(&mut client, uri, last);
    eprintln!("{} edits sent and the last published in {:?}; {} publishes", last - 1, started.elapsed(), published.len());
    // One more edit, to the buggy text, and a last look at both.
    let range = json!({"start": {"line": line, "character": column}, "end": {"line": line, "character": column + "phase".len()}});
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": last + 1}, "contentChanges": [{"range": range, "text": "cutlass.Int32(0)"}]}),
    );
    let buggy = wait_publish(&mut client, uri, last + 1);
    assert_eq!(codes(&buggy), ["CUTE001"], "{buggy:#}");
    assert!(client.shutdown().success());

    let mut check = LspClient::spawn();
    check.initialize(json!({}));
    open(&mut check, uri, 1, &text);
    assert_eq!(codes(&wait_publish(&mut check, uri, 1)), Vec::<String>::new());
    assert!(check.shutdown().success());
}

/// An edit that arrives while a long check runs abandons it: the new version
/// is published long before the old check could have finished, and the old
/// version never is.
#[test]
fn an_edit_abandons_a_long_check() {
    let heavy = fixture(CLEAN).replace("cute.compile(jacobi_smoother, arr, 30)", "cute.compile(jacobi_smoother, arr, 1000)");
    let started = Instant::now();
    cute_lint::analyze_text(&heavy, &cute_lint::AnalysisOptions::default());
    let full_check = started.elapsed();
    let uri = "file:///tmp/cute-lsp-test/abandoned.py";
    let mut client = LspClient::spawn();
    client.initialize(json!({}));
    open(&mut client, uri, 1, &heavy);
    std::thread::sleep(full_check / 8);
    let sent = Instant::now();
    change_full(&mut client, uri, 2, NO_KERNELS);
    let mut published = Vec::new();
    let mut waited = None;
    // Until version 2 is published, then a second more for a late version 1.
    while let Some(message) = client.recv(if waited.is_none() { TIMEOUT } else { Duration::from_secs(1) }) {
        if is_publish_for(&message, uri) {
            published.push(message["params"]["version"].as_i64().unwrap());
            if published.last() == Some(&2) {
                waited = Some(sent.elapsed());
            }
        }
    }
    assert_eq!(published, [2], "the abandoned version was published");
    let waited = waited.unwrap();
    eprintln!("full check {full_check:?}; the edit published after {waited:?}");
    assert!(waited < full_check / 4, "the edit waited {waited:?} for a check of {full_check:?}");
    assert!(client.shutdown().success());
}

/// A check that takes longer than 200 ms is shown as work-done progress,
/// created by the server, begun and ended before the diagnostics arrive; a
/// client that cannot show progress gets none.
#[test]
fn long_checks_report_progress() {
    let text = many_kernels(24);
    let uri = "file:///tmp/cute-lsp-test/progress.py";
    let mut client = LspClient::spawn();
    client.initialize(json!({"window": {"workDoneProgress": true}}));
    open(&mut client, uri, 1, &text);
    let mut seen = Vec::new();
    loop {
        let Some(message) = client.recv(TIMEOUT) else { panic!("no publish; seen {seen:?}") };
        if is_publish_for(&message, uri) {
            break;
        }
        if message["method"] == "window/workDoneProgress/create" {
            seen.push(("create".to_string(), message["params"]["token"].clone()));
        }
        if message["method"] == "$/progress" {
            seen.push((message["params"]["value"]["kind"].as_str().unwrap_or_default().to_string(), message["params"]["token"].clone()));
        }
    }
    let kinds: Vec<&str> = seen.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(kinds, ["create", "begin", "end"], "{seen:?}");
    assert!(seen.iter().all(|(_, token)| *token == seen[0].1), "{seen:?}");
    assert!(client.shutdown().success());

    let mut client = LspClient::spawn();
    client.initialize(json!({}));
    open(&mut client, uri, 1, &text);
    let messages: Vec<Value> = std::iter::from_fn(|| client.recv(TIMEOUT)).take_while(|m| !is_publish_for(m, uri)).collect();
    assert!(messages.iter().all(|m| m["method"] != "$/progress" && m["method"] != "window/workDoneProgress/create"), "{messages:?}");
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

const BUG: &str = "untoggled_phase/jacobi_cluster_bug.py";
const CLEAN: &str = "untoggled_phase/jacobi_cluster_clean.py";

/// The 0-based line of the `# expect: untoggled-phase` marker.
fn expect_line(text: &str) -> u64 {
    text.lines().position(|l| l.contains("# expect: untoggled-phase")).expect("the fixture has an expect marker") as u64
}

/// The diagnostics of a publish, as (code, 0-based line, severity).
fn summary(diagnostics: &Value) -> Vec<(String, u64, u64)> {
    diagnostics
        .as_array()
        .unwrap_or_else(|| panic!("not a diagnostic list: {diagnostics}"))
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap_or_default().to_string(),
                d["range"]["start"]["line"].as_u64().unwrap(),
                d["severity"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

/// The next publish for `uri`, whatever its version (a configuration change
/// republishes the same version).
fn next_publish(client: &mut LspClient, uri: &str) -> Vec<(String, u64, u64)> {
    let publish = client.wait_for(&format!("publishDiagnostics for {uri}"), |m| is_publish_for(m, uri));
    summary(&publish["params"]["diagnostics"])
}

fn pull(client: &mut LspClient, uri: &str, previous: Option<&str>) -> Value {
    client.request("textDocument/diagnostic", json!({"textDocument": {"uri": uri}, "previousResultId": previous}))
}

fn configure(client: &mut LspClient, section: Value) {
    client.notify("workspace/didChangeConfiguration", json!({"settings": {"cute-lsp": section}}));
}

/// A client that pulls gets no pushes: it asks, gets a full report with a
/// result id, "unchanged" while nothing changed, and a new report after an
/// edit. One that cannot be asked to pull again (Neovim 0.11) gets pushes,
/// so a settings change reaches it without an edit.
#[test]
fn pull_diagnostics_when_the_client_declares_them() {
    let dir = TempDir::new("pull");
    let text = fixture(BUG);
    let line = expect_line(&text);
    let uri = file_uri(&dir.write("kernel.py", &text));
    let mut client = LspClient::spawn();
    let init = client.initialize(json!({
        "textDocument": {"diagnostic": {"dynamicRegistration": false}},
        "workspace": {"diagnostics": {"refreshSupport": true}},
    }));
    let provider = &init["capabilities"]["diagnosticProvider"];
    assert_eq!(provider["interFileDependencies"], false, "{init}");
    assert_eq!(provider["workspaceDiagnostics"], false, "{init}");
    open(&mut client, &uri, 1, &text);

    let report = pull(&mut client, &uri, None);
    assert_eq!(report["kind"], "full", "{report}");
    assert!(summary(&report["items"]).contains(&("CUTE001".to_string(), line, 1)), "{report:#}");
    let diagnostic = report["items"].as_array().unwrap().iter().find(|d| d["code"] == "CUTE001").unwrap().clone();
    assert!(diagnostic["relatedInformation"].as_array().is_some_and(|r| !r.is_empty()), "{diagnostic:#}");
    let first_id = report["resultId"].as_str().expect("a result id").to_string();

    let again = pull(&mut client, &uri, Some(&first_id));
    assert_eq!(again, json!({"kind": "unchanged", "resultId": first_id}));

    // The quick fix, then a pull sees the fixed text.
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": diagnostic["range"], "context": {"diagnostics": [diagnostic], "only": ["quickfix"]}}),
    );
    let fix = actions.as_array().unwrap().iter().find(|a| a["isPreferred"] == true).expect("a preferred fix").clone();
    let fixed = apply_text_edits(&text, fix["edit"]["changes"][uri.as_str()].as_array().unwrap());
    change_full(&mut client, &uri, 2, &fixed);
    let report = pull(&mut client, &uri, Some(&first_id));
    assert_eq!(report["kind"], "full", "{report}");
    assert_ne!(report["resultId"], first_id.as_str());
    assert!(!summary(&report["items"]).iter().any(|(code, ..)| code == "CUTE001"), "{report:#}");

    // Nothing was pushed.
    let pushed: Vec<Value> = client.drain(Duration::from_millis(500)).into_iter().filter(|m| is_publish_for(m, &uri)).collect();
    assert!(pushed.is_empty(), "publishDiagnostics sent to a pulling client: {pushed:?}");

    // A document that is not open has nothing to report.
    let report = pull(&mut client, "file:///tmp/cute-lsp-test/never-opened.py", None);
    assert_eq!(report, json!({"kind": "full", "items": []}));
    assert!(client.shutdown().success());

    let mut client = LspClient::spawn();
    let init = client.initialize(json!({"textDocument": {"diagnostic": {}}}));
    assert!(init["capabilities"]["diagnosticProvider"].is_null(), "{init}");
    open(&mut client, &uri, 1, &text);
    assert!(summary(&wait_publish(&mut client, &uri, 1)["params"]["diagnostics"]).contains(&("CUTE001".to_string(), line, 1)));
    assert!(client.shutdown().success());
}

/// Hover on a synchronization call shows its barrier's protocol.
#[test]
fn hover_shows_the_barrier_protocol() {
    let text = fixture(BUG);
    let line = expect_line(&text);
    let uri = "file:///tmp/cute-lsp-test/hover.py";
    let mut client = LspClient::spawn();
    client.initialize(json!({}));
    open(&mut client, uri, 1, &text);
    let column = text.lines().nth(line as usize).unwrap().find("mbarrier_wait").unwrap() as u64;
    let hover = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": column}}),
    );
    assert_eq!(hover["contents"]["kind"], "markdown", "{hover:#}");
    let value = hover["contents"]["value"].as_str().unwrap();
    for expected in [
        "**mbarrier `gate`**: one in each of 2 CTAs",
        "**init** line 49: warp 0 of each CTA; 256 arrivals per phase",
        // The peer arrive is the line above the wait.
        &format!("**arrive** line {line}: warps 0..3 of each CTA; 32 arrivals on a peer CTA's barrier, 30 times"),
        &format!("**wait** line {} (this call): warps 0..3 of each CTA; parity 0 every time (30 waits)", line + 1),
    ] {
        assert!(value.contains(expected), "{expected:?} not in the hover:\n{value}");
    }
    let indent = text.lines().nth(line as usize).unwrap().find("cute.arch").unwrap() as u64;
    assert_eq!(hover["range"]["start"], json!({"line": line, "character": indent}), "{hover:#}");

    // Nothing on code that does not synchronize, nor past the end of the file.
    for (l, c) in [(0, 0), (line + 5, 8), (9_999, 0)] {
        let hover = client.request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": {"line": l, "character": c}}));
        assert!(hover.is_null(), "hover at {l}:{c}: {hover:#}");
    }
    // A client that only takes plain text gets the same text as plain text.
    let mut plain = LspClient::spawn();
    plain.initialize(json!({"textDocument": {"hover": {"contentFormat": ["plaintext"]}}}));
    open(&mut plain, uri, 1, &text);
    let hover = plain.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": column}}),
    );
    assert_eq!(hover["contents"]["kind"], "plaintext", "{hover:#}");
    assert!(client.shutdown().success());
    assert!(plain.shutdown().success());
}

/// `[tool.cute-lsp]` in the nearest pyproject.toml: rules off, severities,
/// budgets; re-read when it changes, and problems shown to the user.
#[test]
fn pyproject_configuration() {
    let dir = TempDir::new("pyproject");
    let bug = fixture(BUG);
    let clean = fixture(CLEAN);
    let line = expect_line(&bug);
    dir.write("pyproject.toml", "[project]\nname = \"k\"\n\n[tool.cute-lsp]\nseverity = { \"untoggled-phase\" = \"warning\" }\n");
    let bug_uri = file_uri(&dir.write("kernels/bug.py", &bug));
    let clean_uri = file_uri(&dir.write("kernels/clean.py", &clean));

    let mut client = LspClient::spawn();
    client.initialize(json!({"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}}));
    open(&mut client, &bug_uri, 1, &bug);
    assert_eq!(next_publish(&mut client, &bug_uri), [("CUTE001".to_string(), line, 2)]);
    open(&mut client, &clean_uri, 1, &clean);
    assert_eq!(next_publish(&mut client, &clean_uri), []);

    // A budget of one state cannot finish the clean kernel: the verdict says so
    // instead of staying silent.
    dir.write("pyproject.toml", "[tool.cute-lsp]\nmax-states = 1\nignore = [\"untoggled-phase\"]\n");
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": file_uri(&dir.0.join("pyproject.toml")), "type": 2}]}),
    );
    let (mut bug_seen, mut clean_seen) = (None, None);
    while bug_seen.is_none() || clean_seen.is_none() {
        let publish = client.wait_for("the republish after pyproject.toml changed", |m| {
            is_publish_for(m, &bug_uri) || is_publish_for(m, &clean_uri)
        });
        let diagnostics = summary(&publish["params"]["diagnostics"]);
        if publish["params"]["uri"] == bug_uri.as_str() {
            bug_seen = Some(diagnostics);
        } else {
            clean_seen = Some(diagnostics);
        }
    }
    let codes = |d: &[(String, u64, u64)]| d.iter().map(|(c, ..)| c.clone()).collect::<Vec<_>>();
    assert!(!codes(bug_seen.as_ref().unwrap()).contains(&"CUTE001".to_string()), "{bug_seen:?}");
    assert_eq!(codes(clean_seen.as_ref().unwrap()), ["CUTE090"], "{clean_seen:?}");

    // Without a notification the next edit sees the file as it is.
    dir.write("pyproject.toml", "[tool.cute-lsp]\n");
    change_full(&mut client, &bug_uri, 2, &bug);
    assert_eq!(summary(&wait_publish(&mut client, &bug_uri, 2)["params"]["diagnostics"]), [("CUTE001".to_string(), line, 1)]);

    // A broken file is shown to the user and does not stop the linter.
    dir.write("pyproject.toml", "[tool.cute-lsp]\nignore = [\"dedlock\"\n");
    change_full(&mut client, &bug_uri, 3, &bug);
    // The message and the diagnostics come in either order.
    let (mut shown, mut published) = (None, None);
    while shown.is_none() || published.is_none() {
        let m = client.wait_for("a message about the broken pyproject.toml and the diagnostics", |m| {
            m["method"] == "window/showMessage" || (is_publish_for(m, &bug_uri) && m["params"]["version"] == 3)
        });
        if m["method"] == "window/showMessage" {
            shown = Some(m);
        } else {
            published = Some(summary(&m["params"]["diagnostics"]));
        }
    }
    let shown = shown.unwrap();
    let message = shown["params"]["message"].as_str().unwrap();
    assert!(message.contains("pyproject.toml") && message.contains("not valid TOML"), "{message}");
    assert_eq!(shown["params"]["type"], 2, "a warning: {shown}");
    assert_eq!(published.unwrap(), [("CUTE001".to_string(), line, 1)]);
    assert!(client.shutdown().success());
}

/// Editor settings (`initializationOptions`, `workspace/didChangeConfiguration`
/// under `cute-lsp`) apply on top of the project's and take effect at once.
#[test]
fn editor_settings() {
    let dir = TempDir::new("editor-settings");
    let bug = fixture(BUG);
    let line = expect_line(&bug);
    dir.write("pyproject.toml", "[tool.cute-lsp]\nignore = [\"untoggled-phase\"]\n");
    let uri = file_uri(&dir.write("bug.py", &bug));
    let cute001 = |severity| vec![("CUTE001".to_string(), line, severity)];

    let mut client = LspClient::spawn();
    client.initialize_with(json!({
        "processId": null,
        "rootUri": file_uri(&dir.0),
        "capabilities": {},
        // Turns back on what the project turned off, as a warning.
        "initializationOptions": {"rules": {"untoggled-phase": true}, "severity": {"CUTE001": "warning"}},
    }));
    open(&mut client, &uri, 1, &bug);
    assert_eq!(next_publish(&mut client, &uri), cute001(2));

    configure(&mut client, json!({"rules": {"untoggled-phase": true}, "severity": {"untoggled-phase": "info"}}));
    assert_eq!(next_publish(&mut client, &uri), cute001(3));
    // Back to the project's settings alone.
    configure(&mut client, json!({}));
    assert_eq!(next_publish(&mut client, &uri), []);
    configure(&mut client, json!({"rules": {"CUTE001": true}, "colour": "red", "max-time-ms": 0}));
    // The message and the new diagnostics come in either order.
    let (mut shown, mut published) = (None, None);
    while shown.is_none() || published.is_none() {
        let m = client.wait_for("a message about the bad settings and the diagnostics", |m| {
            m["method"] == "window/showMessage" || is_publish_for(m, &uri)
        });
        if m["method"] == "window/showMessage" {
            shown = Some(m);
        } else {
            published = Some(summary(&m["params"]["diagnostics"]));
        }
    }
    let shown = shown.unwrap();
    let message = shown["params"]["message"].as_str().unwrap();
    assert!(message.contains("unknown setting `colour`") && message.contains("max-time-ms"), "{message}");
    assert_eq!(published.unwrap(), cute001(1));
    // Settings for other servers leave these alone.
    client.notify("workspace/didChangeConfiguration", json!({"settings": {"pylsp": {"plugins": {}}}}));
    change_full(&mut client, &uri, 2, &bug);
    assert_eq!(summary(&wait_publish(&mut client, &uri, 2)["params"]["diagnostics"]), cute001(1));
    assert!(client.shutdown().success());
}

/// A pulling client is asked to pull again when the settings change; a
/// notification without settings makes the server ask for its section.
#[test]
fn settings_with_pull_diagnostics() {
    let dir = TempDir::new("pull-settings");
    let bug = fixture(BUG);
    let uri = file_uri(&dir.write("bug.py", &bug));
    let mut client = LspClient::spawn();
    client.initialize(json!({
        "textDocument": {"diagnostic": {}},
        "workspace": {"diagnostics": {"refreshSupport": true}, "configuration": true},
    }));
    open(&mut client, &uri, 1, &bug);
    let first = pull(&mut client, &uri, None);
    let first_id = first["resultId"].as_str().unwrap().to_string();
    assert_eq!(first["items"][0]["severity"], 1, "{first:#}");

    client.answer("workspace/configuration", json!([{"severity": {"untoggled-phase": "warning"}}]));
    client.notify("workspace/didChangeConfiguration", json!({"settings": null}));
    let asked = client.wait_for("workspace/configuration", |m| m["method"] == "workspace/configuration");
    assert_eq!(asked["params"]["items"], json!([{"section": "cute-lsp"}]));
    client.wait_for("workspace/diagnostic/refresh", |m| m["method"] == "workspace/diagnostic/refresh");
    let second = pull(&mut client, &uri, Some(&first_id));
    assert_eq!(second["kind"], "full", "{second}");
    assert_eq!(second["items"][0]["code"], "CUTE001", "{second:#}");
    assert_eq!(second["items"][0]["severity"], 2, "{second:#}");
    assert!(client.shutdown().success());
}

/// `kernels` copies of the clean Jacobi kernel, each launched with its own
/// round count (2, 3, ...) so that every kernel is a distinct model with a
/// check of its own.
fn many_kernels(kernels: usize) -> String {
    let clean = fixture(CLEAN);
    let kernel_at = clean.find("@cute.kernel").unwrap();
    let host_at = clean.find("@cute.jit").unwrap();
    let main_at = clean.find("if __name__").unwrap();
    let mut out = clean[..kernel_at].to_string();
    for i in 0..kernels {
        let rename = |s: &str| s.replace("jacobi_kernel", &format!("jacobi_kernel_{i}")).replace("jacobi_smoother", &format!("jacobi_smoother_{i}"));
        out.push_str(&rename(&clean[kernel_at..host_at]));
        out.push_str(&rename(&clean[host_at..main_at]));
    }
    out.push_str("if __name__ == \"__main__\":\n    arr = make_fake_compact_tensor(cutlass.Float32, (2 * HALF,))\n");
    for i in 0..kernels {
        out.push_str(&format!("    cute.compile(jacobi_smoother_{i}, arr, {})\n", i + 2));
    }
    out
}

/// The (line, column) of the `nth` occurrence of `needle`.
fn nth_position(text: &str, needle: &str, nth: usize) -> (usize, usize) {
    let at = text.match_indices(needle).nth(nth).unwrap_or_else(|| panic!("no {nth}th {needle:?}")).0;
    let line = text[..at].matches('\n').count();
    let column = at - text[..at].rfind('\n').map_or(0, |i| i + 1);
    (line, column)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// A file of `jacobi` copies of the Jacobi kernel and `rings` copies of the
/// `PipelineAsync` ring kernel, each with its own round count (so every
/// kernel is a distinct model with a check of its own), launched from
/// `__main__`.
fn bench_file(jacobi: usize, rings: usize) -> String {
    let clean = fixture(CLEAN);
    let ring = fixture("pipeline/async_ring_clean.py").replace("SharedStorage", "RingStorage");
    let part = |text: &str, from: &str, to: &str| text[text.find(from).unwrap()..text.find(to).unwrap()].to_string();
    let mut out = String::from("\"\"\"Jacobi smoothers and pipelined rings, many of them.\"\"\"\n\n");
    out.push_str("import cutlass\nimport cutlass.cute as cute\nimport cutlass.pipeline as pipeline\n");
    out.push_str("from cutlass.cute.runtime import make_fake_compact_tensor\n\n");
    out.push_str(&part(&clean, "HALF =", "@cute.struct"));
    out.push_str(&part(&ring, "STAGES =", "@cute.struct"));
    out.push_str(&part(&clean, "@cute.struct", "@cute.kernel"));
    out.push_str(&part(&ring, "@cute.struct", "@cute.kernel"));
    let (jacobi_kernel, ring_kernel) = (part(&clean, "@cute.kernel", "if __name__"), part(&ring, "@cute.kernel", "if __name__"));
    let mut main = String::from("if __name__ == \"__main__\":\n    arr = make_fake_compact_tensor(cutlass.Float32, (2 * HALF,))\n");
    main.push_str("    src = make_fake_compact_tensor(cutlass.Float32, (8 * TILE,))\n");
    main.push_str("    dst = make_fake_compact_tensor(cutlass.Float32, (NUM_CONSUMER_THREADS,))\n");
    let (mut j, mut r) = (0, 0);
    while j < jacobi || r < rings {
        // Interleaved: two smoothers, then a ring.
        if j < jacobi && (r >= rings || j < 2 * (r + 1)) {
            out.push_str(&jacobi_kernel.replace("jacobi_kernel", &format!("jacobi_kernel_{j}")).replace("jacobi_smoother", &format!("jacobi_smoother_{j}")));
            main.push_str(&format!("    cute.compile(jacobi_smoother_{j}, arr, {})\n", j + 2));
            j += 1;
        } else {
            out.push_str(&ring_kernel.replace("ring_kernel", &format!("ring_kernel_{r}")).replace("async_ring", &format!("async_ring_{r}")));
            main.push_str(&format!("    cute.compile(async_ring_{r}, src, dst, {})\n", r + 2));
            r += 1;
        }
    }
    out.push_str(&main);
    out
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

/// The server's check counters (`cute-lsp/checkCounts`).
fn check_counts(client: &mut LspClient) -> (i64, i64, i64, i64) {
    let c = client.request("cute-lsp/checkCounts", Value::Null);
    let get = |k: &str| c[k].as_i64().unwrap();
    (get("explorations"), get("instantiations"), get("wholeFile"), get("memoryAnalyses"))
}

/// Edit-to-publish latency on a large file, per kind of edit, with the checks
/// each edit ran. Not part of the suite (it takes a while); run it with
/// `cargo test --release -p cute-lsp --test lsp_stdio -- --ignored --nocapture edit_latency`
/// (`CUTE_LSP_BENCH_KERNELS`, default 54, sets the number of kernels: two
/// Jacobi smoothers for each pipelined ring; `CUTE_LSP_BENCH_FILE=PATH`
/// writes the file there).
#[test]
#[ignore]
fn edit_latency() {
    let kernels: usize = std::env::var("CUTE_LSP_BENCH_KERNELS").ok().and_then(|v| v.parse().ok()).unwrap_or(54);
    let rings = kernels / 3;
    let jacobi = kernels - rings;
    let mut text = bench_file(jacobi, rings);
    let uri = "file:///tmp/cute-lsp-bench/many_kernels.py";
    // The same file for `cargo bench -p cute-lint --bench edits`.
    if let Ok(path) = std::env::var("CUTE_LSP_BENCH_FILE") {
        std::fs::write(&path, &text).expect("write the benchmark file");
    }

    // The whole file checked as one, in this process, as `cute-lsp check` does.
    let started = Instant::now();
    let whole = cute_lint::analyze_text(&text, &cute_lint::AnalysisOptions::default());
    let full_check = started.elapsed();
    assert!(whole.is_empty(), "the generated kernels are clean: {whole:?}");

    let mut client = LspClient::spawn();
    client.initialize(json!({}));
    let started = Instant::now();
    open(&mut client, uri, 1, &text);
    let first = wait_publish(&mut client, uri, 1);
    let open_time = started.elapsed();
    assert_eq!(first["params"]["diagnostics"], json!([]), "the generated kernels are clean");
    let (explored, instantiated, ..) = check_counts(&mut client);
    assert_eq!((explored, instantiated), (kernels as i64, kernels as i64), "one check per kernel at open");

    let mut version = 1;
    // Replaces `len` bytes at (line, column) with `new_text`; returns the
    // time to the publish of the new version, its diagnostics, and the checks
    // (explorations, instantiations, whole-file fallbacks, memory-ordering
    // analyses) the edit ran.
    let mut edit = |client: &mut LspClient, text: &mut String, line: usize, column: usize, len: usize, new_text: &str| {
        version += 1;
        let range = json!({"start": {"line": line, "character": column}, "end": {"line": line, "character": column + len}});
        *text = apply_text_edits(text, &[json!({"range": range, "newText": new_text})]);
        let before = check_counts(client);
        let started = Instant::now();
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"range": range, "text": new_text}]}),
        );
        let publish = wait_publish(client, uri, version);
        let time = started.elapsed();
        let after = check_counts(client);
        let checks = (after.0 - before.0, after.1 - before.1, after.2 - before.2, after.3 - before.3);
        (time, summary(&publish["params"]["diagnostics"]).len(), checks)
    };
    // (what, kind, checks expected, times, checks seen)
    const SYNC: usize = 0;
    const OTHER: usize = 1;
    const TYPED: usize = 2;
    type Row<'a> = (&'a str, usize, &'a str, Vec<Duration>, Vec<(i64, i64, i64, i64)>);
    let mut rows: Vec<Row> = vec![
        ("wait parity hard-coded (Jacobi)", SYNC, "1 instantiation, 1 exploration", vec![], vec![]),
        ("the same wait restored", SYNC, "0 (memoized)", vec![], vec![]),
        ("`advance()` removed from a pipeline loop (ring)", SYNC, "1 instantiation, 1 exploration", vec![], vec![]),
        ("the same `advance()` restored", SYNC, "0 (memoized)", vec![], vec![]),
        ("datapath statement changed (Jacobi)", OTHER, "0", vec![], vec![]),
        ("datapath line inserted (ring)", OTHER, "0", vec![], vec![]),
        ("comment line inserted in a kernel", OTHER, "0", vec![], vec![]),
        ("line inserted at the top of the file", OTHER, "0", vec![], vec![]),
        ("a datapath line typed key by key (syntax broken until it ends)", TYPED, "what the broken text implies", vec![], vec![]),
        ("comment line inserted in a host function", OTHER, "0", vec![], vec![]),
    ];
    let mut record = |row: usize, (time, _, checks): (Duration, usize, (i64, i64, i64, i64))| {
        rows[row].3.push(time);
        rows[row].4.push(checks);
    };
    let wait = "cute.arch.mbarrier_wait(gate, phase)";
    let advance = "            cons_state.advance()\n";
    for k in 0..jacobi {
        let (line, column) = nth_position(&text, wait, k);
        let column = column + wait.find("phase").unwrap();
        let result = edit(&mut client, &mut text, line, column, "phase".len(), "cutlass.Int32(0)");
        assert_eq!(result.1, 1, "the hard-coded parity in kernel {k} is reported");
        record(0, result);
        let result = edit(&mut client, &mut text, line, column, "cutlass.Int32(0)".len(), "phase");
        assert_eq!(result.1, 0);
        record(1, result);
        // Datapath: the stencil's sum gets one more term.
        let stencil = "nxt[tid] = (left + cur[tid]";
        let (line, column) = nth_position(&text, stencil, k);
        let result = edit(&mut client, &mut text, line, column + stencil.len(), 0, " + 0.0");
        assert_eq!(result.1, 0);
        record(4, result);
        // A comment line in the kernel, above its loop.
        let (line, _) = nth_position(&text, "    phase = cutlass.Int32(0)", k);
        let result = edit(&mut client, &mut text, line, 0, 0, "    # the parity we wait for next\n");
        assert_eq!(result.1, 0);
        record(6, result);
        let result = edit(&mut client, &mut text, 1, 0, 0, "# edited\n");
        assert_eq!(result.1, 0);
        record(7, result);
        // The host function that launches the kernel.
        let (line, _) = nth_position(&text, "    jacobi_kernel_", k);
        let result = edit(&mut client, &mut text, line, 0, 0, "    # one cluster of two CTAs\n");
        assert_eq!(result.1, 0);
        record(9, result);
        if k % 6 == 0 {
            // Typed above the stencil: `(` and `[` stay open for a while.
            let (line, _) = nth_position(&text, "        nxt[tid] = (left", k);
            let typed = "        probe = (left + cur[tid - 1]) * 2.0";
            let result = edit(&mut client, &mut text, line, 0, 0, "\n");
            record(8, result);
            for (column, ch) in typed.chars().enumerate() {
                let result = edit(&mut client, &mut text, line, column, 0, &ch.to_string());
                record(8, result);
            }
        }
        if k < rings {
            // The consumer's state is not advanced: a new model.
            let (line, _) = nth_position(&text, advance, k);
            let result = edit(&mut client, &mut text, line, 0, advance.len() - 1, "            pass");
            assert_eq!(result.1, 1, "the unadvanced state in ring {k} is reported");
            record(2, result);
            let result = edit(&mut client, &mut text, line, 0, "            pass".len(), advance.trim_end());
            assert_eq!(result.1, 0);
            record(3, result);
            let (line, _) = nth_position(&text, "            acc = acc + ring", k);
            let result = edit(&mut client, &mut text, line, 0, 0, "            acc = acc * 1.0\n");
            assert_eq!(result.1, 0);
            record(5, result);
        }
    }
    // The same line typed as fast as the client can send it, without
    // waiting for any publish: what is measured is the time from the last
    // key to the publish of its version. The checks of the versions in
    // between are stale; a parse of a file with a bracket left open is
    // given up as soon as the next key arrives.
    let mut bursts = Vec::new();
    for k in (0..jacobi).step_by(6) {
        let (line, _) = nth_position(&text, "        nxt[tid] = (left", k);
        let typed = "        burst = (left + cur[tid - 1]) * 2.0";
        let mut keys: Vec<(usize, String)> = vec![(0, "\n".to_string())];
        keys.extend(typed.chars().enumerate().map(|(column, ch)| (column, ch.to_string())));
        let mut sent = Instant::now();
        for (column, key) in keys {
            version += 1;
            let range = json!({"start": {"line": line, "character": column}, "end": {"line": line, "character": column}});
            text = apply_text_edits(&text, &[json!({"range": range, "newText": key})]);
            sent = Instant::now();
            client.notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"range": range, "text": key}]}),
            );
        }
        let publish = wait_publish(&mut client, uri, version);
        bursts.push(sent.elapsed());
        assert_eq!(summary(&publish["params"]["diagnostics"]).len(), 0, "the completed line is clean");
    }
    assert!(client.shutdown().success());

    let lines = text.lines().count();
    println!(
        "edit latency: {kernels} kernels ({jacobi} Jacobi, {rings} pipelined rings), {lines} lines, {} KiB; \
         full check in process {}, open to first publish {}",
        text.len() / 1024,
        ms(full_check),
        ms(open_time)
    );
    println!("| edit | checks expected | checks seen (explorations, instantiations, whole-file, memory) | edits | p50 | p95 | max |");
    println!("|---|---|---|---:|---:|---:|---:|");
    let mut kinds: [Vec<Duration>; 3] = Default::default();
    for (what, kind, expected, mut times, checks) in rows {
        times.sort();
        let mut seen: Vec<String> = checks.iter().map(|c| format!("{c:?}")).collect();
        seen.sort();
        seen.dedup();
        println!(
            "| {what} | {expected} | {} | {} | {} | {} | {} |",
            seen.join(" "),
            times.len(),
            ms(percentile(&times, 0.5)),
            ms(percentile(&times, 0.95)),
            ms(*times.last().unwrap())
        );
        kinds[kind].extend(times);
    }
    bursts.sort();
    println!(
        "a datapath line typed as a burst ({} lines, {} keys each): last key to its publish p50 {}, max {}",
        bursts.len(),
        "        burst = (left + cur[tid - 1]) * 2.0".len() + 1,
        ms(percentile(&bursts, 0.5)),
        ms(*bursts.last().unwrap())
    );
    let [sync, other, typed] = kinds;
    for (what, mut times) in [("synchronization edits", sync), ("other edits", other), ("keystrokes of the typed lines", typed)] {
        times.sort();
        let p50 = percentile(&times, 0.5);
        println!(
            "{what}: {} edits, p50 {}, p95 {}, max {}; p50 / full check = 1/{:.0}",
            times.len(),
            ms(p50),
            ms(percentile(&times, 0.95)),
            ms(*times.last().unwrap()),
            full_check.as_secs_f64() / p50.as_secs_f64()
        );
    }
}



/// A check that outlives `request-deadline-ms` is not waited for: the
/// document gets an `analysis-incomplete` note at once, and the server keeps
/// serving (with a longer deadline, the findings come).
#[test]
fn a_check_is_answered_by_its_deadline() {
    let dir = TempDir::new("deadline");
    let text = fixture(BUG);
    let line = expect_line(&text);
    let uri = file_uri(&dir.write("kernel.py", &text));
    let mut client = LspClient::spawn();
    client.initialize_with(json!({
        "processId": null,
        "rootUri": file_uri(&dir.0),
        "capabilities": {},
        "initializationOptions": {"request-deadline-ms": 1},
    }));
    open(&mut client, &uri, 1, &text);
    let publish = wait_publish(&mut client, &uri, 1);
    let items = &publish["params"]["diagnostics"];
    assert_eq!(summary(items), vec![("CUTE090".to_string(), 0, 3)], "{publish:#}");
    let message = items[0]["message"].as_str().unwrap();
    assert!(message.contains("within 1 ms") && message.contains("request-deadline-ms"), "{message}");

    configure(&mut client, json!({"request-deadline-ms": 60000}));
    assert!(next_publish(&mut client, &uri).contains(&("CUTE001".to_string(), line, 1)));
    assert!(client.shutdown().success());
}
