"""A @cute.jit helper the kernel hands on with `functools.partial` instead of calling it.

`load` waits on a barrier its user passes in. It runs only as `load_fn()`, inside the kernel:
cute-lsp must not check it on its own, where its barrier is a parameter with no value (that gave an
analysis-incomplete note on every such helper of flash-attention's kernels), and must not drop its
synchronization from the kernel in silence either: the kernel is reported as not checked, at the
`partial`.
"""
from functools import partial

import cutlass
import cutlass.cute as cute


class Loader:
    @cute.jit
    def load(self, mbar_ptr: cute.Pointer):
        cute.arch.mbarrier_arrive(mbar_ptr)
        cute.arch.mbarrier_wait(mbar_ptr, phase=0)

    @cute.kernel
    def kernel(self):
        smem = cutlass.utils.SmemAllocator()
        bar = smem.allocate_array(cutlass.Int64, 1)
        if cute.arch.thread_idx()[0] == 0:
            cute.arch.mbarrier_init(bar, 128)
        cute.arch.mbarrier_init_fence()
        cute.arch.sync_threads()
        load_fn = partial(self.load, bar)  # expect: analysis-incomplete
        load_fn()

    @cute.jit
    def __call__(self):
        self.kernel().launch(grid=[1, 1, 1], block=[128, 1, 1])
