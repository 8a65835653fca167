//! The synchronization slice of a kernel: a backward slice from the sync call
//! sites through data dependences (a statement is kept when it defines a name
//! a kept statement reads) and control dependences (the `if`/`for`/`while`/
//! `with` headers around a kept statement are kept). Everything else is
//! datapath and is dropped before checking.
//!
//! The data dependence is flow-insensitive (any definition of a name counts),
//! which keeps a little more than needed and never drops a statement the
//! synchronization depends on.

use std::collections::{BTreeSet, HashMap};

use cute_syntax::TextRange;

use crate::api::{Api, Effect};
use crate::ast::{Expr, FunctionDef, Stmt, StmtId, StmtKind};
use crate::module::Module;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// Calls a synchronization primitive.
    Sync(String),
    /// Reads thread or cluster topology (thread index, CTA rank, elect).
    Topology(String),
    /// Calls a helper of this file that synchronizes.
    SyncHelper(String),
    /// Defines a name read by a kept statement.
    Defines { name: String, used_by: StmtId },
    /// Encloses a kept statement.
    Controls(StmtId),
    Datapath,
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reason::Sync(s) => write!(f, "sync: {s}"),
            Reason::Topology(s) => write!(f, "topology: {s}"),
            Reason::SyncHelper(s) => write!(f, "calls {s}, which synchronizes"),
            Reason::Defines { name, used_by } => write!(f, "defines `{name}`, read by #{used_by}"),
            Reason::Controls(id) => write!(f, "controls #{id}"),
            Reason::Datapath => write!(f, "datapath"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SliceEntry {
    pub id: StmtId,
    pub range: TextRange,
    /// First line of the statement's source, for display.
    pub text: String,
    pub kept: bool,
    pub reason: Reason,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Slice {
    pub kernel: String,
    pub entries: Vec<SliceEntry>,
}

impl Slice {
    pub fn kept_ids(&self) -> BTreeSet<StmtId> {
        self.entries.iter().filter(|e| e.kept).map(|e| e.id).collect()
    }

    pub fn kept_count(&self) -> usize {
        self.entries.iter().filter(|e| e.kept).count()
    }
}

struct Flat {
    id: StmtId,
    range: TextRange,
    defs: Vec<String>,
    uses: Vec<String>,
    parent: Option<StmtId>,
    seed: Option<Reason>,
}

pub fn slice_kernel(module: &Module, kernel: &FunctionDef, text: &str) -> Slice {
    let mut flat = Vec::new();
    flatten(&kernel.body, None, &module.sync_helpers, &mut flat);

    let mut definers: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, s) in flat.iter().enumerate() {
        for d in &s.defs {
            definers.entry(d.as_str()).or_default().push(i);
        }
    }
    let by_id: HashMap<StmtId, usize> = flat.iter().enumerate().map(|(i, s)| (s.id, i)).collect();

    let mut reason: Vec<Option<Reason>> = flat.iter().map(|s| s.seed.clone()).collect();
    let mut work: Vec<usize> = (0..flat.len()).filter(|&i| reason[i].is_some()).collect();
    while let Some(i) = work.pop() {
        let id = flat[i].id;
        for u in &flat[i].uses {
            for &j in definers.get(u.as_str()).into_iter().flatten() {
                if reason[j].is_none() {
                    reason[j] = Some(Reason::Defines { name: u.clone(), used_by: id });
                    work.push(j);
                }
            }
        }
        if let Some(p) = flat[i].parent.and_then(|p| by_id.get(&p).copied()) {
            if reason[p].is_none() {
                reason[p] = Some(Reason::Controls(id));
                work.push(p);
            }
        }
    }

    let entries = flat
        .iter()
        .zip(reason)
        .map(|(s, r)| SliceEntry {
            id: s.id,
            range: s.range,
            text: first_line(text, s.range),
            kept: r.is_some(),
            reason: r.unwrap_or(Reason::Datapath),
        })
        .collect();
    Slice { kernel: kernel.display_name(), entries }
}

fn first_line(text: &str, range: TextRange) -> String {
    let s = text.get(range.start as usize..range.end as usize).unwrap_or("");
    let line = s.lines().next().unwrap_or("").trim_end();
    line.trim_end_matches(':').to_string()
}

/// Names of same-file functions and methods that (transitively) call a
/// synchronization primitive.
pub(crate) fn sync_helpers(module: &Module) -> BTreeSet<String> {
    let mut helpers = BTreeSet::new();
    loop {
        let before = helpers.len();
        for f in &module.functions {
            if helpers.contains(&f.name) {
                continue;
            }
            let mut calls_sync = false;
            crate::ast::for_each_expr(&f.body, &mut |e| {
                let mut calls = Vec::new();
                e.calls(&mut calls);
                for c in calls {
                    if matches!(Api::of_call(c).map(Api::effect), Some(Effect::Sync))
                        || callee_name(c).is_some_and(|n| helpers.contains(n))
                    {
                        calls_sync = true;
                    }
                }
            });
            if calls_sync {
                helpers.insert(f.name.clone());
            }
        }
        if helpers.len() == before {
            return helpers;
        }
    }
}

/// The local function or method name a call refers to (`helper(...)`,
/// `self.helper(...)`).
pub fn callee_name(call: &crate::ast::Call) -> Option<&str> {
    match &call.func {
        Expr::Name(n) => Some(n),
        Expr::Attr { base, attr } if matches!(base.as_ref(), Expr::Name(b) if b == "self") => Some(attr),
        _ => None,
    }
}

fn seed_of(exprs: &[&Expr], sync_helpers: &BTreeSet<String>) -> Option<Reason> {
    let mut topology = None;
    for e in exprs {
        let mut calls = Vec::new();
        e.calls(&mut calls);
        for c in calls {
            match Api::of_call(c).map(|a| (a, a.effect())) {
                // A copy synchronizes only through the barrier it signals.
                Some((Api::Copy, _)) if !copy_signals_barrier(c) => {}
                Some((_, Effect::Sync)) => return Some(Reason::Sync(api_label(c))),
                Some((_, Effect::Topology)) => topology = topology.or(Some(Reason::Topology(api_label(c)))),
                _ => {
                    if let Some(n) = callee_name(c).filter(|n| sync_helpers.contains(*n)) {
                        return Some(Reason::SyncHelper(n.to_string()));
                    }
                }
            }
        }
    }
    topology
}

fn api_label(call: &crate::ast::Call) -> String {
    call.func.dotted().map(|d| d.rsplit('.').next().unwrap_or(&d).to_string()).unwrap_or_default()
}

fn flatten(stmts: &[Stmt], parent: Option<StmtId>, helpers: &BTreeSet<String>, out: &mut Vec<Flat>) {
    for s in stmts {
        let mut defs = Vec::new();
        let mut uses = Vec::new();
        let mut exprs: Vec<&Expr> = Vec::new();
        match &s.kind {
            StmtKind::Assign { targets, value } => {
                targets.iter().for_each(|t| {
                    t.collect_defs(&mut defs);
                    t.collect_uses(&mut uses);
                });
                exprs.push(value);
            }
            StmtKind::AugAssign { target, value, .. } => {
                target.collect_defs(&mut defs);
                target.collect_defs(&mut uses);
                target.collect_uses(&mut uses);
                exprs.push(value);
            }
            StmtKind::Expr(e) => {
                // `state.advance()`: a method called for its effect may
                // change the object it is called on.
                if let Expr::Call(c) = e {
                    if let Expr::Attr { base, .. } = &c.func {
                        if let Expr::Name(v) = base.as_ref() {
                            defs.push(v.clone());
                        }
                    }
                }
                exprs.push(e)
            }
            StmtKind::Return(Some(e)) => exprs.push(e),
            StmtKind::If { cond, .. } | StmtKind::While { cond, .. } => exprs.push(cond),
            StmtKind::For { target, iter, .. } => {
                target.collect_defs(&mut defs);
                exprs.push(iter);
            }
            StmtKind::With { items, .. } => {
                for (e, t) in items {
                    exprs.push(e);
                    if let Some(t) = t {
                        t.collect_defs(&mut defs);
                    }
                }
            }
            _ => {}
        }
        exprs.iter().for_each(|e| relevant_uses(e, &mut uses));
        // A call with side effects on an argument (`cute.copy(src, dst)`) is
        // not a definition here: only synchronizing calls are seeds.
        let seed = seed_of(&exprs, helpers);
        out.push(Flat { id: s.id, range: s.range, defs, uses, parent, seed });
        match &s.kind {
            StmtKind::If { then, orelse, .. } => {
                flatten(then, Some(s.id), helpers, out);
                flatten(orelse, Some(s.id), helpers, out);
            }
            StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. } => {
                flatten(body, Some(s.id), helpers, out)
            }
            _ => {}
        }
    }
}

