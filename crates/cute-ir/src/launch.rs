//! How a kernel is launched: block and cluster shape, and the values of its
//! parameters (`cutlass.Constexpr` arguments in particular), read from the
//! `kernel(...).launch(grid=, block=, cluster=)` call in a `@cute.jit` host
//! function of the same file and from the `cute.compile(host, ...)` call that
//! gives the host function its arguments.
//!
//! Host code runs on the CPU at compile time, so it is evaluated here
//! sequentially (no threads): assignments, known `if`s, constructor calls of
//! classes in this file (their `__init__` sets `self.*`).

use std::collections::BTreeMap;

use cute_syntax::{DecoratorKind, TextRange};

use crate::ast::{Call, Expr, FunctionDef, Stmt, StmtKind};
use crate::eval::{self, assign, eval, Bindings, CallHandler, Env, Object, Value};
use crate::module::Module;

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
    for c in module.classes.iter().filter(|c| !c.memrange_fields.is_empty()) {
        let attrs = c
            .memrange_fields
            .iter()
            .map(|(f, t)| (f.clone(), crate::layout::dtype_named(t).unwrap_or_else(|| Value::unknown(format!("`{t}`")))))
            .collect();
        env.insert(c.name.clone(), Value::Object(std::sync::Arc::new(Object { class: crate::layout::STRUCT.to_string(), attrs })));
    }
    let mut handler = HostCalls { module, depth: 0 };
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
    found: Vec<(Option<String>, String, Launch)>,
}

impl Launches {
    pub fn of_module(module: &Module) -> Launches {
        let globals = module_env(module);
        let mut handler = HostCalls { module, depth: 0 };
        let mut found = Vec::new();
        for host in module.functions.iter().filter(|f| f.decorator == Some(DecoratorKind::Jit)) {
            let mut env = globals.clone();
            bind_host_params(module, host, &globals, &mut env, &mut handler);
            let mut visitor = LaunchFinder { module, found: Vec::new() };
            run_host_body(&host.body, &mut env, &mut handler, &mut visitor);
            found.extend(visitor.found);
        }
        Launches { globals, found }
    }

    /// The launch of `kernel`. Always returns a `Launch`; what is not found
    /// is `None`/`Unknown` and the caller states its assumption.
    pub fn of_kernel(&self, module: &Module, kernel: &FunctionDef) -> Launch {
        let globals = &self.globals;
        let mut handler = HostCalls { module, depth: 0 };
        let found = self
            .found
            .iter()
            .find(|(class, name, _)| *name == kernel.name && class.as_deref() == kernel.class_name.as_deref())
            .map(|(_, _, l)| l.clone());
        let mut launch = found.unwrap_or(Launch { block: None, cluster: None, grid: None, params: Bindings::new(), globals: Bindings::new(), site: None });
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
        }
        launch
    }
}

/// Resolve the launch of one kernel (see [`Launches`] to resolve them all).
pub fn resolve_launch(module: &Module, kernel: &FunctionDef) -> Launch {
    Launches::of_module(module).of_kernel(module, kernel)
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
            StmtKind::Expr(e) => vec![e],
            StmtKind::Assign { value, .. } => vec![value],
            _ => continue,
        };
        for e in exprs {
            let mut calls = Vec::new();
            e.calls(&mut calls);
            for c in calls {
                let is_compile = c.qualname.as_deref() == Some("cutlass.cute.compile")
                    || c.func.dotted().as_deref() == Some("cute.compile");
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
}

/// The environment at statement `id`: module constants, plus the locals of
/// the function that holds it, evaluated straight-line up to it.
fn enclosing_env(module: &Module, id: u32, globals: &Env, handler: &mut HostCalls<'_>) -> Env {
    let mut env = globals.clone();
    let holder = module.functions.iter().find(|f| contains(&f.body, id));
    let body: &[Stmt] = match holder {
        Some(f) => &f.body,
        None => &module.top_level,
    };
    run_until(body, id, &mut env, handler);
    env
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
            StmtKind::Assign { targets, value } => {
                let v = eval(value, env, handler);
                for t in targets {
                    assign(t, v.clone(), env);
                }
            }
            StmtKind::If { then, orelse, .. } => {
                if contains(then, id) {
                    return run_until(then, id, env, handler);
                }
                if contains(orelse, id) {
                    return run_until(orelse, id, env, handler);
                }
            }
            StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. }
                if contains(body, id) =>
            {
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
}

struct LaunchFinder<'m> {
    module: &'m Module,
    /// (class of the launched method, kernel name, launch)
    found: Vec<(Option<String>, String, Launch)>,
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
            if self.found.iter().any(|(c2, n2, _)| *c2 == class && *n2 == name) {
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
            let block = dims("block", handler);
            let cluster =
                if c.kwargs.iter().any(|(k, _)| k == "cluster") { dims("cluster", handler) } else { Some([1, 1, 1]) };
            let grid = dims("grid", handler);
            self.found.push((class, name, Launch { block, cluster, grid, params, globals: Bindings::new(), site: Some(c.range) }));
        }
    }
}

