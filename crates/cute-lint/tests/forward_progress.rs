//! `forward-progress`: variants of the fixtures that differ in the grid, the
//! block, the launch's residency arguments, the target GPU, the direction a
//! chain waits in, how its index is drawn, and where the grid comes from.

use cute_lint::{analyze_text, AnalysisOptions, Diagnostic, Severity};

mod support;

fn fixture(name: &str) -> String {
    support::fixture(&format!("forward_progress/{name}"))
}

fn on(src: &str, target: &str) -> Vec<Diagnostic> {
    let options = AnalysisOptions { target: Some(target.to_string()), ..AnalysisOptions::default() };
    analyze_text(src, &options).into_iter().filter(|d| d.name == "forward-progress" || d.name == "analysis-incomplete").collect()
}

fn findings(src: &str) -> Vec<Diagnostic> {
    on(src, "sm_90a")
}

fn line_of(src: &str, d: &Diagnostic) -> String {
    let line = src[..d.range.start as usize].matches('\n').count();
    src.lines().nth(line).unwrap_or("").trim().to_string()
}

/// The one diagnostic, of `forward-progress`, at the spin.
fn one_at_spin<'d>(src: &str, found: &'d [Diagnostic]) -> &'d Diagnostic {
    assert_eq!(found.len(), 1, "{found:#?}");
    let d = &found[0];
    assert_eq!(d.name, "forward-progress", "{d:#?}");
    assert!(line_of(src, d).starts_with("while cute.arch.load("), "at the spin: {}", line_of(src, d));
    assert!(d.related.len() >= 2, "the resident CTAs spinning and the CTA that cannot start: {d:#?}");
    d
}

const BARRIER_GRID: &str = "NUM_CTAS = 4096\nNUM_THREADS = 1024\n";

#[test]
fn a_grid_barrier_hangs_once_the_grid_exceeds_what_can_be_resident() {
    let bug = fixture("grid_barrier_bug.py");
    let found = findings(&bug);
    let d = one_at_spin(&bug, &found);
    assert_eq!(d.severity, Severity::Error);
    assert!(d.message.contains("4096") && d.message.contains("264"), "{}", d.message);
    assert!(d.notes.iter().any(|n| n.contains("hangs under OBE")), "{:?}", d.notes);
    // Every target: at most 2 CTAs of 1024 threads per SM.
    for target in ["sm_80", "sm_100a", "sm_120a"] {
        assert_eq!(one_at_spin(&bug, &on(&bug, target)).severity, Severity::Error, "{target}");
    }
    // Other sizes that cannot fit: 2000 CTAs of 256 threads (at most 8 per SM).
    let src = bug.replace(BARRIER_GRID, "NUM_CTAS = 2000\nNUM_THREADS = 256\n");
    assert_eq!(one_at_spin(&src, &findings(&src)).severity, Severity::Error);
    // In clusters of two CTAs, the barrier still spans clusters.
    let src = bug.replace("block=[NUM_THREADS, 1, 1])", "block=[NUM_THREADS, 1, 1], cluster=[2, 1, 1])");
    assert_eq!(one_at_spin(&src, &findings(&src)).severity, Severity::Error);
    // Shared memory lowers what fits: 100 KiB per CTA of 128 threads, two per SM.
    let src = bug.replace(BARRIER_GRID, "NUM_CTAS = 300\nNUM_THREADS = 128\n").replace("block=[NUM_THREADS, 1, 1])", "block=[NUM_THREADS, 1, 1], smem=102400)");
    assert_eq!(one_at_spin(&src, &findings(&src)).severity, Severity::Error);
    let without_smem = bug.replace(BARRIER_GRID, "NUM_CTAS = 300\nNUM_THREADS = 128\n");
    assert_eq!(one_at_spin(&without_smem, &findings(&without_smem)).severity, Severity::Warning, "up to 2112 fit: registers decide");
}

/// The memory-ordering analysis takes a spin the modelled CTAs cannot
/// satisfy as satisfied by the CTAs not modelled only when the whole grid
/// can: a count no grid reaches is a hang, never passed.
#[test]
fn a_count_the_grid_never_reaches_is_not_taken_as_reached() {
    let clean = fixture("grid_barrier_clean.py");
    let all = cute_lint::analyze_text(&clean, &AnalysisOptions::default());
    assert!(all.is_empty(), "the 64 CTAs' arrivals: {all:#?}");
    let src = clean.replace("< NUM_CTAS:", "< 2 * NUM_CTAS:");
    let all = cute_lint::analyze_text(&src, &AnalysisOptions::default());
    assert!(all.iter().any(|d| d.name == "deadlock" && d.message.contains("waits for `bar` to reach 128, but the 64 CTAs of the grid add 64 to it in all")), "{all:#?}");
    assert!(!all.iter().any(|d| d.name == "analysis-incomplete"), "{all:#?}");
}

