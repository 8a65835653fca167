"""False CUTE007: a TMA copy issued by all of warp 0, where the warp index is computed as
`tidx // 32` (instead of cute.arch.warp_idx()). The guard is treated as lane-varying, lanes run
one by one, and the copy is reported as "reached by warp 0 and threads 1..31 only".
"""
import cutlass
import cutlass.cute as cute

WARP = 32  # threads per warp


@cute.kernel
def k(tma_atom: cute.CopyAtom, src: cute.Tensor, dst: cute.Tensor):
    tidx = cute.arch.thread_idx()[0]
    warp_id = tidx // WARP
    bar = cutlass.memory.SmemAllocator().allocate_array(cutlass.Int64, 1)
    if tidx == 0:
        cute.arch.mbarrier_init(bar, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    if warp_id == 0:
        with cute.arch.elect_one():
            cute.arch.mbarrier_arrive_and_expect_tx(bar, 1024)
        cute.copy(tma_atom, src, dst, tma_bar_ptr=bar)
    cute.arch.mbarrier_wait(bar, 0)


@cute.jit
def host(tma_atom: cute.CopyAtom, src: cute.Tensor, dst: cute.Tensor):
    k(tma_atom, src, dst).launch(grid=[1, 1, 1], block=[128, 1, 1])
