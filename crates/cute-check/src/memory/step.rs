//! One step of one thread: the next item of its programs (a memory operation
//! that is due, a meeting with its warp, or its next synchronization
//! operation), and the barriers' phases. An arrive releases at its scope (or
//! what an earlier fence wide enough ordered), a wait acquires the phase it
//! passes, and a phase completes once its arrivals and the transaction bytes
//! announced for it are in. The first init of a barrier counts: init hazards
//! are the explorer's to report.

use rustc_hash::FxHashMap as HashMap;
use std::rc::Rc;

use crate::model::*;

use super::actor::Blocked;
use super::clock::{join, same_except, Clock};
use super::mem_ops::CounterRun;
use super::Execution;

pub(super) struct BarrierRun {
    pub(super) expected: Option<u32>,
    pub(super) arrived: u32,
    pub(super) phase: u32,
    pub(super) open_expects: u32,
    pub(super) ctl: Clock,
    pub(super) mmo: Clock,
    /// Clocks of completed phases, by phase number. Shared: the threads
    /// that pass a phase's wait mostly know nothing else, and their memory
    /// events then stamp with these very clocks (see [`Stamp`](super::clock::Stamp)).
    pub(super) completed: Vec<(Rc<[u32]>, Rc<[u32]>)>,
}

impl<'m> Execution<'m> {
    /// One step of actor `a`; false when it is blocked or done.
    pub(super) fn step(
        &mut self,
        a: usize,
        model: &Model,
        barriers: &mut [BarrierRun],
        counters: &mut HashMap<(BufferIx, Option<i64>), CounterRun>,
        next_async: &mut usize,
    ) -> bool {
        self.actors[a].blocked = None;
        let actor = &self.actors[a];
        let mem_due = actor.mem.get(actor.next_mem).filter(|m| m.after as usize <= actor.next_op);
        if let Some(m) = mem_due {
            if !self.meet_warp(a, m.warp_point) {
                return false;
            }
            if let MemKind::LaneSync { mask } = m.kind {
                return self.meet_lanes(a, mask);
            }
            if matches!(m.kind, MemKind::WarpSync) {
                // Like a converged operation, without one: lane 0 gathers
                // its lanes, and the lanes after it start from what it knows.
                if !self.gather_lanes(a, m.warp_point) {
                    return false;
                }
                let actor = &mut self.actors[a];
                actor.next_mem += 1;
                let snapshot = (Rc::from(&actor.ctl[..]), Rc::from(&actor.mmo[..]));
                actor.snapshots.push(snapshot);
                return true;
            }
            return self.mem_step(a, m.clone(), model, barriers, counters, next_async);
        }
        let Some(op) = actor.ops.get(actor.next_op).cloned() else {
            // Closing its announcements may complete a phase (see below).
            let closed = self.close_expect(a, barriers);
            self.actors[a].blocked = Some(Blocked::Done);
            return closed;
        };
        let point = actor.points.get(actor.next_op).copied();
        if let Some(p) = point {
            if !self.meet_warp(a, p.before) {
                return false;
            }
            if p.converged && !self.gather_lanes(a, p.before) {
                return false;
            }
        }
        // The copies announced by an arrive are those the thread issues
        // before it next waits. Closing them may complete a phase that
        // other threads wait for: that is progress even when this wait
        // then blocks, and the schedule must hear of it.
        let closed = matches!(op.kind, OpKind::Wait { .. }) && self.close_expect(a, barriers);
        match op.kind {
            OpKind::Init { bar, count } => {
                // Init hazards (repeated inits, arrivals before the init)
                // are the explorer's to report; here the first init counts
                // and arrivals that came before it are kept.
                let b = &mut barriers[bar as usize];
                if b.expected.is_none() {
                    b.expected = Some(count);
                    Self::maybe_complete(b);
                }
            }
            OpKind::Arrive { bar, count } => {
                let cta = self.actors[a].thread.0;
                let b_cta = model.barriers[bar as usize].cta;
                let release = match self.actors[a].next_arrive_release.take() {
                    Some(r) => r,
                    None => Some(match model.barriers[bar as usize].kind {
                        BarrierKind::ClusterBarrier => Scope::Cluster,
                        _ => Scope::Cta,
                    }),
                };
                let reaches = release.is_some_and(|s| self.scope_contains(s, cta, b_cta))
                    || matches!(model.barriers[bar as usize].kind, BarrierKind::CtaBarrier | BarrierKind::NamedBarrier(_));
                // An earlier fence wide enough makes the arrive release what
                // preceded the fence.
                let fenced = self.actors[a].fence.as_ref().filter(|(s, _)| self.scope_contains(*s, cta, b_cta)).map(|(_, c)| c.clone());
                let expecting = self.actors[a].expect_next_arrive.take() == Some(bar);
                let actor = &mut self.actors[a];
                actor.ctl[a] += 1;
                actor.mmo[a] += 1;
                let b = &mut barriers[bar as usize];
                join(&mut b.ctl, &actor.ctl);
                if reaches {
                    join(&mut b.mmo, &actor.mmo);
                } else if let Some(clock) = fenced {
                    join(&mut b.mmo, &clock);
                }
                if expecting {
                    b.open_expects += 1;
                    actor.open_expects.push((bar, b.phase));
                }
                b.arrived += count;
                Self::maybe_complete(b);
            }
            OpKind::Wait { bar, parity } => {
                let b = &barriers[bar as usize];
                if b.phase % 2 == parity as u32 {
                    self.actors[a].blocked = Some(Blocked::Wait { bar, phase: b.phase });
                    return closed;
                }
                let actor = &mut self.actors[a];
                if let Some((ctl, mmo)) = b.phase.checked_sub(1).and_then(|p| b.completed.get(p as usize)) {
                    join(&mut actor.ctl, ctl);
                    join(&mut actor.mmo, mmo);
                    if same_except(ctl, &actor.ctl, a) && same_except(mmo, &actor.mmo, a) {
                        actor.stamp_base = Some((ctl.clone(), mmo.clone()));
                    }
                }
                actor.ctl[a] += 1;
                actor.mmo[a] += 1;
            }
        }
        let actor = &mut self.actors[a];
        actor.next_op += 1;
        if point.is_some_and(|p| p.converged) {
            let snapshot = (Rc::from(&actor.ctl[..]), Rc::from(&actor.mmo[..]));
            actor.snapshots.push(snapshot);
        }
        true
    }

    /// Closes the announcements of actor `a`; whether there were any.
    fn close_expect(&mut self, a: usize, barriers: &mut [BarrierRun]) -> bool {
        let open = std::mem::take(&mut self.actors[a].open_expects);
        for &(bar, phase) in &open {
            let b = &mut barriers[bar as usize];
            if b.phase == phase {
                b.open_expects = b.open_expects.saturating_sub(1);
                Self::maybe_complete(b);
            }
        }
        !open.is_empty()
    }

    fn maybe_complete(b: &mut BarrierRun) {
        while let Some(expected) = b.expected {
            if b.arrived < expected || b.open_expects > 0 || expected == 0 {
                return;
            }
            b.arrived -= expected;
            b.completed.push((Rc::from(&b.ctl[..]), Rc::from(&b.mmo[..])));
            b.phase += 1;
        }
    }
}
