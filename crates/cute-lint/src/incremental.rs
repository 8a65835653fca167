//! The queries from a file's text to its diagnostics, keyed by file and by
//! kernel, so that an edit re-runs what it changes and nothing else.
//!
//! ```text
//! text ──layout──▶ chunks (top-level statements as whole lines; only the edited ones re-parsed)
//!   chunk text + imports ──lower_chunk──▶ Piece (lowered, offsets from the chunk)
//!   pieces ──facts──▶ kernels, helpers, sync helpers      pieces ──launches──▶ Launch per kernel
//!   per kernel: KernelUnit (its chunk, the helper chunks it names, launch, options; no positions)
//!     ──kernel_result──▶ diagnostics in a frame of those chunks alone
//!         ├─ instantiate_key (slice cut, positions ranked: no position, no datapath)
//!         ├─ explore_model   (model without positions)
//!         └─ analyze_memory  (model with its memory operations, positions ranked)
//!   ──lint──▶ diagnostics moved to where the chunks are, suppressions, order
//! ```
//!
//! Early cutoff: `chunks`, `facts` (functions, kernels, the sync-helper
//! fixpoint) and `launch_modules` (the launch of every kernel, searched with
//! kernel bodies cut to their tests of the warp index) hold no positions and compare equal when an edit
//! leaves them alone, so salsa stops an edit inside a kernel there; a kernel's
//! unit holds its chunk's text but no position, so moving a kernel (lines
//! inserted above) reuses its result, and it holds only the helper chunks the
//! kernel can reach by name, so editing a host function or another kernel's
//! helper reuses it too; an instantiation is keyed by the kernel's slice with
//! positions ranked, so editing a kernel's datapath or comments re-runs its
//! rules on the memoized model (well under a millisecond) but no check.
//!
//! The helper chunks of a kernel are those it can reach by name
//! (`frame_helpers`: a chunk defining a function or class that the kernel's
//! chunk spells, or that the launch's values hold, then the chunks those spell,
//! to a fixpoint), since instantiation finds functions only by the names the
//! code spells. The rules run on a text made of those chunks alone, and the
//! diagnostics are moved to where the chunks are. Diagnostics whose messages
//! name lines (found by checking them a second time with every chunk moved) are
//! keyed by those lines too. A kernel found clean is remembered by its
//! instantiation key (`clean.rs`), and long checks run on threads the query can
//! walk away from (`abandon.rs`).
//!
//! A file with a syntax error is chunked after the sections holding the error
//! are left out (`cute_syntax::recover`), as the whole-file path lowers it:
//! while a line is half typed, its own kernel is named in the syntax-error note
//! and not checked, and every other kernel keeps its key, so nothing else is
//! checked again (`syntax.rs`).
//!
//! A file that imports a module of its package, or is one, while the
//! database has a [`crate::db::Package`] (the language server's workspace),
//! is checked as one with what it needs of the package linked in
//! (`linked_module`, as `analysis::analyze_file` does), still with memoized
//! checks: its result depends on the texts of the modules it read, so an edit
//! to one of them checks it again.
//!
//! Exactness: the result equals `analysis::analyze_text`'s for the same text
//! (`tests/incremental.rs` compares them on every fixture and corpus file and
//! along random edits). Where that cannot be guaranteed (a syntax error whose
//! recovery differs between the chunk and the file, an import bound twice, a
//! diagnostic pointing outside its kernel's frame) the whole file is checked as
//! one, still with memoized checks.

pub(crate) mod abandon;
pub(crate) mod canonical;
pub(crate) mod clean;
pub(crate) mod positions;
pub(crate) mod syntax;

use std::collections::BTreeSet;
use std::sync::Arc;

use cute_ir::ast::FunctionDef;
use cute_ir::launch::{Launch, Launches};
use cute_ir::Module;
use cute_syntax::{DecoratorKind, ImportMap, LineIndex};

use crate::analysis::{self, AnalysisOptions};
use crate::context::KernelContext;
use crate::db::{instantiate_key, line_index, memo_explorer, memo_memory, Db, InstanceKey, SourceFile, INSTANTIATIONS, WHOLE_FILE};
use crate::rules::analysis_incomplete;
use crate::{suppress, Diagnostic};

use positions::Remap;
use syntax::{Layout, Piece};

#[salsa::tracked(returns(ref))]
fn layout(db: &dyn Db, file: SourceFile) -> Arc<Layout> {
    use salsa::plumbing::AsId;
    let (trees, id, text) = (&db.caches().trees, file.as_id(), file.text(db));
    // Parsing gives up when an edit is waiting (it cannot be interrupted
    // otherwise: salsa cancels a query only when it calls another one).
    let pending_edit = || salsa::Cancelled::catch(std::panic::AssertUnwindSafe(|| db.unwind_if_revision_cancelled())).is_err();
    match syntax::layout(trees, id, text, &pending_edit) {
        Some(layout) => Arc::new(layout),
        None => {
            db.unwind_if_revision_cancelled();
            Arc::new(syntax::layout(trees, id, text, &|| false).unwrap_or_default())
        }
    }
}

