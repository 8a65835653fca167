//! From a kernel's sync slice to a [`Model`]: run the kept statements once per
//! thread of one cluster, with that thread's indices, and record the
//! synchronization operations it performs.
//!
//! Control flow that depends on thread indices, loop counters and constants
//! is decided exactly per thread; that is what makes role dispatch
//! (`warp_idx == 0`), `elect_one` and parity arithmetic precise. A condition
//! on a runtime value is decided the same way in every thread (kernels branch
//! uniformly on data far more often than not); the caller enumerates both
//! outcomes through `Scenario`. Loops without a known trip count run
//! `unknown_trip_count` times in every thread, and the verdict says it is
//! bounded. The result is a straight-line operation list per thread.
//!
//! One cluster of the launch is run (see `model.rs` for why that is
//! enough), with the block and cluster shapes of the launch, or the shapes
//! `cute_ir::launch` assumes when it does not resolve (said in the model's
//! assumptions). A kernel that synchronizes through global memory runs a
//! few clusters (at most 4), with `block_idx` known per CTA. Host values
//! (`cutlass.Constexpr` arguments, `self.*` of the kernel's object) are
//! those the launch gives. A name the kernel's loops run up to is taken as
//! the count explored (`loops.rs`), a stage count not known as two stages
//! (`crate::pipeline`); both are said.
//!
//! This module holds the entry point ([`instantiate`]) and the state of a
//! run: what every thread shares ([`Setup`], `Shared`) and what one thread
//! carries (`ThreadRun`). What the threads do is in the modules below, one
//! job each.
//!
//! Running the threads:
//! - `run`: the threads of the cluster in order, the budgets, lanes standing in;
//!   `spent`: what the threads run so far spent, and when that stops the run
//! - `parallel`: the same on several cores, or warp by warp, with the same model
//! - `reuse`: the runs of warps one way of deciding the conditions made, taken
//!   up by the next ways that decide them alike
//! - `functions`: which statements a thread runs (the kernel's and helpers' slices)
//!
//! One thread:
//! - `statements`: statements and control flow; `loops`: loops of unknown length
//!   (`trip_bound`: known bounds on them); `same_condition`: one condition written
//!   twice, in the kernel or in a helper handed the kernel's names; `identity`: a
//!   name bound to an unknown holds one value, which its copies and offsets share;
//!   `launch_condition`: tests of one argument of the launch, wherever written;
//!   `both_ways`: conditions no synchronization depends on, run both ways, and
//!   the rounds that find those that synchronize
//! - `calls`: what a call evaluates to, and which API family models it
//! - `inline`: helpers of the file, inlined with their parameters bound;
//!   `dsl_partial`: `functools.partial` of a callable of the DSL
//! - `record`: the operations a thread records (a converged warp's lane 0 for the warp)
//!
//! The lanes of a warp:
//! - `lane_varying`: what can differ between lanes, and which conditions split a warp
//! - `stand_in` and `uniform`: a lane running for the lanes after it
//! - `lanes`: the lanes' shared-memory accesses against each other
//!
//! The API families, one module each:
//! - `mbarrier`: init, arrives, parity waits, transaction bytes
//! - `barrier`: `sync_threads` and named barriers
//! - `cluster`: the cluster barrier and `mapa`
//! - `warp`: `elect_one` and the warp collectives
//! - `memory`: loads, stores, atomics, fences, copies and inline PTX, for the
//!   memory-ordering analysis; `allocation`: shared-memory allocations and views;
//!   `tickets`: a test of the ticket each CTA draws from a counter, decided per CTA
//! - `pipelines` and `participants`: `cutlass.pipeline` rings, their
//!   participants and `PipelineOrder`; `subclasses`: a package's subclasses
//!   of the pipeline classes and of `NamedBarrier`, their overrides inlined
//! - `tmem`: `TmemAllocator`, and tensor memory's allocation, pointer and
//!   deallocation (`cute.arch`, the primitives' `tcgen05` instructions)
//! - `tile_scheduler`: `StaticPersistentTileScheduler`
//! - `clc_scheduler`: `ClcDynamicPersistentTileScheduler`, its queries and
//!   its reads of their responses, for the memory-ordering analysis
//! - `roles`: warp roles an assumed block leaves out

use std::collections::{BTreeMap, BTreeSet};

// Looked up on every synchronization call of every thread: hashed fast.
use rustc_hash::FxHashMap as HashMap;

use cute_ir::ast::{Call, Expr, FunctionDef, StmtId};
use cute_ir::eval::{self, Env, Value};
use cute_ir::launch::Launch;
/// The note for tcgen05 MMAs taken to span one CTA.
use cute_ir::layout::SINGLE_CTA_MMA;
use cute_ir::slice::HelperKind;
use cute_ir::Module;
use cute_syntax::TextRange;

use crate::model::*;

use functions::{FunctionIndex, KeptStatements};
use lane_varying::{lane_varying_names, varies_across_lanes, warp_aligned_indices, LaneVarying};
use loops::count_taken_note;
pub use launch_condition::is_launch_condition;
pub use reuse::Reuse;
use run::ThreadResult;
use warp::partial_warp_collectives;

mod both_ways;
mod functions;
mod parallel;
mod reuse;
mod run;
mod spent;

mod calls;
mod inline;
mod loops;
mod record;
mod same_condition;
mod identity;
mod launch_condition;
mod statements;
mod trip_bound;

mod lane_varying;
mod lanes;
mod stand_in;
mod uniform;

mod allocation;
mod barrier;
mod clc_scheduler;
mod cluster;
mod mbarrier;
mod memory;
mod tickets;
mod participants;
mod pipelines;
mod roles;
mod subclasses;
mod tile_scheduler;
mod dsl_partial;
mod tmem;
mod warp;

