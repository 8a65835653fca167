//! The launches a host function makes: each `kernel(...).launch(grid=,
//! block=, cluster=)` call its run reaches, with the kernel's arguments and
//! the shapes its keywords give (a `cluster=` left out, or None, is one CTA),
//! and the launches written in branches the host values do not take, read
//! with the values on the way to them. A kernel launched more than once by a
//! host function is taken at its first launch.
//!
//! A launch written in a branch that the file's configuration does not take
//! (`if const_expr(mode == ...)`) is still read, with the host's values on
//! the way to it (`launches_not_taken`), so its kernel keeps the block it is
//! written with rather than an assumed one.

use cute_syntax::DecoratorKind;

use crate::ast::{Expr, StmtKind};
use crate::eval::{eval, Bindings, Env, Value};
use crate::module::Module;

use super::host::{run_host_body, HostCalls, HostVisitor};
use super::params::{bind_host_params, run_until};
use super::{Found, Launch, LaunchResidency};

/// Runs the host function `module.functions[index]` from its `cute.compile`
/// call, and returns the launches it makes.
pub(super) fn run_host(module: &Module, index: usize, globals: &Env, handler: &mut HostCalls<'_>) -> Vec<Found> {
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
pub(super) fn launches_not_taken(module: &Module, found: &[Found], globals: &Env) -> Vec<Found> {
    let mut more: Vec<Found> = Vec::new();
    for (index, host) in module.functions.iter().enumerate() {
        if host.decorator != Some(DecoratorKind::Jit) || module.is_linked(host.range) {
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
                use_pdl: arg("use_pdl").map(|e| match e {
                    Expr::Bool(b) => if *b { "True" } else { "False" }.to_string(),
                    e => e.dotted().unwrap_or_else(|| "...".to_string()),
                }),
                residency: LaunchResidency {
                    smem: arg("smem").and_then(|e| eval(e, env, handler).as_int()).and_then(|v| u64::try_from(v).ok()),
                    min_blocks_per_mp: arg("min_blocks_per_mp")
                        .and_then(|e| eval(e, env, handler).as_int())
                        .and_then(|v| u32::try_from(v).ok())
                        .filter(|&v| v > 0),
                    cooperative: arg("cooperative").is_some_and(|e| matches!(eval(e, env, handler), Value::Bool(true))),
                    from_device: arg("grid").and_then(|e| grid_from_device(e, &self.module.functions[self.host])),
                },
            };
            self.found.push(Found { class, kernel: name, launch, host: self.host, unresolved_block, unresolved_cluster });
        }
    }
}

/// Words that name the device's SM count or its maximum of active
/// clusters, the sizes a persistent grid is computed from.
const DEVICE_SIZES: &[&str] = &["max_active_clusters", "multiprocessor_count", "sm_count", "num_sms", "num_sm", "sm_num", "max_active_ctas", "max_active_blocks"];

/// The name a grid expression is computed from that is the device's SM
/// count or maximum of active clusters, followed through the host function's
/// assignments (`grid = (max_active_clusters, 1, 1)`).
fn grid_from_device(grid: &Expr, host: &crate::ast::FunctionDef) -> Option<String> {
    // The names and attribute names an expression reads.
    fn words(e: &Expr, out: &mut Vec<String>) {
        match e {
            Expr::Name(n) => out.push(n.clone()),
            Expr::Attr { attr, .. } => out.push(attr.clone()),
            _ => {}
        }
        e.for_each_child(&mut |child| words(child, out));
    }
    let mut todo = Vec::new();
    words(grid, &mut todo);
    let mut seen = std::collections::BTreeSet::new();
    while let Some(w) = todo.pop() {
        if !seen.insert(w.clone()) || seen.len() > 256 {
            continue;
        }
        // Whole words of the name (`num_sms`, `get_max_active_clusters`),
        // not a part of one (`num_smem_bytes`).
        let lower = format!("_{}_", w.to_ascii_lowercase());
        if DEVICE_SIZES.iter().any(|d| lower.contains(&format!("_{d}_"))) {
            return Some(w);
        }
        crate::ast::for_each_binding(&host.body, &mut |t, value| {
            if let Some(v) = value.filter(|_| t.bound_names().contains(&w)) {
                words(v, &mut todo);
            }
        });
    }
    None
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

#[cfg(test)]
mod tests {
    use crate::launch::resolve_launch;

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
}
