//! The ways of deciding a kernel's conditions on runtime values that are
//! run and checked.
//!
//! A condition the instantiation cannot decide (on a tensor's contents, a
//! size known only at run time) is decided alike in every thread for a
//! whole run of the threads: each way of deciding the conditions is a model
//! of its own. A run decides the conditions its way leaves open as false,
//! and says which it met. The ways form a decision tree: the first run
//! decides every condition as false; the conditions it met are then decided
//! every other way too, and a run that meets a condition its way does not
//! decide (one nested under a condition now true, or in code only that way
//! reaches) branches there in turn. A condition under a branch of the first
//! run's is otherwise never seen true: `if m_block_min < m_block_max:` around
//! a main loop that only runs when an earlier condition holds.
//!
//! Each way decides at most [`MAX_OPEN_CONDITIONS`] conditions, and the runs after
//! the first together execute at most the instantiation's statement budget.
//! A condition past either is decided only as false, and the kernel is
//! reported checked only in part, naming it.

use std::collections::VecDeque;

use cute_ir::ast::StmtId;

use cute_check::{cost_of_other_ways, Decision, InstantiateOptions, Instantiated, OpenCondition, Scenario, WarpCost, MAX_OPEN_CONDITIONS};

pub(crate) struct Ways {
    /// Every condition some run met, in the order first met.
    met: Vec<OpenCondition>,
    /// Conditions some run met and decided only as false.
    one_way: Vec<OpenCondition>,
    /// Ways not run yet.
    pending: VecDeque<Scenario>,
    /// Ways made so far, the first run's included.
    made: usize,
    /// Statements the runs after the first may still execute.
    steps_left: usize,
}

/// Whether `way` decides alike in every thread a test of the ticket each
/// of the `ctas` modelled CTAs draws that no dealing of the tickets passes
/// (or fails) in every CTA: `if ticket != 0:` false everywhere.
pub(crate) fn no_run_takes(way: &Scenario, met: &[OpenCondition], ctas: u32) -> bool {
    let all = if ctas >= 64 { u64::MAX } else { (1u64 << ctas) - 1 };
    way.iter().any(|(stmt, decision)| {
        let Some(c) = met.iter().find(|c| c.stmt == *stmt && !c.cta_masks.is_empty()) else { return false };
        match decision {
            Decision::Alike(taken) => !c.cta_masks.contains(&if *taken { all } else { 0 }),
            Decision::InCtas(_) => false,
        }
    })
}

/// The decisions of condition `c`, the first run's (false in every thread)
/// first: then true in every thread, or, for a test of the ticket each CTA
/// draws, each other set of CTAs it can hold in.
fn decisions(c: &OpenCondition) -> Vec<Decision> {
    let mut out = vec![Decision::Alike(false)];
    if c.cta_masks.is_empty() {
        out.push(Decision::Alike(true));
    } else {
        out.extend(c.cta_masks.iter().filter(|&&mask| mask != 0).map(|&mask| Decision::InCtas(mask)));
    }
    out
}

/// The statements running the threads again for the ways besides the
/// first run's that deciding `conditions` makes executes, by what the run
/// that met them cost warp by warp (see [`cost_of_other_ways`]).
fn cost_of(conditions: &[&OpenCondition], costs: &[WarpCost]) -> usize {
    let ids: Vec<StmtId> = conditions.iter().map(|c| c.stmt).collect();
    cost_of_other_ways(costs, &ids, |id| conditions.iter().find(|c| c.stmt == id).map_or(1, |c| decisions(c).len()))
}

/// Whether the first run `first` shows that running the threads for every
/// way of deciding the conditions it met (as many as one way decides)
/// would pass the statement budget of the runs after it: the kernel is not
/// checked then, since a verdict needs every way of them.
pub(crate) fn other_ways_over_budget(first: &Instantiated, options: &InstantiateOptions) -> bool {
    if first.other_ways_over_budget {
        return true;
    }
    let met: Vec<&OpenCondition> = first.open_conditions.iter().take(MAX_OPEN_CONDITIONS).collect();
    cost_of(&met, &first.costs) > options.max_steps_total
}

