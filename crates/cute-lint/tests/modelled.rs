//! Constructs of the real kernels that the checker models: each kernel here
//! was "not checked" before its construct was modelled.

use cute_lint::{analyze_text, AnalysisOptions};

fn names(src: &str) -> Vec<(String, String)> {
    analyze_text(src, &AnalysisOptions::default()).into_iter().map(|d| (d.name.to_string(), d.message)).collect()
}

const HEAD: &str = r#"
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils as utils
import cutlass.utils.blackwell_helpers as sm100_utils
from cutlass.cute.nvgpu import tcgen05
"#;

/// `create(...).make_participants()` in one expression: the pipeline the
/// call returns is the receiver of `make_participants`.
#[test]
fn participants_of_a_pipeline_created_in_the_same_expression() {
    let groups = "    producers = pipeline.CooperativeGroup(pipeline.Agent.Thread, 32)\n    consumers = pipeline.CooperativeGroup(pipeline.Agent.Thread, 32)";
    assert_eq!(names(&participants_kernel(groups)), vec![]);
}

/// `PipelineTmaStore` orders only the calling thread's own bulk stores.
#[test]
fn tma_store_pipelines_synchronize_no_threads() {
    let src = format!(
        "{HEAD}{}",
        r#"
@cute.kernel
def k(x: cute.Tensor):
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    store = pipeline.PipelineTmaStore.create(
        num_stages=2, producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 128)
    )
    for i in cutlass.range(4, unroll=1):
        store.producer_acquire()
        cute.arch.sync_threads()
        store.producer_commit()
    store.producer_tail()

@cute.jit
def host(x: cute.Tensor):
    k(x).launch(grid=[1, 1, 1], block=[128, 1, 1])
"#
    );
    assert_eq!(names(&src), vec![]);
}

fn tmem_kernel(two_cta: &str, cluster: &str) -> String {
    format!(
        "{HEAD}{}",
        r#"
@cute.kernel
def k(x: cute.Tensor, two_cta: cutlass.Constexpr):
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    holder = utils.SmemAllocator().allocate_array(cutlass.Int32, 1)
    bar = pipeline.NamedBarrier(barrier_id=1, num_threads=64)
    tmem = utils.TmemAllocator(holder, barrier_for_retrieve=bar, allocator_warp_id=0, is_two_cta=two_cta)
    if warp == 0:
        tmem.allocate(128)
        tmem.wait_for_alloc()
        tmem.relinquish_alloc_permit()
        tmem.free(tmem.retrieve_ptr(cutlass.Float32))
    if warp == 1:
        tmem.wait_for_alloc()
        p = tmem.retrieve_ptr(cutlass.Float32)

@cute.jit
def host(x: cute.Tensor, two_cta: cutlass.Constexpr):
    k(x, two_cta).launch(grid=[1, 1, 1], block=[96, 1, 1], cluster=CLUSTER)

def main(two_cta):
    cute.compile(host, None, TWO_CTA)
"#
    )
    .replace("TWO_CTA", two_cta)
    .replace("CLUSTER", cluster)
}

/// `TmemAllocator.wait_for_alloc()` is its retrieve barrier's
/// `arrive_and_wait()`; the other methods synchronize nothing in one CTA,
/// and a two-CTA allocator's `free()` is the pair's handshake.
#[test]
fn tmem_allocators_wait_on_their_retrieve_barrier() {
    assert_eq!(names(&tmem_kernel("False", "[1, 1, 1]")), vec![]);
    // Whether it spans two CTAs is not known: one CTA per cluster has no peer.
    let d = names(&tmem_kernel("two_cta", "[1, 1, 1]"));
    assert_eq!(d, vec![], "{d:?}");
    // A two-CTA allocator's deallocation barrier: the allocator warps of the
    // pair meet on it before freeing, once its initialisation is visible to
    // the peer (a cluster barrier after the constructor).
    let freeing = |kernel: String, synced: bool| {
        let sync = "    cute.arch.cluster_arrive()\n    cute.arch.cluster_wait()\n    if warp == 0:";
        if synced { kernel.replacen("    if warp == 0:", sync, 1) } else { kernel }
    };
    let d = names(&freeing(tmem_kernel("True", "[2, 1, 1]"), true));
    assert_eq!(d, vec![], "{d:?}");
    let d = names(&freeing(tmem_kernel("True", "[2, 1, 1]"), false));
    assert!(d.iter().any(|(n, m)| n == "mbarrier-init-hazard" && m.contains("TmemAllocator deallocation barrier")), "{d:?}");
    // Only one CTA of the pair frees: its allocator warp waits forever.
    let one_frees = freeing(tmem_kernel("True", "[2, 1, 1]"), true)
        .replace("        tmem.free(", "        if cute.arch.block_idx_in_cluster() == 0:\n            tmem.free(");
    let d = names(&one_frees);
    assert!(d.iter().any(|(n, _)| n == "deadlock"), "{d:?}");
    // In a cluster of one CTA there is no peer to pair with.
    let d = names(&tmem_kernel("True", "[1, 1, 1]"));
    assert!(d.len() == 1 && d[0].0 == "analysis-incomplete" && d[0].1.contains("has no pairs of CTAs"), "{d:?}");
    let d = names(&tmem_kernel("two_cta", "[2, 1, 1]"));
    assert!(d.len() == 1 && d[0].0 == "analysis-incomplete" && d[0].1.contains("is_two_cta"), "{d:?}");
    // A barrier that more threads must reach than wait: a hang.
    let d = names(&tmem_kernel("False", "[1, 1, 1]").replace("num_threads=64", "num_threads=96"));
    assert!(d.iter().any(|(n, _)| n == "named-barrier-deadlock"), "{d:?}");
}

