//! A package's subclasses of the modelled pipeline classes and of
//! `NamedBarrier` in a thread (which classes those are, and what their
//! `create` does: `crate::pipeline::subclass`).
//!
//! - `Sub.create(...)` creates the base's model with the arguments the
//!   subclass's `create` hands on, and the object keeps the fields it sets
//!   (and the class attributes of the lineage, the dataclass defaults), with
//!   its class. `Sub(...)` of a `NamedBarrier` subclass is the named barrier.
//! - A method the lineage defines is inlined as a helper of the file, with
//!   `self` the object; one it does not define is the base's model.
//! - In an override: the base's class as the module names it, its methods
//!   called with the object (directly or handed on as a value), and
//!   `super()`, reach the base's model (or the next class of the lineage
//!   that defines the method); the barrier arrays `self.sync_object_full` /
//!   `sync_object_empty` are the ring's `full[i]` / `empty[i]`;
//!   `if_generate(cond, lambda: ..., lambda: ...)` runs the branch its
//!   condition takes, when known (else the kernel is not checked), here and
//!   wherever a branch synchronizes.
//!
//! What an override does that the model cannot represent is reported as any
//! helper's would be (a barrier array's method it does not know, a call
//! through a value not known), so the kernel is not checked, never passed in
//! silence.

use std::sync::Arc;

use cute_ir::ast::{Call, Expr, StmtKind};
use cute_ir::eval::{self, eval, Env, Value};

use super::ThreadRun;
use crate::pipeline::subclass::{self, BASE_CLASS, BASE_METHOD, MBARRIER_ARRAY, SUBCLASS, SUPER};

/// The subclass an object was made by.
fn subclass_of(v: &Value) -> Option<&str> {
    match v {
        Value::Object(o) => match o.attrs.get(SUBCLASS) {
            Some(Value::Str(c)) => Some(c),
            _ => None,
        },
        _ => None,
    }
}

/// Whether `v` is a pipeline or a named barrier: what a base's method is
/// called with.
fn synchronizes(v: &Value) -> bool {
    matches!(class_of(v), Some(c) if c == crate::pipeline::PIPELINE || c == eval::NAMED_BARRIER)
}

fn class_of(v: &Value) -> Option<&str> {
    match v {
        Value::Object(o) => Some(&o.class),
        _ => None,
    }
}

fn with_attrs(v: Value, attrs: impl IntoIterator<Item = (String, Value)>) -> Value {
    let Value::Object(mut o) = v else { return v };
    Arc::make_mut(&mut o).attrs.extend(attrs);
    Value::Object(o)
}

impl<'a> ThreadRun<'a> {
    /// A call that creates, or calls on, what a subclass made, or that an
    /// override makes of its base; `None` for any other call.
    pub(super) fn subclass_call(&mut self, call: &Call, func: &Value, args: &[Value], kwargs: &[(String, Value)], env: &Env) -> Option<Value> {
        if call.qualname.as_deref().is_some_and(|q| q.ends_with(".if_generate") || q == "if_generate") {
            // Followed when a branch synchronizes (else nothing of it is
            // the model's, as before).
            let synchronizes = call.args.iter().skip(1).chain(call.kwargs.iter().map(|(_, e)| e)).any(|e| matches!(e, Expr::Name(n) if self.sync_helpers.contains(n)));
            if synchronizes {
                return Some(self.if_generate(call, args, env));
            }
        }
        if self.functions.subclasses.is_empty() {
            return None;
        }
        match &call.func {
            // `Sub.create(...)`, `Sub(...)`.
            Expr::Attr { base, attr } if attr == "create" => {
                if let Some(class) = base.dotted().filter(|c| self.functions.subclasses.base_of(c).is_some()) {
                    return Some(self.subclass_create(call, &class, args, kwargs));
                }
            }
            Expr::Name(n) if n == "super" && args.is_empty() => return self.super_object(env),
            f => {
                if let Some(class) = f.dotted().filter(|c| self.functions.subclasses.base_of(c) == Some(eval::NAMED_BARRIER)) {
                    let barrier = eval::named_barrier(args, kwargs);
                    return Some(with_attrs(barrier, [(SUBCLASS.to_string(), Value::Str(class))]));
                }
            }
        }
        // A base's method handed on as a value, called with the object.
        if class_of(func) == Some(BASE_METHOD) {
            let method = match crate::pipeline::attribute(func, "method") {
                Some(Value::Str(m)) => m,
                _ => return None,
            };
            let (receiver, rest) = args.split_first().filter(|(r, _)| synchronizes(r))?;
            return Some(self.base_method(call, receiver, &method, rest, kwargs));
        }
        None
    }

