//! The seed's two-CTA exchange (hand-built, as in `tests/common`), correct
//! and with the hardcoded phase, at growing sizes: `explore` timed over
//! several runs, and with `--spin` the same model exported to Promela and
//! checked by SPIN through `scripts/bench_spin.sh`.
//!
//!   cargo bench -p cute-check --bench bench_seed -- [--spin] [--runs N]
//!       [--timeout SECONDS] [--sizes 4x3,5x3] [--out DIR]
//!
//! Prints a Markdown table. Timings are only comparable within one run.

#[path = "../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use cute_check::explore::{explore, ExploreOptions, Verdict};
use cute_check::promela::{spin_limits, to_promela, PromelaOptions};
use cute_check::Budget;

struct Config {
    spin: bool,
    runs: usize,
    timeout: u32,
    sizes: Vec<(u32, u32)>,
    out: PathBuf,
}

fn parse_args() -> Config {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = root.canonicalize().unwrap_or(root);
    let mut config = Config {
        spin: false,
        runs: 11,
        timeout: 300,
        sizes: vec![(4, 3), (5, 3), (6, 3), (128, 30)],
        out: root.join("target/bench-spin"),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--spin" => config.spin = true,
            "--runs" => config.runs = args.next().and_then(|v| v.parse().ok()).expect("--runs N"),
            "--timeout" => config.timeout = args.next().and_then(|v| v.parse().ok()).expect("--timeout SECONDS"),
            "--out" => config.out = PathBuf::from(args.next().expect("--out DIR")),
            "--sizes" => {
                config.sizes = args
                    .next()
                    .expect("--sizes 4x3,5x3")
                    .split(',')
                    .map(|s| {
                        let (t, i) = s.split_once('x').expect("size as THREADSxITERS");
                        (t.parse().expect("threads"), i.parse().expect("iterations"))
                    })
                    .collect()
            }
            // `cargo bench` passes `--bench`; ignore what is not ours.
            _ => {}
        }
    }
    config
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn fmt_duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 1e-3 {
        format!("{:.1} µs", s * 1e6)
    } else if s < 1.0 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{s:.2} s")
    }
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `key=value` pairs of the script's one line.
fn run_spin(script: &Path, model: &Path, timeout: u32) -> Vec<(String, String)> {
    let out = Command::new("bash").arg(script).arg(model).arg(timeout.to_string()).output();
    let text = match out {
        Ok(o) => String::from_utf8_lossy(&o.stdout).into_owned(),
        Err(e) => format!("status=error reason={}", e.to_string().replace(' ', "_")),
    };
    text.split_whitespace().filter_map(|kv| kv.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn main() {
    let config = parse_args();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/bench_spin.sh");
    std::fs::create_dir_all(&config.out).expect("create the output directory");
    let budget = Budget { max_states: 50_000_000, max_time: Duration::from_secs(600), ..Budget::default() };

    let mut header = "| threads/CTA x iters | twin | verdict | states | transitions | explore (median) |".to_string();
    let mut rule = "|---|---|---|---:|---:|---:|".to_string();
    if config.spin {
        header.push_str(" SPIN verdict | SPIN states | SPIN transitions | SPIN wall (spin+cc+pan) | pan time | SPIN memory | SPIN wall / explore |");
        rule.push_str("---|---:|---:|---:|---:|---:|---:|");
    }
    println!("{header}");
    println!("{rule}");

    for &(threads, iters) in &config.sizes {
        for bug in [false, true] {
            let model = common::seed_exchange(threads, iters, bug);
            let options = ExploreOptions { budget: budget.clone(), full_expansion: false };
            let mut times = Vec::new();
            let mut last = None;
            for _ in 0..config.runs.max(1) {
                let outcome = explore(&model, &options);
                times.push(outcome.elapsed);
                last = Some(outcome);
            }
            let outcome = last.unwrap();
            let verdict = match &outcome.verdict {
                Verdict::Clean => "clean".to_string(),
                Verdict::Deadlock(_) => "deadlock".to_string(),
                Verdict::Incomplete(why) => format!("incomplete ({why})"),
            };
            let ours = median(times);
            let twin = if bug { "hardcoded phase" } else { "correct" };
            let mut row = format!(
                "| 2 x {threads} x {iters} | {twin} | {verdict} | {} | {} | {} |",
                thousands(outcome.states as u64),
                thousands(outcome.transitions as u64),
                fmt_duration(ours)
            );

            let file = config.out.join(format!("seed_{threads}x{iters}{}.pml", if bug { "_bug" } else { "" }));
            std::fs::write(&file, to_promela(&model, &PromelaOptions::default())).expect("write the Promela model");

            if config.spin {
                if let Err(why) = spin_limits(&model) {
                    row.push_str(&format!(" cannot run: {why} | | | | | | |"));
                } else {
                    let kv = run_spin(&script, &file, config.timeout);
                    let get = |k: &str| kv.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone()).unwrap_or_else(|| "-".into());
                    let secs = |k: &str| get(k).parse::<f64>().ok();
                    match get("status").as_str() {
                        "ok" => {
                            let wall = secs("wall_s").unwrap_or(0.0);
                            let ratio = wall / ours.as_secs_f64().max(1e-9);
                            let states = get("states").parse::<u64>().map(thousands).unwrap_or_else(|_| get("states"));
                            let transitions = get("transitions").parse::<u64>().map(thousands).unwrap_or_else(|_| get("transitions"));
                            row.push_str(&format!(
                                " {} | {states} | {transitions} | {wall:.2} s | {:.2} s | {} MB | {} |",
                                get("verdict"),
                                secs("pan_s").unwrap_or(0.0),
                                get("rss_mb"),
                                thousands(ratio.round() as u64) + "x"
                            ));
                        }
                        "timeout" => {
                            let so_far = get("states_so_far");
                            row.push_str(&format!(
                                " did not finish in {} s | {} | | > {} s | | {} MB | > {}x |",
                                config.timeout,
                                if so_far == "-" { "-".to_string() } else { format!("> {so_far} (at the kill)") },
                                config.timeout,
                                match get("rss_mb").as_str() {
                                    "-" | "" => format!("> {}", get("pan_mem_mb")),
                                    rss => rss.to_string(),
                                },
                                thousands((config.timeout as f64 / ours.as_secs_f64().max(1e-9)).round() as u64)
                            ));
                        }
                        _ => row.push_str(&format!(" error: {} | | | | | | |", get("reason"))),
                    }
                }
            }
            println!("{row}");
        }
    }
    println!();
    println!("Promela models written to {}", config.out.display());
}
