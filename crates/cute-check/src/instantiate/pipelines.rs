//! `cutlass.pipeline` rings in a thread: a pipeline's creation initialises its
//! ring of mbarriers (by warp 0's elected lane, named after the storage it
//! lives in) and synchronizes as the package does (a CTA barrier, a relaxed
//! cluster arrive and wait, or nothing with `defer_sync=True`); its methods
//! become the mbarrier operations the installed package performs
//! (`crate::pipeline` says which).
//!
//! A method called on something that is not a pipeline this kernel creates (a
//! pipeline handed in by a caller this check does not see) makes the kernel not
//! checked: its stages and groups are known only where it is created. A method
//! the model does not cover is reported the same way.
//!
//! A pipeline carries its ring (`full[i]`, `empty[i]` on the barrier storage)
//! and its class's signals: every calling thread arrives; one elected lane per
//! warp arrives, as a `tcgen05.commit` or a TMA consumer release does; or the
//! TMA producer arrives with the bytes. `PipelineState` values advance per
//! statement (`state.advance()`); a state advanced by hand through its fields
//! (`state._index = ...`, `state._phase ^= 1`) has those written.
//!
//! `consumer_try_wait` and `producer_try_acquire` return a token that remembers
//! the stage and phase it tested. The wait it is handed to is made (a true
//! token skips only a wait that would pass at once), unless the token tested
//! another stage or phase: then the wait can pass before its own phase
//! completes, which is recorded (`StaleToken` in the model) and reported as
//! `vacuous-wait`. The index-and-phase forms flash-attention's pipelines add
//! (`producer_acquire_w_index_phase(index, phase)`,
//! `producer_commit_w_index(index)`, `consumer_wait_w_index_phase`,
//! `consumer_release_w_index`) are the state-taking methods on that stage and
//! phase.
//!
//! A pipeline a package's subclass makes carries its class, and its
//! overrides are inlined (`subclasses.rs`).
//!
//! For the memory-ordering analysis, a `PipelineTmaAsync` copy names its
//! stage's `full` barrier (`producer_get_barrier(state)`), and
//! `producer_acquire` announces the bytes that copy delivers, so the copy
//! completes the phase the consumer's `consumer_wait` observes.

use cute_ir::api::Api;
use cute_ir::ast::{Call, Expr};
use cute_ir::eval::{self, SmemRef, Value};
use cute_syntax::TextRange;

use super::{mbarrier::tx_bytes, ThreadRun};
use crate::model::*;

impl<'a> ThreadRun<'a> {
    /// Who calls a pipeline method, as `crate::pipeline::action` needs it.
    pub(super) fn pipeline_caller(&self) -> crate::pipeline::Caller {
        crate::pipeline::Caller {
            threads_per_cta: self.threads_per_cta,
            ctas: self.ctas,
            cluster_base: self.cluster_base,
            rank: self.cta - self.cluster_base,
            tid: self.tid,
        }
    }

    pub(super) fn pipeline_call(&mut self, call: &Call, receiver: Option<&Value>, args: &[Value], kwargs: &[(String, Value)]) -> Value {
        if eval::constructs_named_barrier(call) {
            return eval::named_barrier(args, kwargs);
        }
        if let Some(obj @ Value::Object(o)) = receiver {
            if o.class == eval::NAMED_BARRIER {
                let method = match &call.func {
                    Expr::Attr { attr, .. } => attr.clone(),
                    _ => String::new(),
                };
                return self.named_barrier_method(obj, &method, args, call.range);
            }
            if o.class == crate::pipeline::PARTICIPANT || o.class == crate::pipeline::HANDLE {
                let method = match &call.func {
                    Expr::Attr { attr, .. } => attr.clone(),
                    _ => String::new(),
                };
                return self.participant_call(call, obj, &method, args);
            }
            if o.class == crate::pipeline::TMEM_ALLOCATOR {
                let method = match &call.func {
                    Expr::Attr { attr, .. } => attr.clone(),
                    _ => String::new(),
                };
                return self.tmem_method(obj, &method, call.range);
            }
            if o.class == crate::pipeline::ORDER {
                return self.order_method(call, obj, args, kwargs);
            }
        }
        if call.qualname.as_deref().is_some_and(|q| q.ends_with(".TmemAllocator") && Api::lookup(q) == Some(Api::Pipeline)) {
            return self.tmem_allocator(call, kwargs);
        }
        if let Some(v) = self.pipeline_sync(call, args, kwargs) {
            return v;
        }
        let action = crate::pipeline::action(call, receiver, args, kwargs, self.pipeline_caller());
        if let crate::pipeline::Action::NotAPipeline(what) = &action {
            return self.not_a_pipeline(call, what, receiver);
        }
        self.run_pipeline_action(action, call.range)
    }

