//! Global buffers whose loads and stores no finding can involve.
//!
//! The memory-ordering analysis compares pairs of accesses of one buffer. In
//! global memory (a tensor or pointer parameter of the kernel) a pair is a
//! finding only when one generic access writes and the other reads: data handed
//! from one CTA to another. A parameter the kernel only reads (the operands of
//! a GEMM, the queries and keys of an attention kernel) or only writes (its
//! output) has no such pair, so its loads and stores are the datapath. Kept in
//! the slice, they would keep what they depend on: the addresses every thread
//! would compute, and the bounds tests around them
//! (`if cute.elem_less(coord, mC.shape[1]):`), conditions on runtime values the
//! checker would have to explore both ways. So neither they, nor those tests,
//! nor those addresses are kept, and a store into such a tensor defines nothing
//! the slice follows.
//!
//! A parameter stays a buffer as soon as the kernel does anything else with it
//! or with a view of it: hands it to a function of the file or to a call the
//! model does not know, calls a method on it for its effect, stores it into an
//! object, returns it, or updates it atomically or through inline PTX (a
//! counter). Views are followed through assignments; reading a view's shape or
//! layout (`t.shape`, `cute.size(t)`, `cute.make_identity_tensor(t.shape)`)
//! makes no view.
//!
//! A kernel that waits for the grids its launch depends on
//! (`griddepcontrol_wait`, or `griddepcontrol.wait` in inline PTX;
//! programmatic dependent launch) keeps the loads of
//! the parameters it reads: whether each comes before or after the wait is
//! what `read-before-grid-dependency` asks (its stores stay inert).
//!
//! A register fragment or a coordinate tensor made from a tensor's shape
//! (`make_fragment_like`, `make_identity_tensor(t.shape)`,
//! `tiled_mma.make_fragment_C(tCgC)`) views no memory: private to its thread,
//! it is not kept for memory ordering, and what is stored into it stays opaque
//! to the slice, as a load is.

use std::collections::{BTreeMap, BTreeSet};

use crate::api::{Api, Effect};
use crate::ast::{Call, Expr, FunctionDef, Stmt, StmtKind, Target};
use crate::module::{nested_statements, Module};

/// Attributes that describe a tensor without reaching its memory.
const SHAPE_ATTRIBUTES: &[&str] = &["shape", "layout", "stride", "element_type", "dtype", "memspace"];

/// Functions whose result describes or is shaped like their argument without
/// being a view of its memory (coordinate and register tensors).
const SHAPE_FUNCTIONS: &[&str] = &[
    "size",
    "rank",
    "depth",
    "cosize",
    "size_in_bytes",
    "len",
    "make_identity_tensor",
    "make_rmem_tensor",
    "make_rmem_tensor_like",
    "make_fragment",
    "make_fragment_like",
    "make_fragment_A",
    "make_fragment_B",
    "make_fragment_C",
    "partition_shape_A",
    "partition_shape_B",
    "partition_shape_C",
];

/// The root standing for shared memory and anything the kernel allocates:
/// never inert.
const ALLOCATED: &str = "<allocated>";

/// The names the slice takes as buffers (`buffer_names`, an
/// over-approximation) that hold no memory a finding can involve.
pub(super) struct NotMemory {
    /// Views of tensor parameters the kernel only reads or only writes.
    pub(super) inert: BTreeSet<String>,
    /// Names that view no memory at all: a register fragment shaped like a
    /// tile, a coordinate tensor (made from a buffer's shape only).
    pub(super) registers: BTreeSet<String>,
}