/// At most this many conditions on runtime values are explored both ways
/// along one way of deciding them (the others are decided as false). The
/// conditions only memory accesses depend on are not among them: every
/// thread runs both their branches (`statements.rs`, `exec_both_ways`).
/// Five keeps the 32 runs of a kernel that meets them all within the
/// statement budget for the kernels of the public code bases, whose runs
/// are mostly under 20,000 statements.
pub const MAX_OPEN_CONDITIONS: usize = 5;

/// What running the threads of one warp cost: the statements they
/// executed, and the conditions on runtime values they met, in the order
/// met.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct WarpCost {
    pub steps: usize,
    pub conditions: Vec<StmtId>,
}

/// The statements running the threads again for every other way of
/// deciding `conditions` (condition `c` decided `ways(c)` ways) executes,
/// warps that run alike taken up again rather than run (see
/// [`Reuse`]): each warp runs once for each way of deciding the
/// conditions among `conditions` it met, its first run aside. (A way may
/// lead a warp into code the first run skipped: this is what the first run
/// shows, not a bound.)
pub fn cost_of_other_ways<'c>(costs: impl IntoIterator<Item = &'c WarpCost>, conditions: &[StmtId], ways: impl Fn(StmtId) -> usize) -> usize {
    costs
        .into_iter()
        .map(|w| {
            let runs = w.conditions.iter().filter(|c| conditions.contains(c)).fold(1usize, |n, &c| n.saturating_mul(ways(c)));
            w.steps.saturating_mul(runs - 1)
        })
        .fold(0, usize::saturating_add)
}

/// What the counter of a loop whose trip count is not known holds: a
/// condition on it is open, and is decided alike in every iteration.
pub const UNKNOWN_LOOP_COUNTER: &str = "a loop counter";

#[derive(Clone, Debug)]
pub struct InstantiateOptions {
    pub unknown_trip_count: u32,
    /// Give up on a thread whose operation list grows past this.
    pub max_ops_per_thread: usize,
    /// Statements one thread may execute (loops that never end, or run for
    /// too long to model, stop here).
    pub max_steps_per_thread: usize,
    /// Statements all threads together may execute.
    pub max_steps_total: usize,
    /// Cores the threads may run on (0: all available). The model does not
    /// depend on it.
    pub workers: usize,
    /// Whether a lane of a warp may stand in for lanes after it (see
    /// [`StandIn`]). The model does not depend on it; off, every lane runs.
    pub stand_ins: bool,
    /// Whether a condition on a runtime value that no synchronization
    /// depends on is run both ways rather than decided per way
    /// (`both_ways.rs`); off, every such condition is decided per way.
    /// Each way builds the same synchronization either way.
    pub both_ways: bool,
}

impl Default for InstantiateOptions {
    fn default() -> Self {
        InstantiateOptions {
            unknown_trip_count: 3,
            max_ops_per_thread: 50_000,
            max_steps_per_thread: 200_000,
            max_steps_total: 1_000_000,
            workers: 0,
            stand_ins: true,
            both_ways: true,
        }
    }
}

/// Outcomes chosen for conditions on runtime values, by statement.
pub type Scenario = BTreeMap<StmtId, Decision>;

/// How a scenario decides a condition on a runtime value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Decision {
    /// The same way in every thread.
    Alike(bool),
    /// True in the modelled CTAs of the mask (bit `c` for CTA `c`), false
    /// in the others: a test of the ticket each CTA draws from a counter
    /// (`if ticket == 0:`), which some CTAs pass and the others do not
    /// (see [`OpenCondition::cta_masks`]).
    InCtas(u64),
}

impl Decision {
    /// Whether the condition holds in the threads of modelled CTA `cta`.
    pub fn holds_in(self, cta: u32) -> bool {
        match self {
            Decision::Alike(b) => b,
            Decision::InCtas(mask) => cta < 64 && mask >> cta & 1 == 1,
        }
    }

    /// Whether `self` and `other` decide a condition the two ways in every
    /// thread (`true` and `false`): a per-CTA decision has no opposite.
    pub fn is_opposite_of(self, other: Decision) -> bool {
        matches!((self, other), (Decision::Alike(a), Decision::Alike(b)) if a != b)
    }

    /// "true", "false", or in which CTAs it is true.
    pub fn outcome(self) -> String {
        match self {
            Decision::Alike(b) => b.to_string(),
            Decision::InCtas(_) => self.describe(),
        }
    }

    /// "true in every thread", "true in CTA 2 only", ...
    pub fn describe(self) -> String {
        match self {
            Decision::Alike(b) => format!("{b} in every thread"),
            Decision::InCtas(mask) => {
                let ctas: Vec<String> = (0..64).filter(|c| mask >> c & 1 == 1).map(|c| c.to_string()).collect();
                match ctas.as_slice() {
                    [one] => format!("true in CTA {one} only (the CTA whose ticket passes it), false in the other CTAs"),
                    _ => format!("true in CTAs {} (those whose tickets pass it), false in the other CTAs", ctas.join(", ")),
                }
            }
        }
    }
}

/// A condition on a runtime value that guards synchronization.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct OpenCondition {
    pub stmt: StmtId,
    pub site: TextRange,
    pub why: String,
    /// A branch on a value read from a synchronization variable: both ways
    /// happen, depending only on timing.
    pub on_memory: bool,
    /// For a test of the ticket each CTA draws from a counter (`ticket =
    /// atomic_add(counter, 1)`, `if ticket == 0:`): the sets of modelled
    /// CTAs in which it can hold ([`Decision::InCtas`]), each a way to run.
    /// Empty for a condition decided alike in every thread.
    pub cta_masks: Vec<u64>,
    /// Whether the test written at `site` is the opposite of the condition
    /// the decisions are of (`is None` for a test of a launch value whose
    /// decisions are of `is not None`, see `launch_condition.rs`).
    pub negated_at_site: bool,
    /// The statement written at `site`: `stmt` itself, but for a test of a
    /// launch value, the first of the kernel's own statements that test it
    /// or, with none, of its helpers' (`in_helper`). Conditions are listed
    /// in the order of these.
    pub statement: StmtId,
    pub in_helper: bool,
}

