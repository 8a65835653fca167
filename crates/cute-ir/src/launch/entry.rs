//! The configuration a file runs its own kernels with.
//!
//! Example and benchmark scripts construct their kernel class inside a
//! function (`run(mnkl, tile_shape_mn, cluster_shape_mn, ...)`) that the
//! file's `if __name__ == "__main__":` block calls with its command-line
//! options (`args = parse_arguments()`, `run(args.mnkl, ...)`). The host
//! values such a kernel is compiled with are then those of that call: the
//! arguments it passes, the defaults of the options it reads, and the
//! defaults of the parameters it leaves out. Without them the counts a
//! kernel synchronizes with (`self.num_mma_warp_groups` from the tile
//! shape) are not known, and the kernel is not checked.
//!
//! The call taken is the one in the `__main__` block. A call in a branch is
//! taken only if the host values take that branch, and a call in a loop runs
//! with the loop's first item. Without one there, a call from elsewhere in
//! the file is taken. The locals of the called function start from that
//! call's arguments, evaluated in the call's own scope. `args =
//! parse_arguments()` runs the file's function for its value, and
//! `parser.parse_args()` gives each `add_argument` option its default. So the
//! tile shape that picks the number of MMA warp groups is known, and so are
//! the block and arrival counts computed from it.
//!
//! Only the defaults are taken: a value given on the command line is not
//! known here, and the diagnostics say which configuration was checked. A
//! finding in that configuration is a warning, since other options may be
//! passed.

use crate::ast::{Call, Expr, FunctionDef, Stmt, StmtKind};
use crate::eval::{eval, CallHandler, Env, Object, Value};
use crate::module::Module;

/// The class of the value `parser.parse_args()` returns.
pub(super) const NAMESPACE: &str = "argparse.Namespace";

/// Whether `cond` is the `__name__ == "__main__"` guard of a script.
fn is_main_guard(cond: &Expr) -> bool {
    let Expr::Compare { lhs, rhs, .. } = cond else { return false };
    let is = |e: &Expr, name: &str, text: &str| match e {
        Expr::Name(n) => n == name,
        Expr::Str(s) => s == text,
        _ => false,
    };
    (is(lhs, "__name__", "") && is(rhs, "", "__main__")) || (is(rhs, "__name__", "") && is(lhs, "", "__main__"))
}

/// The statements of each of the file's `if __name__ == "__main__":`
/// blocks, in order: Python runs every one (a file may have several, as one
/// that pastes scripts together does).
pub(super) fn main_blocks(module: &Module) -> impl Iterator<Item = &[Stmt]> {
    module.top_level.iter().filter_map(|s| match &s.kind {
        StmtKind::If { cond, then, .. } if is_main_guard(cond) => Some(&then[..]),
        _ => None,
    })
}

/// The call that runs module function `f` as the file runs it: one in the
/// `__main__` block first, else one anywhere in the file outside `f`
/// itself. The statement holding it comes along, for the scope its
/// arguments are evaluated in. In the `__main__` block, a call in a branch
/// the file does not take is passed over: `decided(if_statement)` is the
/// value of the `if`'s condition, or `None` when it is not known (then both
/// branches may run).
pub(super) fn entry_call<'m>(
    module: &'m Module,
    f: &FunctionDef,
    decided: &mut dyn FnMut(&'m Stmt) -> Option<bool>,
) -> Option<(&'m Stmt, &'m Call)> {
    let calls_f = |s: &'m Stmt| -> Option<(&'m Stmt, &'m Call)> {
        let e = match &s.kind {
            StmtKind::Expr(e) | StmtKind::Assign { value: e, .. } | StmtKind::Return(Some(e)) => e,
            _ => return None,
        };
        let mut calls = Vec::new();
        e.calls(&mut calls);
        calls.into_iter().find(|c| matches!(&c.func, Expr::Name(n) if *n == f.name)).map(|c| (s, c))
    };
    // The statements of a block the file can run, in order, passing over
    // the branches its `if`s do not take.
    fn runnable<'m>(stmts: &'m [Stmt], decided: &mut dyn FnMut(&'m Stmt) -> Option<bool>, out: &mut Vec<&'m Stmt>) {
        for s in stmts {
            out.push(s);
            match &s.kind {
                StmtKind::If { then, orelse, .. } => {
                    let cond = decided(s);
                    if cond != Some(false) {
                        runnable(then, decided, out);
                    }
                    if cond != Some(true) {
                        runnable(orelse, decided, out);
                    }
                }
                StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. } => runnable(body, decided, out),
                _ => {}
            }
        }
    }
    let mut in_main = Vec::new();
    for block in main_blocks(module) {
        runnable(block, decided, &mut in_main);
    }
    if let Some(found) = in_main.into_iter().find_map(calls_f) {
        return Some(found);
    }
    module
        .own_statements()
        .into_iter()
        .filter(|s| !(f.range.start <= s.range.start && s.range.end <= f.range.end))
        .find_map(calls_f)
}

