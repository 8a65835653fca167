//! Which names and expressions can differ between the lanes of one warp, and
//! which conditions split a warp.
//!
//! An expression varies across lanes when it reads the thread or lane index, or
//! a name assigned from one, except through `warp_idx()`,
//! `make_warp_uniform(...)`, a division by a multiple of the warp size
//! (`tidx // 32`, `tidx >> 5`) or the extent of a tile (`cute.size(...)`). A
//! condition of the kernel's own code that compares its thread index with a
//! warp's edge (`tidx < 64`, the index bound once from `thread_idx()` and the
//! block's x extent a multiple of 32) decides whole warps and splits none. So
//! does a condition unknown in every lane (`tidx < n`, `n` known only at run
//! time), which the scenario decides alike for every thread; and a thread's
//! slice of a tiled MMA, `get_slice(tidx)`, is the same unknown in every lane.
//! Inside a helper, the names that vary are those its lane-dependent parameters
//! reach ([`ThreadRun::helper_scope`]: the parameters given a value that
//! differs between the lanes); a helper's result counts as varying in the
//! helper only when its caller did not already take it so, and an attribute
//! holding a lane-dependent value that outlives the call is not followed.
//! An attribute differs on its own when it was assigned a value that does
//! (`self.x = tidx`), and a namespace (`params = SimpleNamespace(extra=extra,
//! ring=ring)`) member by member: `params.ring`, a buffer each lane writes,
//! does not make `params.extra` differ.

use std::collections::BTreeSet;

use rustc_hash::FxHashMap as HashMap;

use cute_ir::api::Api;
use cute_ir::ast::{Call, Expr, FunctionDef, Stmt, StmtKind, Target};
use cute_ir::eval::{Env, Value};

use super::ThreadRun;

/// What differs between the lanes of a warp, for [`lane_varying_names`].
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum LaneVarying {
    /// A value, or the memory a name refers to (`buf[tidx] = v` makes `buf`
    /// one): where a warp splits, and which elements its lanes touch.
    Contents,
    /// A value as the threads evaluate it, attributes (`self.x`) included:
    /// stores into memory are not values (see `cute_ir::eval::assign`).
    Values {
        /// A thread's slice of a tiled MMA or copy (`tiled_mma.get_slice(tidx)`)
        /// is a value the model gives no meaning, the same unknown in every
        /// lane (the views it partitions are views of their buffer argument),
        /// unless the file defines a `get_slice` of its own.
        opaque_slices: bool,
    },
}

/// Whether an expression can differ between the lanes of one warp: it reads
/// the thread or lane index, or a name that holds one, except through
/// `warp_idx()`, `make_warp_uniform(...)`, or a division by a multiple of the
/// warp size (`tidx // 32`, `tidx >> 5`).
pub(super) fn varies_across_lanes(e: &Expr, varying: &BTreeSet<String>, globals: &Env, what: LaneVarying) -> bool {
    use cute_ir::ast::BinOp;
    // A divisor known to be a multiple of the warp size: a literal, a module
    // constant (`WARP = 32`) or `cute.arch.WARP_SIZE`.
    let warp_multiple = |d: &Expr| -> bool {
        let k = match d {
            Expr::Int(k) => Some(*k),
            Expr::Name(n) => globals.get(n).and_then(Value::as_int),
            Expr::Attr { attr, .. } if attr == "WARP_SIZE" => Some(32),
            _ => None,
        };
        k.is_some_and(|k| k > 0 && k % 32 == 0)
    };
    let varies = |x: &Expr| varies_across_lanes(x, varying, globals, what);
    match e {
        Expr::Name(n) => varying.contains(n),
        Expr::Call(c) => match Api::of_call(c) {
            Some(Api::ThreadIdx | Api::ThreadIdxX | Api::LaneIdx | Api::ElectOne) => true,
            Some(Api::WarpIdx | Api::MakeWarpUniform) => false,
            None if what == (LaneVarying::Values { opaque_slices: true })
                && matches!(&c.func, Expr::Attr { attr, .. } if attr == "get_slice") =>
            {
                false
            }
            // The extent of a tensor or layout (`cute.size(tCrA, mode=[2])`):
            // every thread's partition of a tile has the same shape, only
            // its offset is the thread's.
            None if is_extent_query(c) => c.kwargs.iter().any(|(_, a)| varies(a)) || c.args.iter().skip(1).any(&varies),
            _ => {
                varies(&c.func)
                    || c.args.iter().any(&varies)
                    || c.kwargs.iter().any(|(_, a)| varies(a))
            }
        },
        Expr::Binary { op: BinOp::FloorDiv, rhs, .. } if warp_multiple(rhs) => false,
        Expr::Binary { op: BinOp::Shr, rhs, .. } if matches!(rhs.as_ref(), Expr::Int(k) if *k >= 5) => false,
        Expr::Binary { lhs, rhs, .. } | Expr::Compare { lhs, rhs, .. } | Expr::BoolOp { lhs, rhs, .. } => {
            varies(lhs) || varies(rhs)
        }
        Expr::Unary { operand, .. } => varies(operand),
        Expr::IfExp { cond, then, orelse } => {
            varies(cond) || varies(then) || varies(orelse)
        }
        Expr::Subscript { base, index } => varies(base) || varies(index),
        // An attribute varies with its object, or on its own: one assigned a
        // value that varies (`self.x = tidx`), or a namespace's
        // (`params.ring`, see [`lane_varying_names`]).
        Expr::Attr { base, .. } => varies(base) || e.dotted().is_some_and(|d| varying.contains(&d)),
        Expr::Tuple(items) => items.iter().any(&varies),
        Expr::Int(_) | Expr::Float | Expr::Bool(_) | Expr::Str(_) | Expr::None | Expr::Unknown(_) => false,
    }
}

