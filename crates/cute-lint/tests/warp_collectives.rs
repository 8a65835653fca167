//! Warp collectives (`single-lane-collective`) and the alignment of
//! `barrier_arrive` (`divergent-barrier`): which member masks and guards are
//! judged, and which are not.

use cute_lint::{analyze_text, AnalysisOptions, Diagnostic};

/// A kernel of 128 threads whose body is `body` (indented four spaces).
fn kernel(body: &str) -> String {
    let body: String = body.lines().map(|l| format!("    {l}\n")).collect();
    format!(
        r#"
import cutlass
import cutlass.cute as cute

@cute.kernel
def k(x: cute.Tensor, y: cute.Tensor, masks: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    warp_idx = cute.arch.warp_idx()
    lane = cute.arch.lane_idx()
    val = x[tidx]
{body}
@cute.jit
def host(x: cute.Tensor, y: cute.Tensor, masks: cute.Tensor):
    k(x, y, masks).launch(grid=[1, 1, 1], block=[128, 1, 1])
"#
    )
}

fn diagnostics(body: &str) -> (String, Vec<Diagnostic>) {
    let src = kernel(body);
    let diags = analyze_text(&src, &AnalysisOptions::default());
    (src, diags)
}

fn of_rule<'d>(diags: &'d [Diagnostic], rule: &str) -> Vec<&'d Diagnostic> {
    diags.iter().filter(|d| d.name == rule).collect()
}

fn line_of(src: &str, d: &Diagnostic) -> String {
    let line = src[..d.range.start as usize].matches('\n').count();
    src.lines().nth(line).unwrap_or("").trim().to_string()
}

#[test]
fn a_warp_reduction_under_a_lane_test_is_reported_whatever_its_group_size() {
    for call in ["cute.arch.warp_reduction_max(val)", "cute.arch.warp_reduction_sum(val, threads_in_group=8)"] {
        let (src, diags) = diagnostics(&format!("if lane < 8:\n    y[tidx] = {call}\n"));
        let found = of_rule(&diags, "single-lane-collective");
        assert_eq!(found.len(), 1, "{call}: {diags:?}");
        assert!(line_of(&src, found[0]).contains(call), "{}", line_of(&src, found[0]));
        assert!(found[0].message.contains("lanes 8..31"), "{}", found[0].message);
        assert!(found[0].message.contains("lanes 0..7"), "{}", found[0].message);
    }
}

#[test]
fn every_shuffle_and_vote_is_a_warp_collective() {
    for call in [
        "cute.arch.shuffle_sync(val, 0)",
        "cute.arch.shuffle_sync_up(val, 1)",
        "cute.arch.shuffle_sync_down(val, 1)",
        "cute.arch.shuffle_sync_bfly(val, offset=1)",
        "cute.arch.vote_ballot_sync(val > 0.0)",
        "cute.arch.vote_any_sync(val > 0.0)",
        "cute.arch.vote_all_sync(val > 0.0)",
        "cute.arch.vote_uni_sync(val > 0.0)",
        "cute.arch.warp_redux_sync(val, \"fmax\")",
        "cute.arch.warp_reduction(val, cute.arch.fmax)",
    ] {
        let (_, diags) = diagnostics(&format!("if tidx == 0:\n    y[0] = {call}\n"));
        let found = of_rule(&diags, "single-lane-collective");
        assert_eq!(found.len(), 1, "{call}: {diags:?}");
        let name = call.trim_start_matches("cute.arch.").split('(').next().unwrap();
        assert!(found[0].message.contains(&format!("`{name}`")), "{}", found[0].message);
    }
}

#[test]
fn a_mask_naming_exactly_the_lanes_that_reach_it_is_clean() {
    let (_, diags) = diagnostics("if lane < 16:\n    y[tidx] = cute.arch.shuffle_sync_down(val, 1, mask=0x0000FFFF)\n");
    assert!(diags.is_empty(), "{diags:?}");
    let (_, diags) = diagnostics("if lane < 16:\n    y[tidx] = cute.arch.warp_redux_sync(val, \"fmax\", 0xFFFF)\n");
    assert!(diags.is_empty(), "{diags:?}");
    // `-1` is every lane.
    let (_, diags) = diagnostics("if lane < 16:\n    y[tidx] = cute.arch.vote_any_sync(val > 0.0, mask=-1)\n");
    assert_eq!(of_rule(&diags, "single-lane-collective").len(), 1, "{diags:?}");
}