impl OpenCondition {
    /// The same condition met again, at statement `other.statement`: the
    /// first statement of the two is the one named (so which thread met
    /// which first does not matter), and what either learnt is kept.
    pub(crate) fn absorb(&mut self, other: OpenCondition) {
        self.on_memory |= other.on_memory;
        let earlier = other.order() < self.order();
        if self.cta_masks.is_empty() {
            self.cta_masks = other.cta_masks;
        }
        if earlier {
            (self.site, self.why, self.negated_at_site, self.statement, self.in_helper) =
                (other.site, other.why, other.negated_at_site, other.statement, other.in_helper);
        }
    }

    /// Records `self` in `open`, or what it adds to the same condition met
    /// before.
    pub(crate) fn record_in(self, open: &mut BTreeMap<StmtId, OpenCondition>) {
        match open.entry(self.stmt) {
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert(self);
            }
            std::collections::btree_map::Entry::Occupied(mut e) => e.get_mut().absorb(self),
        }
    }

    /// Where the condition comes in the list of those met.
    pub fn order(&self) -> (bool, StmtId) {
        (self.in_helper, self.statement)
    }

    /// What `decision` of the condition makes of the test written at its
    /// site: the diagnostics name the site.
    pub fn at_site(&self, decision: Decision) -> Decision {
        match decision {
            Decision::Alike(taken) => Decision::Alike(taken != self.negated_at_site),
            in_ctas => in_ctas,
        }
    }
}

pub struct Instantiated {
    pub model: Model,
    /// Conditions that were decided by the scenario (or defaulted to false).
    pub open_conditions: Vec<OpenCondition>,
    /// Threads run; the others of the model's CTAs were stood in for (see
    /// [`StandIn`]) or not reached.
    pub threads_run: u32,
    /// Statements the threads executed together (a lane stood in for counts
    /// those of the lane that stood in).
    pub steps: usize,
    /// By warp, in thread order: what running it again costs.
    pub costs: Vec<WarpCost>,
    /// The first run stopped once it showed that the runs the other ways of
    /// deciding its conditions need would pass the statement budget: the
    /// kernel cannot be checked.
    pub other_ways_over_budget: bool,
}

pub fn instantiate(
    module: &Module,
    kernel: &FunctionDef,
    kept: &cute_ir::Kept,
    launch: &Launch,
    scenario: &Scenario,
    options: &InstantiateOptions,
) -> Instantiated {
    instantiate_reusing(module, kernel, kept, launch, scenario, options, None)
}

