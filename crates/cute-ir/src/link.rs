//! A file and the modules it imports from its own package, linked into one
//! [`Module`], so that every stage after this one checks a kernel whose
//! helpers, device functions, classes, barrier enums and constants live in
//! sibling files exactly as it checks one whose definitions are all in its
//! own file.
//!
//! Linking works as a linker does, with one address space:
//!
//! - **Which definitions.** Those the file checked reads through its imports,
//!   and those they read in turn (`demand.rs`), from the Python source files
//!   the imports resolve to under the search roots (`resolve.rs`), to a bound
//!   of [`MAX_LINKED_FILES`] files. The CuTe DSL's own modules (`cutlass`,
//!   `cuda`) are never linked: the API table models them.
//!   A module that is missing, cannot be read or is past the bound is simply
//!   not linked, and what the kernel takes from it stays unknown, which the
//!   checker reports by name as it did before ("from another module").
//!   A needed class brings what the module level sets on it after its body
//!   (`PipelineTmaAsync.create = _override_create(Base, PipelineTmaAsync)`),
//!   and a class keeps its bases as its own file's imports qualify them
//!   (`ClassDef::qualified_bases`: a package's subclass of a `cutlass.pipeline`
//!   class is known as one).
//! - **Names.** A definition of a linked file is renamed to its qualified
//!   name (`helper` of `pkg/sync.py` is `pkg.sync.helper`), and every name
//!   that refers to it, in the file itself or through an import
//!   (`from .sync import helper`, `import pkg.sync as s; s.helper`, a
//!   re-export through `__init__.py`), is rewritten to that name
//!   (`rewrite.rs`). The file being checked keeps its own names.
//! - **Positions.** A linked file's byte offsets and statement ids are moved
//!   past those of the files before it (`LinkedFile::base`, `shift.rs`), so
//!   every position in the linked module is unique, and
//!   [`Module::linked_file`] says which file and where a position is. Only
//!   the diagnostics' edge maps them back.
//!
//! Nothing here reads a file: [`Sources`] is asked for texts, so that the
//! command line reads each file once per run, the language server answers
//! with its open buffers and a cache, and both confine reads to where they
//! may go.

mod demand;
pub mod resolve;
mod rewrite;
mod shift;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::module::Module;

/// Files linked into one module, at most: a bound on the work one check
/// does for a package that imports half the world.
pub const MAX_LINKED_FILES: usize = 64;

/// Top-level packages never linked: the CuTe DSL's own, which the API table
/// models, and Python's.
const NOT_LINKED: &[&str] = &["cutlass", "cuda", "torch", "numpy", "triton", "jax", "typing", "enum", "functools", "math", "operator"];

/// Modules of the DSL that are helpers written on the API the table models
/// (the Blackwell GEMM epilogues of `cutlass.utils.gemm.sm100`: a pipeline's
/// waits and releases, a named barrier, TMA stores; the enums and
/// configuration functions of `cutlass.utils.mixed_input_helpers` whose
/// values decide which roles synchronize), and that the table does not
/// model itself: linked from the installed package's source where a Python
/// environment is found, as a package's own helpers are. Only what a kernel
/// reads under them is linked; every other name of `cutlass` stays the API
/// table's.
pub const DSL_HELPER_MODULES: &[&str] = &["cutlass.utils.gemm", "cutlass.utils.mixed_input_helpers"];

/// Whether `rest` read of the DSL module `qualified` (`gemm.sm100.epilogue`
/// of `cutlass.utils`) lies in one of [`DSL_HELPER_MODULES`].
pub fn dsl_helper(qualified: &str, rest: &[&str]) -> bool {
    let mut path = qualified.to_string();
    for r in rest {
        path.push('.');
        path.push_str(r);
    }
    DSL_HELPER_MODULES.iter().any(|m| path.strip_prefix(m).is_some_and(|after| after.starts_with('.') && after.len() > 1))
}

/// Whether an import's qualified path may name a module of the package:
/// any relative import, and an absolute one outside the DSL's and Python's.
pub fn may_link(qualified: &str) -> bool {
    qualified.starts_with('.') || !NOT_LINKED.contains(&qualified.split('.').next().unwrap_or_default())
}