#[test]
fn a_mask_computed_at_run_time_is_not_judged() {
    let (_, diags) = diagnostics("m = masks[warp_idx]\nif lane < 16:\n    y[tidx] = cute.arch.shuffle_sync(val, 0, mask=m)\n");
    assert!(diags.is_empty(), "{diags:?}");
}

#[test]
fn collectives_reached_by_whole_warps_are_clean() {
    // A lane-varying test that keeps whole warps together.
    for body in [
        "if tidx < 64:\n    y[tidx] = cute.arch.warp_reduction_max(val)\n",
        "if tidx < 64:\n    cute.arch.sync_warp()\n",
        "if warp_idx == 1:\n    y[tidx] = cute.arch.shuffle_sync_bfly(val, offset=16)\n",
        "v = cute.arch.warp_reduction_sum(val)\nif lane == 0:\n    y[warp_idx] = v\n",
    ] {
        let (_, diags) = diagnostics(body);
        assert!(diags.is_empty(), "{body}: {diags:?}");
    }
}

#[test]
fn sync_warp_and_elect_one_under_a_lane_test_are_reported() {
    let (src, diags) = diagnostics("if lane < 16:\n    cute.arch.sync_warp()\n");
    let found = of_rule(&diags, "single-lane-collective");
    assert_eq!(found.len(), 1, "{diags:?}");
    assert_eq!(line_of(&src, found[0]), "cute.arch.sync_warp()");
    // A mask of the half warp is what the half warp may synchronize on.
    let (_, diags) = diagnostics("if lane < 16:\n    cute.arch.sync_warp(mask=0xFFFF)\n");
    assert!(diags.is_empty(), "{diags:?}");
    let (src, diags) = diagnostics("if tidx == 0:\n    with cute.arch.elect_one():\n        y[0] = val\n");
    let found = of_rule(&diags, "single-lane-collective");
    assert_eq!(found.len(), 1, "{diags:?}");
    assert_eq!(line_of(&src, found[0]), "with cute.arch.elect_one():");
}