/// The text of a chunk: whole lines, with their line breaks.
#[salsa::interned]
struct ChunkText<'db> {
    #[returns(ref)]
    text: String,
}

/// The file's import statements, one per line.
#[salsa::interned]
struct Header<'db> {
    #[returns(ref)]
    text: String,
}

#[salsa::tracked(returns(ref))]
fn chunk_imports<'db>(db: &'db dyn Db, chunk: ChunkText<'db>) -> Arc<Vec<String>> {
    Arc::new(syntax::imports(chunk.text(db)))
}

#[salsa::tracked(returns(ref))]
fn header_imports<'db>(db: &'db dyn Db, header: Header<'db>) -> Arc<ImportMap> {
    Arc::new(cute_ir::lower_text(header.text(db)).map(|m| m.imports).unwrap_or_default())
}

/// A chunk and the imports to lower it with.
#[salsa::interned]
struct LowerKey<'db> {
    chunk: ChunkText<'db>,
    header: Header<'db>,
}

#[salsa::tracked(returns(ref))]
fn lower_chunk<'db>(db: &'db dyn Db, key: LowerKey<'db>) -> Arc<Piece> {
    let header = key.header(db);
    Arc::new(syntax::lower(&db.caches().trees, key.chunk(db).text(db), header.text(db), header_imports(db, *header)))
}

/// The chunks that hold code, without positions.
#[salsa::tracked(returns(ref))]
fn chunks<'db>(db: &'db dyn Db, file: SourceFile) -> Vec<ChunkText<'db>> {
    let text = file.text(db);
    let layout = layout(db, file);
    layout
        .chunks
        .iter()
        .filter(|c| c.code)
        .map(|c| ChunkText::new(db, text[c.start as usize..c.end as usize].to_string()))
        .collect()
}

#[salsa::tracked]
fn header<'db>(db: &'db dyn Db, file: SourceFile) -> Header<'db> {
    let mut text = String::new();
    for chunk in chunks(db, file) {
        for import in chunk_imports(db, *chunk).iter() {
            text.push_str(import);
            text.push('\n');
        }
    }
    use salsa::plumbing::AsId;
    db.caches().trees.set_header(file.as_id(), &text);
    Header::new(db, text)
}

#[salsa::tracked(returns(ref))]
fn pieces<'db>(db: &'db dyn Db, file: SourceFile) -> Vec<LowerKey<'db>> {
    let header = header(db, file);
    chunks(db, file).iter().map(|&chunk| LowerKey::new(db, chunk, header)).collect()
}

/// What the file's kernels need of the whole file, without positions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Facts {
    /// Every chunk lowered as the whole file would lower it.
    ok: bool,
    /// Functions that (transitively) synchronize, as lowering the file computes them.
    sync_helpers: BTreeSet<String>,
    /// Every function, in order.
    directory: Vec<canonical::Entry>,
    /// (chunk, function in the chunk) of each kernel, in order.
    kernels: Vec<(u32, u32)>,
    /// Chunks holding a function `instantiate` may inline (any but a
    /// kernel), each with the names a call can find it by: its functions'
    /// names and the classes they belong to.
    helpers: Vec<(u32, Vec<String>)>,
    /// Per chunk and function: whether a launch can depend on its whole
    /// body (not only on its role tests).
    launch_bodies: Vec<Vec<bool>>,
}

