//! The bytes between the client and the protocol layer.
//!
//! tower-lsp-server reads its input through a framed reader that ends for
//! good at the first message it cannot decode: one malformed message (a body
//! that is not JSON, JSON that is no message, a broken `Content-Length`)
//! would end the server, and the editor would lose its diagnostics. So every
//! message is framed and decoded here first. A well-formed one is passed on
//! as it came. Any other is answered here with the protocol's error, a parse
//! error (-32700) for a broken header or a body that is not JSON, an invalid
//! request (-32600) for JSON that is neither a request, a notification nor a
//! response, and the server reads on: bytes that belong to no message are
//! skipped up to the next `Content-Length` header.
//!
//! The server's own output and these answers go to standard output whole,
//! one message after the other.

use serde_json::{json, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tower_lsp_server::jsonrpc::{Request, Response};

/// What to answer for a message that is not passed on, if anything.
#[derive(Debug, PartialEq)]
pub enum Rejected {
    /// A header without a `Content-Length` the server can read, or a body
    /// that is not JSON.
    ParseError,
    /// JSON that is not a JSON-RPC message; its `id` when it has one.
    InvalidRequest(Value),
}

impl Rejected {
    /// The error response, framed.
    fn response(&self) -> Vec<u8> {
        let (code, message, id) = match self {
            Rejected::ParseError => (-32700, "Parse error", Value::Null),
            Rejected::InvalidRequest(id) => (-32600, "Invalid request", id.clone()),
        };
        frame(&serde_json::to_vec(&json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}, "id": id})).expect("JSON"))
    }
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// Whether the protocol layer decodes `body`: a request, a notification or a
/// response. Otherwise what to answer.
pub fn check_body(body: &[u8]) -> Result<(), Rejected> {
    let value: Value = serde_json::from_slice(body).map_err(|_| Rejected::ParseError)?;
    if serde_json::from_value::<Response>(value.clone()).is_ok() || serde_json::from_value::<Request>(value.clone()).is_ok() {
        return Ok(());
    }
    let id = match value.get("id") {
        Some(id @ (Value::Number(_) | Value::String(_))) => id.clone(),
        _ => Value::Null,
    };
    Err(Rejected::InvalidRequest(id))
}

/// One message read from the client: the body of a well-formed frame, or
/// what to answer for a broken one.
#[derive(Debug, PartialEq)]
enum Frame {
    Body(Vec<u8>),
    Broken,
}

/// Reads the next frame, `None` at the end of the input. A header block
/// whose `Content-Length` is missing or not a number is broken; bytes before
/// a `Content-Length` header on its line (the rest of a body that was longer
/// than its header said) are skipped.
async fn read_frame(input: &mut (impl AsyncBufRead + Unpin)) -> std::io::Result<Option<Frame>> {
    let mut length: Option<Option<usize>> = None;
    let mut seen_header = false;
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line).await? == 0 {
            return Ok(None);
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if seen_header {
                break;
            }
            continue;
        }
        let header = match text.find("Content-Length") {
            Some(at) => &text[at..],
            None if seen_header => text,
            // Garbage between messages.
            None => continue,
        };
        seen_header = true;
        if let Some((name, value)) = header.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                length = Some(value.trim().parse().ok());
            }
        }
    }
    let Some(Some(length)) = length else { return Ok(Some(Frame::Broken)) };
    let mut body = vec![0; length];
    match input.read_exact(&mut body).await {
        Ok(_) => Ok(Some(Frame::Body(body))),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
        Err(e) => Err(e),
    }
}