/// Whether any import of the file at `path` names a module of its package.
/// (An import of a package that holds one of [`DSL_HELPER_MODULES`] counts
/// where that module is found.)
pub fn imports_package(path: &Path, imports: &cute_syntax::ImportMap, sources: &dyn Sources) -> bool {
    let roots = resolve::search_roots(path, sources);
    let own = roots.iter().find_map(|r| resolve::module_name(r, path));
    let holds_dsl_helper = |q: &str| {
        let related = |m: &str| m == q || m.starts_with(&format!("{q}.")) || q.starts_with(&format!("{m}."));
        DSL_HELPER_MODULES.iter().any(|m| related(m) && resolve::find(path, own.as_deref(), m, sources).is_some())
    };
    imports.iter().any(|(_, q)| (may_link(q) && resolve::find(path, own.as_deref(), q, sources).is_some()) || holds_dsl_helper(q))
}

/// Where the texts of other files come from, and which may be read.
pub trait Sources {
    /// The text of the Python file at `path`, or `None` when it does not
    /// exist or may not be read.
    fn read(&self, path: &Path) -> Option<Arc<str>>;

    /// Whether a file exists that may be read.
    fn exists(&self, path: &Path) -> bool {
        self.read(path).is_some()
    }

    /// The file lowered (implementors cache it: many kernels import the
    /// same module).
    fn lowered(&self, path: &Path) -> Option<Arc<Module>> {
        let text = self.read(path)?;
        crate::lower_text(&text).ok().map(Arc::new)
    }

    /// Further directories absolute imports are searched under (the
    /// configuration's `src`).
    fn extra_roots(&self) -> &[PathBuf] {
        &[]
    }
}

/// No other file: what a check of a text alone sees.
pub struct NoSources;

impl Sources for NoSources {
    fn read(&self, _: &Path) -> Option<Arc<str>> {
        None
    }
}

/// A file linked into a module, and where its positions are.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LinkedFile {
    pub path: PathBuf,
    /// Its dotted module name, the prefix of its definitions' names.
    pub module: String,
    /// Its byte offsets in the linked module start here.
    pub base: u32,
    pub len: u32,
    /// Its text, for showing the lines a diagnostic points to.
    pub text: Arc<str>,
}

impl LinkedFile {
    /// A position of the linked module as an offset into this file's text.
    pub fn local(&self, range: cute_syntax::TextRange) -> cute_syntax::TextRange {
        cute_syntax::TextRange { start: range.start - self.base, end: range.end.saturating_sub(self.base).min(self.len) }
    }
}

/// One file taking part in a link: the file checked (index 0) or one of
/// its imports.
struct Unit {
    path: PathBuf,
    /// Its dotted name (`None` for a file checked outside any package).
    module: Option<String>,
    lowered: Arc<Module>,
    text: Arc<str>,
}

/// `module` (lowered from `text`, the file at `path`) with what it needs of
/// the modules it imports from its package linked in. A module that needs
/// nothing of its package comes back as it was.
pub fn link(module: Module, text: &str, path: &Path, sources: &dyn Sources) -> Module {
    let roots = resolve::search_roots(path, sources);
    let own_name = roots.iter().find_map(|r| resolve::module_name(r, path));
    let main = Unit { path: path.to_path_buf(), module: own_name, lowered: Arc::new(module), text: Arc::from(text) };
    let in_package = path.parent().is_some_and(|dir| sources.exists(&dir.join("__init__.py")));
    let mut demand = demand::Demand::new(main, sources);
    demand.run();
    let demand::Demand { mut units, imports, needed, problems, .. } = demand;
    if needed.iter().all(BTreeSet::is_empty) {
        let mut module = Arc::try_unwrap(units.swap_remove(0).lowered).unwrap_or_else(|m| (*m).clone());
        module.in_package = in_package;
        module.link_problems = problems.into_iter().collect();
        return module;
    }
    let order = dependency_order(units.len(), &imports);
    let names = rewrite::Names::new(units.iter().map(|u| (u.lowered.as_ref(), u.module.clone().unwrap_or_default())).collect(), imports);
    let mut linked = rewrite::rewrite_unit(&names, 0, (*units[0].lowered).clone());
    linked.in_package = in_package;
    linked.link_problems = problems.into_iter().collect();
    let mut base = round_up(text.len() as u32 + 1);
    let mut next_id = crate::module::next_stmt_id(&linked);
    for j in order.into_iter().filter(|&j| !needed[j].is_empty()) {
        let unit = &units[j];
        let mut m = rewrite::rewrite_unit(&names, j, only_needed(&unit.lowered, &needed[j]));
        shift::shift(&mut m, base, next_id);
        next_id = crate::module::next_stmt_id(&m).max(next_id);
        let len = unit.text.len() as u32;
        linked.linked.push(LinkedFile { path: unit.path.clone(), module: unit.module.clone().unwrap_or_default(), base, len, text: unit.text.clone() });
        base = round_up(base + len + 1);
        linked.functions.extend(m.functions);
        linked.classes.extend(m.classes);
        linked.closures.extend(m.closures);
        linked.top_level.extend(m.top_level);
    }
    linked.sync_helpers = crate::slice::sync_helpers(&linked);
    crate::module::Closure::mark_synchronizing(&mut linked.closures, &linked.sync_helpers);
    linked
}