#[test]
fn a_collective_in_a_helper_is_reported_inside_the_helper() {
    let src = r#"
import cutlass
import cutlass.cute as cute

def warp_max(v):
    for i in cutlass.range_constexpr(5):
        v = cute.arch.fmax(v, cute.arch.shuffle_sync_bfly(v, offset=16 >> i))
    return v

@cute.kernel
def k(x: cute.Tensor, y: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    if tidx % 32 == 0:
        y[tidx // 32] = warp_max(x[tidx])

@cute.jit
def host(x: cute.Tensor, y: cute.Tensor):
    k(x, y).launch(grid=[1, 1, 1], block=[64, 1, 1])
"#;
    let diags = analyze_text(src, &AnalysisOptions::default());
    let found = of_rule(&diags, "single-lane-collective");
    assert_eq!(found.len(), 1, "{diags:?}");
    assert!(line_of(src, found[0]).contains("shuffle_sync_bfly"), "{}", line_of(src, found[0]));
    assert!(found[0].message.contains("lane 0 of warps 0..1"), "{}", found[0].message);
}

/// Warp 0 signals named barrier 1 from two half-warp branches; warp 1
/// waits on it.
fn split_arrive(extra: &str) -> String {
    kernel(&format!(
        "if warp_idx == 0:\n    if lane < 16:\n        cute.arch.barrier_arrive(barrier_id=1, number_of_threads=64{extra})\n    else:\n        cute.arch.barrier_arrive(barrier_id=1, number_of_threads=64{extra})\nelif warp_idx == 1:\n    cute.arch.barrier(barrier_id=1, number_of_threads=64)\n"
    ))
}

#[test]
fn barrier_arrive_is_aligned_unless_told_otherwise() {
    let src = split_arrive("");
    let diags = analyze_text(&src, &AnalysisOptions::default());
    let found = of_rule(&diags, "divergent-barrier");
    assert_eq!(found.len(), 2, "{diags:?}");
    assert!(found[0].message.contains("aligned"), "{}", found[0].message);
    assert!(found[0].help.as_deref().unwrap_or("").contains("aligned=False"));
    let src = split_arrive(", aligned=True");
    assert_eq!(of_rule(&analyze_text(&src, &AnalysisOptions::default()), "divergent-barrier").len(), 2);
    let src = split_arrive(", aligned=False");
    let diags = analyze_text(&src, &AnalysisOptions::default());
    assert!(diags.iter().all(|d| d.severity == cute_lint::Severity::Info), "{diags:?}");
    assert!(of_rule(&diags, "divergent-barrier").is_empty(), "{diags:?}");
}

/// `if tidx < 64:` decides whole warps (the block's x extent is a multiple
/// of 32): a CTA barrier inside it is missed by warps 2 and 3 for certain,
/// an error with no caveat about lanes of a split warp. At a bound inside a
/// warp (`tidx < 48`) the warp is split, and the timing of its lanes is
/// left open.
#[test]
fn a_thread_index_compared_with_a_warp_edge_does_not_split_a_warp() {
    let (src, diags) = diagnostics("if tidx < 64:\n    cute.arch.sync_threads()\n");
    let found = of_rule(&diags, "divergent-barrier");
    assert_eq!(found.len(), 1, "{diags:?}");
    assert_eq!(line_of(&src, found[0]), "cute.arch.sync_threads()");
    assert_eq!(found[0].severity, cute_lint::Severity::Error, "{:?}", found[0]);
    assert!(!found[0].notes.iter().any(|n| n.contains("splits their warp")), "{:?}", found[0].notes);

    let (_, diags) = diagnostics("if tidx < 48:\n    cute.arch.sync_threads()\n");
    let found = of_rule(&diags, "divergent-barrier");
    assert_eq!(found.len(), 1, "{diags:?}");
    assert!(found[0].notes.iter().any(|n| n.contains("splits their warp")), "{:?}", found[0].notes);

    // A block 48 threads wide puts x indices 32..47 and 0..15 in its
    // second warp: `tidx < 32` splits it.
    let src = r#"
import cutlass
import cutlass.cute as cute

@cute.kernel
def k(y: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    if tidx < 32:
        cute.arch.sync_threads()

@cute.jit
def host(y: cute.Tensor):
    k(y).launch(grid=[1, 1, 1], block=[48, 2, 1])
"#;
    let diags = analyze_text(src, &AnalysisOptions::default());
    let found = of_rule(&diags, "divergent-barrier");
    assert_eq!(found.len(), 1, "{diags:?}");
    assert!(found[0].notes.iter().any(|n| n.contains("splits their warp")), "{:?}", found[0].notes);
}

/// The TMA copy left to the elected lane is moved out of `elect_one` only
/// when it is the block's last statement and not its only one: moving it
/// otherwise would reorder it or leave the block empty.
#[test]
fn a_copy_is_moved_out_of_elect_one_only_from_the_end_of_the_block() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/single_lane_collective/tma_in_elect_bug.py");
    let text = std::fs::read_to_string(path).unwrap();
    let arrive = "            cute.arch.mbarrier_arrive_and_expect_tx(full, TILE_BYTES)\n";
    let copy_start = text.find("            cute.copy(").unwrap();
    let copy_end = copy_start + text[copy_start..].find("            )\n").unwrap() + "            )\n".len();
    let copy = &text[copy_start..copy_end];
    let fixes_of = |src: &str| -> Vec<usize> {
        analyze_text(src, &AnalysisOptions::default()).iter().filter(|d| d.name == "single-lane-collective").map(|d| d.fixes.len()).collect()
    };
    assert_eq!(fixes_of(&text), [1], "the copy last in the block");
    // The copy first, the arrive after it.
    let reordered = text.replacen(copy, "", 1).replacen(arrive, &format!("{copy}{arrive}"), 1);
    assert_eq!(fixes_of(&reordered), [0], "{reordered}");
    // The copy alone in the block.
    let alone = text.replacen(arrive, "", 1);
    assert_eq!(fixes_of(&alone), [0], "{alone}");
}
