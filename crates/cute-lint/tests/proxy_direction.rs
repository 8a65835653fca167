//! `missing-proxy-fence` in both directions: generic reads of a buffer that a
//! TMA load then refills, handed back through any barrier, and generic writes
//! that a TMA store then reads, handed over through any barrier. Variants of
//! the fixture kernels that differ in shape: how the threads read, where the
//! fence sits, what carries the hand-back, which warp plays which role.

use cute_lint::{analyze_text, AnalysisOptions, Diagnostic};

/// Roles of a streaming kernel over NUM_BLOCKS blocks through one buffer.
struct Streaming<'a> {
    /// The warp that produces (issues the TMA loads); the other two consume.
    producer_warp: u32,
    /// How a consumer thread reads its part of `sblock` (indented 12).
    read: &'a str,
    /// What the consumer runs between its reads and its hand-back.
    after_reads: &'a str,
    /// What the consumer runs between its wait and its reads.
    before_reads: &'a str,
}

impl Streaming<'_> {
    fn source(&self) -> String {
        let indent = |s: &str| s.lines().map(|l| format!("            {l}\n")).collect::<String>();
        format!(
            r#"
import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import cpasync

NUM_BLOCKS = 3
BLOCK = 32
BLOCK_BYTES = BLOCK * BLOCK * 4
HALF_ROW = BLOCK // 2


@cute.struct
class SharedStorage:
    full: cute.struct.MemRange[cutlass.Int64, 1]
    empty: cute.struct.MemRange[cutlass.Int64, 1]
    block: cute.struct.Align[cute.struct.MemRange[cutlass.Float32, BLOCK * BLOCK], 128]


@cute.kernel
def k(tma_atom: cute.CopyAtom, tma_src: cute.Tensor, out: cute.Tensor, smem_layout: cute.Layout):
    tidx, _, _ = cute.arch.thread_idx()
    warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    storage = cutlass.memory.SmemAllocator().allocate(SharedStorage)
    full = storage.full.data_ptr()
    empty = storage.empty.data_ptr()
    sblock = storage.block.get_tensor(smem_layout)
    if warp_idx == 0:
        with cute.arch.elect_one():
            cute.arch.mbarrier_init(full, 1)
            cute.arch.mbarrier_init(empty, 64)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    if warp_idx == {producer}:
        empty_phase = cutlass.Int32(1)
        for b in cutlass.range_constexpr(NUM_BLOCKS):
            gblock = cute.local_tile(tma_src, (BLOCK, BLOCK), (b, 0))
            sdst, gsrc = cpasync.tma_partition(
                tma_atom, 0, cute.make_layout(1),
                cute.group_modes(sblock, 0, 2), cute.group_modes(gblock, 0, 2),
            )
            cute.arch.mbarrier_wait(empty, empty_phase)
            empty_phase ^= 1
            with cute.arch.elect_one():
                cute.arch.mbarrier_arrive_and_expect_tx(full, BLOCK_BYTES)
            cute.copy(tma_atom, gsrc, sdst, tma_bar_ptr=full)
    else:
        ctid = tidx % 64
        row = ctid % BLOCK
        col0 = (ctid // BLOCK) * HALF_ROW
        full_phase = cutlass.Int32(0)
        for b in cutlass.range_constexpr(NUM_BLOCKS):
            cute.arch.mbarrier_wait(full, full_phase)
            full_phase ^= 1
{before}{read}{after}            cute.arch.mbarrier_arrive(empty)


@cute.jit
def host(src: cute.Tensor, out: cute.Tensor):
    smem_layout = cute.make_layout((BLOCK, BLOCK), stride=(BLOCK, 1))
    tma_atom, tma_src = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), src, smem_layout, (BLOCK, BLOCK))
    k(tma_atom, tma_src, out, smem_layout).launch(grid=[1, 1, 1], block=[96, 1, 1])
"#,
            producer = self.producer_warp,
            before = indent(self.before_reads),
            read = indent(self.read),
            after = indent(self.after_reads),
        )
    }
}

