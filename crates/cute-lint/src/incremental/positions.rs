//! Rewriting the byte offsets and statement ids held by lowered code, models
//! and diagnostics: to move a chunk lowered on its own to where it sits, to
//! take positions out of a checker key, and to put them back.
//!
//! The memory-ordering analysis is keyed by its model with every offset
//! replaced by its rank among the model's offsets ([`memory_key`]): the
//! analysis only copies and compares offsets, so its findings come back with
//! the current positions.

use cute_check::memory::{MemoryFinding, Repair};
use cute_check::model::Model;
use cute_check::OpenCondition;
use cute_ir::ast::{Call, Expr, FunctionDef, Stmt, StmtKind, Target};
use cute_ir::Module;
use cute_syntax::TextRange;

use crate::Diagnostic;

/// A rewriting of offsets and statement ids. Offsets are rewritten one end
/// of a range at a time, so a map that preserves order preserves containment.
pub trait Remap {
    fn offset(&mut self, offset: u32) -> u32;
    fn id(&mut self, id: u32) -> u32;

    fn range(&mut self, range: TextRange) -> TextRange {
        TextRange { start: self.offset(range.start), end: self.offset(range.end) }
    }
}

/// Shifts offsets and ids by constants.
pub struct Shift {
    pub offset: i64,
    pub id: i64,
}

impl Remap for Shift {
    fn offset(&mut self, offset: u32) -> u32 {
        (offset as i64 + self.offset) as u32
    }

    fn id(&mut self, id: u32) -> u32 {
        // A condition on a launch value is no statement: it does not move.
        if cute_check::is_launch_condition(id) {
            return id;
        }
        (id as i64 + self.id) as u32
    }
}

/// Calls back on every offset and id, changing nothing.
pub struct Visit<F: FnMut(Option<u32>, Option<u32>)>(pub F);

impl<F: FnMut(Option<u32>, Option<u32>)> Remap for Visit<F> {
    fn offset(&mut self, offset: u32) -> u32 {
        (self.0)(Some(offset), None);
        offset
    }

    fn id(&mut self, id: u32) -> u32 {
        (self.0)(None, Some(id));
        id
    }
}

pub fn module(m: &mut Module, r: &mut dyn Remap) {
    for f in m.functions.iter_mut().chain(m.closures.iter_mut().map(|c| &mut c.function)) {
        function(f, r);
    }
    for c in &mut m.classes {
        class(c, r);
    }
    stmts(&mut m.top_level, r);
    for e in &mut m.syntax_errors {
        *e = r.range(*e);
    }
    for (_, at) in &mut m.broken_kernels {
        *at = r.range(*at);
    }
    for at in &mut m.left_out {
        *at = r.range(*at);
    }
}

pub fn class(c: &mut cute_ir::module::ClassDef, r: &mut dyn Remap) {
    c.range = r.range(c.range);
    for (_, e) in &mut c.attrs {
        expr(e, r);
    }
    for field in &mut c.memrange_fields {
        if let Some(len) = &mut field.len {
            expr(len, r);
        }
    }
}

pub fn function(f: &mut FunctionDef, r: &mut dyn Remap) {
    f.range = r.range(f.range);
    f.name_range = r.range(f.name_range);
    for p in &mut f.params {
        if let Some(d) = &mut p.default {
            expr(d, r);
        }
    }
    stmts(&mut f.body, r);
}

pub fn stmts(ss: &mut [Stmt], r: &mut dyn Remap) {
    for s in ss {
        stmt(s, r);
    }
}

