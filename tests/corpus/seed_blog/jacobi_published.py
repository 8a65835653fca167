# Two-CTA Jacobi smoother, as printed in the blog post "Using SPIN model checker
# to statically find or prove the absence of deadlocks in CuTe DSL kernels on
# NVIDIA B200" (the running example, correct phase tracking).
# Pseudo-API spellings are kept as printed; indentation is reconstructed.
# The post shows no import lines, so there are none here.

def mbarrier_arrive_peer(mbar_ptr, peer_cta_rank):
    """Arrive on a peer CTA's mbarrier via mapa.shared::cluster."""
    remote = cute.arch.mapa_shared_cluster(mbar_ptr, peer_cta_rank)
    cute.arch.mbarrier_arrive(remote, space="cluster")  # expect: mbarrier-init-hazard, scope-too-narrow


@cute.jit
def jacobi_smoother(arr_ptr, N_ITERS: cutlass.Constexpr):
    HALF = 128
    my_cta = cute.arch.cluster_rank_in_cluster()  # 0 or 1
    peer = 1 - my_cta
    tid = cute.arch.thread_idx_x()

    cur = smem.alloc_array(float32, shape=HALF)   # this CTA's cells
    nxt = smem.alloc_array(float32, shape=HALF)   # double buffer
    halo = smem.alloc_array(float32, shape=1)     # peer's edge cell
    gate = smem.alloc_mbarrier()

    # One elected thread per cluster initializes the mbarrier; fence
    # so the init is visible before any arrive.
    with cute.arch.elect_one():
        cute.arch.mbarrier_init(gate, expected=256)  # 128 local + 128 peer  # expect: mbarrier-init-hazard
    cute.arch.mbarrier_init_fence()

    cur[tid] = arr_ptr[my_cta * HALF + tid]  # initial load from GMEM
    phase = cutlass.Int32(0)  # per-thread parity track

    for it in cutlass.range_constexpr(N_ITERS):
        # 1. One thread per CTA writes my edge cell into the peer's halo slot
        #    over cluster DSMEM.
        if tid == 0:
            my_edge = cur[HALF - 1] if my_cta == 0 else cur[0]
            peer_halo = cute.arch.mapa_shared_cluster(halo, peer)
            peer_halo[0] = my_edge  # expect: dsmem-race

        # 2. Cluster sync: every thread in the cluster arrives locally and on
        #    the peer, then waits for the barrier to complete (256 arrivals).
        cute.arch.fence_view_async_shared()
        cute.arch.mbarrier_arrive(gate)
        mbarrier_arrive_peer(gate, peer)
        cute.arch.mbarrier_wait(gate, phase)
        phase = phase ^ cutlass.Int32(1)

        # 3. Apply the 3-point stencil. halo[0] supplies the missing neighbor
        #    at the CTA boundary; the global endpoints clamp to themselves.
        if my_cta == 0:
            left = cur[tid] if tid == 0 else cur[tid - 1]
            right = halo[0] if tid == HALF - 1 else cur[tid + 1]
        else:
            left = halo[0] if tid == 0 else cur[tid - 1]
            right = cur[tid] if tid == HALF - 1 else cur[tid + 1]
        nxt[tid] = (left + cur[tid] + right) / 3.0
        cur, nxt = nxt, cur  # swap for next round

    arr_ptr[my_cta * HALF + tid] = cur[tid]  # write back to GMEM
