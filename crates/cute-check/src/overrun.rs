//! Generations of named barriers that get mixed up (barrier recycling).
//!
//! A named barrier knows no generations: it counts registrations until the
//! count is reached, releases the waiters and starts over. A thread's k-th
//! registration with a barrier is meant for generation k; it lands in the
//! generation that is filling when it arrives, which is `completed`, the number
//! of generations completed so far. The two differ when a thread overruns
//! (registers for k+1 while generation k is still filling, e.g. a
//! `barrier_arrive` producer with no back-pressure), or comes late (its
//! generation completed without it, filled by someone else's overrun).
//!
//! Most kernels are cleared without a search, by happens-before alone (see
//! [`generations_ordered`]): a thread's next registration is safe when every
//! registration of the generation before it happens before it, through the
//! thread's own order and the waits on named, CTA and cluster barriers it and
//! others pass, and every generation is meant to receive exactly the count (an
//! induction on the first arrival that would land wrong). Only what that cannot
//! prove goes to the search, which runs over the interleavings of the model
//! within a budget of states the caller gives (`cute-lint` gives 100,000; a
//! search out of budget makes the kernel `analysis-incomplete`). What it looks
//! for depends only on the order of the registrations with the barriers reused
//! (the number of completed generations is a function of the positions, since
//! arrivals only add up, and needs no state of its own), so it explores the
//! moves between two registrations in one order: the explorer's persistent
//! sets, widened to every enabled move where they hold a registration
//! (`explore::Reduction`). [`search_unreduced`] is the same search over every
//! interleaving, which the tests (`tests/overrun_proof.rs`) and
//! `benches/overrun.rs` compare it with.
//!
//! Groups of threads may also take turns at one barrier (two warp groups
//! running the same epilogue one after the other, ordered by a
//! `PipelineOrder`): see [`turn_taking`]. The count of registrations per round
//! does not report turns; the search looks instead for a registration made
//! while another turn has received part of its arrivals, and once the turns are
//! known apart, the explorer and the memory analysis run on the model with one
//! barrier per party ([`separate_turns`]).
//!
//! The rules this serves are `cute-lint`'s: `barrier-recycling` (this search,
//! and more threads in a round than its count), `named-barrier-count-mismatch`
//! and `divergent-barrier` (read off `Model::barrier_uses`), and
//! `named-barrier-deadlock` (a deadlock whose blocked threads all wait at named
//! barriers). Each takes the place of the generic `deadlock` and carries its
//! trace.

use rustc_hash::FxHashSet as HashSet;
use std::time::Instant;

use crate::explore::{enabled_moves, initial_state, successor, Budget, Counterexample, Move, Reduction, State};
use crate::model::{BarrierKind, Model, OpKind};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Overrun {
    /// On a barrier groups take turns at (see [`turn_taking`]): a group of
    /// the turn that was still filling when `group` registered for another.
    pub sharing_turn_with: Option<u32>,
    /// The thread class (group, position) whose arrival lands in the wrong
    /// generation.
    pub group: u32,
    pub pos: u32,
    pub bar: u32,
    /// The generation the arrival is meant for (the thread's own count).
    pub meant: u32,
    /// The generation it lands in.
    pub lands: u32,
    /// Arrivals the landing generation still missed.
    pub missing: u32,
    /// The run up to (not including) the arrival.
    pub cex: Counterexample,
}

/// The turns groups take at a barrier, in order: each the registrations
/// (group, position) that make it.
pub type Turns = Vec<Vec<(usize, usize)>>;

impl Overrun {
    /// Registering ahead (the cause), rather than late (the consequence).
    pub fn ahead(&self) -> bool {
        self.meant > self.lands || self.sharing_turn_with.is_some()
    }
}