#[salsa::tracked(returns(ref))]
fn facts(db: &dyn Db, file: SourceFile) -> Arc<Facts> {
    let pieces: Vec<&Arc<Piece>> = pieces(db, file).iter().map(|&k| lower_chunk(db, k)).collect();
    let mut facts = Facts { ok: pieces.iter().all(|p| p.ok), ..Facts::default() };
    let classes: BTreeSet<&str> = pieces.iter().flat_map(|p| p.classes.iter().map(String::as_str)).collect();
    // As `Module::kernels`: a `@cute.jit` function some function of the
    // file calls, or device code hands on, is checked where it is called,
    // not on its own.
    // Only the names of `@cute.jit` kernels are looked for (usually none),
    // not every name every function reads.
    let jit: BTreeSet<&str> = pieces
        .iter()
        .flat_map(|p| p.functions.iter())
        .filter(|f| f.kernel && f.decorator == Some(DecoratorKind::Jit))
        .map(|f| f.name.as_str())
        .collect();
    let mut called: BTreeSet<&str> = BTreeSet::new();
    if !jit.is_empty() {
        for f in pieces.iter().flat_map(|p| p.functions.iter().chain(p.closures.iter())) {
            let callees = f.callees.iter().map(String::as_str).filter(|n| *n != f.name);
            called.extend(callees.chain(f.names_read.iter().map(String::as_str)).filter(|n| jit.contains(n)));
        }
    }
    for (i, piece) in pieces.iter().enumerate() {
        for (j, f) in piece.functions.iter().enumerate() {
            facts.directory.push((f.class.clone(), f.name.clone(), f.decorator));
            let called_jit = f.decorator == Some(DecoratorKind::Jit) && called.contains(f.name.as_str());
            if f.kernel && !called_jit {
                facts.kernels.push((i as u32, j as u32));
            }
        }
        // Classes without methods too: a quick fix may edit a kernel's
        // shared-storage struct.
        if piece.functions.iter().any(|f| cute_ir::ast::inlined_when_called(f.decorator)) || !piece.classes.is_empty() {
            let mut names: Vec<String> =
                piece.functions.iter().flat_map(|f| std::iter::once(&f.name).chain(&f.class)).chain(&piece.classes).cloned().collect();
            names.sort();
            names.dedup();
            facts.helpers.push((i as u32, names));
        }
        facts.launch_bodies.push(
            piece
                .functions
                .iter()
                .map(|f| {
                    f.decorator != Some(DecoratorKind::Kernel)
                        || f.compiles
                        || f.bare_calls.iter().any(|n| classes.contains(n.as_str()))
                })
                .collect(),
        );
    }
    // The fixpoint of `cute_ir::slice::sync_helpers`, on each function's
    // summary: its closures (by local name) and the names it binds to a
    // `partial` of a helper count as helpers too.
    let all: Vec<_> = pieces.iter().flat_map(|p| p.functions.iter().chain(p.closures.iter())).collect();
    loop {
        let before = facts.sync_helpers.len();
        for f in &all {
            if !facts.sync_helpers.contains(&f.name)
                && (f.syncs || f.callees.iter().any(|c| facts.sync_helpers.contains(c)))
            {
                facts.sync_helpers.insert(f.name.clone());
            }
            for (name, of) in &f.partials {
                if facts.sync_helpers.contains(of) && !facts.sync_helpers.contains(name) {
                    facts.sync_helpers.insert(name.clone());
                }
            }
        }
        if facts.sync_helpers.len() == before {
            break;
        }
    }
    Arc::new(facts)
}

/// A chunk as the launch search sees it: positions zeroed, and the bodies
/// of kernels whose bodies the search does not evaluate cut to what it
/// reads of them (`cute_ir::launch::role_skeleton`: the warps their role
/// tests select, for a block it must assume), so that editing a kernel's
/// datapath does not search the launches again.
#[salsa::interned]
struct LaunchKey<'db> {
    lower: LowerKey<'db>,
    #[returns(ref)]
    bodies: Vec<bool>,
}

#[salsa::tracked(returns(ref))]
fn launch_module<'db>(db: &'db dyn Db, key: LaunchKey<'db>) -> Arc<Module> {
    let mut module = lower_chunk(db, *key.lower(db)).module.clone();
    for (f, keep) in module.functions.iter_mut().zip(key.bodies(db)) {
        if !keep {
            // What the search reads of a kernel whose launch does not
            // resolve its block: the warps its role tests select.
            f.body = cute_ir::launch::role_skeleton(&f.body);
        }
    }
    struct Zero;
    impl Remap for Zero {
        fn offset(&mut self, _: u32) -> u32 {
            0
        }
        fn id(&mut self, id: u32) -> u32 {
            id
        }
    }
    positions::module(&mut module, &mut Zero);
    Arc::new(module)
}

#[salsa::tracked(returns(ref))]
fn launch_modules(db: &dyn Db, file: SourceFile) -> Vec<Arc<Module>> {
    let facts = facts(db, file);
    pieces(db, file)
        .iter()
        .zip(&facts.launch_bodies)
        .map(|(&lower, bodies)| launch_module(db, LaunchKey::new(db, lower, bodies.clone())).clone())
        .collect()
}

/// The launch of each kernel, in the order of [`Facts::kernels`].
#[salsa::tracked(returns(ref))]
fn launches(db: &dyn Db, file: SourceFile) -> Arc<Vec<Launch>> {
    let modules = launch_modules(db, file);
    let facts = facts(db, file);
    let mut module = Module { imports: header_imports(db, *header(db, file)).as_ref().clone(), ..Module::default() };
    let mut first_fn = Vec::with_capacity(modules.len());
    for (slot, m) in modules.iter().enumerate() {
        let mut m = m.as_ref().clone();
        // Statement ids need only be unique: each chunk gets a range of its own.
        let base = (slot as i64) << 20;
        positions::module(&mut m, &mut positions::Shift { offset: 0, id: base });
        first_fn.push(module.functions.len());
        module.functions.extend(m.functions);
        module.closures.extend(m.closures);
        module.classes.extend(m.classes);
        module.top_level.extend(m.top_level);
    }
    let found = Launches::of_module(&module);
    let launches =
        facts.kernels.iter().map(|&(p, f)| found.of_kernel(&module, &module.functions[first_fn[p as usize] + f as usize])).collect();
    Arc::new(launches)
}

