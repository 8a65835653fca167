"""False CUTE005: one thread initialises a ring of barriers in a loop over a Constexpr stage count.

The trip count is not known, so the loop variable `s` is unknown and `bar + s` is identified by its
spelling: the distinct barriers merge into one, initialised "by 3 threads (lane 0 of warps 0, 0, 0)".
"""
import cutlass
import cutlass.cute as cute


@cute.kernel
def k(stages: cutlass.Constexpr):
    tidx = cute.arch.thread_idx()[0]
    bar = cutlass.memory.SmemAllocator().allocate_array(cutlass.Int64, 8)
    if tidx == 0:
        for s in range(stages):
            cute.arch.mbarrier_init(bar + s, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()


@cute.jit
def host(stages: cutlass.Constexpr):
    k(stages).launch(grid=[1, 1, 1], block=[128, 1, 1])
