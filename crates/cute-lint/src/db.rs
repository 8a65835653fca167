//! The salsa database: one input per open file, tracked queries over it.
//!
//! The queries between the text and the diagnostics are in
//! [`crate::incremental`]: chunks of the file lowered one by one, then one
//! query per kernel. This module holds the database, the file input, the entry
//! points and the three memoized checks with their in-flight state: an
//! instantiation keyed by the kernel cut down to its slice with positions
//! ranked (`instantiate_key`), an exploration keyed by the model with positions
//! taken out (`explore_model`), and a memory-ordering analysis keyed by the
//! model with its memory operations, positions ranked (`analyze_memory`). Each
//! key outlives its last use by 1,024 revisions (`KEPT_REVISIONS`), so an edit
//! to a kernel's datapath or comments checks nothing, an edit to its
//! synchronization instantiates and explores that kernel only, and restoring a
//! previous version checks nothing.
//!
//! [`check_counts`] says how many explorations, instantiations and
//! memory-ordering analyses the process has run (the server's
//! `cute-lsp/checkCounts`, which the tests and the latency benchmark read).

use std::sync::Arc;

use cute_check::explore::{explore, Budget, ExploreOptions, Outcome};
use cute_check::Model;
use cute_syntax::LineIndex;

use crate::incremental::{abandon::Inflight, canonical, clean::CleanKernels, positions, syntax::TreeCache};
use crate::{analysis, Diagnostic};

/// A Python file as the editor or the file system has it.
#[salsa::input]
pub struct SourceFile {
    #[returns(ref)]
    pub path: String,
    #[returns(ref)]
    pub text: String,
}

/// State shared by every clone of a database that salsa does not track: the
/// last syntax tree of each file (re-parsed incrementally), the checks
/// running on their own threads, and the kernels found clean.
#[derive(Default)]
pub struct Caches {
    pub(crate) trees: TreeCache,
    pub(crate) clean_kernels: CleanKernels,
    pub(crate) instantiations: Inflight<canonical::Key, Arc<CheckedInstance>>,
    pub(crate) explorations: Inflight<(Model, Budget), Arc<Outcome>>,
    pub(crate) memory_analyses: Inflight<Model, Arc<MemoryResult>>,
    /// The last line index of each file, which the next one is an edit of.
    line_indexes: std::sync::Mutex<rustc_hash::FxHashMap<salsa::Id, Arc<LineIndex>>>,
    /// Files of the package that are not open, read from disk once per
    /// [`Package::epoch`] (see [`crate::sources::PackageSources`]).
    pub(crate) disk: crate::sources::DiskSources,
}

/// The package the open files belong to: the files open in the editor (whose
/// texts are inputs of their own), the directories other files may be read
/// from, and an epoch the server moves when files change on disk. A check
/// that links other files (`cute_ir::link`) reads them through it, so an
/// edit to an open module re-checks the files that link it, and a change on
/// disk re-checks every file that links something.
#[salsa::input]
pub struct Package {
    #[returns(ref)]
    pub open: Arc<std::collections::BTreeMap<std::path::PathBuf, SourceFile>>,
    #[returns(ref)]
    pub roots: Arc<Vec<std::path::PathBuf>>,
    /// Directories absolute imports are also searched under, and read
    /// from: the `site-packages` of the project's Python environment
    /// (`Config::environment_roots`).
    #[returns(ref)]
    pub search: Arc<Vec<std::path::PathBuf>>,
    pub epoch: u64,
}

#[salsa::db]
pub trait Db: salsa::Database {
    fn caches(&self) -> &Caches;

    /// The package open files are checked in, if the database has one
    /// (without one, a file is checked alone).
    fn package(&self) -> Option<Package> {
        None
    }
}

#[salsa::db]
#[derive(Default, Clone)]
pub struct Database {
    storage: salsa::Storage<Self>,
    caches: Arc<Caches>,
    package: Option<Package>,
}

impl Database {
    /// Checks from now on link the modules files import from their package,
    /// read from `open` first, then from disk under `roots`. Returns the
    /// package, whose fields the caller sets as files open, close and change
    /// on disk (then calling [`Database::forget_disk`]).
    pub fn with_package(&mut self, roots: Vec<std::path::PathBuf>) -> Package {
        self.with_package_searching(roots, Vec::new())
    }

