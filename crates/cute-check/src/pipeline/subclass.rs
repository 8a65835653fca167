//! Subclasses of the modelled `cutlass.pipeline` classes that a package
//! defines (in the kernel's file, or in a module linked with it): `class
//! PipelineAsync(_Mixin, cutlass.pipeline.PipelineAsync)`, and a
//! `NamedBarrier(cutlass.pipeline.NamedBarrier)`.
//!
//! A class whose lineage in the module (its bases, theirs, mixins included)
//! reaches a modelled class of the package ([`library_class`]) is that class
//! ([`Subclasses`]). Its `create` makes the same model ([`Create`]) when it is
//! the base's (inherited), or a function that creates the base with the
//! arguments it was handed (`obj = Base.create(*args, **kwargs)`, the base
//! named directly, through `super()`, or as a parameter of a factory,
//! `Cls.create = factory(Base, Cls)`) and then only sets fields on it
//! (`object.__setattr__(obj, "_elect_one_commit", elect_one_commit)`): its own
//! keyword parameters (`elect_one_commit=`) are then not the base's, and the
//! object keeps the fields they set. A `create` that does anything else is
//! reported, naming the class.
//!
//! The object made carries its class ([`SUBCLASS`]): a method the lineage
//! defines is inlined with `self` the object (see
//! `instantiate/subclasses.rs`), one it does not is the base's model. In an
//! override, the base's class named as its module imports it
//! (`PipelineAsyncOg`) is [`BASE_CLASS`], and its methods called with the
//! object (`PipelineAsyncOg.producer_commit(self, state)`, or handed on as
//! a value and called so) are the base's model; `super()` is [`SUPER`];
//! the barrier arrays are [`MBARRIER_ARRAY`], whose methods are what the
//! package's `MbarrierArray` does for that pipeline class ([`array_action`]).

use std::collections::{BTreeMap, HashMap};

use cute_ir::ast::{Call, Expr, FunctionDef, StmtKind, Target, UnOp};
use cute_ir::eval::{SmemRef, Value};
use cute_ir::Module;

use super::{attr, in_ctas, Action, Kind};

/// The attribute of a pipeline or named barrier object that a subclass made:
/// the class's name in the module.
pub const SUBCLASS: &str = "subclass";
/// A modelled class of the package named in an override (`PipelineAsyncOg`):
/// attribute `class`, its name (`PipelineAsync`).
pub const BASE_CLASS: &str = "PipelineBaseClass";
/// A method of [`BASE_CLASS`] taken as a value (`PipelineAsyncOg.producer_commit`):
/// attributes `class` and `method`.
pub const BASE_METHOD: &str = "PipelineBaseMethod";
/// `super()` in a method of a subclass: attributes `self` and `after`, the
/// class whose method calls it.
pub const SUPER: &str = "PipelineSuper";
/// `self.sync_object_full` / `self.sync_object_empty` of a pipeline made by
/// a subclass: attributes `pipeline`, `which` (`full` or `empty`) and
/// `tx_count`.
pub const MBARRIER_ARRAY: &str = "MbarrierArray";

/// The modelled class of the package a qualified name is
/// (`cutlass.pipeline.PipelineAsync`, `cutlass.pipeline.sm90.PipelineAsync`,
/// `cutlass.pipeline.NamedBarrier`).
pub fn library_class(qualified: &str) -> Option<&'static str> {
    let rest = qualified.strip_prefix("cutlass.pipeline.").or_else(|| qualified.strip_prefix("cutlass.utils.pipeline."))?;
    let name = rest.rsplit('.').next().unwrap_or(rest);
    if name == cute_ir::eval::NAMED_BARRIER {
        return Some(cute_ir::eval::NAMED_BARRIER);
    }
    Kind::ALL.iter().find(|(_, n)| *n == name).map(|(_, n)| *n)
}

/// The module's subclasses of modelled classes.
#[derive(Default)]
pub struct Subclasses {
    /// Class (by its name in the module) -> the modelled class it is.
    classes: HashMap<String, &'static str>,
    /// A modelled class as a class's module names it among its bases
    /// (`PipelineAsyncOg`); a name two modules give two classes is left out.
    aliases: HashMap<String, Option<&'static str>>,
}

