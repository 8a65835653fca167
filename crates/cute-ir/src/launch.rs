//! How a kernel is launched: block and cluster shape, and the values of its
//! parameters (`cutlass.Constexpr` arguments in particular), read from the
//! `kernel(...).launch(grid=, block=, cluster=)` call in a `@cute.jit` host
//! function of the same file and from the `cute.compile(host, ...)` call that
//! gives the host function its arguments.
//!
//! Host code runs on the CPU at compile time, so it is evaluated here
//! sequentially (no threads): assignments, known `if`s, loops over known
//! tuples and ranges (with `break`, `continue` and `return`), constructor
//! calls of classes in this file (their `__init__` sets `self.*`), the
//! methods and functions of this file it calls.

use std::collections::BTreeMap;

use cute_syntax::{DecoratorKind, TextRange};

use crate::ast::{Call, Expr, FunctionDef, Stmt, StmtKind};
use crate::eval::{self, assign, eval, Bindings, CallHandler, Env, Object, Value};
use crate::module::Module;

mod assumed_shape;
mod entry;
mod roles;
use assumed_shape::HostAssumptions;
pub use assumed_shape::{cluster_when_unknown, AssumedCluster, ASSUMED_THREADS_PER_CTA};
pub use roles::{role_tests, single_definitions, threads_reaching_roles};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Launch {
    /// Threads per CTA (x, y, z), when known.
    pub block: Option<[u32; 3]>,
    /// CTAs per cluster (x, y, z); `[1, 1, 1]` when the launch names none.
    pub cluster: Option<[u32; 3]>,
    /// CTAs in the grid (x, y, z), when known.
    pub grid: Option<[u32; 3]>,
    /// Values of the kernel's parameters (including `self`).
    pub params: Bindings,
    /// Module-level constants.
    pub globals: Bindings,
    /// Where the launch was found, if it was.
    pub site: Option<TextRange>,
    /// When `block` is assumed (the launch's did not resolve): the note
    /// that says so.
    pub block_assumed: Option<String>,
    /// What was assumed of the cluster shape, and of the host values
    /// computed from the assumed shapes.
    pub assumptions: Vec<String>,
}

impl Launch {
    pub fn threads_per_cta(&self) -> Option<u32> {
        self.block.map(|b| b[0] * b[1] * b[2])
    }

    pub fn ctas_per_cluster(&self) -> Option<u32> {
        self.cluster.map(|c| c[0] * c[1] * c[2])
    }
}

/// Evaluates module-level constants in order.
pub fn module_env(module: &Module) -> Env {
    let mut env = Env::default();
    // Shared-storage structs by name, with their fields' element types: the
    // tensors a kernel takes from them (`storage.tiles.get_tensor(layout)`)
    // have that element type.
    let structs = || module.classes.iter().filter(|c| !c.memrange_fields.is_empty());
    // Each field as `struct_definition` takes it, its count evaluated by
    // `count` (`None` before the module's constants are).
    let fields = |c: &crate::module::ClassDef, count: &mut dyn FnMut(&crate::ast::Expr) -> Value| -> Vec<(String, Value)> {
        c.memrange_fields
            .iter()
            .map(|f| (f.name.clone(), Value::Tuple(vec![Value::Str(f.dtype.clone()), f.len.as_ref().map_or(Value::None, &mut *count)])))
            .collect()
    };
    for c in structs() {
        env.insert(c.name.clone(), crate::eval::struct_definition(&fields(c, &mut |_| Value::None)));
    }
    let mut handler = HostCalls::new(module);
    // Module statements and class definitions in the order they run.
    // Classes are bound by name with their class-level attributes:
    // enumerations of barrier ids and warp roles (`class NamedBarrier(IntEnum):
    // EPILOGUE = 4`, read as `NamedBarrier.EPILOGUE`) and constants read off
    // the class.
    let classes = module.classes.iter().filter(|c| c.memrange_fields.is_empty() && !c.attrs.is_empty() && c.outer.is_none());
    let mut steps: Vec<(u32, Result<&Stmt, &crate::module::ClassDef>)> =
        module.top_level.iter().map(|s| (s.range.start, Ok(s))).chain(classes.map(|c| (c.range.start, Err(c)))).collect();
    steps.sort_by_key(|(at, _)| *at);
    for (_, step) in steps {
        match step {
            Ok(s) => {
                if let StmtKind::Assign { targets, value } = &s.kind {
                    let v = eval(value, &env, &mut handler);
                    for t in targets {
                        assign(t, v.clone(), &mut env);
                    }
                }
            }
            Err(c) => {
                let class = class_value(c, &env, &mut handler);
                env.insert(c.name.clone(), class);
            }
        }
    }
    // The fields' element counts, from the module's constants
    // (`MemRange[cutlass.Int64, 2 * STAGES]`).
    let with_counts: Vec<(String, Value)> =
        structs().map(|c| (c.name.clone(), crate::eval::struct_definition(&fields(c, &mut |len| eval(len, &env, &mut handler))))).collect();
    env.extend(with_counts);
    env
}

/// A class as a value: its class-level attributes, evaluated in order (a
/// later one may read an earlier one by name); `enum.auto()` is the
/// previous member's value plus one, from 1.
fn class_value(c: &crate::module::ClassDef, env: &Env, handler: &mut HostCalls<'_>) -> Value {
    let mut local = env.clone();
    let mut attrs = BTreeMap::new();
    let mut last_int: Option<i64> = None;
    for (name, value) in &c.attrs {
        let auto = matches!(value, crate::ast::Expr::Call(call) if call.func.dotted().is_some_and(|d| d == "auto" || d.ends_with(".auto")));
        let v = if auto { Value::Int(last_int.map_or(1, |i| i + 1)) } else { eval(value, &local, handler) };
        last_int = v.as_int();
        local.insert(name.clone(), v.clone());
        attrs.insert(name.clone(), v);
    }
    Value::Object(std::sync::Arc::new(Object { class: c.name.clone(), attrs }))
}

/// The launches of every kernel of a file, found by running each host
/// function once.
pub struct Launches {
    globals: Env,
    found: Vec<Found>,
}

/// A launch found in a host function.
struct Found {
    /// The class of the launched method, if it is one.
    class: Option<String>,
    kernel: String,
    launch: Launch,
    /// The host function, by index in the module's functions.
    host: usize,
    /// The `block=` argument, when it did not resolve.
    unresolved_block: Option<Expr>,
    /// The `cluster=` argument, when it did not resolve.
    unresolved_cluster: Option<Expr>,
}

impl Launches {
    pub fn of_module(module: &Module) -> Launches {
        let globals = module_env(module);
        let mut handler = HostCalls::new(module);
        let mut found = Vec::new();
        for (index, host) in module.functions.iter().enumerate() {
            if host.decorator == Some(DecoratorKind::Jit) {
                found.extend(run_host(module, index, &globals, &mut handler));
            }
        }
        found.extend(launches_not_taken(module, &found, &globals));
        Launches { globals, found }
    }

