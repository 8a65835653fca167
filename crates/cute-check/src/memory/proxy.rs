//! An async copy (a TMA load or store, in the async proxy) and a generic access
//! of the same shared memory. An access before the copy's issue needs a proxy
//! fence of the accessing thread before the barrier that orders it
//! (`missing-proxy-fence`, or `fence-after-sync` when the fence follows the
//! barrier); an access after the issue of a TMA load needs a completed wait on
//! its barrier (`read-before-wait`, `smem-race`). A read handed back through an
//! mbarrier arrive, as every `cutlass.pipeline` ring does, is taken as ordered;
//! the completion of a TMA store (bulk wait) is not modelled.
//!
//! Reads handed back that way are taken as ordered before the load because the
//! `cutlass.pipeline` classes run that protocol without a proxy fence. Reads
//! handed back through a CTA or named barrier still need the fence; the races
//! seen in practice have that shape. As the bulk wait is not modelled, only
//! accesses before a TMA store are judged against it.

use crate::model::*;

use super::event::{region_and_write, Event};
use super::{Execution, MemoryFinding, MemoryRule, Repair};

impl<'m> Execution<'m> {
    /// An async copy `copy` and a generic access `access` of the same
    /// shared memory.
    pub(super) fn async_vs_generic(&self, model: &Model, buffer: BufferIx, copy: &Event, access: &Event) -> Option<MemoryFinding> {
        let id = copy.async_id?;
        let MemKind::AsyncCopy { write: copy_writes, .. } = copy.kind else { return None };
        let (_, access_writes) = region_and_write(&access.kind)?;
        let name = &model.buffers[buffer as usize].name;
        let t = access.actor;
        let issue = &self.issues[id - self.actors.len()].1;
        let issuer = copy.actor;
        let copy_what = if copy_writes { format!("the TMA copy into `{name}`") } else { format!("the TMA store from `{name}`") };
        let access_what = if access_writes { format!("writes `{name}`") } else { format!("reads `{name}`") };
        // The copy's writes are visible: ordered through its barrier.
        if access.ctl[id] >= 1 {
            return None;
        }
        let step_access = (access.site, format!("{} {access_what} (generic proxy)", self.who(model, t)));
        let step_copy = (copy.site, format!("{} issues {copy_what} (async proxy)", self.who(model, issuer)));
        if access.ctl[t] <= issue[t] {
            // A read handed back through an mbarrier arrive (a pipeline's
            // consumer release) that the issuer waits on before the copy:
            // the protocol of every `cutlass.pipeline` ring, which the
            // library runs without a proxy fence. It is taken as ordered;
            // reads handed back through a CTA or named barrier still need
            // the fence (the observed races are of that shape).
            if copy_writes && !access_writes {
                if let Some(bar) = self.next_arrive_after(t, access.index) {
                    if model.barriers[bar as usize].kind == BarrierKind::Mbarrier {
                        return None;
                    }
                }
            }
            // The access precedes the issue: a proxy fence of the accessing
            // thread must sit between the access and the barrier.
            let fences: Vec<&Event> = self
                .events
                .iter()
                .filter(|f| f.actor == t && f.index > access.index && matches!(f.kind, MemKind::ProxyFence))
                .collect();
            if fences.iter().any(|f| f.ctl[t] <= issue[t]) {
                return None;
            }
            if let Some(late) = fences.first() {
                let barrier = self.next_sync_after(t, access.index).map(|o| o.site).unwrap_or(copy.site);
                return Some(MemoryFinding {
                    rule: MemoryRule::FenceAfterSync,
                    site: late.site,
                    message: format!(
                        "this proxy fence comes after the barrier that orders the accesses of {} to `{name}` before {copy_what}; a fence covers the accesses before it, and only a barrier after it carries them to the issuing thread",
                        self.who(model, t)
                    ),
                    steps: vec![
                        step_access,
                        (barrier, "the barrier orders the access before the copy, but no proxy fence precedes it".to_string()),
                        (late.site, "the proxy fence comes too late: after the barrier".to_string()),
                        step_copy,
                    ],
                    repair: Repair::MoveFenceBefore { fence: late.site, barrier },
                });
            }
            // The barrier after the access that lets the issuer go on; the
            // issuer's own access with no barrier before its copy gets the
            // fence before the copy.
            let issue_after = self.actors[issuer].mem[copy.index].after as usize;
            let access_after = self.actors[t].mem[access.index].after as usize;
            let barrier = self.next_sync_after(t, access.index).map(|o| o.site).filter(|_| t != issuer || access_after < issue_after);
            let anchor = barrier.unwrap_or(copy.site);
            return Some(MemoryFinding {
                rule: MemoryRule::MissingProxyFence,
                site: anchor,
                message: format!(
                    "{} {access_what} with generic accesses that reach {copy_what} without a proxy fence (`fence_proxy(\"async.shared\", space=\"cta\")`) in the accessing threads",
                    self.who(model, t)
                ),
                steps: vec![
                    step_access,
                    (anchor, "no proxy fence between the access and this point, which orders it before the copy".to_string()),
                    step_copy,
                ],
                repair: Repair::InsertProxyFenceBefore { site: anchor },
            });
        }
        let MemKind::AsyncCopy { barrier, .. } = copy.kind else { return None };
        if !copy_writes || barrier.is_none() {
            // The TMA store's reads end at a bulk wait, which is not
            // modelled, and a load whose barrier is not known completes
            // where the analysis cannot see: accesses after their issue are
            // not judged.
            return None;
        }
        if access_writes {
            return Some(MemoryFinding {
                rule: MemoryRule::SmemRace,
                site: access.site,
                message: format!("{} writes `{name}` while {copy_what} may still be writing it", self.who(model, t)),
                steps: vec![step_copy, step_access, (access.site, "no completed wait on the copy's barrier orders them".to_string())],
                repair: Repair::None,
            });
        }
        Some(MemoryFinding {
            rule: MemoryRule::ReadBeforeWait,
            site: access.site,
            message: format!(
                "{} reads `{name}`, which {copy_what} fills, without a completed wait on the barrier that copy signals",
                self.who(model, t)
            ),
            steps: vec![step_copy, (access.site, format!("{} reads `{name}` before any wait observes the copy's completion", self.who(model, t)))],
            repair: Repair::None,
        })
    }

    /// The first synchronization operation of actor `a` after its memory
    /// operation at `index`.
    /// The barrier of the first arrive of thread `a` after its memory
    /// operation `index`: where it hands what it did over.
    fn next_arrive_after(&self, a: usize, index: usize) -> Option<BarrierIx> {
        let actor = &self.actors[a];
        let after = actor.mem.get(index)?.after as usize;
        actor.ops.get(after..)?.iter().find_map(|o| match o.kind {
            OpKind::Arrive { bar, .. } => Some(bar),
            _ => None,
        })
    }

    fn next_sync_after(&self, a: usize, index: usize) -> Option<&Op> {
        let actor = &self.actors[a];
        let after = actor.mem.get(index)?.after as usize;
        actor.ops.get(after)
    }
}
