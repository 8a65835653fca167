//! The search for mixed named-barrier generations (`overrun::search`, which
//! explores the moves between two registrations in one order) against the
//! search over every interleaving (`overrun::search_unreduced`), on the
//! kernels the happens-before proof does not clear: the median time of each,
//! their ratio, and whether they agree.
//!
//!   cargo bench -p cute-check --bench overrun -- [--runs N] [FILE ...]
//!
//! Without files it runs the fixtures of the named-barrier rules and of
//! `PipelineOrder`. Prints a Markdown table; timings are only comparable
//! within one run.

mod kernels;

use std::path::PathBuf;
use std::time::Duration;

use cute_check::overrun::{generations_ordered, search, search_unreduced, Verdict};
use cute_check::{instantiate, Budget, InstantiateOptions, Scenario};
use kernels::timed;

const DEFAULT_DIRS: &[&str] = &["tests/fixtures/barrier_recycling", "tests/fixtures/named_barrier_deadlock", "tests/fixtures/pipeline"];

fn verdict(v: &Verdict) -> &'static str {
    match v {
        Verdict::Clear => "clear",
        Verdict::Found(_) => "found",
        Verdict::OutOfBudget => "out of budget",
    }
}

fn main() {
    let root = kernels::root();
    let (runs, mut files) = kernels::command_line(5);
    if files.is_empty() {
        for dir in DEFAULT_DIRS {
            let mut found: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
                .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "py")).collect())
                .unwrap_or_default();
            found.sort();
            files.extend(found);
        }
    }
    let budget = Budget { max_states: 2_000_000, max_time: Duration::from_secs(20), ..Budget::default() };
    println!("| kernel | reduced | every interleaving | ratio | verdicts |");
    println!("|---|---:|---:|---:|---|");
    for file in files {
        kernels::for_each_kernel(&file, |module, kernel, launch, text, name| {
            let kept = cute_ir::slice::slice_kernel(module, kernel, text).kept_ids();
            let model = instantiate(module, kernel, &kept, launch, &Scenario::new(), &InstantiateOptions::default()).model;
            // Only what the proof leaves to a search is searched for.
            if generations_ordered(&model) {
                return;
            }
            let (reduced_time, reduced) = timed(runs, || search(&model, &budget));
            let (full_time, full) = timed(runs, || search_unreduced(&model, &budget));
            let agree = match (&reduced, &full) {
                (_, Verdict::OutOfBudget) => "every interleaving out of budget",
                _ if std::mem::discriminant(&reduced) == std::mem::discriminant(&full) => "agree",
                _ => "DIFFER",
            };
            println!(
                "| {name} | {:.2} ms | {:.2} ms | {}{:.1}x | {} / {} ({agree}) |",
                reduced_time.as_secs_f64() * 1e3,
                full_time.as_secs_f64() * 1e3,
                if matches!(full, Verdict::OutOfBudget) { "over " } else { "" },
                full_time.as_secs_f64() / reduced_time.as_secs_f64().max(1e-9),
                verdict(&reduced),
                verdict(&full)
            );
        });
    }
    println!("\n(median of {runs} runs)");
}
