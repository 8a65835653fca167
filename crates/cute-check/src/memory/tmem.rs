//! The lifetime of tensor memory: its address read before the allocation
//! publishes it, freed while a thread may still use it, freed twice, or never
//! freed.
//!
//! A CTA's tensor memory is used by `tcgen05` operations: MMAs writing their
//! accumulator, copies from and into it (`MemKind::TmemAccess`). One warp
//! frees it (`MemKind::TmemFree`), and every use by every thread of the CTA
//! must be done by then: another warp's allocation may take the columns
//! right after, and an MMA still writing them corrupts it (or faults). A copy
//! is done once its thread goes on past it (what a thread does after a load
//! reads what it loaded); it is done before the free when the free's thread
//! has synchronized with it since: the copy happens before the free by the
//! control clock (a barrier or an mbarrier phase between them, whatever its
//! memory semantics). An MMA is asynchronous: it is done only when a later
//! `tcgen05.commit` of its thread arrives (`MemKind::Tcgen05Commit`), so it
//! is done before the free when the free's thread has waited, directly or
//! through others, for a phase that commit arrived on; a barrier with the
//! MMA's thread is not enough.
//!
//! The allocation writes the address of the tensor memory to shared memory,
//! and the threads read it back (`MemKind::TmemRetrieve`): a read that no
//! allocation of its CTA happens before (no `wait_for_alloc`, no barrier
//! after the allocation) reads an address not yet written, one finding on
//! the read.
//!
//! Each free with a use of its CTA not done before it is one finding, on the
//! free, with the first such use. With the allocations seen in a CTA
//! (`MemKind::TmemAlloc`), a free beyond them is a second free, and an
//! allocation no free follows is still held when the kernel exits (judged
//! only where every thread of the CTA ran to its end).
//!
//! Tensor memory is per CTA: a two-CTA MMA (`CtaGroup.TWO`) also writes the
//! peer CTA's, which is not followed here.

use std::collections::BTreeMap;

use crate::model::*;

use super::actor::Blocked;
use super::event::Event;
use super::{Execution, MemoryFinding, MemoryRule, Repair};

impl<'m> Execution<'m> {
    /// The findings on the lifetime of tensor memory, in the order the
    /// frees (or allocations) ran.
    pub(super) fn tmem_lifetime(&self, model: &Model) -> Vec<MemoryFinding> {
        let mut out: Vec<MemoryFinding> = Vec::new();
        let cta = |e: &Event| self.actors[e.actor].thread.0;
        let uses: Vec<&Event> = self.events.iter().filter(|e| matches!(e.kind, MemKind::TmemAccess { .. })).collect();
        let mut held: BTreeMap<u32, Vec<&Event>> = BTreeMap::new();
        let mut allocated: BTreeMap<u32, usize> = BTreeMap::new();
        for e in &self.events {
            match e.kind {
                MemKind::TmemAlloc => {
                    held.entry(cta(e)).or_default().push(e);
                    *allocated.entry(cta(e)).or_default() += 1;
                }
                MemKind::TmemFree => {
                    let c = cta(e);
                    // A free beyond the allocations seen: the second one.
                    if allocated.get(&c).is_some_and(|&n| n > 0) && held.get(&c).is_none_or(Vec::is_empty) {
                        if !out.iter().any(|f| f.site == e.site) {
                            out.push(MemoryFinding {
                                rule: MemoryRule::TmemLifetime,
                                site: e.site,
                                message: "tensor memory is freed twice: it was freed before, and nothing allocated it again".to_string(),
                                steps: vec![(e.site, format!("{} frees the CTA's tensor memory a second time", self.who(model, e.actor)))],
                                repair: Repair::None,
                            });
                        }
                        continue;
                    }
                    if let Some(h) = held.get_mut(&c) {
                        if !h.is_empty() {
                            h.remove(0);
                        }
                    }
                    if out.iter().any(|f| f.site == e.site) {
                        continue;
                    }
                    if let Some(u) = uses.iter().find(|u| cta(u) == c && !self.done_before(u, e)) {
                        out.push(self.freed_in_use(model, u, e));
                    }
                }
                _ => {}
            }
        }
        // An address read back before the allocation that writes it: with
        // the allocations of its CTA seen, a read that none of them happens
        // before (by the control clock: `wait_for_alloc`, a barrier, or the
        // allocating thread's own order).
        for r in self.events.iter().filter(|e| matches!(e.kind, MemKind::TmemRetrieve)) {
            let c = cta(r);
            let mut allocations = self.events.iter().filter(|a| matches!(a.kind, MemKind::TmemAlloc) && cta(a) == c).peekable();
            let Some(&first) = allocations.peek() else { continue };
            if allocations.any(|a| a.ctl[a.actor] <= r.ctl[a.actor]) || out.iter().any(|f| f.site == r.site) {
                continue;
            }
            out.push(self.read_before_allocation(model, first, r));
        }
        // Never freed: only where every thread of the CTA ran to its end (a
        // run that stopped short, on a construct the schedule does not
        // finish, has not seen the free).
        let finished = |c: u32| self.actors.iter().filter(|a| a.thread.0 == c).all(|a| matches!(a.blocked, Some(Blocked::Done)));
        for (c, allocations) in held {
            if !finished(c) {
                continue;
            }
            for a in allocations {
                if out.iter().any(|f| f.site == a.site) {
                    continue;
                }
                out.push(MemoryFinding {
                    rule: MemoryRule::TmemLifetime,
                    site: a.site,
                    message: "tensor memory allocated here is never freed: the CTA exits holding it, and the CTAs that want it next wait forever".to_string(),
                    steps: vec![(a.site, format!("{} allocates tensor memory, and no thread of its CTA frees it before the kernel exits", self.who(model, a.actor)))],
                    repair: Repair::None,
                });
            }
        }
        out
    }

