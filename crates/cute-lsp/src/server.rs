//! The language server: tower-lsp-server over stdin/stdout.
//!
//! Edits are applied to the salsa database synchronously at the top of each
//! notification handler, under a mutex and before its first `.await`, so they
//! apply in order; a change whose version is older than the one held is ignored
//! (see [`state`]). Diagnostics are computed afterwards on a blocking thread
//! with a database clone. They are pushed (`publishDiagnostics`) only if the
//! document is still at the generation they were computed for, and publishing
//! is serialised so that a result that was current when checked cannot be
//! overtaken on the wire by an older one. A client that declares pull
//! diagnostics (and can be asked to pull again) asks for them instead
//! (`textDocument/diagnostic`), and nothing is pushed to it.
//!
//! A configuration change (editor settings, a `pyproject.toml` or
//! `cute-lsp.toml`) moves every open document to a new generation: results
//! computed under the old configuration are then stale, exactly like results
//! for an old text.
//!
//! A write to the database (an edit) cancels the queries running on clones:
//! they unwind with `salsa::Cancelled` at their next query boundary (checks
//! running on their own threads are waited for in short slices, see
//! `cute_lint`'s `incremental::abandon`), the clone is dropped, the write
//! proceeds, and only the newest generation is analysed and published. A check
//! that takes longer than [`PROGRESS_AFTER`] (200 ms) is shown as work-done
//! progress (`window/workDoneProgress/create`, then `$/progress` begin and end)
//! to a client that supports it.
//!
//! Code actions (quick fixes, "suppress on this line", `actions.rs`) and hover
//! (`cute_lint`'s `hover`: a barrier's init count, its arrival sites, its waits
//! and their parities) are recomputed from the current text, never taken from
//! the client. Configuration is the nearest `cute-lsp.toml`, or
//! `[tool.cute-lsp]` of a `pyproject.toml`, overridden by the editor's
//! `cute-lsp` settings (`settings.rs`); `cute-lsp check` reads the same. The custom request
//! `cute-lsp/checkCounts` returns how many explorations, instantiations and
//! memory-ordering analyses the server has run (the tests and the latency
//! benchmark read it).

mod actions;
mod convert;
mod edits;
mod settings;
mod state;
mod transport;

use std::panic::AssertUnwindSafe;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use cute_lint::Config;
use cute_syntax::{LineIndex, PositionEncoding};
use serde_json::Value;
use tower_lsp_server::jsonrpc::{self, Result};
use tower_lsp_server::ls_types::{
    CodeActionKind, CodeActionOptions, CodeActionParams, CodeActionProviderCapability, CodeActionResponse,
    ConfigurationItem, DiagnosticOptions, DiagnosticServerCapabilities, DidChangeConfigurationParams,
    DidChangeTextDocumentParams, DidChangeWatchedFilesParams, DidChangeWatchedFilesRegistrationOptions,
    DidCloseTextDocumentParams, DidOpenTextDocumentParams, DocumentDiagnosticParams, DocumentDiagnosticReport,
    DocumentDiagnosticReportResult, FileSystemWatcher, FullDocumentDiagnosticReport, GlobPattern, Hover,
    HoverContents, HoverParams, HoverProviderCapability, InitializeParams, InitializeResult, InitializedParams,
    MarkupContent, MarkupKind, MessageType, NumberOrString, PositionEncodingKind, Registration, RelatedFullDocumentDiagnosticReport,
    RelatedUnchangedDocumentDiagnosticReport, ServerCapabilities, ServerInfo, TextDocumentSyncCapability,
    TextDocumentSyncKind, TextDocumentSyncOptions, UnchangedDocumentDiagnosticReport, Uri,
};
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

use settings::ProjectConfigs;
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
        let (service, socket) = LspService::build(move |client| Backend::new(client, flag))
            .custom_method("cute-lsp/checkCounts", Backend::check_counts)
            .finish();
        // The protocol layer reads and writes through the checks of
        // `transport` (a malformed message would otherwise end it).
        let (server_input, to_server) = tokio::io::duplex(1 << 16);
        let (from_server, server_output) = tokio::io::duplex(1 << 16);
        let (answers, answered) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(transport::forward_input(tokio::io::stdin(), to_server, answers));
        let writing = tokio::spawn(transport::forward_output(from_server, answered, tokio::io::stdout()));
        Server::new(server_input, server_output, socket).serve(service).await;
        let _ = writing.await;
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