impl Subclasses {
    pub fn of(module: &Module) -> Self {
        let mut aliases: HashMap<String, Option<&'static str>> = HashMap::new();
        let mut direct: HashMap<&str, &'static str> = HashMap::new();
        for c in &module.classes {
            for (written, qualified) in c.bases.iter().zip(&c.qualified_bases) {
                let Some(lib) = library_class(qualified) else { continue };
                direct.entry(c.name.as_str()).or_insert(lib);
                let entry = aliases.entry(written.clone()).or_insert(Some(lib));
                if *entry != Some(lib) {
                    *entry = None;
                }
            }
        }
        let mut classes = HashMap::new();
        if !direct.is_empty() {
            for c in &module.classes {
                if let Some(lib) = module.class_lineage(&c.name).into_iter().find_map(|l| direct.get(l).copied()) {
                    classes.insert(c.name.clone(), lib);
                }
            }
        }
        Subclasses { classes, aliases }
    }

    pub fn is_empty(&self) -> bool {
        self.classes.is_empty()
    }

    /// The modelled class `class` is, when it is a subclass of one.
    pub fn base_of(&self, class: &str) -> Option<&'static str> {
        self.classes.get(class).copied()
    }

    /// The modelled class a name written as a base stands for.
    pub fn alias(&self, name: &str) -> Option<&'static str> {
        self.aliases.get(name).copied().flatten()
    }
}

/// Whether a module defines a subclass of a modelled class.
pub fn any(module: &Module) -> bool {
    module.classes.iter().any(|c| c.qualified_bases.iter().any(|q| library_class(q).is_some()))
}

/// What a subclass's `create` does: creates the base with what it was
/// handed, less its own keyword parameters, then sets fields.
pub struct Create<'m> {
    /// The function (its own parameters, with their defaults), `None` when
    /// the base's is inherited.
    pub function: Option<&'m FunctionDef>,
    /// The modelled class whose `create` it calls.
    pub base: &'static str,
    /// The fields it sets, with the expressions of its parameters they take.
    pub fields: Vec<(String, &'m Expr)>,
}

/// The `create` of subclass `class`: the first class of its lineage that
/// sets one (an assignment after the class, `Cls.create = factory(Base,
/// Cls)`; a method; a class attribute `create = factory(...)`), recognised;
/// the base's when none does. `Err` says what is not recognised.
pub fn create<'m>(module: &'m Module, subclasses: &Subclasses, class: &str) -> Result<Create<'m>, String> {
    let lib = subclasses.base_of(class).ok_or_else(|| format!("`{class}` is not a subclass of a modelled class"))?;
    for c in module.class_lineage(class) {
        // The module level runs after the class body: its assignment wins.
        let assigned = module.top_level.iter().rev().find_map(|s| match &s.kind {
            StmtKind::Assign { targets, value } if targets.iter().any(|t| matches!(t, Target::Attr { base: Expr::Name(b), attr } if b == c && attr == "create")) => Some(value),
            _ => None,
        });
        let in_body = module.class(c).and_then(|d| d.attrs.iter().rev().find(|(n, _)| n == "create").map(|(_, v)| v));
        if let Some(value) = assigned {
            return factory(module, subclasses, c, value);
        }
        if let Some(f) = module.functions.iter().find(|f| f.class_name.as_deref() == Some(c) && f.name == "create") {
            return recognise(f, c, &|base: &Expr, call: &Call| base_named(subclasses, base, call));
        }
        if let Some(value) = in_body {
            return factory(module, subclasses, c, value);
        }
    }
    Ok(Create { function: None, base: lib, fields: Vec::new() })
}

/// The modelled class a `create` call's receiver names: the base as the
/// module imports it, or written in full.
fn base_named(subclasses: &Subclasses, base: &Expr, call: &Call) -> Option<&'static str> {
    if let Some(lib) = call.qualname.as_deref().and_then(|q| q.strip_suffix(".create")).and_then(library_class) {
        return Some(lib);
    }
    match base {
        Expr::Name(n) => subclasses.alias(n),
        _ => None,
    }
}