/// The helper chunks of a file, in order, each with the names it defines.
#[salsa::interned]
struct HelperChunks<'db> {
    #[returns(ref)]
    chunks: Vec<(LowerKey<'db>, Vec<String>)>,
}

/// A kernel's chunk, the file's helper chunks, and the functions its launch
/// hands it as values.
#[salsa::interned]
struct FrameQuery<'db> {
    kernel: LowerKey<'db>,
    helpers: HelperChunks<'db>,
    #[returns(ref)]
    handed: Vec<String>,
}

/// Which helper chunks (indices into [`HelperChunks`]) a kernel's check can
/// read: those defining a name that the kernel's chunk spells or its launch
/// hands it, then those defining a name spelled in the chunks taken, to a
/// fixpoint. Instantiation finds functions and methods only by names the
/// code spells (or the launch's values hold), so every helper it can inline
/// is in the frame; the others stay out of it, and editing them (a host
/// function, another kernel's helper) leaves the kernel's unit unchanged.
#[salsa::tracked(returns(ref))]
fn frame_helpers<'db>(db: &'db dyn Db, query: FrameQuery<'db>) -> Vec<u32> {
    let kernel = *query.kernel(db);
    let helpers = query.helpers(db).chunks(db);
    let mut names: BTreeSet<&str> = lower_chunk(db, kernel).identifiers.iter().map(String::as_str).collect();
    names.extend(query.handed(db).iter().map(String::as_str));
    let mut taken = vec![false; helpers.len()];
    loop {
        let mut grew = false;
        for (i, (key, defines)) in helpers.iter().enumerate() {
            if !taken[i] && *key != kernel && defines.iter().any(|d| names.contains(d.as_str())) {
                taken[i] = true;
                grew = true;
                names.extend(lower_chunk(db, *key).identifiers.iter().map(String::as_str));
            }
        }
        if !grew {
            break;
        }
    }
    (0..helpers.len() as u32).filter(|&i| taken[i as usize]).collect()
}

/// What one kernel's diagnostics depend on, without positions.
#[salsa::interned]
struct KernelUnit<'db> {
    /// Its chunk and the helper chunks it can reach, in file order.
    #[returns(ref)]
    frame: Vec<LowerKey<'db>>,
    /// Which of them is the kernel's, and which function in it.
    kernel: (u32, u32),
    context: FileContext<'db>,
    launch: KernelLaunch<'db>,
    #[returns(ref)]
    options: AnalysisOptions,
}

/// A kernel's launch, as one id: interned once per change of the file's
/// launches, not hashed again by every edit that keys the kernel.
#[salsa::interned]
struct KernelLaunch<'db> {
    #[returns(ref)]
    launch: Launch,
}

/// Per kernel, in the order of [`Facts::kernels`]: its launch, and the
/// functions the launch's values hand it (see [`frame_helpers`]).
#[salsa::tracked(returns(ref))]
fn kernel_launches<'db>(db: &'db dyn Db, file: SourceFile) -> Vec<(KernelLaunch<'db>, Vec<String>)> {
    launches(db, file).iter().map(|l| (KernelLaunch::new(db, l.clone()), canonical::functions_handed(l))).collect()
}

/// What every kernel of the file shares, interned when it changes.
#[salsa::tracked]
fn file_context<'db>(db: &'db dyn Db, file: SourceFile) -> FileContext<'db> {
    let facts = facts(db, file);
    FileContext::new(db, header(db, file), facts.sync_helpers.clone(), facts.directory.clone())
}

/// The file's helper chunks with the names each defines, interned when they change.
#[salsa::tracked]
fn helper_chunks<'db>(db: &'db dyn Db, file: SourceFile) -> HelperChunks<'db> {
    let (facts, keys) = (facts(db, file), pieces(db, file));
    let chunks = facts.helpers.iter().map(|(c, names)| (keys[*c as usize], names.clone()));
    HelperChunks::new(db, chunks.collect::<Vec<_>>())
}

/// What every kernel of a file shares.
#[salsa::interned]
struct FileContext<'db> {
    header: Header<'db>,
    #[returns(ref)]
    sync_helpers: BTreeSet<String>,
    #[returns(ref)]
    directory: Vec<canonical::Entry>,
}

/// One kernel's diagnostics in a frame: its chunks laid out one after the
/// other, `spans` saying where (end inclusive, since an edit may insert
/// right after a chunk).
#[derive(Clone, Debug, PartialEq, Eq)]
struct KernelResult {
    diagnostics: Vec<Diagnostic>,
    spans: Vec<(u32, u32)>,
    /// Every range lies in a chunk of the frame.
    mappable: bool,
    /// The diagnostics do not depend on the lines the chunks start on.
    invariant: bool,
}

