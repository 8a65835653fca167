//! Differential test against SPIN: the Promela export of a model, checked by
//! `spin -a`, `cc`, `./pan -a`, must report `errors: 0` exactly when
//! `explore` says the model is clean.
//!
//! Needs `spin` and `cc` on PATH. Without them the test is skipped with a
//! note, unless `CUTE_LSP_REQUIRE_SPIN=1`, in which case it fails.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use common::{model_to_rust, naive_deadlocks, random_protocol, seed_exchange, InitStyle};
use cute_check::explore::{explore, ExploreOptions, Verdict};
use cute_check::model::Model;
use cute_check::naive::{naive_verdict, NaiveVerdict};
use cute_check::promela::{spin_limits, to_promela, PromelaOptions};

/// Generated protocols checked with SPIN.
const GENERATED: usize = 40;

/// Fixture models cross-checked with SPIN have at most this many unreduced
/// states (SPIN needs seconds for them, not minutes).
const NAIVE_STATES_FOR_SPIN: usize = 200_000;

fn tools_available() -> Result<(), String> {
    for (tool, arg) in [("spin", "-V"), ("cc", "--version")] {
        match Command::new(tool).arg(arg).output() {
            Ok(o) if o.status.success() => {}
            Ok(o) => return Err(format!("`{tool} {arg}` failed: {}", String::from_utf8_lossy(&o.stderr))),
            Err(e) => return Err(format!("`{tool}` is not on PATH ({e})")),
        }
    }
    Ok(())
}

/// Whether SPIN can be used; panics when it is required and missing.
fn spin_ready() -> bool {
    match tools_available() {
        Ok(()) => true,
        Err(why) => {
            if std::env::var("CUTE_LSP_REQUIRE_SPIN").is_ok_and(|v| v == "1") {
                panic!("CUTE_LSP_REQUIRE_SPIN=1 but SPIN cannot run: {why} (install it with `apt-get install spin`)");
            }
            eprintln!("note: skipping the SPIN differential test: {why}; set CUTE_LSP_REQUIRE_SPIN=1 to make this a failure");
            false
        }
    }
}

#[derive(Debug)]
struct PanResult {
    errors: u64,
    states: u64,
    output: String,
}

fn run(cmd: &mut Command, dir: &Path) -> Result<String, String> {
    let out = cmd.current_dir(dir).output().map_err(|e| format!("{cmd:?}: {e}"))?;
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if !out.status.success() {
        return Err(format!("{cmd:?} failed in {}:\n{text}", dir.display()));
    }
    Ok(text)
}

/// `spin -a`, `cc`, `./pan -a` on the export of `model`, in `dir`.
fn spin_check(model: &Model, dir: &Path) -> Result<PanResult, String> {
    spin_limits(model)?;
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("model.pml"), to_promela(model, &PromelaOptions::default())).map_err(|e| e.to_string())?;
    run(Command::new("spin").args(["-a", "model.pml"]), dir)?;
    // -O0: these models are small, and compiling pan.c dominates the time.
    run(Command::new("cc").args(["-O0", "-DVECTORSZ=4096", "-o", "pan", "pan.c"]), dir)?;
    // pan exits 0 whether or not it finds errors.
    let output = run(Command::new("./pan").args(["-a", "-m100000", "-w20"]), dir)?;
    if output.contains("max search depth too small") {
        return Err(format!("pan did not search exhaustively:\n{output}"));
    }
    if output.contains("out of memory") {
        return Err(format!("pan ran out of memory:\n{output}"));
    }
    let number_before = |marker: &str| -> Option<u64> {
        let line = output.lines().find(|l| l.contains(marker))?;
        let head = &line[..line.find(marker)?];
        head.split_whitespace().last()?.parse().ok()
    };
    let errors = output
        .lines()
        .find_map(|l| l.split("errors:").nth(1))
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| format!("no `errors:` line in pan's output:\n{output}"))?;
    let states = number_before("states, stored").unwrap_or(0);
    Ok(PanResult { errors, states, output })
}

struct Case {
    name: String,
    model: Model,
    /// What the oracle says, where it was asked.
    naive_deadlock: Option<bool>,
}

/// Check every case with SPIN, in `label`'s own temporary directory.
fn check_cases(label: &str, cases: Vec<Case>) {
    let root: PathBuf = std::env::temp_dir().join(format!("cute-check-spin-{}-{label}", std::process::id()));
    let queue = Mutex::new(cases.into_iter().enumerate().collect::<Vec<_>>());
    let failures: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let summary: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 4);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let Some((i, case)) = queue.lock().unwrap().pop() else { break };
                let dir = root.join(format!("{i:03}-{}", case.name));
                let outcome = explore(&case.model, &ExploreOptions::default());
                let ours = match &outcome.verdict {
                    Verdict::Clean if outcome.hazards.is_empty() => "clean",
                    Verdict::Clean => "hazard",
                    Verdict::Deadlock(_) => "deadlock",
                    Verdict::Incomplete(_) => "incomplete",
                };
                let result = spin_check(&case.model, &dir);
                let fail = |why: String| {
                    failures.lock().unwrap().push(format!("{}: {why}\nmodel:\n{}", case.name, model_to_rust(&case.model)));
                };
                if let Some(naive) = case.naive_deadlock {
                    if naive != (ours == "deadlock") {
                        fail(format!("explore says {ours}, naive deadlock = {naive}"));
                    }
                }
                match result {
                    Err(e) => fail(format!("SPIN did not run: {e}")),
                    Ok(pan) => {
                        // A deadlock is an acceptance cycle of the claim, a
                        // hazard an assertion violation.
                        let kind_matches = match ours {
                            "deadlock" => pan.output.contains("acceptance cycle"),
                            "hazard" => pan.output.contains("assertion violated"),
                            _ => true,
                        };
                        if (pan.errors == 0) != (ours == "clean") || !kind_matches {
                            fail(format!("explore says {ours}, SPIN reports {} error(s):\n{}", pan.errors, pan.output));
                        } else {
                            summary.lock().unwrap().push(format!(
                                "{:<28} explore {:<8} ({:>5} states)  SPIN errors: {} ({:>7} states)",
                                case.name, ours, outcome.states, pan.errors, pan.states
                            ));
                            let _ = std::fs::remove_dir_all(&dir);
                        }
                    }
                }
            });
        }
    });
    let mut summary = summary.into_inner().unwrap();
    summary.sort();
    for line in &summary {
        eprintln!("{line}");
    }
    let failures = failures.into_inner().unwrap();
    if failures.is_empty() {
        let _ = std::fs::remove_dir_all(&root);
    }
    assert!(failures.is_empty(), "{} disagreement(s) with SPIN (files kept in {}):\n{}", failures.len(), root.display(), failures.join("\n"));
}

