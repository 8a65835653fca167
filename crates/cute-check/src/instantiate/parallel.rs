//! The threads of one instantiation run on several cores.
//!
//! Threads only meet through the tables they fill together (barriers and
//! buffers interned by name, registrations, notes): each run of consecutive
//! threads fills tables of its own, and the runs are merged in thread order
//! as if one thread had run after the other. A table entry keeps the index
//! and the name its first user in thread order gave it, so the model is the
//! one the sequential run builds, to the index.
//!
//! Where the sequential run would stop for the statement budget is known
//! from the statements each thread executed: the threads of that run before
//! it are run again after the runs merged, as the sequential run ran them,
//! so that limit is reproduced exactly. A run stops after a thread that met
//! an unmodelled construct, as the sequential run does, and no run after it
//! is merged. Where a run out of time stops
//! depends on the machine: the runs before it are kept, and the model is
//! not checked either way. `tests/parallel.rs` compares the model built on
//! several cores with the sequential one on every fixture and corpus kernel.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::reuse::Reuse;
use super::run::ThreadResult;
use super::spent::Spent;
use super::{Setup, Shared};
use crate::model::{BarrierIx, BufferIx, MemKind, OpKind};

/// Threads below which one core is used: spreading them costs more than it
/// saves.
const MIN_THREADS: usize = 64;

/// Cores used at most.
const MAX_WORKERS: usize = 8;

/// Runs `threads` on the available cores and merges what they left; `None`
/// when one core is enough or the result needs the sequential run.
///
/// With `reuse` (the runs kept from other ways of deciding the kernel's
/// conditions, `reuse.rs`), the threads run warp by warp, a warp whose
/// conditions this way decides as a kept run did is not run again, and the
/// warps run now are kept.
pub(super) fn run(setup: &Setup<'_>, threads: &[(u32, u32)], reuse: Option<&Reuse>) -> Option<(Shared, Vec<ThreadResult>)> {
    let available = || std::thread::available_parallelism().map_or(1, |n| n.get());
    let workers = match setup.options.workers {
        0 => available(),
        n => n,
    }
    .min(MAX_WORKERS);
    let spread = workers >= 2 && threads.len() >= MIN_THREADS;
    let runs = match (reuse, spread) {
        (Some(_), _) => warps(threads),
        (None, true) => split(threads, workers),
        (None, false) => return None,
    };
    let mut done: Vec<Option<(Shared, Vec<ThreadResult>)>> = runs.iter().map(|run| reuse.and_then(|r| r.find(run, setup.scenario, setup.per_way_key()))).collect();
    let to_run: Vec<usize> = (0..runs.len()).filter(|&i| done[i].is_none()).collect();
    // Runs after one whose threads met an unmodelled construct or ran out
    // of time are not merged (see `merge`): they are not run either.
    let stops = |shared: &Shared| !shared.unresolved.is_empty() || shared.out_of_time;
    let last_merged = AtomicUsize::new(done.iter().position(|d| d.as_ref().is_some_and(|(shared, _)| stops(shared))).unwrap_or(usize::MAX));
    let run_one = |i: usize| {
        let mut shared = setup.shared();
        let results = setup.run_threads(runs[i], &mut shared, Spent::after_others());
        if stops(&shared) {
            last_merged.fetch_min(i, Ordering::Relaxed);
        }
        (i, (shared, results))
    };
    let ran: Vec<(usize, (Shared, Vec<ThreadResult>))> = if spread && to_run.len() > 1 {
        let next = AtomicUsize::new(0);
        let ran = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            for _ in 0..workers.min(to_run.len()) {
                scope.spawn(|| loop {
                    let Some(&i) = to_run.get(next.fetch_add(1, Ordering::Relaxed)) else { break };
                    if i > last_merged.load(Ordering::Relaxed) {
                        break;
                    }
                    let run = run_one(i);
                    ran.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(run);
                });
            }
        });
        ran.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner)
    } else {
        let mut ran = Vec::new();
        for &i in &to_run {
            if i > last_merged.load(Ordering::Relaxed) {
                break;
            }
            ran.push(run_one(i));
        }
        ran
    };
    for (i, run) in ran {
        if let Some(reuse) = reuse {
            reuse.keep(runs[i], setup.scenario, setup.per_way_key(), &run.0, &run.1);
        }
        done[i] = Some(run);
    }
    merge(setup, runs.iter().copied().zip(done))
}