#[salsa::tracked(returns(ref))]
fn kernel_result<'db>(db: &'db dyn Db, unit: KernelUnit<'db>) -> Arc<KernelResult> {
    // One line break before each chunk, so that every offset is in one
    // chunk, and offset 0 is in none: it stays the start of the file (where
    // a fix adds an import).
    let mut a = check_in_frame(db, unit, |_, _| 1);
    if a.mappable && !a.diagnostics.is_empty() {
        // Do the messages name lines? Check again with every chunk moved down
        // by a different number of lines.
        let b = check_in_frame(db, unit, |i, _| i + 2);
        a.invariant = b.mappable && to_frame(&b, &a.spans) == a.diagnostics;
    } else {
        a.invariant = true;
    }
    Arc::new(a)
}

/// A kernel whose diagnostics name lines, with the lines its chunks start on.
#[salsa::interned]
struct KernelAt<'db> {
    unit: KernelUnit<'db>,
    #[returns(ref)]
    lines: Vec<u32>,
}

#[salsa::tracked(returns(ref))]
fn kernel_result_at<'db>(db: &'db dyn Db, at: KernelAt<'db>) -> Arc<KernelResult> {
    let lines = at.lines(db);
    let mut result = check_in_frame(db, *at.unit(db), |i, line| (lines[i] as usize).saturating_sub(line));
    result.invariant = false;
    Arc::new(result)
}

/// The diagnostics of `result` with each range moved from its frame to the
/// chunk spans `to` (same chunks, other offsets).
fn to_frame(result: &KernelResult, to: &[(u32, u32)]) -> Vec<Diagnostic> {
    struct Move<'a>(&'a [(u32, u32)], &'a [(u32, u32)]);
    impl Remap for Move<'_> {
        fn offset(&mut self, p: u32) -> u32 {
            match self.0.iter().position(|&(s, e)| s <= p && p <= e) {
                Some(i) => self.1[i].0 + (p - self.0[i].0),
                None => p,
            }
        }
        fn id(&mut self, id: u32) -> u32 {
            id
        }
    }
    let mut diagnostics = result.diagnostics.clone();
    for d in &mut diagnostics {
        positions::diagnostic(d, &mut Move(&result.spans, to));
    }
    diagnostics
}

/// Runs the kernel's rules on a text made of its frame's chunks, each
/// preceded by `pad(index, line)` line breaks (`line`: the line the chunk
/// would start on without them).
fn check_in_frame<'db>(db: &'db dyn Db, unit: KernelUnit<'db>, pad: impl Fn(usize, usize) -> usize) -> KernelResult {
    let context = unit.context(db);
    let mut text = String::new();
    let mut spans = Vec::new();
    let mut module = Module {
        imports: header_imports(db, *context.header(db)).as_ref().clone(),
        sync_helpers: context.sync_helpers(db).clone(),
        ..Module::default()
    };
    let mut ids = 0u32;
    let mut lines = 0usize;
    let (kernel_entry, kernel_fn) = *unit.kernel(db);
    let mut kernel_index = 0;
    for (i, &key) in unit.frame(db).iter().enumerate() {
        let breaks = pad(i, lines);
        text.extend(std::iter::repeat_n('\n', breaks));
        lines += breaks;
        let chunk = key.chunk(db).text(db);
        let start = text.len() as u32;
        text.push_str(chunk);
        if !chunk.ends_with('\n') {
            text.push('\n');
        }
        lines += chunk.matches('\n').count() + usize::from(!chunk.ends_with('\n'));
        spans.push((start, start + chunk.len() as u32));
        let piece = lower_chunk(db, key);
        let mut m = piece.module.clone();
        positions::module(&mut m, &mut positions::Shift { offset: start as i64, id: ids as i64 });
        ids += piece.ids;
        if i as u32 == kernel_entry {
            kernel_index = module.functions.len() + kernel_fn as usize;
        }
        module.functions.extend(m.functions);
        module.closures.extend(m.closures);
        module.classes.extend(m.classes);
        module.top_level.extend(m.top_level);
    }
    cute_ir::module::Closure::mark_synchronizing(&mut module.closures, &module.sync_helpers);
    let index = LineIndex::new(&text);
    let kernel = &module.functions[kernel_index];
    let ctx = KernelContext { text: &text, index: &index, module: &module, kernel };
    let directory = context.directory(db);
    let (launch, options) = (unit.launch(db).launch(db), unit.options(db));
    let kept = cute_ir::slice_kernel(&module, kernel, &text).kept_ids();
    let inst_options = analysis::instantiate_options(options);
    let clean_key = canonical::key(directory, &module, kernel, &kept, launch, &cute_check::Scenario::new(), &inst_options)
        .map(|(key, _)| (key, options.clone()));
    if clean_key.as_ref().is_some_and(|key| db.caches().clean_kernels.contains(key)) {
        return KernelResult { diagnostics: Vec::new(), spans, mappable: true, invariant: false };
    }
    let mut checkers = analysis::Checkers {
        explore: &mut memo_explorer(db),
        instantiate: &mut memo_instantiator(db, directory),
        memory: &mut memo_memory(db),
    };
    let diagnostics = analysis::check_slice_with(&ctx, &kept, launch, options, &mut checkers);
    if let (true, Some(key)) = (diagnostics.is_empty(), clean_key) {
        db.caches().clean_kernels.insert(key);
    }
    // Offset 0 is the start of the file in the frame as in the file (where
    // a fix adds an import): no chunk starts there, but in a frame laid out
    // on the file's own lines whose first chunk is the file's first line.
    let inside = |p: u32| p == 0 || spans.iter().any(|&(s, e)| s <= p && p <= e);
    let mappable = diagnostics.iter().all(|d| {
        let mut ok = true;
        let mut d = d.clone();
        positions::diagnostic(
            &mut d,
            &mut positions::Visit(|o: Option<u32>, _| {
                if let Some(o) = o {
                    ok &= inside(o);
                }
            }),
        );
        ok
    });
    KernelResult { diagnostics, spans, mappable, invariant: false }
}

