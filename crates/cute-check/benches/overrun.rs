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

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cute_check::overrun::{generations_ordered, search, search_unreduced, Verdict};
use cute_check::{instantiate, Budget, InstantiateOptions, Scenario};
use cute_ir::launch::Launches;

const DEFAULT_DIRS: &[&str] = &["tests/fixtures/barrier_recycling", "tests/fixtures/named_barrier_deadlock", "tests/fixtures/pipeline"];

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn timed(runs: usize, mut f: impl FnMut() -> Verdict) -> (Duration, Verdict) {
    let mut times = Vec::with_capacity(runs);
    let mut last = Verdict::Clear;
    for _ in 0..runs {
        let started = Instant::now();
        last = f();
        times.push(started.elapsed());
    }
    (median(times), last)
}

fn verdict(v: &Verdict) -> &'static str {
    match v {
        Verdict::Clear => "clear",
        Verdict::Found(_) => "found",
        Verdict::OutOfBudget => "out of budget",
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut runs = 5;
    let mut files: Vec<PathBuf> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).expect("--runs N"),
            s if s.starts_with("--") => {}
            path => files.push(PathBuf::from(path)),
        }
    }
    if files.is_empty() {
        for dir in DEFAULT_DIRS {
            let mut found: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
                .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "py")).collect())
                .unwrap_or_default();
            found.sort();
            files.extend(found);
        }
    }
    let budget = Budget { max_states: 2_000_000, max_time: Duration::from_secs(20) };
    println!("| kernel | reduced | every interleaving | ratio | verdicts |");
    println!("|---|---:|---:|---:|---|");
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
            let kept = cute_ir::slice::slice_kernel(&module, kernel, &text).kept_ids();
            let model = instantiate(&module, kernel, &kept, &launch, &Scenario::new(), &InstantiateOptions::default()).model;
            // Only what the proof leaves to a search is searched for.
            if generations_ordered(&model) {
                continue;
            }
            let (reduced_time, reduced) = timed(runs, || search(&model, &budget));
            let (full_time, full) = timed(runs, || search_unreduced(&model, &budget));
            let name = format!("{}: `{}`", file.file_name().map_or_else(String::new, |f| f.to_string_lossy().into_owned()), kernel.display_name());
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
        }
    }
    println!("\n(median of {runs} runs)");
}
