//! Quick fixes that change which threads run a synchronizing operation (a
//! collective out of a lane test, a member mask named, an arrive taken out
//! of its `if`), on variants of the fixtures that differ in shape: the fix
//! removes the finding, and the shapes it cannot repair get none.

use cute_lint::{analyze_text, AnalysisOptions, Applicability, Diagnostic};

mod support;
use support::{fixture, apply, of_rule, replaced};

/// The one finding of `rule` in `src`, its fix titled `title` applied: the
/// fixed text, with no finding at all left in it.
fn fixed_by(src: &str, rule: &str, title: &str) -> (cute_lint::Fix, String) {
    let found = of_rule(src, rule);
    assert_eq!(found.len(), 1, "{found:?}\n{src}");
    let titles: Vec<&str> = found[0].fixes.iter().map(|f| f.title.as_str()).collect();
    let fix = found[0].fixes.iter().find(|f| f.title.contains(title)).unwrap_or_else(|| panic!("{titles:?}\n{src}")).clone();
    let out = apply(src, &fix);
    let left: Vec<Diagnostic> = analyze_text(&out, &AnalysisOptions::default());
    assert_eq!(left, [], "{out}");
    (fix, out)
}

/// `src` with the one finding of `rule`, offered no fix titled `title`.
fn no_fix(src: &str, rule: &str, title: &str) {
    let found = of_rule(src, rule);
    assert_eq!(found.len(), 1, "{found:?}\n{src}");
    assert!(found[0].fixes.iter().all(|f| !f.title.contains(title)), "{:?}\n{src}", found[0].fixes);
}

const SHUFFLE: &str = "single_lane_collective/warp_shuffle_bug.py";
const SHUFFLE_BLOCK: &str = "    if lane == 0:\n        # Only lane 0 reduces: the other 31 lanes of the mask never shuffle.\n        for i in cutlass.range_constexpr(5):\n            other = cute.arch.shuffle_sync_bfly(val, offset=16 >> i)  # expect: single-lane-collective\n            val = cute.arch.fmax(val, other)\n        y[warp_idx] = val\n";
const HOISTED: &str = "Run the collective with the whole warp";

/// A reduction that lane 0 alone runs is moved before the lane test, which
/// then guards the store only, whatever the collective and the test are
/// written as.
#[test]
fn a_lane_guarded_reduction_is_run_by_the_whole_warp() {
    let text = fixture(SHUFFLE);
    let (fix, out) = fixed_by(&text, "single-lane-collective", HOISTED);
    assert_eq!(fix.applicability, Applicability::Unsafe);
    assert!(out.contains("    val = x[tidx]\n    # Only lane 0 reduces: the other 31 lanes of the mask never shuffle.\n    for i in cutlass.range_constexpr(5):\n        other = cute.arch.shuffle_sync_bfly(val, offset=16 >> i)  # expect: single-lane-collective\n        val = cute.arch.fmax(val, other)\n    if lane == 0:\n        y[warp_idx] = val\n"), "{out}");

    // The package's reduction, the test on the thread index, two warps.
    let reduction = replaced(&text, SHUFFLE_BLOCK, "    if tidx % 32 == 0:\n        best = cute.arch.warp_reduction_max(val)\n        y[warp_idx] = best\n");
    let reduction = replaced(&reduction, "NUM_THREADS = 128\n", "NUM_THREADS = 64\n");
    let (_, out) = fixed_by(&reduction, "single-lane-collective", HOISTED);
    assert!(out.contains("    val = x[tidx]\n    best = cute.arch.warp_reduction_max(val)\n    if tidx % 32 == 0:\n        y[warp_idx] = best\n"), "{out}");

    // A shuffle written out, the test the other way round.
    let unrolled = replaced(
        &text,
        SHUFFLE_BLOCK,
        "    if 0 == lane:\n        val = val + cute.arch.shuffle_sync_down(val, 16)\n        y[warp_idx] = val\n",
    );
    let (_, out) = fixed_by(&unrolled, "single-lane-collective", HOISTED);
    assert!(out.contains("    val = x[tidx]\n    val = val + cute.arch.shuffle_sync_down(val, 16)\n    if 0 == lane:\n        y[warp_idx] = val\n"), "{out}");
}

