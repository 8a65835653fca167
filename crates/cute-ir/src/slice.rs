//! The synchronization slice of a kernel: a backward slice from the sync call
//! sites through data dependences (a statement is kept when it defines a name a
//! kept statement reads) and control dependences (the `if`/`for`/`while`/`with`
//! headers around a kept statement are kept). Everything else is datapath and
//! is dropped before checking.
//!
//! The data dependence is flow-insensitive (any definition of a name counts),
//! which keeps a little more than needed and never drops a statement the
//! synchronization depends on.
//!
//! The seeds are the calls of the sync API, and besides them:
//! - the loads, stores and copies of buffers, and the MMAs (`cute.gemm`)
//!   into tensor memory, for the memory-ordering analysis (shown as `mem` by
//!   `cute-lsp slice`; a lane that records nothing skips them), except those
//!   of the tensors `inert` finds no finding can involve;
//! - the warp collectives (a TMA or bulk `cute.copy`, `elect_one`, `sync_warp`,
//!   shuffles, votes, warp reductions): their member mask is what they depend
//!   on, so a kernel that only shuffles is checked too;
//! - the calls of methods on the objects a pipeline call returns, and the calls
//!   the objects a pipeline call creates are handed to (so that handing them to
//!   a function the file does not define is seen, and reported);
//! - the calls the API table does not know that are handed an mbarrier (a name
//!   or attribute chain the kernel's mbarrier calls, TMA copies or pipelines
//!   take as their barrier, or a value computed from one; in a helper, also a
//!   parameter named as a barrier is): a thread that makes one with a barrier
//!   reports it as not modelled, so it must see it;
//! - a `return` before synchronization, or a `break`/`continue` in a loop that
//!   synchronizes, kept with the branch around it: the threads that take it
//!   skip what follows (CuTe DSL compiles them only under conditions decided at
//!   compile time, which every thread takes alike).
//!
//! A helper of the file that synchronizes ([`sync_helpers`],
//! [`helpers_calling`]) is one whether it is called by name, through a name
//! bound to a `functools.partial` of it (`partial_bindings`), or as a closure,
//! by its local name. A thread that inlines a helper runs the helper's own
//! slice ([`slice_helper`], shown by `cute-lsp slice --kernel HELPER`): what
//! its synchronization and memory accesses depend on, as in a kernel (every
//! parameter may be a buffer), and what its caller may see of it: the values it
//! returns, the calls it makes for their effect, its stores into and method
//! calls on what it did not create. A pipeline state a helper advances
//! (`def step(s): s.advance()`) is advanced in the caller: the call's statement
//! defines the names it passes.
//!
//! [`slice_kernel`] is also the table `cute-lsp slice` prints: every statement,
//! kept or dropped, and why ([`Reason`]).

use std::collections::{BTreeSet, HashMap};

use cute_syntax::TextRange;

use crate::api::{Api, Effect};
use crate::ast::{Expr, FunctionDef, Stmt, StmtId, StmtKind};
use crate::module::Module;

