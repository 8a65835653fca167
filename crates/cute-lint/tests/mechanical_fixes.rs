//! Quick fixes on variants of the fixtures that differ in shape: which
//! spellings and places get a fix, that the fix removes the finding (and
//! leaves no other), and the shapes that must get none.

use cute_lint::{analyze_text, AnalysisOptions, Diagnostic, Fix};

mod support;
use support::{fixture, apply, of_rule, replaced};

/// The one finding of `rule` in `src` and its one fix, applied: the fixed
/// text, with no finding of `rule` left in it.
fn fixed(src: &str, rule: &str) -> (Fix, String) {
    let found = of_rule(src, rule);
    assert_eq!(found.len(), 1, "{found:?}\n{src}");
    assert_eq!(found[0].fixes.len(), 1, "{:?}\n{src}", found[0]);
    let fix = found[0].fixes[0].clone();
    let out = apply(src, &fix);
    assert_eq!(of_rule(&out, rule), [], "{out}");
    (fix, out)
}

/// The one finding of `rule` in `src`, its fix titled `title` applied: the
/// fixed text, with no finding at all left in it.
fn fixed_by(src: &str, rule: &str, title: &str) -> String {
    let found = of_rule(src, rule);
    assert_eq!(found.len(), 1, "{found:?}\n{src}");
    let titles: Vec<&str> = found[0].fixes.iter().map(|f| f.title.as_str()).collect();
    let fix = found[0].fixes.iter().find(|f| f.title.contains(title)).unwrap_or_else(|| panic!("{titles:?}\n{src}"));
    let out = apply(src, fix);
    let left: Vec<Diagnostic> = analyze_text(&out, &AnalysisOptions::default());
    assert_eq!(left, [], "{out}");
    out
}

/// `src` with the one finding of `rule`, offered no fix.
fn no_fix(src: &str, rule: &str) {
    let found = of_rule(src, rule);
    assert_eq!(found.len(), 1, "{found:?}\n{src}");
    assert_eq!(found[0].fixes, [], "{src}");
}

const HOISTED: &str = "read_before_wait/hoisted_read_bug.py";
const HOISTED_READ: &str = "    acc = smat[row, 0] * vec[0]  # expect: read-before-wait\n";
const HOISTED_WAIT: &str = "    cute.arch.mbarrier_wait(tile_full, 0)\n";

#[test]
fn a_hoisted_read_gets_its_wait_moved_up_whatever_the_phase_is_called() {
    let text = fixture(HOISTED);
    let (fix, out) = fixed(&text, "read-before-wait");
    assert_eq!(fix.applicability, cute_lint::Applicability::Safe);
    assert!(out.contains(&format!("{HOISTED_WAIT}{HOISTED_READ}")), "{out}");
    assert_eq!(out.matches("mbarrier_wait(").count(), 1, "{out}");

    // A phase variable bound before the read, and the module spelled in full.
    let named = replaced(&text, "    # Start on the first column", "    tile_phase = 0\n    # Start on the first column");
    let named = replaced(&named, HOISTED_WAIT, "    cutlass.cute.arch.mbarrier_wait(tile_full, tile_phase)\n");
    let (_, out) = fixed(&named, "read-before-wait");
    assert!(out.contains(&format!("    cutlass.cute.arch.mbarrier_wait(tile_full, tile_phase)\n{HOISTED_READ}")), "{out}");

    // Statements that do not synchronize between the read and the wait are crossed.
    let apart = replaced(&text, HOISTED_WAIT, &format!("    v1 = vec[1]\n{HOISTED_WAIT}"));
    let (_, out) = fixed(&apart, "read-before-wait");
    assert!(out.contains(&format!("{HOISTED_WAIT}{HOISTED_READ}    v1 = vec[1]\n")), "{out}");
}

#[test]
fn no_wait_is_moved_over_what_it_depends_on() {
    let text = fixture(HOISTED);
    // The phase is bound between the read and the wait.
    let late_phase = replaced(&text, HOISTED_WAIT, "    tile_phase = 0\n    cute.arch.mbarrier_wait(tile_full, tile_phase)\n");
    no_fix(&late_phase, "read-before-wait");
    // A CTA barrier between them: the wait would move over it.
    let barrier = replaced(&text, HOISTED_WAIT, &format!("    cute.arch.sync_threads()\n{HOISTED_WAIT}"));
    no_fix(&barrier, "read-before-wait");
    // The wait in a branch of its own is not in the read's block.
    let branch = replaced(&text, HOISTED_WAIT, "    if row >= 0:\n        cute.arch.mbarrier_wait(tile_full, 0)\n");
    no_fix(&branch, "read-before-wait");
}

const PIPELINE: &str = "read_before_wait/tma_pipeline_bug.py";

#[test]
fn a_pipeline_read_in_a_loop_gets_consumer_wait_moved_up() {
    let text = fixture(PIPELINE);
    let read = "            acc = acc + stiles[lane, 0, state.index]  # expect: read-before-wait\n";
    let (_, out) = fixed(&text, "read-before-wait");
    assert!(out.contains(&format!("            pipe.consumer_wait(state)\n{read}")), "{out}");

    // The consumer's state under another name, with a try-wait token bound before the read.
    let renamed = text.replace("state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer", "cons = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer");
    let renamed = renamed.replace("stiles[lane, 0, state.index]", "stiles[lane, 0, cons.index]").replace("stiles[lane, c, state.index]", "stiles[lane, c, cons.index]");
    let renamed = renamed.replace("pipe.consumer_wait(state)", "pipe.consumer_wait(cons, token)").replace("pipe.consumer_release(state)\n            state.advance()", "pipe.consumer_release(cons)\n            cons.advance()");
    let renamed = replaced(&renamed, "            acc = acc + stiles[lane, 0, cons.index]", "            token = pipe.consumer_try_wait(cons)\n            acc = acc + stiles[lane, 0, cons.index]");
    let (_, out) = fixed(&renamed, "read-before-wait");
    assert!(out.contains("            token = pipe.consumer_try_wait(cons)\n            pipe.consumer_wait(cons, token)\n            acc = acc + stiles[lane, 0, cons.index]"), "{out}");

    // The token is taken between the read and the wait: nothing to move.
    let late_token = text.replace("pipe.consumer_wait(state)", "pipe.consumer_wait(state, token)");
    let late_token = replaced(&late_token, "            pipe.consumer_wait(state, token)", "            token = pipe.consumer_try_wait(state)\n            pipe.consumer_wait(state, token)");
    no_fix(&late_token, "read-before-wait");
}