    /// The launch `found` with the block and cluster shapes `kernel` is
    /// checked with where the launch's do not resolve, and the host values
    /// computed from those shapes (see [`assumed_shape`]). A shape whose
    /// `block=` or `cluster=` argument cannot be solved for stays unknown;
    /// `None` when neither can, or running the host code again with the
    /// solution does not give the shapes assumed.
    fn with_assumed_shape(&self, module: &Module, found: &Found, kernel: &FunctionDef, threads: u32) -> Option<Launch> {
        const MAX_RUNS: usize = 4;
        let cluster = cluster_when_unknown(kernel);
        let mut values = BTreeMap::new();
        let mut solve = |arg: &Option<Expr>, dims: [u32; 3]| -> Option<[u32; 3]> {
            let shape = Value::Tuple(dims.iter().map(|&d| Value::Int(d.into())).collect());
            let mut solution = values.clone();
            assumed_shape::solve(arg.as_ref()?, &shape, &mut solution).then(|| {
                values = solution;
                dims
            })
        };
        let block = solve(&found.unresolved_block, [threads, 1, 1]);
        let cluster_shape = solve(&found.unresolved_cluster, cluster.shape);
        if block.is_none() && cluster_shape.is_none() {
            return None;
        }
        let single_cta = found.launch.cluster.or(cluster_shape).is_some_and(|c| c.iter().product::<u32>() == 1);
        for _ in 0..MAX_RUNS {
            let mut handler = HostCalls { assumed: Some(HostAssumptions::new(values, single_cta)), ..HostCalls::new(module) };
            let relaunched = run_host(module, found.host, &self.globals, &mut handler)
                .into_iter()
                .find(|f| f.kernel == found.kernel && f.class == found.class);
            let mut taken = handler.assumed.take()?;
            // Names solved in this run were computed from before they got
            // their values: run again.
            if let Some(more) = taken.next_run() {
                values = more;
                continue;
            }
            let as_assumed = |f: &Found| {
                block.is_none_or(|b| f.launch.block == Some(b)) && cluster_shape.is_none_or(|c| f.launch.cluster == Some(c))
            };
            let relaunched = relaunched.filter(as_assumed)?;
            let mut assumptions = relaunched.launch.assumptions.clone();
            if cluster_shape.is_some() {
                assumptions.extend(cluster.note.map(str::to_string));
            }
            let described = taken.describe_taken();
            if !described.is_empty() {
                assumptions.push(format!("the host code computes its values with {}", described.join(", ")));
            }
            if taken.single_cta_mmas {
                assumptions.push(crate::layout::SINGLE_CTA_MMA.to_string());
            }
            let block_assumed = block.map(|_| block_assumed_note(kernel, threads));
            return Some(Launch { block_assumed, assumptions, ..relaunched.launch });
        }
        None
    }

    /// The launch of `kernel`. Always returns a `Launch`. A launch found with
    /// a block or cluster shape that does not resolve gets the shapes the
    /// kernel is checked with, and the host values computed from them,
    /// where its arguments can be solved for them (the block is assumed in
    /// any case, and said); a launch not found has no shape (`None`) and
    /// the caller states its assumption. Parameters not known are `Unknown`.
    pub fn of_kernel(&self, module: &Module, kernel: &FunctionDef) -> Launch {
        let launch = self.of_kernel_with(module, kernel, ASSUMED_THREADS_PER_CTA);
        if launch.block_assumed.is_none() {
            return launch;
        }
        // Four warps leave out a role the kernel dispatches to a later
        // warp: assume as many warp groups as reach it.
        let mut env = self.globals.clone();
        env.extend(launch.params.iter().map(|(k, v)| (k.clone(), v.clone())));
        match roles::threads_reaching_roles(kernel, &env) {
            Some((threads, warp)) => {
                let mut wider = self.of_kernel_with(module, kernel, threads);
                if wider.block != Some([threads, 1, 1]) {
                    return launch;
                }
                wider.block_assumed = wider.block_assumed.map(|note| {
                    format!("{note}, the warp groups that reach warp {warp}, the highest its tests of the warp index select")
                });
                wider
            }
            None => launch,
        }
    }

    /// [`Launches::of_kernel`], with `threads` per CTA where the block is
    /// assumed.
    fn of_kernel_with(&self, module: &Module, kernel: &FunctionDef, threads: u32) -> Launch {
        let globals = &self.globals;
        let mut handler = HostCalls::new(module);
        let found = self.found.iter().find(|f| f.kernel == kernel.name && f.class.as_deref() == kernel.class_name.as_deref());
        let mut launch = match found {
            Some(f) if f.launch.cluster.is_none() || f.launch.block.is_none() => {
                let mut launch = self.with_assumed_shape(module, f, kernel, threads).unwrap_or_else(|| f.launch.clone());
                if launch.block.is_none() {
                    launch.block = Some([threads, 1, 1]);
                    launch.block_assumed = Some(block_assumed_note(kernel, threads));
                }
                launch
            }
            Some(f) => f.launch.clone(),
            None => Launch {
                block: None,
                cluster: None,
                grid: None,
                params: Bindings::new(),
                globals: Bindings::new(),
                site: None,
                block_assumed: None,
                assumptions: Vec::new(),
            },
        };
        launch.globals = globals.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        // Parameters the launch did not give: defaults, else unknown.
        for p in &kernel.params {
            if launch.params.contains_key(&p.name) {
                continue;
            }
            let v = match &p.default {
                Some(d) => eval(d, globals, &mut handler),
                None => Value::unknown(format!("the argument `{}` of `{}`", p.name, kernel.display_name())),
            };
            launch.params.insert(p.name.clone(), v);
        }
        if kernel.is_method() && !matches!(launch.params.get("self"), Some(Value::Object(_))) {
            // A method launched from code we could not follow: construct the
            // object from a `Class(...)` call in the file, or with defaults.
            let class = kernel.class_name.clone().unwrap_or_default();
            let obj = construct_from_file(module, &class, globals, &mut handler);
            launch.params.insert("self".to_string(), obj);
            launch.assumptions.append(&mut handler.configuration);
        }
        launch
    }
}

fn block_assumed_note(kernel: &FunctionDef, threads: u32) -> String {
    format!("the block shape of the launch of `{}` is not known statically: assuming {threads} threads per CTA", kernel.display_name())
}

/// Resolve the launch of one kernel (see [`Launches`] to resolve them all).
pub fn resolve_launch(module: &Module, kernel: &FunctionDef) -> Launch {
    Launches::of_module(module).of_kernel(module, kernel)
}

/// Runs the host function `module.functions[index]` from its `cute.compile`
/// call, and returns the launches it makes.
fn run_host(module: &Module, index: usize, globals: &Env, handler: &mut HostCalls<'_>) -> Vec<Found> {
    let host = &module.functions[index];
    let mut env = globals.clone();
    let outer = std::mem::take(&mut handler.configuration);
    bind_host_params(module, host, globals, &mut env, handler);
    let mut visitor = LaunchFinder { module, host: index, found: Vec::new() };
    run_host_body(&host.body, &mut env, handler, &mut visitor);
    let configuration = std::mem::replace(&mut handler.configuration, outer);
    for found in &mut visitor.found {
        found.launch.assumptions.extend(configuration.iter().cloned());
    }
    visitor.found
}

/// The launches written in host functions that running them with the
/// file's configuration does not reach (`if cutlass.const_expr(MODE ==
/// "transpose"):` around the launch of the kernel that mode selects, with
/// the file's `__main__` block selecting another): each is taken as its
/// host's values give it on the way to it, down the branches that hold it,
/// and says so. A kernel launched that way is checked with the block its
/// launch writes (`block=(32, 1, 1)`) rather than an assumed one.
fn launches_not_taken(module: &Module, found: &[Found], globals: &Env) -> Vec<Found> {
    let mut more: Vec<Found> = Vec::new();
    for (index, host) in module.functions.iter().enumerate() {
        if host.decorator != Some(DecoratorKind::Jit) {
            continue;
        }
        for stmt in crate::module::nested_statements(&host.body) {
            let StmtKind::Expr(e) = &stmt.kind else { continue };
            let Some(kernel) = launched_kernel(e) else { continue };
            let known = |f: &Found| f.kernel == kernel && f.class.is_none();
            if found.iter().any(known) || more.iter().any(known) || module.function(None, kernel).is_none() {
                continue;
            }
            let mut handler = HostCalls::new(module);
            let mut env = globals.clone();
            bind_host_params(module, host, globals, &mut env, &mut handler);
            if !run_until(&host.body, stmt.id, &mut env, &mut handler) {
                continue;
            }
            let mut finder = LaunchFinder { module, host: index, found: Vec::new() };
            finder.expr_stmt(e, &env, &mut handler);
            for mut f in finder.found {
                f.launch.assumptions.extend(handler.configuration.iter().cloned());
                f.launch.assumptions.push(format!(
                    "the launch of `{kernel}` is in a branch of `{}` that the host values taken for this file do not reach: \
                     it is checked as that launch is written, with the values on the way to it",
                    host.name
                ));
                more.push(f);
            }
        }
    }
    more
}