mod inert;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// Calls a synchronization primitive.
    Sync(String),
    /// Reads thread or cluster topology (thread index, CTA rank, elect).
    Topology(String),
    /// Calls a helper of this file that synchronizes.
    SyncHelper(String),
    /// Loads, stores or copies a buffer (for the memory-ordering analysis).
    Memory(String),
    /// Defines a name read by a kept statement.
    Defines { name: String, used_by: StmtId },
    /// Encloses a kept statement.
    Controls(StmtId),
    /// A `return`, `break` or `continue` that synchronization after it
    /// depends on: the threads that take it skip that synchronization.
    Exit(String),
    /// In a helper: what its caller may see of it (the value it returns,
    /// a call made for its effect, a store into an object it was given).
    Effect(String),
    Datapath,
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reason::Sync(s) => write!(f, "sync: {s}"),
            Reason::Topology(s) => write!(f, "topology: {s}"),
            Reason::SyncHelper(s) => write!(f, "calls {s}, which synchronizes"),
            Reason::Memory(s) => write!(f, "memory: {s}"),
            Reason::Defines { name, used_by } => write!(f, "defines `{name}`, read by #{used_by}"),
            Reason::Controls(id) => write!(f, "controls #{id}"),
            Reason::Exit(s) => write!(f, "exit: {s}"),
            Reason::Effect(s) => write!(f, "effect: {s}"),
            Reason::Datapath => write!(f, "datapath"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SliceEntry {
    pub id: StmtId,
    pub range: TextRange,
    /// First line of the statement's source, for display.
    pub text: String,
    pub kept: bool,
    /// Kept by the synchronization slice (not only for the memory-ordering
    /// analysis).
    pub sync: bool,
    pub reason: Reason,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Slice {
    pub kernel: String,
    pub entries: Vec<SliceEntry>,
    /// Loads, stores and copies kept for the memory-ordering analysis alone.
    pub memory_only: BTreeSet<StmtId>,
    /// Headers kept for the memory-ordering analysis alone (see
    /// [`Kept::memory_controls`]).
    pub memory_controls: BTreeSet<StmtId>,
}

/// The statements a model is built from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Kept {
    pub ids: BTreeSet<StmtId>,
    /// Loads, stores and copies kept for the memory-ordering analysis alone
    /// (no synchronization depends on them): a thread that records no
    /// memory operations (a lane other than 0 of a converged warp) skips
    /// them.
    pub memory_only: BTreeSet<StmtId>,
    /// The `if`, loop and `with` headers kept for the memory-ordering
    /// analysis alone: no synchronization, no binding of a name a kept
    /// statement reads (unless one branch of an `if` alone binds it) and no
    /// exit it depends on lies under them, so which way such a condition
    /// goes changes which memory is accessed, never how the threads
    /// synchronize.
    pub memory_controls: BTreeSet<StmtId>,
}

impl Kept {
    pub fn contains(&self, id: &StmtId) -> bool {
        self.ids.contains(id)
    }
}

impl Slice {
    pub fn kept_ids(&self) -> Kept {
        Kept {
            ids: self.entries.iter().filter(|e| e.kept).map(|e| e.id).collect(),
            memory_only: self.memory_only.clone(),
            memory_controls: self.memory_controls.clone(),
        }
    }

    pub fn kept_count(&self) -> usize {
        self.entries.iter().filter(|e| e.kept).count()
    }
}

struct Flat {
    id: StmtId,
    range: TextRange,
    defs: Vec<String>,
    /// The names it binds (`i` of `i = j` or `for i in ...`, not `buf` of
    /// `buf[i] = v` nor `self.x` of `self.x = v`: an attribute holds what
    /// it is bound to in every branch).
    binds: Vec<String>,
    uses: Vec<String>,
    parent: Option<StmtId>,
    seed: Option<Reason>,
    /// Calls a `cutlass.pipeline` function or method.
    pipeline: bool,
    /// `x.method(...)` calls: (x, method).
    methods: Vec<(String, String)>,
    /// Names passed as arguments to calls the API table does not know
    /// (`epilogue(tidx, acc_pipeline)`).
    passed: Vec<String>,
    /// `x = pipeline.PipelineAsync.create(...)`, `bar = pipeline.NamedBarrier(...)`:
    /// an assignment of what a `cutlass.pipeline` call returns.
    binds_pipeline_object: bool,
    /// The names and attribute chains the arguments of calls the API table
    /// does not know mention (see [`seed_barrier_handoffs`]).
    handed: Vec<String>,
    /// `return`, `break` or `continue`.
    exit: Option<&'static str>,
    /// A `for` or `while` loop.
    is_loop: bool,
    /// `x` of a statement `x.method(...)`, and whether the file's imports
    /// make `x.method` a function of the `cutlass` package.
    receiver: Option<(String, bool)>,
    /// `f` of a statement `f(a, b)`, `x = f(a, b)` or `self.f(a, b)`, and
    /// the names passed to it (see
    /// [`define_advanced_arguments`]).
    helper_call: Option<(String, Vec<String>)>,
    /// What a helper's caller may see of this statement, if it is a
    /// helper's (see [`seed_effects`]).
    effects: Effects,
}

#[derive(Default)]
struct Effects {
    /// A `return` with or without a value.
    returns: bool,
    /// The callee of an expression statement that is a call, unless it is a
    /// function of a library module (`cute.copy`).
    called_for_effect: Option<String>,
    /// The names stores and method calls reach through (`obj` of
    /// `obj.x = v`, `obj.items[i] = v`, `obj.update()`), library modules
    /// aside.
    reaches_into: Vec<String>,
}

pub fn slice_kernel(module: &Module, kernel: &FunctionDef, text: &str) -> Slice {
    let mut flat = Vec::new();
    let all = buffer_names(kernel);
    let not = inert::not_memory(module, kernel, &all);
    let accessed = all.iter().filter(|n| !not.inert.contains(*n) && !not.registers.contains(*n)).cloned().collect();
    let tmem = tmem_names(kernel);
    flatten(&kernel.body, None, &module.sync_helpers, &Buffers { accessed, inert: not.inert, registers: not.registers, tmem }, &mut flat);
    define_receivers(kernel, &mut flat);
    if flat.iter().any(|s| s.helper_call.is_some()) {
        define_advanced_arguments(&helpers(module, HelperKind::Advancing), &mut flat);
    }
    seed_pipeline_objects(&mut flat);
    seed_barrier_handoffs(&barrier_keys(kernel, false), &mut flat);
    seed_exits(&mut flat);

    // First from the synchronization seeds alone, then adding the memory
    // seeds; what only the second keeps is there for the memory-ordering
    // analysis alone.
    let sync_only = backward_closure(&flat, false);
    let reason = backward_closure(&flat, true);
    // The loads, stores and copies themselves (not the definitions they
    // read: a lane may diverge later and access memory on its own).
    let memory_only = flat
        .iter()
        .enumerate()
        .filter(|&(i, _)| matches!(reason[i], Some(Reason::Memory(_))) && sync_only[i].is_none())
        .map(|(_, f)| f.id)
        .collect();
    let memory_controls = memory_controls(kernel, &flat, &sync_only, &reason);

    let entries = flat
        .iter()
        .zip(sync_only.iter().map(Option::is_some))
        .zip(reason)
        .map(|((s, sync), r)| SliceEntry {
            id: s.id,
            range: s.range,
            text: first_line(text, s.range),
            kept: r.is_some(),
            sync,
            reason: r.unwrap_or(Reason::Datapath),
        })
        .collect();
    Slice { kernel: kernel.display_name(), entries, memory_only, memory_controls }
}

/// The headers the closure with the memory seeds keeps (`with_memory`) only
/// because they enclose what it keeps, and the synchronization closure
/// (`sync_only`) does not keep at all; and under which nothing binds a name
/// a kept statement reads with a value the thread would not know after it
/// (`if p: i = j` before `buf[i] = v`, or in a loop around it): a thread
/// runs both branches of such a header, and a name they leave with two
/// values would be known after it in neither.
///
/// A name that only one branch of an `if` binds, and nothing outside that
/// branch (not a parameter, no statement before or after), is known after
/// it: where the other branch runs, nothing reads it, or the kernel would
/// not compile (`if const_expr(mRes is not None): sRes = smem.allocate(...)`
/// and, later, `if const_expr(mRes is not None): copy(sRes, ...)`).
fn memory_controls(f: &FunctionDef, flat: &[Flat], sync_only: &[Option<Reason>], with_memory: &[Option<Reason>]) -> BTreeSet<StmtId> {
    let read: BTreeSet<&str> =
        flat.iter().zip(with_memory).filter(|(_, r)| r.is_some()).flat_map(|(s, _)| s.uses.iter().map(String::as_str)).collect();
    let index: HashMap<StmtId, usize> = flat.iter().enumerate().map(|(i, s)| (s.id, i)).collect();
    let branches = Branches::of(&f.body);
    let params: BTreeSet<&str> = f.params.iter().map(|p| p.name.as_str()).collect();
    let mut binders: HashMap<&str, Vec<StmtId>> = HashMap::new();
    for s in flat {
        for name in &s.binds {
            binders.entry(name.as_str()).or_default().push(s.id);
        }
    }
    // The branch of header `p` that statement `id` lies in, if it lies
    // under `p`.
    let branch_under = |id: StmtId, p: StmtId| {
        let mut child = id;
        loop {
            let parent = index.get(&child).and_then(|&i| flat[i].parent)?;
            if parent == p {
                return Some(branches.in_orelse.contains(&child));
            }
            child = parent;
        }
    };
    // The headers some statement binding a read name lies under.
    let mut binding_under: BTreeSet<StmtId> = BTreeSet::new();
    for s in flat {
        for name in s.binds.iter().filter(|d| read.contains(d.as_str())) {
            let all = &binders[name.as_str()];
            let mut parent = s.parent;
            while let Some(p) = parent {
                let one_branch = branches.ifs.contains(&p) && !params.contains(name.as_str()) && {
                    let branch = branch_under(s.id, p);
                    all.iter().all(|&b| branch_under(b, p) == branch)
                };
                if !one_branch {
                    binding_under.insert(p);
                }
                parent = index.get(&p).and_then(|&i| flat[i].parent);
            }
        }
    }
    flat.iter()
        .enumerate()
        .filter(|&(i, f)| matches!(with_memory[i], Some(Reason::Controls(_))) && sync_only[i].is_none() && !binding_under.contains(&f.id))
        .map(|(_, f)| f.id)
        .collect()
}

/// The `if` statements of a body, and the statements that lie directly in
/// the `else` of one.
#[derive(Default)]
struct Branches {
    ifs: BTreeSet<StmtId>,
    in_orelse: BTreeSet<StmtId>,
}

impl Branches {
    fn of(body: &[Stmt]) -> Branches {
        let mut out = Branches::default();
        for s in crate::module::nested_statements(body) {
            if let StmtKind::If { orelse, .. } = &s.kind {
                out.ifs.insert(s.id);
                out.in_orelse.extend(orelse.iter().map(|o| o.id));
            }
        }
        out
    }
}

/// The statements of helper `f` that a thread inlining it runs: those its
/// synchronization and memory accesses
/// depend on, as in a kernel, and those its caller may see: the values it
/// returns, calls made for their effect (`state.advance()`, `h.commit()`,
/// `other_helper(x)`, but not `cute.copy(...)`, which is a seed when it
/// matters), and stores into or method calls on what it did not create
/// itself (a parameter, `self`, a module's object). Every parameter may be a
/// buffer. Statements it drops compute values nothing of this reads.
/// `helpers` are what the file's functions do that the slice asks about.
///
/// What a helper's caller may see counts as synchronization here: the
/// headers of the helper kept for its memory accesses alone
/// ([`Kept::memory_controls`]) enclose no value it returns and no effect.
pub fn slice_helper(f: &FunctionDef, helpers: &Helpers) -> Kept {
    let (flat, reason) = helper_closure(f, helpers);
    let sync_only = backward_closure(&flat, false);
    let memory_controls = memory_controls(f, &flat, &sync_only, &reason);
    let ids = flat.iter().zip(reason).filter(|(_, r)| r.is_some()).map(|(s, _)| s.id).collect();
    Kept { ids, memory_only: BTreeSet::new(), memory_controls }
}

/// [`slice_helper`] as the table `cute-lsp slice` prints: every statement
/// of the helper, kept or dropped, and why. Nothing of a helper's is kept
/// for memory ordering alone (a thread runs all it keeps).
pub fn slice_helper_table(module: &Module, f: &FunctionDef, text: &str) -> Slice {
    let (flat, reason) = helper_closure(f, &Helpers::of(module));
    let entries = flat
        .iter()
        .zip(reason)
        .map(|(s, r)| SliceEntry {
            id: s.id,
            range: s.range,
            text: first_line(text, s.range),
            kept: r.is_some(),
            sync: r.is_some(),
            reason: r.unwrap_or(Reason::Datapath),
        })
        .collect();
    Slice { kernel: f.display_name(), entries, memory_only: BTreeSet::new(), memory_controls: BTreeSet::new() }
}

fn helper_closure(f: &FunctionDef, helpers: &Helpers) -> (Vec<Flat>, Vec<Option<Reason>>) {
    let mut flat = Vec::new();
    let mut buffers: BTreeSet<String> = f.params.iter().map(|p| p.name.clone()).collect();
    buffers.extend(buffer_names(f));
    let buffers = Buffers { accessed: buffers, inert: BTreeSet::new(), registers: BTreeSet::new(), tmem: tmem_names(f) };
    flatten(&f.body, None, &helpers.synchronizing, &buffers, &mut flat);
    define_receivers(f, &mut flat);
    define_advanced_arguments(&helpers.advancing, &mut flat);
    seed_pipeline_objects(&mut flat);
    seed_barrier_handoffs(&barrier_keys(f, true), &mut flat);
    seed_exits(&mut flat);
    seed_effects(f, &mut flat);
    let reason = backward_closure(&flat, true);
    (flat, reason)
}

/// The backward closure from the seeds of `flat` (those for memory ordering
/// too when `with_memory`): the reason each statement is kept, `None` for
/// those dropped.
fn backward_closure(flat: &[Flat], with_memory: bool) -> Vec<Option<Reason>> {
    let mut definers: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, s) in flat.iter().enumerate() {
        for d in &s.defs {
            definers.entry(d.as_str()).or_default().push(i);
        }
    }
    let by_id: HashMap<StmtId, usize> = flat.iter().enumerate().map(|(i, s)| (s.id, i)).collect();
    let mut reason: Vec<Option<Reason>> =
        flat.iter().map(|s| s.seed.clone().filter(|r| with_memory || !matches!(r, Reason::Memory(_)))).collect();
    let mut work: Vec<usize> = (0..flat.len()).filter(|&i| reason[i].is_some()).collect();
    while let Some(i) = work.pop() {
        let id = flat[i].id;
        for u in &flat[i].uses {
            for &j in definers.get(u.as_str()).into_iter().flatten() {
                if reason[j].is_none() {
                    reason[j] = Some(Reason::Defines { name: u.clone(), used_by: id });
                    work.push(j);
                }
            }
        }
        if let Some(p) = flat[i].parent.and_then(|p| by_id.get(&p).copied()) {
            if reason[p].is_none() {
                reason[p] = Some(Reason::Controls(id));
                work.push(p);
            }
        }
    }
    reason
}

