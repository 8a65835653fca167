"""False CUTE005: a @cute.jit helper that waits on an mbarrier passed in by its caller.

The kernel initialises `bar`, fences and syncs, then calls `wait_on`. cute-lsp also checks
`wait_on` on its own, with the barrier as an unresolved parameter, and reports a use before init.
"""
import cutlass
import cutlass.cute as cute


@cute.jit
def wait_on(mbar_ptr: cute.Pointer):
    cute.arch.mbarrier_arrive(mbar_ptr)
    cute.arch.mbarrier_wait(mbar_ptr, phase=0)


@cute.kernel
def k():
    smem = cutlass.memory.SmemAllocator()
    bar = smem.allocate_array(cutlass.Int64, 1)
    if cute.arch.thread_idx()[0] == 0:
        cute.arch.mbarrier_init(bar, 128)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    wait_on(bar)


@cute.jit
def host():
    k().launch(grid=[1, 1, 1], block=[128, 1, 1])
