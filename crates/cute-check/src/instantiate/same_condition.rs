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
//!
//! The helpers a kernel inlines test the same values under other names:
//! `def softmax(self, ..., cum_seqlen_q):` tests `cum_seqlen_q is not None`
//! as the kernel that passes it its own `cum_seqlen_q` does, and a method
//! tests `self.use_tma_store` as the kernel does. So a helper's names that
//! stand for the kernel's ([`Origins`]: a parameter given a name of the
//! caller's that holds one value, and never rebound by the helper) are read
//! as the kernel's, and a test written like one of the kernel's once they
//! are is decided by it. A test in helpers alone stays its own: which
//! statement decides a group must not depend on the order the threads meet
//! them in, and the kernel's are the only ones always run in its frame.

use std::collections::BTreeSet;

use cute_ir::api::Api;
use cute_ir::ast::{Call, Expr, FunctionDef, Stmt, StmtId, StmtKind, Target, UnOp};
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
    /// The kernel's tests on names that hold one value, as written, each
    /// with the condition that decides it.
    kernel_tests: Vec<(Expr, Deciding)>,
    /// How many statements of the kernel bind each name.
    bindings: FxHashMap<String, usize>,
    /// The names bound once, by a statement of the kernel's body itself,
    /// with where that statement ends.
    defined_once_at: FxHashMap<String, u32>,
}

