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
    /// The conditions decided per way in its round (see `both_ways.rs`),
    /// `None` for all of them.
    per_way: Option<BTreeSet<StmtId>>,
    /// The decisions of the conditions its threads met.
    decided: Vec<(StmtId, Decision)>,
    shared: Shared,
    results: Vec<ThreadResult>,
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
            .find(|k| k.per_way.as_ref() == per_way && k.decided.iter().all(|&(stmt, d)| decision(scenario, stmt) == d))?;
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
        runs.entry(key(run)).or_default().push(KeptRun { per_way: per_way.cloned(), decided, shared, results: results.to_vec() });
    }
}
