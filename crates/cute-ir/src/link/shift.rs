//! A linked file's positions and statement ids moved into the linked
//! module's address space: byte offsets past the files before it, statement
//! ids past theirs, so that no two statements of the linked module share
//! either.

use cute_syntax::TextRange;

use crate::ast::{Expr, FunctionDef, Stmt, StmtKind, Target};
use crate::module::Module;

pub(super) fn shift(module: &mut Module, base: u32, first_id: u32) {
    let by = Shift { base, first_id };
    for f in &mut module.functions {
        by.function(f);
    }
    for c in &mut module.closures {
        by.function(&mut c.function);
    }
    for c in &mut module.classes {
        by.range(&mut c.range);
        for (_, e) in &mut c.attrs {
            by.expr(e);
        }
        for f in &mut c.memrange_fields {
            if let Some(len) = &mut f.len {
                by.expr(len);
            }
        }
    }
    by.block(&mut module.top_level);
    module.syntax_errors.clear();
    module.broken_kernels.clear();
    module.left_out.clear();
}

struct Shift {
    base: u32,
    first_id: u32,
}

impl Shift {
    fn range(&self, r: &mut TextRange) {
        r.start += self.base;
        r.end += self.base;
    }

    fn function(&self, f: &mut FunctionDef) {
        self.range(&mut f.range);
        self.range(&mut f.name_range);
        for p in &mut f.params {
            if let Some(d) = &mut p.default {
                self.expr(d);
            }
        }
        self.block(&mut f.body);
    }

    fn block(&self, stmts: &mut [Stmt]) {
        for s in stmts {
            s.id += self.first_id;
            self.range(&mut s.range);
            match &mut s.kind {
                StmtKind::Assign { targets, value } => {
                    targets.iter_mut().for_each(|t| self.target(t));
                    self.expr(value);
                }
                StmtKind::AugAssign { target, value, .. } => {
                    self.target(target);
                    self.expr(value);
                }
                StmtKind::Expr(e) | StmtKind::Return(Some(e)) => self.expr(e),
                StmtKind::If { cond, then, orelse } => {
                    self.expr(cond);
                    self.block(then);
                    self.block(orelse);
                }
                StmtKind::For { target, iter, body } => {
                    self.target(target);
                    self.expr(iter);
                    self.block(body);
                }
                StmtKind::While { cond, body } => {
                    self.expr(cond);
                    self.block(body);
                }
                StmtKind::With { items, body } => {
                    for (e, t) in items {
                        self.expr(e);
                        if let Some(t) = t {
                            self.target(t);
                        }
                    }
                    self.block(body);
                }
                StmtKind::Return(None) | StmtKind::Break | StmtKind::Continue | StmtKind::Pass | StmtKind::Unsupported(_) => {}
            }
        }
    }

    fn target(&self, t: &mut Target) {
        match t {
            Target::Name(_) => {}
            Target::Attr { base, .. } => self.expr(base),
            Target::Subscript { base, index } => {
                self.expr(base);
                self.expr(index);
            }
            Target::Tuple(items) => items.iter_mut().for_each(|t| self.target(t)),
            Target::Star(t) => self.target(t),
        }
    }

    fn expr(&self, e: &mut Expr) {
        match e {
            Expr::Call(c) => {
                self.range(&mut c.range);
                self.expr(&mut c.func);
                c.args.iter_mut().for_each(|a| self.expr(a));
                c.kwargs.iter_mut().for_each(|(_, a)| self.expr(a));
            }
            Expr::Attr { base, .. } => self.expr(base),
            Expr::Binary { lhs, rhs, .. } | Expr::Compare { lhs, rhs, .. } | Expr::BoolOp { lhs, rhs, .. } => {
                self.expr(lhs);
                self.expr(rhs);
            }
            Expr::Unary { operand, .. } => self.expr(operand),
            Expr::IfExp { cond, then, orelse } => {
                self.expr(cond);
                self.expr(then);
                self.expr(orelse);
            }
            Expr::Subscript { base, index } => {
                self.expr(base);
                self.expr(index);
            }
            Expr::Tuple(items) => items.iter_mut().for_each(|a| self.expr(a)),
            Expr::Name(_) | Expr::Int(_) | Expr::Float | Expr::Bool(_) | Expr::Str(_) | Expr::None | Expr::Unknown(_) => {}
        }
    }
}