/// The warps of `threads`, each a run.
fn warps(threads: &[(u32, u32)]) -> Vec<&[(u32, u32)]> {
    threads.chunk_by(|a, b| a.0 == b.0 && a.1 / 32 == b.1 / 32).collect()
}

/// Consecutive runs of whole warps, each within one CTA, of about
/// `threads / workers` threads.
fn split(threads: &[(u32, u32)], workers: usize) -> Vec<&[(u32, u32)]> {
    // Whole warps: a warp's lanes meet after its last lane has run (see
    // `add_last_lane_elements`).
    let size = threads.len().div_ceil(workers).max(1).next_multiple_of(32);
    let mut runs = Vec::new();
    let mut rest = threads;
    while !rest.is_empty() {
        let same_cta = rest.iter().take_while(|t| t.0 == rest[0].0).count();
        let (run, tail) = rest.split_at(same_cta.min(size));
        runs.push(run);
        rest = tail;
    }
    runs
}

fn merge<'r>(
    setup: &Setup<'_>,
    runs: impl Iterator<Item = (&'r [(u32, u32)], Option<(Shared, Vec<ThreadResult>)>)>,
) -> Option<(Shared, Vec<ThreadResult>)> {
    let mut merged = setup.shared();
    let mut results = Vec::new();
    let mut spent = Spent::default();
    for (run, done) in runs {
        // The sequential run stops after the thread that met an unmodelled
        // construct.
        if !merged.unresolved.is_empty() {
            break;
        }
        let (shared, run_results) = done?;
        if shared.out_of_time {
            setup.out_of_time(&mut merged);
            break;
        }
        // The sequential run asks `spent.rs` whether to stop before each
        // thread. (It also stops after a thread that met an unmodelled
        // construct, as each run does: a run that met one ends there.)
        let before = spent.clone();
        let cut = run_results.iter().position(|r| {
            let stops = spent.stop(setup).is_some();
            spent.add(r.thread, r.steps, &r.met);
            stops
        });
        if let Some(cut) = cut {
            results.extend(setup.run_threads(&run[..=cut], &mut merged, before));
            break;
        }
        let Shared {
            barriers,
            buffers,
            open,
            notes,
            unresolved,
            bounded,
            partial_warp,
            stale_tokens,
            storage_overruns,
            barrier_uses,
            handed_pointers,
            memory_conditions,
            per_way_found,
            ran_both_ways,
            decided_per_way,
            ..
        } = shared;
        merged.per_way_found.extend(per_way_found);
        merged.ran_both_ways.extend(ran_both_ways);
        merged.decided_per_way.extend(decided_per_way);
        let table = &mut merged.barriers;
        let barrier_map = absorb(
            (&mut table.keys, &mut table.list, &mut table.named_in_kernel),
            (barriers.keys, barriers.list, barriers.named_in_kernel),
            |kept, later| kept.name = later.name,
        );
        let table = &mut merged.buffers;
        let buffer_map = absorb(
            (&mut table.keys, &mut table.list, &mut table.indexed_name),
            (buffers.keys, buffers.list, buffers.indexed_name),
            |kept, later| kept.name = later.name,
        );
        for condition in open.into_values() {
            condition.record_in(&mut merged.open);
        }
        merged.notes.extend(notes);
        for (site, stale) in stale_tokens {
            merged.stale_tokens.entry(site).or_insert(stale);
        }
        for (key, overrun) in storage_overruns {
            merged.storage_overruns.entry(key).or_insert(overrun);
        }
        for (stmt, condition) in memory_conditions {
            merged.memory_conditions.entry(stmt).or_insert(condition);
        }
        merged.unresolved.extend(unresolved);
        for (site, handed) in handed_pointers {
            merged.handed_pointers.entry(site).or_insert(handed);
        }
        merged.bounded |= bounded;
        for (site, (what, threads)) in partial_warp {
            // Each thread ran in one run only: its counts move over whole.
            merged.partial_warp.entry(site).or_insert_with(|| (what, Default::default())).1.extend(threads);
        }
        for (key, threads) in barrier_uses {
            merged.barrier_uses.entry(key).or_default().extend(threads);
        }
        for mut result in run_results {
            for op in &mut result.ops {
                match &mut op.kind {
                    OpKind::Init { bar, .. } | OpKind::Arrive { bar, .. } | OpKind::Wait { bar, .. } => *bar = barrier_map[*bar as usize],
                }
            }
            for op in result.memory.iter_mut().flat_map(|m| &mut m.ops) {
                renumber(&mut op.kind, &barrier_map, &buffer_map);
            }
            results.push(result);
        }
    }
    Some((merged, results))
}

