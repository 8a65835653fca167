//! Helpers of the file, inlined where they are called: device functions
//! (`@cute.jit`), plain functions and methods, and `functools.partial` of them,
//! with their parameters bound as Python binds them.
//!
//! A kernel is launched, not called, and a helper that calls itself is not
//! unrolled; calls nest at most [`ThreadRun::MAX_INLINE_DEPTH`] deep. Pipeline
//! states are values here, bound per frame: a state a helper advances
//! (`def advance(s): s.advance()`) is written back to the name the caller
//! passed, as the object it is in Python (`write_backs`).
//!
//! A thread runs a helper's own slice (`cute_ir::slice::slice_helper`, made
//! once by `functions.rs`); a datapath loop over a runtime count in a helper is
//! not run, so it does not make the verdict a bounded one. The kernel's
//! `self.helper()` finds a method its class inherits in the file.
//!
//! Functions are values too: a function or partial handed to a function of the
//! file is followed there (the helper's slice keeps the calls it makes for
//! their effect). Handed to a function the file does not define, or as a value
//! not known (a closure, a method of an unknown object), it makes the kernel
//! not checked (`calls.rs`, `handed_helper_not_followed`). Through a partial a
//! lane stops standing in for others, and a pipeline state the partial binds
//! and its function advances is reported as not modelled (Python's states are
//! objects the partial shares; here states are values).

use cute_ir::ast::{Call, Expr, FunctionDef};
use cute_ir::eval::{self, eval, Env, Value};

use super::{statements::Flow, uniform, ThreadRun};

/// How a call binds the parameters of helper `f`, in order (a later
/// binding of a name replaces an earlier one): `self` to the object of a
/// method called on one, each parameter with a default to `default` of
/// it, then the arguments by position and by name.
pub(super) fn bind_parameters<T>(
    f: &FunctionDef,
    bound_self: Option<T>,
    args: impl IntoIterator<Item = T>,
    kwargs: impl IntoIterator<Item = (String, T)>,
    mut default: impl FnMut(&Expr) -> T,
) -> Vec<(String, T)> {
    let mut formal = f.params.iter();
    let mut bound = Vec::new();
    if let Some(s) = bound_self.filter(|_| f.is_method()) {
        formal.next();
        bound.push(("self".to_string(), s));
    }
    let formal: Vec<_> = formal.collect();
    bound.extend(formal.iter().filter_map(|p| p.default.as_ref().map(|d| (p.name.clone(), default(d)))));
    bound.extend(formal.iter().map(|p| p.name.clone()).zip(args));
    bound.extend(kwargs);
    bound
}

/// A call's arguments, then its keyword arguments, each the expression of
/// the value at its position among the `args` arguments and `kwargs`
/// keyword arguments evaluated; `None` where they do not line up (a spliced
/// `*args`).
pub(super) fn argument_expressions(call: &Call, args: usize, kwargs: usize) -> Option<Vec<&Expr>> {
    arguments_line_up(call, args, kwargs).then(|| call.args.iter().chain(call.kwargs.iter().map(|(_, a)| a)).collect())
}

/// Whether `args` argument values and `kwargs` keyword argument values are
/// one per expression of `call` (no spliced `*args`).
pub(super) fn arguments_line_up(call: &Call, args: usize, kwargs: usize) -> bool {
    let spliced = call.args.iter().any(|a| matches!(a, Expr::Unary { op: cute_ir::ast::UnOp::Splat, .. }));
    !spliced && call.args.len() == args && call.kwargs.len() == kwargs
}

/// Whether `v` is a `cutlass.pipeline` state (`make_pipeline_state(...)`).
pub(super) fn is_pipeline_state(v: &Value) -> bool {
    matches!(v, Value::Object(o) if o.class == crate::pipeline::STATE) || crate::pipeline::advanced(v).is_some()
}

impl<'a> ThreadRun<'a> {
    /// Helpers inlined into each other at most.
    pub(super) const MAX_INLINE_DEPTH: u32 = 8;

    /// Inline helper `f` for `call` (see [`Self::inline_following_lanes`]);
    /// the pipeline states it advanced are then advanced in the caller.
    pub(super) fn inline_call(
        &mut self,
        call: &Call,
        f: &'a FunctionDef,
        bound_self: Option<Value>,
        args: Vec<Value>,
        kwargs: Vec<(String, Value)>,
        env: &Env,
    ) -> Value {
        let passed = (bound_self.is_some(), args.len(), kwargs.len());
        self.pending_origins = Some(self.origins_for(call, f, passed));
        let v = self.inline_following_lanes(call, f, bound_self, args, kwargs, env);
        self.pending_origins = None;
        self.write_back_advanced_states(call, f, passed, None);
        v
    }

