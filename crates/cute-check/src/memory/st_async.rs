//! A store by `st.async` (`store_async_dsmem`) into a peer CTA's shared memory
//! and a generic access of the same buffer. PTX performs `st.async` in the
//! generic proxy, so no proxy fence is asked for; but it is asynchronous: it
//! lands after its thread has gone on, and only the completion of its bytes on
//! the peer's mbarrier (a release at cluster scope) orders it before anything.
//!
//! - An access that happens before the store's issue is an ordinary pair of
//!   generic accesses (`shared`): ordered by the memory clock, or a race
//!   (`dsmem-race` across CTAs), or ordered by timing through a release too
//!   narrow (`scope-too-narrow`). This is the writer knowing the buffer is
//!   free: a cluster barrier, or an mbarrier the peer arrives on after its
//!   reads, between the peer's last access and the next store.
//! - An access after a wait that the store's bytes completed is ordered.
//! - Otherwise the two are concurrent: a read before any wait of the reader on
//!   the store's barrier is `read-before-wait`; a read after such a wait (of
//!   the data of an earlier phase, while the next store lands: a writer that
//!   did not wait for the buffer to be free, or a read hoisted above the wait
//!   of a later round), or a write, is `dsmem-race`, reported at the store.

use crate::model::*;

use super::event::{region_and_write, Event};
use super::{Execution, MemoryFinding, MemoryRule, Repair};

impl<'m> Execution<'m> {
    /// A store by `st.async` (`copy`) and a generic access of its buffer.
    pub(super) fn st_async_vs_generic(&self, model: &Model, buffer: BufferIx, copy: &Event, access: &Event) -> Option<MemoryFinding> {
        let id = copy.async_id?;
        let MemKind::AsyncCopy { barrier: Some(bar), .. } = copy.kind else { return None };
        let (_, access_writes) = region_and_write(&access.kind)?;
        // Landed, and ordered through a wait on the phase its bytes completed.
        if access.ctl[id] >= 1 {
            return None;
        }
        let t = access.actor;
        let issue = &self.issues[id - self.actors.len()].1;
        let Space::Shared { cta: owner } = model.buffers[buffer as usize].space else { return None };
        if access.ctl[t] <= issue[t] {
            // Before the issue: two generic accesses, the store's at its issue.
            return self.shared_pair(model, buffer, owner, access, copy);
        }
        let name = &model.buffers[buffer as usize].name;
        let issuer = copy.actor;
        let store = format!("the `st.async` store of {} into `{name}` of CTA {owner}", self.who(model, issuer));
        let step_copy = (copy.site, format!("{} issues `store_async_dsmem` into `{name}` of CTA {owner}; it lands later, on its own", self.who(model, issuer)));
        // The waits on the store's barrier the reader passed before its
        // read: none, and the read is one of the data the store brings,
        // made before the wait that would order it.
        let actor = &self.actors[t];
        let after = actor.mem.get(access.index).map_or(0, |m| m.after as usize);
        let waited = actor.ops.get(..after).is_some_and(|ops| ops.iter().any(|o| matches!(o.kind, OpKind::Wait { bar: b, .. } if b == bar)));
        if !access_writes && !waited {
            return Some(MemoryFinding {
                rule: MemoryRule::ReadBeforeWait,
                site: access.site,
                message: format!(
                    "{} reads `{name}`, which {store} fills, without a completed wait on the barrier that store's bytes complete",
                    self.who(model, t)
                ),
                steps: vec![step_copy, (access.site, format!("{} reads `{name}` before any wait observes the store's completion", self.who(model, t)))],
                repair: self.first_wait_after(access, copy.site, bar),
            });
        }
        let access_what = if access_writes { "writes" } else { "still reads" };
        Some(MemoryFinding {
            rule: MemoryRule::DsmemRace,
            site: copy.site,
            message: format!(
                "{store} may land while {} {access_what} it: nothing tells the writer that the buffer is free (a cluster barrier, or an mbarrier the peer arrives on once done with it, before the store), nor orders the access after the wait the store's bytes complete",
                self.who(model, t)
            ),
            steps: vec![
                (access.site, format!("{} {access_what} `{name}`", self.who(model, t))),
                (copy.site, format!("{} issues `store_async_dsmem` into `{name}` of CTA {owner}, unordered with the access above", self.who(model, issuer))),
            ],
            repair: Repair::None,
        })
    }

    /// The repair of a read made before the reader ever waited on `bar`,
    /// the barrier the store's bytes complete: the reader's first wait on
    /// it, later, moved up to before the read.
    fn first_wait_after(&self, access: &Event, copy: cute_syntax::TextRange, bar: BarrierIx) -> Repair {
        let actor = &self.actors[access.actor];
        let after = actor.mem.get(access.index).map_or(0, |m| m.after as usize);
        let later = actor.ops.get(after..).and_then(|ops| ops.iter().find(|o| matches!(o.kind, OpKind::Wait { bar: b, .. } if b == bar)));
        match later {
            Some(wait) => Repair::InsertWaitBefore { site: access.site, stmt: access.stmt, copy, phase: 0, later: Some(wait.site), earlier: None },
            None => Repair::None,
        }
    }

}
