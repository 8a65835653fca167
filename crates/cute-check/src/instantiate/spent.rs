//! What the threads run so far spent, and whether that stops the run
//! before the next thread: past the statement budget, or, in the first run
//! (every condition on runtime values decided as false), once the runs the
//! other ways of deciding the conditions met so far need would pass it
//! together (see [`super::cost_of_other_ways`]): the kernel cannot be
//! checked then, and nothing the remaining threads do changes that much.
//! The sequential run and the merge of runs on several cores
//! (`parallel.rs`) ask the same of the same threads in the same order, so
//! they stop at the same thread.

use cute_ir::ast::StmtId;

use super::{cost_of_other_ways, Setup, WarpCost, MAX_OPEN_CONDITIONS};

#[derive(Clone, Default)]
pub(super) struct Spent {
    /// Threads before these ran elsewhere: the conditions they met are not
    /// known here, so only the merge of the runs stops for the other ways.
    not_first: bool,
    steps: usize,
    /// By warp (CTA, warp index), in thread order.
    warps: Vec<((u32, u32), WarpCost)>,
}

pub(super) enum Stop {
    Statements,
    OtherWays,
}

impl Spent {
    /// For a run of threads that may not be the first (see `not_first`).
    pub(super) fn after_others() -> Spent {
        Spent { not_first: true, ..Spent::default() }
    }

    /// Thread `thread` ran `steps` statements and met the conditions `met`.
    pub(super) fn add(&mut self, thread: (u32, u32), steps: usize, met: &[StmtId]) {
        self.steps += steps;
        let warp = (thread.0, thread.1 / 32);
        if self.warps.last().is_none_or(|(w, _)| *w != warp) {
            self.warps.push((warp, WarpCost::default()));
        }
        let cost = &mut self.warps.last_mut().expect("just pushed").1;
        cost.steps += steps;
        for c in met {
            if !cost.conditions.contains(c) {
                cost.conditions.push(*c);
            }
        }
    }

    /// Why the run stops before its next thread, if it does.
    pub(super) fn stop(&self, setup: &Setup<'_>) -> Option<Stop> {
        if self.steps > setup.options.max_steps_total {
            return Some(Stop::Statements);
        }
        if !setup.scenario.is_empty() || self.not_first {
            return None;
        }
        // The conditions a way decides: the first by statement, as the
        // ways are made (each decided two ways at least).
        let mut met: Vec<StmtId> = self.warps.iter().flat_map(|(_, w)| w.conditions.iter().copied()).collect();
        if met.is_empty() {
            return None;
        }
        met.sort_unstable();
        met.dedup();
        met.truncate(MAX_OPEN_CONDITIONS);
        (cost_of_other_ways(self.warps.iter().map(|(_, w)| w), &met, |_| 2) > setup.options.max_steps_total).then_some(Stop::OtherWays)
    }

    /// What each warp run cost, in thread order (`Instantiated::costs`).
    pub(super) fn into_costs(self) -> Vec<WarpCost> {
        self.warps.into_iter().map(|(_, w)| w).collect()
    }
}
