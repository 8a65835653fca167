//! The reference explorer: every thread named, every enabled operation of every
//! thread explored, no reduction at all. Exponential, so only for small models;
//! the tests use it as the oracle for `explore` on generated protocols
//! (`tests/oracle.rs`), and compare both with SPIN on the Promela export
//! (`tests/spin.rs`).

use rustc_hash::FxHashSet as HashSet;

use crate::model::Model;
use crate::semantics::{apply, enabled, initial_barriers, BarState};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NaiveVerdict {
    Clean,
    Deadlock,
    /// Some path reached a hazard (arrive before init, ...).
    Hazard,
    TooBig,
}

pub fn naive_verdict(model: &Model, max_states: usize) -> NaiveVerdict {
    // Per thread: (group, position).
    let threads: Vec<usize> = model.groups.iter().enumerate().flat_map(|(g, gr)| std::iter::repeat_n(g, gr.threads.len())).collect();
    let init: (Vec<u32>, Vec<BarState>) = (vec![0; threads.len()], initial_barriers(model));
    let mut seen: HashSet<(Vec<u32>, Vec<BarState>)> = HashSet::default();
    let mut stack = vec![init.clone()];
    seen.insert(init);
    let mut hazard = false;
    while let Some((pcs, bars)) = stack.pop() {
        if seen.len() > max_states {
            return NaiveVerdict::TooBig;
        }
        let mut any = false;
        let mut all_done = true;
        for (t, &g) in threads.iter().enumerate() {
            let ops = &model.groups[g].ops;
            let Some(op) = ops.get(pcs[t] as usize) else { continue };
            all_done = false;
            if !enabled(&op.kind, &bars) {
                continue;
            }
            any = true;
            let mut nb = bars.clone();
            if apply(&op.kind, op.site, &mut nb).is_err() {
                hazard = true;
                continue;
            }
            let mut np = pcs.clone();
            np[t] += 1;
            let next = (np, nb);
            if seen.insert(next.clone()) {
                stack.push(next);
            }
        }
        if !any && !all_done {
            return NaiveVerdict::Deadlock;
        }
    }
    if hazard {
        NaiveVerdict::Hazard
    } else {
        NaiveVerdict::Clean
    }
}
