//! Which definitions of which files a link needs: those the file checked
//! reaches by name, and those they reach in turn.
//!
//! A package's modules import one another freely (a `utils.py` that imports
//! half the package is common), so linking every module an import names
//! would parse a package per file checked. Instead the names are followed:
//! every dotted name the file checked reads whose head is an import
//! (`helper`, `utils.helper`, `pipeline_custom.PipelineTmaAsync.create`) is
//! resolved to the module that defines it, and that definition is needed;
//! a needed function needs what its body reads, a needed class what its
//! methods, class attributes and bases read, a needed constant what its
//! value reads. A file is read and lowered when the first name reaching it
//! is, and only what is needed of it is linked.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use super::{resolve, rewrite::Target, Sources, Unit, MAX_LINKED_FILES};
use crate::ast::{for_each_expr, is_nested_name, Expr, FunctionDef, StmtKind};
use crate::module::Module;

/// Re-exports and submodules followed from one name, at most.
const MAX_HOPS: usize = 16;

pub(super) struct Demand<'s> {
    sources: &'s dyn Sources,
    pub units: Vec<Unit>,
    /// Per unit: the names its module level defines.
    globals: Vec<BTreeSet<String>>,
    /// What each import (and each submodule reached) of a unit names.
    pub imports: BTreeMap<(usize, String), Target>,
    /// Per unit: the module-level definitions needed (all of unit 0's).
    pub needed: Vec<BTreeSet<String>>,
    /// What the file reads of its package that could not be followed: a
    /// module of the package not found, a name a module that does not parse
    /// does not define.
    pub problems: BTreeSet<String>,
    queue: Vec<(usize, String)>,
}

impl<'s> Demand<'s> {
    pub(super) fn new(main: Unit, sources: &'s dyn Sources) -> Self {
        let globals = vec![super::rewrite::module_globals(&main.lowered)];
        Demand { sources, units: vec![main], globals, imports: BTreeMap::new(), needed: vec![BTreeSet::new()], problems: BTreeSet::new(), queue: Vec::new() }
    }

    /// Follows every name the file checked reads, to a fixpoint.
    pub(super) fn run(&mut self) {
        let main = self.units[0].lowered.clone();
        for f in main.functions.iter().chain(main.closures.iter().map(|c| &c.function)) {
            self.reads_of_function(0, f);
        }
        for c in &main.classes {
            self.reads_of_class_header(0, c);
        }
        let mut chains = Vec::new();
        for_each_expr(&main.top_level, &mut |e| collect_chains(e, &mut chains));
        for chain in chains {
            self.chain(0, &chain, &BTreeSet::new());
        }
        while let Some((unit, name)) = self.queue.pop() {
            self.define(unit, &name);
        }
    }

    /// A definition of `unit` is needed: what it reads is too.
    fn define(&mut self, unit: usize, name: &str) {
        let module = self.units[unit].lowered.clone();
        // A function (nested ones by their qualified names).
        for f in module.functions.iter().filter(|f| f.class_name.is_none() && (f.name == name || nested_in(&f.name, name))) {
            self.reads_of_function(unit, f);
        }
        // A class: its methods, nested classes, attributes and bases.
        let classes = class_family(&module, name);
        for c in module.classes.iter().filter(|c| classes.contains(&c.name)) {
            self.reads_of_class_header(unit, c);
        }
        for f in module.functions.iter().filter(|f| f.class_name.as_ref().is_some_and(|c| classes.contains(c))) {
            self.reads_of_function(unit, f);
        }
        // What the module level sets on a class after its body
        // (`PipelineTmaAsync.create = _override_create(Base, PipelineTmaAsync)`).
        for s in &module.top_level {
            if let StmtKind::Assign { value, .. } = &s.kind {
                if class_attribute_set(s).is_some_and(|c| classes.contains(c)) {
                    let mut chains = Vec::new();
                    collect_chains(value, &mut chains);
                    for chain in chains {
                        self.chain(unit, &chain, &BTreeSet::new());
                    }
                }
            }
        }
        // A constant: what its values read.
        for s in &module.top_level {
            if let StmtKind::Assign { targets, value } = &s.kind {
                if targets.iter().any(|t| t.bound_names().iter().any(|n| n == name)) {
                    let mut chains = Vec::new();
                    collect_chains(value, &mut chains);
                    for chain in chains {
                        self.chain(unit, &chain, &BTreeSet::new());
                    }
                }
            }
        }
    }