/// What the names of a helper being run stand for in the kernel's frame: a
/// parameter given a name of its caller's that holds one value, which the
/// helper never rebinds, is that name of the kernel's (`cum_seqlen_q` for
/// `softmax(..., cum_seqlen_q=cum_seqlen_q)`, `self` for `self.softmax(...)`).
#[derive(Default)]
pub(super) struct Origins {
    names: FxHashMap<String, String>,
    /// Where the kernel's call that the helpers being run were inlined
    /// from is: the kernel's names hold one value from there on.
    at: u32,
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
        let defined_once_at: FxHashMap<String, u32> = kernel
            .body
            .iter()
            .filter_map(|s| match &s.kind {
                StmtKind::Assign { targets, .. } => match &targets[..] {
                    [Target::Name(n)] if bindings.get(n) == Some(&1) => Some((n.clone(), s.range.end)),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        let mut same = SameConditions { first: FxHashMap::default(), kernel_tests: Vec::new(), bindings, defined_once_at };
        // Calls carry their position: tests are compared as written.
        for s in statements {
            let StmtKind::If { cond, .. } = &s.kind else { continue };
            if !kept(s.id) || !reads_values_only(cond) {
                continue;
            }
            let mut uses = Vec::new();
            cond.collect_uses(&mut uses);
            if !uses.iter().all(|u| same.holds_one_value(u, s.range.start)) {
                continue;
            }
            let (test, negated) = test_of(cond);
            match same.kernel_tests.iter().find(|(earlier, _)| earlier.written_like(test)) {
                Some(&(_, (stmt, site, earlier_negated))) => {
                    first.insert(s.id, (stmt, site, negated != earlier_negated));
                }
                None => same.kernel_tests.push((test.clone(), (s.id, site(s), negated))),
            }
        }
        same.first = first;
        same
    }

    /// Whether the kernel's name (or `self.x` attribute) `name` holds one
    /// value from position `at` of the kernel on.
    fn holds_one_value(&self, name: &str, at: u32) -> bool {
        match self.bindings.get(name) {
            None => true,
            Some(_) => self.defined_once_at.get(name).is_some_and(|&defined| defined <= at),
        }
    }

    /// The [`Origins`] of the names of helper `f`, called by `call` from a
    /// frame whose names stand for the kernel's as `caller` says (`None`:
    /// the kernel's own frame), binding its parameters to the expressions
    /// `bound` (see `inline::bind_parameters`; `None`: a default, or no
    /// expression of the caller's). `rebound`: the names and attributes `f`
    /// binds.
    pub(super) fn helper_origins(
        &self,
        call: &Call,
        caller: Option<&Origins>,
        bound: Vec<(String, Option<&Expr>)>,
        rebound: &BTreeSet<String>,
    ) -> Origins {
        let at = caller.map_or(call.range.start, |c| c.at);
        let origin = |name: &str| match caller {
            Some(c) => c.names.get(name).cloned(),
            None => self.holds_one_value(name, at).then(|| name.to_string()),
        };
        let mut names = FxHashMap::default();
        for (param, given) in bound {
            let from = match given {
                Some(Expr::Name(n)) => origin(n),
                _ => None,
            };
            // A later binding of the parameter replaces an earlier one.
            names.remove(&param);
            let never_rebound = || !rebound.iter().any(|r| r == &param || r.strip_prefix(param.as_str()).is_some_and(|rest| rest.starts_with('.')));
            if let Some(from) = from.filter(|_| never_rebound()) {
                names.insert(param, from);
            }
        }
        Origins { names, at }
    }

    /// The condition that decides `s`, a statement of a helper whose names
    /// stand for the kernel's as `origins` says: a test of the kernel's
    /// it is written like once they are read as the kernel's, else its own.
    pub(super) fn deciding_in_helper(&self, s: &Stmt, origins: &Origins) -> Deciding {
        let own = (s.id, site(s), false);
        let StmtKind::If { cond, .. } = &s.kind else { return own };
        if origins.names.is_empty() || !reads_values_only(cond) {
            return own;
        }
        let (test, negated) = test_of(cond);
        let mut uses = Vec::new();
        test.collect_uses(&mut uses);
        let as_kernel = |used: &str| {
            let (base, attr) = used.split_once('.').map_or((used, None), |(b, a)| (b, Some(a)));
            let kernel = origins.names.get(base)?;
            Some(match attr {
                Some(a) => format!("{kernel}.{a}"),
                None => kernel.clone(),
            })
        };
        if !uses.iter().all(|u| as_kernel(u).is_some_and(|k| self.holds_one_value(&k, origins.at))) {
            return own;
        }
        let mut renamed = test.clone();
        rename(&mut renamed, &origins.names);
        match self.kernel_tests.iter().find(|(kernel_test, _)| kernel_test.written_like(&renamed)) {
            Some(&(_, (stmt, site, kernel_negated))) => (stmt, site, negated != kernel_negated),
            None => own,
        }
    }

    /// The condition `s`'s is (its own unless it repeats an earlier one).
    pub(super) fn deciding(&self, s: &Stmt) -> Deciding {
        self.first.get(&s.id).copied().unwrap_or_else(|| (s.id, site(s), false))
    }
}

/// What a condition tests, `cutlass.const_expr(...)` and `not` taken off,
/// and whether an odd number of `not` were.
pub(super) fn test_of(mut e: &Expr) -> (&Expr, bool) {
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

/// `e` with the names `names` maps renamed.
fn rename(e: &mut Expr, names: &FxHashMap<String, String>) {
    if let Expr::Name(n) = e {
        if let Some(to) = names.get(n.as_str()) {
            *n = to.clone();
        }
        return;
    }
    e.for_each_child_mut(&mut |child| rename(child, names));
}

/// The names and `self.x` attributes the statements of function `f` bind,
/// or whose objects its methods may change (see [`bindings_of`]).
pub(super) fn rebound_by(f: &FunctionDef) -> BTreeSet<String> {
    bindings_of(&nested_statements(&f.body)).into_iter().collect()
}

/// Where a condition is reported: the `if` keyword of a branch.
pub(super) fn site(s: &Stmt) -> TextRange {
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

    /// The kernel `C.k` of `text`, its helper `C.h`, and the call of `h`
    /// that is the kernel's statement `call_at`.
    fn kernel_and_helper(text: &str, call_at: usize) -> (Module, Call) {
        let module = cute_ir::lower_text(text).unwrap();
        let StmtKind::Expr(Expr::Call(call)) = &module.functions[0].body[call_at].kind else { panic!("not a call") };
        let call = (**call).clone();
        (module, call)
    }

    fn origins(same: &SameConditions, module: &Module, call: &Call) -> Origins {
        let helper = &module.functions[1];
        let receiver = match &call.func {
            Expr::Attr { base, .. } => Some(Some(base.as_ref())),
            _ => None,
        };
        let bound = super::super::inline::bind_parameters(helper, receiver, call.args.iter().map(Some), Vec::new(), |_| None);
        same.helper_origins(call, None, bound, &rebound_by(helper))
    }

    #[test]
    fn a_helper_s_test_of_what_the_kernel_gave_it_is_the_kernel_s() {
        let (module, call) = kernel_and_helper(
            "class C:\n    def k(self, flag):\n        if flag is not None:\n            a()\n        if cutlass.const_expr(self.on):\n            b()\n        self.h(flag)\n\n    def h(self, f):\n        if f is not None:\n            c()\n        if not self.on:\n            d()\n        if f is None:\n            e()\n",
            2,
        );
        let same = same(&module);
        let origins = origins(&same, &module, &call);
        let kernel_ifs = ifs(&module);
        let helper_ifs: Vec<&Stmt> =
            nested_statements(&module.functions[1].body).into_iter().filter(|s| matches!(s.kind, StmtKind::If { .. })).collect();
        let deciding = |s: &Stmt| same.deciding_in_helper(s, &origins);
        assert_eq!(deciding(helper_ifs[0]).0, kernel_ifs[0].id);
        assert!(!deciding(helper_ifs[0]).2);
        // The opposite test of the kernel's attribute.
        assert_eq!(deciding(helper_ifs[1]).0, kernel_ifs[1].id);
        assert!(deciding(helper_ifs[1]).2);
        // The kernel writes no `flag is None`: the helper's own.
        assert_eq!(deciding(helper_ifs[2]).0, helper_ifs[2].id);
    }

    #[test]
    fn a_helper_test_on_a_name_rebound_on_either_side_is_its_own() {
        // The helper rebinds its parameter; the kernel rebinds the name it
        // passes after the call.
        for text in [
            "class C:\n    def k(self, flag):\n        if flag is not None:\n            a()\n        self.h(flag)\n\n    def h(self, f):\n        f = None\n        if f is not None:\n            c()\n",
            "class C:\n    def k(self, flag):\n        if flag is not None:\n            a()\n        self.h(flag)\n        flag = None\n\n    def h(self, f):\n        if f is not None:\n            c()\n",
        ] {
            let (module, call) = kernel_and_helper(text, 1);
            let same = same(&module);
            let origins = origins(&same, &module, &call);
            let helper_if = nested_statements(&module.functions[1].body).into_iter().find(|s| matches!(s.kind, StmtKind::If { .. })).unwrap();
            assert_eq!(same.deciding_in_helper(helper_if, &origins).0, helper_if.id, "{text}");
        }
    }
}
