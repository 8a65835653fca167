//! The CuTe DSL synchronization API as the installed `nvidia-cutlass-dsl`
//! spells it (plus the spellings of widely read blog posts, since people paste
//! from them). Each entry names the function's parameters in order so that
//! positional and keyword arguments bind alike.
//!
//! `tests/python/api_surface.json` is the reference dump of the real
//! signatures; a test keeps this table in step with it.
//!
//! Other spellings of the same operations read as the `cute.arch` functions
//! they call:
//! - `cutlass.pipeline`'s functions on a named barrier id
//!   (`arrive_and_wait(barrier_id, num_threads)` and the like) are the
//!   `cute.arch` barriers;
//! - the functions of `cutlass.experimental.primitives` (`PRIMITIVES_TABLE`)
//!   are their `cute.arch` counterparts: mbarriers, CTA and cluster barriers,
//!   `elect_sync`, warp shuffles, votes and reductions, the TMA load into the
//!   CTA and the TMA store out of it, `mapa`, `tcgen05_commit` and
//!   `griddepcontrol`, and tensor memory's allocation, deallocation and
//!   `tcgen05` instructions; so are the
//!   bulk-group commit and wait, whose `cute.arch` counterparts are the
//!   datapath;
//! - a call of `llvm.inline_asm` whose assembly synchronizes is
//!   [`Api::InlineAsm`] (see `ptx.rs`);
//! - `cute.nvgpu.tcgen05.commit` is an arrive on its mbarrier, and
//!   `cute.arch.cp_async_mbarrier_arrive_noinc` one made by each calling
//!   thread.
//!
//! Every function, class and method of the package whose signature takes a
//! barrier or a pipeline (`barrier_calls` in the dump) is in this table, or
//! in [`NOT_SYNCHRONIZATION`] or [`COMPLETES_BYTES`] with the reason, or in a
//! helper module of the DSL that is linked from its source
//! (`crate::link::DSL_HELPER_MODULES`: the epilogues of
//! `cutlass.utils.gemm.sm100`); `tests/api_surface.rs` holds the dump to that.
//!
//! The synchronization of modules that are not modelled (the other primitives
//! that synchronize, `cutlass.experimental.task_scheduling`, the pipelines of
//! `cutlass.cute.experimental`) is [`Api::Unmodelled`]: it makes a kernel not
//! checked where it is reached, never passed over.

use crate::ast::{Call, Expr};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Api {
    // mbarriers
    MbarrierInit,
    MbarrierInitFence,
    MbarrierArrive,
    MbarrierArriveAndExpectTx,
    MbarrierExpectTx,
    MbarrierWait,
    MbarrierTryWait,
    MbarrierTestWait,
    /// A shared-memory address translated into a peer CTA's window (mapa).
    MapSharedCluster,
    /// `store_async_dsmem(smem_ptr, value, mbar_ptr, peer_cta_rank)`
    /// (`st.async.shared::cluster.mbarrier::complete_tx::bytes`): a store
    /// of 4, 8 or 16 bytes into the shared memory of CTA `peer_cta_rank` at
    /// `smem_ptr`'s offset, whose completion (release at cluster scope)
    /// delivers its bytes to the peer's mbarrier at `mbar_ptr`'s offset.
    StoreAsyncDsmem,
    // thread topology
    ThreadIdx,
    /// `thread_idx_x()` (blog spelling): the x component only.
    ThreadIdxX,
    WarpIdx,
    LaneIdx,
    BlockIdx,
    /// Linear rank of this CTA within its cluster.
    ClusterRank,
    /// Coordinates of this CTA within its cluster.
    BlockInClusterIdx,
    ClusterSize,
    MakeWarpUniform,
    ElectOne,
    // barriers and fences
    SyncThreads,
    SyncWarp,
    /// `shuffle_sync` and its `_up`/`_down`/`_bfly` forms (`shfl.sync`):
    /// every lane of the member mask `mask` executes it together.
    Shuffle,
    /// `vote_ballot_sync`, `vote_any_sync`, `vote_all_sync`,
    /// `vote_uni_sync` (`vote.sync`, member mask `mask`).
    Vote,
    /// `warp_reduction`, `warp_reduction_max`, `warp_reduction_sum`: a
    /// butterfly of `shuffle_sync_bfly` over the full member mask, whatever
    /// `threads_in_group` is.
    WarpReduction,
    /// `warp_redux_sync` (`redux.sync`, member mask `mask_and_clamp`).
    WarpRedux,
    Barrier,
    BarrierArrive,
    ClusterArrive,
    ClusterArriveRelaxed,
    ClusterWait,
    FenceProxy,
    FenceViewAsyncShared,
    FenceAcqRel,
    /// `griddepcontrol_wait()` (`griddepcontrol.wait`): the thread waits
    /// until the grids its launch depends on (programmatic dependent launch)
    /// have completed and their memory is visible; the primitives'
    /// `griddepcontrol(kind)` is one when its kind is `wait`.
    /// `griddepcontrol_launch_dependents` only lets the next grid start
    /// early, which orders nothing: it is not in the table.
    GridDepWait,
    // tensor memory
    /// `alloc_tmem(num_columns, smem_ptr_to_write_address)`: the calling
    /// warp allocates tensor memory and writes its address to shared memory.
    TmemAlloc,
    /// `dealloc_tmem(tmem_ptr, num_columns)`: the calling warp frees it.
    TmemDealloc,
    /// `retrieve_tmem_ptr(element_type, alignment, ptr_to_buffer_holding_addr)`:
    /// the address of the allocation, read back from shared memory.
    TmemRetrieve,
    /// A `tcgen05` operation of `cutlass.experimental.primitives` on the
    /// CTA's tensor memory, named after its instruction: an MMA
    /// (`tcgen05_mma`, `tcgen05_mma_ws`, ...), a load, store or copy
    /// (`tcgen05_ld`, `tcgen05_st`, `tcgen05_cp`, `tcgen05_shift`).
    TmemUse,
    /// `fence_view_async_tmem_load()` / `fence_view_async_tmem_store()`
    /// (`tcgen05.wait::ld` / `tcgen05.wait::st`, the primitives'
    /// `tcgen05_wait(kind)`): the thread waits until its earlier `tcgen05`
    /// loads (or stores) of tensor memory are complete.
    TmemFence,
    // memory
    Atomic,
    Load,
    Store,
    Copy,
    /// `llvm.inline_asm(...)` whose assembly holds a synchronization
    /// instruction (see `crate::ptx`).
    InlineAsm,
    /// The `cutlass.pipeline` classes and their methods, `NamedBarrier`
    /// objects: synchronization the checker does not model yet.
    Pipeline,
    /// Synchronization of a CuTe DSL module the checker does not model:
    /// the mbarriers, barriers, fences, asynchronous copies and warp
    /// collectives of `cutlass.experimental.primitives` (`prims.mbarrier_init`),
    /// and the task-scheduling framework that synchronizes its tasks itself
    /// (`cutlass.experimental.task_scheduling`). A kernel that reaches one is
    /// not checked, naming it: its synchronization is never dropped in silence.
    Unmodelled,
    // values
    Range,
    IntCast,
    ConstExpr,
}

