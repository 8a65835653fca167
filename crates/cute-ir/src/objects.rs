//! Dict displays and the Python objects of a fixed table, as values.
//!
//! Packages pick a function or an enum member by a table written in place
//! (`{cute.ReductionOp.ADD: operator.add, ...}[op]`) and then test which one
//! they hold (`op is operator.add`, `op is cute.arch.fmax`). Lowering writes
//! both as calls the evaluator answers itself, whatever its handler, so every
//! pass that walks calls' arguments (slicing, lane analysis) sees what they
//! are made of:
//! - a dict display `{k: v, ...}` is a call of `dict` whose arguments are the
//!   pairs `(k, v)` ([`DICT_DISPLAY`]), a [`Value::Dict`] where it is read at
//!   once (indexed, or tested with `in`). Bound to a name it is unknown: what
//!   changes it later (`d[k] = v`, `d.update(...)`, a helper handed it) is not
//!   followed. One with `**` or a comprehension stays unknown;
//! - a name or attribute the file's imports resolve to an object of
//!   [`OBJECTS`] (`operator.add`, `cute.ReductionOp.MAX`, the builtin `max` in
//!   a file that binds no `max`) is a call with no arguments whose qualified
//!   name is the object's ([`OBJECT_PREFIX`]), evaluated to a value of class
//!   [`PY_OBJECT`].
//!
//! The objects of the table are pairwise distinct objects (checked against
//! the CuTe DSL's Python package), so two of them are the same object exactly
//! when they have the same name, and `is`, `==` and `in` between them are
//! known. An object not in the table stays unknown, and so does anything
//! compared with one: a name the table does not hold may be any of them.
//! `cute.ReductionOp` is an `IntEnum`, equal to integers: an object compared
//! with a number is not known.

use crate::ast::{Call, Expr};
use crate::eval::{Object, Value};

/// The qualified name of a dict display lowered to a call.
pub const DICT_DISPLAY: &str = "<dict display>";

/// The prefix of the qualified name of an object of [`OBJECTS`] lowered
/// to a call (`<object>operator.add`).
pub const OBJECT_PREFIX: &str = "<object>";

/// The class of the value of an object of [`OBJECTS`]; its name is the
/// attribute [`NAME`].
pub const PY_OBJECT: &str = "<python object>";

/// The attribute holding a [`PY_OBJECT`]'s qualified name: no identifier,
/// so `obj.name` reads nothing of it.
const NAME: &str = "<name>";

/// Python's builtins of the table, named without a module where the file
/// binds no such name.
pub const BUILTINS: &[&str] = &["max", "min"];

/// The objects known by name: pairwise distinct (none is another under a
/// second name), by their qualified names.
pub const OBJECTS: &[&str] = &[
    "builtins.max",
    "builtins.min",
    "operator.add",
    "operator.sub",
    "operator.mul",
    "operator.truediv",
    "operator.floordiv",
    "operator.mod",
    "operator.pow",
    "operator.and_",
    "operator.or_",
    "operator.xor",
    "operator.lshift",
    "operator.rshift",
    "operator.neg",
    "cutlass.max",
    "cutlass.min",
    "cutlass.cute.max",
    "cutlass.cute.min",
    "cutlass.cute.arch.fmax",
    "cutlass.cute.arch.fmin",
    "cutlass.cute.ReductionOp.ADD",
    "cutlass.cute.ReductionOp.MUL",
    "cutlass.cute.ReductionOp.MIN",
    "cutlass.cute.ReductionOp.MAX",
];

/// The public names of Python's `operator` module, in any version from
/// 3.9 on: an attribute of it not among them (`max`) is none.
const OPERATOR_NAMES: &[&str] = &[
    "abs", "add", "and_", "attrgetter", "call", "concat", "contains", "countOf", "delitem", "eq", "floordiv", "ge", "getitem", "gt", "iadd", "iand",
    "iconcat", "ifloordiv", "ilshift", "imatmul", "imod", "imul", "index", "indexOf", "inv", "invert", "ior", "ipow", "irshift", "is_", "is_none",
    "is_not", "is_not_none", "isub", "itemgetter", "itruediv", "ixor", "le", "length_hint", "lshift", "lt", "matmul", "methodcaller", "mod", "mul",
    "ne", "neg", "not_", "or_", "pos", "pow", "rshift", "setitem", "sub", "truediv", "truth", "xor",
];