const ELEMENT_READS: &str = "m = sblock[row, col0]\nfor c in cutlass.range_constexpr(1, HALF_ROW):\n    m = cute.arch.fmax(m, sblock[row, col0 + c])\nout[b, ctid] = m";
const COPY_INTO_REGISTERS: &str = "frag = cute.make_rmem_tensor((HALF_ROW,), cutlass.Float32)\ncute.autovec_copy(sblock[row, None], frag)\nout[b, ctid] = frag[0]";
const UNIVERSAL_COPY: &str = "atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float32)\nfrag = cute.make_rmem_tensor((HALF_ROW,), cutlass.Float32)\ncute.copy(atom, sblock[row, None], frag)\nout[b, ctid] = frag[0]";
const FENCE: &str = "cute.arch.fence_view_async_shared()";

fn check(kernel: &Streaming<'_>) -> (String, Vec<Diagnostic>) {
    let src = kernel.source();
    let diags = analyze_text(&src, &AnalysisOptions::default());
    (src, diags)
}

fn line_of(src: &str, d: &Diagnostic) -> String {
    let line = src[..d.range.start as usize].matches('\n').count();
    src.lines().nth(line).unwrap_or("").trim().to_string()
}

fn proxy_findings(diags: &[Diagnostic]) -> Vec<&Diagnostic> {
    diags.iter().filter(|d| d.name == "missing-proxy-fence" || d.name == "fence-after-sync").collect()
}

#[test]
fn reads_handed_back_through_an_mbarrier_need_the_fence_however_they_read() {
    for read in [ELEMENT_READS, COPY_INTO_REGISTERS, UNIVERSAL_COPY] {
        for producer_warp in [0, 2] {
            let (src, diags) = check(&Streaming { producer_warp, read, after_reads: "", before_reads: "" });
            let found = proxy_findings(&diags);
            assert_eq!(found.len(), 1, "producer warp {producer_warp}, reads:\n{read}\n{diags:#?}");
            assert_eq!(found[0].name, "missing-proxy-fence");
            assert_eq!(line_of(&src, found[0]), "cute.arch.mbarrier_arrive(empty)", "{found:?}");
            assert!(found[0].message.contains("hands it back"), "{}", found[0].message);
            assert!(found[0].related.len() >= 3, "a trace: {:?}", found[0].related);
            assert!(diags.iter().all(|d| d.name != "analysis-incomplete"), "checked in full: {diags:#?}");

            let (_, diags) = check(&Streaming { producer_warp, read, after_reads: FENCE, before_reads: "" });
            assert!(proxy_findings(&diags).is_empty(), "fenced, producer warp {producer_warp}, reads:\n{read}\n{diags:#?}");
            assert!(diags.is_empty(), "{diags:#?}");
        }
    }
}

#[test]
fn a_fence_before_the_reads_is_on_the_wrong_side() {
    let (src, diags) = check(&Streaming { producer_warp: 2, read: ELEMENT_READS, after_reads: "", before_reads: FENCE });
    let found = proxy_findings(&diags);
    assert_eq!(found.len(), 1, "{diags:#?}");
    // Not "move the fence": it is there for the reads after it. The read is
    // missing a fence of its own before the hand-back.
    assert_eq!(found[0].name, "missing-proxy-fence", "{found:?}");
    assert_eq!(line_of(&src, found[0]), "cute.arch.mbarrier_arrive(empty)");
}

#[test]
fn a_fence_by_one_lane_does_not_cover_the_others() {
    let elected = "with cute.arch.elect_one():\n    cute.arch.fence_view_async_shared()";
    let (_, diags) = check(&Streaming { producer_warp: 2, read: ELEMENT_READS, after_reads: elected, before_reads: "" });
    assert_eq!(proxy_findings(&diags).len(), 1, "{diags:#?}");
}

