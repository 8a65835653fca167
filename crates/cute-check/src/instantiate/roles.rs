//! Warp roles an assumed block leaves out.
//!
//! A kernel whose block shape is not known is run with an assumed one (see
//! `cute_ir::launch::ASSUMED_THREADS_PER_CTA`). A warp-specialized kernel
//! dispatches on warp indices the host computes (`if warp_idx ==
//! self.tma_warp_id:` with `self.tma_warp_id` = 8): no thread of a smaller
//! assumed block takes that branch, and the model would check the kernel
//! without its producer, in silence. Such a kernel is not checked, naming
//! the branch.

use rustc_hash::FxHashMap as HashMap;

use cute_ir::api::Api;
use cute_ir::ast::{CmpOp, Expr, FunctionDef, Stmt, StmtKind};
use cute_ir::eval::{eval, pure_call, CallHandler, Env, Value};
use cute_syntax::TextRange;

/// The first branch of the kernel's own code that compares the warp index
/// with a known warp no thread of `warps` warps has (`warp_idx == 8`,
/// `warp_idx >= 8`): its statement and that warp.
pub(super) fn role_beyond_block(kernel: &FunctionDef, definitions: &HashMap<String, &Expr>, env: &Env, warps: u32) -> Option<(TextRange, i64)> {
    fn walk(stmts: &[Stmt], find: &mut dyn FnMut(&Expr) -> Option<i64>) -> Option<(TextRange, i64)> {
        for s in stmts {
            let found = match &s.kind {
                StmtKind::If { cond, then, orelse } => {
                    find(cond).map(|w| (s.range, w)).or_else(|| walk(then, find)).or_else(|| walk(orelse, find))
                }
                StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. } => walk(body, find),
                _ => None,
            };
            if found.is_some() {
                return found;
            }
        }
        None
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
    let mut find = |cond: &Expr| role_warp(cond, &is_warp_index, env).filter(|&w| w >= i64::from(warps));
    walk(&kernel.body, &mut find)
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
    fn call(&mut self, call: &cute_ir::ast::Call, _: &Value, args: Vec<Value>, kwargs: Vec<(String, Value)>, _: &Env) -> Value {
        pure_call(call, &args, &kwargs).unwrap_or(Value::unknown("a call"))
    }
}