    /// `pipeline_init_arrive` / `pipeline_init_wait` (the two halves of the
    /// synchronization a `defer_sync=True` pipeline leaves to the kernel) and
    /// `agent_sync`, as the package implements them: over a cluster of more
    /// than one CTA a cluster arrive and wait, else a CTA barrier.
    pub(super) fn pipeline_sync(&mut self, call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> Option<Value> {
        let name = call.name();
        let arg = |key: &str| kwargs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone()).or_else(|| args.first().cloned());
        let clustered = !matches!(arg("cluster_shape_mn"), None | Some(Value::None)) && self.ctas > 1;
        let relaxed = matches!(kwargs.iter().find(|(k, _)| k == "is_relaxed").map(|(_, v)| v), Some(Value::Bool(true)))
            || matches!(args.get(1), Some(Value::Bool(true)));
        let arrive = if relaxed { Api::ClusterArriveRelaxed } else { Api::ClusterArrive };
        match name {
            "pipeline_init_arrive" => {
                if clustered {
                    self.sync_call(arrive, call, &[], &[]);
                }
            }
            "pipeline_init_wait" => {
                let api = if clustered { Api::ClusterWait } else { Api::SyncThreads };
                self.sync_call(api, call, &[], &[]);
            }
            "agent_sync" => {
                let group = call.args.first().or(call.kwargs.iter().find(|(k, _)| k == "group").map(|(_, e)| e)).and_then(Expr::dotted)?;
                if group.ends_with("ThreadBlockCluster") {
                    self.sync_call(arrive, call, &[], &[]);
                    self.sync_call(Api::ClusterWait, call, &[], &[]);
                } else if group.ends_with("ThreadBlock") {
                    self.sync_call(Api::SyncThreads, call, &[], &[]);
                } else {
                    return None;
                }
            }
            _ => return None,
        }
        Some(Value::None)
    }

    /// A pipeline or named-barrier method called on something the kernel
    /// does not create: the kernel is not checked, and the note says what
    /// the receiver is. One handed in by a caller this check does not see is
    /// the common case (a device function checked on its own); calls on what
    /// an unmodelled `create` gave add nothing to its own note.
    pub(super) fn not_a_pipeline(&mut self, call: &Call, what: &str, receiver: Option<&Value>) -> Value {
        let unknown = Value::unknown(crate::pipeline::UNMODELLED_PIPELINE);
        let (holder, method) = match &call.func {
            Expr::Attr { base, attr } => (base.dotted(), attr.as_str()),
            _ => (None, ""),
        };
        // What the method's name says the receiver is, and what of it only
        // its creation tells.
        let (noun, known_at_creation) = if crate::pipeline::is_named_barrier_method(method) {
            ("a named barrier", "its id and thread count")
        } else {
            ("a pipeline", "its stages and groups")
        };
        let why = match (receiver, &holder) {
            (Some(Value::Unknown(why, _)), _) if why.as_ref() == crate::pipeline::UNMODELLED_PIPELINE => return unknown,
            // An argument no launch in the file gives a value.
            (Some(Value::Unknown(why, _)), Some(name)) if why.starts_with("the argument `") || why.as_ref() == format!("`{name}`") => {
                format!("on {noun} it is passed (`{name}`), not one it creates: {known_at_creation} are known only where it is created")
            }
            (Some(Value::Unknown(why, _)), Some(name)) => format!("on `{name}`, which holds {why}, not {noun} this kernel creates"),
            (_, Some(name)) => format!("on `{name}`, which is not {noun} this kernel creates"),
            (_, None) => format!("on something that is not {noun} this kernel creates"),
        };
        self.unresolved(call.range, format!("it synchronizes through `{what}` {why}"));
        unknown
    }

