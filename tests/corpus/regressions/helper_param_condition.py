"""False CUTE005: a @cute.jit helper whose init is guarded by a warp index passed in as a parameter.

The caller passes `cute.arch.warp_idx()`, so only warp 0 initialises. Checked on its own, the helper's
`warp_idx == 0` on an unresolved parameter is taken as true in every warp, and `elect_one` then
initialises once per warp.
"""
import cutlass
import cutlass.cute as cute


@cute.jit
def setup(warp_idx, mbar_ptr: cute.Pointer):
    if warp_idx == 0:
        with cute.arch.elect_one():
            cute.arch.mbarrier_init(mbar_ptr, 32)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    if warp_idx == 0:
        cute.arch.mbarrier_arrive(mbar_ptr)
        cute.arch.mbarrier_wait(mbar_ptr, 0)


@cute.kernel
def k():
    bar = cutlass.memory.SmemAllocator().allocate_array(cutlass.Int64, 1)
    setup(cute.arch.warp_idx(), bar)


@cute.jit
def host():
    k().launch(grid=[1, 1, 1], block=[128, 1, 1])
