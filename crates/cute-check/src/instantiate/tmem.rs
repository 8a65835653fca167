//! Tensor memory: `TmemAllocator` and its methods, and the `cute.arch`
//! functions they call (`alloc_tmem`, `retrieve_tmem_ptr`, `dealloc_tmem`).
//!
//! Its lifetime is recorded for the memory analysis (`memory::tmem`): the
//! warp that allocates (`MemKind::TmemAlloc`) and the one that frees
//! (`MemKind::TmemFree`: the allocator warp, for `TmemAllocator.free`, which
//! every thread may call), and the pointer the allocation is retrieved
//! through, a view of [`eval::TMEM`], which `cute.gemm` and `cute.copy` then
//! name as tensor memory (`instantiate/memory.rs`).
//!
//! A one-CTA allocator synchronizes only through `barrier_for_retrieve`
//! (`wait_for_alloc` is its `arrive_and_wait`). A two-CTA one
//! (`is_two_cta=True`: the CTAs of ranks `2i` and `2i + 1` share their tensor
//! memory) also has its allocator warp's elected lane initialise an mbarrier of
//! 32 arrivals, on which the allocator warps of the pair meet before
//! deallocating: its `free()` has each lane of that warp arrive on the peer's
//! (rank `^ 1`) and wait on its own, as the package does. Allocating,
//! retrieving the pointer, relinquishing the permit and a one-CTA `free`
//! synchronize nothing. Under one CTA per cluster, tcgen05 MMAs whose CTA group
//! is not known span one CTA (said as a note).

use cute_ir::api::Api;
use cute_ir::ast::Call;
use cute_ir::layout::SINGLE_CTA_MMA;
use cute_ir::eval::{self, SmemRef, Value};
use cute_syntax::TextRange;

use super::ThreadRun;
use crate::model::*;

impl<'a> ThreadRun<'a> {
    /// `TmemAllocator(alloc_result_dst_smem_ptr, *, barrier_for_retrieve=,
    /// allocator_warp_id=0, is_two_cta=False, ...)`. A one-CTA allocator
    /// synchronizes only through `barrier_for_retrieve`. A two-CTA one (the
    /// CTAs of ranks `2i` and `2i + 1` share their tensor memory) also has
    /// its allocator warp's elected lane initialise an mbarrier of 32
    /// arrivals (`two_cta_tmem_dealloc_mbar_ptr`, or one of its own), on
    /// which the allocator warps of the pair meet before deallocating (see
    /// `tmem_method`).
    pub(super) fn tmem_allocator(&mut self, call: &Call, kwargs: &[(String, Value)]) -> Value {
        let kw = |k: &str| kwargs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        let two_cta = kw("is_two_cta").unwrap_or(Value::Bool(false));
        let warp = kw("allocator_warp_id").unwrap_or(Value::Int(0));
        let mut dealloc = Value::None;
        match two_cta.as_bool() {
            Some(false) => {}
            Some(true) if self.ctas % 2 == 1 => {
                self.unresolved(
                    call.range,
                    format!(
                        "it makes a two-CTA `TmemAllocator` (`is_two_cta=True`) in a cluster of {} CTA{}, which has no pairs of CTAs",
                        self.ctas,
                        if self.ctas == 1 { "" } else { "s" }
                    ),
                );
                return Value::unknown("a two-CTA `TmemAllocator`");
            }
            Some(true) => {
                let bar = match kw("two_cta_tmem_dealloc_mbar_ptr") {
                    None | Some(Value::None) => SmemRef::new(format!("tmem_dealloc@{}", call.range.start)),
                    Some(Value::Smem(s)) => s,
                    Some(other) => {
                        let why = match other {
                            Value::Unknown(w, _) => w.to_string(),
                            _ => "not a shared-memory pointer".to_string(),
                        };
                        self.unresolved(call.range, format!("the deallocation barrier of this two-CTA `TmemAllocator` is not known statically ({why})"));
                        return Value::unknown("a two-CTA `TmemAllocator`");
                    }
                };
                let Some(w) = warp.as_int() else {
                    self.unresolved(call.range, "the allocator warp of this two-CTA `TmemAllocator` is not known statically".to_string());
                    return Value::unknown("a two-CTA `TmemAllocator`");
                };
                let initialises = !matches!(kw("initialize_mbarrier"), Some(Value::Bool(false)));
                if initialises && i64::from(self.tid) == w * 32 {
                    let b = self.ring_barrier(&bar, "TmemAllocator deallocation barrier");
                    self.push_op(Op { kind: OpKind::Init { bar: b, count: 32 }, site: call.range }, self.warp_point, false);
                }
                dealloc = Value::Smem(bar);
            }
            None if self.ctas == 1 => {
                self.shared.notes.insert(
                    "whether a `TmemAllocator` spans two CTAs (`is_two_cta`) is not known statically: with one CTA per cluster there is no peer CTA, so it spans one".to_string(),
                );
            }
            None => {
                self.unresolved(
                    call.range,
                    "whether this `TmemAllocator` spans two CTAs (`is_two_cta`) is not known statically".to_string(),
                );
                return Value::unknown("a `TmemAllocator`");
            }
        }
        let barrier = kw("barrier_for_retrieve").unwrap_or(Value::unknown("the `barrier_for_retrieve` of a `TmemAllocator`"));
        Value::Object(std::sync::Arc::new(eval::Object {
            class: crate::pipeline::TMEM_ALLOCATOR.to_string(),
            attrs: [("barrier".to_string(), barrier), ("warp".to_string(), warp), ("dealloc".to_string(), dealloc)]
                .into_iter()
                .collect(),
        }))
    }

