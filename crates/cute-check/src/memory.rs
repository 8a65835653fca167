//! Memory ordering: does every pair of conflicting accesses have a
//! happens-before path that the hardware honours?
//!
//! It runs on a model that the explorer found clean. The slice keeps the
//! loads, stores and copies of buffers for it (`cute-lsp slice` shows them as
//! `mem`), and a kernel that synchronizes through global memory is modelled
//! with several clusters, `block_idx` known per CTA. What the model records
//! for it is described in `instantiate/memory.rs`; in particular, program
//! order is that of kernel statements (`MemOp::stmt`), wherever the helper
//! that performs an access is written.
//!
//! The model's threads are run once, in a fixed schedule, with two vector
//! clocks per thread:
//!
//! * the *control* clock joins along every synchronization edge (a barrier
//!   phase to the threads that pass its wait, a counter's updates to the
//!   spin loop that sees them), whatever its memory semantics;
//! * the *memory* clock joins only along edges that order memory: a release
//!   whose scope contains the other party, matched by an acquire (barrier
//!   waits acquire; a relaxed load needs a later `fence.acq_rel`).
//!
//! Asynchronous copies (TMA loads and stores) run in the async proxy, each
//! as a clock of its own: a TMA load's writes reach the threads through the
//! barrier phase its transaction bytes complete; the threads' own accesses
//! reach a later async copy only through a proxy fence in the accessing
//! thread that precedes, in happens-before, the copy's issue ("fence first,
//! barrier second"). A store by `st.async` into a peer CTA (`store_async_dsmem`)
//! is a clock of its own too, in the generic proxy, reaching the peer's
//! threads through the phase its bytes complete (`st_async`).
//!
//! A pair ordered by neither clock is a race; a pair ordered by the control
//! clock alone is ordered by timing but not by the memory model, and the
//! edge that lacks semantics names the rule (missing acquire or release,
//! scope too narrow). The findings say which link is missing.
//!
//! One schedule suffices because, in a protocol free of deadlocks and of
//! vacuous waits, which phase an arrival belongs to does not depend on the
//! schedule; reads of counters that do not wait (a single check, a branch
//! on the value) are taken to see no update, which some schedule allows.
//! A run that leaves a thread stuck judged only part of the kernel: it is
//! reported as not checked, never as clean, unless the wait it is stuck on
//! is one no run of the grid satisfies (`unreachable`).
//! The analysis's other assumptions are stated where they apply: races inside
//! one CTA in `shared`, the bulk groups of TMA stores in `proxy`.
//!
//! Budgets: past 60,000 memory operations (`MAX_MEMORY_OPS`) or 2 s, the
//! analysis stops and the kernel is `analysis-incomplete`, with the reason.
//!
//! [`analyze`] is the entry point: it gives the [`MemoryFinding`]s of a
//! model, each with its [`MemoryRule`] and its [`Repair`]; [`ANALYSES`]
//! counts the models analysed. `cute-lint`'s `memory.rs` turns each finding
//! into a diagnostic of its rule, with its quick fix. The parts:
//!
//! * `clock`: vector clocks, and the stamps memory events share;
//! * `actor`: one thread of the model as it runs, and what it waits for;
//! * `schedule`: the run of the whole model, one step at a time;
//! * `step`: one step of one thread, and the barriers' phases;
//! * `warp`: lanes that act on their own meeting their warp;
//! * `mem_ops`: one memory operation of one thread, recorded as an event;
//! * `event`: the events, and what an access touches;
//! * `pairs`: the pairs of a buffer's accesses that may conflict;
//! * `findings`: each pair judged by the rules of its kind;
//! * `proxy`: an async copy and a generic access (proxy fences, waits);
//! * `st_async`: a store by `st.async` into a peer CTA and a generic access;
//! * `shared`: two generic accesses of shared memory (races, scopes);
//! * `message_passing`: global memory handed over through a counter;
//! * `lane_race`: races between lanes of one converged warp;
//! * `grid_dependency`: reads of global memory before `griddepcontrol_wait`;
//! * `tmem`: tensor memory freed while in use, freed twice, or never freed;
//! * `tmem_fence`: tensor memory stored into and handed over without
//!   `fence_view_async_tmem_store()`;
//! * `unreachable`: a wait on a counter for a value the whole grid never
//!   gives it (a hang, or a branch no run takes).

