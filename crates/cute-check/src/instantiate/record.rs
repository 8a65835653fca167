//! What a thread records: its synchronization operations, one place among its
//! warp's converged operations each.
//!
//! A converged warp acts as one, as the hardware runs it and as CUTLASS relies
//! on: outside branches that split the warp (conditions on the lane or thread
//! index, `elect_one`), lane 0 records each operation for the whole warp (an
//! arrival counts once per lane) and the other lanes record nothing. Inside
//! such a branch each lane records its own operations, and their timing against
//! the rest of the warp is not constrained (said as a note). Every lane counts
//! the warp's converged operations: they are the points where its lanes meet
//! (`lanes.rs`), and a lane that accesses memory on its own meets its warp at
//! each of them (`WarpPoint` in the model, for the memory-ordering analysis).

use cute_syntax::TextRange;

use super::{lanes, uniform, ThreadRun};
use crate::model::*;

impl<'a> ThreadRun<'a> {
    pub(super) fn lane(&self) -> u32 {
        self.tid % 32
    }

    /// What the thread-index calls return in this thread.
    pub(super) fn place(&self) -> uniform::Place {
        uniform::Place {
            cta: self.cta,
            tid: self.tid,
            block: self.block,
            grid: self.grid,
            stands_in: self.stands_in,
            cluster: self.cluster,
            cluster_base: self.cluster_base,
            ctas: self.ctas,
        }
    }

    /// Evaluates expressions as this thread does, without effects.
    pub(super) fn lane_evaluator(&self) -> uniform::LaneEvaluator<'a> {
        uniform::LaneEvaluator { place: self.place(), globals: self.globals, functions: self.functions, failed: false }
    }

    /// Where the converged warp is between points that order its lanes.
    pub(super) fn stretch(&self) -> lanes::Stretch {
        self.warp_point
    }

    /// Whether this thread is the last lane of its warp (31, or the CTA's
    /// last thread in a partial warp) and not also its lane 0.
    pub(super) fn is_last_lane(&self) -> bool {
        self.lane() != 0 && (self.lane() == 31 || self.tid + 1 == self.threads_per_cta)
    }

    /// Whether all lanes of this thread's warp run this code together: no
    /// enclosing branch splits the warp.
    pub(super) fn converged(&self) -> bool {
        self.divergence == 0 && self.elect_depth == 0
    }

    /// Lanes in this thread's warp.
    pub(super) fn warp_lanes(&self) -> u32 {
        let warp = self.tid / 32;
        (self.threads_per_cta - warp * 32).min(32)
    }

    /// Record an operation. In converged code the warp acts as one: lane 0
    /// records it for the whole warp (an arrival counts once per lane) and
    /// the other lanes record nothing. Inside a branch that splits the warp,
    /// every lane records its own operations.
    pub(super) fn push(&mut self, kind: OpKind, site: TextRange) {
        let converged = self.converged();
        let kind = if converged {
            // Every lane counts the warp's converged operations: they are
            // the points where its lanes meet (see `warp_point`).
            self.warp_point += 1;
            if self.lane() != 0 {
                return;
            }
            match kind {
                OpKind::Arrive { bar, count } => OpKind::Arrive { bar, count: count * self.warp_lanes() },
                other => other,
            }
        } else {
            if self.lane() != 0 {
                self.shared.notes.insert(
                    "some lanes synchronize inside a branch that splits their warp; their timing against the rest of the warp is not constrained"
                        .to_string(),
                );
            }
            kind
        };
        if self.ops.len() >= self.options.max_ops_per_thread {
            self.overflow = true;
            return;
        }
        let point = if converged { self.warp_point - 1 } else { self.warp_point };
        self.push_op(Op { kind, site }, point, converged);
    }

    pub(super) fn push_op(&mut self, op: Op, warp_point: u32, converged: bool) {
        self.ops.push(op);
        self.op_points.push(WarpPoint { before: warp_point, converged });
    }

    /// An arrival made by lane 0 of the warp only (elected inside the
    /// library), counted once whatever the convergence.
    pub(super) fn push_lane0(&mut self, kind: OpKind, site: TextRange) {
        if self.lane() == 0 && self.ops.len() < self.options.max_ops_per_thread {
            self.push_op(Op { kind, site }, self.warp_point, false);
        }
    }

    pub(super) fn unresolved(&mut self, site: TextRange, what: String) {
        self.shared.unresolved.insert(Unresolved { site, what, origin: None });
    }
}