/// [`instantiate`], taking up the runs of warps that `reuse` kept from
/// other ways of deciding the kernel's conditions, and keeping its own
/// there: the model is the same. `reuse` must have been used for this
/// kernel, launch and options alone.
pub fn instantiate_reusing(
    module: &Module,
    kernel: &FunctionDef,
    kept: &cute_ir::Kept,
    launch: &Launch,
    scenario: &Scenario,
    options: &InstantiateOptions,
    reuse: Option<&Reuse>,
) -> Instantiated {
    let mut model = Model { kernel: kernel.display_name(), ..Model::default() };
    let threads = cute_ir::launch::ASSUMED_THREADS_PER_CTA;
    let block = match launch.block {
        Some(b) => {
            model.block_assumed = launch.block_assumed.is_some();
            model.assumptions.extend(launch.block_assumed.clone());
            b
        }
        None => {
            model.block_assumed = true;
            model.assumptions.push(format!(
                "the launch of `{}` was not found in this file: assuming {threads} threads per CTA",
                kernel.display_name()
            ));
            [threads, 1, 1]
        }
    };
    let cluster = match launch.cluster {
        Some(c) => c,
        None => {
            let assumed = cute_ir::launch::cluster_when_unknown(kernel);
            model.assumptions.extend(assumed.note.map(str::to_string));
            assumed.shape
        }
    };
    model.assumptions.extend(launch.assumptions.iter().cloned());
    model.threads_per_cta = block.iter().product();
    let cluster_ctas: u32 = cluster.iter().product();
    // CTAs that hand data over through global memory live in different
    // clusters: model a few clusters, with known block indices.
    //
    // A grid larger than that is modelled by clusters that stand for it:
    // its first and its last (kernels single out the first CTA and the
    // last: `bidx == 0`, the last-arrival test `== N - 1`), those holding a
    // block index the kernel's own tests single out (`bidx == N // 2`), and
    // the ones after the first, so that the CTAs between, alike, are a role
    // of many kept by at least two. In the memory analysis the CTAs not
    // modelled add to a counter as the modelled ones that add do
    // (`memory/schedule.rs`).
    let mut stands_in = None;
    let (clusters, grid) = if uses_global_sync(module, kernel) {
        match launch.grid {
            Some(g) => {
                let total = (g.iter().product::<u32>() / cluster_ctas).max(1);
                if total <= MAX_CLUSTERS {
                    (total, Some(g))
                } else {
                    let env: Env = launch.globals.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                    let (chosen, left_out) = clusters_standing_in(kernel, &env, total, cluster_ctas);
                    let listed: Vec<String> = chosen.iter().map(u32::to_string).collect();
                    model.assumptions.push(format!(
                        "the grid has {total} clusters; clusters {} are modelled (its first and last, those the kernel's tests of the block index single out, and the ones after the first)",
                        listed.join(", ")
                    ));
                    if let Some(left_out) = left_out {
                        model.unresolved.push(Unresolved {
                            site: kernel.name_range,
                            what: format!(
                                "its tests of the block index single out more clusters than the {MAX_MODELLED_CLUSTERS} a grid is modelled by (cluster {left_out} is left out)"
                            ),
                            origin: None,
                        });
                    }
                    stands_in = Some(crate::model::StandsIn::new(&chosen, cluster_ctas));
                    (chosen.len() as u32, Some(g))
                }
            }
            None => {
                model.assumptions.push("the grid is unknown: assuming 2 clusters".to_string());
                (2, None)
            }
        }
    } else {
        (1, None)
    };
    let grid = grid.or(Some([clusters * cluster[0], cluster[1], cluster[2]]).filter(|_| clusters > 1));
    model.cluster_ctas = cluster_ctas;
    model.ctas = cluster_ctas * clusters;
    model.grid = GridShape { dims: launch.grid, stands_in: stands_in, residency: launch.residency.clone() };

    let kept = &KeptStatements::of(kept);
    let globals: Env = launch.globals.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let lane_varying = lane_varying_names(kernel, &globals, LaneVarying::Contents, BTreeSet::new());
    let lane_values = LaneVarying::Values { opaque_slices: module.functions.iter().all(|f| f.name != "get_slice") };
    let lane_dependent = lane_varying_names(kernel, &globals, lane_values, BTreeSet::new());
    // Computed here rather than read off the module: the incremental path
    // hands over a module of the reachable functions alone.
    let mut sync_helpers = cute_ir::slice::helpers(module, HelperKind::Synchronizing).as_ref().clone();
    // Closures the file found synchronizing (their bodies may not be here).
    sync_helpers.extend(module.closures.iter().filter(|c| c.synchronizes).map(|c| c.local_name().to_string()));
    let observing = cute_ir::slice::helpers(module, HelperKind::ObservingSyncVariables);
    // With one CTA per cluster, the tcgen05 MMAs handed to the kernel span
    // one CTA.
    let mut params = launch.params.clone();
    model.assumptions.extend(crate::pipeline::assume_stage_counts(kernel, &mut params));
    let definitions = trip_bound::single_definitions(kernel);
    let mut loop_bounds = trip_bound::loop_bound_names(kernel);
    let deciding_threads =
        trip_bound::compared_with_threads(kernel, &loop_bounds, &|e| varies_across_lanes(e, &lane_dependent, &globals, lane_values));
    loop_bounds.retain(|n| !deciding_threads.contains(n));
    let explored_count = Value::Int(options.unknown_trip_count.into());
    let mut counts_taken = false;
    for name in &loop_bounds {
        if let Some(v) = params.get_mut(name).filter(|v| v.is_unknown()) {
            *v = explored_count.clone();
            counts_taken = true;
            model.assumptions.push(count_taken_note(name, options));
        }
    }
    let mut single_cta_mmas = false;
    if cluster_ctas == 1 {
        for v in params.values_mut() {
            if let Some(new) = cute_ir::layout::with_single_cta_mmas(v, 0) {
                single_cta_mmas = true;
                *v = new;
            }
        }
    }
    launch_condition::mark_launch_values(&mut params);
    let setup = Setup {
        module,
        kernel,
        kept,
        params: &params,
        scenario,
        options,
        block,
        cluster,
        cluster_ctas,
        threads_per_cta: model.threads_per_cta,
        grid,
        stands_in,
        modelled_ctas: model.ctas,
        launch_ctas: model.grid.ctas(),
        globals: &globals,
        lane_varying: &lane_varying,
        thread_indices: &warp_aligned_indices(kernel, block),
        lane_dependent: &lane_dependent,
        lane_values,
        sync_helpers: &sync_helpers,
        functions: &FunctionIndex::of(module, &sync_helpers),
        observing: &observing,
        deadline: std::time::Instant::now() + MAX_TIME,
        block_assumed: model.block_assumed,
        definitions: &definitions,
        loop_bounds: &loop_bounds,
        same_conditions: &same_condition::SameConditions::of(kernel, |id| kept.contains(id)),
        per_way: BTreeSet::new(),
        every_condition_per_way: !options.both_ways,
    };
    let threads: Vec<(u32, u32)> = (0..model.ctas).flat_map(|cta| (0..model.threads_per_cta).map(move |tid| (cta, tid))).collect();
    let mut setup = setup;
    let mut rounds = 0;
    let (mut shared, results) = loop {
        let (shared, results) = parallel::run(&setup, &threads, reuse).unwrap_or_else(|| {
            let mut shared = setup.shared();
            let results = setup.run_threads(&threads, &mut shared, Default::default());
            (shared, results)
        });
        // Conditions found synchronizing: run again with them decided per
        // way (see `both_ways.rs`).
        if setup.every_condition_per_way || shared.per_way_found.is_subset(&setup.per_way) || shared.out_of_time {
            break (shared, results);
        }
        rounds += 1;
        if rounds >= both_ways::MAX_ROUNDS {
            setup.every_condition_per_way = true;
        } else {
            setup.per_way.extend(shared.per_way_found);
        }
    };
    let steps = results.iter().map(|r| r.steps).sum();
    let mut spent = spent::Spent::default();
    for r in &results {
        spent.add(r.thread, r.steps, &r.met);
    }
    let costs = spent.into_costs();
    shared.handed_barriers();
    if single_cta_mmas {
        shared.notes.insert(SINGLE_CTA_MMA.to_string());
    }
    let mut groups: HashMap<Vec<Op>, usize> = HashMap::default();
    let mut group_list: Vec<Group> = Vec::new();
    let mut thread_memory = Vec::new();
    let mut threads_run = 0;
    for ThreadResult { thread, ops, memory, ran, .. } in results {
        threads_run += u32::from(ran);
        thread_memory.extend(memory);
        match groups.get(&ops) {
            Some(&g) => group_list[g].threads.push(thread),
            None => {
                groups.insert(ops.clone(), group_list.len());
                group_list.push(Group { ops, threads: vec![thread] });
            }
        }
    }
    // Threads that never synchronize take no part in any protocol.
    group_list.retain(|g| !g.ops.is_empty());
    model.groups = group_list;
    model.barriers = shared.barriers.list;
    model.buffers = shared.buffers.list;
    model.memory = thread_memory;
    memory::stage_element_accesses(&mut model.memory);
    model.bounded = shared.bounded || counts_taken;
    model.out_of_time = shared.out_of_time;
    model.assumptions.extend(shared.notes);
    model.unresolved = shared.unresolved.into_iter().collect();
    if model.block_assumed {
        let mut env = globals.clone();
        env.extend(params.iter().map(|(k, v)| (k.clone(), v.clone())));
        let warps = model.threads_per_cta.div_ceil(32);
        if let Some((site, warp)) = roles::role_beyond_block(kernel, kept, &definitions, &env, warps) {
            model.unresolved.push(Unresolved {
                site,
                what: format!(
                    "this branch is taken by warp {warp}, which the {} threads per CTA assumed for a launch whose block is not known do not reach",
                    model.threads_per_cta
                ),
                origin: None,
            });
        }
    }
    model.barrier_uses = shared
        .barrier_uses
        .into_iter()
        .map(|((cta, id, site, round, count, sync, aligned, cta_wide), threads)| BarrierUse {
            cta,
            id,
            count,
            sync,
            aligned,
            cta_wide,
            round,
            site,
            threads,
        })
        .collect();
    model.partial_warp_collectives = partial_warp_collectives(shared.partial_warp, model.threads_per_cta);
    model.stale_tokens = shared.stale_tokens.into_values().collect();
    model.storage_overruns = shared.storage_overruns.into_values().collect();
    model.memory_conditions = shared.memory_conditions.into_values().collect();
    cluster::st_async_bytes_as_arrivals(&mut model);
    let mut open_conditions: Vec<OpenCondition> = shared.open.into_values().collect();
    open_conditions.sort_by_key(OpenCondition::order);
    Instantiated { model, open_conditions, threads_run, steps, costs, other_ways_over_budget: shared.other_ways_over_budget }
}