/// The lifetime of tensor memory: an allocation no thread frees, and one
/// freed twice, are `tmem-lifetime` findings on the allocation and on the
/// second free; the allocator warp frees for every thread that calls
/// `free`, and with `cute.arch` the calling warp does.
#[test]
fn tmem_is_freed_once() {
    let free = "        tmem.free(tmem.retrieve_ptr(cutlass.Float32))\n";
    let d = names(&tmem_kernel("False", "[1, 1, 1]").replace(free, ""));
    assert!(d.len() == 1 && d[0].0 == "tmem-lifetime" && d[0].1.contains("never freed"), "{d:?}");
    let d = names(&tmem_kernel("False", "[1, 1, 1]").replace(free, &format!("{free}{free}")));
    assert!(d.len() == 1 && d[0].0 == "tmem-lifetime" && d[0].1.contains("freed twice"), "{d:?}");
    // Every warp calls `free`; only the allocator warp (0) frees.
    let everyone = tmem_kernel("False", "[1, 1, 1]").replace(free, "").replace("    if warp == 1:\n", &format!("    tmem.free(tmem.retrieve_ptr(cutlass.Float32))\n    if warp == 1:\n"));
    assert_eq!(names(&everyone), vec![]);
    // `cute.arch`: the warp that calls `dealloc_tmem` frees.
    let arch = tmem_kernel("False", "[1, 1, 1]").replace(free, "        cute.arch.dealloc_tmem(tmem.retrieve_ptr(cutlass.Float32), 128)\n");
    assert_eq!(names(&arch), vec![]);
    let d = names(&arch.replace("        cute.arch.dealloc_tmem(", "        cute.arch.dealloc_tmem(tmem.retrieve_ptr(cutlass.Float32), 128)\n        cute.arch.dealloc_tmem("));
    assert!(d.len() == 1 && d[0].0 == "tmem-lifetime" && d[0].1.contains("freed twice"), "{d:?}");
}

/// The CTA group of a tcgen05 MMA whose `cta_group` is not known: with one
/// CTA per cluster it is 1, so `use_2cta_instrs` is false and the counts
/// computed from it are known.
#[test]
fn tcgen05_mmas_span_one_cta_in_a_cluster_of_one() {
    let src = |cluster: &str| {
        format!(
            "{HEAD}{}",
            r#"
@cute.kernel
def k(tiled_mma: cute.TiledMma):
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    use_2cta_instrs = cute.size(tiled_mma.thr_id.shape) == 2
    bar = pipeline.NamedBarrier(barrier_id=1, num_threads=32 * 4 * (2 if use_2cta_instrs else 1))
    if warp < 4:
        bar.arrive_and_wait()

@cute.jit
def host(a_dtype, use_2cta: cutlass.Constexpr):
    cta_group = tcgen05.CtaGroup.TWO if use_2cta else tcgen05.CtaGroup.ONE
    tiled_mma = sm100_utils.make_trivial_tiled_mma(a_dtype, None, None, cutlass.Float32, cta_group, (128, 128))
    k(tiled_mma).launch(grid=[1, 1, 1], block=[128, 1, 1], cluster=CLUSTER)
"#
        )
        .replace("CLUSTER", cluster)
    };
    assert_eq!(names(&src("[1, 1, 1]")), vec![]);
    let d = names(&src("[2, 1, 1]"));
    assert!(d.len() == 1 && d[0].0 == "analysis-incomplete" && d[0].1.contains("thread count"), "{d:?}");
}

/// `(a, *rest)` splices `rest` into the tuple; a `rest` of unknown length
/// leaves the tuple's length unknown (never counted as one item).
#[test]
fn starred_items_are_spliced_into_tuples() {
    let src = |rest: &str| {
        format!(
            "{HEAD}{}",
            r#"
REST

@cute.kernel
def k(x: cute.Tensor, warps):
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    bar = pipeline.NamedBarrier(barrier_id=1, num_threads=32 * len((0, *warps)))
    if warp < 3:
        bar.arrive_and_wait()

@cute.jit
def host(x: cute.Tensor):
    k(x, WARPS).launch(grid=[1, 1, 1], block=[96, 1, 1])
"#
        )
        .replace("REST", rest)
    };
    assert_eq!(names(&src("WARPS = (1, 2)")), vec![]);
    let d = names(&src("WARPS = None"));
    assert!(d.len() == 1 && d[0].0 == "analysis-incomplete" && d[0].1.contains("thread count"), "{d:?}");
}

/// A ring whose trip count is known only at run time, consumed by a wait
/// before the loop and one per iteration of `range(k_tiles - 1)`: the
/// consumer waits as often as the producer, `k_tiles` times, when every
/// unknown count is explored as the same number. Its clean twin releases
/// each tile; without the release the ring is reported.
fn ring_of_unknown_length(release: &str) -> String {
    ring_of_k_tiles(
        &"        pipe.consumer_wait(state)
        for i in cutlass.range(k_tiles - 1, unroll=1):
            RELEASE
            state.advance()
            pipe.consumer_wait(state)
        pipe.consumer_release(state)
        state.advance()
"
        .replace("RELEASE", release),
    )
}

/// A ring of `k_tiles` stages, a count known only at run time, filled by
/// warp 0 and drained by warp 1 running `consumer` (indented as the body of
/// its branch) with its state.
fn ring_of_k_tiles(consumer: &str) -> String {
    format!(
        "{HEAD}{}",
        r#"
@cute.kernel
def k(x: cute.Tensor, k_tiles: cutlass.Int32):
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    storage = utils.SmemAllocator().allocate_array(cutlass.Int64, 4)
    pipe = pipeline.PipelineAsync.create(
        num_stages=2,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
        barrier_storage=storage,
    )
    if warp == 0:
        state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, 2)
        for i in cutlass.range(k_tiles, unroll=1):
            pipe.producer_acquire(state)
            pipe.producer_commit(state)
            state.advance()
        pipe.producer_tail(state)
    else:
        state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, 2)
CONSUMER
@cute.jit
def host(x: cute.Tensor, k_tiles: cutlass.Int32):
    k(x, k_tiles).launch(grid=[1, 1, 1], block=[64, 1, 1])
"#
        .replace("CONSUMER", consumer)
    )
}

#[test]
fn loops_of_an_unknown_count_and_of_one_less_keep_their_difference() {
    let clean = names(&ring_of_unknown_length("pipe.consumer_release(state)"));
    assert!(clean.iter().all(|(name, _)| name == "analysis-incomplete"), "{clean:?}");
    assert!(clean.iter().any(|(_, m)| m.contains("bounded number of loop iterations")), "{clean:?}");
    let bug = names(&ring_of_unknown_length("pass"));
    assert!(bug.iter().any(|(name, _)| name == "deadlock" || name == "vacuous-wait" || name == "untoggled-phase"), "{bug:?}");
}

