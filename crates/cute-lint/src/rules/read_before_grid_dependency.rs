//! CUTE061 read-before-grid-dependency: a kernel launched with programmatic dependent launch reads a global tensor
//! before `griddepcontrol_wait()`. See `read_before_grid_dependency.md`.
//!
//! The reads come from the memory-ordering analysis (`cute_check::memory`'s
//! `grid_dependency`), which names every read of global memory that no
//! `griddepcontrol_wait` happens before, in each way of deciding the kernel's
//! runtime conditions. Which of them read what the grid before writes, no
//! code says; the kernel's own reads say which tensors it takes to depend on
//! that grid: those it reads after a wait somewhere (another path, another
//! thread, later in the loop). A read before the wait of such a tensor, on
//! any path of any thread, is reported, whichever way of deciding the
//! conditions takes that path: it is a path the kernel's code has. A tensor
//! the kernel never reads after a wait is taken to be one the grid before
//! does not write (a prologue that overlaps the previous grid on purpose).
//!
//! Only a kernel that waits, and whose launch does not say `use_pdl=False`,
//! is judged; a way of deciding its conditions where no thread waits, only
//! when the launch says `use_pdl=True` outright (a wait under `if
//! enable_pdl:` is skipped where the launch passes `use_pdl=enable_pdl`).
//! `griddepcontrol_launch_dependents()`, wherever it is, orders nothing the
//! dependent grid's wait does not.

use std::collections::BTreeMap;

use cute_check::memory::{MemoryFinding, Repair};
use cute_check::model::{MemKind, Model, Space};
use cute_ir::launch::Launch;
use cute_syntax::TextRange;

use super::Rule;
use crate::context::KernelContext;
use crate::{Applicability, Diagnostic, Edit, Fix, Related, Severity};

pub const RULE: Rule = Rule {
    code: "CUTE061",
    name: "read-before-grid-dependency",
    default_severity: Severity::Error,
    summary: "a kernel launched with programmatic dependent launch reads a global tensor before `griddepcontrol_wait()`",
    doc: include_str!("read_before_grid_dependency.md"),
};

/// One read before the wait in one way of deciding the conditions.
struct EarlyRead {
    finding: MemoryFinding,
    /// The global tensors read at its site.
    tensors: Vec<String>,
}

/// One way of deciding the kernel's conditions, as this rule saw it.
struct Way {
    reads: Vec<EarlyRead>,
    /// Whether some thread waits in this way.
    waits: bool,
    /// The conditions the way decides, with how (shown on its path).
    path: Vec<(TextRange, String)>,
    assumptions: Vec<String>,
}

/// What the ways of one kernel read before and after their waits.
#[derive(Default)]
pub(crate) struct GridDependency {
    ways: Vec<Way>,
    /// Tensors some thread reads after a wait, with the first such read.
    dependent: BTreeMap<String, TextRange>,
    /// Where the threads wait, in any way.
    waits: Vec<TextRange>,
    /// A way whose model missed something (a construct not modelled, out
    /// of time): a wait may hide there.
    not_checked: bool,
}

impl GridDependency {
    /// Takes in one way's model and the reads its analysis found before any
    /// wait (`MemoryRule::ReadBeforeGridDependency`). `path` holds the
    /// conditions the way decides (their sites and how).
    pub(crate) fn add_way(&mut self, model: &Model, early: Vec<MemoryFinding>, path: Vec<(TextRange, String)>, assumptions: &[String]) {
        let tensors_at = |site: TextRange| -> Vec<String> {
            let mut names: Vec<String> = model
                .memory
                .iter()
                .flat_map(|t| &t.ops)
                .filter(|m| m.site == site)
                .filter_map(|m| global_read(model, &m.kind))
                .collect();
            names.sort();
            names.dedup();
            names
        };
        // A read is after a wait where no thread reads before one there,
        // or later in the program of a thread that has waited (the same
        // load in a later iteration of a loop).
        for t in &model.memory {
            let mut waited = false;
            for m in &t.ops {
                if matches!(m.kind, MemKind::GridDependencyWait) {
                    waited = true;
                    if !self.waits.contains(&m.site) {
                        self.waits.push(m.site);
                    }
                }
                if let Some(name) = global_read(model, &m.kind) {
                    if waited || !early.iter().any(|f| f.site == m.site) {
                        self.dependent.entry(name).or_insert(m.site);
                    }
                }
            }
        }
        let reads = early.into_iter().map(|finding| EarlyRead { tensors: tensors_at(finding.site), finding }).collect();
        let waits = model.memory.iter().flat_map(|t| &t.ops).any(|m| matches!(m.kind, MemKind::GridDependencyWait));
        self.ways.push(Way { reads, waits, path, assumptions: assumptions.to_vec() });
    }

