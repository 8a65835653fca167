//! What a call evaluates to in a thread, and which family models it.
//!
//! The calls of the sync API table (`cute_ir::api`) go to their family:
//! mbarriers (`mbarrier.rs`), CTA and named barriers (`barrier.rs`), the cluster
//! (`cluster.rs`), memory operations and fences (`memory.rs`), warp collectives
//! (`warp.rs`), `cutlass.pipeline` (`pipelines.rs`, `participants.rs`), tensor
//! memory (`tmem.rs`), tile schedulers (`tile_scheduler.rs`); shared-memory
//! allocations and views are values (`allocation.rs`); functions and methods of
//! the file are inlined (`inline.rs`); casts, ranges and the layout algebra are
//! evaluated (`eval::pure_call`).
//!
//! A call the model gives no meaning returns an unknown value, the same each
//! time. A call that is handed something that synchronizes and is not followed
//! (a helper of the file handed to a function of another module, a closure
//! that synchronizes, a pipeline or named barrier handed to a function the file
//! does not define, a synchronizing module not modelled, an mbarrier handed to a
//! function or method the model does not know) makes the kernel not checked,
//! and says what: silence means checked. A call handed shared memory is one
//! handed an mbarrier when some thread uses that allocation as one, which is
//! known once every thread has run; calls that only print a barrier or ask
//! Python about it are none.

use cute_ir::api::{self, Api};
use cute_ir::ast::{Call, Expr};
use cute_ir::eval::{self, eval, CallHandler, Env, Value};

use super::{clc_scheduler, inline::arguments_line_up, memory, tile_scheduler, ThreadRun};
use crate::model::*;

