//! The run of the whole model: one actor per thread, a clock entry per thread
//! and per async copy or MMA on tensor memory, then one step at a time in a fixed schedule (a spin
//! loop as soon as it can exit, otherwise the thread that has synchronized
//! least). One schedule suffices on the assumption that which phase an
//! arrival belongs to does not depend on it, as in a protocol free of
//! deadlocks and of vacuous waits.
//!
//! The least advanced thread goes first so that no thread laps another and
//! lends a barrier phase the arrivals of a later round. A spin loop runs as
//! soon as it can exit so that what it then reads is ordered after as little
//! as possible. A thread blocked on a wait, or a lane waiting for its warp's
//! lane 0, is not retried until that barrier's phase or lane 0's progress
//! changes; the schedule is the same as with retries.
//!
//! In a grid larger than the CTAs modelled (`GridShape::stands_in`), a
//! spin on global memory that no modelled thread can satisfy once every
//! thread waits is taken as satisfied by the CTAs not modelled (a grid
//! barrier's other arrivals, the CTA with the ticket before), after every
//! update the modelled threads made, when the whole grid can satisfy it (a
//! count of additions scaled to the grid reaches the target; a flag, set
//! as the modelled CTAs set theirs); whether those CTAs can run at all is
//! `crate::progress`'s question. A branch on a counter's value (`if
//! atomic_add(done, 1) == n - 1:`, the last CTA to arrive) is a read that
//! waits in the way where it is taken, and is satisfied alike: there the
//! CTAs not modelled arrived before the modelled one.
//!
//! Tickets: the modelled threads draw the first tickets of a counter (an
//! addition returns the value before it), and an address computed from a
//! ticket is the element of the one its thread drew (`mem_ops`,
//! `resolve_ticket`): a flag per ticket, not one counter every CTA shares.

use std::collections::BTreeSet;

use rustc_hash::FxHashMap as HashMap;

use crate::model::*;

use super::actor::{Actor, Blocked};
use super::mem_ops::CounterRun;
use super::step::BarrierRun;
use super::unreachable::Stopped;
use super::{out_of_time, Execution};

/// At most this many threads and async copies are tracked; larger models
/// are not analysed for memory ordering.
const MAX_CLOCKS: usize = 4096;

