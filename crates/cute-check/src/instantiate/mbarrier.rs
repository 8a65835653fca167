//! mbarriers: `mbarrier_init`, arrives (local, on a peer CTA through
//! `peer_cta_rank_in_cluster`, with an arrive count, announcing transaction
//! bytes), parity waits with the hardware meaning (only the low bit of the
//! phase operand counts) and try-waits, `expect_tx`; the arrivals made
//! when asynchronous work completes, each one arrival of the calling thread:
//! `cp_async_mbarrier_arrive_noinc` (its `cp.async` copies) and
//! `cute.nvgpu.tcgen05.commit` (its MMAs, taken to complete at once; with a
//! multicast `mask`, on the barrier of each CTA the mask names).
//!
//! A barrier is known by its shared-memory allocation, offset and CTA; one that
//! is not allocated in the kernel (a parameter of a helper checked on its own,
//! a pointer from a runtime tensor) has its init and other users elsewhere, and
//! makes the kernel not checked. An arrive releases at CTA scope unless told
//! otherwise; `relaxed=True` releases nothing; the primitives' arrive on a
//! peer's barrier releases at cluster scope, as the package writes its PTX.
//! Transaction bytes announced are assumed to arrive (said as a note); their
//! count is compared with the copies' by `tx-count-mismatch`. A barrier
//! initialised past the end of the `@cute.struct` field it is taken from (by an
//! `mbarrier_init` or a pipeline's creation) is recorded for
//! `mbarrier-init-hazard` (`StorageOverrun`), unless it lands in a following
//! field of mbarriers the file never names (two halves of one array declared
//! apart).

use cute_ir::api::{self, Api};
use cute_ir::ast::{Call, Expr};
use cute_ir::eval::{SmemRef, Value};
use cute_syntax::TextRange;

use super::{calls::is_primitive, calls::primitive_name, ThreadRun};
use crate::model::*;

/// The note of a kernel whose announced transaction bytes are taken to
/// arrive (all but those `st.async` stores deliver, which are counted).
pub(super) const BYTES_ASSUMED: &str = "transaction bytes announced with `mbarrier_arrive_and_expect_tx` are assumed to arrive";

/// Transaction bytes of a value.
pub(crate) fn tx_bytes(v: &Value, lanes: u32) -> TxBytes {
    match v {
        Value::Int(n) if *n >= 0 => TxBytes { value: Some(*n as u64), lanes, how: n.to_string() },
        Value::Unknown(why, _) => TxBytes { value: None, lanes, how: format!("it depends on {why}") },
        _ => TxBytes { value: None, lanes, how: "it is not a number known statically".to_string() },
    }
}

pub(super) fn expr_text(e: &Expr) -> String {
    match e {
        Expr::Name(n) => n.clone(),
        Expr::Attr { .. } => e.dotted().unwrap_or_else(|| "barrier".to_string()),
        Expr::Binary { op, lhs, rhs } => {
            let o = match op {
                cute_ir::ast::BinOp::Add => "+",
                cute_ir::ast::BinOp::Sub => "-",
                _ => "?",
            };
            format!("{} {o} {}", expr_text(lhs), expr_text(rhs))
        }
        Expr::Int(i) => i.to_string(),
        Expr::Call(c) => {
            let f = c.dotted_name().unwrap_or_default();
            if f == "data_ptr" || f == "subview" || f == "get_tensor" {
                if let Expr::Attr { base, .. } = &c.func {
                    return expr_text(base);
                }
            }
            format!("{f}(...)")
        }
        Expr::Subscript { base, index } => format!("{}[{}]", expr_text(base), expr_text(index)),
        _ => "barrier".to_string(),
    }
}