/// Seeds what a helper's caller may see of it (see [`slice_helper`]).
fn seed_effects(f: &FunctionDef, flat: &mut [Flat]) {
    let mut own = local_names(&f.body);
    for p in &f.params {
        own.remove(&p.name);
    }
    for s in flat.iter_mut().filter(|s| s.seed.is_none()) {
        let effect = match &s.effects {
            Effects { returns: true, .. } => Some("returns a value".to_string()),
            Effects { called_for_effect: Some(c), .. } => Some(format!("calls `{c}` for its effect")),
            Effects { reaches_into, .. } => reaches_into.iter().find(|r| !own.contains(*r)).map(|r| format!("changes or calls on `{r}`, which it did not create")),
        };
        s.seed = effect.map(Reason::Effect);
    }
}

/// Names a function binds itself (assignment, loop and `with` targets).
fn local_names(stmts: &[Stmt]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    crate::ast::for_each_binding(stmts, &mut |t, _| out.extend(t.bound_names()));
    out
}

/// The name an attribute or subscript chain starts from (`self` of
/// `self.a.b[i]`).
fn root_name(e: &Expr) -> Option<&str> {
    match e {
        Expr::Name(n) => Some(n),
        Expr::Attr { base, .. } | Expr::Subscript { base, .. } => root_name(base),
        _ => None,
    }
}

/// A method called for its effect (`state.advance()`) may change the
/// object it is called on: the statement defines it. A function of a
/// library module (`cute.copy(...)`) changes no module, unless the name is
/// the kernel's own (a parameter or a local): taken to define `cute`, every
/// `cute.copy` would be kept by every statement that reads `cute`.
fn define_receivers(kernel: &FunctionDef, flat: &mut [Flat]) {
    let own: BTreeSet<String> =
        kernel.params.iter().map(|p| p.name.clone()).chain(flat.iter().flat_map(|s| s.defs.iter().cloned())).collect();
    for s in flat.iter_mut() {
        if let Some((x, library)) = s.receiver.take() {
            if !library || own.contains(&x) {
                s.defs.push(x);
            }
        }
    }
}

/// `advance(state)`, where the file's `advance` is one of `advancing`
/// (see [`advancing_helpers`]), may advance the pipeline state it is given:
/// the statement defines the names it passes.
fn define_advanced_arguments(advancing: &BTreeSet<String>, flat: &mut [Flat]) {
    for s in flat.iter_mut() {
        if let Some((f, names)) = s.helper_call.take() {
            if advancing.contains(&f) {
                s.defs.extend(names);
            }
        }
    }
}

/// Objects a pipeline call hands out (`producer, consumer =
/// pipe.make_participants()`, `handle = producer.acquire_and_advance()`)
/// synchronize through methods the API table cannot name by themselves
/// (`handle.commit()`, `consumer.release(handle)`, `producer.advance()`):
/// calls of methods on them are seeds too. So are the calls that the
/// objects a pipeline call creates are handed to (a function of another
/// file is not followed, and says so).
fn seed_pipeline_objects(flat: &mut [Flat]) {
    let mut objects: BTreeSet<String> = BTreeSet::new();
    loop {
        let before = objects.len();
        for s in flat.iter_mut() {
            if !s.pipeline {
                if let Some((x, m)) = s.methods.iter().find(|(x, _)| objects.contains(x)) {
                    s.pipeline = true;
                    if !matches!(s.seed, Some(Reason::Sync(_) | Reason::SyncHelper(_))) {
                        s.seed = Some(Reason::Sync(format!("{x}.{m}")));
                    }
                }
            }
            if s.pipeline {
                objects.extend(s.defs.iter().cloned());
            }
        }
        if objects.len() == before {
            break;
        }
    }
    let handed: BTreeSet<String> = flat.iter().filter(|s| s.binds_pipeline_object).flat_map(|s| s.defs.iter().cloned()).collect();
    for s in flat.iter_mut().filter(|s| s.seed.is_none()) {
        if let Some(x) = s.passed.iter().find(|x| handed.contains(*x)) {
            s.seed = Some(Reason::Sync(format!("hands `{x}` to a call")));
        }
    }
}

/// A call the API table does not know, handed an mbarrier (`custom_commit(bar)`,
/// `obj.signal(mbar_ptr=storage.mbar.data_ptr())`, `f((bar, 1))`), may
/// synchronize through it: a seed, so that the thread sees it (and reports it
/// when the value is a barrier; see cute-check's `instantiate/calls.rs`).
fn seed_barrier_handoffs(keys: &BTreeSet<String>, flat: &mut [Flat]) {
    if keys.is_empty() {
        return;
    }
    for s in flat.iter_mut().filter(|s| s.seed.is_none()) {
        if let Some(x) = s.handed.iter().find(|x| keys.contains(*x)) {
            s.seed = Some(Reason::Sync(format!("hands `{x}` to a call")));
        }
    }
}