impl<'m> Execution<'m> {
    pub(super) fn run(model: &'m Model, deadline: std::time::Instant) -> Result<Execution<'m>, Stopped> {
        let mut memory: HashMap<(u32, u32), &'m ThreadMemory> = HashMap::default();
        for t in &model.memory {
            memory.insert(t.thread, t);
        }
        let mut programs: Vec<((u32, u32), &'m [Op], &'m [MemOp], &'m [WarpPoint])> = Vec::new();
        for g in &model.groups {
            for &t in &g.threads {
                let (mem, points) = memory.remove(&t).map_or((&[][..], &[][..]), |m| (&m.ops[..], &m.op_points[..]));
                programs.push((t, &g.ops, mem, points));
            }
        }
        let mut rest: Vec<_> = memory.into_iter().collect();
        rest.sort_by_key(|(t, _)| *t);
        programs.extend(rest.into_iter().map(|(t, m)| (t, &[][..], &m.ops[..], &m.op_points[..])));
        let asyncs: usize = programs
            .iter()
            .map(|(_, _, m, _)| m.iter().filter(|o| matches!(o.kind, MemKind::AsyncCopy { .. } | MemKind::TmemAccess { mma: true, .. })).count())
            .sum();
        let width = programs.len() + asyncs;
        if width > MAX_CLOCKS {
            return Err(format!("more than {MAX_CLOCKS} threads and copies access memory, too many for the memory-ordering analysis").into());
        }
        let leaders: HashMap<(u32, u32), usize> =
            programs.iter().enumerate().filter(|(_, p)| p.0 .1 % 32 == 0).map(|(i, p)| ((p.0 .0, p.0 .1 / 32), i)).collect();
        let mut actors: Vec<Actor> = programs
            .into_iter()
            .map(|(thread, ops, mem, points)| Actor {
                thread,
                ops,
                mem,
                points,
                leader: if thread.1 % 32 != 0 { leaders.get(&(thread.0, thread.1 / 32)).copied() } else { None },
                lanes: Vec::new(),
                snapshots: Vec::new(),
                joined_point: 0,
                next_op: 0,
                next_mem: 0,
                ctl: vec![0; width],
                mmo: vec![0; width],
                expect_next_arrive: None,
                open_expects: Vec::new(),
                next_arrive_release: None,
                fence: None,
                pending_acquire: Vec::new(),
                stamp_base: None,
                blocked: None,
                lane_syncs: Vec::new(),
                uncommitted_stores: Vec::new(),
                store_groups: Default::default(),
                mmas: Vec::new(),
                ticket: None,
            })
            .collect();
        for i in 0..actors.len() {
            if let Some(l) = actors[i].leader {
                actors[l].lanes.push(i);
            }
        }
        let mut exec = Execution {
            actors,
            events: Vec::new(),
            issues: Vec::new(),
            copy_phases: Vec::new(),
            cluster_ctas: model.cluster_ctas.max(1),
            unmodelled_pass: None,
            ticket_updates: HashMap::default(),
            not_known: None,
            pair_not_known: Default::default(),
        };
        let mut barriers: Vec<BarrierRun> = model
            .barriers
            .iter()
            .map(|b| BarrierRun {
                expected: b.preset_count,
                arrived: 0,
                phase: 0,
                open_expects: 0,
                ctl: vec![0; width],
                mmo: vec![0; width],
                completed: Vec::new(),
            })
            .collect();
        let mut counters: HashMap<(BufferIx, Option<i64>), CounterRun> = HashMap::default();
        for t in &model.memory {
            for op in &t.ops {
                if let MemKind::Update { buffer, ticket: Some(_), .. } = op.kind {
                    // Its element is known once its thread has drawn a
                    // ticket: counted per buffer (see `mem_ops`).
                    *exec.ticket_updates.entry(buffer).or_default() += 1;
                } else if let MemKind::Update { buffer, offset, .. } = op.kind {
                    counters
                        .entry((buffer, offset))
                        .or_insert(CounterRun { value: Some(0), updates: Vec::new(), total_updates: 0 })
                        .total_updates += 1;
                }
            }
        }
        let mut next_async = exec.actors.len();
        // One step at a time. A spin loop goes on as soon as it can, so it
        // exits on the first value that satisfies it (what it then reads is
        // ordered after as little as possible). Otherwise the thread that
        // has synchronized least moves: threads stay in step, so no thread
        // laps another and lends a barrier phase arrivals of a later round.
        //
        // `order` holds (synchronization operations done, thread) of every
        // thread, `spinners` the threads whose next item is a spin loop;
        // both change only when their thread steps.
        let n = exec.actors.len();
        let mut order: BTreeSet<(usize, usize)> = (0..n).map(|a| (0, a)).collect();
        let mut placed = vec![0usize; n];
        let mut spinners: BTreeSet<usize> = (0..n).filter(|&a| exec.next_spins(a)).collect();
        let adds = if model.grid.stands_in.is_some() { CounterAdds::of(model) } else { HashMap::default() };
        for step in 0u64.. {
            if step % 4096 == 0 && std::time::Instant::now() > deadline {
                return Err(out_of_time().into());
            }
            let spun = spinners.iter().copied().find(|&a| exec.step(a, model, &mut barriers, &mut counters, &mut next_async));
            // A spin on global memory in a grid larger than the CTAs
            // modelled waits for the CTAs that are not too (the rest of a
            // grid barrier's arrivals, the producers between those
            // modelled): it is taken as satisfied as soon as what the
            // modelled threads added so far and what the others add would
            // satisfy it. As soon as: a threshold the grid reaches before
            // every producer modelled has published is one the consumer
            // can pass early (`missing-wait`).
            let spun = spun.or_else(|| {
                model.grid.stands_in?;
                let a = spinners.iter().copied().find(|&a| exec.spins_on_global(a, model) && exec.grid_would_satisfy(a, model, &counters, &adds, true))?;
                exec.unmodelled_pass = Some(a);
                let stepped = exec.step(a, model, &mut barriers, &mut counters, &mut next_async);
                exec.unmodelled_pass = None;
                stepped.then_some(a)
            });
            let a = match spun {
                Some(a) => a,
                None => {
                    let found = order.iter().map(|&(_, a)| a).find(|&a| {
                        !exec.still_blocked(a, &barriers) && exec.step(a, model, &mut barriers, &mut counters, &mut next_async)
                    });
                    // Every thread waits: a spin on an element no modelled
                    // CTA updates (the flag of a CTA not modelled, the
                    // ticket before) is taken as satisfied now, after every
                    // update the modelled threads made.
                    let found = found.or_else(|| {
                        model.grid.stands_in?;
                        let a = spinners.iter().copied().find(|&a| exec.spins_on_global(a, model) && exec.grid_would_satisfy(a, model, &counters, &adds, false))?;
                        exec.unmodelled_pass = Some(a);
                        let stepped = exec.step(a, model, &mut barriers, &mut counters, &mut next_async);
                        exec.unmodelled_pass = None;
                        stepped.then_some(a)
                    });
                    let Some(a) = found else { break };
                    // Its memory operations that no other thread can observe
                    // the timing of run on at once (the order above is about
                    // synchronization, and re-sorting per access is what
                    // costs).
                    while exec.next_is_local(a) && exec.step(a, model, &mut barriers, &mut counters, &mut next_async) {}
                    a
                }
            };
            order.remove(&(placed[a], a));
            placed[a] = exec.actors[a].next_op;
            order.insert((placed[a], a));
            if exec.next_spins(a) {
                spinners.insert(a);
            } else {
                spinners.remove(&a);
            }
        }
        if let Some(why) = exec.not_known.take() {
            return Err(why.into());
        }
        // The explorer found no deadlock, so every thread can finish; a run
        // that leaves one stuck has judged part of the kernel only.
        let stuck: Vec<usize> = (0..exec.actors.len()).filter(|&a| !matches!(exec.actors[a].blocked, Some(Blocked::Done))).collect();
        if let Some(&first) = stuck.first() {
            // A wait the whole grid never satisfies: a hang, or a branch no
            // run takes (the threads blocked on a barrier behind it are
            // stuck too).
            // What the modelled threads add, gathered once (the schedule
            // gathered it already for a grid larger than the CTAs modelled).
            let adds = if model.grid.stands_in.is_some() { adds } else { CounterAdds::of(model) };
            if let Some(stopped) = stuck.iter().find_map(|&a| exec.never_satisfied(a, model, &counters, &adds)) {
                return Err(stopped);
            }
            let stuck = &exec.actors[first];
            let who = describe_threads(&[stuck.thread], model.ctas);
            // A read of a counter that waits for (or branches on) a value
            // the modelled threads never produce: most often a count of
            // CTAs of which only some are modelled.
            let waits_on = stuck.mem.get(stuck.next_mem).and_then(|m| match m.kind {
                MemKind::Observe { buffer, guard: Some(_), .. } => Some(&model.buffers[buffer as usize].name),
                _ => None,
            });
            return Err(Stopped::NotChecked(match waits_on {
                Some(counter) => format!(
                    "the one schedule the analysis runs the threads in left {who} waiting for a value of `{counter}` that the modelled threads never produce"
                ),
                None => format!(
                    "the one schedule the analysis runs the threads in left {who} stuck after {} of its {} synchronization operations",
                    stuck.next_op,
                    stuck.ops.len()
                ),
            }));
        }
        Ok(exec)
    }

    /// Whether the actor's next item is a memory operation whose timing no
    /// other thread can tell: not a counter update or a guarded read.
    fn next_is_local(&self, a: usize) -> bool {
        let actor = &self.actors[a];
        actor.mem.get(actor.next_mem).filter(|m| m.after as usize <= actor.next_op).is_some_and(|m| {
            !matches!(m.kind, MemKind::Update { .. } | MemKind::Observe { guard: Some(_), .. })
        })
    }

    /// Whether the actor's next item is a spin on a counter in global
    /// memory, or a branch on one (`if atomic_add(done, 1) == n - 1:`, the
    /// last CTA to arrive: in a way where the branch is taken, the CTAs not
    /// modelled arrived before the modelled one that takes it).
    fn spins_on_global(&self, a: usize, model: &Model) -> bool {
        let actor = &self.actors[a];
        actor.mem.get(actor.next_mem).filter(|m| m.after as usize <= actor.next_op).is_some_and(|m| {
            matches!(m.kind, MemKind::Observe { buffer, guard: Some(_), .. }
                if matches!(model.buffers[buffer as usize].space, Space::Global))
        })
    }

    /// Whether the CTAs not modelled can bring the counter the actor spins
    /// on to what it waits for: it is one the modelled threads update, and
    /// a count made only of additions, scaled from the CTAs modelled to the
    /// whole grid, satisfies the wait (a count no grid reaches stays a wait
    /// the analysis cannot get past). A flag set to a value, or an element
    /// of an array of flags the modelled CTAs set elsewhere, is taken to be
    /// set by the CTA waited for, as the modelled ones set theirs: only once
    /// every modelled thread waits, not while `counting` (as soon as what
    /// the modelled threads added so far would do, the count of additions
    /// alone is judged).
    fn grid_would_satisfy(
        &self,
        a: usize,
        model: &Model,
        counters: &HashMap<(BufferIx, Option<i64>), CounterRun>,
        adds: &HashMap<(BufferIx, Option<i64>), CounterAdds>,
        counting: bool,
    ) -> bool {
        let actor = &self.actors[a];
        let Some(MemKind::Observe { buffer, offset, guard: Some(guard), .. }) = actor.mem.get(actor.next_mem).map(|m| &m.kind) else { return false };
        let Some(c) = counters.get(&(*buffer, *offset)).filter(|c| c.total_updates > 0) else {
            // An element no modelled CTA updates, of an array they update
            // elsewhere (a flag per CTA, a flag per ticket): that of a CTA
            // not modelled. Not while `counting` what the modelled threads
            // added so far.
            return !counting && (counters.keys().any(|(b, _)| b == buffer) || self.ticket_updates.contains_key(buffer));
        };
        let added = adds.get(&(*buffer, *offset));
        match (added, model.grid.ctas(), c.value, guard.target) {
            (Some(c @ CounterAdds { only_adds: true, .. }), Some(grid), Some(v), Some(t)) => c.per_cta().is_some_and(|per_cta| {
                let not_modelled = i64::try_from(grid).unwrap_or(i64::MAX).saturating_sub(i64::from(model.ctas));
                guard.exit_when.holds(v.saturating_add(per_cta.saturating_mul(not_modelled)), t)
            }),
            _ => !counting,
        }
    }

    /// Whether the actor's next item is a guarded read of a counter.
    fn next_spins(&self, a: usize) -> bool {
        let actor = &self.actors[a];
        actor
            .mem
            .get(actor.next_mem)
            .filter(|m| m.after as usize <= actor.next_op)
            .is_some_and(|m| matches!(m.kind, MemKind::Observe { guard: Some(_), .. }))
    }

    /// Whether retrying actor `a` would fail again (see [`Blocked`]).
    fn still_blocked(&self, a: usize, barriers: &[BarrierRun]) -> bool {
        match self.actors[a].blocked {
            None => false,
            Some(Blocked::Done) => true,
            Some(Blocked::Wait { bar, phase }) => barriers[bar as usize].phase == phase,
            Some(Blocked::Leader { leader, point }) => self.actors[leader].snapshots.len() < point as usize,
        }
    }
}

/// What the modelled threads do to a counter, for the CTAs not modelled to
/// do alike (see `Execution::grid_would_satisfy`): whether every update is
/// an addition, the CTAs that update it, and how much they add in all. The
/// CTAs not modelled are the ones between those modelled, alike: each adds
/// as much as a modelled CTA that adds does (a role many CTAs share is
/// modelled by at least two of them).
pub(super) struct CounterAdds {
    only_adds: bool,
    /// Every addition adds a positive amount: the counter only grows.
    positive: bool,
    ctas: BTreeSet<u32>,
    added: i64,
}

impl CounterAdds {
    /// Per counter (buffer and element) the modelled threads update.
    pub(super) fn of(model: &Model) -> HashMap<(BufferIx, Option<i64>), CounterAdds> {
        let mut out: HashMap<(BufferIx, Option<i64>), CounterAdds> = HashMap::default();
        for t in &model.memory {
            for o in &t.ops {
                if let MemKind::Update { buffer, offset, ticket: None, update, .. } = &o.kind {
                    let c = out.entry((*buffer, *offset)).or_insert(CounterAdds { only_adds: true, positive: true, ctas: BTreeSet::new(), added: 0 });
                    c.ctas.insert(t.thread.0);
                    match update {
                        Update::Add(k) => {
                            c.added += k;
                            c.positive &= *k > 0;
                        }
                        _ => c.only_adds = false,
                    }
                }
            }
        }
        out
    }

    /// Whether the counter only grows: every update adds a positive amount.
    pub(super) fn only_positive_adds(&self) -> bool {
        self.only_adds && self.positive
    }

    /// What each CTA not modelled adds, as the modelled CTAs that add do;
    /// `None` where fewer than two modelled CTAs add (a role of one CTA,
    /// which the CTAs between need not share).
    pub(super) fn per_cta(&self) -> Option<i64> {
        (self.ctas.len() >= 2).then(|| self.added / self.ctas.len() as i64)
    }
}
