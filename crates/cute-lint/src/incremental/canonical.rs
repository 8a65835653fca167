//! The key of an instantiation: what `cute_check::instantiate` can read of a
//! kernel and its file, with source positions taken out and the kernel cut down
//! to its synchronization slice, so that edits to the datapath, to comments or
//! above the kernel leave it unchanged.
//!
//! Of the file, `instantiate` reads functions by name (to inline helpers) and
//! module constants by name: the key holds those the cut kernel mentions,
//! directly or through the helpers it can reach, and nothing else, so an edit
//! elsewhere in the file (another kernel, a host function, an unrelated
//! constant) does not change it.
//!
//! Positions become ranks: every offset held by the kernel and the helpers it
//! may inline is replaced by four times its rank among them, every statement id
//! by its rank. `instantiate` only copies and compares offsets and ids (and
//! takes `start + 2` for the `if` keyword of an open condition), so its result
//! on the ranked input is its result on the real input with ranked positions;
//! [`Canon::decode`] puts the real ones back.
//!
//! What `instantiate` reads of the kernel body beyond the kept statements (it
//! executes only those) is two scans of the whole body: the names assigned a
//! lane-dependent value, consulted for conditions, and whether cluster calls
//! occur. The cut keeps every statement those can depend on: assignments to a
//! name that a condition can reach through assignments, and statements that
//! call a CuTe DSL function. It also reads whether a `while` body is all `pass`
//! (a spin loop): the cut keeps that.
//!
//! A store into memory whose target no condition reads keeps only what
//! `instantiate` observes of its value: the calls and loads in it, in order
//! ([`observable_parts`]), since stores are not tracked as values; changing the
//! arithmetic of a stored value is then a datapath edit. The key also carries
//! the file's classes that have bases, with those bases (`Key::classes`), since a
//! method a class does not define comes from them. A kernel that names a
//! subclass of a modelled pipeline class reads more of the module (the class
//! bodies, what the module level sets on them, the factories and methods these
//! name): the key carries that too, ranked like the rest ([`SubclassParts`]).

use std::collections::BTreeSet;

use cute_check::{InstantiateOptions, OpenCondition, Scenario};
use cute_ir::ast::{Expr, FunctionDef, Stmt, StmtId, StmtKind, Target};
use cute_ir::launch::Launch;
use cute_ir::Module;
use cute_syntax::DecoratorKind;

use super::positions::{self, Remap, Visit};

/// A function of the file as `instantiate` can look it up by name.
pub type Entry = (Option<String>, String, Option<DecoratorKind>);

/// `InstantiateOptions`, comparable. Built field by field so that a new
/// option is not silently left out of the key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct InstOptions {
    unknown_trip_count: u32,
    max_ops_per_thread: usize,
    max_steps_per_thread: usize,
    max_steps_total: usize,
    both_ways: bool,
}

impl InstOptions {
    pub fn of(o: &InstantiateOptions) -> Self {
        let InstantiateOptions {
            unknown_trip_count,
            max_ops_per_thread,
            max_steps_per_thread,
            max_steps_total,
            // The model is the same on any number of cores, and with or
            // without lanes standing in for others.
            workers: _,
            stand_ins: _,
            both_ways,
        } = *o;
        InstOptions { unknown_trip_count, max_ops_per_thread, max_steps_per_thread, max_steps_total, both_ways }
    }

    pub fn get(&self) -> InstantiateOptions {
        InstantiateOptions {
            unknown_trip_count: self.unknown_trip_count,
            max_ops_per_thread: self.max_ops_per_thread,
            max_steps_per_thread: self.max_steps_per_thread,
            max_steps_total: self.max_steps_total,
            workers: 0,
            stand_ins: true,
            both_ways: self.both_ways,
        }
    }
}

/// Everything an instantiation depends on, without positions.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    pub kernel: FunctionDef,
    /// The functions of the file the kernel can reach by name, in order:
    /// helpers in full, kernels (never inlined) by name only.
    pub functions: Vec<FunctionDef>,
    /// The closures of the kernel and those helpers that synchronize, their
    /// bodies left out (see `Closure::synchronizes`).
    pub closures: Vec<cute_ir::module::Closure>,
    /// The file's classes of an inheritance chain, with their bases: where
    /// a method a class does not define comes from (`Module::class_lineage`);
    /// in full (attributes, qualified bases) for a kernel that reads the
    /// subclasses of modelled classes ([`SubclassParts`]).
    pub classes: Vec<cute_ir::module::ClassDef>,
    /// What the module level sets on those classes (`Cls.create = ...`),
    /// for such a kernel.
    pub top_level: Vec<Stmt>,
    pub kept: Vec<StmtId>,
    pub memory_only: Vec<StmtId>,
    pub memory_controls: Vec<StmtId>,
    pub scenario: Vec<(StmtId, cute_check::Decision)>,
    pub launch: Launch,
    pub options: InstOptions,
}