/// The parameters of the synchronization calls that take an mbarrier:
/// the API table's `mbar_ptr`, a TMA copy's `tma_bar_ptr=`, the barrier
/// storage of a pipeline or tensor-memory allocator.
const BARRIER_KEYWORDS: &[&str] = &["mbar_ptr", "tma_bar_ptr", "barrier_storage", "two_cta_tmem_dealloc_mbar_ptr"];

/// The names and attribute chains a function holds mbarriers in: what its
/// synchronization calls take as their barrier (`bar` of
/// `mbarrier_wait(bar + 1, 0)`, `storage.mbar` of
/// `mbarrier_init(storage.mbar.data_ptr(), 1)`), the names assigned a
/// barrier computed from one (`b = bar + 1`, not what a call handed one
/// returns) and what a name holding one is computed from (`storage` of
/// `bar = storage + 1`), and in a helper the parameters named as
/// barriers (`mbar`, `mbar_ptr`, `barrier`, `full_bar`), whose calls the
/// helper alone does not show.
fn barrier_keys(f: &FunctionDef, helper: bool) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    if helper {
        let barrier_like = |n: &str| n.contains("mbar") || n.contains("barrier") || n == "bar" || n.starts_with("bar_") || n.ends_with("_bar");
        keys.extend(f.params.iter().filter(|p| barrier_like(&p.name)).map(|p| p.name.clone()));
    }
    crate::ast::for_each_expr(&f.body, &mut |e| {
        let mut calls = Vec::new();
        e.calls(&mut calls);
        for c in calls {
            if !matches!(c.api.map(Api::effect), Some(Effect::Sync)) {
                continue;
            }
            let by_param = crate::api::arg(c, "mbar_ptr").filter(|_| c.params.contains(&"mbar_ptr"));
            let by_keyword = c.kwargs.iter().filter(|(k, _)| BARRIER_KEYWORDS.contains(&k.as_str())).map(|(_, e)| e);
            for e in by_param.into_iter().chain(by_keyword) {
                barrier_roots(e, &mut keys);
            }
        }
    });
    if keys.is_empty() {
        return keys;
    }
    let mut assigns: Vec<(Vec<String>, &Expr)> = Vec::new();
    collect_assigns(&f.body, &mut assigns);
    loop {
        let before = keys.len();
        for (defs, value) in &assigns {
            let mut roots = BTreeSet::new();
            barrier_roots(value, &mut roots);
            if roots.iter().any(|n| keys.contains(n)) {
                keys.extend(defs.iter().cloned());
            }
            // `bar = storage + 1`: `storage` holds barriers too.
            if defs.iter().any(|d| keys.contains(d)) {
                barrier_roots(value, &mut keys);
            }
        }
        if keys.len() == before {
            return keys;
        }
    }
}

/// Methods of a shared-memory field or pointer that give a view of the same
/// memory.
const BARRIER_VIEWS: &[&str] = &["data_ptr", "get_tensor", "align"];

/// The names and attribute chains a barrier expression is computed from:
/// `storage.mbar` of `storage.mbar.data_ptr() + i`, `bars` of `bars[i]`.
fn barrier_roots(e: &Expr, out: &mut BTreeSet<String>) {
    match e {
        Expr::Name(_) | Expr::Attr { .. } if e.is_dotted() => out.extend(e.dotted()),
        // A view of the barrier storage (`.data_ptr()`, `.get_tensor(...)`);
        // an allocation (`smem.allocate_array(...)`) is the storage itself.
        Expr::Call(c) => {
            if let Expr::Attr { base, attr } = &c.func {
                if BARRIER_VIEWS.contains(&attr.as_str()) {
                    barrier_roots(base, out);
                }
            }
        }
        Expr::Subscript { base, .. } | Expr::Attr { base, .. } => barrier_roots(base, out),
        Expr::Binary { lhs, rhs, .. } => {
            barrier_roots(lhs, out);
            barrier_roots(rhs, out);
        }
        Expr::IfExp { then, orelse, .. } => {
            barrier_roots(then, out);
            barrier_roots(orelse, out);
        }
        _ => {}
    }
}

/// The names and attribute chains an expression mentions (`storage.mbar`
/// and `storage` of `storage.mbar.data_ptr() + 1`, the items of a tuple).
fn mentions(e: &Expr, out: &mut Vec<String>) {
    match e {
        Expr::Name(n) => out.push(n.clone()),
        Expr::Attr { base, .. } => {
            out.extend(e.dotted());
            mentions(base, out);
        }
        Expr::Call(c) => {
            mentions(&c.func, out);
            c.args.iter().for_each(|a| mentions(a, out));
            c.kwargs.iter().for_each(|(_, a)| mentions(a, out));
        }
        Expr::Binary { lhs, rhs, .. } | Expr::Compare { lhs, rhs, .. } | Expr::BoolOp { lhs, rhs, .. } => {
            mentions(lhs, out);
            mentions(rhs, out);
        }
        Expr::Unary { operand, .. } => mentions(operand, out),
        Expr::IfExp { cond, then, orelse } => {
            mentions(cond, out);
            mentions(then, out);
            mentions(orelse, out);
        }
        Expr::Subscript { base, index } => {
            mentions(base, out);
            mentions(index, out);
        }
        Expr::Tuple(items) => items.iter().for_each(|a| mentions(a, out)),
        _ => {}
    }
}

/// A `return` before synchronization, or a `break`/`continue` in a loop
/// that synchronizes, decides which threads reach that synchronization (a
/// bounds check `if tidx >= n: return` before a `sync_threads()`): a seed.
fn seed_exits(flat: &mut [Flat]) {
    let syncs: Vec<TextRange> =
        flat.iter().filter(|s| matches!(s.seed, Some(Reason::Sync(_) | Reason::SyncHelper(_)))).map(|s| s.range).collect();
    let by_id: HashMap<StmtId, usize> = flat.iter().enumerate().map(|(i, s)| (s.id, i)).collect();
    let within = |outer: TextRange, r: &TextRange| outer.start <= r.start && r.end <= outer.end;
    for i in 0..flat.len() {
        let Some(kind) = flat[i].exit else { continue };
        // The loops around it, innermost first.
        let mut loops = Vec::new();
        let mut p = flat[i].parent;
        while let Some(j) = p.and_then(|p| by_id.get(&p).copied()) {
            if flat[j].is_loop {
                loops.push(flat[j].range);
            }
            p = flat[j].parent;
        }
        let at = flat[i].range.start;
        let skips = match kind {
            // The rest of the function, and the later iterations of the
            // loops it leaves.
            "return" => syncs.iter().any(|r| r.start > at || loops.iter().any(|l| within(*l, r))),
            _ => loops.first().is_some_and(|l| syncs.iter().any(|r| within(*l, r))),
        };
        if skips && flat[i].seed.is_none() {
            flat[i].seed = Some(Reason::Exit(format!("`{kind}` before synchronization")));
        }
    }
}

fn first_line(text: &str, range: TextRange) -> String {
    let s = text.get(range.start as usize..range.end as usize).unwrap_or("");
    let line = s.lines().next().unwrap_or("").trim_end();
    line.trim_end_matches(':').to_string()
}

/// What the functions of a file do that slicing a helper asks about, found
/// once for all the helpers a kernel's threads inline.
pub struct Helpers {
    /// Those that synchronize (see [`sync_helpers`]).
    pub synchronizing: BTreeSet<String>,
    /// Those that advance something (see [`advancing_helpers`]).
    pub advancing: BTreeSet<String>,
}

impl Helpers {
    pub fn of(module: &Module) -> Self {
        Helpers {
            synchronizing: helpers(module, HelperKind::Synchronizing).as_ref().clone(),
            advancing: helpers(module, HelperKind::Advancing).as_ref().clone(),
        }
    }
}