pub(super) fn not_memory(module: &Module, kernel: &FunctionDef, buffers: &BTreeSet<String>) -> NotMemory {
    let params: BTreeSet<&str> = kernel.params.iter().filter(|p| p.tensor).map(|p| p.name.as_str()).collect();
    let statements = nested_statements(&kernel.body);
    let views = views(&params, &statements);
    let mut uses = Uses { file_functions: module.functions.iter().map(|f| f.name.as_str()).collect(), ..Uses::default() };
    for s in &statements {
        uses.of_statement(s, &views);
    }
    let keeps_reads = waits_for_grid_dependency(module, kernel);
    let inert: BTreeSet<&str> = params
        .iter()
        .copied()
        .filter(|p| !uses.escaped.contains(*p) && !(uses.read.contains(*p) && uses.written.contains(*p)))
        .filter(|p| !(keeps_reads && uses.read.contains(*p)))
        .collect();
    let mut not = NotMemory { inert: BTreeSet::new(), registers: BTreeSet::new() };
    for name in buffers {
        match views.get(name.as_str()) {
            None => {
                not.registers.insert(name.clone());
            }
            Some(roots) if roots.iter().all(|r| inert.contains(r.as_str())) => {
                not.inert.insert(name.clone());
            }
            Some(_) => {}
        }
    }
    not
}

/// Whether the kernel calls `griddepcontrol_wait`, itself or through the
/// functions of the file it calls.
pub(crate) fn waits_for_grid_dependency(module: &Module, kernel: &FunctionDef) -> bool {
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut todo: Vec<&FunctionDef> = vec![kernel];
    while let Some(f) = todo.pop() {
        for s in nested_statements(&f.body) {
            let mut calls = Vec::new();
            match &s.kind {
                StmtKind::Assign { value: e, .. } | StmtKind::AugAssign { value: e, .. } | StmtKind::Expr(e) => e.calls(&mut calls),
                StmtKind::Return(Some(e)) | StmtKind::If { cond: e, .. } | StmtKind::While { cond: e, .. } | StmtKind::For { iter: e, .. } => {
                    e.calls(&mut calls)
                }
                StmtKind::With { items, .. } => items.iter().for_each(|(e, _)| e.calls(&mut calls)),
                _ => {}
            }
            for c in calls {
                if c.api == Some(Api::GridDepWait) || grid_dependency_wait_in_asm(c) {
                    return true;
                }
                if let Some(name) = crate::slice::callee_name(c) {
                    if seen.insert(name) {
                        todo.extend(module.functions.iter().filter(|g| g.name == name));
                    }
                }
            }
        }
    }
    false
}

/// `llvm.inline_asm(...)` whose assembly holds `griddepcontrol.wait` (a
/// helper's `"griddepcontrol.wait;"`).
fn grid_dependency_wait_in_asm(c: &Call) -> bool {
    if c.api != Some(Api::InlineAsm) {
        return false;
    }
    let asm = c.kwargs.iter().find(|(k, _)| k == "asm_string").map(|(_, e)| e).or(c.args.get(2));
    matches!(asm, Some(Expr::Str(text)) if crate::ptx::sync_instructions(text).contains(&crate::ptx::PtxSync::GridDependencyWait))
}

/// For each name the kernel binds or takes, the parameters (and
/// [`ALLOCATED`]) whose memory it may view.
fn views(params: &BTreeSet<&str>, statements: &[&Stmt]) -> BTreeMap<String, BTreeSet<String>> {
    let mut views: BTreeMap<String, BTreeSet<String>> =
        params.iter().map(|p| (p.to_string(), BTreeSet::from([p.to_string()]))).collect();
    loop {
        let mut changed = false;
        for s in statements {
            let (defs, value): (Vec<String>, Vec<&Expr>) = match &s.kind {
                StmtKind::Assign { targets, value } => {
                    let mut defs = Vec::new();
                    targets.iter().filter(|t| !matches!(t, Target::Subscript { .. })).for_each(|t| t.collect_defs(&mut defs));
                    (defs, vec![value])
                }
                StmtKind::For { target, iter, .. } => {
                    let mut defs = Vec::new();
                    target.collect_defs(&mut defs);
                    (defs, vec![iter])
                }
                StmtKind::With { items, .. } => {
                    let mut defs = Vec::new();
                    items.iter().filter_map(|(_, t)| t.as_ref()).for_each(|t| t.collect_defs(&mut defs));
                    (defs, items.iter().map(|(e, _)| e).collect())
                }
                _ => continue,
            };
            let mut roots = BTreeSet::new();
            for e in value {
                roots.extend(roots_of(e, &views));
                let mut calls = Vec::new();
                e.calls(&mut calls);
                if calls.iter().any(|c| allocates(c)) {
                    roots.insert(ALLOCATED.to_string());
                }
            }
            if roots.is_empty() {
                continue;
            }
            for d in defs {
                let entry = views.entry(d).or_default();
                let before = entry.len();
                entry.extend(roots.iter().cloned());
                changed |= entry.len() != before;
            }
        }
        if !changed {
            return views;
        }
    }
}