/// What the lanes that skip the test would now run differently (a store,
/// a read of memory, a value they read after the `if`), or an `else`
/// beside it: no move.
#[test]
fn a_lane_guarded_reduction_with_effects_is_not_moved() {
    let text = fixture(SHUFFLE);
    let store_first = replaced(&text, "    if lane == 0:\n        # Only lane 0", "    if lane == 0:\n        y[warp_idx] = val\n        # Only lane 0");
    no_fix(&store_first, "single-lane-collective", HOISTED);
    let load = replaced(&text, "            val = cute.arch.fmax(val, other)\n", "            val = cute.arch.fmax(val, other) + x[i]\n");
    no_fix(&load, "single-lane-collective", HOISTED);
    let read_after = replaced(&text, "        y[warp_idx] = val\n", "        y[warp_idx] = val\n    if lane == 1:\n        y[warp_idx] = val\n");
    no_fix(&read_after, "single-lane-collective", HOISTED);
    let other = replaced(&text, "        y[warp_idx] = val\n", "        y[warp_idx] = val\n    else:\n        val = val + 1.0\n");
    no_fix(&other, "single-lane-collective", HOISTED);
    // An `elif`: nothing can go between it and its `if`.
    let elif = replaced(&text, "    if lane == 0:\n        # Only lane 0", "    if lane == 31:\n        y[warp_idx] = val\n    elif lane == 0:\n        # Only lane 0");
    assert!(!of_rule(&elif, "single-lane-collective").is_empty(), "{elif}");
    for d in of_rule(&elif, "single-lane-collective") {
        assert!(d.fixes.iter().all(|f| !f.title.contains(HOISTED)), "{:?}\n{elif}", d.fixes);
    }
}

const VOTE: &str = "single_lane_collective/half_warp_vote_bug.py";
const VOTE_CALL: &str = "        ballot = cute.arch.vote_ballot_sync(positive)  # expect: single-lane-collective\n";
const MASK: &str = "Name the lanes that reach it";

/// A vote or warp barrier that the same lanes of every warp reach, with
/// the default mask, gets the mask of those lanes.
#[test]
fn a_vote_of_part_of_a_warp_names_its_lanes() {
    let text = fixture(VOTE);
    let (fix, out) = fixed_by(&text, "single-lane-collective", MASK);
    assert_eq!(fix.applicability, Applicability::Unsafe);
    assert!(out.contains("        ballot = cute.arch.vote_ballot_sync(positive, mask=0x0000ffff)  # expect"), "{out}");

    // The upper half, another vote, a trailing comma, four warps.
    let upper = replaced(&text, "    if lane < ROW:\n        positive = x[warp_idx * ROW + lane]", "    if lane >= ROW:\n        positive = x[warp_idx * ROW + lane - ROW]");
    let upper = replaced(&upper, VOTE_CALL, "        ballot = cute.arch.vote_any_sync(positive,)\n");
    let upper = replaced(&upper, "        if lane == 0:\n", "        if lane == ROW:\n");
    let upper = replaced(&upper, "NUM_THREADS = 64\n", "NUM_THREADS = 128\n");
    let (_, out) = fixed_by(&upper, "single-lane-collective", MASK);
    assert!(out.contains("cute.arch.vote_any_sync(positive, mask=0xffff0000)\n"), "{out}");

    // A warp barrier among a quarter of the lanes.
    let sync = replaced(&text, "    if lane < ROW:\n", "    if lane < 8:\n");
    let sync = replaced(&sync, VOTE_CALL, "        cute.arch.sync_warp()\n        ballot = positive\n");
    let (_, out) = fixed_by(&sync, "single-lane-collective", MASK);
    assert!(out.contains("        cute.arch.sync_warp(mask=0x000000ff)\n"), "{out}");
}

