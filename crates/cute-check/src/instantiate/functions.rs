//! Which statements a thread runs: the kernel's slice, and the slice of each
//! helper of the file it inlines, made once when a thread first inlines it.
//!
//! [`FunctionIndex`] finds a callee as `Module::function` does (the first
//! definition of a name, or a method a class of the file inherits), since every
//! call a thread evaluates looks its callee up.

use std::collections::BTreeSet;

use rustc_hash::FxHashMap as HashMap;

use cute_ir::ast::{FunctionDef, StmtId};
use cute_ir::Module;
use cute_syntax::TextRange;

/// [`cute_ir::Kept`] as flags by statement id: every thread asks about every
/// statement it meets.
pub(super) struct KeptStatements {
    /// Per statement id: kept, kept for memory ordering alone (a load,
    /// store or copy), and a header kept for memory ordering alone.
    flags: Vec<(bool, bool, bool)>,
}

impl KeptStatements {
    pub(super) fn of(kept: &cute_ir::Kept) -> Self {
        let last = |ids: &std::collections::BTreeSet<StmtId>| ids.last().map_or(0, |&l| l as usize + 1);
        let len = last(&kept.ids).max(last(&kept.memory_only)).max(last(&kept.memory_controls));
        let mut flags = vec![(false, false, false); len];
        for &id in &kept.ids {
            flags[id as usize].0 = true;
        }
        for &id in &kept.memory_only {
            flags[id as usize].1 = true;
        }
        for &id in &kept.memory_controls {
            flags[id as usize].2 = true;
        }
        KeptStatements { flags }
    }

    pub(super) fn contains(&self, id: StmtId) -> bool {
        self.flags.get(id as usize).is_some_and(|f| f.0)
    }

    pub(super) fn memory_only(&self, id: StmtId) -> bool {
        self.flags.get(id as usize).is_some_and(|f| f.1)
    }

    /// An `if`, loop or `with` header that only memory accesses depend on
    /// (`cute_ir::Kept::memory_controls`).
    pub(super) fn memory_control(&self, id: StmtId) -> bool {
        self.flags.get(id as usize).is_some_and(|f| f.2)
    }
}

/// The file's functions and methods by class and name, found as
/// `Module::function` finds them (the first of a name): every call a thread
/// evaluates looks its callee up.
pub(super) struct FunctionIndex<'m> {
    module: &'m Module,
    pub(super) sync_helpers: &'m BTreeSet<String>,
    /// What the file's functions do, for slicing them (`sync_helpers`, and
    /// those that advance something, found when a thread first inlines one).
    helpers: std::sync::OnceLock<cute_ir::slice::Helpers>,
    by_name: HashMap<(Option<&'m str>, &'m str), &'m FunctionDef>,
    /// Each function's slice as a helper (`cute_ir::slice::slice_helper`),
    /// made when a thread first inlines it.
    slices: HashMap<TextRange, std::sync::OnceLock<KeptStatements>>,
    /// The names and attributes each function binds
    /// (`same_condition::rebound_by`), found when a thread first inlines it.
    rebound: HashMap<TextRange, std::sync::OnceLock<BTreeSet<String>>>,
    /// The module's subclasses of the modelled pipeline classes.
    pub(super) subclasses: crate::pipeline::subclass::Subclasses,
}

impl<'m> FunctionIndex<'m> {
    pub(super) fn of(module: &'m Module, sync_helpers: &'m BTreeSet<String>) -> Self {
        let mut by_name = HashMap::default();
        for f in &module.functions {
            by_name.entry((f.class_name.as_deref(), f.name.as_str())).or_insert(f);
        }
        let slices = module.functions.iter().map(|f| (f.range, std::sync::OnceLock::new())).collect();
        let rebound = module.functions.iter().map(|f| (f.range, std::sync::OnceLock::new())).collect();
        let subclasses = crate::pipeline::subclass::Subclasses::of(module);
        FunctionIndex { module, sync_helpers, helpers: std::sync::OnceLock::new(), by_name, slices, rebound, subclasses }
    }

    /// The method `name` that class `class` itself defines.
    pub(super) fn get_own(&self, class: &str, name: &str) -> Option<&'m FunctionDef> {
        self.by_name.get(&(Some(class), name)).copied()
    }

    pub(super) fn get(&self, class: Option<&str>, name: &str) -> Option<&'m FunctionDef> {
        let index: &HashMap<(Option<&str>, &str), &'m FunctionDef> = &self.by_name;
        if let Some(f) = index.get(&(class, name)) {
            return Some(f);
        }
        // A method the class inherits from a class of the file.
        let class = class?;
        let module: &'m Module = self.module;
        module.class_lineage(class).into_iter().skip(1).find_map(|c| index.get(&(Some(c), name)).copied())
    }

    /// The names and attributes helper `f` binds (see
    /// `same_condition::rebound_by`).
    pub(super) fn rebound_by(&self, f: &FunctionDef) -> std::borrow::Cow<'_, BTreeSet<String>> {
        match self.rebound.get(&f.range) {
            Some(names) => std::borrow::Cow::Borrowed(names.get_or_init(|| super::same_condition::rebound_by(f))),
            None => std::borrow::Cow::Owned(super::same_condition::rebound_by(f)),
        }
    }

    /// The statements of helper `f` a thread inlining it runs.
    pub(super) fn slice_of(&self, f: &FunctionDef) -> Body<'_> {
        match self.slices.get(&f.range) {
            Some(slice) => Body::Helper(slice.get_or_init(|| {
                let helpers = self.helpers.get_or_init(|| cute_ir::slice::Helpers {
                    synchronizing: self.sync_helpers.clone(),
                    advancing: cute_ir::slice::helpers(self.module, cute_ir::slice::HelperKind::Advancing).as_ref().clone(),
                });
                KeptStatements::of(&cute_ir::slice::slice_helper(f, helpers))
            })),
            None => Body::Whole,
        }
    }
}

/// Which statements of a block a thread runs.
#[derive(Clone, Copy)]
pub(super) enum Body<'k> {
    /// The kernel's: those its slice keeps (see [`KeptStatements`]).
    Kernel,
    /// An inlined helper's: those its own slice keeps.
    Helper(&'k KeptStatements),
    /// Every statement (a function the index does not hold).
    Whole,
}
