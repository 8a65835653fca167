//! What the checker assumes where a kernel's code leaves a value open: the
//! stage count a pipeline is modelled with is the one the kernel reads
//! elsewhere, a loop bounded by it is explored no further, a count its
//! loops run up to is the number of iterations they are explored for, and a
//! verdict that rests on conditions never explored both ways is not given.

use cute_lint::{analyze_text, AnalysisOptions, Severity};

/// All four warps consume a pipeline whose stage count the caller picks
/// (`Ring(stages)`, not known in the file); warp 0 first fills the ring with
/// `min(PREFETCH, k_tiles)` tiles, `k_tiles` a runtime count.
const RING: &str = r#"
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils as utils


class Ring:
    def __init__(self, stages):
        self.stages = stages

    @cute.kernel
    def kernel(self, x: cute.Tensor, k_tiles: cutlass.Int32):
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        storage = utils.SmemAllocator().allocate_array(cutlass.Int64, 2 * self.stages)
        pipe = pipeline.PipelineAsync.create(
            num_stages=self.stages,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 128),
            barrier_storage=storage,
        )
        prefetch = cutlass.max(cutlass.min(PREFETCH, k_tiles), 0)
        if warp == 0:
            state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, self.stages)
            for i in cutlass.range(prefetch, unroll=1):
                pipe.producer_acquire(state)
                pipe.producer_commit(state)
                state.advance()
        cons = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.stages)
        for i in cutlass.range(prefetch, unroll=1):
            pipe.consumer_wait(cons)
            pipe.consumer_release(cons)
            cons.advance()

    @cute.jit
    def __call__(self, x: cute.Tensor, k_tiles: cutlass.Int32):
        self.kernel(x, k_tiles).launch(grid=[1, 1, 1], block=[128, 1, 1])
"#;

/// As many conditions on a runtime value as one way decides guard
/// synchronization (every thread takes them alike), and one more guards the
/// producer's only commit.
fn condition_past_a_way() -> String {
    // As many conditions as a way decides, each around a barrier every
    // thread meets alike, then the one past them: `n > MAX`.
    let leading: String = (0..cute_check::MAX_OPEN_CONDITIONS).map(|i| format!("    if n > {i}:\n        cute.arch.sync_threads()\n")).collect();
    two_warp_ring("n: cutlass.Int32", &format!(r#"
{leading}    if warp == 0:
        state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, 2)
        if n > {past}:
            pipe.producer_acquire(state)
            pipe.producer_commit(state)
    if warp == 1:
        state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, 2)
        pipe.consumer_wait(state)
        pipe.consumer_release(state)

"#, past = cute_check::MAX_OPEN_CONDITIONS))
}

/// The condition of [`condition_past_a_way`] past what a way decides.
fn past_condition() -> String {
    format!("if n > {}:", cute_check::MAX_OPEN_CONDITIONS)
}

/// A producer that fills the ring (`min(2, k_tiles)` tiles), then refills
/// it while its count is below `k_tiles` (`GUARD`), for a consumer of
/// `k_tiles` tiles; `k_tiles` is a runtime argument.
fn refill() -> String {
    two_warp_ring("k_tiles: cutlass.Int32", r#"
    if warp == 0:
        state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, 2)
        for i in cutlass.range(cutlass.min(2, k_tiles), unroll=1):
            pipe.producer_acquire(state)
            pipe.producer_commit(state)
            state.advance()
        for i in cutlass.range(k_tiles, unroll=1):
            if GUARD:
                pipe.producer_acquire(state)
                pipe.producer_commit(state)
                state.advance()
    if warp == 1:
        state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, 2)
        for i in cutlass.range(k_tiles, unroll=1):
            pipe.consumer_wait(state)
            pipe.consumer_release(state)
            state.advance()

"#)
}