/// `getattr(module, "name", default)` of a module the table knows, as the
/// file's imports qualify `module.name`: the object of the table it names,
/// or the default for an attribute `operator` does not have (packages probe
/// for one: `getattr(operator, "max", None)`). `None` when not known.
pub fn getattr_of_module(qualified_attr: &str, default: &Expr) -> Option<Expr> {
    if let Some(object) = object_named(qualified_attr) {
        return Some(object_expr(Expr::Name(qualified_attr.to_string()), object, cute_syntax::TextRange::default()));
    }
    let name = qualified_attr.strip_prefix("operator.")?;
    (!name.starts_with('_') && !name.contains('.') && !OPERATOR_NAMES.contains(&name)).then(|| default.clone())
}

/// Whether an attribute of this name may be an object of the table (asked
/// before its dotted name is built and qualified).
pub fn may_name_object(attr: &str) -> bool {
    OBJECTS.iter().any(|o| o.rsplit('.').next() == Some(attr))
}

/// The object of the table a qualified name names.
pub fn object_named(qualified: &str) -> Option<&'static str> {
    OBJECTS.iter().find(|o| **o == qualified).copied()
}

/// `expr`, which the file's imports resolve to the object `qualified`, as
/// the call that evaluates to it.
pub fn object_expr(expr: Expr, qualified: &str, range: cute_syntax::TextRange) -> Expr {
    Expr::Call(Box::new(Call { func: expr, qualname: Some(format!("{OBJECT_PREFIX}{qualified}")), api: None, params: &[], args: Vec::new(), kwargs: Vec::new(), range }))
}

/// The pairs of a dict display as the call that evaluates to the dict.
pub fn dict_expr(pairs: Vec<(Expr, Expr)>, range: cute_syntax::TextRange) -> Expr {
    let args = pairs.into_iter().map(|(k, v)| Expr::Tuple(vec![k, v])).collect();
    Expr::Call(Box::new(Call { func: Expr::Name("dict".to_string()), qualname: Some(DICT_DISPLAY.to_string()), api: None, params: &[], args, kwargs: Vec::new(), range }))
}

/// Whether `call` is one lowering made of a dict display or an object of
/// the table (asked of every call evaluated: one byte is read first).
pub fn is_lowered_value(call: &Call) -> bool {
    call.api.is_none() && call.qualname.as_deref().is_some_and(|q| q.as_bytes().first() == Some(&b'<') && (q == DICT_DISPLAY || q.starts_with(OBJECT_PREFIX)))
}

/// The value of an object of the table.
pub fn object(qualified: &str) -> Value {
    let attrs = [(NAME.to_string(), Value::Str(qualified.to_string()))].into_iter().collect();
    Value::Object(std::sync::Arc::new(Object { class: PY_OBJECT.to_string(), attrs }))
}

/// The qualified name of an object of the table.
pub fn name_of(v: &Value) -> Option<&str> {
    match v {
        Value::Object(o) if o.class == PY_OBJECT => match o.attrs.get(NAME) {
            Some(Value::Str(s)) => Some(s),
            _ => None,
        },
        _ => None,
    }
}

/// The value of a lowered call ([`is_lowered_value`]) from the values of
/// its arguments: a dict's pairs, in order.
pub fn lowered_value(call: &Call, args: Vec<Value>) -> Value {
    match call.qualname.as_deref().and_then(|q| q.strip_prefix(OBJECT_PREFIX)) {
        Some(name) => object(name),
        None => {
            let mut pairs = Vec::with_capacity(args.len());
            for a in args {
                match a {
                    Value::Tuple(mut kv) if kv.len() == 2 => {
                        let v = kv.pop().expect("two");
                        let k = kv.pop().expect("two");
                        pairs.push((k, v));
                    }
                    _ => return Value::unknown("a dict display"),
                }
            }
            Value::Dict(std::sync::Arc::new(pairs))
        }
    }
}

