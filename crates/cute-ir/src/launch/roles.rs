//! The warps a kernel dispatches roles to, read off its own tests of the
//! warp index (`if warp_idx == self.tma_warp_id:`, `if warp_idx >= 4:`).
//!
//! A kernel whose block shape is not known is checked with an assumed one.
//! Four warps leave out the producer of a kernel that puts it in warp 8: the
//! model would check the kernel without it. So the block assumed is the
//! smallest number of whole warp groups (kernels size their blocks in warp
//! groups) that has every warp the kernel's role tests select, and the
//! tests that still select a warp beyond it (an index known only later, or
//! past the largest block) make the kernel not checked, naming the branch.
//!
//! Example: with `if warp_idx == self.tma_warp_id:` and `tma_warp_id` = 8,
//! the block assumed is 384 threads, the three warp groups that reach warp 8,
//! and the host code then runs with that block. The largest block is 1,024
//! threads. The check that a branch still selects a missing warp is
//! `cute-check`'s `instantiate/roles.rs`.

use rustc_hash::FxHashMap as HashMap;

use cute_syntax::TextRange;

use crate::api::Api;
use crate::ast::{CmpOp, Expr, FunctionDef, Stmt, StmtKind, Target};
use crate::eval::{eval, pure_call, CallHandler, Env, Value};

/// The most threads a CTA has.
const MAX_THREADS_PER_CTA: u32 = 1024;
/// Blocks are assumed in whole warp groups.
const WARP_GROUP: u32 = 128;

/// The names the function binds exactly once, by a plain `name = value`,
/// with that value.
pub fn single_definitions(f: &FunctionDef) -> HashMap<String, &Expr> {
    let mut bindings: HashMap<String, (usize, Option<&Expr>)> = HashMap::default();
    crate::ast::for_each_binding(&f.body, &mut |target, value| {
        for n in target.bound_names() {
            let entry = bindings.entry(n).or_insert((0, None));
            entry.0 += 1;
            // Only a plain `name = value` defines the name by an expression.
            entry.1 = if matches!(target, Target::Name(_)) { value } else { None };
        }
    });
    bindings.into_iter().filter_map(|(n, (count, value))| (count == 1).then_some((n, value?))).collect()
}

/// The branches of the kernel's own code that compare the warp index with a
/// known warp (`warp_idx == 8`, `warp_idx >= 8`), in text order: each
/// statement and the first warp it selects.
pub fn role_tests(kernel: &FunctionDef, definitions: &HashMap<String, &Expr>, env: &Env) -> Vec<(TextRange, i64)> {
    role_tests_where(kernel, definitions, env, &|_| true)
}

/// [`role_tests`] among the statements `keep` accepts (and those inside
/// them): the branches a slice of the kernel keeps.
pub fn role_tests_where(kernel: &FunctionDef, definitions: &HashMap<String, &Expr>, env: &Env, keep: &dyn Fn(&Stmt) -> bool) -> Vec<(TextRange, i64)> {
    fn walk(stmts: &[Stmt], keep: &dyn Fn(&Stmt) -> bool, find: &mut dyn FnMut(&Expr) -> Option<i64>, out: &mut Vec<(TextRange, i64)>) {
        for s in stmts.iter().filter(|s| keep(s)) {
            match &s.kind {
                StmtKind::If { cond, then, orelse } => {
                    out.extend(find(cond).map(|w| (s.range, w)));
                    walk(then, keep, find, out);
                    walk(orelse, keep, find, out);
                }
                StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. } => walk(body, keep, find, out),
                _ => {}
            }
        }
    }
    let is_warp_index = |e: &Expr| {
        let e = match e {
            Expr::Name(n) => definitions.get(n).copied().unwrap_or(e),
            _ => e,
        };
        let mut calls = Vec::new();
        e.calls(&mut calls);
        calls.iter().any(|c| c.api == Some(Api::WarpIdx))
    };
    let mut find = |cond: &Expr| role_warp(cond, &is_warp_index, env);
    let mut out = Vec::new();
    walk(&kernel.body, keep, &mut find, &mut out);
    out
}

