//! The explorer: breadth-first search over the states of a [`Model`], with
//! two reductions that keep it exact for deadlock.
//!
//! **Counting symmetry.** Threads of one group run the same operations, so a
//! state records how many threads of each group stand at each position,
//! not which ones. Any permutation of a group's threads maps runs to runs and
//! deadlocks to deadlocks, so the quotient has a deadlock iff the model has.
//!
//! **Stubborn singletons.** In a state, one thread's next operation `t` is
//! explored alone (instead of every enabled operation) when it is provably
//! independent of everything the other threads can do before it:
//!
//! 1. Compute `F`, the barriers that cannot complete their current phase
//!    without `t`: start from all initialised barriers and drop those whose
//!    pending count could be met by the others, where each other thread
//!    contributes the arrivals on its path up to its first wait that is
//!    blocked on a barrier of `F` (a greatest fixpoint; waits on barriers
//!    outside `F` are assumed to pass, which over-approximates).
//! 2. A wait of `t` on a barrier of `F` that is enabled stays enabled (its
//!    parity cannot change without `t`) and commutes with every operation of
//!    the others (none of them changes that parity).
//! 3. An arrive of `t` on a barrier `b` of `F` commutes with the others'
//!    operations when no other thread can pass a wait on `b` before `t`
//!    moves: arrivals add up in any order, and nothing else reads `b`.
//!
//! `{t}` is then a stubborn set with `t` as key transition (Valmari), and
//! exploring only stubborn sets preserves every reachable deadlock. When no
//! thread qualifies, all enabled operations are explored. The naive
//! per-thread explorer in `naive.rs` is the oracle the tests compare against.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::model::{Model, OpKind};
use crate::semantics::{apply, enabled, initial_barriers, BarState, Hazard};

#[derive(Clone, Debug)]
pub struct Budget {
    pub max_states: usize,
    pub max_time: Duration,
}

impl Default for Budget {
    fn default() -> Self {
        Budget { max_states: 2_000_000, max_time: Duration::from_secs(2) }
    }
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

#[derive(Clone, Debug)]
pub struct Counterexample {
    pub moves: Vec<Move>,
    pub last: State,
}

#[derive(Clone, Debug)]
pub enum Verdict {
    /// Every explored run finishes.
    Clean,
    Deadlock(Counterexample),
    /// The budget ran out first.
    Incomplete(String),
}

#[derive(Clone, Debug)]
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

/// What the threads at one position can still do while `frozen` barriers
/// keep their phase: arrivals per barrier, and which barriers they can
/// pass an open wait on.
#[derive(Clone, Debug)]
struct Walk {
    arrivals: Vec<u64>,
    passes_wait: Vec<bool>,
}

struct Reducer<'m> {
    model: &'m Model,
    cache: HashMap<(u32, u32, Vec<bool>, Vec<u8>), Walk>,
}

const UNBOUNDED: u64 = u64::MAX / 4;

impl<'m> Reducer<'m> {
    fn walk(&mut self, g: u32, pos: u32, frozen: &[bool], bars: &[BarState]) -> &Walk {
        let parities: Vec<u8> = bars.iter().map(|b| b.parity | ((b.initialised() as u8) << 1)).collect();
        let key = (g, pos, frozen.to_vec(), parities);
        let model = self.model;
        self.cache.entry(key).or_insert_with(|| {
            let n = bars.len();
            let mut walk = Walk { arrivals: vec![0; n], passes_wait: vec![false; n] };
            for op in &model.groups[g as usize].ops[pos as usize..] {
                match op.kind {
                    OpKind::Arrive { bar, count } => walk.arrivals[bar as usize] += count as u64,
                    OpKind::Wait { bar, parity } => {
                        let b = bars[bar as usize];
                        if frozen[bar as usize] && b.initialised() {
                            if b.parity == parity {
                                break; // blocked for as long as `bar` is frozen
                            }
                            walk.passes_wait[bar as usize] = true;
                        }
                    }
                    OpKind::Init { bar, .. } => {
                        // A re-initialisation resets counts: give up on `bar`.
                        walk.arrivals[bar as usize] = UNBOUNDED;
                        break;
                    }
                }
            }
            walk
        })
    }

    /// Barriers that cannot complete without the thread at `(g0, p0)`, and
    /// the barriers on which some other thread may pass an open wait.
    fn frozen_without(&mut self, state: &State, g0: u32, p0: u32) -> (Vec<bool>, Vec<bool>) {
        let n = state.bars.len();
        let mut frozen: Vec<bool> = state.bars.iter().map(BarState::initialised).collect();
        loop {
            let mut total = vec![0u64; n];
            let mut passes = vec![false; n];
            for (g, slots) in state.groups.iter().enumerate() {
                for &(pos, count) in slots {
                    let others = if g as u32 == g0 && pos == p0 { count - 1 } else { count };
                    if others == 0 || pos as usize >= self.model.groups[g].ops.len() {
                        continue;
                    }
                    let w = self.walk(g as u32, pos, &frozen, &state.bars);
                    for b in 0..n {
                        total[b] = total[b].saturating_add(w.arrivals[b].saturating_mul(others as u64));
                        passes[b] |= w.passes_wait[b];
                    }
                }
            }
            let mut changed = false;
            for b in 0..n {
                if frozen[b] && total[b] >= state.bars[b].pending as u64 {
                    frozen[b] = false;
                    changed = true;
                }
            }
            if !changed {
                return (frozen, passes);
            }
        }
    }