/// The turns of a named barrier that groups of threads take turns at, each
/// turn the registrations (group, position) of `count` threads.
///
/// Two warp groups of a ping-pong kernel run the same epilogue, with the
/// same `NamedBarrier(id, 128)`, one after the other: another barrier (a
/// `PipelineOrder`) keeps their epilogues apart, so each generation is one
/// warp group's. Their k-th registrations then add up to twice the count,
/// and the generation a registration lands in is not its round. A
/// barrier's threads are cut, in thread order, into runs of `count`
/// arrivals per round: each run is a turn. The generations stay apart
/// exactly when no thread registers for a turn while another turn of the
/// barrier has received part of its arrivals (by induction on the first
/// generation that mixes: before it, every generation is one whole turn, so
/// a turn with part of its arrivals is the generation filling).
///
/// `None` when no round has more registrations than the count, or when a
/// group's threads fall in more than one run (two warp groups that run
/// alike as one group: nothing then keeps their turns apart, which
/// `barrier_recycling`'s count of registrations reports).
pub fn turn_taking(model: &Model, bar: u32) -> Option<Turns> {
    let barrier = model.barriers.get(bar as usize)?;
    let count = u64::from(barrier.preset_count.filter(|&n| n > 0)?);
    if !matches!(barrier.kind, BarrierKind::NamedBarrier(_)) {
        return None;
    }
    // Per round: (group, position, arrivals per thread).
    let mut rounds: Vec<Vec<(usize, usize, u64)>> = Vec::new();
    for (g, group) in model.groups.iter().enumerate() {
        let mut round = 0;
        for (pos, op) in group.ops.iter().enumerate() {
            if let OpKind::Arrive { bar: b, count: n } = op.kind {
                if b == bar {
                    if rounds.len() <= round {
                        rounds.resize(round + 1, Vec::new());
                    }
                    rounds[round].push((g, pos, u64::from(n)));
                    round += 1;
                }
            }
        }
    }
    let total = |r: &[(usize, usize, u64)]| r.iter().map(|&(g, _, n)| n * u64::from(model.groups[g].size())).sum::<u64>();
    if !rounds.iter().any(|r| total(r) > count) {
        return None;
    }
    let mut turns = Vec::new();
    for round in &rounds {
        // The threads of the round in thread order, each with its group.
        let mut threads: Vec<((u32, u32), usize, u64)> =
            round.iter().flat_map(|&(g, _, n)| model.groups[g].threads.iter().map(move |&t| (t, g, n))).collect();
        threads.sort();
        let mut turn_of_group: std::collections::BTreeMap<usize, u64> = Default::default();
        let mut before = 0;
        for (_, g, n) in threads {
            let turn = before / count;
            if (before + n - 1) / count != turn || *turn_of_group.entry(g).or_insert(turn) != turn {
                return None;
            }
            before += n;
        }
        let first = turns.len();
        for &(g, pos, _) in round {
            let turn = first + turn_of_group[&g] as usize;
            if turns.len() <= turn {
                turns.resize(turn + 1, Vec::new());
            }
            turns[turn].push((g, pos));
        }
    }
    Some(turns)
}

/// What the search for mixed generations concluded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every run keeps the generations apart.
    Clear,
    /// An overrun: one that registers ahead if any is reachable, else one
    /// that registers late.
    Found(Box<Overrun>),
    /// The budget ran out before every run was seen, and none mixed the
    /// generations up so far.
    OutOfBudget,
}