pub enum Effect {
    Sync,
    Topology,
    Value,
}

struct Entry {
    api: Api,
    /// Qualified names (after import resolution) that mean this function.
    names: &'static [&'static str],
    params: &'static [&'static str],
}

const ARCH: &str = "cutlass.cute.arch.";

/// `cutlass.pipeline.sync(barrier_id=0)`: a barrier of the whole CTA on
/// that id (the package calls `cute.arch.barrier(barrier_id=barrier_id)`).
const PIPELINE_SYNC: &str = "cutlass.pipeline.sync";

/// The named-barrier functions of `cutlass.pipeline` on an id and a thread
/// count (`pipeline.arrive_and_wait(barrier_id=1, num_threads=128)`): the
/// package calls `cute.arch.barrier` (`arrive_and_wait`, `wait_unaligned`)
/// or `cute.arch.barrier_arrive` (`arrive`, aligned; `arrive_unaligned`,
/// `aligned=False`) with them.
const PIPELINE_NAMED_BARRIER: &[(&str, Api)] = &[
    ("arrive_and_wait", Api::Barrier),
    ("wait_unaligned", Api::Barrier),
    ("arrive", Api::BarrierArrive),
    ("arrive_unaligned", Api::BarrierArrive),
];

/// The function of [`PIPELINE_NAMED_BARRIER`] a qualified callee is.
pub fn pipeline_named_barrier(qualname: &str) -> Option<(&'static str, Api)> {
    let name = qualname.strip_prefix("cutlass.pipeline.").map(|n| n.strip_prefix("helpers.").unwrap_or(n))?;
    PIPELINE_NAMED_BARRIER.iter().find(|(n, _)| *n == name).copied()
}

/// Parameters of `llvm.inline_asm` (the MLIR Python binding's names).
const INLINE_ASM_PARAMS: &[&str] = &["res", "operands_", "asm_string", "constraints"];

/// Method names of the `cutlass.pipeline` classes (and of the wrappers that
/// popular kernels define around them).
const PIPELINE_METHODS: &[&str] = &[
    "producer_acquire",
    "producer_try_acquire",
    "producer_commit",
    "producer_tail",
    "consumer_wait",
    "consumer_try_wait",
    "consumer_release",
    "make_participants",
    "acquire_and_advance",
    "wait_and_advance",
    "producer_acquire_w_index_phase",
    "producer_commit_w_index",
    "consumer_wait_w_index_phase",
    "consumer_release_w_index",
    "arrive_and_wait",
    "arrive_and_wait_w_index",
    "arrive_w_index",
    "wait_for_alloc",
    // `TmemAllocator.reserve`: allocate, then `wait_for_alloc`.
    "reserve",
    "producer_get_barrier",
    "consumer_get_barrier",
    // `NamedBarrier` objects.
    "arrive",
    "arrive_unaligned",
    "wait_unaligned",
    "sync",
];

