//! Values of expressions, as far as they can be known before run time.
//!
//! The analysis evaluates the sync slice once per thread of a modelled cluster:
//! thread and CTA indices are concrete there, so role guards such as
//! `warp_idx == 0` and parities such as `phase ^ 1` or `1 - phase` evaluate to
//! numbers. What cannot be known (tensor data, runtime arguments) is `Unknown`,
//! and callers decide what that means (a nondeterministic branch, an
//! assumption, an incomplete analysis).
//!
//! Calls are delegated to a [`CallHandler`], which is where the API meaning
//! lives; this module only does Python's arithmetic, comparisons, attribute and
//! item access on the values it knows, and the calls that need no thread
//! ([`pure_call`]: numeric casts, ranges, `const_expr`, `min`/`max`/`len`).
//!
//! Some values and how they read:
//! - Counts are integers. Hosts compute counts with Python's true division
//!   (`self.num_warps_per_warp_group = 128 / 32`), floats that the package's
//!   groups and barriers take as the integers they equal: in [`binary`], a
//!   quotient that comes out whole is that integer, any other a float of no
//!   known value.
//! - A function of the file named without a call (`helper`, `self.method`) is a
//!   [`Value::Function`]; `functools.partial(f, *args, **kwargs)` of one is a
//!   [`Value::Partial`], which calls `f` with the bound arguments first and the
//!   call's keyword arguments overriding the bound ones, as Python does.
//! - An object's private `_x` that it does not hold is its `x` (the field
//!   behind a property, as `PipelineState._index` is behind `index`), so a
//!   state advanced by hand through its fields (`state._index = ...`,
//!   `state._phase ^= 1`) has those written.
//! - `types.SimpleNamespace(...)`, bundling pipelines, states and tensors for
//!   a helper, is a record of those values: the helper's calls on
//!   `params.pipe` are the kernel's own.
//! - A `@cute.struct` class is a value holding its fields' element types,
//!   element counts and order ([`struct_definition`], `layout::STRUCT`).

use std::collections::BTreeMap;

use crate::ast::{BinOp, Call, CmpOp, Expr, Target, UnOp};

/// A pointer into shared memory: the allocation (named by where it was
/// allocated, plus struct fields), an element offset, and the CTA whose
/// window it points into when it was mapped to a peer (`None`: own CTA).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SmemRef {
    /// Shared: a pointer is copied into every expression that reads it.
    pub alloc: std::sync::Arc<str>,
    pub offset: i64,
    pub cta: Option<u32>,
    /// A view of one stage of a staged buffer (`sA[None, None, stage]`):
    /// the stage, which tells accesses to different stages apart.
    pub stage: Option<i64>,
    /// The element type and shape of the tensor view, when known (what a
    /// TMA copy into it delivers).
    pub tile: Option<std::sync::Arc<crate::layout::Tile>>,
}

impl SmemRef {
    pub fn new(alloc: impl Into<std::sync::Arc<str>>) -> SmemRef {
        SmemRef { alloc: alloc.into(), offset: 0, cta: None, stage: None, tile: None }
    }

    /// Whether it points into the CTA's tensor memory (see [`TMEM`]).
    pub fn is_tmem(&self) -> bool {
        self.alloc.starts_with(TMEM)
    }
}

/// The allocation standing for a CTA's tensor memory: what
/// `TmemAllocator.retrieve_ptr()` and `cute.arch.retrieve_tmem_ptr` return,
/// and every view made of it (`cute.make_tensor(tmem_ptr, layout)`, its
/// partitions), so that a `cute.gemm` or `cute.copy` handed one is known to
/// touch tensor memory. It is no shared memory: the memory analysis gives
/// it no buffer.
pub const TMEM: &str = "<tensor memory>";

/// Memory in the global address space reached through a kernel parameter
/// (a `cute.Tensor` or `cute.Pointer`): the parameter, an element offset
/// when pointer arithmetic on it is known, and the stage of a view.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GmemRef {
    /// Shared: a tensor parameter is copied into every expression that
    /// reads it.
    pub param: std::sync::Arc<str>,
    pub offset: Option<i64>,
    pub stage: Option<i64>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Object {
    pub class: String,
    pub attrs: BTreeMap<String, Value>,
}

/// The class of objects that stand for a value known only at run time whose
/// origin the model follows (the token of a pipeline's try-wait): unlike
/// other objects, their truth and comparisons are not known.
pub const RUNTIME_VALUE: &str = "RuntimeValue";

/// A value known only at run time but known modulo `modulus` (attributes
/// `what`, `modulus`, `residue`): a block index when the grid is not known.
/// Clusters tile the grid, so `block_idx.x` is `block_idx_in_cluster.x`
/// modulo the cluster's extent, and `bidx % 2` decides which CTA of a pair
/// leads whatever the cluster's place in the grid.
pub fn known_modulo(what: &str, modulus: i64, residue: i64) -> Value {
    Value::Object(std::sync::Arc::new(Object {
        class: RUNTIME_VALUE.to_string(),
        attrs: [
            ("what".to_string(), Value::Str(what.to_string())),
            ("modulus".to_string(), Value::Int(modulus)),
            ("residue".to_string(), Value::Int(residue)),
        ]
        .into_iter()
        .collect(),
    }))
}

/// What a run-time value stands for, as an unknown (for the description of
/// the conditions computed from it).
fn runtime_unknown(v: &Value) -> Option<Value> {
    match v {
        Value::Object(o) if o.class == RUNTIME_VALUE => Some(match o.attrs.get("what") {
            Some(Value::Str(what)) => Value::unknown(what.as_str()),
            _ => Value::unknown("a value known only at run time"),
        }),
        _ => None,
    }
}

/// The class of a `cutlass.pipeline.NamedBarrier(barrier_id, num_threads)`.
pub const NAMED_BARRIER: &str = "NamedBarrier";

/// Whether a call constructs a `cutlass.pipeline.NamedBarrier`.
pub fn constructs_named_barrier(call: &Call) -> bool {
    let named = |name: &str| name == "cutlass.pipeline.NamedBarrier" || name.ends_with("pipeline.NamedBarrier");
    match &call.qualname {
        Some(q) => named(q),
        // Every pipeline call of every thread asks: the dotted name is
        // built only for a call to something called `NamedBarrier`.
        None => matches!(&call.func, Expr::Attr { attr, .. } if attr == "NamedBarrier") && call.func.dotted().is_some_and(|d| named(&d)),
    }
}

/// The object a `NamedBarrier(...)` call makes (its methods are the named
/// barrier operations on its id and thread count).
pub fn named_barrier(args: &[Value], kwargs: &[(String, Value)]) -> Value {
    let arg = |name: &str, pos: usize| {
        kwargs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()).or_else(|| args.get(pos).cloned()).unwrap_or(Value::unknown(format!("the {name} of a named barrier")))
    };
    let attrs = [("barrier_id".to_string(), arg("barrier_id", 0)), ("num_threads".to_string(), arg("num_threads", 1))];
    Value::Object(std::sync::Arc::new(Object { class: NAMED_BARRIER.to_string(), attrs: attrs.into_iter().collect() }))
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Value {
    Int(i64),
    Bool(bool),
    Str(String),
    None,
    Float,
    Tuple(Vec<Value>),
    /// `range(start, stop, step)` with known bounds.
    Range { start: i64, stop: i64, step: i64 },
    Smem(SmemRef),
    Gmem(GmemRef),
    /// Shared: objects (`self` above all) are read far more often than
    /// changed, and copied into every environment.
    Object(std::sync::Arc<Object>),
    /// A function of this file, possibly bound to `self`.
    /// Its names are shared: a method value is made per call.
    Function { class: Option<std::sync::Arc<str>>, name: std::sync::Arc<str>, bound_self: Option<Box<Value>> },
    /// `functools.partial(func, *args, **kwargs)` of a function of this
    /// file: calling it calls `func` with those arguments first.
    Partial(std::sync::Arc<Partial>),
    /// A dict display's pairs, in order (see `objects.rs`).
    Dict(std::sync::Arc<Vec<(Value, Value)>>),
    /// A value produced at run time, unknown here. The string says where it
    /// came from, for diagnostics that must explain an assumption; shared,
    /// since an unknown value flows through every expression that reads it.
    /// The [`Identity`] says which run-time value it is, where that is known.
    Unknown(std::sync::Arc<str>, Identity),
}