/// The kernel a host statement launches by name (`kernel(...).launch(...)`).
fn launched_kernel(e: &Expr) -> Option<&str> {
    let Expr::Call(c) = e else { return None };
    let Expr::Attr { base, attr } = &c.func else { return None };
    let Expr::Call(inner) = base.as_ref() else { return None };
    match &inner.func {
        Expr::Name(n) if attr == "launch" => Some(n),
        _ => None,
    }
}

/// Bind a host function's parameters from `cute.compile(host, args...)`.
fn bind_host_params(
    module: &Module,
    host: &FunctionDef,
    globals: &Env,
    env: &mut Env,
    handler: &mut HostCalls<'_>,
) {
    let mut bound = false;
    for s in module.all_statements() {
        let exprs: Vec<&Expr> = match &s.kind {
            // `return cute.compile(host, ...)` too: a factory of the
            // compiled kernel.
            StmtKind::Expr(e) | StmtKind::Return(Some(e)) => vec![e],
            StmtKind::Assign { value, .. } => vec![value],
            _ => continue,
        };
        for e in exprs {
            let mut calls = Vec::new();
            e.calls(&mut calls);
            for c in calls {
                // Every call of the file is asked, once per host function:
                // the name is spelled out only for a call of some `compile`.
                let is_compile = crate::layout::last_part(c) == Some("compile")
                    && (c.qualname.as_deref() == Some("cutlass.cute.compile")
                        || c.func.dotted().as_deref() == Some("cute.compile"));
                if !is_compile || c.args.is_empty() || bound {
                    continue;
                }
                // Evaluate the compile call in the scope it sits in, as far as
                // module constants reach (locals of `main()` are evaluated by
                // running that function's straight-line assignments).
                let scope = enclosing_env(module, s.id, globals, handler);
                let target = eval(&c.args[0], &scope, handler);
                let matches_host = match (&target, &c.args[0]) {
                    (Value::Object(o), _) => {
                        host.class_name.as_deref() == Some(o.class.as_str()) && host.name == "__call__"
                    }
                    (Value::Function { class, name, .. }, _) => {
                        &**name == host.name.as_str() && class.as_deref() == host.class_name.as_deref()
                    }
                    (_, Expr::Name(n)) => *n == host.name && host.class_name.is_none(),
                    _ => false,
                };
                if !matches_host {
                    continue;
                }
                let args: Vec<Value> = c.args[1..].iter().map(|a| eval(a, &scope, handler)).collect();
                let mut params = host.params.iter();
                if host.is_method() {
                    params.next();
                    let obj = match target {
                        Value::Object(_) => target.clone(),
                        Value::Function { bound_self: Some(s), .. } => *s,
                        _ => Value::unknown("the object compiled"),
                    };
                    env.insert("self".to_string(), obj);
                }
                for (p, a) in params.zip(args) {
                    env.insert(p.name.clone(), a);
                }
                for (k, a) in &c.kwargs {
                    let v = eval(a, &scope, handler);
                    env.insert(k.clone(), v);
                }
                bound = true;
            }
        }
    }
    for p in &host.params {
        if !env.contains_key(&p.name) {
            let v = match &p.default {
                Some(d) => eval(d, globals, handler),
                None => Value::unknown(format!("the argument `{}` of `{}`", p.name, host.display_name())),
            };
            env.insert(p.name.clone(), v);
        }
    }
    if host.is_method() && !matches!(env.get("self"), Some(Value::Object(_))) {
        let class = host.class_name.clone().unwrap_or_default();
        let obj = construct_from_file(module, &class, globals, handler);
        env.insert("self".to_string(), obj);
    }
    if let Some(assumed) = &mut handler.assumed {
        for p in &host.params {
            if let Some(v) = env.get_mut(&p.name) {
                assumed.replace(&crate::ast::Target::Name(p.name.clone()), None, v);
            }
        }
    }
}

/// The environment at statement `id`: module constants, plus the locals of
/// the function that holds it, evaluated straight-line up to it.
fn enclosing_env(module: &Module, id: u32, globals: &Env, handler: &mut HostCalls<'_>) -> Env {
    let mut env = globals.clone();
    let holder = module.functions.iter().find(|f| contains(&f.body, id));
    let body: &[Stmt] = match holder {
        Some(f) => {
            bind_from_entry_call(module, f, globals, &mut env, handler);
            &f.body
        }
        None => &module.top_level,
    };
    run_until(body, id, &mut env, handler);
    env
}

/// Binds the parameters of module function `f` to the arguments the file
/// calls it with (see [`entry`]): the call in its `__main__` block, else
/// another in the file, evaluated in the scope it sits in. Parameters the
/// call leaves out take their defaults. Nothing is bound when the file
/// does not call `f`, or calls nest deeper than [`MAX_HOST_DEPTH`].
fn bind_from_entry_call(module: &Module, f: &FunctionDef, globals: &Env, env: &mut Env, handler: &mut HostCalls<'_>) {
    // A function without parameters (`def main():`) takes nothing from its
    // call: its values are its own, and nothing is said.
    if f.class_name.is_some() || f.decorator.is_some() || f.params.is_empty() || handler.depth > MAX_HOST_DEPTH {
        return;
    }
    // A branch of the `__main__` block whose condition the host values
    // decide against (`if args.n is not None:` with the option's default
    // None) is not the one the file runs.
    handler.depth += 1;
    let entry = {
        let mut decided = |s: &Stmt| {
            let StmtKind::If { cond, .. } = &s.kind else { return None };
            let env = enclosing_env(module, s.id, globals, handler);
            eval(cond, &env, handler).as_bool()
        };
        entry::entry_call(module, f, &mut decided)
    };
    handler.depth -= 1;
    let Some((stmt, call)) = entry else { return };
    handler.depth += 1;
    let read_before = std::mem::take(&mut handler.read_command_line);
    let scope = enclosing_env(module, stmt.id, globals, handler);
    let args: Vec<Value> = call.args.iter().map(|a| eval(a, &scope, handler)).collect();
    let kwargs: Vec<(String, Value)> = call.kwargs.iter().map(|(k, a)| (k.clone(), eval(a, &scope, handler))).collect();
    let read_command_line = std::mem::replace(&mut handler.read_command_line, read_before);
    handler.depth -= 1;
    bind_arguments(&f.params, args, kwargs, &scope, env, handler, &f.name);
    let in_main = entry::main_blocks(module).flatten().any(|s| s.id == stmt.id || contains(std::slice::from_ref(s), stmt.id));
    let note = match (in_main, read_command_line) {
        (true, true) => format!(
            "the host values are those of the file's `__main__` block, which calls `{}(...)` with its command-line options at their defaults",
            f.name
        ),
        (true, false) => format!("the host values are those of the file's `__main__` block, which calls `{}(...)`", f.name),
        (false, _) => format!("the host values are those `{}(...)` is called with in this file", f.name),
    };
    if !handler.configuration.contains(&note) {
        handler.configuration.push(note);
    }
}

fn contains(stmts: &[Stmt], id: u32) -> bool {
    stmts.iter().any(|s| {
        s.id == id
            || match &s.kind {
                StmtKind::If { then, orelse, .. } => contains(then, id) || contains(orelse, id),
                StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. } => {
                    contains(body, id)
                }
                _ => false,
            }
    })
}