const SPIN_WAIT: &str = "read_before_wait/primitives_cluster_tma_bug.py";
const SPIN_READ: &str = "    for k in cutlass.range_constexpr(TILE_K):\n        dst[tidx, k] = smem[tidx * TILE_K + k]  # expect: read-before-wait\n";
const SPIN: &str = "    while not prims.mbarrier_try_wait_parity(mbar, 0):\n        pass\n";

#[test]
fn a_spin_on_a_try_wait_after_the_read_moves_up_whole() {
    let text = fixture(SPIN_WAIT);
    let (fix, out) = fixed(&text, "read-before-wait");
    assert_eq!(fix.applicability, cute_lint::Applicability::Safe);
    assert!(out.contains(&format!("{SPIN}{SPIN_READ}")), "{out}");
    assert_eq!(out.matches("mbarrier_try_wait_parity(").count(), 1, "{out}");

    // Inside the branch of every warp, one level deeper.
    let nested = replaced(&text, &format!("{SPIN_READ}{SPIN}"), &format!("    if tidx >= 0:\n{}{}", SPIN_READ.replace("\n    ", "\n        ").replacen("    for", "        for", 1), SPIN.replace("\n    ", "\n        ").replacen("    while", "        while", 1)));
    let (_, out) = fixed(&nested, "read-before-wait");
    assert!(out.contains("    if tidx >= 0:\n        while not prims.mbarrier_try_wait_parity(mbar, 0):\n            pass\n        for k in"), "{out}");

    // A spin that does more than wait is not the wait alone: nothing to move.
    let busy = replaced(&text, SPIN, "    while not prims.mbarrier_try_wait_parity(mbar, 0):\n        dst[tidx, 0] = 0\n");
    no_fix(&busy, "read-before-wait");
}

const ST_ASYNC_EXCHANGE: &str = "read_before_wait/st_async_exchange_bug.py";
const EARLY_READ: &str = "    early = recv[tid]  # expect: read-before-wait\n";
const EXCHANGE_WAIT: &str = "    cute.arch.mbarrier_wait(full, 0)\n";

#[test]
fn a_read_of_words_a_peer_stores_gets_the_readers_first_wait_moved_up() {
    let text = fixture(ST_ASYNC_EXCHANGE);
    let (fix, out) = fixed(&text, "read-before-wait");
    assert_eq!(fix.applicability, cute_lint::Applicability::Safe);
    assert!(out.contains(&format!("{EXCHANGE_WAIT}{EARLY_READ}")), "{out}");

    // A cluster barrier between the read and the wait: the wait would move over it.
    let barrier = replaced(&text, &format!("{EARLY_READ}{EXCHANGE_WAIT}"), &format!("{EARLY_READ}    cute.arch.sync_threads()\n{EXCHANGE_WAIT}"));
    no_fix(&barrier, "read-before-wait");
}

const WRONG_BARRIER: &str = "read_before_wait/wrong_barrier_bug.py";

#[test]
fn a_wait_on_the_wrong_barrier_is_followed_by_one_on_the_copys() {
    let text = fixture(WRONG_BARRIER);
    let (fix, out) = fixed(&text, "read-before-wait");
    assert_eq!(fix.applicability, cute_lint::Applicability::Unsafe);
    assert!(out.contains("    cute.arch.mbarrier_wait(a_full, 0)  # meant: B has landed\n    cute.arch.mbarrier_wait(b_full, 0)\n"), "{out}");

    // The phase passed by keyword in the kernel's wait.
    let keyword = replaced(&text, "    cute.arch.mbarrier_wait(a_full, 0)  # meant", "    cute.arch.mbarrier_wait(a_full, phase=0)  # meant");
    let (_, out) = fixed(&keyword, "read-before-wait");
    assert!(out.contains("    cute.arch.mbarrier_wait(b_full, phase=0)\n"), "{out}");

    // The copy names its barrier by an expression, not a variable bound
    // once: which barrier it is, no name in scope says.
    let expression = replaced(&text, "tma_bar_ptr=b_full", "tma_bar_ptr=storage.b_full.data_ptr()");
    no_fix(&expression, "read-before-wait");
    let rebound = replaced(&text, "    col = tidx % TILE\n", "    col = tidx % TILE\n    b_full = a_full\n");
    if of_rule(&rebound, "read-before-wait").len() == 1 {
        no_fix(&rebound, "read-before-wait");
    }
}

const COUNT_SHORT: &str = "arrive_count_mismatch/count_short_bug.py";
const GUARDED_ARRIVE: &str = "        if warp < 3:\n            arch.mbarrier_arrive(bar)\n";