/// `model` with a barrier of their own for each party of groups that take
/// turns at a named barrier (see [`turn_taking`]); `None` when no barrier
/// is taken in turns.
///
/// The model counts a named barrier's generations per thread (a thread's
/// k-th sync waits for the parity of generation k), which holds when every
/// thread's k-th registration lands in generation k. Taken in turns, a
/// group's syncs land after the other groups' turns (warp group 1's first
/// sync is generation 1 after warp group 0's first), and the parities the
/// threads wait for would be off. When turns do not overlap, which the
/// search for mixed generations checks on the model as it is, each
/// generation is one party's: the barrier orders nothing between parties,
/// and each party's use of it is that of a barrier of its own. The
/// explorer and the memory analysis run on the model so separated.
pub fn separate_turns(model: &Model) -> Option<Model> {
    let mut separated = model.clone();
    let mut changed = false;
    for bar in 0..model.barriers.len() as u32 {
        let Some(turns) = turn_taking(model, bar) else { continue };
        // Parties: the groups that share a turn, joined transitively.
        let mut party: Vec<usize> = (0..model.groups.len()).collect();
        fn root(party: &mut [usize], g: usize) -> usize {
            let mut r = g;
            while party[r] != r {
                r = party[r];
            }
            party[g] = r;
            r
        }
        for turn in &turns {
            let Some(&(first, _)) = turn.first() else { continue };
            for &(g, _) in turn {
                let (a, b) = (root(&mut party, first), root(&mut party, g));
                party[b] = a;
            }
        }
        let mut parties: Vec<usize> = turns.iter().filter_map(|t| t.first().map(|&(g, _)| root(&mut party, g))).collect();
        parties.sort_unstable();
        parties.dedup();
        // The first party keeps the barrier; the others get copies.
        for &p in parties.iter().skip(1) {
            let copy = separated.barriers.len() as u32;
            separated.barriers.push(model.barriers[bar as usize].clone());
            for g in 0..model.groups.len() {
                if root(&mut party, g) != p {
                    continue;
                }
                for op in &mut separated.groups[g].ops {
                    match &mut op.kind {
                        OpKind::Arrive { bar: b, .. } | OpKind::Wait { bar: b, .. } if *b == bar => *b = copy,
                        _ => {}
                    }
                }
                changed = true;
            }
        }
    }
    changed.then_some(separated)
}

/// Whether some run of `model` mixes the generations of a named barrier up:
/// cleared by happens-before when it can be, searched for otherwise.
pub fn find(model: &Model, budget: &Budget) -> Verdict {
    if generations_ordered(model) {
        return Verdict::Clear;
    }
    search(model, budget)
}

/// The named barriers some thread registers with more than once, and
/// those groups take turns at: only those can mix generations up.
fn registered_more_than_once(model: &Model) -> Vec<u32> {
    (0..model.barriers.len() as u32)
        .filter(|&b| {
            let barrier = &model.barriers[b as usize];
            matches!(barrier.kind, BarrierKind::NamedBarrier(_))
                && barrier.preset_count.is_some_and(|n| n > 0)
                && (model.groups.iter().any(|g| g.ops.iter().filter(|o| matches!(o.kind, OpKind::Arrive { bar, .. } if bar == b)).count() > 1)
                    || turn_taking(model, b).is_some())
        })
        .collect()
}

/// Every interleaving, looking for a registration with a named barrier that
/// lands in a generation it is not meant for.
pub fn search(model: &Model, budget: &Budget) -> Verdict {
    search_with(model, budget, true)
}

/// [`search`] over every interleaving: the reference the reduced search is
/// tested against.
pub fn search_unreduced(model: &Model, budget: &Budget) -> Verdict {
    search_with(model, budget, false)
}

