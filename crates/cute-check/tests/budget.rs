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
    let options = ExploreOptions { budget: Budget { max_states: 5_000, max_time: Duration::from_secs(60) }, full_expansion: true };
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
        ExploreOptions { budget: Budget { max_states: usize::MAX, max_time: Duration::from_millis(50) }, full_expansion: true };
    let start = Instant::now();
    let outcome = explore(&model, &options);
    match outcome.verdict {
        Verdict::Incomplete(reason) => assert!(reason.contains("time budget"), "{reason}"),
        other => panic!("expected an incomplete verdict, got {other:?}"),
    }
    assert!(start.elapsed() < Duration::from_secs(5), "took {:?}", start.elapsed());
}