/// A mask already written (wrong), or lanes that differ from warp to
/// warp: no mask is offered.
#[test]
fn a_vote_whose_lanes_no_one_mask_names_gets_none() {
    let text = fixture(VOTE);
    let written = replaced(&text, VOTE_CALL, "        ballot = cute.arch.vote_ballot_sync(positive, 0xffffffff)\n");
    no_fix(&written, "single-lane-collective", MASK);
    let skewed = replaced(&text, "    if lane < ROW:\n", "    if lane < ROW + warp_idx:\n");
    no_fix(&skewed, "single-lane-collective", MASK);
}

const HALF_CTA: &str = "divergent_barrier/half_cta_sync_bug.py";
const HALF_CTA_BLOCK: &str = "    if tidx < HALF:\n        stage[tidx] = x[tidx]\n        cute.arch.sync_threads()  # expect: divergent-barrier\n";
const AFTER_IF: &str = "Move the barrier after the `if`";

/// A CTA-wide barrier that ends an `if` on the thread moves right after
/// it, whatever the barrier is written as and whichever threads take it.
#[test]
fn a_cta_barrier_ending_a_thread_branch_moves_after_it() {
    let text = fixture(HALF_CTA);
    let (fix, out) = fixed_by(&text, "divergent-barrier", AFTER_IF);
    assert_eq!(fix.applicability, Applicability::Unsafe);
    assert!(out.contains("    if tidx < HALF:\n        stage[tidx] = x[tidx]\n    cute.arch.sync_threads()  # expect: divergent-barrier\n    y[tidx]"), "{out}");

    // The upper half writes, the module spelled in full, 256 threads.
    let upper = replaced(&text, HALF_CTA_BLOCK, "    if tidx >= NUM_THREADS - HALF:\n        stage[tidx - (NUM_THREADS - HALF)] = x[tidx]\n        cutlass.cute.arch.sync_threads()\n");
    let upper = replaced(&upper, "NUM_THREADS = 128\n", "NUM_THREADS = 256\n");
    let (_, out) = fixed_by(&upper, "divergent-barrier", AFTER_IF);
    assert!(out.contains("        stage[tidx - (NUM_THREADS - HALF)] = x[tidx]\n    cutlass.cute.arch.sync_threads()\n    y[tidx]"), "{out}");

    // The pipeline's barrier, in a loop every thread runs.
    let looped = replaced(
        &text,
        HALF_CTA_BLOCK,
        "    for k in cutlass.range_constexpr(2):\n        if tidx < HALF:\n            stage[tidx] = x[tidx] + k\n            cutlass.pipeline.sync(barrier_id=2)\n",
    );
    let (_, out) = fixed_by(&looped, "divergent-barrier", AFTER_IF);
    assert!(out.contains("            stage[tidx] = x[tidx] + k\n        cutlass.pipeline.sync(barrier_id=2)\n    y[tidx]"), "{out}");
}

/// Not the last statement of its `if`, an `else` beside it, or another
/// thread-dependent branch around the `if`: no move.
#[test]
fn a_cta_barrier_the_move_cannot_reach_every_thread_with_gets_none() {
    let text = fixture(HALF_CTA);
    let not_last = replaced(&text, "        cute.arch.sync_threads()  # expect: divergent-barrier\n", "        cute.arch.sync_threads()\n        stage[tidx] = stage[tidx] + 1.0\n");
    no_fix(&not_last, "divergent-barrier", AFTER_IF);
    let other = replaced(&text, "        cute.arch.sync_threads()  # expect: divergent-barrier\n", "        cute.arch.sync_threads()\n    else:\n        stage[0] = 0.0\n");
    no_fix(&other, "divergent-barrier", AFTER_IF);
    let nested = replaced(&text, HALF_CTA_BLOCK, "    if tidx < 96:\n        if tidx < HALF:\n            stage[tidx] = x[tidx]\n            cute.arch.sync_threads()\n");
    no_fix(&nested, "divergent-barrier", AFTER_IF);
    // The other threads take a CTA barrier of their own: moved, this one
    // would be a barrier too many for them.
    let own = replaced(&text, HALF_CTA_BLOCK, &format!("{HALF_CTA_BLOCK}    if tidx >= HALF:\n        cute.arch.sync_threads()\n"));
    assert!(!of_rule(&own, "divergent-barrier").is_empty(), "{own}");
    for d in of_rule(&own, "divergent-barrier") {
        assert!(d.fixes.iter().all(|f| !f.title.contains(AFTER_IF)), "{:?}\n{own}", d.fixes);
    }
}