/// What `parser.parse_args()` returns when no option is given: an object
/// with, for each `parser.add_argument(...)` of the file, its destination
/// bound to its default. A default the option's `type=` would convert (a
/// string given to a parser of its own) is not known.
pub(super) fn command_line_defaults(module: &Module, env: &Env, handler: &mut dyn CallHandler) -> Value {
    let mut namespace = Object { class: NAMESPACE.to_string(), attrs: Default::default() };
    for s in module.own_statements() {
        let StmtKind::Expr(e) = &s.kind else { continue };
        let mut calls = Vec::new();
        e.calls(&mut calls);
        for call in calls {
            if !matches!(&call.func, Expr::Attr { attr, .. } if attr == "add_argument") {
                continue;
            }
            let Some(dest) = destination(call) else { continue };
            namespace.attrs.insert(dest, option_default(call, env, handler));
        }
    }
    Value::Object(std::sync::Arc::new(namespace))
}

/// The attribute an option is stored in: `dest=`, else its first long
/// option (`--tile-shape` is `tile_shape`), else its first short one, else
/// the name of a positional argument.
fn destination(call: &Call) -> Option<String> {
    if let Some((_, Expr::Str(d))) = call.kwargs.iter().find(|(k, _)| k == "dest") {
        return Some(d.clone());
    }
    let names: Vec<&str> = call.args.iter().filter_map(|a| if let Expr::Str(s) = a { Some(s.as_str()) } else { None }).collect();
    let chosen = names.iter().find(|n| n.starts_with("--")).or_else(|| names.first())?;
    Some(chosen.trim_start_matches('-').replace('-', "_"))
}

fn option_default(call: &Call, env: &Env, handler: &mut dyn CallHandler) -> Value {
    let keyword = |name: &str| call.kwargs.iter().find(|(k, _)| k == name).map(|(_, v)| v);
    let action = match keyword("action") {
        Some(Expr::Str(a)) => a.as_str(),
        _ => "",
    };
    let Some(default) = keyword("default") else {
        return match action {
            "store_true" => Value::Bool(false),
            "store_false" => Value::Bool(true),
            _ => Value::None,
        };
    };
    let value = eval(default, env, handler);
    let converted_by_its_type = match keyword("type") {
        None => false,
        Some(Expr::Name(t)) => t != "str",
        Some(_) => true,
    };
    match value {
        Value::Str(_) if converted_by_its_type => {
            Value::unknown(format!("the default of the command-line option `{}`, converted by its `type=`", destination(call).unwrap_or_default()))
        }
        v => v,
    }
}