fn allocates(c: &Call) -> bool {
    c.dotted_name().is_some_and(|last| super::ALLOCATIONS.contains(&last) || last.starts_with("alloc"))
}

/// The roots of the views `e` may evaluate to or read through.
fn roots_of(e: &Expr, views: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<String> {
    let mut names = Vec::new();
    view_uses(e, &mut names);
    names.iter().filter_map(|n| views.get(n)).flatten().cloned().collect()
}

/// The names `e` reads, except where only their shape is read.
fn view_uses(e: &Expr, out: &mut Vec<String>) {
    match e {
        Expr::Name(n) => out.push(n.clone()),
        Expr::Attr { attr, .. } if SHAPE_ATTRIBUTES.contains(&attr.as_str()) => {}
        Expr::Attr { base, .. } => view_uses(base, out),
        Expr::Call(c) if c.dotted_name().is_some_and(|n| SHAPE_FUNCTIONS.contains(&n)) => {}
        Expr::Call(c) => {
            view_uses(&c.func, out);
            c.args.iter().for_each(|a| view_uses(a, out));
            c.kwargs.iter().for_each(|(_, a)| view_uses(a, out));
        }
        Expr::Binary { lhs, rhs, .. } | Expr::Compare { lhs, rhs, .. } | Expr::BoolOp { lhs, rhs, .. } => {
            view_uses(lhs, out);
            view_uses(rhs, out);
        }
        Expr::Unary { operand, .. } => view_uses(operand, out),
        Expr::IfExp { cond, then, orelse } => {
            view_uses(cond, out);
            view_uses(then, out);
            view_uses(orelse, out);
        }
        // `t[i]` reads an element of `t` (a load, classified apart), and the
        // index is a value.
        Expr::Subscript { base, .. } => view_uses(base, out),
        Expr::Tuple(items) => items.iter().for_each(|a| view_uses(a, out)),
        Expr::Int(_) | Expr::Float | Expr::Bool(_) | Expr::Str(_) | Expr::None | Expr::Unknown(_) => {}
    }
}

/// How the kernel uses the memory of each root.
#[derive(Default)]
struct Uses<'m> {
    /// The names of the file's functions and methods: a call of one may
    /// touch what it is handed.
    file_functions: BTreeSet<&'m str>,
    read: BTreeSet<String>,
    written: BTreeSet<String>,
    /// Used otherwise than by a load or a store the slice reads.
    escaped: BTreeSet<String>,
}