/// A ring whose participants are made in the expression that creates it,
/// with the groups `groups` binds (`producers`, `consumers`).
fn participants_kernel(groups: &str) -> String {
    format!(
        "{HEAD}{}",
        r#"
@cute.kernel
def k(x: cute.Tensor):
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    storage = utils.SmemAllocator().allocate_array(cutlass.Int64, 4)
GROUPS
    producer, consumer = pipeline.PipelineAsync.create(
        num_stages=2,
        producer_group=producers,
        consumer_group=consumers,
        barrier_storage=storage,
    ).make_participants()
    if warp == 0:
        for i in cutlass.range(4, unroll=1):
            h = producer.acquire_and_advance()
            h.commit()
        producer.tail()
    if warp == 1:
        for i in cutlass.range(4, unroll=1):
            h = consumer.wait_and_advance()
            h.release()

@cute.jit
def host(x: cute.Tensor):
    k(x).launch(grid=[1, 1, 1], block=[64, 1, 1])
"#
        .replace("GROUPS", groups)
    )
}

/// Groups made by a function defined in the kernel, or a lambda: they run
/// as helpers of the file do. One that reads a name of the kernel (a
/// closure) stays unmodelled rather than reading a global of that name.
#[test]
fn functions_defined_inside_a_kernel_run_where_they_are_called() {
    let nested = "    def threads(n):\n        return pipeline.CooperativeGroup(pipeline.Agent.Thread, n)\n    producers = threads(32)\n    consumers = threads(32)";
    assert_eq!(names(&participants_kernel(nested)), vec![]);
    let lambda = "    threads = lambda n: pipeline.CooperativeGroup(pipeline.Agent.Thread, n)\n    producers = threads(32)\n    consumers = threads(32)";
    assert_eq!(names(&participants_kernel(lambda)), vec![]);
    // The count given through the helper is checked like any other.
    let d = names(&participants_kernel(&lambda.replace("consumers = threads(32)", "consumers = threads(64)")));
    assert!(d.iter().any(|(n, _)| n == "arrive-count-mismatch"), "{d:?}");
    // A closure over the kernel's `count`: a global `count` must not stand in for it.
    let closure = "    count = 32\n    def threads():\n        return pipeline.CooperativeGroup(pipeline.Agent.Thread, count)\n    producers = threads()\n    consumers = threads()";
    let src = participants_kernel(closure).replace("\n@cute.kernel", "\ncount = 64\n\n@cute.kernel");
    let d = names(&src);
    assert!(d.len() == 1 && d[0].0 == "analysis-incomplete" && d[0].1.contains("not checked"), "{d:?}");
}

/// A ring drained by a consumer that releases each stage in the last
/// iteration of an inner loop whose length is known only at run time
/// (`if idx == cute.size(x, mode=[1]) - LAST:`), as the CUTLASS mixed-input
/// GEMMs do.
fn release_in_the_last_iteration(last: &str) -> String {
    consumer_in_the_last_iteration(last, "pipe.consumer_release(state)")
}

/// [`release_in_the_last_iteration`] running `release` in the last
/// iteration.
fn consumer_in_the_last_iteration(last: &str, release: &str) -> String {
    ring_of_k_tiles(
        &"        for i in cutlass.range(k_tiles, unroll=1):
            pipe.consumer_wait(state)
            for idx in cutlass.range(cute.size(x, mode=[1]), unroll=1):
                if idx == cute.size(x, mode=[1]) - LAST:
                    RELEASE
            state.advance()
"
        .replace("LAST", last)
        .replace("RELEASE", release),
    )
}

/// The explored iterations of a loop of unknown length are its first ones:
/// its counter is known in them, and so is its stop as far as they go. A
/// release in the last iteration is one per stage (clean within the loop
/// bounds); one compared with a stop it never reaches is none (the ring
/// hangs). Taken as a condition on the data, both were "checked only in
/// part".
#[test]
fn the_counter_and_the_stop_of_a_loop_of_unknown_length_are_known_in_its_iterations() {
    let clean = names(&release_in_the_last_iteration("1"));
    assert!(clean.iter().all(|(name, _)| name == "analysis-incomplete"), "{clean:?}");
    assert!(clean.iter().any(|(_, m)| m.contains("bounded number of loop iterations")), "{clean:?}");
    let never = names(&release_in_the_last_iteration("0"));
    assert!(never.iter().any(|(name, _)| name == "deadlock" || name == "vacuous-wait"), "{never:?}");
    // A helper the loop calls names its own `x`: its stop is not the loop's.
    let helper = "\
@cute.jit
def release_at(pipe, state, idx, x):
    if idx == cute.size(x, mode=[1]) - 2:
        pipe.consumer_release(state)
";
    let in_helper = names(&format!("{}{helper}", consumer_in_the_last_iteration("1", "release_at(pipe, state, idx, k_tiles)")));
    assert!(in_helper.iter().all(|(name, _)| name == "analysis-incomplete"), "{in_helper:?}");
    assert!(in_helper.iter().any(|(_, m)| m.contains("checked only in part")), "{in_helper:?}");
}

/// Thread 0 fills a buffer and arrives; every thread spins on a try-wait of
/// phase `PHASE` before it reads.
const SPIN_ON_TRY_WAIT: &str = r#"
import cutlass
import cutlass.cute as cute
import cutlass.utils as utils


@cute.struct
class SharedStorage:
    mbar: cute.struct.MemRange[cutlass.Int64, 1]
    data: cute.struct.MemRange[cutlass.Float32, 64]


