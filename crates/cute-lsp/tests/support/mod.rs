//! A small synchronous LSP client for driving the `cute-lsp` binary over
//! stdio: Content-Length framing, a reader thread feeding a channel, and a
//! deadline on every wait so a misbehaving server fails a test instead of
//! hanging it.

#![allow(dead_code)]

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// How long any single wait may take before the test fails.
pub const TIMEOUT: Duration = Duration::from_secs(20);

pub struct LspClient {
    child: Child,
    stdin: Option<ChildStdin>,
    incoming: Receiver<Value>,
    /// Messages read while looking for something else, oldest first.
    backlog: VecDeque<Value>,
    next_id: i64,
    stderr: Arc<Mutex<String>>,
    /// Results for requests from the server, by method; others get `null`.
    answers: HashMap<String, Value>,
}

fn read_message(reader: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                length = value.trim().parse::<usize>().ok();
            }
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    match serde_json::from_slice(&body) {
        Ok(value) => Some(value),
        Err(err) => panic!("server sent invalid JSON ({err}): {}", String::from_utf8_lossy(&body)),
    }
}

impl LspClient {
    pub fn spawn() -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_cute-lsp"))
            .arg("--stdio")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn cute-lsp --stdio");
        let stdout = child.stdout.take().unwrap();
        let (tx, incoming) = mpsc::channel();
        thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(message) = read_message(&mut reader) {
                if tx.send(message).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut err_pipe = child.stderr.take().unwrap();
        let sink = stderr.clone();
        thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err_pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let stdin = child.stdin.take();
        LspClient { child, stdin, incoming, backlog: VecDeque::new(), next_id: 0, stderr, answers: HashMap::new() }
    }

    /// Answer the server's `method` requests with `result` from now on.
    pub fn answer(&mut self, method: &str, result: Value) {
        self.answers.insert(method.to_string(), result);
    }

    /// What the server wrote to stderr so far, for failure messages.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    pub fn send(&mut self, message: &Value) {
        let body = serde_json::to_string(message).unwrap();
        let stdin = self.stdin.as_mut().expect("stdin already closed");
        write!(stdin, "Content-Length: {}\r\n\r\n{}", body.len(), body).expect("write to server");
        stdin.flush().expect("flush to server");
    }

    /// Writes `bytes` to the server as they are: framing and JSON the test
    /// gets wrong on purpose.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin already closed");
        stdin.write_all(bytes).expect("write to server");
        stdin.flush().expect("flush to server");
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and returns its id without waiting for the answer.
    pub fn send_request(&mut self, method: &str, params: Value) -> i64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The next message from the server, or `None` if none came within
    /// `timeout`. Requests from the server are answered (see [`Self::answer`],
    /// `null` by default) and also returned.
    pub fn recv(&mut self, timeout: Duration) -> Option<Value> {
        match self.backlog.pop_front() {
            Some(message) => Some(message),
            None => self.pull(timeout),
        }
    }

    fn pull(&mut self, timeout: Duration) -> Option<Value> {
        match self.incoming.recv_timeout(timeout) {
            Ok(message) => {
                if message.get("method").is_some() && message.get("id").is_some() {
                    let id = message["id"].clone();
                    let method = message["method"].as_str().unwrap_or_default();
                    let result = self.answers.get(method).cloned().unwrap_or(Value::Null);
                    self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
                }
                Some(message)
            }
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => {
                panic!("the server closed its output; stderr:\n{}", self.stderr())
            }
        }
    }

    /// Waits for the response to request `id`, keeping every other message
    /// for later `recv` calls. Returns the whole response object.
    pub fn response(&mut self, id: i64) -> Value {
        let is_it = |m: &Value| m.get("method").is_none() && m["id"] == json!(id);
        if let Some(i) = self.backlog.iter().position(is_it) {
            return self.backlog.remove(i).unwrap();
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some(message) = self.pull(left) else {
                panic!("no response to request {id} within {TIMEOUT:?}; stderr:\n{}", self.stderr())
            };
            if is_it(&message) {
                return message;
            }
            self.backlog.push_back(message);
        }
    }

    /// Sends a request and returns its `result`, failing the test on an error
    /// response.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        let response = self.response(id);
        if let Some(error) = response.get("error") {
            panic!("{method} failed: {error}");
        }
        response.get("result").cloned().unwrap_or(Value::Null)
    }

    /// `initialize` with the given client capabilities, then `initialized`.
    /// Returns the `initialize` result.
    pub fn initialize(&mut self, capabilities: Value) -> Value {
        self.initialize_with(json!({"processId": null, "rootUri": null, "capabilities": capabilities}))
    }

    /// `initialize` with the given parameters, then `initialized`.
    pub fn initialize_with(&mut self, params: Value) -> Value {
        let result = self.request("initialize", params);
        self.notify("initialized", json!({}));
        result
    }

    /// Every message that arrives within `quiet` of the previous one.
    pub fn drain(&mut self, quiet: Duration) -> Vec<Value> {
        let mut out = Vec::new();
        while let Some(message) = self.recv(quiet) {
            out.push(message);
        }
        out
    }

    /// Waits for a notification matching `pred`; other messages are dropped.
    pub fn wait_for(&mut self, what: &str, mut pred: impl FnMut(&Value) -> bool) -> Value {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.recv(left) {
                Some(message) if pred(&message) => return message,
                Some(_) => {}
                None => panic!("timed out after {TIMEOUT:?} waiting for {what}; stderr:\n{}", self.stderr()),
            }
        }
    }

    /// `shutdown`, `exit`, and the server's exit status.
    pub fn shutdown(mut self) -> ExitStatus {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        self.stdin = None;
        self.wait_exit()
    }

    pub fn wait_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for server") {
                return status;
            }
            if Instant::now() > deadline {
                panic!("the server did not exit within {TIMEOUT:?}");
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Closes the server's stdin without the shutdown handshake.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }
}

