//! Races between lanes of one warp (`smem-race`): exchanges through shared
//! memory that assume a warp runs in lock-step, and what orders its lanes.

use cute_lint::{analyze_text, AnalysisOptions, Diagnostic};

/// A kernel of 128 threads with a shared buffer `buf` of 256 floats, whose
/// body is `body` (indented four spaces).
fn kernel(body: &str) -> String {
    let body: String = body.lines().map(|l| format!("    {l}\n")).collect();
    format!(
        r#"
import cutlass
import cutlass.cute as cute

@cute.struct
class SharedStorage:
    buf: cute.struct.MemRange[cutlass.Float32, 256]

@cute.kernel
def k(x: cute.Tensor, y: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.warp_idx()
    lane = cute.arch.lane_idx()
    storage = cutlass.memory.SmemAllocator().allocate(SharedStorage)
    buf = storage.buf.get_tensor(cute.make_layout(256))
{body}
@cute.jit
def host(x: cute.Tensor, y: cute.Tensor):
    k(x, y).launch(grid=[1, 1, 1], block=[128, 1, 1])
"#
    )
}

/// The `smem-race` findings of the kernel, with the line each is on.
fn races(body: &str) -> Vec<(String, Diagnostic)> {
    let src = kernel(body);
    analyze_text(&src, &AnalysisOptions::default())
        .into_iter()
        .filter(|d| d.name == "smem-race")
        .map(|d| {
            let line = src[..d.range.start as usize].matches('\n').count();
            (src.lines().nth(line).unwrap_or("").trim().to_string(), d)
        })
        .collect()
}

#[test]
fn a_load_and_a_store_of_one_statement_race_without_a_quick_fix() {
    let found = races("buf[tidx] = x[tidx]\ncute.arch.sync_warp()\nbuf[tidx] = buf[tidx ^ 1]\n");
    assert_eq!(found.len(), 1, "{found:?}");
    let (line, d) = &found[0];
    assert_eq!(line, "buf[tidx] = buf[tidx ^ 1]");
    assert!(d.message.contains("lanes of the same warp"), "{}", d.message);
    assert!(d.fixes.is_empty(), "no place for the `sync_warp` in one statement: {:?}", d.fixes);
}

#[test]
fn a_value_every_lane_reads_from_one_lane_races_with_its_store() {
    // Lane 0 of each warp stores its element, which every lane then loads.
    let found = races("buf[tidx] = x[tidx]\ny[tidx] = buf[warp * 32]\n");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "buf[tidx] = x[tidx]");
    assert!(found[0].1.message.contains("`buf[0]`"), "{}", found[0].1.message);
}

#[test]
fn what_orders_the_lanes_silences_the_race() {
    for between in ["cute.arch.sync_warp()", "cute.arch.sync_threads()", "cute.arch.barrier(barrier_id=1, number_of_threads=128)"] {
        let found = races(&format!("buf[tidx] = x[tidx]\n{between}\ny[tidx] = buf[tidx ^ 1]\n"));
        assert!(found.is_empty(), "{between}: {found:?}");
    }
}

#[test]
fn lanes_that_only_read_or_touch_only_their_own_elements_do_not_race() {
    for body in [
        // Reads of each other's elements, no store in between.
        "y[tidx] = buf[tidx] + buf[tidx ^ 1]\n",
        // Each lane reads back what it stored itself.
        "buf[tidx] = x[tidx]\ny[tidx] = buf[tidx] * 2.0\n",
        // One flag per warp that each of its lanes stores, then loads.
        "buf[200 + warp] = 1.0\ny[tidx] = buf[200 + warp]\n",
        // Two warps' halves of the buffer, each lane in its own.
        "buf[tidx + 128] = x[tidx]\ny[tidx] = buf[tidx + 128]\n",
    ] {
        let found = races(body);
        assert!(found.is_empty(), "{body}: {found:?}");
    }
}

