//! One memory operation of one thread, recorded as an event: fences, the
//! transaction bytes an arrive announces, async copies (each a clock of its
//! own, whose bytes complete a phase of its barrier), MMAs on tensor memory
//! (each a clock of its own, which the thread's next `tcgen05.commit` hands
//! to the phase it arrives on), counter updates, reads
//! of counters (a spin loop goes on once the value satisfies it) and
//! accesses. A read of a counter that does not wait is taken to see no update,
//! which a schedule where the consumer runs first allows.
//!
//! The phase a TMA load's bytes complete, and so the threads its clock
//! reaches, is the one announced by the issuing thread's
//! `arrive_and_expect_tx` (else the phase in progress). A branch on an
//! atomic's result (`if atomic_add(ctr, 1, ...) == n - 1:`, the last CTA to
//! arrive) is taken once every other update is in, and acquires those
//! updates if the atomic's semantics do.
//!
//! An addition to a counter at a known element draws a ticket, the value
//! before it; a counter whose address is computed from a ticket
//! (`flags.iterator + ticket - 1`) is the element that ticket names, each
//! CTA its own (`resolve_ticket`). A thread that uses a ticket it has not
//! drawn, or one whose value is not known, makes the analysis stop: which
//! element it touches is not known.

use rustc_hash::FxHashMap as HashMap;
use std::rc::Rc;

use crate::model::*;

use super::clock::{join, same_except, Clock, Stamp};
use super::event::Event;
use super::step::BarrierRun;
use super::Execution;

pub(super) struct UpdateRec {
    pub(super) actor: usize,
    pub(super) ctl: Clock,
    pub(super) mmo: Clock,
    /// The release scope, if the update releases.
    pub(super) release: Option<Scope>,
}

pub(super) struct CounterRun {
    pub(super) value: Option<i64>,
    pub(super) updates: Vec<UpdateRec>,
    /// Updates the model performs on this counter in total.
    pub(super) total_updates: usize,
}