    /// What the names of helper `f` stand for in the kernel's frame when
    /// `call` inlines it (see `same_condition::Origins`); `passed` as for
    /// [`Self::write_back_advanced_states`]. The object of a method called
    /// on a name (`self.softmax(...)`) is given that name.
    fn origins_for(&self, call: &Call, f: &FunctionDef, passed: (bool, usize, usize)) -> super::same_condition::Origins {
        let (has_self, args, kwargs) = passed;
        let Some(exprs) = argument_expressions(call, args, kwargs) else { return Default::default() };
        let receiver = match &call.func {
            Expr::Attr { base, .. } if has_self => Some(Some(base.as_ref())),
            _ => has_self.then_some(None),
        };
        let keywords = call.kwargs.iter().map(|(k, _)| k.clone()).zip(exprs[call.args.len()..].iter().map(|e| Some(*e)));
        let bound = bind_parameters(f, receiver, exprs[..call.args.len()].iter().map(|e| Some(*e)), keywords, |_| None);
        self.same_conditions.helper_origins(call, self.frame_origins.as_deref(), bound, &self.functions.rebound_by(f))
    }

    /// Calls `partial` (see [`eval::Partial`]) for `call`: the function of
    /// this file it binds is inlined with the bound arguments first. The
    /// call's arguments do not line up with the function's parameters, so
    /// this lane stops standing in for others (it would have to follow
    /// them into the function by position).
    pub(super) fn call_partial(&mut self, call: &Call, partial: &eval::Partial, args: Vec<Value>, kwargs: Vec<(String, Value)>) -> Value {
        let Value::Function { class, name, bound_self } = &partial.func else { return self.unknown_result(call) };
        let Some(f) = self.functions.get(class.as_deref(), name) else { return self.unknown_result(call) };
        if self.stands_in() {
            self.lane_sensitive = true;
        }
        let passed = (bound_self.is_some(), args.len(), kwargs.len());
        let (args, kwargs) = partial.with(args, kwargs);
        let v = self.inline(f, bound_self.as_deref().cloned(), args, kwargs);
        self.write_back_advanced_states(call, f, passed, Some(partial));
        v
    }

    /// [`Self::inline`], following lane dependence into the helper (see
    /// [`Self::helper_scope`]) while this lane may stand in for others, and
    /// the values its names hold in those lanes while they are followed
    /// there: its parameters start with what the arguments hold there.
    pub(super) fn inline_following_lanes(
        &mut self,
        call: &Call,
        f: &'a FunctionDef,
        bound_self: Option<Value>,
        args: Vec<Value>,
        kwargs: Vec<(String, Value)>,
        env: &Env,
    ) -> Value {
        if !self.stands_in() {
            return self.inline(f, bound_self, args, kwargs);
        }
        let in_lanes = self.arguments_in_stood_in_lanes(call, &args, &kwargs, env);
        let same: Vec<bool> = match &in_lanes {
            Some(in_lanes) => in_lanes.iter().zip(args.iter().chain(kwargs.iter().map(|(_, v)| v))).map(|(a, v)| a.is_everywhere(v)).collect(),
            None => Vec::new(),
        };
        let Some(scope) = self.helper_scope(call, f, bound_self.is_some(), &same) else {
            self.lane_sensitive = true;
            return self.inline(f, bound_self, args, kwargs);
        };
        let params = in_lanes.filter(|_| self.following_stood_in_lanes() && self.runs_body_of(f)).map(|mut in_lanes| {
            // A parameter given no argument, or the object, is the running
            // lane's in every lane.
            let keywords = in_lanes.split_off(args.len());
            let keywords = kwargs.iter().map(|(k, _)| k.clone()).zip(keywords);
            let same = bound_self.as_ref().map(|_| uniform::ArgInLanes::Same);
            bind_parameters(f, same, in_lanes, keywords, |_| uniform::ArgInLanes::Same)
        });
        let followed = params.is_some();
        if let Some(params) = params {
            self.stood_in.as_mut().expect("followed").enter(params);
        }
        self.helper_scopes.push(scope);
        let v = self.inline(f, bound_self, args, kwargs);
        self.helper_scopes.pop();
        if let Some(lanes) = self.stood_in.as_mut() {
            match followed {
                true => lanes.leave(call),
                false => lanes.not_followed(call),
            }
        }
        v
    }

    /// Whether [`Self::inline`] runs the body of `f` when called now.
    pub(super) fn runs_body_of(&self, f: &FunctionDef) -> bool {
        cute_ir::ast::inlined_when_called(f.decorator) && !self.inlining.contains(&f.range) && self.inline_depth < Self::MAX_INLINE_DEPTH
    }

