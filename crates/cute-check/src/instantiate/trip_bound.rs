//! Upper bounds on loops whose trip count is not known, and the names the
//! kernel's loops run up to.
//!
//! A loop over an unknown count is explored for a few iterations (see
//! `InstantiateOptions::unknown_trip_count`). Some counts are unknown yet
//! bounded by a known one: a producer's prologue fills the ring at most once,
//! `for i in cutlass.range(prefetch)` with
//! `prefetch = cutlass.max(cutlass.min(self.ab_stage, k_tile_cnt), 0)`.
//! Exploring more iterations than that bound runs code no launch runs (there, a
//! producer that waits for a stage its own consumer has not released yet), so
//! the bound caps the exploration.
//!
//! The names a kernel's loops run up to (`loop_bound_names`), less those it
//! compares with the thread index (`compared_with_threads`), are the counts
//! `loops.rs` takes as the number of iterations explored.

use rustc_hash::FxHashMap as HashMap;

use std::collections::BTreeSet;

use cute_ir::ast::{BinOp, Expr, FunctionDef, Stmt, StmtKind};
use cute_ir::eval::{eval, CallHandler, Env};

/// The names a function binds exactly once, by a plain assignment, with the
/// expression they are bound to: what a name read by a loop bound stands
/// for, wherever the loop is.
pub(super) use cute_ir::launch::single_definitions;