/// A kernel `k(x: cute.Tensor, PARAMS)` whose warps 0 and 1 share a
/// two-stage `PipelineAsync` ring `pipe` (32 producer threads, 32 consumer
/// threads, a block of 64), running `body` after the ring is made; its
/// host passes every argument on.
fn two_warp_ring(params: &str, body: &str) -> String {
    let names: Vec<&str> = params.split(',').map(|p| p.split(':').next().unwrap_or("").trim()).collect();
    format!(
        r#"
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils as utils


@cute.kernel
def k(x: cute.Tensor, {params}):
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    storage = utils.SmemAllocator().allocate_array(cutlass.Int64, 4)
    pipe = pipeline.PipelineAsync.create(
        num_stages=2,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
        barrier_storage=storage,
    )
{body}

@cute.jit
def host(x: cute.Tensor, {params}):
    k(x, {args}).launch(grid=[1, 1, 1], block=[64, 1, 1])
"#,
        body = body.trim_start_matches('\n'),
        args = names.join(", "),
    )
}

fn findings(src: &str) -> Vec<(String, Severity, usize)> {
    let line = |at: u32| src[..at as usize].matches('\n').count() + 1;
    analyze_text(src, &AnalysisOptions::default()).into_iter().map(|d| (d.name.to_string(), d.severity, line(d.range.start))).collect()
}

fn line_of(src: &str, needle: &str) -> usize {
    src[..src.find(needle).expect("present")].matches('\n').count() + 1
}

/// The prologue fills the ring at most once (`min(self.stages, k_tiles)`
/// tiles): explored for the stage count the pipeline is modelled with, not
/// for the iterations a loop of unknown length gets, it never waits for a
/// stage its own warp has yet to consume. One more tile than stages does.
#[test]
fn a_prologue_bounded_by_the_stage_count_is_explored_no_further() {
    let clean = RING.replace("PREFETCH", "self.stages");
    let kernel = line_of(&clean, "def kernel");
    assert_eq!(findings(&clean), vec![("analysis-incomplete".to_string(), Severity::Info, kernel)]);
    let notes = analyze_text(&clean, &AnalysisOptions::default()).remove(0).notes.join("\n");
    assert!(notes.contains("the stage count `self.stages` is not known statically: assuming 2 stages"), "{notes}");

    let overfilled = RING.replace("PREFETCH", "self.stages + 1");
    let acquire = line_of(&overfilled, "pipe.producer_acquire(state)");
    assert_eq!(findings(&overfilled), vec![("deadlock".to_string(), Severity::Warning, acquire)]);
}

/// The producer commits only under the last condition met, one past what a
/// way decides: it is taken as false in every way explored, and the
/// consumer then waits forever. Whether it can be false is the question; the kernel is
/// reported as checked in part, on that condition, not as a hang.
#[test]
fn a_finding_resting_on_a_condition_never_explored_is_not_reported() {
    let guard = line_of(&condition_past_a_way(), &past_condition());
    let got = analyze_text(&condition_past_a_way(), &AnalysisOptions::default());
    assert_eq!(findings(&condition_past_a_way()), vec![("analysis-incomplete".to_string(), Severity::Info, guard)]);
    assert!(got[0].message.contains(&format!("depends on the condition at line {guard}")), "{}", got[0].message);
    // With it among those explored, the hang is data's choice all the
    // same (false hangs, true does not), and the note names it, not
    // the first condition met.
    let first = condition_past_a_way().replacen("    if n > 0:\n        cute.arch.sync_threads()\n", "", 1);
    let guard = line_of(&first, &past_condition());
    assert_eq!(findings(&first), vec![("analysis-incomplete".to_string(), Severity::Info, guard)]);
}