/// Names of same-file functions and methods that call `.advance()` on
/// something (a pipeline state, most likely), directly or through each
/// other.
pub fn advancing_helpers(module: &Module) -> BTreeSet<String> {
    helpers_calling(module, |c| HelperKind::Advancing.calls(c))
}

/// Names of same-file functions and methods that (transitively) call a
/// synchronization primitive.
pub fn sync_helpers(module: &Module) -> BTreeSet<String> {
    helpers_calling(module, |c| HelperKind::Synchronizing.calls(c))
}

/// The sets of helpers every kernel of a module asks for (see [`helpers`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HelperKind {
    /// Those that synchronize ([`sync_helpers`]).
    Synchronizing,
    /// Those that advance something ([`advancing_helpers`]).
    Advancing,
    /// Those that read a variable other threads synchronize through
    /// ([`crate::api::reads_sync_variable`]).
    ObservingSyncVariables,
    /// Those that make an atomic, a load or inline PTX: global memory that
    /// CTAs may synchronize through.
    TouchingGlobalMemory,
}

impl HelperKind {
    pub(crate) const COUNT: usize = 4;

    /// Whether `c` is a call the helpers of this kind make.
    pub fn calls(self, c: &crate::ast::Call) -> bool {
        match self {
            HelperKind::Synchronizing => matches!(Api::of_call(c).map(Api::effect), Some(Effect::Sync)),
            HelperKind::Advancing => matches!(&c.func, Expr::Attr { attr, .. } if attr == "advance"),
            HelperKind::ObservingSyncVariables => crate::api::reads_sync_variable(c),
            HelperKind::TouchingGlobalMemory => matches!(Api::of_call(c), Some(Api::Atomic | Api::Load | Api::InlineAsm)),
        }
    }
}

/// [`helpers_calling`] for a kind of call, computed once per module however
/// many of its kernels ask (see `Module::derived`): each is a fixpoint over
/// every function of the module, and a file of many kernels asks for each
/// kind once per kernel and per way.
pub fn helpers(module: &Module, kind: HelperKind) -> std::sync::Arc<BTreeSet<String>> {
    module.derived.helpers(module, kind, || helpers_calling(module, |c| kind.calls(c)))
}

/// Functions and methods of the module that make a call satisfying `pred`,
/// directly or through each other, the names bound to a
/// `functools.partial` of one (`load_k = partial(self.load, ...)`, then
/// `load_k(...)`), and the local names of closures that do.
pub fn helpers_calling(module: &Module, pred: impl Fn(&crate::ast::Call) -> bool) -> BTreeSet<String> {
    let mut helpers = BTreeSet::new();
    let partials = partial_bindings(module);
    loop {
        let before = helpers.len();
        for f in &module.functions {
            if helpers.contains(&f.name) {
                continue;
            }
            if crate::ast::any_call(&f.body, |c| pred(c) || callee_name(c).is_some_and(|n| helpers.contains(n))) {
                helpers.insert(f.name.clone());
            }
        }
        for (name, of) in &partials {
            if helpers.contains(*of) {
                helpers.insert(name.to_string());
            }
        }
        // A closure is called by its local name (see `Module::closures`);
        // a lambda is handed on by its qualified name
        // (`if_generate(cond, lambda: ...)`).
        for c in &module.closures {
            if !helpers.contains(&c.function.name)
                && crate::ast::any_call(&c.function.body, |call| pred(call) || callee_name(call).is_some_and(|n| helpers.contains(n)))
            {
                helpers.insert(c.local_name().to_string());
                helpers.insert(c.function.name.clone());
            }
        }
        if helpers.len() == before {
            return helpers;
        }
    }
}

/// `(name, function)` for every assignment of the module's functions that
/// binds a name to a `functools.partial` of a function called by name
/// (`load_k = partial(self.load, ...)`: `("load_k", "load")`).
fn partial_bindings(module: &Module) -> Vec<(&str, &str)> {
    module.functions.iter().flat_map(partial_bindings_of).collect()
}

/// [`partial_bindings`] of one function.
pub fn partial_bindings_of(f: &FunctionDef) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    for s in crate::module::nested_statements(&f.body) {
        let StmtKind::Assign { targets, value: Expr::Call(c) } = &s.kind else { continue };
        if !crate::eval::is_partial(c) {
            continue;
        }
        let Some(of) = c.args.first().and_then(function_named) else { continue };
        out.extend(targets.iter().filter_map(|t| match t {
            crate::ast::Target::Name(n) => Some((n.as_str(), of)),
            _ => None,
        }));
    }
    out
}

/// The function of this file an expression names (`helper`, `self.helper`).
fn function_named(e: &Expr) -> Option<&str> {
    match e {
        Expr::Name(n) => Some(n),
        Expr::Attr { base, attr } if matches!(base.as_ref(), Expr::Name(b) if b == "self") => Some(attr),
        _ => None,
    }
}

/// The local function or method name a call refers to (`helper(...)`,
/// `self.helper(...)`).
pub fn callee_name(call: &crate::ast::Call) -> Option<&str> {
    function_named(&call.func)
}

fn seed_of(exprs: &[&Expr], sync_helpers: &BTreeSet<String>) -> Option<Reason> {
    let mut topology = None;
    for e in exprs {
        let mut calls = Vec::new();
        e.calls(&mut calls);
        for c in calls {
            match Api::of_call(c).map(|a| (a, a.effect())) {
                // A copy synchronizes only through the barrier it signals.
                Some((Api::Copy, _)) if !copy_signals_barrier(c) => {}
                Some((_, Effect::Sync)) => return Some(Reason::Sync(api_label(c))),
                Some((_, Effect::Topology)) => topology = topology.or(Some(Reason::Topology(api_label(c)))),
                _ => {
                    if let Some(n) = callee_name(c).filter(|n| sync_helpers.contains(*n)) {
                        return Some(Reason::SyncHelper(n.to_string()));
                    }
                    // A helper handed on (`partial(self.load, ...)`)
                    // synchronizes wherever it is called from: the
                    // instantiation has to see it go.
                    if let Some(n) = handed_on_sync_helper(c, sync_helpers) {
                        return Some(Reason::SyncHelper(n.to_string()));
                    }
                }
            }
        }
    }
    topology
}

/// A helper of this file that synchronizes, passed to `call` as a value.
pub fn handed_on_sync_helper<'c>(call: &'c crate::ast::Call, sync_helpers: &BTreeSet<String>) -> Option<&'c str> {
    // Asked of every call a thread evaluates; most files have no such helper.
    if sync_helpers.is_empty() {
        return None;
    }
    // Also one inside a tuple, and a value of a dict display
    // (`{op: self.load}`, lowered to the pairs `(op, self.load)`).
    fn within<'e>(e: &'e Expr, sync_helpers: &BTreeSet<String>) -> Option<&'e str> {
        match e {
            Expr::Tuple(items) => items.iter().find_map(|i| within(i, sync_helpers)),
            _ => sync_helper_named(e, sync_helpers),
        }
    }
    call.args.iter().chain(call.kwargs.iter().map(|(_, a)| a)).find_map(|a| within(a, sync_helpers))
}

/// The helper of this file that synchronizes that `e` names (`helper`,
/// `self.helper`), if any.
pub fn sync_helper_named<'e>(e: &'e Expr, sync_helpers: &BTreeSet<String>) -> Option<&'e str> {
    function_named(e).filter(|n| sync_helpers.contains(*n))
}

fn api_label(call: &crate::ast::Call) -> String {
    call.dotted_name().unwrap_or_default().to_string()
}

