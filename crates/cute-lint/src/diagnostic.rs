//! The diagnostic model shared by the CLI and the server. Ranges are byte
//! ranges into the file's text; each front end converts them to its own
//! positions (rustc-style labels, LSP UTF-16 or UTF-8 columns).

use cute_syntax::{LineIndex, PositionEncoding, TextRange};
use serde_json::{json, Value};

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

impl Diagnostic {
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
            "related": self.related.iter().map(|r| match &r.file {
                None => json!({"file": file, "range": json_range(index, r.range, enc), "message": r.message}),
                Some(other) => json!({
                    "file": other.display(),
                    "range": json_range(&LineIndex::new(&other.text), r.range, enc),
                    "message": r.message,
                }),
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