@cute.kernel
def k(dst: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    storage = utils.SmemAllocator().allocate(SharedStorage)
    mbar = storage.mbar.data_ptr()
    data = storage.data.get_tensor(cute.make_layout(64))
    if tidx == 0:
        cute.arch.mbarrier_init(mbar, 1)
        cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    if tidx == 0:
        for i in cutlass.range_constexpr(64):
            data[i] = cutlass.Float32(i)
        cute.arch.mbarrier_arrive(mbar)
    while not cute.arch.mbarrier_try_wait(mbar, PHASE):
        pass
    dst[tidx] = data[63 - tidx]


@cute.jit
def host(dst: cute.Tensor):
    k(dst).launch(grid=[1, 1, 1], block=[64, 1, 1])
"#;

/// `while not mbarrier_try_wait(bar, phase): pass` is the wait on that
/// phase: the reads after it are ordered after the writes the arrive
/// publishes (it was taken as a loop of unknown length that waits for
/// nothing, and the reads raced with the writes), and a wrong phase passes at
/// once.
#[test]
fn a_spin_on_a_try_wait_is_a_wait() {
    assert_eq!(names(&SPIN_ON_TRY_WAIT.replace("PHASE", "0")), vec![]);
    let found = names(&SPIN_ON_TRY_WAIT.replace("PHASE", "1"));
    assert_eq!(found.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["vacuous-wait"], "{found:?}");
}

/// One elected thread loads a tile by TMA with the primitives
/// (`prims.cp_async_bulk_tensor_shared_cta_global`), announcing its bytes on
/// `mbar`; every thread spins on the mbarrier's phase 0, then `READ`s.
const PRIMITIVES_TMA: &str = r#"
import cutlass
import cutlass.cute as cute
from cutlass.experimental import primitives as prims


@cute.kernel
def k(tma_desc: cutlass.Array, dst: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    tile = cutlass.Array(cutlass.Float16, 4096, space=cutlass.AddressSpace.smem)
    mbar = cutlass.Array(cutlass.Int64, 1, space=cutlass.AddressSpace.smem)
    if tidx == 0:
        prims.mbarrier_init(mbar, 1)
        prims.fence_mbarrier_init()
    prims.barrier_cta_sync(0)
    if tidx == 0:
        prims.mbarrier_arrive_expect_tx(mbar, 8192)
        prims.cp_async_bulk_tensor_shared_cta_global(tile, tma_desc.get_ptr(), [0, 0], mbar)
    READ


@cute.jit
def host(tma_desc: cutlass.Array, dst: cute.Tensor):
    k(tma_desc, dst).launch(grid=[1, 1, 1], block=[128, 1, 1])
"#;

/// The primitives' TMA load writes its destination asynchronously and
/// completes on its mbarrier: read after the wait it is ordered (silent),
/// read before it the read races with the copy.
#[test]
fn a_primitives_tma_load_completes_on_its_mbarrier() {
    let waited = "while not prims.mbarrier_try_wait_parity(mbar, 0):\n        pass\n    dst[tidx] = tile[tidx]";
    assert_eq!(names(&PRIMITIVES_TMA.replace("READ", waited)), vec![]);
    let early = "dst[tidx] = tile[tidx]\n    while not prims.mbarrier_try_wait_parity(mbar, 0):\n        pass";
    let found = names(&PRIMITIVES_TMA.replace("READ", early));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].1.contains("`tile`"), "{found:?}");
}

/// `prims.shfl_sync` over every lane (`0xFFFFFFFF`), run by the lanes
/// `GUARD` keeps.
const PRIMITIVES_SHUFFLE: &str = r#"
import cutlass
import cutlass.cute as cute
from cutlass.experimental import primitives as prims


@cute.kernel
def k(dst: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    lane = tidx % 32
    value = cutlass.Int32(tidx)
    if GUARD:
        value = prims.shfl_sync(0xFFFFFFFF, value, 0, 0x1F, prims.Shfl.IDX)
    dst[tidx] = value


@cute.jit
def host(dst: cute.Tensor):
    k(dst).launch(grid=[1, 1, 1], block=[64, 1, 1])
"#;

/// The primitives' warp shuffle is the warp collective `cute.arch`'s is:
/// by every lane of its member mask it is silent; by half of them it waits
/// for lanes that never come.
#[test]
fn a_primitives_shuffle_is_a_warp_collective() {
    assert_eq!(names(&PRIMITIVES_SHUFFLE.replace("GUARD", "tidx < 64")), vec![]);
    let found = names(&PRIMITIVES_SHUFFLE.replace("GUARD", "lane < 16"));
    assert_eq!(found.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["single-lane-collective"], "{found:?}");
}

/// A kernel of a subclass whose named barrier and the helper that waits on
/// it come from its base class in the file (set in the base's `__init__`,
/// run through `super().__init__`); the helper is `SYNC`.
const SUBCLASS_KERNEL: &str = r#"
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline


class Base:
    def __init__(self, threads):
        self.threads = threads
        self.cta_sync_barrier = pipeline.NamedBarrier(barrier_id=1, num_threads=threads)

    @cute.jit
    def sync_all(self):
        SYNC


class Sub(Base):
    def __init__(self):
        super().__init__(128)

    @cute.kernel
    def kernel(self, x: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        x[tidx] = 1.0
        self.sync_all()
        x[127 - tidx] = 2.0

    @cute.jit
    def __call__(self, x: cute.Tensor):
        self.kernel(x).launch(grid=[1, 1, 1], block=[128, 1, 1])


def main():
    cute.compile(Sub(), None)
"#;

/// Methods and attributes a subclass inherits from a class of the file are
/// its own: the base's named barrier orders the kernel's writes (silent;
/// it was "not checked", a named barrier passed from elsewhere), and a
/// barrier of 96 threads waits for threads that never come.
#[test]
fn a_subclass_inherits_the_barriers_and_helpers_of_its_base() {
    assert_eq!(names(&SUBCLASS_KERNEL.replace("SYNC", "self.cta_sync_barrier.arrive_and_wait()")), vec![]);
    let short = SUBCLASS_KERNEL
        .replace("SYNC", "self.cta_sync_barrier.arrive_and_wait()")
        .replace("num_threads=threads", "num_threads=threads - 32");
    let found = names(&short);
    assert_eq!(found.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["barrier-recycling"], "{found:?}");
    // Without the base, the helper of that name is not this class's: the
    // kernel is not checked (it used to pass in silence).
    let orphan = short.replace("class Sub(Base):", "class Sub:");
    let found = names(&orphan);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].1.contains("it calls `self.sync_all`, which `Sub` does not define or inherit"), "{found:?}");
}