    /// A method of a `TmemAllocator`, as the package implements it:
    /// `wait_for_alloc` (and `reserve`, which allocates first) is
    /// `barrier_for_retrieve.arrive_and_wait()`; `free` of a two-CTA
    /// allocator is the pair's handshake on the deallocation barrier.
    /// Allocating, retrieving the pointer, relinquishing the permit and a
    /// one-CTA `free` are per-warp operations that synchronize nothing.
    pub(super) fn tmem_method(&mut self, obj: &Value, method: &str, site: TextRange) -> Value {
        match method {
            "wait_for_alloc" | "reserve" => {
                if method == "reserve" {
                    if let Some(warp) = self.allocator_warp(obj, site) {
                        if i64::from(self.tid / 32) == warp {
                            self.record_mem(MemKind::TmemAlloc, site);
                        }
                    }
                }
                let barrier = crate::pipeline::attribute(obj, "barrier").unwrap_or(Value::None);
                match &barrier {
                    Value::Object(o) if o.class == eval::NAMED_BARRIER => {
                        self.named_barrier_method(&barrier, "arrive_and_wait", &[], site);
                    }
                    other => {
                        let why = match other {
                            Value::Unknown(w, _) => w.to_string(),
                            _ => "not a `NamedBarrier`".to_string(),
                        };
                        self.unresolved(site, format!("the `barrier_for_retrieve` of this `TmemAllocator` is not known statically ({why})"));
                    }
                }
                Value::unknown("a tensor memory pool")
            }
            // Two CTAs deallocate together: each lane of the allocator
            // warp arrives on the peer's barrier (rank ^ 1), then waits for
            // the peer's on its own.
            "free" => {
                self.forget_retrieve_for_free(site);
                let Some(warp) = self.allocator_warp(obj, site) else { return Value::None };
                if let Some(Value::Smem(bar)) = crate::pipeline::attribute(obj, "dealloc") {
                    if i64::from(self.tid / 32) == warp {
                        let peer = self.cluster_base + ((self.cta - self.cluster_base) ^ 1);
                        let at_peer = self.ring_barrier(&SmemRef { cta: Some(peer), ..bar.clone() }, "");
                        self.push(OpKind::Arrive { bar: at_peer, count: 1 }, site);
                        let own = self.ring_barrier(&bar, "");
                        self.push(OpKind::Wait { bar: own, parity: 0 }, site);
                    }
                }
                if i64::from(self.tid / 32) == warp {
                    self.record_mem(MemKind::TmemFree, site);
                }
                Value::None
            }
            "allocate" => {
                if let Some(warp) = self.allocator_warp(obj, site) {
                    if i64::from(self.tid / 32) == warp {
                        self.record_mem(MemKind::TmemAlloc, site);
                    }
                }
                Value::None
            }
            "relinquish_alloc_permit" | "check_valid_num_columns" => Value::None,
            "retrieve_ptr" => {
                self.record_mem(MemKind::TmemRetrieve, site);
                Value::Smem(SmemRef::new(eval::TMEM))
            }
            _ => {
                self.unresolved(site, format!("it synchronizes through `TmemAllocator.{method}`, which is not modelled"));
                Value::None
            }
        }
    }