const UNALIGNED: &str = "divergent_barrier/unaligned_arrive_bug.py";
const ONCE: &str = "Arrive once after the `if`/`else`";

/// An aligned arrive that ends both branches of a lane test alike is
/// written once after them; each lane arrives in the same order as before.
#[test]
fn an_arrive_ending_both_lane_branches_is_made_once_after_them() {
    let text = fixture(UNALIGNED);
    let found = of_rule(&text, "divergent-barrier");
    assert_eq!(found.len(), 2, "{found:?}");
    let fix = found[0].fixes.iter().find(|f| f.title.contains(ONCE)).expect("fix").clone();
    assert_eq!(fix.applicability, Applicability::Safe);
    assert_eq!(found[1].fixes, found[0].fixes);
    let out = apply(&text, &fix);
    assert_eq!(analyze_text(&out, &AnalysisOptions::default()), [], "{out}");
    assert!(out.contains("            stage[lane] = b[lane - HALF]\n        cute.arch.barrier_arrive(barrier_id=STAGED, number_of_threads=NUM_THREADS)  # expect: divergent-barrier\n    else:\n"), "{out}");
    assert_eq!(out.matches("barrier_arrive(").count(), 1, "{out}");

    // Branches the other way round, the keywords in another order, literals.
    let swapped = text.replace("if lane < HALF:", "if lane >= HALF:").replace("stage[lane] = a[lane]", "stage[lane] = b[lane - HALF]x").replace("stage[lane] = b[lane - HALF]\n", "stage[lane] = a[lane]\n").replace("b[lane - HALF]x", "b[lane - HALF]");
    let swapped = swapped.replace("cute.arch.barrier_arrive(barrier_id=STAGED, number_of_threads=NUM_THREADS)", "cute.arch.barrier_arrive(number_of_threads=64, barrier_id=1)");
    let swapped = swapped.replace("cute.arch.barrier(barrier_id=STAGED, number_of_threads=NUM_THREADS)", "cute.arch.barrier(barrier_id=1, number_of_threads=64)");
    let found = of_rule(&swapped, "divergent-barrier");
    assert_eq!(found.len(), 2, "{found:?}\n{swapped}");
    let fix = found[1].fixes.iter().find(|f| f.title.contains(ONCE)).expect("fix").clone();
    let out = apply(&swapped, &fix);
    assert_eq!(analyze_text(&out, &AnalysisOptions::default()), [], "{out}");
    assert!(out.contains("            stage[lane] = a[lane]\n        cute.arch.barrier_arrive(number_of_threads=64, barrier_id=1)  # expect: divergent-barrier\n    else:\n"), "{out}");

    // Arrives written differently in the two branches, or a branch with the
    // arrive alone: none.
    let differ = replaced(&text, "            cute.arch.barrier_arrive(barrier_id=STAGED, number_of_threads=NUM_THREADS)  # expect: divergent-barrier\n        else:", "            cute.arch.barrier_arrive(barrier_id=1, number_of_threads=NUM_THREADS)\n        else:");
    assert!(of_rule(&differ, "divergent-barrier").iter().all(|d| d.fixes.iter().all(|f| !f.title.contains(ONCE))));
    let alone = replaced(&text, "            stage[lane] = a[lane]\n", "");
    assert!(of_rule(&alone, "divergent-barrier").iter().all(|d| d.fixes.iter().all(|f| !f.title.contains(ONCE))));
}