/// Straight-line evaluation of assignments until statement `id` (entering
/// the block that holds it). Returns true once `id` is reached.
fn run_until(stmts: &[Stmt], id: u32, env: &mut Env, handler: &mut HostCalls<'_>) -> bool {
    for s in stmts {
        if s.id == id {
            return true;
        }
        match &s.kind {
            StmtKind::Assign { targets, value } => host_assign(targets, value, env, handler),
            StmtKind::If { then, orelse, .. } => {
                if contains(then, id) {
                    return run_until(then, id, env, handler);
                }
                if contains(orelse, id) {
                    return run_until(orelse, id, env, handler);
                }
            }
            // The first iteration of a loop over known items (`for n in
            // (16, 32): run(n)`): what the file runs first.
            StmtKind::For { target, iter, body } if contains(body, id) => {
                let first = match eval(iter, env, handler) {
                    Value::Tuple(items) => items.first().cloned(),
                    Value::Range { start, stop, step } if (step > 0 && start < stop) || (step < 0 && start > stop) => {
                        Some(Value::Int(start))
                    }
                    _ => None,
                };
                assign(target, first.unwrap_or(Value::unknown("a loop variable")), env);
                return run_until(body, id, env, handler);
            }
            StmtKind::While { body, .. } | StmtKind::With { body, .. } if contains(body, id) => {
                return run_until(body, id, env, handler);
            }
            _ => {}
        }
    }
    false
}

fn construct_from_file(module: &Module, class: &str, globals: &Env, handler: &mut HostCalls<'_>) -> Value {
    // Prefer an explicit `Class(...)` call somewhere in the file.
    for s in module.all_statements() {
        let exprs: Vec<&Expr> = match &s.kind {
            StmtKind::Expr(e) | StmtKind::Assign { value: e, .. } => vec![e],
            _ => continue,
        };
        for e in exprs {
            let mut calls = Vec::new();
            e.calls(&mut calls);
            for c in calls {
                if matches!(&c.func, Expr::Name(n) if n == class) {
                    let scope = enclosing_env(module, s.id, globals, handler);
                    return eval(&Expr::Call(Box::new((*c).clone())), &scope, handler);
                }
            }
        }
    }
    handler.construct(class, Vec::new(), Vec::new(), globals)
}

trait HostVisitor {
    fn expr_stmt(&mut self, expr: &Expr, env: &Env, handler: &mut HostCalls<'_>);

    /// A `return` statement ran, giving `value`.
    fn returned(&mut self, _value: Value) {}
}

/// The value the first `return` a host method runs gives (a `return` under
/// a condition not known does not end the run: both ways run, see
/// [`HostFlow`]).
#[derive(Default)]
struct FirstReturn(Option<Value>);

impl HostVisitor for FirstReturn {
    fn expr_stmt(&mut self, _: &Expr, _: &Env, _: &mut HostCalls<'_>) {}

    fn returned(&mut self, value: Value) {
        self.0.get_or_insert(value);
    }
}

struct LaunchFinder<'m> {
    module: &'m Module,
    /// The host function run, by index in the module's functions.
    host: usize,
    found: Vec<Found>,
}

impl HostVisitor for LaunchFinder<'_> {
    fn expr_stmt(&mut self, expr: &Expr, env: &Env, handler: &mut HostCalls<'_>) {
        let mut calls = Vec::new();
        expr.calls(&mut calls);
        for c in calls {
            // `kernel(args).launch(grid=..., block=..., cluster=...)`
            let Expr::Attr { base, attr } = &c.func else { continue };
            if attr != "launch" {
                continue;
            }
            let Expr::Call(inner) = base.as_ref() else { continue };
            let (class, name) = match &inner.func {
                Expr::Name(n) => (None, n.clone()),
                Expr::Attr { base, attr } if matches!(base.as_ref(), Expr::Name(b) if b == "self") => {
                    let class = match env.get("self") {
                        Some(Value::Object(o)) => Some(o.class.clone()),
                        _ => None,
                    };
                    (class, attr.clone())
                }
                _ => continue,
            };
            let Some(kernel) = self.module.function(class.as_deref(), &name) else { continue };
            if self.found.iter().any(|f| f.class == class && f.kernel == name) {
                continue;
            }
            let mut params = Bindings::new();
            let mut formal = kernel.params.iter();
            if kernel.is_method() {
                formal.next();
                params.insert("self".to_string(), env.get("self").cloned().unwrap_or(Value::unknown("self")));
            }
            for (p, a) in formal.zip(&inner.args) {
                params.insert(p.name.clone(), eval(a, env, handler));
            }
            for (k, a) in &inner.kwargs {
                params.insert(k.clone(), eval(a, env, handler));
            }
            let dims = |name: &str, handler: &mut HostCalls<'_>| -> Option<[u32; 3]> {
                let (_, e) = c.kwargs.iter().find(|(k, _)| k == name)?;
                dim3(&eval(e, env, handler))
            };
            let arg = |name: &str| c.kwargs.iter().find(|(k, _)| k == name).map(|(_, e)| e);
            let block = dims("block", handler);
            let cluster = if arg("cluster").is_some() { dims("cluster", handler) } else { Some([1, 1, 1]) };
            let grid = dims("grid", handler);
            let unresolved_block = arg("block").filter(|_| block.is_none()).cloned();
            let unresolved_cluster = arg("cluster").filter(|_| cluster.is_none()).cloned();
            let launch = Launch {
                block,
                cluster,
                grid,
                params,
                globals: Bindings::new(),
                site: Some(c.range),
                block_assumed: None,
                assumptions: Vec::new(),
            };
            self.found.push(Found { class, kernel: name, launch, host: self.host, unresolved_block, unresolved_cluster });
        }
    }
}

fn dim3(v: &Value) -> Option<[u32; 3]> {
    let as_u32 = |v: &Value| v.as_int().and_then(|i| u32::try_from(i).ok()).filter(|&i| i > 0);
    match v {
        // `cluster=None` (`[1, n, 1] if n > 1 else None`): the default.
        Value::None => Some([1, 1, 1]),
        Value::Tuple(items) => {
            let mut out = [1u32; 3];
            for (i, item) in items.iter().take(3).enumerate() {
                out[i] = as_u32(item)?;
            }
            Some(out)
        }
        other => as_u32(other).map(|x| [x, 1, 1]),
    }
}

/// `targets = value` in host code; under an assumed cluster, a name with an
/// assumed value takes it when `value` does not resolve.
fn host_assign(targets: &[crate::ast::Target], value: &Expr, env: &mut Env, handler: &mut HostCalls<'_>) {
    let v = eval(value, env, handler);
    for t in targets {
        let mut v = v.clone();
        if let Some(assumed) = &mut handler.assumed {
            assumed.replace(t, Some(value), &mut v);
        }
        assign(t, v, env);
    }
}

/// How a run of host statements ended: where the code says so through
/// conditions and loops whose values are known (a `return` under a
/// condition not known does not end the run: both ways are run).
#[derive(Clone, Copy, PartialEq, Eq)]
enum HostFlow {
    Normal,
    Break,
    Continue,
    Return,
}

/// Loop iterations host code is run for, at most: a loop over a known tuple
/// or range runs each of them with its variable bound; a longer one, or one
/// over values not known, runs its body once.
const MAX_HOST_TRIPS: usize = 64;

/// Host statements one evaluation runs, at most (nested loops calling
/// functions with loops of their own multiply): past it, a loop stops and
/// what it assigns is not known, and so is what a function returns.
const MAX_HOST_STEPS: usize = 100_000;

/// What the loop `for target in ...: body`, stopped part way, leaves: every
/// name and attribute it assigns is not known (a partial sum is not the
/// sum), and `self` too when the body calls methods for their effect.
fn forget_loop(target: &crate::ast::Target, body: &[Stmt], env: &mut Env) {
    let cut = || Value::unknown("a value host code computes in more steps than are run");
    assign(target, cut(), env);
    crate::ast::for_each_binding(body, &mut |t, _| assign(t, cut(), env));
    if crate::module::nested_statements(body).iter().any(|s| matches!(s.kind, StmtKind::Expr(Expr::Call(_)))) {
        env.insert("self".to_string(), cut());
    }
}