/// `k_tiles` bounds the loops, so it is taken as the iterations they are
/// explored for, and the producer's `state.count < k_tiles` agrees with
/// them: the producer makes as many tiles as the consumer takes. (Decided
/// apart from the loops, that condition made the producer stop early or run
/// on, and the kernel hang either way.) A guard one short does hang.
#[test]
fn a_count_the_loops_run_up_to_is_the_count_they_are_explored_for() {
    let clean = refill().replace("GUARD", "state.count < k_tiles");
    let kernel = line_of(&clean, "def k(");
    assert_eq!(findings(&clean), vec![("analysis-incomplete".to_string(), Severity::Info, kernel)]);
    let notes = analyze_text(&clean, &AnalysisOptions::default()).remove(0).notes.join("\n");
    assert!(notes.contains("`k_tiles` is not known statically: it is taken as 3"), "{notes}");

    // The same, with the count computed in the kernel.
    let computed = clean.replace(
        "def k(x: cute.Tensor, k_tiles: cutlass.Int32):\n",
        "def k(x: cute.Tensor, n: cutlass.Int32):\n    k_tiles = cute.size(x, mode=[0])\n",
    );
    assert_ne!(computed, clean);
    assert_eq!(findings(&computed), vec![("analysis-incomplete".to_string(), Severity::Info, kernel)]);

    // The same, with the count the extent of a thread's own slice: every
    // thread's slice of a tile has the same extent, so every lane takes
    // the same count (it was a check "in part", on a condition no lane
    // decided).
    let per_thread = clean.replace(
        "def k(x: cute.Tensor, k_tiles: cutlass.Int32):\n",
        "def k(x: cute.Tensor, n: cutlass.Int32):\n    tidx, _, _ = cute.arch.thread_idx()\n    k_tiles = cute.size(x[tidx, None], mode=[0])\n",
    );
    assert_ne!(per_thread, clean);
    assert_eq!(findings(&per_thread), vec![("analysis-incomplete".to_string(), Severity::Info, kernel)]);
    let notes = analyze_text(&per_thread, &AnalysisOptions::default()).remove(0).notes.join("\n");
    assert!(notes.contains("`k_tiles` is not known statically: it is taken as 3"), "{notes}");

    let short = refill().replace("GUARD", "state.count < k_tiles - 1");
    let wait = line_of(&short, "pipe.consumer_wait(state)");
    assert_eq!(findings(&short), vec![("deadlock".to_string(), Severity::Warning, wait)]);
}

/// Warps 0 and 1 each compute the tile count `max(n, 1)` and count it down in
/// a `while` loop: warp 0 fills the ring and waits for it to drain; warp 1
/// releases each tile one iteration
/// late (`TEST`: from the second on), and the last after its final
/// decrement (`if remaining == 0:`).
fn counted_down(test: &str) -> String {
    two_warp_ring("n: cutlass.Int32", &r#"
    if warp == 0:
        state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, 2)
        tiles = cutlass.max(n, 1)
        while tiles > 0:
            pipe.producer_acquire(state)
            pipe.producer_commit(state)
            state.advance()
            tiles -= 1
        pipe.producer_tail(state)
    if warp == 1:
        cons = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, 2)
        done = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, 2)
        remaining = cutlass.max(n, 1)
        total = remaining
        while remaining > 0:
            pipe.consumer_wait(cons)
            cons.advance()
            if TEST:
                pipe.consumer_release(done)
                done.advance()
            remaining -= 1
            if remaining == 0:
                pipe.consumer_release(done)
"#.replace("TEST", test))
}

/// `remaining != total` and `remaining == 0` compare the count with its own
/// start and with the bound of the loop that counts it down: known in each
/// iteration once the count is the one the loop is explored for. (Decided as
/// open conditions, they made the consumer skip its last release in some
/// ways, and the kernel was "checked only in part" on a hang no launch has.)
/// Releasing on the first tile alone leaves the tail waiting, in every run.
#[test]
fn a_count_counted_down_is_known_against_its_start_and_its_end() {
    for test in ["remaining != total", "total != remaining", "remaining - total < 0", "remaining < total"] {
        let clean = counted_down(test);
        let kernel = line_of(&clean, "def k(");
        assert_eq!(findings(&clean), vec![("analysis-incomplete".to_string(), Severity::Info, kernel)], "{test}");
        let notes = analyze_text(&clean, &AnalysisOptions::default()).remove(0).notes.join("\n");
        assert!(notes.contains("`remaining` is not known statically: it is taken as 3"), "{notes}");
    }
    let first_only = counted_down("remaining == total");
    let tail = line_of(&first_only, "pipe.producer_tail(state)");
    assert_eq!(findings(&first_only), vec![("deadlock".to_string(), Severity::Warning, tail)]);
    // Counted down from a copy, and the copy compared: the same.
    let copied = counted_down("remaining != total").replace("remaining = cutlass.max(n, 1)\n        total = remaining", "total = cutlass.max(n, 1)\n        remaining = total");
    assert_ne!(copied, counted_down("remaining != total"));
    assert_eq!(findings(&copied).len(), 1, "{:?}", findings(&copied));
    assert_eq!(findings(&copied)[0].0, "analysis-incomplete");
}