/// Functions that live in `cutlass.cute.arch` (also reachable as
/// `cutlass.cute.arch.mbar.X` etc.; matched by final segment under `arch`).
const TABLE: &[Entry] = &[
    Entry { api: Api::MbarrierInit, names: &["mbarrier_init", "mbarrier_init_arrive_cnt"], params: &["mbar_ptr", "cnt"] },
    Entry { api: Api::MbarrierInitFence, names: &["mbarrier_init_fence"], params: &[] },
    Entry {
        api: Api::MbarrierArrive,
        names: &["mbarrier_arrive"],
        params: &["mbar_ptr", "peer_cta_rank_in_cluster", "arrive_count"],
    },
    Entry {
        api: Api::MbarrierArriveAndExpectTx,
        names: &["mbarrier_arrive_and_expect_tx", "mbarrier_init_tx_bytes"],
        params: &["mbar_ptr", "bytes", "peer_cta_rank_in_cluster"],
    },
    Entry { api: Api::MbarrierExpectTx, names: &["mbarrier_expect_tx"], params: &["mbar_ptr", "bytes", "peer_cta_rank_in_cluster"] },
    // `cp.async.mbarrier.arrive.noinc`: one arrival by each calling thread,
    // made once its earlier `cp.async` copies have landed (`noinc`: the
    // init count accounts for it, as `PipelineCpAsync`'s commit does).
    Entry { api: Api::MbarrierArrive, names: &["cp_async_mbarrier_arrive_noinc"], params: &["mbar_ptr"] },
    Entry { api: Api::MbarrierWait, names: &["mbarrier_wait"], params: &["mbar_ptr", "phase"] },
    Entry { api: Api::MbarrierTryWait, names: &["mbarrier_try_wait"], params: &["mbar_ptr", "phase"] },
    Entry { api: Api::MbarrierTryWait, names: &["mbarrier_conditional_try_wait"], params: &["cond", "mbar_ptr", "phase"] },
    Entry { api: Api::MbarrierTestWait, names: &["mbarrier_test_wait"], params: &["mbar_ptr", "phase"] },
    Entry { api: Api::MapSharedCluster, names: &["map_dsmem_ptr"], params: &["smem_ptr", "cta_rank_in_cluster"] },
    Entry { api: Api::MapSharedCluster, names: &["mapa_shared_cluster", "mapa"], params: &["smem_ptr", "peer_cta_rank_in_cluster"] },
    Entry { api: Api::StoreAsyncDsmem, names: &["store_async_dsmem"], params: &["smem_ptr", "value", "mbar_ptr", "peer_cta_rank"] },
    Entry { api: Api::ThreadIdx, names: &["thread_idx"], params: &[] },
    Entry { api: Api::ThreadIdxX, names: &["thread_idx_x"], params: &[] },
    Entry { api: Api::WarpIdx, names: &["warp_idx"], params: &[] },
    Entry { api: Api::LaneIdx, names: &["lane_idx"], params: &[] },
    Entry { api: Api::BlockIdx, names: &["block_idx"], params: &[] },
    Entry { api: Api::ClusterRank, names: &["block_idx_in_cluster", "cluster_rank_in_cluster", "cta_rank_in_cluster"], params: &[] },
    Entry { api: Api::BlockInClusterIdx, names: &["block_in_cluster_idx"], params: &[] },
    Entry { api: Api::ClusterSize, names: &["cluster_size"], params: &[] },
    Entry { api: Api::MakeWarpUniform, names: &["make_warp_uniform"], params: &["value"] },
    Entry { api: Api::ElectOne, names: &["elect_one"], params: &[] },
    Entry { api: Api::SyncThreads, names: &["sync_threads"], params: &[] },
    Entry { api: Api::SyncWarp, names: &["sync_warp"], params: &["mask"] },
    Entry {
        api: Api::Shuffle,
        names: &["shuffle_sync", "shuffle_sync_down", "shuffle_sync_bfly"],
        params: &["value", "offset", "mask", "mask_and_clamp"],
    },
    Entry { api: Api::Shuffle, names: &["shuffle_sync_up"], params: &["value", "offset", "mask"] },
    Entry { api: Api::Vote, names: &["vote_ballot_sync", "vote_any_sync", "vote_all_sync", "vote_uni_sync"], params: &["pred", "mask"] },
    Entry { api: Api::WarpReduction, names: &["warp_reduction"], params: &["val", "op"] },
    Entry { api: Api::WarpReduction, names: &["warp_reduction_max", "warp_reduction_sum"], params: &["val"] },
    Entry { api: Api::WarpRedux, names: &["warp_redux_sync"], params: &["value", "kind", "mask_and_clamp"] },
    Entry { api: Api::Barrier, names: &["barrier"], params: &[] },
    Entry { api: Api::BarrierArrive, names: &["barrier_arrive"], params: &[] },
    Entry { api: Api::ClusterArrive, names: &["cluster_arrive"], params: &[] },
    Entry { api: Api::ClusterArriveRelaxed, names: &["cluster_arrive_relaxed"], params: &[] },
    Entry { api: Api::ClusterWait, names: &["cluster_wait"], params: &[] },
    Entry { api: Api::FenceProxy, names: &["fence_proxy"], params: &["kind"] },
    Entry { api: Api::FenceViewAsyncShared, names: &["fence_view_async_shared"], params: &[] },
    Entry { api: Api::TmemFence, names: &["fence_view_async_tmem_load", "fence_view_async_tmem_store"], params: &[] },
    Entry { api: Api::GridDepWait, names: &["griddepcontrol_wait"], params: &[] },
    Entry { api: Api::TmemAlloc, names: &["alloc_tmem"], params: &["num_columns", "smem_ptr_to_write_address", "is_two_cta"] },
    Entry { api: Api::TmemDealloc, names: &["dealloc_tmem"], params: &["tmem_ptr", "num_columns", "is_two_cta"] },
    Entry { api: Api::TmemRetrieve, names: &["retrieve_tmem_ptr"], params: &["element_type", "alignment", "ptr_to_buffer_holding_addr"] },
    Entry {
        api: Api::FenceAcqRel,
        names: &["fence_acq_rel_cta", "fence_acq_rel_cluster", "fence_acq_rel_gpu", "fence_acq_rel_sys"],
        params: &[],
    },
    Entry {
        api: Api::Atomic,
        names: &["atomic_add", "atomic_and", "atomic_or", "atomic_xor", "atomic_max", "atomic_min", "atomic_exch", "atomic_fmax", "atomic_fmin", "red"],
        params: &["ptr", "val"],
    },
    Entry { api: Api::Atomic, names: &["atomic_cas"], params: &["ptr"] },
    Entry { api: Api::Load, names: &["load", "atomic_load"], params: &["ptr", "dtype"] },
    Entry { api: Api::Store, names: &["store"], params: &["ptr", "val"] },
];

/// The module of the experimental low-level primitives, as a qualified
/// name's prefix.
const PRIMITIVES: &str = "cutlass.experimental.primitives.";