/// Takes in an interning table of a run (barriers or buffers: keys, entries
/// in the order first met, and whether each entry's name is the preferred
/// spelling) after the tables of the runs before it, as if its threads had
/// interned its entries there: an entry keeps the index its first user gave
/// it, and takes a later run's name when only that one is preferred (as
/// `BarrierTable::intern_named` and `BufferTable::intern` do). Returns where
/// each of the run's entries now is.
fn absorb<K: std::hash::Hash + Eq, V>(
    (keys, list, preferred): (&mut rustc_hash::FxHashMap<K, u32>, &mut Vec<V>, &mut Vec<bool>),
    (run_keys, run_list, run_preferred): (rustc_hash::FxHashMap<K, u32>, Vec<V>, Vec<bool>),
    rename: impl Fn(&mut V, V),
) -> Vec<u32> {
    let mut by_index: Vec<Option<K>> = (0..run_list.len()).map(|_| None).collect();
    for (key, ix) in run_keys {
        by_index[ix as usize] = Some(key);
    }
    let mut map = Vec::with_capacity(run_list.len());
    for ((entry, is_preferred), key) in run_list.into_iter().zip(run_preferred).zip(by_index) {
        let key = key.expect("every entry has its key");
        let ix = match keys.get(&key) {
            Some(&ix) => {
                if is_preferred && !preferred[ix as usize] {
                    rename(&mut list[ix as usize], entry);
                    preferred[ix as usize] = true;
                }
                ix
            }
            None => {
                let ix = list.len() as u32;
                list.push(entry);
                preferred.push(is_preferred);
                keys.insert(key, ix);
                ix
            }
        };
        map.push(ix);
    }
    map
}

fn renumber(kind: &mut MemKind, barriers: &[BarrierIx], buffers: &[BufferIx]) {
    match kind {
        MemKind::Access { buffer, .. } | MemKind::AsyncRead { buffer } | MemKind::Update { buffer, .. } | MemKind::Observe { buffer, .. } => {
            *buffer = buffers[*buffer as usize]
        }
        MemKind::AsyncCopy { buffer, barrier, .. } => {
            *buffer = buffers[*buffer as usize];
            if let Some(b) = barrier {
                *b = barriers[*b as usize];
            }
        }
        MemKind::ExpectTx { barrier, .. } | MemKind::CopyTx { barrier, .. } | MemKind::Tcgen05Commit { barrier } => {
            *barrier = barriers[*barrier as usize]
        }
        MemKind::ArriveRelease { .. }
        | MemKind::BulkCommit
        | MemKind::BulkWait { .. }
        | MemKind::ProxyFence
        | MemKind::GridDependencyWait
        | MemKind::TmemAccess { .. }
        | MemKind::TmemWait { .. }
        | MemKind::TmemAlloc
        | MemKind::TmemFree
        | MemKind::TmemRetrieve
        | MemKind::WarpSync
        | MemKind::LaneSync { .. }
        | MemKind::Fence { .. } => {}
    }
}
