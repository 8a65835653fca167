//! The runs of warps one way of deciding a kernel's conditions on runtime
//! values kept, taken up by the next ways (`cute_check::Reuse`), build the
//! model a fresh instantiation of each way builds, to the index, on every
//! kernel of the fixtures and the corpus that meets such a condition: on
//! one core and on several.

use std::path::{Path, PathBuf};

use cute_check::{instantiate, instantiate_reusing, Decision, InstantiateOptions, Reuse, Scenario};
use cute_ir::launch::Launches;

fn python_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            python_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "py") {
            out.push(path);
        }
    }
}

const OPTIONS: InstantiateOptions = InstantiateOptions {
    unknown_trip_count: 3,
    max_ops_per_thread: 50_000,
    max_steps_per_thread: 200_000,
    max_steps_total: 1_000_000,
    workers: 1,
    stand_ins: true,
};

/// Every way of deciding the first `n` of `conditions` alike in every
/// thread, the first run's (all false) first.
fn ways(conditions: &[u32]) -> Vec<Scenario> {
    let n = conditions.len().min(3);
    (0..1u32 << n)
        .map(|bits| conditions[..n].iter().enumerate().map(|(i, &c)| (c, Decision::Alike(bits >> i & 1 == 1))).collect())
        .collect()
}

/// Kernels compared, the ways compared in all, and the runs of a warp
/// taken up rather than run.
fn compare(options: &InstantiateOptions) -> (usize, usize, usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    python_files(&root.join("tests/fixtures"), &mut files);
    python_files(&root.join("tests/corpus"), &mut files);
    files.sort();
    let (mut kernels, mut compared, mut taken_up) = (0, 0, 0);
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let Ok(module) = cute_ir::lower_text(&text) else { continue };
        let launches = Launches::of_module(&module);
        for kernel in module.kernels() {
            let launch = launches.of_kernel(&module, kernel);
            let kept = cute_ir::slice_kernel(&module, kernel, &text).kept_ids();
            let reuse = Reuse::default();
            let first = instantiate_reusing(&module, kernel, &kept, &launch, &Scenario::new(), options, Some(&reuse));
            if first.open_conditions.is_empty() || first.model.out_of_time {
                continue;
            }
            let conditions: Vec<u32> = first.open_conditions.iter().map(|c| c.stmt).collect();
            kernels += 1;
            for way in ways(&conditions) {
                let fresh = instantiate(&module, kernel, &kept, &launch, &way, options);
                let taken_up = instantiate_reusing(&module, kernel, &kept, &launch, &way, options, Some(&reuse));
                if fresh.model.out_of_time || taken_up.model.out_of_time {
                    continue;
                }
                let what = format!("{}: {} {way:?}", path.display(), kernel.name);
                assert_eq!(fresh.model, taken_up.model, "{what}");
                assert_eq!(fresh.open_conditions, taken_up.open_conditions, "{what}");
                assert_eq!(fresh.costs, taken_up.costs, "{what}");
                assert_eq!(fresh.steps, taken_up.steps, "{what}");
                compared += 1;
            }
            taken_up += reuse.runs_taken_up();
        }
    }
    (kernels, compared, taken_up)
}

#[test]
fn warps_taken_up_from_other_ways_build_the_model_of_a_fresh_run() {
    let (kernels, ways, taken_up) = compare(&OPTIONS);
    assert!(kernels >= 12, "{kernels} kernels with conditions on runtime values");
    assert!(ways > 2 * kernels, "{ways} ways of {kernels} kernels");
    // Most ways decide some warps' conditions as an earlier way did.
    assert!(taken_up > ways, "{taken_up} runs taken up in {ways} ways");
}

#[test]
fn on_several_cores_too() {
    let (kernels, _, taken_up) = compare(&InstantiateOptions { workers: 3, ..OPTIONS });
    assert!(kernels >= 12, "{kernels} kernels with conditions on runtime values");
    assert!(taken_up > 0);
}
