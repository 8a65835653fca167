//! Pipelines used out of their roles: a `producer_tail` run twice or by a
//! consumer, a `consumer_release` by a thread that never waited (or more
//! often than it waited), a role that leaves a ring while its partner still
//! waits on it. Each hangs, and the `deadlock` finding names the misuse at
//! its line; the correct use stays silent.

use cute_lint::{analyze_text, AnalysisOptions, Diagnostic};

/// A producer warp and a consumer warp over a two-stage `PipelineAsync`,
/// four stages each way unless `PRODUCED`/`CONSUMED` say otherwise; `PRODUCER_END`
/// and `CONSUMER_END` end their roles, `WAIT` prefixes the consumer's wait.
fn kernel(producer_end: &str, consumer_end: &str) -> String {
    r#"
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils as utils


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
        for i in cutlass.range(PRODUCED, unroll=1):
            pipe.producer_acquire(state)
            pipe.producer_commit(state)
            state.advance()
PRODUCER_END
    if warp == 1:
        cstate = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, 2)
        for i in cutlass.range(CONSUMED, unroll=1):
            WAITpipe.consumer_wait(cstate)
            pipe.consumer_release(cstate)
            cstate.advance()
CONSUMER_END


@cute.jit
def host(x: cute.Tensor):
    k(x).launch(grid=[1, 1, 1], block=[64, 1, 1])
"#
    .replace("PRODUCER_END", producer_end)
    .replace("CONSUMER_END", consumer_end)
}

/// The same roles through `make_participants()`.
fn participants(producer_end: &str) -> String {
    r#"
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils as utils


@cute.kernel
def k(x: cute.Tensor):
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    storage = utils.SmemAllocator().allocate_array(cutlass.Int64, 4)
    producer, consumer = pipeline.PipelineAsync.create(
        num_stages=2,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
        barrier_storage=storage,
    ).make_participants()
    if warp == 0:
        for i in cutlass.range(4, unroll=1):
            h = producer.acquire_and_advance()
            h.commit()
PRODUCER_END
    if warp == 1:
        for i in cutlass.range(4, unroll=1):
            h = consumer.wait_and_advance()
            h.release()


@cute.jit
def host(x: cute.Tensor):
    k(x).launch(grid=[1, 1, 1], block=[64, 1, 1])
"#
    .replace("PRODUCER_END", producer_end)
}

fn check(src: &str) -> Vec<Diagnostic> {
    analyze_text(src, &AnalysisOptions::default())
}

fn with(src: String, produced: u32, consumed: u32, wait: &str) -> String {
    src.replace("PRODUCED", &produced.to_string()).replace("CONSUMED", &consumed.to_string()).replace("WAIT", wait)
}

fn line_of(src: &str, d: &Diagnostic) -> (usize, String) {
    let line = src[..d.range.start as usize].matches('\n').count();
    (line + 1, src.lines().nth(line).unwrap_or("").trim().to_string())
}

/// The one finding of `src`: a `deadlock` on the line holding `at` (its
/// `nth` occurrence), with a trace, whose message says `says`.
fn hangs_at(src: &str, at: &str, nth: usize, says: &[&str]) {
    let diags = check(src);
    assert_eq!(diags.len(), 1, "{src}\n{diags:#?}");
    let d = &diags[0];
    assert_eq!(d.name, "deadlock", "{d:#?}");
    let want = src.lines().enumerate().filter(|(_, l)| l.trim() == at).nth(nth).map(|(i, _)| i + 1);
    assert_eq!(Some(line_of(src, d).0), want, "{}: {}", d.message, line_of(src, d).1);
    assert!(!d.related.is_empty(), "no trace: {d:#?}");
    for s in says {
        assert!(d.message.contains(s), "{s:?} not in {}", d.message);
    }
}

#[test]
fn the_correct_roles_are_silent() {
    for src in [
        with(kernel("        pipe.producer_tail(state)", ""), 4, 4, ""),
        with(kernel("        pipe.producer_tail(state)", ""), 3, 3, ""),
        with(kernel("", ""), 4, 4, ""),
        participants("        producer.tail()"),
    ] {
        let diags = check(&src);
        assert!(diags.is_empty(), "{src}\n{diags:#?}");
    }
}