/// `types.SimpleNamespace(a=..., b=...)`: a record of the values given.
fn is_namespace(c: &Call) -> bool {
    c.qualname.as_deref() == Some("types.SimpleNamespace") && c.args.is_empty()
}

/// `cute.size`, `cute.rank`, `cute.depth`, `cute.cosize`: the extent of
/// what they are given, not its contents.
pub(super) fn is_extent_query(c: &cute_ir::ast::Call) -> bool {
    let qualified = c.qualname.clone().or_else(|| c.func.dotted()).unwrap_or_default();
    let Some(name) = qualified.strip_prefix("cutlass.cute.").or_else(|| qualified.strip_prefix("cute.")) else { return false };
    matches!(name, "size" | "rank" | "depth" | "cosize")
}

/// No name.
pub(super) static EMPTY_NAMES: BTreeSet<String> = BTreeSet::new();

/// The names `kernel` binds once, and only to its thread's index along x
/// (`tidx, _, _ = cute.arch.thread_idx()`, `tidx = thread_idx()[0]`), when
/// the block's x extent is a multiple of the warp size: the lanes of a warp
/// then hold 32 consecutive indices from a multiple of 32. None otherwise
/// (a 48-wide block puts the end of one row and the start of the next in
/// one warp).
pub(super) fn warp_aligned_indices(kernel: &FunctionDef, block: [u32; 3]) -> BTreeSet<String> {
    if block[0] % 32 != 0 {
        return BTreeSet::new();
    }
    let mut bindings: HashMap<String, Vec<Option<(&Target, &Expr)>>> = HashMap::default();
    cute_ir::ast::for_each_binding(&kernel.body, &mut |t, value| {
        for n in t.bound_names() {
            bindings.entry(n).or_default().push(value.map(|v| (t, v)));
        }
    });
    // A parameter is bound by the caller too.
    for p in &kernel.params {
        bindings.entry(p.name.clone()).or_default().push(None);
    }
    let is_call = |e: &Expr, api: Api| matches!(e, Expr::Call(c) if Api::of_call(c) == Some(api));
    bindings
        .into_iter()
        .filter(|(n, bound)| match bound.as_slice() {
            [Some((Target::Name(_), value))] => {
                is_call(value, Api::ThreadIdxX)
                    || matches!(value, Expr::Subscript { base, index } if is_call(base, Api::ThreadIdx) && matches!(**index, Expr::Int(0)))
            }
            [Some((Target::Tuple(items), value))] => {
                is_call(value, Api::ThreadIdx) && matches!(items.first(), Some(Target::Name(first)) if first == n)
            }
            _ => false,
        })
        .map(|(n, _)| n)
        .collect()
}

/// Whether condition `cond` is decided alike by the lanes of a warp
/// although it reads values that differ between them: a thread index
/// (`indices`, see [`warp_aligned_indices`]) compared with a warp's edge
/// (`tidx < 64`, `tidx >= 32`, `tidx <= 31`), or `and`, `or` and `not` of
/// such comparisons and of conditions that do not differ between lanes.
pub(super) fn decides_whole_warps(cond: &Expr, indices: &BTreeSet<String>, varying: &BTreeSet<String>, globals: &Env) -> bool {
    use cute_ir::ast::{CmpOp, UnOp};
    let constant = |e: &Expr| match e {
        Expr::Int(k) => Some(*k),
        Expr::Name(n) => globals.get(n).and_then(Value::as_int),
        _ => None,
    };
    let index = |e: &Expr| matches!(e, Expr::Name(n) if indices.contains(n));
    match cond {
        Expr::Compare { op, lhs, rhs } => {
            // Put the index on the left: `c > tidx` is `tidx < c`.
            let (op, bound) = match (index(lhs), index(rhs)) {
                (true, false) => (*op, rhs),
                (false, true) => match op {
                    CmpOp::Lt => (CmpOp::Gt, lhs),
                    CmpOp::Le => (CmpOp::Ge, lhs),
                    CmpOp::Gt => (CmpOp::Lt, lhs),
                    CmpOp::Ge => (CmpOp::Le, lhs),
                    _ => return false,
                },
                _ => return false,
            };
            // `tidx < c` and `tidx >= c` split at `c`; `tidx <= c` and
            // `tidx > c` at `c + 1`.
            let edge = match (op, constant(bound)) {
                (CmpOp::Lt | CmpOp::Ge, Some(c)) => c,
                (CmpOp::Le | CmpOp::Gt, Some(c)) => c + 1,
                _ => return false,
            };
            edge % 32 == 0
        }
        Expr::BoolOp { lhs, rhs, .. } => [lhs, rhs].into_iter().all(|side| {
            decides_whole_warps(side, indices, varying, globals) || !varies_across_lanes(side, varying, globals, LaneVarying::Contents)
        }),
        Expr::Unary { op: UnOp::Not, operand } => decides_whole_warps(operand, indices, varying, globals),
        _ => false,
    }
}