    pub(super) fn run_pipeline_action(&mut self, action: crate::pipeline::Action, site: TextRange) -> Value {
        use crate::pipeline::{Action, InitSync};
        match action {
            Action::Value(v) => v,
            Action::Assumed(v, note) => {
                self.shared.notes.insert(note);
                v
            }
            Action::Create { pipeline, inits, sync, assumed } => {
                // A ring of an assumed stage count is not the one the
                // storage was sized for.
                let sized = assumed.is_none();
                if let Some(note) = assumed {
                    self.shared.notes.insert(note);
                }
                // Warp 0's elected lane initialises every barrier of the ring,
                // named after the storage it lives in (`ab_mbar_ptr`), which
                // tells a kernel's rings apart in a trace.
                let ring = match inits.first().and_then(|(bar, ..)| bar.alloc.rsplit_once('.')) {
                    Some((_, field)) => field.replace("[?]", "").replace("+?", ""),
                    None => "the pipeline".to_string(),
                };
                for (bar, count, in_ring) in &inits {
                    let name = format!("{in_ring} of {ring}");
                    let b = self.ring_barrier(bar, &name);
                    // Warp 0 initialises the ring (see below): its barriers
                    // are where it puts them.
                    if sized && self.tid == 0 {
                        self.note_storage_overrun(bar, b, site);
                    }
                    if self.tid == 0 {
                        self.push_op(Op { kind: OpKind::Init { bar: b, count: *count }, site }, self.warp_point, false);
                    }
                }
                match sync {
                    InitSync::Deferred => {}
                    InitSync::Cta => {
                        let bar = self.pseudo_barrier(BarrierKind::CtaBarrier, self.cta, self.threads_per_cta);
                        let parity = self.generation_arrive(bar, site);
                        self.push(OpKind::Wait { bar, parity }, site);
                    }
                    InitSync::Cluster => {
                        self.cluster_arrive(true, site);
                        self.cluster_wait(site);
                    }
                }
                pipeline
            }
            Action::Each(actions) => {
                for action in actions {
                    self.run_pipeline_action(action, site);
                }
                Value::None
            }
            Action::Wait { bar, phase } => {
                let b = self.ring_barrier(&bar, "");
                self.push(OpKind::Wait { bar: b, parity: (phase & 1) as u8 }, site);
                Value::None
            }
            Action::StaleToken { bar, phase, token_site, tested, waited } => {
                self.shared.stale_tokens.entry(site).or_insert(StaleToken { site, token_site, tested, waited });
                self.run_pipeline_action(Action::Wait { bar, phase }, site)
            }
            Action::Arrive { bar } => {
                let b = self.ring_barrier(&bar, "");
                self.push(OpKind::Arrive { bar: b, count: 1 }, site);
                Value::None
            }
            Action::ArriveOneLane { bar, commit } => {
                let b = self.ring_barrier(&bar, "");
                // The UMMA side's commit and release are `tcgen05.commit`s:
                // the MMAs issued before are done at the arrival.
                if commit && self.lane() == 0 {
                    self.record_commit(b, site);
                }
                self.push_lane0(OpKind::Arrive { bar: b, count: 1 }, site);
                Value::None
            }
            Action::WaitThenArriveOneLane { wait, phase, arrive, bytes } => {
                let w = self.ring_barrier(&wait, "");
                self.push(OpKind::Wait { bar: w, parity: (phase & 1) as u8 }, site);
                self.run_pipeline_action(Action::ArriveTx { bar: arrive, bytes }, site)
            }
            Action::ArriveTx { bar: arrive, bytes } => {
                let a = self.ring_barrier(&arrive, "");
                self.shared.notes.insert(
                    "transaction bytes announced by `producer_acquire` are assumed to arrive".to_string(),
                );
                // The arrive announces the bytes the stage's TMA copy
                // delivers: that copy completes this phase.
                if self.lane() == 0 {
                    let bytes = tx_bytes(&bytes, 1);
                    self.record_mem(MemKind::ExpectTx { barrier: a, arrives: true, bytes }, site);
                }
                self.push_lane0(OpKind::Arrive { bar: a, count: 1 }, site);
                Value::None
            }
            Action::Tail { waits } => {
                for (bar, phase) in waits {
                    let b = self.ring_barrier(&bar, "");
                    self.push(OpKind::Wait { bar: b, parity: (phase & 1) as u8 }, site);
                }
                Value::None
            }
            Action::Nothing => Value::None,
            Action::BulkGroup { method, stages } => {
                self.record_store_pipeline(&method, stages, site);
                Value::None
            }
            Action::Unsupported(what) => {
                self.unresolved(
                    site,
                    format!("it synchronizes through {what}, which the `cutlass.pipeline` model does not cover yet"),
                );
                Value::unknown(crate::pipeline::UNMODELLED_PIPELINE)
            }
            Action::NotAPipeline(what) => {
                self.unresolved(site, format!("it synchronizes through `{what}`, not on a pipeline this kernel creates"));
                Value::unknown(crate::pipeline::UNMODELLED_PIPELINE)
            }
        }
    }

