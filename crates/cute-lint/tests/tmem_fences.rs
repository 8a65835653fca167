//! `missing-tmem-fence`: variants of the three fixture pairs that differ in
//! where the store fence stands (after the hand-off, before the stores, of
//! the wrong kind), in how the hand-off is spelled (a named barrier through
//! `cute.arch`, an arrive by every lane), in what the receiving warp does
//! (no tensor memory at all), and the loads the rule leaves alone.

use cute_lint::{analyze_text, AnalysisOptions, Diagnostic, Severity};

mod support;

fn fixture(name: &str) -> String {
    support::fixture(&format!("missing_tmem_fence/{name}"))
}

fn all(src: &str) -> Vec<Diagnostic> {
    analyze_text(src, &AnalysisOptions::default())
}

fn findings(src: &str) -> Vec<Diagnostic> {
    all(src).into_iter().filter(|d| d.name == "missing-tmem-fence").collect()
}

fn line_of(src: &str, d: &Diagnostic) -> String {
    let line = src[..d.range.start as usize].matches('\n').count();
    src.lines().nth(line).unwrap_or("").trim().to_string()
}

/// `text` replaced once, where it must be.
fn edit(src: &str, text: &str, with: &str) -> String {
    assert!(src.contains(text), "the fixture has {text:?}");
    src.replacen(text, with, 1)
}

/// The kernel is checked (nothing left incomplete) and gives no finding of
/// any rule.
fn assert_clean(src: &str, what: &str) {
    let d = all(src);
    assert!(d.is_empty(), "{what}: {d:#?}");
}

/// One finding of the rule, an error, on the line that starts with `at`,
/// with a trace from the store to the user.
fn assert_one_at(src: &str, at: &str, what: &str) -> Diagnostic {
    let found = findings(src);
    assert_eq!(found.len(), 1, "{what}: {found:#?}");
    let d = found.into_iter().next().unwrap();
    assert!(line_of(src, &d).starts_with(at), "{what}: at `{}`, not `{at}`", line_of(src, &d));
    assert_eq!(d.severity, Severity::Error, "{what}");
    assert!(d.related.len() >= 3, "{what}: the store, the hand-off and the use: {:#?}", d.related);
    assert!(d.related.iter().any(|r| r.message.contains("tcgen05.st")), "{what}: {:#?}", d.related);
    d
}

const STATS_FENCE: &str = "        # The stores land before the consumers load them.\n        cute.arch.fence_view_async_tmem_store()\n";

#[test]
fn the_fixtures_are_clean_and_their_bug_twins_are_found_at_the_hand_off() {
    for (clean, bug, at) in [
        ("preloaded_acc_clean.py", "preloaded_acc_bug.py", "cute.arch.mbarrier_arrive(acc_init)"),
        ("rescaled_acc_clean.py", "rescaled_acc_bug.py", "handle.release()"),
        ("stats_barrier_clean.py", "stats_barrier_bug.py", "stats_ready.arrive()"),
    ] {
        assert_clean(&fixture(clean), clean);
        let src = fixture(bug);
        let d = assert_one_at(&src, at, bug);
        assert!(d.message.contains("fence_view_async_tmem_store"), "{}", d.message);
        assert_eq!(d.fixes.len(), 1, "{bug}: one quick fix");
    }
}

#[test]
fn a_fence_after_the_hand_off_or_before_the_stores_does_not_cover_them() {
    let clean = fixture("stats_barrier_clean.py");
    // After the arrive: the consumers may already be loading.
    let late = edit(&clean, STATS_FENCE, "").replacen(
        "        stats_ready.arrive()\n",
        "        stats_ready.arrive()\n        cute.arch.fence_view_async_tmem_store()\n",
        1,
    );
    let d = assert_one_at(&late, "stats_ready.arrive()", "a fence after the arrive");
    assert!(d.message.contains("after the hand-off"), "says the fence is late: {}", d.message);
    // Before the stores: it waits for nothing.
    let early = edit(&clean, STATS_FENCE, "").replacen(
        "        cute.copy(r2t, tRT_rAcc, tRT_tAcc)\n",
        "        cute.arch.fence_view_async_tmem_store()\n        cute.copy(r2t, tRT_rAcc, tRT_tAcc)\n",
        1,
    );
    assert_one_at(&early, "stats_ready.arrive()", "a fence before the stores");
    // A load fence (`tcgen05.wait::ld`) does not wait for stores.
    let wrong_kind = edit(&clean, "cute.arch.fence_view_async_tmem_store()", "cute.arch.fence_view_async_tmem_load()");
    assert_one_at(&wrong_kind, "stats_ready.arrive()", "the load fence instead of the store fence");
}