    /// A way whose model is not checked: nothing is reported.
    pub(crate) fn not_checked(&mut self) {
        self.not_checked = true;
    }

    /// The diagnostics: per way, its first read before the wait of a tensor
    /// the kernel reads after one, the same read once for all ways.
    pub(crate) fn diagnostics(mut self, ctx: &KernelContext<'_>, launch: &Launch) -> Vec<Diagnostic> {
        if self.not_checked || self.waits.is_empty() || self.dependent.is_empty() {
            return Vec::new();
        }
        let Some(launched) = pdl_note(ctx, launch) else { return Vec::new() };
        self.waits.sort();
        // A way where no thread waits is one with programmatic dependent
        // launch only when the launch says `use_pdl=True` outright: a wait
        // under a condition (`if enable_pdl:`) is skipped where the launch
        // gives the same flag.
        let pdl_certain = launch.use_pdl.as_deref() == Some("True");
        let judged: Vec<&Way> = self.ways.iter().filter(|w| w.waits || pdl_certain).collect();
        let mut out: Vec<Diagnostic> = Vec::new();
        for way in &judged {
            let reads: Vec<&EarlyRead> =
                way.reads.iter().filter(|r| r.tensors.iter().any(|t| self.dependent.contains_key(t))).collect();
            let Some(first) = reads.first() else { continue };
            if out.iter().any(|d| d.range == first.finding.site) {
                continue;
            }
            // The conditions matter when another way does not read there
            // before a wait.
            let everywhere = judged.iter().all(|w| w.reads.iter().any(|r| r.finding.site == first.finding.site));
            out.push(self.diagnostic(ctx, way, &reads, &launched, everywhere));
        }
        out
    }

    fn diagnostic(&self, ctx: &KernelContext<'_>, way: &Way, reads: &[&EarlyRead], launched: &str, everywhere: bool) -> Diagnostic {
        let first = reads[0];
        let tensor = first.tensors.iter().find(|t| self.dependent.contains_key(*t)).cloned().unwrap_or_default();
        let mut related: Vec<Related> = Vec::new();
        if !everywhere {
            related.extend(way.path.iter().map(|(range, message)| Related { range: *range, message: message.clone(), file: None, event: None }));
        }
        related.extend(first.finding.steps.iter().map(|(range, message)| Related { range: *range, message: message.clone(), file: None, event: None }));
        for r in reads.iter().skip(1).take(3) {
            related.push(Related {
                range: r.finding.site,
                message: format!("`{}` is read before the wait here too", r.tensors.join("`, `")),
                file: None,
                event: None,
            });
        }
        for w in &self.waits {
            let message = if everywhere {
                "`griddepcontrol_wait()` here does not happen before the read: it is neither earlier in the reading thread nor ordered before it by a barrier".to_string()
            } else {
                "on another path the thread waits for the grid before here".to_string()
            };
            related.push(Related { range: *w, message, file: None, event: None });
        }
        let after = self.dependent[&tensor];
        if !related.iter().any(|r| r.range == after) {
            related.push(Related {
                range: after,
                message: format!("`{tensor}` is read after `griddepcontrol_wait()` here: the kernel takes it to be written by the grid before"),
                file: None,
                event: None,
            });
        }
        let mut notes = vec![
            launched.to_string(),
            format!(
                "taking `{tensor}` to be written by the grid before this one, since the kernel reads it after `griddepcontrol_wait()` (line {}); nothing in the code says which tensors that grid writes",
                ctx.line(after.start)
            ),
        ];
        notes.extend(way.assumptions.iter().cloned());
        let severity = if way.assumptions.is_empty() { RULE.default_severity } else { Severity::Warning };
        let fixes = match &first.finding.repair {
            Repair::InsertGridDependencyWaitBefore { site, stmt } => wait_before(ctx, *site, *stmt, &self.waits).into_iter().collect(),
            _ => Vec::new(),
        };
        Diagnostic {
            code: RULE.code,
            name: RULE.name,
            severity,
            message: format!("`{}`: {}", ctx.kernel.display_name(), first.finding.message),
            range: first.finding.site,
            label: "read before `griddepcontrol_wait()`".to_string(),
            related,
            notes,
            help: Some("call `cute.arch.griddepcontrol_wait()` before the first read of what the grid before writes, on every path of every thread".to_string()),
            fixes,
        }
    }
}