/// [`search`], over every interleaving unless `reduced`.
fn search_with(model: &Model, budget: &Budget, reduced: bool) -> Verdict {
    let reused = registered_more_than_once(model);
    if reused.is_empty() {
        return Verdict::Clear;
    }
    // Per group and position: arrivals made on each reused barrier before
    // it, and the round of the arrival there.
    let slot = |b: u32| reused.iter().position(|&r| r == b);
    let mut before: Vec<Vec<Vec<u64>>> = Vec::new();
    let mut round: Vec<Vec<Option<u32>>> = Vec::new();
    for g in &model.groups {
        let mut acc = vec![0u64; reused.len()];
        let mut uses = vec![0u32; reused.len()];
        let mut per_pos = Vec::with_capacity(g.ops.len() + 1);
        let mut rounds = Vec::with_capacity(g.ops.len());
        for op in &g.ops {
            per_pos.push(acc.clone());
            match op.kind {
                OpKind::Arrive { bar, count } => match slot(bar) {
                    Some(i) => {
                        rounds.push(Some(uses[i]));
                        uses[i] += 1;
                        acc[i] += count as u64;
                    }
                    None => rounds.push(None),
                },
                _ => rounds.push(None),
            }
        }
        per_pos.push(acc);
        before.push(per_pos);
        round.push(rounds);
    }
    let arrivals = |state: &State, i: usize| -> u64 {
        state
            .groups
            .iter()
            .enumerate()
            .map(|(g, slots)| slots.iter().map(|&(p, n)| before[g][p as usize][i] * n as u64).sum::<u64>())
            .sum()
    };

    // Per reused barrier, its turns when groups take turns at it; per group
    // and position, the turn its registration belongs to.
    let turns: Vec<Option<Turns>> = reused.iter().map(|&b| turn_taking(model, b)).collect();
    let turn_at = |g: usize, pos: usize, i: usize| turns[i].as_ref().and_then(|ts| ts.iter().position(|t| t.contains(&(g, pos))));
    // The threads of a turn that have made their registration for it.
    let registered = |state: &State, turn: &[(usize, usize)]| -> u32 {
        turn.iter().map(|&(g, q)| state.groups[g].iter().filter(|&&(p, _)| p as usize > q).map(|&(_, n)| n).sum::<u32>()).sum()
    };
    let threads_of = |turn: &[(usize, usize)]| turn.iter().map(|&(g, _)| model.groups[g].size()).sum::<u32>();

    let start = Instant::now();
    // What decides a finding is the order of the registrations with the
    // reused barriers: the moves in between are explored in one order.
    let mut reduction = Reduction::new(model);
    let mut seen: HashSet<State> = HashSet::default();
    let init = initial_state(model);
    seen.insert(init.clone());
    // Depth first; each state keeps the move that reached it and its
    // parent, to rebuild the run.
    let mut nodes: Vec<(usize, Move)> = Vec::new();
    let path_to = |nodes: &[(usize, Move)], mut at: usize| -> Vec<Move> {
        let mut moves = Vec::new();
        while at != usize::MAX {
            let (parent, mv) = nodes[at];
            moves.push(mv);
            at = parent;
        }
        moves.reverse();
        moves
    };
    let mut stack: Vec<(State, usize)> = vec![(init, usize::MAX)];
    let mut late: Option<Overrun> = None;
    while let Some((state, node)) = stack.pop() {
        if seen.len() > budget.max_states || start.elapsed() > budget.max_time {
            return late.map_or(Verdict::OutOfBudget, |l| Verdict::Found(Box::new(l)));
        }
        let visible = |mv: &Move| matches!(model.groups[mv.group as usize].ops[mv.pos as usize].kind, OpKind::Arrive { bar, .. } if slot(bar).is_some());
        let enabled = enabled_moves(model, &state);
        let moves = if reduced { reduction.moves(&state, enabled, visible) } else { enabled };
        for mv in moves {
            let op = &model.groups[mv.group as usize].ops[mv.pos as usize];
            if let (OpKind::Arrive { bar, .. }, Some(meant)) = (&op.kind, round[mv.group as usize][mv.pos as usize]) {
                if let (Some(i), Some(ours)) = (slot(*bar), slot(*bar).and_then(|i| turn_at(mv.group as usize, mv.pos as usize, i))) {
                    let all = turns[i].as_deref().unwrap_or_default();
                    let filling = all.iter().enumerate().find(|&(t, turn)| {
                        let r = registered(&state, turn);
                        t != ours && r > 0 && r < threads_of(turn)
                    });
                    if let Some((_, turn)) = filling {
                        let n = model.barriers[*bar as usize].preset_count.unwrap_or(1).max(1) as u64;
                        let done = arrivals(&state, i);
                        return Verdict::Found(Box::new(Overrun {
                            sharing_turn_with: turn.first().map(|&(g, _)| g as u32),
                            group: mv.group,
                            pos: mv.pos,
                            bar: *bar,
                            meant,
                            lands: (done / n) as u32,
                            missing: (n - done % n) as u32,
                            cex: Counterexample { moves: path_to(&nodes, node), last: state.clone() },
                        }));
                    }
                } else if let Some(i) = slot(*bar) {
                    let n = model.barriers[*bar as usize].preset_count.unwrap_or(1).max(1) as u64;
                    let done = arrivals(&state, i);
                    let lands = (done / n) as u32;
                    if lands != meant && (meant > lands || late.is_none()) {
                        let found = Overrun {
                            sharing_turn_with: None,
                            group: mv.group,
                            pos: mv.pos,
                            bar: *bar,
                            meant,
                            lands,
                            missing: (n - done % n) as u32,
                            cex: Counterexample { moves: path_to(&nodes, node), last: state.clone() },
                        };
                        if found.ahead() {
                            return Verdict::Found(Box::new(found));
                        }
                        late = Some(found);
                    }
                }
            }
            let Ok(next) = successor(model, &state, mv) else { continue };
            if seen.insert(next.clone()) {
                nodes.push((node, mv));
                stack.push((next, nodes.len() - 1));
            }
        }
    }
    late.map_or(Verdict::Clear, |l| Verdict::Found(Box::new(l)))
}