    /// A move that may be explored alone, if there is one.
    fn singleton(&mut self, state: &State, moves: &[Move]) -> Option<Move> {
        // Waits first: letting blocked-then-released threads catch up keeps
        // the arrivals of one phase together.
        let mut order: Vec<Move> = moves.to_vec();
        order.sort_by_key(|m| {
            let op = &self.model.groups[m.group as usize].ops[m.pos as usize].kind;
            match op {
                OpKind::Wait { .. } => 0,
                OpKind::Arrive { .. } => 1,
                OpKind::Init { .. } => 2,
            }
        });
        for m in order {
            let op = self.model.groups[m.group as usize].ops[m.pos as usize].kind.clone();
            match op {
                OpKind::Wait { bar, .. } => {
                    if !state.bars[bar as usize].initialised() {
                        continue;
                    }
                    let (frozen, _) = self.frozen_without(state, m.group, m.pos);
                    if frozen[bar as usize] {
                        return Some(m);
                    }
                }
                OpKind::Arrive { bar, .. } => {
                    if !state.bars[bar as usize].initialised() {
                        continue;
                    }
                    let (frozen, passes) = self.frozen_without(state, m.group, m.pos);
                    if frozen[bar as usize] && !passes[bar as usize] {
                        return Some(m);
                    }
                }
                OpKind::Init { .. } => {}
            }
        }
        None
    }
}

pub struct ExploreOptions {
    pub budget: Budget,
    /// Explore every enabled move (no stubborn singletons); for validation.
    pub full_expansion: bool,
}

impl Default for ExploreOptions {
    fn default() -> Self {
        ExploreOptions { budget: Budget::default(), full_expansion: false }
    }
}

pub fn explore(model: &Model, options: &ExploreOptions) -> Outcome {
    let start = Instant::now();
    let mut reducer = Reducer { model, cache: HashMap::new() };
    let init = initial_state(model);
    let mut index: HashMap<State, u32> = HashMap::new();
    // Per state: parent and the move that reached it.
    let mut parents: Vec<(u32, Move)> = Vec::new();
    let mut states: Vec<State> = Vec::new();
    index.insert(init.clone(), 0);
    states.push(init);
    parents.push((u32::MAX, Move { group: 0, pos: 0 }));
    let mut transitions = 0usize;
    let mut full_expansions = 0usize;
    let mut hazards: Vec<(Hazard, Counterexample)> = Vec::new();
    let mut head = 0usize;

    let path_to = |parents: &Vec<(u32, Move)>, mut i: u32| {
        let mut moves = Vec::new();
        while parents[i as usize].0 != u32::MAX {
            moves.push(parents[i as usize].1);
            i = parents[i as usize].0;
        }
        moves.reverse();
        moves
    };

    while head < states.len() {
        if states.len() > options.budget.max_states {
            return outcome(Verdict::Incomplete(format!("the state budget ({} states) ran out", options.budget.max_states)), states.len(), transitions, full_expansions, hazards, start);
        }
        if head % 256 == 0 && start.elapsed() > options.budget.max_time {
            return outcome(
                Verdict::Incomplete(format!("the time budget ({} ms) ran out after {} states", options.budget.max_time.as_millis(), states.len())),
                states.len(),
                transitions,
                full_expansions,
                hazards,
                start,
            );
        }
        let state = states[head].clone();
        let id = head as u32;
        head += 1;
        let moves = enabled_moves(model, &state);
        if moves.is_empty() {
            if !is_finished(model, &state) {
                let cex = Counterexample { moves: path_to(&parents, id), last: state };
                return outcome(Verdict::Deadlock(cex), states.len(), transitions, full_expansions, hazards, start);
            }
            continue;
        }
        let chosen: Vec<Move> = match (!options.full_expansion).then(|| reducer.singleton(&state, &moves)).flatten() {
            Some(m) => vec![m],
            None => {
                full_expansions += 1;
                if std::env::var_os("CUTE_LSP_TRACE_EXPANSIONS").is_some() && full_expansions < 5 {
                    eprintln!("full expansion at state {id}: {:?} moves {:?}", state, moves);
                }
                moves
            }
        };
        for mv in chosen {
            transitions += 1;
            match successor(model, &state, mv) {
                Ok(next) => {
                    if !index.contains_key(&next) {
                        index.insert(next.clone(), states.len() as u32);
                        states.push(next);
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
    outcome(Verdict::Clean, states.len(), transitions, full_expansions, hazards, start)
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
