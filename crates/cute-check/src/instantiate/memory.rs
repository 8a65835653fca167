//! What a thread does to memory, recorded next to its synchronization for
//! the memory-ordering analysis (`crate::memory`): loads and stores of
//! shared and global buffers, TMA and bulk copies (the async proxy), fences,
//! and the atomics and loads of synchronization variables, including spin
//! loops, which are blocking reads.
//!
//! Buffers are known by where their pointer comes from: a shared-memory
//! allocation of this kernel, or a kernel parameter annotated as a tensor or
//! pointer. Anything else (register fragments, values of unknown origin) is
//! not memory the analysis can reason about and is left out.

use cute_ir::api::{self, Api};
use cute_ir::ast::{CmpOp, Expr, Target};
use cute_ir::eval::{eval, Env, GmemRef, Value};
use cute_syntax::TextRange;

use super::ThreadRun;
use crate::model::*;

/// Buffers by identity: (space tag, name, CTA for shared memory).
#[derive(Default)]
pub(super) struct BufferTable {
    keys: std::collections::HashMap<(String, u32, bool), BufferIx>,
    pub(super) list: Vec<Buffer>,
}

impl BufferTable {
    fn intern(&mut self, name: &str, display: &str, space: Space) -> BufferIx {
        let key = match &space {
            Space::Shared { cta } => (name.to_string(), *cta, true),
            Space::Global => (name.to_string(), 0, false),
        };
        if let Some(&ix) = self.keys.get(&key) {
            return ix;
        }
        let ix = self.list.len() as BufferIx;
        self.list.push(Buffer { name: display.to_string(), space });
        self.keys.insert(key, ix);
        ix
    }
}

/// Calls that return a view of (part of) their buffer argument.
const VIEW_FUNCTIONS: &[&str] = &[
    "local_tile",
    "local_partition",
    "group_modes",
    "flat_divide",
    "zipped_divide",
    "logical_divide",
    "tiled_divide",
    "composition",
    "make_tensor",
    "recast_tensor",
    "partition_S",
    "partition_D",
    "filter_zeros",
    "coalesce",
    "domain_offset",
    "flatten",
    "with_layout",
];

/// Generic copies between tensors (the threads move the data themselves).
const GENERIC_COPIES: &[&str] = &["autovec_copy", "basic_copy", "basic_copy_if"];