/// The consumer moves its state on with a helper of its own that writes the
/// state's fields (`_index`, `_phase`), as CUTLASS's pingpong GEMM advances
/// a state by a tile's worth of stages; `FLIP` turns the phase at the wrap.
fn ring_advanced_by_hand(flip: &str) -> String {
    let helper = "\n\ndef step(state):\n    state._index = state._index + 1\n    if state._index == 2:\n        state._index = 0\n        FLIP\n    return state\n"
        .replace("FLIP", flip);
    ring_of_k_tiles(
        "        for i in cutlass.range(k_tiles, unroll=1):
            pipe.consumer_wait(state)
            pipe.consumer_release(state)
            state = step(state)
",
    ) + &helper
}

/// A state's fields written by hand are its index and phase: flipped at the
/// wrap, the ring is drained as `advance()` drains it (silent); not flipped,
/// the consumer waits for the phase it has already passed.
#[test]
fn a_state_advanced_through_its_fields_is_followed() {
    let bounded = |found: &[(String, String)]| found.iter().all(|(_, m)| m.contains("bounded number of loop iterations"));
    let clean = names(&ring_advanced_by_hand("state._phase = state._phase ^ 1"));
    assert!(bounded(&clean), "{clean:?}");
    let found = names(&ring_advanced_by_hand("pass"));
    assert!(found.iter().any(|(n, _)| n == "untoggled-phase" || n == "deadlock" || n == "vacuous-wait"), "{found:?}");
}

/// Two warp groups take turns through a `PipelineOrder` (`STATE_FORM` is how
/// the kernel holds the group's state) over `ROUNDS` turns each.
fn order_turns(group_id: &str, state_form: &str) -> String {
    let body = match state_form {
        // The object's own state, advanced in place.
        "implicit" => "        order.wait()\n        order.arrive()\n",
        // CUTLASS's ping-pong GEMM: the state taken from the object and
        // rebound to what `arrive` returns.
        "returned" => "        order.wait(s)\n        s = order.arrive(s)\n",
        // The state passed advances in place (a Python object).
        "in_place" => "        order.wait(s)\n        order.arrive(s)\n",
        _ => unreachable!(),
    };
    format!(
        "{HEAD}{}",
        r#"
@cute.kernel
def k(x: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    warp_group = cute.arch.make_warp_uniform(tidx // 128)
    storage = utils.SmemAllocator().allocate_array(cutlass.Int64, 4)
    order = pipeline.PipelineOrder.create(
        barrier_storage=storage,
        depth=2,
        length=2,
        group_id=GROUP_ID,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 128),
    )
    s = order.state
    for i in cutlass.range(3, unroll=1):
BODY
@cute.jit
def host(x: cute.Tensor):
    k(x).launch(grid=[1, 1, 1], block=[256, 1, 1])
"#
        .replace("GROUP_ID", group_id)
        .replace("BODY", body)
    )
}

/// The turns pass from group to group, whichever way the state is held; two
/// groups that both think they go first hand the turn to a group that never
/// waits for it, and wait for a turn nobody hands them.
#[test]
fn a_pipeline_order_hands_the_turn_from_group_to_group() {
    for form in ["implicit", "returned", "in_place"] {
        assert_eq!(names(&order_turns("warp_group", form)), vec![], "{form}");
        let found = names(&order_turns("0", form));
        assert!(found.iter().any(|(n, _)| n == "deadlock"), "{form}: {found:?}");
    }
}

/// A producer warp fills a ring with every tile the persistent scheduler
/// gives the CTA; two consumer warp groups take every other tile (the second
/// skips the first tile, and `STEP` is how far each moves on per tile).
fn alternating_consumers(step: &str) -> String {
    format!(
        "{HEAD}{}",
        r#"
@cute.kernel
def k(x: cute.Tensor, sched_params: utils.PersistentTileSchedulerParams):
    tidx, _, _ = cute.arch.thread_idx()
    warp_group = cute.arch.make_warp_uniform(tidx // 128)
    storage = utils.SmemAllocator().allocate_array(cutlass.Int64, 4)
    pipe = pipeline.PipelineAsync.create(
        barrier_storage=storage,
        num_stages=2,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 128),
    )
    tile_sched = utils.StaticPersistentTileScheduler.create(sched_params, cute.arch.block_idx(), cute.arch.grid_dim())
    if warp_group == 2:
        state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, 2)
        work_tile = tile_sched.initial_work_tile_info()
        while work_tile.is_valid_tile:
            pipe.producer_acquire(state)
            pipe.producer_commit(state)
            state.advance()
            tile_sched.advance_to_next_work()
            work_tile = tile_sched.get_current_work()
        pipe.producer_tail(state)
    else:
        state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, 2)
        if warp_group == 1:
            tile_sched.advance_to_next_work()
            state.advance()
        work_tile = tile_sched.get_current_work()
        while work_tile.is_valid_tile:
            pipe.consumer_wait(state)
            pipe.consumer_release(state)
            state.advance()
            state.advance()
            tile_sched.advance_to_next_work(advance_count=STEP)
            work_tile = tile_sched.get_current_work()

@cute.jit
def host(x: cute.Tensor, sched_params: utils.PersistentTileSchedulerParams):
    k(x, sched_params).launch(grid=[4, 1, 1], block=[288, 1, 1])
"#
        .replace("STEP", step)
    )
}

/// The roles of a persistent kernel share the CTA's tile count: the
/// producer fills as many stages as the two consumers take between them.
/// Consumers that move on one tile at a time (while their state skips the
/// other's stage) take tiles the producer's ring never gives them.
#[test]
fn the_roles_of_a_persistent_kernel_share_its_tile_count() {
    let bounded = |found: &[(String, String)]| found.iter().all(|(_, m)| m.contains("bounded number of loop iterations"));
    let clean = names(&alternating_consumers("2"));
    assert!(!clean.is_empty() && bounded(&clean), "{clean:?}");
    let found = names(&alternating_consumers("1"));
    assert!(found.iter().any(|(n, _)| n == "deadlock"), "{found:?}");
}

