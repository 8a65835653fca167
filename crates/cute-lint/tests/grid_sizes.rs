//! One hand-off family at every grid size from 2 to 64 CTAs: producers
//! publish a row of partial results and add to a global counter with
//! release semantics; one consumer CTA spins on the counter, then reads
//! every row. The consumer is the first CTA, the last, the middle one or
//! the one a third of the way (chosen by the kernel's own test of the block
//! index), and the verdict must be the same at every size: the CTAs
//! modelled stand for the grid (its first and last clusters, those the
//! kernel's tests single out, the ones after the first), and the CTAs not
//! modelled add to the counter as the modelled producers do.

use cute_lint::{analyze_text, AnalysisOptions};

fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/missing_acquire").join(name);
    std::fs::read_to_string(path).unwrap()
}

/// The kernel of `fixture` (written for 4 CTAs, CTA 0 consuming) with `n`
/// CTAs and the consumer at block index `consumer` (an expression of
/// `NUM_CTAS`), the producers' rows renumbered around it.
fn family(fixture: &str, n: u32, consumer: &str) -> String {
    assert!(fixture.contains("NUM_CTAS = 4\n") && fixture.contains("if bidx == 0:"));
    fixture
        .replace("NUM_CTAS = 4\n", &format!("NUM_CTAS = {n}\n"))
        .replace("if bidx == 0:", &format!("if bidx == {consumer}:"))
        .replace("src[bidx - 1, tidx]", &format!("src[bidx - (bidx > {consumer}), tidx]"))
        .replace("parts[bidx - 1, tidx]", &format!("parts[bidx - (bidx > {consumer}), tidx]"))
}

/// The rules the kernel gets, sorted.
fn verdict(text: &str) -> Vec<&'static str> {
    let mut rules: Vec<&'static str> = analyze_text(text, &AnalysisOptions::default()).into_iter().map(|d| d.name).collect();
    rules.sort_unstable();
    rules.dedup();
    rules
}

const CONSUMERS: [&str; 4] = ["0", "NUM_CTAS - 1", "NUM_CTAS // 2", "NUM_CTAS // 3"];

/// Every size and consumer of `fixture` (with `edit` applied) gets `expected`.
fn same_verdict_at_every_size(fixture: &str, expected: &[&str], sizes: impl Iterator<Item = u32> + Clone) {
    let mut wrong = Vec::new();
    for consumer in CONSUMERS {
        for n in sizes.clone() {
            let got = verdict(&family(fixture, n, consumer));
            if got != expected {
                wrong.push(format!("{n} CTAs, consumer `{consumer}`: {got:?}"));
            }
        }
    }
    assert!(wrong.is_empty(), "expected {expected:?}:\n{}", wrong.join("\n"));
}

#[test]
fn a_relaxed_spin_is_found_at_every_grid_size() {
    same_verdict_at_every_size(&fixture("relaxed_spin_bug.py"), &["missing-acquire"], 2..=64);
}

#[test]
fn an_acquire_spin_is_clean_at_every_grid_size() {
    same_verdict_at_every_size(&fixture("relaxed_spin_clean.py"), &[], 2..=64);
}

/// A threshold one short lets the consumer read a row not yet published,
/// whichever producer it is: in a large grid the CTAs not modelled add
/// first, so the consumer passes before the last modelled producer has.
#[test]
fn a_threshold_one_short_is_found_at_every_grid_size() {
    let short = fixture("relaxed_spin_clean.py").replace(") < NUM_PRODUCERS:", ") < NUM_PRODUCERS - 1:");
    assert_ne!(short, fixture("relaxed_spin_clean.py"));
    same_verdict_at_every_size(&short, &["missing-wait"], [2, 3, 4, 5, 8, 9, 16, 33, 64].into_iter());
}

/// The consumer in the middle is modelled, with the note naming the
/// clusters that stand for the grid.
#[test]
fn the_clusters_modelled_are_named() {
    let text = family(&fixture("relaxed_spin_bug.py"), 16, "NUM_CTAS // 2");
    let diagnostics = analyze_text(&text, &AnalysisOptions::default());
    let finding = diagnostics.iter().find(|d| d.name == "missing-acquire").expect("the finding");
    assert!(finding.notes.iter().any(|n| n.contains("the grid has 16 clusters; clusters 0, 1, 8, 15 are modelled")), "{:?}", finding.notes);
}