impl CallHandler for ThreadRun<'_> {
    fn unbound(&mut self, name: &String) -> Value {
        if let Some(v) = self.globals.get(name) {
            return v.clone();
        }
        // A modelled pipeline class as a subclass's module names its base
        // (`PipelineAsyncOg`), read in an override.
        if let Some(class) = self.functions.subclasses.alias(name) {
            return crate::pipeline::obj(crate::pipeline::subclass::BASE_CLASS, &[("class", Value::Str(class.to_string()))]);
        }
        // A function of the module, or one defined inside another
        // (`lower.rs`), which the statement of its definition binds to its
        // local name: a value that calls it (`partial(helper, ...)`).
        let functions = self.functions;
        self.shared
            .unbound_names
            .entry(name as *const String as usize)
            .or_insert_with(|| match functions.get(None, name) {
                Some(_) => Value::Function { class: None, name: name.as_str().into(), bound_self: None },
                None => Value::unknown(format!("`{name}`")),
            })
            .clone()
    }

    fn method(&mut self, obj: &Value, attr: &str) -> Option<Value> {
        let Value::Object(o) = obj else { return None };
        if o.class == crate::pipeline::PARTICIPANT {
            return self.participant_state(obj, attr);
        }
        if o.class == crate::pipeline::ORDER && attr == "state" {
            return Some(self.order_state(obj));
        }
        // A base's method as a value (`PipelineAsyncOg.producer_commit`),
        // and the internals of a pipeline a subclass made that its
        // overrides read (`self.sync_object_full`).
        if o.class == crate::pipeline::subclass::BASE_CLASS {
            return Some(crate::pipeline::obj(
                crate::pipeline::subclass::BASE_METHOD,
                &[("class", o.attrs.get("class").cloned().unwrap_or(Value::None)), ("method", Value::Str(attr.to_string()))],
            ));
        }
        if o.class == crate::pipeline::PIPELINE && o.attrs.contains_key(crate::pipeline::subclass::SUBCLASS) {
            if let Some(v) = crate::pipeline::subclass::pipeline_attribute(obj, attr) {
                return Some(v);
            }
        }
        self.functions.get(Some(&o.class), attr)?;
        Some(Value::Function { class: Some(o.class.as_str().into()), name: attr.into(), bound_self: Some(Box::new(obj.clone())) })
    }

    fn call(&mut self, call: &Call, func: &Value, args: Vec<Value>, kwargs: Vec<(String, Value)>, env: &Env) -> Value {
        // Set again if this call is one of the pipeline's.
        self.pipeline_result = None;
        let depth = self.inline_depth;
        if let Some((_, _, v)) = self.known_stops.iter().rev().find(|(stop, at, _)| *at == depth && stop.written_like(call)) {
            return v.clone();
        }
        if tile_scheduler::creates_scheduler(call) {
            return self.create_tile_scheduler(call);
        }
        if clc_scheduler::creates_clc_scheduler(call) {
            return self.create_clc_scheduler(call, &args, &kwargs);
        }
        if let Some(v) = self.subclass_call(call, func, &args, &kwargs, env) {
            return v;
        }
        // A shared-storage struct defined in the kernel (see
        // `eval::struct_definition`).
        if call.qualname.as_deref() == Some(cute_ir::layout::STRUCT_DEFINITION) {
            return eval::pure_call(call, &args, &kwargs).unwrap_or_else(|| Value::unknown("a shared-storage struct"));
        }
        if let Some(api) = Api::of_call(call) {
            // Casts, `cutlass.const_expr` and ranges evaluate to values; the
            // layout algebra and builtins `pure_call` also knows have no
            // entry in the API table.
            if matches!(api, Api::IntCast | Api::ConstExpr | Api::Range) {
                if let Some(v) = eval::pure_call(call, &args, &kwargs) {
                    return v;
                }
            }
            if api == Api::Unmodelled {
                let written = call.func.dotted().unwrap_or_else(|| "a call".to_string());
                let qualname = call.qualname.as_deref().unwrap_or_default();
                self.unresolved(call.range, format!("it synchronizes through `{written}` (`{qualname}`), which is not modelled"));
                return Value::unknown(format!("`{written}(...)`"));
            }
            if api == Api::Pipeline {
                let receiver = match &call.func {
                    Expr::Attr { base, .. } => Some((base.as_ref(), eval(base, env, self))),
                    _ => None,
                };
                self.note_lane_varying_method_call(call, receiver.as_ref().map(|(b, v)| (*b, v)), &args, &kwargs, env);
                // What a subclass made, or an override's base: its own
                // methods are inlined (`subclasses.rs`).
                if let (Some((_, r)), Expr::Attr { attr, .. }) = (&receiver, &call.func) {
                    if let Some(v) = self.subclass_method(call, r, attr, &args, &kwargs, env) {
                        return v;
                    }
                }
                return self.pipeline_call(call, receiver.as_ref().map(|(_, v)| v), &args, &kwargs);
            }
            // A warp collective's operands only decide the value it returns
            // (the same unknown in every lane); where the warp is split it
            // marks the lane itself (`partial_collective`).
            if !cute_ir::api::is_warp_collective(api) {
                self.note_lane_varying(&call.func);
                self.note_lane_varying_argument_values(call, &args, &kwargs, env);
            }
            self.ticket_delta = if matches!(api, Api::Load | Api::Atomic | Api::Store) { memory::ticket_delta(call, env) } else { None };
            let value = self.sync_call(api, call, &args, &kwargs);
            self.ticket_delta = None;
            return value;
        }
        // Methods of pipeline participants and handles, and of named barrier
        // objects, that the API table does not name (`handle.commit()`,
        // `consumer.release(h)`, `bar.wait()`).
        if let Value::Function { class: Some(c), name, bound_self: Some(obj) } = func {
            let c: &str = c;
            if let Some(v) = self.subclass_method(call, obj, name, &args, &kwargs, env) {
                return v;
            }
            if c == eval::NAMED_BARRIER
                || c == crate::pipeline::PARTICIPANT
                || c == crate::pipeline::HANDLE
                || c == crate::pipeline::TMEM_ALLOCATOR
                || c == crate::pipeline::ORDER
            {
                let receiver = match &call.func {
                    Expr::Attr { base, .. } => Some((&**base, &**obj)),
                    _ => None,
                };
                self.note_lane_varying_method_call(call, receiver, &args, &kwargs, env);
            }
            if c == eval::NAMED_BARRIER {
                return self.named_barrier_method(obj, name, &args, call.range);
            }
            if c == crate::pipeline::PARTICIPANT || c == crate::pipeline::HANDLE {
                return self.participant_call(call, obj, name, &args);
            }
            if c == crate::pipeline::TMEM_ALLOCATOR {
                return self.tmem_method(obj, name, call.range);
            }
            if c == crate::pipeline::ORDER {
                return self.order_method(call, obj, &args, &kwargs);
            }
            if c == tile_scheduler::SCHEDULER {
                return self.tile_scheduler_method(obj, name, &args, &kwargs);
            }
            if c == clc_scheduler::CLC_SCHEDULER {
                return self.clc_scheduler_method(call, obj, name);
            }
            // `state.clone()`: states are values here (`advance()` rebinds
            // the name it is called on), so a copy is the same value.
            if c == crate::pipeline::STATE && &**name == "clone" && args.is_empty() {
                return (**obj).clone();
            }
        }
        // `functools.partial(f, ...)` of a function of this file: a value
        // that calls `f` with those arguments first (see `call_partial`).
        if eval::is_partial(call) {
            if let Some(partial) = args.first().and_then(|f| eval::Partial::of(f, &args[1..], &kwargs)) {
                return partial;
            }
            if let Some(partial) = self.dsl_partial(call, &args, &kwargs) {
                return partial;
            }
        }
        // A helper that synchronizes, handed as a value to a function this
        // file does not define: where it runs is not followed, and its
        // synchronization is never dropped in silence. A function of this
        // file it is handed to is inlined, and calls through it there are.
        if let Some(helper) = self.handed_helper_not_followed(call, func, &args, &kwargs) {
            let callee = call.func.dotted().unwrap_or_else(|| "a call".to_string());
            let defined = self.module.functions.iter().find(|f| f.name == helper).map(|f| f.name_range);
            self.shared.unresolved.insert(Unresolved {
                site: call.range,
                what: format!("it hands `{helper}`, which synchronizes, to `{callee}(...)`: calls through it are not modelled"),
                origin: defined.map(|at| (at, format!("`{helper}` synchronizes"))),
            });
            return Value::unknown(format!("`{callee}(...)`"));
        }
        if let Value::Partial(partial) = func {
            if let Some(made) = self.dsl_partial_call(partial) {
                return self.call_dsl_partial(call, &made, partial, args, kwargs, env);
            }
            return self.call_partial(call, partial, args, kwargs);
        }
        // A closure that synchronizes (see `Module::closures`): what it
        // reads of the call it was made in is not followed, and its
        // synchronization is never dropped in silence.
        if let (Expr::Name(n), Value::Unknown(..)) = (&call.func, func) {
            if self.sync_helpers.contains(n) {
                if let Some(closure) = self.module.closures.iter().find(|c| c.local_name() == n && c.synchronizes) {
                    self.shared.unresolved.insert(Unresolved {
                        site: call.range,
                        what: format!(
                            "it calls `{n}`, which synchronizes and reads `{}` of the function it is defined in: such closures are not modelled",
                            closure.captured
                        ),
                        origin: Some((closure.function.name_range, format!("`{n}` synchronizes"))),
                    });
                    return Value::unknown(format!("`{n}(...)`"));
                }
            }
        }
        // Functions and methods of this file are inlined.
        // (The module outlives this run: no copy of the function is made.)
        if let Value::Function { class, name, bound_self } = func {
            if let Some(f) = self.functions.get(class.as_deref(), name) {
                return self.inline_call(call, f, bound_self.as_deref().cloned(), args, kwargs, env);
            }
        }
        if let Expr::Name(n) = &call.func {
            if let Some(f) = self.functions.get(None, n) {
                return self.inline_call(call, f, None, args, kwargs, env);
            }
        }
        // `view.partition_S(...)`-style methods of a buffer: the receiver.
        let receiver = match &call.func {
            Expr::Attr { base, .. } if base.is_dotted() => {
                Some(eval(base, env, self)).filter(|v| matches!(v, Value::Smem(_) | Value::Gmem(_)))
            }
            _ => None,
        };
        if let Some(v) = self.memory_call(call, receiver.as_ref(), &args) {
            // What a view or copy is made of is its arguments, and its
            // receiver when that is a buffer (`thr_mma.partition_A(sA)` is a
            // view of `sA` in any lane).
            if receiver.is_some() {
                self.note_lane_varying(&call.func);
            }
            // A copy acts on its arguments; a view only makes a value,
            // which the lanes this one stands in for compute for themselves
            // where it is used (`uniform`).
            if memory::is_generic_copy(call) || !self.following_stood_in_lanes() {
                self.note_lane_varying_argument_values(call, &args, &kwargs, env);
            }
            return v;
        }
        if let Expr::Attr { base, attr } = &call.func {
            // A pipeline's barrier arrays used directly
            // (`pipe.sync_object_empty.arrive(...)`): not modelled, and never
            // dropped in silence.
            if let Expr::Attr { attr: inner, .. } = base.as_ref() {
                if inner.starts_with("sync_object") {
                    let what = call.func.dotted().unwrap_or_else(|| attr.clone());
                    self.unresolved(call.range, format!("it synchronizes through `{what}`, which is not modelled yet"));
                    return Value::unknown("a pipeline barrier array");
                }
            }
            if matches!(base.as_ref(), Expr::Name(b) if b == "self") {
                if let Some(Value::Object(o)) = env.get("self") {
                    if let Some(f) = self.functions.get(Some(&o.class), attr) {
                        let s = env.get("self").cloned();
                        return self.inline_call(call, f, s, args, kwargs, env);
                    }
                    // A method of that name synchronizes elsewhere in the
                    // file, but not one this object's class has (a base
                    // class of another file): never dropped in silence.
                    if self.functions.sync_helpers.contains(attr.as_str()) {
                        self.unresolved(
                            call.range,
                            format!("it calls `self.{attr}`, which `{}` does not define or inherit in this file, and a method of that name synchronizes", o.class),
                        );
                        return Value::unknown(format!("`self.{attr}(...)`"));
                    }
                }
            }
            // Allocation of shared memory: a fresh allocation per call site.
            if attr.starts_with("alloc") {
                return self.allocate_shared(call, attr, &args, &kwargs);
            }
            // Views of a shared pointer are the same pointer.
            let base_v = eval(base, env, self);
            if let Some(v) = self.pointer_method(base_v, attr, &args, &kwargs) {
                return v;
            }
        }
        if let Some(v) = Self::shared_array(call, &args) {
            return v;
        }
        if let Some(v) = eval::pure_call(call, &args, &kwargs) {
            return self.single_cta_mmas(v);
        }
        // A pipeline or named barrier handed to a function this file does
        // not define (`epilogue(..., acc_pipeline)` imported from another
        // module): what it does with it is not followed, and its
        // synchronization is never dropped in silence.
        if let Some(handed) = handed_synchronizing_object(call, &args, &kwargs) {
            let callee = call.func.dotted().map_or_else(|| "a call".to_string(), |c| format!("`{c}(...)`"));
            self.unresolved(
                call.range,
                format!("it hands {handed} to {callee}, which is not defined in this file: what that does with it is not modelled"),
            );
            return Value::unknown(callee);
        }
        // Shared memory handed to a function or method the model does not
        // know (`custom_commit(bar)`, `obj.signal(mbar_ptr=bar)`,
        // `f((bar, 1))`): if it holds mbarriers, what the call does with
        // them is not modelled (see `Shared::handed_barriers`). Calls that
        // only read it in a way that synchronizes nothing are passed over.
        if let Some(v) = self.async_proxy_call(call, &args, &kwargs) {
            return v;
        }
        if !only_reads(call) && !api::completes_bytes_only(call) {
            if let Some((expr, alloc)) = handed_shared_memory(call, &args, &kwargs) {
                let callee = match &call.func {
                    Expr::Attr { base, attr } if !call.func.is_dotted() => format!("`{}.{attr}(...)`", super::mbarrier::expr_text(base)),
                    f => f.dotted().map_or_else(|| "a call".to_string(), |c| format!("`{c}(...)`")),
                };
                let what = format!("it hands the mbarrier `{expr}` to {callee}, which the model does not know: what that does with it is not modelled");
                self.shared.handed_pointers.entry(call.range).or_insert((alloc, what));
            }
        }
        self.unknown_result(call)
    }
}