const CP_ASYNC: &str = "pipeline/cp_async_commit_bug.py";
const LANE_COMMIT: &str = "            if lane == 0:\n                ring_pipe.producer_commit(prod_state)\n";
const UNGUARD: &str = "take the arrive out of its `if`";

/// A `PipelineCpAsync` commit, one arrival of each producer thread, made
/// by lane 0 alone: the fix takes it out of the lane test, so that every
/// lane of the producer warps arrives, however the test is written and
/// however many producer warps there are.
#[test]
fn a_cp_async_commit_of_one_lane_is_made_by_every_lane() {
    let text = fixture(CP_ASYNC);
    let (fix, out) = fixed_by(&text, "arrive-count-mismatch", UNGUARD);
    assert_eq!(fix.applicability, Applicability::Unsafe);
    assert!(out.contains("            cute.copy(tiled_copy, from_tile, to_slot)\n            # Wrong: every producer thread must arrive.\n            ring_pipe.producer_commit(prod_state)\n            prod_state.advance()\n"), "{out}");

    // The test on the thread index, and three stages.
    let tidx = replaced(&text, LANE_COMMIT, "            if tidx % 32 == 0:\n                ring_pipe.producer_commit(prod_state)\n");
    let tidx = replaced(&tidx, "STAGES = 2\n", "STAGES = 3\n");
    let (_, out) = fixed_by(&tidx, "arrive-count-mismatch", UNGUARD);
    assert!(out.contains("            # Wrong: every producer thread must arrive.\n            ring_pipe.producer_commit(prod_state)\n"), "{out}");

    // The lane asked for in the test itself, the other way round.
    let inline = replaced(&text, LANE_COMMIT, "            if 0 == cute.arch.lane_idx():\n                ring_pipe.producer_commit(prod_state)\n");
    let (_, out) = fixed_by(&inline, "arrive-count-mismatch", UNGUARD);
    assert!(!out.contains("if 0 == cute.arch.lane_idx()"), "{out}");
}

/// An `if` that holds more than the commit, or an `else` beside it: no
/// commit is taken out.
#[test]
fn a_lane_commit_among_other_statements_is_not_taken_out() {
    let text = fixture(CP_ASYNC);
    let busy = replaced(&text, LANE_COMMIT, "            if lane == 0:\n                ring_pipe.producer_commit(prod_state)\n                cute.arch.sync_warp()\n");
    assert!(!of_rule(&busy, "arrive-count-mismatch").is_empty(), "{busy}");
    for d in of_rule(&busy, "arrive-count-mismatch") {
        assert!(d.fixes.iter().all(|f| !f.title.contains(UNGUARD)), "{:?}", d.fixes);
    }
    let other = replaced(&text, LANE_COMMIT, "            if lane == 0:\n                ring_pipe.producer_commit(prod_state)\n            else:\n                cute.arch.sync_warp()\n");
    assert!(!of_rule(&other, "arrive-count-mismatch").is_empty(), "{other}");
    for d in of_rule(&other, "arrive-count-mismatch") {
        assert!(d.fixes.iter().all(|f| !f.title.contains(UNGUARD)), "{:?}", d.fixes);
    }
}

const OBJECTS: &str = "named_barrier_deadlock/epilogue_objects_bug.py";
const EPILOGUE_OBJECT: &str = "    epilogue_sync = pipeline.NamedBarrier(barrier_id=EPILOGUE, num_threads=NUM_THREADS)\n";
const COUNT: &str = "count the";

