//! Tests of a value of the launch are one condition wherever they are
//! written.
//!
//! A host argument (`mSeqUsedQ`, `mCuSeqlensQ`, a constructor's `arch`) holds
//! one value in every thread of a launch. Kernels test it where they use it:
//! in the kernel, and in the helpers of other modules that the kernel hands
//! it to under other names, often through a namespace or an object
//! (`SeqlenInfoQK.create(..., mSeqUsedQ=mSeqUsedQ)` tests `mSeqUsedQ is not
//! None`; `common_params.mAccO is not None` in two methods). Decided apart,
//! these tests run ways no launch has (one role reading the used lengths,
//! another not) and use up the conditions a way decides. `same_condition.rs`
//! joins tests written alike, and a helper's tests of names the kernel
//! handed it; a test of a launch value is joined by the value it reads,
//! however it reached the test.
//!
//! The test is recognised on what it compares, once evaluated: a name or a
//! chain of attributes (read with no call) whose value is an argument of the
//! kernel not known statically, or an attribute not known of an object it is
//! handed, or such a value plus a constant ([`mark_launch_values`]), compared
//! with a constant (`is None`, `== 0`, `>= 100`) or taken as a truth value,
//! with `cutlass.const_expr(...)` and `not` taken off. A value computed from
//! one otherwise (`n * 2`, `mT.shape[0]`) is not the launch's. Its key is the
//! value and the test, the constant added moved to the other side (`n - 1 >
//! 0` is `n > 1`), with the opposite
//! tests (`is None` and `is not None`, `<` and `>=`) one condition taken the
//! other way; the key stands for the condition in the ways decided
//! ([`is_launch_condition`]), so which statement a thread meets first does
//! not matter, and the first one met is the one the diagnostics name.

use std::hash::{Hash, Hasher};

use cute_ir::ast::{CmpOp, Expr, StmtId, UnOp};
use cute_ir::eval::{Identity, Value};

/// The bit that sets the ids of conditions on launch values apart from the
/// ids of statements (which count a module's statements, far below it).
const LAUNCH_CONDITION: StmtId = 1 << 31;

/// Whether `id` stands for a test of a launch value rather than a statement.
pub fn is_launch_condition(id: StmtId) -> bool {
    id & LAUNCH_CONDITION != 0
}

/// The condition `cond` is when it tests a value of the launch, and whether
/// it is that condition's opposite; `value_of` evaluates what it reads.
pub(super) fn launch_condition(cond: &Expr, mut value_of: impl FnMut(&Expr) -> Value) -> Option<(StmtId, bool)> {
    let (test, mut negated) = super::same_condition::test_of(cond);
    let (read, test) = match test {
        Expr::Compare { op, lhs, rhs } => {
            let (read, op, constant) = match (constant(rhs), constant(lhs)) {
                (Some(c), _) if is_read(lhs) => (lhs.as_ref(), *op, c),
                (None, Some(c)) if is_read(rhs) => (rhs.as_ref(), mirrored(*op)?, c),
                _ => return None,
            };
            let (op, opposite) = canonical(op)?;
            negated ^= opposite;
            (read, Some((op, constant)))
        }
        read if is_read(read) => (read, None),
        _ => return None,
    };
    let Value::Unknown(_, identity) = value_of(read) else { return None };
    let (value, offset) = identity.launch_value()?;
    // `n - 1 > 0` is `n > 1`: the constant added moves to the other side.
    let test = match test {
        Some((op, Value::Int(c))) => match c.checked_sub(offset) {
            Some(c) => format!("{op:?} {c}"),
            None => return None,
        },
        Some((op, constant)) => format!("{op:?} {constant:?} {offset}"),
        None => format!("truth {offset}"),
    };
    let mut hasher = rustc_hash::FxHasher::default();
    (value, test).hash(&mut hasher);
    Some((LAUNCH_CONDITION | (hasher.finish() as StmtId & !LAUNCH_CONDITION), negated))
}

/// Marks the kernel's arguments not known statically, and the attributes
/// not known of the objects it is handed (`self.arch`), as values of the
/// launch, each numbered by its name: what a test of one is a test of,
/// however the value reached it. Values computed from them are others
/// (`cute_ir::eval::Identity`); a constant added keeps the value, with the
/// offset.
pub(super) fn mark_launch_values(params: &mut cute_ir::eval::Bindings) {
    let number = |path: &str| {
        let mut hasher = rustc_hash::FxHasher::default();
        path.hash(&mut hasher);
        hasher.finish() as u32
    };
    for (name, value) in params.iter_mut() {
        match value {
            Value::Unknown(..) => *value = value.clone().with_identity(Identity::launch(number(name))),
            Value::Object(object) if object.attrs.values().any(Value::is_unknown) => {
                let object = std::sync::Arc::make_mut(object);
                for (attr, v) in object.attrs.iter_mut().filter(|(_, v)| v.is_unknown()) {
                    *v = v.clone().with_identity(Identity::launch(number(&format!("{name}.{attr}"))));
                }
            }
            _ => {}
        }
    }
}