/// Whether `call` reads the command line (`parser.parse_args()`), and what
/// it returns then: the defaults, alone or (`parse_known_args`) with the
/// arguments left over.
pub(super) fn parsed_arguments(call: &Call, module: &Module, env: &Env, handler: &mut dyn CallHandler) -> Option<Value> {
    let Expr::Attr { attr, .. } = &call.func else { return None };
    match attr.as_str() {
        "parse_args" => Some(command_line_defaults(module, env, handler)),
        "parse_known_args" => Some(Value::Tuple(vec![command_line_defaults(module, env, handler), Value::Tuple(Vec::new())])),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::HostCalls;

    const SCRIPT: &str = r#"
import argparse

def parse_comma_separated_ints(s):
    return tuple(int(x) for x in s.split(","))

def parse_arguments():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tile_shape_mn", type=parse_comma_separated_ints, default=(128, 64))
    parser.add_argument("-k", "--k-tiles", type=int, default=8)
    parser.add_argument("--skip_ref_check", action="store_true")
    parser.add_argument("--no_check", action="store_false", dest="check")
    parser.add_argument("--mnkl", type=parse_comma_separated_ints, default="256,256,64,1")
    parser.add_argument("--raster", type=str, default="along_m")
    parser.add_argument("--tolerance", type=float)
    return parser.parse_args()

def run(tile_shape_mn, k_tiles):
    pass

def test():
    run((64, 64), 2)

if __name__ == "__main__":
    args = parse_arguments()
    run(args.tile_shape_mn, args.k_tiles)
"#;

    fn defaults() -> std::collections::BTreeMap<String, Value> {
        let module = crate::lower_text(SCRIPT).unwrap();
        let mut handler = HostCalls::new(&module);
        match command_line_defaults(&module, &Env::default(), &mut handler) {
            Value::Object(o) => o.attrs.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_command_line_gives_each_option_its_default() {
        let d = defaults();
        assert_eq!(d["tile_shape_mn"], Value::Tuple(vec![Value::Int(128), Value::Int(64)]));
        // The long option names the destination, dashes made underscores.
        assert_eq!(d["k_tiles"], Value::Int(8));
        assert_eq!(d["skip_ref_check"], Value::Bool(false));
        assert_eq!(d["check"], Value::Bool(true));
        assert_eq!(d["raster"], Value::Str("along_m".to_string()));
        assert_eq!(d["tolerance"], Value::None);
        // A string the option's own parser would convert is not known.
        assert!(d["mnkl"].is_unknown(), "{:?}", d["mnkl"]);
        assert!(!d.contains_key("k"));
    }

    #[test]
    fn the_call_in_the_main_block_is_the_one_the_file_runs() {
        let module = crate::lower_text(SCRIPT).unwrap();
        let run = module.function(None, "run").unwrap();
        let (_, call) = entry_call(&module, run, &mut |_| None).unwrap();
        assert!(matches!(&call.args[0], Expr::Attr { attr, .. } if attr == "tile_shape_mn"), "{call:?}");
        // Without a `__main__` block, another call of the file.
        let without_main = SCRIPT.split("if __name__").next().unwrap();
        let module = crate::lower_text(without_main).unwrap();
        let run = module.function(None, "run").unwrap();
        let (_, call) = entry_call(&module, run, &mut |_| None).unwrap();
        assert!(matches!(&call.args[0], Expr::Tuple(_)), "{call:?}");
        assert!(main_blocks(&module).next().is_none());
    }

    /// A file with two `__main__` blocks (scripts pasted together) runs
    /// both: the call of `run` in the second is the one the file runs.
    #[test]
    fn every_main_block_runs() {
        let two = format!("if __name__ == '__main__':\n    print('first')\n\n{SCRIPT}");
        let module = crate::lower_text(&two).unwrap();
        let run = module.function(None, "run").unwrap();
        let (stmt, call) = entry_call(&module, run, &mut |_| None).unwrap();
        assert!(matches!(&call.args[0], Expr::Attr { attr, .. } if attr == "tile_shape_mn"), "{call:?}");
        assert_eq!(main_blocks(&module).count(), 2);
        assert!(main_blocks(&module).flatten().any(|s| s.id == stmt.id));
    }
}