    fn reads_of_class_header(&mut self, unit: usize, c: &crate::module::ClassDef) {
        let mut chains: Vec<String> = c.bases.clone();
        for (_, value) in &c.attrs {
            collect_chains(value, &mut chains);
        }
        for f in &c.memrange_fields {
            if let Some(len) = &f.len {
                collect_chains(len, &mut chains);
            }
        }
        let own: BTreeSet<String> = c.attrs.iter().map(|(n, _)| n.clone()).collect();
        for chain in chains {
            self.chain(unit, &chain, &own);
        }
    }

    fn reads_of_function(&mut self, unit: usize, f: &FunctionDef) {
        let locals = f.local_names();
        let mut chains = Vec::new();
        for p in &f.params {
            if let Some(d) = &p.default {
                collect_chains(d, &mut chains);
            }
        }
        for_each_expr(&f.body, &mut |e| collect_chains(e, &mut chains));
        for chain in chains {
            self.chain(unit, &chain, &locals);
        }
    }

    /// A dotted name read at the module level of `unit` (or in one of its
    /// functions, with `locals` its own names).
    fn chain(&mut self, unit: usize, chain: &str, locals: &BTreeSet<String>) {
        if is_nested_name(chain) {
            self.need(unit, chain);
            return;
        }
        let parts: Vec<&str> = chain.split('.').collect();
        if locals.contains(parts[0]) {
            return;
        }
        self.path(unit, &parts, 0);
    }

    /// `parts` read at the module level of `unit`: its first is a
    /// definition of `unit`, an import of it, or a submodule of it (a
    /// package).
    fn path(&mut self, unit: usize, parts: &[&str], hops: usize) {
        let Some(&head) = parts.first() else { return };
        if hops > MAX_HOPS {
            return;
        }
        if self.globals[unit].contains(head) {
            self.need(unit, head);
            return;
        }
        let Some(target) = self.import(unit, head, &parts[1..]) else {
            // A module that does not parse may have lost the definition.
            let broken = &self.units[unit];
            if unit != 0 && !broken.lowered.syntax_errors.is_empty() && broken.lowered.imports.get(head).is_none() {
                let module = broken.module.clone().unwrap_or_default();
                self.problems.insert(format!("`{module}` does not parse, and `{head}` is not among what could be read of it"));
            }
            return;
        };
        let rest: Vec<String> = target.rest.iter().cloned().chain(parts[1..].iter().map(|s| s.to_string())).collect();
        let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
        self.path(target.unit, &rest, hops + 1);
    }

    fn need(&mut self, unit: usize, name: &str) {
        if unit != 0 && self.needed[unit].insert(name.to_string()) {
            self.queue.push((unit, name.to_string()));
        }
    }

    /// What the name `local` at the module level of `unit` imports, or, in
    /// a package's `__init__.py`, the submodule of that name; `rest` is
    /// what is read of it (`gemm.sm100.epilogue` of `utils`).
    fn import(&mut self, unit: usize, local: &str, rest: &[&str]) -> Option<Target> {
        // A helper module of the DSL is followed for what is read of it
        // alone: the other names of its packages stay the API table's.
        let dsl = self.units[unit].lowered.imports.get(local).filter(|q| !super::may_link(q)).map(str::to_string);
        if dsl.as_deref().is_some_and(|q| !super::dsl_helper(q, rest)) {
            return None;
        }
        if let Some(t) = self.imports.get(&(unit, local.to_string())) {
            return Some(t.clone());
        }
        // `from .core import *`: the name of a module it imports whole.
        if self.units[unit].lowered.imports.get(local).is_none() {
            if let Some(target) = self.through_wildcards(unit, local) {
                self.imports.insert((unit, local.to_string()), target.clone());
                return Some(target);
            }
        }
        let (qualified, own_submodule) = match self.units[unit].lowered.imports.get(local) {
            Some(q) => (q.to_string(), false),
            None if self.units[unit].path.file_name().is_some_and(|n| n == "__init__.py") => (format!(".{local}"), true),
            None => return None,
        };
        if !super::may_link(&qualified) && dsl.is_none() {
            return None;
        }
        let Some(found) = resolve::find(&self.units[unit].path, self.units[unit].module.as_deref(), &qualified, self.sources) else {
            // A module of the package that is not there (a relative import
            // always names one); other absolute imports are other packages.
            if qualified.starts_with('.') && !own_submodule {
                self.problems.insert(format!("`{qualified}` (imported as `{local}`) is not found"));
            }
            return None;
        };
        if own_submodule && !found.rest.is_empty() {
            // Neither a name of the package nor a module in it, unless a
            // wildcard import or the package's `__getattr__` makes it.
            let package = self.units[unit].module.clone().unwrap_or_default();
            if self.globals[unit].contains("__getattr__") {
                self.problems.insert(format!("`{package}.{local}` is made when asked for, by `{package}.__getattr__`, which is not followed"));
            } else if self.units[unit].lowered.imports.wildcards().is_empty() {
                self.problems.insert(format!("`{package}.{local}` is not found"));
            }
            return None;
        }
        let index = self.unit_of(&found.path, &found.module)?;
        let target = Target { unit: index, rest: found.rest };
        self.imports.insert((unit, local.to_string()), target.clone());
        Some(target)
    }