/// A name or attributes of one: read without running anything.
fn is_read(e: &Expr) -> bool {
    match e {
        Expr::Name(_) => true,
        Expr::Attr { base, .. } => is_read(base),
        _ => false,
    }
}

/// A constant a launch value can be compared with.
fn constant(e: &Expr) -> Option<Value> {
    match e {
        Expr::None => Some(Value::None),
        Expr::Int(i) => Some(Value::Int(*i)),
        Expr::Bool(b) => Some(Value::Bool(*b)),
        Expr::Unary { op: UnOp::Neg, operand } => match operand.as_ref() {
            Expr::Int(i) => i.checked_neg().map(Value::Int),
            _ => None,
        },
        _ => None,
    }
}

/// `c OP x` as `x OP' c`.
fn mirrored(op: CmpOp) -> Option<CmpOp> {
    Some(match op {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Le => CmpOp::Ge,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Ge => CmpOp::Le,
        CmpOp::Eq | CmpOp::Ne | CmpOp::Is | CmpOp::IsNot => op,
        CmpOp::In | CmpOp::NotIn => return None,
    })
}

/// One of each pair of opposite tests, and whether `op` is the other.
/// The first way decides every condition as false, so the one kept is the
/// one written more often around what only some launches do (`n > 0`,
/// `x is not None`, `k == 0`): the first way takes those as written false,
/// as it does a condition of its own.
fn canonical(op: CmpOp) -> Option<(CmpOp, bool)> {
    Some(match op {
        CmpOp::Eq | CmpOp::IsNot | CmpOp::Gt | CmpOp::Ge => (op, false),
        CmpOp::Ne => (CmpOp::Eq, true),
        CmpOp::Is => (CmpOp::IsNot, true),
        CmpOp::Le => (CmpOp::Gt, true),
        CmpOp::Lt => (CmpOp::Ge, true),
        CmpOp::In | CmpOp::NotIn => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cute_ir::ast::StmtKind;

    fn condition_of(src: &str) -> Expr {
        let m = cute_ir::lower_text(&format!("if {src}:\n    pass\n")).unwrap();
        let StmtKind::If { cond, .. } = &m.top_level[0].kind else { panic!() };
        cond.clone()
    }

    /// Every name reads the launch value `q`; `other` another one, `shifted`
    /// `q - 1`, `local` a value bound in a thread and `derived` one computed
    /// from `q`.
    fn value_of(e: &Expr) -> Value {
        let dotted = e.dotted().unwrap_or_default();
        let unknown = Value::unknown("the argument");
        if dotted.ends_with("other") {
            unknown.with_identity(Identity::launch(2))
        } else if dotted.ends_with("local") {
            unknown.with_identity(Identity::bound(7))
        } else if dotted.ends_with("derived") {
            unknown
        } else if dotted.ends_with("shifted") {
            cute_ir::eval::binary(cute_ir::ast::BinOp::Sub, &unknown.with_identity(Identity::launch(1)), &Value::Int(1))
        } else {
            unknown.with_identity(Identity::launch(1))
        }
    }

    fn key(src: &str) -> Option<(StmtId, bool)> {
        launch_condition(&condition_of(src), value_of)
    }

    #[test]
    fn tests_of_one_launch_value_are_one_condition_however_written() {
        let (is_none, negated) = key("q is not None").unwrap();
        assert!(is_launch_condition(is_none) && !negated);
        for (src, opposite) in [
            ("cutlass.const_expr(params.q is None)", true),
            ("q is None", true),
            ("not (self.q is None)", false),
            ("None is not self.common.q", false),
        ] {
            assert_eq!(key(src), Some((is_none, opposite)), "{src}");
        }
        let (at_least, negated) = key("q >= 100").unwrap();
        assert!(!negated);
        assert_ne!(at_least, is_none);
        assert_eq!(key("q < 100"), Some((at_least, true)));
        assert_eq!(key("100 > q"), Some((at_least, true)));
        assert_ne!(key("q >= 90").unwrap().0, at_least);
        assert_ne!(key("other is None").unwrap().0, is_none);
        assert_eq!(key("q"), key("cutlass.const_expr(not q)").map(|(id, n)| (id, !n)));
        // `shifted` is `q - 1`: `shifted > 0` is `q > 1`.
        assert_ne!(key("shifted > 0").unwrap().0, key("q > 0").unwrap().0);
        assert_eq!(key("shifted > 0"), key("q > 1"));
        assert_eq!(key("shifted <= 0"), key("q <= 1"));
        assert_eq!(key("shifted <= 0").map(|(id, n)| (id, !n)), key("q > 1"));
        assert_eq!(key("q > 1").map(|(_, n)| n), Some(false));
        assert_ne!(key("shifted is None").unwrap().0, key("q is None").unwrap().0);
        for open in ["local is None", "derived is None", "q[0] is None", "f(q) is None", "q is r", "q in (1, 2)", "q + 1 > 2"] {
            assert_eq!(key(open), None, "{open}");
        }
        assert!(!is_launch_condition(12_345));
    }
}
