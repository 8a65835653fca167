//! `cute.arch.store_async_dsmem` (`st.async` into a peer CTA's shared memory,
//! completing its bytes on the peer's mbarrier): variants of the fixture
//! kernels (`tests/fixtures/read_before_wait/st_async_exchange_*.py`,
//! `tests/fixtures/dsmem_race/st_async_*.py`) that differ in spelling (an
//! imported alias, keywords), in the peer (a ring of four CTAs chosen by rank
//! arithmetic), in the size of the store, and the forms that are not checked.

use cute_lint::{analyze_text, AnalysisOptions, Diagnostic};

fn fixture(path: &str) -> String {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/");
    std::fs::read_to_string(format!("{root}{path}")).expect("fixture")
}

fn check(src: &str) -> Vec<Diagnostic> {
    analyze_text(src, &AnalysisOptions::default())
}

/// The trimmed text of the line a diagnostic starts on.
fn line_of(src: &str, d: &Diagnostic) -> String {
    let line = src[..d.range.start as usize].matches('\n').count();
    src.lines().nth(line).unwrap_or_default().trim().to_string()
}

/// `from` replaced by `to`, which must occur.
fn edit(src: &str, from: &str, to: &str) -> String {
    assert!(src.contains(from), "not in the kernel: {from}");
    src.replace(from, to)
}

/// One finding of `rule`, on the line that starts with `line`, with a trace.
fn assert_one(src: &str, rule: &str, line: &str) {
    let diags = check(src);
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert_eq!(diags[0].name, rule, "{diags:#?}");
    assert!(line_of(src, &diags[0]).starts_with(line), "{} at: {}", diags[0].name, line_of(src, &diags[0]));
    assert!(!diags[0].related.is_empty(), "no trace: {diags:#?}");
}

fn assert_silent(src: &str) {
    let diags = check(src);
    assert!(diags.is_empty(), "{diags:#?}");
}

const CALL: &str = "cute.arch.store_async_dsmem(storage.recv.data_ptr() + tid, tid * 7 + rank, full, peer)";

#[test]
fn the_fixtures_spelled_through_an_imported_alias_and_keywords() {
    let clean = fixture("read_before_wait/st_async_exchange_clean.py");
    let bug = fixture("read_before_wait/st_async_exchange_bug.py");
    let alias = |src: &str| {
        let src = edit(src, "import cutlass.cute as cute\n", "import cutlass.cute as cute\nfrom cutlass.cute.arch import store_async_dsmem as st_async\n");
        edit(&src, CALL, "st_async(storage.recv.data_ptr() + tid, tid * 7 + rank, full, peer)")
    };
    let keywords = |src: &str| edit(src, CALL, "cute.arch.store_async_dsmem(peer_cta_rank=peer, mbar_ptr=full, value=tid, smem_ptr=storage.recv.data_ptr() + tid)");
    for spell in [alias, keywords] {
        assert_silent(&spell(&clean));
        assert_one(&spell(&bug), "read-before-wait", "early = recv[tid]");
    }
}

/// A ring of four CTAs: each stores into the next (`(rank + 1) % CLUSTER`)
/// and receives from the one before.
#[test]
fn a_ring_of_four_ctas_chosen_by_rank_arithmetic() {
    let ring = |src: &str| {
        let src = edit(src, "CLUSTER = 2", "CLUSTER = 4");
        edit(&src, "peer = 1 - rank", "peer = (rank + 1) % CLUSTER")
    };
    assert_silent(&ring(&fixture("read_before_wait/st_async_exchange_clean.py")));
    assert_one(&ring(&fixture("read_before_wait/st_async_exchange_bug.py")), "read-before-wait", "early = recv[tid]");
    // The stream, handing its row back to the CTA before it in the ring.
    let stream = |src: &str| {
        let src = ring(src);
        src.replace("cute.arch.mbarrier_arrive(empty, peer,", "cute.arch.mbarrier_arrive(empty, (rank + CLUSTER - 1) % CLUSTER,")
    };
    assert_silent(&stream(&fixture("dsmem_race/st_async_stream_clean.py")));
    // Without the hand-back a writer of the ring is paced by the CTA before
    // it, not by its reader: its stores of two rounds can land in one phase
    // of the reader's `full`, which the explorer finds before any race.
    assert_one(&stream(&fixture("dsmem_race/st_async_stream_bug.py")), "vacuous-wait", "cute.arch.mbarrier_wait(full,");
}

