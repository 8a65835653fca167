"""False CUTE050 (warning): a named barrier for a subset of warps, guarded by a role predicate that
cute-lsp cannot evaluate (a method of an imported class). The predicate is assumed true in every
thread, so all 256 threads arrive on a barrier sized for the 128 epilogue threads.
"""
import cutlass
import cutlass.cute as cute
from roles import Role  # selects warps 0..3 at run time


@cute.kernel
def k(epilogue: Role):
    if epilogue.is_selected():
        cute.arch.barrier(barrier_id=3, number_of_threads=128)


@cute.jit
def host(epilogue: Role):
    k(epilogue).launch(grid=[1, 1, 1], block=[256, 1, 1])