/// The instantiator of the database: keyed by [`canonical::key`], run once
/// per key, the positions of the caller put back.
fn memo_instantiator<'a>(db: &'a dyn Db, directory: &'a [canonical::Entry]) -> impl FnMut(
    &Module,
    &FunctionDef,
    &cute_ir::Kept,
    &Launch,
    &cute_check::Scenario,
    &cute_check::InstantiateOptions,
    &cute_check::Reuse,
) -> cute_check::Instantiated
       + 'a {
    // A way whose key cannot be made runs on the module as it is: its runs
    // are kept apart from those of the keys (whose positions are ranks).
    let mut direct: Option<(cute_syntax::TextRange, cute_check::Reuse)> = None;
    move |module, kernel, kept, launch, scenario, options, reuse| match canonical::key(
        directory, module, kernel, kept, launch, scenario, options,
    ) {
        Some((key, canon)) => {
            let checked = canonical::reusing(reuse, || instantiate_key(db, InstanceKey::new(db, key)));
            let mut model = checked.model.clone();
            let mut open_conditions = checked.open_conditions.clone();
            let mut costs = checked.costs.clone();
            canon.decode(&mut model, &mut open_conditions, &mut costs);
            // Remembered: no thread ran for it.
            cute_check::Instantiated { model, open_conditions, threads_run: 0, steps: checked.steps, costs, other_ways_over_budget: checked.other_ways_over_budget }
        }
        None => {
            INSTANTIATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let same_kernel = direct.as_ref().is_some_and(|(range, _)| *range == kernel.range);
            if !same_kernel {
                direct = Some((kernel.range, cute_check::Reuse::default()));
            }
            let reuse = direct.as_ref().map(|(_, reuse)| reuse);
            cute_check::instantiate_reusing(module, kernel, kept, launch, scenario, options, reuse)
        }
    }
}

/// Whether the chunks lowered one by one are what lowering the file gives:
/// every chunk lowered cleanly, and where the file's tree has a syntax error
/// the chunk's own tree has the same nodes.
fn chunks_match(db: &dyn Db, file: SourceFile, layout: &Layout) -> bool {
    let text = file.text(db);
    let keys = pieces(db, file);
    let mut code = 0;
    for span in &layout.chunks {
        if !span.code {
            continue;
        }
        let Some(&key) = keys.get(code) else { return false };
        code += 1;
        let piece = lower_chunk(db, key);
        if piece.errors != span.errors {
            return false;
        }
        // Imports inside broken code may read differently on their own.
        if span.errors.is_some() && text[span.start as usize..span.end as usize].contains("import") {
            return false;
        }
    }
    code == keys.len()
}

/// The chunks the check of the file's `k`-th kernel reads, in file order:
/// its own and the helper chunks it can reach (see [`frame_helpers`]).
fn kernel_frame(db: &dyn Db, file: SourceFile, k: usize) -> Vec<u32> {
    let facts = facts(db, file);
    let chunk = facts.kernels[k].0;
    let handed = kernel_launches(db, file)[k].1.clone();
    let query = FrameQuery::new(db, pieces(db, file)[chunk as usize], helper_chunks(db, file), handed);
    let mut frame: Vec<u32> = frame_helpers(db, query).iter().map(|&i| facts.helpers[i as usize].0).collect();
    if let Err(at) = frame.binary_search(&chunk) {
        frame.insert(at, chunk);
    }
    frame
}