/// The global tensor a memory operation reads, if it reads one.
fn global_read(model: &Model, kind: &MemKind) -> Option<String> {
    let buffer = match kind {
        MemKind::Access { buffer, write: false, .. } | MemKind::AsyncRead { buffer } => *buffer,
        _ => return None,
    };
    let b = &model.buffers[buffer as usize];
    matches!(b.space, Space::Global).then(|| b.name.clone())
}

/// What makes the kernel's launch a programmatic dependent one, as a note;
/// `None` when its launch says `use_pdl=False`.
fn pdl_note(ctx: &KernelContext<'_>, launch: &Launch) -> Option<String> {
    let kernel = ctx.kernel.display_name();
    // The launch is named by its argument, not its line: a kernel is also
    // checked apart from the host code that launches it.
    match launch.use_pdl.as_deref() {
        Some("False") => None,
        Some(value) => Some(format!(
            "`{kernel}` is launched with `use_pdl={value}`: programmatic dependent launch lets it start while the grid before it in the stream still runs"
        )),
        None => Some(format!(
            "`{kernel}` calls `griddepcontrol_wait()`, which only has an effect under programmatic dependent launch (`.launch(..., use_pdl=True)`), where it may start while the grid before it in the stream still runs"
        )),
    }
}

/// A fix inserting `griddepcontrol_wait()` before the kernel statement that
/// reads at `site` (in a helper, before the kernel statement `stmt` that
/// calls it), spelled as the kernel's own wait is. A wait only makes the
/// thread slower: it cannot hang, whatever the grid before does.
fn wait_before(ctx: &KernelContext<'_>, site: TextRange, stmt: u32, waits: &[TextRange]) -> Option<Fix> {
    let kernel = ctx.kernel.range;
    let at = if kernel.start <= site.start && site.end <= kernel.end {
        *ctx.ancestors(site)?.1.last()?
    } else {
        ctx.kernel_statement(stmt)?
    };
    // The kernel's own wait, as written in this file (on one line).
    let spelled = waits
        .iter()
        .filter(|w| ctx.module.linked_file(**w).is_none())
        .map(|w| ctx.slice(*w))
        .find(|t| !t.is_empty() && !t.contains('\n'))
        .map_or_else(|| "cute.arch.griddepcontrol_wait()".to_string(), str::to_string);
    let line = ctx.full_line(at.range.start).start;
    Some(Fix {
        title: "Wait for the grid before first".to_string(),
        edits: vec![Edit { range: TextRange { start: line, end: line }, new_text: format!("{}{spelled}\n", ctx.indentation_at(at.range.start)) }],
        applicability: Applicability::Safe,
    })
}
