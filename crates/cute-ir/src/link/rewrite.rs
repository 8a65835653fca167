//! Names rewritten for a link: a linked file's definitions take their
//! qualified names, and every reference to a definition of a linked file
//! (by its own file, or through an import) is rewritten to that name.
//!
//! Python's scoping is followed as far as it matters here: a name a function
//! binds (a parameter, an assignment, a loop or `with` target) is local and
//! never rewritten; any other name is the module's (its definitions and its
//! imports). Inside a class body, the attributes defined before are the
//! class's own. A chain through a module (`s.helper`, `pkg.sync.helper`,
//! `pipeline_custom.PipelineTmaAsync.create`) is rewritten up to the
//! definition it reaches (`pkg.sync.helper`,
//! `flash_attn.cute.pipeline.PipelineTmaAsync`, then `.create`). Imports that
//! re-export (`from .sync import helper` in an `__init__.py`) are followed,
//! a cycle of them at most [`MAX_HOPS`] times.

use std::collections::{BTreeMap, BTreeSet};

use crate::ast::{walk_mut, Expr, FunctionDef, Param, Stmt, StmtKind, Target as Bind, VisitMut};
use crate::module::Module;

/// Re-exports followed from one name, at most.
const MAX_HOPS: usize = 16;

/// What an import of a unit names: a unit, and attributes of it.
#[derive(Clone, Debug)]
pub(super) struct Target {
    pub unit: usize,
    pub rest: Vec<String>,
}

/// A name of the linked program.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Binding {
    /// A definition, by its name in the linked module.
    Def(String),
    /// A linked module.
    Module(usize),
}

/// The names of every unit of a link.
pub(super) struct Names<'m> {
    /// Per unit: its module and dotted name (unit 0 is the file checked).
    units: Vec<(&'m Module, String)>,
    /// Per unit: the names its module level defines.
    globals: Vec<BTreeSet<String>>,
    imports: BTreeMap<(usize, String), Target>,
}

impl<'m> Names<'m> {
    pub(super) fn new(units: Vec<(&'m Module, String)>, imports: BTreeMap<(usize, String), Target>) -> Self {
        let globals = units.iter().map(|(m, _)| module_globals(m)).collect();
        Names { units, globals, imports }
    }

    /// The name `name` has in the linked module, as a definition of `unit`.
    fn linked_name(&self, unit: usize, name: &str) -> String {
        if unit == 0 {
            name.to_string()
        } else {
            format!("{}.{name}", self.units[unit].1)
        }
    }

    /// What `name` at the module level of `unit` is.
    fn binding(&self, unit: usize, name: &str, hops: usize) -> Option<Binding> {
        if self.globals[unit].contains(name) {
            return Some(Binding::Def(self.linked_name(unit, name)));
        }
        if hops >= MAX_HOPS {
            return None;
        }
        let target = self.imports.get(&(unit, name.to_string()))?;
        let mut binding = Binding::Module(target.unit);
        for attr in &target.rest {
            binding = self.member(&binding, attr, hops + 1)?;
        }
        Some(binding)
    }

    /// `attr` of what `binding` is: a definition or submodule of a module.
    fn member(&self, binding: &Binding, attr: &str, hops: usize) -> Option<Binding> {
        match binding {
            Binding::Module(u) => self.binding(*u, attr, hops),
            Binding::Def(_) => None,
        }
    }
}

/// The names a module level defines: functions (nested ones under their
/// qualified names), classes, constants.
pub(super) fn module_globals(m: &Module) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = m.functions.iter().filter(|f| f.class_name.is_none()).map(|f| f.name.clone()).collect();
    out.extend(m.classes.iter().filter(|c| c.outer.is_none()).map(|c| c.name.clone()));
    for s in &m.top_level {
        if let StmtKind::Assign { targets, .. } = &s.kind {
            out.extend(targets.iter().flat_map(Bind::bound_names));
        }
    }
    out
}