impl Ways {
    /// The ways to run, starting with the first: every condition false.
    pub(crate) fn new(options: &InstantiateOptions) -> Ways {
        Ways {
            met: Vec::new(),
            one_way: Vec::new(),
            pending: VecDeque::from([Scenario::new()]),
            made: 1,
            steps_left: options.max_steps_total,
        }
    }

    /// The next way to run.
    pub(crate) fn next(&mut self) -> Option<Scenario> {
        self.pending.pop_front()
    }

    /// Takes in the run of `way`, which met the conditions `open` and cost
    /// `costs` warp by warp: the conditions it met that `way` does
    /// not decide were decided as false, and the other ways of deciding
    /// them are to be run too, within the limits. `may_branch` is false for
    /// a run whose model is not checked anyway (a construct not modelled,
    /// out of time): other ways of it would tell nothing. Returns `way`
    /// with every condition the run met decided.
    pub(crate) fn ran(&mut self, mut way: Scenario, open: &[OpenCondition], costs: &[WarpCost], may_branch: bool) -> Scenario {
        for c in open {
            if !self.met.iter().any(|m| m.stmt == c.stmt) {
                self.met.push(c.clone());
            } else if c.on_memory {
                // A branch one run takes on a synchronization variable is
                // one in every run.
                self.met.iter_mut().filter(|m| m.stmt == c.stmt).for_each(|m| m.on_memory = true);
            }
        }
        let new: Vec<&OpenCondition> = open.iter().filter(|c| !way.contains_key(&c.stmt)).collect();
        let room = MAX_OPEN_CONDITIONS.saturating_sub(way.len());
        let mut branch_on = if may_branch { new.len().min(room) } else { 0 };
        // Each other way of the new conditions runs again the warps that
        // met them.
        while branch_on > 0 && cost_of(&new[..branch_on], costs) > self.steps_left {
            branch_on -= 1;
        }
        // Every combination of the decisions of the conditions branched on
        // but the first run's (each false in every thread).
        let mut combinations: Vec<Scenario> = vec![way.clone()];
        for c in &new[..branch_on] {
            combinations = combinations
                .into_iter()
                .flat_map(|w| {
                    decisions(c).into_iter().map(move |d| {
                        let mut w = w.clone();
                        w.insert(c.stmt, d);
                        w
                    })
                })
                .collect();
        }
        let made = combinations.len() - 1;
        self.pending.extend(combinations.into_iter().skip(1));
        self.made += made;
        self.steps_left -= cost_of(&new[..branch_on], costs);
        if may_branch {
            for c in &new[branch_on..] {
                if !self.one_way.iter().any(|o| o.stmt == c.stmt) {
                    self.one_way.push((*c).clone());
                }
            }
        }
        way.extend(new.iter().map(|c| (c.stmt, Decision::Alike(false))));
        way
    }

    /// Every condition some run met, in the order first met.
    pub(crate) fn met(&self) -> &[OpenCondition] {
        &self.met
    }

    /// The conditions some run decided only as false, in the order met.
    pub(crate) fn one_way(&self) -> &[OpenCondition] {
        &self.one_way
    }

