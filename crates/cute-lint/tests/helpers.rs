//! Helpers a kernel calls: a thread inlining one runs the statements its
//! synchronization, its memory accesses and its caller depend on (its
//! slice), and what it does to the objects it is given is seen by the
//! caller.

use cute_lint::{analyze_text, AnalysisOptions, Severity};

/// A producer warp and a consumer warp over a two-stage `PipelineAsync`.
/// The consumer's loop runs `consume` (which waits, computes over a loop of
/// a runtime length, and releases), advances its state, takes the next
/// stage, and ends with `STEP`.
fn kernel(step: &str) -> String {
    r#"
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils as utils


@cute.jit
def consume(pipe, state, frag, n):
    pipe.consumer_wait(state)
    acc = cutlass.Float32(1.0)
    for i in cutlass.range(n):
        acc = acc * 0.5 + 1.0
    frag[0] = acc
    pipe.consumer_release(state)


@cute.jit
def advance_once(state):
    state.advance()


@cute.jit
def advance_and_count(state, count):
    state.advance()
    return count + 1


@cute.jit
def advance_twice(state):
    advance_once(state)
    state.advance()


@cute.kernel
def k(x: cute.Tensor, n: cutlass.Int32):
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    storage = utils.SmemAllocator().allocate_array(cutlass.Int64, 4)
    pipe = pipeline.PipelineAsync.create(
        num_stages=2,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
        barrier_storage=storage,
    )
    frag = cute.make_rmem_tensor((8,), cutlass.Float32)
    if warp == 0:
        state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, 2)
        for i in cutlass.range(4, unroll=1):
            pipe.producer_acquire(state)
            pipe.producer_commit(state)
            state.advance()
        pipe.producer_tail(state)
    if warp == 1:
        state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, 2)
        for i in cutlass.range(2, unroll=1):
            consume(pipe, state, frag, n)
            state.advance()
            pipe.consumer_wait(state)
            pipe.consumer_release(state)
            STEP
        x[0] = frag[0]


@cute.jit
def host(x: cute.Tensor, n: cutlass.Int32):
    k(x, n).launch(grid=[1, 1, 1], block=[64, 1, 1])
"#
    .replace("STEP", step)
}

fn findings(src: &str) -> Vec<(String, Severity, usize)> {
    let line = |at: u32| src[..at as usize].matches('\n').count() + 1;
    analyze_text(src, &AnalysisOptions::default()).into_iter().map(|d| (d.name.to_string(), d.severity, line(d.range.start))).collect()
}

/// The loop over `n` in `consume` computes a value nothing synchronizes
/// on: it is not run, so the kernel is checked in full (no bounded
/// exploration of it), and a wrong phase is an error, not a warning that
/// rests on a bounded loop.
#[test]
fn a_helpers_datapath_loop_of_a_runtime_length_is_not_explored() {
    assert_eq!(findings(&kernel("state.advance()")), vec![]);
    let src = kernel("advance_twice(state)");
    // The kernel's own wait after a stage was skipped.
    let wait = src.match_indices("pipe.consumer_wait(state)").nth(1).expect("the kernel's wait").0;
    let line = src[..wait].matches('\n').count() + 1;
    assert_eq!(findings(&src), vec![("untoggled-phase".to_string(), Severity::Error, line)]);
}

/// `advance_once(state)` advances the caller's state, as the object it is:
/// the consumer takes the stages in turn. So does a helper whose result
/// nothing reads.
#[test]
fn a_state_a_helper_advances_is_advanced_in_the_caller() {
    assert_eq!(findings(&kernel("advance_once(state)")), vec![]);
    assert_eq!(findings(&kernel("taken = advance_and_count(state, i)")), vec![]);
}

/// A producer and a consumer warp whose consumer hands the pipeline to a
/// helper bundled in a `types.SimpleNamespace`, as the attention kernels
/// bundle their pipelines and tensors for each role; the helper ends with
/// `RELEASE`.
fn bundled_kernel(release: &str) -> String {
    r#"
from types import SimpleNamespace

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils as utils


@cute.jit
def consume(params, state):
    params.pipe.consumer_wait(state)
    params.out[params.tile] = params.tile
    RELEASE


@cute.kernel
def k(x: cute.Tensor):
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    storage = utils.SmemAllocator().allocate_array(cutlass.Int64, 4)
    pipe = pipeline.PipelineAsync.create(
        num_stages=2,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
        barrier_storage=storage,
    )
    if warp == 0:
        state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, 2)
        for i in cutlass.range(4, unroll=1):
            pipe.producer_acquire(state)
            pipe.producer_commit(state)
            state.advance()
        pipe.producer_tail(state)
    if warp == 1:
        state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, 2)
        for i in cutlass.range(4, unroll=1):
            params = SimpleNamespace(pipe=pipe, out=x, tile=i)
            consume(params, state)
            state.advance()