/// A producer at warp `PRODUCER` of a block the caller sizes, whose ring
/// nothing consumes.
const ROLE_BEYOND_FOUR_WARPS: &str = r#"
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils as utils


class Ring:
    def __init__(self, consumer_warps):
        self.threads = 32 * (consumer_warps + 1)
        self.producer_warp = PRODUCER

    @cute.kernel
    def kernel(self, x: cute.Tensor):
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        storage = utils.SmemAllocator().allocate_array(cutlass.Int64, 4)
        pipe = pipeline.PipelineAsync.create(
            num_stages=2,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
            barrier_storage=storage,
        )
        if warp == self.producer_warp:
            state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, 2)
            for i in cutlass.range(4, unroll=1):
                pipe.producer_acquire(state)
                pipe.producer_commit(state)
                state.advance()

    @cute.jit
    def __call__(self, x: cute.Tensor):
        self.kernel(x).launch(grid=[1, 1, 1], block=[max(self.threads, 64), 1, 1])
"#;

/// A producer at warp 4 of a block the caller sizes: the block assumed is
/// the two warp groups that reach it, not the four warps that would check
/// the kernel without its producer. Its ring, which nothing consumes, hangs
/// at its third acquire, as it does with the block known; the finding rests
/// on the assumed block, and says so.
#[test]
fn the_block_assumed_reaches_the_warps_the_roles_select() {
    let src = ROLE_BEYOND_FOUR_WARPS.replace("PRODUCER", "4");
    let acquire = line_of(&src, "pipe.producer_acquire(state)");
    let got = analyze_text(&src, &AnalysisOptions::default());
    assert_eq!(findings(&src), vec![("deadlock".to_string(), Severity::Warning, acquire)]);
    let notes = got[0].notes.join("\n");
    assert!(notes.contains("assuming 256 threads per CTA, the warp groups that reach warp 4"), "{notes}");
    let known = src.replace("block=[max(self.threads, 64), 1, 1]", "block=[160, 1, 1]");
    assert_eq!(findings(&known), vec![("deadlock".to_string(), Severity::Error, acquire)]);
}

/// A role at a warp no CTA has (warp 40, past 1,024 threads): no block
/// reaches it, so the kernel is not checked, naming the branch, rather
/// than checked without that role.
#[test]
fn a_warp_role_beyond_every_block_is_reported() {
    let src = ROLE_BEYOND_FOUR_WARPS.replace("PRODUCER", "40");
    let branch = line_of(&src, "if warp == self.producer_warp:");
    let got = analyze_text(&src, &AnalysisOptions::default());
    assert_eq!(findings(&src), vec![("analysis-incomplete".to_string(), Severity::Info, branch)]);
    assert!(got[0].message.contains("this branch is taken by warp 40"), "{}", got[0].message);
}