/// The names a slice takes as buffers.
struct Buffers {
    /// Those whose loads, stores and copies are kept for memory ordering.
    accessed: BTreeSet<String>,
    /// Views of global memory no finding can involve (see [`inert`]): a
    /// store into one is neither kept nor a definition of it (its shape does
    /// not depend on what is stored).
    inert: BTreeSet<String>,
    /// Tensors in registers (`cute.make_rmem_tensor`, a fragment shaped like
    /// a tile): private to the thread, so not kept for memory ordering; what
    /// is stored into them stays opaque to the slice, as a load is.
    registers: BTreeSet<String>,
    /// Views of tensor memory ([`tmem_names`]): an MMA handed one is kept.
    tmem: BTreeSet<String>,
}

fn flatten(stmts: &[Stmt], parent: Option<StmtId>, helpers: &BTreeSet<String>, buffers: &Buffers, out: &mut Vec<Flat>) {
    for s in stmts {
        let mut defs = Vec::new();
        let mut uses = Vec::new();
        let mut binds = Vec::new();
        let mut exprs: Vec<&Expr> = Vec::new();
        let mut receiver = None;
        let mut helper_call = None;
        let stores_into_inert = |t: &crate::ast::Target| {
            matches!(t, crate::ast::Target::Subscript { base, .. } if base.dotted().is_some_and(|b| buffers.inert.contains(&b)))
        };
        match &s.kind {
            StmtKind::Assign { targets, value } => {
                targets.iter().for_each(|t| binds.extend(t.bound_names()));
                targets.iter().filter(|t| !stores_into_inert(t)).for_each(|t| {
                    t.collect_defs(&mut defs);
                    t.collect_uses(&mut uses);
                });
                exprs.push(value);
            }
            StmtKind::AugAssign { target, value, .. } if stores_into_inert(target) => exprs.push(value),
            StmtKind::AugAssign { target, value, .. } => {
                binds.extend(target.bound_names());
                target.collect_defs(&mut defs);
                target.collect_defs(&mut uses);
                target.collect_uses(&mut uses);
                exprs.push(value);
            }
            StmtKind::Expr(e) => {
                // `state.advance()`: a method called for its effect may
                // change the object it is called on (settled in
                // `define_receivers`).
                if let Expr::Call(c) = e {
                    if let Expr::Attr { base, .. } = &c.func {
                        if let Expr::Name(v) = base.as_ref() {
                            receiver = Some((v.clone(), is_library_function(c)));
                        }
                    }
                }
                exprs.push(e)
            }
            StmtKind::Return(Some(e)) => exprs.push(e),
            StmtKind::If { cond, .. } | StmtKind::While { cond, .. } => exprs.push(cond),
            StmtKind::For { target, iter, .. } => {
                binds.extend(target.bound_names());
                target.collect_defs(&mut defs);
                exprs.push(iter);
            }
            StmtKind::With { items, .. } => {
                for (e, t) in items {
                    exprs.push(e);
                    if let Some(t) = t {
                        binds.extend(t.bound_names());
                        t.collect_defs(&mut defs);
                    }
                }
            }
            _ => {}
        }
        exprs.iter().for_each(|e| relevant_uses(e, &mut uses));
        // A call with side effects on an argument (`cute.copy(src, dst)`) is
        // not a definition here: only synchronizing calls are seeds.
        let mut seed = seed_of(&exprs, helpers);
        if seed.is_none() {
            // A load, store or copy of a buffer: kept with what says where
            // it points (not the values it moves, which are datapath).
            if let Some((what, mem_uses)) = memory_seed(s, &buffers.accessed, &buffers.tmem) {
                seed = Some(Reason::Memory(what));
                uses = mem_uses;
            } else if let Some((_, register_uses)) = memory_seed(s, &buffers.registers, &BTreeSet::new()) {
                uses = register_uses;
            }
        }
        let mut calls = Vec::new();
        exprs.iter().for_each(|e| e.calls(&mut calls));
        let pipeline = calls.iter().any(|c| Api::of_call(c) == Some(Api::Pipeline));
        let methods = calls
            .iter()
            .filter_map(|c| match &c.func {
                Expr::Attr { base, attr } => match base.as_ref() {
                    Expr::Name(x) => Some((x.clone(), attr.clone())),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        let passed = calls
            .iter()
            .filter(|c| c.api.is_none())
            .flat_map(|c| c.args.iter().chain(c.kwargs.iter().map(|(_, a)| a)))
            .filter_map(|a| match a {
                Expr::Name(n) => Some(n.clone()),
                _ => None,
            })
            .collect();
        let mut handed = Vec::new();
        for c in calls.iter().filter(|c| c.api.is_none()) {
            c.args.iter().chain(c.kwargs.iter().map(|(_, a)| a)).for_each(|a| mentions(a, &mut handed));
        }
        let binds_pipeline_object =
            matches!(&s.kind, StmtKind::Assign { value: Expr::Call(c), .. } if Api::of_call(c) == Some(Api::Pipeline));
        let exit = match &s.kind {
            StmtKind::Return(_) => Some("return"),
            StmtKind::Break => Some("break"),
            StmtKind::Continue => Some("continue"),
            _ => None,
        };
        let is_loop = matches!(s.kind, StmtKind::For { .. } | StmtKind::While { .. });
        let effects = effects_of(s, &calls);
        if let StmtKind::Expr(Expr::Call(c)) | StmtKind::Assign { value: Expr::Call(c), .. } = &s.kind {
            if let Some(f) = callee_name(c) {
                let names = c.args.iter().chain(c.kwargs.iter().map(|(_, a)| a)).filter_map(|a| match a {
                    Expr::Name(n) => Some(n.clone()),
                    _ => None,
                });
                helper_call = Some((f.to_string(), names.collect()));
            }
        }
        out.push(Flat {
            id: s.id,
            range: s.range,
            defs,
            binds,
            uses,
            parent,
            seed,
            pipeline,
            methods,
            passed,
            binds_pipeline_object,
            handed,
            exit,
            is_loop,
            receiver,
            helper_call,
            effects,
        });
        match &s.kind {
            StmtKind::If { then, orelse, .. } => {
                flatten(then, Some(s.id), helpers, buffers, out);
                flatten(orelse, Some(s.id), helpers, buffers, out);
            }
            StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. } => {
                flatten(body, Some(s.id), helpers, buffers, out)
            }
            _ => {}
        }
    }
}

/// Whether the file's imports make `call`'s callee a function of the
/// `cutlass` package (`cute.copy`, `cute.arch.barrier`).
fn is_library_function(call: &crate::ast::Call) -> bool {
    call.qualname.as_deref().is_some_and(|q| q.starts_with("cutlass."))
}

/// What a helper's caller may see of statement `s`, which makes `calls`.
fn effects_of(s: &Stmt, calls: &[&crate::ast::Call]) -> Effects {
    let mut effects = Effects { returns: matches!(s.kind, StmtKind::Return(_)), ..Effects::default() };
    if let StmtKind::Expr(Expr::Call(c)) = &s.kind {
        if !is_library_function(c) {
            effects.called_for_effect = Some(c.func.dotted().unwrap_or_else(|| "a callable".to_string()));
        }
    }
    let mut stores = Vec::new();
    match &s.kind {
        StmtKind::Assign { targets, .. } => stores.extend(targets.iter()),
        StmtKind::AugAssign { target, .. } => stores.push(target),
        _ => {}
    }
    fn reached(t: &crate::ast::Target, out: &mut Vec<String>) {
        match t {
            crate::ast::Target::Attr { base, .. } | crate::ast::Target::Subscript { base, .. } => {
                out.extend(root_name(base).map(str::to_string))
            }
            crate::ast::Target::Tuple(items) => items.iter().for_each(|t| reached(t, out)),
            crate::ast::Target::Star(t) => reached(t, out),
            crate::ast::Target::Name(_) => {}
        }
    }
    stores.into_iter().for_each(|t| reached(t, &mut effects.reaches_into));
    for c in calls.iter().filter(|c| !is_library_function(c)) {
        if let Expr::Attr { base, .. } = &c.func {
            effects.reaches_into.extend(root_name(base).map(str::to_string));
        }
    }
    effects
}

/// The names an expression's synchronization depends on. For memory
/// operations (atomics, loads, stores) that is where they point, not the
/// value they carry: the value is datapath.
fn relevant_uses(e: &Expr, out: &mut Vec<String>) {
    match e {
        // A copy synchronizes through the barrier it signals, and its source
        // and destination say which buffers it reads and writes.
        Expr::Call(c) if Api::of_call(c) == Some(Api::Copy) => {
            // `cute.copy(atom, src, dst)`; the primitives' TMA load starts
            // with its destination.
            let atom = usize::from(c.params.first() != Some(&"dst_mem"));
            c.args.iter().skip(atom).for_each(|a| a.collect_uses(out));
            for (k, v) in &c.kwargs {
                if matches!(k.as_str(), "tma_bar_ptr" | "mbar_ptr" | "src_mem" | "src" | "dst_mem" | "dst") {
                    relevant_uses(v, out);
                }
            }
        }
        // A warp collective synchronizes the lanes of its member mask: the
        // values it moves are datapath.
        Expr::Call(c) if Api::of_call(c).is_some_and(crate::api::is_warp_collective) => {
            for name in ["mask", "mask_and_clamp"] {
                let is_mask = name == "mask" || Api::of_call(c) == Some(Api::WarpRedux);
                if let Some(m) = crate::api::arg(c, name).filter(|_| is_mask) {
                    relevant_uses(m, out);
                }
            }
        }
        Expr::Call(c) if matches!(Api::of_call(c), Some(Api::Atomic | Api::Store)) => {
            c.func.collect_uses(out);
            if let Some(ptr) = c.args.first() {
                relevant_uses(ptr, out);
            }
            for (k, v) in &c.kwargs {
                if k == "ptr" || k == "sem" || k == "scope" {
                    relevant_uses(v, out);
                }
            }
        }
        Expr::Call(c) => {
            c.func.collect_uses(out);
            c.args.iter().for_each(|a| relevant_uses(a, out));
            c.kwargs.iter().for_each(|(_, a)| relevant_uses(a, out));
        }
        Expr::Binary { lhs, rhs, .. } | Expr::Compare { lhs, rhs, .. } | Expr::BoolOp { lhs, rhs, .. } => {
            relevant_uses(lhs, out);
            relevant_uses(rhs, out);
        }
        Expr::Unary { operand, .. } => relevant_uses(operand, out),
        Expr::IfExp { cond, then, orelse } => {
            relevant_uses(cond, out);
            relevant_uses(then, out);
            relevant_uses(orelse, out);
        }
        Expr::Subscript { base, index } => {
            relevant_uses(base, out);
            relevant_uses(index, out);
        }
        Expr::Tuple(items) => items.iter().for_each(|a| relevant_uses(a, out)),
        other => other.collect_uses(out),
    }
}

fn copy_signals_barrier(call: &crate::ast::Call) -> bool {
    // `mbar_ptr` is also the fourth argument of the primitives' TMA load.
    crate::api::arg(call, "tma_bar_ptr").or_else(|| crate::api::arg(call, "mbar_ptr")).is_some()
}

/// Calls that allocate shared memory or make a tensor of it
/// (`cutlass.Array(dtype, n, space=cutlass.AddressSpace.smem)` too).
pub(crate) const ALLOCATIONS: &[&str] = &["SmemAllocator", "allocate", "allocate_tensor", "allocate_array", "get_tensor", "data_ptr", "Array"];

/// Names that may hold a buffer: tensor and pointer parameters, shared
/// memory allocations, and whatever is computed from them (views,
/// partitions). An over-approximation: it only decides what the slice keeps.
fn buffer_names(kernel: &FunctionDef) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = kernel.params.iter().filter(|p| p.tensor).map(|p| p.name.clone()).collect();
    let mut assigns: Vec<(Vec<String>, &Expr)> = Vec::new();
    collect_assigns(&kernel.body, &mut assigns);
    loop {
        let before = names.len();
        for (defs, value) in &assigns {
            let mut uses = Vec::new();
            value.collect_uses(&mut uses);
            let mut calls = Vec::new();
            value.calls(&mut calls);
            let allocates = calls.iter().any(|c| {
                c.dotted_name().is_some_and(|last| ALLOCATIONS.contains(&last) || last.starts_with("alloc"))
            });
            if allocates || uses.iter().any(|u| names.contains(u)) {
                names.extend(defs.iter().cloned());
            }
        }
        if names.len() == before {
            return names;
        }
    }
}

fn collect_assigns<'a>(stmts: &'a [Stmt], out: &mut Vec<(Vec<String>, &'a Expr)>) {
    for s in stmts {
        match &s.kind {
            StmtKind::Assign { targets, value } => {
                let mut defs = Vec::new();
                targets.iter().for_each(|t| t.collect_defs(&mut defs));
                out.push((defs, value));
            }
            StmtKind::If { then, orelse, .. } => {
                collect_assigns(then, out);
                collect_assigns(orelse, out);
            }
            StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. } => collect_assigns(body, out),
            _ => {}
        }
    }
}

