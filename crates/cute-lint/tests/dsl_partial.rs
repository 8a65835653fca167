//! `functools.partial` of a callable of the CuTe DSL: cooperative groups
//! written as flash-attention writes them (`ThreadCooperativeGroup =
//! partial(pipeline.CooperativeGroup, pipeline.Agent.Thread)`) are the
//! groups written out, so a ring made with them is checked and its counts
//! are judged.

use cute_lint::{analyze_text, AnalysisOptions};

fn ring() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/pipeline/async_ring_clean.py");
    std::fs::read_to_string(path).unwrap()
}

fn names(src: &str) -> Vec<&'static str> {
    analyze_text(src, &AnalysisOptions::default()).iter().map(|d| d.name).collect()
}

const GROUPS: &str = "    producer_group = pipeline.CooperativeGroup(pipeline.Agent.Thread, NUM_PRODUCER_THREADS)\n    consumer_group = pipeline.CooperativeGroup(pipeline.Agent.Thread, NUM_CONSUMER_THREADS)\n";

fn with_groups(groups: &str) -> String {
    let src = ring();
    assert!(src.contains(GROUPS));
    src.replacen(GROUPS, groups, 1).replacen("import cutlass\n", "from functools import partial\n\nimport cutlass\n", 1)
}

#[test]
fn a_partial_of_cooperative_group_is_the_group() {
    assert_eq!(names(&ring()), Vec::<&str>::new());
    let partial = with_groups(
        "    ThreadCooperativeGroup = partial(pipeline.CooperativeGroup, pipeline.Agent.Thread)\n    producer_group = ThreadCooperativeGroup(NUM_PRODUCER_THREADS)\n    consumer_group = ThreadCooperativeGroup(NUM_CONSUMER_THREADS)\n",
    );
    assert_eq!(names(&partial), Vec::<&str>::new(), "checked in full and clean");
    // The size given by keyword, and bound by the partial itself.
    let keyword = with_groups(
        "    ThreadCooperativeGroup = partial(pipeline.CooperativeGroup, pipeline.Agent.Thread)\n    producer_group = ThreadCooperativeGroup(size=NUM_PRODUCER_THREADS)\n    consumer_group = partial(pipeline.CooperativeGroup, pipeline.Agent.Thread, NUM_CONSUMER_THREADS)()\n",
    );
    assert_eq!(names(&keyword), Vec::<&str>::new());
    // A count one short through the partial is still found.
    let short = with_groups(
        "    ThreadCooperativeGroup = partial(pipeline.CooperativeGroup, pipeline.Agent.Thread)\n    producer_group = ThreadCooperativeGroup(NUM_PRODUCER_THREADS)\n    consumer_group = ThreadCooperativeGroup(NUM_CONSUMER_THREADS - 32)\n",
    );
    let found = names(&short);
    assert!(!found.is_empty() && !found.contains(&"analysis-incomplete"), "{found:?}");
}