#[test]
fn a_producer_tail_run_twice_hangs_in_its_second_tail() {
    let src = with(kernel("        pipe.producer_tail(state)\n        pipe.producer_tail(state)", ""), 4, 4, "");
    hangs_at(&src, "pipe.producer_tail(state)", 1, &["`producer_tail` runs twice on `pipe`", "warp 0", "releases that never come"]);
    // The quick fix takes the second out; the kernel is then correct.
    assert_eq!(check(&drop_tail_fixed(&src)), []);
}

/// `src` with the quick fix of its one finding applied, which must remove
/// one line holding a tail.
fn drop_tail_fixed(src: &str) -> String {
    let d = &check(src)[0];
    let [fix] = d.fixes.as_slice() else { panic!("{d:#?}") };
    assert_eq!(fix.applicability, cute_lint::Applicability::Unsafe);
    let [edit] = fix.edits.as_slice() else { panic!("{fix:#?}") };
    let removed = &src[edit.range.start as usize..edit.range.end as usize];
    assert!(edit.new_text.is_empty() && (removed.trim().ends_with("tail(state)") || removed.trim().ends_with("tail()")), "{removed:?}");
    format!("{}{}", &src[..edit.range.start as usize], &src[edit.range.end as usize..])
}

#[test]
fn a_participants_tail_run_twice_hangs_in_its_second_tail() {
    let src = participants("        producer.tail()\n        producer.tail()");
    hangs_at(&src, "producer.tail()", 1, &["`tail` runs twice on `producer`", "releases that never come"]);
    assert_eq!(check(&drop_tail_fixed(&src)), []);
}

#[test]
fn a_producer_tail_in_a_loop_runs_once_per_trip() {
    let src = with(kernel("        for j in cutlass.range(2, unroll=1):\n            pipe.producer_tail(state)", ""), 4, 4, "");
    hangs_at(&src, "pipe.producer_tail(state)", 0, &["`producer_tail` runs twice on `pipe`"]);
    // Which trip should keep it is not for a fix to say.
    assert_eq!(check(&src)[0].fixes, []);
}

#[test]
fn a_producer_tail_run_by_the_consumer_waits_for_its_own_releases() {
    for (producer_end, consumed) in [("        pipe.producer_tail(state)", 4), ("", 4), ("", 3)] {
        let src = with(kernel(producer_end, "        pipe.producer_tail(cstate)"), consumed, consumed, "");
        hangs_at(&src, "pipe.producer_tail(cstate)", 0, &["`producer_tail` on `pipe` is run by warp 1, which never acquired a stage of it"]);
    }
}

#[test]
fn a_release_by_a_role_that_never_waited_is_named_at_the_release() {
    let src = with(kernel("        pipe.producer_tail(state)", ""), 4, 4, "# ");
    hangs_at(&src, "pipe.consumer_release(cstate)", 0, &["`consumer_release` on `pipe` is run by warp 1, which never waits on it", "run ahead"]);
}

#[test]
fn a_release_more_than_the_waits_is_named_at_the_extra_release() {
    let src = with(kernel("        pipe.producer_tail(state)", "        pipe.consumer_release(cstate)"), 4, 4, "");
    hangs_at(&src, "pipe.consumer_release(cstate)", 1, &["warp 1 releases 5 stages of `pipe` but waits for 4"]);
}

#[test]
fn a_consumer_left_waiting_by_its_producer_is_named() {
    let src = with(kernel("        pipe.producer_tail(state)", ""), 2, 4, "");
    hangs_at(&src, "pipe.consumer_wait(cstate)", 0, &["warp 1 still waits in `consumer_wait` on `pipe` after its producer left the ring", "warp 0"]);
}

#[test]
fn a_producer_left_waiting_by_its_consumer_is_named() {
    let src = with(kernel("", ""), 4, 1, "");
    hangs_at(&src, "pipe.producer_acquire(state)", 0, &["warp 0 still waits in `producer_acquire` on `pipe` after its consumer left the ring", "warp 1"]);
}