/// A scheduler warp that skips tiles on a test of the data (`while not
/// found and work_tile.is_valid_tile:`, as CUTLASS's masked grouped GEMM
/// does) before handing each tile to a consumer that takes as many as it is
/// handed: the skipping loop is explored for a few iterations that stand for
/// no count, so the tiles left after it are not known either, and neither
/// role's loop is cut short by the other's.
#[test]
fn tiles_skipped_on_a_runtime_test_leave_the_tile_count_unknown() {
    let src = format!(
        "{HEAD}{}",
        r#"
@cute.kernel
def k(x: cute.Tensor, n_tiles: cutlass.Int32, sched_params: utils.PersistentTileSchedulerParams):
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    storage = utils.SmemAllocator().allocate_array(cutlass.Int64, 4)
    pipe = pipeline.PipelineAsync.create(
        barrier_storage=storage,
        num_stages=2,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
    )
    if warp == 1:
        tile_sched = utils.StaticPersistentTileScheduler.create(sched_params, cute.arch.block_idx(), cute.arch.grid_dim())
        work_tile = tile_sched.initial_work_tile_info()
        state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, 2)
        while work_tile.is_valid_tile:
            found = cutlass.Boolean(False)
            while (not found) and work_tile.is_valid_tile:
                tile_sched.advance_to_next_work()
                work_tile = tile_sched.get_current_work()
                found = x[work_tile.tile_idx[0]] > 0
            pipe.producer_acquire(state)
            pipe.producer_commit(state)
            state.advance()
        pipe.producer_tail(state)
    else:
        state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, 2)
        for i in cutlass.range(n_tiles, unroll=1):
            pipe.consumer_wait(state)
            pipe.consumer_release(state)
            state.advance()

@cute.jit
def host(x: cute.Tensor, n_tiles: cutlass.Int32, sched_params: utils.PersistentTileSchedulerParams):
    k(x, n_tiles, sched_params).launch(grid=[4, 1, 1], block=[64, 1, 1])
"#
    );
    let found = names(&src);
    assert!(!found.is_empty() && found.iter().all(|(_, m)| m.contains("bounded number of loop iterations")), "{found:?}");
}

/// Counts computed with a true division (`128 / 4`, as CUTLASS's Hopper FMHA
/// computes its warps per warp group) are the integers they equal when the
/// division comes out whole; a quotient that does not is no count.
#[test]
fn whole_true_divisions_are_integer_counts() {
    let groups = |consumers: &str| {
        format!("    producers = pipeline.CooperativeGroup(pipeline.Agent.Thread, 128 / 4)\n    consumers = pipeline.CooperativeGroup(pipeline.Agent.Thread, {consumers})")
    };
    assert_eq!(names(&participants_kernel(&groups("96 / 3"))), vec![]);
    let found = names(&participants_kernel(&groups("97 / 3")));
    assert!(found.iter().any(|(n, m)| n == "analysis-incomplete" && m.contains("consumer group")), "{found:?}");
    let found = names(&participants_kernel(&groups("128 / 2")));
    assert!(found.iter().any(|(n, _)| n == "arrive-count-mismatch" || n == "deadlock"), "{found:?}");
}

/// `cutlass.pipeline`'s named-barrier functions (`arrive_and_wait(barrier_id,
/// num_threads)`, `arrive`, `arrive_unaligned`, `wait_unaligned`) are the
/// `cute.arch` barriers they call, with their thread count.
#[test]
fn the_named_barrier_functions_of_cutlass_pipeline_are_named_barriers() {
    let src = |count: &str| {
        format!(
            "{HEAD}{}",
            r#"
@cute.kernel
def k(x: cute.Tensor):
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    if warp < 2:
        pipeline.arrive_and_wait(barrier_id=1, num_threads=COUNT)
    if warp == 2:
        pipeline.arrive_unaligned(3, 64)
    if warp == 3:
        pipeline.wait_unaligned(3, 64)

@cute.jit
def host(x: cute.Tensor):
    k(x).launch(grid=[1, 1, 1], block=[128, 1, 1])
"#
            .replace("COUNT", count)
        )
    };
    assert_eq!(names(&src("64")), vec![]);
    let found = names(&src("96"));
    assert!(found.iter().any(|(n, m)| n == "named-barrier-deadlock" && m.contains("96")), "{found:?}");
}

/// A ring whose storage is a field of a shared-storage struct defined in
/// the host method, sized from `self` as CUTLASS's examples size it.
/// `FIELDS` declares the fields; `EXTRA` is more of the kernel.
fn ring_in_struct(fields: &str, extra: &str) -> String {
    format!(
        "{HEAD}{}",
        r#"
class Ring:
    def __init__(self):
        self.stages = 2

    @cute.jit
    def __call__(self, x: cute.Tensor):
        @cute.struct
        class SharedStorage:
FIELDS
            data: cute.struct.MemRange[cutlass.Float32, 64]

        self.shared_storage = SharedStorage
        self.kernel(x).launch(grid=[1, 1, 1], block=[64, 1, 1])

    @cute.kernel
    def kernel(self, x: cute.Tensor):
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        storage = utils.SmemAllocator().allocate(self.shared_storage)
        pipe = pipeline.PipelineAsync.create(
            num_stages=self.stages,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
            barrier_storage=storage.full_mbar.data_ptr(),
        )
EXTRA
        if warp == 0:
            state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, self.stages)
            for i in cutlass.range(4, unroll=1):
                pipe.producer_acquire(state)
                pipe.producer_commit(state)
                state.advance()
            pipe.producer_tail(state)
        if warp == 1:
            state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.stages)
            for i in cutlass.range(4, unroll=1):
                pipe.consumer_wait(state)
                pipe.consumer_release(state)
                state.advance()

def run(x):
    cute.compile(Ring(), x)
"#
        .replace("FIELDS", fields)
        .replace("EXTRA", extra)
    )
}