fn run_host_body(stmts: &[Stmt], env: &mut Env, handler: &mut HostCalls<'_>, visitor: &mut dyn HostVisitor) -> HostFlow {
    for s in stmts {
        handler.steps += 1;
        match &s.kind {
            StmtKind::Assign { targets, value } => {
                visitor.expr_stmt(value, env, handler);
                host_assign(targets, value, env, handler);
            }
            StmtKind::AugAssign { target, op, value } => {
                let cur = match target {
                    crate::ast::Target::Name(n) => env.get(n).cloned().unwrap_or(Value::unknown(n.clone())),
                    _ => Value::unknown("target"),
                };
                let r = eval(value, env, handler);
                let v = eval::binary(*op, &cur, &r);
                assign(target, v, env);
            }
            StmtKind::Expr(e) => {
                visitor.expr_stmt(e, env, handler);
                if let Expr::Call(call) = e {
                    run_method_on_self(call, env, handler, visitor);
                }
            }
            StmtKind::Return(value) => {
                if let Some(e) = value {
                    visitor.expr_stmt(e, env, handler);
                    let value = eval(e, env, handler);
                    visitor.returned(value);
                }
                return HostFlow::Return;
            }
            StmtKind::Break => return HostFlow::Break,
            StmtKind::Continue => return HostFlow::Continue,
            StmtKind::If { cond, then, orelse } => {
                let flow = match eval(cond, env, handler).as_bool() {
                    Some(true) => run_host_body(then, env, handler, visitor),
                    Some(false) => run_host_body(orelse, env, handler, visitor),
                    None => {
                        run_host_body(then, env, handler, visitor);
                        run_host_body(orelse, env, handler, visitor);
                        HostFlow::Normal
                    }
                };
                if flow != HostFlow::Normal {
                    return flow;
                }
            }
            StmtKind::For { target, iter, body } => {
                let items = eval(iter, env, handler).iteration().filter(|items| items.len() <= MAX_HOST_TRIPS);
                match items {
                    Some(items) => {
                        for item in items {
                            if handler.steps > MAX_HOST_STEPS {
                                forget_loop(target, body, env);
                                break;
                            }
                            assign(target, item, env);
                            match run_host_body(body, env, handler, visitor) {
                                HostFlow::Break => break,
                                HostFlow::Return => return HostFlow::Return,
                                HostFlow::Normal | HostFlow::Continue => {}
                            }
                        }
                    }
                    None => {
                        run_host_body(body, env, handler, visitor);
                    }
                }
            }
            StmtKind::While { body, .. } => {
                run_host_body(body, env, handler, visitor);
            }
            StmtKind::With { body, .. } => {
                let flow = run_host_body(body, env, handler, visitor);
                if flow != HostFlow::Normal {
                    return flow;
                }
            }
            _ => {}
        }
    }
    HostFlow::Normal
}

/// `self.setup()` in host code: a method of this file's class called for its
/// effect on the object. Host classes compute their counts in such methods
/// (`self._setup_attributes()` sets `self.num_mcast_ctas_a` before the
/// launch), so its body runs with `self` bound, launches in it included, and
/// the object it leaves is the caller's `self` afterwards.
fn run_method_on_self(call: &Call, env: &mut Env, handler: &mut HostCalls<'_>, visitor: &mut dyn HostVisitor) {
    let Some(method) = handler.method_of_self(call, env) else { return };
    let args: Vec<Value> = call.args.iter().map(|a| eval(a, env, handler)).collect();
    let kwargs: Vec<(String, Value)> = call.kwargs.iter().map(|(k, a)| (k.clone(), eval(a, env, handler))).collect();
    if let Some(object) = handler.run_method(method, args, kwargs, env, visitor).and_then(|mut local| local.remove("self")) {
        env.insert("self".to_string(), object);
    }
}

/// Binds a host function's parameters in `local`: defaults (evaluated in
/// `env`), then the positional arguments in order, then the keywords.
fn bind_arguments(
    params: &[crate::ast::Param],
    args: Vec<Value>,
    kwargs: Vec<(String, Value)>,
    env: &Env,
    local: &mut Env,
    handler: &mut HostCalls<'_>,
    callee: &str,
) {
    for p in params {
        let v = match &p.default {
            Some(d) => eval(d, env, handler),
            None => Value::unknown(format!("the argument `{}` of `{callee}()`", p.name)),
        };
        local.insert(p.name.clone(), v);
    }
    for (p, a) in params.iter().zip(args) {
        local.insert(p.name.clone(), a);
    }
    for (k, v) in kwargs {
        local.insert(k, v);
    }
}

/// Nested calls of host methods and constructors followed, at most (a
/// recursive method stops there).
const MAX_HOST_DEPTH: u32 = 8;

/// Calls in host code: constructors of this file's classes, pure functions.
pub struct HostCalls<'m> {
    pub module: &'m Module,
    pub depth: u32,
    /// Values host code takes under an assumed cluster shape.
    assumed: Option<HostAssumptions>,
    /// Host statements run so far (see [`MAX_HOST_STEPS`]).
    steps: usize,
    /// Whether the host code ran so far read the command line
    /// (`parser.parse_args()`: the options' defaults, see [`entry`]).
    read_command_line: bool,
    /// The calls of the file whose arguments the host code ran with, said
    /// (see [`bind_from_entry_call`]).
    configuration: Vec<String>,
    /// The classes whose methods are running, innermost last: what
    /// `super()` in the innermost refers past.
    classes: Vec<String>,
}

impl<'m> HostCalls<'m> {
    pub fn new(module: &'m Module) -> HostCalls<'m> {
        HostCalls { module, depth: 0, assumed: None, steps: 0, read_command_line: false, configuration: Vec::new(), classes: Vec::new() }
    }

    /// The method of this file's class that `self.name(...)` calls, when
    /// `self` is an object of that class and the method is not a kernel;
    /// or that `super().name(...)` calls from a method of a class whose base
    /// is a class of the file.
    fn method_of_self(&self, call: &Call, env: &Env) -> Option<&'m FunctionDef> {
        let Expr::Attr { base, attr } = &call.func else { return None };
        let module = self.module;
        let class = match base.as_ref() {
            Expr::Name(b) if b == "self" => match env.get("self") {
                Some(Value::Object(object)) => object.class.as_str(),
                _ => return None,
            },
            Expr::Call(c) if c.args.is_empty() && matches!(&c.func, Expr::Name(n) if n == "super") => {
                let current = module.class(self.classes.last()?)?;
                current.bases.iter().map(String::as_str).find(|b| module.class(b).is_some())?
            }
            _ => return None,
        };
        module.function(Some(class), attr).filter(|m| m.decorator != Some(DecoratorKind::Kernel))
    }

    /// What a method or function of the file called for its value returns
    /// (`tiled_mma = self._create_tiled_mma()`, `args = parse_arguments()`):
    /// its body runs with `self` bound for a method, and the first `return`
    /// it runs gives the value. What it does to `self` stays
    /// in the call (methods called for their effect are run by
    /// [`run_method_on_self`]).
    fn returned_value(&mut self, method: &FunctionDef, args: Vec<Value>, kwargs: Vec<(String, Value)>, env: &Env) -> Value {
        let mut first = FirstReturn::default();
        match self.run_method(method, args, kwargs, env, &mut first) {
            Some(_) if self.steps <= MAX_HOST_STEPS => first.0.unwrap_or(Value::None),
            _ => Value::unknown(format!("`{}(...)`", method.display_name())),
        }
    }

    /// Runs a method of `self` (bound in `env`) on its arguments, and
    /// returns the names it leaves (its `self` among them); `None` past
    /// [`MAX_HOST_DEPTH`] nested calls.
    fn run_method(
        &mut self,
        method: &FunctionDef,
        args: Vec<Value>,
        kwargs: Vec<(String, Value)>,
        env: &Env,
        visitor: &mut dyn HostVisitor,
    ) -> Option<Env> {
        if self.depth > MAX_HOST_DEPTH || self.steps > MAX_HOST_STEPS {
            return None;
        }
        let mut local = env.clone();
        let skipped = usize::from(method.is_method()).min(method.params.len());
        bind_arguments(&method.params[skipped..], args, kwargs, env, &mut local, self, &method.display_name());
        self.depth += 1;
        let class = method.class_name.clone();
        let entered = class.is_some();
        self.classes.extend(class);
        run_host_body(&method.body, &mut local, self, visitor);
        if entered {
            self.classes.pop();
        }
        self.depth -= 1;
        Some(local)
    }