/// What [`threads_reaching_roles`] reads of a kernel's body: its `if`
/// statements (their conditions, and the `if`s inside them), the loops and
/// `with` blocks around them, and every binding of a name a condition reads
/// (so that [`single_definitions`] counts them as in the whole body); the
/// rest left out, statement ids and positions cleared. A launch search that
/// keeps this of a kernel's body answers as with the whole body, and is not
/// repeated by an edit of the datapath.
pub fn role_skeleton(body: &[Stmt]) -> Vec<Stmt> {
    fn conditions(stmts: &[Stmt], out: &mut Vec<String>) {
        for s in stmts {
            match &s.kind {
                StmtKind::If { cond, then, orelse } => {
                    cond.collect_uses(out);
                    conditions(then, out);
                    conditions(orelse, out);
                }
                StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. } => conditions(body, out),
                _ => {}
            }
        }
    }
    fn binds(target: &Target, read: &std::collections::BTreeSet<String>) -> bool {
        target.bound_names().iter().any(|n| read.contains(n))
    }
    fn cut(stmts: &[Stmt], read: &std::collections::BTreeSet<String>) -> Vec<Stmt> {
        let mut out = Vec::new();
        for s in stmts {
            let kind = match &s.kind {
                StmtKind::If { cond, then, orelse } => Some(StmtKind::If { cond: cond.clone(), then: cut(then, read), orelse: cut(orelse, read) }),
                StmtKind::Assign { targets, .. } if targets.iter().any(|t| binds(t, read)) => Some(s.kind.clone()),
                StmtKind::AugAssign { target, .. } if binds(target, read) => Some(s.kind.clone()),
                StmtKind::For { target, iter, body } => {
                    let body = cut(body, read);
                    (!body.is_empty() || binds(target, read)).then(|| StmtKind::For { target: target.clone(), iter: iter.clone(), body })
                }
                StmtKind::While { cond, body } => {
                    let body = cut(body, read);
                    (!body.is_empty()).then(|| StmtKind::While { cond: cond.clone(), body })
                }
                StmtKind::With { items, body } => {
                    let body = cut(body, read);
                    let bound = items.iter().filter_map(|(_, t)| t.as_ref()).any(|t| binds(t, read));
                    (!body.is_empty() || bound).then(|| StmtKind::With { items: items.clone(), body })
                }
                _ => None,
            };
            out.extend(kind.map(|kind| Stmt { id: 0, range: TextRange::default(), kind }));
        }
        out
    }
    let mut read = Vec::new();
    conditions(body, &mut read);
    cut(body, &read.into_iter().collect())
}

/// The block indices the kernel's own tests of the block index single out
/// (`bidx == 0`, `bidx == NUM_CTAS // 2`, `bidx < P`): for `==` and `!=`
/// the index compared with, for an order the two indices either side of
/// the bound. The block index is the `x` of `cute.arch.block_idx()`, bound
/// by `bidx, _, _ = cute.arch.block_idx()` or by a name defined from it;
/// the compared value must be known from `env` (module constants, host
/// values).
pub fn block_tests(kernel: &FunctionDef, env: &Env) -> Vec<i64> {
    let definitions = single_definitions(kernel);
    let mut block_names: Vec<String> = Vec::new();
    crate::ast::for_each_binding(&kernel.body, &mut |target, value| {
        let from_block_idx = value.is_some_and(|v| {
            let mut calls = Vec::new();
            v.calls(&mut calls);
            calls.iter().any(|c| c.api == Some(Api::BlockIdx))
        });
        match target {
            Target::Tuple(items) if from_block_idx => {
                if let Some(Target::Name(n)) = items.first() {
                    block_names.push(n.clone());
                }
            }
            Target::Name(n) if from_block_idx => block_names.push(n.clone()),
            _ => {}
        }
    });
    let is_block_index = |e: &Expr| match e {
        Expr::Name(n) => block_names.contains(n) || definitions.get(n).is_some_and(|d| matches!(d, Expr::Name(m) if block_names.contains(m))),
        _ => false,
    };
    let mut out = Vec::new();
    crate::ast::for_each_expr(&kernel.body, &mut |e| block_compares(e, &is_block_index, env, &mut out));
    out.sort_unstable();
    out.dedup();
    out
}

/// The block indices compared in `e` ([`block_tests`]).
fn block_compares(e: &Expr, is_block_index: &dyn Fn(&Expr) -> bool, env: &Env, out: &mut Vec<i64>) {
    match e {
        Expr::BoolOp { lhs, rhs, .. } => {
            block_compares(lhs, is_block_index, env, out);
            block_compares(rhs, is_block_index, env, out);
        }
        Expr::Unary { operand, .. } => block_compares(operand, is_block_index, env, out),
        Expr::Compare { op, lhs, rhs } => {
            let (op, bound) = if is_block_index(lhs) {
                (*op, rhs)
            } else if is_block_index(rhs) {
                let flipped = match op {
                    CmpOp::Lt => CmpOp::Gt,
                    CmpOp::Le => CmpOp::Ge,
                    CmpOp::Gt => CmpOp::Lt,
                    CmpOp::Ge => CmpOp::Le,
                    other => *other,
                };
                (flipped, lhs)
            } else {
                return;
            };
            let Some(k) = eval(bound, env, &mut PureCalls).as_int() else { return };
            match op {
                CmpOp::Eq | CmpOp::Ne => out.push(k),
                CmpOp::Lt | CmpOp::Ge => out.extend([k - 1, k]),
                CmpOp::Gt | CmpOp::Le => out.extend([k, k + 1]),
                _ => {}
            }
        }
        _ => {}
    }
}

