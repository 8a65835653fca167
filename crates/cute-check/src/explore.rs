//! The explorer: depth-first search over the states of a [`Model`],
//! `(threads per position of each group, barrier states)`, with two reductions
//! that keep it exact for deadlock.
//!
//! **Counting symmetry.** Threads of one group run the same operations, so a
//! state records how many threads of each group stand at each position, not
//! which ones. Any permutation of a group's threads maps runs to runs and
//! deadlocks to deadlocks, so the quotient has a deadlock iff the model has.
//!
//! **Persistent sets.** In each state the explorer looks for a set of thread
//! classes (a group at a position) whose next moves are independent of
//! everything the other threads can do without them, as small as it finds:
//!
//! 1. A least fixpoint bounds how many more phases each barrier can complete
//!    while the set stays put: completions let waits pass, passed waits let
//!    arrivals happen, arrivals complete phases.
//! 2. A wait in the set needs its barrier frozen: no completion without the
//!    set, so its parity cannot change and it commutes with every operation of
//!    the others.
//! 3. An arrive in the set needs that no other thread can pass a wait on its
//!    barrier at a completion count the set's arrivals could shift. Arrivals
//!    commute with one another (only their sum matters), so this is the only
//!    way an order between them can be observed.
//!
//! Such a set is persistent (Godefroid), and exploring only persistent sets
//! preserves every reachable deadlock; the state graph has no cycles (every
//! move advances a thread), so no cycle proviso is needed. When no set smaller
//! than every thread is found, all enabled moves are explored. [`Reduction`]
//! offers the same sets to a search that watches some moves (`overrun.rs`).
//!
//! **Budgets.** States and time are bounded ([`Budget`]: 2,000,000 states and 2
//! s by default); running out gives [`Verdict::Incomplete`], which the kernel
//! reports as `analysis-incomplete`, never silence. A state is stored once (in
//! the visited index; the stack holds those still to expand). The walks the
//! persistent-set search caches are each as long as the model has barriers, so
//! the cache is bounded to 2^20 barrier counters and starts over past them: a
//! four-CTA model with hundreds of barriers has few states but tens of
//! thousands of walks.
//!
//! The naive per-thread explorer in `naive.rs` is the oracle the tests compare
//! against.

use rustc_hash::FxHashMap as HashMap;
use std::time::{Duration, Instant};

use crate::model::{Model, OpKind};
use crate::semantics::{apply, enabled, initial_barriers, BarState, Hazard};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Budget {
    pub max_states: usize,
    pub max_time: Duration,
    /// Bytes the states seen may take, at most (their `index` entries and
    /// paths back, estimated as they are stored): a model whose state space
    /// would grow past it is not checked, whatever the machine has.
    pub max_bytes: usize,
}

/// The memory one check may take for its states, by default.
pub const DEFAULT_MAX_BYTES: usize = 1 << 30;

impl Default for Budget {
    fn default() -> Self {
        Budget { max_states: 2_000_000, max_time: Duration::from_secs(2), max_bytes: DEFAULT_MAX_BYTES }
    }
}

/// The bytes a state seen takes: the state in the index, its hash slot, and
/// its step back.
fn stored_bytes(state: &State) -> usize {
    let groups: usize = state.groups.iter().map(|g| std::mem::size_of::<Vec<(u32, u32)>>() + std::mem::size_of_val(g.as_slice())).sum();
    std::mem::size_of::<State>() + groups + std::mem::size_of_val(state.bars.as_slice()) + std::mem::size_of::<(u32, Move)>() + 2 * std::mem::size_of::<u64>()
}