/// The definitions of `module` that `needed` names: functions and the
/// functions nested in them, classes with their methods and nested classes
/// and what the module level sets on them (`Class.create = ...`), and the
/// assignments of constants. (Its other module-level statements are
/// host code of its own: `if __name__ == "__main__":`.)
fn only_needed(module: &Module, needed: &BTreeSet<String>) -> Module {
    let mut classes = BTreeSet::new();
    for n in needed {
        classes.extend(demand::class_family(module, n));
    }
    let function_needed = |f: &crate::ast::FunctionDef| match &f.class_name {
        Some(c) => classes.contains(c),
        None => needed.iter().any(|n| f.name == *n || demand::nested_in(&f.name, n)),
    };
    let assigns_needed = |s: &crate::ast::Stmt| match &s.kind {
        crate::ast::StmtKind::Assign { targets, .. } => {
            targets.iter().any(|t| t.bound_names().iter().any(|n| needed.contains(n)))
                || demand::class_attribute_set(s).is_some_and(|c| classes.contains(c))
        }
        _ => false,
    };
    Module {
        functions: module.functions.iter().filter(|f| function_needed(f)).cloned().collect(),
        classes: module.classes.iter().filter(|c| classes.contains(&c.name)).cloned().collect(),
        top_level: module.top_level.iter().filter(|s| assigns_needed(s)).cloned().collect(),
        closures: module.closures.iter().filter(|c| function_needed(&c.function)).cloned().collect(),
        imports: module.imports.clone(),
        ..Module::default()
    }
}

fn round_up(n: u32) -> u32 {
    n.div_ceil(4096) * 4096
}