/// The expressions a function's `return` statements give back.
pub(super) fn returned(stmts: &[Stmt]) -> Vec<&Expr> {
    let mut out = Vec::new();
    for s in stmts {
        match &s.kind {
            StmtKind::Return(Some(e)) => out.push(e),
            StmtKind::If { then, orelse, .. } => {
                out.extend(returned(then));
                out.extend(returned(orelse));
            }
            StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. } => out.extend(returned(body)),
            _ => {}
        }
    }
    out
}

/// Names of a kernel or helper that hold a lane-dependent value: `seed` (a
/// helper's parameters given one), and names assigned (anywhere) from an
/// expression that varies across lanes.
pub(super) fn lane_varying_names(kernel: &FunctionDef, globals: &Env, what: LaneVarying, seed: BTreeSet<String>) -> BTreeSet<String> {
    let mut assigns: Vec<(Vec<String>, &Expr)> = Vec::new();
    fn defs(t: &Target, what: LaneVarying, out: &mut Vec<String>) {
        match t {
            Target::Subscript { .. } if matches!(what, LaneVarying::Values { .. }) => {}
            Target::Tuple(items) => items.iter().for_each(|t| defs(t, what, out)),
            t => t.collect_defs(out),
        }
    }
    fn collect<'a>(stmts: &'a [Stmt], what: LaneVarying, out: &mut Vec<(Vec<String>, &'a Expr)>) {
        for s in stmts {
            match &s.kind {
                // A namespace (`params = SimpleNamespace(extra=extra,
                // ring=ring)`) varies attribute by attribute: `params.extra`
                // does not because `params.ring` does.
                StmtKind::Assign { targets, value: Expr::Call(c) } if matches!(targets.as_slice(), [Target::Name(_)]) && is_namespace(c) => {
                    let [Target::Name(name)] = targets.as_slice() else { unreachable!("matched") };
                    out.extend(c.kwargs.iter().map(|(k, v)| (vec![format!("{name}.{k}")], v)));
                }
                StmtKind::Assign { targets, value } => {
                    let mut names = Vec::new();
                    targets.iter().for_each(|t| defs(t, what, &mut names));
                    out.push((names, value));
                }
                StmtKind::AugAssign { target, value, .. } => {
                    let mut names = Vec::new();
                    defs(target, what, &mut names);
                    out.push((names, value));
                }
                StmtKind::If { then, orelse, .. } => {
                    collect(then, what, out);
                    collect(orelse, what, out);
                }
                StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. } => collect(body, what, out),
                _ => {}
            }
        }
    }
    collect(&kernel.body, what, &mut assigns);
    let mut varying = seed;
    loop {
        let before = varying.len();
        for (defs, value) in &assigns {
            if varies_across_lanes(value, &varying, globals, what) {
                varying.extend(defs.iter().cloned());
            }
        }
        if varying.len() == before {
            return varying;
        }
    }
}

impl<'a> ThreadRun<'a> {
    /// Whether a condition can differ between the lanes of one warp
    /// (remembered per expression: it depends on the kernel alone, and every
    /// thread asks it of every condition it meets). A condition of the
    /// kernel's own code that compares its thread index with a warp's edge
    /// (`if tidx < 32:`) decides whole warps.
    pub(super) fn is_lane_varying(&mut self, cond: &Expr) -> bool {
        let (lane_varying, globals) = (self.lane_varying, self.globals);
        let indices = if self.inline_depth == 0 { self.thread_indices } else { &EMPTY_NAMES };
        *self.shared.lane_varying_conditions.entry(cond as *const Expr as usize).or_insert_with(|| {
            varies_across_lanes(cond, lane_varying, globals, LaneVarying::Contents)
                && !decides_whole_warps(cond, indices, lane_varying, globals)
        })
    }