/// `cute.gemm`: an MMA, whose accumulator may be in tensor memory.
pub const GEMM: &str = "cutlass.cute.gemm";

/// Whether a statement loads, stores or copies a buffer; what it does and
/// the names that say where.
/// Names that may hold a view of tensor memory: what
/// `TmemAllocator.retrieve_ptr` or `cute.arch.retrieve_tmem_ptr` returns, and
/// whatever is computed from it (an over-approximation, as [`buffer_names`]).
fn tmem_names(f: &FunctionDef) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut assigns: Vec<(Vec<String>, &Expr)> = Vec::new();
    collect_assigns(&f.body, &mut assigns);
    loop {
        let before = names.len();
        for (defs, value) in &assigns {
            let mut calls = Vec::new();
            value.calls(&mut calls);
            let retrieves = calls.iter().any(|c| c.dotted_name().is_some_and(|last| matches!(last, "retrieve_ptr" | "retrieve_tmem_ptr")));
            let mut uses = Vec::new();
            value.collect_uses(&mut uses);
            if retrieves || uses.iter().any(|u| names.contains(u)) {
                names.extend(defs.iter().cloned());
            }
        }
        if names.len() == before {
            return names;
        }
    }
}

/// `tmem`: the names that may view tensor memory, the only accumulators an
/// MMA is kept for (an MMA into registers is the datapath).
fn memory_seed(s: &Stmt, buffers: &BTreeSet<String>, tmem: &BTreeSet<String>) -> Option<(String, Vec<String>)> {
    let is_buffer = |e: &Expr| {
        let mut u = Vec::new();
        e.collect_uses(&mut u);
        u.iter().any(|n| buffers.contains(n))
    };
    let mut uses = Vec::new();
    let mut what = None;
    let visit = |e: &Expr, uses: &mut Vec<String>, what: &mut Option<String>| {
        let mut subs = Vec::new();
        subscripts(e, &mut subs);
        for (base, index) in subs {
            if is_buffer(base) {
                base.collect_uses(uses);
                index.collect_uses(uses);
                what.get_or_insert_with(|| format!("loads `{}`", base.dotted().unwrap_or_default()));
            }
        }
        let mut calls = Vec::new();
        e.calls(&mut calls);
        for c in calls {
            let name = c.func.dotted().unwrap_or_default();
            let last = name.rsplit('.').next().unwrap_or("");
            let copies = Api::of_call(c) == Some(Api::Copy) || matches!(last, "autovec_copy" | "basic_copy" | "basic_copy_if" | "clc_response");
            // An MMA writes its accumulator: in tensor memory, what
            // `tmem-lifetime` follows.
            let in_tmem = |e: &Expr| {
                let mut u = Vec::new();
                e.collect_uses(&mut u);
                u.iter().any(|n| tmem.contains(n))
            };
            let multiplies = c.qualname.as_deref() == Some(GEMM) && c.args.iter().any(in_tmem);
            // Operands by position or by keyword (`src_mem=tile`; not a
            // predicate, `pred=`, which says nothing of the buffers).
            let operands = || c.args.iter().chain(c.kwargs.iter().filter(|(k, _)| matches!(k.as_str(), "src" | "dst" | "src_mem" | "dst_mem")).map(|(_, a)| a));
            if (copies || multiplies) && operands().any(is_buffer) {
                operands().for_each(|a| a.collect_uses(uses));
                what.get_or_insert_with(|| format!("{} with `{last}`", if multiplies { "multiplies" } else { "copies" }));
            }
            // The bulk groups of TMA stores: when the stores' shared memory
            // may be written again.
            if matches!(last, "cp_async_bulk_commit_group" | "cp_async_bulk_wait_group") {
                c.args.iter().chain(c.kwargs.iter().map(|(_, a)| a)).for_each(|a| a.collect_uses(uses));
                what.get_or_insert_with(|| format!("orders TMA stores with `{last}`"));
            }
        }
    };
    match &s.kind {
        StmtKind::Assign { targets, value } => {
            for t in targets {
                if let crate::ast::Target::Subscript { base, index } = t {
                    if is_buffer(base) {
                        base.collect_uses(&mut uses);
                        index.collect_uses(&mut uses);
                        what = Some(format!("stores to `{}`", base.dotted().unwrap_or_default()));
                    }
                }
            }
            visit(value, &mut uses, &mut what);
        }
        StmtKind::AugAssign { target, value, .. } => {
            if let crate::ast::Target::Subscript { base, index } = target {
                if is_buffer(base) {
                    base.collect_uses(&mut uses);
                    index.collect_uses(&mut uses);
                    what = Some(format!("stores to `{}`", base.dotted().unwrap_or_default()));
                }
            }
            visit(value, &mut uses, &mut what);
        }
        StmtKind::Expr(e) => visit(e, &mut uses, &mut what),
        _ => {}
    }
    what.map(|w| (w, uses))
}