/// The linked units (the file checked aside) with each one after the ones it
/// imports, so that a module's constants are evaluated after those they read.
fn dependency_order(units: usize, imports: &BTreeMap<(usize, String), rewrite::Target>) -> Vec<usize> {
    fn visit(u: usize, imports: &BTreeMap<(usize, String), rewrite::Target>, seen: &mut Vec<bool>, out: &mut Vec<usize>) {
        if seen[u] {
            return;
        }
        seen[u] = true;
        for ((from, _), t) in imports.range((u, String::new())..) {
            if *from != u {
                break;
            }
            visit(t.unit, imports, seen, out);
        }
        out.push(u);
    }
    let mut seen = vec![false; units];
    let mut out = Vec::new();
    seen[0] = true;
    for u in 1..units {
        visit(u, imports, &mut seen, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Files in memory.
    struct Files(Vec<(&'static str, &'static str)>);

    impl Sources for Files {
        fn read(&self, path: &Path) -> Option<Arc<str>> {
            self.0.iter().find(|(p, _)| Path::new(p) == path).map(|(_, t)| Arc::from(*t))
        }
    }

    fn linked(files: &Files, path: &str) -> Module {
        let text = files.read(Path::new(path)).unwrap();
        link(crate::lower_text(&text).unwrap(), &text, Path::new(path), files)
    }

    #[test]
    fn definitions_of_sibling_modules_take_their_qualified_names() {
        let files = Files(vec![
            ("/r/pkg/__init__.py", "from .sync import helper as exported\n"),
            ("/r/pkg/sync.py", "import cutlass.cute as cute\nfrom .bars import Bar, STAGES\n@cute.jit\ndef helper(mbar):\n    cute.arch.mbarrier_wait(mbar, Bar.FULL)\n    inner(STAGES)\ndef inner(n):\n    return n\n"),
            ("/r/pkg/bars.py", "from enum import IntEnum\nSTAGES = 2 * BASE if False else 4\nBASE = 1\nclass Bar(IntEnum):\n    FULL = 1\n"),
            ("/r/pkg/kernel.py", "import cutlass.cute as cute\nfrom .sync import helper\nimport pkg.bars as bars\nfrom pkg import exported\n@cute.kernel\ndef k(mbar):\n    helper(mbar)\n    exported(mbar)\n    n = bars.STAGES\ndef shadow(helper):\n    return helper(1)\n"),
        ]);
        let m = linked(&files, "/r/pkg/kernel.py");
        let names: Vec<String> = m.functions.iter().map(|f| f.display_name()).collect();
        assert!(names.contains(&"pkg.sync.helper".to_string()) && names.contains(&"pkg.sync.inner".to_string()), "{names:?}");
        assert!(m.class("pkg.bars.Bar").is_some());
        assert_eq!(m.kernels().map(|k| k.name.as_str()).collect::<Vec<_>>(), ["k"], "a linked file's kernels are its own");
        let k = m.function(None, "k").unwrap();
        let text = format!("{:?}", k.body);
        assert!(text.contains("Name(\"pkg.sync.helper\")"), "a name imported from a sibling: {text}");
        assert_eq!(text.matches("pkg.sync.helper").count(), 2, "a re-export through __init__.py: {text}");
        assert!(text.contains("Name(\"pkg.bars.STAGES\")"), "a chain through a module alias: {text}");
        let shadow = format!("{:?}", m.function(None, "shadow").unwrap().body);
        assert!(shadow.contains("Name(\"helper\")"), "a parameter is local: {shadow}");
        let helper = m.function(None, "pkg.sync.helper").unwrap();
        let text = format!("{:?}", helper.body);
        assert!(text.contains("pkg.bars.Bar") && text.contains("pkg.sync.inner") && text.contains("pkg.bars.STAGES"), "{text}");
        assert!(m.is_linked(helper.range) && !m.is_linked(k.range));
        let file = m.linked_file(helper.range).unwrap();
        assert_eq!(file.path, Path::new("/r/pkg/sync.py"));
        assert_eq!(&file.text[file.local(helper.name_range).start as usize..][..6], "helper");
        let env = crate::launch::module_env(&m);
        assert_eq!(env.get("pkg.bars.STAGES"), Some(&crate::eval::Value::Int(4)));
        assert!(m.sync_helpers.contains("pkg.sync.helper"), "{:?}", m.sync_helpers);
        let ids: Vec<u32> = m.all_statements().iter().map(|s| s.id).collect();
        let unique: std::collections::BTreeSet<u32> = ids.iter().copied().collect();
        assert_eq!(ids.len(), unique.len(), "statement ids are unique across the files");
    }

    #[test]
    fn names_a_package_imports_whole_are_its_own() {
        let files = Files(vec![
            ("/r/pkg/__init__.py", "from ._core import *\n"),
            ("/r/pkg/_core.py", "def helper(x):\n    return x\n"),
            ("/r/app.py", "from pkg import helper, absent\ndef f():\n    return helper(1) + absent(2)\n"),
        ]);
        let m = linked(&files, "/r/app.py");
        let f = format!("{:?}", m.function(None, "f").unwrap().body);
        assert!(f.contains("Name(\"pkg._core.helper\")"), "{f}");
        assert!(m.link_problems.is_empty(), "a name a wildcard may bring is not reported missing: {:?}", m.link_problems);
    }

    #[test]
    fn missing_modules_and_cycles_link_what_is_there() {
        let files = Files(vec![
            ("/r/a.py", "from b import g\nfrom missing import h\ndef f():\n    return g() + h()\n"),
            ("/r/b.py", "from a import f\ndef g():\n    return f()\n"),
        ]);
        let m = linked(&files, "/r/a.py");
        assert!(m.function(None, "b.g").is_some());
        let g = format!("{:?}", m.function(None, "b.g").unwrap().body);
        assert!(g.contains("Name(\"f\")"), "the file checked keeps its names, also when imported back: {g}");
        let f = format!("{:?}", m.function(None, "f").unwrap().body);
        assert!(f.contains("Name(\"h\")"), "{f}");
    }
}