impl Drop for LspClient {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
/// `textDocument/didOpen` of `text` as a Python document.
pub fn open(client: &mut LspClient, uri: &str, version: i64, text: &str) {
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text}}),
    );
}

/// `textDocument/didChange` replacing the whole text.
pub fn change_full(client: &mut LspClient, uri: &str, version: i64, text: &str) {
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
    );
}

/// Waits for the diagnostics published for `version` of `uri`.
pub fn wait_publish(client: &mut LspClient, uri: &str, version: i64) -> Value {
    let what = format!("publishDiagnostics for {uri} version {version}");
    client.wait_for(&what, |m| is_publish_for(m, uri) && m["params"]["version"] == version)
}

/// The codes of the diagnostics a publish carries, in order.
pub fn codes(publish: &Value) -> Vec<String> {
    publish["params"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap_or_default().to_string())
        .collect()
}


/// Whether `message` is a `publishDiagnostics` for `uri`.
pub fn is_publish_for(message: &Value, uri: &str) -> bool {
    message["method"] == "textDocument/publishDiagnostics" && message["params"]["uri"] == uri
}

/// The byte offset of an LSP position (UTF-16 columns) in `text`, clamped to
/// the line and the text like a client does.
pub fn offset_utf16(text: &str, line: u64, character: u64) -> usize {
    let mut start = 0;
    for _ in 0..line {
        match text[start..].find('\n') {
            Some(i) => start += i + 1,
            None => return text.len(),
        }
    }
    let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let line_text = text[start..line_end].trim_end_matches('\r');
    let mut units = 0u64;
    for (i, ch) in line_text.char_indices() {
        if units >= character {
            return start + i;
        }
        units += ch.len_utf16() as u64;
    }
    start + line_text.len()
}

/// Applies LSP `TextEdit`s, all relative to the original text, as a client
/// does: by start position, inserts at one point in the order given.
pub fn apply_text_edits(text: &str, edits: &[Value]) -> String {
    let pos = |p: &Value| offset_utf16(text, p["line"].as_u64().unwrap(), p["character"].as_u64().unwrap());
    let mut spans: Vec<(usize, usize, usize, &str)> = edits
        .iter()
        .enumerate()
        .map(|(i, e)| (pos(&e["range"]["start"]), pos(&e["range"]["end"]), i, e["newText"].as_str().unwrap()))
        .collect();
    spans.sort_by_key(|&(start, _, i, _)| (start, i));
    let mut out = String::new();
    let mut at = 0;
    for (start, end, _, new_text) in spans {
        assert!(start >= at, "overlapping edits: {edits:?}");
        out.push_str(&text[at..start]);
        out.push_str(new_text);
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

/// A `file://` URI for an absolute path.
pub fn file_uri(path: &std::path::Path) -> String {
    let mut uri = String::from("file://");
    for byte in path.to_string_lossy().bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => uri.push(byte as char),
            _ => uri.push_str(&format!("%{byte:02X}")),
        }
    }
    uri
}

/// A directory of its own under the system's temporary directory, removed
/// when dropped.
pub struct TempDir(pub std::path::PathBuf);

impl TempDir {
    pub fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("cute-lsp-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|err| panic!("create {}: {err}", dir.display()));
        TempDir(dir.canonicalize().unwrap())
    }

    /// Writes `text` to `name` in the directory; returns the path.
    pub fn write(&self, name: &str, text: &str) -> std::path::PathBuf {
        let path = self.0.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, text).unwrap_or_else(|err| panic!("write {}: {err}", path.display()));
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The text of a fixture under tests/fixtures.
pub fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("fixture {} is missing or unreadable: {err}", path.display()))
}