impl Key {
    pub fn instantiate(&self) -> cute_check::Instantiated {
        let module = Module {
            functions: self.functions.clone(),
            closures: self.closures.clone(),
            classes: self.classes.clone(),
            top_level: self.top_level.clone(),
            ..Module::default()
        };
        let kept = cute_ir::Kept {
            ids: self.kept.iter().copied().collect(),
            memory_only: self.memory_only.iter().copied().collect(),
            memory_controls: self.memory_controls.iter().copied().collect(),
        };
        let scenario: Scenario = self.scenario.iter().copied().collect();
        let reuse = self.reuse();
        cute_check::instantiate_reusing(&module, &self.kernel, &kept, &self.launch, &scenario, &self.options.get(), reuse.as_ref())
    }

    /// The runs kept from the ways of deciding this key's conditions
    /// instantiated before it (see [`reusing`]).
    fn reuse(&self) -> Option<cute_check::Reuse> {
        REUSE.with(|reuse| reuse.borrow().clone())
    }
}

thread_local! {
    static REUSE: std::cell::RefCell<Option<cute_check::Reuse>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f`, whose instantiations of keys ([`Key::instantiate`], on this
/// thread, under the database's memo) take up the runs `reuse` kept: the
/// ways of one kernel's conditions are keys of their own that differ in
/// their scenario alone, and the database's memo cannot be handed the
/// runs. Taking them up changes no model, only how long it takes.
pub fn reusing<T>(reuse: &cute_check::Reuse, f: impl FnOnce() -> T) -> T {
    let before = REUSE.with(|r| r.replace(Some(reuse.clone())));
    let out = f();
    REUSE.with(|r| *r.borrow_mut() = before);
    out
}

/// The ranks of a key, to map its instantiation back.
pub struct Canon {
    offsets: Vec<u32>,
    ids: Vec<u32>,
}

struct Encode<'a>(&'a Canon, bool);

impl Remap for Encode<'_> {
    fn offset(&mut self, offset: u32) -> u32 {
        match self.0.offsets.binary_search(&offset) {
            Ok(i) => 4 * i as u32,
            Err(_) => {
                self.1 = false;
                0
            }
        }
    }

    fn id(&mut self, id: u32) -> u32 {
        // A condition on a launch value is no statement: kept as it is,
        // above every index of the table.
        if cute_check::is_launch_condition(id) {
            return id;
        }
        match self.0.ids.binary_search(&id) {
            Ok(i) => i as u32,
            Err(_) => {
                self.1 = false;
                0
            }
        }
    }
}

struct Decode<'a>(&'a Canon);

impl Remap for Decode<'_> {
    fn offset(&mut self, offset: u32) -> u32 {
        self.0.offsets.get(offset as usize / 4).map_or(offset, |o| o + offset % 4)
    }

    fn id(&mut self, id: u32) -> u32 {
        if cute_check::is_launch_condition(id) {
            return id;
        }
        self.0.ids.get(id as usize).copied().unwrap_or(id)
    }
}

impl Canon {
    /// Puts the real positions back into an instantiation of the key.
    pub fn decode(&self, model: &mut cute_check::Model, open: &mut [OpenCondition], costs: &mut [cute_check::WarpCost]) {
        positions::model(model, &mut Decode(self));
        for c in open {
            positions::open_condition(c, &mut Decode(self));
        }
        for cost in costs {
            for id in &mut cost.conditions {
                *id = Decode(self).id(*id);
            }
        }
    }
}

/// The names `kernel` (and `seeds`) can read or call, directly or through
/// the helpers it can call, the functions its parameters hold and the module
/// constants it reads; and those helpers, in order.
fn reach<'a>(kernel: &FunctionDef, helpers: &[&'a FunctionDef], launch: &Launch, seeds: &BTreeSet<String>) -> (BTreeSet<String>, Vec<&'a FunctionDef>) {
    let mut reachable = seeds.clone();
    names_in_function(kernel, &mut reachable);
    for v in launch.params.values() {
        function_values(v, &mut reachable);
    }
    // Each helper is read once, when its name is first reached.
    let mut read = vec![false; helpers.len()];
    loop {
        let before = reachable.len();
        for (h, read) in helpers.iter().zip(&mut read) {
            if !*read && reachable.contains(&h.name) {
                *read = true;
                names_in_function(h, &mut reachable);
            }
        }
        for (name, v) in &launch.globals {
            if reachable.contains(name) {
                function_values(v, &mut reachable);
            }
        }
        if reachable.len() == before {
            let reached = helpers.iter().copied().filter(|h| reachable.contains(&h.name)).collect();
            return (reachable, reached);
        }
    }
}

/// Every name and attribute name an expression mentions.
fn names_in(e: &Expr, out: &mut BTreeSet<String>) {
    match e {
        Expr::Name(n) => {
            out.insert(n.clone());
        }
        Expr::Attr { base, attr } => {
            out.insert(attr.clone());
            names_in(base, out);
        }
        Expr::Call(c) => {
            names_in(&c.func, out);
            c.args.iter().for_each(|a| names_in(a, out));
            c.kwargs.iter().for_each(|(_, a)| names_in(a, out));
        }
        Expr::Binary { lhs, rhs, .. } | Expr::Compare { lhs, rhs, .. } | Expr::BoolOp { lhs, rhs, .. } => {
            names_in(lhs, out);
            names_in(rhs, out);
        }
        Expr::Unary { operand, .. } => names_in(operand, out),
        Expr::IfExp { cond, then, orelse } => {
            names_in(cond, out);
            names_in(then, out);
            names_in(orelse, out);
        }
        Expr::Subscript { base, index } => {
            names_in(base, out);
            names_in(index, out);
        }
        Expr::Tuple(items) => items.iter().for_each(|a| names_in(a, out)),
        Expr::Int(_) | Expr::Float | Expr::Bool(_) | Expr::Str(_) | Expr::None | Expr::Unknown(_) => {}
    }
}

fn names_in_function(f: &FunctionDef, out: &mut BTreeSet<String>) {
    for p in &f.params {
        if let Some(d) = &p.default {
            names_in(d, out);
        }
    }
    cute_ir::ast::for_each_expr(&f.body, &mut |e| names_in(e, out));
}

/// Names of the functions the launch's values hold (its parameters and the
/// module constants), which a kernel can call without spelling them.
pub fn functions_handed(launch: &Launch) -> Vec<String> {
    let mut names = BTreeSet::new();
    for v in launch.params.values().chain(launch.globals.values()) {
        function_values(v, &mut names);
    }
    names.into_iter().collect()
}

/// Names of the functions a value holds.
fn function_values(v: &cute_ir::eval::Value, out: &mut BTreeSet<String>) {
    use cute_ir::eval::Value;
    match v {
        Value::Function { name, bound_self, .. } => {
            out.insert(name.to_string());
            if let Some(s) = bound_self {
                function_values(s, out);
            }
        }
        Value::Tuple(items) => items.iter().for_each(|i| function_values(i, out)),
        Value::Dict(pairs) => pairs.iter().for_each(|(k, v)| {
            function_values(k, out);
            function_values(v, out);
        }),
        Value::Object(o) => o.attrs.values().for_each(|i| function_values(i, out)),
        _ => {}
    }
}

fn uses(e: &Expr, out: &mut BTreeSet<String>) {
    let mut names = Vec::new();
    e.collect_uses(&mut names);
    out.extend(names);
}

/// Names read by the conditions of `if` statements (only executed ones when
/// `kept` is given).
fn condition_names(stmts: &[Stmt], kept: Option<&BTreeSet<StmtId>>, out: &mut BTreeSet<String>) {
    for s in stmts {
        if kept.is_some_and(|k| !k.contains(&s.id)) {
            continue;
        }
        match &s.kind {
            StmtKind::If { cond, then, orelse } => {
                uses(cond, out);
                condition_names(then, kept, out);
                condition_names(orelse, kept, out);
            }
            StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. } => {
                condition_names(body, kept, out)
            }
            _ => {}
        }
    }
}

/// Names a statement assigns (as a lane-dependence scan reads them).
fn assigned(s: &Stmt) -> Option<(Vec<String>, &Expr)> {
    let mut defs = Vec::new();
    match &s.kind {
        StmtKind::Assign { targets, value } => {
            targets.iter().for_each(|t| t.collect_defs(&mut defs));
            Some((defs, value))
        }
        StmtKind::AugAssign { target, value, .. } => {
            target.collect_defs(&mut defs);
            Some((defs, value))
        }
        _ => None,
    }
}

fn assignments<'a>(stmts: &'a [Stmt], out: &mut Vec<(Vec<String>, &'a Expr)>) {
    for s in stmts {
        out.extend(assigned(s));
        match &s.kind {
            StmtKind::If { then, orelse, .. } => {
                assignments(then, out);
                assignments(orelse, out);
            }
            StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. } => assignments(body, out),
            _ => {}
        }
    }
}

/// Whether the statement's own expressions (not its body's) call a CuTe DSL
/// function.
fn calls_api(s: &Stmt) -> bool {
    let own: Vec<&Expr> = match &s.kind {
        StmtKind::Assign { value, .. } | StmtKind::AugAssign { value, .. } | StmtKind::Expr(value) => vec![value],
        StmtKind::Return(Some(e)) => vec![e],
        StmtKind::If { cond, .. } | StmtKind::While { cond, .. } => vec![cond],
        StmtKind::For { iter, .. } => vec![iter],
        StmtKind::With { items, .. } => items.iter().map(|(e, _)| e).collect(),
        _ => Vec::new(),
    };
    own.iter().any(|e| {
        let mut calls = Vec::new();
        e.calls(&mut calls);
        calls.iter().any(|c| cute_ir::api::Api::of_call(c).is_some())
    })
}

/// Whether a target only stores into memory: `instantiate` binds no value
/// for it.
fn stores_only(t: &Target) -> bool {
    match t {
        Target::Subscript { .. } => true,
        Target::Tuple(items) => items.iter().all(stores_only),
        _ => false,
    }
}

/// What `instantiate` can observe of a value stored into memory: the
/// effects of evaluating it (calls) and the loads it makes (subscripts), in
/// order. Arithmetic, names and literals around them are left out, so that
/// changing a datapath formula without changing what it loads leaves the
/// key alone.
fn observable_parts(e: &Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::Binary { lhs, rhs, .. } => {
            observable_parts(lhs, out);
            observable_parts(rhs, out);
        }
        Expr::Unary { operand, .. } => observable_parts(operand, out),
        Expr::Tuple(items) => items.iter().for_each(|i| observable_parts(i, out)),
        Expr::Name(_) | Expr::Int(_) | Expr::Float | Expr::Bool(_) | Expr::Str(_) | Expr::None => {}
        other => out.push(other.clone()),
    }
}

/// A memory-only store with its value cut to [`observable_parts`]; `None`
/// for any other statement. The value of a store into memory is not bound
/// to a name (stores are not tracked as values), so only the evaluation's
/// effects and the loads it records can differ; a statement whose targets a
/// condition can reach keeps its value, as the lane-dependence scan reads it.
fn store_with_observable_value(kind: &StmtKind) -> Option<StmtKind> {
    let parts = |value: &Expr| {
        let mut parts = Vec::new();
        observable_parts(value, &mut parts);
        Expr::Tuple(parts)
    };
    match kind {
        StmtKind::Assign { targets, value } if targets.iter().all(stores_only) => {
            Some(StmtKind::Assign { targets: targets.clone(), value: parts(value) })
        }
        StmtKind::AugAssign { target, op, value } if stores_only(target) => {
            Some(StmtKind::AugAssign { target: target.clone(), op: *op, value: parts(value) })
        }
        _ => None,
    }
}

/// The statements `instantiate` can observe: kept ones, and the others the
/// whole-body scans can depend on.
fn cut(stmts: &[Stmt], kept: &cute_ir::Kept, names: &BTreeSet<String>) -> Vec<Stmt> {
    let mut out = Vec::new();
    for s in stmts {
        let mut s2 = Stmt { id: s.id, range: s.range, kind: StmtKind::Pass };
        let mut inner = false;
        s2.kind = match &s.kind {
            StmtKind::If { cond, then, orelse } => {
                let (then, orelse) = (cut(then, kept, names), cut(orelse, kept, names));
                inner = !then.is_empty() || !orelse.is_empty();
                StmtKind::If { cond: cond.clone(), then, orelse }
            }
            StmtKind::For { target, iter, body } => {
                let body = cut(body, kept, names);
                inner = !body.is_empty();
                StmtKind::For { target: target.clone(), iter: iter.clone(), body }
            }
            StmtKind::While { cond, body: full } => {
                let mut body = cut(full, kept, names);
                // `instantiate` takes a loop whose body is all `pass` for a
                // spin loop: the cut body must be all `pass` just when the
                // full one is. A statement it skips (not kept) stands for the
                // others.
                let is_pass = |b: &Stmt| matches!(b.kind, StmtKind::Pass);
                if !full.iter().all(is_pass) && body.iter().all(is_pass) {
                    if let Some(s) = full.iter().find(|b| !is_pass(b) && !kept.ids.contains(&b.id)) {
                        body.insert(0, Stmt { id: s.id, range: s.range, kind: StmtKind::Expr(Expr::None) });
                    }
                }
                inner = !body.is_empty();
                StmtKind::While { cond: cond.clone(), body }
            }
            StmtKind::With { items, body } => {
                let body = cut(body, kept, names);
                inner = !body.is_empty();
                StmtKind::With { items: items.clone(), body }
            }
            other => other.clone(),
        };
        let relevant_assignment = assigned(s).is_some_and(|(defs, _)| defs.iter().any(|d| names.contains(d)));
        if kept.memory_only.contains(&s.id) && !relevant_assignment {
            if let Some(kind) = store_with_observable_value(&s.kind) {
                s2.kind = kind;
            }
        }
        if inner || kept.ids.contains(&s.id) || relevant_assignment || calls_api(s) {
            out.push(s2);
        }
    }
    out
}

/// The classes of the module in an inheritance chain (with bases, or a
/// base of one).
fn classes_in_chains(module: &Module) -> BTreeSet<&str> {
    let mut in_chains: BTreeSet<&str> = BTreeSet::new();
    for c in module.classes.iter().filter(|c| !c.bases.is_empty()) {
        in_chains.extend(module.class_lineage(&c.name));
    }
    in_chains
}

/// What a kernel that names a subclass of a modelled pipeline class (or the
/// base as such a class's module names it) reads of the module besides the
/// functions it reaches (`cute_check::pipeline::subclass`): the bodies of the
/// classes of inheritance chains (class attributes as field defaults, a
/// `create = factory(...)` attribute, the bases as written and as qualified),
/// the module-level assignments to their attributes (`Cls.create =
/// factory(Base, Cls)`, which run after the class body), the methods of the
/// subclasses and the factories all these name, and each factory's nested
/// `create` in full.
struct SubclassParts {
    /// Names the key's reach starts from besides the kernel's.
    names: BTreeSet<String>,
}

impl SubclassParts {
    fn read_by(module: &Module, kernel: &FunctionDef, helpers: &[&FunctionDef]) -> Option<Self> {
        if !cute_check::pipeline::subclass::any(module) {
            return None;
        }
        let subclasses = cute_check::pipeline::subclass::Subclasses::of(module);
        let mut uses = Vec::new();
        for f in std::iter::once(kernel).chain(helpers.iter().copied()) {
            cute_ir::ast::for_each_expr(&f.body, &mut |e| e.collect_uses(&mut uses));
        }
        if !uses.iter().any(|n| subclasses.base_of(n).is_some() || subclasses.alias(n).is_some()) {
            return None;
        }
        let in_chains = classes_in_chains(module);
        let mut names = BTreeSet::from(["create".to_string()]);
        for c in module.classes.iter().filter(|c| in_chains.contains(c.name.as_str())) {
            for (_, e) in &c.attrs {
                names_in(e, &mut names);
            }
        }
        for f in module.functions.iter().filter(|f| f.class_name.as_deref().is_some_and(|c| in_chains.contains(c))) {
            names.insert(f.name.clone());
        }
        for s in Self::assignments(module, &in_chains) {
            if let StmtKind::Assign { value, .. } = &s.kind {
                names_in(value, &mut names);
            }
        }
        Some(SubclassParts { names })
    }

    /// The module-level assignments to an attribute of a class of `classes`.
    fn assignments<'m>(module: &'m Module, classes: &'m BTreeSet<&str>) -> impl Iterator<Item = &'m Stmt> + 'm {
        module.top_level.iter().filter(move |s| match &s.kind {
            StmtKind::Assign { targets, .. } => {
                targets.iter().any(|t| matches!(t, Target::Attr { base: Expr::Name(b), .. } if classes.contains(b.as_str())))
            }
            _ => false,
        })
    }

    /// The nested `create` of a factory the key reaches
    /// (`factory.<locals>.create`).
    fn is_factory_create(name: &str, reachable: &BTreeSet<String>) -> bool {
        name.strip_suffix(".<locals>.create").is_some_and(|factory| reachable.contains(factory.rsplit('.').next().unwrap_or(factory)))
    }

    /// The classes, assignments and nested `create`s, with their positions.
    fn of(&self, module: &Module, reachable: &BTreeSet<String>) -> (Vec<cute_ir::module::ClassDef>, Vec<Stmt>, Vec<cute_ir::module::Closure>) {
        let in_chains = classes_in_chains(module);
        let classes = module.classes.iter().filter(|c| in_chains.contains(c.name.as_str())).cloned().collect();
        let top_level = Self::assignments(module, &in_chains).cloned().collect();
        let creates = module.closures.iter().filter(|c| Self::is_factory_create(&c.function.name, reachable)).cloned().collect();
        (classes, top_level, creates)
    }

    /// Calls back on every position of what [`Self::of`] gives.
    fn visit(&self, module: &Module, reachable: &BTreeSet<String>, visit: &mut dyn Remap) {
        let (mut classes, mut top_level, mut creates) = self.of(module, reachable);
        for c in &mut classes {
            positions::class(c, visit);
        }
        positions::stmts(&mut top_level, visit);
        for c in &mut creates {
            positions::function(&mut c.function, visit);
        }
    }
}