    /// [`Database::with_package`], with absolute imports also searched
    /// under `search` (and read from there).
    pub fn with_package_searching(&mut self, roots: Vec<std::path::PathBuf>, search: Vec<std::path::PathBuf>) -> Package {
        let real = |dirs: Vec<std::path::PathBuf>| dirs.iter().map(|d| d.canonicalize().unwrap_or_else(|_| d.clone())).collect();
        let package = Package::new(self, Arc::new(Default::default()), Arc::new(real(roots)), Arc::new(real(search)), 0);
        self.package = Some(package);
        package
    }

    /// Forgets the files read from disk (call with a new epoch).
    pub fn forget_disk(&self) {
        self.caches.disk.forget();
    }
}

#[salsa::db]
impl salsa::Database for Database {}

#[salsa::db]
impl Db for Database {
    fn caches(&self) -> &Caches {
        &self.caches
    }

    fn package(&self) -> Option<Package> {
        self.package
    }
}

/// Line starts of the file, for converting byte ranges to positions: found
/// again only where the text differs from the file's last index.
#[salsa::tracked(returns(ref))]
pub fn line_index(db: &dyn Db, file: SourceFile) -> Arc<LineIndex> {
    use salsa::plumbing::AsId;
    let text = file.text(db);
    let mut last = db.caches().line_indexes.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let index = Arc::new(match last.get(&file.as_id()) {
        Some(previous) => previous.edited(text),
        None => LineIndex::new(text),
    });
    last.insert(file.as_id(), index.clone());
    index
}

/// Every diagnostic of the file, in source order; the same as
/// [`analysis::analyze_text`] gives for its text.
///
/// Each kernel is a query of its own (see [`crate::incremental`]): an edit
/// re-checks only the kernels whose synchronization it changes, and the
/// diagnostics of the others move with their text.
#[salsa::tracked(returns(ref))]
pub fn lint_file(db: &dyn Db, file: SourceFile) -> Arc<Vec<Diagnostic>> {
    crate::incremental::lint(db, file, &analysis::AnalysisOptions::default())
}

/// [`lint_file`] with other options (the budgets of a project's or an
/// editor's configuration, see [`crate::config`]), memoized per options.
pub fn lint_file_with(db: &dyn Db, file: SourceFile, options: analysis::AnalysisOptions) -> Arc<Vec<Diagnostic>> {
    lint_request(db, LintRequest::new(db, file, options)).clone()
}

/// A file and the options to lint it with, as one query key.
#[salsa::interned]
struct LintRequest<'db> {
    file: SourceFile,
    #[returns(ref)]
    options: analysis::AnalysisOptions,
}

#[salsa::tracked(returns(ref))]
fn lint_request<'db>(db: &'db dyn Db, request: LintRequest<'db>) -> Arc<Vec<Diagnostic>> {
    crate::incremental::lint(db, *request.file(db), request.options(db))
}

/// How many checks this process has run: explorations of a model,
/// instantiations of a kernel (per thread of a cluster) and memory-ordering
/// analyses of a model, for tests and
/// benchmarks that show what an edit re-checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CheckCounts {
    pub explorations: usize,
    pub instantiations: usize,
    /// Files checked as one (the per-kernel path could not be used).
    pub whole_file: usize,
    /// Memory-ordering analyses of a model with memory operations.
    pub memory_analyses: usize,
}

pub(crate) static INSTANTIATIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
pub(crate) static WHOLE_FILE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

pub fn check_counts() -> CheckCounts {
    use std::sync::atomic::Ordering::Relaxed;
    CheckCounts {
        explorations: cute_check::explore::EXPLORATIONS.load(Relaxed),
        instantiations: INSTANTIATIONS.load(Relaxed),
        whole_file: WHOLE_FILE.load(Relaxed),
        memory_analyses: cute_check::memory::ANALYSES.load(Relaxed),
    }
}

/// An instantiation with positions taken out (see [`canonical`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckedInstance {
    pub model: Model,
    pub open_conditions: Vec<cute_check::OpenCondition>,
    /// Statements its threads executed, and their costs by warp (see
    /// [`cute_check::Instantiated`]).
    pub steps: usize,
    pub costs: Vec<cute_check::WarpCost>,
    pub other_ways_over_budget: bool,
}

