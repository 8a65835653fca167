//! Running the threads of one cluster, in thread order, each through the
//! kernel's slice (see [`ThreadRun`]): what every thread shares is made once
//! ([`Setup::shared`]), a lane that stands in for later lanes of its warp
//! leaves its record under their thread ids (see [`super::StandIn`]), and the
//! lanes of a warp have their shared-memory accesses compared when its last
//! lane has run (`lanes.rs`). Several cores run runs of consecutive threads
//! with the same result (`parallel.rs`).
//!
//! The run stops, and says why:
//! - after the first thread that met a construct the model cannot represent:
//!   the kernel is "not checked" whatever the other threads or paths do, and is
//!   not run again per way of deciding its runtime conditions (the constructs
//!   other threads or paths would meet further on are listed once this one is
//!   modelled or changed);
//! - in the first run, when the ways of deciding the conditions met so far
//!   would pass the statement budget together (`spent.rs`);
//! - past the statement budget: the statements the threads execute together
//!   (1,000,000, and 200,000 per thread; a lane stood in for counts the
//!   statements of the lane standing in), so that a verdict does not depend on
//!   the machine or its load;
//! - past the time budget ([`super::MAX_TIME`], 3 s), which stays behind the
//!   statement budget for statements slow to evaluate.
//!
//! The frames of inlined helpers hold their own names only; the module's
//! constants are looked up behind them, not copied into every frame.

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap as HashMap;

use cute_ir::ast::StmtId;
use cute_ir::eval::{self, Env, Value};

use super::spent::{Spent, Stop};
use super::{functions::Body, lanes, memory, uniform, BarrierTable, MAX_TIME, Setup, Shared, StandIn, ThreadRun};
use crate::model::*;

/// What one thread left: its synchronization operations and, when it has
/// any, its memory operations.
#[derive(Clone)]
pub(super) struct ThreadResult {
    pub(super) thread: (u32, u32),
    pub(super) ops: Vec<Op>,
    pub(super) memory: Option<ThreadMemory>,
    /// Whether the thread ran (not stood in for).
    pub(super) ran: bool,
    /// Statements it executed (those of the lane standing in for it).
    pub(super) steps: usize,
    /// Conditions on runtime values it met (none for a lane stood in for:
    /// the lane standing in met them).
    pub(super) met: Vec<StmtId>,
}

/// What the lanes of the warp being run leave for their memory accesses to
/// be compared (see `lanes`).
pub(super) struct WarpMemory {
    /// Where lane 0's result is.
    lane0: usize,
    accesses: Vec<lanes::WarpAccess>,
    race_points: std::rc::Rc<lanes::RacePoints>,
    /// What each lane reported, by lane (`None`: lane 0, or not run).
    lanes: Vec<Option<Vec<lanes::LaneRegion>>>,
}

/// The lanes thread `tid` may stand in for: the later ones of its warp up
/// to lane 30 that no earlier lane stands in for (`covered`), the CTA's
/// last thread aside; none for lane 0 and the last lane, which record for
/// the warp.
pub(super) fn lanes_to_stand_in_for(tid: u32, threads_per_cta: u32, covered: impl Fn(u32) -> bool) -> Vec<u32> {
    let last_lane = |t: u32| t % 32 == 31 || t + 1 == threads_per_cta;
    if tid % 32 == 0 || last_lane(tid) {
        return Vec::new();
    }
    (tid + 1..=tid - tid % 32 + 30).filter(|&t| t + 1 < threads_per_cta && !covered(t)).collect()
}

impl Setup<'_> {
    /// The conditions decided per way, `None` for every one of them (see
    /// `both_ways.rs`).
    pub(super) fn per_way_key(&self) -> Option<&BTreeSet<StmtId>> {
        (!self.every_condition_per_way).then_some(&self.per_way)
    }

    pub(super) fn shared(&self) -> Shared {
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
            memory_conditions: BTreeMap::new(),
            per_way_found: BTreeSet::new(),
            ran_both_ways: BTreeSet::new(),
            decided_per_way: BTreeSet::new(),
            barrier_uses: BTreeMap::new(),
            handed_pointers: BTreeMap::new(),
            deadline: self.deadline,
            out_of_time: false,
            other_ways_over_budget: false,
            block_assumed: self.block_assumed,
        }
    }

    /// Runs `threads` in order, after threads that spent `spent`, filling
    /// `shared`; returns what each left. Stops after a CTA that met an
    /// unmodelled construct, at the time budget, or where `spent.rs` says,
    /// recording why.
    pub(super) fn run_threads(&self, threads: &[(u32, u32)], shared: &mut Shared, mut spent: Spent) -> Vec<ThreadResult> {
        let Setup { module, kernel, kept, scenario, options, block, cluster, cluster_ctas, threads_per_cta, grid, stands_in, modelled_ctas, launch_ctas, .. } = *self;
        let mut results = Vec::with_capacity(threads.len());
        // The converged accesses of the warp being run.
        let mut warp: Option<WarpMemory> = None;
        // The lanes of the warp being run that stand in for later ones.
        let mut stand_ins: Vec<StandIn> = Vec::new();
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
            match spent.stop(self) {
                Some(Stop::Statements) => {
                    self.over_statement_budget(shared);
                    break;
                }
                Some(Stop::OtherWays) => {
                    shared.other_ways_over_budget = true;
                    break;
                }
                None => {}
            }
            if tid % 32 == 0 {
                stand_ins.clear();
            }
            if let Some(runner) = stand_ins.iter().find(|s| s.stands_for(cta, tid)) {
                spent.add((cta, tid), runner.steps, &[]);
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
                    met: Vec::new(),
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
                stands_in,
                modelled_ctas,
                launch_ctas,
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
                ticket_delta: None,
                last_update: None,
                atomic_results: HashMap::default(),
                kernel_stmt: kernel.body.first().map_or(0, |s| s.id),
                participants: HashMap::default(),
                tile_cursors: HashMap::default(),
                dsl_partials: HashMap::default(),
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
                issued_mma: false,
                known_stops: Vec::new(),
                write_backs: Vec::new(),
                definitions: self.definitions,
                loop_bounds: self.loop_bounds,
                same_conditions: self.same_conditions,
                frame_origins: None,
                pending_origins: None,
                met: Vec::new(),
                bindings: 0,
                per_way: self.per_way_key(),
                uniform_branches: Vec::new(),
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
            spent.add((cta, tid), thread.steps, &thread.met);
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
            results.push(ThreadResult {
                thread: (cta, tid),
                ops: std::mem::take(&mut thread.ops),
                memory,
                ran: true,
                steps: thread.steps,
                met: std::mem::take(&mut thread.met),
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
    pub(super) fn out_of_time(&self, shared: &mut Shared) {
        shared.out_of_time = true;
        shared.unresolved.insert(Unresolved {
            site: self.kernel.name_range,
            what: format!("running its threads took longer than {} s, too long to model", MAX_TIME.as_secs()),
            origin: None,
        });
    }

    /// Records that the threads ran past the statement budget.
    pub(super) fn over_statement_budget(&self, shared: &mut Shared) {
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
