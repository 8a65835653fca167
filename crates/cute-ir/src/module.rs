//! A lowered file: its functions (kernels, host functions, helpers, methods),
//! classes, module-level statements and imports.
//!
//! Classes of the file inherit from each other: a class's methods and class
//! attributes not in its body come from its bases in the file (`class B(A):`,
//! [`Module::class_lineage`], nearest first), so the kernel's `self.helper()`
//! and the host's `super().__init__(...)` find the base's, and the object a
//! constructor makes holds the base's class attributes under its own. A base
//! in another module of the package is one of the file's once that module is
//! linked in ([`crate::link`], which adds what the file needs of the modules
//! it imports, under their qualified names); a base that is still not seen
//! makes a `self.method()` that the object's class neither defines nor
//! inherits, where a method of that name synchronizes, leave the kernel not
//! checked.
//!
//! The device code to check ([`Module::kernels`]) is every `@cute.kernel`, and
//! every `@cute.jit` function that synchronizes and that no function of the
//! file calls or hands on (a kernel body shown under `@cute.jit`). Closures
//! (functions defined in another that read its names, [`Module::closures`]) are
//! not functions of the module; they are kept to tell whether they synchronize
//! (by their local name): a call of one that does, or one handed on as a value,
//! makes the kernel not checked, naming it.

use cute_syntax::{DecoratorKind, ImportMap, TextRange};

use crate::ast::{Expr, FunctionDef, Stmt, StmtKind, Target};

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ClassDef {
    pub name: String,
    /// The class whose body defines it, for a nested class.
    pub outer: Option<String>,
    /// Its base classes named by a name or a dotted name (`class B(A):`,
    /// `class B(cutlass.pipeline.PipelineAsync):`), in order:
    /// those of the file are where its methods and class attributes not
    /// defined in its body come from.
    pub bases: Vec<String>,
    /// `bases` as the imports of the file that defines the class qualify
    /// them (`cutlass.pipeline.PipelineAsync` for `PipelineAsyncOg`), one
    /// per base, whatever the link renamed `bases` to.
    pub qualified_bases: Vec<String>,
    /// Class-level assignments (`num_warps = 4`).
    pub attrs: Vec<(String, Expr)>,
    /// Annotated fields of shared-memory storage (`tiles: MemRange[dtype,
    /// n]` in a `@cute.struct`).
    pub memrange_fields: Vec<MemRangeField>,
    pub range: TextRange,
}

/// A field of shared-memory storage: `name: MemRange[dtype, len]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MemRangeField {
    pub name: String,
    /// The element type as written (`cutlass.Int64`).
    pub dtype: String,
    /// The element count as written (`2 * STAGES`).
    pub len: Option<crate::ast::Expr>,
}

/// Classes of an inheritance chain followed, at most.
const MAX_LINEAGE: usize = 8;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Module {
    pub functions: Vec<FunctionDef>,
    pub classes: Vec<ClassDef>,
    /// Statements outside any definition (constants, `if __name__ == ...`).
    pub top_level: Vec<Stmt>,
    pub imports: ImportMap,
    pub syntax_errors: Vec<TextRange>,
    /// Kernels in top-level sections left out for a syntax error (see
    /// `cute_syntax::recover`): not checked until they parse.
    pub broken_kernels: Vec<(String, TextRange)>,
    /// Those sections (whole lines), empty when nothing was left out.
    pub left_out: Vec<TextRange>,
    /// Functions and methods of this file that (transitively) synchronize.
    pub sync_helpers: std::collections::BTreeSet<String>,
    /// Functions defined inside others that read a name of the function
    /// around them: not functions of the module (what they compute depends
    /// on the call they were made in), kept to tell whether they
    /// synchronize, which a call of one is then reported as not modelled.
    pub closures: Vec<Closure>,
    /// The files of its package linked into it (`crate::link`), whose
    /// definitions it holds under their qualified names, at the positions
    /// each file's `base` says. Empty for a file checked alone.
    pub linked: Vec<crate::link::LinkedFile>,
    /// Whether the file is a module of a package (its directory holds an
    /// `__init__.py`, as `crate::link` finds): its `@cute.jit` functions are
    /// device functions other modules call, never kernel bodies.
    pub in_package: bool,
    /// What the file reads of its package that linking could not follow
    /// (`crate::link`), said to the user: its kernels are checked without it.
    pub link_problems: Vec<String>,
    /// What is computed from its definitions and asked again for each of
    /// its kernels, kept after the first ask (see [`Derived`]).
    pub derived: Derived,
}

/// What is computed from a module's definitions and asked again for each of
/// its kernels ([`crate::slice::helpers`]), kept after the first ask. A
/// module is built (lowered, linked, or framed for one kernel) and then
/// only read while its kernels are checked. A clone starts empty, and a set
/// kept when the module had other numbers of functions and closures than
/// it has now is computed again rather than answered from, so a module
/// added to after an ask is never answered for from before.
///
/// It takes no part in the module's equality: it is a function of the rest.
#[derive(Default)]
pub struct Derived {
    helpers: [std::sync::OnceLock<(usize, usize, std::sync::Arc<std::collections::BTreeSet<String>>)>; crate::slice::HelperKind::COUNT],
}