impl<'a> ThreadRun<'a> {
    /// A call of the API table: the index calls, then each family's own.
    pub(super) fn sync_call(&mut self, api: Api, call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> Value {
        if let Some(v) = self.place().index(api) {
            return v;
        }
        match api {
            Api::MbarrierInit
            | Api::MbarrierArrive
            | Api::MbarrierArriveAndExpectTx
            | Api::MbarrierWait
            | Api::MbarrierTryWait
            | Api::MbarrierTestWait
            | Api::MbarrierExpectTx => self.mbarrier_call(api, call, args, kwargs),
            Api::SyncThreads | Api::Barrier | Api::BarrierArrive => self.barrier_call(api, call, args, kwargs),
            Api::ClusterArrive | Api::ClusterArriveRelaxed | Api::ClusterWait | Api::MapSharedCluster => self.cluster_call(api, call, args, kwargs),
            Api::StoreAsyncDsmem => self.store_async_dsmem(call, args, kwargs),
            Api::Load
            | Api::Atomic
            | Api::Store
            | Api::FenceProxy
            | Api::FenceViewAsyncShared
            | Api::FenceAcqRel
            | Api::GridDepWait
            | Api::InlineAsm
            | Api::Copy => self.memory_operation(api, call, args, kwargs),
            Api::MakeWarpUniform
            | Api::ElectOne
            | Api::SyncWarp
            | Api::Shuffle
            | Api::Vote
            | Api::WarpReduction
            | Api::WarpRedux => self.warp_call(api, call, args, kwargs),
            Api::TmemAlloc | Api::TmemDealloc | Api::TmemRetrieve | Api::TmemUse | Api::TmemFence => self.tmem_call(api, call),
            _ => Value::None,
        }
    }

    /// An argument's value by parameter name (or one of its `alt`
    /// spellings), given by keyword or by position.
    pub(super) fn arg_value(&mut self, call: &Call, name: &str, alt: &[&str], args: &[Value], kwargs: &[(String, Value)]) -> Option<Value> {
        if let Some((_, v)) = kwargs.iter().find(|(k, _)| k == name || alt.contains(&k.as_str())) {
            return Some(v.clone());
        }
        let pos = call.params.iter().position(|p| *p == name || alt.contains(p))?;
        args.get(pos).cloned()
    }

    /// What a call this run does not follow gives: the same unknown value
    /// each time the call is evaluated.
    pub(super) fn unknown_result(&mut self, call: &Call) -> Value {
        let key = call as *const Call as usize;
        self.shared
            .unknown_results
            .entry(key)
            .or_insert_with(|| Value::unknown(describe_unfollowed_call(call)))
            .clone()
    }

    /// The helper that synchronizes that `call` hands on where calls
    /// through it are not followed: to a function this file does not define,
    /// or as a value that is not known to be that helper (a closure, a
    /// method of an object not known). A name that holds another value
    /// (a tensor named as a helper is) hands on nothing.
    pub(super) fn handed_helper_not_followed(&self, call: &Call, func: &Value, args: &[Value], kwargs: &[(String, Value)]) -> Option<String> {
        // Asked of every call a thread evaluates; most files have no such helper.
        if self.sync_helpers.is_empty() {
            return None;
        }
        let followed = self.calls_function_of_this_file(func);
        if !arguments_line_up(call, args.len(), kwargs.len()) {
            return (!followed).then(|| cute_ir::slice::handed_on_sync_helper(call, self.sync_helpers).map(str::to_string)).flatten();
        }
        let exprs = call.args.iter().chain(call.kwargs.iter().map(|(_, e)| e));
        let values = args.iter().chain(kwargs.iter().map(|(_, v)| v));
        exprs.zip(values).find_map(|(e, v)| match v {
            Value::Function { .. } | Value::Partial(_) if !followed => self.synchronizing_function(v),
            Value::Unknown(..) => cute_ir::slice::sync_helper_named(e, self.sync_helpers).map(str::to_string),
            _ => None,
        })
    }

    /// Whether calling `func` inlines a function of this file.
    pub(super) fn calls_function_of_this_file(&self, func: &Value) -> bool {
        match func {
            Value::Function { class, name, .. } => self.functions.get(class.as_deref(), name).is_some(),
            Value::Partial(p) => self.calls_function_of_this_file(&p.func),
            _ => false,
        }
    }

    /// The name of the helper `v` calls when it is one that synchronizes
    /// (a function of this file or a partial of one).
    pub(super) fn synchronizing_function(&self, v: &Value) -> Option<String> {
        match v {
            Value::Function { name, .. } if self.sync_helpers.contains(&**name) => Some(name.to_string()),
            Value::Partial(p) => self.synchronizing_function(&p.func),
            _ => None,
        }
    }
}

/// The value a thread takes a call of `api` to return whatever its
/// operands, the same in every lane: data read from memory or produced by
/// inline PTX, what the lanes of a warp exchange. `None` for the others.
/// What an atomic returns: a value loaded from memory, which a wait on an
/// address computed from it takes as a ticket (see `memory.rs`).
pub(super) const ATOMIC_RESULT: &str = "a value loaded from memory by an atomic";

pub(super) fn opaque_result(api: Api) -> Option<Value> {
    Some(match api {
        Api::Load | Api::Store => Value::unknown("a value loaded from memory"),
        Api::Atomic => Value::unknown(ATOMIC_RESULT),
        Api::InlineAsm => Value::unknown("the result of inline PTX"),
        Api::SyncWarp => Value::None,
        Api::Vote => Value::unknown("the result of a warp vote"),
        Api::Shuffle | Api::WarpReduction | Api::WarpRedux => Value::unknown("a value exchanged between the lanes of a warp"),
        _ => return None,
    })
}

/// The argument of `call` that is a pipeline, a pipeline participant or a
/// named barrier (or a tuple holding one), named as the call spells it.
pub(super) fn handed_synchronizing_object(call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> Option<String> {
    fn synchronizes(v: &Value) -> bool {
        match v {
            Value::Object(o) => [crate::pipeline::PIPELINE, crate::pipeline::PARTICIPANT, eval::NAMED_BARRIER].contains(&o.class.as_str()),
            Value::Tuple(items) => items.iter().any(synchronizes),
            Value::Dict(pairs) => pairs.iter().any(|(k, v)| synchronizes(k) || synchronizes(v)),
            _ => false,
        }
    }
    let named = |e: Option<&Expr>, fallback: &str| match e.and_then(Expr::dotted) {
        Some(text) => format!("`{text}`"),
        None => fallback.to_string(),
    };
    if let Some(i) = args.iter().position(synchronizes) {
        return Some(named(call.args.get(i), "a pipeline"));
    }
    let (key, _) = kwargs.iter().find(|(_, v)| synchronizes(v))?;
    Some(named(call.kwargs.iter().find(|(k, _)| k == key).map(|(_, e)| e), "a pipeline"))
}

/// The first argument of `call` that is (or is a tuple holding) a pointer
/// into shared memory, as the call spells it, and its allocation.
fn handed_shared_memory(call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> Option<(String, std::sync::Arc<str>)> {
    fn shared(v: &Value) -> Option<&std::sync::Arc<str>> {
        match v {
            Value::Smem(s) => Some(&s.alloc),
            Value::Tuple(items) => items.iter().find_map(shared),
            Value::Dict(pairs) => pairs.iter().find_map(|(k, v)| shared(k).or_else(|| shared(v))),
            _ => None,
        }
    }
    if !arguments_line_up(call, args.len(), kwargs.len()) {
        return None;
    }
    let exprs = call.args.iter().chain(call.kwargs.iter().map(|(_, e)| e));
    let values = args.iter().chain(kwargs.iter().map(|(_, v)| v));
    exprs.zip(values).find_map(|(e, v)| shared(v).map(|alloc| (super::mbarrier::expr_text(e), alloc.clone())))
}

/// Calls that only read what they are handed, and synchronize nothing
/// through it: printing (`print`, `cute.printf`, `cute.print_tensor`) and
/// Python's questions about a value (`str`, `repr`, `hex`, `id`, `type`,
/// `isinstance`, `hash`).
fn only_reads(call: &Call) -> bool {
    const BUILTINS: &[&str] = &["print", "str", "repr", "hex", "id", "type", "isinstance", "hash"];
    const PRINTING: &[&str] = &["cutlass.cute.printf", "cutlass.cute.print_tensor", "cutlass.cute.core.printf", "cutlass.cute.core.print_tensor"];
    match (&call.func, call.qualname.as_deref()) {
        (_, Some(q)) if PRINTING.contains(&q) => true,
        (Expr::Name(n), None) => BUILTINS.contains(&n.as_str()),
        (Expr::Name(n), Some(q)) => BUILTINS.contains(&n.as_str()) && (q == n || q == format!("builtins.{n}")),
        (f, None) => f.dotted().is_some_and(|d| d == "cute.printf" || d == "cute.print_tensor"),
        _ => false,
    }
}

/// A call whose result a run does not know, as a note names it. A function
/// the file imports from a module other than the CuTe DSL's or Python's own
/// is named as its import resolves it: its definition is in another file,
/// which a check of this file does not read.
pub(super) fn describe_unfollowed_call(call: &Call) -> String {
    const NOT_ANOTHER_FILE: &[&str] = &[
        "cutlass", "cute", "builtins", "math", "operator", "functools", "typing", "types", "itertools",
        "dataclasses", "enum", "collections",
    ];
    let written = call.func.dotted().unwrap_or_else(|| "call".to_string());
    let imported = call.qualname.as_deref().filter(|q| {
        let root = q.split('.').next().unwrap_or(q);
        *q != written && !NOT_ANOTHER_FILE.contains(&root)
    });
    match imported {
        Some(q) => format!("`{written}(...)` (`{q}`, from another module)"),
        None => format!("`{written}(...)`"),
    }
}

/// Whether a call is one of `cutlass.experimental.primitives`.
pub(super) fn is_primitive(call: &Call) -> bool {
    primitive_name(call).is_some()
}

/// The name in `cutlass.experimental.primitives` of the function a call
/// resolves to (see [`api::primitive_name`]).
pub(super) fn primitive_name(call: &Call) -> Option<&str> {
    call.qualname.as_deref().and_then(api::primitive_name)
}