/// Passes the client's well-formed messages from `input` to the protocol
/// layer (`server`), and the answers to the others to `answers`, until the
/// input ends.
pub async fn forward_input(input: impl AsyncRead + Unpin, mut server: impl AsyncWrite + Unpin, answers: mpsc::UnboundedSender<Vec<u8>>) {
    let mut input = BufReader::new(input);
    while let Ok(Some(message)) = read_frame(&mut input).await {
        let checked = match &message {
            Frame::Body(body) => check_body(body),
            Frame::Broken => Err(Rejected::ParseError),
        };
        match (checked, message) {
            (Ok(()), Frame::Body(body)) => {
                if server.write_all(&frame(&body)).await.is_err() || server.flush().await.is_err() {
                    return;
                }
            }
            (Err(rejected), _) => {
                eprintln!("cute-lsp: a message from the client could not be read ({rejected:?}); it is answered and skipped");
                let _ = answers.send(rejected.response());
            }
            (Ok(()), Frame::Broken) => unreachable!("a broken frame is rejected"),
        }
    }
}

/// Writes the protocol layer's messages (`server`) and the answers to broken
/// messages (`answers`) to `output`, each whole, until the protocol layer's
/// output ends.
pub async fn forward_output(server: impl AsyncRead + Unpin, mut answers: mpsc::UnboundedReceiver<Vec<u8>>, mut output: impl AsyncWrite + Unpin) {
    let mut server = BufReader::new(server);
    loop {
        tokio::select! {
            message = read_frame(&mut server) => match message {
                Ok(Some(Frame::Body(body))) => {
                    if output.write_all(&frame(&body)).await.is_err() {
                        return;
                    }
                }
                // The protocol layer writes only whole messages.
                Ok(Some(Frame::Broken)) => {}
                Ok(None) | Err(_) => break,
            },
            Some(answer) = answers.recv() => {
                if output.write_all(&answer).await.is_err() {
                    return;
                }
            }
        }
        if output.flush().await.is_err() {
            return;
        }
    }
    // Answers to the last broken messages, if the input ended with them.
    while let Ok(answer) = answers.try_recv() {
        let _ = output.write_all(&answer).await;
    }
    let _ = output.flush().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_sorted_as_the_protocol_layer_decodes_them() {
        assert_eq!(check_body(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#), Ok(()));
        assert_eq!(check_body(br#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#), Ok(()));
        assert_eq!(check_body(br#"{"jsonrpc":"2.0","id":4,"result":null}"#), Ok(()));
        assert_eq!(check_body(br#"{"jsonrpc":"2.0","id":"#), Err(Rejected::ParseError));
        assert_eq!(check_body(b"[1, 2, 3]"), Err(Rejected::InvalidRequest(Value::Null)));
        assert_eq!(check_body(br#"{"jsonrpc":"1.0","id":9,"method":"x"}"#), Err(Rejected::InvalidRequest(json!(9))));
    }

    async fn frames(bytes: &[u8]) -> Vec<Frame> {
        let mut input = BufReader::new(bytes);
        let mut out = Vec::new();
        while let Some(frame) = read_frame(&mut input).await.unwrap() {
            out.push(frame);
        }
        out
    }

    #[tokio::test]
    async fn broken_headers_and_garbage_are_skipped_to_the_next_message() {
        let ok = br#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#;
        let mut bytes = b"Content-Length: many\r\n\r\n{}".to_vec();
        bytes.extend_from_slice(&frame(ok));
        // A length shorter than the body: its rest is garbage before the
        // next header.
        bytes.extend_from_slice(format!("Content-Length: {}\r\n\r\n", ok.len() - 10).as_bytes());
        bytes.extend_from_slice(ok);
        bytes.extend_from_slice(&frame(ok));
        let got = frames(&bytes).await;
        assert_eq!(
            got,
            [Frame::Broken, Frame::Body(ok.to_vec()), Frame::Body(ok[..ok.len() - 10].to_vec()), Frame::Body(ok.to_vec())]
        );
    }

    #[tokio::test]
    async fn a_body_cut_short_by_the_end_of_the_input_is_no_message() {
        assert_eq!(frames(b"Content-Length: 50\r\n\r\n{\"jsonrpc\"").await, []);
    }
}