/// Lowering the count to the 96 arrivals would let warps 0..2 run phases
/// ahead of warp 3, which waits without arriving: the arrive it skips is
/// what is missing, and the fix takes it out of its `if`.
#[test]
fn a_count_short_by_a_waiter_that_does_not_arrive_gets_the_arrive_not_the_count() {
    let text = fixture(COUNT_SHORT);
    let found = of_rule(&text, "arrive-count-mismatch");
    let titles: Vec<&str> = found[0].fixes.iter().map(|f| f.title.as_str()).collect();
    assert!(titles.iter().all(|t| !t.contains("initialise")), "{titles:?}");
    let out = fixed_by(&text, "arrive-count-mismatch", "take the arrive out of its `if`");
    assert!(out.contains("        buf[half + tidx] = val\n        arch.mbarrier_arrive(bar)\n        arch.mbarrier_wait(bar, phase)\n"), "{out}");

    // The `if` holds more than the arrive: nothing to take out, and no count holds.
    let busy = replaced(&text, GUARDED_ARRIVE, "        if warp < 3:\n            arch.mbarrier_arrive(bar)\n            val = val + 1.0\n");
    no_fix(&busy, "arrive-count-mismatch");
    // An `else` beside the arrive: taking the `if` away would run it too.
    let other = replaced(&text, GUARDED_ARRIVE, "        if warp < 3:\n            arch.mbarrier_arrive(bar)\n        else:\n            val = val + 1.0\n");
    no_fix(&other, "arrive-count-mismatch");
}

/// Where every waiting thread arrives too, the count the arrivals make is
/// the repair, whatever the count is written as.
#[test]
fn a_wrong_count_where_every_waiter_arrives_gets_the_count() {
    let text = fixture(COUNT_SHORT);
    let all = replaced(&text, GUARDED_ARRIVE, "        arch.mbarrier_arrive(bar)\n");
    for count in ["2 * NUM_THREADS", "256", "cnt=256"] {
        let src = replaced(&all, "arch.mbarrier_init(bar, NUM_THREADS)", &format!("arch.mbarrier_init(bar, {count})"));
        let out = fixed_by(&src, "arrive-count-mismatch", "initialise `bar` with 128 arrivals");
        assert!(out.contains("arch.mbarrier_init(bar, 128)") || out.contains("arch.mbarrier_init(bar, cnt=128)"), "{out}");
    }
}

const HOISTED_CLEAN: &str = "read_before_wait/hoisted_read_clean.py";

/// A first wait written with the literal parity 1 waits for phase 0
/// instead, wherever the literal is spelled; in a loop, the literal is not
/// the first wait's alone, and no fix is offered.
#[test]
fn a_first_wait_on_the_literal_parity_1_waits_for_phase_0() {
    let text = fixture(HOISTED_CLEAN);
    for (wait, fixed_wait) in [
        ("    cute.arch.mbarrier_wait(tile_full, 1)\n", "    cute.arch.mbarrier_wait(tile_full, 0)\n"),
        ("    cute.arch.mbarrier_wait(tile_full, phase=1)\n", "    cute.arch.mbarrier_wait(tile_full, phase=0)\n"),
        ("    while not cute.arch.mbarrier_try_wait(tile_full, 1):\n        pass\n", "    while not cute.arch.mbarrier_try_wait(tile_full, 0):\n"),
    ] {
        let src = replaced(&text, HOISTED_WAIT, wait);
        let out = fixed_by(&src, "vacuous-wait", "phase 0");
        assert!(out.contains(fixed_wait), "{out}");
    }
    let looped = replaced(&text, HOISTED_WAIT, "    for _ in cutlass.range_constexpr(1):\n        cute.arch.mbarrier_wait(tile_full, 1)\n");
    let found = of_rule(&looped, "vacuous-wait");
    assert_eq!(found.len(), 1, "{looped}");
    assert_eq!(found[0].fixes, [], "{looped}");
}

const STALE_TOKEN: &str = "pipeline/try_wait_stale_token_bug.py";
const TOKEN_THEN_ADVANCE: &str = "            peek = ring_pipe.consumer_try_wait(cons_state)\n            cons_state.advance()\n";

/// A try-wait token taken just before the state advances trades places
/// with the advance, whatever the names; with anything between the two, no
/// fix is offered.
#[test]
fn a_stale_token_is_taken_after_the_advance() {
    let text = fixture(STALE_TOKEN);
    let out = fixed_by(&text, "vacuous-wait", "after `cons_state.advance()`");
    assert!(out.contains("            cons_state.advance()\n            peek = ring_pipe.consumer_try_wait(cons_state)\n"), "{out}");

    let renamed = text.replace("peek", "ready").replace("cons_state", "read_state");
    let out = fixed_by(&renamed, "vacuous-wait", "after `read_state.advance()`");
    assert!(out.contains("            read_state.advance()\n            ready = ring_pipe.consumer_try_wait(read_state)\n"), "{out}");

    let between = replaced(&text, TOKEN_THEN_ADVANCE, "            peek = ring_pipe.consumer_try_wait(cons_state)\n            acc = acc + 1.0\n            cons_state.advance()\n");
    no_fix(&between, "vacuous-wait");
}

const NO_BACK_PRESSURE: &str = "barrier_recycling/no_back_pressure_bug.py";
const PRODUCER_ARRIVE: &str = "            cute.arch.barrier_arrive(barrier_id=FULL, number_of_threads=NUM_THREADS)  # expect: barrier-recycling\n";
const CONSUMER_SYNC: &str = "            cute.arch.barrier(barrier_id=FULL, number_of_threads=NUM_THREADS)\n";

