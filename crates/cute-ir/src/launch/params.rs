//! The values a host function's parameters take when it runs: the
//! arguments of the file's `cute.compile(host, ...)` call, evaluated in the
//! scope that call sits in (module constants, and the locals of the function
//! that holds it, run straight-line up to it with that function's own
//! parameters bound from the call the file runs it with, see `entry`).
//! Parameters the call leaves out take their defaults, and a method's `self`
//! is the object compiled, else one constructed from a `Class(...)` call of
//! the file. The first `cute.compile` of a host function is the one taken.
//!
//! The kernel's own parameters are bound by the `kernel(...).launch(...)`
//! call that `finder` reads, and a method kernel's `self` is the host's.

use crate::ast::{Call, Expr, FunctionDef, Stmt, StmtKind};
use crate::eval::{assign, eval, Env, Value};
use crate::module::Module;

use super::entry;
use super::host::{bind_arguments, host_assign, HostCalls, MAX_HOST_DEPTH};

/// The `cute.compile(target, ...)` calls of a file, in statement order, and
/// for each one asked about so far what it compiles and the scope it sits
/// in. Which host function a call compiles is known only by evaluating its
/// target in that scope (`cute.compile(gemm, ...)` with `gemm = Gemm(...)`
/// a local of `main()`), and every host function of the file asks of every
/// call before its own: a file of many kernels would evaluate each call's
/// scope once per host function.
pub(super) struct CompileCalls<'m> {
    calls: Vec<(u32, &'m Call)>,
    evaluated: Vec<Option<std::rc::Rc<CompileScope>>>,
}

/// What one `cute.compile` call compiles, the scope its arguments are
/// evaluated in, and what evaluating that scope said of the host values
/// (the notes of [`bind_from_entry_call`]).
struct CompileScope {
    target: Value,
    scope: Env,
    configuration: Vec<String>,
}

impl<'m> CompileCalls<'m> {
    fn of(module: &'m Module) -> CompileCalls<'m> {
        let mut calls = Vec::new();
        for s in module.own_statements() {
            let e = match &s.kind {
                // `return cute.compile(host, ...)` too: a factory of the
                // compiled kernel.
                StmtKind::Expr(e) | StmtKind::Return(Some(e)) => e,
                StmtKind::Assign { value, .. } => value,
                _ => continue,
            };
            let mut in_statement = Vec::new();
            e.calls(&mut in_statement);
            calls.extend(in_statement.into_iter().filter(|c| !c.args.is_empty() && is_compile(c)).map(|c| (s.id, c)));
        }
        let evaluated = vec![None; calls.len()];
        CompileCalls { calls, evaluated }
    }
}

/// Whether a call is `cute.compile(...)`. The name is spelled out only for
/// a call of some `compile`.
fn is_compile(c: &Call) -> bool {
    crate::layout::last_part(c) == Some("compile")
        && (c.qualname.as_deref() == Some("cutlass.cute.compile") || c.func.dotted().as_deref() == Some("cute.compile"))
}

/// Whether `target`, what a `cute.compile` call's first argument `expr`
/// evaluates to, is the host function `host`.
fn compiles(target: &Value, expr: &Expr, host: &FunctionDef) -> bool {
    match (target, expr) {
        (Value::Object(o), _) => host.class_name.as_deref() == Some(o.class.as_str()) && host.name == "__call__",
        (Value::Function { class, name, .. }, _) => &**name == host.name.as_str() && class.as_deref() == host.class_name.as_deref(),
        (_, Expr::Name(n)) => *n == host.name && host.class_name.is_none(),
        _ => false,
    }
}

/// Bind a host function's parameters from `cute.compile(host, args...)`.
pub(super) fn bind_host_params(
    module: &Module,
    host: &FunctionDef,
    globals: &Env,
    env: &mut Env,
    handler: &mut HostCalls<'_>,
) {
    let mut compile_calls = handler.compile_calls.take().unwrap_or_else(|| CompileCalls::of(handler.module));
    for index in 0..compile_calls.calls.len() {
        let (stmt, c) = compile_calls.calls[index];
        let compiled = match &compile_calls.evaluated[index] {
            Some(compiled) => compiled.clone(),
            None => {
                // Evaluate the compile call in the scope it sits in, as far as
                // module constants reach (locals of `main()` are evaluated by
                // running that function's straight-line assignments).
                let outer = std::mem::take(&mut handler.configuration);
                let scope = enclosing_env(module, stmt, globals, handler);
                let target = eval(&c.args[0], &scope, handler);
                let configuration = std::mem::replace(&mut handler.configuration, outer);
                let compiled = std::rc::Rc::new(CompileScope { target, scope, configuration });
                compile_calls.evaluated[index] = Some(compiled.clone());
                compiled
            }
        };
        if !compiles(&compiled.target, &c.args[0], host) {
            continue;
        }
        for note in &compiled.configuration {
            if !handler.configuration.contains(note) {
                handler.configuration.push(note.clone());
            }
        }
        let scope = &compiled.scope;
        let args: Vec<Value> = c.args[1..].iter().map(|a| eval(a, scope, handler)).collect();
        let mut params = host.params.iter();
        if host.is_method() {
            params.next();
            let obj = match &compiled.target {
                Value::Object(_) => compiled.target.clone(),
                Value::Function { bound_self: Some(s), .. } => (**s).clone(),
                _ => Value::unknown("the object compiled"),
            };
            env.insert("self".to_string(), obj);
        }
        for (p, a) in params.zip(args) {
            env.insert(p.name.clone(), a);
        }
        for (k, a) in &c.kwargs {
            let v = eval(a, scope, handler);
            env.insert(k.clone(), v);
        }
        // The first call that compiles it is the one taken.
        break;
    }
    handler.compile_calls = Some(compile_calls);
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
pub(super) fn bind_from_entry_call(module: &Module, f: &FunctionDef, globals: &Env, env: &mut Env, handler: &mut HostCalls<'_>) {
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
pub(super) fn run_until(stmts: &[Stmt], id: u32, env: &mut Env, handler: &mut HostCalls<'_>) -> bool {
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

pub(super) fn construct_from_file(module: &Module, class: &str, globals: &Env, handler: &mut HostCalls<'_>) -> Value {
    // Prefer an explicit `Class(...)` call somewhere in the file.
    for s in module.own_statements() {
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

#[cfg(test)]
mod tests {
    use crate::eval::Value;
    use crate::launch::resolve_launch;
    use crate::launch::tests::CALLER_SIZED;

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
}
