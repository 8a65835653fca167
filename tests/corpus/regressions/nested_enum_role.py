"""False CUTE050 (warning): warp-group roles compared against a nested IntEnum of the kernel class.

When `self.Role.LOAD` was not evaluated, `wg == self.Role.LOAD` was taken as false in every thread and
no thread ever produced; the consumers' wait on `full` was then reported as a hang. A class defined in
the kernel's class is now an attribute of its objects, so the roles resolve and the kernel checks clean.
"""
from enum import IntEnum

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline


@cute.struct
class SharedStorage:
    mbar: cute.struct.MemRange[cutlass.Int64, 4]


class K:
    class Role(IntEnum):
        LOAD = 0
        MATH = 1

    @cute.kernel
    def kernel(self):
        wg = cute.arch.make_warp_uniform(cute.arch.thread_idx()[0] // 128)
        storage = cutlass.memory.SmemAllocator().allocate(SharedStorage)
        pipe = pipeline.PipelineAsync.create(
            num_stages=2,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 128),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 128),
            barrier_storage=storage.mbar.data_ptr(),
        )
        if wg == self.Role.LOAD:
            ps = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, 2)
            pipe.producer_acquire(ps)
            pipe.producer_commit(ps)
        else:
            cs = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, 2)
            pipe.consumer_wait(cs)
            pipe.consumer_release(cs)

    @cute.jit
    def __call__(self):
        self.kernel().launch(grid=[1, 1, 1], block=[256, 1, 1])
