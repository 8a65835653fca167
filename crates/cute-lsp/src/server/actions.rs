//! `textDocument/codeAction`: the fixes of each diagnostic under the cursor,
//! then, for a diagnostic with a counterexample, "Show the interleaving"
//! (a command the client runs: it draws the picture with `cute-lsp trace`),
//! then a suppression comment for its rule.
//!
//! Actions are built from a fresh `lint_file` of the current text, never from
//! the diagnostics the client sends back, so a fix computed for an older
//! version of the document is never offered.

use std::collections::HashMap;

use cute_lint::Diagnostic;
use cute_syntax::{LineIndex, PositionEncoding, TextRange};
use serde_json::json;
use tower_lsp_server::ls_types::{
    self as lsp, CodeAction, CodeActionKind, CodeActionOrCommand, Command, TextEdit, Uri, WorkspaceEdit,
};

use super::convert;
use super::edits::byte_range;

/// The comment marker cute-lint's suppression recognises.
const MARKER: &str = "# cute-lsp: ignore";

/// The client's command that shows a diagnostic's interleaving (the VS Code
/// extension registers it). Its arguments are the file's path and the line,
/// from 1, the finding starts on: what `cute-lsp trace FILE:LINE` takes.
pub const SHOW_INTERLEAVING: &str = "cute-lsp.showInterleaving";

/// Whether the client's `only` filter admits quick fixes (kinds are
/// hierarchical: `""` and `quickfix` both cover `quickfix`).
pub fn wants_quickfix(only: Option<&[CodeActionKind]>) -> bool {
    match only {
        None => true,
        Some(kinds) => kinds.iter().any(|k| {
            let k = k.as_str();
            k.is_empty() || k == CodeActionKind::QUICKFIX.as_str()
        }),
    }
}

/// Whether two byte ranges touch; a cursor (empty range) at either end of a
/// diagnostic counts, as editors expect.
fn overlaps(a: TextRange, start: u32, end: u32) -> bool {
    a.start <= end && start <= a.end
}

pub fn code_actions(
    uri: &Uri,
    index: &LineIndex,
    diags: &[Diagnostic],
    requested: lsp::Range,
    encoding: PositionEncoding,
) -> Vec<CodeActionOrCommand> {
    let (start, end) = byte_range(index, requested, encoding);
    let (start, end) = (start as u32, end as u32);
    let mut actions = Vec::new();
    for diag in diags.iter().filter(|d| overlaps(d.range, start, end)) {
        let lsp_diag = convert::diagnostic(uri, index, diag, encoding);
        for (i, fix) in diag.fixes.iter().enumerate() {
            actions.push(action(uri, fix.title.clone(), convert::text_edits(index, fix, encoding), &lsp_diag, i == 0));
        }
        // Only a file on disk can be handed to `cute-lsp trace`.
        let file = uri.as_str().starts_with("file:").then(|| uri.to_file_path()).flatten();
        if let Some(path) = file.filter(|_| diag.has_trace()) {
            actions.push(show_interleaving(&path.to_string_lossy(), index.line_of(diag.range.start) + 1, &lsp_diag));
        }
        if let Some((range, new_text)) = suppression(index, index.line_of(diag.range.start), diag.name) {
            let edit = TextEdit { range: convert::range(index, range, encoding), new_text };
            actions.push(action(uri, format!("Suppress {} on this line", diag.name), vec![edit], &lsp_diag, false));
        }
    }
    actions
}

fn action(
    uri: &Uri,
    title: String,
    edits: Vec<TextEdit>,
    diag: &lsp::Diagnostic,
    preferred: bool,
) -> CodeActionOrCommand {
    CodeActionOrCommand::CodeAction(CodeAction {
        title,
        kind: Some(CodeActionKind::QUICKFIX),
        diagnostics: Some(vec![diag.clone()]),
        edit: Some(WorkspaceEdit { changes: Some(HashMap::from([(uri.clone(), edits)])), ..Default::default() }),
        command: None,
        is_preferred: preferred.then_some(true),
        disabled: None,
        data: None,
    })
}

