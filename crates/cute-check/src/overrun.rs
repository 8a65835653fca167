//! Generations of named barriers that get mixed up (barrier recycling).
//!
//! A named barrier knows no generations: it counts registrations until the
//! count is reached, releases the waiters and starts over. A thread's k-th
//! registration with a barrier is meant for generation k; it lands in the
//! generation that is filling when it arrives, which is `completed`, the
//! number of generations completed so far. The two differ when a thread
//! overruns (registers for k+1 while generation k is still filling, e.g. a
//! `barrier_arrive` producer with no back-pressure), or comes late (its
//! generation completed without it, filled by someone else's overrun).
//!
//! Most kernels are cleared without a search, by happens-before alone (see
//! [`generations_ordered`]): a thread's next registration is safe when every
//! registration of the generation before it happens before it, through the
//! thread's own order and the waits on barriers it and others pass. Only
//! what that cannot prove goes to the search, which runs over every
//! interleaving of the model (counting symmetry only: it looks for a state,
//! not a deadlock, so the explorer's reductions do not apply), within a
//! budget. The number of completed generations is a function of the
//! positions (arrivals only add up), so it needs no state of its own.

use std::collections::HashSet;
use std::time::Instant;

use crate::explore::{enabled_moves, initial_state, successor, Budget, Counterexample, Move, State};
use crate::model::{BarrierKind, Model, OpKind};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Overrun {
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

impl Overrun {
    /// Registering ahead (the cause), rather than late (the consequence).
    pub fn ahead(&self) -> bool {
        self.meant > self.lands
    }
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

/// Whether some run of `model` mixes the generations of a named barrier up:
/// cleared by happens-before when it can be, searched for otherwise.
pub fn find(model: &Model, budget: &Budget) -> Verdict {
    if generations_ordered(model) {
        return Verdict::Clear;
    }
    search(model, budget)
}

/// The named barriers some thread registers with more than once: only
/// those can mix generations up.
fn registered_more_than_once(model: &Model) -> Vec<u32> {
    (0..model.barriers.len() as u32)
        .filter(|&b| {
            let barrier = &model.barriers[b as usize];
            matches!(barrier.kind, BarrierKind::NamedBarrier(_))
                && barrier.preset_count.is_some_and(|n| n > 0)
                && model.groups.iter().any(|g| g.ops.iter().filter(|o| matches!(o.kind, OpKind::Arrive { bar, .. } if bar == b)).count() > 1)
        })
        .collect()
}

/// Every interleaving, looking for a registration with a named barrier that
/// lands in a generation it is not meant for.
pub fn search(model: &Model, budget: &Budget) -> Verdict {
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

    let start = Instant::now();
    let mut seen: HashSet<State> = HashSet::new();
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
        for mv in enabled_moves(model, &state) {
            let op = &model.groups[mv.group as usize].ops[mv.pos as usize];
            if let (OpKind::Arrive { bar, .. }, Some(meant)) = (&op.kind, round[mv.group as usize][mv.pos as usize]) {
                if let Some(i) = slot(*bar) {
                    let n = model.barriers[*bar as usize].preset_count.unwrap_or(1).max(1) as u64;
                    let done = arrivals(&state, i);
                    let lands = (done / n) as u32;
                    if lands != meant && (meant > lands || late.is_none()) {
                        let found = Overrun {
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
        assert_eq!(find(&model, &Budget { max_states: 0, max_time: Budget::default().max_time }), Verdict::Clear);
        assert_eq!(search(&model, &Budget { max_states: 0, max_time: Budget::default().max_time }), Verdict::OutOfBudget);
    }

    fn search_only(model: &Model) -> Verdict {
        search(model, &Budget::default())
    }
}
