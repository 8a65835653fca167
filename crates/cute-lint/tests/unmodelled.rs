//! Synchronization the checker does not model is reported, never passed over
//! in silence.

use cute_lint::{analyze_text, AnalysisOptions, Severity};

#[test]
fn pipeline_classes_are_reported_as_not_checked() {
    let src = r#"
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline

@cute.kernel
def k(x: cute.Tensor):
    warp = cute.arch.warp_idx()
    pipe = pipeline.PipelineAsync.create(num_stages=2, producer_group=None, consumer_group=None)
    state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, 2)
    if warp == 0:
        for i in range(4):
            pipe.producer_acquire(state)
            pipe.producer_commit(state)
            state.advance()
"#;
    let diags = analyze_text(src, &AnalysisOptions::default());
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0].name, "analysis-incomplete");
    assert_eq!(diags[0].severity, Severity::Info);
    assert!(diags[0].message.contains("cutlass.pipeline"), "{}", diags[0].message);
}

#[test]
fn an_unresolved_parity_is_reported_where_it_is() {
    let src = r#"
import cutlass
import cutlass.cute as cute

@cute.kernel
def k(x: cute.Tensor, flags: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bar = cutlass.utils.SmemAllocator().allocate_array(cutlass.Int64, 1)
    if tidx == 0:
        cute.arch.mbarrier_init(bar, 128)
    cute.arch.sync_threads()
    cute.arch.mbarrier_arrive(bar)
    cute.arch.mbarrier_wait(bar, flags[0])

@cute.jit
def host(x: cute.Tensor, flags: cute.Tensor):
    k(x, flags).launch(grid=[1, 1, 1], block=[128, 1, 1])
"#;
    let diags = analyze_text(src, &AnalysisOptions::default());
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0].name, "analysis-incomplete");
    assert!(diags[0].message.contains("parity"), "{}", diags[0].message);
    let line = src[..diags[0].range.start as usize].matches('\n').count();
    assert_eq!(src.lines().nth(line).map(str::trim), Some("cute.arch.mbarrier_wait(bar, flags[0])"));
}