/// The names the kernel's loops run up to (`for k in cutlass.range(k_tiles)`,
/// `range(1, k_tiles - 1)`). One that is not known statically is taken as
/// the number of iterations a loop of unknown length is explored for: the
/// loops over it run that many times, and what else the kernel computes
/// from it (`state.count < k_tiles`, `k == k_tiles - 1`) must agree with
/// them, or the model runs code no launch runs.
pub(super) fn loop_bound_names(f: &FunctionDef) -> BTreeSet<String> {
    fn walk(stmts: &[Stmt], out: &mut BTreeSet<String>) {
        for s in stmts {
            match &s.kind {
                StmtKind::For { iter, body, .. } => {
                    if let Some(n) = range_stop(iter).and_then(counted_name) {
                        out.insert(n.to_string());
                    }
                    walk(body, out);
                }
                StmtKind::If { then, orelse, .. } => {
                    walk(then, out);
                    walk(orelse, out);
                }
                StmtKind::While { body, .. } | StmtKind::With { body, .. } => walk(body, out),
                _ => {}
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(&f.body, &mut out);
    out
}

/// The names of `names` that the kernel compares with a value that differs
/// between threads (`if tidx < num_bins:`): such a name decides which
/// threads take part, not only how often a loop runs, and taking it as a
/// few iterations would run a launch no caller makes (three threads of a
/// block doing what the code asserts a multiple of 32 does).
pub(super) fn compared_with_threads(f: &FunctionDef, names: &BTreeSet<String>, varies: &dyn Fn(&Expr) -> bool) -> BTreeSet<String> {
    fn names_in(e: &Expr, names: &BTreeSet<String>, out: &mut Vec<String>) {
        match e {
            Expr::Name(n) if names.contains(n) => out.push(n.clone()),
            Expr::Binary { lhs, rhs, .. } => {
                names_in(lhs, names, out);
                names_in(rhs, names, out);
            }
            Expr::Unary { operand, .. } => names_in(operand, names, out),
            Expr::Call(c) => c.args.iter().for_each(|a| names_in(a, names, out)),
            _ => {}
        }
    }
    fn walk(e: &Expr, names: &BTreeSet<String>, varies: &dyn Fn(&Expr) -> bool, out: &mut BTreeSet<String>) {
        match e {
            Expr::Compare { lhs, rhs, .. } => {
                for (side, other) in [(lhs, rhs), (rhs, lhs)] {
                    if varies(other) {
                        let mut found = Vec::new();
                        names_in(side, names, &mut found);
                        out.extend(found);
                    }
                }
                walk(lhs, names, varies, out);
                walk(rhs, names, varies, out);
            }
            Expr::Binary { lhs, rhs, .. } | Expr::BoolOp { lhs, rhs, .. } => {
                walk(lhs, names, varies, out);
                walk(rhs, names, varies, out);
            }
            Expr::Unary { operand, .. } => walk(operand, names, varies, out),
            Expr::IfExp { cond, then, orelse } => {
                walk(cond, names, varies, out);
                walk(then, names, varies, out);
                walk(orelse, names, varies, out);
            }
            Expr::Call(c) => {
                c.args.iter().for_each(|a| walk(a, names, varies, out));
                c.kwargs.iter().for_each(|(_, a)| walk(a, names, varies, out));
            }
            Expr::Subscript { base, index } => {
                walk(base, names, varies, out);
                walk(index, names, varies, out);
            }
            Expr::Tuple(items) => items.iter().for_each(|i| walk(i, names, varies, out)),
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    cute_ir::ast::for_each_expr(&f.body, &mut |e| walk(e, names, varies, &mut out));
    out
}

/// The stop of `range(stop)`, `range(start, stop[, step])` and the
/// `cutlass` ranges.
fn range_stop(iter: &Expr) -> Option<&Expr> {
    let Expr::Call(call) = iter else { return None };
    if call.func.dotted().is_none_or(|d| d != "range" && !d.ends_with(".range") && !d.ends_with(".range_constexpr")) {
        return None;
    }
    match call.args.as_slice() {
        [stop] => Some(stop),
        [_, stop, ..] => Some(stop),
        _ => None,
    }
}

/// The name a count is, give or take constants (`k_tiles - 1`).
fn counted_name(e: &Expr) -> Option<&str> {
    match e {
        Expr::Name(n) => Some(n),
        Expr::Binary { op: BinOp::Add | BinOp::Sub, lhs, rhs } if matches!(**rhs, Expr::Int(_)) => counted_name(lhs),
        _ => None,
    }
}

/// How many iterations at most the loop `for _ in iter` runs, when its trip
/// count is not known but bounded by known values: `range(n)` and
/// `cutlass.range(n, ...)` whose `n` is a `min` with a known argument (a
/// `max` with a constant no larger keeps that bound), through names bound
/// once in `definitions`.
pub(super) fn loop_bound(iter: &Expr, definitions: &HashMap<String, &Expr>, env: &Env, handler: &mut dyn CallHandler) -> Option<i64> {
    let Expr::Call(call) = iter else { return None };
    if call.func.dotted().is_none_or(|d| d != "range" && !d.ends_with(".range")) {
        return None;
    }
    let (start, stop) = match call.args.as_slice() {
        [stop] => (0, stop),
        [start, stop] => (eval(start, env, handler).as_int()?, stop),
        _ => return None,
    };
    Some((at_most(stop, definitions, env, handler)? - start).max(0))
}

/// A known upper bound on the value of `e`: its value when known, else the
/// least known argument of a `min`, through names bound once.
pub(super) fn at_most(e: &Expr, definitions: &HashMap<String, &Expr>, env: &Env, handler: &mut dyn CallHandler) -> Option<i64> {
    upper_bound(e, definitions, env, handler, 0)
}

fn upper_bound(e: &Expr, definitions: &HashMap<String, &Expr>, env: &Env, handler: &mut dyn CallHandler, depth: u32) -> Option<i64> {
    const MAX_DEPTH: u32 = 8;
    if depth > MAX_DEPTH {
        return None;
    }
    if let Some(v) = eval(e, env, handler).as_int() {
        return Some(v);
    }
    match e {
        Expr::Name(n) => upper_bound(definitions.get(n)?, definitions, env, handler, depth + 1),
        Expr::Call(call) if call.args.len() >= 2 && call.kwargs.is_empty() => {
            let bounds = call.args.iter().map(|a| upper_bound(a, definitions, env, handler, depth + 1));
            match call.func.dotted()?.rsplit('.').next()? {
                // The least of the known bounds bounds the least.
                "min" => bounds.flatten().min(),
                // The greatest bounds the greatest only when every argument
                // is bounded.
                "max" => bounds.collect::<Option<Vec<i64>>>()?.into_iter().max(),
                _ => None,
            }
        }
        _ => None,
    }
}