fn show_interleaving(path: &str, line: u32, diag: &lsp::Diagnostic) -> CodeActionOrCommand {
    CodeActionOrCommand::CodeAction(CodeAction {
        title: "Show the interleaving".to_string(),
        kind: Some(CodeActionKind::QUICKFIX),
        diagnostics: Some(vec![diag.clone()]),
        edit: None,
        command: Some(Command {
            title: "Show the interleaving".to_string(),
            command: SHOW_INTERLEAVING.to_string(),
            arguments: Some(vec![json!(path), json!(line)]),
        }),
        is_preferred: None,
        disabled: None,
        data: None,
    })
}

/// The edit that silences `name` on `line`: add it to an existing
/// `# cute-lsp: ignore[...]` list, or append a new comment at the end of the
/// line. `None` when the line cannot take one (it ends in a backslash
/// continuation, or a bare `# cute-lsp: ignore` already silences everything).
pub fn suppression(index: &LineIndex, line: u32, name: &str) -> Option<(TextRange, String)> {
    let text = index.line_text(line);
    let line_start = index.line_start(line) as usize;
    if let Some(at) = text.find(MARKER) {
        let after = at + MARKER.len();
        let rest = text[after..].strip_prefix('[')?;
        let close = rest.find(']')?;
        let list = &rest[..close];
        if list.split(',').map(str::trim).any(|n| n == name) {
            return None;
        }
        let insert_at = line_start + after + 1 + close;
        let new_text = if list.trim().is_empty() { name.to_string() } else { format!(", {name}") };
        return Some((TextRange::new(insert_at, insert_at), new_text));
    }
    if text.trim_end().ends_with('\\') {
        return None;
    }
    let end = line_start + text.trim_end().len();
    Some((TextRange::new(end, end), format!("  {MARKER}[{name}]")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::convert::tests::sample;
    use tower_lsp_server::ls_types::Position;

    fn apply(text: &str, (range, new_text): (TextRange, String)) -> String {
        let mut out = text.to_string();
        out.replace_range(range.start as usize..range.end as usize, &new_text);
        out
    }

    #[test]
    fn suppression_appends_a_comment() {
        let text = "a\n    wait(gate, 0)  # expect: untoggled-phase\nb\n";
        let index = LineIndex::new(text);
        let out = apply(text, suppression(&index, 1, "untoggled-phase").unwrap());
        assert_eq!(out, "a\n    wait(gate, 0)  # expect: untoggled-phase  # cute-lsp: ignore[untoggled-phase]\nb\n");
    }

    #[test]
    fn suppression_extends_an_existing_list() {
        let text = "wait(gate, 0)  # cute-lsp: ignore[deadlock] why\n";
        let index = LineIndex::new(text);
        let out = apply(text, suppression(&index, 0, "untoggled-phase").unwrap());
        assert_eq!(out, "wait(gate, 0)  # cute-lsp: ignore[deadlock, untoggled-phase] why\n");

        let text = "wait(gate, 0)  # cute-lsp: ignore[]\n";
        let out = apply(text, suppression(&LineIndex::new(text), 0, "deadlock").unwrap());
        assert_eq!(out, "wait(gate, 0)  # cute-lsp: ignore[deadlock]\n");
    }

    #[test]
    fn suppression_skips_lines_that_cannot_take_it() {
        let cases = ["f(a, \\\n", "f()  # cute-lsp: ignore\n", "f()  # cute-lsp: ignore[deadlock]\n"];
        for text in cases {
            assert_eq!(suppression(&LineIndex::new(text), 0, "deadlock"), None, "{text:?}");
        }
    }

    #[test]
    fn suppression_on_crlf_and_trailing_spaces() {
        let text = "f()   \r\ng()\r\n";
        let out = apply(text, suppression(&LineIndex::new(text), 0, "deadlock").unwrap());
        assert_eq!(out, "f()  # cute-lsp: ignore[deadlock]   \r\ng()\r\n");
    }

    #[test]
    fn actions_for_overlapping_diagnostics_only() {
        let text = "x = 1\nwait(gate, 0)\n";
        let index = LineIndex::new(text);
        let uri: Uri = "file:///k.py".parse().unwrap();
        let diags = [sample(text)];
        let at = |l, c| lsp::Range::new(Position::new(l, c), Position::new(l, c));

        assert!(code_actions(&uri, &index, &diags, at(0, 2), PositionEncoding::Utf16).is_empty());

        let actions = code_actions(&uri, &index, &diags, at(1, 2), PositionEncoding::Utf16);
        assert_eq!(actions.len(), 2);
        let CodeActionOrCommand::CodeAction(fix) = &actions[0] else { panic!("not an action") };
        assert_eq!(fix.title, "use a tracked phase");
        assert_eq!(fix.kind, Some(CodeActionKind::QUICKFIX));
        assert_eq!(fix.is_preferred, Some(true));
        assert_eq!(fix.diagnostics.as_ref().unwrap()[0].code, Some(lsp::NumberOrString::String("CUTE001".into())));
        let edits = &fix.edit.as_ref().unwrap().changes.as_ref().unwrap()[&uri];
        assert_eq!(edits[0].new_text, "phase");
        assert_eq!(edits[0].range, lsp::Range::new(Position::new(1, 11), Position::new(1, 12)));

        let CodeActionOrCommand::CodeAction(suppress) = &actions[1] else { panic!("not an action") };
        assert_eq!(suppress.title, "Suppress untoggled-phase on this line");
        assert_eq!(suppress.is_preferred, None);
    }

    #[test]
    fn a_diagnostic_with_a_trace_offers_its_interleaving() {
        let text = "x = 1\nwait(gate, 0)\n";
        let index = LineIndex::new(text);
        let uri: Uri = "file:///k.py".parse().unwrap();
        let mut diag = sample(text);
        let at = |l, c| lsp::Range::new(Position::new(l, c), Position::new(l, c));
        let event = cute_lint::TraceEvent {
            kind: cute_lint::EventKind::Stuck,
            first: 1,
            last: 1,
            lane: None,
            threads: 1,
            op: None,
            barrier: None,
            count: None,
            parity: None,
            barriers: Vec::new(),
        };
        diag.related[0].event = Some(event);
        let actions = code_actions(&uri, &index, &[diag.clone()], at(1, 2), PositionEncoding::Utf16);
        let titles: Vec<String> = actions.iter().map(|a| match a {
            CodeActionOrCommand::CodeAction(a) => a.title.clone(),
            CodeActionOrCommand::Command(c) => c.title.clone(),
        }).collect();
        assert_eq!(titles, ["use a tracked phase", "Show the interleaving", "Suppress untoggled-phase on this line"]);
        let CodeActionOrCommand::CodeAction(show) = &actions[1] else { panic!("not an action") };
        let command = show.command.as_ref().unwrap();
        assert_eq!(command.command, SHOW_INTERLEAVING);
        assert_eq!(command.arguments, Some(vec![json!("/k.py"), json!(2)]));
        assert!(show.edit.is_none());
        // A document that is not a file has no path to give `trace`.
        let untitled: Uri = "untitled:Untitled-1".parse().unwrap();
        assert_eq!(code_actions(&untitled, &index, &[diag], at(1, 2), PositionEncoding::Utf16).len(), 2);
    }

    #[test]
    fn only_filter() {
        assert!(wants_quickfix(None));
        assert!(wants_quickfix(Some(&[CodeActionKind::QUICKFIX])));
        assert!(wants_quickfix(Some(&[CodeActionKind::EMPTY])));
        assert!(!wants_quickfix(Some(&[CodeActionKind::REFACTOR, CodeActionKind::SOURCE_FIX_ALL])));
    }
}