/// A `barrier_arrive` producer that loops ahead of its consumers is held
/// back on a free id, whatever the arguments are written as; where the
/// consumer's barrier is not right in its loop's body, no fix is offered.
#[test]
fn a_producer_without_back_pressure_is_held_back_on_a_free_id() {
    let text = fixture(NO_BACK_PRESSURE);
    let out = fixed_by(&text, "barrier-recycling", "barrier 2");
    assert!(out.contains(&format!("{PRODUCER_ARRIVE}            cute.arch.barrier(barrier_id=2, number_of_threads=NUM_THREADS)\n")), "{out}");
    assert!(out.contains("            y[k * HALF + c] = tile[c]\n            cute.arch.barrier_arrive(barrier_id=2, number_of_threads=NUM_THREADS)\n"), "{out}");

    // The keywords in the other order, literals, and an id past the one the fixture leaves free.
    let literal = replaced(&text, PRODUCER_ARRIVE, "            cute.arch.barrier_arrive(number_of_threads=256, barrier_id=3)\n");
    let literal = replaced(&literal, CONSUMER_SYNC, "            cute.arch.barrier(number_of_threads=256, barrier_id=3)\n");
    let out = fixed_by(&literal, "barrier-recycling", "barrier 4");
    assert!(out.contains("            cute.arch.barrier_arrive(number_of_threads=256, barrier_id=3)\n            cute.arch.barrier(barrier_id=4, number_of_threads=256)\n"), "{out}");

    let nested = replaced(&text, CONSUMER_SYNC, "            if c >= 0:\n                cute.arch.barrier(barrier_id=FULL, number_of_threads=NUM_THREADS)\n");
    no_fix(&nested, "barrier-recycling");
}

#[test]
fn a_parity_flipped_on_every_turn_of_a_ring_is_flipped_on_the_wrap() {
    // An odd number of stages laps the waits (`vacuous-wait`); an even one
    // waits on each barrier with one parity only (`untoggled-phase`). Both
    // get the same fix.
    let rule_for = |src: &str| if src.contains("STAGES = 2") || src.contains("STAGES = 4") { "untoggled-phase" } else { "vacuous-wait" };
    let bug = fixture("vacuous_wait/ring_flip_bug.py");
    for stages in ["STAGES = 3", "STAGES = 2", "STAGES = 4", "STAGES = 5"] {
        let src = bug.replace("STAGES = 3", stages);
        let out = fixed_by(&src, rule_for(&src), "only when `stage` wraps to 0");
        assert!(out.contains("            if stage == 0:\n                phase ^= 1\n        out[lane] = acc"), "{stages}: {out}");
    }
    // Other names, another flip, the barrier given by keyword.
    let renamed = bug.replace("stage", "slot").replace("phase", "par");
    let renamed = replaced(&renamed, "            par ^= 1\n        out[lane]", "            par = 1 - par\n        out[lane]");
    let renamed = replaced(&renamed, "arch.mbarrier_wait(full + slot, par)", "arch.mbarrier_wait(mbar_ptr=full + slot, phase=par)");
    let out = fixed_by(&renamed, rule_for(&renamed), "only when `slot` wraps to 0");
    assert!(out.contains("            if slot == 0:\n                par = 1 - par\n"), "{out}");
}

#[test]
fn a_flip_the_fix_cannot_place_under_the_wrap_gets_no_fix() {
    let bug = fixture("vacuous_wait/ring_flip_bug.py");
    // The flip before the advance: under `if stage == 0:` it would flip at
    // the wrong turn.
    let before = replaced(
        &bug,
        "            stage = (stage + 1) % STAGES\n            phase ^= 1\n        out[lane]",
        "            phase ^= 1\n            stage = (stage + 1) % STAGES\n        out[lane]",
    );
    no_fix(&before, "vacuous-wait");
    // The stage advanced in two places.
    let twice = replaced(&bug, "            acc = acc + buf[stage * LANES + lane]\n", "            acc = acc + buf[stage * LANES + lane]\n            if acc > 1.0:\n                stage = (stage + 1) % STAGES\n");
    let found = of_rule(&twice, "vacuous-wait");
    assert!(found.iter().all(|d| d.fixes.is_empty()), "{found:?}");
}

const GROUP_COUNT: &str = "pipeline/group_count_bug.py";
const DECLARED_GROUP: &str = "    consumer_group = pipeline.CooperativeGroup(pipeline.Agent.Thread, DECLARED_CONSUMER_THREADS)\n";