/// What the client said it supports, fixed at `initialize`.
#[derive(Clone, Copy, Debug, Default)]
struct ClientSupport {
    /// `textDocument/diagnostic` with `workspace/diagnostic/refresh`: the
    /// client pulls, the server never pushes. Pull without refresh (Neovim
    /// 0.11) is not used: results also change without an edit (settings, a
    /// `pyproject.toml`), and such a client would keep showing stale ones
    /// until the next keystroke, so it gets pushes.
    pull_diagnostics: bool,
    /// `workspace/diagnostic/refresh`: the server may ask for a re-pull.
    diagnostic_refresh: bool,
    /// Dynamic registration of `workspace/didChangeWatchedFiles`.
    watch_files: bool,
    /// `workspace/configuration` requests.
    configuration: bool,
    /// Markdown in hovers (the default when the client does not say).
    hover_markdown: bool,
    /// `window/workDoneProgress/create`: the server may show progress.
    work_done_progress: bool,
}

struct Shared {
    state: Mutex<State>,
    /// Held from the "still current?" check to the end of the send, so
    /// publishes leave in the order they were checked.
    publish: tokio::sync::Mutex<()>,
    /// Configuration files as last read; used from blocking threads.
    projects: Mutex<ProjectConfigs>,
    support: OnceLock<ClientSupport>,
    /// Problems of the settings sent with `initialize`, reported once the
    /// client is ready for messages.
    initial_problems: Mutex<Vec<String>>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves the map and database usable
        // (every update is a single assignment), so keep serving.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn projects(&self) -> MutexGuard<'_, ProjectConfigs> {
        self.projects.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn support(&self) -> ClientSupport {
        self.support.get().copied().unwrap_or_default()
    }
}

/// What `lint_file` produced for one snapshot under its configuration,
/// detached from the database.
struct Analysis {
    diagnostics: Arc<Vec<cute_lint::Diagnostic>>,
    index: Arc<LineIndex>,
    /// The other files the check read (modules of the package linked in).
    linked: Vec<std::path::PathBuf>,
}

enum Outcome {
    Done(Analysis),
    /// A later write cancelled the query; whoever made the write, or a retry,
    /// computes the newer state.
    Cancelled,
    /// The analysis panicked or its thread could not run.
    Failed(String),
}

fn panic_message(err: tokio::task::JoinError) -> String {
    if err.is_panic() {
        let payload = err.into_panic();
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic".to_string())
    } else {
        err.to_string()
    }
}

/// Shows configuration problems to the user (once per version of the file
/// or settings that has them) and keeps them in the log.
async fn report_problems(client: &Client, problems: Vec<String>) {
    if problems.is_empty() {
        return;
    }
    let text = problems.join("\n");
    client.log_message(MessageType::WARNING, format!("cute-lsp: configuration: {text}")).await;
    client.show_message(MessageType::WARNING, format!("cute-lsp: {text}")).await;
}

