//! The reduced explorer against the unreduced per-thread oracle
//! (`naive_verdict`) on a few hundred seeded random protocols and on the
//! hand-built two-CTA exchange.

mod common;

use common::{explore_deadlocks, model_to_rust, naive_deadlocks, random_protocol, seed_exchange, InitStyle};
use cute_check::explore::{explore, ExploreOptions, Verdict};
use cute_check::model::{Model, OpKind};
use cute_check::naive::{naive_verdict, NaiveVerdict};

const NAIVE_MAX_STATES: usize = 400_000;
/// Protocols per run; `CUTE_ORACLE_CASES` and `CUTE_ORACLE_FIRST_SEED`
/// widen the sweep.
fn cases() -> std::ops::Range<u64> {
    let get = |k: &str, d: u64| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d);
    let first = get("CUTE_ORACLE_FIRST_SEED", 0);
    first..first + get("CUTE_ORACLE_CASES", 400)
}

/// What disagrees between the two explorers on `model`, if anything.
fn disagreement(model: &Model) -> Option<String> {
    compare(model, naive_verdict(model, NAIVE_MAX_STATES))
}

fn compare(model: &Model, naive: NaiveVerdict) -> Option<String> {
    if matches!(naive, NaiveVerdict::Hazard | NaiveVerdict::TooBig) {
        return None;
    }
    let outcome = explore(model, &ExploreOptions::default());
    match (&outcome.verdict, naive) {
        (Verdict::Incomplete(why), _) => Some(format!("explore gave up ({why}); naive says {naive:?}")),
        (Verdict::Deadlock(_), NaiveVerdict::Deadlock) => None,
        (Verdict::Clean, NaiveVerdict::Clean) if outcome.hazards.is_empty() => None,
        (Verdict::Clean, NaiveVerdict::Clean) => Some(format!("explore reports a hazard ({:?}) the oracle does not reach", outcome.hazards[0].0)),
        (v, n) => Some(format!("explore says {}, naive says {n:?}", short(v))),
    }
}

fn short(v: &Verdict) -> &'static str {
    match v {
        Verdict::Clean => "Clean",
        Verdict::Deadlock(_) => "Deadlock",
        Verdict::Incomplete(_) => "Incomplete",
    }
}

/// Greedily shrink a model while `keep` still holds for it.
fn minimize(model: &Model, keep: &dyn Fn(&Model) -> bool) -> Model {
    let mut best = model.clone();
    loop {
        let mut candidates: Vec<Model> = Vec::new();
        for g in 0..best.groups.len() {
            let mut m = best.clone();
            m.groups.remove(g);
            candidates.push(m);
            if best.groups[g].threads.len() > 1 {
                let mut m = best.clone();
                m.groups[g].threads.pop();
                candidates.push(m);
            }
            for i in 0..best.groups[g].ops.len() {
                let mut m = best.clone();
                m.groups[g].ops.remove(i);
                if m.groups[g].ops.is_empty() {
                    m.groups.remove(g);
                }
                candidates.push(m);
                let mut m = best.clone();
                match &mut m.groups[g].ops[i].kind {
                    OpKind::Arrive { count, .. } | OpKind::Init { count, .. } if *count > 1 => {
                        *count -= 1;
                        candidates.push(m);
                    }
                    _ => {}
                }
            }
        }
        for b in 0..best.barriers.len() {
            if let Some(n) = best.barriers[b].preset_count.filter(|&n| n > 1) {
                let mut m = best.clone();
                m.barriers[b].preset_count = Some(n - 1);
                candidates.push(m);
            }
        }
        match candidates.into_iter().find(|m| !m.groups.is_empty() && keep(m)) {
            Some(m) => best = m,
            None => return drop_unused_barriers(best),
        }
    }
}

fn drop_unused_barriers(mut model: Model) -> Model {
    let used = |m: &Model, b: u32| {
        m.groups.iter().flat_map(|g| g.ops.iter()).any(|op| match op.kind {
            OpKind::Init { bar, .. } | OpKind::Arrive { bar, .. } | OpKind::Wait { bar, .. } => bar == b,
        })
    };
    let mut b = model.barriers.len() as u32;
    while b > 0 {
        b -= 1;
        if !used(&model, b) {
            model.barriers.remove(b as usize);
            for op in model.groups.iter_mut().flat_map(|g| g.ops.iter_mut()) {
                match &mut op.kind {
                    OpKind::Init { bar, .. } | OpKind::Arrive { bar, .. } | OpKind::Wait { bar, .. } => {
                        if *bar > b {
                            *bar -= 1;
                        }
                    }
                }
            }
        }
    }
    model
}