    fn construct(&mut self, class: &str, args: Vec<Value>, kwargs: Vec<(String, Value)>, env: &Env) -> Value {
        let mut obj = Object { class: class.to_string(), attrs: BTreeMap::new() };
        let module = self.module;
        // The class attributes of its bases in the file first: its own
        // override them.
        for c in module.class_lineage(class).into_iter().rev().filter_map(|c| module.class(c)) {
            for (name, value) in &c.attrs {
                let v = eval(value, env, self);
                obj.attrs.insert(name.clone(), v);
            }
            // Classes defined in the class body (`self.WarpRole.MMA`).
            for inner in module.classes.iter().filter(|i| i.outer.as_deref() == Some(c.name.as_str())) {
                let value = class_value(inner, env, self);
                obj.attrs.insert(inner.name.clone(), value);
            }
        }
        let Some(init) = self.module.function(Some(class), "__init__") else {
            return Value::Object(std::sync::Arc::new(obj));
        };
        if self.depth > MAX_HOST_DEPTH || self.steps > MAX_HOST_STEPS {
            return Value::Object(std::sync::Arc::new(obj));
        }
        let mut local = env.clone();
        bind_arguments(&init.params[1.min(init.params.len())..], args, kwargs, env, &mut local, self, class);
        local.insert("self".to_string(), Value::Object(std::sync::Arc::new(obj)));
        self.depth += 1;
        struct Nothing;
        impl HostVisitor for Nothing {
            fn expr_stmt(&mut self, _: &Expr, _: &Env, _: &mut HostCalls<'_>) {}
        }
        // The `__init__` may be a base's: `super()` in it is past that one.
        self.classes.push(init.class_name.clone().unwrap_or_else(|| class.to_string()));
        run_host_body(&init.body, &mut local, self, &mut Nothing);
        self.classes.pop();
        self.depth -= 1;
        local.remove("self").unwrap_or(Value::unknown("self"))
    }
}

impl CallHandler for HostCalls<'_> {
    fn call(&mut self, call: &Call, func: &Value, args: Vec<Value>, kwargs: Vec<(String, Value)>, env: &Env) -> Value {
        if let Some(v) = eval::pure_call(call, &args, &kwargs) {
            return match &mut self.assumed {
                Some(assumed) => assumed.returned(v),
                None => v,
            };
        }
        if eval::constructs_named_barrier(call) {
            return eval::named_barrier(&args, &kwargs);
        }
        if let Some(method) = self.method_of_self(call, env) {
            return self.returned_value(method, args, kwargs, env);
        }
        let module = self.module;
        if let Some(parsed) = entry::parsed_arguments(call, module, env, self) {
            self.read_command_line = true;
            return parsed;
        }
        if let Expr::Name(n) = &call.func {
            if module.class(n).is_some() {
                return self.construct(n, args, kwargs, env);
            }
            match module.function(None, n) {
                // A plain function of the file (`args = parse_arguments()`)
                // gives what its body returns.
                Some(f) if f.decorator.is_none() => return self.returned_value(f, args, kwargs, env),
                Some(_) => return Value::Function { class: None, name: n.as_str().into(), bound_self: None },
                None => {}
            }
        }
        let _ = func;
        Value::unknown(format!("`{}(...)`", call.func.dotted().unwrap_or_else(|| "call".to_string())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_and_constexpr_from_compile_call() {
        let src = "\
import cutlass
import cutlass.cute as cute
HALF = 128
@cute.kernel
def k(a, N: cutlass.Constexpr):
    pass
@cute.jit
def host(a, N: cutlass.Constexpr):
    k(a, N).launch(grid=[2, 1, 1], block=[HALF, 1, 1], cluster=[2, 1, 1])
if __name__ == '__main__':
    cute.compile(host, None, 30)
";
        let m = crate::lower_text(src).unwrap();
        let k = m.kernels().next().unwrap();
        let l = resolve_launch(&m, k);
        assert_eq!(l.block, Some([128, 1, 1]));
        assert_eq!(l.cluster, Some([2, 1, 1]));
        assert_eq!(l.params.get("N"), Some(&Value::Int(30)));
    }

    #[test]
    fn methods_get_self_from_the_constructor_call() {
        let src = "\
import cutlass.cute as cute
class Op:
    def __init__(self, stages=2, threads=64):
        self.stages = stages
        self.threads = threads
    @cute.kernel
    def kernel(self, x):
        pass
    @cute.jit
    def __call__(self, x):
        self.kernel(x).launch(grid=[1, 1, 1], block=[self.threads, 1, 1])
def main():
    op = Op(stages=3)
    cute.compile(op, None)
";
        let m = crate::lower_text(src).unwrap();
        let k = m.kernels().next().unwrap();
        let l = resolve_launch(&m, k);
        assert_eq!(l.block, Some([64, 1, 1]));
        let Some(Value::Object(o)) = l.params.get("self") else { panic!("{:?}", l.params) };
        assert_eq!(o.attrs.get("stages"), Some(&Value::Int(3)));
    }

    fn self_attr(launch: &Launch, name: &str) -> Option<Value> {
        let Some(Value::Object(o)) = launch.params.get("self") else { return None };
        o.attrs.get(name).cloned()
    }

    /// A class whose sizes come from its caller, set up by a method the
    /// host calls before launching (as the CUTLASS examples are written).
    const CALLER_SIZED: &str = "\
import cutlass.cute as cute
class Gemm:
    def __init__(self, cluster_shape_mn, warps):
        self.cluster_shape_mn = cluster_shape_mn
        self.warps = warps
    def _setup_attributes(self):
        self.cluster_shape_mnk = (*self.cluster_shape_mn, 1)
        self.num_mcast = self.cluster_shape_mn[0] + self.cluster_shape_mn[1] - 1
        self.threads_per_cta = 32 * self.warps
        self.num_warps = self.threads_per_cta // 32
    @cute.kernel
    def kernel(self, x):
        pass
    @cute.jit
    def __call__(self, x):
        self._setup_attributes()
        self.kernel(x).launch(grid=[1, 1, 1], block=[self.threads_per_cta, 1, 1], cluster=self.cluster_shape_mnk)
def run(cluster_shape_mn, warps):
    cute.compile(Gemm(cluster_shape_mn, warps), None)
";

    #[test]
    fn a_method_called_on_self_by_the_host_sets_its_attributes() {
        let src = CALLER_SIZED.replace("def run(cluster_shape_mn, warps):", "def run():\n    cluster_shape_mn, warps = (2, 1), 4");
        let m = crate::lower_text(&src).unwrap();
        let l = resolve_launch(&m, m.kernels().next().unwrap());
        assert_eq!((l.block, l.cluster), (Some([128, 1, 1]), Some([2, 1, 1])));
        assert_eq!(self_attr(&l, "num_mcast"), Some(Value::Int(2)));
        assert!(l.block_assumed.is_none() && l.assumptions.is_empty(), "{l:?}");
    }

    #[test]
    fn host_values_are_those_the_main_block_runs_with() {
        // The options' defaults, passed through a function called for its
        // value, then a parameter's own default.
        let src = format!(
            "{CALLER_SIZED}import argparse
def parse_arguments():
    parser = argparse.ArgumentParser()
    parser.add_argument('--cluster_shape_mn', type=parse_ints, default=(2, 1))
    parser.add_argument('--warps', type=int, default=8)
    return parser.parse_args()
if __name__ == '__main__':
    args = parse_arguments()
    run(args.cluster_shape_mn, warps=args.warps)
"
        );
        let m = crate::lower_text(&src).unwrap();
        let l = resolve_launch(&m, m.kernels().next().unwrap());
        assert_eq!((l.block, l.cluster), (Some([256, 1, 1]), Some([2, 1, 1])));
        assert!(l.block_assumed.is_none(), "{l:?}");
        assert_eq!(
            l.assumptions,
            ["the host values are those of the file's `__main__` block, which calls `run(...)` with its command-line options at their defaults"]
        );
        // Called elsewhere in the file, with a parameter left to its default.
        let src = CALLER_SIZED.replace("def run(cluster_shape_mn, warps):", "def run(cluster_shape_mn, warps=2):")
            + "def test():\n    run((1, 1))\n";
        let m = crate::lower_text(&src).unwrap();
        let l = resolve_launch(&m, m.kernels().next().unwrap());
        assert_eq!((l.block, l.cluster), (Some([64, 1, 1]), Some([1, 1, 1])));
        assert_eq!(l.assumptions, ["the host values are those `run(...)` is called with in this file"]);
        // A function of no parameters is the same whoever calls it: nothing
        // is said of its call.
        let src = CALLER_SIZED.replace("def run(cluster_shape_mn, warps):", "def run():\n    cluster_shape_mn, warps = (1, 1), 2")
            + "if __name__ == '__main__':\n    run()\n";
        let m = crate::lower_text(&src).unwrap();
        let l = resolve_launch(&m, m.kernels().next().unwrap());
        assert_eq!((l.block, l.assumptions.len()), (Some([64, 1, 1]), 0), "{:?}", l.assumptions);
    }

    #[test]
    fn host_loops_over_known_values_run_each_iteration() {
        // The largest warp count that divides the tile, found by a loop
        // that skips with `continue` and stops at the first `return`; then
        // a sum over a tuple, and a `break`.
        let src = "\
import cutlass.cute as cute
class Gemm:
    def __init__(self, tile):
        self.tile = tile
        self.num_warps = self._pick_warps()
        total = 0
        for w in (1, 2, 3, 4):
            if w == 4:
                break
            total += w
        self.extra = total
    def _pick_warps(self):
        for num_warps in (4, 3, 2, 1):
            if self.tile % (num_warps * 32):
                continue
            return num_warps
        return 1
    @cute.kernel
    def kernel(self, x):
        pass
    @cute.jit
    def __call__(self, x):
        self.kernel(x).launch(grid=[1, 1, 1], block=[32 * (self.num_warps + self.extra), 1, 1])
def run():
    cute.compile(Gemm(96), None)
";
        let m = crate::lower_text(src).unwrap();
        let l = resolve_launch(&m, m.kernels().next().unwrap());
        // 96 threads: three warps (4 is skipped), plus 1 + 2 + 3.
        assert_eq!(l.block, Some([32 * (3 + 6), 1, 1]), "{l:?}");
    }

    #[test]
    fn host_code_too_long_to_run_leaves_its_values_unknown() {
        // 64 x 64 x 64 iterations, each calling a method that loops: the
        // evaluation stops, and the count is not a partial sum.
        let src = "\
import cutlass.cute as cute
class Gemm:
    def __init__(self):
        total = 0
        for a in range(64):
            for b in range(64):
                for c in range(64):
                    total += self.one(a)
        self.warps = total
    def one(self, x):
        for i in range(8):
            x = x + 0
        return 1
    @cute.kernel
    def kernel(self, x):
        pass
    @cute.jit
    def __call__(self, x):
        self.kernel(x).launch(grid=[1, 1, 1], block=[32 * self.warps, 1, 1])
def run():
    cute.compile(Gemm(), None)
";
        let m = crate::lower_text(src).unwrap();
        let l = resolve_launch(&m, m.kernels().next().unwrap());
        assert!(l.block_assumed.is_some(), "{l:?}");
        assert!(self_attr(&l, "warps").is_some_and(|v| v.is_unknown()), "{l:?}");
    }

    #[test]
    fn host_values_are_computed_from_the_shapes_assumed_for_an_unknown_launch() {
        let m = crate::lower_text(CALLER_SIZED).unwrap();
        let l = resolve_launch(&m, m.kernels().next().unwrap());
        assert_eq!((l.block, l.cluster), (Some([ASSUMED_THREADS_PER_CTA, 1, 1]), Some([1, 1, 1])));
        // `self.cluster_shape_mnk` is solved first, then what it was
        // computed from, `self.cluster_shape_mn`, in a second run.
        assert_eq!(self_attr(&l, "num_mcast"), Some(Value::Int(1)));
        assert_eq!(self_attr(&l, "num_warps"), Some(Value::Int(4)));
        assert!(l.block_assumed.is_some());
        let notes = l.assumptions.join("\n");
        assert!(notes.contains("`self.cluster_shape_mn` = (1, 1)") && notes.contains("`self.threads_per_cta` = 128"), "{notes}");
    }

    #[test]
    fn a_shape_that_cannot_be_solved_for_stays_unknown_in_the_host() {
        // A block computed by a call: no name to give the assumed size to.
        let src = CALLER_SIZED.replace("block=[self.threads_per_cta, 1, 1]", "block=[max(self.threads_per_cta, 64), 1, 1]");
        let m = crate::lower_text(&src).unwrap();
        let l = resolve_launch(&m, m.kernels().next().unwrap());
        // The cluster is solved all the same.
        assert_eq!(l.cluster, Some([1, 1, 1]));
        assert_eq!(self_attr(&l, "num_mcast"), Some(Value::Int(1)));
        // The block is assumed, and says so; the values computed from it are
        // not known.
        assert_eq!(l.block, Some([ASSUMED_THREADS_PER_CTA, 1, 1]));
        assert!(l.block_assumed.is_some());
        assert!(self_attr(&l, "num_warps").is_some_and(|v| v.is_unknown()));
        assert!(!l.assumptions.join("\n").contains("threads_per_cta"), "{l:?}");
    }

    #[test]
    fn a_method_called_for_its_value_returns_what_its_body_returns() {
        let src = CALLER_SIZED
            .replace("def run(cluster_shape_mn, warps):", "def run():\n    cluster_shape_mn, warps = (2, 1), 4")
            .replace("        self.num_warps = self.threads_per_cta // 32", "        self.num_warps = self._warps_of(self.threads_per_cta)")
            .replace("    @cute.kernel", "    def _warps_of(self, threads):\n        return threads // 32\n    @cute.kernel");
        assert!(src.contains("self._warps_of(self.threads_per_cta)") && src.contains("def _warps_of"));
        let m = crate::lower_text(&src).unwrap();
        let l = resolve_launch(&m, m.kernels().next().unwrap());
        assert_eq!(self_attr(&l, "num_warps"), Some(Value::Int(4)));
    }

    #[test]
    fn a_cluster_of_none_is_the_default_cluster() {
        let src = "\
import cutlass.cute as cute
@cute.kernel
def k(x):
    pass
@cute.jit
def host(x, cluster_n: cute.Constexpr):
    k(x).launch(grid=[1, 1, 1], block=[64, 1, 1], cluster=[1, cluster_n, 1] if cluster_n > 1 else None)
";
        let m = crate::lower_text(src).unwrap();
        let l = resolve_launch(&m, m.kernels().next().unwrap());
        assert_eq!(l.cluster, Some([1, 1, 1]));
        assert!(l.assumptions.iter().any(|a| a.contains("`cluster_n` = 1")), "{:?}", l.assumptions);
    }

    #[test]
    fn with_one_cta_assumed_the_hosts_mmas_span_one_cta() {
        let src = "\
import cutlass.cute as cute
from cutlass.cute.nvgpu import tcgen05
import cutlass.utils.blackwell_helpers as sm100_utils
class Gemm:
    def __init__(self, use_2cta_instrs, cluster_shape_mn):
        self.cta_group = tcgen05.CtaGroup.TWO if use_2cta_instrs else tcgen05.CtaGroup.ONE
        self.cluster_shape_mn = cluster_shape_mn
    @cute.kernel
    def kernel(self, x):
        pass
    @cute.jit
    def __call__(self, x):
        tiled_mma = sm100_utils.make_trivial_tiled_mma(x, self.cta_group)
        self.cluster_layout_vmnk = cute.tiled_divide(cute.make_layout((*self.cluster_shape_mn, 1)), (tiled_mma.thr_id.shape,))
        self.num_mcast_ctas_a = cute.size(self.cluster_layout_vmnk.shape[2])
        self.kernel(x).launch(grid=[1, 1, 1], block=[128, 1, 1], cluster=(*self.cluster_shape_mn, 1))
";
        let m = crate::lower_text(src).unwrap();
        let l = resolve_launch(&m, m.kernels().next().unwrap());
        assert_eq!(l.cluster, Some([1, 1, 1]));
        assert_eq!(self_attr(&l, "num_mcast_ctas_a"), Some(Value::Int(1)));
        assert!(l.assumptions.iter().any(|a| a == crate::layout::SINGLE_CTA_MMA), "{:?}", l.assumptions);
    }

    #[test]
    fn an_mma_atom_of_an_architecture_named_op_spans_its_cta_group() {
        // The blockscaled kernels build their MMA in a static method from an
        // operation named for its architecture, wrapped in an atom.
        let src = "\
import cutlass.cute as cute
from cutlass.cute.nvgpu import tcgen05
class Gemm:
    def __init__(self, use_2cta_instrs, cluster_shape_mn):
        self.cta_group = tcgen05.CtaGroup.TWO if use_2cta_instrs else tcgen05.CtaGroup.ONE
        self.cluster_shape_mn = cluster_shape_mn
    @staticmethod
    def make_mma(cta_group, shape_mn):
        op = tcgen05.SM103MmaMXF4Op((*shape_mn, 96), cta_group, tcgen05.OperandSource.SMEM)
        return cute.make_tiled_mma(cute.make_mma_atom(op))
    @cute.kernel
    def kernel(self, x):
        pass
    @cute.jit
    def __call__(self, x):
        tiled_mma = self.make_mma(self.cta_group, (128, 128))
        self.cluster_layout_vmnk = cute.tiled_divide(cute.make_layout((*self.cluster_shape_mn, 1)), (tiled_mma.thr_id.shape,))
        self.num_mcast_ctas_b = cute.size(self.cluster_layout_vmnk.shape[1])
        self.kernel(x).launch(grid=[1, 1, 1], block=[128, 1, 1], cluster=(*self.cluster_shape_mn, 1))
";
        let m = crate::lower_text(src).unwrap();
        let l = resolve_launch(&m, m.kernels().next().unwrap());
        assert_eq!(self_attr(&l, "num_mcast_ctas_b"), Some(Value::Int(1)));
        assert!(l.assumptions.iter().any(|a| a == crate::layout::SINGLE_CTA_MMA), "{:?}", l.assumptions);
    }

    /// `for n in (64, 128): run(n)` in the `__main__` block: the host
    /// values are those of the first iteration, what the file runs first.
    #[test]
    fn a_call_in_a_loop_of_the_main_block_runs_with_the_first_item() {
        let src = "\
import cutlass.cute as cute
@cute.kernel
def k(x):
    pass
@cute.jit
def host(x, threads: cute.Constexpr):
    k(x).launch(grid=[1, 1, 1], block=[threads, 1, 1])
def run(threads):
    cute.compile(host, None, threads)
if __name__ == '__main__':
    for n in (64, 128):
        run(n)
";
        let m = crate::lower_text(src).unwrap();
        let l = resolve_launch(&m, m.kernels().next().unwrap());
        assert_eq!(l.block, Some([64, 1, 1]), "{:?}", l.assumptions);
        let ranged = src.replace("for n in (64, 128):", "for n in range(32, 97, 32):");
        let m = crate::lower_text(&ranged).unwrap();
        assert_eq!(resolve_launch(&m, m.kernels().next().unwrap()).block, Some([32, 1, 1]));
    }

    /// A factory that returns the compiled kernel (`return
    /// cute.compile(host, ...)`), called in the branch of the `__main__`
    /// block the command line's defaults take (`--threads` defaults to
    /// None): the host values are those of that call.
    #[test]
    fn the_main_block_runs_the_branch_its_defaults_take() {
        let src = "\
import argparse
import cutlass.cute as cute
@cute.kernel
def k(x):
    pass
@cute.jit
def host(x, threads: cute.Constexpr):
    k(x).launch(grid=[1, 1, 1], block=[threads, 1, 1])
def build(threads):
    return cute.compile(host, None, threads)
if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--threads', type=int, default=None)
    args = parser.parse_args()
    if args.threads is not None:
        build(args.threads)
    else:
        build(96)
";
        let m = crate::lower_text(src).unwrap();
        let l = resolve_launch(&m, m.kernels().next().unwrap());
        assert_eq!(l.block, Some([96, 1, 1]), "{:?}", l.assumptions);
    }

    #[test]
    fn a_subclass_runs_its_bases_init_through_super() {
        let src = "\
import cutlass.cute as cute
class Base:
    threads = 64
    def __init__(self, n):
        self.n = n
class Sub(Base):
    def __init__(self, n):
        super().__init__(n * 2)
        self.extra = self.n + 1
    @cute.kernel
    def kernel(self, x):
        pass
    @cute.jit
    def __call__(self, x):
        self.kernel(x).launch(grid=[1, 1, 1], block=[self.threads, 1, 1])
def main():
    cute.compile(Sub(32), None)
";
        let m = crate::lower_text(src).unwrap();
        assert_eq!(m.class("Sub").unwrap().bases, ["Base"]);
        let l = resolve_launch(&m, m.kernels().next().unwrap());
        assert_eq!(self_attr(&l, "n"), Some(Value::Int(64)));
        assert_eq!(self_attr(&l, "extra"), Some(Value::Int(65)));
        // The base's class attribute, read by the launch.
        assert_eq!(l.block, Some([64, 1, 1]));
    }

    #[test]
    fn class_attributes_and_enum_members_are_module_values() {
        let src = "\
import enum
from enum import IntEnum, auto
BASE = 2
class NamedBarrier(IntEnum):
    EPILOGUE = BASE + 1
    TMEM = 6
class Role(enum.IntEnum):
    LOAD = enum.auto()
    MMA = auto()
    EPILOGUE = auto()
WARPS = Role.EPILOGUE + 1
";
        let env = module_env(&crate::lower_text(src).unwrap());
        let member = |class: &str, name: &str| match env.get(class) {
            Some(Value::Object(o)) => o.attrs.get(name).cloned(),
            other => panic!("{class}: {other:?}"),
        };
        assert_eq!(member("NamedBarrier", "EPILOGUE"), Some(Value::Int(3)));
        assert_eq!(member("NamedBarrier", "TMEM"), Some(Value::Int(6)));
        assert_eq!(member("Role", "LOAD"), Some(Value::Int(1)));
        assert_eq!(member("Role", "EPILOGUE"), Some(Value::Int(3)));
        assert_eq!(env.get("WARPS"), Some(&Value::Int(4)));
    }

    #[test]
    fn classes_defined_in_a_class_are_attributes_of_its_objects() {
        let src = "\
import cutlass.cute as cute
from enum import IntEnum
class Op:
    class Role(IntEnum):
        LOAD = 0
        MMA = 1
    def __init__(self):
        self.threads = 64
    @cute.kernel
    def kernel(self, x):
        pass
    @cute.jit
    def __call__(self, x):
        self.kernel(x).launch(grid=[1, 1, 1], block=[self.threads, 1, 1])
def main():
    cute.compile(Op(), None)
";
        let m = crate::lower_text(src).unwrap();
        let l = resolve_launch(&m, m.kernels().next().unwrap());
        let Some(Value::Object(o)) = l.params.get("self") else { panic!("{:?}", l.params) };
        let Some(Value::Object(role)) = o.attrs.get("Role") else { panic!("{:?}", o.attrs) };
        assert_eq!(role.attrs.get("MMA"), Some(&Value::Int(1)));
        assert!(module_env(&m).get("Role").is_none(), "a nested class is not a module name");
    }
}