impl ThreadRun<'_> {
    /// Record a memory operation. Like synchronization, a converged warp
    /// acts through lane 0.
    pub(super) fn record_mem(&mut self, kind: MemKind, site: TextRange) {
        if self.converged() && self.lane() != 0 {
            return;
        }
        if self.memory.len() >= self.options.max_ops_per_thread {
            return;
        }
        let after = self.ops.len() as u32;
        let warp_point = self.warp_point;
        self.memory.push(MemOp { after, warp_point, kind, site });
    }

    /// The buffer a value points into, and the stage of its view.
    fn buffer_of(&mut self, v: &Value, display: &str) -> Option<(BufferIx, Option<i64>)> {
        match v {
            Value::Smem(s) => {
                let cta = s.cta.unwrap_or(self.cta);
                // `p + k` and `p[k]` with `k` unknown are still `p`'s buffer.
                let root = s.alloc.split(['+', '[']).next().unwrap_or(&s.alloc);
                let ix = self.shared.buffers.intern(root, display, Space::Shared { cta });
                Some((ix, s.stage))
            }
            Value::Gmem(g) => Some((self.shared.buffers.intern(&g.param, &g.param, Space::Global), g.stage)),
            _ => None,
        }
    }

    /// Loads of buffers in an expression (`stile[row, col]`).
    pub(super) fn record_reads(&mut self, e: &Expr, env: &Env, site: TextRange) {
        let mut found = Vec::new();
        let mut decide = |cond: &Expr| eval(cond, env, self).as_bool();
        collect_subscripts(e, &mut decide, &mut found);
        for (base, index) in found {
            self.record_access(base, index, env, site, false);
        }
    }

    /// A store through a subscript target (`out[tidx] = v`), and for an
    /// augmented assignment the load it implies.
    pub(super) fn record_store(&mut self, target: &Target, env: &Env, site: TextRange, also_reads: bool) {
        match target {
            Target::Subscript { base, index } => {
                if also_reads {
                    self.record_access(base, index, env, site, false);
                }
                self.record_reads(index, env, site);
                self.record_access(base, index, env, site, true);
            }
            Target::Tuple(items) => items.iter().for_each(|t| self.record_store(t, env, site, also_reads)),
            _ => {}
        }
    }

    fn record_access(&mut self, base: &Expr, index: &Expr, env: &Env, site: TextRange, write: bool) {
        // Only names and attributes are evaluated again: they have no effects.
        if base.dotted().is_none() {
            return;
        }
        let b = eval(base, env, self);
        let display = base.dotted().unwrap_or_default();
        let Some((buffer, stage)) = self.buffer_of(&b, &display) else { return };
        let i = eval(index, env, self);
        let mut region = region_of_index(&i);
        if region.stage.is_none() {
            region.stage = stage;
        }
        self.record_mem(MemKind::Access { buffer, region, write }, site);
    }

    /// `cute.copy(atom, src, dst, ...)`: a TMA load when it names the barrier
    /// its bytes complete on, a TMA store when its atom is a TMA or bulk
    /// atom and it reads shared memory, otherwise a copy by the threads.
    pub(super) fn record_copy(&mut self, call: &cute_ir::ast::Call, args: &[Value], kwargs: &[(String, Value)]) {
        let site = call.range;
        let (Some(src), Some(dst)) = (args.get(1), args.get(2)) else { return };
        let name = |i: usize| call.args.get(i).and_then(Expr::dotted).unwrap_or_else(|| "tensor".to_string());
        let barrier = kwargs.iter().find(|(k, _)| k == "tma_bar_ptr" || k == "mbar_ptr").map(|(_, v)| v.clone());
        let atom = call.args.first().and_then(Expr::dotted).unwrap_or_default().to_ascii_lowercase();
        let async_atom = atom.contains("tma") || atom.contains("bulk");
        if let Some(bar) = barrier {
            let barrier = match &bar {
                Value::Smem(_) => Some(self.barrier_of(&bar, api::arg(call, "tma_bar_ptr").or(api::arg(call, "mbar_ptr")), site)),
                _ => None,
            };
            if let Some((buffer, stage)) = self.buffer_of(dst, &name(2)) {
                if matches!(dst, Value::Smem(_)) {
                    let region = Region { stage, element: Element::Whole };
                    self.record_mem(MemKind::AsyncCopy { buffer, region, write: true, barrier }, site);
                }
            }
            return;
        }
        if async_atom && matches!(src, Value::Smem(_)) {
            if let Some((buffer, stage)) = self.buffer_of(src, &name(1)) {
                let region = Region { stage, element: Element::Whole };
                self.record_mem(MemKind::AsyncCopy { buffer, region, write: false, barrier: None }, site);
            }
            return;
        }
        self.record_generic_copy(src, dst, &name(1), &name(2), site);
    }

    fn record_generic_copy(&mut self, src: &Value, dst: &Value, src_name: &str, dst_name: &str, site: TextRange) {
        if let Some((buffer, stage)) = self.buffer_of(src, src_name) {
            self.record_mem(MemKind::Access { buffer, region: Region { stage, element: Element::Whole }, write: false }, site);
        }
        if let Some((buffer, stage)) = self.buffer_of(dst, dst_name) {
            self.record_mem(MemKind::Access { buffer, region: Region { stage, element: Element::Whole }, write: true }, site);
        }
    }

    /// Calls the API table does not know that still touch memory or make a
    /// view of it. Returns the value of the call when it is a view.
    pub(super) fn memory_call(&mut self, call: &cute_ir::ast::Call, receiver: Option<&Value>, args: &[Value]) -> Option<Value> {
        let func = call.func.dotted()?;
        let last = func.rsplit('.').next().unwrap_or(&func);
        if GENERIC_COPIES.contains(&last) {
            let name = |i: usize| call.args.get(i).and_then(Expr::dotted).unwrap_or_else(|| "tensor".to_string());
            if let (Some(src), Some(dst)) = (args.first(), args.get(1)) {
                self.record_generic_copy(src, dst, &name(0), &name(1), call.range);
            }
            return Some(Value::None);
        }
        if last == "tma_partition" {
            // (smem view, gmem view) of arguments 3 and 4, in that order.
            let view = |v: Option<&Value>| match v {
                Some(v @ (Value::Smem(_) | Value::Gmem(_))) => v.clone(),
                _ => Value::unknown("a TMA partition"),
            };
            return Some(Value::Tuple(vec![view(args.get(3)), view(args.get(4))]));
        }
        if VIEW_FUNCTIONS.contains(&last) || last.starts_with("partition_") {
            let buffer = args.iter().chain(receiver).find(|v| matches!(v, Value::Smem(_) | Value::Gmem(_)));
            // A view keeps its buffer (a peer's stays the peer's); element
            // offsets into global memory are no longer known.
            return buffer.map(|b| match b {
                Value::Gmem(g) => Value::Gmem(GmemRef { offset: None, ..g.clone() }),
                other => other.clone(),
            });
        }
        None
    }

    /// `atomic_*`, `red` and `store` on a synchronization variable.
    pub(super) fn record_update(&mut self, api: Api, call: &cute_ir::ast::Call, args: &[Value], kwargs: &[(String, Value)]) {
        let Some(ptr) = args.first() else { return };
        let name = call.args.first().map(root_name).unwrap_or_else(|| "counter".to_string());
        let Some((buffer, _)) = self.buffer_of(ptr, &name) else { return };
        let offset = pointer_offset(ptr);
        let op = call.func.dotted().unwrap_or_default();
        let op = op.rsplit('.').next().unwrap_or("").to_string();
        let val = args.get(1).or(kwargs.iter().find(|(k, _)| k == "val").map(|(_, v)| v)).and_then(Value::as_int);
        let red_op = kwargs.iter().find(|(k, _)| k == "op").map(|(_, v)| v.clone());
        let update = match (op.as_str(), val) {
            ("atomic_add", Some(v)) => Update::Add(v),
            ("atomic_exch" | "store", Some(v)) => Update::Set(v),
            ("red", Some(v)) if matches!(&red_op, Some(Value::Str(s)) if s.contains("add")) => Update::Add(v),
            _ => Update::Other,
        };
        let (order, scope) = order_and_scope(kwargs, if api == Api::Store { Order::Weak } else { Order::Relaxed });
        self.record_mem(MemKind::Update { buffer, offset, update, order, scope }, call.range);
    }

    /// A load of a synchronization variable; `guard` when the thread goes on
    /// only once the value satisfies it.
    pub(super) fn record_observe(&mut self, call: &cute_ir::ast::Call, guard: Option<Guard>, args: &[Value], kwargs: &[(String, Value)]) {
        let Some(ptr) = args.first().or(kwargs.iter().find(|(k, _)| k == "ptr").map(|(_, v)| v)) else { return };
        let name = api::arg(call, "ptr").map(root_name).unwrap_or_else(|| "counter".to_string());
        let Some((buffer, _)) = self.buffer_of(ptr, &name) else { return };
        let offset = pointer_offset(ptr);
        let (order, scope) = order_and_scope(kwargs, Order::Weak);
        self.record_mem(MemKind::Observe { buffer, offset, order, scope, guard }, call.range);
    }

    /// `while load(ctr, ...) < N: pass` and the like: the load whose value
    /// the loop waits on, and the condition on which it exits. `None` when
    /// the condition is not a comparison of one such load with a value.
    pub(super) fn spin_guard<'e>(&mut self, cond: &'e Expr, env: &Env, exit_when_true: bool) -> Option<(&'e cute_ir::ast::Call, Guard)> {
        let Expr::Compare { op, lhs, rhs } = cond else { return None };
        let is_load = |e: &Expr| matches!(e, Expr::Call(c) if Api::of_call(c) == Some(Api::Load));
        let (call, other, load_on_left) = match (lhs.as_ref(), rhs.as_ref()) {
            (Expr::Call(c), other) if is_load(lhs) => (c, other, true),
            (other, Expr::Call(c)) if is_load(rhs) => (c, other, false),
            _ => return None,
        };
        let target = eval(other, env, self).as_int();
        // The comparison with the load on the left.
        let cmp = match (op, load_on_left) {
            (CmpOp::Lt, true) | (CmpOp::Gt, false) => GuardCmp::Lt,
            (CmpOp::Le, true) | (CmpOp::Ge, false) => GuardCmp::Le,
            (CmpOp::Gt, true) | (CmpOp::Lt, false) => GuardCmp::Gt,
            (CmpOp::Ge, true) | (CmpOp::Le, false) => GuardCmp::Ge,
            (CmpOp::Eq, _) => GuardCmp::Eq,
            (CmpOp::Ne, _) => GuardCmp::Ne,
            _ => return None,
        };
        // A `while` exits when its condition is false; an `if` branch is
        // taken when it is true.
        let exit_when = if exit_when_true { cmp } else { cmp.negated() };
        Some((call, Guard { exit_when, target, spin: !exit_when_true }))
    }

    /// `fence_proxy`, `fence_view_async_shared`, `fence_acq_rel_*`.
    pub(super) fn record_fence(&mut self, api: Api, call: &cute_ir::ast::Call, args: &[Value]) {
        match api {
            Api::FenceViewAsyncShared => self.record_mem(MemKind::ProxyFence, call.range),
            Api::FenceProxy => {
                let kind = match (args.first(), call.args.first()) {
                    (Some(Value::Str(s)), _) => s.clone(),
                    (_, Some(e)) => e.dotted().unwrap_or_default(),
                    _ => String::new(),
                };
                if kind.to_ascii_lowercase().contains("async") {
                    self.record_mem(MemKind::ProxyFence, call.range);
                }
            }
            Api::FenceAcqRel => {
                let name = call.func.dotted().unwrap_or_default();
                let scope = name.rsplit('_').next().and_then(Scope::parse).unwrap_or(Scope::Gpu);
                self.record_mem(MemKind::Fence { scope }, call.range);
            }
            _ => {}
        }
    }
}

