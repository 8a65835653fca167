//! Conditions on runtime values that no synchronization depends on, run
//! both ways in one run rather than decided per way.
//!
//! A condition the instantiation cannot decide is decided per way: each
//! way of deciding the conditions a run meets is a run of every thread
//! that met them (`cute-lint`'s `analysis/ways.rs`). Most such conditions
//! in real kernels choose what data moves, not how the threads
//! synchronize: `if mRes is not None:` around a copy and a partition,
//! `if row < shape[0]:` around a predicated load, a flag of the host
//! around an epilogue's element-wise work. The slice keeps them when a
//! call under them could synchronize (`copy(...)` of a helper that
//! reaches `cute.copy`, which could be a TMA load), and each doubles the
//! runs; quack's `RMSNorm` meets sixteen of them and every one of its 32
//! ways built the same synchronization.
//!
//! So a thread runs such a condition both ways (as it runs a condition
//! only memory accesses depend on: `exec_both_ways`) unless the condition
//! is one of the instantiation's conditions decided per way
//! (`Setup::per_way`). It watches what the two branches do; where either
//! reaches synchronization ([`SyncMark`]: an operation, a barrier
//! registration, a condition decided per way, an access of memory that
//! orders others, a pipeline state or tile advanced, a construct not
//! modelled) or the branches leave a name with two known values (`stages =
//! 3` or `2`), the condition is recorded (`Shared::per_way_found`) and the
//! instantiation runs its threads again with it decided per way
//! ([`super::instantiate_reusing`]). The run that found it is not used.
//!
//! Why the verdict is that of deciding it per way: in the run kept, every
//! thread that met the condition ran both branches and reached no
//! synchronization under either, and the branches left the thread's names
//! alike but for values nothing knows. The thread's synchronization after
//! the condition is the same whichever way the data goes, so each way of
//! deciding it builds the same synchronization; its memory accesses are
//! those of both branches, between the same operations (an access found
//! racing there is reported with the condition named, as for a condition
//! only memory accesses depend on). What another thread does under the
//! same condition is decided in that thread.
//!
//! A branch that leaves its block (`return`, or `break` / `continue` of a
//! loop around the `if`) is decided per way without trying.
//!
//! The conditions found are found again by every run that needs them, in
//! whatever order its threads run, so several cores, warps taken up from
//! other ways and a sequential run agree: each round runs every thread (up
//! to where the sequential run stops) and adds every condition found. The
//! rounds are bounded ([`MAX_ROUNDS`]); past them every condition is
//! decided per way, as without this.

use cute_ir::ast::{Stmt, StmtKind};
use cute_ir::eval::{Env, Value};

use super::functions::Body;
use super::statements::Flow;
use super::ThreadRun;
use crate::model::MemKind;

/// Runs of the threads with more conditions decided per way each, before
/// every condition is decided per way.
pub(super) const MAX_ROUNDS: usize = 6;

/// What a thread has done that synchronizes, counted: alike before and
/// after a branch when the branch did none of it (see
/// [`ThreadRun::synchronized_since`]).
#[derive(PartialEq)]
pub(super) struct SyncMark {
    ops: usize,
    warp_point: u32,
    uses: usize,
    collectives: usize,
    met: usize,
    /// The thread's memory operations so far: those made after are looked
    /// at (`moves_data_only`), not counted.
    memory: usize,
    unresolved: usize,
    barriers: usize,
    open: usize,
    per_way_found: usize,
    handed: usize,
    stale_tokens: usize,
    overflow: bool,
    issued_mma: bool,
    write_backs: usize,
    participants: Vec<(String, Value)>,
    tile_cursors: Vec<(String, Option<i64>)>,
}

/// Whether a memory operation only moves data: a load, store or copy whose
/// completion nothing waits on. Fences, arrivals' release, transaction
/// bytes, bulk groups, tensor memory's allocation and the accesses of
/// synchronization variables order other accesses or threads.
fn moves_data_only(kind: &MemKind) -> bool {
    match kind {
        MemKind::Access { .. } | MemKind::AsyncRead { .. } | MemKind::TmemAccess { mma: false, .. } => true,
        MemKind::AsyncCopy { barrier, .. } => barrier.is_none(),
        _ => false,
    }
}

