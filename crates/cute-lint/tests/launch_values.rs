//! Tests of one argument of the launch are one condition, wherever they are
//! written and however the value reached them: the kernel's own test, a
//! helper's test of a namespace or an object it was handed, the opposite
//! test, the value with a constant added. A configuration the host chooses
//! is then checked as a launch has it (both roles with the extra tile, or
//! neither), and a role that tests it the wrong way round hangs in every
//! way.

use cute_lint::{analyze_text, AnalysisOptions, Severity};

/// Warp 0 produces one tile, and a second when `PRODUCER_TEST`; warp 1
/// consumes one, and a second in `consume_extra` when `CONSUMER_TEST`
/// (`params` is what the consumer hands its helper). The producer then
/// waits for the ring to drain.
const KERNEL: &str = r#"
from types import SimpleNamespace
from typing import Optional

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils as utils


def consume_extra(params, pipe, state):
    if cutlass.const_expr(CONSUMER_TEST):
        pipe.consumer_wait(state)
        pipe.consumer_release(state)
        state.advance()
    return state


@cute.kernel
def k(x: cute.Tensor, lengths: Optional[cute.Tensor], n: cutlass.Int32):
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
        pipe.producer_acquire(state)
        pipe.producer_commit(state)
        state.advance()
        if cutlass.const_expr(PRODUCER_TEST):
            pipe.producer_acquire(state)
            pipe.producer_commit(state)
            state.advance()
        pipe.producer_tail(state)
    if warp == 1:
        params = PARAMS
        cons = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, 2)
        pipe.consumer_wait(cons)
        pipe.consumer_release(cons)
        cons.advance()
        cons = consume_extra(params, pipe, cons)


@cute.jit
def host(x: cute.Tensor, lengths: Optional[cute.Tensor], n: cutlass.Int32):
    k(x, lengths, n).launch(grid=[1, 1, 1], block=[64, 1, 1])
"#;

fn kernel(producer_test: &str, params: &str, consumer_test: &str) -> String {
    KERNEL.replace("PRODUCER_TEST", producer_test).replace("PARAMS", params).replace("CONSUMER_TEST", consumer_test)
}

fn findings(src: &str) -> Vec<(String, Severity, usize)> {
    let line = |at: u32| src[..at as usize].matches('\n').count() + 1;
    analyze_text(src, &AnalysisOptions::default()).into_iter().map(|d| (d.name.to_string(), d.severity, line(d.range.start))).collect()
}

fn line_of(src: &str, needle: &str) -> usize {
    src[..src.find(needle).expect("present")].matches('\n').count() + 1
}

const NAMESPACE: &str = "SimpleNamespace(lengths=lengths, n=n)";

/// The same with the configuration a constructor argument the kernel reads
/// as `self.lengths`, and its helper as `params.lengths`.
const BY_SELF: &str = r#"from types import SimpleNamespace
from typing import Optional

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils as utils


def consume_extra(params, pipe, state):
    if cutlass.const_expr(params.lengths is not None):
        pipe.consumer_wait(state)
        pipe.consumer_release(state)
        state.advance()
    return state


class Op:
    def __init__(self, lengths):
        self.lengths = lengths

    @cute.kernel
    def k(self, x: cute.Tensor, n: cutlass.Int32):
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
            pipe.producer_acquire(state)
            pipe.producer_commit(state)
            state.advance()
            if cutlass.const_expr(self.lengths is not None):
                pipe.producer_acquire(state)
                pipe.producer_commit(state)
                state.advance()
            pipe.producer_tail(state)
        if warp == 1:
            cons = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, 2)
            pipe.consumer_wait(cons)
            pipe.consumer_release(cons)
            cons.advance()
            cons = consume_extra(self, pipe, cons)

    @cute.jit
    def __call__(self, x: cute.Tensor, n: cutlass.Int32):
        self.k(x, n).launch(grid=[1, 1, 1], block=[64, 1, 1])
"#;

#[test]
fn a_launch_value_tested_by_a_helper_through_a_namespace_is_the_kernels_condition() {
    let clean = kernel("lengths is not None", NAMESPACE, "params.lengths is not None");
    assert_eq!(findings(&clean), vec![]);
    // The opposite tests, and the test written the other way round.
    for (producer, consumer) in [
        ("not (lengths is None)", "params.lengths is not None"),
        ("lengths is None", "params.lengths is None"),
        ("None is not lengths", "not params.lengths is None"),
    ] {
        assert_eq!(findings(&kernel(producer, NAMESPACE, consumer)), vec![], "{producer} / {consumer}");
    }
    // An object the helper reads it from rather than a namespace: the
    // kernel's `self`, handed whole to the helper.
    assert_eq!(findings(BY_SELF), vec![]);
    let bug = BY_SELF.replace("if cutlass.const_expr(params.lengths is not None):", "if cutlass.const_expr(params.lengths is None):");
    assert_eq!(findings(&bug), vec![("deadlock".to_string(), Severity::Warning, line_of(&bug, "pipe.consumer_wait(state)"))]);
}

/// The consumer tests the configuration the wrong way round: it waits for
/// a second tile exactly when the producer makes none. Whichever the host
/// passes, one side is left waiting: a hang in every launch, reported where
/// the first way (no `lengths`) leaves the consumer, with that way named.
#[test]
fn a_role_that_tests_the_launch_value_the_wrong_way_round_hangs_in_every_way() {
    let bug = kernel("lengths is not None", NAMESPACE, "params.lengths is None");
    let extra_wait = line_of(&bug, "        pipe.consumer_wait(state)");
    let got = analyze_text(&bug, &AnalysisOptions::default());
    assert_eq!(findings(&bug), vec![("deadlock".to_string(), Severity::Warning, extra_wait)]);
    let producer_test = line_of(&bug, "if cutlass.const_expr(lengths is not None):");
    assert!(
        got[0].notes.iter().any(|n| n.contains(&format!("the condition at line {producer_test} (on the argument `lengths` of `host`) is false in every thread"))),
        "{:?}",
        got[0].notes
    );
    // Written the other way round in both roles, the same hang.
    let flipped = kernel("not (lengths is None)", NAMESPACE, "not (params.lengths is not None)");
    assert_eq!(findings(&flipped), vec![("deadlock".to_string(), Severity::Warning, line_of(&flipped, "        pipe.consumer_wait(state)"))]);
}

/// `n - 1 > 0` in the helper is the producer's `n > 1`; `n > 0` is not.
#[test]
fn a_launch_value_plus_a_constant_is_the_same_value() {
    let same = kernel("n > 1", "SimpleNamespace(m=n - 1)", "params.m > 0");
    assert_eq!(findings(&same), vec![]);
    // Another threshold is another condition: decided apart, the roles
    // disagree in some ways, and the kernel is checked only in part, not
    // reported as hanging.
    let other = kernel("n > 1", "SimpleNamespace(m=n - 1)", "params.m > 1");
    let got = findings(&other);
    assert!(got.iter().all(|(name, ..)| name == "analysis-incomplete"), "{got:?}");
    assert!(!got.is_empty());
}