/// The diagnostics of `file`: per kernel, moved to where its chunks are.
pub(crate) fn lint(db: &dyn Db, file: SourceFile, options: &AnalysisOptions) -> Arc<Vec<Diagnostic>> {
    let layout = layout(db, file);
    if !layout.parsed || *links_package(db, file) {
        return whole_file(db, file, options);
    }
    let facts = facts(db, file);
    if !facts.ok || !chunks_match(db, file, layout) {
        return whole_file(db, file, options);
    }
    let launches = kernel_launches(db, file);
    let code: Vec<&syntax::Span> = layout.chunks.iter().filter(|c| c.code).collect();
    let context = file_context(db, file);
    let keys = pieces(db, file);

    let mut diags = Vec::new();
    if let (Some(first), false) = (layout.first_error, facts.kernels.is_empty() && layout.broken_kernels.is_empty()) {
        let kernels: Vec<String> = layout.broken_kernels.iter().map(|(name, _)| name.clone()).collect();
        diags.push(analysis_incomplete::syntax_error(first, !layout.left_out.is_empty(), &kernels));
    }
    for (k, &(chunk, function)) in facts.kernels.iter().enumerate() {
        let frame = kernel_frame(db, file, k);
        let entry = frame.binary_search(&chunk).unwrap_or(0) as u32;
        let unit = KernelUnit::new(
            db,
            frame.iter().map(|&c| keys[c as usize]).collect::<Vec<_>>(),
            (entry, function),
            context,
            launches[k].0,
            options.clone(),
        );
        let mut result = kernel_result(db, unit);
        if !result.invariant {
            let lines: Vec<u32> = frame.iter().map(|&c| code[c as usize].line).collect();
            result = kernel_result_at(db, KernelAt::new(db, unit, lines));
        }
        if !result.mappable {
            return whole_file(db, file, options);
        }
        let real: Vec<(u32, u32)> = frame.iter().map(|&c| (code[c as usize].start, code[c as usize].end)).collect();
        diags.extend(to_frame(result, &real));
    }
    Arc::new(finish(diags, line_index(db, file)))
}

/// What `analyze_text_with` does after the kernels: suppressions, order.
fn finish(mut diags: Vec<Diagnostic>, index: &LineIndex) -> Vec<Diagnostic> {
    diags.retain(|d| !suppress::is_suppressed(d, index));
    diags.sort_by_key(|d| (d.range.start, d.code));
    diags.dedup();
    diags
}

/// Whether the file imports a module of its package (`cute_ir::link`), read
/// off its import lines: such a file is checked as one, with what it needs
/// of those modules linked in ([`linked_module`]).
/// A module of a package is checked that way too, whatever it imports: its
/// `@cute.jit` functions are device functions (`Module::in_package`).
#[salsa::tracked]
fn links_package(db: &dyn Db, file: SourceFile) -> bool {
    let Some(package) = db.package() else { return false };
    let path = std::path::Path::new(file.path(db));
    let sources = crate::sources::PackageSources::new(db, package);
    if path.parent().is_some_and(|dir| cute_ir::link::Sources::exists(&sources, &dir.join("__init__.py"))) {
        return true;
    }
    let Ok(tree) = cute_syntax::parse(header(db, file).text(db)) else { return false };
    cute_ir::link::imports_package(path, &ImportMap::from_tree(&tree), &sources)
}

/// The file lowered with what it needs of its package linked in; `None`
/// when it needs nothing of it (or the database has no package).
#[salsa::tracked(returns(ref))]
pub(crate) fn linked_module(db: &dyn Db, file: SourceFile) -> Option<Arc<Module>> {
    let package = db.package()?;
    let text = file.text(db);
    let module = cute_ir::lower_recovering(&cute_syntax::parse(text).ok()?);
    let sources = crate::sources::PackageSources::new(db, package);
    let linked = cute_ir::link::link(module, text, std::path::Path::new(file.path(db)), &sources);
    (!linked.linked.is_empty() || linked.in_package).then(|| Arc::new(linked))
}

/// The files a check of `file` read besides it (the modules linked in).
pub fn linked_paths(db: &dyn Db, file: SourceFile) -> Vec<std::path::PathBuf> {
    match *links_package(db, file) {
        true => linked_module(db, file).iter().flat_map(|m| m.linked.iter().map(|f| f.path.clone())).collect(),
        false => Vec::new(),
    }
}