/// What every thread of one instantiation shares: the kernel, its launch
/// and what was derived from them once.
struct Setup<'a> {
    module: &'a Module,
    kernel: &'a FunctionDef,
    kept: &'a KeptStatements,
    /// The kernel's arguments.
    params: &'a eval::Bindings,
    scenario: &'a Scenario,
    options: &'a InstantiateOptions,
    block: [u32; 3],
    cluster: [u32; 3],
    cluster_ctas: u32,
    threads_per_cta: u32,
    grid: Option<[u32; 3]>,
    /// With a grid larger than the CTAs modelled: which of its clusters the
    /// modelled ones are.
    stands_in: Option<crate::model::StandsIn>,
    /// The CTAs modelled, and those of the launch's grid when it is known.
    modelled_ctas: u32,
    launch_ctas: Option<u64>,
    globals: &'a Env,
    lane_varying: &'a BTreeSet<String>,
    thread_indices: &'a BTreeSet<String>,
    lane_dependent: &'a BTreeSet<String>,
    lane_values: LaneVarying,
    /// Functions of the module that (transitively) synchronize.
    sync_helpers: &'a BTreeSet<String>,
    functions: &'a FunctionIndex<'a>,
    observing: &'a BTreeSet<String>,
    deadline: std::time::Instant,
    block_assumed: bool,
    /// The names the kernel binds once, with their expressions (see
    /// [`trip_bound`]).
    definitions: &'a HashMap<String, &'a Expr>,
    /// The names the kernel's loops run up to (see
    /// [`trip_bound::loop_bound_names`]).
    loop_bounds: &'a BTreeSet<String>,
    /// The condition that decides each condition written like it.
    same_conditions: &'a same_condition::SameConditions,
    /// The conditions on runtime values decided per way; the others a
    /// thread runs both ways while no synchronization lies under them
    /// (`both_ways.rs`). With `every_condition_per_way`, all of them.
    per_way: BTreeSet<StmtId>,
    every_condition_per_way: bool,
}

/// A barrier registration: (cta, id, site, round, count, sync, aligned,
/// cta_wide), see [`BarrierUse`].
type UseKey = (u32, i64, TextRange, u32, u32, bool, bool, bool);

/// A lane of a converged warp standing in for lanes after it, up to and not
/// including the last lane.
///
/// In converged code the lanes between lane 0 and the last record nothing:
/// lane 0 acts for the warp and the last lane gives the warp's extent (see
/// [`ThreadRun::push`]). What they leave is their registrations with
/// hardware barriers, the warp collectives they reach while the warp is
/// split, and their statement count. Lane 1 runs for lanes 2 to
/// 30; every condition, loop range or acting call's argument that varies
/// across lanes is evaluated in each of them (see `uniform`), and the lanes
/// that would decide or compute it otherwise (`lane == 16` for
/// `lane = tidx % 16`) are left to run on their own; the first of those
/// runs for the rest in turn. When the lane that ran made no operation of
/// its own and met nothing else through which the lanes it runs for could
/// differ (a helper it could not follow them into, a value it cannot
/// evaluate in them), each of them would run as it did: they are not run,
/// and leave what it left under their own thread ids. Most threads of a
/// warp-specialized kernel are such lanes.
struct StandIn {
    cta: u32,
    /// The lanes stood in for.
    tids: Vec<u32>,
    steps: usize,
    uses: Vec<UseKey>,
    collectives: Vec<PartialCollective>,
}

/// A warp collective reached while the warp is split: where, what, and
/// over which lanes (see [`ThreadRun::partial_collective`]).
type PartialCollective = (TextRange, std::rc::Rc<str>, u32);

impl StandIn {
    fn stands_for(&self, cta: u32, tid: u32) -> bool {
        cta == self.cta && self.tids.contains(&tid)
    }
}