/// A `NamedBarrier` object counted for more threads than ever register:
/// the count is written where the object is made, however it is written.
#[test]
fn a_named_barrier_object_counted_too_high_gets_the_count_where_it_is_made() {
    let text = fixture(OBJECTS);
    let (fix, out) = fixed_by(&text, "named-barrier-deadlock", COUNT);
    assert_eq!(fix.applicability, Applicability::Unsafe);
    assert!(out.contains("    epilogue_sync = pipeline.NamedBarrier(barrier_id=EPILOGUE, num_threads=128)\n"), "{out}");
    assert!(out.contains("    tile_ready = pipeline.NamedBarrier(barrier_id=TILE_READY, num_threads=NUM_THREADS)\n"), "{out}");

    for (written, expect) in [
        ("pipeline.NamedBarrier(EPILOGUE, NUM_THREADS)", "pipeline.NamedBarrier(EPILOGUE, 128)"),
        ("pipeline.NamedBarrier(num_threads=32 * 5, barrier_id=EPILOGUE)", "pipeline.NamedBarrier(num_threads=128, barrier_id=EPILOGUE)"),
    ] {
        let src = replaced(&text, EPILOGUE_OBJECT, &format!("    epilogue_sync = {written}\n"));
        let (_, out) = fixed_by(&src, "named-barrier-deadlock", COUNT);
        assert!(out.contains(&format!("    epilogue_sync = {expect}\n")), "{written}: {out}");
    }

    // Two objects bound to the name: which one the call uses, the text
    // alone does not say.
    let twice = replaced(&text, EPILOGUE_OBJECT, &format!("{EPILOGUE_OBJECT}    if warp == 0:\n        epilogue_sync = pipeline.NamedBarrier(barrier_id=EPILOGUE, num_threads=NUM_THREADS)\n"));
    no_fix(&twice, "named-barrier-deadlock", COUNT);
}

const RETRIEVE: &str = "named_barrier_deadlock/tmem_retrieve_bug.py";
const RETRIEVE_BARRIER: &str = "    tmem_alloc_barrier = pipeline.NamedBarrier(\n        barrier_id=1,\n        num_threads=32 * len((MMA_WARP, LOAD_WARP, *EPILOGUE_WARPS)),\n    )\n";

/// The barrier a `TmemAllocator` retrieves its address on, counting a warp
/// that never retrieves: the count of its `NamedBarrier`, bound to a name
/// or written in the allocator's call.
#[test]
fn a_retrieve_barrier_counting_a_warp_that_never_waits_gets_the_count() {
    let text = fixture(RETRIEVE);
    let (_, out) = fixed_by(&text, "named-barrier-deadlock", COUNT);
    assert!(out.contains("        num_threads=160,\n"), "{out}");

    let inline = replaced(&text, RETRIEVE_BARRIER, "");
    let inline = replaced(&inline, "        barrier_for_retrieve=tmem_alloc_barrier,\n", "        barrier_for_retrieve=pipeline.NamedBarrier(barrier_id=1, num_threads=192),\n");
    let (_, out) = fixed_by(&inline, "named-barrier-deadlock", COUNT);
    assert!(out.contains("        barrier_for_retrieve=pipeline.NamedBarrier(barrier_id=1, num_threads=160),\n"), "{out}");

    // Two epilogue warps fewer: 96 threads reach it.
    let fewer = replaced(&text, "EPILOGUE_WARPS = (1, 2, 3, 4)", "EPILOGUE_WARPS = (1, 2)");
    let fewer = replaced(&fewer, "LOAD_WARP = 5", "LOAD_WARP = 3");
    let fewer = replaced(&fewer, "NUM_THREADS = 192", "NUM_THREADS = 128");
    let (_, out) = fixed_by(&fewer, "named-barrier-deadlock", COUNT);
    assert!(out.contains("        num_threads=96,\n"), "{out}");
}

const ENUM_IDS: &str = "named_barrier_deadlock/enum_ids_shared_bug.py";
const OWN_ID: &str = "an id of their own";

