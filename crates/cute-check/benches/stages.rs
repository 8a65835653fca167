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

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cute_check::explore::{explore, ExploreOptions};
use cute_check::{instantiate, Budget, InstantiateOptions, Scenario};
use cute_ir::launch::Launches;

const DEFAULT_FILES: &[&str] = &[
    "tests/fixtures/untoggled_phase/jacobi_cluster_clean.py",
    "tests/fixtures/pipeline/async_ring_clean.py",
    "tests/fixtures/dsmem_race/halo_double_buffer_clean.py",
    "tests/fixtures/named_barrier_deadlock/epilogue_objects_clean.py",
    "tests/fixtures/missing_proxy_fence/tma_store_clean.py",
];

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Runs `f` `runs` times; the median time and the last result.
fn timed<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs {
        let started = Instant::now();
        last = Some(f());
        times.push(started.elapsed());
    }
    (median(times), last.expect("at least one run"))
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut runs = 11;
    let mut files: Vec<PathBuf> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).expect("--runs N"),
            // `cargo bench` passes `--bench`; ignore what is not ours.
            s if s.starts_with("--") => {}
            path => files.push(PathBuf::from(path)),
        }
    }
    if files.is_empty() {
        files = DEFAULT_FILES.iter().map(|f| root.join(f)).filter(|p| p.exists()).collect();
    }
    println!(
        "| kernel | threads | run | ops | memory ops | slice | instantiate, 1 core, every lane | instantiate, 1 core | instantiate | explore | memory ordering |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            eprintln!("cannot read {}", file.display());
            continue;
        };
        let Ok(tree) = cute_syntax::parse(&text) else {
            eprintln!("cannot parse {}", file.display());
            continue;
        };
        let module = cute_ir::lower_recovering(&tree);
        let launches = Launches::of_module(&module);
        for kernel in module.kernels() {
            let launch = launches.of_kernel(&module, kernel);
            let (slice_time, kept) = timed(runs, || cute_ir::slice::slice_kernel(&module, kernel, &text).kept_ids());
            let scenario = Scenario::new();
            let one_core = InstantiateOptions { workers: 1, ..Default::default() };
            let every_lane = InstantiateOptions { stand_ins: false, ..one_core.clone() };
            let (all_lanes, _) = timed(runs, || instantiate(&module, kernel, &kept, &launch, &scenario, &every_lane));
            let (sequential, _) = timed(runs, || instantiate(&module, kernel, &kept, &launch, &scenario, &one_core));
            let (parallel, inst) = timed(runs, || instantiate(&module, kernel, &kept, &launch, &scenario, &Default::default()));
            let model = inst.model;
            let options = ExploreOptions {
                budget: Budget { max_states: 2_000_000, max_time: Duration::from_secs(2) },
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
            let name = format!("{}: `{}`", file.file_name().map_or_else(String::new, |f| f.to_string_lossy().into_owned()), kernel.display_name());
            println!(
                "| {name} | {threads} | {run} | {ops} | {memory_ops} | {} | {} | {} | {} | {} | {} |",
                ms(slice_time),
                ms(all_lanes),
                ms(sequential),
                ms(parallel),
                ms(explore_time),
                ms(memory_time)
            );
        }
    }
    println!("\n(milliseconds, median of {runs} runs)");
}
