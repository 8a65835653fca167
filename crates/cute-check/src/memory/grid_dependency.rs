//! Reads of global memory before the thread knows the grids its launch
//! depends on have completed (programmatic dependent launch).
//!
//! A kernel launched with programmatic dependent launch may start while the
//! grid before it in the stream still runs; `griddepcontrol.wait` is what
//! holds a thread until that grid has completed and its memory is visible.
//! A read of a global tensor is covered when a `griddepcontrol_wait`
//! happens before it: the reading thread's own, earlier in its program, or
//! another thread's that a synchronization orders before the read (one
//! elected thread waits, then a CTA barrier). The control clock decides:
//! the wait makes the previous grid's memory visible to the whole grid, so
//! ordering the read after it is enough, whatever the semantics of the edge.
//! A converged warp waits through lane 0; a lane that later reads on its own
//! (in a branch that splits the warp) has waited with it when the wait
//! comes first in the warp's program (`warp_waited_before`).
//!
//! Reads are the generic loads of a global buffer (an element, a
//! `cute.copy` from it) and the global source of a TMA load
//! (`MemKind::AsyncRead`). Each read site not covered in some thread is
//! one finding, with the first thread that makes it. Which of these reads
//! matter (which tensors the previous grid writes) is not the model's to
//! say: the caller decides, and this module names every one.

use crate::model::*;

use super::event::Event;
use super::{Execution, MemoryFinding, MemoryRule, Repair};

impl<'m> Execution<'m> {
    /// The reads of global memory that no `griddepcontrol_wait` happens
    /// before, one per site, in the order they ran. Nothing when the model
    /// has no global read.
    pub(super) fn reads_before_grid_dependency(&self, model: &Model) -> Vec<MemoryFinding> {
        let waits: Vec<&Event> = self.events.iter().filter(|e| matches!(e.kind, MemKind::GridDependencyWait)).collect();
        let mut out: Vec<MemoryFinding> = Vec::new();
        for e in &self.events {
            let (buffer, tma) = match &e.kind {
                MemKind::Access { buffer, write: false, .. } => (*buffer, false),
                MemKind::AsyncRead { buffer } => (*buffer, true),
                _ => continue,
            };
            if !matches!(model.buffers[buffer as usize].space, Space::Global) {
                continue;
            }
            if waits.iter().any(|w| w.ctl[w.actor] <= e.ctl[w.actor] || self.warp_waited_before(w, e)) {
                continue;
            }
            if out.iter().any(|f| f.site == e.site) {
                continue;
            }
            let (cta, thread) = self.actors[e.actor].thread;
            let name = &model.buffers[buffer as usize].name;
            let how = if tma { "a TMA load reads" } else { "reads" };
            out.push(MemoryFinding {
                rule: MemoryRule::ReadBeforeGridDependency,
                site: e.site,
                message: format!("`{name}` is read before `griddepcontrol_wait()`: the grid before this one may still be writing it"),
                steps: vec![(
                    e.site,
                    format!("thread {thread} of CTA {cta} {how} global `{name}` with no `griddepcontrol_wait()` before it, in its own program or ordered before it"),
                )],
                repair: Repair::InsertGridDependencyWaitBefore { site: e.site, stmt: e.stmt },
            });
        }
        out
    }

    /// Whether `w`, a wait lane 0 made for its converged warp, comes before
    /// `e`, an access of another lane of that warp acting on its own (in a
    /// branch that splits the warp). The lane meets its warp only at the
    /// warp's converged operations, which may not come between the two: the
    /// wait is before when it is at an earlier converged operation, or at
    /// the same one and at an earlier kernel statement.
    fn warp_waited_before(&self, w: &Event, e: &Event) -> bool {
        if self.actors[e.actor].leader != Some(w.actor) {
            return false;
        }
        let (Some(wait), Some(read)) = (self.actors[w.actor].mem.get(w.index), self.actors[e.actor].mem.get(e.index)) else {
            return false;
        };
        wait.converged && (wait.warp_point < read.warp_point || (wait.warp_point == read.warp_point && wait.stmt <= read.stmt))
    }
}