/// The key of `instantiate(module, kernel, kept, launch, scenario, options)`,
/// where `module` holds every function of the file but the kernels and
/// `directory` lists all of them in order. `None` when the positions cannot be
/// ranked (the caller then instantiates directly).
#[allow(clippy::too_many_arguments)]
pub fn key(
    directory: &[Entry],
    module: &Module,
    kernel: &FunctionDef,
    kept: &cute_ir::Kept,
    launch: &Launch,
    scenario: &Scenario,
    options: &InstantiateOptions,
) -> Option<(Key, Canon)> {
    let kept_all = kept;
    let memory_only = &kept.memory_only;
    let kept = &kept.ids;
    let inlined = cute_ir::ast::inlined_when_called;
    // The module holds the file's helpers or some of them (every definition
    // of each name it holds), in file order.
    let all_helpers: Vec<&FunctionDef> = module.functions.iter().filter(|f| inlined(f.decorator)).collect();
    if inlined(kernel.decorator) {
        return None;
    }

    // Names whose lane dependence a condition can see (in the kernel, or in
    // any helper the kernel may call).
    let mut names = BTreeSet::new();
    condition_names(&kernel.body, Some(kept), &mut names);
    for h in reach(kernel, &all_helpers, launch, &BTreeSet::new()).1 {
        condition_names(&h.body, None, &mut names);
    }
    let mut all = Vec::new();
    assignments(&kernel.body, &mut all);
    loop {
        let before = names.len();
        for (defs, value) in &all {
            if defs.iter().any(|d| names.contains(d)) {
                uses(value, &mut names);
            }
        }
        if names.len() == before {
            break;
        }
    }
    let mut cut_kernel = FunctionDef { body: cut(&kernel.body, kept_all, &names), ..kernel.clone() };
    // What the cut kernel can reach is all `instantiate` can read.
    let (mut reachable, mut helpers) = reach(&cut_kernel, &all_helpers, launch, &BTreeSet::new());
    // A kernel that names a subclass of a modelled pipeline class reads
    // more of the module: see [`SubclassParts`].
    let subclass_parts = SubclassParts::read_by(module, &cut_kernel, &helpers);
    if let Some(parts) = &subclass_parts {
        (reachable, helpers) = reach(&cut_kernel, &all_helpers, launch, &parts.names);
    }

    // The closures of what it can reach that synchronize, by the names and
    // places a call of one is reported with.
    let enclosing: Vec<String> = std::iter::once(kernel.display_name()).chain(helpers.iter().map(|h| h.display_name())).collect();
    let mut closures: Vec<cute_ir::module::Closure> = module
        .closures
        .iter()
        .filter(|c| c.synchronizes && enclosing.iter().any(|e| c.function.name.starts_with(&format!("{e}.<locals>."))))
        .map(|c| cute_ir::module::Closure {
            function: FunctionDef { params: Vec::new(), body: Vec::new(), ..c.function.clone() },
            ..c.clone()
        })
        .collect();
    let mut offsets = Vec::new();
    let mut ids = Vec::new();
    {
        let mut visit = Visit(|o: Option<u32>, i: Option<u32>| {
            offsets.extend(o);
            ids.extend(i);
        });
        positions::function(&mut cut_kernel, &mut visit);
        for h in &helpers {
            positions::function(&mut (*h).clone(), &mut visit);
        }
        for c in &closures {
            positions::function(&mut c.function.clone(), &mut visit);
        }
        if let Some(parts) = &subclass_parts {
            parts.visit(module, &reachable, &mut visit);
        }
    }
    offsets.sort_unstable();
    offsets.dedup();
    ids.sort_unstable();
    ids.dedup();
    if offsets.len() >= (u32::MAX / 4) as usize {
        return None;
    }
    let canon = Canon { offsets, ids };

    let mut encode = Encode(&canon, true);
    positions::function(&mut cut_kernel, &mut encode);
    for c in &mut closures {
        positions::function(&mut c.function, &mut encode);
    }
    let mut helpers_in_order = all_helpers.into_iter().peekable();
    let mut functions = Vec::new();
    for (class, name, decorator) in directory {
        let helper = match helpers_in_order.peek() {
            Some(h) if inlined(*decorator) && (&h.class_name, &h.name, &h.decorator) == (class, name, decorator) => {
                helpers_in_order.next()
            }
            _ => None,
        };
        if !reachable.contains(name) {
            continue;
        }
        // A helper the kernel can reach that the module does not hold.
        if inlined(*decorator) && helper.is_none() {
            return None;
        }
        match helper {
            None => functions.push(FunctionDef {
                name: name.clone(),
                class_name: class.clone(),
                decorator: *decorator,
                params: Vec::new(),
                body: Vec::new(),
                range: Default::default(),
                name_range: Default::default(),
            }),
            Some(h) => {
                let mut h = h.clone();
                positions::function(&mut h, &mut encode);
                functions.push(h);
            }
        }
    }
    // Helpers out of the directory's order: the module is not the file's.
    if helpers_in_order.next().is_some() {
        return None;
    }
    let kept: Vec<StmtId> = kept.iter().map(|&i| encode.id(i)).collect();
    let memory_only: Vec<StmtId> = memory_only.iter().map(|&i| encode.id(i)).collect();
    let memory_controls: Vec<StmtId> = kept_all.memory_controls.iter().map(|&i| encode.id(i)).collect();
    let scenario: Vec<(StmtId, cute_check::Decision)> = scenario.iter().map(|(&i, &b)| (encode.id(i), b)).collect();
    if !encode.1 {
        return None;
    }
    let globals = launch.globals.iter().filter(|(k, _)| reachable.contains(*k)).map(|(k, v)| (k.clone(), v.clone())).collect();
    let launch = Launch { site: None, globals, ..launch.clone() };
    // Bases name classes, not positions: they go in as written, for each
    // class of an inheritance chain of the file (a class outside every
    // chain is its own lineage, and needs no entry); in full when the kernel
    // reads the subclasses of modelled classes.
    let (classes, top_level) = match &subclass_parts {
        Some(parts) => {
            let (mut classes, mut top_level, mut creates) = parts.of(module, &reachable);
            for c in &mut classes {
                positions::class(c, &mut encode);
            }
            positions::stmts(&mut top_level, &mut encode);
            for c in &mut creates {
                positions::function(&mut c.function, &mut encode);
            }
            closures.extend(creates);
            (classes, top_level)
        }
        None => {
            let in_chains = classes_in_chains(module);
            let classes = module
                .classes
                .iter()
                .filter(|c| in_chains.contains(c.name.as_str()))
                .map(|c| cute_ir::module::ClassDef { name: c.name.clone(), bases: c.bases.clone(), ..Default::default() })
                .collect();
            (classes, Vec::new())
        }
    };
    if !encode.1 {
        return None;
    }
    let key = Key { kernel: cut_kernel, functions, closures, classes, top_level, kept, memory_only, memory_controls, scenario, launch, options: InstOptions::of(options) };
    Some((key, canon))
}

