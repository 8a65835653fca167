//! Flags addressed by a ticket (`flags.iterator + ticket`, `ticket` what an
//! `atomic_add` on a global counter returned): each CTA's flag is the one
//! its ticket names, not one counter every CTA shares. The chain of
//! `forward_progress/chain_ticket_clean.py` (each CTA waits for the flag of
//! the ticket before its own) is clean, and the same chain whose wait does
//! not acquire is found, at every grid size; a wait on a counter whose
//! element is not known statically, satisfied earlier than the data is
//! published, is reported as not checked rather than as a missing wait.

use cute_lint::{analyze_text, AnalysisOptions, Diagnostic};

fn fixture(path: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures").join(path)).unwrap()
}

fn chain() -> String {
    fixture("forward_progress/chain_ticket_clean.py")
}

/// The chain with `n` CTAs, edited by `edits` (each must apply).
fn variant(text: &str, n: u32, edits: &[(&str, &str)]) -> String {
    let mut out = text.replace("NUM_CTAS = 4096\n", &format!("NUM_CTAS = {n}\n"));
    for (from, to) in edits {
        assert!(out.contains(from), "{from}");
        out = out.replace(from, to);
    }
    out
}

fn names(diagnostics: &[Diagnostic]) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = diagnostics.iter().map(|d| d.name).collect();
    names.sort_unstable();
    names.dedup();
    names
}

const ACQUIRE: &str = r#"sem="acquire", scope="gpu") == 0:"#;
const RELAXED: &str = r#"sem="relaxed", scope="gpu") == 0:"#;
/// The first ticket waits for a flag the host sets (`flags[0]`), so every
/// CTA waits: flag `ticket` for the CTA before, and sets flag `ticket + 1`.
const SENTINEL: [(&str, &str); 3] = [
    ("        if ticket > 0:\n            while", "        if True:\n            while"),
    ("flags.iterator + (ticket - 1)", "flags.iterator + ticket"),
    ("cute.arch.store(flags.iterator + ticket,", "cute.arch.store(1 + flags.iterator + ticket,"),
];

#[test]
fn the_ticket_chain_is_clean() {
    let found = analyze_text(&chain(), &AnalysisOptions::default());
    assert!(found.is_empty(), "{found:?}");
}

/// Every CTA waits on its ticket's flag: with the flags one counter, the
/// first flag set would free every waiter (a false `missing-wait`).
#[test]
fn a_chain_where_every_ticket_waits_is_clean_at_every_grid_size() {
    for n in [5, 8, 9, 16, 33, 64, 4096] {
        let text = variant(&chain(), n, &SENTINEL);
        let found = analyze_text(&text, &AnalysisOptions::default());
        assert!(found.is_empty(), "{n} CTAs: {found:?}");
        // The flag waited for written `flags + (ticket - 1)`, set at `flags + ticket`.
        let text = variant(&chain(), n, &SENTINEL[..1]);
        let found = analyze_text(&text, &AnalysisOptions::default());
        assert!(found.is_empty(), "{n} CTAs, waiting for the ticket before: {found:?}");
    }
}

#[test]
fn a_ticket_chain_whose_wait_does_not_acquire_is_found_at_every_grid_size() {
    for n in [5, 8, 9, 16, 33, 64, 4096] {
        let text = variant(&chain(), n, &[SENTINEL[0], (ACQUIRE, RELAXED)]);
        let found = analyze_text(&text, &AnalysisOptions::default());
        assert_eq!(names(&found), ["missing-acquire"], "{n} CTAs: {found:?}");
        let text = variant(&chain(), n, &[SENTINEL[0], SENTINEL[1], SENTINEL[2], (ACQUIRE, RELAXED)]);
        let found = analyze_text(&text, &AnalysisOptions::default());
        assert_eq!(names(&found), ["missing-acquire"], "{n} CTAs, waiting on the ticket's own flag: {found:?}");
    }
}

/// With the first ticket not waiting (`if ticket > 0:`, a test of the
/// ticket each CTA draws, decided per CTA: every CTA but the one that draws
/// ticket 0 waits), the relaxed wait is found at every size, the CTA that
/// does not wait being each modelled CTA in turn.
#[test]
fn a_relaxed_wait_under_a_condition_on_the_ticket_is_found() {
    for n in [2, 3, 4, 5, 8, 64, 4096] {
        let text = variant(&chain(), n, &[(ACQUIRE, RELAXED)]);
        let found = analyze_text(&text, &AnalysisOptions::default());
        assert_eq!(names(&found), ["missing-acquire"], "{n} CTAs: {found:?}");
    }
}

/// A counter at an element not known statically (`ctr.iterator + slot`,
/// `slot` a kernel argument): whether the updates that end the wait are
/// those of the element waited on is not known, so a threshold one short is
/// not a confident `missing-wait`; the kernel is not checked. At a known
/// element the same threshold is `missing-wait`.
#[test]
fn a_threshold_on_a_counter_not_known_statically_is_not_a_confident_missing_wait() {
    let base = fixture("missing_acquire/relaxed_spin_clean.py").replace(") < NUM_PRODUCERS:", ") < NUM_PRODUCERS - 1:");
    let found = analyze_text(&base, &AnalysisOptions::default());
    assert_eq!(names(&found), ["missing-wait"], "{found:?}");
    let unknown = base
        .replace("total: cute.Tensor):\n    tidx", "total: cute.Tensor, slot: cutlass.Int32):\n    tidx")
        .replace("ctr.iterator, cutlass.Int32", "ctr.iterator + slot, cutlass.Int32")
        .replace("handoff_kernel(src, parts, ctr, total)", "handoff_kernel(src, parts, ctr, total, slot)")
        .replace("def handoff(src: cute.Tensor, parts: cute.Tensor, ctr: cute.Tensor, total: cute.Tensor):", "def handoff(src: cute.Tensor, parts: cute.Tensor, ctr: cute.Tensor, total: cute.Tensor, slot: cutlass.Int32):");
    assert_eq!(unknown.matches("ctr.iterator + slot").count(), 2, "{unknown}");
    let found = analyze_text(&unknown, &AnalysisOptions::default());
    assert_eq!(names(&found), ["analysis-incomplete"], "{found:?}");
    assert!(found[0].message.contains("which element of it an address not known statically names"), "{}", found[0].message);
}