/// One thread of `group` at `pos` executes its operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Move {
    pub group: u32,
    pub pos: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct State {
    /// Per group, (position, number of threads there) for positions held by
    /// at least one thread, ascending; position `ops.len()` is "finished".
    pub groups: Vec<Vec<(u32, u32)>>,
    pub bars: Vec<BarState>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counterexample {
    pub moves: Vec<Move>,
    pub last: State,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every explored run finishes.
    Clean,
    Deadlock(Counterexample),
    /// The budget ran out first.
    Incomplete(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub verdict: Verdict,
    pub states: usize,
    pub transitions: usize,
    /// States where no single move could be explored alone.
    pub full_expansions: usize,
    /// Paths that reached an operation the model gives no meaning to.
    pub hazards: Vec<(Hazard, Counterexample)>,
    pub elapsed: Duration,
}

pub fn initial_state(model: &Model) -> State {
    State {
        groups: model.groups.iter().map(|g| vec![(0, g.size())]).collect(),
        bars: initial_barriers(model),
    }
}

pub fn successor(model: &Model, state: &State, mv: Move) -> Result<State, Hazard> {
    let group = &model.groups[mv.group as usize];
    let op = &group.ops[mv.pos as usize];
    let mut next = state.clone();
    apply(&op.kind, op.site, &mut next.bars)?;
    let slots = &mut next.groups[mv.group as usize];
    let i = slots.iter().position(|&(p, _)| p == mv.pos).expect("a thread stands at the moved position");
    slots[i].1 -= 1;
    let to = mv.pos + 1;
    match slots.iter().position(|&(p, _)| p == to) {
        Some(j) => slots[j].1 += 1,
        None => {
            slots.push((to, 1));
            slots.sort_unstable();
        }
    }
    slots.retain(|&(_, n)| n > 0);
    Ok(next)
}

pub fn enabled_moves(model: &Model, state: &State) -> Vec<Move> {
    let mut out = Vec::new();
    for (g, slots) in state.groups.iter().enumerate() {
        let ops = &model.groups[g].ops;
        for &(pos, _) in slots {
            if let Some(op) = ops.get(pos as usize) {
                if enabled(&op.kind, &state.bars) {
                    out.push(Move { group: g as u32, pos });
                }
            }
        }
    }
    out
}

pub fn is_finished(model: &Model, state: &State) -> bool {
    state
        .groups
        .iter()
        .enumerate()
        .all(|(g, slots)| slots.iter().all(|&(p, _)| p as usize == model.groups[g].ops.len()))
}

/// What the threads at one position can do on their own, given how many
/// more phases each barrier can complete: arrivals per barrier, and which
/// barriers they pass a wait on.
#[derive(Clone, Debug)]
struct Walk {
    arrivals: Vec<u64>,
    /// Per barrier, the fewest further completions after which this thread
    /// passes a wait on it (`NEVER` if it passes none).
    passes_after: Vec<u32>,
}

const NEVER: u32 = u32::MAX;

/// More phase completions than any bound below: "unbounded".
const MANY: u32 = u32::MAX;
const UNBOUNDED: u64 = u64::MAX / 4;
/// Past this many completions of one barrier, stop counting.
const COMPLETION_CAP: u32 = 64;

/// The barrier counters the walks of [`Reducer::cache`] hold at most (about
/// 17 bytes each: key and walk).
const MAX_CACHED_BARRIER_COUNTS: usize = 1 << 20;

struct Reducer<'m> {
    model: &'m Model,
    cache: HashMap<(u32, u32, Vec<u32>, Vec<u8>), Walk>,
}

/// A class of threads: those of `group` at position `pos`.
type Class = (u32, u32);

impl<'m> Reducer<'m> {
    /// Walk the operations of a thread at `(g, pos)` assuming each barrier
    /// `b` completes at most `completions[b]` more phases.
    fn walk(&mut self, g: u32, pos: u32, completions: &[u32], bars: &[BarState]) -> Walk {
        let parities: Vec<u8> = bars.iter().map(|b| b.parity | ((b.initialised() as u8) << 1)).collect();
        let key = (g, pos, completions.to_vec(), parities);
        if let Some(w) = self.cache.get(&key) {
            return w.clone();
        }
        let n = bars.len();
        let mut walk = Walk { arrivals: vec![0; n], passes_after: vec![NEVER; n] };
        // Completions of each barrier this thread has already relied on.
        let mut used = vec![0u32; n];
        let mut reinitialised = vec![false; n];
        for op in &self.model.groups[g as usize].ops[pos as usize..] {
            match op.kind {
                OpKind::Arrive { bar, count } => {
                    let a = &mut walk.arrivals[bar as usize];
                    *a = a.saturating_add(count as u64);
                }
                OpKind::Wait { bar, parity } => {
                    let b = bar as usize;
                    if reinitialised[b] || !bars[b].initialised() || completions[b] == MANY {
                        walk.passes_after[b] = 0;
                        continue;
                    }
                    // The first completion count, not below what this thread
                    // already relied on, at which the phase parity differs
                    // from the one waited on.
                    let q = bars[b].parity;
                    let mut c = used[b];
                    if (q ^ (c & 1) as u8) == parity {
                        c += 1;
                    }
                    if c > completions[b] {
                        break; // blocked while the others alone move
                    }
                    walk.passes_after[b] = walk.passes_after[b].min(c);
                    used[b] = c;
                }
                OpKind::Init { bar, .. } => {
                    reinitialised[bar as usize] = true;
                    walk.arrivals[bar as usize] = UNBOUNDED;
                }
            }
        }
        // The walks cached are bounded by the barrier counters they hold: a
        // model of several CTAs has hundreds of barriers, and its walks
        // (a few kilobytes each) would otherwise fill memory long before
        // its states do. The cache then starts over.
        if self.cache.len() * n.max(1) >= MAX_CACHED_BARRIER_COUNTS {
            self.cache.clear();
        }
        self.cache.insert(key, walk.clone());
        walk
    }

    /// How many more phases each barrier can complete while the classes in
    /// `excluded` do not move (a least fixpoint: completions enable waits,
    /// passed waits enable arrivals, arrivals enable completions), and the
    /// walks of the threads outside `excluded` under that bound.
    fn without(&mut self, state: &State, excluded: &[Class]) -> (Vec<u32>, Vec<u64>, Vec<(Class, Walk)>) {
        let n = state.bars.len();
        let mut completions = vec![0u32; n];
        loop {
            let mut total = vec![0u64; n];
            let mut walks = Vec::new();
            for (g, slots) in state.groups.iter().enumerate() {
                for &(pos, count) in slots {
                    let class = (g as u32, pos);
                    if excluded.contains(&class) || pos as usize >= self.model.groups[g].ops.len() {
                        continue;
                    }
                    let w = self.walk(g as u32, pos, &completions, &state.bars);
                    for (t, a) in total.iter_mut().zip(&w.arrivals) {
                        *t = t.saturating_add(a.saturating_mul(count as u64));
                    }
                    walks.push((class, w));
                }
            }
            let mut changed = false;
            for b in 0..n {
                let bar = state.bars[b];
                let possible = if total[b] >= UNBOUNDED {
                    MANY
                } else if !bar.initialised() || total[b] < bar.pending as u64 {
                    0
                } else {
                    let k = 1 + (total[b] - bar.pending as u64) / bar.expected as u64;
                    if k > COMPLETION_CAP as u64 { MANY } else { k as u32 }
                };
                if possible > completions[b] {
                    completions[b] = possible;
                    changed = true;
                }
            }
            if !changed {
                return (completions, total, walks);
            }
        }
    }

    /// A set of classes whose current moves form a persistent set, as small
    /// as found: every move of the others, in any order, commutes with them.
    fn persistent(&mut self, state: &State, moves: &[Move]) -> Option<Vec<Move>> {
        let occupied: Vec<Class> = state
            .groups
            .iter()
            .enumerate()
            .flat_map(|(g, slots)| {
                let len = self.model.groups[g].ops.len() as u32;
                slots.iter().filter(move |&&(p, _)| p < len).map(move |&(p, _)| (g as u32, p))
            })
            .collect();
        let mut candidates: Vec<Move> = moves.to_vec();
        candidates.sort_by_key(|m| match self.model.groups[m.group as usize].ops[m.pos as usize].kind {
            OpKind::Wait { .. } => 0,
            OpKind::Arrive { .. } => 1,
            OpKind::Init { .. } => 2,
        });
        let mut best: Option<Vec<Move>> = None;
        for first in candidates {
            let mut set: Vec<Class> = vec![(first.group, first.pos)];
            loop {
                let (completions, total, walks) = self.without(state, &set);
                let mut add: Vec<Class> = Vec::new();
                for &(g, p) in &set {
                    match self.model.groups[g as usize].ops[p as usize].kind {
                        // A wait (enabled or not) must see the same parity
                        // whatever the others do.
                        OpKind::Wait { bar, .. } => {
                            if completions[bar as usize] > 0 {
                                add.extend(walks.iter().filter(|(_, w)| w.arrivals[bar as usize] > 0).map(|(c, _)| *c));
                            }
                        }
                        // An arrive commutes with every other arrive; only a
                        // wait on the same barrier can tell the order, and
                        // only if moving these arrivals first could complete
                        // one more phase before that wait: the others' waits
                        // pass after `j` completions at the earliest, and all
                        // arrivals together cannot reach completion `j + 1`.
                        OpKind::Arrive { bar, .. } => {
                            let b = bar as usize;
                            let bs = state.bars[b];
                            let ours: u64 = set
                                .iter()
                                .filter_map(|&(g2, p2)| match self.model.groups[g2 as usize].ops[p2 as usize].kind {
                                    OpKind::Arrive { bar: b2, count } if b2 == bar => {
                                        let n = state.groups[g2 as usize].iter().find(|s| s.0 == p2).map_or(0, |s| s.1);
                                        Some(count as u64 * n as u64)
                                    }
                                    _ => None,
                                })
                                .sum();
                            let endangered = |j: u32| {
                                j != NEVER
                                    && (total[b] >= UNBOUNDED
                                        || total[b] + ours >= bs.pending as u64 + j as u64 * bs.expected as u64)
                            };
                            add.extend(walks.iter().filter(|(_, w)| endangered(w.passes_after[b])).map(|(c, _)| *c));
                            // An initialisation of the barrier by another
                            // thread decides whether this arrive counts.
                            add.extend(walks.iter().filter(|(_, w)| w.arrivals[b] >= UNBOUNDED).map(|(c, _)| *c));
                        }
                        OpKind::Init { bar, .. } => {
                            add.extend(
                                walks
                                    .iter()
                                    .filter(|(_, w)| w.passes_after[bar as usize] != NEVER || w.arrivals[bar as usize] > 0)
                                    .map(|(c, _)| *c),
                            );
                        }
                    }
                }
                add.sort_unstable();
                add.dedup();
                add.retain(|c| !set.contains(c));
                if add.is_empty() {
                    break;
                }
                set.extend(add);
                if set.len() >= occupied.len() {
                    break;
                }
            }
            if set.len() >= occupied.len() {
                continue;
            }
            let chosen: Vec<Move> = moves.iter().copied().filter(|m| set.contains(&(m.group, m.pos))).collect();
            if chosen.len() == 1 {
                return Some(chosen);
            }
            if best.as_ref().is_none_or(|b| chosen.len() < b.len()) && !chosen.is_empty() {
                best = Some(chosen);
            }
        }
        best
    }
}

/// Persistent sets for a search of the interleavings that watches some
/// moves (`visible`): the order of the visible moves along every run is
/// kept (a set with a visible move in it is widened to every enabled move;
/// the state graph has no cycles, so no other proviso is needed), while the
/// moves in between are explored in one order. `overrun.rs` watches the
/// registrations with named barriers this way.
pub struct Reduction<'m> {
    reducer: Reducer<'m>,
}