/// `Cls.create = factory(Base, Cls)`: the function `factory` defines and
/// returns, with the base its parameter holds.
fn factory<'m>(module: &'m Module, subclasses: &Subclasses, class: &str, value: &'m Expr) -> Result<Create<'m>, String> {
    let not_recognised = || format!("the `create` of `{class}` (a factory's result the model does not follow)");
    let Expr::Call(call) = value else { return Err(not_recognised()) };
    let Expr::Name(factory) = &call.func else { return Err(not_recognised()) };
    let Some(outer) = module.functions.iter().find(|f| f.class_name.is_none() && f.name == *factory) else { return Err(not_recognised()) };
    // Its nested `create` (a closure of the factory's parameters), by the
    // name Python qualifies it with (`_override_create.<locals>.create`),
    // the factory's module taken off when it is linked.
    let nested = |name: &str| {
        name.strip_suffix(".<locals>.create").is_some_and(|prefix| factory == prefix || factory.ends_with(&format!(".{prefix}")))
    };
    let inner = module
        .closures
        .iter()
        .map(|c| &c.function)
        .chain(module.functions.iter())
        .find(|f| nested(&f.name))
        .ok_or_else(not_recognised)?;
    let param_arg = |p: &str| {
        let i = outer.params.iter().position(|q| q.name == p)?;
        call.args.get(i).or_else(|| call.kwargs.iter().find(|(k, _)| k == p).map(|(_, e)| e))
    };
    recognise(inner, class, &|base: &Expr, c: &Call| match base {
        Expr::Name(n) => match param_arg(n).and_then(Expr::dotted) {
            Some(arg) => written_base(module, class, &arg).or_else(|| subclasses.alias(&arg)),
            None => base_named(subclasses, base, c),
        },
        _ => base_named(subclasses, base, c),
    })
}

/// The modelled class a base of `class`'s lineage written `written`
/// (`PipelineTmaAsyncOg`, `pipeline.PipelineTmaAsync`) is.
fn written_base(module: &Module, class: &str, written: &str) -> Option<&'static str> {
    module.class_lineage(class).into_iter().filter_map(|c| module.class(c)).find_map(|d| {
        d.bases.iter().zip(&d.qualified_bases).find(|(b, _)| *b == written).and_then(|(_, q)| library_class(q))
    })
}

/// A `create` that creates the base with its arguments and sets fields.
fn recognise<'m>(f: &'m FunctionDef, class: &str, base_of: &dyn Fn(&Expr, &Call) -> Option<&'static str>) -> Result<Create<'m>, String> {
    let not_recognised = |what: &str| format!("the `create` of `{class}` ({what})");
    let mut made: Option<(&str, &'static str)> = None;
    let mut fields = Vec::new();
    for s in &f.body {
        match &s.kind {
            StmtKind::Pass | StmtKind::Expr(Expr::Str(_)) => {}
            StmtKind::Assign { targets, value: Expr::Call(c) } if made.is_none() && targets.len() == 1 => {
                let (Target::Name(obj), Expr::Attr { base, attr }) = (&targets[0], &c.func) else {
                    return Err(not_recognised("a statement the model does not follow"));
                };
                if attr != "create" {
                    return Err(not_recognised("a statement the model does not follow"));
                }
                // Handed on whole (`*args, **kwargs`): what it was given.
                if !c.kwargs.is_empty() || !c.args.iter().all(|a| matches!(a, Expr::Unary { op: UnOp::Splat, .. } | Expr::Unknown(_))) {
                    return Err(not_recognised("its base's `create` is handed other arguments than its own"));
                }
                let lib = match base.as_ref() {
                    Expr::Call(sup) if matches!(&sup.func, Expr::Name(n) if n == "super") => None,
                    b => base_of(b, c),
                };
                match lib {
                    Some(lib) => made = Some((obj, lib)),
                    None => return Err(not_recognised("it creates something else than a modelled pipeline")),
                }
            }
            StmtKind::Expr(Expr::Call(c)) if made.is_some() && c.func.dotted().as_deref() == Some("object.__setattr__") => {
                match (c.args.first(), c.args.get(1), c.args.get(2)) {
                    (Some(Expr::Name(o)), Some(Expr::Str(field)), Some(value)) if Some(o.as_str()) == made.map(|m| m.0) => {
                        if field != "__class__" {
                            fields.push((field.clone(), value));
                        }
                    }
                    _ => return Err(not_recognised("it sets something else than a field of what it created")),
                }
            }
            StmtKind::Return(Some(Expr::Name(o))) if made.is_some_and(|m| m.0 == o) => {
                let (_, base) = made.expect("made");
                return Ok(Create { function: Some(f), base, fields });
            }
            _ => return Err(not_recognised("a statement the model does not follow")),
        }
    }
    Err(not_recognised("it does not return the pipeline it creates"))
}

/// The class attributes of `class`'s lineage (the nearest first wins), the
/// defaults of a dataclass's fields (`_elect_one_commit: bool = False`).
pub fn class_defaults<'m>(module: &'m Module, class: &str) -> BTreeMap<&'m str, &'m Expr> {
    let mut out = BTreeMap::new();
    for c in module.class_lineage(class) {
        if let Some(d) = module.class(c) {
            for (n, v) in &d.attrs {
                if n != "create" {
                    out.entry(n.as_str()).or_insert(v);
                }
            }
        }
    }
    out
}