/// The name a pointer expression is built from (`peer_halo + it % 2` ->
/// `peer_halo`, `ctr.iterator` -> `ctr`).
fn root_name(e: &Expr) -> String {
    match e {
        Expr::Name(n) => n.clone(),
        Expr::Attr { base, attr } if matches!(attr.as_str(), "iterator" | "llvm_ptr" | "ptr") => root_name(base),
        Expr::Attr { .. } => e.dotted().unwrap_or_else(|| "counter".to_string()),
        Expr::Binary { lhs, .. } => root_name(lhs),
        Expr::Call(c) => c.args.first().map(root_name).unwrap_or_else(|| "counter".to_string()),
        _ => "counter".to_string(),
    }
}

fn pointer_offset(v: &Value) -> Option<i64> {
    match v {
        Value::Smem(s) if s.alloc.contains('?') => None,
        Value::Smem(s) => Some(s.offset),
        Value::Gmem(g) => g.offset,
        _ => None,
    }
}

/// `sem=` and `scope=` of an atomic, load or store; the defaults are those
/// of PTX (`.relaxed` for atomics, a weak access otherwise; `.gpu`).
fn order_and_scope(kwargs: &[(String, Value)], default: Order) -> (Order, Scope) {
    let text = |k: &str| match kwargs.iter().find(|(n, _)| n == k).map(|(_, v)| v) {
        Some(Value::Str(s)) => Some(s.clone()),
        _ => None,
    };
    let order = text("sem").and_then(|s| Order::parse(&s)).unwrap_or(default);
    let scope = text("scope").and_then(|s| Scope::parse(&s)).unwrap_or(Scope::Gpu);
    (order, scope)
}