/// Generic writes of a tile that one warp then stores with TMA, handed over
/// through `hand_over` (indented 4).
fn tma_store_kernel(fence: bool, hand_over: &str) -> String {
    let fence = if fence { "    cute.arch.fence_proxy(\"async.shared\", space=\"cta\")\n" } else { "" };
    let hand_over: String = hand_over.lines().map(|l| format!("    {l}\n")).collect();
    format!(
        r#"
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
from cutlass.cute.nvgpu import cpasync

ROWS = 32
COLS = 32


@cute.struct
class SharedStorage:
    tile: cute.struct.Align[cute.struct.MemRange[cutlass.Float32, ROWS * COLS], 128]


@cute.kernel
def k(tma_atom: cute.CopyAtom, tma_dst: cute.Tensor, x: cute.Tensor, smem_layout: cute.Layout):
    tidx, _, _ = cute.arch.thread_idx()
    warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    storage = cutlass.memory.SmemAllocator().allocate(SharedStorage)
    stile = storage.tile.get_tensor(smem_layout)
    epi_barrier = pipeline.NamedBarrier(barrier_id=1, num_threads=128)
    for c in cutlass.range_constexpr(COLS // 4):
        stile[tidx % ROWS, (tidx // ROWS) * (COLS // 4) + c] = x[tidx, c]
{fence}{hand_over}    if warp_idx == 0:
        sdst, gdst = cpasync.tma_partition(
            tma_atom, 0, cute.make_layout(1),
            cute.group_modes(stile, 0, 2), cute.group_modes(tma_dst, 0, 2),
        )
        cute.copy(tma_atom, sdst, gdst)


@cute.jit
def host(dst: cute.Tensor, x: cute.Tensor):
    smem_layout = cute.make_layout((ROWS, COLS), stride=(COLS, 1))
    tma_atom, tma_dst = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileS2GOp(), dst, smem_layout, (ROWS, COLS))
    k(tma_atom, tma_dst, x, smem_layout).launch(grid=[1, 1, 1], block=[128, 1, 1])
"#
    )
}

#[test]
fn writes_reach_a_tma_store_through_any_barrier() {
    for hand_over in ["cute.arch.sync_threads()", "epi_barrier.arrive_and_wait()", "cute.arch.barrier(barrier_id=1, number_of_threads=128)"] {
        let src = tma_store_kernel(false, hand_over);
        let diags = analyze_text(&src, &AnalysisOptions::default());
        let found = proxy_findings(&diags);
        assert_eq!(found.len(), 1, "{hand_over}: {diags:#?}");
        assert_eq!(found[0].name, "missing-proxy-fence");
        assert_eq!(line_of(&src, found[0]), hand_over, "{found:?}");

        let src = tma_store_kernel(true, hand_over);
        let diags = analyze_text(&src, &AnalysisOptions::default());
        assert!(proxy_findings(&diags).is_empty(), "fenced, {hand_over}: {diags:#?}");
    }
}

#[test]
fn barriers_passed_by_keyword_are_the_same_barriers() {
    let by_keyword = |src: String| {
        src.replace("cute.arch.mbarrier_init(full, 1)", "cute.arch.mbarrier_init(mbar_ptr=full, cnt=1)")
            .replace("cute.arch.mbarrier_wait(empty, empty_phase)", "cute.arch.mbarrier_wait(mbar_ptr=empty, phase=empty_phase)")
            .replace("cute.arch.mbarrier_wait(full, full_phase)", "cute.arch.mbarrier_wait(phase=full_phase, mbar_ptr=full)")
            .replace("cute.arch.mbarrier_arrive(empty)", "cute.arch.mbarrier_arrive(mbar_ptr=empty)")
    };
    let bug = by_keyword(Streaming { producer_warp: 2, read: ELEMENT_READS, after_reads: "", before_reads: "" }.source());
    assert!(bug.contains("mbar_ptr=empty)"), "{bug}");
    let diags = analyze_text(&bug, &AnalysisOptions::default());
    let found = proxy_findings(&diags);
    assert_eq!(found.len(), 1, "{diags:#?}");
    assert_eq!(line_of(&bug, found[0]), "cute.arch.mbarrier_arrive(mbar_ptr=empty)");
    let clean = by_keyword(Streaming { producer_warp: 2, read: ELEMENT_READS, after_reads: FENCE, before_reads: "" }.source());
    let diags = analyze_text(&clean, &AnalysisOptions::default());
    assert!(diags.is_empty(), "checked in full and clean: {diags:#?}");
}
