//! cute-lint diagnostics (byte ranges) to LSP diagnostics (line/column
//! ranges in the negotiated encoding).

use cute_lint::{Diagnostic, Fix, Severity};
use cute_syntax::{LineIndex, PositionEncoding, TextRange};
use serde_json::{json, Value};
use tower_lsp_server::ls_types::{
    self as lsp, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Position, TextEdit, Uri,
};

/// The `source` of every diagnostic the server publishes; code actions only
/// consider diagnostics carrying it.
pub const SOURCE: &str = "cute-lsp";

pub fn range(index: &LineIndex, range: TextRange, encoding: PositionEncoding) -> lsp::Range {
    let start = index.position(range.start, encoding);
    let end = index.position(range.end, encoding);
    lsp::Range::new(Position::new(start.line, start.col), Position::new(end.line, end.col))
}

fn severity(severity: Severity) -> DiagnosticSeverity {
    match severity {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Info => DiagnosticSeverity::INFORMATION,
    }
}

/// The message as editors show it: the diagnostic's message, then its notes
/// and help after a blank line (the trace goes to related information).
fn message(diag: &Diagnostic) -> String {
    let mut message = diag.message.clone();
    let extra: Vec<String> =
        diag.notes.iter().map(|n| format!("note: {n}")).chain(diag.help.iter().map(|h| format!("help: {h}"))).collect();
    if !extra.is_empty() {
        message.push_str("\n\n");
        message.push_str(&extra.join("\n"));
    }
    message
}

pub fn text_edits(index: &LineIndex, fix: &Fix, encoding: PositionEncoding) -> Vec<TextEdit> {
    fix.edits
        .iter()
        .map(|e| TextEdit { range: range(index, e.range, encoding), new_text: e.new_text.clone() })
        .collect()
}

/// The `data` of a published diagnostic: the rule name and the fixes, so a
/// client can show them; the server itself recomputes fixes on request and
/// never trusts this copy.
fn data(diag: &Diagnostic, index: &LineIndex, encoding: PositionEncoding) -> Value {
    json!({
        "name": diag.name,
        "fixes": diag.fixes.iter().map(|f| json!({
            "title": f.title,
            "edits": text_edits(index, f, encoding),
        })).collect::<Vec<_>>(),
    })
}

pub fn diagnostic(uri: &Uri, index: &LineIndex, diag: &Diagnostic, encoding: PositionEncoding) -> lsp::Diagnostic {
    let related = diag
        .related
        .iter()
        .map(|r| match &r.file {
            None => DiagnosticRelatedInformation {
                location: Location { uri: uri.clone(), range: range(index, r.range, encoding) },
                message: r.message.clone(),
            },
            // A location in a module linked into the check.
            Some(other) => DiagnosticRelatedInformation {
                location: Location {
                    uri: Uri::from_file_path(&other.path).unwrap_or_else(|| uri.clone()),
                    range: range(&LineIndex::new(&other.text), r.range, encoding),
                },
                message: r.message.clone(),
            },
        })
        .collect::<Vec<_>>();
    lsp::Diagnostic {
        range: range(index, diag.range, encoding),
        severity: Some(severity(diag.severity)),
        code: Some(NumberOrString::String(diag.code.to_string())),
        code_description: None,
        source: Some(SOURCE.to_string()),
        message: message(diag),
        related_information: (!related.is_empty()).then_some(related),
        tags: None,
        data: Some(data(diag, index, encoding)),
    }
}

pub fn diagnostics(
    uri: &Uri,
    index: &LineIndex,
    diags: &[Diagnostic],
    encoding: PositionEncoding,
) -> Vec<lsp::Diagnostic> {
    diags.iter().map(|d| diagnostic(uri, index, d, encoding)).collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use cute_lint::{Edit, Related};

    pub fn sample(text: &str) -> Diagnostic {
        let at = text.find("wait").unwrap();
        let arg = text.find("0)").unwrap();
        Diagnostic {
            code: "CUTE001",
            name: "untoggled-phase",
            severity: Severity::Error,
            message: "the wait parity is never flipped".into(),
            range: TextRange::new(at, at + 4),
            label: "always waits on parity 0".into(),
            related: vec![
                Related { range: TextRange::new(0, 1), message: "step 1".into(), file: None, event: None },
                Related { range: TextRange::new(at, at + 4), message: "step 2".into(), file: None, event: None },
            ],
            notes: vec!["bounded to 3 rounds".into()],
            help: Some("flip the parity after each wait".into()),
            fixes: vec![Fix {
                title: "use a tracked phase".into(),
                edits: vec![Edit { range: TextRange::new(arg, arg + 1), new_text: "phase".into() }],
                applicability: cute_lint::Applicability::Unsafe,
            }],
        }
    }

    #[test]
    fn converts_ranges_severity_related_and_data() {
        let text = "x = 'é𝜙'\nwait(gate, 0)\n";
        let index = LineIndex::new(text);
        let uri: Uri = "file:///k.py".parse().unwrap();
        let d = diagnostic(&uri, &index, &sample(text), PositionEncoding::Utf16);
        assert_eq!(d.range, lsp::Range::new(Position::new(1, 0), Position::new(1, 4)));
        assert_eq!(d.severity, Some(DiagnosticSeverity::ERROR));
        assert_eq!(d.code, Some(NumberOrString::String("CUTE001".into())));
        assert_eq!(d.source.as_deref(), Some("cute-lsp"));
        assert_eq!(
            d.message,
            "the wait parity is never flipped\n\nnote: bounded to 3 rounds\nhelp: flip the parity after each wait"
        );
        let related = d.related_information.unwrap();
        assert_eq!(related.len(), 2);
        assert_eq!(related[0].message, "step 1");
        assert_eq!(related[1].location.uri, uri);
        assert_eq!(related[1].location.range, d.range);
        let data = d.data.unwrap();
        assert_eq!(data["name"], "untoggled-phase");
        assert_eq!(data["fixes"][0]["title"], "use a tracked phase");
        assert_eq!(data["fixes"][0]["edits"][0]["newText"], "phase");
        assert_eq!(data["fixes"][0]["edits"][0]["range"]["start"]["character"], 11);
    }

    #[test]
    fn columns_follow_the_encoding() {
        let text = "s = 'é𝜙'; wait(g, 0)\n";
        let index = LineIndex::new(text);
        let uri: Uri = "file:///k.py".parse().unwrap();
        let d16 = diagnostic(&uri, &index, &sample(text), PositionEncoding::Utf16);
        let d8 = diagnostic(&uri, &index, &sample(text), PositionEncoding::Utf8);
        assert_eq!(d16.range.start.character, "s = 'é𝜙'; ".encode_utf16().count() as u32);
        assert_eq!(d8.range.start.character, "s = 'é𝜙'; ".len() as u32);
    }

    #[test]
    fn plain_message_without_notes() {
        let text = "wait(gate, 0)\n";
        let mut diag = sample(text);
        diag.notes.clear();
        diag.help = None;
        diag.related.clear();
        let uri: Uri = "file:///k.py".parse().unwrap();
        let d = diagnostic(&uri, &LineIndex::new(text), &diag, PositionEncoding::Utf16);
        assert_eq!(d.message, "the wait parity is never flipped");
        assert!(d.related_information.is_none());
    }
}
