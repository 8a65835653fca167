//! One hand-off family at every grid size from 2 to 64 CTAs: producers
//! publish a row of partial results and add to a global counter with
//! release semantics; one consumer CTA spins on the counter, then reads
//! every row. The consumer is the first CTA, the last, the middle one or
//! the one a third of the way (chosen by the kernel's own test of the block
//! index), and the verdict must be the same at every size: the CTAs
//! modelled stand for the grid (its first and last clusters, those the
//! kernel's tests single out, the ones after the first), and the CTAs not
//! modelled add to the counter as the modelled producers do.
//!
//! The same holds where the consumer is chosen by a value, not by its block
//! index: the last CTA to arrive (`if atomic_add(done, 1) == NUM_CTAS - 1:`,
//! the threadfence reduction) reads every row. In the way where a modelled
//! CTA takes that branch, the CTAs not modelled arrived before it.

use cute_lint::{analyze_text, AnalysisOptions};

mod support;

fn fixture(name: &str) -> String {
    support::fixture(&format!("missing_acquire/{name}"))
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

/// The last-arrival kernel of `fixture` (written for 4 CTAs) with `n` CTAs,
/// edited by `edits` (each must apply).
fn last_arrival(fixture_text: &str, n: u32, edits: &[(&str, &str)]) -> String {
    assert!(fixture_text.contains("NUM_CTAS = 4\n"));
    let mut out = fixture_text.replace("NUM_CTAS = 4\n", &format!("NUM_CTAS = {n}\n"));
    for (from, to) in edits {
        assert!(out.contains(from), "{from}");
        out = out.replace(from, to);
    }
    out
}

const SIZES: [u32; 9] = [2, 3, 4, 5, 8, 9, 16, 33, 64];

/// Every size of the last-arrival `fixture` (with `edits`) gets `expected`.
fn last_arrival_verdict(fixture_text: &str, edits: &[(&str, &str)], expected: &[&str], sizes: impl Iterator<Item = u32>) {
    let wrong: Vec<String> = sizes
        .filter_map(|n| {
            let got = verdict(&last_arrival(fixture_text, n, edits));
            (got != expected).then(|| format!("{n} CTAs: {got:?}"))
        })
        .collect();
    assert!(wrong.is_empty(), "expected {expected:?}:\n{}", wrong.join("\n"));
}

/// The last CTA's count does not acquire: found whichever modelled CTA is
/// the last to arrive, at every grid size.
#[test]
fn a_last_arrival_that_does_not_acquire_is_found_at_every_grid_size() {
    last_arrival_verdict(&fixture("last_arrival_bug.py"), &[], &["missing-acquire"], 2..=64);
}

#[test]
fn a_last_arrival_that_acquires_is_clean_at_every_grid_size() {
    last_arrival_verdict(&fixture("last_arrival_clean.py"), &[], &[], 2..=64);
}

/// Other spellings of the same hand-off: the count itself `acq_rel` with no
/// fence (clean), `release` only (no acquire), relaxed with no fence at all
/// (nothing publishes the rows), the comparison written the other way round.
#[test]
fn spellings_of_the_last_arrival_get_the_same_verdict_at_every_grid_size() {
    let clean = fixture("last_arrival_clean.py");
    const BUMP: &str = r#"cute.arch.atomic_add(done_ctr.iterator, cutlass.Int32(1), sem="relaxed", scope="gpu") == NUM_CTAS - 1:"#;
    let no_fences: [(&str, &str); 2] = [("        cute.arch.fence_acq_rel_gpu()\n        if", "        if"), ("            cute.arch.fence_acq_rel_gpu()\n", "")];
    let with_sem = |sem: &str| BUMP.replace("relaxed", sem);
    let (acq_rel, release) = (with_sem("acq_rel"), with_sem("release"));
    last_arrival_verdict(&clean, &[no_fences[0], no_fences[1], (BUMP, &acq_rel)], &[], SIZES.into_iter());
    last_arrival_verdict(&clean, &[no_fences[0], no_fences[1], (BUMP, &release)], &["missing-acquire"], SIZES.into_iter());
    last_arrival_verdict(&clean, &no_fences, &["missing-release"], SIZES.into_iter());
    let flipped = r#"NUM_CTAS - 1 == cute.arch.atomic_add(done_ctr.iterator, 1, sem="relaxed", scope="gpu"):"#;
    last_arrival_verdict(&clean, &[(BUMP, flipped)], &[], SIZES.into_iter());
    last_arrival_verdict(&fixture("last_arrival_bug.py"), &[(&format!("{BUMP}  # expect: missing-acquire"), flipped)], &["missing-acquire"], SIZES.into_iter());
    // The count bound to a name first, then compared.
    let bound = format!("arrived = {}\n        if arrived == NUM_CTAS - 1:", BUMP.trim_end_matches(" == NUM_CTAS - 1:"));
    last_arrival_verdict(&clean, &[(&format!("if {BUMP}"), &bound)], &[], SIZES.into_iter());
    last_arrival_verdict(&clean, &[(&format!("if {BUMP}"), &bound.replace("== NUM_CTAS - 1", "== NUM_CTAS - 2"))], &["missing-wait"], SIZES.into_iter());
    last_arrival_verdict(&clean, &[(&format!("if {BUMP}"), &bound.replace("arrived == NUM_CTAS - 1", "NUM_CTAS - 1 == arrived"))], &[], SIZES.into_iter());
    last_arrival_verdict(&fixture("last_arrival_bug.py"), &[(&format!("if {BUMP}"), &bound)], &["missing-acquire"], SIZES.into_iter());
}

/// A last arrival tested one short (`== NUM_CTAS - 2`) is taken by the
/// CTA before the last: it reads a row the last CTA has not published yet,
/// at every size. One over (`== NUM_CTAS`) no CTA ever draws: the branch is
/// never taken, and nothing else races.
#[test]
fn a_last_arrival_tested_one_short_is_found_and_one_over_is_never_taken_at_every_grid_size() {
    let clean = fixture("last_arrival_clean.py");
    let short = [("== NUM_CTAS - 1:", "== NUM_CTAS - 2:")];
    let over = [("== NUM_CTAS - 1:", "== NUM_CTAS:")];
    last_arrival_verdict(&clean, &short, &["missing-wait"], (2..=9).chain([16, 33, 64]));
    last_arrival_verdict(&clean, &over, &[], (2..=9).chain([16, 33, 64]));
    let found = analyze_text(&last_arrival(&clean, 16, &short), &AnalysisOptions::default());
    let finding = found.iter().find(|d| d.name == "missing-wait").expect("the finding");
    assert!(finding.message.contains("the branch is taken by the addition that brings the counter to 15, which is not the last one"), "{}", finding.message);
}

/// A consumer waiting for one more addition than the grid makes hangs, at
/// every size and wherever the consumer is, and so does one waiting for a
/// count the producers' additions of 2 step over; waits the grid reaches
/// are clean.
#[test]
fn a_wait_for_more_than_the_grid_adds_hangs_at_every_grid_size() {
    let clean = fixture("relaxed_spin_clean.py");
    let sizes = || [2, 3, 4, 5, 8, 9, 16, 33, 64].into_iter();
    let over = clean.replace(") < NUM_PRODUCERS:", ") < NUM_PRODUCERS + 1:");
    same_verdict_at_every_size(&over, &["deadlock"], sizes());
    let not_equal = clean.replace(") < NUM_PRODUCERS:", ") != NUM_PRODUCERS + 1:");
    same_verdict_at_every_size(&not_equal, &["deadlock"], sizes());
    let by_two = clean.replace("cutlass.Int32(1), sem=\"release\"", "cutlass.Int32(2), sem=\"release\"");
    assert_ne!(by_two, clean);
    same_verdict_at_every_size(&by_two.replace(") < NUM_PRODUCERS:", ") < 2 * NUM_PRODUCERS:"), &[], sizes());
    same_verdict_at_every_size(&by_two.replace(") < NUM_PRODUCERS:", ") <= 2 * NUM_PRODUCERS:"), &["deadlock"], sizes());
    let text = family(&over, 16, "NUM_CTAS // 2");
    let found = analyze_text(&text, &AnalysisOptions::default());
    let hang = found.iter().find(|d| d.name == "deadlock").expect("the hang");
    assert!(hang.message.contains("waits for `ctr` to reach 16, but the 16 CTAs of the grid add 15 to it in all"), "{}", hang.message);
    assert!(hang.related.len() >= 2, "the additions and the spin: {:?}", hang.related);
    assert_eq!(text[..hang.range.start as usize].lines().count(), text.lines().position(|l| l.contains("while cute.arch.load(")).unwrap() + 1);
}

/// The consumer chosen by a ticket: the first CTA to draw from `tickets`
/// consumes, the others produce. Which CTA that is depends on timing, so
/// each modelled CTA is the consumer in a way of its own, and the verdict
/// is the same at every size; so with the roles written the other way
/// round (`if ticket != 0:` producing first) and the comparison flipped.
#[test]
fn a_consumer_chosen_by_ticket_gets_the_same_verdict_at_every_grid_size() {
    let text = |name: &str, n: u32, edits: &[(&str, &str)]| {
        let mut out = fixture(name).replace("NUM_CTAS = 4\n", &format!("NUM_CTAS = {n}\n"));
        for (from, to) in edits {
            assert!(out.contains(from), "{from}");
            out = out.replace(from, to);
        }
        out
    };
    let check = |name: &str, edits: &[(&str, &str)], expected: &[&str]| {
        let wrong: Vec<String> = (2..=9).chain([16, 33, 64]).filter_map(|n| {
            let got = verdict(&text(name, n, edits));
            (got != expected).then(|| format!("{n} CTAs: {got:?}"))
        }).collect();
        assert!(wrong.is_empty(), "{name} {edits:?}: expected {expected:?}:\n{}", wrong.join("\n"));
    };
    check("ticket_consumer_bug.py", &[], &["missing-acquire"]);
    check("ticket_consumer_clean.py", &[], &[]);
    check("ticket_consumer_clean.py", &[("if ticket == 0:", "if 0 == ticket:")], &[]);
    check("ticket_consumer_bug.py", &[("if ticket == 0:", "if 0 == ticket:")], &["missing-acquire"]);
    // Producers first: the same branches, the test negated.
    let producer_first = |name: &str| {
        let t = fixture(name);
        let (head, rest) = t.split_once("        if ticket == 0:\n").unwrap();
        let (consumer, producer) = rest.split_once("        else:\n").unwrap();
        let (producer, tail) = producer.split_once("\n\n\n").unwrap();
        format!("{head}        if ticket != 0:\n{producer}\n        else:\n{consumer}{tail}", tail = format!("\n\n{tail}"))
    };
    for (name, expected) in [("ticket_consumer_bug.py", &["missing-acquire"][..]), ("ticket_consumer_clean.py", &[][..])] {
        let swapped = producer_first(name);
        for n in [2, 3, 4, 5, 8, 16, 64] {
            let got = verdict(&swapped.replace("NUM_CTAS = 4\n", &format!("NUM_CTAS = {n}\n")));
            assert_eq!(got, expected, "{name}, producers first, {n} CTAs:\n{swapped}");
        }
    }
    // The consumer waiting for one producer too few reads a row not yet
    // written; one too many never exits.
    check("ticket_consumer_clean.py", &[(") < NUM_PRODUCERS:", ") < NUM_PRODUCERS - 1:")], &["missing-wait"]);
    check("ticket_consumer_clean.py", &[(") < NUM_PRODUCERS:", ") < NUM_PRODUCERS + 1:")], &["deadlock"]);
}

/// A chain by ticket (each CTA waits for the flag of the ticket before,
/// `if ticket > 0:`) is checked, not left undecided, at every size: each
/// modelled CTA draws the first ticket in a way of its own.
#[test]
fn a_chain_by_ticket_gets_the_same_verdict_at_every_grid_size() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/forward_progress/chain_ticket_clean.py");
    let clean = std::fs::read_to_string(path).unwrap();
    assert!(clean.contains("NUM_CTAS = 4096\n"));
    let relaxed_wait = clean.replace("cutlass.Int32, sem=\"acquire\"", "cutlass.Int32, sem=\"relaxed\"");
    let relaxed_flag = clean.replace("cutlass.Int32(1), sem=\"release\"", "cutlass.Int32(1), sem=\"relaxed\"");
    let spelled = clean.replace("if ticket > 0:", "if ticket != 0:");
    for (text, expected) in [(&clean, &[][..]), (&spelled, &[][..]), (&relaxed_wait, &["missing-acquire"][..]), (&relaxed_flag, &["missing-release"][..])] {
        assert_ne!(text.len(), 0);
        for n in [2, 3, 4, 5, 8, 9, 33, 64, 4096] {
            let got = verdict(&text.replace("NUM_CTAS = 4096\n", &format!("NUM_CTAS = {n}\n")));
            assert_eq!(got, expected, "{n} CTAs");
        }
    }
}