    /// A method `method` called on `receiver` (a pipeline or named barrier a
    /// subclass made, the base's class, `super()`, a barrier array); `None`
    /// when `receiver` is none of those.
    pub(super) fn subclass_method(&mut self, call: &Call, receiver: &Value, method: &str, args: &[Value], kwargs: &[(String, Value)], env: &Env) -> Option<Value> {
        match class_of(receiver)? {
            // `PipelineAsyncOg.producer_commit(self, state)`; the class's
            // own `PipelineAsyncOg.create(...)` is the model's already.
            BASE_CLASS => {
                let (obj, rest) = args.split_first().filter(|(r, _)| synchronizes(r))?;
                Some(self.base_method(call, obj, method, rest, kwargs))
            }
            SUPER => {
                let obj = crate::pipeline::attribute(receiver, "self")?;
                let after = match crate::pipeline::attribute(receiver, "after") {
                    Some(Value::Str(c)) => c,
                    _ => return None,
                };
                let class = subclass_of(&obj)?.to_string();
                let lineage = self.module.class_lineage(&class);
                let next = lineage.iter().position(|c| *c == after).map_or(&[][..], |i| &lineage[i + 1..]);
                let functions = self.functions;
                match next.iter().find_map(|c| functions.get_own(c, method)) {
                    Some(f) => Some(self.inline_call(call, f, Some(obj), args.to_vec(), kwargs.to_vec(), env)),
                    None => Some(self.base_method(call, &obj, method, args, kwargs)),
                }
            }
            MBARRIER_ARRAY => {
                let action = match subclass::array_action(receiver, method, args, kwargs) {
                    // Said with the method the override is.
                    crate::pipeline::Action::Unsupported(what) => match self.inlined_method() {
                        Some(m) => crate::pipeline::Action::Unsupported(format!("{what} in `{m}`")),
                        None => crate::pipeline::Action::Unsupported(what),
                    },
                    action => action,
                };
                Some(self.run_pipeline_action(action, call.range))
            }
            _ => {
                let class = subclass_of(receiver)?;
                let functions = self.functions;
                let f = functions.get(Some(class), method)?;
                Some(self.inline_call(call, f, Some(receiver.clone()), args.to_vec(), kwargs.to_vec(), env))
            }
        }
    }

    /// The base's model of `method` on `receiver`.
    fn base_method(&mut self, call: &Call, receiver: &Value, method: &str, args: &[Value], kwargs: &[(String, Value)]) -> Value {
        if class_of(receiver) == Some(eval::NAMED_BARRIER) {
            return self.named_barrier_method(receiver, method, args, call.range);
        }
        // The call as if written `self.method(args...)` on the pipeline.
        let as_method = Call {
            func: Expr::Attr { base: Box::new(Expr::Name("self".to_string())), attr: method.to_string() },
            qualname: None,
            api: Some(cute_ir::api::Api::Pipeline),
            params: &[],
            // The model reads the values (the receiver may have been the
            // first argument, or `super()`'s): none of the expressions.
            args: Vec::new(),
            kwargs: Vec::new(),
            range: call.range,
        };
        self.pipeline_call(&as_method, Some(receiver), args, kwargs)
    }