impl Derived {
    pub(crate) fn helpers(
        &self,
        module: &Module,
        kind: crate::slice::HelperKind,
        compute: impl FnOnce() -> std::collections::BTreeSet<String>,
    ) -> std::sync::Arc<std::collections::BTreeSet<String>> {
        let counts = (module.functions.len(), module.closures.len());
        let kept = &self.helpers[kind as usize];
        match kept.get() {
            Some((functions, closures, set)) if (*functions, *closures) == counts => set.clone(),
            Some(_) => std::sync::Arc::new(compute()),
            None => kept.get_or_init(|| (counts.0, counts.1, std::sync::Arc::new(compute()))).2.clone(),
        }
    }
}

impl Clone for Derived {
    fn clone(&self) -> Self {
        Derived::default()
    }
}

impl PartialEq for Derived {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Derived {}

impl std::fmt::Debug for Derived {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Derived")
    }
}

/// A function defined inside another that reads a name the other binds.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Closure {
    /// Named as Python qualifies it (`Kernel.kernel.<locals>.load_next`).
    pub function: FunctionDef,
    /// A name of the function around it that it reads.
    pub captured: String,
    /// Whether it synchronizes, as the whole file tells (see
    /// `slice::helpers_calling`): set with the module's `sync_helpers`.
    pub synchronizes: bool,
}

impl Closure {
    /// Marks the closures `sync_helpers` names (by their local names) as
    /// synchronizing.
    pub fn mark_synchronizing(closures: &mut [Closure], sync_helpers: &std::collections::BTreeSet<String>) {
        for c in closures {
            c.synchronizes = sync_helpers.contains(c.local_name());
        }
    }

    /// The name the function around it calls it by (`load_next`).
    pub fn local_name(&self) -> &str {
        self.function.name.rsplit(".<locals>.").next().unwrap_or(&self.function.name)
    }
}

impl Module {
    /// Device code to check: `@cute.kernel` functions, and `@cute.jit`
    /// functions that synchronize themselves instead of launching a kernel
    /// and that no function of the file calls or hands on (snippets that
    /// show a kernel body under `@cute.jit`; a device function called from
    /// a kernel is checked inlined there, where its arguments are known).
    /// In a module of a package, `@cute.jit` functions are the package's
    /// device functions, checked where its kernels call them.
    pub fn kernels(&self) -> impl Iterator<Item = &FunctionDef> {
        let mut used = self.called_names();
        used.extend(self.names_handed_on());
        self.functions.iter().filter(move |f| !self.is_linked(f.range)).filter(move |f| match f.decorator {
            Some(DecoratorKind::Kernel) => true,
            Some(DecoratorKind::Jit) => !self.in_package && synchronizes_without_launching(f) && !used.contains(&f.name),
            None => false,
        })
    }

    /// Functions and methods of the file that device code uses as values
    /// (`partial(self.load, pipeline)`, a helper passed to another): they
    /// run with arguments their user supplies, so checking them on their own
    /// can only say that those are unknown. Host code (undecorated
    /// functions) handing a function to `cute.compile` does not count.
    fn names_handed_on(&self) -> std::collections::BTreeSet<String> {
        let functions: std::collections::BTreeSet<&str> = self.functions.iter().map(|f| f.name.as_str()).collect();
        self.functions
            .iter()
            .filter(|f| f.decorator.is_some())
            .flat_map(|f| f.names_read())
            .filter(|name| functions.contains(name.as_str()))
            .collect()
    }

    /// Names of the functions and methods the file's functions and
    /// closures call (`helper(...)`, `self.helper(...)`), a function's calls
    /// of itself aside.
    pub fn called_names(&self) -> std::collections::BTreeSet<String> {
        let mut called = std::collections::BTreeSet::new();
        for f in self.functions.iter().chain(self.closures.iter().map(|c| &c.function)) {
            crate::ast::for_each_expr(&f.body, &mut |e| {
                let mut calls = Vec::new();
                e.calls(&mut calls);
                called.extend(calls.iter().filter_map(|c| crate::slice::callee_name(c)).filter(|n| *n != f.name).map(str::to_string));
            });
        }
        called
    }

    /// The function `name` of the file (`class` `None`), or the method
    /// `name` of `class`: defined in its body, else inherited from its base
    /// classes in the file, in Python's order for single inheritance chains
    /// (the first base first, depth first).
    pub fn function(&self, class: Option<&str>, name: &str) -> Option<&FunctionDef> {
        let own = |c: Option<&str>| self.functions.iter().find(|f| f.name == name && f.class_name.as_deref() == c);
        let Some(class) = class else { return own(None) };
        self.class_lineage(class).into_iter().find_map(|c| own(Some(c)))
    }

