"""False CUTE005: a @cute.jit helper in which every warp initialises its own barrier,
`base + warp_idx`, with the warp and lane indices passed in by the caller.

Checked on its own, the parameters are unknown: `lane_idx == 0` is taken as true and `base + warp_idx`
as one barrier, which then looks initialised once per warp.
"""
import cutlass
import cutlass.cute as cute


@cute.jit
def per_warp(base: cute.Pointer, warp_idx, lane_idx):
    if lane_idx == 0:
        cute.arch.mbarrier_init(base + warp_idx, 1)
    cute.arch.sync_warp()


@cute.kernel
def k():
    base = cutlass.memory.SmemAllocator().allocate_array(cutlass.Int64, 4)
    per_warp(base, cute.arch.warp_idx(), cute.arch.lane_idx())


@cute.jit
def host():
    k().launch(grid=[1, 1, 1], block=[128, 1, 1])