impl<'m> Reduction<'m> {
    pub fn new(model: &'m Model) -> Self {
        Reduction { reducer: Reducer { model, cache: HashMap::default() } }
    }

    /// The moves of `moves` (those enabled in `state`) to explore.
    pub fn moves(&mut self, state: &State, moves: Vec<Move>, visible: impl Fn(&Move) -> bool) -> Vec<Move> {
        match self.reducer.persistent(state, &moves) {
            Some(set) if !set.iter().any(&visible) => set,
            _ => moves,
        }
    }
}

#[derive(Default)]
pub struct ExploreOptions {
    pub budget: Budget,
    /// Explore every enabled move (no stubborn singletons); for validation.
    pub full_expansion: bool,
}

/// How many explorations this process has run (for tests and benchmarks that
/// show an edit did not re-check).
pub static EXPLORATIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

pub fn explore(model: &Model, options: &ExploreOptions) -> Outcome {
    EXPLORATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let start = Instant::now();
    let mut reducer = Reducer { model, cache: HashMap::default() };
    let init = initial_state(model);
    let mut index: HashMap<State, u32> = HashMap::default();
    // Per state: parent and the move that reached it. A state is stored once,
    // in `index`; the stack holds those still to expand (a model of several
    // CTAs has millions of states of some hundred bytes each).
    let mut parents: Vec<(u32, Move)> = Vec::new();
    let mut bytes = stored_bytes(&init);
    index.insert(init.clone(), 0);
    parents.push((u32::MAX, Move { group: 0, pos: 0 }));
    let mut transitions = 0usize;
    let mut full_expansions = 0usize;
    let mut hazards: Vec<(Hazard, Counterexample)> = Vec::new();
    // Depth first: a deadlock is usually a few wrong choices deep, and the
    // state graph has no cycles (every move advances a thread), so no
    // proviso is needed for the reduction.
    let mut stack: Vec<(u32, State)> = vec![(0, init)];
    let mut expanded = 0usize;

    let path_to = |parents: &Vec<(u32, Move)>, mut i: u32| {
        let mut moves = Vec::new();
        while parents[i as usize].0 != u32::MAX {
            moves.push(parents[i as usize].1);
            i = parents[i as usize].0;
        }
        moves.reverse();
        moves
    };

    while let Some((id, state)) = stack.pop() {
        if parents.len() > options.budget.max_states {
            return outcome(Verdict::Incomplete(format!("the state budget ({} states) ran out", options.budget.max_states)), parents.len(), transitions, full_expansions, hazards, start);
        }
        if bytes > options.budget.max_bytes {
            let why = format!("the memory budget ({} MB) ran out after {} states", options.budget.max_bytes >> 20, parents.len());
            return outcome(Verdict::Incomplete(why), parents.len(), transitions, full_expansions, hazards, start);
        }
        expanded += 1;
        if expanded.is_multiple_of(256) && start.elapsed() > options.budget.max_time {
            return outcome(
                Verdict::Incomplete(format!("the time budget ({} ms) ran out after {} states", options.budget.max_time.as_millis(), parents.len())),
                parents.len(),
                transitions,
                full_expansions,
                hazards,
                start,
            );
        }
        let moves = enabled_moves(model, &state);
        if moves.is_empty() {
            if !is_finished(model, &state) {
                let cex = Counterexample { moves: path_to(&parents, id), last: state };
                return outcome(Verdict::Deadlock(cex), parents.len(), transitions, full_expansions, hazards, start);
            }
            continue;
        }
        let chosen: Vec<Move> = match (!options.full_expansion).then(|| reducer.persistent(&state, &moves)).flatten() {
            Some(set) => set,
            None => {
                full_expansions += 1;
                moves
            }
        };
        // Depth first explores the first move first: initialisations, then
        // waits, then arrivals, so the first path is the intended protocol
        // and the races against initialisation come after it.
        let mut chosen = chosen;
        chosen.sort_by_key(|m| match model.groups[m.group as usize].ops[m.pos as usize].kind {
            OpKind::Init { .. } => 0,
            OpKind::Wait { .. } => 1,
            OpKind::Arrive { .. } => 2,
        });
        for mv in chosen.into_iter().rev() {
            transitions += 1;
            match successor(model, &state, mv) {
                Ok(next) => {
                    if !index.contains_key(&next) {
                        let next_id = parents.len() as u32;
                        bytes += stored_bytes(&next);
                        index.insert(next.clone(), next_id);
                        stack.push((next_id, next));
                        parents.push((id, mv));
                    }
                }
                Err(h) => {
                    if hazards.len() < 8 && !hazards.iter().any(|(k, _)| *k == h) {
                        let mut moves = path_to(&parents, id);
                        moves.push(mv);
                        hazards.push((h, Counterexample { moves, last: state.clone() }));
                    }
                }
            }
        }
    }
    outcome(Verdict::Clean, parents.len(), transitions, full_expansions, hazards, start)
}

fn outcome(
    verdict: Verdict,
    states: usize,
    transitions: usize,
    full_expansions: usize,
    hazards: Vec<(Hazard, Counterexample)>,
    start: Instant,
) -> Outcome {
    Outcome { verdict, states, transitions, full_expansions, hazards, elapsed: start.elapsed() }
}