/// Which run-time value an unknown is, where that is known: the value one
/// thread's run bound to a name (`k_tile_count = max(...)`), plus a known
/// constant (`k_tile_count - 1`). The value flows unchanged through copies
/// (`k_tile_count_init = k_tile_count`), arguments and returns, so two
/// unknowns of the same binding differ by exactly their offsets, and
/// [`binary`] and [`compare`] decide what only that difference decides
/// (`k_tile_count_init != k_tile_count` is false before the first decrement
/// and true after it). Every other operation on an unknown, an attribute or
/// an item of it, makes a value of no identity: the identity of a binding
/// never stands for another value.
///
/// Bindings are numbered by the thread that makes them (see
/// `cute_check`'s instantiation), so two threads' values never share one;
/// the arguments of the launch are numbered apart ([`Identity::launch`]).
/// Numbers are taken as integers, without overflow: a NaN compared with
/// itself (`x != x`) is taken as equal.
///
/// It takes no part in the equality, order and hash of values: two unknowns
/// that came from the same place compare equal as they always did (the
/// lanes of a warp computing a value alike), and keys made of values do not
/// depend on how a run numbered its bindings.
#[derive(Clone, Copy, Debug, Default)]
pub struct Identity(Option<(u64, i64)>);

/// The bindings numbered as values of the launch: those of a thread
/// `u32::MAX`, which no launch has.
const LAUNCH_VALUES: u64 = (u32::MAX as u64) << 32;

impl Identity {
    /// No known identity: any unknown but a name's own value.
    pub const NONE: Identity = Identity(None);

    /// The value of binding `binding`.
    pub fn bound(binding: u64) -> Identity {
        Identity(Some((binding, 0)))
    }

    /// A value of the launch, the same in every thread (a kernel argument
    /// not known statically), numbered by the caller: no thread numbers a
    /// binding this way.
    pub fn launch(value: u32) -> Identity {
        Identity(Some((LAUNCH_VALUES | u64::from(value), 0)))
    }

    /// Which value of the launch this is (see [`Identity::launch`]), and
    /// the constant added to it.
    pub fn launch_value(self) -> Option<(u32, i64)> {
        self.0.filter(|(b, _)| b & LAUNCH_VALUES == LAUNCH_VALUES).map(|(b, o)| (b as u32, o))
    }

    pub fn is_known(self) -> bool {
        self.0.is_some()
    }

    /// This value plus `k`, if that does not overflow.
    fn plus(self, k: i64) -> Identity {
        Identity(self.0.and_then(|(b, o)| o.checked_add(k).map(|o| (b, o))))
    }

    /// `self - other` when both are offsets of one binding.
    pub fn offset_from(self, other: Identity) -> Option<i64> {
        match (self.0, other.0) {
            (Some((a, x)), Some((b, y))) if a == b => x.checked_sub(y),
            _ => None,
        }
    }
}

impl PartialEq for Identity {
    fn eq(&self, _: &Identity) -> bool {
        true
    }
}

impl Eq for Identity {}

impl std::hash::Hash for Identity {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

impl PartialOrd for Identity {
    fn partial_cmp(&self, other: &Identity) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Identity {
    fn cmp(&self, _: &Identity) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

impl Value {
    pub fn unknown(why: impl Into<std::sync::Arc<str>>) -> Value {
        Value::Unknown(why.into(), Identity::NONE)
    }

    /// An unknown that came from `why`, of no identity (a value computed
    /// from another unknown).
    pub fn unknown_from(why: &std::sync::Arc<str>) -> Value {
        Value::Unknown(why.clone(), Identity::NONE)
    }

    /// This value, given identity `identity` if it is an unknown of none:
    /// what a binding of it to a name makes it.
    pub fn with_identity(self, identity: Identity) -> Value {
        match self {
            Value::Unknown(why, Identity(None)) => Value::Unknown(why, identity),
            other => other,
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Bool(b) => Some(*b as i64),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            Value::Int(i) => Some(*i != 0),
            Value::None => Some(false),
            Value::Str(s) => Some(!s.is_empty()),
            Value::Tuple(t) => Some(!t.is_empty()),
            Value::Dict(d) => Some(!d.is_empty()),
            Value::Object(o) if o.class == RUNTIME_VALUE => None,
            Value::Smem(_) | Value::Gmem(_) | Value::Object(_) | Value::Function { .. } | Value::Partial(_) => Some(true),
            _ => None,
        }
    }

    pub fn is_unknown(&self) -> bool {
        matches!(self, Value::Unknown(..))
    }
}

/// A function with some of its arguments bound (see [`Value::Partial`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Partial {
    /// A [`Value::Function`].
    pub func: Value,
    pub args: Vec<Value>,
    pub kwargs: Vec<(String, Value)>,
}

impl Partial {
    /// `partial(func, *args, **kwargs)`: `None` unless `func` is a function
    /// of this file or a partial of one (whose arguments come first, and
    /// whose keyword arguments the new ones override, as in Python).
    pub fn of(func: &Value, args: &[Value], kwargs: &[(String, Value)]) -> Option<Value> {
        let partial = match func {
            Value::Function { .. } => Partial { func: func.clone(), args: args.to_vec(), kwargs: kwargs.to_vec() },
            Value::Partial(inner) => {
                let (args, kwargs) = inner.with(args.to_vec(), kwargs.to_vec());
                Partial { func: inner.func.clone(), args, kwargs }
            }
            _ => return None,
        };
        Some(Value::Partial(std::sync::Arc::new(partial)))
    }

    /// The arguments `func` is called with when this is called with `args`
    /// and `kwargs`.
    pub fn with(&self, args: Vec<Value>, kwargs: Vec<(String, Value)>) -> (Vec<Value>, Vec<(String, Value)>) {
        let all_args = self.args.iter().cloned().chain(args).collect();
        let mut all_kwargs: Vec<(String, Value)> =
            self.kwargs.iter().filter(|(k, _)| !kwargs.iter().any(|(given, _)| given == k)).cloned().collect();
        all_kwargs.extend(kwargs);
        (all_args, all_kwargs)
    }
}

/// Whether `call` is `functools.partial(...)`, as the file imports it.
pub fn is_partial(call: &Call) -> bool {
    crate::layout::last_part(call) == Some("partial")
        && (call.qualname.as_deref() == Some("functools.partial") || call.func.dotted().as_deref() == Some("functools.partial"))
}

/// The names bound while evaluating one function: looked up on every name
/// an expression reads, so hashed rather than ordered.
pub type Env = rustc_hash::FxHashMap<String, Value>;

/// Names bound at a launch or in a module, ordered so that they compare and
/// hash as part of a key.
pub type Bindings = BTreeMap<String, Value>;

/// Gives calls their meaning.
pub trait CallHandler {
    fn call(&mut self, call: &Call, func: &Value, args: Vec<Value>, kwargs: Vec<(String, Value)>, env: &Env) -> Value;