/// An attribute of a pipeline made by a subclass that the package's class
/// defines and the model knows: its barrier arrays, masks and leadership.
pub fn pipeline_attribute(pipe: &Value, name: &str) -> Option<Value> {
    let Value::Object(o) = pipe else { return None };
    match name {
        "sync_object_full" | "sync_object_empty" => {
            let which = name.trim_start_matches("sync_object_");
            let tx = if which == "full" { attr(pipe, "tx_count").unwrap_or(Value::unknown("the `tx_count` of the pipeline")) } else { Value::Int(0) };
            Some(super::obj(MBARRIER_ARRAY, &[("pipeline", pipe.clone()), ("which", Value::Str(which.to_string())), ("tx_count", tx)]))
        }
        // `None` in a pipeline whose signals stay in their CTA.
        "producer_mask" | "consumer_mask" => {
            let which = if name == "producer_mask" { "full_ctas" } else { "empty_ctas" };
            Some(match o.attrs.get(which) {
                Some(Value::Tuple(_)) => Value::unknown(format!("the `{name}` of a pipeline across a cluster")),
                _ => Value::None,
            })
        }
        "is_leader_cta" => Some(Value::Bool(!matches!(attr(pipe, "leader"), Some(Value::Bool(false))))),
        "num_stages" => attr(pipe, "stages"),
        _ => None,
    }
}