/// A pipeline's `create` initialises `empty[i]` with its consumer group's
/// size: the fix rewrites that size, where the group is written (the
/// assignment of the name passed, or the `create` call itself), in the
/// group's agent, whatever the size is written as.
#[test]
fn a_pipeline_group_of_the_wrong_size_gets_the_size_the_arrivals_make() {
    let text = fixture(GROUP_COUNT);
    let (fix, out) = fixed(&text, "arrive-count-mismatch");
    assert_eq!(fix.applicability, cute_lint::Applicability::Unsafe);
    assert!(fix.title.contains("`empty[0] of mbar` with 96 arrivals"), "{}", fix.title);
    assert!(out.contains("    consumer_group = pipeline.CooperativeGroup(pipeline.Agent.Thread, 96)\n"), "{out}");
    assert!(out.contains("NUM_CONSUMER_THREADS = 96\nDECLARED_CONSUMER_THREADS = 64"), "the constant is left alone: {out}");

    for (group, expect) in [
        // A keyword size, a literal, an expression.
        ("pipeline.CooperativeGroup(pipeline.Agent.Thread, size=64)", "pipeline.CooperativeGroup(pipeline.Agent.Thread, size=96)"),
        ("pipeline.CooperativeGroup(pipeline.Agent.Thread, 2 * 32)", "pipeline.CooperativeGroup(pipeline.Agent.Thread, 96)"),
        // Counted in warps: the three consumer warps.
        ("pipeline.CooperativeGroup(pipeline.Agent.Warp, 2)", "pipeline.CooperativeGroup(pipeline.Agent.Warp, 3)"),
        ("pipeline.CooperativeGroup(pipeline.Agent.Warp)", "pipeline.CooperativeGroup(pipeline.Agent.Warp, 3)"),
    ] {
        let src = replaced(&text, DECLARED_GROUP, &format!("    consumer_group = {group}\n"));
        let (_, out) = fixed(&src, "arrive-count-mismatch");
        assert!(out.contains(&format!("    consumer_group = {expect}\n")), "{group}: {out}");
    }

    // The group written in the `create` call.
    let inline = replaced(&text, DECLARED_GROUP, "");
    let inline = replaced(&inline, "        consumer_group=consumer_group,\n", "        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, DECLARED_CONSUMER_THREADS),\n");
    let (_, out) = fixed(&inline, "arrive-count-mismatch");
    assert!(out.contains("        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 96),\n"), "{out}");

    // Two consumer warps, not three: the count follows the arrivals.
    let two = replaced(&text, "NUM_CONSUMER_THREADS = 96\nDECLARED_CONSUMER_THREADS = 64", "NUM_CONSUMER_THREADS = 64\nDECLARED_CONSUMER_THREADS = 96");
    let (fix, out) = fixed(&two, "arrive-count-mismatch");
    assert!(fix.title.contains("with 64 arrivals"), "{}", fix.title);
    assert!(out.contains("    consumer_group = pipeline.CooperativeGroup(pipeline.Agent.Thread, 64)\n"), "{out}");
}

/// A group passed to another pipeline too keeps its size there: the group
/// is written anew, in threads, in the `create` call of the pipeline whose
/// count is wrong; as it is where the count is not whole warps of a group
/// counted in warps.
#[test]
fn a_shared_or_partial_warp_group_is_written_anew_in_the_call() {
    let text = fixture(GROUP_COUNT);
    let shared = replaced(&text, "    producer_group = pipeline.CooperativeGroup(pipeline.Agent.Thread, NUM_PRODUCER_THREADS)\n", "");
    let shared = replaced(&shared, DECLARED_GROUP, "    consumer_group = pipeline.CooperativeGroup(pipeline.Agent.Thread, DECLARED_CONSUMER_THREADS)\n    other_group = consumer_group\n");
    let shared = replaced(&shared, "        producer_group=producer_group,\n", "        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, NUM_PRODUCER_THREADS),\n");
    let (_, out) = fixed(&shared, "arrive-count-mismatch");
    assert!(out.contains(DECLARED_GROUP), "{out}");
    assert!(out.contains("        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 96),\n"), "{out}");

    let text = fixture("pipeline/multicast_signaling_bug.py");
    let (_, out) = fixed(&text, "arrive-count-mismatch");
    assert!(out.contains("        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 2),\n"), "{out}");
}

/// Lanes that skip a per-thread commit under `if lane == 0` but copy all
/// the same: a count lowered to the one arrival would leave their copies
/// untracked, so no count is offered.
#[test]
fn a_commit_skipped_by_the_other_lanes_of_a_warp_gets_no_count() {
    let text = fixture("pipeline/cp_async_commit_bug.py");
    let found = of_rule(&text, "arrive-count-mismatch");
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].fixes.iter().all(|f| !f.title.contains("initialise")), "{:?}", found[0].fixes);
    // Every lane commits, the group counts a warp too many.
    let all = replaced(&text, "            if lane == 0:\n                ring_pipe.producer_commit(prod_state)\n", "            ring_pipe.producer_commit(prod_state)\n");
    let all = replaced(&all, "pipeline.CooperativeGroup(pipeline.Agent.Thread, NUM_PRODUCER_THREADS)", "pipeline.CooperativeGroup(pipeline.Agent.Thread, 2 * NUM_PRODUCER_THREADS)");
    let (_, out) = fixed(&all, "arrive-count-mismatch");
    assert!(out.contains("    producer_group = pipeline.CooperativeGroup(pipeline.Agent.Thread, 32)\n"), "{out}");
}

/// The consumer group counts the threads of the consumer warps, written
/// `32 * NUM_CONSUMER_WARPS`, where one lane of each releases.
#[test]
fn a_tma_consumer_group_counted_in_threads_gets_one_per_warp() {
    let text = fixture("pipeline/tma_consumer_index_bug.py");
    let (_, out) = fixed(&text, "arrive-count-mismatch");
    assert!(out.contains("consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 2),"), "{out}");
}

const REUSED_TILE: &str = "bulk_group_in_flight/reused_tile_bug.py";
const STORE_BLOCK: &str = "        if warp_idx == 0:\n            cute.copy(tma_atom, ssrc, gdst[(None, t)])\n            cute.arch.cp_async_bulk_commit_group()\n";

