//! The language server: tower-lsp-server over stdin/stdout.
//!
//! Edits are applied to the salsa database synchronously at the top of each
//! notification handler (see [`state`]); diagnostics are computed afterwards
//! on a blocking thread with a database clone, and published only if the
//! document is still at the generation they were computed for. Publishing is
//! serialised so that a result that was current when checked cannot be
//! overtaken on the wire by an older one.

mod actions;
mod convert;
mod edits;
mod state;

use std::panic::AssertUnwindSafe;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cute_syntax::{LineIndex, PositionEncoding};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{
    CodeActionKind, CodeActionOptions, CodeActionParams, CodeActionProviderCapability, CodeActionResponse,
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams, InitializeParams,
    InitializeResult, MessageType, PositionEncodingKind, ServerCapabilities, ServerInfo, TextDocumentSyncCapability,
    TextDocumentSyncKind, TextDocumentSyncOptions, Uri,
};
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

use state::{Snapshot, State};

/// Runs the server until the client sends `exit` or closes stdin. Exit code
/// 0 if `shutdown` came first, 1 otherwise (as the protocol asks).
pub fn run_stdio() -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("cute-lsp: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let shut_down = Arc::new(AtomicBool::new(false));
    let flag = shut_down.clone();
    runtime.block_on(async move {
        let (service, socket) = LspService::new(move |client| Backend::new(client, flag));
        Server::new(tokio::io::stdin(), tokio::io::stdout(), socket).serve(service).await;
    });
    // Do not wait for analyses still running on blocking threads: their results
    // have nowhere to go.
    runtime.shutdown_background();
    if shut_down.load(Ordering::SeqCst) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

struct Backend {
    client: Client,
    shared: Arc<Shared>,
    shut_down: Arc<AtomicBool>,
}

struct Shared {
    state: Mutex<State>,
    /// Held from the "still current?" check to the end of the send, so
    /// publishes leave in the order they were checked.
    publish: tokio::sync::Mutex<()>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves the map and database usable
        // (every update is a single assignment), so keep serving.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What `lint_file` produced for one snapshot, detached from the database.
struct Analysis {
    diagnostics: Arc<Vec<cute_lint::Diagnostic>>,
    index: Arc<LineIndex>,
}

enum Outcome {
    Done(Analysis),
    /// A later write cancelled the query; whoever made the write, or a retry,
    /// computes the newer state.
    Cancelled,
    /// The analysis panicked or its thread could not run.
    Failed(String),
}

/// Runs `lint_file` on a blocking thread. The snapshot is moved into the
/// closure and dropped there, so a pending write never waits on this task's
/// caller.
async fn analyze(snapshot: Snapshot) -> Outcome {
    let task = tokio::task::spawn_blocking(move || {
        let Snapshot { db, doc, .. } = snapshot;
        let result = salsa::Cancelled::catch(AssertUnwindSafe(|| Analysis {
            diagnostics: cute_lint::lint_file(&db, doc.file).clone(),
            index: cute_lint::line_index(&db, doc.file).clone(),
        }));
        drop(db);
        result
    });
    match task.await {
        Ok(Ok(analysis)) => Outcome::Done(analysis),
        Ok(Err(_cancelled)) => Outcome::Cancelled,
        Err(err) => Outcome::Failed(if err.is_panic() {
            let payload = err.into_panic();
            payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".to_string())
        } else {
            err.to_string()
        }),
    }
}

impl Backend {
    fn new(client: Client, shut_down: Arc<AtomicBool>) -> Self {
        Backend {
            client,
            shared: Arc::new(Shared { state: Mutex::new(State::default()), publish: tokio::sync::Mutex::new(()) }),
            shut_down,
        }
    }

    /// Computes and publishes the diagnostics of `uri` at `generation`, on a
    /// task of its own so the handler returns at once and the next edit is
    /// not queued behind this analysis.
    fn schedule(&self, uri: Uri, generation: u64) {
        let shared = self.shared.clone();
        let client = self.client.clone();
        tokio::spawn(publish_diagnostics(shared, client, uri, generation));
    }
}

async fn publish_diagnostics(shared: Arc<Shared>, client: Client, uri: Uri, generation: u64) {
    let analysis = loop {
        // `None`: the document changed or closed since; a newer task handles it.
        let Some(snapshot) = shared.lock().snapshot(&uri, Some(generation)) else { return };
        let encoding = snapshot.encoding;
        match analyze(snapshot).await {
            Outcome::Done(analysis) => break (analysis, encoding),
            // A write to another document cancels this one too, and schedules
            // nothing for it: retry while this generation is current.
            Outcome::Cancelled => continue,
            Outcome::Failed(why) => {
                let message = format!("cute-lsp: analysis of {} failed: {why}", uri.as_str());
                client.log_message(MessageType::ERROR, message).await;
                return;
            }
        }
    };
    let (analysis, encoding) = analysis;
    let diagnostics = convert::diagnostics(&uri, &analysis.index, &analysis.diagnostics, encoding);
    let _order = shared.publish.lock().await;
    let version = match shared.lock().current(&uri) {
        Some(doc) if doc.generation == generation => doc.version,
        _ => return,
    };
    client.publish_diagnostics(uri, diagnostics, Some(version)).await;
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let utf8 = params
            .capabilities
            .general
            .as_ref()
            .and_then(|g| g.position_encodings.as_ref())
            .is_some_and(|encodings| encodings.contains(&PositionEncodingKind::UTF8));
        let (encoding, kind) = if utf8 {
            (PositionEncoding::Utf8, PositionEncodingKind::UTF8)
        } else {
            (PositionEncoding::Utf16, PositionEncodingKind::UTF16)
        };
        self.shared.lock().encoding = encoding;
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                position_encoding: Some(kind),
                text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::INCREMENTAL),
                    ..Default::default()
                })),
                code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
                    code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
                    resolve_provider: Some(false),
                    ..Default::default()
                })),
                ..Default::default()
            },
            server_info: Some(ServerInfo {
                name: "cute-lsp".to_string(),
                version: Some(env!("CARGO_PKG_VERSION").to_string()),
            }),
            offset_encoding: None,
        })
    }

    async fn shutdown(&self) -> Result<()> {
        self.shut_down.store(true, Ordering::SeqCst);
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let doc = params.text_document;
        let opened = self.shared.lock().open(doc.uri.clone(), doc.version, doc.text);
        self.schedule(doc.uri, opened.generation);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        let changed = self.shared.lock().change(&uri, params.text_document.version, &params.content_changes);
        if let Some(doc) = changed {
            self.schedule(uri, doc.generation);
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        if !self.shared.lock().close(&uri) {
            return;
        }
        let _order = self.shared.publish.lock().await;
        // Reopened while waiting for the publish lock: its own task publishes.
        if self.shared.lock().current(&uri).is_some() {
            return;
        }
        self.client.publish_diagnostics(uri, Vec::new(), None).await;
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        if !actions::wants_quickfix(params.context.only.as_deref()) {
            return Ok(None);
        }
        let uri = params.text_document.uri;
        loop {
            let Some(snapshot) = self.shared.lock().snapshot(&uri, None) else { return Ok(None) };
            let encoding = snapshot.encoding;
            match analyze(snapshot).await {
                Outcome::Done(a) => {
                    let actions = actions::code_actions(&uri, &a.index, &a.diagnostics, params.range, encoding);
                    return Ok(Some(actions));
                }
                Outcome::Cancelled => continue,
                Outcome::Failed(_) => return Ok(None),
            }
        }
    }
}