    /// A pointer read back only to be handed to the free it is an argument
    /// of (`tmem.free(tmem.retrieve_ptr(...))`) addresses nothing: the
    /// allocator warp reads it after its own allocation, and in the other
    /// warps `free` does nothing. Its read is not one to order after the
    /// allocation.
    fn forget_retrieve_for_free(&mut self, free: TextRange) {
        if self.memory.last().is_some_and(|m| matches!(m.kind, MemKind::TmemRetrieve) && free.start <= m.site.start && m.site.end <= free.end) {
            self.memory.pop();
        }
    }

    /// The allocator warp of a `TmemAllocator`: the one that allocates and
    /// frees. Not known statically, which warp frees is not followed, and
    /// the kernel is not checked.
    fn allocator_warp(&mut self, obj: &Value, site: TextRange) -> Option<i64> {
        let warp = crate::pipeline::attribute(obj, "warp").and_then(|w| w.as_int());
        if warp.is_none() {
            self.unresolved(site, "the allocator warp of this `TmemAllocator` is not known statically: which warp allocates and frees its tensor memory is not followed".to_string());
        }
        warp
    }

    /// `cute.arch.alloc_tmem` and `dealloc_tmem` (and the primitives'
    /// `tcgen05_alloc`, `tcgen05_dealloc`): the calling warp allocates or
    /// frees tensor memory; `retrieve_tmem_ptr`: a pointer to it. A
    /// `tcgen05` instruction of the primitives uses the CTA's tensor memory:
    /// an MMA asynchronously (done at a later `tcgen05_commit`), a load or
    /// store as its thread goes on (`tcgen05_cp` and `tcgen05_shift` are
    /// taken so too). `fence_view_async_tmem_load` / `_store` (the
    /// primitives' `tcgen05_wait`) complete the thread's loads or stores.
    pub(super) fn tmem_call(&mut self, api: Api, call: &Call) -> Value {
        let site = call.range;
        match api {
            Api::TmemAlloc => self.record_mem(MemKind::TmemAlloc, site),
            Api::TmemDealloc => {
                self.forget_retrieve_for_free(site);
                self.record_mem(MemKind::TmemFree, site);
            }
            Api::TmemRetrieve => {
                self.record_mem(MemKind::TmemRetrieve, site);
                return Value::Smem(SmemRef::new(eval::TMEM));
            }
            Api::TmemUse => {
                let name = call.qualname.as_deref().and_then(cute_ir::api::primitive_name).unwrap_or("");
                let mma = name.starts_with("tcgen05_mma");
                if mma {
                    self.issued_mma = true;
                }
                let register = matches!(name, "tcgen05_ld" | "tcgen05_ld_red" | "tcgen05_st");
                self.record_mem(MemKind::TmemAccess { mma, write: name != "tcgen05_ld" && name != "tcgen05_ld_red", register }, site);
                if name.starts_with("tcgen05_ld") {
                    return Value::unknown("registers loaded from tensor memory");
                }
            }
            Api::TmemFence => {
                // By name (`fence_view_async_tmem_load`), else by the kind
                // it is handed (`"load"`, `Tcgen05WaitKind.STORE`): both
                // when that is not known.
                let name = call.name();
                let kind = if name.ends_with("_load") {
                    "load".to_string()
                } else if name.ends_with("_store") {
                    "store".to_string()
                } else {
                    match cute_ir::api::arg(call, "kind") {
                        Some(cute_ir::ast::Expr::Str(s)) => s.to_ascii_lowercase(),
                        Some(e) => e.dotted().unwrap_or_default().to_ascii_lowercase(),
                        None => String::new(),
                    }
                };
                let ld = !kind.ends_with("store") && !kind.ends_with("st");
                let st = !kind.ends_with("load") && !kind.ends_with("ld");
                self.record_mem(MemKind::TmemWait { ld, st }, site);
            }
            _ => return Value::Smem(SmemRef::new(eval::TMEM)),
        }
        Value::None
    }

    /// With one CTA per cluster, the tcgen05 MMAs whose CTA group is not
    /// known span one CTA (said once).
    pub(super) fn single_cta_mmas(&mut self, v: Value) -> Value {
        if self.ctas != 1 {
            return v;
        }
        match cute_ir::layout::with_single_cta_mmas(&v, 0) {
            Some(new) => {
                self.shared.notes.insert(SINGLE_CTA_MMA.to_string());
                new
            }
            None => v,
        }
    }
}