@cute.jit
def host(x: cute.Tensor):
    k(x).launch(grid=[1, 1, 1], block=[64, 1, 1])
"#
    .replace("RELEASE", release)
}

/// The pipeline a `SimpleNamespace` carries is the kernel's own: the helper's
/// calls on it are checked, so a consumer that never releases is a hang (at
/// the producer's acquire once the ring is full), and one that releases is
/// silent; neither is "not checked".
#[test]
fn a_pipeline_bundled_in_a_simple_namespace_is_followed() {
    assert_eq!(findings(&bundled_kernel("params.pipe.consumer_release(state)")), vec![]);
    let src = bundled_kernel("pass");
    let line_of = |text: &str| src[..src.find(text).expect(text)].matches('\n').count() + 1;
    // Both sides block: the producer at its third acquire, the consumer in
    // the helper at its third wait; the report starts at either.
    let blocked = [line_of("pipe.producer_acquire(state)"), line_of("params.pipe.consumer_wait(state)")];
    let found = findings(&src);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].0.as_str(), found[0].1), ("deadlock", Severity::Error));
    assert!(blocked.contains(&found[0].2), "{found:?} not at {blocked:?}");
}

/// The kernel's consumer calls a helper that waits, then walks the subtiles
/// of a tile of a size not known statically (`n = cute.size(t, mode=[1])`,
/// `for i in cutlass.range(n):`, as the Blackwell GEMM epilogues of
/// `cutlass.utils.gemm.sm100` do), and releases the stage and advances at
/// `LAST` (`i == n - 1`: the last subtile).
fn last_subtile_kernel(last: &str) -> String {
    let helper = r#"
@cute.jit
def consume_subtiles(pipe, state, t):
    n = cute.size(t, mode=[1])
    pipe.consumer_wait(state)
    for i in cutlass.range(n):
        if LAST:
            pipe.consumer_release(state)
            state.advance()


@cute.kernel"#
        .replace("LAST", last);
    kernel("state.advance()")
        .replacen("\n@cute.kernel", &helper, 1)
        .replace("consume(pipe, state, frag, n)\n            state.advance()\n", "consume_subtiles(pipe, state, x)\n")
}

/// In the iterations of a helper's loop over a count not known statically,
/// that count is the one they are explored for: `i == n - 1` holds in the
/// last of them alone, so the stage is released once per tile, as the
/// code does for any `n`. Never releasing is still a hang.
#[test]
fn a_helpers_test_of_its_last_iteration_holds_in_the_last_explored() {
    let clean = findings(&last_subtile_kernel("i == n - 1"));
    assert!(clean.iter().all(|(name, _, _)| name == "analysis-incomplete"), "{clean:?}");
    let never = findings(&last_subtile_kernel("i == n"));
    assert!(never.iter().any(|(name, _, _)| name != "analysis-incomplete"), "{never:?}");
}

/// The consumer warps of `tests/fixtures/deadlock/optional_tile_bug.py`
/// hand a helper a namespace of the host's optional tile and of the ring,
/// a buffer every lane writes its own element of. The ring's contents
/// differ between lanes; the tile does not, so the helper's test of it
/// (`params.extra is None`) decides whole warps: the warp runs as one, and
/// its wait is the hang, with no lane passing the CTA barrier of the
/// pipeline's creation ahead of the others (which made a wait on a barrier
/// "not initialised yet" of it). A member that does differ between lanes
/// still splits the warp.
#[test]
fn a_namespace_differs_between_lanes_member_by_member() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/deadlock/optional_tile_bug.py");
    let src = std::fs::read_to_string(path).expect("fixture");
    let wait = src[..src.find("# expect: deadlock").expect("marked")].matches('\n').count() + 1;
    assert_eq!(findings(&src), vec![("deadlock".to_string(), Severity::Error, wait)]);
    let got = analyze_text(&src, &AnalysisOptions::default());
    assert!(got[0].notes.iter().all(|n| !n.contains("splits their warp")), "{:?}", got[0].notes);

    // The lane's own index in the namespace, tested around a warp barrier:
    // that member differs, and the barrier is reached by one lane.
    let split = src
        .replace("params = SimpleNamespace(extra=extra, ring=ring)", "params = SimpleNamespace(extra=extra, ring=ring, lane=lane)")
        .replace("    if cutlass.const_expr(params.extra is None):", "    if params.lane == 0:\n        cute.arch.sync_warp()\n    if cutlass.const_expr(params.extra is None):");
    assert_ne!(split, src);
    let names: Vec<String> = findings(&split).into_iter().map(|(name, ..)| name).collect();
    assert!(names.contains(&"single-lane-collective".to_string()), "{names:?}");
}
