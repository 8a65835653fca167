//! CTA and named barriers: `sync_threads`,
//! `barrier(barrier_id=, number_of_threads=)`, `barrier_arrive`, the functions
//! of `cutlass.pipeline` that call them, and `cutlass.pipeline.NamedBarrier`
//! objects (built in the kernel or in `__init__`), which are their id and
//! thread count: `arrive()` registers, `arrive_and_wait()`, `wait()` and
//! `sync()` register and wait, and the `_w_index` forms add the index to the
//! id.
//!
//! The 16 hardware barriers are counted in generations per thread: the parity a
//! thread's wait observes is that of the generation it arrived in. Every
//! registration is also recorded with its id, count, round and kind
//! ([`BarrierUse`]) for the four named-barrier rules. `bar.sync` and
//! `bar.arrive` are aligned (every lane of the warp must reach them);
//! `barrier_arrive(aligned=False)` and the `_unaligned` forms are not. A count
//! that is not known, not valid, or larger than an assumed block makes the
//! kernel not checked.

use cute_ir::api::{self, Api};
use cute_ir::ast::Call;
use cute_ir::eval::{self, Value};
use cute_syntax::TextRange;

use super::{calls::primitive_name, ThreadRun};
use crate::model::*;

impl<'a> ThreadRun<'a> {
    /// `sync_threads` and the named barriers (`barrier`, `barrier_arrive`).
    pub(super) fn barrier_call(&mut self, api: Api, call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> Value {
        let site = call.range;
        match api {
            Api::SyncThreads => {
                self.record_use(0, self.threads_per_cta, true, true, true, site);
                let bar = self.pseudo_barrier(BarrierKind::CtaBarrier, self.cta, self.threads_per_cta);
                let parity = self.generation_arrive(bar, site);
                self.push(OpKind::Wait { bar, parity }, site);
                Value::None
            }
            Api::Barrier | Api::BarrierArrive => {
                let id = self.arg_value(call, "barrier_id", &[], args, kwargs);
                // `thread_count` in `cutlass.experimental.primitives`,
                // `num_threads` in `cutlass.pipeline`'s functions.
                let n = self.arg_value(call, "number_of_threads", &["thread_count", "num_threads"], args, kwargs).filter(|v| !matches!(v, Value::None));
                // `bar.sync` is aligned; `barrier_arrive` is `bar.arrive`
                // (aligned) unless `aligned=False` makes it
                // `barrier.cta.arrive`. The primitives say which in their
                // name (`barrier_cta_sync_aligned` is `bar.sync`), as
                // `cutlass.pipeline`'s do (`arrive_unaligned`).
                let pipeline_function = call.qualname.as_deref().and_then(api::pipeline_named_barrier).map(|(name, _)| name);
                let aligned = match (primitive_name(call), pipeline_function) {
                    (Some(name), _) => name.ends_with("_aligned"),
                    (None, Some(name)) => !name.ends_with("_unaligned"),
                    (None, None) => !matches!(kwargs.iter().find(|(k, _)| k == "aligned"), Some((_, Value::Bool(false)))),
                };
                self.named_barrier(id, n, api == Api::Barrier, aligned, site)
            }
            _ => Value::None,
        }
    }

    /// `barrier(barrier_id=, number_of_threads=)` (`waits`) or
    /// `barrier_arrive(...)`: CTA barrier 0 or a named barrier.
    pub(super) fn named_barrier(&mut self, id: Option<Value>, n: Option<Value>, waits: bool, aligned: bool, site: TextRange) -> Value {
        let id = match id {
            None | Some(Value::None) => 0,
            Some(v) => match v.as_int() {
                Some(i) => i,
                None => {
                    self.unresolved(site, "the id of this named barrier is not known statically".to_string());
                    return Value::None;
                }
            },
        };
        // Naming no thread count, any id involves every thread of the CTA.
        let cta_wide = matches!(n, None | Some(Value::None));
        let count = match n {
            None | Some(Value::None) => self.threads_per_cta,
            Some(v) => match v.as_int().and_then(|c| u32::try_from(c).ok()) {
                Some(c) if c > 0 && c <= 1 << 16 => c,
                _ => {
                    let what = match v.as_int() {
                        Some(c) => format!("the thread count {c} of this named barrier is not a valid count"),
                        None => "the thread count of this named barrier is not known statically".to_string(),
                    };
                    self.unresolved(site, what);
                    return Value::None;
                }
            },
        };
        if !(0..16).contains(&id) {
            self.unresolved(site, format!("the named barrier id {id} is outside the 16 hardware barriers (0 to 15)"));
            return Value::None;
        }
        if self.shared.block_assumed && count > self.threads_per_cta {
            // The code itself says the assumed block size is wrong.
            self.unresolved(
                site,
                format!(
                    "the block size of its launch is not known, and this barrier names {count} threads, more than the {} per CTA assumed",
                    self.threads_per_cta
                ),
            );
            return Value::None;
        }
        self.record_use(id, count, waits, aligned, cta_wide, site);
        let kind = if id == 0 && count == self.threads_per_cta { BarrierKind::CtaBarrier } else { BarrierKind::NamedBarrier(id) };
        let bar = self.pseudo_barrier(kind, self.cta, count);
        let parity = self.generation_arrive(bar, site);
        if waits {
            self.push(OpKind::Wait { bar, parity }, site);
        }
        Value::None
    }

    /// A method of a `cutlass.pipeline.NamedBarrier` object, as the package
    /// implements it (`wait` and `sync` arrive and wait; the `_w_index` forms
    /// use the barrier `barrier_id + index`).
    pub(super) fn named_barrier_method(&mut self, obj: &Value, method: &str, args: &[Value], site: TextRange) -> Value {
        let Value::Object(o) = obj else { return Value::None };
        let id = o.attrs.get("barrier_id").cloned();
        let n = o.attrs.get("num_threads").cloned();
        let with_index = |id: Option<Value>| match (id, args.first()) {
            (Some(id), Some(i)) => Some(eval::binary(cute_ir::ast::BinOp::Add, &id, i)),
            (id, _) => id,
        };
        match method {
            "arrive" => self.named_barrier(id, n, false, true, site),
            "arrive_unaligned" => self.named_barrier(id, n, false, false, site),
            // `wait_unaligned` is a `cute.arch.barrier` (`bar.sync`) too.
            "wait" | "wait_unaligned" | "arrive_and_wait" | "sync" => self.named_barrier(id, n, true, true, site),
            "arrive_w_index" => self.named_barrier(with_index(id), n, false, true, site),
            "arrive_and_wait_w_index" => self.named_barrier(with_index(id), n, true, true, site),
            "get_barrier" => id.unwrap_or(Value::unknown("a named barrier id")),
            _ => {
                self.unresolved(site, format!("it synchronizes through `NamedBarrier.{method}`, which is not modelled"));
                Value::None
            }
        }
    }

    pub(super) fn pseudo_barrier(&mut self, kind: BarrierKind, cta: u32, count: u32) -> BarrierIx {
        let name = match &kind {
            BarrierKind::CtaBarrier => "sync_threads".to_string(),
            BarrierKind::NamedBarrier(id) => format!("named barrier {id}"),
            BarrierKind::ClusterBarrier => "cluster barrier".to_string(),
            BarrierKind::Mbarrier => "mbarrier".to_string(),
        };
        let tag = match &kind {
            BarrierKind::CtaBarrier => 2,
            BarrierKind::NamedBarrier(_) => 3,
            BarrierKind::ClusterBarrier => 4,
            BarrierKind::Mbarrier => 5,
        };
        let id = if let BarrierKind::NamedBarrier(id) = kind { id } else { 0 };
        self.shared.barriers.intern((name.as_str().into(), id, cta, tag), || Barrier { name, cta, kind, preset_count: Some(count) })
    }

    /// Arrive on a generation-counted barrier and return the parity to wait on.
    pub(super) fn generation_arrive(&mut self, bar: BarrierIx, site: TextRange) -> u8 {
        let g = self.generation.entry(bar).or_insert(0);
        let parity = (*g % 2) as u8;
        *g += 1;
        self.push(OpKind::Arrive { bar, count: 1 }, site);
        parity
    }

    /// Note a registration with hardware barrier `id` by this lane.
    pub(super) fn record_use(&mut self, id: i64, count: u32, sync: bool, aligned: bool, cta_wide: bool, site: TextRange) {
        let r = self.rounds.entry(id).or_insert(0);
        let round = *r;
        *r += 1;
        let key = (self.cta, id, site, round, count, sync, aligned, cta_wide);
        self.shared.barrier_uses.entry(key).or_default().push(self.tid);
        self.uses.push(key);
    }
}