/// Two and four 32-bit values a store: 8 and 16 bytes a lane, which the
/// announcement must match.
#[test]
fn stores_of_two_and_four_values() {
    let clean = fixture("read_before_wait/st_async_exchange_clean.py");
    let bug = fixture("read_before_wait/st_async_exchange_bug.py");
    for (value, bytes) in [("(tid, rank)", 8), ("(tid, rank, tid, rank)", 16)] {
        let sized = |src: &str| {
            let src = edit(src, CALL, &format!("cute.arch.store_async_dsmem(storage.recv.data_ptr() + tid, {value}, full, peer)"));
            edit(&src, "mbarrier_arrive_and_expect_tx(full, WORDS * 4)", &format!("mbarrier_arrive_and_expect_tx(full, WORDS * {bytes})"))
        };
        assert_silent(&sized(&clean));
        assert_one(&sized(&bug), "read-before-wait", "early = recv[tid]");
        // Announcing 4 bytes a lane for stores of more: the phase's bytes
        // do not add up, which is not checked rather than guessed.
        let short = edit(&clean, CALL, &format!("cute.arch.store_async_dsmem(storage.recv.data_ptr() + tid, {value}, full, peer)"));
        let diags = check(&short);
        assert!(diags.len() == 1 && diags[0].name == "analysis-incomplete", "{diags:#?}");
        assert!(diags[0].message.contains("do not add up"), "{}", diags[0].message);
    }
}

/// The bytes are what orders the two CTAs: a CTA that stores into its peer
/// only after its own wait, which needs the peer's bytes, hangs with it.
#[test]
fn bytes_that_only_come_after_the_wait_they_complete_hang() {
    let src = fixture("read_before_wait/st_async_exchange_clean.py");
    let late = edit(&src, &format!("    {CALL}\n    cute.arch.mbarrier_wait(full, 0)\n"), &format!("    cute.arch.mbarrier_wait(full, 0)\n    {CALL}\n"));
    let diags = check(&late);
    assert!(diags.iter().any(|d| d.name == "deadlock"), "{diags:#?}");
    assert!(diags.iter().all(|d| d.name == "deadlock"), "{diags:#?}");
    // Every byte announced is counted: nothing is assumed of them, and the
    // hang is an error.
    assert!(diags.iter().all(|d| d.severity == cute_lint::Severity::Error && d.notes.iter().all(|n| !n.contains("assumed to arrive"))), "{diags:#?}");
}

/// `st.async` is performed in the generic proxy: the clearing stores need
/// a barrier that releases them before the peer's stores, and no proxy
/// fence. A relaxed cluster arrive orders them by timing only.
#[test]
fn generic_writes_before_the_store_need_a_release_and_no_proxy_fence() {
    let clean = fixture("dsmem_race/st_async_clear_clean.py");
    assert!(!clean.contains("fence_proxy") && !clean.contains("fence_view_async_shared"));
    assert_silent(&clean);
    let relaxed = edit(&clean, "    cute.arch.cluster_arrive()\n    cute.arch.cluster_wait()\n\n    if tid == 0:", "    cute.arch.cluster_arrive_relaxed()\n    cute.arch.cluster_wait()\n\n    if tid == 0:");
    assert_one(&relaxed, "scope-too-narrow", "cute.arch.cluster_arrive_relaxed()");
}

/// A peer rank computed at run time, or a pointer the analysis does not
/// know, leaves the kernel not checked, naming the call.
#[test]
fn forms_not_modelled_are_not_checked() {
    let src = fixture("read_before_wait/st_async_exchange_clean.py");
    for (from, to) in [
        (CALL, "cute.arch.store_async_dsmem(storage.recv.data_ptr() + tid, tid, full, out[0])"),
        (CALL, "cute.arch.store_async_dsmem(out.iterator + tid, tid, full, peer)"),
    ] {
        let variant = edit(&src, from, to);
        let diags = check(&variant);
        assert!(diags.len() == 1 && diags[0].name == "analysis-incomplete", "{to}: {diags:#?}");
        assert!(diags[0].message.contains("store_async_dsmem"), "{}", diags[0].message);
        assert!(line_of(&variant, &diags[0]).starts_with("cute.arch.store_async_dsmem("), "{}", line_of(&variant, &diags[0]));
    }
}