/// How many revisions a check's key outlives its last use: a kernel whose
/// synchronization is edited and then restored finds its old check, and a
/// long session does not keep every model it ever saw.
const KEPT_REVISIONS: usize = 1024;

/// A kernel to instantiate, without positions (kept [`KEPT_REVISIONS`]).
#[salsa::interned(revisions = KEPT_REVISIONS)]
pub(crate) struct InstanceKey<'db> {
    #[returns(ref)]
    pub key: canonical::Key,
}

/// The instantiation of one kernel, memoized across edits.
#[salsa::tracked(returns(ref), lru = 2048)]
pub(crate) fn instantiate_key<'db>(db: &'db dyn Db, key: InstanceKey<'db>) -> Arc<CheckedInstance> {
    let key = key.key(db).clone();
    db.caches().instantiations.run(db, &key.clone(), move || {
        INSTANTIATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let inst = key.instantiate();
        Arc::new(CheckedInstance { model: inst.model, open_conditions: inst.open_conditions, steps: inst.steps, costs: inst.costs, other_ways_over_budget: inst.other_ways_over_budget })
    })
}

/// The explorer of the database: each model is explored once, keyed by the
/// model with source positions taken out.
pub(crate) fn memo_explorer(db: &dyn Db) -> impl FnMut(&Model, &ExploreOptions) -> Outcome + '_ {
    move |model: &Model, explore_options: &ExploreOptions| {
        let (key, sites) = model.position_independent();
        let key = CheckedModel::new(db, key, explore_options.budget.clone());
        let mut outcome = explore_model(db, key).as_ref().clone();
        // Hazards name sites by rank in the position-independent model.
        for (hazard, _) in &mut outcome.hazards {
            let rank = hazard.site().start as usize;
            if let Some(site) = sites.get(rank) {
                *hazard = hazard.at(*site);
            }
        }
        outcome
    }
}

/// A model to explore, without source positions, with its budget (kept
/// [`KEPT_REVISIONS`]).
#[salsa::interned(revisions = KEPT_REVISIONS)]
pub struct CheckedModel<'db> {
    #[returns(ref)]
    pub model: Model,
    #[returns(ref)]
    pub budget: Budget,
}

/// The exploration of one model, memoized across edits.
#[salsa::tracked(returns(ref), lru = 2048)]
pub fn explore_model<'db>(db: &'db dyn Db, key: CheckedModel<'db>) -> Arc<Outcome> {
    let inflight = (key.model(db).clone(), key.budget(db).clone());
    let (model, budget) = inflight.clone();
    db.caches().explorations.run(db, &inflight, move || {
        let options = ExploreOptions { budget, full_expansion: false };
        Arc::new(explore(&model, &options))
    })
}

/// What the memory-ordering analysis of a model gives: its findings, or why
/// it was not done.
pub type MemoryResult = Result<Vec<cute_check::memory::MemoryFinding>, String>;

/// The memory-ordering analysis of the database: each model is analysed
/// once, keyed by the model with its memory operations and source offsets
/// ranked ([`positions::memory_key`]); the findings get the caller's offsets
/// back.
pub(crate) fn memo_memory(db: &dyn Db) -> impl FnMut(&Model) -> MemoryResult + '_ {
    move |model: &Model| {
        if model.memory.is_empty() {
            return cute_check::memory::analyze(model);
        }
        let (key, ranks) = positions::memory_key(model);
        let mut result = analyze_memory(db, MemoryModel::new(db, key)).as_ref().clone();
        if let Ok(findings) = &mut result {
            for f in findings {
                positions::memory_finding(f, &mut ranks.decode());
            }
        }
        result
    }
}

/// A model to analyse for memory ordering, its offsets ranked (kept
/// [`KEPT_REVISIONS`]).
#[salsa::interned(revisions = KEPT_REVISIONS)]
pub struct MemoryModel<'db> {
    #[returns(ref)]
    pub model: Model,
}

/// The memory-ordering analysis of one model, memoized across edits.
#[salsa::tracked(returns(ref), lru = 2048)]
pub fn analyze_memory<'db>(db: &'db dyn Db, key: MemoryModel<'db>) -> Arc<MemoryResult> {
    let model = key.model(db);
    let analysed = model.clone();
    db.caches().memory_analyses.run(db, model, move || Arc::new(cute_check::memory::analyze(&analysed)))
}
