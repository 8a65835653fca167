//! Conditions on runtime values written alike in a kernel, on names that
//! hold one value while it runs, are one condition.
//!
//! A kernel tests the same flag in each of its roles (`if
//! cutlass.const_expr(self.use_tma_store):` in the producer and again in the
//! epilogue, `if k_tiles > 0:` around both the producer's and the consumer's
//! loop). Nothing it does between the tests can change their value, so every
//! thread takes them alike: deciding them apart would run the threads for
//! ways no launch has (the producer skipping its loop while the consumer runs
//! its own), report hangs that depend on no data, and use up the conditions
//! a way decides. The first of them in the text stands for them all: it is
//! the one the scenario decides and the diagnostics name. A test of the
//! opposite (`if cutlass.const_expr(not self.delegate_init):` before `if
//! cutlass.const_expr(self.delegate_init):`) is the same condition, taken
//! the other way.
//!
//! A test that reads memory (`if flags[0] > 0:`) or calls anything but a
//! function of values (`cutlass.const_expr`, `cute.elem_less`, a numeric
//! type) can see another value the next time, and stays its own.

use cute_ir::api::Api;
use cute_ir::ast::{Expr, FunctionDef, Stmt, StmtId, StmtKind, Target, UnOp};
use cute_ir::module::nested_statements;
use cute_syntax::TextRange;
use rustc_hash::FxHashMap;

/// A condition as a scenario decides it: the statement whose condition it
/// is, where that is, and whether the branch taken is the opposite of the
/// one that statement takes.
pub(super) type Deciding = (StmtId, TextRange, bool);

/// For each `if` of the kernel's slice written like an earlier one (or as
/// its negation), the earlier one. (The helpers it inlines keep theirs:
/// their slices are made as they are called.)
#[derive(Default)]
pub(super) struct SameConditions {
    first: FxHashMap<StmtId, Deciding>,
}

