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
//! bounded.

use std::collections::{BTreeMap, BTreeSet};

// Looked up on every synchronization call of every thread: hashed fast.
use rustc_hash::FxHashMap as HashMap;

use cute_ir::api::{self, Api};
use cute_ir::ast::{BinOp, Call, Expr, FunctionDef, Stmt, StmtId, StmtKind, Target};
use cute_ir::eval::{self, assign, eval, CallHandler, Env, SmemRef, Value};
use cute_ir::launch::Launch;
use cute_ir::Module;
use cute_syntax::TextRange;

use crate::model::*;

mod lanes;
mod memory;
mod parallel;
mod roles;
mod same_condition;
mod tile_scheduler;
mod trip_bound;
mod uniform;

/// At most this many conditions on runtime values are explored both ways
/// along one way of deciding them (the others are decided as false).
pub const MAX_OPEN_CONDITIONS: usize = 3;

/// Whether running a kernel's threads again for every way of deciding its
/// `open` conditions on runtime values beyond the first (every condition
/// false), each costing the `steps` statements of the first run, would
/// pass the statement budget together: the kernel cannot be checked then.
pub fn other_ways_over_budget(steps: usize, open: usize, options: &InstantiateOptions) -> bool {
    let other_ways = (1usize << open.min(MAX_OPEN_CONDITIONS)) - 1;
    steps.saturating_mul(other_ways) > options.max_steps_total
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
        }
    }
}

/// Outcomes chosen for conditions on runtime values, by statement.
pub type Scenario = BTreeMap<StmtId, bool>;

/// A condition on a runtime value that guards synchronization.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct OpenCondition {
    pub stmt: StmtId,
    pub site: TextRange,
    pub why: String,
    /// A branch on a value read from a synchronization variable: both ways
    /// happen, depending only on timing.
    pub on_memory: bool,
}

pub struct Instantiated {
    pub model: Model,
    /// Conditions that were decided by the scenario (or defaulted to false).
    pub open_conditions: Vec<OpenCondition>,
    /// Threads run; the others of the model's CTAs were stood in for (see
    /// [`StandIn`]) or not reached.
    pub threads_run: u32,
    /// Statements the threads executed together (a lane stood in for counts
    /// those of the lane that stood in): what running them again costs.
    pub steps: usize,
}

pub fn instantiate(
    module: &Module,
    kernel: &FunctionDef,
    kept: &cute_ir::Kept,
    launch: &Launch,
    scenario: &Scenario,
    options: &InstantiateOptions,
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
    let (clusters, grid) = if uses_global_sync(module, kernel) {
        match launch.grid {
            Some(g) => {
                let total = (g.iter().product::<u32>() / cluster_ctas).max(1);
                if total > MAX_CLUSTERS {
                    model.assumptions.push(format!(
                        "the grid has {total} clusters; the first {MAX_CLUSTERS} are modelled"
                    ));
                }
                (total.min(MAX_CLUSTERS), Some(g))
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

    let kept = &KeptStatements::of(kept);
    let globals: Env = launch.globals.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let lane_varying = lane_varying_names(kernel, &globals, LaneVarying::Contents, BTreeSet::new());
    let lane_values = LaneVarying::Values { opaque_slices: module.functions.iter().all(|f| f.name != "get_slice") };
    let lane_dependent = lane_varying_names(kernel, &globals, lane_values, BTreeSet::new());
    // Computed here rather than read off the module: the incremental path
    // hands over a module of the reachable functions alone.
    let mut sync_helpers = cute_ir::slice::sync_helpers(module);
    // Closures the file found synchronizing (their bodies may not be here).
    sync_helpers.extend(module.closures.iter().filter(|c| c.synchronizes).map(|c| c.local_name().to_string()));
    let observing = cute_ir::slice::helpers_calling(module, cute_ir::api::reads_sync_variable);
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
    };
    let threads: Vec<(u32, u32)> = (0..model.ctas).flat_map(|cta| (0..model.threads_per_cta).map(move |tid| (cta, tid))).collect();
    let (mut shared, results) = parallel::run(&setup, &threads).unwrap_or_else(|| {
        let mut shared = setup.shared();
        let results = setup.run_threads(&threads, &mut shared, 0);
        (shared, results)
    });
    let steps = results.iter().map(|r| r.steps).sum();
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
        if let Some((site, warp)) = roles::role_beyond_block(kernel, &definitions, &env, warps) {
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
    Instantiated { model, open_conditions: shared.open.into_values().collect(), threads_run, steps }
}

/// The warp collectives some lanes of their member mask do not reach: for
/// each site, the first CTA where that happens, the lanes that reach it
/// (as often as any lane of their warp) and those of the member masks that
/// reach it fewer times. Lanes that reach it with the warp converged are not
/// recorded (they reach it together, as often as each other).
fn partial_warp_collectives(
    reaches: BTreeMap<TextRange, (String, BTreeMap<(u32, u32), (u32, u32)>)>,
    threads_per_cta: u32,
) -> Vec<(TextRange, String, u32, Vec<u32>, Vec<u32>)> {
    let mut out = Vec::new();
    for (site, (what, by_thread)) in reaches {
        let mut warps: BTreeMap<(u32, u32), Vec<(u32, u32, u32)>> = BTreeMap::new();
        for (&(cta, tid), &(count, mask)) in &by_thread {
            warps.entry((cta, tid / 32)).or_default().push((tid, count, mask));
        }
        let mut found: Option<(u32, Vec<u32>, Vec<u32>)> = None;
        for ((cta, warp), lanes) in warps {
            if found.as_ref().is_some_and(|(c, ..)| *c != cta) {
                break;
            }
            let most = lanes.iter().map(|l| l.1).max().unwrap_or(0);
            let mask = lanes.iter().fold(0u32, |m, l| m | l.2);
            let count_of = |t: u32| lanes.iter().find(|l| l.0 == t).map_or(0, |l| l.1);
            let first = warp * 32;
            let last = (first + 32).min(threads_per_cta);
            let missing: Vec<u32> = (first..last).filter(|t| mask & (1 << (t % 32)) != 0 && count_of(*t) < most).collect();
            if missing.is_empty() {
                continue;
            }
            let entry = found.get_or_insert_with(|| (cta, Vec::new(), Vec::new()));
            entry.1.extend(lanes.iter().filter(|l| l.1 == most).map(|l| l.0));
            entry.2.extend(missing);
        }
        if let Some((cta, reached, missing)) = found {
            out.push((site, what, cta, reached, missing));
        }
    }
    out
}

/// [`cute_ir::Kept`] as flags by statement id: every thread asks about every
/// statement it meets.
struct KeptStatements {
    /// Per statement id: kept, and kept for memory ordering alone.
    flags: Vec<(bool, bool)>,
}

impl KeptStatements {
    fn of_ids(ids: &std::collections::BTreeSet<StmtId>) -> Self {
        Self::of(&cute_ir::Kept { ids: ids.clone(), memory_only: Default::default() })
    }

    fn of(kept: &cute_ir::Kept) -> Self {
        let last = |ids: &std::collections::BTreeSet<StmtId>| ids.last().map_or(0, |&l| l as usize + 1);
        let len = last(&kept.ids).max(last(&kept.memory_only));
        let mut flags = vec![(false, false); len];
        for &id in &kept.ids {
            flags[id as usize].0 = true;
        }
        for &id in &kept.memory_only {
            flags[id as usize].1 = true;
        }
        KeptStatements { flags }
    }

    fn contains(&self, id: StmtId) -> bool {
        self.flags.get(id as usize).is_some_and(|f| f.0)
    }

    fn memory_only(&self, id: StmtId) -> bool {
        self.flags.get(id as usize).is_some_and(|f| f.1)
    }
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

/// The lanes thread `tid` may stand in for: the later ones of its warp up
/// to lane 30 that no earlier lane stands in for (`covered`), the CTA's
/// last thread aside; none for lane 0 and the last lane, which record for
/// the warp.
fn lanes_to_stand_in_for(tid: u32, threads_per_cta: u32, covered: impl Fn(u32) -> bool) -> Vec<u32> {
    let last_lane = |t: u32| t % 32 == 31 || t + 1 == threads_per_cta;
    if tid % 32 == 0 || last_lane(tid) {
        return Vec::new();
    }
    (tid + 1..=tid - tid % 32 + 30).filter(|&t| t + 1 < threads_per_cta && !covered(t)).collect()
}

/// The file's functions and methods by class and name, found as
/// `Module::function` finds them (the first of a name): every call a thread
/// evaluates looks its callee up.
struct FunctionIndex<'m> {
    module: &'m Module,
    sync_helpers: &'m BTreeSet<String>,
    /// What the file's functions do, for slicing them (`sync_helpers`, and
    /// those that advance something, found when a thread first inlines one).
    helpers: std::sync::OnceLock<cute_ir::slice::Helpers>,
    by_name: HashMap<(Option<&'m str>, &'m str), &'m FunctionDef>,
    /// Each function's slice as a helper (`cute_ir::slice::slice_helper`),
    /// made when a thread first inlines it.
    slices: HashMap<TextRange, std::sync::OnceLock<KeptStatements>>,
}

impl<'m> FunctionIndex<'m> {
    fn of(module: &'m Module, sync_helpers: &'m BTreeSet<String>) -> Self {
        let mut by_name = HashMap::default();
        for f in &module.functions {
            by_name.entry((f.class_name.as_deref(), f.name.as_str())).or_insert(f);
        }
        let slices = module.functions.iter().map(|f| (f.range, std::sync::OnceLock::new())).collect();
        FunctionIndex { module, sync_helpers, helpers: std::sync::OnceLock::new(), by_name, slices }
    }

    fn get(&self, class: Option<&str>, name: &str) -> Option<&'m FunctionDef> {
        let index: &HashMap<(Option<&str>, &str), &'m FunctionDef> = &self.by_name;
        if let Some(f) = index.get(&(class, name)) {
            return Some(f);
        }
        // A method the class inherits from a class of the file.
        let class = class?;
        let module: &'m Module = self.module;
        module.class_lineage(class).into_iter().skip(1).find_map(|c| index.get(&(Some(c), name)).copied())
    }

    /// The statements of helper `f` a thread inlining it runs.
    fn slice_of(&self, f: &FunctionDef) -> Body<'_> {
        match self.slices.get(&f.range) {
            Some(slice) => Body::Helper(slice.get_or_init(|| {
                let helpers = self.helpers.get_or_init(|| cute_ir::slice::Helpers {
                    synchronizing: self.sync_helpers.clone(),
                    advancing: cute_ir::slice::advancing_helpers(self.module),
                });
                KeptStatements::of_ids(&cute_ir::slice::slice_helper(f, helpers))
            })),
            None => Body::Whole,
        }
    }
}

/// Which statements of a block a thread runs.
#[derive(Clone, Copy)]
enum Body<'k> {
    /// The kernel's: those its slice keeps (see [`KeptStatements`]).
    Kernel,
    /// An inlined helper's: those its own slice keeps.
    Helper(&'k KeptStatements),
    /// Every statement (a function the index does not hold).
    Whole,
}

/// What one thread left: its synchronization operations and, when it has
/// any, its memory operations.
struct ThreadResult {
    thread: (u32, u32),
    ops: Vec<Op>,
    memory: Option<ThreadMemory>,
    /// Whether the thread ran (not stood in for).
    ran: bool,
    /// Statements it executed (those of the lane standing in for it).
    steps: usize,
    /// Conditions on runtime values it was the first of its run to meet.
    opened: Vec<StmtId>,
}

impl Setup<'_> {
    fn shared(&self) -> Shared {
        Shared {
            lane_varying_conditions: Default::default(),
            lane_dependent_exprs: Default::default(),
            helper_scopes: Default::default(),
            unknown_results: Default::default(),
            unbound_names: Default::default(),
            barriers: BarrierTable::default(),
            buffers: memory::BufferTable::default(),
            open: BTreeMap::new(),
            notes: BTreeSet::new(),
            unresolved: BTreeSet::new(),
            bounded: false,
            partial_warp: BTreeMap::new(),
            stale_tokens: BTreeMap::new(),
            storage_overruns: BTreeMap::new(),
            barrier_uses: BTreeMap::new(),
            deadline: self.deadline,
            out_of_time: false,
            block_assumed: self.block_assumed,
        }
    }

    /// Runs `threads` in order, after threads that executed `steps_before`
    /// statements, filling `shared`; returns what each left. Stops after a
    /// CTA that met an unmodelled construct, at the time budget or past the
    /// statement budget, recording why.
    fn run_threads(&self, threads: &[(u32, u32)], shared: &mut Shared, steps_before: usize) -> Vec<ThreadResult> {
        let Setup { module, kernel, kept, scenario, options, block, cluster, cluster_ctas, threads_per_cta, grid, .. } = *self;
        let mut results = Vec::with_capacity(threads.len());
        let mut total_steps = steps_before;
        // The converged accesses of the warp being run.
        let mut warp: Option<WarpMemory> = None;
        // The lanes of the warp being run that stand in for later ones.
        let mut stand_ins: Vec<StandIn> = Vec::new();
        let mut open_seen: BTreeSet<StmtId> = shared.open.keys().copied().collect();
        for &(cta, tid) in threads {
            // A construct the model cannot represent makes the kernel "not
            // checked": the threads after the first one that meets it would
            // only cost time (the constructs they meet further on are
            // reported once this one is modelled or changed).
            if !shared.unresolved.is_empty() {
                break;
            }
            if shared.out_of_time {
                self.out_of_time(shared);
                break;
            }
            if total_steps > options.max_steps_total {
                self.over_statement_budget(shared);
                break;
            }
            if self.other_ways_over_budget(total_steps, shared.open.len()) {
                break;
            }
            let open_before = shared.open.len();
            if tid % 32 == 0 {
                stand_ins.clear();
            }
            if let Some(runner) = stand_ins.iter().find(|s| s.stands_for(cta, tid)) {
                total_steps += runner.steps;
                for key in &runner.uses {
                    shared.barrier_uses.entry(*key).or_default().push(tid);
                }
                for (site, what, mask) in &runner.collectives {
                    shared.reach_collective(*site, what, (cta, tid), *mask);
                }
                results.push(ThreadResult {
                    thread: (cta, tid),
                    ops: Vec::new(),
                    memory: None,
                    ran: false,
                    steps: runner.steps,
                    opened: Vec::new(),
                });
                continue;
            }
            let tables_before = (shared.barriers.list.len(), shared.buffers.list.len());
            let mut thread = ThreadRun {
                module,
                kept,
                scenario,
                options,
                cta,
                tid,
                block,
                cluster,
                ctas: cluster_ctas,
                threads_per_cta,
                shared: &mut *shared,
                ops: Vec::new(),
                memory: Vec::new(),
                op_points: Vec::new(),
                warp_point: 0,
                cluster_base: cta - cta % cluster_ctas,
                grid,
                elect_depth: 0,
                generation: HashMap::default(),
                rounds: HashMap::default(),
                inline_depth: 0,
                overflow: false,
                steps: 0,
                inlining: Vec::new(),
                globals: self.globals,
                lane_varying: self.lane_varying,
                thread_indices: self.thread_indices,
                lane_dependent: self.lane_dependent,
                stood_in: options
                    .stand_ins
                    .then(|| uniform::StoodInLanes::new(lanes_to_stand_in_for(tid, threads_per_cta, |t| stand_ins.iter().any(|s| s.stands_for(cta, t)))))
                    .filter(|l| !l.tids().is_empty()),
                lane_values: self.lane_values,
                sync_helpers: self.sync_helpers,
                functions: self.functions,
                divergence: 0,
                observing: self.observing,
                pending_guard: None,
                kernel_stmt: kernel.body.first().map_or(0, |s| s.id),
                participants: HashMap::default(),
                tile_cursors: HashMap::default(),
                loops_of_unknown_length: 0,
                structs: HashMap::default(),
                warp_accesses: Vec::new(),
                lane_regions: Vec::new(),
                race_points: warp.as_ref().map(|w| w.race_points.clone()).unwrap_or_default(),
                lane_sensitive: false,
                uses: Vec::new(),
                collectives: Vec::new(),
                helper_scopes: Vec::new(),
                advanced_parameters: Vec::new(),
                pipeline_result: None,
                try_wait_blocks: false,
                known_stops: Vec::new(),
                write_backs: Vec::new(),
                definitions: self.definitions,
                loop_bounds: self.loop_bounds,
                same_conditions: self.same_conditions,
            };
            // The module's names are looked up where a name is not bound
            // here (see `unbound`), not copied into every frame.
            let mut env: Env = self.params.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            // Tensors and pointers passed to the kernel are global memory.
            for p in kernel.params.iter().filter(|p| p.tensor) {
                if env.get(&p.name).or_else(|| self.globals.get(&p.name)).is_none_or(Value::is_unknown) {
                    env.insert(p.name.clone(), Value::Gmem(eval::GmemRef { param: p.name.as_str().into(), offset: Some(0), stage: None }));
                }
            }
            thread.exec_block(&kernel.body, &mut env, Body::Kernel);
            if thread.overflow {
                thread.unresolved(
                    kernel.name_range,
                    format!(
                        "thread {tid} runs more than {} synchronization operations or {} statements, too many to model",
                        options.max_ops_per_thread, options.max_steps_per_thread
                    ),
                );
            }
            total_steps += thread.steps;
            let stand_in = thread
                .stands_in()
                .then(|| StandIn {
                cta,
                tids: thread.stood_in.take().map(|l| l.tids().to_vec()).unwrap_or_default(),
                steps: thread.steps,
                uses: std::mem::take(&mut thread.uses),
                collectives: std::mem::take(&mut thread.collectives),
            })
            .filter(|_| {
                let tables = &thread.shared;
                !tables.out_of_time && tables_before == (tables.barriers.list.len(), tables.buffers.list.len())
            });
            stand_ins.extend(stand_in);
            let memory = std::mem::take(&mut thread.memory);
            let op_points = std::mem::take(&mut thread.op_points);
            let memory = (!memory.is_empty() || !op_points.is_empty()).then(|| ThreadMemory {
                thread: (cta, tid),
                ops: memory,
                op_points,
                lane_races: Vec::new(),
            });
            if tid % 32 == 0 {
                let accesses = std::mem::take(&mut thread.warp_accesses);
                let buffers = &thread.shared.buffers.list;
                let ops = memory.as_ref().map_or(&[][..], |m| &m.ops[..]);
                let own_shared = |b: BufferIx| matches!(buffers[b as usize].space, Space::Shared { cta: c } if c == cta);
                let race_points = std::rc::Rc::new(lanes::race_points(ops, &accesses, own_shared));
                warp = Some(WarpMemory { lane0: results.len(), accesses, race_points, lanes: vec![None] });
            } else if let Some(w) = warp.as_mut() {
                let lane = (tid % 32) as usize;
                w.lanes.resize(lane, None);
                w.lanes.push(Some(std::mem::take(&mut thread.lane_regions)));
            }
            let is_last_lane = thread.is_last_lane();
            // The conditions this thread found open first (the thread that
            // stands in for others found none: it met nothing lane-dependent).
            let opened = match thread.shared.open.len() > open_before {
                true => thread.shared.open.keys().copied().filter(|id| !open_seen.contains(id)).collect(),
                false => Vec::new(),
            };
            open_seen.extend(opened.iter().copied());
            results.push(ThreadResult {
                thread: (cta, tid),
                ops: std::mem::take(&mut thread.ops),
                memory,
                ran: true,
                steps: thread.steps,
                opened,
            });
            if is_last_lane {
                if let Some(WarpMemory { lane0: at, accesses, race_points, lanes }) = warp.take() {
                    let (lane0, others) = results[at..].split_first_mut().expect("lane 0 ran");
                    if let Some(memory) = lane0.memory.as_mut() {
                        let own: Vec<Option<&ThreadMemory>> =
                            std::iter::once(None).chain(others.iter().map(|r| r.memory.as_ref())).collect();
                        lanes::settle_warp(memory, &accesses, &race_points, &lanes, &own);
                    }
                }
            }
        }
        results
    }

    /// Records that the threads ran past the time budget.
    fn out_of_time(&self, shared: &mut Shared) {
        shared.out_of_time = true;
        shared.unresolved.insert(Unresolved {
            site: self.kernel.name_range,
            what: format!("running its threads took longer than {} s, too long to model", MAX_TIME.as_secs()),
            origin: None,
        });
    }

    /// Whether the first run, with `steps` statements executed and `open`
    /// conditions on runtime values met, already shows
    /// [`other_ways_over_budget`]: the kernel cannot be checked then,
    /// whatever the threads not run yet do, and they are not run. (Only the
    /// first run stops so: a run for a way of deciding them is a model to
    /// check.)
    fn other_ways_over_budget(&self, steps: usize, open: usize) -> bool {
        self.scenario.is_empty() && other_ways_over_budget(steps, open, self.options)
    }

    /// Records that the threads ran past the statement budget.
    fn over_statement_budget(&self, shared: &mut Shared) {
        shared.unresolved.insert(Unresolved {
            site: self.kernel.name_range,
            what: format!(
                "its threads run more than {} statements together, too many to model",
                self.options.max_steps_total
            ),
            origin: None,
        });
    }
}

