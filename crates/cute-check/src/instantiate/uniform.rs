//! Whether a value that can differ between lanes is, in fact, the same in
//! every lane lane 1 stands in for.
//!
//! Lane 1 stands in for lanes 2 to 30 of its warp only while nothing it
//! meets can set them apart (see `StandIn`). A condition on the thread
//! index often cannot in practice: `if tidx == 0:` is false in every one of
//! them, `if tidx < 64:` decides whole warps. Such a condition is evaluated
//! for each of those lanes from the definitions of the lane-dependent names
//! it reads (`lane = tidx % 32`, `tidx, _, _ = cute.arch.thread_idx()`),
//! substituted until only the thread-index calls and names that hold the
//! same value in every lane remain; when every lane decides it as lane 1
//! did, lane 1 goes on standing in for them.
//!
//! Only what is sure to hold the value it had when the lanes computed their
//! names is substituted: names assigned once, at the top level of the kernel
//! body, from expressions of the thread index, constants, arithmetic and
//! such names; parameters and the module's constants. Anything else (a
//! helper's code, a call, a name assigned twice or inside a loop) leaves the
//! lanes apart, as before.

use std::collections::BTreeSet;

use cute_ir::api::Api;
use cute_ir::ast::{Call, Expr, FunctionDef, Stmt, StmtKind, Target};
use cute_ir::eval::{self, eval, CallHandler, Env, Value};
use rustc_hash::FxHashMap as HashMap;

/// Where a thread is: what the thread-index calls return in it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Place {
    pub cta: u32,
    pub tid: u32,
    pub block: [u32; 3],
    pub grid: Option<[u32; 3]>,
    pub cluster: [u32; 3],
    pub cluster_base: u32,
    pub ctas: u32,
}

impl Place {
    /// The value of a call that reads the thread's place, `None` for any
    /// other.
    pub fn index(&self, api: Api) -> Option<Value> {
        let ints = |a: u32, b: u32, c: u32| Value::Tuple(vec![Value::Int(a as i64), Value::Int(b as i64), Value::Int(c as i64)]);
        Some(match api {
            Api::ThreadIdx => {
                let [bx, by, _] = self.block;
                let t = self.tid;
                ints(t % bx, (t / bx) % by, t / (bx * by))
            }
            Api::ThreadIdxX => Value::Int((self.tid % self.block[0]) as i64),
            Api::WarpIdx => Value::Int((self.tid / 32) as i64),
            Api::LaneIdx => Value::Int((self.tid % 32) as i64),
            Api::BlockIdx => match self.grid {
                Some([gx, gy, _]) => {
                    let c = self.cta;
                    ints(c % gx, (c / gx) % gy, c / (gx * gy))
                }
                None => Value::Tuple(vec![Value::unknown("the block index"); 3]),
            },
            Api::ClusterRank => Value::Int((self.cta - self.cluster_base) as i64),
            Api::BlockInClusterIdx => {
                let [cx, cy, _] = self.cluster;
                let c = self.cta - self.cluster_base;
                ints(c % cx, (c / cx) % cy, c / (cx * cy))
            }
            Api::ClusterSize => Value::Int(self.ctas as i64),
            _ => return None,
        })
    }
}

/// A name's single definition: the expression assigned and, for a name
/// unpacked from a tuple, where in it.
#[derive(Clone, Debug)]
struct Definition<'k> {
    value: &'k Expr,
    path: Vec<usize>,
}

/// The kernel body's names that keep one value once assigned.
pub(super) struct Definitions<'k> {
    /// Names assigned exactly once, at the top level of the body.
    once: HashMap<String, Definition<'k>>,
    /// Every name (and `base.attr`) assigned anywhere in the body.
    assigned: BTreeSet<String>,
}

impl<'k> Definitions<'k> {
    pub fn of(kernel: &'k FunctionDef) -> Self {
        let mut counts: HashMap<String, usize> = HashMap::default();
        count_assignments(&kernel.body, &mut counts);
        let mut once = HashMap::default();
        for s in &kernel.body {
            if let StmtKind::Assign { targets, value } = &s.kind {
                for t in targets {
                    top_level(t, value, Vec::new(), &counts, &mut once);
                }
            }
        }
        Definitions { once, assigned: counts.into_keys().collect() }
    }