fn dim3(v: &Value) -> Option<[u32; 3]> {
    let as_u32 = |v: &Value| v.as_int().and_then(|i| u32::try_from(i).ok()).filter(|&i| i > 0);
    match v {
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

fn run_host_body(stmts: &[Stmt], env: &mut Env, handler: &mut HostCalls<'_>, visitor: &mut dyn HostVisitor) {
    for s in stmts {
        match &s.kind {
            StmtKind::Assign { targets, value } => {
                visitor.expr_stmt(value, env, handler);
                let v = eval(value, env, handler);
                for t in targets {
                    assign(t, v.clone(), env);
                }
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
            StmtKind::Expr(e) | StmtKind::Return(Some(e)) => visitor.expr_stmt(e, env, handler),
            StmtKind::If { cond, then, orelse } => match eval(cond, env, handler).as_bool() {
                Some(true) => run_host_body(then, env, handler, visitor),
                Some(false) => run_host_body(orelse, env, handler, visitor),
                None => {
                    run_host_body(then, env, handler, visitor);
                    run_host_body(orelse, env, handler, visitor);
                }
            },
            StmtKind::With { body, .. } | StmtKind::For { body, .. } | StmtKind::While { body, .. } => {
                run_host_body(body, env, handler, visitor)
            }
            _ => {}
        }
    }
}

/// Calls in host code: constructors of this file's classes, pure functions.
pub struct HostCalls<'m> {
    pub module: &'m Module,
    pub depth: u32,
}

impl HostCalls<'_> {
    fn construct(&mut self, class: &str, args: Vec<Value>, kwargs: Vec<(String, Value)>, env: &Env) -> Value {
        let mut obj = Object { class: class.to_string(), attrs: BTreeMap::new() };
        if let Some(c) = self.module.class(class) {
            for (name, value) in &c.attrs {
                let v = eval(value, env, self);
                obj.attrs.insert(name.clone(), v);
            }
            // Classes defined in the class body (`self.WarpRole.MMA`).
            let module = self.module;
            for inner in module.classes.iter().filter(|i| i.outer.as_deref() == Some(class)) {
                let value = class_value(inner, env, self);
                obj.attrs.insert(inner.name.clone(), value);
            }
        }
        let Some(init) = self.module.function(Some(class), "__init__") else {
            return Value::Object(std::sync::Arc::new(obj));
        };
        if self.depth > 8 {
            return Value::Object(std::sync::Arc::new(obj));
        }
        let mut local = env.clone();
        let mut formal = init.params.iter().skip(1);
        for p in init.params.iter().skip(1) {
            if let Some(d) = &p.default {
                let v = eval(d, env, self);
                local.insert(p.name.clone(), v);
            } else {
                local.insert(p.name.clone(), Value::unknown(format!("the argument `{}` of `{class}()`", p.name)));
            }
        }
        for a in args {
            if let Some(p) = formal.next() {
                local.insert(p.name.clone(), a);
            }
        }
        for (k, v) in kwargs {
            local.insert(k, v);
        }
        local.insert("self".to_string(), Value::Object(std::sync::Arc::new(obj)));
        self.depth += 1;
        struct Nothing;
        impl HostVisitor for Nothing {
            fn expr_stmt(&mut self, _: &Expr, _: &Env, _: &mut HostCalls<'_>) {}
        }
        run_host_body(&init.body, &mut local, self, &mut Nothing);
        self.depth -= 1;
        local.remove("self").unwrap_or(Value::unknown("self"))
    }
}

impl CallHandler for HostCalls<'_> {
    fn call(&mut self, call: &Call, func: &Value, args: Vec<Value>, kwargs: Vec<(String, Value)>, env: &Env) -> Value {
        if let Some(v) = eval::pure_call(call, &args, &kwargs) {
            return v;
        }
        if eval::constructs_named_barrier(call) {
            return eval::named_barrier(&args, &kwargs);
        }
        if let Expr::Name(n) = &call.func {
            if self.module.class(n).is_some() {
                return self.construct(n, args, kwargs, env);
            }
            if self.module.function(None, n).is_some() {
                return Value::Function { class: None, name: n.as_str().into(), bound_self: None };
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