/// What the lanes of the warp being run leave for their memory accesses to
/// be compared (see `lanes`).
struct WarpMemory {
    /// Where lane 0's result is.
    lane0: usize,
    accesses: Vec<lanes::WarpAccess>,
    race_points: std::rc::Rc<lanes::RacePoints>,
    /// What each lane reported, by lane (`None`: lane 0, or not run).
    lanes: Vec<Option<Vec<lanes::LaneRegion>>>,
}

/// Clusters modelled at most when CTAs synchronize through global memory.
const MAX_CLUSTERS: u32 = 4;

/// Whether the kernel synchronizes through global memory (atomics, loads or
/// stores with memory-order semantics): then several clusters are modelled.
fn uses_global_sync(module: &Module, kernel: &FunctionDef) -> bool {
    let global = |c: &Call| matches!(Api::of_call(c), Some(Api::Atomic | Api::Load | Api::InlineAsm));
    let helpers = cute_ir::slice::helpers_calling(module, global);
    cute_ir::ast::any_call(&kernel.body, |c| global(c) || cute_ir::slice::callee_name(c).is_some_and(|n| helpers.contains(n)))
}

#[derive(Default)]
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
    /// (cta, id, site, round, count, sync, aligned, cta_wide) -> threads,
    /// for [`BarrierUse`].
    barrier_uses: BTreeMap<UseKey, Vec<u32>>,
    /// When running the threads must stop (see `MAX_TIME`).
    deadline: std::time::Instant,
    out_of_time: bool,
    /// No launch was found: `threads_per_cta` is a default.
    block_assumed: bool,
}

impl Shared {
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

enum Flow {
    Normal,
    Break,
    Continue,
    Return(Value),
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
    /// The kernel statement being run (see `MemOp::stmt`).
    kernel_stmt: u32,
    /// The pipeline state of each `PipelineProducer`/`PipelineConsumer`
    /// (by id): their methods advance it in place.
    participants: HashMap<String, Value>,
    /// The tile each persistent tile scheduler is at (by id), in tiles from
    /// the CTA's first; `None` once advanced by a count not known (see
    /// `tile_scheduler.rs`).
    tile_cursors: HashMap<String, Option<i64>>,
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
    /// In a lane that may stand in for later lanes of its warp, those lanes
    /// and what the kernel's names hold in them (see `uniform`).
    stood_in: Option<uniform::StoodInLanes<'a>>,
}

impl<'a> ThreadRun<'a> {
    fn lane(&self) -> u32 {
        self.tid % 32
    }

    /// What the thread-index calls return in this thread.
    fn place(&self) -> uniform::Place {
        uniform::Place {
            cta: self.cta,
            tid: self.tid,
            block: self.block,
            grid: self.grid,
            cluster: self.cluster,
            cluster_base: self.cluster_base,
            ctas: self.ctas,
        }
    }

    /// Evaluates expressions as this thread does, without effects.
    fn lane_evaluator(&self) -> uniform::LaneEvaluator<'a> {
        uniform::LaneEvaluator { place: self.place(), globals: self.globals, functions: self.functions, failed: false }
    }

    /// Whether this thread stands in for other lanes of its warp, as far as
    /// it has run (see [`StandIn`]). A lane that has recorded something of
    /// its own (an operation, a memory access) stands in for none: the
    /// lanes after it are run on their own, and following them further
    /// would only cost time (most of a kernel's run, where every lane
    /// touches memory at addresses of its own).
    fn stands_in(&self) -> bool {
        self.stood_in.is_some()
            && !self.lane_sensitive
            && !self.overflow
            && self.ops.is_empty()
            && self.memory.is_empty()
            && self.lane_regions.is_empty()
            && self.op_points.is_empty()
    }

    /// For `e`, an expression of the code being run that can differ
    /// between lanes and gave `value` here: keeps standing in for the lanes
    /// where it gives the same (see `uniform`), the same decision for a
    /// condition or the same value otherwise (`as_value`), and leaves the
    /// others to run on their own. Stands in for none when `e` cannot be evaluated in them.
    /// Whether it still stands in for some.
    fn keep_lanes_alike(&mut self, e: &Expr, value: &Value, as_value: bool, env: &Env) -> bool {
        let values = self.in_stood_in_lanes(e, env);
        self.keep_lanes_giving(values, value, as_value)
    }

    /// [`Self::keep_lanes_alike`] for an expression that gave `values` in
    /// the lanes stood in for (`None`: it could not be evaluated there).
    fn keep_lanes_giving(&mut self, values: Option<std::rc::Rc<uniform::InLanes>>, value: &Value, as_value: bool) -> bool {
        let Some(values) = values else {
            self.lane_sensitive = true;
            return false;
        };
        let alike = |v: &Value| if as_value { v == value } else { v.as_bool() == value.as_bool() };
        self.keep_lanes_where(|i, _| alike(values.get(i)))
    }

    /// [`Self::keep_lanes_giving`] for an argument a call reads as an
    /// offset from the calling thread's lane (a pipeline's `tidx=`, see
    /// [`crate::pipeline::reads_as_lane_offset`]): a lane where it is as far
    /// from that lane's own index, modulo a warp, as `value` is from this
    /// one's is alike, whatever the value (`tidx - 64` in every lane of the
    /// third warp).
    fn keep_lanes_at_same_lane_offset(&mut self, values: Option<std::rc::Rc<uniform::InLanes>>, value: &Value) {
        let offset = |v: &Value, tid: u32| v.as_int().map(|t| (t - i64::from(tid)).rem_euclid(32));
        let (Some(values), Some(running)) = (values, offset(value, self.tid)) else {
            self.lane_sensitive = true;
            return;
        };
        self.keep_lanes_where(|i, tid| offset(values.get(i), tid) == Some(running));
    }

    /// Keeps standing in for the lanes where `alike`, given a lane's
    /// position and thread index, is true. Whether it still stands in for
    /// some.
    fn keep_lanes_where(&mut self, alike: impl Fn(usize, u32) -> bool) -> bool {
        let lanes = self.stood_in.as_mut().expect("evaluated in them");
        lanes.keep(alike);
        if lanes.is_empty() {
            self.lane_sensitive = true;
        }
        !self.lane_sensitive
    }

    /// The value of expression `e` of the code being run (the kernel's or a
    /// helper's) in each lane this lane stands in for, `None` where it is
    /// not known (see `uniform`).
    fn in_stood_in_lanes(&mut self, e: &Expr, env: &Env) -> Option<std::rc::Rc<uniform::InLanes>> {
        if !self.following_stood_in_lanes() {
            return None;
        }
        let lane = self.lane_evaluator();
        let scope = self.helper_scopes.last().cloned();
        let lane_dependent = scope.as_deref().unwrap_or(self.lane_dependent);
        self.stood_in.as_mut()?.evaluate(e, env, lane_dependent, lane)
    }

    /// Whether the names of the code being run are followed in the lanes
    /// this lane stands in for: while it stands in for some, in the kernel
    /// and in the helpers followed into (see [`Self::inline_call`]).
    fn following_stood_in_lanes(&self) -> bool {
        self.stands_in() && self.stood_in.as_ref().is_some_and(|l| l.helpers() == self.inline_depth as usize)
    }

    /// Follows a binding of `target` to `value` in the lanes this lane
    /// stands in for.
    fn bind_in_stood_in_lanes(&mut self, target: &Target, value: &'a Expr, env: &Env) {
        if !self.following_stood_in_lanes() || matches!(target, Target::Attr { .. } | Target::Subscript { .. }) {
            return;
        }
        let varies = self.varies_here(value);
        let lane = self.lane_evaluator();
        let scope = self.helper_scopes.last().cloned();
        let lane_dependent = scope.as_deref().unwrap_or(self.lane_dependent);
        let lanes = self.stood_in.as_mut().expect("followed");
        if !varies {
            return lanes.bind_same(target);
        }
        if let Expr::Call(call) = value {
            // `x = helper(...)`: what the helper returned in the lanes.
            if let Some(returned) = lanes.returned_by(call) {
                return lanes.bind_values(target, returned);
            }
            if self.pipeline_result == Some(&**call as *const Call as usize) {
                return lanes.bind_same(target);
            }
        }
        lanes.bind(target, value, env, lane_dependent, lane)
    }

    /// Follows `return e` (`e` gave `running` here) of a helper in the
    /// lanes this lane stands in for.
    fn return_in_stood_in_lanes(&mut self, e: Option<&Expr>, running: &Value, env: &Env) {
        if self.inline_depth == 0 || !self.following_stood_in_lanes() {
            return;
        }
        let values = match e {
            Some(e) if self.varies_here(e) => self.in_stood_in_lanes(e, env),
            _ => Some(std::rc::Rc::new(uniform::InLanes::All(running.clone()))),
        };
        self.stood_in.as_mut().expect("followed").set_returned(values);
    }

    /// Follows a binding of `target` to a value that is this lane's in
    /// every lane it stands in for (a loop's target when the lanes run the
    /// same iterations, a `with` target not lane-dependent).
    fn bind_same_in_stood_in_lanes(&mut self, target: &Target) {
        if self.following_stood_in_lanes() {
            self.stood_in.as_mut().expect("followed").bind_same(target);
        }
    }

    /// Where the converged warp is between points that order its lanes.
    fn stretch(&self) -> lanes::Stretch {
        self.warp_point
    }

    /// Whether this thread is the last lane of its warp (31, or the CTA's
    /// last thread in a partial warp) and not also its lane 0.
    fn is_last_lane(&self) -> bool {
        self.lane() != 0 && (self.lane() == 31 || self.tid + 1 == self.threads_per_cta)
    }

    /// Record an operation. In converged code the warp acts as one: lane 0
    /// records it for the whole warp (an arrival counts once per lane) and
    /// the other lanes record nothing. Inside a branch that splits the warp,
    /// every lane records its own operations.
    fn push(&mut self, kind: OpKind, site: TextRange) {
        let converged = self.converged();
        let kind = if converged {
            // Every lane counts the warp's converged operations: they are
            // the points where its lanes meet (see `warp_point`).
            self.warp_point += 1;
            if self.lane() != 0 {
                return;
            }
            match kind {
                OpKind::Arrive { bar, count } => OpKind::Arrive { bar, count: count * self.warp_lanes() },
                other => other,
            }
        } else {
            if self.lane() != 0 {
                self.shared.notes.insert(
                    "some lanes synchronize inside a branch that splits their warp; their timing against the rest of the warp is not constrained"
                        .to_string(),
                );
            }
            kind
        };
        if self.ops.len() >= self.options.max_ops_per_thread {
            self.overflow = true;
            return;
        }
        let point = if converged { self.warp_point - 1 } else { self.warp_point };
        self.push_op(Op { kind, site }, point, converged);
    }

    fn push_op(&mut self, op: Op, warp_point: u32, converged: bool) {
        self.ops.push(op);
        self.op_points.push(WarpPoint { before: warp_point, converged });
    }

    fn unresolved(&mut self, site: TextRange, what: String) {
        self.shared.unresolved.insert(Unresolved { site, what, origin: None });
    }

    /// Run a block of the kernel's or of a helper's `body`, skipping the
    /// statements outside its slice.
    fn exec_block(&mut self, stmts: &'a [Stmt], env: &mut Env, body: Body<'a>) -> Flow {
        for s in stmts {
            self.apply_write_backs(env);
            if self.overflow {
                return Flow::Return(Value::None);
            }
            let kept = match body {
                Body::Kernel => self.kept.contains(s.id),
                Body::Helper(kept) => kept.contains(s.id),
                Body::Whole => true,
            };
            if !kept {
                continue;
            }
            // Loads and stores only memory ordering needs: a lane that
            // records none (its warp's lane 0 acts for it) skips them; the
            // last lane runs them for the elements it would touch, and so
            // do the others where lanes could race (`lanes::race_points`).
            if matches!(body, Body::Kernel)
                && self.converged()
                && self.lane() != 0
                && !self.is_last_lane()
                && self.kept.memory_only(s.id)
                && !self.race_points.contains_key(&(s.range, self.stretch()))
            {
                continue;
            }
            match self.exec(s, env, body) {
                Flow::Normal => {}
                other => return other,
            }
        }
        self.apply_write_backs(env);
        Flow::Normal
    }

    /// Rebinds the names that [`Self::write_backs`] holds.
    fn apply_write_backs(&mut self, env: &mut Env) {
        for (name, value) in self.write_backs.drain(..) {
            env.insert(name, value);
        }
    }

    /// After `call` ran helper `f`: the pipeline states it advanced that
    /// the call passed by name are advanced in the caller too, as the
    /// objects they are (a state is a value here, bound per frame).
    /// `passed`: whether the call bound `self`, and how many arguments and
    /// keyword arguments it passed.
    ///
    /// Through a `partial`, a state it binds would be advanced inside it
    /// (Python's states are objects): not modelled, and never dropped in
    /// silence.
    fn write_back_advanced_states(&mut self, call: &Call, f: &FunctionDef, passed: (bool, usize, usize), partial: Option<&eval::Partial>) {
        let advanced = std::mem::take(&mut self.advanced_parameters);
        if advanced.is_empty() {
            return;
        }
        let (has_self, args, kwargs) = passed;
        let Some(exprs) = argument_expressions(call, args, kwargs) else { return };
        // What each parameter was given: its default (`None`), an argument
        // the partial binds (`Some(None)`: no name of the caller's), or an
        // expression of the call.
        let bound_args = partial.map_or(0, |p| p.args.len());
        let bound_keywords: Vec<(String, Option<Option<&Expr>>)> = partial
            .map(|p| p.kwargs.iter().filter(|(k, _)| !call.kwargs.iter().any(|(given, _)| given == k)).map(|(k, _)| (k.clone(), Some(None))).collect())
            .unwrap_or_default();
        let positional = std::iter::repeat_n(Some(None), bound_args).chain(exprs[..call.args.len()].iter().map(|e| Some(Some(*e))));
        let keywords = bound_keywords
            .into_iter()
            .chain(call.kwargs.iter().map(|(k, _)| k.clone()).zip(exprs[call.args.len()..].iter().map(|e| Some(Some(*e)))));
        let bound = bind_parameters(f, has_self.then_some(Some(None)), positional, keywords, |_| None);
        for (param, value) in advanced {
            match bound.iter().rev().find(|(p, _)| *p == param) {
                Some((_, Some(Some(Expr::Name(name))))) => self.write_backs.push((name.clone(), value)),
                Some((_, Some(None))) if partial.is_some() => self.unresolved(
                    call.range,
                    format!("it advances `{param}`, a pipeline state that `functools.partial` binds, which is not modelled"),
                ),
                _ => {}
            }
        }
    }

    /// Binds here the module-level object whose attribute `target` stores
    /// into (`config.x = v`), so that the store is seen by the rest of this
    /// frame, as it was when frames began as copies of the module's names.
    fn bind_stored_object(&self, target: &Target, env: &mut Env) {
        match target {
            Target::Attr { base: Expr::Name(b), .. } if !env.contains_key(b) => {
                if let Some(v) = self.globals.get(b) {
                    env.insert(b.clone(), v.clone());
                }
            }
            Target::Tuple(items) => items.iter().for_each(|t| self.bind_stored_object(t, env)),
            _ => {}
        }
    }

