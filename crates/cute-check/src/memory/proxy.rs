//! An async copy (a TMA load or store, in the async proxy) and a generic access
//! of the same shared memory. An access before the copy's issue needs a proxy
//! fence of the accessing thread before the barrier that orders it
//! (`missing-proxy-fence`, or `fence-after-sync` when the fence follows the
//! barrier); an access after the issue of a TMA load needs a completed wait on
//! its barrier (`read-before-wait`, `smem-race`); a write after the issue of a
//! TMA store needs a bulk wait of the issuing thread that covers the store's
//! group (`bulk-group-in-flight`), which a thread must also have made before
//! it ends.
//!
//! The hand-back needs the fence whatever carries it: a CTA or named barrier,
//! or an mbarrier arrive such as a pipeline's `consumer_release`, which the
//! `cutlass.pipeline` classes run without a fence of their own. Barriers order
//! memory within one proxy; only `fence.proxy.async` by the reading thread
//! orders its generic reads before the TMA load that refills the stage (the
//! PTX memory model, and the races persistent kernels were seen to hit).
//! Operand reads of an MMA (`wgmma`, `tcgen05.mma`, through descriptors) are
//! async themselves and are not recorded as generic accesses, so they need no
//! fence; `ldmatrix` and copies into registers are generic reads and do.

use crate::model::*;

use super::event::{accessed_buffer, region_and_write, Event};
use super::{Execution, MemoryFinding, MemoryRule, Repair};

impl<'m> Execution<'m> {
    /// An async copy `copy` and a generic access `access` of the same
    /// shared memory.
    pub(super) fn async_vs_generic(&self, model: &Model, buffer: BufferIx, copy: &Event, access: &Event) -> Option<MemoryFinding> {
        let id = copy.async_id?;
        let MemKind::AsyncCopy { write: copy_writes, by, .. } = copy.kind else { return None };
        if by == AsyncOp::StAsync {
            return self.st_async_vs_generic(model, buffer, copy, access);
        }
        let (_, access_writes) = region_and_write(&access.kind)?;
        let name = &model.buffers[buffer as usize].name;
        let t = access.actor;
        let issue = &self.issues[id - self.actors.len()].1;
        let issuer = copy.actor;
        let copy_what = match (by, copy_writes) {
            (AsyncOp::ClcQuery, _) => format!("the cluster launch control query that writes its response into `{name}`"),
            (AsyncOp::Tma, true) => format!("the TMA copy into `{name}`"),
            (AsyncOp::Tma, false) => format!("the TMA store from `{name}`"),
            (AsyncOp::StAsync, _) => return None,
        };
        let access_what = if access_writes { format!("writes `{name}`") } else { format!("reads `{name}`") };
        // The copy's writes are visible: ordered through its barrier; or
        // the store's reads are done: a bulk wait covered its group.
        if access.ctl[id] >= 1 {
            return None;
        }
        let step_access = (access.site, format!("{} {access_what} (generic proxy)", self.who(model, t)));
        let step_copy = (copy.site, format!("{} issues {copy_what} (async proxy)", self.who(model, issuer)));
        if access.ctl[t] <= issue[t] {
            // The access precedes the issue: a proxy fence of the accessing
            // thread must sit between the access and the barrier.
            // A fence that lane 0 runs alone (elected) covers its own
            // accesses, not those it records for its whole converged warp:
            // each lane's fence orders that lane's accesses only.
            let mem = &self.actors[t].mem;
            let covers = |f: &Event| mem[f.index].converged || !mem[access.index].converged;
            let fences: Vec<&Event> = self
                .events
                .iter()
                .filter(|f| f.actor == t && f.index > access.index && matches!(f.kind, MemKind::ProxyFence) && covers(f))
                .collect();
            if fences.iter().any(|f| f.ctl[t] <= issue[t]) {
                return None;
            }
            // A fence after the barrier is late only when it serves no
            // other generic accesses of the thread: none after the barrier
            // and before it (a tile written for a TMA store once the stage
            // read is handed back), and none right after it, before the
            // thread's next synchronization (a fence put before the reads
            // of a stage rather than after them). Moving such a fence would
            // unorder those accesses: the read is missing a fence of its own.
            let access_after = mem[access.index].after;
            let generic = |m: &MemOp| matches!(m.kind, MemKind::Access { .. });
            let late = fences.first().filter(|late| {
                let fence_after = mem[late.index].after;
                !mem[access.index + 1..late.index].iter().any(|m| m.after > access_after && generic(m))
                    && !mem[late.index + 1..].iter().take_while(|m| m.after == fence_after).any(generic)
            });
            if let Some(late) = late {
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
            let message = if copy_writes && !access_writes && barrier.is_some() {
                // The direction people miss: a stage read by the threads and
                // handed back for the next TMA load.
                format!(
                    "{} reads `{name}` (generic proxy) and hands it back here for {copy_what} (async proxy) to overwrite, with no proxy fence (`fence_view_async_shared()`) after its reads: barriers order one proxy only, so the async write can land before the reads are done",
                    self.who(model, t)
                )
            } else {
                format!(
                    "{} {access_what} with generic accesses that reach {copy_what} without a proxy fence (`fence_proxy(\"async.shared\", space=\"cta\")`) in the accessing threads",
                    self.who(model, t)
                )
            };
            return Some(MemoryFinding {
                rule: MemoryRule::MissingProxyFence,
                site: anchor,
                message,
                steps: vec![
                    step_access,
                    (anchor, "no proxy fence between the access and this point, which orders it before the copy".to_string()),
                    step_copy,
                ],
                repair: Repair::InsertProxyFenceBefore { site: anchor },
            });
        }
        let MemKind::AsyncCopy { barrier, .. } = copy.kind else { return None };
        if !copy_writes && access_writes {
            // A TMA store reads its shared memory until a bulk wait of the
            // issuing thread covers its group (`BulkWait` joins the store's
            // clock): a write that wait does not happen before may change
            // what the store sends.
            return Some(MemoryFinding {
                rule: MemoryRule::BulkGroupInFlight,
                site: access.site,
                message: format!(
                    "{} writes `{name}` while {copy_what} may still be reading it: no `cp_async_bulk_wait_group(k, read=True)` of {} that covers the store's bulk group happens before the write",
                    self.who(model, t),
                    self.who(model, issuer)
                ),
                steps: vec![
                    step_copy,
                    (access.site, format!("{} writes `{name}`; the store's bulk group may still be in flight", self.who(model, t))),
                ],
                // The writer is the issuer, or learns of a synchronization
                // the issuer made after the store (which a wait right
                // after the store's commit then precedes); else a barrier
                // must carry the wait to it.
                // Any writer of the buffer after the store is (the writer
                // reported may be the issuer while other warps write too).
                repair: Repair::WaitForStoreGroup {
                    copy: copy.site,
                    barrier: self.events.iter().any(|e| {
                        e.actor != issuer
                            && e.ctl[id] < 1
                            && e.ctl[e.actor] > issue[e.actor]
                            && e.ctl[issuer] <= copy.ctl[issuer]
                            && accessed_buffer(&e.kind) == Some(buffer)
                            && region_and_write(&e.kind).is_some_and(|(_, w)| w)
                    }),
                },
            });
        }
        if !copy_writes || barrier.is_none() {
            // A load whose barrier is not known completes where the
            // analysis cannot see: accesses after its issue are not judged.
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
            repair: self.wait_before(access, copy.site, barrier, id),
        })
    }

