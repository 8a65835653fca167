//! The cluster: `cluster_arrive`, `cluster_arrive_relaxed` (no release),
//! `cluster_wait` (the generation of the thread's last arrive), and `mapa`
//! (`map_shared_rsrc`) onto a peer CTA's shared memory.
//!
//! The cluster barrier counts every thread of every CTA of the cluster. A peer
//! rank outside the cluster makes the kernel not checked; one computed at run
//! time gives an unknown pointer.

use cute_ir::api::Api;
use cute_ir::ast::Call;
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
