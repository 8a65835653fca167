//! The cluster: `cluster_arrive`, `cluster_arrive_relaxed` (no release),
//! `cluster_wait` (the generation of the thread's last arrive), and `mapa`
//! (`map_shared_rsrc`) onto a peer CTA's shared memory.
//!
//! The cluster barrier counts every thread of every CTA of the cluster. A peer
//! rank outside the cluster makes the kernel not checked; one computed at run
//! time gives an unknown pointer.
//!
//! `store_async_dsmem(smem_ptr, value, mbar_ptr, peer_cta_rank)` (`st.async`)
//! is a store into the peer CTA's shared memory at `smem_ptr`'s offset that
//! completes later, delivering its bytes to the peer's mbarrier at
//! `mbar_ptr`'s offset. Unlike a TMA load's, whose bytes are announced by
//! the thread that issues it and are assumed to arrive, its bytes come from
//! another CTA than the one that announces them, and the phase they complete
//! is what orders the two CTAs: the synchronization model counts them. Each
//! byte is one arrival (`OpKind::Arrive` of 4 per 32-bit value, per lane of
//! a converged warp), released at cluster scope as PTX says the completion
//! is, and the barrier's count is raised by the bytes announced on it per
//! phase (`st_async_bytes_as_arrivals`, once every thread has run). The
//! memory analysis sees a write into the peer's buffer by a copy of its own
//! (`MemKind::AsyncCopy` by `AsyncOp::StAsync`, in the generic proxy: PTX
//! performs `st.async` there), which reaches the peer's waiters through the
//! phase (`MemKind::CopyTx` names the bytes too). It writes the whole buffer
//! as far as the analysis knows: the element a lane's pointer names is not
//! followed. A peer rank, a pointer or a barrier that is not known
//! statically makes the kernel not checked, and so do announced bytes that
//! are not known or do not add up to what the stores deliver.

use cute_ir::api::Api;
use cute_ir::ast::{Call, Expr};
use cute_ir::eval::{SmemRef, Value};
use cute_syntax::TextRange;

use super::ThreadRun;
use crate::model::*;

