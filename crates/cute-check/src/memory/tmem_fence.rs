//! Tensor memory written by `tcgen05` stores and handed to another warp
//! without `fence_view_async_tmem_store()` (`missing-tmem-fence`).
//!
//! A `tcgen05.st` (a `cute.copy` from registers into tensor memory with a
//! `tcgen05.St*` atom, the primitives' `tcgen05_st`) is asynchronous in its
//! own thread: it is complete only once the thread's `tcgen05.wait::st`
//! (`fence_view_async_tmem_store()`) returns. A barrier, an mbarrier arrive or
//! a pipeline's commit after the store orders the thread's execution, not the
//! store: the MMA warp (a `tcgen05.mma` reading the operand from tensor
//! memory, or accumulating into it) or another warp's `tcgen05.ld` that the
//! hand-off lets go on can see the columns before the store lands. The
//! package's docstring of `fence_view_async_tmem_op` spells the order: store,
//! fence, commit.
//!
//! The finding: a store of thread `t`, and a use of its CTA's tensor memory by
//! another warp that happens after it (by the control clock: a hand-off of
//! `t` after the store reaches the user), with no store fence of `t` after the
//! store that the hand-off comes after. It goes on the first arrive of `t`
//! after the store (a commit, an arrive, a barrier): where the fence belongs.
//! Tensor memory is one region per CTA here (its columns are not followed),
//! but its lanes are: a `tcgen05` load or store reaches only the quarter of
//! the lanes of its warp's rank in its warpgroup (warp `w`: lanes
//! `32 * (w % 4)` onwards), an MMA every lane. So a later use counts when it
//! is an MMA or a load or store of a warp of the same rank; a thread that stores and hands nothing over to a
//! warp using tensor memory after it is not reported. A `tcgen05.cp` from
//! shared memory is not a store: the issuing thread's later `tcgen05`
//! operations follow it in order, and a `tcgen05.commit` tracks it.
//!
//! Loads are not judged. The package's docstring also asks for
//! `fence_view_async_tmem_load()` after `tcgen05.ld` and before the release
//! that lets the MMA overwrite the columns, and the PTX the DSL emits has no
//! `tcgen05.wait::ld` but the fence's (not even before the loaded registers
//! are used, which the assembler orders), yet its own accumulator epilogue
//! (`cutlass.utils.gemm.sm100`) and nearly half of the public Blackwell
//! kernels release the accumulator after loading it without the fence. A load
//! is taken as complete by its thread's next hand-off, as `tmem-lifetime`
//! takes every copy as done once its thread goes on.

use std::collections::{BTreeMap, BTreeSet};

use cute_syntax::TextRange;

use crate::model::*;

use super::event::Event;
use super::{Execution, MemoryFinding, MemoryRule, Repair};

impl<'m> Execution<'m> {
    /// The stores of tensor memory handed over without a store fence, one
    /// finding per hand-off.
    pub(super) fn tmem_fences(&self, model: &Model) -> Vec<MemoryFinding> {
        let mut out = Vec::new();
        let mut seen: BTreeSet<TextRange> = BTreeSet::new();
        let warp = |a: usize| (self.actors[a].thread.0, self.actors[a].thread.1 / 32);
        let uses: Vec<&Event> = self.events.iter().filter(|e| matches!(e.kind, MemKind::TmemAccess { .. })).collect();
        // Each thread's store fences, in its program order.
        let mut fences_of: BTreeMap<usize, Vec<&Event>> = BTreeMap::new();
        for f in self.events.iter().filter(|f| matches!(f.kind, MemKind::TmemWait { st: true, .. })) {
            fences_of.entry(f.actor).or_default().push(f);
        }
        for s in self.events.iter().filter(|e| matches!(e.kind, MemKind::TmemAccess { mma: false, write: true, register: true })) {
            let t = s.actor;
            let fences: Vec<&Event> = fences_of.get(&t).map(|v| v.iter().copied().filter(|f| f.index > s.index).collect()).unwrap_or_default();
            // A use by another warp of the CTA that the store's thread
            // handed over to after the store, and after no fence of its.
            // A load or store reaches only its warp's quarter of the lanes
            // (warp `w`: lanes from `32 * (w % 4)`), an MMA all of them.
            let same_lanes = |u: &Event| matches!(u.kind, MemKind::TmemAccess { mma: true, .. }) || warp(u.actor).1 % 4 == warp(t).1 % 4;
            let unfenced = uses.iter().find(|u| {
                warp(u.actor) != warp(t)
                    && warp(u.actor).0 == warp(t).0
                    && same_lanes(u)
                    && u.ctl[t] >= s.ctl[t]
                    && !fences.iter().any(|f| f.ctl[t] <= u.ctl[t])
            });
            let Some(u) = unfenced else { continue };
            let hand_off = self.next_arrive_after(t, s.index);
            let anchor = hand_off.map(|o| o.site).unwrap_or(u.site);
            if !seen.insert(anchor) {
                continue;
            }
            out.push(self.unfenced_store(model, s, u, anchor, fences.first().copied()));
        }
        out
    }

    /// The first arrive (an mbarrier arrive, a commit, a barrier) of actor
    /// `a` after its memory operation `index`: what hands what came before
    /// to other threads.
    fn next_arrive_after(&self, a: usize, index: usize) -> Option<&Op> {
        let actor = &self.actors[a];
        let after = actor.mem.get(index)?.after as usize;
        actor.ops.get(after..)?.iter().find(|o| matches!(o.kind, OpKind::Arrive { .. }))
    }

    fn unfenced_store(&self, model: &Model, s: &Event, u: &Event, anchor: TextRange, late: Option<&Event>) -> MemoryFinding {
        let (writer, user) = (self.who(model, s.actor), self.who(model, u.actor));
        let what = match u.kind {
            MemKind::TmemAccess { mma: true, .. } => "an MMA on",
            MemKind::TmemAccess { write: true, .. } => "a copy into",
            _ => "a load from",
        };
        let late_note = match late {
            Some(f) if f.site.start > anchor.start => " (its `fence_view_async_tmem_store()` comes after the hand-off, too late to cover it)",
            _ => "",
        };
        let mut steps = vec![
            (s.site, format!("{writer} stores into tensor memory (`tcgen05.st`, asynchronous until `tcgen05.wait::st`)")),
            (anchor, format!("{writer} hands the tensor memory over here with no `fence_view_async_tmem_store()` since the store")),
        ];
        if let Some(f) = late.filter(|f| f.site.start > anchor.start) {
            steps.push((f.site, "the store fence comes only after the hand-off".to_string()));
        }
        steps.push((u.site, format!("{user} issues {what} tensor memory after the hand-off, while the store may still be landing")));
        MemoryFinding {
            rule: MemoryRule::MissingTmemFence,
            site: anchor,
            message: format!(
                "{writer} writes tensor memory with a `tcgen05` store and hands it to {user} ({what} it) without `fence_view_async_tmem_store()` before the hand-off{late_note}: the store is asynchronous, and the commit, arrive or barrier orders the thread, not the store"
            ),
            steps,
            repair: Repair::InsertTmemStoreFenceBefore { site: anchor, after: s.site },
        }
    }
}