    pub(super) fn inline(&mut self, f: &'a FunctionDef, bound_self: Option<Value>, args: Vec<Value>, kwargs: Vec<(String, Value)>) -> Value {
        // Kernels are launched, not called from device code (a `@cute.jit`
        // function called from a kernel is a device function the DSL
        // inlines); and a helper that calls itself is not unrolled.
        if !cute_ir::ast::inlined_when_called(f.decorator) || self.inlining.contains(&f.range) {
            return Value::unknown(format!("`{}(...)`", f.display_name()));
        }
        if self.inline_depth >= Self::MAX_INLINE_DEPTH {
            return Value::unknown(format!("`{}` (calls nested too deeply)", f.display_name()));
        }
        self.inlining.push(f.range);
        let value = self.inline_body(f, bound_self, args, kwargs);
        self.inlining.pop();
        value
    }

    pub(super) fn inline_body(&mut self, f: &'a FunctionDef, bound_self: Option<Value>, args: Vec<Value>, kwargs: Vec<(String, Value)>) -> Value {
        // The module's names are found through `unbound`.
        let globals = self.globals;
        let mut env: Env = bind_parameters(f, bound_self, args, kwargs, |d| eval(d, globals, self)).into_iter().collect();
        let states: Vec<(String, Value)> = f
            .params
            .iter()
            .filter_map(|p| env.get(&p.name).filter(|v| is_pipeline_state(v)).map(|v| (p.name.clone(), v.clone())))
            .collect();
        // Names the caller has yet to rebind are the caller's.
        let callers = std::mem::take(&mut self.write_backs);
        let origins = std::rc::Rc::new(self.pending_origins.take().unwrap_or_default());
        let callers_origins = self.frame_origins.replace(origins);
        self.inline_depth += 1;
        let flow = self.exec_block(&f.body, &mut env, self.functions.slice_of(f));
        self.apply_write_backs(&mut env);
        self.inline_depth -= 1;
        self.write_backs = callers;
        self.frame_origins = callers_origins;
        self.advanced_parameters = states.into_iter().filter_map(|(p, before)| env.remove(&p).filter(|now| *now != before).map(|now| (p, now))).collect();
        match flow {
            Flow::Return(v) => v,
            _ => Value::None,
        }
    }

    /// After `call` ran helper `f`: the pipeline states it advanced that
    /// the call passed by name are advanced in the caller too, as the
    /// objects they are (a state is a value here, bound per frame).
    /// `passed`: whether the call bound `self`, and how many arguments and
    /// keyword arguments it passed.
    ///
    /// Through a `partial`, a state it binds would be advanced inside it
    /// (Python's states are objects): not modelled, and never dropped in
    /// silence.
    pub(super) fn write_back_advanced_states(&mut self, call: &Call, f: &FunctionDef, passed: (bool, usize, usize), partial: Option<&eval::Partial>) {
        let advanced = std::mem::take(&mut self.advanced_parameters);
        if advanced.is_empty() {
            return;
        }
        let (has_self, args, kwargs) = passed;
        let Some(exprs) = argument_expressions(call, args, kwargs) else { return };
        // What each parameter was given: its default (`None`), an argument
        // the partial binds (`Some(None)`: no name of the caller's), or an
        // expression of the call.
        let bound_args = partial.map_or(0, |p| p.args.len());
        let bound_keywords: Vec<(String, Option<Option<&Expr>>)> = partial
            .map(|p| p.kwargs.iter().filter(|(k, _)| !call.kwargs.iter().any(|(given, _)| given == k)).map(|(k, _)| (k.clone(), Some(None))).collect())
            .unwrap_or_default();
        let positional = std::iter::repeat_n(Some(None), bound_args).chain(exprs[..call.args.len()].iter().map(|e| Some(Some(*e))));
        let keywords = bound_keywords
            .into_iter()
            .chain(call.kwargs.iter().map(|(k, _)| k.clone()).zip(exprs[call.args.len()..].iter().map(|e| Some(Some(*e)))));
        let bound = bind_parameters(f, has_self.then_some(Some(None)), positional, keywords, |_| None);
        for (param, value) in advanced {
            match bound.iter().rev().find(|(p, _)| *p == param) {
                Some((_, Some(Some(Expr::Name(name))))) => self.write_backs.push((name.clone(), value)),
                Some((_, Some(None))) if partial.is_some() => self.unresolved(
                    call.range,
                    format!("it advances `{param}`, a pipeline state that `functools.partial` binds, which is not modelled"),
                ),
                _ => {}
            }
        }
    }
}
