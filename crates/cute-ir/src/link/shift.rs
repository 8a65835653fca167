//! A linked file's positions and statement ids moved into the linked
//! module's address space: byte offsets past the files before it, statement
//! ids past theirs, so that no two statements of the linked module share
//! either.

use cute_syntax::TextRange;

use crate::ast::{walk_mut, Expr, FunctionDef, Stmt, VisitMut};
use crate::module::Module;

pub(super) fn shift(module: &mut Module, base: u32, first_id: u32) {
    let mut by = Shift { base, first_id };
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
    walk_mut(&mut module.top_level, &mut by);
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

    fn function(&mut self, f: &mut FunctionDef) {
        self.range(&mut f.range);
        self.range(&mut f.name_range);
        for p in &mut f.params {
            if let Some(d) = &mut p.default {
                self.expr(d);
            }
        }
        walk_mut(&mut f.body, self);
    }
}

impl VisitMut for Shift {
    fn stmt(&mut self, s: &mut Stmt) {
        s.id += self.first_id;
        self.range(&mut s.range);
    }

    /// Calls are the expressions that carry positions.
    fn expr(&mut self, e: &mut Expr) {
        if let Expr::Call(c) = e {
            self.range(&mut c.range);
        }
        e.for_each_child_mut(&mut |child| self.expr(child));
    }
}
