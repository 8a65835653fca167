//! The block and cluster shapes a kernel is checked with when its launch's
//! do not resolve, and the host values computed from them.
//!
//! The block assumed has 128 threads, or the whole warp groups that reach the
//! highest warp the kernel's role tests select (see `roles`). The cluster
//! assumed has 2 CTAs if the kernel talks to its peers, or 1 when it does so
//! through a `cutlass.pipeline` created over a cluster layout (its multicast
//! signals are not modelled) or does not talk to them at all. The findings
//! state what was assumed.
//!
//! The CTAs per cluster are often a constructor argument that comes from
//! outside the file (`DenseGemmKernel(..., cluster_shape_mn)` called from a
//! command line), and the host code derives arrival counts from that same
//! argument (`self.num_mcast_ctas_a = self.cluster_shape_mn[1]`, a consumer
//! group's size); the threads per CTA likewise (`num_warps =
//! self.threads_per_cta // 32`). The checker models such a kernel with an
//! assumed shape ([`ASSUMED_THREADS_PER_CTA`], [`cluster_when_unknown`]);
//! counts computed from any other shape would mix two launches in one model.
//! So the launch's `block=` and `cluster=` expressions are solved for the
//! assumed shapes (`(*self.cluster_shape_mn, 1)` = (1, 1, 1) gives
//! `self.cluster_shape_mn` = (1, 1)) and the host code runs again with those
//! values in place of the unknown ones it assigns to those names. A name
//! assigned from another unknown (`self.cluster_shape_mnk =
//! (*self.cluster_shape_mn, 1)`) is solved in turn, and the host code runs
//! again until no new name is solved, a few times at most. The names whose
//! assumed value was taken are stated. Under one CTA per cluster, a tcgen05
//! MMA the host makes whose CTA group is not known spans one CTA
//! (`layout::with_single_cta_mmas`). If a shape's argument cannot be solved
//! for (`block=[max(n, 64), 1, 1]`), that shape stays unknown on the host,
//! and so do the counts computed from it.

use std::collections::{BTreeMap, BTreeSet};

use crate::api::{self, Api};
use crate::ast::{Expr, FunctionDef, Target, UnOp};
use crate::eval::Value;

/// Threads per CTA a kernel is checked with when its launch's block shape is
/// not known: four warps, a common size and enough for the roles most
/// kernels dispatch on.
pub const ASSUMED_THREADS_PER_CTA: u32 = 128;

/// The cluster a kernel is checked with when its launch's is unknown, and
/// the note that says so (`None` when the shape cannot matter: the kernel
/// never talks to another CTA).
pub struct AssumedCluster {
    pub shape: [u32; 3],
    pub note: Option<&'static str>,
}

pub fn cluster_when_unknown(kernel: &FunctionDef) -> AssumedCluster {
    let uses_peers = uses_cluster_api(kernel);
    if uses_peers && creates_clustered_pipeline(kernel) {
        // Their signals across a cluster are multicast by masks the checker
        // does not derive: check the one-CTA cluster, which every such
        // kernel supports.
        AssumedCluster {
            shape: [1, 1, 1],
            note: Some("the cluster shape is unknown: assuming 1 CTA per cluster (the pipelines' multicast signals across a cluster are not modelled)"),
        }
    } else if uses_peers {
        AssumedCluster { shape: [2, 1, 1], note: Some("the cluster shape is unknown: assuming 2 CTAs per cluster") }
    } else {
        AssumedCluster { shape: [1, 1, 1], note: None }
    }
}

/// Whether the kernel talks to other CTAs of its cluster (then a missing
/// cluster shape matters).
fn uses_cluster_api(kernel: &FunctionDef) -> bool {
    crate::ast::any_call(&kernel.body, |c| match Api::of_call(c) {
        Some(
            Api::MapSharedCluster
            | Api::ClusterRank
            | Api::BlockInClusterIdx
            | Api::ClusterArrive
            | Api::ClusterArriveRelaxed
            | Api::ClusterWait,
        ) => true,
        Some(Api::MbarrierArrive) => api::arg(c, "peer_cta_rank_in_cluster").is_some(),
        _ => false,
    })
}