#[test]
fn a_grid_barrier_in_a_grid_that_fits_is_silent() {
    let clean = fixture("grid_barrier_clean.py");
    assert!(findings(&clean).is_empty(), "{:#?}", findings(&clean));
    let bug = fixture("grid_barrier_bug.py");
    // One CTA per SM is always resident.
    let src = bug.replace(BARRIER_GRID, "NUM_CTAS = 132\nNUM_THREADS = 1024\n");
    assert!(findings(&src).is_empty(), "{:#?}", findings(&src));
    // A cooperative launch fails rather than hangs when the grid does not fit.
    let src = bug.replace("block=[NUM_THREADS, 1, 1])", "block=[NUM_THREADS, 1, 1], cooperative=True)");
    assert!(findings(&src).is_empty(), "{:#?}", findings(&src));
}

#[test]
fn between_what_is_sure_and_what_can_fit_the_registers_decide() {
    let bug = fixture("grid_barrier_bug.py");
    let src = bug.replace(BARRIER_GRID, "NUM_CTAS = 200\nNUM_THREADS = 1024\n");
    let d = one_at_spin(&src, &findings(&src)).clone();
    assert_eq!(d.severity, Severity::Warning);
    assert!(d.message.contains("registers"), "{}", d.message);
    // `min_blocks_per_mp=2` makes two per SM sure.
    let sure = src.replace("block=[NUM_THREADS, 1, 1])", "block=[NUM_THREADS, 1, 1], min_blocks_per_mp=2)");
    assert!(findings(&sure).is_empty(), "{:#?}", findings(&sure));
    // The target's SM count: 120 CTAs fit one per SM on a B200, not on an A100.
    let src = bug.replace(BARRIER_GRID, "NUM_CTAS = 120\nNUM_THREADS = 1024\n");
    assert!(on(&src, "sm_100a").is_empty());
    assert_eq!(one_at_spin(&src, &on(&src, "sm_80")).severity, Severity::Warning);
}

#[test]
fn a_chain_by_static_index_relies_on_in_order_start() {
    let bug = fixture("chain_static_index_bug.py");
    let d = one_at_spin(&bug, &findings(&bug)).clone();
    assert_eq!(d.severity, Severity::Warning, "LOBE would save it");
    assert!(d.notes.iter().any(|n| n.contains("terminates under LOBE")), "{:?}", d.notes);
    // Waiting for the next CTA instead hangs under OBE and LOBE: an error.
    let later = bug
        .replace("if bidx > 0:", "if bidx < NUM_CTAS - 1:")
        .replace("flags.iterator + (bidx - 1)", "flags.iterator + (bidx + 1)")
        .replace("carry[bidx - 1]", "carry[bidx + 1]");
    let d = one_at_spin(&later, &findings(&later)).clone();
    assert_eq!(d.severity, Severity::Error);
    assert!(d.message.contains("higher block index"), "{}", d.message);
    // In a grid that fits, neither hangs.
    for src in [&bug, &later] {
        let small = src.replace("NUM_CTAS = 4096", "NUM_CTAS = 64");
        assert!(findings(&small).is_empty(), "{:#?}", findings(&small));
    }
}

#[test]
fn a_chain_by_ticket_terminates() {
    let clean = fixture("chain_ticket_clean.py");
    assert!(findings(&clean).is_empty(), "{:#?}", findings(&clean));
    // The ticket under another name, from an `atomic_add` written apart.
    let src = clean.replace("ticket", "order");
    assert!(findings(&src).is_empty(), "{:#?}", findings(&src));
}