    /// `Sub.create(...)`: the base's model, made as the subclass's `create`
    /// does (see `crate::pipeline::subclass::create`).
    fn subclass_create(&mut self, call: &Call, class: &str, args: &[Value], kwargs: &[(String, Value)]) -> Value {
        let module = self.module;
        let create = match subclass::create(module, &self.functions.subclasses, class) {
            Ok(c) => c,
            Err(what) => {
                self.unresolved(call.range, format!("it synchronizes through {what}, which the `cutlass.pipeline` model does not cover yet"));
                return Value::unknown(crate::pipeline::UNMODELLED_PIPELINE);
            }
        };
        // The subclass's own keyword parameters, with their defaults, then
        // what the call gives them; the others are the base's.
        let own: Vec<&str> = create.function.map(|f| f.params.iter().map(|p| p.name.as_str()).collect()).unwrap_or_default();
        let globals = self.globals;
        let mut scope: Env = Env::default();
        if let Some(f) = create.function {
            for p in &f.params {
                if let Some(d) = &p.default {
                    let v = eval(d, globals, self);
                    scope.insert(p.name.clone(), v);
                }
            }
        }
        let mut base_kwargs = Vec::new();
        let mut base_exprs = Vec::new();
        for ((k, v), (_, e)) in kwargs.iter().zip(&call.kwargs) {
            if own.contains(&k.as_str()) {
                scope.insert(k.clone(), v.clone());
            } else {
                base_kwargs.push((k.clone(), v.clone()));
                base_exprs.push((k.clone(), e.clone()));
            }
        }
        let base_call = Call {
            func: Expr::Attr { base: Box::new(Expr::Name(create.base.to_string())), attr: "create".to_string() },
            qualname: Some(format!("cutlass.pipeline.{}.create", create.base)),
            api: Some(cute_ir::api::Api::Pipeline),
            params: &[],
            args: call.args.clone(),
            kwargs: base_exprs,
            range: call.range,
        };
        // The fields: the lineage's class attributes, then what `create` sets.
        let mut fields: Vec<(String, Value)> = vec![(SUBCLASS.to_string(), Value::Str(class.to_string()))];
        for (name, e) in subclass::class_defaults(module, class) {
            let v = eval(e, globals, self);
            fields.push((name.to_string(), v));
        }
        for (name, e) in &create.fields {
            let v = eval(e, &scope, self);
            fields.push((name.clone(), v));
        }
        match crate::pipeline::action(&base_call, None, args, &base_kwargs, self.pipeline_caller()) {
            crate::pipeline::Action::Create { pipeline, inits, sync, assumed } => {
                let pipeline = with_attrs(pipeline, fields);
                self.run_pipeline_action(crate::pipeline::Action::Create { pipeline, inits, sync, assumed }, call.range)
            }
            // Said with the subclass the kernel wrote.
            crate::pipeline::Action::Unsupported(what) => {
                let written = call.func.dotted().unwrap_or_else(|| class.to_string());
                self.run_pipeline_action(crate::pipeline::Action::Unsupported(format!("{what} (through `{written}`)")), call.range)
            }
            action => self.run_pipeline_action(action, call.range),
        }
    }

    /// The method being inlined, innermost (`PipelineAsync.producer_commit`).
    fn inlined_method(&self) -> Option<String> {
        let range = *self.inlining.last()?;
        let f = self.module.functions.iter().find(|f| f.range == range)?;
        Some(match &f.class_name {
            Some(c) => format!("{}.{}", c.rsplit('.').next().unwrap_or(c), f.name),
            None => f.display_name(),
        })
    }

    /// `super()` in a method of a subclass, with `self` the object it made.
    fn super_object(&mut self, env: &Env) -> Option<Value> {
        let obj = env.get("self").filter(|s| subclass_of(s).is_some())?.clone();
        let range = *self.inlining.last()?;
        let after = self.module.functions.iter().find(|f| f.range == range)?.class_name.clone()?;
        Some(crate::pipeline::obj(SUPER, &[("self", obj), ("after", Value::Str(after))]))
    }

    /// `if_generate(cond, then_fn, else_fn=None)`: the branch the condition
    /// takes, each a lambda of no parameters run where it is written.
    fn if_generate(&mut self, call: &Call, args: &[Value], env: &Env) -> Value {
        let branch = match args.first().and_then(Value::as_bool) {
            Some(true) => call.args.get(1),
            Some(false) => call.args.get(2).or_else(|| call.kwargs.iter().find(|(k, _)| k == "else_block").map(|(_, e)| e)),
            None => {
                self.unresolved(call.range, "it synchronizes through `if_generate` on a condition not known statically".to_string());
                return Value::None;
            }
        };
        let Some(branch) = branch else { return Value::None };
        let module = self.module;
        let lambda = match branch {
            Expr::Name(n) => module.closures.iter().map(|c| &c.function).chain(module.functions.iter()).find(|f| f.name == *n && f.params.is_empty()),
            _ => None,
        };
        match lambda.and_then(|f| f.body.first()).map(|s| &s.kind) {
            Some(StmtKind::Return(Some(e))) => eval(e, env, self),
            _ => {
                let what = branch.dotted().unwrap_or_else(|| "a branch".to_string());
                self.unresolved(call.range, format!("it synchronizes through `if_generate`, whose branch `{what}` is not a lambda the model follows"));
                Value::None
            }
        }
    }
}