    /// Whether the value of `e` can differ between lanes, in the kernel or
    /// in the helper being inlined (remembered per expression and scope).
    pub(super) fn varies_here(&mut self, e: &Expr) -> bool {
        let scope: &BTreeSet<String> = self.helper_scopes.last().map_or(self.lane_dependent, |s| s);
        let key = (e as *const Expr as usize, scope as *const BTreeSet<String> as usize);
        if let Some(&v) = self.shared.lane_dependent_exprs.get(&key) {
            return v;
        }
        let v = varies_across_lanes(e, scope, self.globals, self.lane_values);
        self.shared.lane_dependent_exprs.insert(key, v);
        v
    }

    /// The names of helper `f`, called by `call`, whose value can differ
    /// between lanes: its parameters given such a value and what its body
    /// computes from them or from the lane. `None` (this lane is then one
    /// another may not run like) where that cannot be followed: arguments
    /// that do not map onto parameters, or a lane-dependent value stored
    /// into an attribute, which outlives the call.
    ///
    /// `same_in_lanes` tells, for each of the call's arguments and then its
    /// keyword arguments, whether it has this lane's value in every lane it
    /// stands in for: such a parameter is not lane-dependent in the helper
    /// (`wg_idx = tidx // 128` handed to a helper that branches on it),
    /// although the caller's argument is.
    pub(super) fn helper_scope(&mut self, call: &Call, f: &FunctionDef, bound: bool, same_in_lanes: &[bool]) -> Option<std::sync::Arc<BTreeSet<String>>> {
        let scope: &BTreeSet<String> = self.helper_scopes.last().map_or(self.lane_dependent, |s| s);
        // Attributes holding lane-dependent values (`self.x = tidx`) keep
        // their names inside a method of the same object; an object handed
        // over under another name is not followed.
        let attributes: Vec<String> = scope.iter().filter(|n| n.contains('.')).cloned().collect();
        let holds_attributes = |e: &Expr, as_name: &str| match e {
            Expr::Name(b) => b != as_name && attributes.iter().any(|a| a.starts_with(&format!("{b}."))),
            _ => false,
        };
        let mut formal = f.params.iter();
        if bound && f.is_method() {
            formal.next();
            if let Expr::Attr { base, .. } = &call.func {
                if holds_attributes(base, "self") || self.varies_here(base) {
                    return None;
                }
            }
        }
        let formal: Vec<&cute_ir::ast::Param> = formal.collect();
        for (i, a) in call.args.iter().enumerate() {
            if holds_attributes(a, formal.get(i).map_or("", |p| p.name.as_str())) {
                return None;
            }
        }
        if call.kwargs.iter().any(|(k, a)| holds_attributes(a, k)) {
            return None;
        }
        let mut seed: Vec<String> = attributes;
        // The caller takes the call's value as lane-dependent when an
        // argument is (whatever the helper does with it).
        let mut caller_takes_lane_dependent = false;
        let same = |i: usize| same_in_lanes.get(i).copied().unwrap_or(false);
        for (i, a) in call.args.iter().enumerate() {
            if self.varies_here(a) {
                caller_takes_lane_dependent = true;
                match formal.get(i) {
                    _ if same(i) => {}
                    Some(p) if !matches!(a, Expr::Unary { op: cute_ir::ast::UnOp::Splat, .. }) => seed.push(p.name.clone()),
                    _ => return None,
                }
            }
        }
        for (n, (k, a)) in call.kwargs.iter().enumerate() {
            if self.varies_here(a) {
                caller_takes_lane_dependent = true;
                if same(call.args.len() + n) {
                    continue;
                }
                match formal.iter().find(|p| p.name == *k) {
                    Some(p) => seed.push(p.name.clone()),
                    None => return None,
                }
            }
        }
        seed.sort();
        let key = (f as *const FunctionDef as usize, seed);
        if let Some(scope) = self.shared.helper_scopes.get(&key) {
            return scope.clone();
        }
        let seed: BTreeSet<String> = key.1.iter().cloned().collect();
        let names = lane_varying_names(f, self.globals, self.lane_values, seed.clone());
        let stores_attribute = names.iter().any(|n| n.contains('.') && !seed.contains(n));
        // What the helper returns reaches the caller, whose names were
        // worked out without looking into the helper (`if lane() < 16`).
        // A call given a lane-dependent argument is lane-dependent there
        // already.
        let returns_lane = !caller_takes_lane_dependent
            && returned(&f.body).iter().any(|e| varies_across_lanes(e, &names, self.globals, self.lane_values));
        let scope = (!stores_attribute && !returns_lane).then(|| std::sync::Arc::new(names));
        self.shared.helper_scopes.insert(key, scope.clone());
        scope
    }
}