    /// The value of a name no environment binds (`cute` in `cute.arch.x`):
    /// unknown. A handler that evaluates the same code many times may keep
    /// it rather than describe it anew each time; `name` is the module's own
    /// `String`, so that its address can key what is kept.
    #[allow(clippy::ptr_arg)]
    fn unbound(&mut self, name: &String) -> Value {
        Value::unknown(format!("`{name}`"))
    }

    /// `obj.attr` where `obj` holds no such attribute: the method of that
    /// name bound to `obj`, when the handler knows the object's class
    /// (`partial(self.load, ...)`). Unknown otherwise.
    fn method(&mut self, _obj: &Value, _attr: &str) -> Option<Value> {
        None
    }
}

pub fn eval(expr: &Expr, env: &Env, handler: &mut dyn CallHandler) -> Value {
    match expr {
        Expr::Int(i) => Value::Int(*i),
        Expr::Bool(b) => Value::Bool(*b),
        Expr::Str(s) => Value::Str(s.clone()),
        Expr::None => Value::None,
        Expr::Float => Value::Float,
        Expr::Name(n) => env.get(n).cloned().unwrap_or_else(|| handler.unbound(n)),
        Expr::Attr { base, attr } => {
            let b = eval(base, env, handler);
            if attr == "WARP_SIZE" && b.is_unknown() {
                return Value::Int(32); // cute.arch.WARP_SIZE
            }
            // Module attributes (`cutlass.Float32`) are unknown values here;
            // the attribute's name is tested before the dotted name is built,
            // as every thread evaluates them.
            if b.is_unknown() {
                if crate::layout::is_dtype_name(attr) {
                    if let Some(t) = expr.dotted().and_then(|d| crate::layout::dtype_named(&d)) {
                        return t;
                    }
                }
                // `tcgen05.CtaGroup.ONE` / `.TWO`: the CTAs one MMA spans.
                let group = match attr.as_str() {
                    "ONE" => Some(1),
                    "TWO" => Some(2),
                    _ => None,
                };
                let class = match base.as_ref() {
                    Expr::Attr { attr, base } if base.is_dotted() => Some(attr),
                    Expr::Name(name) => Some(name),
                    _ => None,
                };
                if let (Some(n), Some("CtaGroup")) = (group, class.map(String::as_str)) {
                    return crate::layout::cta_group(n);
                }
            }
            if let Value::Object(o) = &b {
                if !o.attrs.contains_key(attr.as_str()) {
                    if let Some(method) = handler.method(&b, attr) {
                        return method;
                    }
                }
            }
            attribute(&b, attr, expr)
        }
        // An object of `objects::OBJECTS`: a value whatever the handler. A
        // dict display is one only where it is read at once (indexed, or
        // tested for a key): bound to a name, it may be changed in ways not
        // followed (`d[k] = v`, `d.update(...)`).
        Expr::Call(call) if crate::objects::is_lowered_value(call) => {
            match crate::objects::lowered_value(call, call.args.iter().map(|a| eval(a, env, handler)).collect()) {
                Value::Dict(_) => Value::unknown("a dict, which the model does not follow once it is bound"),
                v => v,
            }
        }
        Expr::Call(call) => {
            let func = match &call.func {
                // A CuTe DSL function: its meaning comes from the API table,
                // not from evaluating `cute.arch.name`.
                _ if call.api.is_some() => Value::None,
                // `obj.method(...)`: bind self when obj is a known object.
                Expr::Attr { base, attr } => {
                    let b = eval(base, env, handler);
                    match &b {
                        Value::Object(o) => Value::Function {
                            class: Some(o.class.as_str().into()),
                            name: attr.as_str().into(),
                            bound_self: Some(Box::new(b.clone())),
                        },
                        _ => attribute(&b, attr, &call.func),
                    }
                }
                f => eval(f, env, handler),
            };
            let args = call.args.iter().map(|a| eval(a, env, handler)).collect();
            let kwargs = call.kwargs.iter().map(|(k, a)| (k.clone(), eval(a, env, handler))).collect();
            handler.call(call, &func, args, kwargs, env)
        }
        Expr::Binary { op, lhs, rhs } => {
            let l = eval(lhs, env, handler);
            let r = eval(rhs, env, handler);
            binary(*op, &l, &r)
        }
        Expr::Unary { op, operand } => {
            let v = eval(operand, env, handler);
            match (op, &v) {
                (UnOp::Neg, Value::Int(i)) => Value::Int(i.wrapping_neg()),
                (UnOp::Plus, Value::Int(i)) => Value::Int(*i),
                (UnOp::Invert, Value::Int(i)) => Value::Int(!i),
                (UnOp::Not, v) => v.as_bool().map(|b| Value::Bool(!b)).unwrap_or_else(|| runtime_unknown(v).unwrap_or_else(|| v.clone())),
                _ => unknown_from(&v),
            }
        }
        Expr::Compare { op, lhs, rhs } => {
            let l = eval(lhs, env, handler);
            let r = match op {
                CmpOp::In | CmpOp::NotIn => read_at_once(rhs, env, handler),
                _ => eval(rhs, env, handler),
            };
            compare(*op, &l, &r)
        }
        Expr::BoolOp { and, lhs, rhs } => {
            let l = eval(lhs, env, handler);
            match (l.as_bool(), and) {
                (Some(false), true) | (Some(true), false) => l,
                (Some(_), _) => eval(rhs, env, handler),
                (None, _) => {
                    // `unknown and False` is still False.
                    let r = eval(rhs, env, handler);
                    match (r.as_bool(), and) {
                        (Some(false), true) => Value::Bool(false),
                        (Some(true), false) => Value::Bool(true),
                        _ => runtime_unknown(&l).unwrap_or(l),
                    }
                }
            }
        }
        Expr::IfExp { cond, then, orelse } => match eval(cond, env, handler).as_bool() {
            Some(true) => eval(then, env, handler),
            Some(false) => eval(orelse, env, handler),
            None => {
                let a = eval(then, env, handler);
                let b = eval(orelse, env, handler);
                if a == b {
                    a
                } else {
                    Value::unknown("a conditional expression on a runtime value")
                }
            }
        },
        Expr::Subscript { base, index } => {
            let b = read_at_once(base, env, handler);
            let i = eval(index, env, handler);
            match (&b, &i) {
                // An element of a global tensor (`counts[0]`): data, named
                // by the tensor it is read from in what depends on it.
                (Value::Gmem(_), Value::Int(_)) => match base.dotted() {
                    Some(tensor) => Value::unknown(format!("a value read from `{tensor}`")),
                    None => Value::unknown("a value read from global memory"),
                },
                _ => subscript(&b, &i),
            }
        }
        Expr::Tuple(items) => {
            let mut out = Vec::with_capacity(items.len());
            for e in items {
                // `(a, *rest)`: the items of `rest`, when it is known.
                if let Expr::Unary { op: UnOp::Splat, operand } = e {
                    let v = eval(operand, env, handler);
                    match v.iteration() {
                        Some(vs) => out.extend(vs),
                        None => {
                            return Value::unknown(format!("the length of `{}`", operand.dotted().unwrap_or_else(|| "*...".to_string())))
                        }
                    }
                } else {
                    out.push(eval(e, env, handler));
                }
            }
            Value::Tuple(out)
        }
        Expr::Unknown(text) => Value::unknown(format!("`{}`", short(text))),
    }
}

/// The value of an expression read at once where it is written: a dict
/// display is its dict there (see [`eval`]).
fn read_at_once(expr: &Expr, env: &Env, handler: &mut dyn CallHandler) -> Value {
    match expr {
        Expr::Call(call) if crate::objects::is_lowered_value(call) => {
            crate::objects::lowered_value(call, call.args.iter().map(|a| eval(a, env, handler)).collect())
        }
        _ => eval(expr, env, handler),
    }
}

fn short(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    if line.len() > 40 {
        format!("{}...", &line[..line.char_indices().take_while(|(i, _)| *i < 40).count()])
    } else {
        line.to_string()
    }
}

fn unknown_from(v: &Value) -> Value {
    match v {
        Value::Unknown(w, _) => Value::unknown_from(w),
        _ => runtime_unknown(v).unwrap_or_else(|| Value::unknown("an unsupported operation")),
    }
}

/// The attribute of `o` that `attr` names: itself, or for a private `_x`
/// the object does not hold, its `x` (the field behind a property, as
/// `PipelineState._index` is behind `index`).
fn own_attribute<'o>(o: &'o Object, attr: &'o str) -> Option<&'o str> {
    if o.attrs.contains_key(attr) {
        return Some(attr);
    }
    attr.strip_prefix('_').filter(|public| !public.starts_with('_') && o.attrs.contains_key(*public))
}

fn attribute(base: &Value, attr: &str, expr: &Expr) -> Value {
    match base {
        Value::Object(o) => own_attribute(o, attr).and_then(|a| o.attrs.get(a)).cloned().unwrap_or_else(|| {
            Value::unknown(format!("`{}`", expr.dotted().unwrap_or_else(|| attr.to_string())))
        }),
        // Struct fields of shared storage are allocations of their own;
        // `.data_ptr()`/`.iterator` on a pointer is the same pointer.
        Value::Smem(s) => match attr {
            "iterator" | "ptr" | "llvm_ptr" => base.clone(),
            _ => Value::Smem(SmemRef { alloc: format!("{}.{attr}", s.alloc).into(), tile: None, ..s.clone() }),
        },
        Value::Gmem(_) => match attr {
            "iterator" | "ptr" | "llvm_ptr" => base.clone(),
            _ => Value::unknown(format!("`{}`", expr.dotted().unwrap_or_else(|| attr.to_string()))),
        },
        Value::Unknown(w, _) => Value::unknown_from(w),
        _ => Value::unknown(format!("`.{attr}`")),
    }
}

fn subscript(base: &Value, index: &Value) -> Value {
    match (base, index) {
        (Value::Tuple(items), Value::Int(i)) => {
            let idx = if *i < 0 { items.len() as i64 + i } else { *i };
            items.get(idx as usize).cloned().unwrap_or_else(|| Value::unknown("an index out of range"))
        }
        (Value::Smem(s), Value::Int(i)) => Value::Smem(SmemRef { offset: s.offset + i, tile: None, ..s.clone() }),
        // A view of one stage of a staged buffer (`sA[None, None, stage]`);
        // a view of that view (`tCsA_p[None, None, k_block]`) stays in the
        // stage: its modes no longer include the stage's.
        (Value::Smem(s), Value::Tuple(_)) if stage_of_view(index).is_some() => {
            let tile = s.tile.as_ref().and_then(|t| t.slice(index)).map(std::sync::Arc::new);
            Value::Smem(SmemRef { stage: s.stage.or(stage_of_view(index)), tile, ..s.clone() })
        }
        (Value::Smem(s), _) => {
            let tile = s.tile.as_ref().and_then(|t| t.slice(index)).map(std::sync::Arc::new);
            Value::Smem(SmemRef { alloc: format!("{}[?]", s.alloc).into(), tile, ..s.clone() })
        }
        (Value::Gmem(g), Value::Tuple(_)) if stage_of_view(index).is_some() => {
            Value::Gmem(GmemRef { stage: g.stage.or(stage_of_view(index)), ..g.clone() })
        }
        (Value::Dict(pairs), _) => crate::objects::lookup(pairs, index),
        (Value::Unknown(w, _), _) => Value::unknown_from(w),
        _ => unknown_from(index),
    }
}

/// The stage a slicing index selects: `(None, None, 2)` is stage 2 of a
/// staged buffer (CuTe puts the stage mode last). `None` when the index
/// slices nothing or its last component is not a known integer.
pub fn stage_of_view(index: &Value) -> Option<i64> {
    let Value::Tuple(items) = index else { return None };
    if !items.iter().any(|v| matches!(v, Value::None)) {
        return None;
    }
    items.last().and_then(|v| match v {
        Value::Int(i) => Some(*i),
        _ => None,
    })
}

/// The items of `range(start, stop, step)` (none for a zero step).
fn range_items(start: i64, stop: i64, step: i64) -> impl Iterator<Item = i64> {
    let count = match step {
        0 => 0,
        s if s > 0 => (stop - start).max(0).div_euclid(s) + i64::from((stop - start).max(0) % s != 0),
        s => (start - stop).max(0).div_euclid(-s) + i64::from((start - stop).max(0) % -s != 0),
    };
    (0..count).map(move |i| start + i * step)
}

/// The longest tuple a repetition (`n * (a, b)`) builds.
const MAX_REPEATED_ITEMS: i64 = 4096;

pub fn binary(op: BinOp, l: &Value, r: &Value) -> Value {
    use Value::*;
    if let Some(offset) = offset_arithmetic(op, l, r) {
        return offset;
    }
    if let Some(unknown) = runtime_unknown(l).or_else(|| runtime_unknown(r)) {
        // A value known modulo m, modulo a divisor of m.
        let modulo = |v: &Value, attr: &str| match v {
            Object(o) => o.attrs.get(attr).and_then(Value::as_int),
            _ => Option::None,
        };
        return match (op, modulo(l, "modulus"), modulo(l, "residue"), r.as_int()) {
            (BinOp::Mod, Some(m), Some(residue), Some(d)) if d > 0 && m % d == 0 => Int(residue % d),
            _ => unknown,
        };
    }
    match (l, r) {
        (Gmem(g), Int(i)) | (Int(i), Gmem(g)) if op == BinOp::Add => {
            Gmem(GmemRef { offset: g.offset.map(|o| o + i), ..g.clone() })
        }
        (Gmem(g), _) | (_, Gmem(g)) if matches!(op, BinOp::Add | BinOp::Sub) => Gmem(GmemRef { offset: Option::None, ..g.clone() }),
        // Pointer arithmetic leaves the tensor view: its shape is not known.
        (Smem(s), Int(i)) if op == BinOp::Add => Smem(SmemRef { offset: s.offset + i, tile: Option::None, ..s.clone() }),
        (Int(i), Smem(s)) if op == BinOp::Add => Smem(SmemRef { offset: s.offset + i, tile: Option::None, ..s.clone() }),
        (Smem(s), Int(i)) if op == BinOp::Sub => Smem(SmemRef { offset: s.offset - i, tile: Option::None, ..s.clone() }),
        (Smem(s), _) if matches!(op, BinOp::Add | BinOp::Sub) => {
            Smem(SmemRef { alloc: format!("{}+?", s.alloc).into(), tile: Option::None, ..s.clone() })
        }
        _ => match (l.as_int(), r.as_int()) {
            (Some(a), Some(b)) if !matches!(l, Float) && !matches!(r, Float) => {
                let v = match op {
                    BinOp::Add => a.checked_add(b),
                    BinOp::Sub => a.checked_sub(b),
                    BinOp::Mul => a.checked_mul(b),
                    BinOp::FloorDiv => (b != 0).then(|| a.div_euclid(b)),
                    BinOp::Mod => (b != 0).then(|| a.rem_euclid(b)),
                    BinOp::BitXor => Some(a ^ b),
                    BinOp::BitAnd => Some(a & b),
                    BinOp::BitOr => Some(a | b),
                    BinOp::Shl => (0..63).contains(&b).then(|| a << b),
                    BinOp::Shr => (0..63).contains(&b).then(|| a >> b),
                    BinOp::Pow => u32::try_from(b).ok().and_then(|b| a.checked_pow(b)),
                    // A true division that comes out whole (`128 / 32`) is
                    // the integer it equals: hosts compute counts with `/`
                    // (`self.num_warps_per_warp_group = 128 / 32`), floats
                    // equal to integers, which the package's groups and
                    // barriers take as those integers. Any other quotient is
                    // a float of no known value.
                    BinOp::Div => (b != 0 && a % b == 0).then(|| a / b),
                };
                match v {
                    Some(v) if matches!((l, r), (Bool(_), Bool(_))) && matches!(op, BinOp::BitXor | BinOp::BitAnd | BinOp::BitOr) => Bool(v != 0),
                    Some(v) => Int(v),
                    Option::None if op == BinOp::Div => Float,
                    Option::None => Value::unknown("an arithmetic overflow or division by zero"),
                }
            }
            _ => match (l, r) {
                // Any integer modulo 1 (`bidx % cute.size(mma.thr_id)` over
                // MMAs of one CTA: every CTA leads its MMA).
                (Unknown(..), Int(1)) if op == BinOp::Mod => Int(0),
                (Unknown(w, _), _) | (_, Unknown(w, _)) => Value::unknown_from(w),
                (Float, _) | (_, Float) => Float,
                (Tuple(a), Tuple(b)) if op == BinOp::Add => Tuple(a.iter().chain(b).cloned().collect()),
                // `n * (a, b)`: the tuple repeated (warp lists per CTA).
                (Tuple(t), Int(n)) | (Int(n), Tuple(t)) if op == BinOp::Mul && (0..=MAX_REPEATED_ITEMS / t.len().max(1) as i64).contains(n) => {
                    Tuple(t.iter().cycle().take(t.len() * *n as usize).cloned().collect())
                }
                _ => Value::unknown("an unsupported operation"),
            },
        },
    }
}

/// Arithmetic that keeps an unknown's identity: a constant added to or
/// taken from it, or the difference of two offsets of one binding.
fn offset_arithmetic(op: BinOp, l: &Value, r: &Value) -> Option<Value> {
    use Value::*;
    match (op, l, r) {
        (BinOp::Add, Unknown(w, id), Int(k)) | (BinOp::Add, Int(k), Unknown(w, id)) if id.is_known() => Some(Unknown(w.clone(), id.plus(*k))),
        (BinOp::Sub, Unknown(w, id), Int(k)) if id.is_known() => Some(Unknown(w.clone(), k.checked_neg().map_or(Identity::NONE, |k| id.plus(k)))),
        (BinOp::Sub, Unknown(_, a), Unknown(_, b)) => a.offset_from(*b).map(Int),
        _ => Option::None,
    }
}

pub fn compare(op: CmpOp, l: &Value, r: &Value) -> Value {
    if let (Value::Unknown(_, a), Value::Unknown(_, b)) = (l, r) {
        if let Some(d) = a.offset_from(*b) {
            let holds = match op {
                CmpOp::Eq => Some(d == 0),
                CmpOp::Ne => Some(d != 0),
                CmpOp::Lt => Some(d < 0),
                CmpOp::Le => Some(d <= 0),
                CmpOp::Gt => Some(d > 0),
                CmpOp::Ge => Some(d >= 0),
                CmpOp::Is | CmpOp::IsNot | CmpOp::In | CmpOp::NotIn => None,
            };
            if let Some(holds) = holds {
                return Value::Bool(holds);
            }
        }
    }
    if let (Some(a), Some(b)) = (l.as_int(), r.as_int()) {
        let v = match op {
            CmpOp::Eq | CmpOp::Is => a == b,
            CmpOp::Ne | CmpOp::IsNot => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
            CmpOp::In | CmpOp::NotIn => return Value::unknown("a membership test"),
        };
        return Value::Bool(v);
    }
    let runtime = |v: &Value| matches!(v, Value::Object(o) if o.class == RUNTIME_VALUE);
    match (op, l, r) {
        (_, Value::Unknown(w, _), _) | (_, _, Value::Unknown(w, _)) => Value::unknown_from(w),
        _ if runtime(l) || runtime(r) => runtime_unknown(l).or_else(|| runtime_unknown(r)).unwrap_or(Value::None),
        // A membership test is known when the test of each item is: found
        // once one is equal, absent when none may be.
        (CmpOp::In | CmpOp::NotIn, a, Value::Tuple(_) | Value::Dict(_)) => {
            let keys: Vec<&Value> = match r {
                Value::Tuple(items) => items.iter().collect(),
                Value::Dict(pairs) => pairs.iter().map(|(k, _)| k).collect(),
                _ => unreachable!("matched"),
            };
            let mut not_known = None;
            for k in keys {
                match compare(CmpOp::Eq, a, k) {
                    Value::Bool(true) => return Value::Bool(op == CmpOp::In),
                    Value::Bool(false) => {}
                    unknown @ Value::Unknown(..) => not_known = not_known.or(Some(unknown)),
                    _ => not_known = not_known.or(Some(Value::unknown("a membership test"))),
                }
            }
            not_known.unwrap_or(Value::Bool(op == CmpOp::NotIn))
        }
        (CmpOp::In | CmpOp::NotIn, Value::Str(a), Value::Str(b)) => Value::Bool(b.contains(a.as_str()) == (op == CmpOp::In)),
        // A float of no known value equals nothing known.
        (_, Value::Float, _) | (_, _, Value::Float) => Value::unknown("a comparison of floats"),
        (CmpOp::Eq | CmpOp::Ne | CmpOp::Is | CmpOp::IsNot, a, b) if crate::objects::name_of(a).is_some() || crate::objects::name_of(b).is_some() => {
            match crate::objects::equal(a, b) {
                Some(same) => Value::Bool(same == matches!(op, CmpOp::Eq | CmpOp::Is)),
                None => Value::unknown("a comparison with a Python object"),
            }
        }
        // Dicts are equal whatever the order of their pairs.
        (CmpOp::Eq | CmpOp::Ne, Value::Dict(_), _) | (CmpOp::Eq | CmpOp::Ne, _, Value::Dict(_)) => Value::unknown("a comparison of dicts"),
        (CmpOp::Eq | CmpOp::Is, a, b) => Value::Bool(a == b),
        (CmpOp::Ne | CmpOp::IsNot, a, b) => Value::Bool(a != b),
        _ => Value::unknown("a comparison of non-numbers"),
    }
}

/// Bind an assignment target.
pub fn assign(target: &Target, value: Value, env: &mut Env) {
    match target {
        Target::Name(n) => match env.get_mut(n) {
            Some(slot) => *slot = value,
            None => {
                env.insert(n.clone(), value);
            }
        },
        Target::Tuple(items) => match value {
            Value::Tuple(vals) if vals.len() == items.len() => {
                for (t, v) in items.iter().zip(vals) {
                    assign(t, v, env);
                }
            }
            other => {
                let why = match &other {
                    Value::Unknown(w, _) => w.clone(),
                    _ => "an unpacking of a non-tuple".into(),
                };
                for t in items {
                    assign(t, Value::unknown_from(&why), env);
                }
            }
        },
        Target::Star(t) => assign(t, Value::unknown("a starred assignment"), env),
        Target::Attr { base, attr } => {
            // `self.x = v`: update the object held in the base name.
            if let Expr::Name(b) = base {
                if let Some(Value::Object(o)) = env.get_mut(b) {
                    let name = own_attribute(o, attr).unwrap_or(attr).to_string();
                    std::sync::Arc::make_mut(o).attrs.insert(name, value);
                }
            }
        }
        // Stores into memory are not tracked as values.
        Target::Subscript { .. } => {}
    }
}

/// Calls whose meaning needs no thread: numeric casts, ranges, `const_expr`,
/// `min`/`max`/`len`. Returns `None` for anything else.
/// A shared-storage struct from its fields: per field, its name and the
/// pair (element type as written, element count evaluated, or `None`). A
/// struct defined in a function is lowered to a call giving these (see
/// `lower.rs`, `nested_struct`); one defined at module level is made with
/// the module's constants (`launch::module_env`).
pub fn struct_definition(fields: &[(String, Value)]) -> Value {
    let mut attrs = BTreeMap::new();
    attrs.insert(crate::layout::STRUCT_FIELDS.to_string(), Value::Tuple(fields.iter().map(|(name, _)| Value::Str(name.clone())).collect()));
    for (name, field) in fields {
        let Value::Tuple(parts) = field else { continue };
        let dtype = match parts.first() {
            Some(Value::Str(t)) => crate::layout::dtype_named(t).unwrap_or_else(|| Value::unknown(format!("`{t}`"))),
            _ => Value::unknown("a field's element type"),
        };
        attrs.insert(name.clone(), dtype);
        if let Some(len) = parts.get(1).filter(|l| !matches!(l, Value::None)) {
            attrs.insert(crate::layout::struct_len_key(name), len.clone());
        }
    }
    Value::Object(std::sync::Arc::new(Object { class: crate::layout::STRUCT.to_string(), attrs }))
}

/// `isinstance(x, T)` where what `x` is decides it: a layout known here
/// (`cute.make_layout(...)`) is a `cute.Layout` and no `cute.ComposedLayout`
/// (a swizzled layout stays unknown); a tuple, an integer and a bool are
/// what Python says they are. `None` for anything else.
fn isinstance(call: &Call, args: &[Value]) -> Option<Value> {
    if !matches!(&call.func, Expr::Name(n) if n == "isinstance") {
        return None;
    }
    let ([value, _], [_, ty]) = (args, call.args.as_slice()) else { return None };
    let ty = ty.dotted()?;
    let ty = ty.rsplit('.').next().unwrap_or(&ty);
    let is = match (value, ty) {
        (Value::Object(o), "Layout") if o.class == crate::layout::LAYOUT => true,
        (Value::Object(o), "ComposedLayout") if o.class == crate::layout::LAYOUT => false,
        (Value::Tuple(_), "tuple") | (Value::Int(_) | Value::Bool(_), "int") | (Value::Bool(_), "bool") => true,
        (Value::Tuple(_), "int" | "bool") | (Value::Int(_), "tuple" | "bool") | (Value::Bool(_), "tuple") => false,
        _ => return None,
    };
    Some(Value::Bool(is))
}

pub fn pure_call(call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> Option<Value> {
    use crate::api::Api;
    if call.qualname.as_deref() == Some(crate::layout::STRUCT_DEFINITION) {
        return Some(struct_definition(kwargs));
    }
    match Api::of_call(call) {
        Some(Api::IntCast) | Some(Api::ConstExpr) => {
            return Some(args.first().cloned().unwrap_or(Value::Int(0)));
        }
        Some(Api::Range) => {
            let ints: Vec<Option<i64>> = args.iter().map(Value::as_int).collect();
            let step_kw = kwargs.iter().find(|(k, _)| k == "step").and_then(|(_, v)| v.as_int());
            let r = match ints.as_slice() {
                [Some(stop)] => Some((0, *stop, 1)),
                [Some(a), Some(b)] => Some((*a, *b, step_kw.unwrap_or(1))),
                [Some(a), Some(b), Some(c)] => Some((*a, *b, *c)),
                _ => None,
            };
            return Some(match r {
                Some((start, stop, step)) if step != 0 => Value::Range { start, stop, step },
                _ => Value::unknown(format!("the trip count of `{}`", call.func.dotted().unwrap_or_default())),
            });
        }
        _ => {}
    }
    if let Some(v) = crate::layout::call(call, args, kwargs) {
        return Some(v);
    }
    if let Some(v) = crate::layout::tcgen05_tiled_mma(call, args, kwargs).or_else(|| crate::layout::warpgroup_tiled_mma(call, args, kwargs)) {
        return Some(v);
    }
    // `types.SimpleNamespace(a=..., b=...)`: a record of the values given,
    // the way kernels bundle pipelines, states and tensors for a helper.
    if call.qualname.as_deref() == Some("types.SimpleNamespace") && args.is_empty() {
        let attrs = kwargs.iter().cloned().collect();
        return Some(Value::Object(std::sync::Arc::new(Object { class: "SimpleNamespace".to_string(), attrs })));
    }
    if let Some(v) = isinstance(call, args) {
        return Some(v);
    }
    // `typing.cast(T, v)` is `v`: a note to the type checker.
    if call.qualname.as_deref() == Some("typing.cast") && args.len() == 2 {
        return Some(args[1].clone());
    }
    // The functions evaluated at compile time, by the name they are called
    // by: Python's builtins and `math`, `cutlass.min` / `cutlass.max` (`min`
    // / `max` on the values known when the kernel is compiled), and
    // `cute.arch.log2_of_pow2_int`.
    // Spelled out only for calls that may be one of these.
    if !matches!(
        crate::layout::last_part(call),
        Some("min" | "max" | "len" | "sum" | "tuple" | "list" | "prod" | "log2" | "log2_of_pow2_int")
    ) {
        return None;
    }
    let qualified = call.qualname.clone().or_else(|| call.func.dotted()).unwrap_or_default();
    let name = match qualified.as_str() {
        "min" | "max" | "len" | "sum" | "tuple" | "list" => qualified.as_str(),
        q @ ("cutlass.min" | "cutlass.max" | "math.prod" | "math.log2") => q.rsplit('.').next().unwrap_or(q),
        q if q.ends_with("arch.log2_of_pow2_int") => "log2",
        _ => return None,
    };
    // `min(t)` of one tuple is the least of its items.
    let items = match args {
        [Value::Tuple(items)] => items.as_slice(),
        _ => args,
    };
    match name {
        "prod" | "sum" if matches!(args, [Value::Tuple(_)]) => {
            let ints: Option<Vec<i64>> = items.iter().map(Value::as_int).collect();
            Some(match ints {
                Some(v) if name == "prod" => v.iter().try_fold(1i64, |p, i| p.checked_mul(*i)).map_or(Value::unknown("`prod(...)`"), Value::Int),
                Some(v) => v.iter().try_fold(0i64, |p, i| p.checked_add(*i)).map_or(Value::unknown("`sum(...)`"), Value::Int),
                None => Value::unknown(format!("`{name}(...)`")),
            })
        }
        // Exact for a power of two (`int(math.log2(32))` is 5); a float otherwise.
        "log2" => Some(match args {
            [Value::Int(i)] if *i > 0 && i.count_ones() == 1 => Value::Int(i.trailing_zeros().into()),
            _ => Value::Float,
        }),
        "min" | "max" => {
            let ints: Option<Vec<i64>> = items.iter().map(Value::as_int).collect();
            Some(match ints {
                Some(v) if !v.is_empty() => {
                    Value::Int(if name == "min" { *v.iter().min().unwrap() } else { *v.iter().max().unwrap() })
                }
                _ => Value::unknown(format!("`{name}(...)`")),
            })
        }
        "len" => Some(match args.first() {
            Some(Value::Tuple(t)) => Value::Int(t.len() as i64),
            // Equal keys are one key: the pairs' count is an upper bound.
            Some(Value::Dict(d)) if d.iter().enumerate().all(|(i, (k, _))| d[..i].iter().all(|(k2, _)| compare(CmpOp::Eq, k, k2) == Value::Bool(false))) => Value::Int(d.len() as i64),
            Some(Value::Range { start, stop, step }) => Value::Int(range_items(*start, *stop, *step).count() as i64),
            _ => Value::unknown("`len(...)`"),
        }),
        // A sequence made from a known one (`tuple(range(n))`, a list of
        // warp ids) holds its items; lists are tuples here.
        "tuple" | "list" => Some(match args {
            [] => Value::Tuple(Vec::new()),
            [Value::Tuple(t)] => Value::Tuple(t.clone()),
            [d @ Value::Dict(_)] => Value::Tuple(d.iteration().unwrap_or_default()),
            [Value::Range { start, stop, step }] if range_items(*start, *stop, *step).count() as i64 <= MAX_REPEATED_ITEMS => {
                Value::Tuple(range_items(*start, *stop, *step).map(Value::Int).collect())
            }
            _ => Value::unknown(format!("`{name}(...)`")),
        }),
        _ => None,
    }
}

impl Value {
    /// The values a `for` loop over this value takes, if known.
    pub fn iteration(&self) -> Option<Vec<Value>> {
        match self {
            Value::Range { start, stop, step } => {
                let mut out = Vec::new();
                let mut i = *start;
                while (*step > 0 && i < *stop) || (*step < 0 && i > *stop) {
                    out.push(Value::Int(i));
                    i += step;
                    if out.len() > 1_000_000 {
                        return None;
                    }
                }
                Some(out)
            }
            Value::Tuple(items) => Some(items.clone()),
            // A dict's keys, in order.
            Value::Dict(pairs) => Some(pairs.iter().map(|(k, _)| k.clone()).collect()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::StmtKind;

    struct NoCalls;
    impl CallHandler for NoCalls {
        fn call(&mut self, c: &Call, _: &Value, a: Vec<Value>, k: Vec<(String, Value)>, _: &Env) -> Value {
            pure_call(c, &a, &k).unwrap_or(Value::unknown("call"))
        }
    }

    fn value_of(src: &str, env: &Env) -> Value {
        let m = crate::lower_text(&format!("x = {src}\n")).unwrap();
        let StmtKind::Assign { value, .. } = &m.top_level[0].kind else { panic!() };
        eval(value, env, &mut NoCalls)
    }

    /// `typing.cast(T, v)` is `v`, as the module imports it; another
    /// `cast` is not.
    #[test]
    fn a_type_checker_cast_is_its_value() {
        let value = |src: &str| {
            let m = crate::lower_text(src).unwrap();
            let StmtKind::Assign { value, .. } = &m.top_level.last().unwrap().kind else { panic!() };
            eval(value, &Env::default(), &mut NoCalls)
        };
        assert_eq!(value("from typing import cast\nx = cast(int, 3)\n"), Value::Int(3));
        assert_eq!(value("import typing\nx = typing.cast(str, 'add')\n"), Value::Str("add".into()));
        assert!(value("from mylib import cast\nx = cast(int, 3)\n").is_unknown());
    }

    #[test]
    fn arithmetic_and_parity() {
        let mut env = Env::default();
        env.insert("phase".into(), Value::Int(1));
        assert_eq!(value_of("phase ^ 1", &env), Value::Int(0));
        assert_eq!(value_of("1 - phase", &env), Value::Int(0));
        assert_eq!(value_of("cutlass.Int32(0)", &env), Value::Int(0));
        assert_eq!(value_of("(7 // 2) % 2 == 1 and phase == 1", &env), Value::Bool(true));
        assert_eq!(value_of("0 < phase <= 1", &env), Value::Bool(true));
        assert!(value_of("tensor[0] + 1", &env).is_unknown());
        assert_eq!(value_of("tensor[0] % 1", &env), Value::Int(0));
        assert_eq!(value_of("cutlass.max(cutlass.min(phase + 1, 4), 0)", &env), Value::Int(2));
        assert_eq!(value_of("math.prod((2, 1, 3))", &env), Value::Int(6));
        assert_eq!(value_of("int(math.log2(32))", &env), Value::Int(5));
        assert_eq!(value_of("cute.arch.log2_of_pow2_int(cutlass.Int32(16))", &env), Value::Int(4));
        assert_eq!(value_of("max((1, phase, 0))", &env), Value::Int(1));
        assert!(value_of("cutlass.min(phase, tensor[0])", &env).is_unknown());
        assert!(value_of("tensor[0] % 2", &env).is_unknown());
        assert_eq!(value_of("range(3)", &env), Value::Range { start: 0, stop: 3, step: 1 });
        assert_eq!(value_of("len((5, *(2 * (4, phase, 6))))", &env), Value::Int(7));
        assert_eq!(value_of("tuple(range(1, 8, 3))", &env), Value::Tuple(vec![Value::Int(1), Value::Int(4), Value::Int(7)]));
        assert_eq!(value_of("len(list(range(6, 0, -2)))", &env), Value::Int(3));
        assert_eq!(value_of("len(range(0, 5, 2))", &env), Value::Int(3));
        assert!(value_of("tuple(range(0, 10 ** 9))", &env).is_unknown());
        assert!(value_of("(1, 2) * 100000", &env).is_unknown());
    }

    /// The value of the last statement `x = ...` of a file.
    fn last_value(src: &str, env: &Env) -> Value {
        let m = crate::lower_text(src).unwrap();
        let StmtKind::Assign { value, .. } = &m.top_level.last().unwrap().kind else { panic!() };
        eval(value, env, &mut NoCalls)
    }

    /// A dict display indexed: the value of the last key equal to the
    /// index; unknown for a key not held or one whose equality with the
    /// index is not known.
    #[test]
    fn dict_displays_indexed() {
        let mut env = Env::default();
        env.insert("k".into(), Value::Int(3));
        assert_eq!(value_of("{1: 2, 3: 4}[k]", &env), Value::Int(4));
        assert_eq!(value_of("{'add': 1, 'max': 2}['max']", &env), Value::Int(2));
        assert_eq!(value_of("{3: 1, k: 2}[3]", &env), Value::Int(2), "a later equal key replaces an earlier one");
        assert_eq!(value_of("{(1, 2): 'a', (1, 3): 'b'}[(1, k)]", &env), Value::Str("b".into()));
        assert!(value_of("{1: 2}[k]", &env).is_unknown(), "a key not held");
        assert!(value_of("{1: 2, 3: 4}[t[0]]", &env).is_unknown());
        assert!(value_of("{t[0]: 2, 3: 4}[3]", &env).is_unknown(), "an earlier key may equal it too");
        assert!(value_of("{**base, 3: 4}[3]", &env).is_unknown());
        assert!(value_of("{i: i for i in range(4)}[3]", &env).is_unknown());
        assert_eq!(value_of("{1: 2, 3: 4}[1] + {1: 2, 3: 4}[k]", &env), Value::Int(6));
        assert_eq!(value_of("3 in {1: 2, 3: 4}", &env), Value::Bool(true));
        assert_eq!(value_of("4 not in {1: 2, 3: 4}", &env), Value::Bool(true));
        // Bound to a name, a dict may be changed in ways not followed
        // (`d[k] = v`, `d.update(...)`): it is not known.
        assert!(value_of("{1: 2, 3: 4}", &env).is_unknown());
        assert!(value_of("len({1: 2})", &env).is_unknown());
        assert!(value_of("{}", &env).as_bool().is_none());
        let m = crate::lower_text("d = {1: 2}\nd[1] = 5\nx = d[1]\n").unwrap();
        let mut local = Env::default();
        for s in &m.top_level {
            if let StmtKind::Assign { targets, value } = &s.kind {
                let v = eval(value, &local, &mut NoCalls);
                targets.iter().for_each(|t| assign(t, v.clone(), &mut local));
            }
        }
        assert!(local["x"].is_unknown(), "{:?}", local["x"]);
    }

    /// Objects of the table are one another only by the same name; a name
    /// not in the table, or a number an `IntEnum` member may equal, is not
    /// known to be one or not.
    #[test]
    fn identity_of_python_objects() {
        let env = Env::default();
        let head = "import operator\nimport cutlass\nimport cutlass.cute as cute\nfrom cutlass.cute import ReductionOp\n";
        let v = |expr: &str| last_value(&format!("{head}x = {expr}\n"), &env);
        assert_eq!(v("operator.add is operator.add"), Value::Bool(true));
        assert_eq!(v("operator.add is not operator.mul"), Value::Bool(true));
        assert_eq!(v("cute.ReductionOp.MAX is ReductionOp.MAX"), Value::Bool(true), "one member, two spellings");
        assert_eq!(v("cute.ReductionOp.MAX == cute.ReductionOp.MIN"), Value::Bool(false));
        assert_eq!(v("max is cutlass.max"), Value::Bool(false));
        assert_eq!(v("cute.arch.fmax is max or cute.arch.fmax is cute.arch.fmin"), Value::Bool(false));
        assert_eq!(v("operator.add is None"), Value::Bool(false));
        assert_eq!(v("{cute.ReductionOp.ADD: operator.add, cute.ReductionOp.MAX: max}[ReductionOp.MAX] is max"), Value::Bool(true));
        assert_eq!(v("cute.ReductionOp.MUL in (cute.ReductionOp.ADD, cute.ReductionOp.MUL)"), Value::Bool(true));
        assert_eq!(v("cute.ReductionOp.MUL in {cute.ReductionOp.ADD: 0}"), Value::Bool(false));
        assert!(v("cute.ReductionOp.ADD == 0").is_unknown(), "an IntEnum member equals a number");
        assert!(v("operator.add is cute.arch.exp2").is_unknown(), "not in the table");
        assert!(v("operator.add is op").is_unknown());
        // A module's attribute probed for.
        assert_eq!(v("getattr(operator, 'max', None) is None"), Value::Bool(true));
        assert_eq!(v("getattr(operator, 'add', None) is operator.add"), Value::Bool(true));
        assert_eq!(v("getattr(cutlass, 'min', None) is cutlass.min"), Value::Bool(true));
        assert!(v("getattr(operator, 'index', None)").is_unknown(), "it has one, not in the table");
        assert!(v("getattr(operator, '__max__', None)").is_unknown());
        assert!(v("getattr(obj, 'max', None)").is_unknown());
        // Called, they are calls as before.
        assert_eq!(v("max(2, 5)"), Value::Int(5));
        // A file that binds `max` reads its own.
        let own = last_value("from mymod import max\nx = max\n", &env);
        assert_eq!(own, Value::unknown("`max`"));
        let param = crate::lower_text("def f(min):\n    return min\n").unwrap();
        let StmtKind::Return(Some(e)) = &param.functions[0].body[0].kind else { panic!() };
        assert_eq!(e, &Expr::Name("min".into()));
    }

    /// A membership test is known when each item's equality is: an item
    /// not known leaves an absent value not known.
    #[test]
    fn membership_with_unknown_items() {
        let mut env = Env::default();
        env.insert("n".into(), Value::Int(3));
        assert_eq!(value_of("n in (1, 3)", &env), Value::Bool(true));
        assert_eq!(value_of("n in (1, t[0], 3)", &env), Value::Bool(true));
        assert!(value_of("n in (1, t[0])", &env).is_unknown());
        assert!(value_of("n not in (1, t[0])", &env).is_unknown());
        assert_eq!(value_of("'ab' in 'cabd'", &env), Value::Bool(true));
        assert!(value_of("1.5 == 1.5", &env).is_unknown(), "floats of no known value");
    }

    /// A block index known modulo the cluster's extent: its residue modulo
    /// a divisor is known, anything else computed from it is not, and says
    /// what it came from.
    #[test]
    fn a_value_known_modulo_m_is_known_modulo_its_divisors() {
        let mut env = Env::default();
        env.insert("bidx".into(), known_modulo("the block index", 4, 3));
        assert_eq!(value_of("bidx % 2", &env), Value::Int(1));
        assert_eq!(value_of("bidx % 2 == 0", &env), Value::Bool(false));
        assert_eq!(value_of("bidx % 4", &env), Value::Int(3));
        for unknown in ["bidx % 8", "bidx // 2", "bidx + 1", "bidx == 3", "not bidx", "bidx % 3"] {
            assert_eq!(value_of(unknown, &env), Value::unknown("the block index"), "{unknown}");
        }
    }

    /// `Int32` is the same cast whichever module of the package it is
    /// imported from.
    #[test]
    fn integer_casts_from_every_module_that_exports_them() {
        for import in ["from cutlass import Int32", "from cutlass.cute import Int32", "from cutlass.cutlass_dsl import Int32"] {
            let m = crate::lower_text(&format!("{import}\nx = Int32(5) + 1\n")).unwrap();
            let StmtKind::Assign { value, .. } = &m.top_level.last().unwrap().kind else { panic!() };
            assert_eq!(eval(value, &Env::default(), &mut NoCalls), Value::Int(6), "{import}");
        }
    }

    /// An unknown bound to a name is one value: its copies and offsets
    /// compare by their offsets alone; anything else computed from it, and
    /// an unknown of another binding, stays unknown.
    #[test]
    fn offsets_of_one_bound_value_compare_by_their_offsets() {
        let mut env = Env::default();
        let count = Value::unknown("`max(...)`").with_identity(Identity::bound(7));
        env.insert("n".into(), count.clone());
        env.insert("n0".into(), count);
        env.insert("m".into(), Value::unknown("`max(...)`").with_identity(Identity::bound(8)));
        env.insert("u".into(), Value::unknown("`max(...)`"));
        for (test, holds) in [
            ("n0 != n", false),
            ("n0 == n", true),
            ("n - 1 != n0", true),
            ("n - 1 < n0", true),
            ("n + 2 >= n0 + 2", true),
            ("1 + n > n0", true),
            ("n - 3 > n0 - 2", false),
            ("n - n0", false),
            ("(n + 5) - n0 == 5", true),
        ] {
            let got = value_of(test, &env);
            assert_eq!(got.as_bool(), Some(holds), "{test}: {got:?}");
        }
        for open in ["n != m", "n == u", "u == u", "n * 2 > n", "n[0] == n[0]", "-n == -n0", "n > 0", "n is n0"] {
            assert!(value_of(open, &env).is_unknown(), "{open}");
        }
        // The identity is no part of a value's equality: the same unknown
        // of two bindings is equal, as two lanes' values are.
        assert_eq!(env["n"], env["m"]);
        // A binding's value of another binding's identity keeps its own.
        assert_eq!(value_of("n0", &env).with_identity(Identity::bound(9)).as_bool(), None);
        let renamed = value_of("n0", &env).with_identity(Identity::bound(9));
        let Value::Unknown(_, identity) = renamed else { panic!() };
        assert_eq!(identity.offset_from(Identity::bound(7)), Some(0));
    }
}
