//! The language server against clients that get the protocol wrong: broken
//! framing and JSON, methods it does not know, requests out of order,
//! positions that do not exist, huge documents and bursts of edits,
//! cancellations, and a shutdown in the middle of a check. After each, the
//! server answers with the protocol's error codes where an answer is due,
//! keeps serving, and publishes diagnostics for the last version it was sent.

mod support;

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::{change_full, codes, fixture, is_publish_for, open, wait_publish, LspClient};

const BUG: &str = "untoggled_phase/jacobi_cluster_bug.py";
const CLEAN: &str = "untoggled_phase/jacobi_cluster_clean.py";

/// JSON-RPC and LSP error codes.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const SERVER_NOT_INITIALIZED: i64 = -32002;
const REQUEST_CANCELLED: i64 = -32800;

fn error_code(response: &Value) -> Option<i64> {
    response["error"]["code"].as_i64()
}

/// The server still answers: a hover request gets a response, not an error.
fn still_serving(client: &mut LspClient, uri: &str) {
    let id = client.send_request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}));
    let response = client.response(id);
    assert!(response.get("error").is_none(), "{response}");
}

#[test]
fn requests_before_initialize_are_refused_and_initialize_still_works() {
    let mut client = LspClient::spawn();
    let id = client.send_request("textDocument/hover", json!({"textDocument": {"uri": "file:///x.py"}, "position": {"line": 0, "character": 0}}));
    assert_eq!(error_code(&client.response(id)), Some(SERVER_NOT_INITIALIZED));
    client.initialize(json!({}));
    let uri = "file:///tmp/cute-lsp-abuse/early.py";
    open(&mut client, uri, 1, &fixture(BUG));
    assert_eq!(codes(&wait_publish(&mut client, uri, 1)), ["CUTE001"]);
    assert!(client.shutdown().success());
}

#[test]
fn unknown_methods_are_method_not_found_and_unknown_notifications_are_ignored() {
    let mut client = LspClient::spawn();
    client.initialize(json!({}));
    let id = client.send_request("cute-lsp/noSuchRequest", json!({"x": 1}));
    assert_eq!(error_code(&client.response(id)), Some(METHOD_NOT_FOUND));
    client.notify("cute-lsp/noSuchNotification", json!({"x": 1}));
    client.notify("$/noSuchNotification", json!(null));
    let uri = "file:///tmp/cute-lsp-abuse/unknown.py";
    open(&mut client, uri, 1, &fixture(BUG));
    assert_eq!(codes(&wait_publish(&mut client, uri, 1)), ["CUTE001"]);
    assert!(client.shutdown().success());
}

#[test]
fn broken_json_and_framing_are_answered_or_skipped_and_the_server_goes_on() {
    let mut client = LspClient::spawn();
    client.initialize(json!({}));
    // A body that is not JSON, with the right length.
    let garbage = b"{\"jsonrpc\": \"2.0\", \"id\": 99, \"method\": ";
    client.send_raw(format!("Content-Length: {}\r\n\r\n", garbage.len()).as_bytes());
    client.send_raw(garbage);
    // A body that is JSON but not a message.
    let not_a_message = b"[1, 2, 3]";
    client.send_raw(format!("Content-Length: {}\r\n\r\n", not_a_message.len()).as_bytes());
    client.send_raw(not_a_message);
    // A header that is not a number, then a length shorter than its body:
    // the rest of the body is garbage before the next header.
    client.send_raw(b"Content-Length: many\r\n\r\n{}");
    let short = br#"{"jsonrpc": "2.0", "method": "initialized", "params": {}}"#;
    client.send_raw(format!("Content-Length: {}\r\n\r\n", short.len() - 10).as_bytes());
    client.send_raw(short);
    // Whatever the server answered to those (parse errors, invalid
    // requests), it must go on serving well-formed messages.
    let uri = "file:///tmp/cute-lsp-abuse/framing.py";
    open(&mut client, uri, 1, &fixture(BUG));
    let publish = wait_publish(&mut client, uri, 1);
    assert_eq!(codes(&publish), ["CUTE001"]);
    still_serving(&mut client, uri);
    assert!(client.shutdown().success());
}