/// The functions of `cutlass.experimental.primitives` the model reads as
/// their `cute.arch` counterparts, with their parameters in order as the
/// package names them where the counterpart's reading needs them (`mbar_ptr`
/// for the package's `addr`, `cnt` for `count`, `bytes` for `txcount`,
/// `phase`). The others that synchronize are [`Api::Unmodelled`].
const PRIMITIVES_TABLE: &[Entry] = &[
    // Tensor memory: allocated and freed by the calling warp, and used by
    // every `tcgen05` instruction (whatever address it is handed: the
    // CTA's tensor memory is one).
    Entry { api: Api::TmemAlloc, names: &["tcgen05_alloc"], params: &["addr", "n_cols"] },
    Entry { api: Api::TmemDealloc, names: &["tcgen05_dealloc"], params: &["taddr", "n_cols"] },
    Entry {
        api: Api::TmemUse,
        names: &[
            "tcgen05_mma",
            "tcgen05_mma_block_scale",
            "tcgen05_mma_sp",
            "tcgen05_mma_sp_block_scale",
            "tcgen05_mma_ws",
            "tcgen05_mma_ws_sp",
            "tcgen05_ld",
            "tcgen05_ld_red",
            "tcgen05_st",
            "tcgen05_cp",
            "tcgen05_shift",
        ],
        params: &[],
    },
    // `tcgen05.wait::{ld|st}`: `fence_view_async_tmem_load` / `_store`.
    Entry { api: Api::TmemFence, names: &["tcgen05_wait"], params: &["kind"] },
    Entry { api: Api::MbarrierInit, names: &["mbarrier_init"], params: &["mbar_ptr", "cnt"] },
    Entry { api: Api::MbarrierInitFence, names: &["fence_mbarrier_init"], params: &[] },
    // `count=` is keyword-only; a `scope=` and `relaxed=` as in `cute.arch`.
    Entry { api: Api::MbarrierArrive, names: &["mbarrier_arrive"], params: &["mbar_ptr"] },
    Entry { api: Api::MbarrierArriveAndExpectTx, names: &["mbarrier_arrive_expect_tx"], params: &["mbar_ptr", "bytes"] },
    Entry { api: Api::MbarrierExpectTx, names: &["mbarrier_expect_tx"], params: &["mbar_ptr", "bytes"] },
    Entry { api: Api::MbarrierTryWait, names: &["mbarrier_try_wait_parity"], params: &["mbar_ptr", "phase"] },
    Entry { api: Api::MbarrierWait, names: &["mbarrier_wait_parity"], params: &["mbar_ptr", "phase"] },
    // `bar.sync` / `barrier.cta.sync` on an id, for `thread_count` threads
    // (all of the CTA's when not given).
    Entry { api: Api::Barrier, names: &["barrier_cta_sync", "barrier_cta_sync_aligned"], params: &["barrier_id", "thread_count"] },
    Entry { api: Api::BarrierArrive, names: &["barrier_cta_arrive", "barrier_cta_arrive_aligned"], params: &["barrier_id", "thread_count"] },
    Entry { api: Api::ClusterArrive, names: &["barrier_cluster_arrive", "barrier_cluster_arrive_aligned"], params: &[] },
    Entry {
        api: Api::ClusterArriveRelaxed,
        names: &["barrier_cluster_arrive_relaxed", "barrier_cluster_arrive_relaxed_aligned"],
        params: &[],
    },
    Entry { api: Api::ClusterWait, names: &["barrier_cluster_wait", "barrier_cluster_wait_aligned"], params: &[] },
    // A TMA load into this CTA's shared memory, completing its bytes on
    // `mbar` (the bytes come from the tensor map: not known here).
    Entry {
        api: Api::Copy,
        names: &["cp_async_bulk_tensor_shared_cta_global"],
        params: &["dst_mem", "tma_descriptor", "coordinates", "mbar_ptr"],
    },
    // The same into the cluster's shared window: with `multicast_mask=`,
    // into each CTA of the mask; with `group=CTA_2`, completing on the
    // barrier of the issuer's pair leader (read by the memory analysis).
    Entry {
        api: Api::Copy,
        names: &["cp_async_bulk_tensor_shared_cluster_global"],
        params: &["dst_mem", "tma_descriptor", "coordinates", "mbar_ptr", "im2col_offsets"],
    },
    // A TMA store out of this CTA's shared memory (`src_mem`), as a
    // `cute.copy` with a TMA store atom: the async proxy reads the buffer, so
    // the generic writes before it need a proxy fence. Its completion
    // (`cp_async_bulk_wait_group`) is not modelled, as for `cute.copy`.
    Entry {
        api: Api::Copy,
        names: &["cp_async_bulk_tensor_global_shared_cta"],
        params: &["tma_descriptor", "src_mem", "coordinates"],
    },
    // A bulk copy (`cp.async.bulk.global.shared::cta`), a bulk reduction
    // (`cp.reduce.async.bulk.global.shared::cta`) of `size` bytes, or a TMA
    // reduction (`cp.reduce.async.bulk.tensor`) out of this CTA's shared
    // memory (`src_mem`, `src`): read by the async proxy in a bulk group, as
    // a TMA store's.
    Entry { api: Api::Copy, names: &["cp_async_bulk_tensor_reduce"], params: &["tma_descriptor", "src_mem", "red_kind", "coordinates"] },
    Entry { api: Api::Copy, names: &["cp_async_bulk_global_shared_cta"], params: &["dst_mem", "src_mem", "size"] },
    Entry { api: Api::Copy, names: &["cp_reduce_async_bulk_global_shared_cta"], params: &["dst", "src", "size"] },
    // `mapa.shared::cluster`: the same shared-memory offset in a peer CTA's
    // window, as `cute.arch.mapa`.
    Entry { api: Api::MapSharedCluster, names: &["mapa"], params: &["addr", "cta_rank"] },
    // One arrival on `addr` once the thread's earlier tcgen05 operations
    // complete; with a `multicast_mask=`, on the barrier at that offset in
    // each CTA of the mask (`cute.nvgpu.tcgen05.commit`'s `mask`).
    Entry { api: Api::MbarrierArrive, names: &["tcgen05_commit"], params: &["mbar_ptr"] },
    // `prims.fence_proxy(prims.Proxy.ASYNC_SHARED)`: a proxy fence when its
    // kind names the async proxy, as `cute.arch.fence_proxy("async.shared")`.
    Entry { api: Api::FenceProxy, names: &["fence_proxy"], params: &["kind"] },
    // Warp collectives over a member mask (`mask`: the package's
    // `thread_mask`, `mask`, and `mask_and_clamp` of `redux_sync`).
    Entry { api: Api::Shuffle, names: &["shfl_sync"], params: &["mask", "value", "offset", "mask_and_clamp", "kind"] },
    Entry { api: Api::Vote, names: &["vote_sync"], params: &["mask", "pred", "kind"] },
    Entry { api: Api::WarpRedux, names: &["redux_sync"], params: &["value", "kind", "mask_and_clamp"] },
    // `if prims.elect_sync():` elects lane 0 of a converged warp, as
    // `cute.arch.elect_one()` does.
    Entry { api: Api::ElectOne, names: &["elect_sync"], params: &[] },
    Entry { api: Api::SyncWarp, names: &["bar_warp_sync"], params: &["mask"] },
    // `prims.griddepcontrol(prims.GridDepAction.WAIT)`: a grid-dependency
    // wait when its kind is `wait` (`launch_dependents` orders nothing).
    Entry { api: Api::GridDepWait, names: &["griddepcontrol"], params: &["kind"] },
    // `prims.red(op, type_, a, b, mem_order=, mem_scope=)` (`red`) and
    // `prims.atomicrmw(op, ptr, a, b=, mem_order=, syncscope=)` (`atom`):
    // an update of the word at `a` / `ptr`, with the operation and the
    // semantics as enum members (`prims.ReductionOp.ADD`,
    // `prims.MemOrder.RELEASE`).
    Entry { api: Api::Atomic, names: &["red"], params: &["op", "type_", "a", "b"] },
    Entry { api: Api::Atomic, names: &["atomicrmw"], params: &["op", "ptr", "a", "b"] },
];