/// A count that bounds a loop and also decides which threads take part
/// (`if tidx < n:`) is not taken as the few iterations a loop is explored
/// for: three threads of a warp would reach a collective the code means for
/// whole warps, a launch no caller makes.
#[test]
fn a_count_that_selects_threads_is_not_taken_as_a_trip_count() {
    let src = r#"
import cutlass
import cutlass.cute as cute


@cute.kernel
def k(x: cute.Tensor, n: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    acc = cutlass.Int32(0)
    if tidx < n:
        acc = x[tidx]
        acc = acc + cute.arch.shuffle_sync_bfly(acc, offset=1)
    for i in cutlass.range(n):
        acc = acc + 1


@cute.jit
def host(x: cute.Tensor, n: cutlass.Constexpr):
    k(x, n).launch(grid=[1, 1, 1], block=[128, 1, 1])
"#;
    let got = findings(src);
    assert!(got.iter().all(|(_, severity, _)| *severity == Severity::Info), "{got:?}");
    let notes = analyze_text(src, &AnalysisOptions::default()).into_iter().flat_map(|d| d.notes).collect::<Vec<_>>().join("\n");
    assert!(!notes.contains("`n` is not known statically: it is taken as 3"), "{notes}");
}

/// Two ways of deciding a condition on a runtime value (`if n > 0:`) that
/// pick the stage count of a ring: `STAGES` when it holds, 2 otherwise.
fn stages_picked_at_run_time(stages: &str) -> String {
    r#"
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils as utils


@cute.kernel
def k(x: cute.Tensor, n: cutlass.Int32):
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    storage = utils.SmemAllocator().allocate_array(cutlass.Int64, 8)
    stages = 2
    if n > 0:
        stages = STAGES
    pipe = pipeline.PipelineAsync.create(
        num_stages=stages,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
        barrier_storage=storage,
    )
    if warp == 0:
        state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, stages)
        for i in cutlass.range(4, unroll=1):
            pipe.producer_acquire(state)
            pipe.producer_commit(state)
            state.advance()
    if warp == 1:
        state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, stages)
        for i in cutlass.range(4, unroll=1):
            pipe.consumer_wait(state)
            pipe.consumer_release(state)
            state.advance()


@cute.jit
def host(x: cute.Tensor, n: cutlass.Int32):
    k(x, n).launch(grid=[1, 1, 1], block=[64, 1, 1])
"#
    .replace("STAGES", stages)
}

/// A condition whose two ways build the same model (the same stage count
/// either way) costs one exploration; one whose ways differ, two. The
/// verdict is the same as the one of every way explored on its own.
#[test]
fn ways_of_deciding_a_condition_that_build_the_same_model_are_explored_once() {
    let explorations = |src: &str| {
        let mut count = 0;
        let diagnostics = cute_lint::analyze_text_with(src, &AnalysisOptions::default(), &mut |model, options| {
            count += 1;
            cute_check::explore(model, options)
        });
        (count, diagnostics)
    };
    for (stages, expected) in [("2", 1), ("3", 2)] {
        let src = stages_picked_at_run_time(stages);
        let (count, diagnostics) = explorations(&src);
        assert_eq!(count, expected, "stages {stages}");
        assert_eq!(diagnostics, analyze_text(&src, &AnalysisOptions::default()), "stages {stages}");
        assert!(diagnostics.is_empty(), "stages {stages}: {diagnostics:?}");
    }
}

/// Conditions on a runtime value guard barriers every thread meets alike,
/// one more than a way decides both ways. The kernel is correct either way,
/// but the last was explored only as false:
/// it is reported as checked in part, naming that condition, not as checked.
#[test]
fn a_condition_explored_only_as_false_is_named() {
    let past = past_condition();
    let src = condition_past_a_way().replace(
        &format!("        {past}\n            pipe.producer_acquire(state)\n            pipe.producer_commit(state)\n"),
        &format!("        {past}\n            cute.arch.sync_warp()\n        pipe.producer_acquire(state)\n        pipe.producer_commit(state)\n"),
    );
    let got = analyze_text(&src, &AnalysisOptions::default());
    let kernel = line_of(&src, "def k(");
    assert_eq!(findings(&src), vec![("analysis-incomplete".to_string(), Severity::Info, kernel)]);
    let fourth = line_of(&src, &past);
    assert!(
        got[0].message.contains(&format!("the condition on runtime values at line {fourth} (on the argument `n` of `host`) was explored only as false")),
        "{}",
        got[0].message
    );
    // With one condition fewer, every way is explored: checked.
    let three = src.replacen("    if n > 0:\n        cute.arch.sync_threads()\n", "", 1);
    assert_eq!(findings(&three), vec![]);
}