    /// `e` with every lane-dependent name replaced by its definition, or
    /// `None` where that cannot be done safely. `in_definition`: `e` is
    /// (part of) a definition, evaluated later than it was assigned, so the
    /// names it reads must not have changed since.
    pub fn substitute(&self, e: &Expr, lane_dependent: &BTreeSet<String>, in_definition: bool, depth: u32) -> Option<Expr> {
        if depth > 16 {
            return None;
        }
        let sub = |x: &Expr| self.substitute(x, lane_dependent, in_definition, depth + 1);
        let boxed = |x: &Expr| sub(x).map(Box::new);
        Some(match e {
            Expr::Name(n) if lane_dependent.contains(n) => {
                let Definition { value, path } = self.once.get(n)?;
                let mut v = self.substitute(value, lane_dependent, true, depth + 1)?;
                for &i in path {
                    v = Expr::Subscript { base: Box::new(v), index: Box::new(Expr::Int(i as i64)) };
                }
                v
            }
            Expr::Name(n) => {
                if in_definition && self.assigned.contains(n) && !self.once.contains_key(n) {
                    return None;
                }
                e.clone()
            }
            Expr::Int(_) | Expr::Float | Expr::Bool(_) | Expr::Str(_) | Expr::None => e.clone(),
            Expr::Binary { op, lhs, rhs } => Expr::Binary { op: *op, lhs: boxed(lhs)?, rhs: boxed(rhs)? },
            Expr::Compare { op, lhs, rhs } => Expr::Compare { op: *op, lhs: boxed(lhs)?, rhs: boxed(rhs)? },
            Expr::BoolOp { and, lhs, rhs } => Expr::BoolOp { and: *and, lhs: boxed(lhs)?, rhs: boxed(rhs)? },
            Expr::Unary { op, operand } => Expr::Unary { op: *op, operand: boxed(operand)? },
            Expr::IfExp { cond, then, orelse } => Expr::IfExp { cond: boxed(cond)?, then: boxed(then)?, orelse: boxed(orelse)? },
            Expr::Tuple(items) => Expr::Tuple(items.iter().map(sub).collect::<Option<_>>()?),
            Expr::Subscript { base, index } => Expr::Subscript { base: boxed(base)?, index: boxed(index)? },
            // An attribute of a name that no statement of the body assigns
            // to (`self.threads_per_warp_group`).
            Expr::Attr { base, attr } => {
                let dotted = e.dotted()?;
                let root = dotted.split('.').next().unwrap_or_default();
                if lane_dependent.contains(root) || (in_definition && (self.assigned.contains(root) || self.assigned.contains(&dotted))) {
                    return None;
                }
                Expr::Attr { base: base.clone(), attr: attr.clone() }
            }
            Expr::Call(c) if pure_index_call(c) => {
                let args = c.args.iter().map(sub).collect::<Option<Vec<_>>>()?;
                if !c.kwargs.is_empty() {
                    return None;
                }
                Expr::Call(Box::new(Call { args, ..(**c).clone() }))
            }
            _ => return None,
        })
    }
}

/// Calls a substituted expression may keep: the thread-index reads, casts
/// and `make_warp_uniform`, which [`LaneEvaluator`] evaluates without a
/// thread.
fn pure_index_call(c: &Call) -> bool {
    matches!(
        Api::of_call(c),
        Some(
            Api::ThreadIdx
                | Api::ThreadIdxX
                | Api::WarpIdx
                | Api::LaneIdx
                | Api::BlockIdx
                | Api::ClusterRank
                | Api::BlockInClusterIdx
                | Api::ClusterSize
                | Api::MakeWarpUniform
                | Api::IntCast
                | Api::ConstExpr
        )
    )
}

fn count_assignments(stmts: &[Stmt], counts: &mut HashMap<String, usize>) {
    let add = |t: &Target, counts: &mut HashMap<String, usize>| {
        let mut names = Vec::new();
        t.collect_defs(&mut names);
        for n in names {
            *counts.entry(n).or_default() += 1;
        }
    };
    for s in stmts {
        match &s.kind {
            StmtKind::Assign { targets, .. } => targets.iter().for_each(|t| add(t, counts)),
            StmtKind::AugAssign { target, .. } => add(target, counts),
            StmtKind::For { target, body, .. } => {
                // A loop's target takes many values.
                add(target, counts);
                add(target, counts);
                count_assignments(body, counts);
            }
            StmtKind::If { then, orelse, .. } => {
                count_assignments(then, counts);
                count_assignments(orelse, counts);
            }
            StmtKind::While { body, .. } => count_assignments(body, counts),
            StmtKind::With { items, body } => {
                items.iter().filter_map(|(_, t)| t.as_ref()).for_each(|t| add(t, counts));
                count_assignments(body, counts);
            }
            _ => {}
        }
    }
}

fn top_level<'k>(t: &Target, value: &'k Expr, path: Vec<usize>, counts: &HashMap<String, usize>, once: &mut HashMap<String, Definition<'k>>) {
    match t {
        Target::Name(n) if counts.get(n) == Some(&1) => {
            once.insert(n.clone(), Definition { value, path });
        }
        Target::Tuple(items) => {
            for (i, item) in items.iter().enumerate() {
                let mut p = path.clone();
                p.push(i);
                top_level(item, value, p, counts, once);
            }
        }
        _ => {}
    }
}

/// Evaluates a substituted expression as another lane would: the
/// thread-index calls answer for its place, names not bound are the
/// module's constants, and any other call makes the evaluation fail.
pub(super) struct LaneEvaluator<'g> {
    pub place: Place,
    pub globals: &'g Env,
    pub failed: bool,
}

impl CallHandler for LaneEvaluator<'_> {
    fn call(&mut self, call: &Call, _func: &Value, args: Vec<Value>, kwargs: Vec<(String, Value)>, _env: &Env) -> Value {
        let value = match Api::of_call(call) {
            Some(Api::IntCast | Api::ConstExpr) => eval::pure_call(call, &args, &kwargs),
            Some(Api::MakeWarpUniform) => args.into_iter().next(),
            Some(api) => self.place.index(api),
            None => None,
        };
        value.unwrap_or_else(|| {
            self.failed = true;
            Value::unknown("a call another lane would make")
        })
    }

    fn unbound(&mut self, name: &String) -> Value {
        self.globals.get(name).cloned().unwrap_or_else(|| Value::unknown(format!("`{name}`")))
    }
}

/// Whether `substituted` decides (or, `as_value`, evaluates) in the lanes
/// `tids` as `lane1` did in lane 1, whose names `env` holds.
pub(super) fn same_in_lanes(
    substituted: &Expr,
    lane1: &Value,
    as_value: bool,
    env: &Env,
    globals: &Env,
    place: Place,
    tids: impl Iterator<Item = u32>,
) -> bool {
    for tid in tids {
        let mut lane = LaneEvaluator { place: Place { tid, ..place }, globals, failed: false };
        let v = eval(substituted, env, &mut lane);
        let same = if as_value { v == *lane1 } else { v.as_bool() == lane1.as_bool() };
        if lane.failed || !same {
            return false;
        }
    }
    true
}
