//! `bulk-group-in-flight`: variants of the reused-tile fixture that differ in
//! how the stores' groups are waited for (the wait's count, a
//! `PipelineTmaStore`, no wait at all before the kernel ends).

use cute_lint::{analyze_text, AnalysisOptions, Diagnostic};

mod support;

fn fixture(name: &str) -> String {
    support::fixture(&format!("bulk_group_in_flight/{name}"))
}

fn findings(src: &str) -> Vec<Diagnostic> {
    analyze_text(src, &AnalysisOptions::default()).into_iter().filter(|d| d.name == "bulk-group-in-flight").collect()
}

fn line_of(src: &str, d: &Diagnostic) -> String {
    let line = src[..d.range.start as usize].matches('\n').count();
    src.lines().nth(line).unwrap_or("").trim().to_string()
}

const WAIT_ALL: &str = "cute.arch.cp_async_bulk_wait_group(0, read=True)";

#[test]
fn the_buffer_is_free_once_a_wait_covers_the_group_and_a_barrier_carries_it() {
    let clean = fixture("reused_tile_clean.py");
    assert!(findings(&clean).is_empty());
    // Without `read=True` the wait is for the whole store: the reads too.
    for wait in ["cute.arch.cp_async_bulk_wait_group(0)", "cute.arch.cp_async_bulk_wait_group(group=0, read=True)"] {
        assert!(findings(&clean.replace(WAIT_ALL, wait)).is_empty(), "{wait}");
    }
    // The wait, but no barrier after it: the other warps' writes race.
    let src = clean.replace("            cute.arch.cp_async_bulk_wait_group(0, read=True)\n        cute.arch.sync_threads()\n", "            cute.arch.cp_async_bulk_wait_group(0, read=True)\n");
    let found: Vec<Diagnostic> = findings(&src).into_iter().filter(|d| line_of(&src, d).starts_with("sout[row0 + i, col] =")).collect();
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].message.contains("warp 1") || found[0].message.contains("warp 2") || found[0].message.contains("warp 3"), "another warp: {}", found[0].message);
    assert!(found[0].related.len() >= 2, "a trace");
    // The wait before the store: it covers the groups before, not this one.
    let src = clean.replace(
        "            cute.copy(tma_atom, ssrc, gdst[(None, t)])\n            cute.arch.cp_async_bulk_commit_group()\n            # The tile is read: `sout` may be written again.\n            cute.arch.cp_async_bulk_wait_group(0, read=True)\n",
        "            cute.arch.cp_async_bulk_wait_group(0, read=True)\n            cute.copy(tma_atom, ssrc, gdst[(None, t)])\n            cute.arch.cp_async_bulk_commit_group()\n",
    );
    assert!(findings(&src).iter().any(|d| line_of(&src, d).starts_with("sout[row0 + i, col] =")), "{:#?}", findings(&src));
}

#[test]
fn a_thread_that_ends_with_stores_in_flight_is_reported_at_the_store() {
    let clean = fixture("reused_tile_clean.py");
    // Waiting inside the loop for all but the newest group leaves the last
    // store in flight at the end, and the reuse races as well.
    let src = clean.replace(WAIT_ALL, "cute.arch.cp_async_bulk_wait_group(1, read=True)");
    let at_store = findings(&src).into_iter().filter(|d| line_of(&src, d).starts_with("cute.copy(tma_atom, ssrc")).count();
    assert_eq!(at_store, 1, "{:#?}", findings(&src));
    // Never committed: no wait can cover the store.
    let src = clean.replace("            cute.arch.cp_async_bulk_commit_group()\n", "");
    let found = findings(&src);
    assert!(found.iter().any(|d| d.message.contains("never committed")), "{found:#?}");
}

#[test]
fn a_store_pipeline_waits_for_its_groups_in_producer_acquire() {
    let clean = fixture("reused_tile_clean.py");
    let with_pipeline = |acquire: &str| {
        clean
            .replace("import cutlass.cute as cute\n", "import cutlass.cute as cute\nimport cutlass.pipeline as pipeline\n")
            .replace(
                "    col = tidx % TILE\n",
                "    store_pipe = pipeline.PipelineTmaStore.create(\n        num_stages=1, producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32)\n    )\n    col = tidx % TILE\n",
            )
            .replace("            cute.arch.cp_async_bulk_commit_group()\n", "            store_pipe.producer_commit()\n")
            .replace(&format!("            # The tile is read: `sout` may be written again.\n            {WAIT_ALL}\n"), acquire)
    };
    let src = with_pipeline("            store_pipe.producer_acquire()\n");
    assert!(findings(&src).is_empty(), "{:#?}", findings(&src));
    let src = with_pipeline("");
    assert!(!findings(&src).is_empty(), "no acquire: the next tile's writes race with the store");
}