/// Whether running `block` can leave it other than at its end: a `return`,
/// or a `break` or `continue` not inside a loop of its own.
pub(super) fn leaves_block(block: &[Stmt]) -> bool {
    fn leaves(block: &[Stmt], in_loop: bool) -> bool {
        block.iter().any(|s| match &s.kind {
            StmtKind::Return(_) => true,
            StmtKind::Break | StmtKind::Continue => !in_loop,
            StmtKind::If { then, orelse, .. } => leaves(then, in_loop) || leaves(orelse, in_loop),
            StmtKind::With { body, .. } => leaves(body, in_loop),
            StmtKind::For { body, .. } | StmtKind::While { body, .. } => leaves(body, true),
            _ => false,
        })
    }
    leaves(block, false)
}

impl<'a> ThreadRun<'a> {
    pub(super) fn sync_mark(&self) -> SyncMark {
        let sorted = |m: &rustc_hash::FxHashMap<String, Value>| {
            let mut v: Vec<(String, Value)> = m.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            v.sort_by(|a, b| a.0.cmp(&b.0));
            v
        };
        let mut tile_cursors: Vec<(String, Option<i64>)> = self.tile_cursors.iter().map(|(k, v)| (k.clone(), *v)).collect();
        tile_cursors.sort();
        SyncMark {
            ops: self.ops.len(),
            warp_point: self.warp_point,
            uses: self.uses.len(),
            collectives: self.collectives.len(),
            met: self.met.len(),
            memory: self.memory.len(),
            unresolved: self.shared.unresolved.len(),
            barriers: self.shared.barriers.list.len(),
            open: self.shared.open.len(),
            per_way_found: self.shared.per_way_found.len(),
            handed: self.shared.handed_pointers.len(),
            stale_tokens: self.shared.stale_tokens.len(),
            overflow: self.overflow,
            issued_mma: self.issued_mma,
            write_backs: self.write_backs.len() + self.advanced_parameters.len(),
            participants: sorted(&self.participants),
            tile_cursors,
        }
    }

    /// Runs `s`, an `if` on a runtime value (its condition gave `value`)
    /// not decided per way, both ways, and records it as decided per way
    /// when a branch synchronizes or chooses a known value (see the module's
    /// documentation).
    pub(super) fn exec_both_ways_unless_synchronizing(
        &mut self,
        s: &'a Stmt,
        value: &Value,
        then: &'a [Stmt],
        orelse: &'a [Stmt],
        env: &mut Env,
        body: Body<'a>,
    ) -> Flow {
        self.shared.ran_both_ways.insert(s.id);
        let before = self.sync_mark();
        let (flow, chose_known) = self.exec_both_ways(s, value, then, orelse, env, body);
        if chose_known || self.synchronized_since(&before) {
            self.shared.per_way_found.insert(s.id);
        }
        flow
    }

    /// Whether the thread did something that synchronizes since `before`.
    fn synchronized_since(&self, before: &SyncMark) -> bool {
        let now = self.sync_mark();
        let ordering = self.memory.get(before.memory..).is_none_or(|new| new.iter().any(|m| !moves_data_only(&m.kind)));
        ordering || SyncMark { memory: before.memory, ..now } != *before
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(text: &str) -> Vec<Stmt> {
        let module = cute_ir::lower_text(text).expect("parses");
        module.functions.into_iter().next().expect("one function").body
    }

    #[test]
    fn a_return_leaves_the_block_and_a_break_of_an_inner_loop_does_not() {
        let body = block("def f(a):\n    if a:\n        return 1\n");
        assert!(leaves_block(&body));
        let body = block("def f(a):\n    for i in range(3):\n        if a:\n            break\n");
        assert!(!leaves_block(&body));
        let StmtKind::For { body: inner, .. } = &body[0].kind else { panic!("a loop") };
        assert!(leaves_block(inner), "the `break` leaves the loop's body");
    }

    #[test]
    fn a_plain_store_moves_data_and_a_fence_does_not() {
        assert!(moves_data_only(&MemKind::Access { buffer: 0, region: crate::model::Region::WHOLE, write: true }));
        assert!(!moves_data_only(&MemKind::ProxyFence));
        assert!(!moves_data_only(&MemKind::BulkCommit));
    }
}
