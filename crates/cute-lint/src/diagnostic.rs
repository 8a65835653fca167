//! The diagnostic model shared by the CLI and the server. Ranges are byte
//! ranges into the file's text; each front end converts them to its own
//! positions (rustc-style labels, LSP UTF-16 or UTF-8 columns).
//!
//! A counterexample's steps keep their facts as data next to their message
//! (`Related::event`), in the JSON contract as the `trace` key of a related
//! entry, so that the interleaving can be drawn (`cute-lsp trace`).

use cute_check::trace::{BarrierAt, Event};
use cute_syntax::{LineIndex, PositionEncoding, TextRange};
use serde_json::{json, Map, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// One step of evidence: a counterexample step or a secondary location.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Related {
    /// In the file checked, or in `file` when it is set.
    pub range: TextRange,
    pub message: String,
    /// The other file the location is in: a definition of a module the
    /// file checked imports, linked into its check (`cute_ir::link`).
    pub file: Option<OtherFile>,
    /// For a step of a counterexample: what it states, as data.
    pub event: Option<Event>,
}

/// A file other than the one checked, with its text for the lines shown.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OtherFile {
    pub path: std::sync::Arc<std::path::Path>,
    pub text: std::sync::Arc<str>,
}

impl OtherFile {
    pub fn display(&self) -> String {
        self.path.display().to_string()
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Edit {
    pub range: TextRange,
    pub new_text: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Fix {
    pub title: String,
    pub edits: Vec<Edit>,
    pub applicability: Applicability,
}

/// Whether a fix may be applied without a person reading it first
/// (`cute-lsp check --fix` applies the safe ones, `--unsafe-fixes` all).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Applicability {
    /// It only strengthens ordering: a proxy fence inserted, or moved before
    /// its barrier; stronger memory semantics; a wider scope. It cannot make
    /// a kernel hang or compute something else, only make it slower.
    Safe,
    /// It changes what the kernel synchronizes on (an arrival count, a
    /// parity, a barrier inserted, an initialisation guarded, a byte count):
    /// the repair the finding points to, for a person to read.
    Unsafe,
}

impl Applicability {
    pub fn as_str(self) -> &'static str {
        match self {
            Applicability::Safe => "safe",
            Applicability::Unsafe => "unsafe",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    pub code: &'static str,
    pub name: &'static str,
    pub severity: Severity,
    pub message: String,
    /// The primary location.
    pub range: TextRange,
    /// Text of the primary label (what is wrong at `range`).
    pub label: String,
    /// The counterexample trace, in order, then any other secondary location.
    pub related: Vec<Related>,
    /// Free-standing notes (assumptions, bounds).
    pub notes: Vec<String>,
    pub help: Option<String>,
    pub fixes: Vec<Fix>,
}

fn json_range(index: &LineIndex, range: TextRange, encoding: PositionEncoding) -> Value {
    let start = index.position(range.start, encoding);
    let end = index.position(range.end, encoding);
    json!({
        "start": {"line": start.line, "character": start.col},
        "end": {"line": end.line, "character": end.col},
    })
}

fn json_barrier(b: &BarrierAt) -> Value {
    json!({
        "index": b.index,
        "name": b.display,
        "cta": b.cta,
        "expected": b.expected,
        "pending": b.pending,
        "arrived": b.expected - b.pending,
        "parity": b.parity,
    })
}

/// The `trace` object of a related entry: the step's facts, the keys that
/// do not apply to it left out.
pub fn event_json(e: &Event) -> Value {
    let mut out = Map::new();
    out.insert("kind".into(), json!(e.kind.as_str()));
    out.insert("first".into(), json!(e.first));
    out.insert("last".into(), json!(e.last));
    if let Some(lane) = &e.lane {
        out.insert("lane".into(), json!({"group": lane.group, "threads": lane.threads, "cta": lane.cta, "size": lane.size}));
        out.insert("threads".into(), json!(e.threads));
    }
    if let Some(op) = e.op {
        out.insert("op".into(), json!(op.as_str()));
    }
    if let Some(b) = &e.barrier {
        out.insert("barrier".into(), json_barrier(b));
    }
    if let Some(count) = e.count {
        out.insert("count".into(), json!(count));
    }
    if let Some(parity) = e.parity {
        out.insert("parity".into(), json!(parity));
    }
    if !e.barriers.is_empty() {
        out.insert("barriers".into(), e.barriers.iter().map(json_barrier).collect());
    }
    Value::Object(out)
}

impl Diagnostic {
    /// Whether it carries a counterexample whose steps can be drawn.
    pub fn has_trace(&self) -> bool {
        self.related.iter().any(|r| r.event.is_some())
    }

    /// The JSON object of the CLI contract (cli.md): LSP-style ranges with
    /// UTF-16 columns.
    pub fn to_json(&self, file: &str, index: &LineIndex) -> Value {
        let enc = PositionEncoding::Utf16;
        json!({
            "file": file,
            "code": self.code,
            "name": self.name,
            "severity": self.severity.as_str(),
            "message": self.message,
            "range": json_range(index, self.range, enc),
            "related": self.related.iter().map(|r| {
                let mut entry = match &r.file {
                    None => json!({"file": file, "range": json_range(index, r.range, enc), "message": r.message}),
                    Some(other) => json!({
                        "file": other.display(),
                        "range": json_range(&LineIndex::new(&other.text), r.range, enc),
                        "message": r.message,
                    }),
                };
                if let Some(e) = &r.event {
                    entry["trace"] = event_json(e);
                }
                entry
            }).collect::<Vec<_>>(),
            "notes": self.notes,
            "help": self.help,
            "fixes": self.fixes.iter().map(|f| json!({
                "title": f.title,
                "applicability": f.applicability.as_str(),
                "edits": f.edits.iter().map(|e| json!({
                    "file": file,
                    "range": json_range(index, e.range, enc),
                    "new_text": e.new_text,
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })
    }
}