impl<'m> Execution<'m> {
    pub(super) fn mem_step(
        &mut self,
        a: usize,
        m: MemOp,
        _model: &Model,
        barriers: &mut [BarrierRun],
        counters: &mut HashMap<(BufferIx, Option<i64>), CounterRun>,
        next_async: &mut usize,
    ) -> bool {
        let mut async_id = None;
        let mut m = m;
        self.resolve_ticket(a, &mut m, counters);
        match &m.kind {
            MemKind::ExpectTx { barrier, arrives: true, .. } => self.actors[a].expect_next_arrive = Some(*barrier),
            // Bytes alone: the phase they belong to is the next arrive's.
            MemKind::ExpectTx { arrives: false, .. } | MemKind::CopyTx { .. } => {}
            MemKind::ArriveRelease { scope } => self.actors[a].next_arrive_release = Some(*scope),
            MemKind::Fence { scope } => {
                let actor = &mut self.actors[a];
                actor.fence = Some((*scope, actor.mmo.clone()));
                // A fence after a relaxed read of a counter acquires what
                // the read saw.
                for (clock, _) in std::mem::take(&mut actor.pending_acquire) {
                    join(&mut actor.mmo, &clock);
                }
            }
            MemKind::AsyncCopy { write, barrier, .. } => {
                let id = *next_async;
                *next_async += 1;
                async_id = Some(id);
                let actor = &mut self.actors[a];
                actor.ctl[a] += 1;
                actor.mmo[a] += 1;
                self.issues.push((a, actor.ctl.clone()));
                self.copy_phases.push(None);
                if !*write {
                    actor.uncommitted_stores.push(id);
                }
                if let (true, Some(bar)) = (*write, barrier) {
                    // The copy's bytes complete a phase of its barrier: the
                    // announced one, else the phase in progress.
                    let mut ctl = actor.ctl.clone();
                    let mut mmo = actor.mmo.clone();
                    ctl[id] = 1;
                    mmo[id] = 1;
                    let b = &mut barriers[*bar as usize];
                    let target = actor.open_expects.iter().rev().find(|(eb, _)| eb == bar).map_or(b.phase, |(_, phase)| *phase);
                    *self.copy_phases.last_mut().expect("pushed above") = Some(target);
                    if target == b.phase {
                        join(&mut b.ctl, &ctl);
                        join(&mut b.mmo, &mmo);
                    } else if let Some(done) = b.completed.get_mut(target as usize) {
                        // Copy on write: events stamped with the phase's
                        // clocks keep what they saw.
                        join(Rc::make_mut(&mut done.0), &ctl);
                        join(Rc::make_mut(&mut done.1), &mmo);
                    }
                }
            }
            MemKind::Update { buffer, offset, update, order, scope, drawn, .. } => {
                // The ticket this addition draws must agree with how the
                // way decided the thread's test of it: it waits for that.
                if let Some((cmp, k)) = drawn {
                    if !counters.get(&(*buffer, *offset)).and_then(|c| c.value).is_some_and(|v| cmp.holds(v, *k)) {
                        return false;
                    }
                }
                let actor = &mut self.actors[a];
                actor.ctl[a] += 1;
                actor.mmo[a] += 1;
                let (release, mmo) = match (order.releases(), &actor.fence) {
                    (true, _) => (Some(*scope), actor.mmo.clone()),
                    (false, Some((s, clock))) => (Some(*s), clock.clone()),
                    (false, None) => (None, actor.mmo.clone()),
                };
                let c = counters.get_mut(&(*buffer, *offset)).expect("counted before the run");
                // An addition to a counter at a known element draws a
                // ticket: its value before.
                if let (Update::Add(_), Some(_)) = (update, offset) {
                    actor.ticket = Some(c.value);
                }
                c.value = match (c.value, update) {
                    (Some(v), Update::Add(d)) => Some(v + d),
                    (_, Update::Set(v)) => Some(*v),
                    _ => None,
                };
                c.updates.push(UpdateRec { actor: a, ctl: actor.ctl.clone(), mmo, release });
            }
            MemKind::Observe { buffer, offset, order, scope, guard, .. } => {
                if let Some(guard) = guard {
                    let Some(c) = counters.get(&(*buffer, *offset)) else {
                        // Nobody updates it: the guard holds at the initial
                        // value or never.
                        if !guard.target.is_some_and(|t| guard.exit_when.holds(0, t)) && self.unmodelled_pass != Some(a) {
                            return false;
                        }
                        return self.record(a, m, None);
                    };
                    let all_done = c.updates.len() >= c.total_updates;
                    let holds = match (c.value, guard.target) {
                        (Some(v), Some(t)) => guard.exit_when.holds(v, t),
                        // A branch on a value compared with one not known
                        // (`if load(gen) == old:`) is taken on whatever the
                        // read sees: it waits for nothing, as a single check.
                        (_, None) if !guard.spin => true,
                        _ => all_done,
                    };
                    if !holds && self.unmodelled_pass != Some(a) {
                        return false;
                    }
                    let cta = self.actors[a].thread.0;
                    let acquires = order.acquires();
                    let mut edges = Vec::new();
                    for u in &c.updates {
                        let other = self.actors[u.actor].thread.0;
                        let released = u.release.is_some_and(|s| self.scope_contains(s, other, cta));
                        let in_scope = self.scope_contains(*scope, cta, other);
                        edges.push((u.ctl.clone(), u.mmo.clone(), released && in_scope));
                    }
                    let actor = &mut self.actors[a];
                    for (ctl, mmo, ordered) in edges {
                        join(&mut actor.ctl, &ctl);
                        if ordered && acquires {
                            join(&mut actor.mmo, &mmo);
                        } else if ordered {
                            actor.pending_acquire.push((mmo, m.site));
                        }
                    }
                }
                let actor = &mut self.actors[a];
                actor.ctl[a] += 1;
                actor.mmo[a] += 1;
            }
            // An MMA on tensor memory is done when a later commit of the
            // thread arrives: a clock entry of its own, which that commit
            // hands to the phase it arrives on.
            MemKind::TmemAccess { mma: true, .. } => {
                let id = *next_async;
                *next_async += 1;
                async_id = Some(id);
                let actor = &mut self.actors[a];
                actor.ctl[a] += 1;
                actor.mmo[a] += 1;
                actor.mmas.push(id);
                // Clock entries past the threads' are numbered in issue order.
                self.issues.push((a, actor.ctl.clone()));
            }
            // `tcgen05.commit`: the arrive that follows is made once the
            // thread's MMAs are done, so the phase it arrives on carries
            // them (the phase in progress: the arrive comes next).
            MemKind::Tcgen05Commit { barrier } => {
                let actor = &self.actors[a];
                if !actor.mmas.is_empty() {
                    let b = &mut barriers[*barrier as usize];
                    for &id in &actor.mmas {
                        b.ctl[id] = b.ctl[id].max(1);
                        b.mmo[id] = b.mmo[id].max(1);
                    }
                }
            }
            MemKind::Access { .. }
            | MemKind::AsyncRead { .. }
            | MemKind::GridDependencyWait
            | MemKind::ProxyFence
            | MemKind::TmemAccess { .. }
            | MemKind::TmemWait { .. }
            | MemKind::TmemAlloc
            | MemKind::TmemFree
            | MemKind::TmemRetrieve => {
                let actor = &mut self.actors[a];
                actor.ctl[a] += 1;
                actor.mmo[a] += 1;
            }
            MemKind::BulkCommit => {
                let actor = &mut self.actors[a];
                let group = std::mem::take(&mut actor.uncommitted_stores);
                if !group.is_empty() {
                    actor.store_groups.push_back(group);
                }
            }
            MemKind::BulkWait { pending } => {
                // What the thread does from here on (and what it hands
                // over) is ordered after the reads of every store it
                // committed: those of the groups older than the newest
                // `pending` are done, and the rest are taken as done too. A
                // staged epilogue cycles through as many buffers as it leaves
                // groups in flight, and which buffer a later write hits
                // depends on indices and trip counts the analysis knows only
                // in part. The groups left stay in flight for the thread's
                // end (`proxy`'s `stores_in_flight_at_exit`).
                let actor = &mut self.actors[a];
                for &id in actor.store_groups.iter().flatten() {
                    actor.ctl[id] = actor.ctl[id].max(1);
                    actor.mmo[id] = actor.mmo[id].max(1);
                }
                while actor.store_groups.len() > *pending as usize {
                    actor.store_groups.pop_front();
                }
                actor.ctl[a] += 1;
                actor.mmo[a] += 1;
            }
            // A meeting point of the warp, taken in `step`.
            MemKind::WarpSync | MemKind::LaneSync { .. } => {}
        }
        self.record(a, m, async_id)
    }