/// A buffer the next tile overwrites while the TMA store may still read
/// it: the issuing thread waits for its bulk groups right after the
/// commit, and, where other threads write the buffer, a CTA barrier after
/// the issuing branch carries the wait to them.
#[test]
fn a_reused_store_buffer_gets_the_bulk_wait_after_the_commit() {
    let text = fixture(REUSED_TILE);
    let (fix, out) = fixed(&text, "bulk-group-in-flight");
    assert_eq!(fix.applicability, cute_lint::Applicability::Unsafe);
    assert!(
        out.contains(&format!("{STORE_BLOCK}            cute.arch.cp_async_bulk_wait_group(0, read=True)\n        cute.arch.sync_threads()\n")),
        "{out}"
    );
    assert_eq!(analyze_text(&out, &AnalysisOptions::default()), []);

    // One thread issues, the module spelled in full, and a statement
    // after the issuing branch: the barrier goes right after the branch.
    let one = replaced(&text, STORE_BLOCK, "        if tidx == 0:\n            cute.copy(tma_atom, ssrc, gdst[(None, t)])\n            cutlass.cute.arch.cp_async_bulk_commit_group()\n        col = tidx % TILE\n");
    let (_, out) = fixed(&one, "bulk-group-in-flight");
    assert!(
        out.contains("            cutlass.cute.arch.cp_async_bulk_commit_group()\n            cutlass.cute.arch.cp_async_bulk_wait_group(0, read=True)\n        cutlass.cute.arch.sync_threads()\n        col = tidx % TILE\n"),
        "{out}"
    );

    // One warp does everything: it writes the buffer itself, so the wait
    // alone orders its writes (safe), and no barrier is added.
    let alone = replaced(&text, "NUM_THREADS = 128\n", "NUM_THREADS = 32\n");
    let (fix, out) = fixed(&alone, "bulk-group-in-flight");
    assert_eq!(fix.applicability, cute_lint::Applicability::Safe, "{}", fix.title);
    assert!(out.contains(&format!("{STORE_BLOCK}            cute.arch.cp_async_bulk_wait_group(0, read=True)\n    # Keep")), "{out}");
    assert!(!out.contains("sync_threads()\n    # Keep"), "{out}");
}

/// A commit that is not the statement after the store (it is elsewhere,
/// or something else comes between) is not where the wait goes: no fix.
#[test]
fn a_store_whose_commit_does_not_follow_it_gets_no_bulk_wait() {
    let text = fixture(REUSED_TILE);
    let apart = replaced(
        &text,
        STORE_BLOCK,
        "        if warp_idx == 0:\n            cute.copy(tma_atom, ssrc, gdst[(None, t)])\n            x = src[0, 0]\n            cute.arch.cp_async_bulk_commit_group()\n",
    );
    no_fix(&apart, "bulk-group-in-flight");
}

const STATE_CLONE: &str = "pipeline/state_clone_bug.py";
const CLONE_RELEASE: &str = "            # Wrong: `cons_state` has moved on to the next stage.\n            ring_pipe.consumer_release(cons_state)\n";

/// A consumer that releases through its advanced state rather than the
/// copy it took of it releases a stage it has not read, and the producer
/// laps it: the fix releases through the copy, whatever it is called and
/// whatever comes between.
#[test]
fn a_release_through_the_advanced_state_goes_through_its_copy() {
    let text = fixture(STATE_CLONE);
    let (fix, out) = fixed(&text, "vacuous-wait");
    assert_eq!(fix.applicability, cute_lint::Applicability::Unsafe);
    assert!(out.contains("            ring_pipe.consumer_release(current)\n"), "{out}");

    let renamed = text.replace("current", "read_stage");
    let renamed = replaced(&renamed, CLONE_RELEASE, "            cutlass.cute.arch.sync_warp()\n            ring_pipe.consumer_release(cons_state)  # the stage\n");
    let (_, out) = fixed(&renamed, "vacuous-wait");
    assert!(out.contains("            ring_pipe.consumer_release(read_stage)  # the stage\n"), "{out}");

    // The copy bound again before the release: it no longer names the stage read.
    let rebound = replaced(&text, CLONE_RELEASE, "            current = cons_state.clone()\n            ring_pipe.consumer_release(cons_state)\n");
    no_fix(&rebound, "vacuous-wait");
}

const MULTICAST_RELEASE: &str = "pipeline/multicast_release_count_bug.py";

/// Both CTAs' MMAs release each stage on both `empty` barriers, which
/// count one arrival: the producer's tail is lapped, and the fix counts
/// the two releases, however the group's size is written.
#[test]
fn a_ring_lapped_by_more_releases_than_its_count_gets_the_count() {
    let text = fixture(MULTICAST_RELEASE);
    let group = "consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, size=1),";
    let (fix, out) = fixed(&text, "vacuous-wait");
    assert_eq!(fix.applicability, cute_lint::Applicability::Unsafe);
    assert!(out.contains("consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, size=2),"), "{out}");
    for (written, expect) in [
        ("consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),", "consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 2),"),
        ("consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 1),", "consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 2),"),
    ] {
        let src = replaced(&text, group, written);
        let (_, out) = fixed(&src, "vacuous-wait");
        assert!(out.contains(expect), "{written}: {out}");
    }
}

const INHERITED_BARRIER: &str = "barrier_recycling/inherited_barrier_bug.py";

/// All the threads of a generation register at one call on a named barrier
/// counted short: the count is written where the barrier is made (a base
/// class's `__init__`), or on the call itself, whatever it is written as.
#[test]
fn a_named_barrier_counted_short_at_one_call_gets_the_count() {
    let text = fixture(INHERITED_BARRIER);
    let (fix, out) = fixed(&text, "barrier-recycling");
    assert_eq!(fix.applicability, cute_lint::Applicability::Unsafe);
    assert!(out.contains("pipeline.NamedBarrier(barrier_id=1, num_threads=128)"), "{out}");
    assert_eq!(analyze_text(&out, &AnalysisOptions::default()), [], "{out}");

    // Positional arguments.
    let positional = replaced(&text, "pipeline.NamedBarrier(barrier_id=1, num_threads=threads - 32)", "pipeline.NamedBarrier(1, threads // 2)");
    let (_, out) = fixed(&positional, "barrier-recycling");
    assert!(out.contains("pipeline.NamedBarrier(1, 128)"), "{out}");

    // Two barriers assigned to the name: which one the call uses is not
    // known from the text alone, no fix.
    let twice = replaced(&text, "        super().__init__(THREADS)\n", "        super().__init__(THREADS)\n        self.cta_sync_barrier = pipeline.NamedBarrier(barrier_id=2, num_threads=64)\n");
    let found = of_rule(&twice, "barrier-recycling");
    assert!(found.iter().all(|d| d.fixes.is_empty()), "{found:?}");
}