    /// The repair of a read before the wait of the copy numbered `id`
    /// (among the actors' clocks) on `barrier`: the wait for the phase the
    /// copy completes, with the reading thread's own waits around the read
    /// to spell it.
    fn wait_before(&self, access: &Event, copy: cute_syntax::TextRange, barrier: Option<BarrierIx>, id: usize) -> Repair {
        let (Some(bar), Some(Some(phase))) = (barrier, self.copy_phases.get(id - self.actors.len())) else { return Repair::None };
        let parity = (phase % 2) as u8;
        let actor = &self.actors[access.actor];
        let Some(after) = actor.mem.get(access.index).map(|m| m.after as usize) else { return Repair::None };
        let later = actor.ops.get(after..).and_then(|ops| {
            ops.iter().find_map(|o| match o.kind {
                OpKind::Wait { bar: b, parity: p } if b == bar => Some((o.site, p)),
                _ => None,
            })
        });
        let earlier = actor.ops.get(..after).and_then(|ops| {
            ops.iter().rev().find_map(|o| match o.kind {
                OpKind::Wait { parity: p, .. } => Some((o.site, p)),
                _ => None,
            })
        });
        Repair::InsertWaitBefore {
            site: access.site,
            stmt: access.stmt,
            copy,
            phase: *phase,
            later: later.filter(|(_, p)| *p == parity).map(|(site, _)| site),
            earlier,
        }
    }

    /// The first synchronization operation of actor `a` after its memory
    /// operation at `index`.
    fn next_sync_after(&self, a: usize, index: usize) -> Option<&Op> {
        let actor = &self.actors[a];
        let after = actor.mem.get(index)?.after as usize;
        actor.ops.get(after)
    }
}

impl Execution<'_> {
    /// TMA stores a thread leaves in flight when it ends: never committed
    /// to a group, or in a group no bulk wait covered. The CTA's shared
    /// memory goes to the next CTA once this one exits, while the store may
    /// still be reading it.
    pub(super) fn stores_in_flight_at_exit(&self, model: &Model) -> Vec<MemoryFinding> {
        let mut out = Vec::new();
        for (a, actor) in self.actors.iter().enumerate() {
            let in_flight = actor.uncommitted_stores.iter().chain(actor.store_groups.iter().flatten());
            for &id in in_flight {
                let Some(copy) = self.events.iter().find(|e| e.async_id == Some(id)) else { continue };
                let MemKind::AsyncCopy { buffer, .. } = copy.kind else { continue };
                let name = &model.buffers[buffer as usize].name;
                let committed = !actor.uncommitted_stores.contains(&id);
                let why = if committed {
                    "no `cp_async_bulk_wait_group(0, read=True)` after its commit waits for it"
                } else {
                    "it is never committed to a bulk group (`cp_async_bulk_commit_group`), so no wait can cover it"
                };
                out.push(MemoryFinding {
                    rule: MemoryRule::BulkGroupInFlight,
                    site: copy.site,
                    message: format!("{} ends with the TMA store from `{name}` still reading shared memory: {why}", self.who(model, a)),
                    steps: vec![(copy.site, format!("{} issues the TMA store from `{name}` (async proxy)", self.who(model, a)))],
                    repair: Repair::None,
                });
            }
        }
        out
    }
}