    /// `class` and the classes of the file it inherits from, nearest first
    /// (a base named twice, or a cycle, is visited once).
    pub fn class_lineage<'a>(&'a self, class: &'a str) -> Vec<&'a str> {
        let mut lineage = vec![class];
        let mut i = 0;
        while i < lineage.len() && lineage.len() < MAX_LINEAGE {
            if let Some(c) = self.class(lineage[i]) {
                for b in &c.bases {
                    if !lineage.contains(&b.as_str()) && self.class(b).is_some() {
                        lineage.push(b);
                    }
                }
            }
            i += 1;
        }
        lineage
    }

    pub fn class(&self, name: &str) -> Option<&ClassDef> {
        self.classes.iter().find(|c| c.name == name)
    }

    /// Module-level `NAME = expr` assignments, last one winning.
    pub fn constant(&self, name: &str) -> Option<&Expr> {
        let mut found = None;
        for s in &self.top_level {
            if let StmtKind::Assign { targets, value } = &s.kind {
                if targets.iter().any(|t| matches!(t, Target::Name(n) if n == name)) {
                    found = Some(value);
                }
            }
        }
        found
    }

    /// The linked file a position is in, `None` for the file's own.
    pub fn linked_file(&self, range: TextRange) -> Option<&crate::link::LinkedFile> {
        self.linked.iter().find(|f| range.start >= f.base && range.start <= f.base + f.len)
    }

    /// Whether a position is in a linked file rather than the file's own.
    pub fn is_linked(&self, range: TextRange) -> bool {
        self.linked.first().is_some_and(|f| range.start >= f.base)
    }

    /// The statements of the file's own module level and functions (not
    /// those of the modules linked into it): where its host code is.
    pub fn own_statements(&self) -> Vec<&Stmt> {
        let mut out = nested_statements(&self.top_level);
        for f in self.functions.iter().filter(|f| !self.is_linked(f.range)) {
            out.extend(nested_statements(&f.body));
        }
        out.retain(|s| !self.is_linked(s.range));
        out
    }

    /// Every statement of the file, including nested ones and function bodies.
    pub fn all_statements(&self) -> Vec<&Stmt> {
        let mut out = nested_statements(&self.top_level);
        for f in &self.functions {
            out.extend(nested_statements(&f.body));
        }
        out
    }
}

/// The first statement id no statement of `module` has.
pub fn next_stmt_id(module: &Module) -> crate::ast::StmtId {
    let closures = module.closures.iter().flat_map(|c| nested_statements(&c.function.body));
    let classes = module.all_statements().into_iter().chain(closures).map(|s| s.id).max();
    classes.map_or(0, |m| m + 1)
}

/// The statements of a block and of the blocks nested in them, in order.
pub fn nested_statements(stmts: &[Stmt]) -> Vec<&Stmt> {
    fn walk<'a>(stmts: &'a [Stmt], out: &mut Vec<&'a Stmt>) {
        for s in stmts {
            out.push(s);
            match &s.kind {
                StmtKind::If { then, orelse, .. } => {
                    walk(then, out);
                    walk(orelse, out);
                }
                StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. } => walk(body, out),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(stmts, &mut out);
    out
}

fn synchronizes_without_launching(f: &FunctionDef) -> bool {
    use crate::api::{Api, Effect};
    let mut syncs = false;
    let mut launches = false;
    let mut visit = |e: &Expr| {
        let mut calls = Vec::new();
        e.calls(&mut calls);
        for c in calls {
            if matches!(&c.func, Expr::Attr { attr, .. } if attr == "launch") {
                launches = true;
            }
            if matches!(Api::of_call(c).map(Api::effect), Some(Effect::Sync)) {
                syncs = true;
            }
        }
    };
    crate::ast::for_each_expr(&f.body, &mut visit);
    syncs && !launches
}

#[cfg(test)]
mod tests {
    const SOURCE: &str = r#"
from functools import partial
import cutlass
import cutlass.cute as cute


class Kernel:
    @cute.jit
    def load(self, gate: cute.Pointer):
        cute.arch.mbarrier_wait(gate, 0)

    @cute.jit
    def snippet(self, gate: cute.Pointer):
        cute.arch.mbarrier_wait(gate, 0)

    @cute.kernel
    def kernel(self, gate: cute.Pointer):
        load_fn = partial(self.load, gate)
        load_fn()


def host(k: Kernel):
    cute.compile(k.snippet)
"#;

    fn checked() -> Vec<String> {
        let module = crate::lower_text(SOURCE).unwrap();
        module.kernels().map(|k| k.name.clone()).collect()
    }

    #[test]
    fn a_device_function_handed_on_by_device_code_is_not_checked_on_its_own() {
        assert!(!checked().contains(&"load".to_string()), "{:?}", checked());
    }

    #[test]
    fn host_code_handing_a_function_on_does_not_count() {
        assert_eq!(checked(), vec!["snippet".to_string(), "kernel".to_string()]);
    }
}