    /// An address computed from a ticket (`flags + ticket - 1`) is the
    /// element the thread's ticket makes it, in this run: its own, not one
    /// counter every CTA shares. Its counter is made on first use, to be
    /// waited on (when what it waits for is not known) for every update
    /// whose address is computed from a ticket. A thread that has drawn no
    /// ticket, or one whose value is not known, touches an element the
    /// analysis cannot name: the run says so (`not_known`), and the access
    /// is taken as one of an element not known, for the run to end.
    fn resolve_ticket(&mut self, a: usize, m: &mut MemOp, counters: &mut HashMap<(BufferIx, Option<i64>), CounterRun>) {
        let update = matches!(m.kind, MemKind::Update { .. });
        let (MemKind::Update { buffer, offset, ticket, .. } | MemKind::Observe { buffer, offset, ticket, .. }) = &mut m.kind else { return };
        let Some(delta) = ticket.take() else { return };
        match self.actors[a].ticket {
            Some(Some(t)) => {
                *offset = Some(t + delta);
                let total_updates = self.ticket_updates.get(buffer).copied().unwrap_or(0);
                if update || total_updates > 0 {
                    counters.entry((*buffer, *offset)).or_insert(CounterRun { value: Some(0), updates: Vec::new(), total_updates });
                }
            }
            drawn => {
                let why = if drawn.is_some() { "a ticket whose value the analysis does not know" } else { "a ticket its thread has not drawn" };
                self.not_known.get_or_insert_with(|| format!("an address of a synchronization variable is computed from {why}, so which element it is is not known"));
                if update {
                    counters.entry((*buffer, None)).or_insert(CounterRun { value: Some(0), updates: Vec::new(), total_updates: 0 }).total_updates += 1;
                }
            }
        }
    }

    fn record(&mut self, a: usize, m: MemOp, async_id: Option<usize>) -> bool {
        let actor = &mut self.actors[a];
        let index = actor.next_mem;
        actor.next_mem += 1;
        // Between two synchronizations only the thread's own entry moves:
        // its events share the rest.
        let shared = actor.stamp_base.as_ref().is_some_and(|(bc, bm)| same_except(bc, &actor.ctl, a) && same_except(bm, &actor.mmo, a));
        if !shared {
            actor.stamp_base = Some((Rc::from(&actor.ctl[..]), Rc::from(&actor.mmo[..])));
        }
        let (c, m_base) = actor.stamp_base.clone().expect("set above");
        let ctl = Stamp { base: c, own: a, value: actor.ctl[a] };
        let mmo = Stamp { base: m_base, own: a, value: actor.mmo[a] };
        self.events.push(Event { actor: a, index, kind: m.kind, site: m.site, stmt: m.stmt, branches: m.branches, ctl, mmo, async_id });
        true
    }
}