/// Proves that no registration with a named barrier lands in the wrong
/// generation, or gives up (`false`, and the search decides).
///
/// The argument is an induction on the first registration, on any barrier
/// with a preset count, that lands wrong; every earlier one landed in the
/// generation it was meant for. Then a wait that follows a thread's `j`-th
/// registration with a barrier ends only once generation `j` has
/// completed, which needs every registration meant for `j`: those happen
/// before whatever follows the wait, in every thread that waited.
///
/// A thread's `k+1`-th registration with `b` cannot land early when every
/// registration meant for generation `k` happens before it in that sense:
/// generation `k` has completed by then. It cannot land late when each
/// generation is meant to receive exactly the barrier's count: a generation
/// completes without one of its own registrations only by taking someone
/// else's early one. So the first wrong landing cannot exist when every
/// registration of a reused named barrier is so ordered, and when the barriers whose
/// waits the ordering leans on are exact and cannot land wrong themselves
/// (named barriers are covered by this very proof or by the search; the
/// others must never be registered with twice without a wait in between).
/// Waits on mbarriers give no order here: a wait with a parity can pass on
/// an older phase, so which generation it saw is not known statically.
pub fn generations_ordered(model: &Model) -> bool {
    let reused = registered_more_than_once(model);
    if reused.is_empty() {
        return true;
    }
    let groups = &model.groups;
    // Per barrier, per generation: the (group, position) of each
    // registration meant for it, and the arrivals they add up to.
    let mut meant: Vec<Vec<Vec<(usize, usize)>>> = vec![Vec::new(); model.barriers.len()];
    let mut total: Vec<Vec<u64>> = vec![Vec::new(); model.barriers.len()];
    // Per group and position: the generation a wait there waits for, on a
    // barrier whose waits can be trusted.
    let mut waits_for: Vec<Vec<Option<(u32, usize)>>> = Vec::with_capacity(groups.len());
    let mut free_running = vec![false; model.barriers.len()];
    for (g, group) in groups.iter().enumerate() {
        let mut registered = vec![0usize; model.barriers.len()];
        let mut waited = vec![true; model.barriers.len()];
        let mut per_pos = Vec::with_capacity(group.ops.len());
        for (pos, op) in group.ops.iter().enumerate() {
            per_pos.push(None);
            match op.kind {
                OpKind::Arrive { bar, count } => {
                    let b = bar as usize;
                    let j = registered[b];
                    if meant[b].len() <= j {
                        meant[b].resize(j + 1, Vec::new());
                        total[b].resize(j + 1, 0);
                    }
                    meant[b][j].push((g, pos));
                    total[b][j] += count as u64 * group.size() as u64;
                    registered[b] += 1;
                    free_running[b] |= !waited[b];
                    waited[b] = false;
                }
                OpKind::Wait { bar, .. } => {
                    let b = bar as usize;
                    waited[b] = true;
                    if registered[b] > 0 {
                        *per_pos.last_mut().unwrap() = Some((bar, registered[b] - 1));
                    }
                }
                OpKind::Init { .. } => {}
            }
        }
        waits_for.push(per_pos);
    }
    // Each generation is meant to receive exactly the count, but for the
    // last, which may stay short: a turn handed over at the end of a
    // ping-pong that nobody takes.
    let exact = |b: usize| {
        model.barriers[b].preset_count.is_some_and(|n| {
            let n = n as u64;
            let (last, full) = total[b].split_last().map_or((0, &[][..]), |(l, f)| (*l, f));
            n > 0 && full.iter().all(|&t| t == n) && last <= n
        })
    };
    let trusted: Vec<bool> = (0..model.barriers.len())
        .map(|b| {
            exact(b)
                && match model.barriers[b].kind {
                    BarrierKind::NamedBarrier(_) => true,
                    BarrierKind::CtaBarrier | BarrierKind::ClusterBarrier => !free_running[b],
                    _ => false,
                }
        })
        .collect();
    if reused.iter().any(|&b| !trusted[b as usize]) {
        return false;
    }

    for &b in &reused {
        let b = b as usize;
        for k in 1..meant[b].len() {
            for &(g, q) in &meant[b][k] {
                // What every thread of each group has done before this
                // thread's registration: positions below `done[group]`.
                let mut done = vec![0usize; groups.len()];
                let mut scanned = vec![0usize; groups.len()];
                // The registering thread's own past, then everything its
                // waits and the others' waits pull in, to a fixpoint.
                let mut pending: Vec<(usize, usize, usize)> = vec![(g, 0, q)];
                while let Some((h, from, to)) = pending.pop() {
                    for pos in from..to {
                        let Some((c, j)) = waits_for[h][pos] else { continue };
                        if !trusted[c as usize] {
                            continue;
                        }
                        for &(x, p) in &meant[c as usize][j] {
                            if done[x] <= p {
                                done[x] = p + 1;
                                if scanned[x] < done[x] {
                                    pending.push((x, scanned[x], done[x]));
                                    scanned[x] = done[x];
                                }
                            }
                        }
                    }
                }
                let ordered = meant[b][k - 1]
                    .iter()
                    .all(|&(x, p)| done[x] > p || (x == g && groups[g].size() == 1));
                if !ordered {
                    return false;
                }
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Barrier, Group, Op};
    use cute_syntax::TextRange;

    fn op(kind: OpKind) -> Op {
        Op { kind, site: TextRange::new(0, 1) }
    }

    /// Warp 0 arrives `rounds` times on named barrier 1 (count 64), warp 1
    /// syncs as many times; with `back_pressure` warp 0 waits on barrier 2,
    /// which warp 1 arrives on after each sync.
    fn producer_consumer(rounds: u32, back_pressure: bool) -> Model {
        let barriers = vec![
            Barrier { name: "named barrier 1".into(), cta: 0, kind: BarrierKind::NamedBarrier(1), preset_count: Some(64) },
            Barrier { name: "named barrier 2".into(), cta: 0, kind: BarrierKind::NamedBarrier(2), preset_count: Some(64) },
        ];
        let mut producer = Vec::new();
        let mut consumer = Vec::new();
        for r in 0..rounds {
            if back_pressure && r > 0 {
                producer.push(op(OpKind::Arrive { bar: 1, count: 32 }));
                producer.push(op(OpKind::Wait { bar: 1, parity: ((r - 1) % 2) as u8 }));
            }
            producer.push(op(OpKind::Arrive { bar: 0, count: 32 }));
            consumer.push(op(OpKind::Arrive { bar: 0, count: 32 }));
            consumer.push(op(OpKind::Wait { bar: 0, parity: (r % 2) as u8 }));
            if back_pressure && r + 1 < rounds {
                consumer.push(op(OpKind::Arrive { bar: 1, count: 32 }));
            }
        }
        Model {
            ctas: 1,
            threads_per_cta: 64,
            barriers,
            groups: vec![Group { ops: producer, threads: vec![(0, 0)] }, Group { ops: consumer, threads: vec![(0, 32)] }],
            ..Model::default()
        }
    }

    #[test]
    fn a_producer_without_back_pressure_overruns() {
        let model = producer_consumer(3, false);
        assert!(!generations_ordered(&model));
        let Verdict::Found(found) = find(&model, &Budget::default()) else { panic!("an overrun") };
        assert!(found.ahead());
        assert_eq!(found.group, 0);
        assert!(found.meant > found.lands);
    }

    #[test]
    fn back_pressure_keeps_generations_apart() {
        let model = producer_consumer(3, true);
        // Proven without a search: the producer's wait on barrier 2 follows
        // the consumer's sync on barrier 1.
        assert!(generations_ordered(&model));
        assert_eq!(find(&model, &Budget::default()), Verdict::Clear);
        // The search agrees.
        assert_eq!(search_only(&model), Verdict::Clear);
    }

    #[test]
    fn one_round_cannot_overrun() {
        assert_eq!(find(&producer_consumer(1, false), &Budget::default()), Verdict::Clear);
    }

    /// Two warpgroups taking turns (ping-pong): the second lets the first go
    /// once, then each waits for its own turn and hands the turn over.
    /// Without `hand_over` the second never waits for its turn.
    fn ping_pong(rounds: u32, hand_over: bool) -> Model {
        let barriers = vec![
            Barrier { name: "named barrier 1".into(), cta: 0, kind: BarrierKind::NamedBarrier(1), preset_count: Some(64) },
            Barrier { name: "named barrier 2".into(), cta: 0, kind: BarrierKind::NamedBarrier(2), preset_count: Some(64) },
        ];
        let (mut first, mut second) = (Vec::new(), vec![op(OpKind::Arrive { bar: 0, count: 32 })]);
        for r in 0..rounds {
            let parity = (r % 2) as u8;
            first.push(op(OpKind::Arrive { bar: 0, count: 32 }));
            first.push(op(OpKind::Wait { bar: 0, parity }));
            first.push(op(OpKind::Arrive { bar: 1, count: 32 }));
            if hand_over || r == 0 {
                second.push(op(OpKind::Arrive { bar: 1, count: 32 }));
                second.push(op(OpKind::Wait { bar: 1, parity }));
            }
            // Hands the turn over after the last round too, as kernels do:
            // nobody takes that turn, the last generation stays short.
            second.push(op(OpKind::Arrive { bar: 0, count: 32 }));
        }
        if !hand_over {
            // The second group stops waiting for its turn: it keeps
            // letting the first go, so its arrivals run ahead.
            second.retain(|o| !matches!(o.kind, OpKind::Arrive { bar: 1, .. } | OpKind::Wait { bar: 1, .. }));
            first.retain(|o| !matches!(o.kind, OpKind::Arrive { bar: 1, .. }));
        }
        Model {
            ctas: 1,
            threads_per_cta: 64,
            barriers,
            groups: vec![Group { ops: first, threads: vec![(0, 0)] }, Group { ops: second, threads: vec![(0, 32)] }],
            ..Model::default()
        }
    }

    #[test]
    fn ping_pong_is_proven_without_a_search() {
        let model = ping_pong(4, true);
        assert!(generations_ordered(&model));
        assert_eq!(search_only(&model), Verdict::Clear);
    }

    #[test]
    fn ping_pong_without_the_hand_over_overruns() {
        let model = ping_pong(4, false);
        assert!(!generations_ordered(&model));
        assert!(matches!(find(&model, &Budget::default()), Verdict::Found(o) if o.ahead()));
    }

    #[test]
    fn a_search_out_of_budget_says_so() {
        let model = producer_consumer(3, true);
        // Proven, so no search runs even with no budget at all.
        assert_eq!(find(&model, &Budget { max_states: 0, max_time: Budget::default().max_time, ..Budget::default() }), Verdict::Clear);
        assert_eq!(search(&model, &Budget { max_states: 0, max_time: Budget::default().max_time, ..Budget::default() }), Verdict::OutOfBudget);
    }

    /// Two groups of two warps take one turn each at named barrier 1
    /// (count 64): the first syncs on it, the second syncs on it after
    /// the first. With `hand_over` the first hands the turn over on named
    /// barrier 2 (count 128: the first arrives, the second syncs) once past
    /// its generation; without it nothing keeps the turns apart.
    fn turns(hand_over: bool) -> Model {
        let barriers = vec![
            Barrier { name: "named barrier 1".into(), cta: 0, kind: BarrierKind::NamedBarrier(1), preset_count: Some(64) },
            Barrier { name: "named barrier 2".into(), cta: 0, kind: BarrierKind::NamedBarrier(2), preset_count: Some(128) },
        ];
        let first = vec![
            op(OpKind::Arrive { bar: 0, count: 32 }),
            op(OpKind::Wait { bar: 0, parity: 0 }),
            op(OpKind::Arrive { bar: 1, count: 32 }),
        ];
        let mut second = vec![op(OpKind::Arrive { bar: 1, count: 32 }), op(OpKind::Wait { bar: 1, parity: 0 })];
        if !hand_over {
            second.clear();
        }
        second.push(op(OpKind::Arrive { bar: 0, count: 32 }));
        second.push(op(OpKind::Wait { bar: 0, parity: if hand_over { 1 } else { 0 } }));
        Model {
            ctas: 1,
            threads_per_cta: 128,
            barriers,
            groups: vec![Group { ops: first, threads: vec![(0, 0), (0, 32)] }, Group { ops: second, threads: vec![(0, 64), (0, 96)] }],
            ..Model::default()
        }
    }

    #[test]
    fn groups_that_take_turns_are_told_apart_in_thread_order() {
        let taken = turn_taking(&turns(true), 0).expect("turns");
        assert_eq!(taken, vec![vec![(0, 0)], vec![(1, 2)]]);
        // Barrier 2 is one generation of everyone's.
        assert_eq!(turn_taking(&turns(true), 1), None);
    }

    #[test]
    fn turns_handed_over_keep_their_generations_apart() {
        assert_eq!(find(&turns(true), &Budget::default()), Verdict::Clear);
    }

    #[test]
    fn turns_not_handed_over_mix() {
        let Verdict::Found(found) = find(&turns(false), &Budget::default()) else { panic!("mixed turns") };
        assert_eq!(found.sharing_turn_with, Some(if found.group == 0 { 1 } else { 0 }));
        assert_eq!(found.bar, 0);
    }

    /// Two warp groups that run alike are one group of the model: nothing
    /// tells their turns apart, so the barrier is not taken as turns.
    #[test]
    fn one_group_over_two_turns_is_not_taken_as_turns() {
        let mut model = turns(false);
        let second = model.groups.pop().unwrap();
        model.groups[0].threads.extend(second.threads);
        model.groups[0].ops = vec![op(OpKind::Arrive { bar: 0, count: 32 }), op(OpKind::Wait { bar: 0, parity: 0 })];
        assert_eq!(turn_taking(&model, 0), None);
    }

    /// Each party of a barrier taken in turns gets a barrier of its own
    /// (the first keeps it); a barrier every thread uses in every
    /// generation is left as it is.
    #[test]
    fn each_party_of_turns_gets_a_barrier_of_its_own() {
        let separated = separate_turns(&turns(true)).expect("separated");
        assert_eq!(separated.barriers.len(), 3);
        let barriers_of = |g: usize| {
            separated.groups[g]
                .ops
                .iter()
                .map(|o| match o.kind {
                    OpKind::Arrive { bar, .. } | OpKind::Wait { bar, .. } | OpKind::Init { bar, .. } => bar,
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(barriers_of(0), vec![0, 0, 1]);
        assert_eq!(barriers_of(1), vec![1, 1, 2, 2]);
        assert_eq!(separate_turns(&producer_consumer(3, true)), None);
    }

    /// The reduced search agrees with every interleaving on the models above.
    #[test]
    fn the_reduced_search_finds_what_the_full_one_finds() {
        for model in [producer_consumer(3, false), producer_consumer(3, true), ping_pong(4, true), ping_pong(4, false), turns(true), turns(false)] {
            let reduced = search(&model, &Budget::default());
            let full = search_unreduced(&model, &Budget::default());
            assert_eq!(std::mem::discriminant(&reduced), std::mem::discriminant(&full));
        }
    }

    fn search_only(model: &Model) -> Verdict {
        search(model, &Budget::default())
    }
}