/// Runs `lint_file_with` on a blocking thread under the document's
/// configuration (the project's `cute-lsp.toml` or `pyproject.toml`, then
/// the editor's settings). The snapshot is moved into the closure and dropped there, so a
/// pending write never waits on this task's caller.
///
/// A check that outlives the configuration's `request-deadline-ms` is not
/// waited for: the answer is an `analysis-incomplete` note at the top of the
/// file, and the check runs on (what it computed is kept by the database for
/// the next request, unless an edit cancels it first).
async fn analyze(shared: &Arc<Shared>, client: &Client, snapshot: Snapshot) -> Outcome {
    let (project, problems) = match &snapshot.config_path {
        Some(path) => shared.projects().resolve(path),
        None => (Arc::new(Config::default()), Vec::new()),
    };
    let config = project.with(&snapshot.editor);
    let deadline = config.request_deadline();
    let task = tokio::task::spawn_blocking(move || {
        let Snapshot { db, doc, .. } = snapshot;
        let options = config.analysis_options();
        let result = salsa::Cancelled::catch(AssertUnwindSafe(|| {
            let diagnostics = cute_lint::lint_file_with(&db, doc.file, options);
            let diagnostics =
                if config == Config::default() { diagnostics } else { Arc::new(config.apply(&diagnostics)) };
            Analysis { diagnostics, index: cute_lint::line_index(&db, doc.file).clone(), linked: cute_lint::linked_paths(&db, doc.file) }
        }));
        drop(db);
        result
    });
    report_problems(client, problems).await;
    match tokio::time::timeout(deadline, task).await {
        Ok(Ok(Ok(analysis))) => Outcome::Done(analysis),
        Ok(Ok(Err(_cancelled))) => Outcome::Cancelled,
        Ok(Err(err)) => Outcome::Failed(panic_message(err)),
        Err(_elapsed) => Outcome::Done(Analysis {
            diagnostics: Arc::new(vec![cute_lint::rules::analysis_incomplete::request_deadline(deadline)]),
            // The note is at offset 0, line 0 in any text.
            index: Arc::new(LineIndex::new("")),
            linked: Vec::new(),
        }),
    }
}

/// A check running longer than this is shown as progress.
const PROGRESS_AFTER: Duration = Duration::from_millis(200);

/// [`analyze`], shown to the client as work-done progress if it takes longer
/// than [`PROGRESS_AFTER`] and the client can show it.
async fn analyze_with_progress(shared: &Arc<Shared>, client: &Client, uri: &Uri, snapshot: Snapshot) -> Outcome {
    let analysis = analyze(shared, client, snapshot);
    tokio::pin!(analysis);
    if !shared.support().work_done_progress {
        return analysis.await;
    }
    match tokio::time::timeout(PROGRESS_AFTER, &mut analysis).await {
        Ok(outcome) => outcome,
        Err(_) => {
            static NEXT: AtomicU64 = AtomicU64::new(1);
            let token = NumberOrString::String(format!("cute-lsp/check/{}", NEXT.fetch_add(1, Ordering::Relaxed)));
            let progress = match client.create_work_done_progress(token.clone()).await {
                Ok(()) => {
                    let name = uri.as_str().rsplit('/').next().unwrap_or_default().to_string();
                    Some(client.progress(token, "cute-lsp").with_message(format!("checking {name}")).begin().await)
                }
                Err(_) => None,
            };
            let outcome = analysis.await;
            if let Some(progress) = progress {
                progress.finish().await;
            }
            outcome
        }
    }
}

impl Backend {
    fn new(client: Client, shut_down: Arc<AtomicBool>) -> Self {
        Backend {
            client,
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                publish: tokio::sync::Mutex::new(()),
                projects: Mutex::new(ProjectConfigs::default()),
                support: OnceLock::new(),
                initial_problems: Mutex::new(Vec::new()),
            }),
            shut_down,
        }
    }

    /// Computes and publishes the diagnostics of `uri` at `generation`, on a
    /// task of its own so the handler returns at once and the next edit is
    /// not queued behind this analysis. Nothing to do for a pulling client:
    /// it asks when it wants them.
    fn schedule(&self, uri: Uri, generation: u64) {
        if self.shared.support().pull_diagnostics {
            return;
        }
        let shared = self.shared.clone();
        let client = self.client.clone();
        tokio::spawn(publish_diagnostics(shared, client, uri, generation));
    }

    /// After a configuration change: every open document's diagnostics again,
    /// pushed, or pulled again at the client's convenience.
    fn refresh(&self, touched: Vec<(Uri, u64)>) {
        let support = self.shared.support();
        if support.pull_diagnostics {
            if support.diagnostic_refresh && !touched.is_empty() {
                let client = self.client.clone();
                tokio::spawn(async move {
                    let _ = client.workspace_diagnostic_refresh().await;
                });
            }
            return;
        }
        for (uri, generation) in touched {
            self.schedule(uri, generation);
        }
    }

    /// `cute-lsp/checkCounts`: how many explorations, instantiations and
    /// memory-ordering analyses the server has run, and how often it checked
    /// a file as one (for benchmarks that show what an edit re-checked).
    async fn check_counts(&self) -> Result<Value> {
        let counts = cute_lint::check_counts();
        Ok(serde_json::json!({
            "explorations": counts.explorations,
            "instantiations": counts.instantiations,
            "wholeFile": counts.whole_file,
            "memoryAnalyses": counts.memory_analyses,
        }))
    }

    /// Installs the editor's settings and re-checks what they change.
    fn set_editor_config(&self, config: Config) {
        let touched = {
            let mut state = self.shared.lock();
            if *state.editor() == config {
                return;
            }
            state.set_editor_config(config)
        };
        self.refresh(touched);
    }
}