const FLAG: &str = "smem_race/flag_without_barrier_bug.py";
const FLAG_WRITE: &str = "    if tid == 0:\n        scale[0] = 127.0 / amax[0]  # expect: smem-race\n";
const FLAG_READ: &str = "    y[tid] = v * scale[0]\n";

#[test]
fn two_warps_racing_get_a_cta_barrier_between_them_outside_the_thread_branches() {
    let text = fixture(FLAG);
    let (fix, out) = fixed(&text, "smem-race");
    assert_eq!(fix.applicability, cute_lint::Applicability::Unsafe);
    assert!(out.contains(&format!("{FLAG_WRITE}    # (no barrier: the other threads read the scale right away)\n    cute.arch.sync_threads()\n{FLAG_READ}")), "{out}");

    // The read inside a branch on the thread of its own, in a branch every
    // thread of the CTA takes alike: the barrier goes outside the first,
    // inside the second.
    let nested = replaced(&text, FLAG_READ, "    if NUM_THREADS > 32:\n        if tid >= 32:\n            y[tid] = v * scale[0]\n");
    let (_, out) = fixed(&nested, "smem-race");
    assert!(out.contains("    if NUM_THREADS > 32:\n        cute.arch.sync_threads()\n        if tid >= 32:\n"), "{out}");

    // The write after the read in the text (a write-after-read race): the barrier
    // goes before the write.
    let war = replaced(&text, &format!("{FLAG_WRITE}    # (no barrier: the other threads read the scale right away)\n{FLAG_READ}"), &format!("{FLAG_READ}{FLAG_WRITE}"));
    let (_, out) = fixed(&war, "smem-race");
    assert!(out.contains(&format!("{FLAG_READ}    cute.arch.sync_threads()\n{FLAG_WRITE}")), "{out}");
}

#[test]
fn no_cta_barrier_where_some_thread_would_not_reach_it_or_a_loop_holds_both_accesses() {
    let text = fixture(FLAG);
    // The read in a loop whose trip count varies across threads.
    let varying = replaced(&text, FLAG_READ, "    for i in range(tid % 2 + 1):\n        y[tid] = v * scale[0]\n");
    no_fix(&varying, "smem-race");
    // Some threads return before the place.
    let returns = replaced(&text, "    v = x[tid]", "    if tid >= 64:\n        return\n    v = x[tid]");
    no_fix(&returns, "smem-race");

    // Write and read in one loop: the read of one turn also races with the
    // write of the next, which a barrier between them does not order.
    let looped = replaced(&fixture("smem_race/neighbour_read_bug.py"), "    buf[tidx] = x[tidx]  # expect: smem-race\n    y[tidx] = buf[tidx + 1] - x[tidx]\n", "    for i in cutlass.range(4):\n        buf[tidx] = x[tidx] + i  # expect: smem-race\n        y[tidx] = buf[tidx + 1] - x[tidx]\n");
    for finding in of_rule(&looped, "smem-race") {
        assert_eq!(finding.fixes, [], "{looped}");
    }
    assert!(!of_rule(&looped, "smem-race").is_empty());
}

const UNTHROTTLED: &str = "vacuous_wait/unthrottled_producer_bug.py";
const THROTTLE: &str = "Throttle the producer";

#[test]
fn a_producer_without_back_pressure_is_throttled_by_an_empty_barrier() {
    let text = fixture(UNTHROTTLED);
    let out = fixed_by(&text, "vacuous-wait", THROTTLE);
    assert!(out.contains("    full: cutlass.Int64\n    empty: cutlass.Int64\n"), "{out}");
    assert!(out.contains("    full = storage.full.ptr\n    empty = storage.empty.ptr\n"), "{out}");
    assert!(out.contains("            cute.arch.mbarrier_init(empty, 32)  # the threads that wait on `full`\n"), "{out}");
    assert!(out.contains("        for k in cutlass.range(ROUNDS):\n            cute.arch.mbarrier_wait(empty, (k + 1) % 2)\n            slot[lane] = x[k, lane]\n"), "{out}");
    assert!(out.contains("            out[k, lane] = slot[lane]\n            cute.arch.mbarrier_arrive(empty)\n"), "{out}");

    // Other names, `data_ptr()`, the DSL's plain `range`, keywords, and two
    // consumer warps: 64 arrivals per round.
    let other = text.replace("full", "ready").replace("storage.ready.ptr", "storage.ready.data_ptr()");
    let other = replaced(&other, "NUM_THREADS = 64", "NUM_THREADS = 96");
    let other = replaced(&other, "cute.arch.mbarrier_init(ready, 32)", "cute.arch.mbarrier_init(mbar_ptr=ready, cnt=32)");
    let other = replaced(&other, "        for k in cutlass.range(ROUNDS):\n            slot[lane]", "        for j in range(ROUNDS):\n            slot[lane]").replace("x[k, lane]", "x[j, lane]");
    let other = replaced(&other, "        for k in cutlass.range(ROUNDS):\n            cute.arch.mbarrier_wait", "        for k in cutlass.range(ROUNDS, unroll=1):\n            cute.arch.mbarrier_wait");
    let out = fixed_by(&other, "vacuous-wait", THROTTLE);
    assert!(out.contains("    ready_empty = storage.ready_empty.data_ptr()\n"), "{out}");
    assert!(out.contains("cute.arch.mbarrier_init(mbar_ptr=ready_empty, cnt=64)"), "{out}");
    assert!(out.contains("            cute.arch.mbarrier_wait(ready_empty, (j + 1) % 2)\n"), "{out}");
}

