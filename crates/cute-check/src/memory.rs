//! Memory ordering: does every pair of conflicting accesses have a
//! happens-before path that the hardware honours?
//!
//! The model's threads are run once, in a fixed schedule, with two vector
//! clocks per thread:
//!
//! * the *control* clock joins along every synchronization edge (a barrier
//!   phase to the threads that pass its wait, a counter's updates to the
//!   spin loop that sees them), whatever its memory semantics;
//! * the *memory* clock joins only along edges that order memory: a release
//!   whose scope contains the other party, matched by an acquire (barrier
//!   waits acquire; a relaxed load needs a later `fence.acq_rel`).
//!
//! Asynchronous copies (TMA loads and stores) run in the async proxy, each
//! as a clock of its own: a TMA load's writes reach the threads through the
//! barrier phase its transaction bytes complete; the threads' own accesses
//! reach a later async copy only through a proxy fence in the accessing
//! thread that precedes, in happens-before, the copy's issue ("fence first,
//! barrier second").
//!
//! A pair ordered by neither clock is a race; a pair ordered by the control
//! clock alone is ordered by timing but not by the memory model, and the
//! edge that lacks semantics names the rule (missing acquire or release,
//! scope too narrow). The findings say which link is missing.
//!
//! One schedule suffices because, in a protocol free of deadlocks and of
//! vacuous waits, which phase an arrival belongs to does not depend on the
//! schedule; reads of counters that do not wait (a single check, a branch
//! on the value) are taken to see no update, which some schedule allows.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;

use cute_syntax::TextRange;

use crate::model::*;

/// The rules this analysis reports, by what is missing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemoryRule {
    FenceAfterSync,
    MissingProxyFence,
    ReadBeforeWait,
    MissingAcquire,
    MissingRelease,
    ScopeTooNarrow,
    MissingWait,
    SmemRace,
    DsmemRace,
}

/// What the quick fix of a finding edits.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Repair {
    None,
    /// Move the fence at `fence` to just before the barrier at `barrier`.
    MoveFenceBefore { fence: TextRange, barrier: TextRange },
    /// Insert `fence_proxy("async.shared", space="cta")` before `site`.
    InsertProxyFenceBefore { site: TextRange },
    /// Give the call at `call` these memory semantics.
    SetSem { call: TextRange, sem: &'static str },
    /// Give the call at `call` this scope.
    SetScope { call: TextRange, scope: Scope },
    /// Insert a CTA barrier before `site`, which the kernel statement with
    /// id `stmt` (`MemOp::stmt`) performs.
    InsertBarrierBefore { site: TextRange, stmt: u32 },
    /// Insert `sync_warp()` before `site`, which the kernel statement with
    /// id `stmt` performs, and after the access at `after`.
    InsertWarpSyncBefore { site: TextRange, stmt: u32, after: TextRange },
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MemoryFinding {
    pub rule: MemoryRule,
    /// Where the diagnostic goes (and the fix, mostly).
    pub site: TextRange,
    pub message: String,
    /// The evidence, in order: the two accesses and the missing link.
    pub steps: Vec<(TextRange, String)>,
    pub repair: Repair,
}

/// At most this many threads and async copies are tracked; larger models
/// are not analysed for memory ordering.
const MAX_CLOCKS: usize = 4096;

type Clock = Vec<u32>;

fn join(into: &mut [u32], from: &[u32]) {
    for (a, b) in into.iter_mut().zip(from) {
        *a = (*a).max(*b);
    }
}

/// One thread of the model with its program: sync ops and memory ops.
struct Actor<'m> {
    thread: (u32, u32),
    ops: &'m [Op],
    mem: &'m [MemOp],
    points: &'m [WarpPoint],
    /// Lane 0 of this lane's warp, when this is another lane.
    leader: Option<usize>,
    /// For lane 0: the other lanes of its warp that act on their own.
    lanes: Vec<usize>,
    /// For lane 0: clocks right after each converged operation of the warp.
    /// Shared with the lanes that join them, whose memory events then stamp
    /// with these clocks when they know nothing else (see [`Stamp`]).
    snapshots: Vec<(Rc<[u32]>, Rc<[u32]>)>,
    /// For other lanes: converged operations of the warp joined so far.
    joined_point: u32,
    next_op: usize,
    next_mem: usize,
    ctl: Clock,
    mmo: Clock,
    /// The barrier the next arrive announces transaction bytes on.
    expect_next_arrive: Option<BarrierIx>,
    /// (barrier, phase) whose transaction bytes this thread's copies still
    /// deliver: open until the thread next waits.
    open_expects: Vec<(BarrierIx, u32)>,
    /// Release semantics of the next arrive, when not the default.
    next_arrive_release: Option<Option<Scope>>,
    /// The thread's latest `fence.acq_rel`: its scope and the memory clock
    /// it orders before the thread's later writes and arrives.
    fence: Option<(Scope, Clock)>,
    /// Counter edges seen by relaxed reads, ordered by a later fence.
    pending_acquire: Vec<(Clock, TextRange)>,
    /// The clocks the thread's latest memory event shares (see [`Stamp`]).
    stamp_base: Option<(Rc<[u32]>, Rc<[u32]>)>,
    /// Why the thread's last step failed, while that still holds.
    blocked: Option<Blocked>,
    /// `sync_warp(mask)` meetings of its split warp it has passed, by mask.
    lane_syncs: Vec<(u32, u32)>,
}

