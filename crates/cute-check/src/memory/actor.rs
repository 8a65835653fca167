//! One thread of the model as the execution runs it: its programs (the
//! synchronization operations of its group, its own memory operations, where
//! they stand among its warp's converged operations), how far it has got, its
//! two clocks, the semantics its next arrive carries, and what it waits for
//! when it cannot step (it is not retried before that changes).

use std::rc::Rc;

use cute_syntax::TextRange;

use crate::model::*;

use super::clock::Clock;

/// One thread of the model with its program: sync ops and memory ops.
pub(super) struct Actor<'m> {
    pub(super) thread: (u32, u32),
    pub(super) ops: &'m [Op],
    pub(super) mem: &'m [MemOp],
    pub(super) points: &'m [WarpPoint],
    /// Lane 0 of this lane's warp, when this is another lane.
    pub(super) leader: Option<usize>,
    /// For lane 0: the other lanes of its warp that act on their own.
    pub(super) lanes: Vec<usize>,
    /// For lane 0: clocks right after each converged operation of the warp.
    /// Shared with the lanes that join them, whose memory events then stamp
    /// with these clocks when they know nothing else (see [`Stamp`](super::clock::Stamp)).
    pub(super) snapshots: Vec<(Rc<[u32]>, Rc<[u32]>)>,
    /// For other lanes: converged operations of the warp joined so far.
    pub(super) joined_point: u32,
    pub(super) next_op: usize,
    pub(super) next_mem: usize,
    pub(super) ctl: Clock,
    pub(super) mmo: Clock,
    /// The barrier the next arrive announces transaction bytes on.
    pub(super) expect_next_arrive: Option<BarrierIx>,
    /// (barrier, phase) whose transaction bytes this thread's copies still
    /// deliver: open until the thread next waits.
    pub(super) open_expects: Vec<(BarrierIx, u32)>,
    /// Release semantics of the next arrive, when not the default.
    pub(super) next_arrive_release: Option<Option<Scope>>,
    /// The thread's latest `fence.acq_rel`: its scope and the memory clock
    /// it orders before the thread's later writes and arrives.
    pub(super) fence: Option<(Scope, Clock)>,
    /// Counter edges seen by relaxed reads, ordered by a later fence.
    pub(super) pending_acquire: Vec<(Clock, TextRange)>,
    /// The clocks the thread's latest memory event shares (see [`Stamp`](super::clock::Stamp)).
    pub(super) stamp_base: Option<(Rc<[u32]>, Rc<[u32]>)>,
    /// Why the thread's last step failed, while that still holds.
    pub(super) blocked: Option<Blocked>,
    /// `sync_warp(mask)` meetings of its split warp it has passed, by mask.
    pub(super) lane_syncs: Vec<(u32, u32)>,
    /// TMA stores the thread issued and has not committed (their async
    /// ids), and its committed groups still in flight, oldest first.
    pub(super) uncommitted_stores: Vec<usize>,
    pub(super) store_groups: std::collections::VecDeque<Vec<usize>>,
    /// The clock entries of the MMAs on tensor memory the thread has
    /// issued: each is done at the arrival of a later `tcgen05.commit`.
    pub(super) mmas: Vec<usize>,
    /// The ticket the thread drew: what its latest addition to a counter
    /// at a known element returned (`None` inside: a value not known).
    /// Addresses computed from a ticket (`MemKind::Update`'s `ticket`) are
    /// that value plus their offset.
    pub(super) ticket: Option<Option<i64>>,
}

/// What a thread that could not step waits for. Retrying it before that
/// changes fails again and changes nothing (its first attempt did what a
/// failed step does), so the schedule skips it.
#[derive(Clone, Copy)]
pub(super) enum Blocked {
    /// No operation left.
    Done,
    /// A wait on `bar`, whose phase was `phase`.
    Wait { bar: BarrierIx, phase: u32 },
    /// A lane waiting for its warp's lane 0 to reach converged operation
    /// number `point`.
    Leader { leader: usize, point: u32 },
}

/// Two distinct actors, both mutable.
pub(super) fn two<'a, 'm>(actors: &'a mut [Actor<'m>], a: usize, b: usize) -> (&'a mut Actor<'m>, &'a mut Actor<'m>) {
    assert_ne!(a, b);
    if a < b {
        let (x, y) = actors.split_at_mut(b);
        (&mut x[a], &mut y[0])
    } else {
        let (x, y) = actors.split_at_mut(a);
        (&mut y[0], &mut x[b])
    }
}