/// A hang only when `m > 0` holds, a condition met only under `n > 0`
/// (both runtime values): the way that decides `n > 0` true branches on
/// `m > 0` too, and the verdict names the condition the hang depends on.
/// (Decided only as false, `m > 0` hid the hang: the kernel passed.)
#[test]
fn a_condition_met_only_under_another_is_explored_both_ways() {
    let src = &two_warp_ring("n: cutlass.Int32, m: cutlass.Int32", r#"
    if n > 0:
        if warp == 0:
            state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, 2)
            pipe.producer_acquire(state)
            pipe.producer_commit(state)
        if warp == 1:
            state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, 2)
            pipe.consumer_wait(state)
            pipe.consumer_release(state)
            if m > 0:
                state.advance()
                pipe.consumer_wait(state)

"#);
    let nested = line_of(src, "if m > 0:");
    let got = analyze_text(src, &AnalysisOptions::default());
    assert_eq!(findings(src), vec![("analysis-incomplete".to_string(), Severity::Info, nested)]);
    assert!(got[0].message.contains(&format!("depends on the condition at line {nested}")), "{}", got[0].message);
}

/// Thread 0 stores a scale the other threads then load with no barrier in
/// between, in every way of deciding the conditions on a runtime value
/// that guard barriers before it, one more than a way decides. The last is explored only as false: the
/// race is reported, as a warning naming that condition, since the data
/// decides the path it is found on.
#[test]
fn a_race_in_every_way_run_names_the_conditions_explored_one_way() {
    let src = r#"
import cutlass
import cutlass.cute as cute


@cute.struct
class SharedStorage:
    scale: cute.struct.MemRange[cutlass.Float32, 1]


@cute.kernel
def k(x: cute.Tensor, y: cute.Tensor, n: cutlass.Int32):
    tid, _, _ = cute.arch.thread_idx()
    storage = cutlass.memory.SmemAllocator().allocate(SharedStorage)
    scale = storage.scale.get_tensor(cute.make_layout(1))
GUARDS    if tid == 0:
        scale[0] = x[0]
    y[tid] = scale[0]


@cute.jit
def host(x: cute.Tensor, y: cute.Tensor, n: cutlass.Int32):
    k(x, y, n).launch(grid=[1, 1, 1], block=[64, 1, 1])
"#;
    // One condition more than a way decides.
    let guards: String = (0..=cute_check::MAX_OPEN_CONDITIONS).map(|i| format!("    if n > {i}:\n        cute.arch.sync_threads()\n")).collect();
    let src = &src.replace("GUARDS", &guards);
    let store = line_of(src, "scale[0] = x[0]");
    assert!(findings(src).contains(&("smem-race".to_string(), Severity::Warning, store)), "{:?}", findings(src));
    let race = analyze_text(src, &AnalysisOptions::default()).into_iter().find(|d| d.name == "smem-race").unwrap();
    let fourth = line_of(src, &past_condition());
    assert!(
        race.notes.iter().any(|n| n.contains(&format!("line {fourth} (on the argument `n` of `host`) was explored only as false"))),
        "{:?}",
        race.notes
    );
}

/// The producer and the consumer each test `n > 0` (a runtime value)
/// around their part of the ring. Both tests see the same value, so every
/// thread takes them alike: the kernel is checked, not reported as hanging
/// when the producer skips its part and the consumer does not, which no
/// launch does. A test on a name the kernel rebinds in between stays its own.
#[test]
fn the_same_test_in_two_roles_is_decided_alike() {
    let src = &two_warp_ring("n: cutlass.Int32", r#"
    if warp == 0:
        if n > 0:
            state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, 2)
            pipe.producer_acquire(state)
            pipe.producer_commit(state)
    REBIND
    if warp == 1:
        if n > 0:
            state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, 2)
            pipe.consumer_wait(state)
            pipe.consumer_release(state)

"#);
    let alike = src.replace("    REBIND\n", "");
    assert_eq!(findings(&alike), vec![]);
    let rebound = src.replace("REBIND", "n = x[0]");
    // Decided apart, the producer's test parts a hang from a clean run.
    let producer_test = line_of(&rebound, "if n > 0:");
    assert_eq!(findings(&rebound), vec![("analysis-incomplete".to_string(), Severity::Info, producer_test)]);
}