#[test]
fn the_parse_error_of_a_request_is_answered_with_its_code() {
    let mut client = LspClient::spawn();
    client.initialize(json!({}));
    let garbage = b"{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": \"textDocument/hover\", \"params\": {";
    client.send_raw(format!("Content-Length: {}\r\n\r\n", garbage.len()).as_bytes());
    client.send_raw(garbage);
    // A parse error has no id to answer to; if the server sends one, it
    // carries the parse-error code and a null id.
    for message in client.drain(Duration::from_millis(500)) {
        if message.get("error").is_some() {
            assert_eq!(error_code(&message), Some(PARSE_ERROR), "{message}");
            assert!(message["id"].is_null(), "{message}");
        }
    }
    still_serving(&mut client, "file:///tmp/cute-lsp-abuse/parse.py");
    assert!(client.shutdown().success());
}

#[test]
fn positions_that_do_not_exist_are_answered_without_a_crash() {
    let mut client = LspClient::spawn();
    client.initialize(json!({}));
    let uri = "file:///tmp/cute-lsp-abuse/positions.py";
    // A document with characters outside the basic plane: each is two
    // UTF-16 code units, so a column can fall between the halves.
    let text = format!("# 𝜙𝜓 — astral\n{}", fixture(BUG));
    open(&mut client, uri, 1, &text);
    assert_eq!(codes(&wait_publish(&mut client, uri, 1)), ["CUTE001"]);
    for (line, character) in [(0, 3), (0, 4), (0, 5), (0, 1_000), (100_000, 0), (u32::MAX as i64, u32::MAX as i64)] {
        let position = json!({"line": line, "character": character});
        let id = client.send_request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": position}));
        let hover = client.response(id);
        assert!(hover.get("error").is_none() || error_code(&hover) == Some(INVALID_PARAMS), "{hover}");
        let id = client.send_request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": {"start": position, "end": position}, "context": {"diagnostics": []}}),
        );
        let actions = client.response(id);
        assert!(actions.get("error").is_none(), "{actions}");
    }
    // Negative positions do not fit the protocol's unsigned integers: the
    // request's parameters are invalid.
    let id = client.send_request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": {"line": -1, "character": -5}}));
    assert_eq!(error_code(&client.response(id)), Some(INVALID_PARAMS));
    // An edit whose range starts inside a surrogate pair.
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"range": {"start": {"line": 0, "character": 3}, "end": {"line": 0, "character": 6}}, "text": "x"}],
        }),
    );
    let publish = wait_publish(&mut client, uri, 2);
    assert!(publish["params"]["diagnostics"].is_array());
    still_serving(&mut client, uri);
    assert!(client.shutdown().success());
}

#[test]
fn versions_going_backwards_are_ignored() {
    let mut client = LspClient::spawn();
    client.initialize(json!({}));
    let uri = "file:///tmp/cute-lsp-abuse/versions.py";
    open(&mut client, uri, 10, &fixture(BUG));
    assert_eq!(codes(&wait_publish(&mut client, uri, 10)), ["CUTE001"]);
    change_full(&mut client, uri, 4, &fixture(CLEAN));
    change_full(&mut client, uri, 10, &fixture(CLEAN));
    // Neither the older nor the repeated version replaced the text: the bug
    // is still there at the next real version.
    change_full(&mut client, uri, 11, &fixture(BUG));
    let publish = wait_publish(&mut client, uri, 11);
    assert_eq!(codes(&publish), ["CUTE001"]);
    let messages = client.drain(Duration::from_millis(300));
    assert!(messages.iter().all(|m| !(is_publish_for(m, uri) && m["params"]["version"].as_i64() < Some(11))), "{messages:?}");
    assert!(client.shutdown().success());
}

#[test]
fn a_five_megabyte_document_is_checked() {
    let mut client = LspClient::spawn();
    client.initialize(json!({}));
    let uri = "file:///tmp/cute-lsp-abuse/huge.py";
    let mut text = fixture(BUG);
    let filler = "# padding padding padding padding padding padding padding padding padding padding\n";
    while text.len() < 5 * 1024 * 1024 {
        text.push_str(filler);
    }
    let started = Instant::now();
    open(&mut client, uri, 1, &text);
    let publish = wait_publish(&mut client, uri, 1);
    eprintln!("5 MB document published after {:?}", started.elapsed());
    assert_eq!(codes(&publish), ["CUTE001"]);
    still_serving(&mut client, uri);
    assert!(client.shutdown().success());
}