#[test]
fn spin_agrees_on_seed_exchange_and_generated_protocols() {
    if !spin_ready() {
        return;
    }
    let mut cases = Vec::new();
    for threads in [2, 3] {
        for bug in [false, true] {
            let model = seed_exchange(threads, 3, bug);
            cases.push(Case {
                name: format!("seed_2x{threads}x3{}", if bug { "_bug" } else { "" }),
                naive_deadlock: naive_deadlocks(&model, 5_000_000),
                model,
            });
        }
    }
    // Generated protocols without initialisation races (SPIN stops at the
    // first assertion, the oracle at the first deadlock: only hazard-free
    // models have one meaning for both), half clean and half deadlocking.
    let (mut clean, mut deadlock) = (0, 0);
    for seed in 0.. {
        if clean + deadlock == GENERATED {
            break;
        }
        let generated = random_protocol(seed);
        if generated.init == InitStyle::Raw || generated.model.thread_count() > 8 {
            continue;
        }
        let Some(naive) = naive_deadlocks(&generated.model, 200_000) else { continue };
        let slot = if naive { &mut deadlock } else { &mut clean };
        if *slot == GENERATED / 2 {
            continue;
        }
        *slot += 1;
        cases.push(Case { name: format!("random_{seed}"), model: generated.model, naive_deadlock: Some(naive) });
    }
    // A few with a race against initialisation: SPIN's assertion must fire
    // where the oracle reaches a hazard.
    let mut hazards = 0;
    for seed in 0.. {
        if hazards == GENERATED / 10 {
            break;
        }
        let generated = random_protocol(seed);
        if generated.init != InitStyle::Raw || generated.model.thread_count() > 8 {
            continue;
        }
        if naive_verdict(&generated.model, 200_000) == NaiveVerdict::Hazard {
            hazards += 1;
            cases.push(Case { name: format!("random_{seed}_hazard"), model: generated.model, naive_deadlock: Some(false) });
        }
    }
    check_cases("generated", cases);
}

/// The model `cute-lsp check` builds for a kernel (base scenario), as in
/// `cute_lint::analysis::check_kernel`. Integer parameters of the launch
/// above 3 (iteration counts such as `N_ITERS = 30`) are lowered to 3 when
/// that keeps the verdict, so that SPIN finishes in a second or two.
fn fixture_models(path: &Path) -> Vec<(String, Model)> {
    use cute_check::{instantiate, InstantiateOptions, Scenario};
    use cute_ir::eval::Value;
    let text = std::fs::read_to_string(path).unwrap();
    let module = cute_ir::lower_text(&text).unwrap();
    let mut out = Vec::new();
    for kernel in module.kernels() {
        let slice = cute_ir::slice_kernel(&module, kernel, &text);
        let kept = slice.kept_ids();
        let launch = cute_ir::launch::resolve_launch(&module, kernel);
        let build = |launch: &cute_ir::launch::Launch| {
            instantiate(&module, kernel, &kept, launch, &Scenario::new(), &InstantiateOptions::default()).model
        };
        let full = build(&launch);
        let mut small_launch = launch.clone();
        for v in small_launch.params.values_mut() {
            if matches!(v, Value::Int(n) if *n > 3) {
                *v = Value::Int(3);
            }
        }
        let small = build(&small_launch);
        let deadlocks = |m: &Model| common::explore_deadlocks(m);
        let model = if small.unresolved.is_empty() && deadlocks(&small) == deadlocks(&full) { small } else { full };
        if !model.groups.is_empty() && model.unresolved.is_empty() {
            out.push((kernel.display_name(), model));
        }
    }
    out
}

#[test]
fn spin_agrees_on_fixture_kernels() {
    if !spin_ready() {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for file in &files {
        for (kernel, model) in fixture_models(file) {
            let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
            let name = format!("{stem}.{}", kernel.replace('.', "_"));
            if spin_limits(&model).is_err() {
                eprintln!("note: {name}: too many threads for SPIN, skipped");
                continue;
            }
            // SPIN explores every thread's interleaving without reduction:
            // models the unreduced oracle cannot finish in a test's time are
            // left to the benchmark.
            let naive_deadlock = naive_deadlocks(&model, NAIVE_STATES_FOR_SPIN);
            if naive_deadlock.is_none() {
                eprintln!("note: {name}: more than {NAIVE_STATES_FOR_SPIN} unreduced states, skipped");
                continue;
            }
            cases.push(Case { name, naive_deadlock, model });
        }
    }
    assert!(cases.len() >= 20, "only {} of the kernels in {} fixture files are cross-checked", cases.len(), files.len());
    check_cases("fixtures", cases);
}