mod actor;
mod clock;
mod event;
mod findings;
mod grid_dependency;
mod lane_race;
mod mem_ops;
mod message_passing;
mod pairs;
mod proxy;
mod schedule;
mod shared;
mod st_async;
mod step;
mod tmem;
mod tmem_fence;
mod unreachable;
mod warp;

use cute_syntax::TextRange;

use crate::model::*;

use self::actor::Actor;
use self::clock::Clock;
use self::event::Event;
use self::lane_race::lane_race;
use self::unreachable::Stopped;

/// The rules this analysis reports, by what is missing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemoryRule {
    FenceAfterSync,
    MissingProxyFence,
    ReadBeforeWait,
    MissingAcquire,
    MissingRelease,
    ScopeTooNarrow,
    MissingWait,
    SmemRace,
    DsmemRace,
    /// A read of global memory that no `griddepcontrol_wait` happens
    /// before (`grid_dependency`): every one, whether or not the grid
    /// before writes what it reads, which the caller decides.
    ReadBeforeGridDependency,
    /// A buffer a TMA store may still be reading, written before a bulk
    /// wait covers the store's group; or stores still in flight when their
    /// thread exits (`proxy`).
    BulkGroupInFlight,
    /// Tensor memory freed while a `tcgen05` operation of its CTA may
    /// still use it, freed twice, or never freed (`tmem`).
    TmemLifetime,
    /// Tensor memory written by a `tcgen05` store and handed to another
    /// warp with no `fence_view_async_tmem_store()` of the storing thread
    /// between the store and the hand-off (`tmem_fence`).
    MissingTmemFence,
    /// A spin on a counter for a value the whole grid never gives it: the
    /// kernel hangs (`unreachable`), a `deadlock`.
    CounterNeverReached,
}

