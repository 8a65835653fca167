"""An early return before a CTA barrier: tests/fixtures/divergent_barrier/early_return_clean.py
with the bounds check returning (`if tidx >= n: return`) instead of guarding the work.

With N = 100 and 128 threads, threads 100-127 return and never reach `sync_threads()`, which every
thread of the CTA must execute. CuTe DSL does not compile this (UNSUP_EARLY_EXIT: an early exit from
an `if` on a runtime value), so it is not a fixture; cute-lsp follows the return (as code being
edited has it) and reports the barrier, naming the threads that return.
"""

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_compact_tensor

NUM_THREADS = 128
N = 100


@cute.struct
class SharedStorage:
    stage: cute.struct.MemRange[cutlass.Float32, NUM_THREADS]


@cute.kernel
def reverse_kernel(x: cute.Tensor, y: cute.Tensor, n: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()

    storage = cutlass.memory.SmemAllocator().allocate(SharedStorage)
    stage = storage.stage.get_tensor(cute.make_layout(NUM_THREADS))

    if tidx >= n:
        return
    stage[tidx] = x[tidx]
    cute.arch.sync_threads()  # expect: divergent-barrier
    y[tidx] = stage[n - 1 - tidx]


@cute.jit
def reverse(x: cute.Tensor, y: cute.Tensor, n: cutlass.Constexpr):
    reverse_kernel(x, y, n).launch(grid=[1, 1, 1], block=[NUM_THREADS, 1, 1])


if __name__ == "__main__":
    x = make_fake_compact_tensor(cutlass.Float32, (N,))
    y = make_fake_compact_tensor(cutlass.Float32, (N,))
    cute.compile(reverse, x, y, N)
