//! Python values kernels compute their synchronization from: a dict display
//! indexed at once (`{cute.ReductionOp.ADD: operator.add, ...}[op]`), which
//! object a name holds (`combine is operator.add`, `op in (...)`), and a
//! module's attribute probed with `getattr`. Known, they decide the kernel's
//! synchronization: a kernel built on them is checked, and a hang that
//! depends on them is found; unknown, they stay conditions on runtime values.

use cute_lint::{analyze_text, AnalysisOptions, Severity};

fn findings(src: &str) -> Vec<(String, Severity, usize, String)> {
    analyze_text(src, &AnalysisOptions::default())
        .into_iter()
        .map(|d| {
            let line = src[..d.range.start as usize].matches('\n').count() + 1;
            (d.name.to_string(), d.severity, line, d.message)
        })
        .collect()
}

fn line_of(src: &str, text: &str) -> usize {
    src[..src.find(text).expect(text)].matches('\n').count() + 1
}

/// Four warps; a helper picks the combining function of a reduction op
/// from a dict display, and then the threads of a named barrier from which
/// function it holds. Warps 0 and 1 meet at the barrier; warps 2 and 3 only
/// when `JOIN` holds. The host launches it with `OP`.
fn kernel(op: &str, join: &str) -> String {
    r#"
import operator
import cutlass
import cutlass.cute as cute

_operator_max = getattr(operator, "max", None)


@cute.jit
def combine_threads(op: cutlass.Constexpr):
    combine = {
        cute.ReductionOp.ADD: operator.add,
        cute.ReductionOp.MAX: max,
        cute.ReductionOp.MIN: min,
    }[op]
    is_max = combine is max or combine is cutlass.max or combine is _operator_max
    threads = 64
    if cutlass.const_expr(is_max):
        threads = 128
    elif cutlass.const_expr(combine is not operator.add):
        threads = {"min": 96}["min"]
    return threads


@cute.kernel
def k(x: cute.Tensor, op: cutlass.Constexpr):
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    threads = combine_threads(op)
    if warp < 2 or cutlass.const_expr(JOIN):
        cute.arch.barrier(barrier_id=1, number_of_threads=threads)


@cute.jit
def host(x: cute.Tensor):
    k(x, OP).launch(grid=[1, 1, 1], block=[128, 1, 1])
"#
    .replace("OP", op)
    .replace("JOIN", join)
}

/// The barrier's count follows the op: 64 threads for `ADD` (warps 0 and 1
/// meet it), 128 for `MAX` (all four must), so each kernel is checked, and
/// silent when the warps that meet it are as many as it counts.
#[test]
fn a_barrier_count_picked_by_a_dict_and_an_identity_test_is_checked() {
    assert_eq!(findings(&kernel("cute.ReductionOp.ADD", "False")), vec![]);
    assert_eq!(findings(&kernel("cute.ReductionOp.MAX", "True")), vec![]);
    // Spelled through an import of the enum.
    let from_import = kernel("ReductionOp.ADD", "False").replace("import operator\n", "import operator\nfrom cutlass.cute import ReductionOp\n");
    assert_eq!(findings(&from_import), vec![]);
}

/// The bug twins: `MAX` counts 128 threads where only warps 0 and 1 arrive,
/// `MIN` 96; both hang at the barrier, an error since nothing about it is
/// left to run time.
#[test]
fn a_barrier_count_picked_wrong_by_a_dict_is_a_hang() {
    for op in ["cute.ReductionOp.MAX", "cute.ReductionOp.MIN"] {
        let src = kernel(op, "False");
        let found = findings(&src);
        assert_eq!(found.len(), 1, "{op}: {found:?}");
        assert_eq!((found[0].0.as_str(), found[0].1, found[0].2), ("named-barrier-deadlock", Severity::Error, line_of(&src, "cute.arch.barrier(")), "{op}: {found:?}");
    }
    // `ADD` with every warp arriving: 128 threads at a barrier of 64.
    let src = kernel("cute.ReductionOp.ADD", "True");
    let found = findings(&src);
    assert!(found.iter().any(|f| f.1 == Severity::Error && f.2 == line_of(&src, "cute.arch.barrier(")), "{found:?}");
}

/// An op the kernel is handed at run time (not a `Constexpr`): which
/// function it picks is not known, and the kernel is not reported checked
/// (nor given a hang it may not have).
#[test]
fn an_op_not_known_statically_stays_a_condition_on_a_runtime_value() {
    let src = kernel("op", "False")
        .replace("def k(x: cute.Tensor, op: cutlass.Constexpr)", "def k(x: cute.Tensor, op: cutlass.Int32)")
        .replace("def host(x: cute.Tensor)", "def host(x: cute.Tensor, op: cutlass.Int32)");
    let found = findings(&src);
    assert!(!found.is_empty(), "a kernel whose barrier count is not known is not silent");
    assert!(found.iter().all(|f| f.0 == "analysis-incomplete"), "{found:?}");
}

/// Membership of a known object in a tuple of them decides as `is` does.
#[test]
fn membership_of_an_op_in_a_tuple() {
    let src = |op: &str| {
        kernel(op, "False").replace(
            "    is_max = combine is max or combine is cutlass.max or combine is _operator_max\n",
            "    is_max = op in (cute.ReductionOp.MAX, cute.ReductionOp.MUL)\n",
        )
    };
    assert_eq!(findings(&src("cute.ReductionOp.ADD")), vec![]);
    let bug = src("cute.ReductionOp.MAX");
    let found = findings(&bug);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].0.as_str(), found[0].2), ("named-barrier-deadlock", line_of(&bug, "cute.arch.barrier(")));
}

/// 128 threads; the first half takes a CTA barrier when `isinstance(layout,
/// TYPE)` holds of a layout made in the kernel. What the layout is decides
/// the test: a layout `cute.make_layout` made is a `cute.Layout` and no
/// `cute.ComposedLayout`.
fn layout_type_kernel(ty: &str) -> String {
    r#"
import cutlass
import cutlass.cute as cute


@cute.kernel
def k(x: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    layout = cute.make_layout((128,))
    if isinstance(layout, TYPE):
        if tidx < 64:
            cute.arch.sync_threads()


@cute.jit
def host(x: cute.Tensor):
    k(x).launch(grid=[1, 1, 1], block=[128, 1, 1])
"#
    .replace("TYPE", ty)
}

#[test]
fn the_type_of_a_layout_made_in_the_kernel_is_known() {
    assert_eq!(findings(&layout_type_kernel("cute.ComposedLayout")), vec![]);
    let src = layout_type_kernel("cute.Layout");
    let found = findings(&src);
    assert!(
        found.iter().any(|(name, severity, line, _)| name != "analysis-incomplete" && *severity == Severity::Error && *line == line_of(&src, "cute.arch.sync_threads()")),
        "{found:?}"
    );
}
