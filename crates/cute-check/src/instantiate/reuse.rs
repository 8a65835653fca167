//! The runs of a kernel's threads one way of deciding its conditions on
//! runtime values made, kept for the next ways.
//!
//! A run of consecutive threads starts from tables of its own and is merged
//! after the runs before it (`parallel.rs`), so what it leaves depends on
//! the kernel, its launch and the decisions of the conditions its threads
//! met, and on nothing another run does. A way that decides those alike
//! gets the same run: it is kept, by its threads and those decisions, and
//! taken up again rather than run (the way of every condition false decides
//! one absent from the scenario). In a warp-specialized kernel a condition
//! is mostly met by the warps of one role: the ways that decide the others
//! otherwise run only those warps again.
//!
//! It depends too on which conditions are decided per way rather than run
//! both ways (`both_ways.rs`), but only through those its threads met: a
//! run is taken up by a round or way whose conditions decided per way
//! include all it decided so and none it ran both ways. So the round after
//! one that found a condition synchronizing runs again only the warps that
//! ran that condition both ways.
//!
//! A run that ran out of time depends on the machine, and is not kept.

use std::collections::BTreeSet;
use std::sync::Mutex;

use rustc_hash::FxHashMap as HashMap;

use cute_ir::ast::StmtId;

use super::run::ThreadResult;
use super::{Decision, Scenario, Shared};

/// The runs kept for one kernel, its launch and its instantiation options
/// (the caller keeps one per kernel it checks). A clone shares them.
#[derive(Default, Clone)]
pub struct Reuse {
    kept: std::sync::Arc<Kept>,
}

#[derive(Default)]
struct Kept {
    runs: Mutex<HashMap<(u32, u32, usize), Vec<KeptRun>>>,
    /// Runs taken up so far, and the statements their threads executed.
    taken_up: std::sync::atomic::AtomicUsize,
    statements_taken_up: std::sync::atomic::AtomicUsize,
}

struct KeptRun {
    /// Whether every condition was decided per way in its round (see
    /// `both_ways.rs`); otherwise which conditions its threads ran both
    /// ways and which they decided per way are in `shared`.
    every_condition_per_way: bool,
    /// The decisions of the conditions its threads met.
    decided: Vec<(StmtId, Decision)>,
    shared: Shared,
    results: Vec<ThreadResult>,
}

/// Whether the threads of `kept` would run as they did where `per_way`
/// names the conditions decided per way (`None`: all of them): none they
/// ran both ways is among them, and every one they decided per way because
/// it was is.
fn runs_alike(kept: &KeptRun, per_way: Option<&BTreeSet<StmtId>>) -> bool {
    match per_way {
        None => kept.every_condition_per_way,
        Some(per_way) => {
            !kept.every_condition_per_way && kept.shared.ran_both_ways.is_disjoint(per_way) && kept.shared.decided_per_way.is_subset(per_way)
        }
    }
}

/// How `scenario` decides condition `stmt` (false in every thread when it
/// does not name it, as a run takes it then).
fn decision(scenario: &Scenario, stmt: StmtId) -> Decision {
    scenario.get(&stmt).copied().unwrap_or(Decision::Alike(false))
}

fn key(run: &[(u32, u32)]) -> (u32, u32, usize) {
    let (cta, tid) = run.first().copied().unwrap_or_default();
    (cta, tid, run.len())
}

impl Reuse {
    /// What the threads of `run` leave for `scenario`, if a kept run of
    /// them was made for a way that decides their conditions alike.
    pub(super) fn find(&self, run: &[(u32, u32)], scenario: &Scenario, per_way: Option<&BTreeSet<StmtId>>) -> Option<(Shared, Vec<ThreadResult>)> {
        let runs = self.kept.runs.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let kept = runs
            .get(&key(run))?
            .iter()
            .find(|k| runs_alike(k, per_way) && k.decided.iter().all(|&(stmt, d)| decision(scenario, stmt) == d))?;
        self.kept.taken_up.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let steps: usize = kept.results.iter().map(|r| r.steps).sum();
        self.kept.statements_taken_up.fetch_add(steps, std::sync::atomic::Ordering::Relaxed);
        Some((kept.shared.clone(), kept.results.clone()))
    }

    /// How many runs of threads were taken up rather than run.
    pub fn runs_taken_up(&self) -> usize {
        self.kept.taken_up.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The statements the threads of the runs taken up executed: what
    /// taking them up saved.
    pub fn statements_taken_up(&self) -> usize {
        self.kept.statements_taken_up.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Keeps what the threads of `run` left for `scenario`.
    pub(super) fn keep(&self, run: &[(u32, u32)], scenario: &Scenario, per_way: Option<&BTreeSet<StmtId>>, shared: &Shared, results: &[ThreadResult]) {
        if shared.out_of_time {
            return;
        }
        let decided = shared.open.keys().map(|&stmt| (stmt, decision(scenario, stmt))).collect();
        let mut shared = shared.clone();
        // What the threads memoized by the address of an expression: the
        // next way may run on another copy of the module.
        shared.forget_addresses();
        let mut runs = self.kept.runs.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        runs.entry(key(run)).or_default().push(KeptRun { every_condition_per_way: per_way.is_none(), decided, shared, results: results.to_vec() });
    }
}
