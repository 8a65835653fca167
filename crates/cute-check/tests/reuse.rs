//! The runs of warps one way of deciding a kernel's conditions on runtime
//! values kept, taken up by the next ways (`cute_check::Reuse`), build the
//! model a fresh instantiation of each way builds, to the index, on every
//! kernel of the fixtures and the corpus that meets such a condition: on
//! one core and on several. An ignored test does the same on other code
//! and prints what taking the runs up saves.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use cute_check::{instantiate_reusing, Decision, InstantiateOptions, Reuse, Scenario, MAX_OPEN_CONDITIONS};

mod files;
use files::repository_files;

const OPTIONS: InstantiateOptions = InstantiateOptions {
    unknown_trip_count: 3,
    max_ops_per_thread: 50_000,
    max_steps_per_thread: 200_000,
    max_steps_total: 1_000_000,
    workers: 1,
    stand_ins: true,
    both_ways: true,
};

/// Every way of deciding the first `n` of `conditions` alike in every
/// thread, the first run's (all false) first.
fn ways(conditions: &[u32], n: usize) -> Vec<Scenario> {
    let n = conditions.len().min(n);
    (0..1u32 << n)
        .map(|bits| conditions[..n].iter().enumerate().map(|(i, &c)| (c, Decision::Alike(bits >> i & 1 == 1))).collect())
        .collect()
}

#[derive(Default, Debug)]
struct Compared {
    kernels: usize,
    ways: usize,
    runs_taken_up: usize,
    /// Statements the threads of every way executed, and those of them in
    /// runs taken up rather than run.
    statements: usize,
    statements_taken_up: usize,
    fresh: Duration,
    taking_up: Duration,
}

/// Instantiates every way (of the first `n` conditions) of every kernel of
/// `files` that meets a condition on runtime values, fresh and taking up
/// the runs of the ways before, and asserts the two build the same.
fn compare(files: &[PathBuf], options: &InstantiateOptions, n: usize) -> Compared {
    let mut seen = Compared::default();
    files::for_each_kernel(files, |k| {
        let instantiate_way = |way: &Scenario, reuse: Option<&Reuse>| instantiate_reusing(k.module, k.kernel, &k.kept, &k.launch, way, options, reuse);
        let reuse = Reuse::default();
        let first = instantiate_way(&Scenario::new(), Some(&reuse));
        if first.open_conditions.is_empty() || first.model.out_of_time || !first.model.unresolved.is_empty() {
            return;
        }
        let conditions: Vec<u32> = first.open_conditions.iter().map(|c| c.stmt).collect();
        seen.kernels += 1;
        for way in ways(&conditions, n).into_iter().skip(1) {
            let started = Instant::now();
            let fresh = instantiate_way(&way, None);
            let between = Instant::now();
            let taken_up = instantiate_way(&way, Some(&reuse));
            seen.fresh += between - started;
            seen.taking_up += between.elapsed();
            if fresh.model.out_of_time || taken_up.model.out_of_time {
                continue;
            }
            let what = format!("{}: {} {way:?}", k.path.display(), k.kernel.name);
            assert_eq!(fresh.model, taken_up.model, "{what}");
            assert_eq!(fresh.open_conditions, taken_up.open_conditions, "{what}");
            assert_eq!(fresh.costs, taken_up.costs, "{what}");
            assert_eq!(fresh.steps, taken_up.steps, "{what}");
            seen.ways += 1;
            seen.statements += taken_up.steps;
        }
        seen.runs_taken_up += reuse.runs_taken_up();
        seen.statements_taken_up += reuse.statements_taken_up();
    });
    seen
}

#[test]
fn warps_taken_up_from_other_ways_build_the_model_of_a_fresh_run() {
    let seen = compare(&repository_files(), &OPTIONS, 3);
    assert!(seen.kernels >= 12, "{seen:?}");
    assert!(seen.ways > seen.kernels, "{seen:?}");
    // Most ways decide some warps' conditions as an earlier way did.
    assert!(seen.runs_taken_up > seen.ways, "{seen:?}");
}

#[test]
fn on_several_cores_too() {
    let seen = compare(&repository_files(), &InstantiateOptions { workers: 3, ..OPTIONS }, 3);
    assert!(seen.kernels >= 12 && seen.runs_taken_up > 0, "{seen:?}");
}

/// The same on the code bases named by `CUTE_LSP_COMPARE_DIRS` (paths
/// separated by `:`), every way of as many conditions as a way decides,
/// printing what taking the runs up saves:
/// `CUTE_LSP_COMPARE_DIRS=/src/quack cargo test --release -p cute-check
/// --test reuse -- --ignored --nocapture`.
#[test]
#[ignore = "needs CUTE_LSP_COMPARE_DIRS"]
fn warps_taken_up_on_other_code() {
    let files = files::files_to_compare_on();
    let seen = compare(&files, &InstantiateOptions { workers: 0, ..OPTIONS }, MAX_OPEN_CONDITIONS);
    let run = seen.statements - seen.statements_taken_up;
    eprintln!(
        "{} kernels, {} ways besides the first run: statements run {} of {} ({:.3} of a fresh run of each way), {} runs of a warp taken up; time taking up / fresh: {:.2} s / {:.2} s = {:.3}",
        seen.kernels,
        seen.ways,
        run,
        seen.statements,
        run as f64 / seen.statements.max(1) as f64,
        seen.runs_taken_up,
        seen.taking_up.as_secs_f64(),
        seen.fresh.as_secs_f64(),
        seen.taking_up.as_secs_f64() / seen.fresh.as_secs_f64().max(1e-9),
    );
}