/// `module`, unit `unit` of the link, with its names rewritten.
pub(super) fn rewrite_unit(names: &Names<'_>, unit: usize, mut module: Module) -> Module {
    let scope = Scope { names, unit };
    let rename = |n: &str| if unit == 0 { n.to_string() } else { names.linked_name(unit, n) };
    for f in &mut module.functions {
        scope.function(f);
        if unit != 0 {
            match &mut f.class_name {
                Some(c) => *c = rename(c),
                None => f.name = rename(&f.name),
            }
        }
    }
    for c in &mut module.closures {
        scope.function(&mut c.function);
    }
    let class_names: BTreeSet<String> = module.classes.iter().map(|c| c.name.clone()).collect();
    for c in &mut module.classes {
        let mut own = BTreeSet::new();
        for (name, value) in &mut c.attrs {
            scope.expr(value, &own);
            own.insert(name.clone());
        }
        for field in &mut c.memrange_fields {
            if let Some(len) = &mut field.len {
                scope.expr(len, &BTreeSet::new());
            }
        }
        for b in &mut c.bases {
            if let Some(Binding::Def(d)) = scope.chain(b) {
                *b = d;
            } else if unit != 0 && class_names.contains(b.as_str()) {
                *b = rename(b);
            }
        }
        if unit != 0 {
            c.name = rename(&c.name);
            c.outer = c.outer.as_deref().map(rename);
        }
    }
    // Module-level statements: every name is the module's.
    scope.block(&mut module.top_level, &BTreeSet::new());
    if unit != 0 {
        for s in &mut module.top_level {
            if let StmtKind::Assign { targets, .. } = &mut s.kind {
                for t in targets {
                    rename_bound(t, &rename);
                }
            }
        }
    }
    module
}

fn rename_bound(t: &mut Bind, rename: &dyn Fn(&str) -> String) {
    match t {
        Bind::Name(n) => *n = rename(n),
        Bind::Tuple(items) => items.iter_mut().for_each(|t| rename_bound(t, rename)),
        Bind::Star(t) => rename_bound(t, rename),
        Bind::Attr { .. } | Bind::Subscript { .. } => {}
    }
}

/// The module level of one unit, where names are looked up.
struct Scope<'n, 'm> {
    names: &'n Names<'m>,
    unit: usize,
}

impl Scope<'_, '_> {
    /// The binding a dotted chain written at this module level reaches, in
    /// full (`s.helper` -> `pkg.sync.helper`).
    fn chain(&self, dotted: &str) -> Option<Binding> {
        let mut parts = dotted.split('.');
        let mut b = self.names.binding(self.unit, parts.next()?, 0)?;
        for p in parts {
            b = self.names.member(&b, p, 0)?;
        }
        Some(b)
    }

    fn function(&self, f: &mut FunctionDef) {
        let locals = f.local_names();
        for Param { default, .. } in &mut f.params {
            if let Some(d) = default {
                // Defaults are evaluated where the function is defined.
                self.expr(d, &BTreeSet::new());
            }
        }
        self.block(&mut f.body, &locals);
    }

    fn block(&self, stmts: &mut [Stmt], locals: &BTreeSet<String>) {
        struct InBlock<'s, 'n, 'm> {
            scope: &'s Scope<'n, 'm>,
            locals: &'s BTreeSet<String>,
        }
        impl VisitMut for InBlock<'_, '_, '_> {
            fn expr(&mut self, e: &mut Expr) {
                self.scope.expr(e, self.locals);
            }
        }
        walk_mut(stmts, &mut InBlock { scope: self, locals });
    }

    fn expr(&self, e: &mut Expr, locals: &BTreeSet<String>) {
        // A function defined in another, by its qualified name
        // (`Kernel.kernel.<locals>._cg`, see `lower.rs`).
        if let Expr::Name(n) = e {
            if crate::ast::is_nested_name(n) {
                if self.unit != 0 && self.names.globals[self.unit].contains(n.as_str()) {
                    *n = self.names.linked_name(self.unit, n);
                }
                return;
            }
        }
        // The longest chain of attributes on a module-level name that
        // reaches a definition.
        if let Some(dotted) = e.dotted() {
            let head = dotted.split('.').next().unwrap_or_default();
            if !locals.contains(head) {
                if let Some((def, rest)) = self.definition_prefix(&dotted) {
                    if def != dotted.split('.').take(dotted.split('.').count() - rest.len()).collect::<Vec<_>>().join(".") {
                        *e = rest.into_iter().fold(Expr::Name(def), |base, attr| Expr::Attr { base: Box::new(base), attr });
                    }
                    return;
                }
            }
        }
        e.for_each_child_mut(&mut |child| self.expr(child, locals));
    }

    /// The definition the longest prefix of `dotted` reaches, and the
    /// attributes after it.
    fn definition_prefix(&self, dotted: &str) -> Option<(String, Vec<String>)> {
        let parts: Vec<&str> = dotted.split('.').collect();
        let mut b = self.names.binding(self.unit, parts[0], 0)?;
        let mut used = 1;
        while let Binding::Module(_) = b {
            if used == parts.len() {
                return None;
            }
            b = self.names.member(&b, parts[used], 0)?;
            used += 1;
        }
        let Binding::Def(d) = b else { return None };
        Some((d, parts[used..].iter().map(|s| s.to_string()).collect()))
    }
}