/// Two names of one id used by groups that count differently: the calls
/// that write the blocked group's name get a free id, however the name is
/// written (a member of a class, a constant of the module), whichever
/// member comes first, and with another id taken.
#[test]
fn two_names_of_one_barrier_id_get_ids_of_their_own() {
    let text = fixture(ENUM_IDS);
    let (fix, out) = fixed_by(&text, "named-barrier-deadlock", OWN_ID);
    assert_eq!(fix.applicability, Applicability::Unsafe);
    assert!(out.contains("        cute.arch.barrier(barrier_id=2, number_of_threads=CONSUMERS)  # expect"), "{out}");
    assert_eq!(out.matches("barrier_id=Barrier.TILE_READY").count(), 2, "{out}");

    let swapped = replaced(&text, "    TILE_READY = 1\n    EPILOGUE = 1\n", "    EPILOGUE = 1  # the epilogue's\n    TILE_READY = 1\n");
    let (_, out) = fixed_by(&swapped, "named-barrier-deadlock", OWN_ID);
    assert!(out.contains("cute.arch.barrier(barrier_id=2, number_of_threads=CONSUMERS)"), "{out}");

    let constants = replaced(&text, "CONSUMERS = 128\n", "CONSUMERS = 128\nTILE_READY = 3\nEPILOGUE = 3\n").replace("Barrier.TILE_READY", "TILE_READY").replace("Barrier.EPILOGUE", "EPILOGUE");
    let (_, out) = fixed_by(&constants, "named-barrier-deadlock", OWN_ID);
    assert!(out.contains("cute.arch.barrier(barrier_id=1, number_of_threads=CONSUMERS)"), "{out}");

    // Id 1 and 2 both in use: the epilogue's barrier takes 3.
    let busy = replaced(&text, "        y[c] = acc[(c + 1) % CONSUMERS]\n", "        y[c] = acc[(c + 1) % CONSUMERS]\n        cute.arch.barrier(barrier_id=2, number_of_threads=CONSUMERS)\n");
    let (_, out) = fixed_by(&busy, "named-barrier-deadlock", OWN_ID);
    assert!(out.contains("cute.arch.barrier(barrier_id=3, number_of_threads=CONSUMERS)  # expect"), "{out}");

    // Both groups write the same literal: nothing tells them apart.
    let literal = text.replace("Barrier.TILE_READY", "1").replace("Barrier.EPILOGUE", "1");
    no_fix(&literal, "named-barrier-deadlock", OWN_ID);
}

const RETRIEVE_EARLY: &str = "tmem_lifetime/retrieve_before_wait_bug.py";
const READ_THEN_WAIT: &str = "        tCtAcc = cute.make_tensor(tmem.retrieve_ptr(ACC_DTYPE), tCtAcc_fake.layout)  # expect: tmem-lifetime\n        tmem.wait_for_alloc()\n";
const WAIT_FIRST: &str = "before reading its address";

/// The address of the tensor memory read back before the allocator's
/// `wait_for_alloc()` that follows it: the wait moves up, whatever the
/// allocator is called and with statements that do not synchronize between.
#[test]
fn an_address_read_before_wait_for_alloc_gets_the_wait_first() {
    let text = fixture(RETRIEVE_EARLY);
    let (fix, out) = fixed_by(&text, "tmem-lifetime", WAIT_FIRST);
    assert_eq!(fix.applicability, Applicability::Safe);
    assert!(out.contains("        tmem.wait_for_alloc()\n        tCtAcc = cute.make_tensor(tmem.retrieve_ptr(ACC_DTYPE), tCtAcc_fake.layout)  # expect: tmem-lifetime\n        tiled_mma.set("), "{out}");

    let renamed = text.replace("tmem.", "allocator.").replace("    tmem = utils.TmemAllocator(", "    allocator = utils.TmemAllocator(");
    let apart = replaced(&renamed, "        allocator.wait_for_alloc()\n        tiled_mma.set(", "        n_tiles = K_TILES * 2\n        allocator.wait_for_alloc()\n        tiled_mma.set(");
    let (_, out) = fixed_by(&apart, "tmem-lifetime", WAIT_FIRST);
    assert!(out.contains("        allocator.wait_for_alloc()\n        tCtAcc = cute.make_tensor(allocator.retrieve_ptr(ACC_DTYPE), tCtAcc_fake.layout)  # expect: tmem-lifetime\n        n_tiles = K_TILES * 2\n        tiled_mma.set("), "{out}");

    // The pointer bound on a line of its own.
    let bound = replaced(&text, READ_THEN_WAIT, "        acc_ptr = tmem.retrieve_ptr(ACC_DTYPE)\n        tCtAcc = cute.make_tensor(acc_ptr, tCtAcc_fake.layout)\n        tmem.wait_for_alloc()\n");
    let (_, out) = fixed_by(&bound, "tmem-lifetime", WAIT_FIRST);
    assert!(out.contains("        tmem.wait_for_alloc()\n        acc_ptr = tmem.retrieve_ptr(ACC_DTYPE)\n        tCtAcc = cute.make_tensor(acc_ptr, tCtAcc_fake.layout)\n        tiled_mma.set("), "{out}");
}

