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
//! The search runs over every interleaving of the model (counting symmetry
//! only: it looks for a state, not a deadlock, so the explorer's reductions
//! do not apply), within a budget. The number of completed generations is a
//! function of the positions (arrivals only add up), so it needs no state
//! of its own.

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

/// The first overrun found (one that registers ahead if any is reachable,
/// else one that registers late), or `None` when every run keeps the
/// generations apart or the budget ran out first.
pub fn find(model: &Model, budget: &Budget) -> Option<Overrun> {
    let bars: Vec<u32> = model
        .barriers
        .iter()
        .enumerate()
        .filter(|(_, b)| matches!(b.kind, BarrierKind::NamedBarrier(_)) && b.preset_count.is_some_and(|n| n > 0))
        .map(|(i, _)| i as u32)
        .collect();
    if bars.is_empty() {
        return None;
    }
    // Only barriers some thread registers with more than once can mix
    // generations up.
    let reused: Vec<u32> = bars
        .iter()
        .copied()
        .filter(|&b| {
            model.groups.iter().any(|g| g.ops.iter().filter(|o| matches!(o.kind, OpKind::Arrive { bar, .. } if bar == b)).count() > 1)
        })
        .collect();
    if reused.is_empty() {
        return None;
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
            return late;
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
                            return Some(found);
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
    late
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
        let found = find(&producer_consumer(3, false), &Budget::default()).expect("an overrun");
        assert!(found.ahead());
        assert_eq!(found.group, 0);
        assert!(found.meant > found.lands);
    }

    #[test]
    fn back_pressure_keeps_generations_apart() {
        assert_eq!(find(&producer_consumer(3, true), &Budget::default()), None);
    }

    #[test]
    fn one_round_cannot_overrun() {
        assert_eq!(find(&producer_consumer(1, false), &Budget::default()), None);
    }
}