/// Clusters modelled when CTAs synchronize through global memory: a grid of
/// more is modelled by this many that stand for it, more when the kernel's
/// tests of the block index single out more (see `StandsIn`).
const MAX_CLUSTERS: u32 = 4;

/// Whether the kernel synchronizes through global memory (atomics, loads or
/// stores with memory-order semantics): then several clusters are modelled.
/// The clusters of a grid of `total` clusters (more than [`MAX_CLUSTERS`])
/// of `cluster_ctas` CTAs that stand for it, ascending: its first and its
/// last, those holding a block index the kernel's tests single out
/// (`cute_ir::launch::roles::block_tests`), then the ones after the first
/// until [`MAX_CLUSTERS`] are. At most `MAX_MODELLED_CLUSTERS`; a cluster
/// left out past that is returned too.
fn clusters_standing_in(kernel: &FunctionDef, env: &Env, total: u32, cluster_ctas: u32) -> (Vec<u32>, Option<u32>) {
    let mut chosen: BTreeSet<u32> = [0, total - 1].into_iter().collect();
    for block in cute_ir::launch::roles::block_tests(kernel, env) {
        if let Ok(block) = u32::try_from(block) {
            if block / cluster_ctas < total {
                chosen.insert(block / cluster_ctas);
            }
        }
    }
    let mut next = 1;
    while (chosen.len() as u32) < MAX_CLUSTERS && next < total {
        chosen.insert(next);
        next += 1;
    }
    let left_out = chosen.iter().nth(crate::model::MAX_MODELLED_CLUSTERS).copied();
    (chosen.into_iter().take(crate::model::MAX_MODELLED_CLUSTERS).collect(), left_out)
}

fn uses_global_sync(module: &Module, kernel: &FunctionDef) -> bool {
    let global = |c: &Call| HelperKind::TouchingGlobalMemory.calls(c);
    let helpers = cute_ir::slice::helpers(module, HelperKind::TouchingGlobalMemory);
    cute_ir::ast::any_call(&kernel.body, |c| global(c) || cute_ir::slice::callee_name(c).is_some_and(|n| helpers.contains(n)))
}

#[derive(Default, Clone)]
struct BarrierTable {
    keys: HashMap<(std::sync::Arc<str>, i64, u32, u8), BarrierIx>,
    list: Vec<Barrier>,
    /// Whether a barrier's name was taken from the kernel's own code (not
    /// from inside a helper it calls): that spelling is the one to show.
    named_in_kernel: Vec<bool>,
}

impl BarrierTable {
    fn intern(&mut self, key: (std::sync::Arc<str>, i64, u32, u8), make: impl FnOnce() -> Barrier) -> BarrierIx {
        self.intern_named(key, true, make)
    }

    fn intern_named(&mut self, key: (std::sync::Arc<str>, i64, u32, u8), in_kernel: bool, make: impl FnOnce() -> Barrier) -> BarrierIx {
        if let Some(&ix) = self.keys.get(&key) {
            if in_kernel && !self.named_in_kernel[ix as usize] {
                self.list[ix as usize].name = make().name;
                self.named_in_kernel[ix as usize] = true;
            }
            return ix;
        }
        self.named_in_kernel.push(in_kernel);
        let ix = self.list.len() as BarrierIx;
        self.list.push(make());
        self.keys.insert(key, ix);
        ix
    }
}

#[derive(Clone)]
struct Shared {
    /// [`ThreadRun::is_lane_varying`] by the address of the condition (the
    /// module and kernel are borrowed for the whole run, so addresses are
    /// not reused).
    lane_varying_conditions: rustc_hash::FxHashMap<usize, bool>,
    /// The same for [`ThreadRun::varies_here`], by expression and scope.
    lane_dependent_exprs: rustc_hash::FxHashMap<(usize, usize), bool>,
    /// [`ThreadRun::helper_scope`] by helper and lane-dependent parameters.
    helper_scopes: rustc_hash::FxHashMap<(usize, Vec<String>), Option<std::sync::Arc<BTreeSet<String>>>>,
    /// The unknown value a call the model gives no meaning to returns, by
    /// the address of the call (as above): its description is built once,
    /// not by every thread that makes the call.
    unknown_results: rustc_hash::FxHashMap<usize, Value>,
    /// The unknown value of a name no environment binds, by the address of
    /// the name in the module (as above).
    unbound_names: rustc_hash::FxHashMap<usize, Value>,
    barriers: BarrierTable,
    buffers: memory::BufferTable,
    open: BTreeMap<StmtId, OpenCondition>,
    notes: BTreeSet<String>,
    unresolved: BTreeSet<Unresolved>,
    bounded: bool,
    /// Warp collectives reached while the warp is split: by site, what the
    /// operation is and, per (cta, thread), how many times the thread
    /// reached it that way and the member masks it named.
    partial_warp: BTreeMap<TextRange, (String, BTreeMap<(u32, u32), (u32, u32)>)>,
    /// Waits handed a token of another stage or phase, by the wait's site.
    stale_tokens: BTreeMap<TextRange, StaleToken>,
    /// By site and index in the field (see [`crate::model::StorageOverrun`]).
    storage_overruns: BTreeMap<(TextRange, i64), crate::model::StorageOverrun>,
    /// By the `if` statement (see [`crate::model::MemoryCondition`]).
    memory_conditions: BTreeMap<StmtId, crate::model::MemoryCondition>,
    /// (cta, id, site, round, count, sync, aligned, cta_wide) -> threads,
    /// for [`BarrierUse`].
    barrier_uses: BTreeMap<UseKey, Vec<u32>>,
    /// Shared memory handed to a call the model does not know, by the
    /// call's site: the allocation, and what to say if it holds mbarriers
    /// (known once every thread has run; see [`Shared::handed_barriers`]).
    handed_pointers: BTreeMap<TextRange, (std::sync::Arc<str>, String)>,
    /// Conditions run both ways under which a thread synchronized or
    /// chose a known value: the next round decides them per way
    /// (`both_ways.rs`).
    per_way_found: BTreeSet<StmtId>,
    /// The conditions the threads ran both ways, and those they decided
    /// per way because `Setup::per_way` has them: a run is taken up by a
    /// round or way whose `per_way` has none of the first and all of the
    /// second (`reuse.rs`).
    ran_both_ways: BTreeSet<StmtId>,
    decided_per_way: BTreeSet<StmtId>,
    /// When running the threads must stop (see `MAX_TIME`).
    deadline: std::time::Instant,
    out_of_time: bool,
    /// The first run stopped: the runs the other ways of deciding its
    /// conditions need would pass the statement budget (`spent.rs`).
    other_ways_over_budget: bool,
    /// No launch was found: `threads_per_cta` is a default.
    block_assumed: bool,
}

