//! Where the time of one check goes: for each kernel of the given files,
//! the median time of every stage of the pipeline (slice, instantiation on
//! one core with every lane run and with lanes standing in, and on all
//! cores, exploration, memory-ordering analysis), over several runs, in the
//! default scenario, and how many threads the instantiation ran.
//!
//!   cargo bench -p cute-check --bench stages -- [--runs N] [FILE ...]
//!
//! Without files it times the fixture kernels whose check costs most
//! (the two-CTA Jacobi smoothers, a pipelined ring, warp-specialized named
//! barriers, a TMA store). Prints a
//! Markdown table; timings are only comparable within one run. It is also
//! the harness to profile a stage under `perf record`.

mod kernels;

use std::time::Duration;

use cute_check::explore::{explore, ExploreOptions};
use cute_check::{instantiate, Budget, InstantiateOptions, Scenario};
use kernels::timed;

const DEFAULT_FILES: &[&str] = &[
    "tests/fixtures/untoggled_phase/jacobi_cluster_clean.py",
    "tests/fixtures/pipeline/async_ring_clean.py",
    "tests/fixtures/dsmem_race/halo_double_buffer_clean.py",
    "tests/fixtures/named_barrier_deadlock/epilogue_objects_clean.py",
    "tests/fixtures/missing_proxy_fence/tma_store_clean.py",
];

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}

fn main() {
    let root = kernels::root();
    let (runs, mut files) = kernels::command_line(11);
    if files.is_empty() {
        files = DEFAULT_FILES.iter().map(|f| root.join(f)).filter(|p| p.exists()).collect();
    }
    println!(
        "| kernel | threads | run | ops | memory ops | slice | instantiate, 1 core, every lane | instantiate, 1 core | instantiate | explore | memory ordering |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for file in files {
        kernels::for_each_kernel(&file, |module, kernel, launch, text, name| {
            let (slice_time, kept) = timed(runs, || cute_ir::slice::slice_kernel(module, kernel, text).kept_ids());
            let scenario = Scenario::new();
            let one_core = InstantiateOptions { workers: 1, ..Default::default() };
            let every_lane = InstantiateOptions { stand_ins: false, ..one_core.clone() };
            let (all_lanes, _) = timed(runs, || instantiate(module, kernel, &kept, launch, &scenario, &every_lane));
            let (sequential, _) = timed(runs, || instantiate(module, kernel, &kept, launch, &scenario, &one_core));
            let (parallel, inst) = timed(runs, || instantiate(module, kernel, &kept, launch, &scenario, &Default::default()));
            let model = inst.model;
            let options = ExploreOptions {
                budget: Budget { max_states: 2_000_000, max_time: Duration::from_secs(2), ..Budget::default() },
                full_expansion: false,
            };
            let (explore_time, _) = timed(runs, || explore(&model, &options));
            let (memory_time, _) = timed(runs, || cute_check::memory::analyze(&model));
            let threads: usize = model.groups.iter().map(|g| g.threads.len()).sum();
            // Threads run, against all of the model's CTAs (the others were
            // stood in for by lane 1 of their warp).
            let run = format!("{} of {}", inst.threads_run, model.ctas * model.threads_per_cta);
            let ops: usize = model.groups.iter().map(|g| g.ops.len() * g.threads.len()).sum();
            let memory_ops: usize = model.memory.iter().map(|t| t.ops.len()).sum();
            println!(
                "| {name} | {threads} | {run} | {ops} | {memory_ops} | {} | {} | {} | {} | {} | {} |",
                ms(slice_time),
                ms(all_lanes),
                ms(sequential),
                ms(parallel),
                ms(explore_time),
                ms(memory_time)
            );
        });
    }
    println!("\n(milliseconds, median of {runs} runs)");
}