/// The part of a buffer an index selects.
fn region_of_index(index: &Value) -> Region {
    match index {
        Value::Int(i) => Region { stage: None, element: Element::At(vec![*i]) },
        Value::Tuple(items) => {
            if let Some(stage) = cute_ir::eval::stage_of_view(index) {
                return Region { stage: Some(stage), element: Element::Whole };
            }
            let ints: Option<Vec<i64>> = items.iter().map(Value::as_int).collect();
            match ints {
                Some(v) => Region { stage: None, element: Element::At(v) },
                None => Region { stage: None, element: Element::Unknown },
            }
        }
        _ => Region { stage: None, element: Element::Unknown },
    }
}

/// Subscript expressions (base, index) in an expression, outside calls of
/// the synchronization API (their pointers are not loads). Of a conditional
/// expression, only the branch `decide` picks (both when it cannot).
fn collect_subscripts<'e>(e: &'e Expr, decide: &mut dyn FnMut(&Expr) -> Option<bool>, out: &mut Vec<(&'e Expr, &'e Expr)>) {
    match e {
        Expr::Subscript { base, index } => {
            out.push((base, index));
            collect_subscripts(index, decide, out);
        }
        Expr::Call(c) => {
            if c.api.is_some() {
                return;
            }
            c.args.iter().for_each(|a| collect_subscripts(a, decide, out));
            c.kwargs.iter().for_each(|(_, a)| collect_subscripts(a, decide, out));
        }
        Expr::Binary { lhs, rhs, .. } | Expr::Compare { lhs, rhs, .. } | Expr::BoolOp { lhs, rhs, .. } => {
            collect_subscripts(lhs, decide, out);
            collect_subscripts(rhs, decide, out);
        }
        Expr::Unary { operand, .. } => collect_subscripts(operand, decide, out),
        Expr::IfExp { cond, then, orelse } => {
            collect_subscripts(cond, decide, out);
            match decide(cond) {
                Some(true) => collect_subscripts(then, decide, out),
                Some(false) => collect_subscripts(orelse, decide, out),
                None => {
                    collect_subscripts(then, decide, out);
                    collect_subscripts(orelse, decide, out);
                }
            }
        }
        Expr::Tuple(items) => items.iter().for_each(|a| collect_subscripts(a, decide, out)),
        Expr::Attr { base, .. } => collect_subscripts(base, decide, out),
        _ => {}
    }
}