/// The entry of a function of `cutlass.experimental.primitives` the model
/// reads (`prims.nvvm_wrapper.mbarrier_init` is the same function).
fn primitives_entry(qualname: &str) -> Option<&'static Entry> {
    let name = primitive_name(qualname)?;
    PRIMITIVES_TABLE.iter().find(|e| e.names.contains(&name))
}

/// The name in `cutlass.experimental.primitives` of a qualified callee
/// (`prims.nvvm_wrapper.mbarrier_init` is `mbarrier_init`), whatever the
/// file imports it as; `None` for a callee of another module.
pub fn primitive_name(qualname: &str) -> Option<&str> {
    qualname.strip_prefix(PRIMITIVES)?.rsplit('.').next()
}

/// Function names of `cutlass.experimental.primitives` that take part in
/// what the checker models, by their start: the package names them after
/// the PTX instruction they emit (`mbarrier_try_wait_parity`,
/// `barrier_cta_sync_aligned`, `cp_async_bulk_tensor_shared_cluster_global`).
/// They are those whose `cute.arch` counterparts the model reads (mbarriers,
/// CTA and cluster barriers, fences, TMA copies and the `tcgen05.commit`
/// that signal mbarriers, elections and warp collectives, atomics and
/// ordered loads and stores, peer addresses, cluster launch control, inline
/// PTX); the rest (arithmetic, conversions, MMAs, tensor-memory allocation
/// and its own fences, grid dependency control) are the datapath, as their
/// `cute.arch` counterparts are.
const PRIMITIVES_SYNC: &[&str] = &[
    "mbarrier",
    "fence",
    "barrier",
    "bar_warp_sync",
    "memory_barrier",
    "cp_async",
    "cp_reduce_async",
    "tcgen05_commit",
    "elect_sync",
    "shfl_sync",
    "vote_sync",
    "redux_sync",
    "match_sync",
    "red",
    "atomicrmw",
    "load_ext",
    "store_ext",
    "mapa",
    "clusterlaunchcontrol",
    "tensormap_cp_fenceproxy",
    "inline_ptx",
];

/// Functions of `cutlass.experimental.primitives` that [`PRIMITIVES_SYNC`]'s
/// prefixes take in but whose `cute.arch` counterparts are the datapath:
/// the bulk-group commit and wait that complete TMA stores, which the
/// memory-ordering analysis records for both spellings.
const PRIMITIVES_DATAPATH: &[&str] = &["cp_async_bulk_commit_group", "cp_async_bulk_wait_group"];

/// The module of the `cute.nvgpu` instruction families, as a qualified
/// name's prefix.
const NVGPU: &str = "cutlass.cute.nvgpu.";

/// The functions of `cutlass.cute.nvgpu` that synchronize, named by family
/// and function (`tcgen05.commit`, also reached as `tcgen05.helpers.commit`),
/// with their parameters in order.
const NVGPU_TABLE: &[Entry] = &[
    // One arrival on `mbar_ptr` by each calling thread once the tcgen05
    // operations it issued before complete (`tcgen05.commit.mbarrier::arrive::one`,
    // as `tcgen05_commit` of the primitives and the Blackwell pipelines'
    // commits); with a `mask`, one on the barrier at the same offset in each
    // CTA of the cluster whose bit is set (`.multicast::cluster`). The CTA
    // group says which MMAs it tracks, not where it arrives.
    Entry { api: Api::MbarrierArrive, names: &["tcgen05.commit"], params: &["mbar_ptr", "mask", "cta_group"] },
];

/// The entry of a function of `cutlass.cute.nvgpu` the model reads.
fn nvgpu_entry(qualname: &str) -> Option<&'static Entry> {
    let (family, rest) = qualname.strip_prefix(NVGPU)?.split_once('.')?;
    let name = rest.rsplit('.').next().unwrap_or(rest);
    NVGPU_TABLE.iter().find(|e| e.names.iter().any(|n| n.split_once('.') == Some((family, name))))
}

/// The name in [`NVGPU_TABLE`] (`tcgen05.commit`) of a qualified callee of
/// `cutlass.cute.nvgpu` that synchronizes; `None` for any other.
pub fn nvgpu_function(qualname: &str) -> Option<&'static str> {
    let (family, rest) = qualname.strip_prefix(NVGPU)?.split_once('.')?;
    let name = rest.rsplit('.').next().unwrap_or(rest);
    nvgpu_entry(qualname)?.names.iter().copied().find(|n| n.split_once('.') == Some((family, name)))
}

/// `cutlass.cute.experimental`: kernels written against its own pipelines
/// (`create_pipeline`, `producer_acquire(pipe, state)`, the
/// `TMAToUMMAPipeline`-style classes), TMA loads on their stage's barrier
/// and the mainloops and epilogues built on them. Its functions and classes
/// whose names start so, or contain `Pipeline` or `pipeline`, synchronize.
const CUTE_EXPERIMENTAL: &str = "cutlass.cute.experimental.";
const CUTE_EXPERIMENTAL_SYNC: &[&str] = &[
    "producer_",
    "consumer_",
    "circular_buffer_",
    "get_mbarrier",
    "mbarrier_",
    "elect_sync",
    "tma_load",
    "tma_store",
    "mainloop_mma",
    "epilogue_tma_store",
    "AccumulatorDrain",
    "AccumulatorBufferingPlan",
    "ClusterMailbox",
];

