//! `tmem-lifetime`, the address read before its allocation published it:
//! the fixture pair, the same mistake in the epilogue warps instead of the
//! MMA warp, with `cute.arch`'s `alloc_tmem` / `retrieve_tmem_ptr` instead of
//! a `TmemAllocator`, and the orders that are right (the allocator warp's own
//! read after its allocation, a read after the barrier).

use cute_lint::{analyze_text, AnalysisOptions, Diagnostic, Severity};

mod support;

fn fixture(name: &str) -> String {
    support::fixture(&format!("tmem_lifetime/{name}"))
}

fn all(src: &str) -> Vec<Diagnostic> {
    analyze_text(src, &AnalysisOptions::default())
}

fn line_of(src: &str, d: &Diagnostic) -> String {
    let line = src[..d.range.start as usize].matches('\n').count();
    src.lines().nth(line).unwrap_or("").trim().to_string()
}

/// `text` replaced once, where it must be.
fn edit(src: &str, text: &str, with: &str) -> String {
    assert!(src.contains(text), "the fixture has {text:?}");
    src.replacen(text, with, 1)
}

/// Exactly one diagnostic, a `tmem-lifetime` error about the address, on the
/// line that starts with `at`, with the read and the allocation as its trace.
fn assert_read_early(src: &str, at: &str, reader: &str, what: &str) {
    let d = all(src);
    assert_eq!(d.len(), 1, "{what}: {d:#?}");
    let d = &d[0];
    assert_eq!(d.name, "tmem-lifetime", "{what}: {d:#?}");
    assert_eq!(d.severity, Severity::Error, "{what}");
    assert!(d.message.contains("before it is published") && d.message.contains(reader), "{what}: {}", d.message);
    assert!(line_of(src, d).starts_with(at), "{what}: at `{}`, not `{at}`", line_of(src, d));
    assert!(d.related.iter().any(|r| r.message.contains("allocates tensor memory")), "{what}: {:#?}", d.related);
}

#[test]
fn the_mma_warp_reading_the_address_before_wait_for_alloc_is_found_on_the_read() {
    let bug = fixture("retrieve_before_wait_bug.py");
    assert_read_early(&bug, "tCtAcc = cute.make_tensor(tmem.retrieve_ptr(ACC_DTYPE)", "warp 4", "MMA warp first");
    let clean = fixture("epilogue_barrier_clean.py");
    assert!(all(&clean).is_empty(), "{:#?}", all(&clean));
}

#[test]
fn the_epilogue_warps_reading_before_wait_for_alloc_are_found_but_not_the_allocator_warp() {
    // Warp 0 allocates and then reads its own address: in order. Warps 1-3
    // read before the barrier that tells them the allocation is done.
    let clean = fixture("epilogue_barrier_clean.py");
    let bug = edit(
        &clean,
        "        tmem.allocate(TMEM_COLUMNS)\n        tmem.wait_for_alloc()\n        tCtAcc = cute.make_tensor(tmem.retrieve_ptr(ACC_DTYPE), tCtAcc_fake.layout)\n",
        "        tmem.allocate(TMEM_COLUMNS)\n        tCtAcc = cute.make_tensor(tmem.retrieve_ptr(ACC_DTYPE), tCtAcc_fake.layout)\n        tmem.wait_for_alloc()\n",
    );
    assert_read_early(&bug, "tCtAcc = cute.make_tensor(tmem.retrieve_ptr(ACC_DTYPE)", "warp 1", "epilogue warps");
}

#[test]
fn cute_arch_alloc_tmem_read_back_before_the_barrier_is_found() {
    let clean = fixture("all_warps_clean.py");
    assert!(all(&clean).is_empty(), "{:#?}", all(&clean));
    let read = "    tmem_ptr = cute.arch.retrieve_tmem_ptr(ACC_DTYPE, alignment=16, ptr_to_buffer_holding_addr=storage.tmem_holding_buffer.ptr)\n";
    let barrier = "    cute.arch.mbarrier_init_fence()\n    cute.arch.sync_threads()\n";
    let early = edit(&edit(&clean, read, ""), barrier, &format!("{read}{barrier}"));
    assert_read_early(&early, "tmem_ptr = cute.arch.retrieve_tmem_ptr", "warp 1", "cute.arch spelling");
}