    /// `local` as a module that `unit` imports whole (`from .core import *`)
    /// defines it.
    fn through_wildcards(&mut self, unit: usize, local: &str) -> Option<Target> {
        let wildcards: Vec<String> = self.units[unit].lowered.imports.wildcards().to_vec();
        for w in wildcards.iter().filter(|w| super::may_link(w)) {
            let Some(found) = resolve::find(&self.units[unit].path, self.units[unit].module.as_deref(), w, self.sources) else { continue };
            if !found.rest.is_empty() {
                continue;
            }
            let Some(index) = self.unit_of(&found.path, &found.module) else { continue };
            if index != unit && (self.globals[index].contains(local) || self.units[index].lowered.imports.get(local).is_some()) {
                return Some(Target { unit: index, rest: vec![local.to_string()] });
            }
        }
        None
    }

    /// The unit of the file at `path`, read and lowered the first time.
    fn unit_of(&mut self, path: &Path, module: &str) -> Option<usize> {
        if let Some(i) = self.units.iter().position(|u| u.path == path) {
            return Some(i);
        }
        if self.units.len() >= MAX_LINKED_FILES {
            return None;
        }
        let (lowered, text): (Arc<Module>, Arc<str>) = (self.sources.lowered(path)?, self.sources.read(path)?);
        self.globals.push(super::rewrite::module_globals(&lowered));
        self.needed.push(BTreeSet::new());
        self.units.push(Unit { path: path.to_path_buf(), module: Some(module.to_string()), lowered, text });
        Some(self.units.len() - 1)
    }
}

/// Whether `function` is defined inside the definition named `outer`
/// (`Op.kernel.<locals>.f` inside `Op`, `f.<locals>.g` inside `f`).
pub(super) fn nested_in(function: &str, outer: &str) -> bool {
    function.strip_prefix(outer).is_some_and(|rest| rest.starts_with('.')) && is_nested_name(function)
}

/// The class `name` and the classes nested in it, at any depth.
pub(super) fn class_family(module: &Module, name: &str) -> BTreeSet<String> {
    let mut family: BTreeSet<String> = module.classes.iter().filter(|c| c.name == name && c.outer.is_none()).map(|c| c.name.clone()).collect();
    loop {
        let more: Vec<String> = module
            .classes
            .iter()
            .filter(|c| c.outer.as_ref().is_some_and(|o| family.contains(o)) && !family.contains(&c.name))
            .map(|c| c.name.clone())
            .collect();
        if more.is_empty() {
            return family;
        }
        family.extend(more);
    }
}

/// The longest dotted names an expression reads (`a.b.c` once, not `a` and
/// `a.b` again).
fn collect_chains(e: &Expr, out: &mut Vec<String>) {
    if let Some(d) = e.dotted() {
        out.push(d);
        return;
    }
    e.for_each_child(&mut |child| collect_chains(child, out));
}

/// The class a module-level statement sets an attribute of
/// (`Class.create = factory(...)`).
pub(super) fn class_attribute_set(s: &crate::ast::Stmt) -> Option<&str> {
    match &s.kind {
        StmtKind::Assign { targets, .. } => targets.iter().find_map(|t| match t {
            crate::ast::Target::Attr { base: Expr::Name(c), .. } => Some(c.as_str()),
            _ => None,
        }),
        _ => None,
    }
}
