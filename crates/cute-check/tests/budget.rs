//! A protocol too large for the budget ends in `Incomplete` with the reason,
//! quickly, never in a hang or a verdict it did not earn.

mod common;

use std::time::{Duration, Instant};

use cute_check::explore::{explore, Budget, ExploreOptions, Verdict};

#[test]
fn state_budget_gives_incomplete_with_the_reason() {
    // The exchange at full width without the reductions is far beyond 5,000
    // states.
    let model = common::seed_exchange(128, 30, false);
    let options = ExploreOptions { budget: Budget { max_states: 5_000, max_time: Duration::from_secs(60), ..Budget::default() }, full_expansion: true };
    let start = Instant::now();
    let outcome = explore(&model, &options);
    match outcome.verdict {
        Verdict::Incomplete(reason) => assert!(reason.contains("state budget"), "{reason}"),
        other => panic!("expected an incomplete verdict, got {other:?}"),
    }
    assert!(start.elapsed() < Duration::from_secs(10), "took {:?}", start.elapsed());
}

#[test]
fn time_budget_gives_incomplete_with_the_reason() {
    let model = common::seed_exchange(128, 30, false);
    let options =
        ExploreOptions { budget: Budget { max_states: usize::MAX, max_time: Duration::from_millis(50), ..Budget::default() }, full_expansion: true };
    let start = Instant::now();
    let outcome = explore(&model, &options);
    match outcome.verdict {
        Verdict::Incomplete(reason) => assert!(reason.contains("time budget"), "{reason}"),
        other => panic!("expected an incomplete verdict, got {other:?}"),
    }
    assert!(start.elapsed() < Duration::from_secs(5), "took {:?}", start.elapsed());
}

#[test]
fn memory_budget_gives_incomplete_with_the_reason() {
    // A megabyte holds some thousands of the exchange's states, far fewer
    // than it has without the reductions.
    let model = common::seed_exchange(128, 30, false);
    let options = ExploreOptions {
        budget: Budget { max_states: usize::MAX, max_time: Duration::from_secs(60), max_bytes: 1 << 20 },
        full_expansion: true,
    };
    let start = Instant::now();
    let outcome = explore(&model, &options);
    match outcome.verdict {
        Verdict::Incomplete(reason) => assert!(reason.contains("memory budget (1 MB)"), "{reason}"),
        other => panic!("expected an incomplete verdict, got {other:?}"),
    }
    assert!(outcome.states > 1_000 && outcome.states < 100_000, "{} states in a megabyte", outcome.states);
    assert!(start.elapsed() < Duration::from_secs(10), "took {:?}", start.elapsed());
    // With room, the same exploration goes past that.
    let roomy = ExploreOptions { budget: Budget { max_states: outcome.states * 4, max_bytes: 64 << 20, ..options.budget.clone() }, full_expansion: true };
    assert!(explore(&model, &roomy).states > outcome.states);
}
