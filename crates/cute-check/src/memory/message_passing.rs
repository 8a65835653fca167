//! A write and a read of global memory by threads of different CTAs, which
//! hand the data over through a counter: the producer's update after the write
//! and the consumer's read of the counter before the read name the link that
//! is missing (a barrier before the update, a wait, release or acquire
//! semantics, a scope that holds both CTAs). With no such counter, a read of
//! the same known element is `missing-wait`; indices known only at run time
//! may never meet, so nothing is said of them. Program order between the
//! accesses and the counter is that of kernel statements.
//!
//! Unordered even by the control clock, the pair is `missing-release` when
//! no barrier joins the writing threads to the updating one, and
//! `missing-wait` when the consumer can read before the update (when its
//! wait is on a counter whose element is not known statically, the run took
//! every such address as one counter, and the analysis stops instead: the
//! wait may have been satisfied by updates of other elements). Ordered by
//! the control clock alone, it names the link that lacks semantics: an update
//! that does not release (`missing-release`), a read of the counter that does
//! not acquire (`missing-acquire`), or a scope that does not hold both CTAs
//! (`scope-too-narrow`).

use cute_syntax::TextRange;

use crate::model::*;

use super::event::{region_and_write, Event};
use super::{Execution, MemoryFinding, MemoryRule, Repair};

impl<'m> Execution<'m> {
    /// A write and a read of global memory by threads of different CTAs:
    /// message passing through a counter.
    pub(super) fn message_passing(&self, model: &Model, buffer: BufferIx, e1: &Event, e2: &Event) -> Option<MemoryFinding> {
        if self.cta_of(e1.actor) == self.cta_of(e2.actor) {
            return None;
        }
        let (write, read) = match (region_and_write(&e1.kind)?.1, region_and_write(&e2.kind)?.1) {
            (true, false) => (e1, e2),
            (false, true) => (e2, e1),
            _ => return None,
        };
        if !matches!(write.kind, MemKind::Access { .. }) || !matches!(read.kind, MemKind::Access { .. }) {
            return None;
        }
        let (p, q) = (write.actor, read.actor);
        // Ordered either way: the write before the read (handed over), or
        // the read before the write (the reader is done with the value
        // before the writer replaces it: a chain of CTAs each adding to
        // what the one before left, in turn).
        if write.mmo[p] <= read.mmo[p] || read.mmo[q] <= write.mmo[q] {
            return None;
        }
        let name = &model.buffers[buffer as usize].name;
        let step_write = (write.site, format!("{} writes `{name}`", self.who(model, p)));
        let step_read = (read.site, format!("{} reads `{name}`", self.who(model, q)));
        let (pc, qc) = (self.cta_of(p), self.cta_of(q));
        // Updates by the producer's CTA after the write, and reads of the
        // same counter by the consumer's CTA before the read, in program
        // order (by kernel statement: a helper's site can be anywhere).
        let updates: Vec<&Event> = self
            .events
            .iter()
            .filter(|u| matches!(u.kind, MemKind::Update { .. }) && self.cta_of(u.actor) == pc && u.stmt > write.stmt)
            .collect();
        let counter_of = |e: &Event| match e.kind {
            MemKind::Update { buffer, offset, .. } | MemKind::Observe { buffer, offset, .. } => Some((buffer, offset)),
            _ => None,
        };
        for u in &updates {
            let observes: Vec<&Event> = self
                .events
                .iter()
                .filter(|o| {
                    matches!(o.kind, MemKind::Observe { .. })
                        && self.cta_of(o.actor) == qc
                        && counter_of(o) == counter_of(u)
                        && o.stmt < read.stmt
                })
                .collect();
            // The consumer's last read of the counter before its read of
            // the data, a guarded one first: the check that should have
            // waited (not `old = load(gen)` before `if load(gen) == old:`).
            let last_of = |of: &dyn Fn(&&&Event) -> bool| observes.iter().filter(|o| of(o)).max_by_key(|o| (matches!(o.kind, MemKind::Observe { guard: Some(_), .. }), o.stmt)).copied();
            let Some(obs) = last_of(&|o| o.actor == q).or_else(|| last_of(&|_| true)) else { continue };
            let MemKind::Update { order: u_order, scope: u_scope, .. } = u.kind else { continue };
            let MemKind::Observe { order: o_order, scope: o_scope, guard: ref o_guard, .. } = obs.kind else { continue };
            let step_update = (u.site, format!("{} updates the counter ({}, scope {})", self.who(model, u.actor), u_order.name(), u_scope.name()));
            let step_obs = (obs.site, format!("{} reads the counter ({}, scope {})", self.who(model, obs.actor), o_order.name(), o_scope.name()));
            let steps = vec![step_write.clone(), step_update.clone(), step_obs.clone(), step_read.clone()];
            let write_before_update = write.ctl[p] <= u.ctl[p];
            let timed = write.ctl[p] <= read.ctl[p];
            if !write_before_update {
                return Some(MemoryFinding {
                    rule: MemoryRule::MissingRelease,
                    site: u.site,
                    message: format!(
                        "this update publishes `{name}`, but the writes of {} are not ordered before it: no barrier joins the writing threads to the releasing one",
                        self.who(model, p)
                    ),
                    steps,
                    repair: Repair::InsertBarrierBefore { site: u.site, stmt: u.stmt },
                });
            }
            if !timed {
                let once = o_guard.as_ref().is_none_or(|g| !g.spin);
                // A branch on what the thread's own addition found (`if
                // atomic_add(done, 1) == n - 1:`): its target counts the
                // additions up to and including it.
                let picked_by_count = o_guard.as_ref().and_then(|g| g.target).filter(|_| self.is_read_modify_write(obs.site));
                let message = if let Some(count) = picked_by_count {
                    format!(
                        "the thread that takes this branch can read `{name}` before {} has published it: the branch is taken by the addition that brings the counter to {count}, which is not the last one",
                        self.who(model, p)
                    )
                } else if once {
                    format!("the consumer reads the counter once and goes on to read `{name}` whatever it saw; it must wait until the counter reaches its target")
                } else if obs.actor != q && obs.ctl[obs.actor] > read.ctl[obs.actor] {
                    format!("{} reads `{name}` without a barrier after the wait on the counter", self.who(model, q))
                } else if counter_of(u).is_some_and(|(_, offset)| offset.is_none()) {
                    // The counter's element is not known statically: the
                    // updates that satisfied the wait may be those of other
                    // elements, which the run took as one counter.
                    self.pair_not_known.borrow_mut().get_or_insert_with(|| {
                        format!(
                            "whether the wait on `{}` can end before {} has published `{name}` depends on which element of it an address not known statically names",
                            model.buffers[counter_of(u).map_or(buffer, |(b, _)| b) as usize].name,
                            self.who(model, p)
                        )
                    });
                    return None;
                } else {
                    format!("the wait on the counter can end before {} has published `{name}`: its threshold is reached by fewer updates than the consumer reads", self.who(model, p))
                };
                return Some(MemoryFinding { rule: MemoryRule::MissingWait, site: obs.site, message, steps, repair: Repair::None });
            }
            // Ordered in time through the counter, but not in memory.
            let released = u_order.releases() || self.fence_before(u);
            if !released {
                return Some(MemoryFinding {
                    rule: MemoryRule::MissingRelease,
                    site: u.site,
                    message: format!("this update of the counter is {}: it does not order the writes of `{name}` before it for the consumer", u_order.name()),
                    steps,
                    repair: Repair::SetSem { call: u.site, sem: self.sem_adding(u.site, "release") },
                });
            }
            if !o_order.acquires() && !self.fence_after(obs) {
                return Some(MemoryFinding {
                    rule: MemoryRule::MissingAcquire,
                    site: obs.site,
                    message: format!("this read of the counter is {}: the reads of `{name}` after it are not ordered after the producer's writes", o_order.name()),
                    steps,
                    repair: Repair::SetSem { call: obs.site, sem: self.sem_adding(obs.site, "acquire") },
                });
            }
            let needed = if pc / self.cluster_ctas == qc / self.cluster_ctas { Scope::Cluster } else { Scope::Gpu };
            if u_order.releases() && u_scope < needed {
                return Some(MemoryFinding {
                    rule: MemoryRule::ScopeTooNarrow,
                    site: u.site,
                    message: format!(
                        "this release has scope `{}`, which does not contain the consumer in CTA {qc} (the producer is in CTA {pc}); the smallest scope holding both is `{}`",
                        u_scope.name(),
                        needed.name()
                    ),
                    steps,
                    repair: Repair::SetScope { call: u.site, scope: needed },
                });
            }
            if o_scope < needed {
                return Some(MemoryFinding {
                    rule: MemoryRule::ScopeTooNarrow,
                    site: obs.site,
                    message: format!(
                        "this acquire has scope `{}`, which does not contain the producer in CTA {pc}; the smallest scope holding both is `{}`",
                        o_scope.name(),
                        needed.name()
                    ),
                    steps,
                    repair: Repair::SetScope { call: obs.site, scope: needed },
                });
            }
        }
        // No counter the consumer waits on follows the write: the read can
        // run before it. Said only of the same known element (indices known
        // only at run time may well never meet).
        let (written, _) = region_and_write(&write.kind)?;
        let (read_region, _) = region_and_write(&read.kind)?;
        let same_element = matches!((&written.element, &read_region.element), (Element::At(a), Element::At(b)) if a == b);
        if same_element && write.ctl[p] > read.ctl[p] {
            return Some(MemoryFinding {
                rule: MemoryRule::MissingWait,
                site: read.site,
                message: format!(
                    "{} reads `{name}`, which {} writes, without waiting for an update that follows the write",
                    self.who(model, q),
                    self.who(model, p)
                ),
                steps: vec![
                    step_write,
                    step_read,
                    (read.site, format!("no wait of {} observes an update made after the write", self.who(model, q))),
                ],
                repair: Repair::None,
            });
        }
        None
    }