#[test]
fn explore_agrees_with_naive_on_random_protocols() {
    let mut compared = 0;
    let (mut clean, mut deadlock, mut hazard, mut too_big) = (0, 0, 0, 0);
    let mut buggy_compared = 0;
    let mut failures = Vec::new();
    let cases = cases();
    let n = cases.end - cases.start;
    for seed in cases {
        let generated = random_protocol(seed);
        let model = &generated.model;
        let naive = naive_verdict(model, NAIVE_MAX_STATES);
        match naive {
            NaiveVerdict::Clean => clean += 1,
            NaiveVerdict::Deadlock => deadlock += 1,
            NaiveVerdict::Hazard => {
                hazard += 1;
                assert_eq!(generated.init, InitStyle::Raw, "seed {seed}: only raw initialisation may race");
                continue;
            }
            NaiveVerdict::TooBig => {
                too_big += 1;
                continue;
            }
        }
        compared += 1;
        if generated.bug.is_some() {
            buggy_compared += 1;
        }
        if let Some(why) = compare(model, naive) {
            let small = minimize(model, &|m| disagreement(m).is_some());
            let small_why = disagreement(&small).unwrap_or_default();
            eprintln!(
                "MISMATCH seed {seed} ({why}); bug injected: {:?}\nminimized ({small_why}):\n{}",
                generated.bug,
                model_to_rust(&small)
            );
            failures.push(seed);
        }
    }
    eprintln!(
        "{n} protocols: {compared} compared ({clean} clean, {deadlock} deadlock; {buggy_compared} with an injected bug), \
         {hazard} with a hazard, {too_big} too big for the oracle"
    );
    assert!(failures.is_empty(), "explore disagrees with naive on seeds {failures:?} (minimized models printed above)");
    // The generator must exercise both verdicts and stay in the oracle's reach.
    assert!(compared >= n as usize * 3 / 4, "only {compared} of {n} protocols compared");
    assert!(clean >= n / 8 && deadlock >= n / 8, "{clean} clean / {deadlock} deadlock: the generator is lopsided");
}

#[test]
fn explore_full_expansion_agrees_with_reduced_on_random_protocols() {
    // Counting symmetry alone (no persistent sets) must give the same verdict.
    for seed in 0..200 {
        let model = random_protocol(seed).model;
        let reduced = explore_deadlocks(&model);
        let full = match explore(&model, &ExploreOptions { full_expansion: true, ..Default::default() }).verdict {
            Verdict::Clean => Some(false),
            Verdict::Deadlock(_) => Some(true),
            Verdict::Incomplete(_) => None,
        };
        assert!(reduced.is_some() && full.is_some(), "seed {seed}: explore gave up");
        assert_eq!(reduced, full, "seed {seed}: reduced and full expansion differ\n{}", model_to_rust(&model));
    }
}

#[test]
fn seed_exchange_matches_naive() {
    // 2 CTAs x 4 threads x 3 iterations, both twins.
    let correct = seed_exchange(4, 3, false);
    let buggy = seed_exchange(4, 3, true);
    assert_eq!(naive_deadlocks(&correct, 5_000_000), Some(false));
    assert_eq!(naive_deadlocks(&buggy, 5_000_000), Some(true));
    assert_eq!(explore_deadlocks(&correct), Some(false));
    assert_eq!(explore_deadlocks(&buggy), Some(true));
    // The buggy twin passes with a single round: the parity only matters
    // from the second on.
    assert_eq!(naive_deadlocks(&seed_exchange(4, 1, true), 5_000_000), Some(false));
    assert_eq!(explore_deadlocks(&seed_exchange(4, 1, true)), Some(false));
}

#[test]
fn seed_exchange_small_sizes_match_naive() {
    for threads in 1..=3 {
        for iters in 1..=4 {
            for bug in [false, true] {
                let model = seed_exchange(threads, iters, bug);
                assert_eq!(
                    naive_deadlocks(&model, 5_000_000),
                    explore_deadlocks(&model),
                    "{threads} threads x {iters} iterations, bug {bug}"
                );
            }
        }
    }
}

#[test]
fn seed_exchange_at_real_size() {
    let correct = explore(&seed_exchange(128, 30, false), &ExploreOptions::default());
    assert!(matches!(correct.verdict, Verdict::Clean), "{:?}", short(&correct.verdict));
    let buggy = explore(&seed_exchange(128, 30, true), &ExploreOptions::default());
    assert!(matches!(buggy.verdict, Verdict::Deadlock(_)), "{:?}", short(&buggy.verdict));
}

#[test]
fn minimizer_keeps_the_property_and_shrinks() {
    // Shrink the first deadlocking buggy protocol while it still deadlocks.
    let generated = (0..).map(random_protocol).find(|g| g.bug.is_some() && naive_deadlocks(&g.model, NAIVE_MAX_STATES) == Some(true)).unwrap();
    let small = minimize(&generated.model, &|m| naive_deadlocks(m, NAIVE_MAX_STATES) == Some(true));
    assert_eq!(naive_deadlocks(&small, NAIVE_MAX_STATES), Some(true));
    assert_eq!(explore_deadlocks(&small), Some(true));
    assert!(small.op_count() <= generated.model.op_count() && small.thread_count() <= generated.model.thread_count());
    let code = model_to_rust(&small);
    assert!(code.starts_with("Model {") && code.contains("OpKind::"), "{code}");
}
