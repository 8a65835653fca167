//! Bulk reductions (`cp.reduce.async.bulk`, TMA or not) read their shared
//! memory in the async proxy, in a bulk group, as a TMA store does: the
//! generic writes before them need a proxy fence (`missing-proxy-fence`) and a
//! write after them a bulk wait that covers their group
//! (`bulk-group-in-flight`). Variants of the fixtures
//! (`tests/fixtures/bulk_group_in_flight/reduce_tile_*.py`,
//! `tests/fixtures/missing_proxy_fence/reduce_store_*.py`,
//! `tests/fixtures/missing_proxy_fence/primitives_bulk_reduce_*.py`) that
//! spell the reduction otherwise: the atom under any name, the primitives'
//! TMA reduction and bulk copy.

use cute_lint::{analyze_text, AnalysisOptions, Diagnostic};

fn fixture(path: &str) -> String {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/");
    std::fs::read_to_string(format!("{root}{path}")).expect("fixture")
}

fn check(src: &str) -> Vec<Diagnostic> {
    analyze_text(src, &AnalysisOptions::default())
}

fn line_of(src: &str, d: &Diagnostic) -> String {
    let line = src[..d.range.start as usize].matches('\n').count();
    src.lines().nth(line).unwrap_or_default().trim().to_string()
}

fn edit(src: &str, from: &str, to: &str) -> String {
    assert!(src.contains(from), "not in the kernel: {from}");
    src.replace(from, to)
}

fn assert_one(src: &str, rule: &str, line: &str) {
    let diags = check(src);
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert_eq!(diags[0].name, rule, "{diags:#?}");
    assert!(line_of(src, &diags[0]).starts_with(line), "at: {}", line_of(src, &diags[0]));
    assert!(!diags[0].related.is_empty(), "no trace: {diags:#?}");
}

fn assert_silent(src: &str) {
    let diags = check(src);
    assert!(diags.is_empty(), "{diags:#?}");
}

/// The atom is known as a TMA atom by where it comes from (the host's
/// `make_tiled_tma_atom`), whatever the kernel calls it; and by a name that
/// says so.
#[test]
fn a_reduce_atom_is_a_tma_store_whatever_its_name() {
    let clean = fixture("bulk_group_in_flight/reduce_tile_clean.py");
    let bug = fixture("bulk_group_in_flight/reduce_tile_bug.py");
    for name in ["reduce_atom", "atom", "c_atom", "tma_atom_dq_acc", "bulk_add"] {
        let rename = |src: &str| src.replace("reduce_atom", name);
        assert_silent(&rename(&clean));
        assert_one(&rename(&bug), "bulk-group-in-flight", "sout[row0 + i, col] =");
        // Without the proxy fence before the barrier that hands the tile over.
        let unfenced = edit(&rename(&clean), "        cute.arch.fence_proxy(\"async.shared\", space=\"cta\")\n", "");
        assert_one(&unfenced, "missing-proxy-fence", "cute.arch.sync_threads()");
    }
    // A copy atom the host does not make with `make_tiled_tma_atom` (here a
    // universal copy) is the threads' own copy: no bulk group to wait for.
    let universal = edit(
        &bug,
        "reduce_atom, reduce_dst = cpasync.make_tiled_tma_atom(\n        cpasync.CopyReduceBulkTensorTileS2GOp(cpasync.ReductionOp.ADD), dst, smem_layout, (TILE, TILE)\n    )",
        "reduce_atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float32)\n    reduce_dst = dst",
    );
    assert!(check(&universal).iter().all(|d| d.name != "bulk-group-in-flight"), "{:#?}", check(&universal));
}

/// The primitives' bulk copy, bulk reduction and TMA reduction out of
/// shared memory, in place of the TMA store of
/// `primitives_tma_store_*.py`.
#[test]
fn the_primitives_bulk_stores_and_reductions_need_the_fence() {
    let clean = fixture("missing_proxy_fence/primitives_tma_store_clean.py");
    let bug = fixture("missing_proxy_fence/primitives_tma_store_bug.py");
    let store = "prims.cp_async_bulk_tensor_global_shared_cta(tma_dst_desc.get_ptr(), tile, (0, 0))";
    for call in [
        "prims.cp_async_bulk_tensor_reduce(tma_dst_desc.get_ptr(), tile, prims.TMARedux.ADD, (0, 0))",
        "prims.cp_async_bulk_tensor_reduce(tma_descriptor=tma_dst_desc.get_ptr(), src_mem=tile, red_kind=prims.TMARedux.ADD, coordinates=(0, 0))",
        "prims.cp_reduce_async_bulk_global_shared_cta(src.iterator, tile, ROWS * COLS * 4, type=prims.CpReduceType.F32)",
        "prims.cp_reduce_async_bulk_global_shared_cta(src=tile, dst=src.iterator, size=ROWS * COLS * 4)",
        "prims.cp_async_bulk_global_shared_cta(src.iterator, tile, ROWS * COLS * 4)",
    ] {
        assert_silent(&edit(&clean, store, call));
        assert_one(&edit(&bug, store, call), "missing-proxy-fence", "prims.barrier_cta_sync(0)");
    }
    // A source the analysis does not know as a buffer: not checked.
    let unknown = edit(&clean, store, "prims.cp_reduce_async_bulk_global_shared_cta(src.iterator, tma_dst_desc.get_ptr(), ROWS * COLS * 4)");
    let diags = check(&unknown);
    assert!(diags.len() == 1 && diags[0].name == "analysis-incomplete", "{diags:#?}");
    assert!(diags[0].message.contains("cp_reduce_async_bulk_global_shared_cta"), "{}", diags[0].message);
}