async fn publish_diagnostics(shared: Arc<Shared>, client: Client, uri: Uri, generation: u64) {
    let analysis = loop {
        // `None`: the document changed or closed since; a newer task handles it.
        let Some(snapshot) = shared.lock().snapshot(&uri, Some(generation)) else { return };
        let encoding = snapshot.encoding;
        match analyze_with_progress(&shared, &client, &uri, snapshot).await {
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
    shared.lock().set_linked(&uri, analysis.linked);
    let diagnostics = convert::diagnostics(&uri, &analysis.index, &analysis.diagnostics, encoding);
    let _order = shared.publish.lock().await;
    let version = match shared.lock().current(&uri) {
        Some(doc) if doc.generation == generation => doc.version,
        _ => return,
    };
    client.publish_diagnostics(uri, diagnostics, Some(version)).await;
}

fn full_report(result_id: Option<String>, items: Vec<tower_lsp_server::ls_types::Diagnostic>) -> DocumentDiagnosticReportResult {
    DocumentDiagnosticReportResult::Report(DocumentDiagnosticReport::Full(RelatedFullDocumentDiagnosticReport {
        related_documents: None,
        full_document_diagnostic_report: FullDocumentDiagnosticReport { result_id, items },
    }))
}

fn client_support(params: &InitializeParams) -> ClientSupport {
    let caps = &params.capabilities;
    let workspace = caps.workspace.as_ref();
    let text_document = caps.text_document.as_ref();
    let diagnostic_refresh =
        workspace.and_then(|w| w.diagnostics.as_ref()).and_then(|d| d.refresh_support).unwrap_or(false);
    ClientSupport {
        pull_diagnostics: diagnostic_refresh && text_document.is_some_and(|t| t.diagnostic.is_some()),
        diagnostic_refresh,
        watch_files: workspace
            .and_then(|w| w.did_change_watched_files.as_ref())
            .and_then(|d| d.dynamic_registration)
            .unwrap_or(false),
        configuration: workspace.and_then(|w| w.configuration).unwrap_or(false),
        hover_markdown: text_document
            .and_then(|t| t.hover.as_ref())
            .and_then(|h| h.content_format.as_ref())
            .is_none_or(|formats| formats.contains(&MarkupKind::Markdown)),
        work_done_progress: caps.window.as_ref().and_then(|w| w.work_done_progress).unwrap_or(false),
    }
}

/// A file that can hold the project's configuration.
fn is_config_file(uri: &Uri) -> bool {
    uri.as_str().rsplit('/').next().is_some_and(|name| name == "pyproject.toml" || name == cute_lint::config::FILE_NAME)
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
        let support = client_support(&params);
        let _ = self.shared.support.set(support);
        {
            let mut state = self.shared.lock();
            state.encoding = encoding;
            #[allow(deprecated)]
            let root_uri = params.root_uri.clone();
            let folders = params.workspace_folders.iter().flatten().map(|f| f.uri.clone()).chain(root_uri);
            state.roots = folders.filter_map(|u| u.to_file_path().map(|p| p.into_owned())).collect();
            state.link_workspace();
            if let Some((config, problems)) = params.initialization_options.as_ref().and_then(settings::editor_settings) {
                state.set_editor_config(config);
                *self.shared.initial_problems.lock().unwrap_or_else(PoisonError::into_inner) = problems;
            }
        }
        let diagnostic_provider = support.pull_diagnostics.then(|| {
            DiagnosticServerCapabilities::Options(DiagnosticOptions {
                identifier: Some("cute-lsp".to_string()),
                inter_file_dependencies: false,
                workspace_diagnostics: false,
                ..Default::default()
            })
        });
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
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                diagnostic_provider,
                ..Default::default()
            },
            server_info: Some(ServerInfo {
                name: "cute-lsp".to_string(),
                version: Some(env!("CARGO_PKG_VERSION").to_string()),
            }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        let problems = std::mem::take(&mut *self.shared.initial_problems.lock().unwrap_or_else(PoisonError::into_inner));
        report_problems(&self.client, problems).await;
        if self.shared.support().watch_files {
            let options = DidChangeWatchedFilesRegistrationOptions {
                // Python files: modules a check links in may change on disk.
                watchers: ["**/pyproject.toml", "**/cute-lsp.toml", "**/*.py"]
                    .map(|glob| FileSystemWatcher { glob_pattern: GlobPattern::String(glob.to_string()), kind: None })
                    .to_vec(),
            };
            let registration = Registration {
                id: "cute-lsp/pyproject.toml".to_string(),
                method: "workspace/didChangeWatchedFiles".to_string(),
                register_options: serde_json::to_value(options).ok(),
            };
            if let Err(err) = self.client.register_capability(vec![registration]).await {
                let message = format!("cute-lsp: cannot watch pyproject.toml and cute-lsp.toml files ({err}); edits to them apply on the next change");
                self.client.log_message(MessageType::INFO, message).await;
            }
        }
    }

    async fn shutdown(&self) -> Result<()> {
        self.shut_down.store(true, Ordering::SeqCst);
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let doc = params.text_document;
        let (opened, dependents) = {
            let mut state = self.shared.lock();
            let opened = state.open(doc.uri.clone(), doc.version, doc.text);
            (opened, state.dependents(&doc.uri))
        };
        self.schedule(doc.uri, opened.generation);
        self.refresh(dependents);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        let (changed, dependents) = {
            let mut state = self.shared.lock();
            let changed = state.change(&uri, params.text_document.version, &params.content_changes);
            // The open documents that link this one are checked again.
            let dependents = if changed.is_some() { state.dependents(&uri) } else { Vec::new() };
            (changed, dependents)
        };
        if let Some(doc) = changed {
            self.schedule(uri, doc.generation);
        }
        self.refresh(dependents);
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        let (closed, dependents) = {
            let mut state = self.shared.lock();
            let dependents = state.dependents(&uri);
            (state.close(&uri), dependents)
        };
        self.refresh(dependents);
        if !closed || self.shared.support().pull_diagnostics {
            return;
        }
        let _order = self.shared.publish.lock().await;
        // Reopened while waiting for the publish lock: its own task publishes.
        if self.shared.lock().current(&uri).is_some() {
            return;
        }
        self.client.publish_diagnostics(uri, Vec::new(), None).await;
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        if let Some((config, problems)) = settings::editor_settings(&params.settings) {
            // Applied before the first await, like an edit, so it is ordered
            // with the edits around it.
            self.set_editor_config(config);
            report_problems(&self.client, problems).await;
            return;
        }
        // Nothing for this server in the notification (VS Code sends `null`
        // in the pull model): ask for the section.
        if !self.shared.support().configuration {
            return;
        }
        let item = ConfigurationItem { scope_uri: None, section: Some(settings::SECTION.to_string()) };
        let Ok(values) = self.client.configuration(vec![item]).await else { return };
        let section = values.into_iter().next().unwrap_or(Value::Null);
        let (config, problems) = Config::from_value(&section, "editor settings `cute-lsp`");
        self.set_editor_config(config);
        report_problems(&self.client, problems).await;
    }

    async fn did_change_watched_files(&self, params: DidChangeWatchedFilesParams) {
        if params.changes.iter().any(|c| c.uri.as_str().ends_with(".py")) {
            let touched = self.shared.lock().disk_changed();
            self.refresh(touched);
        }
        if !params.changes.iter().any(|c| is_config_file(&c.uri)) {
            return;
        }
        self.shared.projects().clear();
        let touched = self.shared.lock().touch_all();
        self.refresh(touched);
    }

    async fn diagnostic(&self, params: DocumentDiagnosticParams) -> Result<DocumentDiagnosticReportResult> {
        let uri = params.text_document.uri;
        loop {
            let Some(snapshot) = self.shared.lock().snapshot(&uri, None) else {
                return Ok(full_report(None, Vec::new()));
            };
            let generation = snapshot.doc.generation;
            // The generation moves with every edit and configuration change.
            let result_id = generation.to_string();
            if params.previous_result_id.as_deref() == Some(result_id.as_str()) {
                return Ok(DocumentDiagnosticReportResult::Report(DocumentDiagnosticReport::Unchanged(
                    RelatedUnchangedDocumentDiagnosticReport {
                        related_documents: None,
                        unchanged_document_diagnostic_report: UnchangedDocumentDiagnosticReport { result_id },
                    },
                )));
            }
            let encoding = snapshot.encoding;
            match analyze_with_progress(&self.shared, &self.client, &uri, snapshot).await {
                // Answer for the text the client has now: if it changed while
                // this ran, compute again rather than return stale positions.
                Outcome::Done(_) if self.shared.lock().current(&uri).map(|d| d.generation) != Some(generation) => continue,
                Outcome::Done(a) => {
                    self.shared.lock().set_linked(&uri, a.linked);
                    let items = convert::diagnostics(&uri, &a.index, &a.diagnostics, encoding);
                    return Ok(full_report(Some(result_id), items));
                }
                Outcome::Cancelled => continue,
                Outcome::Failed(why) => {
                    let message = format!("cute-lsp: analysis of {} failed: {why}", uri.as_str());
                    self.client.log_message(MessageType::ERROR, message).await;
                    return Err(jsonrpc::Error::internal_error());
                }
            }
        }
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let uri = params.text_document_position_params.text_document.uri;
        let position = params.text_document_position_params.position;
        let markdown = self.shared.support().hover_markdown;
        loop {
            let Some(snapshot) = self.shared.lock().snapshot(&uri, None) else { return Ok(None) };
            // Like diagnostics: on a blocking thread, from a snapshot that is
            // dropped as soon as the text is out of it.
            let task = tokio::task::spawn_blocking(move || {
                let Snapshot { db, doc, encoding, .. } = snapshot;
                let read = salsa::Cancelled::catch(AssertUnwindSafe(|| {
                    (doc.file.text(&db).clone(), cute_lint::line_index(&db, doc.file).clone())
                }));
                drop(db);
                let (text, index) = read.ok()?;
                let offset = index.offset(edits::line_col(position), encoding);
                let hover = cute_lint::hover(&text, offset, &cute_lint::AnalysisOptions::default());
                Some(hover.map(|h| (h, index, encoding)))
            });
            let (hover, index, encoding) = match task.await {
                Ok(None) => continue,
                Ok(Some(None)) => return Ok(None),
                Ok(Some(Some(found))) => found,
                Err(err) => {
                    let message = format!("cute-lsp: hover in {} failed: {}", uri.as_str(), panic_message(err));
                    self.client.log_message(MessageType::ERROR, message).await;
                    return Ok(None);
                }
            };
            let kind = if markdown { MarkupKind::Markdown } else { MarkupKind::PlainText };
            return Ok(Some(Hover {
                contents: HoverContents::Markup(MarkupContent { kind, value: hover.markdown }),
                range: Some(convert::range(&index, hover.range, encoding)),
            }));
        }
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        if !actions::wants_quickfix(params.context.only.as_deref()) {
            return Ok(None);
        }
        let uri = params.text_document.uri;
        loop {
            let Some(snapshot) = self.shared.lock().snapshot(&uri, None) else { return Ok(None) };
            let encoding = snapshot.encoding;
            match analyze(&self.shared, &self.client, snapshot).await {
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