/// The file checked as one, as `analysis::analyze_text_with` does, with
/// memoized checks; with what it needs of its package linked in, as
/// `analysis::analyze_file` does.
fn whole_file(db: &dyn Db, file: SourceFile, options: &AnalysisOptions) -> Arc<Vec<Diagnostic>> {
    WHOLE_FILE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let text = file.text(db);
    let index = line_index(db, file);
    let linked = if *links_package(db, file) { linked_module(db, file).clone() } else { None };
    let own;
    let module: &Module = match &linked {
        Some(m) => m,
        None => match cute_syntax::parse(text) {
            Ok(tree) => {
                own = cute_ir::lower_recovering(&tree);
                &own
            }
            Err(e) => return Arc::new(finish(vec![analysis_incomplete::file_not_parsed(&e.to_string())], index)),
        },
    };
    let linked_text = linked.as_ref().map(|m| crate::linked::linked_text(text, m));
    let linked_index = linked_text.as_deref().map(LineIndex::new);
    let (text, index_of_text) = match (&linked_text, &linked_index) {
        (Some(t), Some(i)) => (t.as_str(), i),
        _ => (text.as_str(), &**index),
    };
    let mut diags = Vec::new();
    let kernels: Vec<&FunctionDef> = module.kernels().collect();
    diags.extend(analysis_incomplete::syntax_error_of(&module, !kernels.is_empty()));
    let launches = Launches::of_module(&module);
    let directory: Vec<canonical::Entry> =
        module.functions.iter().map(|f| (f.class_name.clone(), f.name.clone(), f.decorator)).collect();
    let mut explorer = memo_explorer(db);
    let mut instantiator = memo_instantiator(db, &directory);
    let mut memory = memo_memory(db);
    let mut checkers = analysis::Checkers { explore: &mut explorer, instantiate: &mut instantiator, memory: &mut memory };
    for kernel in kernels {
        let ctx = KernelContext { text, index: index_of_text, module, kernel };
        let launch = launches.of_kernel(module, kernel);
        let found = analysis::check_kernel_with(&ctx, &launch, options, &mut checkers);
        diags.extend(found.into_iter().map(|d| crate::linked::relocate(d, module, kernel)));
    }
    Arc::new(finish(diags, index))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Database;

    /// Kernel `a` calls `load`; kernel `b` builds a `Runner`, whose method
    /// calls `store`; `unrelated` and the host function are nobody's.
    const FILE: &str = "import cutlass.cute as cute

def load(x):
    cute.arch.sync_threads()

def store(x):
    return x

def unrelated():
    return 1

@cute.kernel
def a():
    load(1)

class Runner:
    def __init__(self):
        self.n = 1

    def go(self):
        return store(1)

@cute.kernel
def b():
    r = Runner()
    r.go()

@cute.jit
def host():
    a().launch(grid=(1, 1, 1), block=(32, 1, 1))
";

    /// The first lines of the chunks of a frame.
    fn frame_heads(db: &Database, file: SourceFile, k: usize) -> Vec<String> {
        let text = file.text(db);
        let code: Vec<&syntax::Span> = layout(db, file).chunks.iter().filter(|c| c.code).collect();
        kernel_frame(db, file, k)
            .iter()
            .map(|&c| text[code[c as usize].start as usize..].lines().next().unwrap_or_default().to_string())
            .collect()
    }

    #[test]
    fn a_kernel_frame_holds_the_helpers_it_reaches_by_name_and_no_other() {
        let db = Database::default();
        let file = SourceFile::new(&db, "frames.py".to_string(), FILE.to_string());
        assert_eq!(facts(&db, file).kernels.len(), 2);
        assert_eq!(frame_heads(&db, file, 0), ["def load(x):", "@cute.kernel"]);
        // `store` is reached through the class's chunk, which `b` names.
        assert_eq!(frame_heads(&db, file, 1), ["def store(x):", "class Runner:", "@cute.kernel"]);
    }

    /// Per kernel, what its [`KernelUnit`] is made of that an edit can
    /// change: the chunks of its frame, the file's context, its launch.
    fn unit_parts(db: &Database, file: SourceFile) -> Vec<(Vec<salsa::Id>, salsa::Id, salsa::Id)> {
        use salsa::plumbing::AsId;
        let keys = pieces(db, file);
        (0..facts(db, file).kernels.len())
            .map(|k| {
                let frame = kernel_frame(db, file, k).iter().map(|&c| keys[c as usize].as_id()).collect();
                (frame, file_context(db, file).as_id(), kernel_launches(db, file)[k].0.as_id())
            })
            .collect()
    }

    #[test]
    fn editing_a_function_no_kernel_reaches_keeps_every_kernel_unit() {
        let mut db = Database::default();
        let file = SourceFile::new(&db, "frames.py".to_string(), FILE.to_string());
        let options = AnalysisOptions::default();
        let before = lint(&db, file, &options);
        let old = unit_parts(&db, file);
        use salsa::Setter;
        file.set_text(&mut db).to(FILE.replace("    return 1\n", "    return 2\n"));
        let new = unit_parts(&db, file);
        assert_eq!(old, new, "an edit of `unrelated` changed a kernel's unit");
        assert_eq!(lint(&db, file, &options), before);
        // An edit of `load` changes `a`'s unit and not `b`'s.
        file.set_text(&mut db).to(FILE.replace("    cute.arch.sync_threads()\n", "    cute.arch.sync_threads()\n    x = 2\n"));
        let edited = unit_parts(&db, file);
        assert_ne!(old[0], edited[0]);
        assert_eq!(old[1], edited[1]);
    }
}