impl Shared {
    /// Drops what the threads memoized by the address of an expression of
    /// the module (see `reuse.rs`).
    fn forget_addresses(&mut self) {
        self.lane_varying_conditions.clear();
        self.lane_dependent_exprs.clear();
        self.helper_scopes.clear();
        self.unknown_results.clear();
        self.unbound_names.clear();
    }

    /// The calls handed an allocation that some thread used as an mbarrier
    /// (initialised, arrived or waited on, or a pipeline's ring), as
    /// unresolved: what they do with the barrier is not modelled. Which
    /// allocations hold mbarriers is known only once every thread has run,
    /// whatever the order the threads ran in.
    fn handed_barriers(&mut self) {
        for (site, (alloc, what)) in std::mem::take(&mut self.handed_pointers) {
            if self.barriers.keys.keys().any(|(a, _, _, elsewhere)| *elsewhere == 0 && *a == alloc) {
                self.unresolved.insert(Unresolved { site, what, origin: None });
            }
        }
    }

    /// Thread `thread` reaches the warp collective at `site` over the lanes
    /// of `mask` while its warp is split.
    fn reach_collective(&mut self, site: TextRange, what: &str, thread: (u32, u32), mask: u32) {
        let entry = self.partial_warp.entry(site).or_insert_with(|| (what.to_string(), BTreeMap::new()));
        let reach = entry.1.entry(thread).or_insert((0, 0));
        reach.0 += 1;
        reach.1 |= mask;
    }
}

/// Time the threads of one instantiation may run at most: beside the step
/// budgets, a bound on wall time, so that pathological code (a `while True`
/// over an unrolled loop, typed half-way) is reported rather than waited on.
const MAX_TIME: std::time::Duration = std::time::Duration::from_secs(3);

impl PartialOrd for Unresolved {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Unresolved {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.site, &self.what, &self.origin).cmp(&(other.site, &other.what, &other.origin))
    }
}