impl SameConditions {
    pub(super) fn of(kernel: &FunctionDef, kept: impl Fn(StmtId) -> bool) -> SameConditions {
        let mut first = FxHashMap::default();
        let statements = nested_statements(&kernel.body);
        let mut bindings: FxHashMap<String, usize> = FxHashMap::default();
        for name in bindings_of(&statements) {
            *bindings.entry(name).or_default() += 1;
        }
        // A name bound once, by a statement of the kernel's body itself (run
        // once, not in a loop or a branch), holds one value after it.
        let defined_once_at: FxHashMap<&str, u32> = kernel
            .body
            .iter()
            .filter_map(|s| match &s.kind {
                StmtKind::Assign { targets, .. } => match &targets[..] {
                    [Target::Name(n)] if bindings.get(n) == Some(&1) => Some((n.as_str(), s.range.end)),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        let holds_one_value = |name: &str, at: u32| match bindings.get(name) {
            None => true,
            Some(_) => defined_once_at.get(name).is_some_and(|&defined| defined <= at),
        };
        // Calls carry their position: tests are compared as written.
        let mut seen: Vec<(&Expr, Deciding)> = Vec::new();
        for s in statements {
            let StmtKind::If { cond, .. } = &s.kind else { continue };
            if !kept(s.id) || !reads_values_only(cond) {
                continue;
            }
            let mut uses = Vec::new();
            cond.collect_uses(&mut uses);
            if !uses.iter().all(|u| holds_one_value(u, s.range.start)) {
                continue;
            }
            let (test, negated) = test_of(cond);
            match seen.iter().find(|(earlier, _)| earlier.written_like(test)) {
                Some(&(_, (stmt, site, earlier_negated))) => {
                    first.insert(s.id, (stmt, site, negated != earlier_negated));
                }
                None => seen.push((test, (s.id, site(s), negated))),
            }
        }
        SameConditions { first }
    }

    /// The condition `s`'s is (its own unless it repeats an earlier one).
    pub(super) fn deciding(&self, s: &Stmt) -> Deciding {
        self.first.get(&s.id).copied().unwrap_or_else(|| (s.id, site(s), false))
    }
}

/// What a condition tests, `cutlass.const_expr(...)` and `not` taken off,
/// and whether an odd number of `not` were.
fn test_of(mut e: &Expr) -> (&Expr, bool) {
    let mut negated = false;
    loop {
        match e {
            Expr::Unary { op: UnOp::Not, operand } => {
                negated = !negated;
                e = operand;
            }
            Expr::Call(c) if c.api == Some(Api::ConstExpr) && c.args.len() == 1 && c.kwargs.is_empty() => e = &c.args[0],
            _ => return (e, negated),
        }
    }
}

/// Where a condition is reported: the `if` keyword of a branch.
fn site(s: &Stmt) -> TextRange {
    match &s.kind {
        StmtKind::If { .. } => TextRange { start: s.range.start, end: s.range.start + 2 },
        _ => s.range,
    }
}

/// Functions whose result depends on their arguments alone.
const OF_VALUES: &[&str] =
    &["const_expr", "elem_less", "Int32", "Int64", "Uint32", "Uint64", "Boolean", "bool", "int", "min", "max", "len", "isinstance"];

/// Whether evaluating `e` again, with the same names bound, gives the same
/// value: it reads no memory and calls only functions of values.
fn reads_values_only(e: &Expr) -> bool {
    match e {
        Expr::Subscript { .. } | Expr::Unknown(_) => false,
        Expr::Call(c) => {
            c.func.last_segment().is_some_and(|f| OF_VALUES.contains(&f))
                && c.args.iter().all(reads_values_only)
                && c.kwargs.iter().all(|(_, a)| reads_values_only(a))
        }
        Expr::Attr { base, .. } => reads_values_only(base),
        Expr::Binary { lhs, rhs, .. } | Expr::Compare { lhs, rhs, .. } | Expr::BoolOp { lhs, rhs, .. } => {
            reads_values_only(lhs) && reads_values_only(rhs)
        }
        Expr::Unary { operand, .. } => reads_values_only(operand),
        Expr::IfExp { cond, then, orelse } => reads_values_only(cond) && reads_values_only(then) && reads_values_only(orelse),
        Expr::Tuple(items) => items.iter().all(reads_values_only),
        Expr::Name(_) | Expr::Int(_) | Expr::Float | Expr::Bool(_) | Expr::Str(_) | Expr::None => true,
    }
}

/// The names (and `self.x` attributes) a function's statements bind, once
/// per binding, and the objects whose methods it calls (`tracker.update()` may change what
/// `tracker.done` holds); a function reached through the file's imports
/// (`cute.copy(...)`), or one of [`OF_VALUES`], is not a method, and the
/// kernel's own methods are taken to leave its `self.x` as the host set them.
fn bindings_of(statements: &[&Stmt]) -> Vec<String> {
    let mut defs = Vec::new();
    for s in statements {
        let mut target = |t: &Target| t.collect_defs(&mut defs);
        match &s.kind {
            StmtKind::Assign { targets, .. } => targets.iter().for_each(&mut target),
            StmtKind::AugAssign { target: t, .. } | StmtKind::For { target: t, .. } => target(t),
            StmtKind::With { items, .. } => items.iter().filter_map(|(_, t)| t.as_ref()).for_each(&mut target),
            _ => {}
        }
        // The statement's own expressions (the nested statements are in
        // `statements` too).
        let own: Vec<&Expr> = match &s.kind {
            StmtKind::Assign { value, .. } | StmtKind::AugAssign { value, .. } | StmtKind::Expr(value) => vec![value],
            StmtKind::Return(Some(e)) | StmtKind::If { cond: e, .. } | StmtKind::While { cond: e, .. } => vec![e],
            StmtKind::For { iter, .. } => vec![iter],
            StmtKind::With { items, .. } => items.iter().map(|(e, _)| e).collect(),
            _ => Vec::new(),
        };
        let mut calls = Vec::new();
        own.iter().for_each(|e| e.calls(&mut calls));
        for call in calls {
            match (&call.qualname, &call.func) {
                // The kernel's own methods (`self.load(...)`) leave its
                // configuration as the host set it.
                (None, Expr::Attr { base, attr }) if !OF_VALUES.contains(&attr.as_str()) => {
                    defs.extend(base.dotted().filter(|receiver| receiver != "self"))
                }
                _ => {}
            }
        }
    }
    defs
}

#[cfg(test)]
mod tests {
    use super::*;

    use cute_ir::Module;

    fn same(module: &Module) -> SameConditions {
        SameConditions::of(&module.functions[0], |_| true)
    }

    fn ifs(module: &Module) -> Vec<&Stmt> {
        nested_statements(&module.functions[0].body).into_iter().filter(|s| matches!(s.kind, StmtKind::If { .. })).collect()
    }

    #[test]
    fn a_test_repeated_on_names_never_rebound_is_decided_by_the_first() {
        let module = cute_ir::lower_text(
            "def k(self, n):\n    if n > 0:\n        a()\n    if cutlass.const_expr(self.flag):\n        b()\n    if n > 0:\n        c()\n    if cutlass.const_expr(self.flag):\n        d()\n",
        )
        .unwrap();
        let same = same(&module);
        let ifs = ifs(&module);
        assert_eq!(same.deciding(ifs[2]).0, ifs[0].id);
        assert_eq!(same.deciding(ifs[3]).0, ifs[1].id);
        assert_eq!(same.deciding(ifs[0]).0, ifs[0].id);
        assert_eq!(same.deciding(ifs[2]).1.start, ifs[0].range.start);
        assert!(!same.deciding(ifs[2]).2);
        // A test outside the slice decides nothing.
        let outside_first = SameConditions::of(&module.functions[0], |id| id != ifs[0].id);
        assert_eq!(outside_first.deciding(ifs[2]).0, ifs[2].id);
    }

    #[test]
    fn a_test_of_the_opposite_is_the_same_condition_taken_the_other_way() {
        let module = cute_ir::lower_text(
            "def k(self):\n    if cutlass.const_expr(not self.flag):\n        a()\n    if cutlass.const_expr(self.flag):\n        b()\n    if not self.flag:\n        c()\n",
        )
        .unwrap();
        let same = same(&module);
        let ifs = ifs(&module);
        assert_eq!(same.deciding(ifs[1]).0, ifs[0].id);
        assert!(same.deciding(ifs[1]).2);
        assert_eq!(same.deciding(ifs[2]).0, ifs[0].id);
        assert!(!same.deciding(ifs[2]).2);
    }

    #[test]
    fn a_test_that_reads_memory_or_calls_a_function_is_its_own() {
        let module = cute_ir::lower_text(
            "def k(flags, p, s):\n    if flags[0] > 0:\n        a()\n    if flags[0] > 0:\n        b()\n    if p.consumer_try_wait(s):\n        c()\n    if p.consumer_try_wait(s):\n        d()\n",
        )
        .unwrap();
        let same = same(&module);
        for s in ifs(&module) {
            assert_eq!(same.deciding(s).0, s.id);
        }
    }

    #[test]
    fn a_name_bound_once_by_the_kernel_body_holds_one_value() {
        let module = cute_ir::lower_text(
            "def k(x):\n    n = x.size\n    if n > 0:\n        a()\n    if n > 0:\n        b()\n    for i in range(4):\n        m = i\n        if m > 0:\n            c()\n        if m > 0:\n            d()\n",
        )
        .unwrap();
        let same = same(&module);
        let ifs = ifs(&module);
        assert_eq!(same.deciding(ifs[1]).0, ifs[0].id);
        // Bound in a loop: another value each time round.
        assert_eq!(same.deciding(ifs[3]).0, ifs[3].id);
    }

    #[test]
    fn a_test_on_a_name_the_function_rebinds_is_its_own() {
        let module = cute_ir::lower_text(
            "def k(self, n, t):\n    if n > 0:\n        a()\n    n = n - 1\n    if n > 0:\n        b()\n    if t.done:\n        g()\n    t.update()\n    if t.done:\n        h()\n    for i in range(4):\n        if i > 0:\n            c()\n        if i > 0:\n            d()\n    self.x = 1\n    if self.x:\n        e()\n    if self.x:\n        f()\n",
        )
        .unwrap();
        let same = same(&module);
        for s in ifs(&module) {
            assert_eq!(same.deciding(s).0, s.id);
        }
    }
}