#[test]
fn a_one_cta_collector_is_not_a_chain() {
    // CTA 0 waits for every other CTA's flag; the others do not wait, so
    // they finish and make room.
    let src = fixture("chain_static_index_bug.py").replace(
        "        if bidx > 0:\n            while cute.arch.load(flags.iterator + (bidx - 1), cutlass.Int32, sem=\"acquire\", scope=\"gpu\") == 0:  # expect: forward-progress\n                pass\n            x = x + carry[bidx - 1]\n",
        "        if bidx == 0:\n            while cute.arch.load(flags.iterator + (NUM_CTAS - 1), cutlass.Int32, sem=\"acquire\", scope=\"gpu\") == 0:\n                pass\n            x = x + carry[NUM_CTAS - 1]\n",
    );
    assert!(src.contains("if bidx == 0:"));
    assert!(findings(&src).is_empty(), "{:#?}", findings(&src));
}

#[test]
fn waits_inside_a_cluster_are_co_scheduled() {
    // Each CTA publishes its value, then waits for its partner's: CTAs 2k
    // and 2k + 1 exchange flags.
    let pairs = fixture("chain_static_index_bug.py").replace(
        "        x = src[bidx]
        if bidx > 0:
            while cute.arch.load(flags.iterator + (bidx - 1), cutlass.Int32, sem=\"acquire\", scope=\"gpu\") == 0:  # expect: forward-progress
                pass
            x = x + carry[bidx - 1]
        carry[bidx] = x
        cute.arch.store(flags.iterator + bidx, cutlass.Int32(1), sem=\"release\", scope=\"gpu\")
",
        "        carry[bidx] = src[bidx]
        cute.arch.store(flags.iterator + bidx, cutlass.Int32(1), sem=\"release\", scope=\"gpu\")
        while cute.arch.load(flags.iterator + (bidx ^ 1), cutlass.Int32, sem=\"acquire\", scope=\"gpu\") == 0:
            pass
",
    );
    assert!(pairs.contains("bidx ^ 1"));
    // Partners in other clusters: the even CTAs may fill the GPU waiting
    // for odd ones that have not started.
    let d = one_at_spin(&pairs, &findings(&pairs)).clone();
    assert_eq!(d.severity, Severity::Error, "{d:#?}");
    // Partners in one cluster of two are scheduled together.
    let clustered = pairs.replace("block=[NUM_THREADS, 1, 1])", "block=[NUM_THREADS, 1, 1], cluster=[2, 1, 1])");
    assert!(findings(&clustered).is_empty(), "{:#?}", findings(&clustered));
}

#[test]
fn a_persistent_grid_sized_by_the_device_fits() {
    let clean = fixture("persistent_grid_barrier_clean.py");
    assert!(findings(&clean).is_empty(), "{:#?}", findings(&clean));
    // Spelled from the SM count.
    let src = clean.replace("max_active_clusters", "sm_count");
    assert!(findings(&src).is_empty(), "{:#?}", findings(&src));
    // Through a local name.
    let src = clean.replace("grid=[max_active_clusters, 1, 1]", "grid=grid").replace(
        "    persistent_kernel(src, data, bar, out, max_active_clusters).launch(",
        "    grid = (max_active_clusters, 1, 1)\n    persistent_kernel(src, data, bar, out, max_active_clusters).launch(",
    );
    assert!(src.contains("grid=grid"));
    assert!(findings(&src).is_empty(), "{:#?}", findings(&src));
    // A name that only starts like one (`num_smem...`) is not the SM count.
    let src = clean.replace("max_active_clusters", "num_smem_tiles");
    assert_eq!(one_at_spin(&src, &findings(&src)).severity, Severity::Warning);
    // The same 264 CTAs under a name that says nothing of the device: two
    // CTAs of 1024 threads per SM fit, one is sure.
    let src = clean.replace("max_active_clusters", "num_blocks");
    assert_eq!(one_at_spin(&src, &findings(&src)).severity, Severity::Warning);
}

#[test]
fn a_grid_not_known_is_said() {
    let bug = fixture("grid_barrier_bug.py");
    // The grid from the tensor's extent, known only at run time.
    let src = bug.replace("launch(grid=[NUM_CTAS, 1, 1]", "launch(grid=[cute.size(src, mode=[0]), 1, 1]");
    assert!(src.contains("grid=[cute.size(src"));
    let found = findings(&src);
    let at_spin: Vec<&Diagnostic> = found.iter().filter(|d| line_of(&src, d).starts_with("while cute.arch.load(")).collect();
    assert_eq!(at_spin.len(), 1, "{found:#?}");
    assert_eq!(at_spin[0].name, "analysis-incomplete");
    assert!(at_spin[0].message.contains("grid"), "{}", at_spin[0].message);
}