#[test]
fn a_loop_that_reads_a_neighbour_before_the_next_store_races_across_iterations() {
    let bug = "for i in cutlass.range_constexpr(4):\n    v = buf[tidx ^ 1]\n    cute.arch.sync_warp()\n    buf[tidx] = v + 1.0\n";
    let found = races(bug);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "buf[tidx] = v + 1.0");
    let clean = "for i in cutlass.range_constexpr(4):\n    v = buf[tidx ^ 1]\n    cute.arch.sync_warp()\n    buf[tidx] = v + 1.0\n    cute.arch.sync_warp()\n";
    assert!(races(clean).is_empty(), "{:?}", races(clean));
}

#[test]
fn a_lane_reading_in_a_branch_races_with_the_warps_store_of_another_lanes_element() {
    let found = races("buf[tidx] = x[tidx]\nif lane < 8:\n    y[tidx] = buf[tidx + 8]\n");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "buf[tidx] = x[tidx]");
    let fix = &found[0].1.fixes;
    assert_eq!(fix.len(), 1, "{fix:?}");
    // The `sync_warp` goes before the branch, where the whole warp takes it.
    let src = kernel("buf[tidx] = x[tidx]\nif lane < 8:\n    y[tidx] = buf[tidx + 8]\n");
    let at = fix[0].edits[0].range.start as usize;
    assert!(src[at..].starts_with("    if lane < 8:"), "{}", &src[at..at + 20]);
    assert_eq!(fix[0].edits[0].new_text.trim(), "cute.arch.sync_warp()");
}

/// Each half of every warp publishes one value to its own half (lanes 0 and
/// 16 store, the other lanes of the half read), the halves synchronizing
/// apart with `sync_warp` on their own half's mask, as `SYNC` has it.
fn halves(sync_low: &str, sync_high: &str) -> String {
    format!(
        "if lane == 0:\n    buf[warp * 2] = x[tidx]\nif lane == 16:\n    buf[warp * 2 + 1] = x[tidx]\n\
         if lane < 16:\n    {sync_low}\n    y[tidx] = buf[warp * 2]\nelse:\n    {sync_high}\n    y[tidx] = buf[warp * 2 + 1]\n"
    )
}

/// A `sync_warp` on a half warp's mask, taken by that half alone, orders
/// the lanes of that half: the read after it is ordered after the store of
/// the half's first lane. Without it, or with it on the other half only,
/// the unsynchronized half races.
#[test]
fn a_sync_warp_of_half_a_warp_orders_the_lanes_of_that_half() {
    let low = "cute.arch.sync_warp(mask=0x0000FFFF)";
    let high = "cute.arch.sync_warp(mask=0xFFFF0000)";
    assert_eq!(races(&halves(low, high)).len(), 0, "{:?}", races(&halves(low, high)));
    let found = races(&halves("pass", high));
    assert!(!found.is_empty(), "the low half has no sync");
    assert!(found.iter().all(|(line, _)| line.contains("buf[warp * 2]")), "{found:?}");
}

/// Lanes outside a `sync_warp`'s mask that reach it (the whole of warps 1..3
/// here, whose lanes 0..15 are not in the upper half's mask) meet no one
/// there: the analysis goes on past it, and ends.
#[test]
fn a_lane_outside_the_mask_of_its_sync_warp_meets_no_one() {
    let body = "if tidx < 16:\n    cute.arch.sync_warp(mask=0x0000FFFF)\nelse:\n    cute.arch.sync_warp(mask=0xFFFF0000)\nbuf[tidx] = x[tidx]\ny[tidx] = buf[tidx]\n";
    assert_eq!(races(body).len(), 0);
}

/// Both accesses inside the branch that splits the warp: a `sync_warp()`
/// before the branch (where the whole warp takes it) orders nothing between
/// them, so none is offered; accesses on either side of the branch keep the
/// fix before it.
#[test]
fn a_race_inside_a_branch_that_splits_the_warp_gets_no_sync_before_the_branch() {
    let found = races("if lane >= 16:\n    buf[tidx] = x[tidx]\n    y[tidx] = buf[tidx ^ 1]\n");
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].1.fixes.is_empty(), "{:?}", found[0].1.fixes);
    let found = races("buf[tidx] = x[tidx]\nif lane >= 16:\n    y[tidx] = buf[tidx ^ 1]\n");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].1.fixes.len(), 1, "{:?}", found[0].1.fixes);
}