struct ThreadRun<'a> {
    module: &'a Module,
    kept: &'a KeptStatements,
    scenario: &'a Scenario,
    options: &'a InstantiateOptions,
    cta: u32,
    tid: u32,
    block: [u32; 3],
    cluster: [u32; 3],
    ctas: u32,
    threads_per_cta: u32,
    shared: &'a mut Shared,
    ops: Vec<Op>,
    /// Memory operations, placed between `ops`.
    memory: Vec<MemOp>,
    /// Where each of `ops` stands among the warp's converged operations.
    op_points: Vec<WarpPoint>,
    /// Converged operations of the warp so far (the same count in every
    /// lane, since converged code is run by all of them).
    warp_point: u32,
    /// The first CTA of this thread's cluster.
    cluster_base: u32,
    /// The grid's shape when the modelled CTAs are the first CTAs of a known
    /// grid (then `block_idx` is known).
    grid: Option<[u32; 3]>,
    /// See `Setup::stands_in`.
    stands_in: Option<crate::model::StandsIn>,
    /// See `Setup::modelled_ctas`.
    modelled_ctas: u32,
    launch_ctas: Option<u64>,
    elect_depth: u32,
    /// Uses so far of each CTA/named/cluster barrier by this thread: the
    /// generation it arrives in, whose parity its wait observes.
    generation: HashMap<BarrierIx, u32>,
    /// Registrations so far with each hardware barrier id (CTA and named
    /// barriers share the 16 ids), by every lane.
    rounds: HashMap<i64, u32>,
    inline_depth: u32,
    overflow: bool,
    /// Statements executed so far.
    steps: usize,
    /// Functions being inlined, innermost last (to stop recursion).
    inlining: Vec<TextRange>,
    globals: &'a Env,
    /// Names whose value, or the memory they name, differs between the
    /// lanes of a warp.
    lane_varying: &'a BTreeSet<String>,
    /// The kernel's names for the thread's index along a block's x extent
    /// that is a multiple of the warp size (see [`warp_aligned_indices`]).
    thread_indices: &'a BTreeSet<String>,
    /// Names and attributes whose value differs between the lanes of a warp.
    lane_dependent: &'a BTreeSet<String>,
    /// How `lane_dependent` was computed.
    lane_values: LaneVarying,
    /// Functions of the module that (transitively) synchronize.
    sync_helpers: &'a BTreeSet<String>,
    functions: &'a FunctionIndex<'a>,
    /// Nesting depth of branches that split the warp.
    divergence: u32,
    /// Helpers of this file that read a synchronization variable.
    observing: &'a BTreeSet<String>,
    /// The exit condition of the spin loop or branch whose read the call
    /// being run makes (taken by the first read it records).
    pending_guard: Option<Guard>,
    /// The address of the load, atomic or store being run, when it is the
    /// ticket the thread drew plus a known amount (`flags + ticket - 1`,
    /// `ticket` an atomic's result): that amount (see `MemKind::Update`).
    ticket_delta: Option<i64>,
    /// The last update of a counter by an atomic, and the names of the
    /// kernel bound to what an atomic returned (`arrived = atomic_add(done,
    /// 1)`), for a branch on one to read the counter as the call would.
    last_update: Option<memory::AtomicUpdate>,
    atomic_results: HashMap<String, memory::AtomicUpdate>,
    /// The kernel statement being run (see `MemOp::stmt`).
    kernel_stmt: u32,
    /// The pipeline state of each `PipelineProducer`/`PipelineConsumer`
    /// (by id): their methods advance it in place.
    participants: HashMap<String, Value>,
    /// The tile each persistent tile scheduler is at (by id), in tiles from
    /// the CTA's first; `None` once advanced by a count not known (see
    /// `tile_scheduler.rs`).
    tile_cursors: HashMap<String, Option<i64>>,
    /// The `functools.partial(...)` calls that bound the first arguments of
    /// a callable of the CuTe DSL (`partial(pipeline.CooperativeGroup,
    /// pipeline.Agent.Thread)`), by where they are: calling the partial is
    /// calling the callable with those arguments first (`dsl_partial.rs`).
    dsl_partials: HashMap<u32, cute_ir::ast::Call>,
    /// The loops being run whose trip count is not known (explored for a
    /// few iterations): what they count is not what the program counts.
    loops_of_unknown_length: u32,
    /// Shared-storage structs allocated so far, by allocation: their
    /// fields' element types (see `cute_ir::layout::STRUCT`).
    structs: HashMap<String, Value>,
    /// Lane 0 of a converged warp: the accesses of shared memory it made
    /// for the warp, in order.
    warp_accesses: Vec<lanes::WarpAccess>,
    /// The other lanes: the regions they would touch at the accesses whose
    /// element differs across lanes (they record nothing themselves), in
    /// order. The last lane reports every such access, the lanes between it
    /// and lane 0 those at `race_sites`.
    lane_regions: Vec<lanes::LaneRegion>,
    /// The accesses where lanes of this thread's warp could race with each
    /// other, as lane 0 found them (see `lanes::race_points`).
    race_points: std::rc::Rc<lanes::RacePoints>,
    /// Whether this thread met something through which another lane of its
    /// warp could run differently (see [`StandIn`]).
    lane_sensitive: bool,
    /// The barrier registrations this thread made, in order (the keys of
    /// `Shared::barrier_uses`).
    uses: Vec<UseKey>,
    /// The warp collectives this thread reached while its warp was split,
    /// in order, kept while it stands in for other lanes.
    collectives: Vec<PartialCollective>,
    /// The lane-dependent names of the helpers being inlined, innermost last
    /// (see [`Self::helper_scope`]).
    helper_scopes: Vec<std::sync::Arc<BTreeSet<String>>>,
    /// The pipeline states the helper that just returned advanced, by
    /// parameter: the caller's own if it passed a name (see
    /// [`Self::write_back_advanced_states`]).
    advanced_parameters: Vec<(String, Value)>,
    /// The call of the pipeline API, or method of one of its objects, that
    /// gave the value computed last, by address: the lanes still stood in
    /// for passed it alike receivers and arguments, so it is the same
    /// value in them (see [`Self::note_lane_varying_method_call`]).
    pipeline_result: Option<usize>,
    /// Set while the condition of a spin loop on an mbarrier try-wait is
    /// evaluated (`while not mbarrier_try_wait(bar, phase): pass`): the
    /// try-wait is then the wait the loop amounts to.
    try_wait_blocks: bool,
    /// Whether the thread has issued an MMA on tensor memory: only then is
    /// a `tcgen05.commit` of its recorded (`MemKind::Tcgen05Commit`).
    issued_mma: bool,
    /// The stops of the loops being run whose length is not known but whose
    /// start and step are, with the value the iterations explored give
    /// them: in the loop, a call written as its stop has that value
    /// (`idx == cute.size(t, mode=[1]) - 1` holds in the last iteration
    /// explored of `for idx in range(cute.size(t, mode=[1]))`).
    /// Only the loop's own code reads them, not the helpers it inlines
    /// (their names are others): each is kept with the inlining depth of
    /// its loop.
    known_stops: Vec<(&'a Call, u32, Value)>,
    /// Names of the code being run to rebind before its next statement: the
    /// states a helper it called advanced (`advance(state)` with `def
    /// advance(s): s.advance()` changes the caller's `state`).
    write_backs: Vec<(String, Value)>,
    /// The names the kernel binds once, with their expressions (see
    /// [`trip_bound`]).
    definitions: &'a HashMap<String, &'a Expr>,
    /// The names the kernel's loops run up to.
    loop_bounds: &'a BTreeSet<String>,
    /// The condition that decides each condition written like it.
    same_conditions: &'a same_condition::SameConditions,
    /// What the names of the helper being run stand for in the kernel's
    /// frame (`None` in the kernel's own), and what they will in the helper
    /// about to be inlined (see `same_condition::Origins`).
    frame_origins: Option<std::rc::Rc<same_condition::Origins>>,
    pending_origins: Option<same_condition::Origins>,
    /// The conditions on runtime values the thread met, in the order met
    /// (see `run::ThreadResult::met`).
    met: Vec<StmtId>,
    /// How many unknown values the thread has bound to names so far (see
    /// `identity.rs`).
    bindings: u32,
    /// See `Setup::per_way`; `None`: every condition is decided per way.
    per_way: Option<&'a BTreeSet<StmtId>>,
    /// The branches being run of conditions every thread of the launch
    /// decides alike, run both ways (see `MemOp::branches`).
    uniform_branches: Vec<(u32, bool)>,
    /// In a lane that may stand in for later lanes of its warp, those lanes
    /// and what the kernel's names hold in them (see `uniform`).
    stood_in: Option<uniform::StoodInLanes<'a>>,
}