/// Functions, classes and methods of the package that take a barrier or a
/// pipeline (`barrier_calls` of `tests/python/api_surface.json`) but
/// synchronize nothing a kernel's model could miss, and why.
pub const NOT_SYNCHRONIZATION: &[(&str, &str)] = &[
    ("cutlass.base_dsl.BaseDSL.compile_and_cache", "the compiler's pass pipeline (host code)"),
    ("cutlass.base_dsl.BaseDSL.compile_and_jit", "the compiler's pass pipeline (host code)"),
    ("cutlass.base_dsl.BaseDSL.generate_mlir", "the compiler's pass pipeline (host code)"),
    ("cutlass.base_dsl.BaseDSL.preprocess_pipeline", "the compiler's pass pipeline (host code)"),
    ("cutlass.base_dsl.CompileContext", "the compiler's pass pipeline (host code)"),
    ("cutlass.base_dsl.compiler.Compiler.compile", "the compiler's pass pipeline (host code)"),
    ("cutlass.base_dsl.compiler.Compiler.compile_and_jit", "the compiler's pass pipeline (host code)"),
    ("cutlass.cutlass_dsl.CuteExperimentalDSL.compile_and_cache", "the compiler's pass pipeline (host code)"),
    ("cutlass.cutlass_dsl.CutlassBaseDSL.compile_and_cache", "the compiler's pass pipeline (host code)"),
    ("cutlass.cutlass_dsl.CutlassBaseDSL.preprocess_pipeline", "the compiler's pass pipeline (host code)"),
    ("cutlass.cute.experimental.get_arrival_count", "reads the arrival count a pipeline was created with"),
    ("cutlass.cute.nvgpu.cpasync.CopyBulkG2SMulticastTrait.unpack", COPY_TRAIT),
    ("cutlass.cute.nvgpu.cpasync.CopyBulkG2STrait.unpack", COPY_TRAIT),
    ("cutlass.cute.nvgpu.cpasync.CopyBulkS2STrait.unpack", COPY_TRAIT),
    ("cutlass.cute.nvgpu.cpasync.CopyBulkTensorIm2ColG2SMulticastNonExecTrait.unpack", COPY_TRAIT),
    ("cutlass.cute.nvgpu.cpasync.CopyBulkTensorIm2ColG2SNonExecTrait.unpack", COPY_TRAIT),
    ("cutlass.cute.nvgpu.cpasync.CopyBulkTensorTileG2SOverrideNonExecTrait.unpack", COPY_TRAIT),
    ("cutlass.cute.nvgpu.cpasync.CopyDsmemStoreTrait.unpack", COPY_TRAIT),
    ("cutlass.cute.nvgpu.cpasync.CopyG2STileMulticastNonExecBaseTrait.unpack", COPY_TRAIT),
    ("cutlass.cute.nvgpu.cpasync.CopyG2STileNonExecBaseTrait.unpack", COPY_TRAIT),
];

/// Why a copy atom's trait taking a barrier is no call of its own.
const COPY_TRAIT: &str = "a copy atom's trait: `cute.copy` hands it the copy's `tma_bar_ptr=` or `mbar_ptr=`, and the copy is what is modelled";

/// Calls that complete transaction bytes on the mbarrier they are handed and
/// arrive on nothing, as a TMA copy does: a cluster launch control query,
/// whose response lands in shared memory. The model takes the bytes a barrier
/// announces to arrive (said as a note), and `PipelineClcFetchAsync`, whose
/// barrier the scheduler is handed, models the response; so a kernel is not
/// reported for handing them a barrier. The memory-ordering analysis records
/// `issue_clc_query`'s response as an async-proxy write of its buffer.
pub const COMPLETES_BYTES: &[(&str, &str)] = &[
    ("cutlass.cute.arch.issue_clc_query", "a cluster launch control query; its response completes bytes on `mbar_ptr`"),
    (
        "cutlass.utils.ClcDynamicPersistentTileScheduler.advance_to_next_work",
        "issues a cluster launch control query (`issue_clc_query`) on `mbarrier_addr`",
    ),
];

/// Whether a call is one of [`COMPLETES_BYTES`]: `issue_clc_query`, or the
/// dynamic tile scheduler's `advance_to_next_work` (whose receiver is not
/// resolved: the method of the static scheduler takes no barrier).
pub fn completes_bytes_only(call: &Call) -> bool {
    let arch = call.qualname.as_deref().and_then(|q| q.strip_prefix(ARCH)).map(|rest| rest.rsplit('.').next().unwrap_or(rest));
    arch == Some("issue_clc_query") || matches!(&call.func, Expr::Attr { attr, .. } if attr == "advance_to_next_work")
}

/// `cute.arch` functions that synchronize and are not modelled: the groups
/// of `cp.async` copies (Ampere's asynchronous copies into shared memory).
/// Their copies (`cute.copy` with a `CopyG2SOp` atom) are taken to land at
/// once, which is exact where a `PipelineCpAsync` commit
/// (`cp_async_mbarrier_arrive_noinc`) hands them over, but a kernel that
/// waits for them with `cp_async_wait_group` could read a stage before it
/// lands: it is not checked.
const ARCH_UNMODELLED: &[&str] = &["cp_async_commit_group", "cp_async_wait_group"];

/// Whether a qualified callee synchronizes through a module the checker
/// does not model (see [`Api::Unmodelled`]).
fn is_unmodelled_sync(qualname: &str) -> bool {
    if let Some(rest) = qualname.strip_prefix(CUTE_EXPERIMENTAL) {
        let name = rest.split('.').find(|s| s.chars().next().is_some_and(char::is_uppercase)).unwrap_or_else(|| rest.rsplit('.').next().unwrap_or(rest));
        return name.contains("Pipeline") || name.contains("pipeline") || CUTE_EXPERIMENTAL_SYNC.iter().any(|p| name.starts_with(p));
    }
    if let Some(name) = qualname.strip_prefix(ARCH) {
        return ARCH_UNMODELLED.contains(&name);
    }
    match primitive_name(qualname) {
        Some(name) => !PRIMITIVES_DATAPATH.contains(&name) && PRIMITIVES_SYNC.iter().any(|p| name.starts_with(p)),
        None => qualname.starts_with("cutlass.experimental.task_scheduling."),
    }
}