#[test]
fn the_hand_off_is_found_whatever_carries_it() {
    // The named barrier through `cute.arch`: `bar.arrive` by the producers,
    // `bar.sync` by the consumers.
    let clean = fixture("stats_barrier_clean.py");
    let arch = edit(&clean, "        stats_ready.arrive()\n", "        cute.arch.barrier_arrive(barrier_id=2, number_of_threads=THREADS_PER_CTA)\n")
        .replacen("        stats_ready.arrive_and_wait()\n", "        cute.arch.barrier(barrier_id=2, number_of_threads=THREADS_PER_CTA)\n", 1);
    assert_clean(&arch, "cute.arch named barrier, fenced");
    let bug = edit(&arch, STATS_FENCE, "");
    assert_one_at(&bug, "cute.arch.barrier_arrive(", "cute.arch named barrier, no fence");
    // Every lane arrives on `acc_init` (128 arrivals) instead of one per warp.
    let clean = fixture("preloaded_acc_clean.py");
    let every_lane = edit(&clean, "cute.arch.mbarrier_init(acc_init, len(EPILOGUE_WARPS))", "cute.arch.mbarrier_init(acc_init, 32 * len(EPILOGUE_WARPS))")
        .replacen("        with cute.arch.elect_one():\n            cute.arch.mbarrier_arrive(acc_init)\n", "        cute.arch.mbarrier_arrive(acc_init)\n", 1);
    assert_clean(&every_lane, "every lane arrives, fenced");
    let bug = edit(&every_lane, "        cute.arch.fence_view_async_tmem_store()\n", "");
    let d = assert_one_at(&bug, "cute.arch.mbarrier_arrive(acc_init)", "every lane arrives, no fence");
    // The fix goes right before the arrive, no `elect_one` to step out of.
    let fix = &d.fixes[0];
    assert_eq!(fix.edits.len(), 1);
    let e = &fix.edits[0];
    let fixed = format!("{}{}{}", &bug[..e.range.start as usize], e.new_text, &bug[e.range.end as usize..]);
    assert!(fixed.contains("cute.arch.fence_view_async_tmem_store()\n        cute.arch.mbarrier_arrive(acc_init)"), "{}", e.new_text);
    assert!(findings(&fixed).is_empty(), "{:#?}", findings(&fixed));
}

#[test]
fn the_fix_steps_out_of_elect_one_and_comes_after_the_stores() {
    let src = fixture("rescaled_acc_bug.py");
    let d = assert_one_at(&src, "handle.release()", "the rescaled accumulator");
    let e = &d.fixes[0].edits[0];
    let fixed = format!("{}{}{}", &src[..e.range.start as usize], e.new_text, &src[e.range.end as usize..]);
    assert!(
        fixed.contains("cute.copy(r2t, tTR_rAcc, tRT_tAcc)\n        cute.arch.fence_view_async_tmem_store()\n        with cute.arch.elect_one():\n            handle.release()"),
        "outside the `with elect_one()` block, which the whole warp does not take: {}",
        e.new_text
    );
    assert_clean(&fixed, "the fixed kernel");
}

#[test]
fn a_store_nobody_receives_is_not_a_hand_off() {
    // The consumers write zeros instead of loading from tensor memory: the
    // barrier hands nothing in tensor memory to anyone.
    let bug = fixture("stats_barrier_bug.py");
    let src = edit(&bug, "        cute.copy(t2r, tTR_tAcc, tTR_rAcc)\n", "        tTR_rAcc.fill(0.0)\n");
    assert!(findings(&src).is_empty(), "{:#?}", findings(&src));
    // The MMA warp of the preloaded accumulator waits for `acc_init` but
    // issues no MMA after it on the tensor memory: nothing reads the store.
    // The epilogue warps' loads after `acc_full` come after every warp's
    // arrive, but each warp loads only its own quarter of the lanes (warp
    // `w`, lanes from `32 * (w % 4)`), the quarter it stored itself.
    let bug = fixture("preloaded_acc_bug.py");
    let src = edit(&bug, "                cute.gemm(tiled_mma, tCtAcc, tCrA[coord], tCrB[coord], tCtAcc)\n", "                pass\n");
    assert!(findings(&src).is_empty(), "{:#?}", findings(&src));
}

#[test]
fn loads_released_without_the_load_fence_are_not_judged() {
    // The second half of the rescaled accumulator: loaded, then released to
    // the MMA warp's tail with and without `fence_view_async_tmem_load()`.
    // The DSL's own epilogues release without it; the rule stays silent.
    let clean = fixture("rescaled_acc_clean.py");
    let src = edit(&clean, "        cute.arch.fence_view_async_tmem_load()\n", "");
    assert_clean(&src, "no load fence");
    // The first half's load has no fence of its own either way, and the
    // store fence after it completes only stores.
    assert!(findings(&clean).is_empty());
}

#[test]
fn a_copy_from_shared_memory_into_tensor_memory_is_no_store() {
    // `tcgen05.cp` (an S2T copy) reads shared memory: the issuing thread's
    // later `tcgen05` operations follow it in order, and a commit tracks it;
    // `tcgen05.wait::st` does not cover it.
    let bug = fixture("stats_barrier_bug.py");
    let staged = edit(
        &bug,
        "    storage = smem.allocate(SharedStorage)\n",
        "    storage = smem.allocate(SharedStorage)\n    sStage = smem.allocate_tensor(ACC_DTYPE, cute.make_layout((128, 32)), 16)\n",
    );
    let src = edit(&staged, "cute.copy(r2t, tRT_rAcc, tRT_tAcc)", "cute.copy(r2t, sStage, tRT_tAcc)");
    assert!(findings(&src).is_empty(), "from shared memory: {:#?}", findings(&src));
    // The same copy from registers is a store.
    assert_one_at(&staged, "stats_ready.arrive()", "from registers");
    // An S2T atom (`tcgen05.make_s2t_copy`) named as the package's examples name it.
    let src = staged.replace("r2t", "tiled_copy_s2t");
    assert!(findings(&src).is_empty(), "an S2T atom: {:#?}", findings(&src));
}