#[test]
fn ten_thousand_edits_in_a_burst_end_on_the_last_version() {
    let mut client = LspClient::spawn();
    client.initialize(json!({}));
    let uri = "file:///tmp/cute-lsp-abuse/burst.py";
    let bug = fixture(BUG);
    open(&mut client, uri, 0, &bug);
    // Each edit types one character at the end of the first line and the
    // last removes them all again: the last version is the bug twin.
    let first_line = bug.lines().next().unwrap().encode_utf16().count() as u64;
    for version in 1..10_000i64 {
        let at = first_line + version as u64 - 1;
        client.notify(
            "textDocument/didChange",
            json!({
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": {"start": {"line": 0, "character": at}, "end": {"line": 0, "character": at}}, "text": "x"}],
            }),
        );
    }
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": uri, "version": 10_000},
            "contentChanges": [{"range": {"start": {"line": 0, "character": first_line}, "end": {"line": 0, "character": first_line + 9_999}}, "text": ""}],
        }),
    );
    let publish = wait_publish(&mut client, uri, 10_000);
    assert_eq!(codes(&publish), ["CUTE001"]);
    // The text the server ends with is the file's: its diagnostic is where
    // the fresh check of the file puts it.
    let expected = bug.lines().position(|l| l.contains("# expect: untoggled-phase")).unwrap() as u64;
    assert_eq!(publish["params"]["diagnostics"][0]["range"]["start"]["line"], json!(expected));
    assert!(client.shutdown().success());
}

#[test]
fn every_request_kind_answers_a_cancellation() {
    let mut client = LspClient::spawn();
    client.initialize(json!({"textDocument": {"diagnostic": {"dynamicRegistration": false}}}));
    let uri = "file:///tmp/cute-lsp-abuse/cancel.py";
    open(&mut client, uri, 1, &fixture(BUG));
    let position = json!({"line": 77, "character": 10});
    let requests = [
        ("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": position})),
        (
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": {"start": position, "end": position}, "context": {"diagnostics": []}}),
        ),
        ("textDocument/diagnostic", json!({"textDocument": {"uri": uri}})),
        ("cute-lsp/checkCounts", json!(null)),
    ];
    for (method, params) in requests {
        let id = client.send_request(method, params);
        client.notify("$/cancelRequest", json!({"id": id}));
        let response = client.response(id);
        assert!(
            response.get("result").is_some() || error_code(&response) == Some(REQUEST_CANCELLED),
            "{method}: {response}"
        );
    }
    // A cancellation of a request that does not exist is ignored.
    client.notify("$/cancelRequest", json!({"id": 123_456}));
    still_serving(&mut client, uri);
    assert!(client.shutdown().success());
}

#[test]
fn shutdown_while_a_check_runs_is_answered_and_the_server_exits_cleanly() {
    let mut client = LspClient::spawn();
    client.initialize(json!({}));
    let uri = "file:///tmp/cute-lsp-abuse/shutdown.py";
    let heavy = fixture(CLEAN).replace("cute.compile(jacobi_smoother, arr, 30)", "cute.compile(jacobi_smoother, arr, 1000)");
    open(&mut client, uri, 1, &heavy);
    std::thread::sleep(Duration::from_millis(50));
    let started = Instant::now();
    let id = client.send_request("shutdown", Value::Null);
    let response = client.response(id);
    assert!(response.get("error").is_none(), "{response}");
    // After shutdown, requests are invalid; notifications other than exit
    // are dropped.
    let id = client.send_request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}));
    assert_eq!(error_code(&client.response(id)), Some(INVALID_REQUEST));
    change_full(&mut client, uri, 2, "x = 1\n");
    client.notify("exit", Value::Null);
    client.close_stdin();
    let status = client.wait_exit();
    eprintln!("shutdown answered and exited after {:?}", started.elapsed());
    assert!(status.success(), "{status:?}");
}