impl<'a> ThreadRun<'a> {
    /// The cluster barrier and `mapa` onto a peer CTA's shared memory.
    pub(super) fn cluster_call(&mut self, api: Api, call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> Value {
        let site = call.range;
        match api {
            Api::ClusterArrive | Api::ClusterArriveRelaxed => {
                self.cluster_arrive(api == Api::ClusterArriveRelaxed, site);
                Value::None
            }
            Api::ClusterWait => {
                self.cluster_wait(site);
                Value::None
            }
            Api::MapSharedCluster => match (args.first(), args.get(1).or(kwargs.first().map(|(_, v)| v))) {
                (Some(Value::Smem(s)), Some(rank)) => match rank.as_int() {
                    Some(r) if (0..self.ctas as i64).contains(&r) => {
                        Value::Smem(SmemRef { cta: Some(self.cluster_base + r as u32), ..s.clone() })
                    }
                    Some(r) => {
                        self.unresolved(site, format!("the peer rank {r} is outside the cluster of {} CTAs", self.ctas));
                        Value::unknown("a peer rank outside the cluster")
                    }
                    None => Value::unknown("a peer rank computed at run time"),
                },
                _ => Value::unknown("a mapped shared-memory pointer"),
            },
            _ => Value::None,
        }
    }

    /// `store_async_dsmem(smem_ptr, value, mbar_ptr, peer_cta_rank)`: the
    /// peer's buffer written by a copy that completes on the peer's barrier
    /// (see the module's doc).
    pub(super) fn store_async_dsmem(&mut self, call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> Value {
        let site = call.range;
        let what = "`cute.arch.store_async_dsmem`";
        let rank = self.arg_value(call, "peer_cta_rank", &[], args, kwargs);
        let peer = match rank.as_ref().and_then(Value::as_int) {
            Some(r) if (0..self.ctas as i64).contains(&r) => self.cluster_base + r as u32,
            Some(r) => {
                self.unresolved(site, format!("{what} stores to peer rank {r}, outside the cluster of {} CTAs", self.ctas));
                return Value::None;
            }
            None => {
                self.unresolved(site, format!("{what} stores to a peer CTA whose rank is not known statically, so which CTA's buffer it writes and whose barrier it completes are not modelled"));
                return Value::None;
            }
        };
        let on_peer = |v: Option<Value>| match v {
            Some(Value::Smem(s)) if !s.is_tmem() => Some(Value::Smem(SmemRef { cta: Some(peer), ..s })),
            _ => None,
        };
        let (Some(dst), Some(bar)) = (
            on_peer(self.arg_value(call, "smem_ptr", &[], args, kwargs)),
            on_peer(self.arg_value(call, "mbar_ptr", &[], args, kwargs)),
        ) else {
            self.unresolved(site, format!("{what} is handed a pointer or an mbarrier that is not shared memory known statically: what it writes and which barrier it completes are not modelled"));
            return Value::None;
        };
        let barrier = self.barrier_of(&bar, cute_ir::api::arg(call, "mbar_ptr"), site);
        let words = match cute_ir::api::arg(call, "value") {
            Some(Expr::Tuple(items)) => items.len() as u64,
            _ => 1,
        };
        let display = cute_ir::api::arg(call, "smem_ptr").map(super::mbarrier::expr_text).unwrap_or_else(|| "buffer".to_string());
        let Some((buffer, stage)) = self.buffer_of(&dst, &display) else {
            self.unresolved(site, format!("{what} stores into shared memory the memory analysis does not know as a buffer"));
            return Value::None;
        };
        let region = Region { stage, element: Element::Whole };
        self.record_mem(MemKind::AsyncCopy { buffer, region, write: true, barrier: Some(barrier), by: AsyncOp::StAsync }, site);
        let bytes = 4 * words as u32;
        let lanes = if self.converged() { self.warp_lanes() } else { 1 };
        let how = format!("{words} 32-bit value{} stored by `st.async`", if words == 1 { "" } else { "s" });
        self.record_mem(MemKind::CopyTx { barrier, bytes: TxBytes { value: Some(bytes.into()), lanes, how } }, site);
        // Its bytes, one arrival each (see `st_async_bytes_as_arrivals`),
        // released at cluster scope as they complete.
        self.record_mem(MemKind::ArriveRelease { scope: Some(Scope::Cluster) }, site);
        self.push(OpKind::Arrive { bar: barrier, count: bytes }, site);
        Value::None
    }

    /// `cluster_arrive()` (`relaxed`: `cluster_arrive_relaxed()`).
    pub(super) fn cluster_arrive(&mut self, relaxed: bool, site: TextRange) {
        let total = self.threads_per_cta * self.ctas;
        let bar = self.pseudo_barrier(BarrierKind::ClusterBarrier, self.cluster_base, total);
        if relaxed {
            self.record_mem(MemKind::ArriveRelease { scope: None }, site);
        }
        let g = self.generation.entry(bar).or_insert(0);
        *g += 1;
        self.push(OpKind::Arrive { bar, count: 1 }, site);
    }

    /// `cluster_wait()`: the generation of the thread's last arrive.
    pub(super) fn cluster_wait(&mut self, site: TextRange) {
        let total = self.threads_per_cta * self.ctas;
        let bar = self.pseudo_barrier(BarrierKind::ClusterBarrier, self.cluster_base, total);
        let g = *self.generation.get(&bar).unwrap_or(&0);
        let parity = (g.saturating_sub(1) % 2) as u8;
        self.push(OpKind::Wait { bar, parity }, site);
    }
}

/// The barriers that `st.async` stores complete: their count raised by the
/// bytes announced on them per phase, the stores' bytes being arrivals (see
/// the module's doc). Decided on the whole model: the phases are the
/// arrivals other than the stores' over the count, the announcements
/// (`arrive_and_expect_tx`, `expect_tx`) each of the same known bytes and
/// as many per phase, and the stores deliver those bytes in every phase.
/// Anything else makes the kernel not checked, with what does not add up.
pub(super) fn st_async_bytes_as_arrivals(model: &mut Model) {
    use std::collections::{BTreeMap, HashSet};
    let mut stores: BTreeMap<BarrierIx, TextRange> = BTreeMap::new();
    let mut sites: HashSet<(BarrierIx, TextRange)> = HashSet::new();
    let mut announced: BTreeMap<BarrierIx, Vec<Option<u64>>> = BTreeMap::new();
    for t in &model.memory {
        for op in &t.ops {
            match &op.kind {
                MemKind::AsyncCopy { barrier: Some(b), by: AsyncOp::StAsync, .. } => {
                    stores.entry(*b).or_insert(op.site);
                    sites.insert((*b, op.site));
                }
                MemKind::ExpectTx { barrier, bytes, .. } => announced.entry(*barrier).or_default().push(bytes.total()),
                _ => {}
            }
        }
    }
    // Bytes announced on barriers no `st.async` store completes stay
    // assumed to arrive (TMA loads), and the note that says so stays.
    let mut assumed = announced.keys().any(|b| !stores.contains_key(b));
    for (bar, store_site) in stores {
        let name = model.barriers[bar as usize].display(model.ctas);
        let (mut arrivals, mut delivered, mut counts) = (0u64, 0u64, Vec::new());
        for g in &model.groups {
            for op in &g.ops {
                match op.kind {
                    OpKind::Arrive { bar: b, count } if b == bar => {
                        let n = u64::from(count) * u64::from(g.size());
                        if sites.contains(&(bar, op.site)) {
                            delivered += n;
                        } else {
                            arrivals += n;
                        }
                    }
                    OpKind::Init { bar: b, count } if b == bar => counts.push(count),
                    _ => {}
                }
            }
        }
        let announcements = announced.remove(&bar).unwrap_or_default();
        let problem = (|| {
            counts.dedup();
            let count = match counts[..] {
                [c] if c > 0 => u64::from(c),
                _ => return Some(format!("the arrival count of {name}, which `st.async` stores complete, is not one known number")),
            };
            if announcements.iter().any(Option::is_none) {
                return Some(format!("the bytes announced on {name}, which `st.async` stores complete, are not known statically"));
            }
            let each: Vec<u64> = announcements.iter().flatten().copied().collect();
            let phases = arrivals / count;
            let per = each.first().copied().unwrap_or(0);
            let fits = arrivals % count == 0
                && phases > 0
                && each.iter().all(|&b| b == per)
                && each.len() as u64 % phases == 0
                && delivered == phases * per * (each.len() as u64 / phases);
            if !fits {
                return Some(format!(
                    "the `st.async` stores completing on {name} deliver {delivered} bytes over the kernel, which do not add up to the bytes announced on it per phase ({} announcement(s) of {} over {phases} phase(s) of {count} arrival(s))",
                    each.len(),
                    each.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
                ));
            }
            let per_phase = per * (each.len() as u64 / phases);
            let Ok(raised) = u32::try_from(count + per_phase) else {
                return Some(format!("the bytes announced on {name} per phase are too many to count"));
            };
            for g in &mut model.groups {
                for op in &mut g.ops {
                    if let OpKind::Init { bar: b, count } = &mut op.kind {
                        if *b == bar {
                            *count = raised;
                        }
                    }
                }
            }
            None
        })();
        if let Some(what) = problem {
            assumed = true;
            model.unresolved.push(Unresolved { site: store_site, what, origin: None });
        }
    }
    // Every announcement is counted: nothing is assumed of the bytes.
    if !assumed {
        model.assumptions.retain(|a| a != super::mbarrier::BYTES_ASSUMED);
    }
}