/// `dict[key]`: the value of the last pair whose key equals `key` (a later
/// key replaces an earlier equal one), when every key's equality with it is
/// known; unknown otherwise, and for a key the dict does not hold (a
/// `KeyError` where the kernel is compiled).
pub fn lookup(pairs: &[(Value, Value)], key: &Value) -> Value {
    let mut found = None;
    for (k, v) in pairs {
        match crate::eval::compare(crate::ast::CmpOp::Eq, key, k) {
            Value::Bool(true) => found = Some(v),
            Value::Bool(false) => {}
            other => return unknown_key(other),
        }
    }
    found.cloned().unwrap_or_else(|| Value::unknown("a key the dict does not hold"))
}

fn unknown_key(v: Value) -> Value {
    match v {
        Value::Unknown(w, _) => Value::unknown_from(&w),
        _ => Value::unknown("a dict lookup"),
    }
}

/// `a == b` where one of them is an object of the table: known against
/// another object of the table, a string, `None`, a tuple or a function of
/// the file; `None` (not known here) against a number, which an `IntEnum`
/// member may equal, or any other value.
pub fn equal(a: &Value, b: &Value) -> Option<bool> {
    let (obj, other) = match (name_of(a), name_of(b)) {
        (Some(x), Some(y)) => return Some(x == y),
        (Some(x), None) => (x, b),
        (None, Some(y)) => (y, a),
        (None, None) => return None,
    };
    match (obj, other) {
        (_, Value::Str(_) | Value::None | Value::Tuple(_) | Value::Dict(_) | Value::Function { .. } | Value::Partial(_) | Value::Range { .. }) => Some(false),
        _ => None,
    }
}

/// Whether a file binds `name` anywhere: a parameter, an assignment or loop
/// target, a function or class, an import. Where it binds none, a builtin
/// of [`BUILTINS`] read by that name is Python's.
pub fn binds(module: &crate::Module, name: &str) -> bool {
    module.imports.get(name).is_some()
        || module.classes.iter().any(|c| c.name == name)
        || module.functions.iter().any(|f| f.name == name || f.local_names().contains(name))
        || {
            let mut bound = false;
            crate::ast::for_each_binding(&module.top_level, &mut |t, _| bound |= t.bound_names().iter().any(|n| n == name));
            bound
        }
}

/// Lowering takes a builtin of [`BUILTINS`] read by name (not called) for
/// Python's; this gives back the name where the module binds it after all
/// (`from x import max`, a parameter `max`), which lowering sees only once
/// the whole file is read.
pub fn unbind_builtins(module: &mut crate::Module) {
    let bound: Vec<String> = BUILTINS.iter().filter(|b| binds(module, b)).map(|b| format!("{OBJECT_PREFIX}builtins.{b}")).collect();
    if bound.is_empty() {
        return;
    }
    struct Unbind<'a>(&'a [String]);
    impl Unbind<'_> {
        fn unbind(&self, e: &mut Expr) {
            if let Expr::Call(c) = e {
                if c.qualname.as_ref().is_some_and(|q| self.0.contains(q)) {
                    *e = std::mem::replace(&mut c.func, Expr::None);
                    return;
                }
            }
            e.for_each_child_mut(&mut |x| self.unbind(x));
        }
    }
    impl crate::ast::VisitMut for Unbind<'_> {
        fn expr(&mut self, e: &mut Expr) {
            self.unbind(e)
        }
    }
    let mut v = Unbind(&bound);
    for f in &mut module.functions {
        crate::ast::walk_mut(&mut f.body, &mut v);
        for p in &mut f.params {
            if let Some(d) = &mut p.default {
                v.unbind(d);
            }
        }
    }
    crate::ast::walk_mut(&mut module.top_level, &mut v);
    for c in &mut module.classes {
        c.attrs.iter_mut().for_each(|(_, e)| v.unbind(e));
    }
    for c in &mut module.closures {
        crate::ast::walk_mut(&mut c.function.body, &mut v);
    }
}