impl Uses<'_> {
    fn of_statement(&mut self, s: &Stmt, views: &BTreeMap<String, BTreeSet<String>>) {
        let roots = |e: &Expr| roots_of(e, views);
        match &s.kind {
            StmtKind::Assign { targets, value } => {
                for t in targets {
                    self.of_target(t, value, views);
                }
                self.of_expr(value, false, views);
            }
            StmtKind::AugAssign { target, value, .. } => {
                if let Target::Subscript { base, index } = target {
                    let r = roots(base);
                    self.read.extend(r.iter().cloned());
                    self.written.extend(r);
                    self.of_expr(index, false, views);
                } else if !matches!(target, Target::Name(_)) {
                    self.escaped.extend(roots(value));
                }
                self.of_expr(value, false, views);
            }
            StmtKind::Expr(e) => self.of_expr(e, true, views),
            StmtKind::Return(Some(e)) => {
                self.escaped.extend(roots(e));
                self.of_expr(e, false, views);
            }
            StmtKind::If { cond: e, .. } | StmtKind::While { cond: e, .. } | StmtKind::For { iter: e, .. } => {
                self.of_expr(e, false, views)
            }
            StmtKind::With { items, .. } => items.iter().for_each(|(e, _)| self.of_expr(e, false, views)),
            _ => {}
        }
    }

    /// `target = value`: a store through a subscript writes the view; a view
    /// stored into an object, or unpacked into anything but names, escapes.
    fn of_target(&mut self, t: &Target, value: &Expr, views: &BTreeMap<String, BTreeSet<String>>) {
        match t {
            Target::Name(_) => {}
            Target::Subscript { base, index } => {
                self.written.extend(roots_of(base, views));
                self.of_expr(index, false, views);
            }
            Target::Tuple(items) => items.iter().for_each(|i| self.of_target(i, value, views)),
            Target::Star(inner) => self.of_target(inner, value, views),
            Target::Attr { .. } => self.escaped.extend(roots_of(value, views)),
        }
    }

    /// The loads and copies in `e`, and the views handed to calls the slice
    /// cannot follow. `effect`: `e` is a statement of its own, evaluated for
    /// what it does.
    fn of_expr(&mut self, e: &Expr, effect: bool, views: &BTreeMap<String, BTreeSet<String>>) {
        let roots = |e: &Expr| roots_of(e, views);
        let mut subscripts = Vec::new();
        super::subscripts(e, &mut subscripts);
        // `t[None, None, k]` keeps modes: a view, which loads nothing (what
        // is done with it is read below); `t[i]` loads.
        for (base, index) in subscripts {
            if !index.keeps_a_mode() {
                self.read.extend(roots(base));
            }
        }
        let mut calls = Vec::new();
        e.calls(&mut calls);
        for c in calls {
            let last = c.dotted_name().unwrap_or("");
            let copy = match (Api::of_call(c), last) {
                (Some(Api::Copy), _) => Some((1, 2)),
                (_, "autovec_copy" | "basic_copy") => Some((0, 1)),
                (_, "basic_copy_if") => Some((1, 2)),
                _ => None,
            };
            if let Some((src, dst)) = copy {
                for (i, a) in c.args.iter().enumerate() {
                    match i {
                        _ if i == src => self.read.extend(roots(a)),
                        _ if i == dst => self.written.extend(roots(a)),
                        _ => self.escaped.extend(roots(a)),
                    }
                }
                c.kwargs.iter().for_each(|(_, a)| self.escaped.extend(roots(a)));
                continue;
            }
            // `t.load()`, `t.store(v)`, `t.fill(v)`.
            if let Expr::Attr { base, attr } = &c.func {
                match attr.as_str() {
                    "load" if c.args.is_empty() => {
                        self.read.extend(roots(base));
                        continue;
                    }
                    "store" | "fill" => {
                        self.written.extend(roots(base));
                        c.args.iter().for_each(|a| self.escaped.extend(roots(a)));
                        continue;
                    }
                    _ => {}
                }
            }
            let handed: Vec<String> = c.args.iter().chain(c.kwargs.iter().map(|(_, a)| a)).flat_map(roots).collect();
            if handed.is_empty() {
                continue;
            }
            // A library function or a method of a library object in an
            // assignment makes a view (`cute.local_tile`, `partition_S`);
            // anything that acts (a statement of its own, synchronization, an
            // atomic, inline PTX) or that the file defines may touch memory.
            let acts = match Api::of_call(c) {
                Some(api) => matches!(api.effect(), Effect::Sync) || matches!(api, Api::Atomic | Api::Load | Api::Store | Api::InlineAsm),
                None => !self.library_call(c),
            };
            if effect || acts {
                self.escaped.extend(handed);
            }
        }
    }

    /// A call of the CuTe DSL or of a method of an object the kernel got
    /// from it (`thr_mma.partition_C(gC)`), not of the file's own functions
    /// and methods (`epilogue.store(gC)` on an object of a class of the
    /// file).
    fn library_call(&self, c: &Call) -> bool {
        if let Some(q) = &c.qualname {
            return q.starts_with("cutlass.");
        }
        match &c.func {
            Expr::Attr { base, attr } => {
                !self.file_functions.contains(attr.as_str()) && !base.dotted().is_some_and(|d| d == "self" || d.starts_with("self."))
            }
            _ => false,
        }
    }
}