#[test]
fn no_empty_barrier_where_the_rounds_are_not_plain() {
    let text = fixture(UNTHROTTLED);
    let offered = |src: &str| of_rule(src, "vacuous-wait").iter().flat_map(|d| d.fixes.iter()).any(|f| f.title.contains(THROTTLE));
    assert!(offered(&text));
    // The producer's rounds start elsewhere than 0.
    let shifted = replaced(&text, "        for k in cutlass.range(ROUNDS):\n            slot[lane]", "        for k in cutlass.range(1, ROUNDS):\n            slot[lane]");
    assert!(!offered(&shifted), "{shifted}");
    // The arrive under a condition of the round.
    let guarded = replaced(&text, "            cute.arch.mbarrier_arrive(full)\n", "            if k >= 0:\n                cute.arch.mbarrier_arrive(full)\n");
    assert!(!offered(&guarded), "{guarded}");
    // A name the fix would take is already used.
    let taken = replaced(&text, "    lane = cute.arch.lane_idx()\n", "    lane = cute.arch.lane_idx()\n    empty = 0\n");
    assert!(!offered(&taken), "{taken}");
}

const OVERFLOW: &str = "mbarrier_init_hazard/ring_storage_overflow_bug.py";
const OVERFLOW_FIELD: &str = "    mbar: cute.struct.MemRange[cutlass.Int64, STAGES]\n";

#[test]
fn a_ring_overflowing_its_storage_field_gets_the_field_lengthened() {
    let text = fixture(OVERFLOW);
    let (fix, out) = fixed(&text, "mbarrier-init-hazard");
    assert_eq!(fix.applicability, cute_lint::Applicability::Unsafe);
    assert!(out.contains("    mbar: cute.struct.MemRange[cutlass.Int64, 2 * STAGES]\n"), "{out}");
    // A literal length gets the number; so does an expression.
    let literal = replaced(&text, OVERFLOW_FIELD, "    mbar: cute.struct.MemRange[cutlass.Int64, 2]  # one per stage\n");
    let (_, out) = fixed(&literal, "mbarrier-init-hazard");
    assert!(out.contains("    mbar: cute.struct.MemRange[cutlass.Int64, 4]  # one per stage\n"), "{out}");
    let expression = replaced(&text, OVERFLOW_FIELD, "    mbar: cute.struct.MemRange[cutlass.Int64, STAGES + 1]\n");
    let (_, out) = fixed(&expression, "mbarrier-init-hazard");
    assert!(out.contains("    mbar: cute.struct.MemRange[cutlass.Int64, 4]\n"), "{out}");
    // Two classes the kernel names declare a field of that name: which one
    // holds the barriers, the fix does not guess. One it does not name is
    // not a candidate.
    let other = replaced(&text, "@cute.kernel\n", "@cute.struct\nclass OtherStorage:\n    mbar: cute.struct.MemRange[cutlass.Int64, 8]\n\n\n@cute.kernel\n");
    let (_, out) = fixed(&other, "mbarrier-init-hazard");
    assert!(out.contains("    mbar: cute.struct.MemRange[cutlass.Int64, 2 * STAGES]\n"), "{out}");
    let two = replaced(&other, "    storage = cutlass.memory.SmemAllocator().allocate(SharedStorage)\n", "    storage = cutlass.memory.SmemAllocator().allocate(SharedStorage)\n    spare = cutlass.memory.SmemAllocator().allocate(OtherStorage)\n");
    no_fix(&two, "mbarrier-init-hazard");
}

const FIRST_RELEASE: &str = "deadlock/tcgen05_commit_bug.py";
const EMPTY_WAIT: &str = "            cute.arch.mbarrier_wait(load_empty, k % 2)  # expect: deadlock\n";

#[test]
fn a_producer_waiting_for_a_release_before_its_first_load_waits_for_the_other_phase() {
    let text = fixture(FIRST_RELEASE);
    let (fix, out) = fixed(&text, "deadlock");
    assert_eq!(fix.applicability, cute_lint::Applicability::Unsafe);
    assert!(out.contains("            cute.arch.mbarrier_wait(load_empty, (k + 1) % 2)  # expect: deadlock\n"), "{out}");
    assert_eq!(analyze_text(&out, &AnalysisOptions::default()), []);

    // The phase by keyword, and a phase variable flipped each round.
    let keyword = replaced(&text, EMPTY_WAIT, "            cute.arch.mbarrier_wait(load_empty, phase=k % 2)\n");
    let (_, out) = fixed(&keyword, "deadlock");
    assert!(out.contains("cute.arch.mbarrier_wait(load_empty, phase=(k + 1) % 2)"), "{out}");
    let variable = replaced(&text, "        for k in cutlass.range(K_TILES, unroll=1):\n            cute.arch.mbarrier_wait(load_empty, k % 2)  # expect: deadlock\n", "        empty_phase = cutlass.Int32(0)\n        for k in cutlass.range(K_TILES, unroll=1):\n            cute.arch.mbarrier_wait(load_empty, empty_phase)\n            empty_phase = empty_phase ^ 1\n");
    let (_, out) = fixed(&variable, "deadlock");
    assert!(out.contains("cute.arch.mbarrier_wait(load_empty, empty_phase ^ 1)"), "{out}");
}

#[test]
fn no_other_phase_where_it_would_only_end_the_wait() {
    // Two warps that each wait for the other first: the other parity passes
    // at once and orders nothing (their data races), so it is no repair.
    no_fix(&fixture("deadlock/crossed_waits_bug.py"), "deadlock");
}