impl Api {
    /// Recognise a fully qualified callee.
    pub fn lookup(qualname: &str) -> Option<Api> {
        // The primitives read as `cute.arch`'s, before those not modelled.
        if let Some(e) = primitives_entry(qualname).or_else(|| nvgpu_entry(qualname)) {
            return Some(e.api);
        }
        if let Some((_, api)) = pipeline_named_barrier(qualname) {
            return Some(api);
        }
        match qualname {
            "range" | "cutlass.range" | "cutlass.range_constexpr" | "cutlass.range_dynamic" | "cutlass.cute.range"
            | "cutlass.cute.range_constexpr" | "cutlass.cute.range_dynamic" => return Some(Api::Range),
            // Re-exported from `cutlass.cutlass_dsl`, where the DSL's own
            // helpers import it from.
            "cutlass.const_expr" | "cutlass.cute.const_expr" | "cutlass.cutlass_dsl.const_expr" => return Some(Api::ConstExpr),
            "cutlass.cute.copy" => return Some(Api::Copy),
            // `cute.arch.barrier(barrier_id=...)` under another name.
            PIPELINE_SYNC => return Some(Api::Barrier),
            q if q.starts_with("cutlass.pipeline.") || q.starts_with("cutlass.utils.pipeline.") => return Some(Api::Pipeline),
            // `cutlass.utils.TmemAllocator` (also `cutlass.memory.TmemAllocator`):
            // its `wait_for_alloc` is a named barrier (see cute-check's
            // `pipeline.rs`); the objects it makes are pipeline objects.
            "cutlass.utils.TmemAllocator"
            | "cutlass.utils.tmem_allocator.TmemAllocator"
            | "cutlass.memory.TmemAllocator"
            | "cutlass.memory.tmem.TmemAllocator" => return Some(Api::Pipeline),
            "int" => return Some(Api::IntCast),
            q if is_unmodelled_sync(q) => return Some(Api::Unmodelled),
            _ => {}
        }
        // `cutlass.Int32` is re-exported from `cutlass.cute` and from
        // `cutlass.cutlass_dsl` (where some kernels import it from).
        if let Some(path) = qualname.strip_prefix("cutlass.") {
            let ty = path.strip_prefix("cute.").or_else(|| path.strip_prefix("cutlass_dsl.")).unwrap_or(path);
            if matches!(ty, "Int32" | "Int64" | "Int16" | "Int8" | "Uint32" | "Uint64" | "Uint16" | "Uint8" | "Boolean") {
                return Some(Api::IntCast);
            }
        }
        Self::entry(qualname).map(|e| e.api)
    }

    fn entry(qualname: &str) -> Option<&'static Entry> {
        let rest = qualname.strip_prefix(ARCH)?;
        // `cutlass.cute.arch.mbar.mbarrier_wait` and the like.
        let last = rest.rsplit('.').next().unwrap_or(rest);
        TABLE.iter().find(|e| e.names.contains(&last))
    }

    /// Parameter names, in order, of the function a call resolves to.
    pub fn params_of(call: &Call) -> &'static [&'static str] {
        if call.api == Some(Api::InlineAsm) {
            return INLINE_ASM_PARAMS;
        }
        if call.qualname.as_deref() == Some(PIPELINE_SYNC) {
            return &["barrier_id"];
        }
        if call.qualname.as_deref().and_then(pipeline_named_barrier).is_some() {
            return &["barrier_id", "num_threads"];
        }
        let by_name = |q: &str| Self::entry(q).or_else(|| primitives_entry(q)).or_else(|| nvgpu_entry(q)).map(|e| e.params);
        if let Some(p) = call.qualname.as_deref().and_then(by_name) {
            return p;
        }
        let Some(last) = call.dotted_name() else { return &[] };
        by_name(&format!("{ARCH}{last}")).unwrap_or(&[])
    }

    /// Every (function name, parameter names) the table knows, for the test
    /// that holds it against the installed package.
    pub fn table() -> impl Iterator<Item = (&'static str, &'static [&'static str])> {
        TABLE.iter().flat_map(|e| e.names.iter().map(move |n| (*n, e.params)))
    }

    /// The same for the functions of `cutlass.cute.nvgpu` (`tcgen05.commit`).
    pub fn nvgpu_table() -> impl Iterator<Item = (&'static str, &'static [&'static str])> {
        NVGPU_TABLE.iter().flat_map(|e| e.names.iter().map(move |n| (*n, e.params)))
    }

    /// The function a lowered call is (resolved when lowering).
    pub fn of_call(call: &Call) -> Option<Api> {
        call.api
    }

    /// Recognise a call through the spellings the file's imports resolve,
    /// falling back to the bare attribute name for the blog's `cute.arch.X`
    /// without imports (pasted snippets often omit them).
    pub fn resolve(call: &Call) -> Option<Api> {
        if let Some(api) = Self::inline_asm(call) {
            return api;
        }
        if let Some(q) = &call.qualname {
            if let Some(api) = Api::lookup(q) {
                return Some(api);
            }
        }
        // Methods of pipeline objects, whatever the object is called, and
        // of their barrier arrays (`pipe.sync_object_empty.arrive(...)`),
        // also on an object a call returns (`PipelineTmaUmma.create(...)
        // .make_participants()`, which has no dotted name).
        let pipeline_method = match &call.func {
            Expr::Attr { attr, base } => {
                PIPELINE_METHODS.contains(&attr.as_str())
                    || matches!(base.as_ref(), Expr::Attr { attr: inner, .. } if inner.starts_with("sync_object"))
            }
            _ => false,
        };
        let Some(dotted) = call.func.dotted() else {
            return pipeline_method.then_some(Api::Pipeline);
        };
        if dotted == "range" {
            return Some(Api::Range);
        }
        if let Some(api) = Api::lookup(&dotted) {
            return Some(api);
        }
        if pipeline_method {
            return Some(Api::Pipeline);
        }
        // Snippets pasted without their imports: `cute.X` is `cutlass.cute.X`.
        if let Some(rest) = dotted.strip_prefix("cute.") {
            if let Some(api) = Api::lookup(&format!("cutlass.cute.{rest}")) {
                return Some(api);
            }
        }
        let (_, last) = dotted.rsplit_once('.')?;
        if dotted.contains("arch.") {
            return Api::lookup(&format!("{ARCH}{last}"));
        }
        None
    }

    /// `Some(..)` for a call of `llvm.inline_asm`: `Some(Some(InlineAsm))`
    /// when its assembly (a literal) synchronizes, `Some(None)` when it is
    /// arithmetic or the like.
    fn inline_asm(call: &Call) -> Option<Option<Api>> {
        let name = call.qualname.clone().or_else(|| call.func.dotted())?;
        if name != "inline_asm" && !name.ends_with(".inline_asm") {
            return None;
        }
        let asm = call.kwargs.iter().find(|(k, _)| k == "asm_string").map(|(_, e)| e).or(call.args.get(2));
        Some(match asm {
            Some(Expr::Str(text)) if crate::ptx::synchronizes(text) => Some(Api::InlineAsm),
            _ => None,
        })
    }

    /// Whether a call of this function is a slicing seed, and why.
    pub fn effect(self) -> Effect {
        use Api::*;
        match self {
            ThreadIdx | ThreadIdxX | WarpIdx | LaneIdx | BlockIdx | ClusterRank | BlockInClusterIdx | ClusterSize
            | MakeWarpUniform | ElectOne | MapSharedCluster => Effect::Topology,
            Range | IntCast | ConstExpr => Effect::Value,
            _ => Effect::Sync,
        }
    }
}

/// Whether a function is a warp-collective operation whose member mask the
/// lanes that reach it must fill (besides `sync_warp` and `elect_one`).
pub fn is_warp_collective(api: Api) -> bool {
    matches!(api, Api::Shuffle | Api::Vote | Api::WarpReduction | Api::WarpRedux | Api::SyncWarp)
}

/// Whether a call reads a synchronization variable and hands back what it
/// read: a load, an atomic (the old value), or inline PTX with `ld`/`atom`.
pub fn reads_sync_variable(call: &Call) -> bool {
    match call.api {
        Some(Api::Load | Api::Atomic) => true,
        Some(Api::InlineAsm) => arg(call, "asm_string").is_some_and(|e| match e {
            Expr::Str(asm) => crate::ptx::sync_instructions(asm).iter().any(|s| {
                matches!(s, crate::ptx::PtxSync::Load { .. } | crate::ptx::PtxSync::ReadModifyWrite { returns: true, .. })
            }),
            _ => false,
        }),
        _ => false,
    }
}

/// An argument of a recognised call, by parameter name or position.
pub fn arg<'c>(call: &'c Call, name: &str) -> Option<&'c Expr> {
    if let Some((_, e)) = call.kwargs.iter().find(|(k, _)| k == name) {
        return Some(e);
    }
    let pos = call.params.iter().position(|p| *p == name)?;
    call.args.get(pos)
}