    /// Whether the use `u` of tensor memory is done before the free `f`: a
    /// copy happens before it; an MMA's commit arrived on a phase the free's
    /// thread has waited for.
    fn done_before(&self, u: &Event, f: &Event) -> bool {
        match u.async_id {
            Some(id) => f.ctl[id] >= 1,
            None => u.ctl[u.actor] <= f.ctl[u.actor],
        }
    }

    fn read_before_allocation(&self, model: &Model, a: &Event, r: &Event) -> MemoryFinding {
        let (allocator, reader) = (self.who(model, a.actor), self.who(model, r.actor));
        MemoryFinding {
            rule: MemoryRule::TmemLifetime,
            site: r.site,
            message: format!("{reader} reads the address of the CTA's tensor memory before it is published: no barrier orders the allocation by {allocator}, which writes that address to shared memory, before this read"),
            steps: vec![
                (r.site, format!("{reader} reads the tensor-memory address from shared memory")),
                (a.site, format!("{allocator} allocates tensor memory and writes its address, with no barrier or `wait_for_alloc` between the two")),
            ],
            repair: Repair::None,
        }
    }

    fn freed_in_use(&self, model: &Model, u: &Event, f: &Event) -> MemoryFinding {
        let mma = matches!(u.kind, MemKind::TmemAccess { mma: true, .. });
        let what = match u.kind {
            MemKind::TmemAccess { mma: true, .. } => "an MMA writing",
            MemKind::TmemAccess { write: true, .. } => "a copy into",
            _ => "a copy from",
        };
        let (user, freer) = (self.who(model, u.actor), self.who(model, f.actor));
        // The free happened before the use: a use after the free.
        let after = f.ctl[f.actor] <= u.ctl[f.actor] && u.async_id.is_none();
        let (message, use_step) = if after {
            (
                format!("tensor memory is freed before {user} uses it ({what} it)"),
                format!("{user} issues {what} tensor memory after it is freed"),
            )
        } else if mma {
            (
                format!("tensor memory is freed while {what} it, issued by {user}, may still run: no wait for the `tcgen05.commit` after it comes before the free"),
                format!("{user} issues {what} tensor memory; it is done only when a later `tcgen05.commit` of its arrives, and the free does not wait for that"),
            )
        } else {
            (
                format!("tensor memory is freed while {user} may still use it ({what} it): no barrier orders that use before the free"),
                format!("{user} issues {what} tensor memory, with no barrier or mbarrier wait between it and the free"),
            )
        };
        MemoryFinding {
            rule: MemoryRule::TmemLifetime,
            site: f.site,
            message,
            steps: vec![(u.site, use_step), (f.site, format!("{freer} frees the CTA's tensor memory"))],
            repair: if after || mma { Repair::None } else { Repair::InsertBarrierBefore { site: f.site, stmt: f.stmt } },
        }
    }
}