/// A pipeline's `2 * stages` barriers in a field of `stages`: the `empty`
/// half lies past its end, in the data that follows (reported); in a
/// companion field of `stages` the kernel never names (CUTLASS's
/// `acc_full_mbar_ptr` / `acc_empty_mbar_ptr`), where the layout puts it on
/// purpose (silent); in a companion field the kernel uses for barriers of
/// its own, on top of them (reported).
#[test]
fn barriers_past_the_end_of_their_storage_field_are_reported() {
    let overruns = |found: &[(String, String)]| found.iter().filter(|(n, m)| n == "mbarrier-init-hazard" && m.contains("past the end of `full_mbar`")).count();
    let alone = names(&ring_in_struct("            full_mbar: cute.struct.MemRange[cutlass.Int64, self.stages]", ""));
    assert_eq!(overruns(&alone), 1, "{alone:?}");
    assert!(alone.iter().any(|(_, m)| m.contains("holds 2 mbarriers where 4")), "{alone:?}");
    let sized = names(&ring_in_struct("            full_mbar: cute.struct.MemRange[cutlass.Int64, self.stages * 2]", ""));
    assert_eq!(overruns(&sized), 0, "{sized:?}");
    let companion = "            full_mbar: cute.struct.MemRange[cutlass.Int64, self.stages]\n            empty_mbar: cute.struct.MemRange[cutlass.Int64, self.stages]";
    let found = names(&ring_in_struct(companion, ""));
    assert_eq!(overruns(&found), 0, "{found:?}");
    let used = "        if warp == 0:\n            with cute.arch.elect_one():\n                cute.arch.mbarrier_init(storage.empty_mbar.data_ptr(), 1)";
    let found = names(&ring_in_struct(companion, used));
    assert_eq!(overruns(&found), 1, "{found:?}");
}

/// flash-attention's pipelines (its module's `create` returns subclasses of
/// the package's) take a stage's index and phase instead of a state:
/// `producer_acquire_w_index_phase(index, phase)`, `producer_commit_w_index
/// (index)` and their consumer twins, the state-taking methods on
/// (index, phase). A consumer phase that never flips waits on a phase
/// already passed.
#[test]
fn index_and_phase_forms_of_the_pipeline_methods_are_followed() {
    let src = |consumer_phase: &str| {
        format!(
            "{HEAD}{}",
            r#"
@cute.kernel
def k(x: cute.Tensor):
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    storage = utils.SmemAllocator().allocate_array(cutlass.Int64, 2)
    pipe = pipeline.PipelineAsync.create(
        num_stages=1,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
        barrier_storage=storage,
    )
    phase = cutlass.Int32(0)
    if warp == 0:
        for i in cutlass.range(4, unroll=1):
            pipe.producer_acquire_w_index_phase(0, phase ^ 1)
            pipe.producer_commit_w_index(0)
            phase = phase ^ 1
    if warp == 1:
        for i in cutlass.range(4, unroll=1):
            pipe.consumer_wait_w_index_phase(0, phase)
            pipe.consumer_release_w_index(0)
            phase = CONSUMER_PHASE

@cute.jit
def host(x: cute.Tensor):
    k(x).launch(grid=[1, 1, 1], block=[64, 1, 1])
"#
            .replace("CONSUMER_PHASE", consumer_phase)
        )
    };
    assert_eq!(names(&src("phase ^ 1")), vec![]);
    let found = names(&src("phase"));
    assert!(found.iter().any(|(n, _)| n == "untoggled-phase" || n == "deadlock" || n == "vacuous-wait"), "{found:?}");
}

/// A producer warp and a consumer warp handing one mbarrier back and forth:
/// the consumer signals with `COMMIT` (its elected lane; `bar` and `done`
/// are the barriers), the producer waits on `done` for each phase.
fn commit_handshake(imports: &str, commit: &str, cluster: &str) -> String {
    format!(
        "{HEAD}{imports}{}",
        r#"
@cute.kernel
def k(x: cute.Tensor):
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    bars = utils.SmemAllocator().allocate_array(cutlass.Int64, 2)
    bar = bars
    done = bars + 1
    if warp == 0:
        with cute.arch.elect_one():
            cute.arch.mbarrier_init(bar, 1)
            cute.arch.mbarrier_init(done, INIT)
    cute.arch.mbarrier_init_fence()
    SYNC
    if warp == 0:
        for i in cutlass.range(4, unroll=1):
            with cute.arch.elect_one():
                cute.arch.mbarrier_arrive(bar)
            cute.arch.mbarrier_wait(done, i % 2)
    if warp == 1:
        for i in cutlass.range(4, unroll=1):
            cute.arch.mbarrier_wait(bar, i % 2)
            with cute.arch.elect_one():
                COMMIT
    SYNC

@cute.jit
def host(x: cute.Tensor):
    k(x).launch(grid=[CTAS, 1, 1], block=[64, 1, 1], cluster=[CTAS, 1, 1])
"#
    )
    .replace("COMMIT", commit)
    .replace("CTAS", cluster)
    .replace("INIT", if cluster == "2" { "2" } else { "1" })
    .replace("SYNC", if cluster == "2" { "cute.arch.cluster_arrive()\n    cute.arch.cluster_wait()" } else { "cute.arch.sync_threads()" })
}

/// `cute.nvgpu.tcgen05.commit` arrives once on its mbarrier, in every
/// spelling the package's exports allow, positional or by keyword; with a
/// multicast mask, on the barrier of each CTA the mask names. Dropped, the
/// producer would wait forever.
#[test]
fn a_tcgen05_commit_arrives_on_its_mbarrier() {
    for (imports, commit) in [
        ("", "cute.nvgpu.tcgen05.commit(done)"),
        ("", "tcgen05.commit(done)"),
        ("", "tcgen05.commit(done, None, tcgen05.CtaGroup.ONE)"),
        ("", "tcgen05.commit(mbar_ptr=done, cta_group=tcgen05.CtaGroup.ONE)"),
        ("import cutlass.cute.nvgpu.tcgen05\n", "cutlass.cute.nvgpu.tcgen05.commit(done)"),
        ("from cutlass.cute.nvgpu.tcgen05 import commit\n", "commit(done)"),
        ("from cutlass.cute.nvgpu.tcgen05 import commit as umma_arrive\n", "umma_arrive(done)"),
        ("from cutlass.cute.nvgpu import tcgen05 as t5\n", "t5.helpers.commit(done)"),
        // `cp.async.mbarrier.arrive.noinc`: one arrival per calling thread.
        ("", "cute.arch.cp_async_mbarrier_arrive_noinc(done)"),
    ] {
        let d = names(&commit_handshake(imports, commit, "1"));
        assert_eq!(d, vec![], "{commit}: {d:?}");
    }
    // On the barrier the producer arrives on: two arrivals per phase of a
    // barrier initialised for one, and none on `done`.
    let d = names(&commit_handshake("", "tcgen05.commit(bar)", "1"));
    assert!(d.iter().any(|(n, _)| n == "deadlock" || n == "arrive-count-mismatch"), "{d:?}");
    // Every lane of the warp commits without `elect_one`: 32 arrivals where
    // one is expected.
    let d = names(&commit_handshake("", "tcgen05.commit(done)", "1").replace("            with cute.arch.elect_one():\n                tcgen05", "            if True:\n                tcgen05"));
    assert!(!d.is_empty() && d.iter().all(|(n, _)| n != "analysis-incomplete"), "{d:?}");
    // Multicast to both CTAs of a pair: each CTA's `done` counts both
    // consumers' commits.
    let d = names(&commit_handshake("", "tcgen05.commit(done, 0b11, tcgen05.CtaGroup.TWO)", "2"));
    assert_eq!(d, vec![], "{d:?}");
    // To its own CTA only, each `done` misses the peer's arrival.
    let d = names(&commit_handshake("", "tcgen05.commit(done, 1 << cute.arch.block_idx_in_cluster())", "2"));
    assert!(d.iter().any(|(n, m)| (n == "deadlock" || n == "arrive-count-mismatch") && m.contains("done")), "{d:?}");
    // A mask not known, or naming a CTA the cluster does not have: not checked.
    for mask in ["x.shape[0]", "0b100"] {
        let d = names(&commit_handshake("", &format!("tcgen05.commit(done, mask={mask})"), "2"));
        assert!(d.iter().any(|(n, m)| n == "analysis-incomplete" && m.contains("multicast mask of this `tcgen05.commit`")), "{mask}: {d:?}");
    }
}