/// What the quick fix of a finding edits.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Repair {
    None,
    /// Move the fence at `fence` to just before the barrier at `barrier`.
    MoveFenceBefore { fence: TextRange, barrier: TextRange },
    /// Insert `fence_proxy("async.shared", space="cta")` before `site`.
    InsertProxyFenceBefore { site: TextRange },
    /// Insert `fence_view_async_tmem_store()` before the hand-off at `site`,
    /// which comes after the store at `after`.
    InsertTmemStoreFenceBefore { site: TextRange, after: TextRange },
    /// Give the call at `call` these memory semantics.
    SetSem { call: TextRange, sem: &'static str },
    /// Give the call at `call` this scope.
    SetScope { call: TextRange, scope: Scope },
    /// Insert a CTA barrier before `site`, which the kernel statement with
    /// id `stmt` (`MemOp::stmt`) performs.
    InsertBarrierBefore { site: TextRange, stmt: u32 },
    /// Insert `sync_warp()` before `site`, which the kernel statement with
    /// id `stmt` performs, and after the access at `after`.
    InsertWarpSyncBefore { site: TextRange, stmt: u32, after: TextRange },
    /// Insert a CTA barrier before `site`, which the kernel statement with
    /// id `stmt` performs, and after the access at `after` (by a thread of
    /// another warp of the same CTA).
    InsertCtaBarrierBetween { site: TextRange, stmt: u32, after: TextRange },
    /// Insert `griddepcontrol_wait()` before `site`, which the kernel
    /// statement with id `stmt` performs.
    InsertGridDependencyWaitBefore { site: TextRange, stmt: u32 },
    /// Wait on the copy's barrier for the phase `phase` (the one the copy
    /// completes, counted from 0) before the read at `site`, which the kernel statement
    /// `stmt` performs. `later` is the reading thread's first wait on that
    /// barrier after the read, when it waits for that phase's parity (the wait to
    /// move up); `earlier`, its last wait on any barrier before the read,
    /// with the parity it waits for (a spelling of the wait to copy).
    /// `copy` is the copy's call, which names the barrier.
    InsertWaitBefore { site: TextRange, stmt: u32, copy: TextRange, phase: u32, later: Option<TextRange>, earlier: Option<(TextRange, u8)> },
    /// The issuing thread waits for every bulk group it has committed
    /// (`cp_async_bulk_wait_group(0, read=True)`) right after committing
    /// the TMA store at `copy`. `barrier`: the writing thread is another
    /// one that no synchronization of the issuer after the store reaches,
    /// so a CTA barrier must carry the wait to it.
    WaitForStoreGroup { copy: TextRange, barrier: bool },
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MemoryFinding {
    pub rule: MemoryRule,
    /// Where the diagnostic goes (and the fix, mostly).
    pub site: TextRange,
    pub message: String,
    /// The evidence, in order: the two accesses and the missing link.
    pub steps: Vec<(TextRange, String)>,
    pub repair: Repair,
}

/// Memory operations (over all threads) the analysis follows at most.
const MAX_MEMORY_OPS: usize = 60_000;

/// Time the analysis of one model takes at most (the explorer has its own
/// budget): a model it cannot finish in time is reported, not waited on.
const MAX_TIME: std::time::Duration = std::time::Duration::from_secs(2);

fn out_of_time() -> String {
    format!("the memory-ordering analysis did not finish within {} s", MAX_TIME.as_secs())
}

/// How many models with memory operations this process has analysed (for
/// tests and benchmarks that show an edit did not analyse again).
pub static ANALYSES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Run the model once and report the accesses that are not ordered. `Err`
/// says why the analysis was not done (a model too large for it).
///
/// Source positions are only copied and compared (never shifted or
/// measured), so the result on a model whose offsets went through a map
/// that preserves their order is the result on the real model, mapped.
pub fn analyze(model: &Model) -> Result<Vec<MemoryFinding>, String> {
    if model.memory.is_empty() {
        return Ok(Vec::new());
    }
    ANALYSES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let ops: usize = model.memory.iter().map(|t| t.ops.len()).sum();
    if ops > MAX_MEMORY_OPS {
        return Err(format!(
            "its threads perform {ops} memory operations, more than the {MAX_MEMORY_OPS} the memory-ordering analysis follows"
        ));
    }
    let deadline = std::time::Instant::now() + MAX_TIME;
    let run = match Execution::run(model, deadline) {
        Ok(run) => run,
        Err(Stopped::NotChecked(why)) => return Err(why),
        // What comes after a loop that never exits never happens.
        Err(Stopped::Hang(hang)) => return Ok(vec![hang]),
        // The other ways of deciding the branch are checked on their own.
        Err(Stopped::WayNotTaken) => return Ok(Vec::new()),
    };
    let mut findings = run.findings(model, deadline)?;
    findings.extend(run.reads_before_grid_dependency(model));
    findings.extend(run.stores_in_flight_at_exit(model));
    findings.extend(run.tmem_lifetime(model));
    findings.extend(run.tmem_fences(model));
    findings.extend(model.memory.iter().flat_map(|t| t.lane_races.iter().filter_map(|race| lane_race(model, t, race))));
    findings.sort_by_key(|f| (f.site, f.rule));
    findings.dedup_by_key(|f| (f.site, f.rule));
    Ok(findings)
}

/// The model run once: its threads, the memory events they recorded, and
/// the async copies they issued.
struct Execution<'m> {
    actors: Vec<Actor<'m>>,
    events: Vec<Event>,
    /// The actor each async copy was issued by, and its clocks at issue.
    issues: Vec<(usize, Clock)>,
    /// The phase of its barrier each async copy into shared memory
    /// completes (by the copy's number among the copies), for the wait a
    /// read before it needs.
    copy_phases: Vec<Option<u32>>,
    cluster_ctas: u32,
    /// An actor whose next spin on global memory is taken as satisfied by
    /// the CTAs of the grid that are not modelled (see `schedule.rs`).
    unmodelled_pass: Option<usize>,
    /// Updates whose element is a ticket plus an offset, per buffer: each
    /// element one resolves to is waited on as if all of them could update
    /// it (see `mem_ops`).
    ticket_updates: rustc_hash::FxHashMap<BufferIx, usize>,
    /// Why the run cannot say which element an access touches (an address
    /// computed from a ticket its thread has not drawn): the analysis stops
    /// with it.
    not_known: Option<String>,
    /// Why a pair could not be judged (see `message_passing`): the
    /// analysis stops with it.
    pair_not_known: std::cell::RefCell<Option<String>>,
}

impl<'m> Execution<'m> {
    fn scope_contains(&self, scope: Scope, a_cta: u32, b_cta: u32) -> bool {
        match scope {
            Scope::Cta => a_cta == b_cta,
            Scope::Cluster => a_cta / self.cluster_ctas == b_cta / self.cluster_ctas,
            Scope::Gpu | Scope::Sys => true,
        }
    }
}