fn subscripts<'e>(e: &'e Expr, out: &mut Vec<(&'e Expr, &'e Expr)>) {
    match e {
        Expr::Subscript { base, index } => {
            out.push((base, index));
            subscripts(index, out);
        }
        Expr::Call(c) => {
            subscripts(&c.func, out);
            c.args.iter().for_each(|a| subscripts(a, out));
            c.kwargs.iter().for_each(|(_, a)| subscripts(a, out));
        }
        Expr::Binary { lhs, rhs, .. } | Expr::Compare { lhs, rhs, .. } | Expr::BoolOp { lhs, rhs, .. } => {
            subscripts(lhs, out);
            subscripts(rhs, out);
        }
        Expr::Unary { operand, .. } => subscripts(operand, out),
        Expr::IfExp { cond, then, orelse } => {
            subscripts(cond, out);
            subscripts(then, out);
            subscripts(orelse, out);
        }
        Expr::Tuple(items) => items.iter().for_each(|a| subscripts(a, out)),
        Expr::Attr { base, .. } => subscripts(base, out),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept_lines(src: &str) -> Vec<(usize, bool)> {
        let module = crate::lower_text(src).unwrap();
        let kernel = module.kernels().next().expect("a kernel");
        let slice = slice_kernel(&module, kernel, src);
        let line = |r: TextRange| src[..r.start as usize].matches('\n').count() + 1;
        slice.entries.iter().map(|e| (line(e.range), e.kept && !slice.memory_only.contains(&e.id))).collect()
    }

    /// Every line of the kernel with whether the slice keeps it (for
    /// synchronization or for memory ordering).
    fn kept_at_all(src: &str) -> Vec<(usize, bool)> {
        let module = crate::lower_text(src).unwrap();
        let kernel = module.kernels().next().expect("a kernel");
        let slice = slice_kernel(&module, kernel, src);
        let line = |r: TextRange| src[..r.start as usize].matches('\n').count() + 1;
        slice.entries.iter().map(|e| (line(e.range), e.kept)).collect()
    }

    /// A kernel that loads `x`, stores into `out` under a bounds test, and
    /// does `MORE` with them.
    const BOUNDED_STORE: &str = "\
import cutlass
import cutlass.cute as cute

@cute.kernel
def k(x: cute.Tensor, out: cute.Tensor, n: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    v = x[tidx]
    cute.arch.sync_threads()
    if tidx < n:
        out[tidx] = v
    MORE
";

    /// A tensor the kernel only reads and one it only writes hold no pair of
    /// accesses a finding could be made of: their loads and stores, and the
    /// bounds test around the store, are not kept.
    #[test]
    fn loads_of_an_input_and_stores_to_an_output_are_not_kept() {
        let kept = kept_at_all(&BOUNDED_STORE.replace("MORE", "pass"));
        for line in [7, 9, 10] {
            assert!(kept.contains(&(line, false)), "line {line}: {kept:?}");
        }
        assert!(kept.contains(&(8, true)), "{kept:?}");
    }

    /// A tensor the kernel both writes and reads (data handed between CTAs),
    /// or hands to a function of the file, stays a buffer: its store and the
    /// test around it are kept for memory ordering.
    #[test]
    fn a_tensor_written_and_read_or_handed_on_stays_a_buffer() {
        let read_back = BOUNDED_STORE.replace("MORE", "w = out[tidx + 1]");
        let handed = format!("{}\n\ndef helper(t):\n    return t\n", BOUNDED_STORE.replace("MORE", "helper(out)"));
        for src in [read_back, handed] {
            let kept = kept_at_all(&src);
            assert!(kept.contains(&(9, true)) && kept.contains(&(10, true)), "{src}\n{kept:?}");
        }
    }

    /// A register fragment is private to its thread: its stores are not kept
    /// for memory ordering, and what they store stays opaque to the slice.
    #[test]
    fn stores_into_registers_are_not_kept_for_memory_ordering() {
        let src = "\
import cutlass
import cutlass.cute as cute

@cute.kernel
def k(x: cute.Tensor, n: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    regs = cute.make_rmem_tensor((4,), cutlass.Float32)
    if tidx < n:
        regs[0] = x[tidx]
    cute.arch.sync_threads()
";
        let kept = kept_at_all(src);
        assert!(kept.contains(&(8, false)) && kept.contains(&(9, false)), "{kept:?}");
    }

    #[test]
    fn a_library_call_for_its_effect_defines_no_module() {
        // The copy is kept for memory ordering alone: `cute.make_rmem_tensor`
        // reads `cute`, which `cute.copy` does not change.
        let src = "\
import cutlass.cute as cute

@cute.kernel
def k(g: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    regs = cute.make_rmem_tensor((4,), cutlass.Float32)
    cute.copy(atom, g[(None, tidx)], regs)
    n = cute.size(regs)
    if tidx < n:
        cute.arch.sync_threads()
";
        let kept = kept_lines(src);
        assert!(kept.contains(&(7, false)), "{kept:?}");
        assert!(kept.contains(&(8, true)), "{kept:?}");
    }

    #[test]
    fn a_method_called_for_its_effect_defines_its_object() {
        // `state.advance()` changes `state`; so does `utils.reset()` once
        // the kernel binds a `utils` of its own over the imported module.
        let src = "\
import cutlass.cute as cute
import cutlass.utils as utils

@cute.kernel
def k(bar: cute.Pointer):
    state = make_state()
    utils = make_counter()
    state.advance()
    utils.reset()
    cute.arch.mbarrier_wait(bar, state.phase + utils.phase)
";
        let kept = kept_lines(src);
        assert!(kept.contains(&(8, true)), "{kept:?}");
        assert!(kept.contains(&(9, true)), "{kept:?}");
    }
}