/// What a thread that could not step waits for. Retrying it before that
/// changes fails again and changes nothing (its first attempt did what a
/// failed step does), so the schedule skips it.
#[derive(Clone, Copy)]
enum Blocked {
    /// No operation left.
    Done,
    /// A wait on `bar`, whose phase was `phase`.
    Wait { bar: BarrierIx, phase: u32 },
    /// A lane waiting for its warp's lane 0 to reach converged operation
    /// number `point`.
    Leader { leader: usize, point: u32 },
}

/// A thread's clock at one of its memory operations: a clock shared with
/// its other operations since the last time it learnt something from
/// another thread, and its own entry.
struct Stamp {
    base: Rc<[u32]>,
    own: usize,
    value: u32,
}

impl std::ops::Index<usize> for Stamp {
    type Output = u32;

    fn index(&self, i: usize) -> &u32 {
        if i == self.own {
            &self.value
        } else {
            &self.base[i]
        }
    }
}

/// Whether two clocks agree except at `own`.
fn same_except(a: &[u32], b: &[u32], own: usize) -> bool {
    a.len() == b.len() && a[..own] == b[..own] && a[own + 1..] == b[own + 1..]
}

struct BarrierRun {
    expected: Option<u32>,
    arrived: u32,
    phase: u32,
    open_expects: u32,
    ctl: Clock,
    mmo: Clock,
    /// Clocks of completed phases, by phase number. Shared: the threads
    /// that pass a phase's wait mostly know nothing else, and their memory
    /// events then stamp with these very clocks (see [`Stamp`]).
    completed: Vec<(Rc<[u32]>, Rc<[u32]>)>,
}

struct UpdateRec {
    actor: usize,
    ctl: Clock,
    mmo: Clock,
    /// The release scope, if the update releases.
    release: Option<Scope>,
}

struct CounterRun {
    value: Option<i64>,
    updates: Vec<UpdateRec>,
    /// Updates the model performs on this counter in total.
    total_updates: usize,
}

/// One memory operation as executed.
struct Event {
    actor: usize,
    /// Position in the actor's memory program.
    index: usize,
    kind: MemKind,
    site: TextRange,
    /// Its kernel statement (`MemOp::stmt`).
    stmt: u32,
    ctl: Stamp,
    mmo: Stamp,
    /// For an async copy: its own clock component.
    async_id: Option<usize>,
}

/// Memory operations (over all threads) the analysis follows at most.
const MAX_MEMORY_OPS: usize = 60_000;

/// Pairs of accesses compared at most.
const MAX_PAIRS: usize = 2_000_000;

/// Time the analysis of one model takes at most (the explorer has its own
/// budget): a model it cannot finish in time is reported, not waited on.
const MAX_TIME: std::time::Duration = std::time::Duration::from_secs(2);

fn out_of_time() -> String {
    format!("the memory-ordering analysis did not finish within {} s", MAX_TIME.as_secs())
}

/// How many models with memory operations this process has analysed (for
/// tests and benchmarks that show an edit did not analyse again).
pub static ANALYSES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Run the model once and report the accesses that are not ordered. `Err`
/// says why the analysis was not done (a model too large for it).
///
/// Source positions are only copied and compared (never shifted or
/// measured), so the result on a model whose offsets went through a map
/// that preserves their order is the result on the real model, mapped.
pub fn analyze(model: &Model) -> Result<Vec<MemoryFinding>, String> {
    if model.memory.is_empty() {
        return Ok(Vec::new());
    }
    ANALYSES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let ops: usize = model.memory.iter().map(|t| t.ops.len()).sum();
    if ops > MAX_MEMORY_OPS {
        return Err(format!(
            "its threads perform {ops} memory operations, more than the {MAX_MEMORY_OPS} the memory-ordering analysis follows"
        ));
    }
    let deadline = std::time::Instant::now() + MAX_TIME;
    let run = Execution::run(model, deadline)?;
    let mut findings = run.findings(model, deadline)?;
    findings.extend(model.memory.iter().flat_map(|t| t.lane_races.iter().filter_map(|race| lane_race(model, t, race))));
    findings.sort_by_key(|f| (f.site, f.rule));
    findings.dedup_by_key(|f| (f.site, f.rule));
    Ok(findings)
}

struct Execution<'m> {
    actors: Vec<Actor<'m>>,
    events: Vec<Event>,
    /// The actor each async copy was issued by, and its clocks at issue.
    issues: Vec<(usize, Clock)>,
    cluster_ctas: u32,
}