/// The names an expression's synchronization depends on. For memory
/// operations (atomics, loads, stores) that is where they point, not the
/// value they carry: the value is datapath.
fn relevant_uses(e: &Expr, out: &mut Vec<String>) {
    match e {
        Expr::Call(c) if Api::of_call(c) == Some(Api::Copy) => {
            for (k, v) in &c.kwargs {
                if k == "tma_bar_ptr" || k == "mbar_ptr" {
                    relevant_uses(v, out);
                }
            }
        }
        Expr::Call(c) if matches!(Api::of_call(c), Some(Api::Atomic | Api::Store)) => {
            c.func.collect_uses(out);
            if let Some(ptr) = c.args.first() {
                relevant_uses(ptr, out);
            }
            for (k, v) in &c.kwargs {
                if k == "ptr" || k == "sem" || k == "scope" {
                    relevant_uses(v, out);
                }
            }
        }
        Expr::Call(c) => {
            c.func.collect_uses(out);
            c.args.iter().for_each(|a| relevant_uses(a, out));
            c.kwargs.iter().for_each(|(_, a)| relevant_uses(a, out));
        }
        Expr::Binary { lhs, rhs, .. } | Expr::Compare { lhs, rhs, .. } | Expr::BoolOp { lhs, rhs, .. } => {
            relevant_uses(lhs, out);
            relevant_uses(rhs, out);
        }
        Expr::Unary { operand, .. } => relevant_uses(operand, out),
        Expr::IfExp { cond, then, orelse } => {
            relevant_uses(cond, out);
            relevant_uses(then, out);
            relevant_uses(orelse, out);
        }
        Expr::Subscript { base, index } => {
            relevant_uses(base, out);
            relevant_uses(index, out);
        }
        Expr::Tuple(items) => items.iter().for_each(|a| relevant_uses(a, out)),
        other => other.collect_uses(out),
    }
}

fn copy_signals_barrier(call: &crate::ast::Call) -> bool {
    call.kwargs.iter().any(|(k, _)| k == "tma_bar_ptr" || k == "mbar_ptr")
}