    /// `pipe.producer_tail(state)` acquires each stage in turn and advances
    /// the state it is handed once per stage, in place (the package's loop of
    /// `wait` and `state.advance()`): a second tail on that state waits for
    /// the phases after the ones the first tail saw complete. The tail of
    /// `PipelineUmmaAsync` advances only on the even CTAs of a cluster, under
    /// a condition decided at run time, and is left as it is.
    pub(super) fn advance_after_tail(&mut self, call: &Call, env: &mut eval::Env) {
        let Expr::Attr { base, attr } = &call.func else { return };
        let state = call.args.first().or_else(|| call.kwargs.iter().find(|(k, _)| k == "state").map(|(_, e)| e));
        let (Expr::Name(p), Some(Expr::Name(v))) = (base.as_ref(), state) else { return };
        if attr != "producer_tail" {
            return;
        }
        let Some(stages) = env.get(p).and_then(|pipe| tail_advances(pipe)) else { return };
        for _ in 0..stages {
            let Some(next) = env.get(v).and_then(crate::pipeline::advanced) else { return };
            self.advance_in_stood_in_lanes(v, env);
            env.insert(v.clone(), next);
        }
    }

    /// A barrier of a pipeline's ring (named when the ring is created).
    pub(super) fn ring_barrier(&mut self, s: &SmemRef, name: &str) -> BarrierIx {
        let cta = s.cta.unwrap_or(self.cta);
        // Unnamed (an arrival from a peer CTA may come first, since CTAs
        // run one after the other), it takes the name its ring gives it.
        let named = !name.is_empty();
        let name = name.to_string();
        self.shared.barriers.intern_named((s.alloc.clone(), s.offset, cta, 0), named, || Barrier {
            name,
            cta,
            kind: BarrierKind::Mbarrier,
            preset_count: None,
        })
    }
}

/// How many times a pipeline's `producer_tail` advances the state it is
/// handed: once per stage, except `PipelineUmmaAsync`'s (see
/// [`ThreadRun::advance_after_tail`]); `None` for anything else.
pub(super) fn tail_advances(pipe: &Value) -> Option<i64> {
    let Value::Object(o) = pipe else { return None };
    if o.class != crate::pipeline::PIPELINE || matches!(o.attrs.get("kind"), Some(Value::Str(k)) if k == "PipelineUmmaAsync") {
        return None;
    }
    o.attrs.get("stages").and_then(Value::as_int)
}