    /// Whether the call at `site` both updates a counter and reads it
    /// (an atomic whose result is read: `atomic_add(...) == n - 1`).
    fn is_read_modify_write(&self, site: TextRange) -> bool {
        let at_site = |update: bool| self.events.iter().any(|e| e.site == site && matches!(e.kind, MemKind::Update { .. }) == update);
        at_site(true) && at_site(false)
    }

    /// The semantics a repair gives the call at `site`: `sem`, or
    /// `acq_rel` for an atomic whose result is also read (`if
    /// atomic_add(...) == n - 1:`), which must both release and acquire.
    fn sem_adding(&self, site: TextRange, sem: &'static str) -> &'static str {
        if self.is_read_modify_write(site) {
            "acq_rel"
        } else {
            sem
        }
    }

    /// Whether the thread of update `u` ran a `fence.acq_rel` before it.
    fn fence_before(&self, u: &Event) -> bool {
        self.actors[u.actor].mem[..u.index].iter().any(|m| matches!(m.kind, MemKind::Fence { .. }))
    }

    /// Whether the thread of read `o` runs a `fence.acq_rel` after it.
    fn fence_after(&self, o: &Event) -> bool {
        self.actors[o.actor].mem[o.index..].iter().any(|m| matches!(m.kind, MemKind::Fence { .. }))
    }
}