#[cfg(test)]
mod tests {
    use super::Api;

    /// The experimental primitives that synchronize are read as their
    /// `cute.arch` counterparts where the model has them, and are otherwise,
    /// with the task-scheduling framework, synchronization the checker does
    /// not model; the primitives that compute are not synchronization at all.
    #[test]
    fn experimental_synchronization_is_recognised_as_not_modelled() {
        for q in [
            "cutlass.experimental.primitives.mbarrier_try_wait",
            "cutlass.experimental.primitives.barrier_cta_red",
            "cutlass.experimental.primitives.cp_async_shared_global",
            "cutlass.experimental.primitives.fence_proxy_async_release_sync_restrict",
            "cutlass.experimental.primitives.fence_proxy_acquire",
            "cutlass.experimental.primitives.inline_ptx_hl",
            "cutlass.experimental.primitives.match_sync",
            "cutlass.experimental.task_scheduling.task_manager.TaskManager",
        ] {
            assert_eq!(Api::lookup(q), Some(Api::Unmodelled), "{q}");
        }
        // Read as their `cute.arch` counterparts.
        for (q, api) in [
            ("cutlass.experimental.primitives.mbarrier_try_wait_parity", Api::MbarrierTryWait),
            ("cutlass.experimental.primitives.nvvm_wrapper.barrier_cta_sync_aligned", Api::Barrier),
            ("cutlass.experimental.primitives.elect_sync", Api::ElectOne),
            ("cutlass.experimental.primitives.tcgen05_commit", Api::MbarrierArrive),
            ("cutlass.experimental.primitives.cp_async_bulk_tensor_shared_cta_global", Api::Copy),
            ("cutlass.experimental.primitives.cp_async_bulk_tensor_shared_cluster_global", Api::Copy),
            ("cutlass.experimental.primitives.cp_async_bulk_tensor_global_shared_cta", Api::Copy),
            ("cutlass.experimental.primitives.cp_async_bulk_global_shared_cta", Api::Copy),
            ("cutlass.experimental.primitives.cp_async_bulk_tensor_reduce", Api::Copy),
            ("cutlass.experimental.primitives.nvvm_wrapper.cp_reduce_async_bulk_global_shared_cta", Api::Copy),
            ("cutlass.experimental.primitives.mapa", Api::MapSharedCluster),
            ("cutlass.experimental.primitives.griddepcontrol", Api::GridDepWait),
            ("cutlass.experimental.primitives.tcgen05_ld", Api::TmemUse),
            ("cutlass.experimental.primitives.nvvm_wrapper.tcgen05_mma_ws", Api::TmemUse),
            ("cutlass.experimental.primitives.tcgen05_alloc", Api::TmemAlloc),
            ("cutlass.experimental.primitives.tcgen05_dealloc", Api::TmemDealloc),
            ("cutlass.experimental.primitives.tcgen05_wait", Api::TmemFence),
            ("cutlass.cute.arch.fence_view_async_tmem_store", Api::TmemFence),
        ] {
            assert_eq!(Api::lookup(q), Some(api), "{q}");
        }
        for q in [
            "cutlass.experimental.primitives.fma_packed_f32x2",
            "cutlass.experimental.primitives.cvt_f32x2_to_f8x2",
            "cutlass.experimental.primitives.read_sreg_hw",
            "cutlass.experimental.primitives.cp_async_bulk_commit_group",
            "cutlass.experimental.primitives.cp_async_bulk_wait_group",
        ] {
            assert_eq!(Api::lookup(q), None, "{q}");
        }
    }
}