pub fn stmt(s: &mut Stmt, r: &mut dyn Remap) {
    s.id = r.id(s.id);
    s.range = r.range(s.range);
    match &mut s.kind {
        StmtKind::Assign { targets, value } => {
            targets.iter_mut().for_each(|t| target(t, r));
            expr(value, r);
        }
        StmtKind::AugAssign { target: t, value, .. } => {
            target(t, r);
            expr(value, r);
        }
        StmtKind::Expr(e) => expr(e, r),
        StmtKind::If { cond, then, orelse } => {
            expr(cond, r);
            stmts(then, r);
            stmts(orelse, r);
        }
        StmtKind::For { target: t, iter, body } => {
            target(t, r);
            expr(iter, r);
            stmts(body, r);
        }
        StmtKind::While { cond, body } => {
            expr(cond, r);
            stmts(body, r);
        }
        StmtKind::With { items, body } => {
            for (e, t) in items {
                expr(e, r);
                if let Some(t) = t {
                    target(t, r);
                }
            }
            stmts(body, r);
        }
        StmtKind::Return(e) => {
            if let Some(e) = e {
                expr(e, r);
            }
        }
        StmtKind::Break | StmtKind::Continue | StmtKind::Pass | StmtKind::Unsupported(_) => {}
    }
}

fn call(c: &mut Call, r: &mut dyn Remap) {
    c.range = r.range(c.range);
    expr(&mut c.func, r);
    c.args.iter_mut().for_each(|a| expr(a, r));
    c.kwargs.iter_mut().for_each(|(_, a)| expr(a, r));
}

pub fn expr(e: &mut Expr, r: &mut dyn Remap) {
    match e {
        Expr::Call(c) => call(c, r),
        Expr::Attr { base, .. } => expr(base, r),
        Expr::Binary { lhs, rhs, .. } | Expr::Compare { lhs, rhs, .. } | Expr::BoolOp { lhs, rhs, .. } => {
            expr(lhs, r);
            expr(rhs, r);
        }
        Expr::Unary { operand, .. } => expr(operand, r),
        Expr::IfExp { cond, then, orelse } => {
            expr(cond, r);
            expr(then, r);
            expr(orelse, r);
        }
        Expr::Subscript { base, index } => {
            expr(base, r);
            expr(index, r);
        }
        Expr::Tuple(items) => items.iter_mut().for_each(|a| expr(a, r)),
        Expr::Int(_) | Expr::Float | Expr::Bool(_) | Expr::Str(_) | Expr::None | Expr::Name(_) | Expr::Unknown(_) => {}
    }
}

fn target(t: &mut Target, r: &mut dyn Remap) {
    match t {
        Target::Name(_) => {}
        Target::Attr { base, .. } => expr(base, r),
        Target::Subscript { base, index } => {
            expr(base, r);
            expr(index, r);
        }
        Target::Tuple(items) => items.iter_mut().for_each(|t| target(t, r)),
        Target::Star(t) => target(t, r),
    }
}

/// Every source position a model holds.
pub fn model(m: &mut Model, r: &mut dyn Remap) {
    for g in &mut m.groups {
        for op in &mut g.ops {
            op.site = r.range(op.site);
        }
    }
    for u in &mut m.unresolved {
        u.site = r.range(u.site);
        if let Some((at, _)) = &mut u.origin {
            *at = r.range(*at);
        }
    }
    for (site, ..) in &mut m.partial_warp_collectives {
        *site = r.range(*site);
    }
    for t in &mut m.stale_tokens {
        t.site = r.range(t.site);
        t.token_site = r.range(t.token_site);
    }
    for o in &mut m.storage_overruns {
        o.site = r.range(o.site);
    }
    for u in &mut m.barrier_uses {
        u.site = r.range(u.site);
    }
    for t in &mut m.memory {
        for op in &mut t.ops {
            op.site = r.range(op.site);
            op.stmt = r.id(op.stmt);
        }
    }
}