/// The `tcgen05` instructions of `cutlass.experimental.primitives` use the
/// CTA's tensor memory whatever address they are handed: its loads must be
/// ordered before the free by a barrier, its MMAs by a wait on the commit
/// that follows them.
#[test]
fn primitive_tcgen05_instructions_use_tensor_memory() {
    let src = |barrier: &str, commit: &str| {
        r#"
import cutlass
import cutlass.cute as cute
import cutlass.experimental.primitives as prims

@cute.kernel
def k(x: cute.Tensor):
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    holder = cutlass.Array(cutlass.Int32, 1, space=cutlass.AddressSpace.smem)
    mbar = cutlass.Array(cutlass.Int64, 1, space=cutlass.AddressSpace.smem)
    if warp == 0:
        with cute.arch.elect_one():
            prims.mbarrier_init(mbar, 1)
        prims.tcgen05_alloc(holder, 128)
    prims.fence_mbarrier_init()
    prims.barrier_cta_sync(0)
    tmem = prims.make_tmem_ptr(holder.load(), cutlass.Int32)
    if warp == 0:
        with cute.arch.elect_one():
            prims.tcgen05_mma(prims.Tcgen05MMAKind.F16, prims.CTAGroup.CTA_1, tmem, 0, 0, 0, False)
            COMMIT
    prims.mbarrier_wait_parity(mbar, 0, prims.MbarrierWaitKind.TRY)
    r = prims.tcgen05_ld(prims.Tcgen05LdStShape.SHAPE_32X32B, tmem, num=2)
BARRIER
    if warp == 0:
        prims.tcgen05_dealloc(tmem, 128)

@cute.jit
def host(x: cute.Tensor):
    k(x).launch(grid=[1, 1, 1], block=[128, 1, 1])
"#
        .replace("BARRIER\n", barrier)
        .replace("COMMIT", commit)
    };
    let commit = "prims.tcgen05_commit(mbar)";
    let barrier = "    prims.barrier_cta_sync(0)\n";
    assert_eq!(names(&src(barrier, commit)), vec![]);
    // Warp 0 frees while warps 1-3 may still load.
    let d = names(&src("", commit));
    assert!(d.len() == 1 && d[0].0 == "tmem-lifetime" && d[0].1.contains("warp 1"), "{d:?}");
    // The MMA signalled with a plain arrive: nothing says it is done.
    let d = names(&src(barrier, "prims.mbarrier_arrive(mbar)"));
    assert!(d.len() == 1 && d[0].0 == "tmem-lifetime" && d[0].1.contains("an MMA"), "{d:?}");
}

/// A Hopper tiled MMA (`hopper_helpers.make_trivial_tiled_mma`) is issued by
/// one warp group per atom of `atom_layout_mnk`: its `size` (and
/// `cute.size` of it) is what sizes the consumer groups and barriers of the
/// warp groups that run it.
#[test]
fn warpgroup_mmas_are_issued_by_a_warp_group_per_atom() {
    let src = |atoms: &str, size: &str, threads: u32| {
        format!(
            "{HEAD}{}",
            r#"
import cutlass.utils.hopper_helpers as sm90_utils
from cutlass.cute.nvgpu import warpgroup

@cute.kernel
def k(tiled_mma: cute.TiledMma):
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    bar = pipeline.NamedBarrier(barrier_id=1, num_threads=SIZE)
    if warp < 4 * ATOMS:
        bar.arrive_and_wait()

@cute.jit
def host(a_dtype):
    tiled_mma = sm90_utils.make_trivial_tiled_mma(
        cutlass.Float16, cutlass.Float16, warpgroup.OperandMajorMode.K, warpgroup.OperandMajorMode.K, cutlass.Float32,
        atom_layout_mnk=(ATOMS, 1, 1), tiler_mn=(64, 128),
    )
    k(tiled_mma).launch(grid=[1, 1, 1], block=[THREADS, 1, 1])
"#
        )
        .replace("ATOMS", atoms)
        .replace("SIZE", size)
        .replace("THREADS", &threads.to_string())
    };
    for atoms in ["1", "2", "3"] {
        let threads = 128 * atoms.parse::<u32>().unwrap() + 128;
        assert_eq!(names(&src(atoms, "tiled_mma.size", threads)), vec![], "{atoms} atoms");
        assert_eq!(names(&src(atoms, "cute.size(tiled_mma)", threads)), vec![], "{atoms} atoms, cute.size");
    }
    // One warp group short: the barrier waits for threads that never come.
    let d = names(&src("2", "tiled_mma.size + 128", 384));
    assert!(d.iter().any(|(n, _)| *n != "analysis-incomplete"), "{d:?}");
}