/// Whether a `while` condition is the negation of an mbarrier try-wait on
/// a barrier and a phase (`not mbarrier_try_wait(bar, phase)`, `not
/// prims.mbarrier_try_wait_parity(bar, 0, time_limit=...)`): a loop on it
/// whose body does nothing is the wait on that phase.
pub(super) fn spins_on_try_wait(cond: &Expr) -> bool {
    match cond {
        Expr::Unary { op: cute_ir::ast::UnOp::Not, operand } => matches!(
            operand.as_ref(),
            Expr::Call(c) if matches!(Api::of_call(c), Some(Api::MbarrierTryWait | Api::MbarrierTestWait))
                && c.params.first() == Some(&"mbar_ptr")
        ),
        _ => false,
    }
}

/// The barrier an mbarrier call is handed: `mbar_ptr=` by keyword, else its
/// first argument.
fn barrier_argument(args: &[Value], kwargs: &[(String, Value)]) -> Value {
    kwargs.iter().find(|(k, _)| k == "mbar_ptr").map(|(_, v)| v.clone()).or_else(|| args.first().cloned()).unwrap_or(Value::None)
}

impl<'a> ThreadRun<'a> {
    /// An mbarrier call: `mbarrier_init`, arrives (with a count, on a peer CTA,
    /// announcing transaction bytes), waits and try-waits, `expect_tx`.
    pub(super) fn mbarrier_call(&mut self, api: Api, call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> Value {
        let site = call.range;
        let bar_expr = api::arg(call, "mbar_ptr");
        match api {
            Api::MbarrierInit => {
                let bar_v = barrier_argument(args, kwargs);
                let count = self.arg_value(call, "cnt", &["expected", "count"], args, kwargs);
                let bar = self.barrier_of(&bar_v, bar_expr, site);
                match count.as_ref().and_then(Value::as_int) {
                    Some(c) if c > 0 && c < (1 << 20) => self.push(OpKind::Init { bar, count: c as u32 }, site),
                    _ => self.unresolved(site, "the arrival count of this `mbarrier_init` is not known statically".to_string()),
                }
                if let Value::Smem(s) = &bar_v {
                    self.note_storage_overrun(s, bar, site);
                }
                Value::None
            }
            // The primitives' commit with a `multicast_mask=` is the
            // multicast `tcgen05.commit`; its `group=` (as `cta_group=`)
            // says which MMAs it tracks, not where it arrives.
            Api::MbarrierArrive
                if call.qualname.as_deref().and_then(api::nvgpu_function) == Some("tcgen05.commit")
                    || (primitive_name(call) == Some("tcgen05_commit")
                        && kwargs.iter().any(|(key, v)| key == "multicast_mask" && !matches!(v, Value::None))) =>
            {
                self.tcgen05_commit(call, bar_expr, args, kwargs, site);
                Value::None
            }
            Api::MbarrierArrive | Api::MbarrierArriveAndExpectTx => {
                let bar_v = barrier_argument(args, kwargs);
                let peer = self.arg_value(call, "peer_cta_rank_in_cluster", &[], args, kwargs);
                let target = match (&bar_v, peer.as_ref()) {
                    (Value::Smem(s), Some(p)) if !matches!(p, Value::None) => match p.as_int() {
                        Some(r) if (0..self.ctas as i64).contains(&r) => {
                            Value::Smem(SmemRef { cta: Some(self.cluster_base + r as u32), ..s.clone() })
                        }
                        _ => {
                            self.unresolved(site, "the peer CTA rank of this arrive is not known statically".to_string());
                            return Value::None;
                        }
                    },
                    _ => bar_v,
                };
                if api == Api::MbarrierArriveAndExpectTx {
                    self.shared.notes.insert(BYTES_ASSUMED.to_string());
                }
                let bar = self.barrier_of(&target, bar_expr, site);
                if api == Api::MbarrierArriveAndExpectTx {
                    let bytes = self.expect_tx_bytes(call, args, kwargs);
                    self.record_mem(MemKind::ExpectTx { barrier: bar, arrives: true, bytes }, site);
                }
                // An arrive releases at CTA scope unless told otherwise
                // (`scope=MemScopeKind.CLUSTER`); `relaxed=True` does not
                // release at all. For a remote arrive, CTA scope does not
                // reach the peer's threads. The primitives' arrive on a
                // barrier in the cluster window (`prims.mapa(...)`) releases
                // at cluster scope unless told otherwise, as the package
                // writes its PTX (`mbarrier.arrive.release.cluster`).
                let scope = api::arg(call, "scope").and_then(Expr::dotted_last).and_then(Scope::parse);
                let relaxed = matches!(kwargs.iter().find(|(k, _)| k == "relaxed"), Some((_, Value::Bool(true))));
                let remote = matches!(&target, Value::Smem(SmemRef { cta: Some(c), .. }) if *c != self.cta);
                let default_scope = if remote && is_primitive(call) { Scope::Cluster } else { Scope::Cta };
                if relaxed {
                    self.record_mem(MemKind::ArriveRelease { scope: None }, site);
                } else if remote || scope.is_some() {
                    self.record_mem(MemKind::ArriveRelease { scope: Some(scope.unwrap_or(default_scope)) }, site);
                }
                // `count=` in `cutlass.experimental.primitives`.
                let n = match self.arg_value(call, "arrive_count", &["count"], args, kwargs).filter(|_| api == Api::MbarrierArrive) {
                    None | Some(Value::None) => 1,
                    Some(v) => match v.as_int() {
                        Some(n) if n > 0 => n as u32,
                        _ => {
                            self.unresolved(site, "the arrive count of this arrive is not known statically".to_string());
                            return Value::None;
                        }
                    },
                };
                if primitive_name(call) == Some("tcgen05_commit") {
                    self.record_commit(bar, site);
                }
                self.push(OpKind::Arrive { bar, count: n }, site);
                Value::None
            }
            Api::MbarrierWait => {
                self.mbarrier_wait(call, bar_expr, args, kwargs, site);
                Value::None
            }
            // The try-wait a spin loop repeats until it succeeds: a wait
            // (see `spins_on_try_wait`), after which it gives true.
            Api::MbarrierTryWait | Api::MbarrierTestWait if self.try_wait_blocks => {
                self.try_wait_blocks = false;
                self.mbarrier_wait(call, bar_expr, args, kwargs, site);
                Value::Bool(true)
            }
            Api::MbarrierExpectTx => {
                // Bytes without an arrive: recorded for the byte count only,
                // on barriers the kernel allocates (the rest is not
                // synchronization the model needs).
                let bar_v = barrier_argument(args, kwargs);
                let peer = self.arg_value(call, "peer_cta_rank_in_cluster", &[], args, kwargs);
                let target = match (&bar_v, peer.as_ref().map(|p| (p, p.as_int()))) {
                    (Value::Smem(_), None | Some((Value::None, _))) => bar_v,
                    (Value::Smem(s), Some((_, Some(r)))) if (0..self.ctas as i64).contains(&r) => {
                        Value::Smem(SmemRef { cta: Some(self.cluster_base + r as u32), ..s.clone() })
                    }
                    _ => return Value::None,
                };
                let bar = self.barrier_of(&target, bar_expr, site);
                let bytes = self.expect_tx_bytes(call, args, kwargs);
                self.record_mem(MemKind::ExpectTx { barrier: bar, arrives: false, bytes }, site);
                Value::None
            }
            Api::MbarrierTryWait | Api::MbarrierTestWait => Value::unknown("the result of a try-wait"),
            _ => Value::None,
        }
    }

    /// The CTAs of the cluster a multicast mask names (bit `r`: cluster rank
    /// `r`), as CTA indices; why not, when the mask is not known statically
    /// or names a rank the cluster does not have.
    pub(super) fn masked_ctas(&self, mask: &Value) -> Result<Vec<u32>, String> {
        let ctas = self.ctas;
        match mask.as_int().filter(|&m| m > 0 && m < (1i64 << ctas)) {
            Some(m) => Ok((0..ctas).filter(|r| m >> r & 1 == 1).map(|r| self.cluster_base + r).collect()),
            None => Err(match mask {
                Value::Unknown(why, _) => format!("it depends on {why}"),
                Value::Int(m) => format!("it is {m}, in a cluster of {ctas} CTA{}", if ctas == 1 { "" } else { "s" }),
                _ => "it is not a number known statically".to_string(),
            }),
        }
    }

    /// `cute.nvgpu.tcgen05.commit(mbar_ptr, mask=None, cta_group=...)` (and
    /// `prims.tcgen05_commit(addr, multicast_mask=..., group=...)`): one
    /// arrival by the calling thread on `mbar_ptr`, or with a `mask` on the
    /// barrier at the same offset of each CTA of the cluster whose bit is
    /// set (an arrival on a peer's barrier releases at cluster scope, as the
    /// multicast commit's address is in the cluster window). It arrives once
    /// the MMAs the thread issued before complete; the model makes the
    /// arrival here, and records the commit (`MemKind::Tcgen05Commit`) for
    /// the memory analysis, which has those MMAs done at that arrival.
    /// A mask not known statically, or naming CTAs the cluster does not
    /// have, makes the kernel not checked.
    fn tcgen05_commit(&mut self, call: &Call, bar_expr: Option<&Expr>, args: &[Value], kwargs: &[(String, Value)], site: TextRange) {
        let bar_v = self.arg_value(call, "mbar_ptr", &[], args, kwargs).unwrap_or(Value::None);
        let targets = match self.arg_value(call, "mask", &["multicast_mask"], args, kwargs) {
            None | Some(Value::None) => vec![bar_v],
            Some(mask) => {
                let named = match self.masked_ctas(&mask) {
                    Ok(ctas) => ctas,
                    Err(why) => {
                        self.unresolved(site, format!("the multicast mask of this `tcgen05.commit` does not name CTAs of the cluster ({why})"));
                        return;
                    }
                };
                let Value::Smem(s) = &bar_v else {
                    self.barrier_of(&bar_v, bar_expr, site);
                    return;
                };
                named.into_iter().map(|cta| Value::Smem(SmemRef { cta: Some(cta), ..s.clone() })).collect()
            }
        };
        for target in targets {
            let bar = self.barrier_of(&target, bar_expr, site);
            if matches!(&target, Value::Smem(SmemRef { cta: Some(c), .. }) if *c != self.cta) {
                self.record_mem(MemKind::ArriveRelease { scope: Some(Scope::Cluster) }, site);
            }
            self.record_commit(bar, site);
            self.push(OpKind::Arrive { bar, count: 1 }, site);
        }
    }

    /// A `tcgen05.commit` on `bar`, recorded for the memory analysis when
    /// the thread has issued MMAs on tensor memory (it says when they are
    /// done); otherwise there is nothing for it to say.
    pub(super) fn record_commit(&mut self, bar: BarrierIx, site: TextRange) {
        if self.issued_mma {
            self.record_mem(MemKind::Tcgen05Commit { barrier: bar }, site);
        }
    }

    /// A wait on an mbarrier's phase (`mbarrier_wait(bar, phase)`, or the
    /// try-wait a spin loop repeats).
    pub(super) fn mbarrier_wait(&mut self, call: &Call, bar_expr: Option<&Expr>, args: &[Value], kwargs: &[(String, Value)], site: TextRange) {
        let bar_v = barrier_argument(args, kwargs);
        let phase = self.arg_value(call, "phase", &[], args, kwargs);
        let bar = self.barrier_of(&bar_v, bar_expr, site);
        match phase.as_ref().and_then(Value::as_int) {
            // Only the low bit of the phase operand is meaningful.
            Some(p) => self.push(OpKind::Wait { bar, parity: (p & 1) as u8 }, site),
            None => self.unresolved(site, format!("the parity passed to this `{}` is not known statically", call.name())),
        }
    }

    pub(super) fn barrier_of(&mut self, v: &Value, expr: Option<&Expr>, site: TextRange) -> BarrierIx {
        // Spelled out only when a name is needed (every lane of every round
        // comes here).
        let text = || expr.map(expr_text).unwrap_or_else(|| "barrier".to_string());
        let (key, cta) = match v {
            Value::Smem(SmemRef { alloc, offset, cta, .. }) => {
                let cta = cta.unwrap_or(self.cta);
                ((alloc.clone(), *offset, cta, 0u8), cta)
            }
            other => {
                // A barrier that does not come from shared memory allocated
                // in this kernel (a parameter of a helper checked on its own,
                // a pointer from a runtime tensor): its init and its other
                // users are elsewhere, so nothing can be concluded here.
                let why = match other { Value::Unknown(w, _) => w.to_string(), _ => "a non-pointer".to_string() };
                let text = text();
                self.unresolved(site, format!("the barrier `{text}` is not allocated in this kernel ({why})"));
                ((format!("`{text}`").into(), 0, self.cta, 1u8), self.cta)
            }
        };
        let in_kernel = self.inline_depth == 0;
        self.shared.barriers.intern_named(key, in_kernel, || Barrier { name: text(), cta, kind: BarrierKind::Mbarrier, preset_count: None })
    }

    /// The bytes of an `expect_tx` call: each lane that executes it adds
    /// them, so a converged warp adds them once per lane.
    pub(super) fn expect_tx_bytes(&mut self, call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> TxBytes {
        let lanes = if self.converged() { self.warp_lanes() } else { 1 };
        let v = self.arg_value(call, "bytes", &["txcount"], args, kwargs).unwrap_or(Value::unknown("a missing byte count"));
        tx_bytes(&v, lanes)
    }

    /// Records the mbarrier `bar` at `s` when it lies past the end of the
    /// shared-storage field it is taken from, whose element count is known
    /// (`storage.mbar` of a struct allocated in the kernel).
    ///
    /// Past the end of its field, a barrier may land in the fields that
    /// follow it on purpose: CUTLASS declares `acc_full_mbar_ptr` and
    /// `acc_empty_mbar_ptr` side by side and hands the first to a pipeline
    /// that initialises both halves from it. A barrier that lands in a field
    /// of mbarriers the kernel never names is that layout, and not
    /// reported.
    pub(super) fn note_storage_overrun(&mut self, s: &SmemRef, bar: BarrierIx, site: TextRange) {
        let Some((parent, field)) = s.alloc.rsplit_once('.') else { return };
        let Some(Value::Object(storage)) = self.structs.get(parent).cloned() else { return };
        // The element count of a field of 64-bit elements, one mbarrier
        // each (the model counts a barrier pointer's offsets in mbarriers).
        let mbarriers = |f: &str| {
            storage
                .attrs
                .get(f)
                .and_then(cute_ir::layout::dtype_of)
                .filter(|(_, width)| *width == 64)
                .and_then(|_| storage.attrs.get(&cute_ir::layout::struct_len_key(f)).and_then(Value::as_int))
                .filter(|&n| n >= 0)
        };
        let Some(len) = mbarriers(field).filter(|&n| s.offset < 0 || s.offset >= n) else { return };
        if s.offset >= len {
            let fields: Vec<String> = match storage.attrs.get(cute_ir::layout::STRUCT_FIELDS) {
                Some(Value::Tuple(names)) => names.iter().filter_map(|n| if let Value::Str(n) = n { Some(n.clone()) } else { None }).collect(),
                _ => Vec::new(),
            };
            let mut past = s.offset - len;
            for next in fields.iter().skip_while(|f| *f != field).skip(1) {
                let Some(n) = mbarriers(next).filter(|_| !self.names_field(next)) else { break };
                if past < n {
                    return;
                }
                past -= n;
            }
        }
        let barrier = self.shared.barriers.list[bar as usize].name.clone();
        self.shared.storage_overruns.entry((site, s.offset)).or_insert(crate::model::StorageOverrun {
            site,
            barrier,
            field: field.to_string(),
            len,
            index: s.offset,
        });
    }

    /// Whether some code of the file reads the attribute `field`
    /// (`storage.field`).
    pub(super) fn names_field(&self, field: &str) -> bool {
        let mut named = false;
        for f in &self.module.functions {
            cute_ir::ast::for_each_expr(&f.body, &mut |e| named |= e.reads_attribute(field));
        }
        named
    }
}
