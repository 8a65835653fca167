"""False CUTE050: a consumer releases a PipelineTmaAsync stage through the pipeline's own
`sync_object_empty.arrive(index, mask)` instead of `consumer_release(state)`.

cute-lsp drops that call without a note, so the producer's second acquire of a stage
never sees the release and the model deadlocks.
"""
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline

STAGES = 2


@cute.struct
class SharedStorage:
    mbar: cute.struct.MemRange[cutlass.Int64, 2 * STAGES]


@cute.kernel
def k(N: cutlass.Constexpr):
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    storage = cutlass.memory.SmemAllocator().allocate(SharedStorage)
    pipe = pipeline.PipelineTmaAsync.create(
        barrier_storage=storage.mbar.data_ptr(),
        num_stages=STAGES,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 1),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 96),
        tx_count=128,
        cta_layout_vmnk=cute.make_layout((1, 1, 1, 1)),
    )
    if warp == 0:
        ps = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, STAGES)
        for i in cutlass.range_constexpr(N):
            pipe.producer_acquire(ps)
            pipe.producer_commit(ps)
            ps.advance()
    else:
        cs = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, STAGES)
        for i in cutlass.range_constexpr(N):
            pipe.consumer_wait(cs)
            pipe.sync_object_empty.arrive(cs.index, pipe.consumer_mask)
            cs.advance()


@cute.jit
def host():
    k(4).launch(grid=[1, 1, 1], block=[128, 1, 1])


if __name__ == "__main__":
    cute.compile(host)