/// Threads per CTA that reach every warp the kernel's role tests select,
/// when four warps do not: the smallest multiple of a warp group past the
/// highest such warp (warp 8 gives 384), with that warp. `None` when four
/// warps do, or when no CTA has that warp.
pub fn threads_reaching_roles(kernel: &FunctionDef, env: &Env) -> Option<(u32, i64)> {
    let definitions = single_definitions(kernel);
    let highest = role_tests(kernel, &definitions, env).into_iter().map(|(_, w)| w).max()?;
    let warps = u32::try_from(highest).ok()?.checked_add(1)?;
    let threads = (warps * 32).div_ceil(WARP_GROUP) * WARP_GROUP;
    (threads > super::ASSUMED_THREADS_PER_CTA && threads <= MAX_THREADS_PER_CTA).then_some((threads, highest))
}

/// The warp a condition selects: `warp == k`, `warp >= k`, `warp > k`, or
/// one side of `and`/`or`.
fn role_warp(cond: &Expr, is_warp_index: &dyn Fn(&Expr) -> bool, env: &Env) -> Option<i64> {
    match cond {
        Expr::BoolOp { lhs, rhs, .. } => role_warp(lhs, is_warp_index, env).or_else(|| role_warp(rhs, is_warp_index, env)),
        Expr::Compare { op, lhs, rhs } if is_warp_index(lhs) => {
            let k = eval(rhs, env, &mut PureCalls).as_int()?;
            match op {
                CmpOp::Eq | CmpOp::Ge => Some(k),
                CmpOp::Gt => Some(k + 1),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Calls evaluated without a thread: only those that need none.
struct PureCalls;

impl CallHandler for PureCalls {
    fn call(&mut self, call: &crate::ast::Call, _: &Value, args: Vec<Value>, kwargs: Vec<(String, Value)>, _: &Env) -> Value {
        pure_call(call, &args, &kwargs).unwrap_or(Value::unknown("a call"))
    }
}

#[cfg(test)]
mod tests {
    use super::threads_reaching_roles;
    use crate::eval::{Env, Value};

    fn threads(tests: &str) -> Option<(u32, i64)> {
        let src = format!(
            "import cutlass.cute as cute\n@cute.kernel\ndef k(x, mma_warp):\n    warp = cute.arch.warp_idx()\n{tests}"
        );
        let m = crate::lower_text(&src).unwrap();
        let kernel = m.kernels().next().unwrap();
        let env: Env = [("mma_warp".to_string(), Value::Int(9))].into_iter().collect();
        threads_reaching_roles(kernel, &env)
    }

    #[test]
    fn the_block_has_the_warp_groups_that_reach_the_highest_role() {
        // Warps 0 to 3: the four warps assumed anyway.
        assert_eq!(threads("    if warp == 3:\n        pass\n"), None);
        // Warp 4 (`>= 4` selects it first): two warp groups.
        assert_eq!(threads("    if warp >= 4:\n        pass\n"), Some((256, 4)));
        // The highest of the tests, nested or not, through a parameter's value.
        assert_eq!(
            threads("    if warp == 0:\n        pass\n    elif warp == mma_warp:\n        if warp > 10:\n            pass\n"),
            Some((384, 11))
        );
        // No CTA has warp 32.
        assert_eq!(threads("    if warp == 32:\n        pass\n"), None);
    }

    /// The skeleton answers as the whole body: kernels whose role tests sit
    /// in loops and `with` blocks, behind datapath, through names defined
    /// once or rebound.
    #[test]
    fn the_role_skeleton_reaches_the_warps_the_body_does() {
        let bodies = [
            "    if warp >= 4:\n        x = x + 1\n",
            "    y = x * 2\n    for i in range(4):\n        y += i\n        if warp == mma_warp:\n            pass\n",
            "    with cute.arch.elect_one():\n        y = 1\n    while y < 3:\n        if warp > 10:\n            y = 4\n",
            // Rebound: `warp` is no longer one definition, so no test reads it.
            "    warp = warp + 1\n    if warp >= 8:\n        pass\n",
            "    role = warp\n    if role == 9:\n        pass\n    z = 3\n",
            "    for w in range(8):\n        if warp == w:\n            pass\n",
            "    y = 0\n",
        ];
        for tests in bodies {
            let src = format!("import cutlass.cute as cute\n@cute.kernel\ndef k(x, mma_warp):\n    warp = cute.arch.warp_idx()\n{tests}");
            let m = crate::lower_text(&src).unwrap();
            let kernel = m.kernels().next().unwrap();
            let mut skeleton = kernel.clone();
            skeleton.body = super::role_skeleton(&kernel.body);
            let env: Env = [("mma_warp".to_string(), Value::Int(9))].into_iter().collect();
            assert_eq!(threads_reaching_roles(&skeleton, &env), threads_reaching_roles(kernel, &env), "{tests}");
            // The datapath is left out.
            assert!(skeleton.body.len() <= kernel.body.len(), "{tests}");
        }
        let src = "import cutlass.cute as cute\n@cute.kernel\ndef k(x):\n    warp = cute.arch.warp_idx()\n    y = x * 2\n    if warp >= 4:\n        y = y + 1\n";
        let m = crate::lower_text(src).unwrap();
        let skeleton = super::role_skeleton(&m.kernels().next().unwrap().body);
        assert_eq!(skeleton.len(), 2, "the definition of `warp` and the `if`, not `y = x * 2`: {skeleton:?}");
    }
}