impl<'m> Execution<'m> {
    fn run(model: &'m Model, deadline: std::time::Instant) -> Result<Execution<'m>, String> {
        let mut memory: HashMap<(u32, u32), &'m ThreadMemory> = HashMap::new();
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
            .map(|(_, _, m, _)| m.iter().filter(|o| matches!(o.kind, MemKind::AsyncCopy { .. })).count())
            .sum();
        let width = programs.len() + asyncs;
        if width > MAX_CLOCKS {
            return Err(format!("more than {MAX_CLOCKS} threads and copies access memory, too many for the memory-ordering analysis"));
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
            })
            .collect();
        for i in 0..actors.len() {
            if let Some(l) = actors[i].leader {
                actors[l].lanes.push(i);
            }
        }
        let mut exec = Execution { actors, events: Vec::new(), issues: Vec::new(), cluster_ctas: model.cluster_ctas.max(1) };
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
        let mut counters: HashMap<(BufferIx, Option<i64>), CounterRun> = HashMap::new();
        for t in &model.memory {
            for op in &t.ops {
                if let MemKind::Update { buffer, offset, .. } = op.kind {
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
        for step in 0u64.. {
            if step % 4096 == 0 && std::time::Instant::now() > deadline {
                return Err(out_of_time());
            }
            let spun = spinners.iter().copied().find(|&a| exec.step(a, model, &mut barriers, &mut counters, &mut next_async));
            let a = match spun {
                Some(a) => a,
                None => {
                    let found = order.iter().map(|&(_, a)| a).find(|&a| {
                        !exec.still_blocked(a, &barriers) && exec.step(a, model, &mut barriers, &mut counters, &mut next_async)
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
        Ok(exec)
    }

    /// One step of actor `a`; false when it is blocked or done.
    fn step(
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
            self.close_expect(a, barriers);
            self.actors[a].blocked = Some(Blocked::Done);
            return false;
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
        // before it next waits.
        if matches!(op.kind, OpKind::Wait { .. }) {
            self.close_expect(a, barriers);
        }
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
                    return false;
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

    /// Whether the actor's next item is a memory operation whose timing no
    /// other thread can tell: not a counter update or a guarded read.
    fn next_is_local(&self, a: usize) -> bool {
        let actor = &self.actors[a];
        actor.mem.get(actor.next_mem).filter(|m| m.after as usize <= actor.next_op).is_some_and(|m| {
            !matches!(m.kind, MemKind::Update { .. } | MemKind::Observe { guard: Some(_), .. })
        })
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

    /// A lane other than lane 0 reaching an item that follows `point`
    /// converged operations of its warp: it goes on once lane 0 has done
    /// them, and knows what lane 0 knew then.
    fn meet_warp(&mut self, a: usize, point: u32) -> bool {
        let Some(l) = self.actors[a].leader else { return true };
        if point <= self.actors[a].joined_point {
            return true;
        }
        if self.actors[l].snapshots.len() < point as usize {
            self.actors[a].blocked = Some(Blocked::Leader { leader: l, point });
            return false;
        }
        let (actor, leader) = two(&mut self.actors, a, l);
        let (ctl, mmo) = &leader.snapshots[point as usize - 1];
        join(&mut actor.ctl, ctl);
        join(&mut actor.mmo, mmo);
        if same_except(ctl, &actor.ctl, a) && same_except(mmo, &actor.mmo, a) {
            actor.stamp_base = Some((ctl.clone(), mmo.clone()));
        }
        actor.joined_point = point;
        true
    }

    /// Actor `a` at a `sync_warp(mask)` of its split warp: it goes on once
    /// every lane of the mask that meets there (each that has one in its
    /// program) has come to the same one, and then they all go on knowing
    /// what any of them knew.
    fn meet_lanes(&mut self, a: usize, mask: u32) -> bool {
        let (cta, tid) = self.actors[a].thread;
        let passed = |actor: &Actor| actor.lane_syncs.iter().find(|(m, _)| *m == mask).map_or(0, |(_, n)| *n);
        let round = passed(&self.actors[a]);
        let meets = |actor: &Actor| actor.mem.iter().any(|m| m.kind == MemKind::LaneSync { mask });
        // The thread itself always meets there, in the mask or not (a lane
        // outside the mask that reaches it meets no one else): every
        // successful step moves it on.
        let group: Vec<usize> = (0..self.actors.len())
            .filter(|&b| {
                let (c, t) = self.actors[b].thread;
                b == a || (c == cta && t / 32 == tid / 32 && mask & (1 << (t % 32)) != 0 && meets(&self.actors[b]))
            })
            .collect();
        let here = |actor: &Actor| {
            passed(actor) == round && actor.mem.get(actor.next_mem).is_some_and(|m| m.kind == MemKind::LaneSync { mask })
        };
        if !group.iter().all(|&b| passed(&self.actors[b]) > round || here(&self.actors[b])) {
            return false;
        }
        let meeting: Vec<usize> = group.into_iter().filter(|&b| here(&self.actors[b])).collect();
        let width = self.actors[a].ctl.len();
        let (mut ctl, mut mmo) = (vec![0; width], vec![0; width]);
        for &b in &meeting {
            join(&mut ctl, &self.actors[b].ctl);
            join(&mut mmo, &self.actors[b].mmo);
        }
        for b in meeting {
            let actor = &mut self.actors[b];
            join(&mut actor.ctl, &ctl);
            join(&mut actor.mmo, &mmo);
            actor.next_mem += 1;
            match actor.lane_syncs.iter_mut().find(|(m, _)| *m == mask) {
                Some((_, n)) => *n += 1,
                None => actor.lane_syncs.push((mask, 1)),
            }
            actor.stamp_base = None;
        }
        true
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

    /// Lane 0 at the warp's converged operation number `point`: every other
    /// lane must have done what precedes it, and lane 0 acts for all of them.
    fn gather_lanes(&mut self, a: usize, point: u32) -> bool {
        let lanes = std::mem::take(&mut self.actors[a].lanes);
        let ready = lanes.iter().all(|&l| !self.next_point(l).is_some_and(|p| p <= point));
        if ready {
            for &l in &lanes {
                let (actor, lane) = two(&mut self.actors, a, l);
                join(&mut actor.ctl, &lane.ctl);
                join(&mut actor.mmo, &lane.mmo);
            }
        }
        self.actors[a].lanes = lanes;
        ready
    }

    /// The warp point of an actor's next item, if it has one.
    fn next_point(&self, a: usize) -> Option<u32> {
        let actor = &self.actors[a];
        let mem = actor.mem.get(actor.next_mem).map(|m| m.warp_point);
        let op = actor.points.get(actor.next_op).map(|p| p.before);
        match (mem, op) {
            (Some(m), Some(o)) => Some(m.min(o)),
            (m, o) => m.or(o),
        }
    }

    fn close_expect(&mut self, a: usize, barriers: &mut [BarrierRun]) {
        for (bar, phase) in std::mem::take(&mut self.actors[a].open_expects) {
            let b = &mut barriers[bar as usize];
            if b.phase == phase {
                b.open_expects = b.open_expects.saturating_sub(1);
                Self::maybe_complete(b);
            }
        }
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

    fn scope_contains(&self, scope: Scope, a_cta: u32, b_cta: u32) -> bool {
        match scope {
            Scope::Cta => a_cta == b_cta,
            Scope::Cluster => a_cta / self.cluster_ctas == b_cta / self.cluster_ctas,
            Scope::Gpu | Scope::Sys => true,
        }
    }

    fn mem_step(
        &mut self,
        a: usize,
        m: MemOp,
        _model: &Model,
        barriers: &mut [BarrierRun],
        counters: &mut HashMap<(BufferIx, Option<i64>), CounterRun>,
        next_async: &mut usize,
    ) -> bool {
        let mut async_id = None;
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
                if let (true, Some(bar)) = (*write, barrier) {
                    // The copy's bytes complete a phase of its barrier: the
                    // announced one, else the phase in progress.
                    let mut ctl = actor.ctl.clone();
                    let mut mmo = actor.mmo.clone();
                    ctl[id] = 1;
                    mmo[id] = 1;
                    let b = &mut barriers[*bar as usize];
                    let target = actor.open_expects.iter().rev().find(|(eb, _)| eb == bar).map_or(b.phase, |(_, phase)| *phase);
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
            MemKind::Update { buffer, offset, update, order, scope } => {
                let actor = &mut self.actors[a];
                actor.ctl[a] += 1;
                actor.mmo[a] += 1;
                let (release, mmo) = match (order.releases(), &actor.fence) {
                    (true, _) => (Some(*scope), actor.mmo.clone()),
                    (false, Some((s, clock))) => (Some(*s), clock.clone()),
                    (false, None) => (None, actor.mmo.clone()),
                };
                let c = counters.get_mut(&(*buffer, *offset)).expect("counted before the run");
                c.value = match (c.value, update) {
                    (Some(v), Update::Add(d)) => Some(v + d),
                    (_, Update::Set(v)) => Some(*v),
                    _ => None,
                };
                c.updates.push(UpdateRec { actor: a, ctl: actor.ctl.clone(), mmo, release });
            }
            MemKind::Observe { buffer, offset, order, scope, guard } => {
                if let Some(guard) = guard {
                    let Some(c) = counters.get(&(*buffer, *offset)) else {
                        // Nobody updates it: the guard holds at the initial
                        // value or never.
                        if !guard.target.is_some_and(|t| guard.exit_when.holds(0, t)) {
                            return false;
                        }
                        return self.record(a, m, None);
                    };
                    let all_done = c.updates.len() == c.total_updates;
                    let holds = match (c.value, guard.target) {
                        (Some(v), Some(t)) => guard.exit_when.holds(v, t),
                        _ => all_done,
                    };
                    if !holds {
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
            MemKind::Access { .. } | MemKind::ProxyFence => {
                let actor = &mut self.actors[a];
                actor.ctl[a] += 1;
                actor.mmo[a] += 1;
            }
            // A meeting point of the warp, taken in `step`.
            MemKind::WarpSync | MemKind::LaneSync { .. } => {}
        }
        self.record(a, m, async_id)
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
        self.events.push(Event { actor: a, index, kind: m.kind, site: m.site, stmt: m.stmt, ctl, mmo, async_id });
        true
    }

    fn who(&self, model: &Model, a: usize) -> String {
        describe_threads(&[self.actors[a].thread], model.ctas)
    }

    fn cta_of(&self, a: usize) -> u32 {
        self.actors[a].thread.0
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

    fn findings(&self, model: &Model, deadline: std::time::Instant) -> Result<Vec<MemoryFinding>, String> {
        let mut out = Vec::new();
        let mut checked = 0usize;
        let mut by_buffer: HashMap<BufferIx, Vec<usize>> = HashMap::new();
        for (i, e) in self.events.iter().enumerate() {
            if let Some(b) = accessed_buffer(&e.kind) {
                by_buffer.entry(b).or_default().push(i);
            }
        }
        let mut buffers: Vec<_> = by_buffer.into_iter().collect();
        buffers.sort_by_key(|(b, _)| *b);
        for (buffer, events) in buffers {
            let space = &model.buffers[buffer as usize].space;
            // Findings in the order of their pairs (the order the accesses
            // ran in), whatever the order the pairs are found in.
            let mut found: Vec<((usize, usize), MemoryFinding)> = Vec::new();
            let mut stopped = None;
            let mut visit = |i: usize, j: usize| {
                checked += 1;
                if checked > MAX_PAIRS {
                    stopped = Some(format!("more than {MAX_PAIRS} pairs of accesses to compare, too many for the memory-ordering analysis"));
                    return false;
                }
                if checked % 4096 == 0 && std::time::Instant::now() > deadline {
                    stopped = Some(out_of_time());
                    return false;
                }
                let (e1, e2) = (&self.events[i], &self.events[j]);
                let (Some((r1, _)), Some((r2, _))) = (region_and_write(&e1.kind), region_and_write(&e2.kind)) else {
                    return true;
                };
                // Data published between CTAs is read where the producer
                // wrote it, at indices often known only at run time: there
                // any pair that may overlap counts.
                let overlap = if matches!(space, Space::Global) { r1.may_overlap(&r2) } else { r1.overlaps(&r2) };
                if !overlap {
                    return true;
                }
                let finding = match (e1.async_id.is_some(), e2.async_id.is_some()) {
                    (true, true) => None,
                    (true, false) => self.async_vs_generic(model, buffer, e1, e2),
                    (false, true) => self.async_vs_generic(model, buffer, e2, e1),
                    (false, false) => match space {
                        Space::Global => self.message_passing(model, buffer, e1, e2),
                        Space::Shared { cta } => self.shared_pair(model, buffer, *cta, e1, e2),
                    },
                };
                found.extend(finding.map(|f| ((i, j), f)));
                true
            };
            candidate_pairs(&self.events, &events, matches!(space, Space::Shared { .. }), &mut visit);
            if let Some(why) = stopped {
                return Err(why);
            }
            found.sort_by_key(|(pair, _)| *pair);
            out.extend(found.into_iter().map(|(_, f)| f));
        }
        Ok(out)
    }

    /// An async copy `copy` and a generic access `access` of the same
    /// shared memory.
    fn async_vs_generic(&self, model: &Model, buffer: BufferIx, copy: &Event, access: &Event) -> Option<MemoryFinding> {
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

    /// Two generic accesses of shared memory.
    fn shared_pair(&self, model: &Model, buffer: BufferIx, owner: u32, e1: &Event, e2: &Event) -> Option<MemoryFinding> {
        let (first, second) = if e1.ctl[e1.actor] <= e2.ctl[e1.actor] { (e1, e2) } else { (e2, e1) };
        if first.mmo[first.actor] <= second.mmo[first.actor] {
            return None;
        }
        let name = &model.buffers[buffer as usize].name;
        let remote = self.cta_of(e1.actor) != owner || self.cta_of(e2.actor) != owner;
        let describe = |e: &Event| {
            let w = region_and_write(&e.kind).is_some_and(|(_, w)| w);
            format!("{} {} `{name}` of CTA {owner}", self.who(model, e.actor), if w { "writes" } else { "reads" })
        };
        if first.ctl[first.actor] <= second.ctl[first.actor] {
            // Ordered by timing, not by memory semantics: a release too
            // narrow for the other side.
            let arrive = self.narrow_release_after(first, self.cta_of(second.actor))?;
            return Some(MemoryFinding {
                rule: MemoryRule::ScopeTooNarrow,
                site: arrive,
                message: format!(
                    "this arrive releases at CTA scope, which does not contain the threads of CTA {} that wait for it; the data handed over through `{name}` is not ordered before their reads (pass a cluster scope)",
                    self.cta_of(second.actor)
                ),
                steps: vec![
                    (first.site, describe(first)),
                    (arrive, "arrives with a CTA-scoped release: it orders nothing for a peer CTA".to_string()),
                    (second.site, describe(second)),
                ],
                repair: Repair::SetScope { call: arrive, scope: Scope::Cluster },
            });
        }
        if !remote {
            // Races inside one CTA are reported only on known elements, and
            // only between a write and a read: warps that store the same
            // values redundantly are a common, harmless idiom.
            let both_known = [e1, e2].iter().all(|e| region_and_write(&e.kind).is_some_and(|(r, _)| matches!(r.element, Element::At(_))));
            let both_write = [e1, e2].iter().all(|e| region_and_write(&e.kind).is_some_and(|(_, w)| w));
            if !both_known || both_write {
                return None;
            }
        }
        // Reported at the write (both writes: the later one), which is what
        // a second buffer or barrier has to protect.
        let writes = |e: &Event| region_and_write(&e.kind).is_some_and(|(_, w)| w);
        let (other, at) = if writes(e2) { (e1, e2) } else { (e2, e1) };
        let (t1, t2) = (self.actors[e1.actor].thread, self.actors[e2.actor].thread);
        if !remote && t1.1 / 32 == t2.1 / 32 {
            // Two lanes of one warp (one of them in a branch that splits
            // it): a `sync_warp` of the whole warp orders them, before the
            // branch that holds the later access.
            let element = match region_and_write(&at.kind).map(|(r, _)| r.element.clone()) {
                Some(Element::At(at)) => subscript(&at),
                _ => String::new(),
            };
            // Lane 0 on its own is a thread, not its warp.
            let who = |e: &Event| match self.actors[e.actor].thread {
                (cta, tid) if tid % 32 == 0 && !self.actors[e.actor].mem[e.index].converged => describe_thread(cta, tid, model.ctas),
                _ => self.who(model, e.actor),
            };
            let describe = |e: &Event| format!("{} {} `{name}{element}`", who(e), if writes(e) { "writes" } else { "reads" });
            let (earlier, later) = if e1.stmt <= e2.stmt { (e1, e2) } else { (e2, e1) };
            return Some(MemoryFinding {
                rule: MemoryRule::SmemRace,
                site: at.site,
                message: format!(
                    "{} while {}, lanes of the same warp: lanes of a warp do not run in lock-step, and no `sync_warp()` or barrier orders the two",
                    describe(at),
                    describe(other)
                ),
                steps: vec![
                    (earlier.site, describe(earlier)),
                    (later.site, format!("{}, with no `sync_warp()` or barrier since the access above", describe(later))),
                ],
                repair: Repair::InsertWarpSyncBefore { site: later.site, stmt: later.stmt, after: earlier.site },
            });
        }
        Some(MemoryFinding {
            rule: if remote { MemoryRule::DsmemRace } else { MemoryRule::SmemRace },
            site: at.site,
            message: format!("{} while {}: no barrier orders the two", describe(at), describe(other)),
            steps: vec![(other.site, describe(other)), (at.site, format!("{}, unordered with the access above", describe(at)))],
            repair: Repair::None,
        })
    }

    /// A remote arrive of `e`'s thread after `e`, released at a scope that
    /// does not contain `cta`.
    fn narrow_release_after(&self, e: &Event, cta: u32) -> Option<TextRange> {
        let actor = &self.actors[e.actor];
        let from = self.cta_of(e.actor);
        actor.mem[e.index..].iter().find_map(|m| match m.kind {
            MemKind::ArriveRelease { scope: Some(s) } if !self.scope_contains(s, from, cta) => Some(m.site),
            MemKind::ArriveRelease { scope: None } => Some(m.site),
            _ => None,
        })
    }

    /// A write and a read of global memory by threads of different CTAs:
    /// message passing through a counter.
    fn message_passing(&self, model: &Model, buffer: BufferIx, e1: &Event, e2: &Event) -> Option<MemoryFinding> {
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
        if write.mmo[p] <= read.mmo[p] {
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
            let Some(obs) = observes.iter().find(|o| o.actor == q).or(observes.first()).copied() else { continue };
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
                let message = if once {
                    format!("the consumer reads the counter once and goes on to read `{name}` whatever it saw; it must wait until the counter reaches its target")
                } else if obs.actor != q && obs.ctl[obs.actor] > read.ctl[obs.actor] {
                    format!("{} reads `{name}` without a barrier after the wait on the counter", self.who(model, q))
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

    /// The semantics a repair gives the call at `site`: `sem`, or
    /// `acq_rel` for an atomic whose result is also read (`if
    /// atomic_add(...) == n - 1:`), which must both release and acquire.
    fn sem_adding(&self, site: TextRange, sem: &'static str) -> &'static str {
        let at_site = |update: bool| {
            self.events.iter().any(|e| e.site == site && matches!(e.kind, MemKind::Update { .. }) == update)
        };
        if at_site(true) && at_site(false) {
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

/// Visits the pairs of a buffer's accesses (among `of_buffer`, ascending,
/// which is the order they ran in) that may conflict, each as (earlier,
/// later), until `visit` returns false: accesses of known elements meet
/// only accesses of the same element and those of unknown extent, instead
/// of every other access; two reads never conflict, nor do two accesses
/// one thread makes in program order. Pairs are many (a wide access meets
/// every other): they are visited as they are found, never stored.
///
/// With `prune` (shared memory, where a pair of the threads' own accesses
/// ordered by the memory clock is never a finding), see [`unordered_pairs`].
fn candidate_pairs(events: &[Event], of_buffer: &[usize], prune: bool, visit: &mut dyn FnMut(usize, usize) -> bool) {
    let may_conflict = |i: usize, j: usize| {
        let (a, b) = (&events[i], &events[j]);
        let program_order = a.actor == b.actor && a.async_id.is_none() && b.async_id.is_none();
        !program_order && (writes(&a.kind) || writes(&b.kind))
    };
    let mut visit = |i: usize, j: usize| !may_conflict(i, j) || visit(i, j);
    if prune {
        unordered_pairs(events, of_buffer, &mut visit);
    } else {
        all_pairs(events, of_buffer, &mut visit);
    }
}

/// The element an access touches, `None` for one of unknown or whole
/// extent (which meets every access of the buffer).
fn element_of(event: &Event) -> Option<(Option<i64>, &[i64])> {
    match region_and_write(&event.kind) {
        Some((Cow::Borrowed(Region { stage, element: Element::At(at) }), _)) => Some((*stage, at.as_slice())),
        _ => None,
    }
}

/// Every pair (global memory, where accesses are not ordered through the
/// memory clock alone); false once `visit` stopped.
fn all_pairs(events: &[Event], of_buffer: &[usize], visit: &mut dyn FnMut(usize, usize) -> bool) -> bool {
    let mut by_element: HashMap<(Option<i64>, &[i64]), Vec<usize>> = HashMap::new();
    let mut wide = Vec::new();
    for &i in of_buffer {
        match element_of(&events[i]) {
            Some(key) => by_element.entry(key).or_default().push(i),
            None => wide.push(i),
        }
    }
    for group in by_element.values() {
        for (x, &i) in group.iter().enumerate() {
            if !group[x + 1..].iter().all(|&j| visit(i, j)) {
                return false;
            }
        }
    }
    for (x, &i) in wide.iter().enumerate() {
        if !wide[x + 1..].iter().all(|&j| visit(i, j)) {
            return false;
        }
        for group in by_element.values() {
            if !group.iter().all(|&j| visit(i.min(j), i.max(j))) {
                return false;
            }
        }
    }
    true
}

/// The pairs in shared memory, where a pair ordered by the memory clock is
/// never a finding: for each access, the earlier accesses of every other
/// thread are taken latest first, and those before the first one ordered
/// before it are skipped (the thread's clock only grows along its program,
/// so they are ordered too). Async copies are not ordered that way: they
/// pair with every access they may overlap. False once `visit` stopped.
fn unordered_pairs(events: &[Event], of_buffer: &[usize], visit: &mut dyn FnMut(usize, usize) -> bool) -> bool {
    type ByThread = HashMap<usize, Vec<usize>>;
    type Key<'e> = (Option<i64>, &'e [i64]);
    #[derive(Default)]
    struct Earlier<'e> {
        /// Accesses (async copies apart) by thread: of any element, of
        /// unknown or whole extent, of each known element.
        by_thread: ByThread,
        wide_by_thread: ByThread,
        element_by_thread: HashMap<Key<'e>, ByThread>,
        /// Every access and every copy: of any element, of unknown or whole
        /// extent, of each known element.
        all: Vec<usize>,
        wide: Vec<usize>,
        element: HashMap<Key<'e>, Vec<usize>>,
        copies: Vec<usize>,
        wide_copies: Vec<usize>,
        element_copies: HashMap<Key<'e>, Vec<usize>>,
    }
    let mut earlier = Earlier::default();
    // The earlier accesses of `lists`' other threads not ordered before `j`.
    let unordered = |lists: Option<&ByThread>, j: usize, visit: &mut dyn FnMut(usize, usize) -> bool| {
        let later = &events[j];
        for (&thread, accesses) in lists.into_iter().flatten() {
            if thread == later.actor {
                continue;
            }
            for &i in accesses.iter().rev() {
                if events[i].mmo[thread] <= later.mmo[thread] {
                    break;
                }
                if !visit(i, j) {
                    return false;
                }
            }
        }
        true
    };
    let each = |list: Option<&Vec<usize>>, j: usize, visit: &mut dyn FnMut(usize, usize) -> bool| list.into_iter().flatten().all(|&i| visit(i, j));
    for &j in of_buffer {
        let event = &events[j];
        let key = element_of(event);
        let copy = event.async_id.is_some();
        let go_on = match (key, copy) {
            (Some(k), true) => each(earlier.element.get(&k), j, visit) && each(Some(&earlier.wide), j, visit),
            (None, true) => each(Some(&earlier.all), j, visit),
            (Some(k), false) => {
                each(earlier.element_copies.get(&k), j, visit)
                    && each(Some(&earlier.wide_copies), j, visit)
                    && unordered(earlier.element_by_thread.get(&k), j, visit)
                    && unordered(Some(&earlier.wide_by_thread), j, visit)
            }
            (None, false) => each(Some(&earlier.copies), j, visit) && unordered(Some(&earlier.by_thread), j, visit),
        };
        if !go_on {
            return false;
        }
        earlier.all.push(j);
        match key {
            Some(k) => earlier.element.entry(k).or_default().push(j),
            None => earlier.wide.push(j),
        }
        if copy {
            earlier.copies.push(j);
            match key {
                Some(k) => earlier.element_copies.entry(k).or_default().push(j),
                None => earlier.wide_copies.push(j),
            }
        } else {
            earlier.by_thread.entry(event.actor).or_default().push(j);
            match key {
                Some(k) => earlier.element_by_thread.entry(k).or_default().entry(event.actor).or_default().push(j),
                None => earlier.wide_by_thread.entry(event.actor).or_default().push(j),
            }
        }
    }
    true
}

/// A race between two lanes of one converged warp (see [`LaneRace`]),
/// reported at the write. The repair puts a `sync_warp` before the later
/// access, when the two are separate statements.
fn lane_race(model: &Model, lane0: &ThreadMemory, race: &LaneRace) -> Option<MemoryFinding> {
    let (first, second) = (lane0.ops.get(race.first as usize)?, lane0.ops.get(race.second as usize)?);
    let (MemKind::Access { buffer, write: first_writes, .. }, MemKind::Access { write: second_writes, .. }) = (&first.kind, &second.kind) else {
        return None;
    };
    let name = &model.buffers[*buffer as usize].name;
    let (cta, lane0_tid) = lane0.thread;
    let element = subscript(&race.element);
    let describe = |lane: u32, writes: bool| {
        let does = if writes { "writes" } else { "reads" };
        format!("{} {does} `{name}{element}`", describe_thread(cta, lane0_tid + lane, model.ctas))
    };
    let (first_said, second_said) = (describe(race.first_lane, *first_writes), describe(race.second_lane, *second_writes));
    // Reported at the write.
    let (at, said, other_said) = if *second_writes { (second, &second_said, &first_said) } else { (first, &first_said, &second_said) };
    // Within one statement (`buf[lane] = buf[lane ^ 1]`) there is no place
    // for the `sync_warp`: the load has to move to a statement of its own.
    let repair = if first.stmt != second.stmt {
        Repair::InsertWarpSyncBefore { site: second.site, stmt: second.stmt, after: first.site }
    } else {
        Repair::None
    };
    Some(MemoryFinding {
        rule: MemoryRule::SmemRace,
        site: at.site,
        message: format!(
            "{said} while {other_said}, lanes of the same warp: lanes of a warp do not run in lock-step, and no `sync_warp()` or barrier orders the two"
        ),
        steps: vec![
            (first.site, first_said.clone()),
            (second.site, format!("{second_said}, with no `sync_warp()` or barrier since the access above")),
        ],
        repair,
    })
}

/// An element's coordinates as a subscript: `[3]`, `[1, 2]`.
fn subscript(coords: &[i64]) -> String {
    format!("[{}]", coords.iter().map(i64::to_string).collect::<Vec<_>>().join(", "))
}

fn accessed_buffer(kind: &MemKind) -> Option<BufferIx> {
    match kind {
        MemKind::Access { buffer, .. } | MemKind::AsyncCopy { buffer, .. } => Some(*buffer),
        // A scalar exchange into a buffer that is read as data (DSMEM
        // hand-off through `atomic_exch`) is a write of it.
        MemKind::Update { buffer, .. } => Some(*buffer),
        _ => None,
    }
}

/// Whether an access writes (an atomic update does); false for what is no
/// access.
fn writes(kind: &MemKind) -> bool {
    match kind {
        MemKind::Access { write, .. } | MemKind::AsyncCopy { write, .. } => *write,
        MemKind::Update { .. } => true,
        _ => false,
    }
}

fn region_and_write(kind: &MemKind) -> Option<(Cow<'_, Region>, bool)> {
    match kind {
        MemKind::Access { region, write, .. } | MemKind::AsyncCopy { region, write, .. } => Some((Cow::Borrowed(region), *write)),
        // An atomic writes the element its pointer points at.
        MemKind::Update { offset: Some(o), .. } => Some((Cow::Owned(Region { stage: None, element: Element::At(vec![*o]) }), true)),
        MemKind::Update { .. } => Some((Cow::Owned(Region { stage: None, element: Element::Unknown }), true)),
        _ => None,
    }
}

/// Two distinct actors, both mutable.
fn two<'a, 'm>(actors: &'a mut [Actor<'m>], a: usize, b: usize) -> (&'a mut Actor<'m>, &'a mut Actor<'m>) {
    assert_ne!(a, b);
    if a < b {
        let (x, y) = actors.split_at_mut(b);
        (&mut x[a], &mut y[0])
    } else {
        let (x, y) = actors.split_at_mut(a);
        (&mut y[0], &mut x[b])
    }
}