/// An mbarrier every warp's elected lane initialises, in a block the caller
/// sizes (`BLOCK`).
const INIT_PER_WARP: &str = r#"
import cutlass
import cutlass.cute as cute
import cutlass.utils as utils


@cute.kernel
def k(dst: cute.Tensor, lanes: cutlass.Constexpr):
    mbar = utils.SmemAllocator().allocate_array(cutlass.Int64, 1)
    with cute.arch.elect_one():
        cute.arch.mbarrier_init(mbar, 1)
    cute.arch.sync_threads()


@cute.jit
def host(dst: cute.Tensor, lanes: cutlass.Constexpr):
    k(dst, lanes).launch(grid=(1, 1, 1), block=(BLOCK, 1, 1))
"#;

/// A finding read off the model alone (an mbarrier initialised by the
/// elected lane of each of four warps) rests on the block the model was
/// built for: with the block assumed it is a warning that names the
/// assumption (it was an error with no note); with four warps launched, an
/// error.
#[test]
fn a_finding_of_the_model_alone_rests_on_its_assumed_block() {
    let src = INIT_PER_WARP.replace("BLOCK", "lanes");
    let init = line_of(&src, "cute.arch.mbarrier_init(mbar, 1)");
    assert_eq!(findings(&src), vec![("mbarrier-init-hazard".to_string(), Severity::Warning, init)]);
    let notes = analyze_text(&src, &AnalysisOptions::default()).remove(0).notes.join("\n");
    assert!(notes.contains("is not known statically: assuming 128 threads per CTA"), "{notes}");
    let known = INIT_PER_WARP.replace("BLOCK", "128");
    assert_eq!(findings(&known), vec![("mbarrier-init-hazard".to_string(), Severity::Error, init)]);
}

/// A host function that launches one kernel or the other as a compile-time
/// mode selects, and a `__main__` block that compiles it in the mode of the
/// first.
const LAUNCH_BY_MODE: &str = r#"
import cutlass
import cutlass.cute as cute
import cutlass.utils as utils


@cute.kernel
def plain(dst: cute.Tensor):
    cute.arch.sync_threads()


@cute.kernel
def per_warp(dst: cute.Tensor):
    mbar = utils.SmemAllocator().allocate_array(cutlass.Int64, 1)
    with cute.arch.elect_one():
        cute.arch.mbarrier_init(mbar, 1)
    cute.arch.sync_threads()


@cute.jit
def host(dst: cute.Tensor, mode: cutlass.Constexpr):
    if cutlass.const_expr(mode == "plain"):
        plain(dst).launch(grid=(1, 1, 1), block=(128, 1, 1))
    else:
        per_warp(dst).launch(grid=(1, 1, 1), block=(BLOCK, 1, 1))


if __name__ == "__main__":
    cute.compile(host, None, "plain")
"#;

/// A kernel launched only in a branch the file's own configuration does
/// not take is checked with the block that launch writes, not an assumed
/// one: one warp initialising its mbarrier from its elected lane is correct
/// (it was a warning for the 128 threads assumed); four warps doing so are
/// flagged, saying which launch the finding rests on.
#[test]
fn a_launch_in_a_branch_not_taken_gives_the_kernel_its_block() {
    let one_warp = LAUNCH_BY_MODE.replace("BLOCK", "32");
    assert_eq!(findings(&one_warp), vec![]);
    let four_warps = LAUNCH_BY_MODE.replace("BLOCK", "128");
    let init = line_of(&four_warps, "cute.arch.mbarrier_init(mbar, 1)");
    let diags = analyze_text(&four_warps, &AnalysisOptions::default());
    assert_eq!(findings(&four_warps), vec![("mbarrier-init-hazard".to_string(), Severity::Warning, init)]);
    let notes = diags[0].notes.join("\n");
    assert!(notes.contains("the launch of `per_warp` is in a branch of `host` that the host values taken for this file do not reach"), "{notes}");
    assert!(!notes.contains("assuming 128 threads"), "{notes}");
}