    fn exec(&mut self, s: &'a Stmt, env: &mut Env, body: Body<'a>) -> Flow {
        self.steps += 1;
        if self.inline_depth == 0 {
            self.kernel_stmt = s.id;
        }
        if self.steps > self.options.max_steps_per_thread {
            self.overflow = true;
            return Flow::Return(Value::None);
        }
        if self.steps % 1024 == 0 && std::time::Instant::now() > self.shared.deadline {
            self.shared.out_of_time = true;
        }
        if self.shared.out_of_time {
            return Flow::Return(Value::None);
        }
        match &s.kind {
            StmtKind::Assign { targets, value } => {
                let mut v = eval(value, env, self);
                if self.inline_depth == 0 {
                    self.take_unknown_count_as_explored(targets, value, &mut v, env);
                }
                self.record_reads(value, env, s.range);
                for t in targets {
                    self.bind_in_stood_in_lanes(t, value, env);
                }
                for t in targets {
                    self.record_store(t, env, s.range, false);
                    self.bind_stored_object(t, env);
                    assign(t, v.clone(), env);
                }
            }
            StmtKind::AugAssign { target, op, value } => {
                let cur = match target {
                    Target::Name(n) => match env.get(n).or_else(|| self.globals.get(n)) {
                        Some(v) => v.clone(),
                        None => Value::unknown(format!("`{n}`")),
                    },
                    Target::Attr { base, attr } => eval(&Expr::Attr { base: Box::new(base.clone()), attr: attr.clone() }, env, self),
                    _ => Value::unknown("an augmented store"),
                };
                let r = eval(value, env, self);
                self.record_reads(value, env, s.range);
                self.record_store(target, env, s.range, true);
                self.aug_assign_in_stood_in_lanes(target, *op, (&cur, &r), value, env);
                let v = eval::binary(*op, &cur, &r);
                self.bind_stored_object(target, env);
                assign(target, v, env);
            }
            StmtKind::Expr(e) => {
                // `state.advance()` changes the state it is called on.
                if let Expr::Call(c) = e {
                    if let Expr::Attr { base, attr } = &c.func {
                        if let (Expr::Name(v), "advance") = (base.as_ref(), attr.as_str()) {
                            if let Some(next) = env.get(v).and_then(crate::pipeline::advanced) {
                                self.advance_in_stood_in_lanes(v, env);
                                env.insert(v.clone(), next);
                                return Flow::Normal;
                            }
                            if matches!(env.get(v), Some(Value::Object(o)) if o.class == crate::pipeline::STATE) {
                                // A state that cannot advance: its later
                                // waits would name the wrong phases.
                                self.unresolved(c.range, format!("`{v}.advance()` on a pipeline state not known statically"));
                                return Flow::Normal;
                            }
                        }
                    }
                }
                eval(e, env, self);
                self.record_reads(e, env, s.range);
            }
            StmtKind::If { cond, then, orelse } => {
                // `if load(flag, ...) >= N:` decides on a synchronization
                // variable: the branch taken is guarded by the value read.
                if let Some((call, guard)) = self.spin_guard(cond, env, true, None) {
                    self.note_lane_varying(cond);
                    let taken = self.open_condition(s, &Value::unknown("a value loaded from memory"));
                    if let Some(c) = self.shared.open.get_mut(&s.id) {
                        c.on_memory = true;
                    }
                    let guard = if taken { guard } else { Guard { exit_when: guard.exit_when.negated(), ..guard } };
                    self.observe_with(call, guard, env);
                    return if taken { self.exec_block(then, env, body) } else { self.exec_block(orelse, env, body) };
                }
                let c = eval(cond, env, self);
                self.note_lane_varying_condition(cond, &c, env);
                self.record_reads(cond, env, s.range);
                let taken = match c.as_bool() {
                    Some(b) => b,
                    None => self.open_condition(s, &c),
                };
                // A condition unknown in every lane of the warp is decided
                // by the scenario, alike in all of them: it splits no warp.
                let splits_warp = self.is_lane_varying(cond) && !(c.as_bool().is_none() && self.unknown_in_every_lane(cond, env));
                self.divergence += splits_warp as u32;
                let flow = if taken { self.exec_block(then, env, body) } else { self.exec_block(orelse, env, body) };
                self.divergence -= splits_warp as u32;
                return flow;
            }
            StmtKind::For { target, iter, body: block } => {
                let it = eval(iter, env, self);
                self.note_lane_varying_value(iter, &it, env);
                if it.is_unknown() {
                    self.keep_lanes_running_as_many_trips(iter, env);
                }
                // Every lane runs the same iterations unless the lanes were
                // set apart just now.
                self.bind_same_in_stood_in_lanes(target);
                let trips_known = it.iteration().is_some();
                let (values, stop_known) = match it.iteration() {
                    Some(v) => (v, false),
                    None => self.explored_iterations(iter, &it, env),
                };
                let mut flow = Flow::Normal;
                self.loops_of_unknown_length += u32::from(!trips_known);
                for v in values {
                    assign(target, v, env);
                    match self.exec_block(block, env, body) {
                        Flow::Break => break,
                        Flow::Return(v) => {
                            flow = Flow::Return(v);
                            break;
                        }
                        _ => {}
                    }
                    if self.overflow {
                        break;
                    }
                }
                self.loops_of_unknown_length -= u32::from(!trips_known);
                if stop_known {
                    self.known_stops.pop();
                }
                if let Flow::Return(_) = flow {
                    return flow;
                }
            }
            StmtKind::While { cond, body: block } => {
                // `while not mbarrier_try_wait(bar, phase): pass` is the
                // wait on that phase: the thread goes on once it completes.
                if block.iter().all(|b| matches!(b.kind, StmtKind::Pass)) && spins_on_try_wait(cond) {
                    self.try_wait_blocks = true;
                    eval(cond, env, self);
                    self.try_wait_blocks = false;
                    return Flow::Normal;
                }
                // A spin loop on a synchronization variable is one blocking
                // read: the thread goes on once the value satisfies the exit
                // condition.
                if block.iter().all(|b| matches!(b.kind, StmtKind::Pass)) {
                    if let Some((call, guard)) = self.spin_guard(cond, env, false, None) {
                        self.observe_with(call, guard, env);
                        return Flow::Normal;
                    }
                }
                // `while v != n: v = ld_acquire(ctr)`: the same, through a
                // variable (unless it already holds the exit value).
                if let [Stmt { kind: StmtKind::Assign { targets, value }, .. }] = block.as_slice() {
                    if let ([Target::Name(var)], true) = (targets.as_slice(), self.is_observing_call(value)) {
                        if let Some((call, guard)) = self.spin_guard(cond, env, false, Some((var, value))) {
                            if eval(cond, env, self).as_bool() != Some(false) {
                                let v = self.observe_with(call, guard, env);
                                if self.following_stood_in_lanes() {
                                    // A value read from memory: not followed.
                                    self.stood_in.as_mut().expect("followed").bind_values(&Target::Name(var.clone()), None);
                                }
                                env.insert(var.clone(), v);
                            }
                            return Flow::Normal;
                        }
                    }
                }
                let mut iterations = 0;
                loop {
                    let c = eval(cond, env, self);
                    self.note_lane_varying_condition(cond, &c, env);
                    let explored = c.as_bool().is_none();
                    let go = match c.as_bool() {
                        Some(b) => b,
                        None => {
                            self.shared.bounded = true;
                            self.shared.notes.insert(format!(
                                "a `while` condition depends on a runtime value: the loop is explored for {} iterations",
                                self.options.unknown_trip_count
                            ));
                            iterations < self.options.unknown_trip_count
                        }
                    };
                    if !go || iterations > 100_000 || self.overflow {
                        break;
                    }
                    iterations += 1;
                    self.loops_of_unknown_length += u32::from(explored);
                    let flow = self.exec_block(block, env, body);
                    self.loops_of_unknown_length -= u32::from(explored);
                    match flow {
                        Flow::Break => break,
                        Flow::Return(v) => return Flow::Return(v),
                        _ => {}
                    }
                }
            }
            StmtKind::With { items, body: block } => {
                let mut elect = false;
                for (e, t) in items {
                    let is_elect = matches!(e, Expr::Call(c) if Api::of_call(c) == Some(Api::ElectOne));
                    if is_elect {
                        elect = true;
                    } else {
                        self.note_lane_varying(e);
                        let v = eval(e, env, self);
                        if let Some(t) = t {
                            self.bind_same_in_stood_in_lanes(t);
                            assign(t, v, env);
                        }
                    }
                }
                if elect && !self.converged() {
                    self.partial_collective(s.range, "`elect_one` elects over the full warp (`elect.sync`, member mask 0xffffffff)", FULL_MASK);
                }
                if elect {
                    // elect.sync picks one lane of each warp: lane 0 when the
                    // whole warp is converged.
                    let mut flow = Flow::Normal;
                    self.divergence += 1;
                    if self.lane() == 0 {
                        self.elect_depth += 1;
                        flow = self.exec_block(block, env, body);
                        self.elect_depth -= 1;
                    }
                    self.divergence -= 1;
                    return flow;
                }
                return self.exec_block(block, env, body);
            }
            StmtKind::Return(e) => {
                let v = e.as_ref().map(|e| eval(e, env, self)).unwrap_or(Value::None);
                self.return_in_stood_in_lanes(e.as_ref(), &v, env);
                return Flow::Return(v);
            }
            StmtKind::Break => return Flow::Break,
            StmtKind::Continue => return Flow::Continue,
            StmtKind::Pass | StmtKind::Unsupported(_) => {}
        }
        Flow::Normal
    }

    /// Whether a condition can differ between the lanes of one warp
    /// (remembered per expression: it depends on the kernel alone, and every
    /// thread asks it of every condition it meets). A condition of the
    /// kernel's own code that compares its thread index with a warp's edge
    /// (`if tidx < 32:`) decides whole warps.
    fn is_lane_varying(&mut self, cond: &Expr) -> bool {
        let (lane_varying, globals) = (self.lane_varying, self.globals);
        let indices = if self.inline_depth == 0 { self.thread_indices } else { &EMPTY_NAMES };
        *self.shared.lane_varying_conditions.entry(cond as *const Expr as usize).or_insert_with(|| {
            varies_across_lanes(cond, lane_varying, globals, LaneVarying::Contents)
                && !decides_whole_warps(cond, indices, lane_varying, globals)
        })
    }

    /// Whether all lanes of this thread's warp run this code together: no
    /// enclosing branch splits the warp.
    fn converged(&self) -> bool {
        self.divergence == 0 && self.elect_depth == 0
    }

    /// A warp-collective operation over the lanes of `mask` reached by this
    /// thread while its warp is split.
    /// The lanes this lane stands in for decided as it did to get here, so
    /// they reach it too: it is recorded for them with the lane's other
    /// registrations (see [`StandIn`]).
    fn partial_collective(&mut self, site: TextRange, what: &str, mask: u32) {
        self.shared.reach_collective(site, what, (self.cta, self.tid), mask);
        if self.stands_in() {
            self.collectives.push((site, what.into(), mask));
        }
    }

