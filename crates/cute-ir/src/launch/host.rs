//! Host code, run as the CPU runs it at compile time: sequentially (no
//! threads). Assignments, known `if`s, loops over known tuples and ranges
//! (with `break`, `continue` and `return`), constructor calls of classes in
//! this file (their `__init__` sets `self.*`), the methods and functions of
//! this file it calls. A condition not known runs both ways, and a loop
//! over values not known, or over more than [`MAX_HOST_TRIPS`], runs its
//! body once; statements and nested calls stop at their budgets
//! ([`MAX_HOST_STEPS`], [`MAX_HOST_DEPTH`]), and what they would compute is
//! then not known. A [`HostVisitor`] sees each expression the run reaches.
//!
//! The methods the host calls on `self` run, either for their effect on
//! `self` or for the value their first `return` gives. Classes of the file
//! inherit from each other (`Module::class_lineage`, nearest first):
//! `super().__init__(...)` runs the base class's `__init__`, and the object a
//! constructor makes holds the base's class attributes under its own.
//!
//! A `@cute.struct` shared-storage class defined in a function (the host
//! method, as most examples write it) is evaluated where its class statement
//! runs, so its element counts can read `self` (`lower.rs`'s `nested_struct`,
//! `eval::struct_definition`). One defined at module level is evaluated with
//! the module's constants (`module_env`).

use std::collections::BTreeMap;

use cute_syntax::DecoratorKind;

use crate::ast::{Call, Expr, FunctionDef, Stmt, StmtKind};
use crate::eval::{self, assign, eval, CallHandler, Env, Object, Value};
use crate::module::Module;

use super::assumed_shape::HostAssumptions;
use super::entry;
use super::module_env::class_value;

pub(super) trait HostVisitor {
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

/// `targets = value` in host code; under an assumed cluster, a name with an
/// assumed value takes it when `value` does not resolve.
pub(super) fn host_assign(targets: &[crate::ast::Target], value: &Expr, env: &mut Env, handler: &mut HostCalls<'_>) {
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
pub(super) enum HostFlow {
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

pub(super) fn run_host_body(stmts: &[Stmt], env: &mut Env, handler: &mut HostCalls<'_>, visitor: &mut dyn HostVisitor) -> HostFlow {
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
pub(super) fn bind_arguments(
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
pub(super) const MAX_HOST_DEPTH: u32 = 8;

/// Calls in host code: constructors of this file's classes, pure functions.
pub(super) struct HostCalls<'m> {
    pub(super) module: &'m Module,
    pub(super) depth: u32,
    /// Values host code takes under an assumed cluster shape.
    pub(super) assumed: Option<HostAssumptions>,
    /// Host statements run so far (see [`MAX_HOST_STEPS`]).
    pub(super) steps: usize,
    /// Whether the host code ran so far read the command line
    /// (`parser.parse_args()`: the options' defaults, see [`entry`]).
    pub(super) read_command_line: bool,
    /// The calls of the file whose arguments the host code ran with, said
    /// (see [`bind_from_entry_call`](super::params::bind_from_entry_call)).
    pub(super) configuration: Vec<String>,
    /// The classes whose methods are running, innermost last: what
    /// `super()` in the innermost refers past.
    pub(super) classes: Vec<String>,
    /// The file's `cute.compile(...)` calls, each evaluated once for all
    /// the host functions that ask which of them compiles them (see
    /// [`CompileCalls`](super::params::CompileCalls)).
    pub(super) compile_calls: Option<super::params::CompileCalls<'m>>,
}

impl<'m> HostCalls<'m> {
    pub(super) fn new(module: &'m Module) -> HostCalls<'m> {
        HostCalls {
            module,
            depth: 0,
            assumed: None,
            steps: 0,
            read_command_line: false,
            configuration: Vec::new(),
            classes: Vec::new(),
            compile_calls: None,
        }
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

    pub(super) fn construct(&mut self, class: &str, args: Vec<Value>, kwargs: Vec<(String, Value)>, env: &Env) -> Value {
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
    use crate::eval::Value;
    use crate::launch::resolve_launch;
    use crate::launch::tests::{self_attr, CALLER_SIZED};

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
}