/// What a method of a pipeline's barrier array does, as the package's
/// `MbarrierArray` does it for that array's operation: `wait(index,
/// phase)`; `arrive(index, dst)` (every calling thread for the threads'
/// side, the elected lane with the bytes for a TMA producer, a
/// `tcgen05.commit` for an MMA side); `arrive_and_expect_tx(index, tx)`
/// (the elected lane); `get_barrier(index)`.
pub fn array_action(array: &Value, method: &str, args: &[Value], kwargs: &[(String, Value)]) -> Action {
    let (Some(pipe), Some(Value::Str(which))) = (attr(array, "pipeline"), attr(array, "which")) else {
        return Action::Unsupported(format!("`{method}` on a barrier array"));
    };
    let kind = match attr(&pipe, "kind") {
        Some(Value::Str(k)) => Kind::of_name(&k).unwrap_or(Kind::Async),
        _ => Kind::Async,
    };
    let what = format!("`sync_object_{which}.{method}`");
    let arg = |i: usize, name: &str| kwargs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()).or_else(|| args.get(i).cloned());
    let bar = match (attr(&pipe, &which), arg(0, "index").and_then(|i| i.as_int())) {
        (Some(Value::Smem(base)), Some(i)) => SmemRef { offset: base.offset + i, ..base },
        _ => return Action::Unsupported(format!("{what} on a stage not known statically")),
    };
    let ctas = if which == "full" { "full_ctas" } else { "empty_ctas" };
    let clustered = in_ctas(&pipe, ctas, &bar).is_some();
    match method {
        "wait" => match arg(1, "phase").and_then(|p| p.as_int()) {
            Some(phase) => Action::Wait { bar, phase },
            None => Action::Unsupported(format!("{what} with a phase not known statically")),
        },
        "arrive" => {
            if clustered || !matches!(arg(1, "dst"), None | Some(Value::None)) {
                return Action::Unsupported(format!("{what} to another CTA"));
            }
            let tma = matches!(kind, Kind::TmaAsync | Kind::TmaUmma | Kind::ClcFetch);
            let mma = super::umma_side(kind, &which);
            match (which.as_str(), tma, mma) {
                (_, _, true) => Action::ArriveOneLane { bar, commit: true },
                ("full", true, _) => Action::ArriveTx { bar, bytes: attr(array, "tx_count").unwrap_or(Value::unknown("the `tx_count` of the pipeline")) },
                _ => Action::Arrive { bar },
            }
        }
        "arrive_and_expect_tx" if !clustered => Action::ArriveTx { bar, bytes: arg(1, "tx_count").unwrap_or(Value::unknown("the transaction bytes")) },
        "get_barrier" => Action::Value(Value::Smem(bar)),
        _ => Action::Unsupported(what),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_classes_are_known_by_their_qualified_names() {
        assert_eq!(library_class("cutlass.pipeline.PipelineAsync"), Some("PipelineAsync"));
        assert_eq!(library_class("cutlass.pipeline.sm90.PipelineTmaAsync"), Some("PipelineTmaAsync"));
        assert_eq!(library_class("cutlass.pipeline.NamedBarrier"), Some("NamedBarrier"));
        assert_eq!(library_class("cutlass.pipeline.PipelineState"), None);
        assert_eq!(library_class("mypkg.PipelineAsync"), None);
    }

    #[test]
    fn creates_are_recognised_in_their_three_spellings() {
        let src = "from cutlass.pipeline import PipelineAsync as Og\nfrom cutlass import pipeline\n\
class Mixin:\n    pass\n\
class A(Mixin, Og):\n    _flag: bool = False\n    @staticmethod\n    def create(*args, flag=False, **kwargs):\n        obj = Og.create(*args, **kwargs)\n        object.__setattr__(obj, \"__class__\", A)\n        object.__setattr__(obj, \"_flag\", flag)\n        return obj\n\
def make(parent_cls, child_cls):\n    @staticmethod\n    def create(*args, **kwargs):\n        obj = parent_cls.create(*args, **kwargs)\n        object.__setattr__(obj, \"__class__\", child_cls)\n        return obj\n    return create\n\
class B(pipeline.PipelineTmaAsync):\n    pass\n\
B.create = make(pipeline.PipelineTmaAsync, B)\n\
class C(A):\n    pass\n\
class D(Og):\n    @staticmethod\n    def create(*args, **kwargs):\n        obj = Og.create(*args, **kwargs)\n        obj.x = 1\n        return obj\n";
        let m = cute_ir::lower_text(src).unwrap();
        let s = Subclasses::of(&m);
        assert_eq!(s.base_of("A"), Some("PipelineAsync"));
        assert_eq!(s.base_of("C"), Some("PipelineAsync"), "through another subclass");
        assert_eq!(s.base_of("B"), Some("PipelineTmaAsync"), "a dotted base");
        assert_eq!(s.base_of("Mixin"), None);
        let a = create(&m, &s, "A").unwrap();
        assert_eq!((a.base, a.fields.len(), a.fields[0].0.as_str()), ("PipelineAsync", 1, "_flag"));
        let c = create(&m, &s, "C").unwrap();
        assert!(c.function.is_some(), "C inherits A's create");
        let b = create(&m, &s, "B").unwrap();
        assert_eq!((b.base, b.fields.len()), ("PipelineTmaAsync", 0), "a factory handed the base by its dotted name");
        let d = create(&m, &s, "D");
        assert!(d.is_err_and(|e| e.contains("`D`")), "setting an attribute another way is not followed");
    }
}