    /// Ways made so far (run or to run).
    pub(crate) fn made(&self) -> usize {
        self.made
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cute_syntax::TextRange;

    fn condition(stmt: u32) -> OpenCondition {
        OpenCondition { stmt, site: TextRange::default(), why: "a runtime value".into(), on_memory: false, cta_masks: Vec::new(), negated_at_site: false, statement: stmt, in_helper: false }
    }

    fn options(max_steps_total: usize) -> InstantiateOptions {
        InstantiateOptions { max_steps_total, ..Default::default() }
    }

    /// Runs every way, the run of a way meeting the conditions `meets`
    /// says in a single warp that executes `steps` statements; returns the
    /// ways run, each with every condition it met.
    fn run_all(ways: &mut Ways, steps: usize, meets: impl Fn(&Scenario) -> Vec<u32>) -> Vec<Scenario> {
        let mut run = Vec::new();
        while let Some(way) = ways.next() {
            let met = meets(&way);
            let open: Vec<OpenCondition> = met.iter().copied().map(condition).collect();
            run.push(ways.ran(way, &open, &[WarpCost { steps, conditions: met }], true));
        }
        run
    }

    fn decided(way: &Scenario, stmt: u32) -> Option<bool> {
        way.get(&stmt).map(|d| d.holds_in(0))
    }

    #[test]
    fn a_condition_met_only_when_another_is_true_is_run_both_ways() {
        let mut ways = Ways::new(&options(1_000_000));
        // Condition 2 sits under condition 1.
        let run = run_all(&mut ways, 10, |way| if decided(way, 1) == Some(true) { vec![1, 2] } else { vec![1] });
        let mut under: Vec<Option<bool>> =
            run.iter().filter(|w| decided(w, 1) == Some(true)).map(|w| decided(w, 2)).collect();
        under.sort();
        assert_eq!(under, [Some(false), Some(true)]);
        assert_eq!(run.len(), 3);
        assert_eq!(ways.made(), 3);
        assert!(ways.one_way().is_empty());
        assert_eq!(ways.met().len(), 2);
    }

    #[test]
    fn conditions_past_what_a_way_decides_are_run_one_way_and_named() {
        let mut ways = Ways::new(&options(1_000_000));
        // Two conditions more than a way decides.
        let (past, last) = (MAX_OPEN_CONDITIONS as u32 + 1, MAX_OPEN_CONDITIONS as u32 + 2);
        let run = run_all(&mut ways, 10, |_| (1..=last).collect());
        assert_eq!(run.len(), 1 << MAX_OPEN_CONDITIONS);
        let one_way: Vec<StmtId> = ways.one_way().iter().map(|c| c.stmt).collect();
        assert_eq!(one_way, [past, last]);
        assert!(run.iter().all(|w| decided(w, past) == Some(false) && decided(w, last) == Some(false)));
    }

    #[test]
    fn the_statement_budget_bounds_the_ways_run() {
        // Room for one more run of 10 statements: one condition of two is
        // run both ways.
        let mut ways = Ways::new(&options(15));
        let run = run_all(&mut ways, 10, |_| vec![1, 2]);
        assert_eq!(run.len(), 2);
        let one_way: Vec<StmtId> = ways.one_way().iter().map(|c| c.stmt).collect();
        assert_eq!(one_way, [2]);
    }

    #[test]
    fn a_way_costs_the_warps_that_meet_the_conditions_it_decides_otherwise() {
        // Two warps of 10 statements, each meeting a condition of its own,
        // and one of 100 that meets none: the three other ways run each of
        // the two warps once more (the runs of a warp for a way that decides
        // its conditions as an earlier way did are taken up again).
        let costs = [
            WarpCost { steps: 10, conditions: vec![1] },
            WarpCost { steps: 10, conditions: vec![2] },
            WarpCost { steps: 100, conditions: Vec::new() },
        ];
        let met = [condition(1), condition(2)];
        assert_eq!(cost_of(&met.iter().collect::<Vec<_>>(), &costs), 20);
        // A warp that meets both runs once for each of the three.
        let both = [WarpCost { steps: 10, conditions: vec![1, 2] }, WarpCost { steps: 100, conditions: Vec::new() }];
        assert_eq!(cost_of(&met.iter().collect::<Vec<_>>(), &both), 30);
        // Within a budget of 25 both conditions are run both ways.
        let mut ways = Ways::new(&options(25));
        let way = ways.next().unwrap();
        ways.ran(way, &met, &costs, true);
        assert!(ways.one_way().is_empty());
        assert_eq!(ways.made(), 4);
    }

    #[test]
    fn a_run_not_checked_does_not_branch() {
        let mut ways = Ways::new(&options(1_000_000));
        let way = ways.next().unwrap();
        let run = ways.ran(way, &[condition(1)], &[WarpCost { steps: 10, conditions: vec![1] }], false);
        assert!(ways.next().is_none());
        assert_eq!(decided(&run, 1), Some(false));
        assert!(ways.one_way().is_empty());
    }
}