/// Whether the kernel creates a `cutlass.pipeline` object over a cluster
/// layout (`cta_layout_vmnk=`).
fn creates_clustered_pipeline(kernel: &FunctionDef) -> bool {
    crate::ast::any_call(&kernel.body, |c| {
        Api::of_call(c) == Some(Api::Pipeline)
            && c.func.dotted().is_some_and(|d| d.ends_with(".create"))
            && c.kwargs.iter().any(|(k, _)| k == "cta_layout_vmnk")
    })
}

/// A name host code assigns: a local or parameter, or an attribute of `self`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum HostName {
    Local(String),
    OfSelf(String),
}

impl HostName {
    fn of_expr(e: &Expr) -> Option<HostName> {
        match e {
            Expr::Name(n) => Some(HostName::Local(n.clone())),
            Expr::Attr { base, attr } if matches!(base.as_ref(), Expr::Name(b) if b == "self") => {
                Some(HostName::OfSelf(attr.clone()))
            }
            _ => None,
        }
    }

    fn of_target(t: &Target) -> Option<HostName> {
        match t {
            Target::Name(n) => Some(HostName::Local(n.clone())),
            Target::Attr { base: Expr::Name(b), attr } if b == "self" => Some(HostName::OfSelf(attr.clone())),
            _ => None,
        }
    }
}

impl std::fmt::Display for HostName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HostName::Local(n) => write!(f, "`{n}`"),
            HostName::OfSelf(n) => write!(f, "`self.{n}`"),
        }
    }
}

/// The values host code takes for names it cannot compute, while it runs
/// under an assumed cluster.
#[derive(Default)]
pub(super) struct HostAssumptions {
    values: BTreeMap<HostName, Value>,
    /// Names solved during this run from an assumed one's expression, for
    /// the next run.
    solved: BTreeMap<HostName, Value>,
    /// The names whose assumed value was taken.
    taken: BTreeSet<HostName>,
    /// Whether the cluster assumed has one CTA: then a tcgen05 MMA whose CTA
    /// group is not known spans one CTA (see
    /// [`crate::layout::with_single_cta_mmas`]).
    single_cta: bool,
    /// Whether an MMA was taken to span one CTA so.
    pub(super) single_cta_mmas: bool,
}

impl HostAssumptions {
    pub(super) fn new(values: BTreeMap<HostName, Value>, single_cta: bool) -> HostAssumptions {
        HostAssumptions { values, single_cta, ..HostAssumptions::default() }
    }

    /// A value a call in host code returned, as the assumed cluster has it.
    pub(super) fn returned(&mut self, value: Value) -> Value {
        if !self.single_cta {
            return value;
        }
        match crate::layout::with_single_cta_mmas(&value, 0) {
            Some(single) => {
                self.single_cta_mmas = true;
                single
            }
            None => value,
        }
    }

    /// `target = expr` is about to bind `value`: when `target` has an
    /// assumed value and `value` is not known in full, binds that instead,
    /// and solves `expr` for it (names it reads get values for the next run).
    pub(super) fn replace(&mut self, target: &Target, expr: Option<&Expr>, value: &mut Value) {
        let Some(name) = HostName::of_target(target) else { return };
        let Some(assumed) = self.values.get(&name) else { return };
        if !partly_unknown(value) {
            return;
        }
        *value = assumed.clone();
        let mut more = BTreeMap::new();
        if expr.is_some_and(|e| solve(e, assumed, &mut more)) {
            for (n, v) in more {
                if !self.values.contains_key(&n) {
                    self.solved.entry(n).or_insert(v);
                }
            }
        }
        self.taken.insert(name);
    }

    /// The values the next run should assume: these and the names solved
    /// in this run; `None` when none was (another run would change
    /// nothing).
    pub(super) fn next_run(&mut self) -> Option<BTreeMap<HostName, Value>> {
        if self.solved.is_empty() {
            return None;
        }
        let mut values = self.values.clone();
        values.append(&mut self.solved);
        Some(values)
    }