/// Every source position a memory finding holds (its site, its evidence,
/// its repair).
pub fn memory_finding(f: &mut MemoryFinding, r: &mut dyn Remap) {
    f.site = r.range(f.site);
    for (range, _) in &mut f.steps {
        *range = r.range(*range);
    }
    match &mut f.repair {
        Repair::None => {}
        Repair::MoveFenceBefore { fence, barrier } => {
            *fence = r.range(*fence);
            *barrier = r.range(*barrier);
        }
        Repair::InsertProxyFenceBefore { site } | Repair::WaitForStoreGroup { copy: site, .. } => *site = r.range(*site),
        Repair::InsertTmemStoreFenceBefore { site, after } => {
            *site = r.range(*site);
            *after = r.range(*after);
        }
        Repair::InsertBarrierBefore { site, stmt } | Repair::InsertGridDependencyWaitBefore { site, stmt } => {
            *site = r.range(*site);
            *stmt = r.id(*stmt);
        }
        Repair::InsertWarpSyncBefore { site, stmt, after } | Repair::InsertCtaBarrierBetween { site, stmt, after } => {
            *site = r.range(*site);
            *stmt = r.id(*stmt);
            *after = r.range(*after);
        }
        Repair::SetSem { call, .. } | Repair::SetScope { call, .. } => *call = r.range(*call),
        Repair::InsertWaitBefore { site, stmt, copy, later, earlier, .. } => {
            *site = r.range(*site);
            *stmt = r.id(*stmt);
            *copy = r.range(*copy);
            if let Some(later) = later {
                *later = r.range(*later);
            }
            if let Some((earlier, _)) = earlier {
                *earlier = r.range(*earlier);
            }
        }
    }
}

/// Offsets replaced by their rank among a sorted table of offsets, and put
/// back: a map that preserves order, so comparisons of positions come out
/// the same on either side.
pub struct Ranks(pub Vec<u32>);

impl Ranks {
    /// The table of every offset `visit` calls back on.
    pub fn of(visit: impl FnOnce(&mut dyn Remap)) -> Ranks {
        let mut offsets = Vec::new();
        visit(&mut Visit(|o: Option<u32>, _| offsets.extend(o)));
        offsets.sort_unstable();
        offsets.dedup();
        Ranks(offsets)
    }

    pub fn encode(&self) -> impl Remap + '_ {
        struct Encode<'a>(&'a [u32]);
        impl Remap for Encode<'_> {
            fn offset(&mut self, offset: u32) -> u32 {
                self.0.binary_search(&offset).map_or(u32::MAX, |i| i as u32)
            }
            fn id(&mut self, id: u32) -> u32 {
                id
            }
        }
        Encode(&self.0)
    }

    pub fn decode(&self) -> impl Remap + '_ {
        struct Decode<'a>(&'a [u32]);
        impl Remap for Decode<'_> {
            fn offset(&mut self, offset: u32) -> u32 {
                self.0.get(offset as usize).copied().unwrap_or(offset)
            }
            fn id(&mut self, id: u32) -> u32 {
                id
            }
        }
        Decode(&self.0)
    }
}

/// What the memory-ordering analysis reads of a model, with every offset
/// replaced by its rank (see [`Ranks`]): the sites of the synchronization
/// and memory operations move with the text, their order does not. Notes,
/// unresolved values and the kernel's name are left out (the analysis does
/// not read them).
pub fn memory_key(model: &Model) -> (Model, Ranks) {
    let mut key = Model {
        kernel: String::new(),
        assumptions: Vec::new(),
        unresolved: Vec::new(),
        partial_warp_collectives: Vec::new(),
        stale_tokens: Vec::new(),
        storage_overruns: Vec::new(),
        ..model.clone()
    };
    let ranks = Ranks::of(|r| self::model(&mut key, r));
    self::model(&mut key, &mut ranks.encode());
    (key, ranks)
}

pub fn open_condition(c: &mut OpenCondition, r: &mut dyn Remap) {
    c.stmt = r.id(c.stmt);
    c.statement = r.id(c.statement);
    c.site = r.range(c.site);
}

/// Every range a diagnostic holds (its own, its trace's, its fixes').
pub fn diagnostic(d: &mut Diagnostic, r: &mut dyn Remap) {
    d.range = r.range(d.range);
    for rel in &mut d.related {
        rel.range = r.range(rel.range);
    }
    for fix in &mut d.fixes {
        for edit in &mut fix.edits {
            edit.range = r.range(edit.range);
        }
    }
}