/// A barrier between the read and the wait (the wait would move over it),
/// or the wait in a block of its own: no move.
#[test]
fn a_wait_for_alloc_the_move_would_reorder_gets_none() {
    let text = fixture(RETRIEVE_EARLY);
    let barrier = replaced(&text, READ_THEN_WAIT, "        tCtAcc = cute.make_tensor(tmem.retrieve_ptr(ACC_DTYPE), tCtAcc_fake.layout)\n        cute.arch.sync_warp()\n        tmem.wait_for_alloc()\n");
    no_fix(&barrier, "tmem-lifetime", WAIT_FIRST);
    let nested = replaced(&text, READ_THEN_WAIT, "        tCtAcc = cute.make_tensor(tmem.retrieve_ptr(ACC_DTYPE), tCtAcc_fake.layout)\n        if K_TILES > 0:\n            tmem.wait_for_alloc()\n");
    assert!(!of_rule(&nested, "tmem-lifetime").is_empty(), "{nested}");
    for d in of_rule(&nested, "tmem-lifetime") {
        assert!(d.fixes.iter().all(|f| !f.title.contains(WAIT_FIRST)), "{:?}", d.fixes);
    }
}

const COMMIT_MASK: &str = "deadlock/primitives_commit_mask_bug.py";
const OWN_BARRIER: &str = "Signal each CTA's own barrier";

/// A `tcgen05` commit multicast to one fixed CTA, where each CTA waits on
/// its own barrier: the mask names the committing CTA, whichever CTA the
/// literal names, however many CTAs the cluster has and whatever the rank
/// is called.
#[test]
fn a_commit_multicast_to_one_fixed_cta_signals_each_ctas_own_barrier() {
    let text = fixture(COMMIT_MASK);
    let (fix, out) = fixed_by(&text, "deadlock", OWN_BARRIER);
    assert_eq!(fix.applicability, Applicability::Unsafe);
    assert!(out.contains("            prims.tcgen05_commit(done, multicast_mask=1 << rank)\n"), "{out}");

    // The rank under another name, the mask in hex.
    let renamed = replaced(&text, "multicast_mask=1)", "multicast_mask=0x1)");
    let renamed = replaced(&renamed, "    rank = cute.arch.block_idx_in_cluster()\n", "    cta_rank = cute.arch.block_idx_in_cluster()\n").replace("dst[rank] = rank", "dst[cta_rank] = cta_rank");
    let (_, out) = fixed_by(&renamed, "deadlock", OWN_BARRIER);
    assert!(out.contains("            prims.tcgen05_commit(done, multicast_mask=1 << cta_rank)\n"), "{out}");

    // Both commits on CTA 1's barrier: its phases run ahead of its waits
    // (`vacuous-wait`); the same mask repairs it.
    let other = replaced(&text, "multicast_mask=1)", "multicast_mask=2)");
    let (_, out) = fixed_by(&other, "vacuous-wait", OWN_BARRIER);
    assert!(out.contains("            prims.tcgen05_commit(done, multicast_mask=1 << rank)\n"), "{out}");

    // No name for the rank: nothing to write the mask with.
    let unnamed = replaced(&text, "    rank = cute.arch.block_idx_in_cluster()\n", "").replace("dst[rank] = rank", "dst[0] = 0");
    no_fix(&unnamed, "deadlock", OWN_BARRIER);
}