/// The consumer warp runs in a helper the kernel hands its optional tensor:
/// the helper's `if bias is not None:` tests the value the kernel's `if
/// cutlass.const_expr(bias is not None):` tests, so it is one condition,
/// decided alike: the ring is balanced in both of its ways. (Decided apart,
/// the way where the consumer waits and the producer never commits hangs,
/// and the verdict rested on the data.) With one wait more in the helper,
/// the way where the bias is given hangs, and the one where it is not
/// passes: the verdict rests on that condition.
#[test]
fn a_helper_tests_the_condition_the_kernel_tests_on_what_it_was_handed() {
    let src = r#"
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils as utils


@cute.jit
def consume(pipe, bias):
    if bias is not None:
        state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, 2)
        pipe.consumer_wait(state)
        pipe.consumer_release(state)


@cute.kernel
def k(x: cute.Tensor, bias):
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    storage = utils.SmemAllocator().allocate_array(cutlass.Int64, 4)
    pipe = pipeline.PipelineAsync.create(
        num_stages=2,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
        barrier_storage=storage,
    )
    if warp == 0:
        if cutlass.const_expr(bias is not None):
            state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, 2)
            pipe.producer_acquire(state)
            pipe.producer_commit(state)
    if warp == 1:
        consume(pipe, bias)


@cute.jit
def host(x: cute.Tensor, bias):
    k(x, bias).launch(grid=[1, 1, 1], block=[64, 1, 1])
"#;
    assert_eq!(findings(src), vec![]);
    let one_wait_more = src.replace(
        "        pipe.consumer_release(state)\n",
        "        pipe.consumer_release(state)\n        state.advance()\n        pipe.consumer_wait(state)\n",
    );
    let got = analyze_text(&one_wait_more, &AnalysisOptions::default());
    let test = line_of(&one_wait_more, "if cutlass.const_expr(bias is not None):");
    assert_eq!(findings(&one_wait_more), vec![("analysis-incomplete".to_string(), Severity::Info, test)]);
    assert!(got[0].message.contains(&format!("depends on the condition at line {test}")), "{}", got[0].message);
}

/// Five warps, each testing a runtime value of its own, after a long run of
/// warp barriers every thread executes (some 50,000 statements in all): the
/// 31 ways besides the first run each run again only the warp whose
/// condition they decide otherwise than a way before, so they fit the
/// statement budget, and the kernel is checked. Where every warp tests all
/// five values, each way runs every warp again, past the budget: the
/// kernel is not checked, and says why.
#[test]
fn ways_run_again_only_the_warps_whose_conditions_they_decide_otherwise() {
    let roles: String = ["a", "b", "c", "d", "e"]
        .iter()
        .enumerate()
        .map(|(w, v)| format!("    if warp == {w}:\n        if {v} > 0:\n            cute.arch.sync_warp()\n"))
        .collect();
    let kernel = |roles: &str| {
        format!(
            r#"
import cutlass
import cutlass.cute as cute


@cute.kernel
def k(a: cutlass.Int32, b: cutlass.Int32, c: cutlass.Int32, d: cutlass.Int32, e: cutlass.Int32):
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    for i in cutlass.range_constexpr(300):
        cute.arch.sync_warp()
{roles}    cute.arch.sync_threads()


@cute.jit
def host(a: cutlass.Int32, b: cutlass.Int32, c: cutlass.Int32, d: cutlass.Int32, e: cutlass.Int32):
    k(a, b, c, d, e).launch(grid=[1, 1, 1], block=[160, 1, 1])
"#
        )
    };
    assert_eq!(findings(&kernel(&roles)), vec![]);
    let every_warp: String = ["a", "b", "c", "d", "e"].iter().map(|v| format!("    if {v} > 0:\n        cute.arch.sync_warp()\n")).collect();
    let src = kernel(&every_warp);
    let got = analyze_text(&src, &AnalysisOptions::default());
    assert_eq!(findings(&src), vec![("analysis-incomplete".to_string(), Severity::Info, line_of(&src, "def k("))]);
    assert!(got[0].message.contains("running its threads for each of the 32 ways"), "{}", got[0].message);
}
