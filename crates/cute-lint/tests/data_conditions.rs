//! Conditions on runtime values that only choose what data moves are run
//! both ways in one run, not decided per way: a kernel with more of them
//! than one way decides is checked in full, a hang elsewhere in it is
//! still found, and a condition with synchronization under it, or one that
//! picks a known count, is still decided per way and named.

use cute_lint::{analyze_text, AnalysisOptions, Diagnostic};

mod support;

/// A producer warp and a consumer warp on a two-stage ring; six conditions
/// on arguments of the launch choose which copies they make (`move` reaches
/// `cute.copy`, which could be a TMA load: the slice keeps them).
fn kernel() -> String {
    support::fixture("deadlock/data_copies_clean.py")
}

fn check(src: &str) -> Vec<Diagnostic> {
    analyze_text(src, &AnalysisOptions::default())
}

fn line(src: &str, at: u32) -> usize {
    src[..at as usize].matches('\n').count() + 1
}

fn line_of(src: &str, needle: &str) -> usize {
    src[..src.find(needle).expect("present")].matches('\n').count() + 1
}

fn consumer_end(replacement: &str) -> String {
    let end = "        ring_pipe.consumer_release(cons)\n        cons.advance()\n";
    let kernel = kernel();
    assert!(kernel.contains(end));
    kernel.replace(end, &format!("        ring_pipe.consumer_release(cons)\n        cons.advance()\n{replacement}"))
}

#[test]
fn six_conditions_around_copies_are_checked_in_full() {
    let found = check(&kernel());
    assert!(found.is_empty(), "{:#?}", found.iter().map(|d| &d.message).collect::<Vec<_>>());
}

#[test]
fn a_hang_beside_them_is_found_in_every_way() {
    let src = support::fixture("deadlock/data_copies_bug.py");
    let found = check(&src);
    let hang: Vec<&Diagnostic> = found.iter().filter(|d| d.name == "deadlock").collect();
    assert_eq!(hang.len(), 1, "{:#?}", found.iter().map(|d| &d.message).collect::<Vec<_>>());
    assert_eq!(line(&src, hang[0].range.start), line_of(&src, "# expect: deadlock"));
    assert_eq!(hang[0].severity, cute_lint::Severity::Error);
    assert!(!hang[0].related.is_empty(), "the hang comes with its trace");
}

#[test]
fn a_condition_with_a_wait_under_it_is_decided_per_way() {
    // Run both ways, the extra wait would be made in every run: a certain
    // hang. It is made only where the data takes the branch.
    let src = consumer_end("        if chain > 1:\n            ring_pipe.consumer_wait(cons)\n");
    let found = check(&src);
    assert_eq!(found.len(), 1, "{:#?}", found.iter().map(|d| &d.message).collect::<Vec<_>>());
    assert_eq!(found[0].name, "analysis-incomplete");
    assert!(found[0].message.contains("depends on the condition at line"), "{}", found[0].message);
    assert_eq!(line(&src, found[0].range.start), line_of(&src, "        if chain > 1:\n            ring_pipe.consumer_wait"));
}

#[test]
fn a_condition_that_also_picks_a_count_is_decided_per_way() {
    // The branch copies (nothing synchronizes under it) but also sets how
    // many stages the consumer takes: merged, the count would not be known.
    let src = consumer_end(
        "        if spill > 1:\n            move(atom, mine, from_alt)\n            more = 1\n        else:\n            more = 0\n        for i in cutlass.range(more):\n            ring_pipe.consumer_wait(cons)\n",
    );
    let found = check(&src);
    assert_eq!(found.len(), 1, "{:#?}", found.iter().map(|d| &d.message).collect::<Vec<_>>());
    assert_eq!(found[0].name, "analysis-incomplete");
    assert!(found[0].message.contains("depends on the condition at line"), "{}", found[0].message);
    assert_eq!(line(&src, found[0].range.start), line_of(&src, "        if spill > 1:"));
}

/// Every thread writes its element of `s` where the data takes one branch,
/// and reads its neighbour's where it takes the other: with `TEST` alike in
/// every thread (an argument of the launch) no thread writes while another
/// reads; with a test of the thread's index, some do.
const BRANCHES: &str = r#"
import cutlass
import cutlass.cute as cute
import cutlass.utils as utils


def move(atom, src, dst):
    cute.copy(atom, src, dst)


@cute.kernel
def k(g: cute.Tensor, f: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    smem = utils.SmemAllocator()
    s = smem.allocate_tensor(cutlass.Float32, cute.make_layout(64), byte_alignment=16)
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float32)
    if TEST:
        s[tidx] = g[tidx]
        IN_BRANCH
        move(atom, g, g)
    else:
        g[tidx] = s[(tidx + 1) % 64]
        move(atom, g, g)
    cute.arch.sync_threads()


@cute.jit
def host(g: cute.Tensor, f: cutlass.Int32):
    k(g, f).launch(grid=[1, 1, 1], block=[64, 1, 1])
"#;

fn branches(test: &str, in_branch: &str) -> String {
    BRANCHES.replace("TEST", test).replace("IN_BRANCH", in_branch)
}

#[test]
fn accesses_in_the_two_branches_of_a_test_of_the_launch_never_race() {
    let src = branches("f > 0", "pass");
    let found = check(&src);
    assert!(found.is_empty(), "{:#?}", found.iter().map(|d| &d.message).collect::<Vec<_>>());
    let src = branches("cutlass.const_expr(f > 0)", "pass");
    let found = check(&src);
    assert!(found.iter().all(|d| d.name != "smem-race"), "{:#?}", found.iter().map(|d| &d.message).collect::<Vec<_>>());
}

#[test]
fn accesses_in_the_two_branches_of_a_test_of_the_thread_race() {
    let src = branches("tidx < f", "pass");
    let found = check(&src);
    assert!(found.iter().any(|d| d.name == "smem-race" && line(&src, d.range.start) == line_of(&src, "        s[tidx] = g[tidx]")), "{:#?}", found);
}

#[test]
fn a_race_inside_one_branch_is_still_found() {
    // Lanes of one warp: lane 1 writes `s[1]` while lane 0 reads it.
    let src = branches("f > 0", "g[tidx] = s[tidx ^ 1]");
    let found = check(&src);
    let races: Vec<&Diagnostic> = found.iter().filter(|d| d.name == "smem-race").collect();
    assert_eq!(races.len(), 1, "{:#?}", found.iter().map(|d| &d.message).collect::<Vec<_>>());
    assert!(races[0].message.contains("lanes of the same warp"), "{}", races[0].message);
    assert!(races[0].notes.iter().any(|n| n.contains("only where the data takes that branch")), "{:#?}", races[0].notes);
}
