//! What the picture of a finding shows, taken from its `Diagnostic`: the
//! finding's heading, the steps of its counterexample with their line and
//! their facts (`TraceEvent`), and its other related locations, notes and
//! help as text. Lines are counted from 1 here; the layout and the markup
//! never see byte offsets.

use cute_lint::{Diagnostic, TraceEvent};
use cute_syntax::LineIndex;

/// One step of the counterexample.
#[derive(Clone, Debug)]
pub struct Step {
    /// Line of its call, from 1.
    pub line: u32,
    /// The file of that line when it is not the finding's (a module linked
    /// into the check), by its name.
    pub file: Option<String>,
    pub message: String,
    pub event: TraceEvent,
}

/// A finding and its counterexample.
#[derive(Clone, Debug)]
pub struct TraceView {
    pub file: String,
    /// Line of the finding, from 1.
    pub line: u32,
    pub code: String,
    pub name: String,
    pub severity: String,
    pub message: String,
    pub steps: Vec<Step>,
    /// Related locations that are not steps: (line, message).
    pub others: Vec<(u32, String)>,
    pub notes: Vec<String>,
    pub help: Option<String>,
}

impl Step {
    /// `line 12`, or `line 12 of sync.py` for a line of another file.
    pub fn place(&self) -> String {
        match &self.file {
            None => format!("line {}", self.line),
            Some(f) => format!("line {} of {f}", self.line),
        }
    }
}

impl TraceView {
    pub fn of(file: &str, index: &LineIndex, d: &Diagnostic) -> TraceView {
        let line = |offset: u32| index.line_of(offset) + 1;
        let mut steps = Vec::new();
        let mut others = Vec::new();
        for r in &d.related {
            // A step in a module linked into the check is a line of that file.
            let (at, file) = match &r.file {
                Some(other) => {
                    let name = other.path.file_name().map_or_else(|| other.display(), |n| n.to_string_lossy().into_owned());
                    (LineIndex::new(&other.text).line_of(r.range.start) + 1, Some(name))
                }
                None => (line(r.range.start), None),
            };
            match &r.event {
                Some(event) => steps.push(Step { line: at, file, message: r.message.clone(), event: event.clone() }),
                None => others.push((at, r.message.clone())),
            }
        }
        TraceView {
            file: file.to_string(),
            line: line(d.range.start),
            code: d.code.to_string(),
            name: d.name.to_string(),
            severity: d.severity.as_str().to_string(),
            message: d.message.clone(),
            steps,
            others,
            notes: d.notes.clone(),
            help: d.help.clone(),
        }
    }
}