    /// What was assumed, for the note: "`self.cluster_shape_mn` = (1, 1)".
    pub(super) fn describe_taken(&self) -> Vec<String> {
        self.taken.iter().map(|n| format!("{n} = {}", show(&self.values[n]))).collect()
    }
}

/// Solves `expr` = `value` for the names it reads: a name or `self.attr`
/// (bound to the value), a tuple with at most one starred item (item by
/// item, the starred one taking what the others leave), an integer (must be
/// equal), a conditional expression (its first branch: running again with
/// the solution decides the condition). False when there is no solution of
/// that form.
pub(super) fn solve(expr: &Expr, value: &Value, out: &mut BTreeMap<HostName, Value>) -> bool {
    if let Some(name) = HostName::of_expr(expr) {
        return match out.get(&name) {
            Some(v) => v == value,
            None => {
                out.insert(name, value.clone());
                true
            }
        };
    }
    match expr {
        Expr::Int(i) => value.as_int() == Some(*i),
        Expr::IfExp { then, .. } => solve(then, value, out),
        Expr::Tuple(items) => {
            let Value::Tuple(values) = value else { return false };
            let is_starred = |e: &Expr| matches!(e, Expr::Unary { op: UnOp::Splat, .. });
            match items.iter().position(is_starred) {
                None => items.len() == values.len() && items.iter().zip(values).all(|(e, v)| solve(e, v, out)),
                Some(star) => {
                    let after = items.len() - star - 1;
                    if items[star + 1..].iter().any(is_starred) || values.len() < star + after {
                        return false;
                    }
                    let Expr::Unary { operand, .. } = &items[star] else { return false };
                    let rest = Value::Tuple(values[star..values.len() - after].to_vec());
                    items[..star].iter().zip(&values[..star]).all(|(e, v)| solve(e, v, out))
                        && solve(operand, &rest, out)
                        && items[star + 1..].iter().zip(&values[values.len() - after..]).all(|(e, v)| solve(e, v, out))
                }
            }
        }
        _ => false,
    }
}

fn partly_unknown(v: &Value) -> bool {
    match v {
        Value::Unknown(..) => true,
        Value::Tuple(items) => items.iter().any(partly_unknown),
        Value::Dict(pairs) => pairs.iter().any(|(k, v)| partly_unknown(k) || partly_unknown(v)),
        _ => false,
    }
}

fn show(v: &Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Tuple(items) if items.len() == 1 => format!("({},)", show(&items[0])),
        Value::Tuple(items) => format!("({})", items.iter().map(show).collect::<Vec<_>>().join(", ")),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_expr(text: &str) -> Expr {
        let source = format!("x = {text}\n");
        let module = crate::lower_text(&source).expect("parses");
        match &module.top_level[0].kind {
            crate::ast::StmtKind::Assign { value, .. } => value.clone(),
            other => panic!("not an assignment: {other:?}"),
        }
    }

    fn ones(n: usize) -> Value {
        Value::Tuple(vec![Value::Int(1); n])
    }

    #[test]
    fn a_starred_item_takes_what_the_others_leave() {
        let mut out = BTreeMap::new();
        assert!(solve(&parse_expr("(*self.cluster_shape_mn, 1)"), &ones(3), &mut out));
        assert_eq!(out.get(&HostName::OfSelf("cluster_shape_mn".into())), Some(&ones(2)));
    }

    #[test]
    fn a_literal_that_disagrees_has_no_solution() {
        let mut out = BTreeMap::new();
        let two = Value::Tuple(vec![Value::Int(2), Value::Int(1), Value::Int(1)]);
        assert!(!solve(&parse_expr("[1, cluster_n, 1]"), &two, &mut out));
        assert!(solve(&parse_expr("[1, cluster_n, 1] if cluster_n > 1 else None"), &ones(3), &mut out));
        assert_eq!(out.get(&HostName::Local("cluster_n".into())), Some(&Value::Int(1)));
    }

    #[test]
    fn a_name_read_twice_must_take_one_value() {
        let mut out = BTreeMap::new();
        let v = Value::Tuple(vec![Value::Int(2), Value::Int(1)]);
        assert!(!solve(&parse_expr("(c, c)"), &v, &mut out));
    }
}