    /// The member mask of a warp collective: the default (the full warp) or
    /// a known integer; `None` when it is computed at run time.
    fn member_mask(&mut self, api: Api, call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> Option<u32> {
        let param = match api {
            // `shuffle_sync_bfly(val, offset, mask=-1)` whatever
            // `threads_in_group` is.
            Api::WarpReduction => return Some(FULL_MASK),
            Api::WarpRedux => "mask_and_clamp",
            _ => "mask",
        };
        match self.arg_value(call, param, &[], args, kwargs) {
            None | Some(Value::None) => Some(FULL_MASK),
            // Only the low 32 bits are the mask (`-1` is every lane).
            Some(v) => v.as_int().map(|m| m as u32),
        }
    }

    /// Lanes in this thread's warp.
    fn warp_lanes(&self) -> u32 {
        let warp = self.tid / 32;
        (self.threads_per_cta - warp * 32).min(32)
    }

    fn open_condition(&mut self, s: &Stmt, value: &Value) -> bool {
        let why = match value {
            Value::Unknown(w) => w.to_string(),
            _ => "a runtime value".to_string(),
        };
        let (stmt, site, negated) = self.same_conditions.deciding(s);
        self.shared.open.entry(stmt).or_insert(OpenCondition { stmt, site, why, on_memory: false });
        self.scenario.get(&stmt).copied().unwrap_or(false) != negated
    }

    fn barrier_of(&mut self, v: &Value, expr: Option<&Expr>, site: TextRange) -> BarrierIx {
        // Spelled out only when a name is needed (every lane of every round
        // comes here).
        let text = || expr.map(expr_text).unwrap_or_else(|| "barrier".to_string());
        let (key, cta) = match v {
            Value::Smem(SmemRef { alloc, offset, cta, .. }) => {
                let cta = cta.unwrap_or(self.cta);
                ((alloc.clone(), *offset, cta, 0u8), cta)
            }
            other => {
                // A barrier that does not come from shared memory allocated
                // in this kernel (a parameter of a helper checked on its own,
                // a pointer from a runtime tensor): its init and its other
                // users are elsewhere, so nothing can be concluded here.
                let why = match other { Value::Unknown(w) => w.to_string(), _ => "a non-pointer".to_string() };
                let text = text();
                self.unresolved(site, format!("the barrier `{text}` is not allocated in this kernel ({why})"));
                ((format!("`{text}`").into(), 0, self.cta, 1u8), self.cta)
            }
        };
        let in_kernel = self.inline_depth == 0;
        self.shared.barriers.intern_named(key, in_kernel, || Barrier { name: text(), cta, kind: BarrierKind::Mbarrier, preset_count: None })
    }

    fn pseudo_barrier(&mut self, kind: BarrierKind, cta: u32, count: u32) -> BarrierIx {
        let name = match &kind {
            BarrierKind::CtaBarrier => "sync_threads".to_string(),
            BarrierKind::NamedBarrier(id) => format!("named barrier {id}"),
            BarrierKind::ClusterBarrier => "cluster barrier".to_string(),
            BarrierKind::Mbarrier => "mbarrier".to_string(),
        };
        let tag = match &kind {
            BarrierKind::CtaBarrier => 2,
            BarrierKind::NamedBarrier(_) => 3,
            BarrierKind::ClusterBarrier => 4,
            BarrierKind::Mbarrier => 5,
        };
        let id = if let BarrierKind::NamedBarrier(id) = kind { id } else { 0 };
        self.shared.barriers.intern((name.as_str().into(), id, cta, tag), || Barrier { name, cta, kind, preset_count: Some(count) })
    }

    /// Note a registration with hardware barrier `id` by this lane.
    fn record_use(&mut self, id: i64, count: u32, sync: bool, aligned: bool, cta_wide: bool, site: TextRange) {
        let r = self.rounds.entry(id).or_insert(0);
        let round = *r;
        *r += 1;
        let key = (self.cta, id, site, round, count, sync, aligned, cta_wide);
        self.shared.barrier_uses.entry(key).or_default().push(self.tid);
        self.uses.push(key);
    }

    /// Marks this lane as one another lane may not run like when the value
    /// of `e` (a condition, a loop's range, an argument) can differ between
    /// lanes.
    fn note_lane_varying(&mut self, e: &Expr) {
        if !self.stands_in() {
            return;
        }
        self.lane_sensitive = self.varies_here(e);
    }

    /// For a loop over `iter`, a range whose trip count is not known: the
    /// lanes this lane stands in for run as many iterations only if they
    /// start and step where it does (see
    /// [`Self::trips_off_the_unknown_count`]); the others are set apart.
    fn keep_lanes_running_as_many_trips(&mut self, iter: &Expr, env: &Env) {
        let Expr::Call(call) = iter else { return };
        if call.args.len() < 2 || !self.stands_in() {
            return;
        }
        for bound in [&call.args[0]].into_iter().chain(call.args.get(2)) {
            if self.stands_in() && self.varies_here(bound) {
                let value = eval(bound, env, &mut self.lane_evaluator());
                self.keep_lanes_alike(bound, &value, true, env);
            }
        }
    }

    /// The values of a loop's target in the iterations a loop over `iter`,
    /// whose trip count is not known (it evaluated to `it`), is explored for,
    /// and whether the loop's stop was then pushed onto `known_stops`.
    /// The verdict becomes a bounded one.
    fn explored_iterations(&mut self, iter: &'a Expr, it: &Value, env: &Env) -> (Vec<Value>, bool) {
        let mut stop_known = false;
        self.shared.bounded = true;
        let why = match it { Value::Unknown(w) => w.to_string(), _ => "the loop's trip count".to_string() };
        self.shared.notes.insert(format!(
            "{why} is not known statically: the loop is explored for {} iterations",
            self.options.unknown_trip_count
        ));
        let mut trips = match self.trips_off_the_unknown_count(iter, env) {
            Some(offset) if offset != 0 => {
                self.shared.notes.insert(
                    "a loop whose bound is an unknown count minus or plus a constant (`range(n - 1)`) is explored for that many fewer or more iterations"
                        .to_string(),
                );
                (self.options.unknown_trip_count as i64 + offset).max(0) as usize
            }
            _ => self.options.unknown_trip_count as usize,
        };
        if let Some(bound) = self.known_bound_on_trips(iter, env).filter(|&b| b < trips) {
            self.shared.notes.insert(
                "a loop whose unknown trip count is bounded by a known one (`range(min(stages, n))`) is explored for no more iterations than that bound"
                    .to_string(),
            );
            trips = bound;
        }
        // The iterations explored are the loop's first: where it
        // starts and steps is known, so is its counter in them
        // (`if k == 0:` holds in the first alone), and so is its
        // stop, as far as they go.
        let values = match self.known_start_and_step(iter, env) {
            Some((start, step)) => {
                let trips = trips as i64;
                if let Some((stop, offset)) = stop_call(iter) {
                    self.known_stops.push((stop, self.inline_depth, Value::Int(start + trips * step - offset)));
                    stop_known = true;
                }
                (0..trips).map(|k| Value::Int(start + k * step)).collect()
            }
            None => (0..trips).map(|_| Value::unknown(UNKNOWN_LOOP_COUNTER)).collect(),
        };
        (values, stop_known)
    }

    /// `k_tiles = cute.size(...)`, not known statically, where `k_tiles` is
    /// a bound of the kernel's loops: it takes the count a loop of unknown
    /// length is explored for (see [`trip_bound::loop_bound_names`]), and
    /// the verdict is a bounded one.
    fn take_unknown_count_as_explored(&mut self, targets: &[Target], value: &Expr, v: &mut Value, env: &Env) {
        let [Target::Name(name)] = targets else { return };
        // Not where lanes may compute it differently: every lane must take
        // the same count, whether it stands in for others or not, and a
        // branch on it must not be taken to split the warp.
        if !v.is_unknown() || !self.loop_bounds.contains(name) || self.lane_varying.contains(name) || self.varies_here(value) {
            return;
        }
        // A count bounded by a known one (`min(stages, k_tiles)`) is no
        // larger.
        let definitions = self.definitions;
        let explored = i64::from(self.options.unknown_trip_count);
        let bound = trip_bound::at_most(value, definitions, env, self).map_or(explored, |b| b.clamp(0, explored));
        *v = Value::Int(bound);
        self.shared.bounded = true;
        self.shared.notes.insert(count_taken_note(name, self.options));
    }

    /// A known bound on the trips of a kernel loop over `iter` whose trip
    /// count is not known (see [`trip_bound`]). None in helpers (their
    /// names are not the kernel's), and where the bound may differ between
    /// the lanes a lane stands in for.
    fn known_bound_on_trips(&mut self, iter: &Expr, env: &Env) -> Option<usize> {
        if self.inline_depth > 0 || (self.stands_in() && self.varies_here(iter)) {
            return None;
        }
        let definitions = self.definitions;
        trip_bound::loop_bound(iter, definitions, env, self).map(|b| b as usize)
    }

    /// Where a range whose stop is not known starts and how it steps, when
    /// those are (`range(n)`, `cutlass.range(1, n, 2, unroll=1)`).
    fn known_start_and_step(&mut self, iter: &Expr, env: &Env) -> Option<(i64, i64)> {
        let Expr::Call(call) = iter else { return None };
        if Api::of_call(call) != Some(Api::Range) {
            return None;
        }
        let mut int = |e: &Expr| eval(e, env, self).as_int();
        match call.args.as_slice() {
            [_] => Some((0, 1)),
            [start, _] => Some((int(start)?, 1)),
            [start, _, step] => Some((int(start)?, int(step)?)).filter(|&(_, step)| step != 0),
            _ => None,
        }
    }

    /// For `range(stop)` / `range(start, stop)` (`cutlass.range` too) whose
    /// stop is an unknown count plus or minus constants (`k_tiles - 1`) and
    /// whose start is a known integer: the iterations it runs beyond or
    /// short of the unknown count. Every unknown count is explored as the
    /// same number, so loops over `k_tiles` and over `k_tiles - 1` (a
    /// consumer that waits once before its loop and once per iteration of
    /// it) keep the difference the code has.
    fn trips_off_the_unknown_count(&mut self, iter: &Expr, env: &Env) -> Option<i64> {
        let Expr::Call(call) = iter else { return None };
        if call.dotted_name()? != "range" || call.args.len() > 3 || call.args.is_empty() {
            return None;
        }
        if let Some(step) = call.args.get(2) {
            if eval(step, env, self).as_int() != Some(1) {
                return None;
            }
        }
        let (start, stop) = match call.args.as_slice() {
            [stop] => (0, stop),
            [start, stop, ..] => (eval(start, env, self).as_int()?, stop),
            _ => return None,
        };
        let mut offset = 0i64;
        let mut base = stop;
        loop {
            match base {
                Expr::Binary { op: BinOp::Add, lhs, rhs } if matches!(**rhs, Expr::Int(_)) => {
                    let Expr::Int(c) = **rhs else { unreachable!() };
                    offset += c;
                    base = lhs;
                }
                Expr::Binary { op: BinOp::Sub, lhs, rhs } if matches!(**rhs, Expr::Int(_)) => {
                    let Expr::Int(c) = **rhs else { unreachable!() };
                    offset -= c;
                    base = lhs;
                }
                _ => break,
            }
        }
        matches!(eval(base, env, self), Value::Unknown(_)).then_some(offset - start)
    }

    /// [`Self::note_lane_varying`] for the condition of an `if` or a loop
    /// that evaluated to `value`. A comparison with an operand that is the
    /// same unknown in every lane (`tidx < n`, `n` known only at run time)
    /// is unknown in every lane, whatever the other operand: all lanes then
    /// take the branch the scenario decides, or the same bounded
    /// exploration, and the condition cannot set them apart.
    fn note_lane_varying_condition(&mut self, cond: &Expr, value: &Value, env: &Env) {
        if !self.stands_in() || !self.varies_here(cond) {
            return;
        }
        if value.as_bool().is_none() && self.unknown_in_every_lane(cond, env) {
            return;
        }
        self.keep_lanes_alike(cond, value, false, env);
    }

    /// Whether the condition `e` is unknown in every lane whatever the lane:
    /// a comparison with an operand that is the same unknown in every lane,
    /// or `and`/`or`/`not` of such comparisons.
    fn unknown_in_every_lane(&mut self, e: &Expr, env: &Env) -> bool {
        match e {
            Expr::Compare { lhs, rhs, .. } => {
                [lhs, rhs].into_iter().any(|o| !self.varies_here(o) && self.unknown_without_effects(o, env))
            }
            Expr::BoolOp { lhs, rhs, .. } => self.unknown_in_every_lane(lhs, env) && self.unknown_in_every_lane(rhs, env),
            Expr::Unary { op: cute_ir::ast::UnOp::Not, operand } => self.unknown_in_every_lane(operand, env),
            _ => false,
        }
    }

    /// Whether `e` evaluates to an unknown value here, evaluated again
    /// without effects: a call other than the thread-index reads and casts
    /// (a helper that synchronizes) is not run a second time, and the value
    /// is then taken as not known to be unknown.
    fn unknown_without_effects(&self, e: &Expr, env: &Env) -> bool {
        let mut evaluator = self.lane_evaluator();
        let value = eval(e, env, &mut evaluator);
        !evaluator.failed && value.is_unknown()
    }

    /// Whether the value of `e` can differ between lanes, in the kernel or
    /// in the helper being inlined (remembered per expression and scope).
    fn varies_here(&mut self, e: &Expr) -> bool {
        let scope: &BTreeSet<String> = self.helper_scopes.last().map_or(self.lane_dependent, |s| s);
        let key = (e as *const Expr as usize, scope as *const BTreeSet<String> as usize);
        if let Some(&v) = self.shared.lane_dependent_exprs.get(&key) {
            return v;
        }
        let v = varies_across_lanes(e, scope, self.globals, self.lane_values);
        self.shared.lane_dependent_exprs.insert(key, v);
        v
    }

    /// The names of helper `f`, called by `call`, whose value can differ
    /// between lanes: its parameters given such a value and what its body
    /// computes from them or from the lane. `None` (this lane is then one
    /// another may not run like) where that cannot be followed: arguments
    /// that do not map onto parameters, or a lane-dependent value stored
    /// into an attribute, which outlives the call.
    ///
    /// `same_in_lanes` tells, for each of the call's arguments and then its
    /// keyword arguments, whether it has this lane's value in every lane it
    /// stands in for: such a parameter is not lane-dependent in the helper
    /// (`wg_idx = tidx // 128` handed to a helper that branches on it),
    /// although the caller's argument is.
    fn helper_scope(&mut self, call: &Call, f: &FunctionDef, bound: bool, same_in_lanes: &[bool]) -> Option<std::sync::Arc<BTreeSet<String>>> {
        let scope: &BTreeSet<String> = self.helper_scopes.last().map_or(self.lane_dependent, |s| s);
        // Attributes holding lane-dependent values (`self.x = tidx`) keep
        // their names inside a method of the same object; an object handed
        // over under another name is not followed.
        let attributes: Vec<String> = scope.iter().filter(|n| n.contains('.')).cloned().collect();
        let holds_attributes = |e: &Expr, as_name: &str| match e {
            Expr::Name(b) => b != as_name && attributes.iter().any(|a| a.starts_with(&format!("{b}."))),
            _ => false,
        };
        let mut formal = f.params.iter();
        if bound && f.is_method() {
            formal.next();
            if let Expr::Attr { base, .. } = &call.func {
                if holds_attributes(base, "self") || self.varies_here(base) {
                    return None;
                }
            }
        }
        let formal: Vec<&cute_ir::ast::Param> = formal.collect();
        for (i, a) in call.args.iter().enumerate() {
            if holds_attributes(a, formal.get(i).map_or("", |p| p.name.as_str())) {
                return None;
            }
        }
        if call.kwargs.iter().any(|(k, a)| holds_attributes(a, k)) {
            return None;
        }
        let mut seed: Vec<String> = attributes;
        // The caller takes the call's value as lane-dependent when an
        // argument is (whatever the helper does with it).
        let mut caller_takes_lane_dependent = false;
        let same = |i: usize| same_in_lanes.get(i).copied().unwrap_or(false);
        for (i, a) in call.args.iter().enumerate() {
            if self.varies_here(a) {
                caller_takes_lane_dependent = true;
                match formal.get(i) {
                    _ if same(i) => {}
                    Some(p) if !matches!(a, Expr::Unary { op: cute_ir::ast::UnOp::Splat, .. }) => seed.push(p.name.clone()),
                    _ => return None,
                }
            }
        }
        for (n, (k, a)) in call.kwargs.iter().enumerate() {
            if self.varies_here(a) {
                caller_takes_lane_dependent = true;
                if same(call.args.len() + n) {
                    continue;
                }
                match formal.iter().find(|p| p.name == *k) {
                    Some(p) => seed.push(p.name.clone()),
                    None => return None,
                }
            }
        }
        seed.sort();
        let key = (f as *const FunctionDef as usize, seed);
        if let Some(scope) = self.shared.helper_scopes.get(&key) {
            return scope.clone();
        }
        let seed: BTreeSet<String> = key.1.iter().cloned().collect();
        let names = lane_varying_names(f, self.globals, self.lane_values, seed.clone());
        let stores_attribute = names.iter().any(|n| n.contains('.') && !seed.contains(n));
        // What the helper returns reaches the caller, whose names were
        // worked out without looking into the helper (`if lane() < 16`).
        // A call given a lane-dependent argument is lane-dependent there
        // already.
        let returns_lane = !caller_takes_lane_dependent
            && returned(&f.body).iter().any(|e| varies_across_lanes(e, &names, self.globals, self.lane_values));
        let scope = (!stores_attribute && !returns_lane).then(|| std::sync::Arc::new(names));
        self.shared.helper_scopes.insert(key, scope.clone());
        scope
    }

    /// Inline helper `f` for `call` (see [`Self::inline_following_lanes`]);
    /// the pipeline states it advanced are then advanced in the caller.
    fn inline_call(
        &mut self,
        call: &Call,
        f: &'a FunctionDef,
        bound_self: Option<Value>,
        args: Vec<Value>,
        kwargs: Vec<(String, Value)>,
        env: &Env,
    ) -> Value {
        let passed = (bound_self.is_some(), args.len(), kwargs.len());
        let v = self.inline_following_lanes(call, f, bound_self, args, kwargs, env);
        self.write_back_advanced_states(call, f, passed, None);
        v
    }

    /// Calls `partial` (see [`eval::Partial`]) for `call`: the function of
    /// this file it binds is inlined with the bound arguments first. The
    /// call's arguments do not line up with the function's parameters, so
    /// this lane stops standing in for others (it would have to follow
    /// them into the function by position).
    fn call_partial(&mut self, call: &Call, partial: &eval::Partial, args: Vec<Value>, kwargs: Vec<(String, Value)>) -> Value {
        let Value::Function { class, name, bound_self } = &partial.func else { return self.unknown_result(call) };
        let Some(f) = self.functions.get(class.as_deref(), name) else { return self.unknown_result(call) };
        if self.stands_in() {
            self.lane_sensitive = true;
        }
        let passed = (bound_self.is_some(), args.len(), kwargs.len());
        let (args, kwargs) = partial.with(args, kwargs);
        let v = self.inline(f, bound_self.as_deref().cloned(), args, kwargs);
        self.write_back_advanced_states(call, f, passed, Some(partial));
        v
    }

    /// The helper that synchronizes that `call` hands on where calls
    /// through it are not followed: to a function this file does not define,
    /// or as a value that is not known to be that helper (a closure, a
    /// method of an object not known). A name that holds another value
    /// (a tensor named as a helper is) hands on nothing.
    fn handed_helper_not_followed(&self, call: &Call, func: &Value, args: &[Value], kwargs: &[(String, Value)]) -> Option<String> {
        // Asked of every call a thread evaluates; most files have no such helper.
        if self.sync_helpers.is_empty() {
            return None;
        }
        let followed = self.calls_function_of_this_file(func);
        if !arguments_line_up(call, args.len(), kwargs.len()) {
            return (!followed).then(|| cute_ir::slice::handed_on_sync_helper(call, self.sync_helpers).map(str::to_string)).flatten();
        }
        let exprs = call.args.iter().chain(call.kwargs.iter().map(|(_, e)| e));
        let values = args.iter().chain(kwargs.iter().map(|(_, v)| v));
        exprs.zip(values).find_map(|(e, v)| match v {
            Value::Function { .. } | Value::Partial(_) if !followed => self.synchronizing_function(v),
            Value::Unknown(_) => cute_ir::slice::sync_helper_named(e, self.sync_helpers).map(str::to_string),
            _ => None,
        })
    }

    /// What a call this run does not follow gives: the same unknown value
    /// each time the call is evaluated.
    fn unknown_result(&mut self, call: &Call) -> Value {
        let key = call as *const Call as usize;
        self.shared
            .unknown_results
            .entry(key)
            .or_insert_with(|| Value::unknown(describe_unfollowed_call(call)))
            .clone()
    }

    /// Whether calling `func` inlines a function of this file.
    fn calls_function_of_this_file(&self, func: &Value) -> bool {
        match func {
            Value::Function { class, name, .. } => self.functions.get(class.as_deref(), name).is_some(),
            Value::Partial(p) => self.calls_function_of_this_file(&p.func),
            _ => false,
        }
    }

    /// The name of the helper `v` calls when it is one that synchronizes
    /// (a function of this file or a partial of one).
    fn synchronizing_function(&self, v: &Value) -> Option<String> {
        match v {
            Value::Function { name, .. } if self.sync_helpers.contains(&**name) => Some(name.to_string()),
            Value::Partial(p) => self.synchronizing_function(&p.func),
            _ => None,
        }
    }

    /// [`Self::inline`], following lane dependence into the helper (see
    /// [`Self::helper_scope`]) while this lane may stand in for others, and
    /// the values its names hold in those lanes while they are followed
    /// there: its parameters start with what the arguments hold there.
    fn inline_following_lanes(
        &mut self,
        call: &Call,
        f: &'a FunctionDef,
        bound_self: Option<Value>,
        args: Vec<Value>,
        kwargs: Vec<(String, Value)>,
        env: &Env,
    ) -> Value {
        if !self.stands_in() {
            return self.inline(f, bound_self, args, kwargs);
        }
        let in_lanes = self.arguments_in_stood_in_lanes(call, &args, &kwargs, env);
        let same: Vec<bool> = match &in_lanes {
            Some(in_lanes) => in_lanes.iter().zip(args.iter().chain(kwargs.iter().map(|(_, v)| v))).map(|(a, v)| a.is_everywhere(v)).collect(),
            None => Vec::new(),
        };
        let Some(scope) = self.helper_scope(call, f, bound_self.is_some(), &same) else {
            self.lane_sensitive = true;
            return self.inline(f, bound_self, args, kwargs);
        };
        let params = in_lanes.filter(|_| self.following_stood_in_lanes() && self.runs_body_of(f)).map(|mut in_lanes| {
            // A parameter given no argument, or the object, is the running
            // lane's in every lane.
            let keywords = in_lanes.split_off(args.len());
            let keywords = kwargs.iter().map(|(k, _)| k.clone()).zip(keywords);
            let same = bound_self.as_ref().map(|_| uniform::ArgInLanes::Same);
            bind_parameters(f, same, in_lanes, keywords, |_| uniform::ArgInLanes::Same)
        });
        let followed = params.is_some();
        if let Some(params) = params {
            self.stood_in.as_mut().expect("followed").enter(params);
        }
        self.helper_scopes.push(scope);
        let v = self.inline(f, bound_self, args, kwargs);
        self.helper_scopes.pop();
        if let Some(lanes) = self.stood_in.as_mut() {
            match followed {
                true => lanes.leave(call),
                false => lanes.not_followed(call),
            }
        }
        v
    }

    /// Whether [`Self::inline`] runs the body of `f` when called now.
    fn runs_body_of(&self, f: &FunctionDef) -> bool {
        cute_ir::ast::inlined_when_called(f.decorator) && !self.inlining.contains(&f.range) && self.inline_depth < Self::MAX_INLINE_DEPTH
    }

    /// What each of a call's arguments, then its keyword arguments, holds
    /// in the lanes this lane stands in for; `None` where arguments do not
    /// line up with their values (a spliced `*args`).
    fn arguments_in_stood_in_lanes(
        &mut self,
        call: &Call,
        args: &[Value],
        kwargs: &[(String, Value)],
        env: &Env,
    ) -> Option<Vec<uniform::ArgInLanes>> {
        let exprs = argument_expressions(call, args.len(), kwargs.len())?;
        Some(
            exprs
                .into_iter()
                .map(|e| match self.varies_here(e) {
                    false => uniform::ArgInLanes::Same,
                    true => match self.in_stood_in_lanes(e, env) {
                        Some(values) => uniform::ArgInLanes::Values(values),
                        None => uniform::ArgInLanes::Unknown,
                    },
                })
                .collect(),
        )
    }

    /// For a call that acts on its arguments: the lanes where an argument
    /// that varies across lanes in the code has another value than
    /// `args` and `kwargs` give it here are left to run on their own (see
    /// [`Self::keep_lanes_alike`]), and all of them where it cannot be
    /// evaluated there. False where arguments do not line up with their
    /// values (a spliced `*args`).
    fn keep_lanes_given_alike_arguments(&mut self, call: &Call, args: &[Value], kwargs: &[(String, Value)], env: &Env) -> bool {
        let Some(exprs) = argument_expressions(call, args.len(), kwargs.len()) else {
            return false;
        };
        let names = args.iter().map(|_| None).chain(kwargs.iter().map(|(k, _)| Some(k.as_str())));
        let values = args.iter().chain(kwargs.iter().map(|(_, v)| v));
        let pipeline = Api::of_call(call) == Some(Api::Pipeline);
        for ((e, v), name) in exprs.into_iter().zip(values).zip(names) {
            if self.stands_in() && self.varies_here(e) {
                let in_lanes = self.in_stood_in_lanes(e, env);
                if pipeline && name.is_some_and(crate::pipeline::reads_as_lane_offset) {
                    self.keep_lanes_at_same_lane_offset(in_lanes, v);
                } else {
                    self.keep_lanes_giving(in_lanes, v, true);
                }
            }
        }
        true
    }

    /// [`Self::note_lane_varying_arguments`] for a call whose arguments
    /// evaluated to `args` and `kwargs`: an argument that has the same value
    /// in a lane this lane stands in for (`tidx // 128`) does not set that
    /// lane apart.
    fn note_lane_varying_argument_values(&mut self, call: &Call, args: &[Value], kwargs: &[(String, Value)], env: &Env) {
        if !self.stands_in() {
            return;
        }
        if !self.keep_lanes_given_alike_arguments(call, args, kwargs, env) {
            return self.note_lane_varying_arguments(call);
        }
    }

    /// [`Self::note_lane_varying_argument_values`] for a call of the
    /// pipeline API or a method of its objects, whose receiver, when it is
    /// a method, is `base` and evaluated to `value`: the object is compared
    /// as a value too (a pipeline made in each lane with that lane's
    /// `tidx=` is the same pipeline in all of them, see
    /// `bind_in_stood_in_lanes`).
    fn note_lane_varying_method_call(&mut self, call: &Call, receiver: Option<(&Expr, &Value)>, args: &[Value], kwargs: &[(String, Value)], env: &Env) {
        match receiver {
            // Made by the pipeline call just run
            // (`create(...).make_participants()`).
            Some((Expr::Call(made), _)) if self.pipeline_result == Some(&**made as *const Call as usize) => {}
            Some((base, value)) => self.note_lane_varying_value(base, value, env),
            None => self.note_lane_varying(&call.func),
        }
        self.note_lane_varying_argument_values(call, args, kwargs, env);
        // A pipeline call gives what its receiver and arguments make of the
        // calling thread's CTA, whatever its lane.
        self.pipeline_result = Some(call as *const Call as usize);
    }

    /// [`Self::note_lane_varying`] for an expression (a loop's range) that
    /// evaluated to `value`: the lanes where it has that value too are not
    /// set apart.
    fn note_lane_varying_value(&mut self, e: &Expr, value: &Value, env: &Env) {
        if self.stands_in() && self.varies_here(e) {
            self.keep_lanes_alike(e, value, true, env);
        }
    }

    /// Follows `target op= value` in the lanes this lane stands in for;
    /// here `target` held `running.0` and `value` evaluated to `running.1`.
    fn aug_assign_in_stood_in_lanes(&mut self, target: &Target, op: BinOp, running: (&Value, &Value), value: &'a Expr, env: &Env) {
        if !self.following_stood_in_lanes() {
            return;
        }
        let Target::Name(n) = target else { return };
        let lane = self.lane_evaluator();
        let scope = self.helper_scopes.last().cloned();
        let lane_dependent = scope.as_deref().unwrap_or(self.lane_dependent);
        let before = self.stood_in.as_ref().expect("followed").values_of(n, running.0, lane_dependent, lane);
        let operand = match self.varies_here(value) {
            true => self.in_stood_in_lanes(value, env),
            false => Some(std::rc::Rc::new(uniform::InLanes::All(running.1.clone()))),
        };
        let lanes = self.stood_in.as_mut().expect("followed");
        let count = lanes.positions();
        let after = before.zip(operand).map(|(b, r)| std::rc::Rc::new(b.zip_with(&r, count, |b, r| eval::binary(op, b, r))));
        lanes.bind_values(target, after);
    }

    /// Follows `state.advance()` of name `n` in the lanes this
    /// lane stands in for.
    fn advance_in_stood_in_lanes(&mut self, n: &str, env: &Env) {
        if !self.following_stood_in_lanes() {
            return;
        }
        let lane = self.lane_evaluator();
        let scope = self.helper_scopes.last().cloned();
        let lane_dependent = scope.as_deref().unwrap_or(self.lane_dependent);
        let lanes = self.stood_in.as_mut().expect("followed");
        let advanced = env.get(n).and_then(|running| lanes.values_of(n, running, lane_dependent, lane)).and_then(|vs| match &*vs {
            uniform::InLanes::All(v) => crate::pipeline::advanced(v).map(uniform::InLanes::All),
            // A lane no longer stood in for holds no state: it stays as it is.
            uniform::InLanes::Each(vs) => vs.iter().map(|v| crate::pipeline::advanced(v).or_else(|| matches!(v, Value::None).then_some(Value::None))).collect::<Option<Vec<_>>>().map(uniform::InLanes::Each),
        });
        lanes.bind_values(&Target::Name(n.to_string()), advanced.map(std::rc::Rc::new));
    }

    /// [`Self::note_lane_varying`] for the arguments of a call.
    fn note_lane_varying_arguments(&mut self, call: &Call) {
        for a in call.args.iter().chain(call.kwargs.iter().map(|(_, a)| a)) {
            self.note_lane_varying(a);
        }
    }

    /// Arrive on a generation-counted barrier and return the parity to wait on.
    fn generation_arrive(&mut self, bar: BarrierIx, site: TextRange) -> u8 {
        let g = self.generation.entry(bar).or_insert(0);
        let parity = (*g % 2) as u8;
        *g += 1;
        self.push(OpKind::Arrive { bar, count: 1 }, site);
        parity
    }

    /// An argument's value by parameter name (or one of its `alt`
    /// spellings), given by keyword or by position.
    fn arg_value(&mut self, call: &Call, name: &str, alt: &[&str], args: &[Value], kwargs: &[(String, Value)]) -> Option<Value> {
        if let Some((_, v)) = kwargs.iter().find(|(k, _)| k == name || alt.contains(&k.as_str())) {
            return Some(v.clone());
        }
        let pos = call.params.iter().position(|p| *p == name || alt.contains(p))?;
        args.get(pos).cloned()
    }

    /// The bytes of an `expect_tx` call: each lane that executes it adds
    /// them, so a converged warp adds them once per lane.
    fn expect_tx_bytes(&mut self, call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> TxBytes {
        let lanes = if self.converged() { self.warp_lanes() } else { 1 };
        let v = self.arg_value(call, "bytes", &["txcount"], args, kwargs).unwrap_or(Value::unknown("a missing byte count"));
        tx_bytes(&v, lanes)
    }

    /// A call of the API table: the index calls, then each family's own.
    fn sync_call(&mut self, api: Api, call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> Value {
        if let Some(v) = self.place().index(api) {
            return v;
        }
        match api {
            Api::MbarrierInit
            | Api::MbarrierArrive
            | Api::MbarrierArriveAndExpectTx
            | Api::MbarrierWait
            | Api::MbarrierTryWait
            | Api::MbarrierTestWait
            | Api::MbarrierExpectTx => self.mbarrier_call(api, call, args, kwargs),
            Api::SyncThreads | Api::Barrier | Api::BarrierArrive => self.barrier_call(api, call, args, kwargs),
            Api::ClusterArrive | Api::ClusterArriveRelaxed | Api::ClusterWait | Api::MapSharedCluster => self.cluster_call(api, call, args, kwargs),
            Api::Load
            | Api::Atomic
            | Api::Store
            | Api::FenceProxy
            | Api::FenceViewAsyncShared
            | Api::FenceAcqRel
            | Api::InlineAsm
            | Api::Copy => self.memory_operation(api, call, args, kwargs),
            Api::MakeWarpUniform
            | Api::ElectOne
            | Api::SyncWarp
            | Api::Shuffle
            | Api::Vote
            | Api::WarpReduction
            | Api::WarpRedux => self.warp_call(api, call, args, kwargs),
            _ => Value::None,
        }
    }

    /// An mbarrier call: `mbarrier_init`, arrives (with a count, on a peer CTA,
    /// announcing transaction bytes), waits and try-waits, `expect_tx`.
    fn mbarrier_call(&mut self, api: Api, call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> Value {
        let site = call.range;
        let bar_expr = api::arg(call, "mbar_ptr");
        match api {
            Api::MbarrierInit => {
                let bar_v = args.first().cloned().unwrap_or(Value::None);
                let count = self.arg_value(call, "cnt", &["expected", "count"], args, kwargs);
                let bar = self.barrier_of(&bar_v, bar_expr, site);
                match count.as_ref().and_then(Value::as_int) {
                    Some(c) if c > 0 && c < (1 << 20) => self.push(OpKind::Init { bar, count: c as u32 }, site),
                    _ => self.unresolved(site, "the arrival count of this `mbarrier_init` is not known statically".to_string()),
                }
                if let Value::Smem(s) = &bar_v {
                    self.note_storage_overrun(s, bar, site);
                }
                Value::None
            }
            Api::MbarrierArrive if primitive_name(call) == Some("tcgen05_commit") && {
                let given = |k: &str| kwargs.iter().any(|(key, v)| key == k && !matches!(v, Value::None));
                given("multicast_mask") || given("group")
            } =>
            {
                self.unresolved(site, "a `tcgen05_commit` with a `multicast_mask=` or a CTA `group=` is not modelled".to_string());
                Value::None
            }
            Api::MbarrierArrive | Api::MbarrierArriveAndExpectTx => {
                let bar_v = args.first().cloned().unwrap_or(Value::None);
                let peer = self.arg_value(call, "peer_cta_rank_in_cluster", &[], args, kwargs);
                let target = match (&bar_v, peer.as_ref()) {
                    (Value::Smem(s), Some(p)) if !matches!(p, Value::None) => match p.as_int() {
                        Some(r) if (0..self.ctas as i64).contains(&r) => {
                            Value::Smem(SmemRef { cta: Some(self.cluster_base + r as u32), ..s.clone() })
                        }
                        _ => {
                            self.unresolved(site, "the peer CTA rank of this arrive is not known statically".to_string());
                            return Value::None;
                        }
                    },
                    _ => bar_v,
                };
                if api == Api::MbarrierArriveAndExpectTx {
                    self.shared.notes.insert(
                        "transaction bytes announced with `mbarrier_arrive_and_expect_tx` are assumed to arrive".to_string(),
                    );
                }
                let bar = self.barrier_of(&target, bar_expr, site);
                if api == Api::MbarrierArriveAndExpectTx {
                    let bytes = self.expect_tx_bytes(call, args, kwargs);
                    self.record_mem(MemKind::ExpectTx { barrier: bar, arrives: true, bytes }, site);
                }
                // An arrive releases at CTA scope unless told otherwise
                // (`scope=MemScopeKind.CLUSTER`); `relaxed=True` does not
                // release at all. For a remote arrive, CTA scope does not
                // reach the peer's threads. The primitives' arrive on a
                // barrier in the cluster window (`prims.mapa(...)`) releases
                // at cluster scope unless told otherwise, as the package
                // writes its PTX (`mbarrier.arrive.release.cluster`).
                let scope = api::arg(call, "scope").and_then(Expr::dotted_last).and_then(Scope::parse);
                let relaxed = matches!(kwargs.iter().find(|(k, _)| k == "relaxed"), Some((_, Value::Bool(true))));
                let remote = matches!(&target, Value::Smem(SmemRef { cta: Some(c), .. }) if *c != self.cta);
                let default_scope = if remote && is_primitive(call) { Scope::Cluster } else { Scope::Cta };
                if relaxed {
                    self.record_mem(MemKind::ArriveRelease { scope: None }, site);
                } else if remote || scope.is_some() {
                    self.record_mem(MemKind::ArriveRelease { scope: Some(scope.unwrap_or(default_scope)) }, site);
                }
                // `count=` in `cutlass.experimental.primitives`.
                let n = match self.arg_value(call, "arrive_count", &["count"], args, kwargs).filter(|_| api == Api::MbarrierArrive) {
                    None | Some(Value::None) => 1,
                    Some(v) => match v.as_int() {
                        Some(n) if n > 0 => n as u32,
                        _ => {
                            self.unresolved(site, "the arrive count of this arrive is not known statically".to_string());
                            return Value::None;
                        }
                    },
                };
                self.push(OpKind::Arrive { bar, count: n }, site);
                Value::None
            }
            Api::MbarrierWait => {
                self.mbarrier_wait(call, bar_expr, args, kwargs, site);
                Value::None
            }
            // The try-wait a spin loop repeats until it succeeds: a wait
            // (see `spins_on_try_wait`), after which it gives true.
            Api::MbarrierTryWait | Api::MbarrierTestWait if self.try_wait_blocks => {
                self.try_wait_blocks = false;
                self.mbarrier_wait(call, bar_expr, args, kwargs, site);
                Value::Bool(true)
            }
            Api::MbarrierExpectTx => {
                // Bytes without an arrive: recorded for the byte count only,
                // on barriers the kernel allocates (the rest is not
                // synchronization the model needs).
                let bar_v = args.first().cloned().unwrap_or(Value::None);
                let peer = self.arg_value(call, "peer_cta_rank_in_cluster", &[], args, kwargs);
                let target = match (&bar_v, peer.as_ref().map(|p| (p, p.as_int()))) {
                    (Value::Smem(_), None | Some((Value::None, _))) => bar_v,
                    (Value::Smem(s), Some((_, Some(r)))) if (0..self.ctas as i64).contains(&r) => {
                        Value::Smem(SmemRef { cta: Some(self.cluster_base + r as u32), ..s.clone() })
                    }
                    _ => return Value::None,
                };
                let bar = self.barrier_of(&target, bar_expr, site);
                let bytes = self.expect_tx_bytes(call, args, kwargs);
                self.record_mem(MemKind::ExpectTx { barrier: bar, arrives: false, bytes }, site);
                Value::None
            }
            Api::MbarrierTryWait | Api::MbarrierTestWait => Value::unknown("the result of a try-wait"),
            _ => Value::None,
        }
    }

    /// `sync_threads` and the named barriers (`barrier`, `barrier_arrive`).
    fn barrier_call(&mut self, api: Api, call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> Value {
        let site = call.range;
        match api {
            Api::SyncThreads => {
                self.record_use(0, self.threads_per_cta, true, true, true, site);
                let bar = self.pseudo_barrier(BarrierKind::CtaBarrier, self.cta, self.threads_per_cta);
                let parity = self.generation_arrive(bar, site);
                self.push(OpKind::Wait { bar, parity }, site);
                Value::None
            }
            Api::Barrier | Api::BarrierArrive => {
                let id = self.arg_value(call, "barrier_id", &[], args, kwargs);
                // `thread_count` in `cutlass.experimental.primitives`,
                // `num_threads` in `cutlass.pipeline`'s functions.
                let n = self.arg_value(call, "number_of_threads", &["thread_count", "num_threads"], args, kwargs).filter(|v| !matches!(v, Value::None));
                // `bar.sync` is aligned; `barrier_arrive` is `bar.arrive`
                // (aligned) unless `aligned=False` makes it
                // `barrier.cta.arrive`. The primitives say which in their
                // name (`barrier_cta_sync_aligned` is `bar.sync`), as
                // `cutlass.pipeline`'s do (`arrive_unaligned`).
                let pipeline_function = call.qualname.as_deref().and_then(api::pipeline_named_barrier).map(|(name, _)| name);
                let aligned = match (primitive_name(call), pipeline_function) {
                    (Some(name), _) => name.ends_with("_aligned"),
                    (None, Some(name)) => !name.ends_with("_unaligned"),
                    (None, None) => !matches!(kwargs.iter().find(|(k, _)| k == "aligned"), Some((_, Value::Bool(false)))),
                };
                self.named_barrier(id, n, api == Api::Barrier, aligned, site)
            }
            _ => Value::None,
        }
    }

    /// The cluster barrier and `mapa` onto a peer CTA's shared memory.
    fn cluster_call(&mut self, api: Api, call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> Value {
        let site = call.range;
        match api {
            Api::ClusterArrive | Api::ClusterArriveRelaxed => {
                self.cluster_arrive(api == Api::ClusterArriveRelaxed, site);
                Value::None
            }
            Api::ClusterWait => {
                self.cluster_wait(site);
                Value::None
            }
            Api::MapSharedCluster => match (args.first(), args.get(1).or(kwargs.first().map(|(_, v)| v))) {
                (Some(Value::Smem(s)), Some(rank)) => match rank.as_int() {
                    Some(r) if (0..self.ctas as i64).contains(&r) => {
                        Value::Smem(SmemRef { cta: Some(self.cluster_base + r as u32), ..s.clone() })
                    }
                    Some(r) => {
                        self.unresolved(site, format!("the peer rank {r} is outside the cluster of {} CTAs", self.ctas));
                        Value::unknown("a peer rank outside the cluster")
                    }
                    None => Value::unknown("a peer rank computed at run time"),
                },
                _ => Value::unknown("a mapped shared-memory pointer"),
            },
            _ => Value::None,
        }
    }

    /// Loads and atomics of synchronization variables, fences, inline PTX and
    /// copies: recorded for the memory-ordering analysis.
    fn memory_operation(&mut self, api: Api, call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> Value {
        let site = call.range;
        match api {
            Api::Load => {
                self.record_observe(call, None, args, kwargs);
                opaque_result(api).expect("a load's value")
            }
            Api::Atomic | Api::Store => {
                self.record_update(api, call, args, kwargs);
                opaque_result(api).expect("an update's value")
            }
            Api::FenceProxy | Api::FenceViewAsyncShared | Api::FenceAcqRel => {
                self.record_fence(api, call, args);
                Value::None
            }
            Api::InlineAsm => {
                self.record_inline_ptx(call, args, kwargs);
                opaque_result(api).expect("inline PTX's value")
            }
            Api::Copy if primitive_name(call) == Some("cp_async_bulk_tensor_global_shared_cta") => {
                self.record_primitive_tma_store(call, args);
                Value::None
            }
            Api::Copy if is_primitive(call) => {
                self.record_primitive_tma_load(call, args);
                Value::None
            }
            Api::Copy => {
                if call.kwargs.iter().any(|(k, _)| k == "tma_bar_ptr" || k == "mbar_ptr") && !self.converged() {
                    self.partial_collective(
                        site,
                        "this TMA/bulk `cute.copy` elects a lane itself, over the full warp (`elect.sync`, member mask 0xffffffff)",
                        FULL_MASK,
                    );
                }
                self.record_copy(call, args, kwargs);
                Value::None
            }
            _ => Value::None,
        }
    }

    /// `elect_one`, `make_warp_uniform` and the warp collectives.
    fn warp_call(&mut self, api: Api, call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> Value {
        let site = call.range;
        match api {
            Api::MakeWarpUniform => args.first().cloned().unwrap_or(Value::unknown("make_warp_uniform")),
            Api::ElectOne => Value::Bool(self.lane() == 0),
            Api::SyncWarp | Api::Shuffle | Api::Vote | Api::WarpReduction | Api::WarpRedux => {
                if !self.converged() {
                    if let Some(mask) = self.member_mask(api, call, args, kwargs) {
                        let what = collective_what(api, call, mask);
                        self.partial_collective(site, &what, mask);
                        if api == Api::SyncWarp {
                            // The lanes of the mask meet there.
                            self.record_mem(MemKind::LaneSync { mask }, site);
                        }
                    }
                }
                if api == Api::SyncWarp && self.converged() {
                    // A meeting point of the warp's lanes, counted by each.
                    self.record_mem(MemKind::WarpSync, site);
                    self.warp_point += 1;
                }
                opaque_result(api).expect("a warp collective's value")
            }
            _ => Value::None,
        }
    }

    /// `cluster_arrive()` (`relaxed`: `cluster_arrive_relaxed()`).
    fn cluster_arrive(&mut self, relaxed: bool, site: TextRange) {
        let total = self.threads_per_cta * self.ctas;
        let bar = self.pseudo_barrier(BarrierKind::ClusterBarrier, self.cluster_base, total);
        if relaxed {
            self.record_mem(MemKind::ArriveRelease { scope: None }, site);
        }
        let g = self.generation.entry(bar).or_insert(0);
        *g += 1;
        self.push(OpKind::Arrive { bar, count: 1 }, site);
    }

    /// `cluster_wait()`: the generation of the thread's last arrive.
    fn cluster_wait(&mut self, site: TextRange) {
        let total = self.threads_per_cta * self.ctas;
        let bar = self.pseudo_barrier(BarrierKind::ClusterBarrier, self.cluster_base, total);
        let g = *self.generation.get(&bar).unwrap_or(&0);
        let parity = (g.saturating_sub(1) % 2) as u8;
        self.push(OpKind::Wait { bar, parity }, site);
    }

    /// Records the mbarrier `bar` at `s` when it lies past the end of the
    /// shared-storage field it is taken from, whose element count is known
    /// (`storage.mbar` of a struct allocated in the kernel).
    ///
    /// Past the end of its field, a barrier may land in the fields that
    /// follow it on purpose: CUTLASS declares `acc_full_mbar_ptr` and
    /// `acc_empty_mbar_ptr` side by side and hands the first to a pipeline
    /// that initialises both halves from it. A barrier that lands in a field
    /// of mbarriers the kernel never names is that layout, and not
    /// reported.
    fn note_storage_overrun(&mut self, s: &SmemRef, bar: BarrierIx, site: TextRange) {
        let Some((parent, field)) = s.alloc.rsplit_once('.') else { return };
        let Some(Value::Object(storage)) = self.structs.get(parent).cloned() else { return };
        // The element count of a field of 64-bit elements, one mbarrier
        // each (the model counts a barrier pointer's offsets in mbarriers).
        let mbarriers = |f: &str| {
            storage
                .attrs
                .get(f)
                .and_then(cute_ir::layout::dtype_of)
                .filter(|(_, width)| *width == 64)
                .and_then(|_| storage.attrs.get(&cute_ir::layout::struct_len_key(f)).and_then(Value::as_int))
                .filter(|&n| n >= 0)
        };
        let Some(len) = mbarriers(field).filter(|&n| s.offset < 0 || s.offset >= n) else { return };
        if s.offset >= len {
            let fields: Vec<String> = match storage.attrs.get(cute_ir::layout::STRUCT_FIELDS) {
                Some(Value::Tuple(names)) => names.iter().filter_map(|n| if let Value::Str(n) = n { Some(n.clone()) } else { None }).collect(),
                _ => Vec::new(),
            };
            let mut past = s.offset - len;
            for next in fields.iter().skip_while(|f| *f != field).skip(1) {
                let Some(n) = mbarriers(next).filter(|_| !self.names_field(next)) else { break };
                if past < n {
                    return;
                }
                past -= n;
            }
        }
        let barrier = self.shared.barriers.list[bar as usize].name.clone();
        self.shared.storage_overruns.entry((site, s.offset)).or_insert(crate::model::StorageOverrun {
            site,
            barrier,
            field: field.to_string(),
            len,
            index: s.offset,
        });
    }

    /// Whether some code of the file reads the attribute `field`
    /// (`storage.field`).
    fn names_field(&self, field: &str) -> bool {
        let mut named = false;
        for f in &self.module.functions {
            cute_ir::ast::for_each_expr(&f.body, &mut |e| named |= e.reads_attribute(field));
        }
        named
    }

    /// A barrier of a pipeline's ring (named when the ring is created).
    fn ring_barrier(&mut self, s: &SmemRef, name: &str) -> BarrierIx {
        let cta = s.cta.unwrap_or(self.cta);
        // Unnamed (an arrival from a peer CTA may come first, since CTAs
        // run one after the other), it takes the name its ring gives it.
        let named = !name.is_empty();
        let name = name.to_string();
        self.shared.barriers.intern_named((s.alloc.clone(), s.offset, cta, 0), named, || Barrier {
            name,
            cta,
            kind: BarrierKind::Mbarrier,
            preset_count: None,
        })
    }

    /// `barrier(barrier_id=, number_of_threads=)` (`waits`) or
    /// `barrier_arrive(...)`: CTA barrier 0 or a named barrier.
    fn named_barrier(&mut self, id: Option<Value>, n: Option<Value>, waits: bool, aligned: bool, site: TextRange) -> Value {
        let id = match id {
            None | Some(Value::None) => 0,
            Some(v) => match v.as_int() {
                Some(i) => i,
                None => {
                    self.unresolved(site, "the id of this named barrier is not known statically".to_string());
                    return Value::None;
                }
            },
        };
        // Naming no thread count, any id involves every thread of the CTA.
        let cta_wide = matches!(n, None | Some(Value::None));
        let count = match n {
            None | Some(Value::None) => self.threads_per_cta,
            Some(v) => match v.as_int().and_then(|c| u32::try_from(c).ok()) {
                Some(c) if c > 0 && c <= 1 << 16 => c,
                _ => {
                    let what = match v.as_int() {
                        Some(c) => format!("the thread count {c} of this named barrier is not a valid count"),
                        None => "the thread count of this named barrier is not known statically".to_string(),
                    };
                    self.unresolved(site, what);
                    return Value::None;
                }
            },
        };
        if !(0..16).contains(&id) {
            self.unresolved(site, format!("the named barrier id {id} is outside the 16 hardware barriers (0 to 15)"));
            return Value::None;
        }
        if self.shared.block_assumed && count > self.threads_per_cta {
            // The code itself says the assumed block size is wrong.
            self.unresolved(
                site,
                format!(
                    "the block size of its launch is not known, and this barrier names {count} threads, more than the {} per CTA assumed",
                    self.threads_per_cta
                ),
            );
            return Value::None;
        }
        self.record_use(id, count, waits, aligned, cta_wide, site);
        let kind = if id == 0 && count == self.threads_per_cta { BarrierKind::CtaBarrier } else { BarrierKind::NamedBarrier(id) };
        let bar = self.pseudo_barrier(kind, self.cta, count);
        let parity = self.generation_arrive(bar, site);
        if waits {
            self.push(OpKind::Wait { bar, parity }, site);
        }
        Value::None
    }

    /// A method of a `cutlass.pipeline.NamedBarrier` object, as the package
    /// implements it (`wait` and `sync` arrive and wait; the `_w_index` forms
    /// use the barrier `barrier_id + index`).
    fn named_barrier_method(&mut self, obj: &Value, method: &str, args: &[Value], site: TextRange) -> Value {
        let Value::Object(o) = obj else { return Value::None };
        let id = o.attrs.get("barrier_id").cloned();
        let n = o.attrs.get("num_threads").cloned();
        let with_index = |id: Option<Value>| match (id, args.first()) {
            (Some(id), Some(i)) => Some(eval::binary(cute_ir::ast::BinOp::Add, &id, i)),
            (id, _) => id,
        };
        match method {
            "arrive" => self.named_barrier(id, n, false, true, site),
            "arrive_unaligned" => self.named_barrier(id, n, false, false, site),
            // `wait_unaligned` is a `cute.arch.barrier` (`bar.sync`) too.
            "wait" | "wait_unaligned" | "arrive_and_wait" | "sync" => self.named_barrier(id, n, true, true, site),
            "arrive_w_index" => self.named_barrier(with_index(id), n, false, true, site),
            "arrive_and_wait_w_index" => self.named_barrier(with_index(id), n, true, true, site),
            "get_barrier" => id.unwrap_or(Value::unknown("a named barrier id")),
            _ => {
                self.unresolved(site, format!("it synchronizes through `NamedBarrier.{method}`, which is not modelled"));
                Value::None
            }
        }
    }

    /// `TmemAllocator(alloc_result_dst_smem_ptr, *, barrier_for_retrieve=,
    /// allocator_warp_id=0, is_two_cta=False, ...)`. A one-CTA allocator
    /// synchronizes only through `barrier_for_retrieve`. A two-CTA one (the
    /// CTAs of ranks `2i` and `2i + 1` share their tensor memory) also has
    /// its allocator warp's elected lane initialise an mbarrier of 32
    /// arrivals (`two_cta_tmem_dealloc_mbar_ptr`, or one of its own), on
    /// which the allocator warps of the pair meet before deallocating (see
    /// `tmem_method`).
    fn tmem_allocator(&mut self, call: &Call, kwargs: &[(String, Value)]) -> Value {
        let kw = |k: &str| kwargs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        let two_cta = kw("is_two_cta").unwrap_or(Value::Bool(false));
        let warp = kw("allocator_warp_id").unwrap_or(Value::Int(0));
        let mut dealloc = Value::None;
        match two_cta.as_bool() {
            Some(false) => {}
            Some(true) if self.ctas % 2 == 1 => {
                self.unresolved(
                    call.range,
                    format!(
                        "it makes a two-CTA `TmemAllocator` (`is_two_cta=True`) in a cluster of {} CTA{}, which has no pairs of CTAs",
                        self.ctas,
                        if self.ctas == 1 { "" } else { "s" }
                    ),
                );
                return Value::unknown("a two-CTA `TmemAllocator`");
            }
            Some(true) => {
                let bar = match kw("two_cta_tmem_dealloc_mbar_ptr") {
                    None | Some(Value::None) => SmemRef::new(format!("tmem_dealloc@{}", call.range.start)),
                    Some(Value::Smem(s)) => s,
                    Some(other) => {
                        let why = match other {
                            Value::Unknown(w) => w.to_string(),
                            _ => "not a shared-memory pointer".to_string(),
                        };
                        self.unresolved(call.range, format!("the deallocation barrier of this two-CTA `TmemAllocator` is not known statically ({why})"));
                        return Value::unknown("a two-CTA `TmemAllocator`");
                    }
                };
                let Some(w) = warp.as_int() else {
                    self.unresolved(call.range, "the allocator warp of this two-CTA `TmemAllocator` is not known statically".to_string());
                    return Value::unknown("a two-CTA `TmemAllocator`");
                };
                let initialises = !matches!(kw("initialize_mbarrier"), Some(Value::Bool(false)));
                if initialises && i64::from(self.tid) == w * 32 {
                    let b = self.ring_barrier(&bar, "TmemAllocator deallocation barrier");
                    self.push_op(Op { kind: OpKind::Init { bar: b, count: 32 }, site: call.range }, self.warp_point, false);
                }
                dealloc = Value::Smem(bar);
            }
            None if self.ctas == 1 => {
                self.shared.notes.insert(
                    "whether a `TmemAllocator` spans two CTAs (`is_two_cta`) is not known statically: with one CTA per cluster there is no peer CTA, so it spans one".to_string(),
                );
            }
            None => {
                self.unresolved(
                    call.range,
                    "whether this `TmemAllocator` spans two CTAs (`is_two_cta`) is not known statically".to_string(),
                );
                return Value::unknown("a `TmemAllocator`");
            }
        }
        let barrier = kw("barrier_for_retrieve").unwrap_or(Value::unknown("the `barrier_for_retrieve` of a `TmemAllocator`"));
        Value::Object(std::sync::Arc::new(eval::Object {
            class: crate::pipeline::TMEM_ALLOCATOR.to_string(),
            attrs: [("barrier".to_string(), barrier), ("warp".to_string(), warp), ("dealloc".to_string(), dealloc)]
                .into_iter()
                .collect(),
        }))
    }

    /// A method of a `TmemAllocator`, as the package implements it:
    /// `wait_for_alloc` (and `reserve`, which allocates first) is
    /// `barrier_for_retrieve.arrive_and_wait()`; `free` of a two-CTA
    /// allocator is the pair's handshake on the deallocation barrier.
    /// Allocating, retrieving the pointer, relinquishing the permit and a
    /// one-CTA `free` are per-warp operations that synchronize nothing.
    fn tmem_method(&mut self, obj: &Value, method: &str, site: TextRange) -> Value {
        match method {
            "wait_for_alloc" | "reserve" => {
                let barrier = crate::pipeline::attribute(obj, "barrier").unwrap_or(Value::None);
                match &barrier {
                    Value::Object(o) if o.class == eval::NAMED_BARRIER => {
                        self.named_barrier_method(&barrier, "arrive_and_wait", &[], site);
                    }
                    other => {
                        let why = match other {
                            Value::Unknown(w) => w.to_string(),
                            _ => "not a `NamedBarrier`".to_string(),
                        };
                        self.unresolved(site, format!("the `barrier_for_retrieve` of this `TmemAllocator` is not known statically ({why})"));
                    }
                }
                Value::unknown("a tensor memory pool")
            }
            // Two CTAs deallocate together: each lane of the allocator
            // warp arrives on the peer's barrier (rank ^ 1), then waits for
            // the peer's on its own.
            "free" => {
                let warp = crate::pipeline::attribute(obj, "warp").and_then(|w| w.as_int());
                if let (Some(Value::Smem(bar)), Some(warp)) = (crate::pipeline::attribute(obj, "dealloc"), warp) {
                    if i64::from(self.tid / 32) == warp {
                        let peer = self.cluster_base + ((self.cta - self.cluster_base) ^ 1);
                        let at_peer = self.ring_barrier(&SmemRef { cta: Some(peer), ..bar.clone() }, "");
                        self.push(OpKind::Arrive { bar: at_peer, count: 1 }, site);
                        let own = self.ring_barrier(&bar, "");
                        self.push(OpKind::Wait { bar: own, parity: 0 }, site);
                    }
                }
                Value::None
            }
            "allocate" | "relinquish_alloc_permit" | "check_valid_num_columns" => Value::None,
            "retrieve_ptr" => Value::unknown("a tensor memory pointer"),
            _ => {
                self.unresolved(site, format!("it synchronizes through `TmemAllocator.{method}`, which is not modelled"));
                Value::None
            }
        }
    }

    /// With one CTA per cluster, the tcgen05 MMAs whose CTA group is not
    /// known span one CTA (said once).
    fn single_cta_mmas(&mut self, v: Value) -> Value {
        if self.ctas != 1 {
            return v;
        }
        match cute_ir::layout::with_single_cta_mmas(&v, 0) {
            Some(new) => {
                self.shared.notes.insert(SINGLE_CTA_MMA.to_string());
                new
            }
            None => v,
        }
    }

    /// An arrival made by lane 0 of the warp only (elected inside the
    /// library), counted once whatever the convergence.
    fn push_lane0(&mut self, kind: OpKind, site: TextRange) {
        if self.lane() == 0 && self.ops.len() < self.options.max_ops_per_thread {
            self.push_op(Op { kind, site }, self.warp_point, false);
        }
    }

    fn pipeline_call(&mut self, call: &Call, receiver: Option<&Value>, args: &[Value], kwargs: &[(String, Value)]) -> Value {
        if eval::constructs_named_barrier(call) {
            return eval::named_barrier(args, kwargs);
        }
        if let Some(obj @ Value::Object(o)) = receiver {
            if o.class == eval::NAMED_BARRIER {
                let method = match &call.func {
                    Expr::Attr { attr, .. } => attr.clone(),
                    _ => String::new(),
                };
                return self.named_barrier_method(obj, &method, args, call.range);
            }
            if o.class == crate::pipeline::PARTICIPANT || o.class == crate::pipeline::HANDLE {
                let method = match &call.func {
                    Expr::Attr { attr, .. } => attr.clone(),
                    _ => String::new(),
                };
                return self.participant_call(call, obj, &method, args);
            }
            if o.class == crate::pipeline::TMEM_ALLOCATOR {
                let method = match &call.func {
                    Expr::Attr { attr, .. } => attr.clone(),
                    _ => String::new(),
                };
                return self.tmem_method(obj, &method, call.range);
            }
            if o.class == crate::pipeline::ORDER {
                return self.order_method(call, obj, args, kwargs);
            }
        }
        if call.qualname.as_deref().is_some_and(|q| q.ends_with(".TmemAllocator") && Api::lookup(q) == Some(Api::Pipeline)) {
            return self.tmem_allocator(call, kwargs);
        }
        if let Some(v) = self.pipeline_sync(call, args, kwargs) {
            return v;
        }
        let caller = crate::pipeline::Caller {
            threads_per_cta: self.threads_per_cta,
            ctas: self.ctas,
            cluster_base: self.cluster_base,
            rank: self.cta - self.cluster_base,
            tid: self.tid,
        };
        let action = crate::pipeline::action(call, receiver, args, kwargs, caller);
        if let crate::pipeline::Action::NotAPipeline(what) = &action {
            return self.not_a_pipeline(call, what, receiver);
        }
        self.run_pipeline_action(action, call.range)
    }

    /// A wait on an mbarrier's phase (`mbarrier_wait(bar, phase)`, or the
    /// try-wait a spin loop repeats).
    fn mbarrier_wait(&mut self, call: &Call, bar_expr: Option<&Expr>, args: &[Value], kwargs: &[(String, Value)], site: TextRange) {
        let bar_v = args.first().cloned().unwrap_or(Value::None);
        let phase = self.arg_value(call, "phase", &[], args, kwargs);
        let bar = self.barrier_of(&bar_v, bar_expr, site);
        match phase.as_ref().and_then(Value::as_int) {
            // Only the low bit of the phase operand is meaningful.
            Some(p) => self.push(OpKind::Wait { bar, parity: (p & 1) as u8 }, site),
            None => self.unresolved(site, format!("the parity passed to this `{}` is not known statically", call.name())),
        }
    }

    /// A pipeline or named-barrier method called on something the kernel
    /// does not create: the kernel is not checked, and the note says what
    /// the receiver is. One handed in by a caller this check does not see is
    /// the common case (a device function checked on its own); calls on what
    /// an unmodelled `create` gave add nothing to its own note.
    fn not_a_pipeline(&mut self, call: &Call, what: &str, receiver: Option<&Value>) -> Value {
        let unknown = Value::unknown(crate::pipeline::UNMODELLED_PIPELINE);
        let (holder, method) = match &call.func {
            Expr::Attr { base, attr } => (base.dotted(), attr.as_str()),
            _ => (None, ""),
        };
        // What the method's name says the receiver is, and what of it only
        // its creation tells.
        let (noun, known_at_creation) = if crate::pipeline::is_named_barrier_method(method) {
            ("a named barrier", "its id and thread count")
        } else {
            ("a pipeline", "its stages and groups")
        };
        let why = match (receiver, &holder) {
            (Some(Value::Unknown(why)), _) if why.as_ref() == crate::pipeline::UNMODELLED_PIPELINE => return unknown,
            // An argument no launch in the file gives a value.
            (Some(Value::Unknown(why)), Some(name)) if why.starts_with("the argument `") || why.as_ref() == format!("`{name}`") => {
                format!("on {noun} it is passed (`{name}`), not one it creates: {known_at_creation} are known only where it is created")
            }
            (Some(Value::Unknown(why)), Some(name)) => format!("on `{name}`, which holds {why}, not {noun} this kernel creates"),
            (_, Some(name)) => format!("on `{name}`, which is not {noun} this kernel creates"),
            (_, None) => format!("on something that is not {noun} this kernel creates"),
        };
        self.unresolved(call.range, format!("it synchronizes through `{what}` {why}"));
        unknown
    }

    /// `pipeline_init_arrive` / `pipeline_init_wait` (the two halves of the
    /// synchronization a `defer_sync=True` pipeline leaves to the kernel) and
    /// `agent_sync`, as the package implements them: over a cluster of more
    /// than one CTA a cluster arrive and wait, else a CTA barrier.
    fn pipeline_sync(&mut self, call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> Option<Value> {
        let name = call.name();
        let arg = |key: &str| kwargs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone()).or_else(|| args.first().cloned());
        let clustered = !matches!(arg("cluster_shape_mn"), None | Some(Value::None)) && self.ctas > 1;
        let relaxed = matches!(kwargs.iter().find(|(k, _)| k == "is_relaxed").map(|(_, v)| v), Some(Value::Bool(true)))
            || matches!(args.get(1), Some(Value::Bool(true)));
        let arrive = if relaxed { Api::ClusterArriveRelaxed } else { Api::ClusterArrive };
        match name {
            "pipeline_init_arrive" => {
                if clustered {
                    self.sync_call(arrive, call, &[], &[]);
                }
            }
            "pipeline_init_wait" => {
                let api = if clustered { Api::ClusterWait } else { Api::SyncThreads };
                self.sync_call(api, call, &[], &[]);
            }
            "agent_sync" => {
                let group = call.args.first().or(call.kwargs.iter().find(|(k, _)| k == "group").map(|(_, e)| e)).and_then(Expr::dotted)?;
                if group.ends_with("ThreadBlockCluster") {
                    self.sync_call(arrive, call, &[], &[]);
                    self.sync_call(Api::ClusterWait, call, &[], &[]);
                } else if group.ends_with("ThreadBlock") {
                    self.sync_call(Api::SyncThreads, call, &[], &[]);
                } else {
                    return None;
                }
            }
            _ => return None,
        }
        Some(Value::None)
    }

    /// A method of a pipeline participant or of a handle it gave out
    /// (`producer.acquire_and_advance()`, `handle.commit()`,
    /// `consumer.release(handle)`), as the package implements it over the
    /// pipeline's own methods.
    fn participant_call(&mut self, call: &Call, obj: &Value, method: &str, args: &[Value]) -> Value {
        use crate::pipeline::{self as p, Action};
        let site = call.range;
        let pipe = p::attribute(obj, "pipeline").unwrap_or(Value::None);
        let producer = matches!(p::attribute(obj, "producer"), Some(Value::Bool(true)));
        let Value::Object(o) = obj else { return Value::None };
        if o.class == p::HANDLE {
            let state = p::attribute(obj, "state").unwrap_or(Value::None);
            return match (method, producer) {
                ("commit", true) => self.run_pipeline_action(p::stage_action(&pipe, "producer_commit", &state), site),
                ("release", false) => self.run_pipeline_action(p::stage_action(&pipe, "consumer_release", &state), site),
                _ => self.run_pipeline_action(Action::Unsupported(format!("`{method}` on a pipeline handle")), site),
            };
        }
        let id = match p::attribute(obj, "id") {
            Some(Value::Str(id)) => id,
            _ => return Value::unknown("a pipeline participant"),
        };
        let state = self.participants.entry(id.clone()).or_insert_with(|| p::initial_state(&pipe, producer)).clone();
        let advance = |run: &mut Self, count: i64| {
            let mut s = state.clone();
            for _ in 0..count.max(0) {
                s = p::advanced(&s).unwrap_or(s);
            }
            run.participants.insert(id.clone(), s);
        };
        let (acquire, commit) = if producer { ("producer_acquire", "producer_commit") } else { ("consumer_wait", "consumer_release") };
        match method {
            "acquire" | "wait" | "acquire_and_advance" | "wait_and_advance" => {
                self.run_pipeline_action(p::stage_action(&pipe, acquire, &state), site);
                if method.ends_with("_and_advance") {
                    advance(self, 1);
                }
                p::handle(&pipe, producer, &state)
            }
            "advance" => {
                match args.first().map(Value::as_int) {
                    None => advance(self, 1),
                    Some(Some(n)) => advance(self, n),
                    Some(None) => {
                        return self.run_pipeline_action(Action::Unsupported("`advance` by a count not known statically".to_string()), site)
                    }
                }
                Value::None
            }
            "commit" | "release" => {
                let at = match args.first() {
                    Some(h @ Value::Object(_)) => p::attribute(h, "state").unwrap_or(state),
                    _ => state,
                };
                self.run_pipeline_action(p::stage_action(&pipe, commit, &at), site)
            }
            "tail" if producer => self.run_pipeline_action(p::stage_action(&pipe, "producer_tail", &state), site),
            "current_handle" => p::handle(&pipe, producer, &state),
            "reset" => Value::None,
            "try_acquire" | "try_wait" => Value::unknown("the result of a try-wait"),
            _ => self.run_pipeline_action(Action::Unsupported(format!("`{method}` on a pipeline participant")), site),
        }
    }

    /// The state a pipeline participant holds, read through the attribute
    /// the package keeps it in (`producer._PipelineProducer__state`, as
    /// kernels that hand-roll an acquire read it): the thread's current
    /// state of that participant. `None` for any other attribute.
    fn participant_state(&mut self, participant: &Value, attr: &str) -> Option<Value> {
        use crate::pipeline as p;
        let producer = matches!(p::attribute(participant, "producer"), Some(Value::Bool(true)));
        let private = if producer { "_PipelineProducer__state" } else { "_PipelineConsumer__state" };
        let Some(Value::Str(id)) = p::attribute(participant, "id").filter(|_| attr == private) else { return None };
        let pipe = p::attribute(participant, "pipeline").unwrap_or(Value::None);
        Some(self.participants.entry(id).or_insert_with(|| p::initial_state(&pipe, producer)).clone())
    }

    /// The state a `PipelineOrder` holds for this thread's group (its
    /// `.state`), which its `arrive()` advances in place.
    fn order_state(&mut self, order: &Value) -> Value {
        let Some(Value::Str(id)) = crate::pipeline::attribute(order, "id") else { return Value::unknown("the state of a `PipelineOrder`") };
        self.participants.entry(id).or_insert_with(|| crate::pipeline::order_initial_state(order)).clone()
    }

    /// `order.wait(state=None)` / `order.arrive(state=None)` of a
    /// `PipelineOrder` (see `pipeline/order.rs`). `arrive` advances the state
    /// it is passed in place, as the package does; one that is the object's
    /// own as the thread holds it (`s = order.state`, then
    /// `s = order.arrive(s)`) is taken to be that object, so the object's
    /// advances too.
    fn order_method(&mut self, call: &Call, order: &Value, args: &[Value], kwargs: &[(String, Value)]) -> Value {
        use crate::pipeline::{self as p, Action};
        let method = match &call.func {
            Expr::Attr { attr, .. } => attr.as_str(),
            _ => "",
        };
        let own = self.order_state(order);
        let given = kwargs.iter().find(|(k, _)| k == "state").map(|(_, v)| v).or(args.first()).filter(|v| !matches!(v, Value::None)).cloned();
        let state = given.clone().unwrap_or_else(|| own.clone());
        match method {
            "wait" => {
                self.run_pipeline_action(p::order_wait(order, &state), call.range);
                Value::None
            }
            "arrive" => {
                self.run_pipeline_action(p::order_arrive(order, &state), call.range);
                let Some(next) = p::advanced(&state) else {
                    return self.run_pipeline_action(Action::Unsupported("`arrive` of a `PipelineOrder` on a state that cannot advance".to_string()), call.range);
                };
                if given.as_ref().is_none_or(|g| *g == own) {
                    if let Some(Value::Str(id)) = p::attribute(order, "id") {
                        self.participants.insert(id, next.clone());
                    }
                }
                // The state passed is advanced in place: a name that holds
                // it holds the advanced state after the call.
                let passed = call.kwargs.iter().find(|(k, _)| k == "state").map(|(_, e)| e).or(call.args.first());
                if let (Some(Expr::Name(name)), Some(_)) = (passed, &given) {
                    self.write_backs.push((name.clone(), next.clone()));
                }
                if given.is_some() {
                    next
                } else {
                    Value::None
                }
            }
            _ => self.run_pipeline_action(Action::Unsupported(format!("`{method}` of a `PipelineOrder`")), call.range),
        }
    }

    fn run_pipeline_action(&mut self, action: crate::pipeline::Action, site: TextRange) -> Value {
        use crate::pipeline::{Action, InitSync};
        match action {
            Action::Value(v) => v,
            Action::Assumed(v, note) => {
                self.shared.notes.insert(note);
                v
            }
            Action::Create { pipeline, inits, sync, assumed } => {
                // A ring of an assumed stage count is not the one the
                // storage was sized for.
                let sized = assumed.is_none();
                if let Some(note) = assumed {
                    self.shared.notes.insert(note);
                }
                // Warp 0's elected lane initialises every barrier of the ring,
                // named after the storage it lives in (`ab_mbar_ptr`), which
                // tells a kernel's rings apart in a trace.
                let ring = match inits.first().and_then(|(bar, ..)| bar.alloc.rsplit_once('.')) {
                    Some((_, field)) => field.replace("[?]", "").replace("+?", ""),
                    None => "the pipeline".to_string(),
                };
                for (bar, count, in_ring) in &inits {
                    let name = format!("{in_ring} of {ring}");
                    let b = self.ring_barrier(bar, &name);
                    // Warp 0 initialises the ring (see below): its barriers
                    // are where it puts them.
                    if sized && self.tid == 0 {
                        self.note_storage_overrun(bar, b, site);
                    }
                    if self.tid == 0 {
                        self.push_op(Op { kind: OpKind::Init { bar: b, count: *count }, site }, self.warp_point, false);
                    }
                }
                match sync {
                    InitSync::Deferred => {}
                    InitSync::Cta => {
                        let bar = self.pseudo_barrier(BarrierKind::CtaBarrier, self.cta, self.threads_per_cta);
                        let parity = self.generation_arrive(bar, site);
                        self.push(OpKind::Wait { bar, parity }, site);
                    }
                    InitSync::Cluster => {
                        self.cluster_arrive(true, site);
                        self.cluster_wait(site);
                    }
                }
                pipeline
            }
            Action::Each(actions) => {
                for action in actions {
                    self.run_pipeline_action(action, site);
                }
                Value::None
            }
            Action::Wait { bar, phase } => {
                let b = self.ring_barrier(&bar, "");
                self.push(OpKind::Wait { bar: b, parity: (phase & 1) as u8 }, site);
                Value::None
            }
            Action::StaleToken { bar, phase, token_site, tested, waited } => {
                self.shared.stale_tokens.entry(site).or_insert(StaleToken { site, token_site, tested, waited });
                self.run_pipeline_action(Action::Wait { bar, phase }, site)
            }
            Action::Arrive { bar } => {
                let b = self.ring_barrier(&bar, "");
                self.push(OpKind::Arrive { bar: b, count: 1 }, site);
                Value::None
            }
            Action::ArriveOneLane { bar } => {
                let b = self.ring_barrier(&bar, "");
                self.push_lane0(OpKind::Arrive { bar: b, count: 1 }, site);
                Value::None
            }
            Action::WaitThenArriveOneLane { wait, phase, arrive, bytes } => {
                let w = self.ring_barrier(&wait, "");
                self.push(OpKind::Wait { bar: w, parity: (phase & 1) as u8 }, site);
                let a = self.ring_barrier(&arrive, "");
                self.shared.notes.insert(
                    "transaction bytes announced by `producer_acquire` are assumed to arrive".to_string(),
                );
                // The arrive announces the bytes the stage's TMA copy
                // delivers: that copy completes this phase.
                if self.lane() == 0 {
                    let bytes = tx_bytes(&bytes, 1);
                    self.record_mem(MemKind::ExpectTx { barrier: a, arrives: true, bytes }, site);
                }
                self.push_lane0(OpKind::Arrive { bar: a, count: 1 }, site);
                Value::None
            }
            Action::Tail { waits } => {
                for (bar, phase) in waits {
                    let b = self.ring_barrier(&bar, "");
                    self.push(OpKind::Wait { bar: b, parity: (phase & 1) as u8 }, site);
                }
                Value::None
            }
            Action::Nothing => Value::None,
            Action::Unsupported(what) => {
                self.unresolved(
                    site,
                    format!("it synchronizes through {what}, which the `cutlass.pipeline` model does not cover yet"),
                );
                Value::unknown(crate::pipeline::UNMODELLED_PIPELINE)
            }
            Action::NotAPipeline(what) => {
                self.unresolved(site, format!("it synchronizes through `{what}`, not on a pipeline this kernel creates"));
                Value::unknown(crate::pipeline::UNMODELLED_PIPELINE)
            }
        }
    }

    /// `smem.allocate_tensor(...)`, `allocate_array(...)`, `allocate(...)`
    /// (an `alloc*` method): a fresh allocation of shared memory per call
    /// site, with its tile when the element type and layout are known, and
    /// a shared-storage struct's fields when it allocates one.
    fn allocate_shared(&mut self, call: &Call, attr: &str, args: &[Value], kwargs: &[(String, Value)]) -> Value {
        let site = call.range;
        let mut smem = SmemRef::new(format!("smem@{}", site.start));
        let arg = |name: &str, pos: usize| kwargs.iter().find(|(k, _)| k == name).map(|(_, v)| v).or(args.get(pos));
        match attr {
            "allocate_tensor" => {
                if let (Some(t), Some(l)) = (arg("element_type", 0), arg("layout", 1)) {
                    smem.tile = cute_ir::layout::Tile::new(t, l).map(std::sync::Arc::new);
                }
            }
            "allocate_array" => {
                let dtype = arg("element_type", 0).and_then(cute_ir::layout::dtype_of);
                let n = arg("num_elems", 1).map_or(Some(1), Value::as_int);
                if let (Some((dtype, width)), Some(n)) = (dtype, n) {
                    smem.tile = Some(std::sync::Arc::new(cute_ir::layout::Tile { dtype, width, modes: vec![n] }));
                }
            }
            "allocate" => {
                if let Some(v @ Value::Object(o)) = arg("size_or_type", 0) {
                    if o.class == cute_ir::layout::STRUCT {
                        self.structs.insert(smem.alloc.to_string(), v.clone());
                    }
                }
            }
            _ => {}
        }
        Value::Smem(smem)
    }

    /// A method of a pointer or number (`ptr.toint()`, `Int32(v).ir_value()`:
    /// the operands of inline assembly keep the pointer or number they
    /// convert), or a view of a shared pointer, which is the same pointer;
    /// `None` for anything else.
    fn pointer_method(&self, base_v: Value, attr: &str, args: &[Value], kwargs: &[(String, Value)]) -> Option<Value> {
        if matches!(base_v, Value::Gmem(_) | Value::Int(_)) && matches!(attr, "toint" | "ir_value" | "to_llvm_ptr" | "llvm_ptr") {
            return Some(base_v);
        }
        let Value::Smem(s) = &base_v else { return None };
        Some(match attr {
            // A struct field as a tensor of the given layout, of
            // the field's element type.
            "get_tensor" => {
                let dtype = s.alloc.rsplit_once('.').and_then(|(parent, field)| match self.structs.get(parent) {
                    Some(Value::Object(o)) => o.attrs.get(field).cloned(),
                    _ => None,
                });
                let layout = kwargs.iter().find(|(k, _)| k == "layout").map(|(_, v)| v).or(args.first());
                let tile = match (dtype, layout) {
                    (Some(t), Some(l)) => cute_ir::layout::Tile::new(&t, l).map(std::sync::Arc::new),
                    _ => None,
                };
                Value::Smem(SmemRef { tile, ..s.clone() })
            }
            "data_ptr" | "iterator" | "to_llvm_ptr" | "align" | "toint" | "ir_value" => base_v.clone(),
            "subview" => match args.first().and_then(Value::as_int) {
                Some(i) => Value::Smem(SmemRef { offset: s.offset + i, ..s.clone() }),
                None => Value::Smem(SmemRef { alloc: format!("{}[?]", s.alloc).into(), ..s.clone() }),
            },
            _ => Value::unknown(format!("`.{attr}(...)` on shared memory")),
        })
    }

    /// `cutlass.Array(dtype, n, space=cutlass.AddressSpace.smem)`: an
    /// array of `n` elements in shared memory (the experimental
    /// primitives' barriers and buffers), a fresh allocation per call site.
    fn shared_array(call: &Call, args: &[Value]) -> Option<Value> {
        if call.qualname.as_deref() != Some("cutlass.Array") {
            return None;
        }
        let in_smem = api::arg(call, "space").and_then(Expr::dotted_last).is_some_and(|s| s == "smem");
        if !in_smem {
            return None;
        }
        let mut smem = SmemRef::new(format!("smem@{}", call.range.start));
        let dtype = args.first().and_then(cute_ir::layout::dtype_of);
        if let (Some((dtype, width)), Some(n)) = (dtype, args.get(1).and_then(Value::as_int)) {
            smem.tile = Some(std::sync::Arc::new(cute_ir::layout::Tile { dtype, width, modes: vec![n] }));
        }
        Some(Value::Smem(smem))
    }

    /// Helpers inlined into each other at most.
    const MAX_INLINE_DEPTH: u32 = 8;

    fn inline(&mut self, f: &'a FunctionDef, bound_self: Option<Value>, args: Vec<Value>, kwargs: Vec<(String, Value)>) -> Value {
        // Kernels are launched, not called from device code (a `@cute.jit`
        // function called from a kernel is a device function the DSL
        // inlines); and a helper that calls itself is not unrolled.
        if !cute_ir::ast::inlined_when_called(f.decorator) || self.inlining.contains(&f.range) {
            return Value::unknown(format!("`{}(...)`", f.display_name()));
        }
        if self.inline_depth >= Self::MAX_INLINE_DEPTH {
            return Value::unknown(format!("`{}` (calls nested too deeply)", f.display_name()));
        }
        self.inlining.push(f.range);
        let value = self.inline_body(f, bound_self, args, kwargs);
        self.inlining.pop();
        value
    }

    fn inline_body(&mut self, f: &'a FunctionDef, bound_self: Option<Value>, args: Vec<Value>, kwargs: Vec<(String, Value)>) -> Value {
        // The module's names are found through `unbound`.
        let globals = self.globals;
        let mut env: Env = bind_parameters(f, bound_self, args, kwargs, |d| eval(d, globals, self)).into_iter().collect();
        let states: Vec<(String, Value)> = f
            .params
            .iter()
            .filter_map(|p| env.get(&p.name).filter(|v| is_pipeline_state(v)).map(|v| (p.name.clone(), v.clone())))
            .collect();
        // Names the caller has yet to rebind are the caller's.
        let callers = std::mem::take(&mut self.write_backs);
        self.inline_depth += 1;
        let flow = self.exec_block(&f.body, &mut env, self.functions.slice_of(f));
        self.apply_write_backs(&mut env);
        self.inline_depth -= 1;
        self.write_backs = callers;
        self.advanced_parameters = states.into_iter().filter_map(|(p, before)| env.remove(&p).filter(|now| *now != before).map(|now| (p, now))).collect();
        match flow {
            Flow::Return(v) => v,
            _ => Value::None,
        }
    }
}

/// The value a thread takes a call of `api` to return whatever its
/// operands, the same in every lane: data read from memory or produced by
/// inline PTX, what the lanes of a warp exchange. `None` for the others.
pub(super) fn opaque_result(api: Api) -> Option<Value> {
    Some(match api {
        Api::Load | Api::Atomic | Api::Store => Value::unknown("a value loaded from memory"),
        Api::InlineAsm => Value::unknown("the result of inline PTX"),
        Api::SyncWarp => Value::None,
        Api::Vote => Value::unknown("the result of a warp vote"),
        Api::Shuffle | Api::WarpReduction | Api::WarpRedux => Value::unknown("a value exchanged between the lanes of a warp"),
        _ => return None,
    })
}

/// How a call binds the parameters of helper `f`, in order (a later
/// binding of a name replaces an earlier one): `self` to the object of a
/// method called on one, each parameter with a default to `default` of
/// it, then the arguments by position and by name.
fn bind_parameters<T>(
    f: &FunctionDef,
    bound_self: Option<T>,
    args: impl IntoIterator<Item = T>,
    kwargs: impl IntoIterator<Item = (String, T)>,
    mut default: impl FnMut(&Expr) -> T,
) -> Vec<(String, T)> {
    let mut formal = f.params.iter();
    let mut bound = Vec::new();
    if let Some(s) = bound_self.filter(|_| f.is_method()) {
        formal.next();
        bound.push(("self".to_string(), s));
    }
    let formal: Vec<_> = formal.collect();
    bound.extend(formal.iter().filter_map(|p| p.default.as_ref().map(|d| (p.name.clone(), default(d)))));
    bound.extend(formal.iter().map(|p| p.name.clone()).zip(args));
    bound.extend(kwargs);
    bound
}

/// Transaction bytes of a value.
pub(crate) fn tx_bytes(v: &Value, lanes: u32) -> TxBytes {
    match v {
        Value::Int(n) if *n >= 0 => TxBytes { value: Some(*n as u64), lanes, how: n.to_string() },
        Value::Unknown(why) => TxBytes { value: None, lanes, how: format!("it depends on {why}") },
        _ => TxBytes { value: None, lanes, how: "it is not a number known statically".to_string() },
    }
}

fn expr_text(e: &Expr) -> String {
    match e {
        Expr::Name(n) => n.clone(),
        Expr::Attr { .. } => e.dotted().unwrap_or_else(|| "barrier".to_string()),
        Expr::Binary { op, lhs, rhs } => {
            let o = match op {
                cute_ir::ast::BinOp::Add => "+",
                cute_ir::ast::BinOp::Sub => "-",
                _ => "?",
            };
            format!("{} {o} {}", expr_text(lhs), expr_text(rhs))
        }
        Expr::Int(i) => i.to_string(),
        Expr::Call(c) => {
            let f = c.dotted_name().unwrap_or_default();
            if f == "data_ptr" || f == "subview" || f == "get_tensor" {
                if let Expr::Attr { base, .. } = &c.func {
                    return expr_text(base);
                }
            }
            format!("{f}(...)")
        }
        Expr::Subscript { base, index } => format!("{}[{}]", expr_text(base), expr_text(index)),
        _ => "barrier".to_string(),
    }
}

/// A call whose result a run does not know, as a note names it. A function
/// the file imports from a module other than the CuTe DSL's or Python's own
/// is named as its import resolves it: its definition is in another file,
/// which a check of this file does not read.
fn describe_unfollowed_call(call: &Call) -> String {
    const NOT_ANOTHER_FILE: &[&str] = &[
        "cutlass", "cute", "builtins", "math", "operator", "functools", "typing", "types", "itertools",
        "dataclasses", "enum", "collections",
    ];
    let written = call.func.dotted().unwrap_or_else(|| "call".to_string());
    let imported = call.qualname.as_deref().filter(|q| {
        let root = q.split('.').next().unwrap_or(q);
        *q != written && !NOT_ANOTHER_FILE.contains(&root)
    });
    match imported {
        Some(q) => format!("`{written}(...)` (`{q}`, from another module)"),
        None => format!("`{written}(...)`"),
    }
}

/// Whether a call is one of `cutlass.experimental.primitives`.
fn is_primitive(call: &Call) -> bool {
    primitive_name(call).is_some()
}

/// The name in `cutlass.experimental.primitives` of the function a call
/// resolves to (see [`api::primitive_name`]).
fn primitive_name(call: &Call) -> Option<&str> {
    call.qualname.as_deref().and_then(api::primitive_name)
}

/// Whether a `while` condition is the negation of an mbarrier try-wait on
/// a barrier and a phase (`not mbarrier_try_wait(bar, phase)`, `not
/// prims.mbarrier_try_wait_parity(bar, 0, time_limit=...)`): a loop on it
/// whose body does nothing is the wait on that phase.
fn spins_on_try_wait(cond: &Expr) -> bool {
    match cond {
        Expr::Unary { op: cute_ir::ast::UnOp::Not, operand } => matches!(
            operand.as_ref(),
            Expr::Call(c) if matches!(Api::of_call(c), Some(Api::MbarrierTryWait | Api::MbarrierTestWait))
                && c.params.first() == Some(&"mbar_ptr")
        ),
        _ => false,
    }
}

/// Every lane of a warp.
const FULL_MASK: u32 = u32::MAX;

/// What a warp collective is, for `single-lane-collective`.
fn collective_what(api: Api, call: &Call, mask: u32) -> String {
    let name = call.qualname.clone().or_else(|| call.func.dotted()).unwrap_or_default();
    let name = name.rsplit('.').next().unwrap_or_default().to_string();
    match api {
        Api::WarpReduction => {
            format!("`{name}` exchanges values over the full warp (`shuffle_sync_bfly` with member mask 0xffffffff, whatever `threads_in_group` is)")
        }
        _ if mask == FULL_MASK => format!("`{name}` is collective over the full warp (member mask 0xffffffff)"),
        _ => format!("`{name}` is collective over the lanes of member mask {mask:#010x}"),
    }
}

impl CallHandler for ThreadRun<'_> {
    fn unbound(&mut self, name: &String) -> Value {
        if let Some(v) = self.globals.get(name) {
            return v.clone();
        }
        // A function of the module, or one defined inside another
        // (`lower.rs`), which the statement of its definition binds to its
        // local name: a value that calls it (`partial(helper, ...)`).
        let functions = self.functions;
        self.shared
            .unbound_names
            .entry(name as *const String as usize)
            .or_insert_with(|| match functions.get(None, name) {
                Some(_) => Value::Function { class: None, name: name.as_str().into(), bound_self: None },
                None => Value::unknown(format!("`{name}`")),
            })
            .clone()
    }

    fn method(&mut self, obj: &Value, attr: &str) -> Option<Value> {
        let Value::Object(o) = obj else { return None };
        if o.class == crate::pipeline::PARTICIPANT {
            return self.participant_state(obj, attr);
        }
        if o.class == crate::pipeline::ORDER && attr == "state" {
            return Some(self.order_state(obj));
        }
        self.functions.get(Some(&o.class), attr)?;
        Some(Value::Function { class: Some(o.class.as_str().into()), name: attr.into(), bound_self: Some(Box::new(obj.clone())) })
    }

    fn call(&mut self, call: &Call, func: &Value, args: Vec<Value>, kwargs: Vec<(String, Value)>, env: &Env) -> Value {
        // Set again if this call is one of the pipeline's.
        self.pipeline_result = None;
        let depth = self.inline_depth;
        if let Some((_, _, v)) = self.known_stops.iter().rev().find(|(stop, at, _)| *at == depth && stop.written_like(call)) {
            return v.clone();
        }
        if tile_scheduler::creates_scheduler(call) {
            return self.create_tile_scheduler(call);
        }
        // A shared-storage struct defined in the kernel (see
        // `eval::struct_definition`).
        if call.qualname.as_deref() == Some(cute_ir::layout::STRUCT_DEFINITION) {
            return eval::pure_call(call, &args, &kwargs).unwrap_or_else(|| Value::unknown("a shared-storage struct"));
        }
        if let Some(api) = Api::of_call(call) {
            // Casts, `cutlass.const_expr` and ranges evaluate to values; the
            // layout algebra and builtins `pure_call` also knows have no
            // entry in the API table.
            if matches!(api, Api::IntCast | Api::ConstExpr | Api::Range) {
                if let Some(v) = eval::pure_call(call, &args, &kwargs) {
                    return v;
                }
            }
            if api == Api::Unmodelled {
                let written = call.func.dotted().unwrap_or_else(|| "a call".to_string());
                let qualname = call.qualname.as_deref().unwrap_or_default();
                self.unresolved(call.range, format!("it synchronizes through `{written}` (`{qualname}`), which is not modelled"));
                return Value::unknown(format!("`{written}(...)`"));
            }
            if api == Api::Pipeline {
                let receiver = match &call.func {
                    Expr::Attr { base, .. } => Some((base.as_ref(), eval(base, env, self))),
                    _ => None,
                };
                self.note_lane_varying_method_call(call, receiver.as_ref().map(|(b, v)| (*b, v)), &args, &kwargs, env);
                return self.pipeline_call(call, receiver.as_ref().map(|(_, v)| v), &args, &kwargs);
            }
            // A warp collective's operands only decide the value it returns
            // (the same unknown in every lane); where the warp is split it
            // marks the lane itself (`partial_collective`).
            if !cute_ir::api::is_warp_collective(api) {
                self.note_lane_varying(&call.func);
                self.note_lane_varying_argument_values(call, &args, &kwargs, env);
            }
            return self.sync_call(api, call, &args, &kwargs);
        }
        // Methods of pipeline participants and handles, and of named barrier
        // objects, that the API table does not name (`handle.commit()`,
        // `consumer.release(h)`, `bar.wait()`).
        if let Value::Function { class: Some(c), name, bound_self: Some(obj) } = func {
            let c: &str = c;
            if c == eval::NAMED_BARRIER
                || c == crate::pipeline::PARTICIPANT
                || c == crate::pipeline::HANDLE
                || c == crate::pipeline::TMEM_ALLOCATOR
                || c == crate::pipeline::ORDER
            {
                let receiver = match &call.func {
                    Expr::Attr { base, .. } => Some((&**base, &**obj)),
                    _ => None,
                };
                self.note_lane_varying_method_call(call, receiver, &args, &kwargs, env);
            }
            if c == eval::NAMED_BARRIER {
                return self.named_barrier_method(obj, name, &args, call.range);
            }
            if c == crate::pipeline::PARTICIPANT || c == crate::pipeline::HANDLE {
                return self.participant_call(call, obj, name, &args);
            }
            if c == crate::pipeline::TMEM_ALLOCATOR {
                return self.tmem_method(obj, name, call.range);
            }
            if c == crate::pipeline::ORDER {
                return self.order_method(call, obj, &args, &kwargs);
            }
            if c == tile_scheduler::SCHEDULER {
                return self.tile_scheduler_method(obj, name, &args, &kwargs);
            }
            // `state.clone()`: states are values here (`advance()` rebinds
            // the name it is called on), so a copy is the same value.
            if c == crate::pipeline::STATE && &**name == "clone" && args.is_empty() {
                return (**obj).clone();
            }
        }
        // `functools.partial(f, ...)` of a function of this file: a value
        // that calls `f` with those arguments first (see `call_partial`).
        if eval::is_partial(call) {
            if let Some(partial) = args.first().and_then(|f| eval::Partial::of(f, &args[1..], &kwargs)) {
                return partial;
            }
        }
        // A helper that synchronizes, handed as a value to a function this
        // file does not define: where it runs is not followed, and its
        // synchronization is never dropped in silence. A function of this
        // file it is handed to is inlined, and calls through it there are.
        if let Some(helper) = self.handed_helper_not_followed(call, func, &args, &kwargs) {
            let callee = call.func.dotted().unwrap_or_else(|| "a call".to_string());
            let defined = self.module.functions.iter().find(|f| f.name == helper).map(|f| f.name_range);
            self.shared.unresolved.insert(Unresolved {
                site: call.range,
                what: format!("it hands `{helper}`, which synchronizes, to `{callee}(...)`: calls through it are not modelled"),
                origin: defined.map(|at| (at, format!("`{helper}` synchronizes"))),
            });
            return Value::unknown(format!("`{callee}(...)`"));
        }
        if let Value::Partial(partial) = func {
            return self.call_partial(call, partial, args, kwargs);
        }
        // A closure that synchronizes (see `Module::closures`): what it
        // reads of the call it was made in is not followed, and its
        // synchronization is never dropped in silence.
        if let (Expr::Name(n), Value::Unknown(_)) = (&call.func, func) {
            if self.sync_helpers.contains(n) {
                if let Some(closure) = self.module.closures.iter().find(|c| c.local_name() == n && c.synchronizes) {
                    self.shared.unresolved.insert(Unresolved {
                        site: call.range,
                        what: format!(
                            "it calls `{n}`, which synchronizes and reads `{}` of the function it is defined in: such closures are not modelled",
                            closure.captured
                        ),
                        origin: Some((closure.function.name_range, format!("`{n}` synchronizes"))),
                    });
                    return Value::unknown(format!("`{n}(...)`"));
                }
            }
        }
        // Functions and methods of this file are inlined.
        // (The module outlives this run: no copy of the function is made.)
        if let Value::Function { class, name, bound_self } = func {
            if let Some(f) = self.functions.get(class.as_deref(), name) {
                return self.inline_call(call, f, bound_self.as_deref().cloned(), args, kwargs, env);
            }
        }
        if let Expr::Name(n) = &call.func {
            if let Some(f) = self.functions.get(None, n) {
                return self.inline_call(call, f, None, args, kwargs, env);
            }
        }
        // `view.partition_S(...)`-style methods of a buffer: the receiver.
        let receiver = match &call.func {
            Expr::Attr { base, .. } if base.is_dotted() => {
                Some(eval(base, env, self)).filter(|v| matches!(v, Value::Smem(_) | Value::Gmem(_)))
            }
            _ => None,
        };
        if let Some(v) = self.memory_call(call, receiver.as_ref(), &args) {
            // What a view or copy is made of is its arguments, and its
            // receiver when that is a buffer (`thr_mma.partition_A(sA)` is a
            // view of `sA` in any lane).
            if receiver.is_some() {
                self.note_lane_varying(&call.func);
            }
            // A copy acts on its arguments; a view only makes a value,
            // which the lanes this one stands in for compute for themselves
            // where it is used (`uniform`).
            if memory::is_generic_copy(call) || !self.following_stood_in_lanes() {
                self.note_lane_varying_argument_values(call, &args, &kwargs, env);
            }
            return v;
        }
        if let Expr::Attr { base, attr } = &call.func {
            // A pipeline's barrier arrays used directly
            // (`pipe.sync_object_empty.arrive(...)`): not modelled, and never
            // dropped in silence.
            if let Expr::Attr { attr: inner, .. } = base.as_ref() {
                if inner.starts_with("sync_object") {
                    let what = call.func.dotted().unwrap_or_else(|| attr.clone());
                    self.unresolved(call.range, format!("it synchronizes through `{what}`, which is not modelled yet"));
                    return Value::unknown("a pipeline barrier array");
                }
            }
            if matches!(base.as_ref(), Expr::Name(b) if b == "self") {
                if let Some(Value::Object(o)) = env.get("self") {
                    if let Some(f) = self.functions.get(Some(&o.class), attr) {
                        let s = env.get("self").cloned();
                        return self.inline_call(call, f, s, args, kwargs, env);
                    }
                    // A method of that name synchronizes elsewhere in the
                    // file, but not one this object's class has (a base
                    // class of another file): never dropped in silence.
                    if self.functions.sync_helpers.contains(attr.as_str()) {
                        self.unresolved(
                            call.range,
                            format!("it calls `self.{attr}`, which `{}` does not define or inherit in this file, and a method of that name synchronizes", o.class),
                        );
                        return Value::unknown(format!("`self.{attr}(...)`"));
                    }
                }
            }
            // Allocation of shared memory: a fresh allocation per call site.
            if attr.starts_with("alloc") {
                return self.allocate_shared(call, attr, &args, &kwargs);
            }
            // Views of a shared pointer are the same pointer.
            let base_v = eval(base, env, self);
            if let Some(v) = self.pointer_method(base_v, attr, &args, &kwargs) {
                return v;
            }
        }
        if let Some(v) = Self::shared_array(call, &args) {
            return v;
        }
        if let Some(v) = eval::pure_call(call, &args, &kwargs) {
            return self.single_cta_mmas(v);
        }
        // A pipeline or named barrier handed to a function this file does
        // not define (`epilogue(..., acc_pipeline)` imported from another
        // module): what it does with it is not followed, and its
        // synchronization is never dropped in silence.
        if let Some(handed) = handed_synchronizing_object(call, &args, &kwargs) {
            let callee = call.func.dotted().map_or_else(|| "a call".to_string(), |c| format!("`{c}(...)`"));
            self.unresolved(
                call.range,
                format!("it hands {handed} to {callee}, which is not defined in this file: what that does with it is not modelled"),
            );
            return Value::unknown(callee);
        }
        self.unknown_result(call)
    }
}

/// The argument of `call` that is a pipeline, a pipeline participant or a
/// named barrier, named as the call spells it.
fn handed_synchronizing_object(call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> Option<String> {
    let synchronizes = |v: &Value| {
        matches!(v, Value::Object(o) if [crate::pipeline::PIPELINE, crate::pipeline::PARTICIPANT, eval::NAMED_BARRIER].contains(&o.class.as_str()))
    };
    let named = |e: Option<&Expr>, fallback: &str| match e.and_then(Expr::dotted) {
        Some(text) => format!("`{text}`"),
        None => fallback.to_string(),
    };
    if let Some(i) = args.iter().position(synchronizes) {
        return Some(named(call.args.get(i), "a pipeline"));
    }
    let (key, _) = kwargs.iter().find(|(_, v)| synchronizes(v))?;
    Some(named(call.kwargs.iter().find(|(k, _)| k == key).map(|(_, e)| e), "a pipeline"))
}

/// The note for tcgen05 MMAs taken to span one CTA.
use cute_ir::layout::SINGLE_CTA_MMA;

fn count_taken_note(name: &str, options: &InstantiateOptions) -> String {
    format!(
        "`{name}` is not known statically: it is taken as {}, the iterations a loop of unknown length is explored for",
        options.unknown_trip_count
    )
}

/// What differs between the lanes of a warp, for [`lane_varying_names`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum LaneVarying {
    /// A value, or the memory a name refers to (`buf[tidx] = v` makes `buf`
    /// one): where a warp splits, and which elements its lanes touch.
    Contents,
    /// A value as the threads evaluate it, attributes (`self.x`) included:
    /// stores into memory are not values (see `cute_ir::eval::assign`).
    Values {
        /// A thread's slice of a tiled MMA or copy (`tiled_mma.get_slice(tidx)`)
        /// is a value the model gives no meaning, the same unknown in every
        /// lane (the views it partitions are views of their buffer argument),
        /// unless the file defines a `get_slice` of its own.
        opaque_slices: bool,
    },
}

/// Whether an expression can differ between the lanes of one warp: it reads
/// the thread or lane index, or a name that holds one, except through
/// `warp_idx()`, `make_warp_uniform(...)`, or a division by a multiple of the
/// warp size (`tidx // 32`, `tidx >> 5`).
fn varies_across_lanes(e: &Expr, varying: &BTreeSet<String>, globals: &Env, what: LaneVarying) -> bool {
    use cute_ir::ast::BinOp;
    // A divisor known to be a multiple of the warp size: a literal, a module
    // constant (`WARP = 32`) or `cute.arch.WARP_SIZE`.
    let warp_multiple = |d: &Expr| -> bool {
        let k = match d {
            Expr::Int(k) => Some(*k),
            Expr::Name(n) => globals.get(n).and_then(Value::as_int),
            Expr::Attr { attr, .. } if attr == "WARP_SIZE" => Some(32),
            _ => None,
        };
        k.is_some_and(|k| k > 0 && k % 32 == 0)
    };
    let varies = |x: &Expr| varies_across_lanes(x, varying, globals, what);
    match e {
        Expr::Name(n) => varying.contains(n),
        Expr::Call(c) => match Api::of_call(c) {
            Some(Api::ThreadIdx | Api::ThreadIdxX | Api::LaneIdx | Api::ElectOne) => true,
            Some(Api::WarpIdx | Api::MakeWarpUniform) => false,
            None if what == (LaneVarying::Values { opaque_slices: true })
                && matches!(&c.func, Expr::Attr { attr, .. } if attr == "get_slice") =>
            {
                false
            }
            // The extent of a tensor or layout (`cute.size(tCrA, mode=[2])`):
            // every thread's partition of a tile has the same shape, only
            // its offset is the thread's.
            None if is_extent_query(c) => c.kwargs.iter().any(|(_, a)| varies(a)) || c.args.iter().skip(1).any(&varies),
            _ => {
                varies(&c.func)
                    || c.args.iter().any(&varies)
                    || c.kwargs.iter().any(|(_, a)| varies(a))
            }
        },
        Expr::Binary { op: BinOp::FloorDiv, rhs, .. } if warp_multiple(rhs) => false,
        Expr::Binary { op: BinOp::Shr, rhs, .. } if matches!(rhs.as_ref(), Expr::Int(k) if *k >= 5) => false,
        Expr::Binary { lhs, rhs, .. } | Expr::Compare { lhs, rhs, .. } | Expr::BoolOp { lhs, rhs, .. } => {
            varies(lhs) || varies(rhs)
        }
        Expr::Unary { operand, .. } => varies(operand),
        Expr::IfExp { cond, then, orelse } => {
            varies(cond) || varies(then) || varies(orelse)
        }
        Expr::Subscript { base, index } => varies(base) || varies(index),
        Expr::Attr { base, .. } => {
            varies(base) || (matches!(what, LaneVarying::Values { .. }) && e.dotted().is_some_and(|d| varying.contains(&d)))
        }
        Expr::Tuple(items) => items.iter().any(&varies),
        Expr::Int(_) | Expr::Float | Expr::Bool(_) | Expr::Str(_) | Expr::None | Expr::Unknown(_) => false,
    }
}

/// `cute.size`, `cute.rank`, `cute.depth`, `cute.cosize`: the extent of
/// what they are given, not its contents.
fn is_extent_query(c: &cute_ir::ast::Call) -> bool {
    let qualified = c.qualname.clone().or_else(|| c.func.dotted()).unwrap_or_default();
    let Some(name) = qualified.strip_prefix("cutlass.cute.").or_else(|| qualified.strip_prefix("cute.")) else { return false };
    matches!(name, "size" | "rank" | "depth" | "cosize")
}

/// No name.
static EMPTY_NAMES: BTreeSet<String> = BTreeSet::new();

/// The names `kernel` binds once, and only to its thread's index along x
/// (`tidx, _, _ = cute.arch.thread_idx()`, `tidx = thread_idx()[0]`), when
/// the block's x extent is a multiple of the warp size: the lanes of a warp
/// then hold 32 consecutive indices from a multiple of 32. None otherwise
/// (a 48-wide block puts the end of one row and the start of the next in
/// one warp).
fn warp_aligned_indices(kernel: &FunctionDef, block: [u32; 3]) -> BTreeSet<String> {
    if block[0] % 32 != 0 {
        return BTreeSet::new();
    }
    let mut bindings: HashMap<String, Vec<Option<(&Target, &Expr)>>> = HashMap::default();
    cute_ir::ast::for_each_binding(&kernel.body, &mut |t, value| {
        for n in t.bound_names() {
            bindings.entry(n).or_default().push(value.map(|v| (t, v)));
        }
    });
    // A parameter is bound by the caller too.
    for p in &kernel.params {
        bindings.entry(p.name.clone()).or_default().push(None);
    }
    let is_call = |e: &Expr, api: Api| matches!(e, Expr::Call(c) if Api::of_call(c) == Some(api));
    bindings
        .into_iter()
        .filter(|(n, bound)| match bound.as_slice() {
            [Some((Target::Name(_), value))] => {
                is_call(value, Api::ThreadIdxX)
                    || matches!(value, Expr::Subscript { base, index } if is_call(base, Api::ThreadIdx) && matches!(**index, Expr::Int(0)))
            }
            [Some((Target::Tuple(items), value))] => {
                is_call(value, Api::ThreadIdx) && matches!(items.first(), Some(Target::Name(first)) if first == n)
            }
            _ => false,
        })
        .map(|(n, _)| n)
        .collect()
}

/// Whether condition `cond` is decided alike by the lanes of a warp
/// although it reads values that differ between them: a thread index
/// (`indices`, see [`warp_aligned_indices`]) compared with a warp's edge
/// (`tidx < 64`, `tidx >= 32`, `tidx <= 31`), or `and`, `or` and `not` of
/// such comparisons and of conditions that do not differ between lanes.
fn decides_whole_warps(cond: &Expr, indices: &BTreeSet<String>, varying: &BTreeSet<String>, globals: &Env) -> bool {
    use cute_ir::ast::{CmpOp, UnOp};
    let constant = |e: &Expr| match e {
        Expr::Int(k) => Some(*k),
        Expr::Name(n) => globals.get(n).and_then(Value::as_int),
        _ => None,
    };
    let index = |e: &Expr| matches!(e, Expr::Name(n) if indices.contains(n));
    match cond {
        Expr::Compare { op, lhs, rhs } => {
            // Put the index on the left: `c > tidx` is `tidx < c`.
            let (op, bound) = match (index(lhs), index(rhs)) {
                (true, false) => (*op, rhs),
                (false, true) => match op {
                    CmpOp::Lt => (CmpOp::Gt, lhs),
                    CmpOp::Le => (CmpOp::Ge, lhs),
                    CmpOp::Gt => (CmpOp::Lt, lhs),
                    CmpOp::Ge => (CmpOp::Le, lhs),
                    _ => return false,
                },
                _ => return false,
            };
            // `tidx < c` and `tidx >= c` split at `c`; `tidx <= c` and
            // `tidx > c` at `c + 1`.
            let edge = match (op, constant(bound)) {
                (CmpOp::Lt | CmpOp::Ge, Some(c)) => c,
                (CmpOp::Le | CmpOp::Gt, Some(c)) => c + 1,
                _ => return false,
            };
            edge % 32 == 0
        }
        Expr::BoolOp { lhs, rhs, .. } => [lhs, rhs].into_iter().all(|side| {
            decides_whole_warps(side, indices, varying, globals) || !varies_across_lanes(side, varying, globals, LaneVarying::Contents)
        }),
        Expr::Unary { op: UnOp::Not, operand } => decides_whole_warps(operand, indices, varying, globals),
        _ => false,
    }
}

/// The expressions a function's `return` statements give back.
fn returned(stmts: &[Stmt]) -> Vec<&Expr> {
    let mut out = Vec::new();
    for s in stmts {
        match &s.kind {
            StmtKind::Return(Some(e)) => out.push(e),
            StmtKind::If { then, orelse, .. } => {
                out.extend(returned(then));
                out.extend(returned(orelse));
            }
            StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. } => out.extend(returned(body)),
            _ => {}
        }
    }
    out
}

/// Names of a kernel or helper that hold a lane-dependent value: `seed` (a
/// helper's parameters given one), and names assigned (anywhere) from an
/// expression that varies across lanes.
fn lane_varying_names(kernel: &FunctionDef, globals: &Env, what: LaneVarying, seed: BTreeSet<String>) -> BTreeSet<String> {
    let mut assigns: Vec<(Vec<String>, &Expr)> = Vec::new();
    fn defs(t: &Target, what: LaneVarying, out: &mut Vec<String>) {
        match t {
            Target::Subscript { .. } if matches!(what, LaneVarying::Values { .. }) => {}
            Target::Tuple(items) => items.iter().for_each(|t| defs(t, what, out)),
            t => t.collect_defs(out),
        }
    }
    fn collect<'a>(stmts: &'a [Stmt], what: LaneVarying, out: &mut Vec<(Vec<String>, &'a Expr)>) {
        for s in stmts {
            match &s.kind {
                StmtKind::Assign { targets, value } => {
                    let mut names = Vec::new();
                    targets.iter().for_each(|t| defs(t, what, &mut names));
                    out.push((names, value));
                }
                StmtKind::AugAssign { target, value, .. } => {
                    let mut names = Vec::new();
                    defs(target, what, &mut names);
                    out.push((names, value));
                }
                StmtKind::If { then, orelse, .. } => {
                    collect(then, what, out);
                    collect(orelse, what, out);
                }
                StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. } => collect(body, what, out),
                _ => {}
            }
        }
    }
    collect(&kernel.body, what, &mut assigns);
    let mut varying = seed;
    loop {
        let before = varying.len();
        for (defs, value) in &assigns {
            if varies_across_lanes(value, &varying, globals, what) {
                varying.extend(defs.iter().cloned());
            }
        }
        if varying.len() == before {
            return varying;
        }
    }
}

/// A call's arguments, then its keyword arguments, each the expression of
/// the value at its position among the `args` arguments and `kwargs`
/// keyword arguments evaluated; `None` where they do not line up (a spliced
/// `*args`).
fn argument_expressions(call: &Call, args: usize, kwargs: usize) -> Option<Vec<&Expr>> {
    arguments_line_up(call, args, kwargs).then(|| call.args.iter().chain(call.kwargs.iter().map(|(_, a)| a)).collect())
}

/// Whether `args` argument values and `kwargs` keyword argument values are
/// one per expression of `call` (no spliced `*args`).
fn arguments_line_up(call: &Call, args: usize, kwargs: usize) -> bool {
    let spliced = call.args.iter().any(|a| matches!(a, Expr::Unary { op: cute_ir::ast::UnOp::Splat, .. }));
    !spliced && call.args.len() == args && call.kwargs.len() == kwargs
}

/// The call a range's stop is, less or plus a constant (`range(cute.size(t)
/// - 1)`), and that constant (`-1`).
fn stop_call(iter: &Expr) -> Option<(&Call, i64)> {
    let Expr::Call(range) = iter else { return None };
    let mut stop = match range.args.as_slice() {
        [stop] | [_, stop] | [_, stop, _] => stop,
        _ => return None,
    };
    let mut offset = 0;
    loop {
        match stop {
            Expr::Binary { op: op @ (BinOp::Add | BinOp::Sub), lhs, rhs } => {
                let Expr::Int(c) = **rhs else { return None };
                offset += if *op == BinOp::Add { c } else { -c };
                stop = lhs;
            }
            Expr::Call(call) => return Some((call, offset)),
            _ => return None,
        }
    }
}

/// Whether `v` is a `cutlass.pipeline` state (`make_pipeline_state(...)`).
fn is_pipeline_state(v: &Value) -> bool {
    matches!(v, Value::Object(o) if o.class == crate::pipeline::STATE) || crate::pipeline::advanced(v).is_some()
}
