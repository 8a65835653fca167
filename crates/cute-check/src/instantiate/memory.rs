//! What a thread does to memory, recorded next to its synchronization for the
//! memory-ordering analysis (`crate::memory`): loads and stores of shared and
//! global buffers, TMA and bulk copies (the async proxy), fences, and the
//! atomics and loads of synchronization variables, including spin loops, which
//! are blocking reads.
//!
//! Buffers are known by where their pointer comes from: a shared-memory
//! allocation of one CTA of this kernel (peers reach it through
//! `map_dsmem_ptr`; a `cutlass.Array(..., space=cutlass.AddressSpace.smem)` is
//! one like any other, `allocation.rs`), or a kernel parameter annotated as a
//! tensor or pointer (global memory). Anything else (register fragments, values
//! of unknown origin) is not memory the analysis can reason about and is left
//! out. An access names the part it touches: a stage (`sA[None, None, s]`), a
//! known element, or the whole tile (a TMA copy). A subscript that keeps a mode
//! (`t[None, None, stage]`) is a view and loads nothing. Element accesses of a
//! staged buffer (`stiles[row, col, s]`) take their last coordinate as the
//! stage, as CuTe lays staged shared memory out.
//!
//! Each thread's memory operations sit between its synchronization operations,
//! and each remembers the kernel statement that performs it (`MemOp::stmt`), so
//! that "the update after the write" and "the read after the wait" compare
//! places in the kernel, wherever the helper that performs them is written.
//!
//! Transaction bytes: each announcement (`arrive_and_expect_tx`, `expect_tx`, a
//! `PipelineTmaAsync` `producer_acquire` with the pipeline's `tx_count`) and
//! each TMA load naming a barrier records its bytes (`MemKind::ExpectTx`,
//! `MemKind::CopyTx`). A load delivers its destination, whose size comes from
//! its element type and layout (`cute_ir::layout`); anything else (a multicast
//! copy, a layout from a package helper) leaves the bytes unknown with the
//! reason, and `tx-count-mismatch` judges a barrier only when every count on it
//! is known.
//!
//! Programmatic dependent launch: `griddepcontrol_wait()` is recorded where
//! the thread makes it (`MemKind::GridDependencyWait`), and a TMA load names
//! the global tensor it reads besides the shared buffer it writes
//! (`MemKind::AsyncRead`), so that what a thread reads of global memory
//! before the wait is known (`crate::memory`'s `grid_dependency`).
//!
//! Tensor memory (a view of the pointer `TmemAllocator.retrieve_ptr` gives,
//! see `tmem.rs`) is no buffer: a `cute.copy` from or into it and a
//! `cute.gemm` handed it record a `MemKind::TmemAccess` for its lifetime.
//!
//! Inline PTX (`cute_ir::ptx`) is read here like the DSL's calls: its loads,
//! stores, reductions, atomics and fences, at the operand each addresses.

use cute_ir::api::{self, Api};
use cute_ir::ast::{Call, Expr, Target};
use cute_ir::ptx::{self, PtxSync};
use cute_ir::slice::callee_name;
use cute_ir::eval::{eval, Env, GmemRef, SmemRef, Value};
use cute_ir::layout::Tile;
use cute_syntax::TextRange;

use super::calls::{is_primitive, opaque_result, primitive_name};
use super::warp::FULL_MASK;
use super::{lanes, ThreadRun};
use crate::model::*;

/// Buffers by identity: (space tag, name, CTA for shared memory).
#[derive(Default, Clone)]
pub(super) struct BufferTable {
    pub(super) keys: rustc_hash::FxHashMap<(std::sync::Arc<str>, u32, bool), BufferIx>,
    pub(super) list: Vec<Buffer>,
    /// Whether a buffer's name is the one the threads index it by (the
    /// name to show, rather than that of a copy's partition).
    pub(super) indexed_name: Vec<bool>,
}

impl BufferTable {
    /// `display` names the buffer in diagnostics: asked for only when the
    /// buffer is new or first indexed (building it on every access costs).
    fn intern(&mut self, name: std::sync::Arc<str>, display: &dyn Fn() -> String, space: Space, indexed: bool) -> BufferIx {
        let key = match &space {
            Space::Shared { cta } => (name, *cta, true),
            Space::Global => (name, 0, false),
        };
        if let Some(&ix) = self.keys.get(&key) {
            if indexed && !self.indexed_name[ix as usize] {
                self.list[ix as usize].name = display();
                self.indexed_name[ix as usize] = true;
            }
            return ix;
        }
        let ix = self.list.len() as BufferIx;
        self.list.push(Buffer { name: display(), space });
        self.indexed_name.push(indexed);
        self.keys.insert(key, ix);
        ix
    }
}

/// Calls that return a view of (part of) their buffer argument.
const VIEW_FUNCTIONS: &[&str] = &[
    "local_tile",
    "local_partition",
    "group_modes",
    "flat_divide",
    "zipped_divide",
    "logical_divide",
    "tiled_divide",
    "composition",
    "make_tensor",
    "recast_tensor",
    "partition_S",
    "partition_D",
    "filter_zeros",
    "coalesce",
    "domain_offset",
    "flatten",
    "with_layout",
];

/// Generic copies between tensors (the threads move the data themselves).
const GENERIC_COPIES: &[&str] = &["autovec_copy", "basic_copy", "basic_copy_if"];

impl ThreadRun<'_> {
    /// Record a memory operation. Like synchronization, a converged warp
    /// acts through lane 0.
    pub(super) fn record_mem(&mut self, kind: MemKind, site: TextRange) {
        if self.converged() && self.lane() != 0 {
            return;
        }
        if self.memory.len() >= self.options.max_ops_per_thread {
            return;
        }
        let after = self.ops.len() as u32;
        let warp_point = self.warp_point;
        let stmt = self.kernel_stmt;
        let converged = self.converged();
        let branches = (!self.uniform_branches.is_empty()).then(|| std::sync::Arc::from(self.uniform_branches.as_slice()));
        self.memory.push(MemOp { after, warp_point, kind, site, stmt, converged, branches });
    }

    /// The buffer a value points into, and the stage of its view.
    pub(super) fn buffer_of(&mut self, v: &Value, display: &str) -> Option<(BufferIx, Option<i64>)> {
        self.buffer_named(v, &|| display.to_string(), false)
    }

    /// `indexed`: the name is the one the threads index the buffer by.
    fn buffer_named(&mut self, v: &Value, display: &dyn Fn() -> String, indexed: bool) -> Option<(BufferIx, Option<i64>)> {
        match v {
            // Tensor memory is no buffer of the race analysis: only its
            // lifetime is followed (`MemKind::TmemAccess`).
            Value::Smem(s) if s.is_tmem() => None,
            Value::Smem(s) => {
                let cta = s.cta.unwrap_or(self.cta);
                // `p + k` and `p[k]` with `k` unknown are still `p`'s buffer.
                let root = match s.alloc.find(['+', '[']) {
                    Some(end) => s.alloc[..end].into(),
                    None => s.alloc.clone(),
                };
                let ix = self.shared.buffers.intern(root, display, Space::Shared { cta }, indexed);
                Some((ix, s.stage))
            }
            Value::Gmem(g) => Some((self.shared.buffers.intern(g.param.clone(), &|| g.param.to_string(), Space::Global, true), g.stage)),
            _ => None,
        }
    }

    /// Loads of buffers in an expression (`stile[row, col]`).
    pub(super) fn record_reads(&mut self, e: &Expr, env: &Env, site: TextRange) {
        let mut found = Vec::new();
        let mut decide = |cond: &Expr| eval(cond, env, self).as_bool();
        collect_subscripts(e, &mut decide, &mut found);
        for (base, index) in found {
            self.record_access(base, index, env, site, false);
        }
    }

    /// A store through a subscript target (`out[tidx] = v`), and for an
    /// augmented assignment the load it implies.
    pub(super) fn record_store(&mut self, target: &Target, env: &Env, site: TextRange, also_reads: bool) {
        match target {
            Target::Subscript { base, index } => {
                if also_reads {
                    self.record_access(base, index, env, site, false);
                }
                self.record_reads(index, env, site);
                self.record_access(base, index, env, site, true);
            }
            Target::Tuple(items) => items.iter().for_each(|t| self.record_store(t, env, site, also_reads)),
            _ => {}
        }
    }

    fn record_access(&mut self, base: &Expr, index: &Expr, env: &Env, site: TextRange, write: bool) {
        // Only names and attributes are evaluated again: they have no effects.
        if !base.is_dotted() {
            return;
        }
        // An element that differs across the lanes of a converged warp is
        // recorded by lane 0 and the last lane (see below); the lanes
        // between skip evaluating it unless lane 0 found that lanes could
        // race on it (`lanes::race_sites`). The buffer does not vary across
        // lanes, so lane 0 has already named it.
        if self.converged()
            && self.lane() != 0
            && !self.is_last_lane()
            && !self.race_points.contains_key(&(site, self.stretch()))
            && self.is_lane_varying(index)
            && !self.is_lane_varying(base)
        {
            return;
        }
        let b = eval(base, env, self);
        // Which buffer a lane names is its own (`bufs[lane // 16][i]`); a
        // base that is no buffer (a coordinate, `thr_vmnk[0]`) names none.
        if matches!(b, Value::Smem(_) | Value::Gmem(_)) {
            self.note_lane_varying(base);
        }
        let display = || base.dotted().unwrap_or_default();
        // The peer's window is named after the local buffer when that is
        // indexed too; prefer names from the owning CTA's own accesses.
        let own = matches!(&b, Value::Smem(s) if s.cta.is_none_or(|c| c == self.cta));
        let Some((buffer, stage)) = self.buffer_named(&b, &display, own) else { return };
        let i = eval(index, env, self);
        let mut region = region_of_index(&i);
        if region.stage.is_none() {
            region.stage = stage;
        }
        // An element that differs across the lanes of a converged warp:
        // lane 0 records it for the warp, and the other lanes that evaluate
        // it say where their own is (see `lanes`).
        let converged = self.converged();
        let varying = converged && self.is_lane_varying(index);
        if varying && self.lane() != 0 {
            self.lane_regions.push((site, self.stretch(), buffer, region));
            return;
        }
        let before = self.memory.len();
        self.record_mem(MemKind::Access { buffer, region, write }, site);
        if self.lane() == 0 && self.memory.len() > before {
            let lanes = match (converged, varying) {
                (false, _) => lanes::Lanes::Own,
                (true, true) => lanes::Lanes::Each,
                (true, false) => lanes::Lanes::All,
            };
            self.warp_accesses.push(lanes::WarpAccess { site, stretch: self.stretch(), index: before, lanes });
        }
    }

    /// `cute.copy(atom, src, dst, ...)`: a TMA load when it names the barrier
    /// its bytes complete on, a TMA store (or TMA reduce store) when its atom
    /// is a TMA or bulk atom and it reads shared memory, otherwise a copy by
    /// the threads.
    pub(super) fn record_copy(&mut self, call: &cute_ir::ast::Call, args: &[Value], kwargs: &[(String, Value)]) {
        let site = call.range;
        let (Some(src), Some(dst)) = (args.get(1), args.get(2)) else { return };
        // A copy from or into tensor memory (`tcgen05.ld`, `tcgen05.st`,
        // `tcgen05.cp`): what the tensor memory's lifetime depends on.
        let (src_tmem, dst_tmem) = (is_tmem(src), is_tmem(dst));
        if src_tmem || dst_tmem {
            // A copy into tensor memory from shared memory is a
            // `tcgen05.cp` (an S2T atom), not a store from registers.
            let atom = call.args.first().and_then(Expr::dotted).unwrap_or_default().to_ascii_lowercase();
            let from_smem = matches!(src, Value::Smem(s) if !s.is_tmem()) || atom.contains("s2t");
            self.record_mem(MemKind::TmemAccess { mma: false, write: dst_tmem, register: !(dst_tmem && from_smem) }, site);
            return;
        }
        let name = |i: usize| argument_name(call, i);
        let barrier = kwargs.iter().find(|(k, _)| k == "tma_bar_ptr" || k == "mbar_ptr").map(|(_, v)| v.clone());
        let atom = call.args.first().and_then(Expr::dotted).unwrap_or_default().to_ascii_lowercase();
        // A TMA or bulk atom by its name, or by where its value comes from
        // (the host's `make_tiled_tma_atom(op, ...)`, whatever the atom is
        // called): a TMA reduce store (`CopyReduceBulkTensorTileS2GOp`,
        // `cp.reduce.async.bulk.tensor`) reads its shared memory as a TMA
        // store does.
        let made_by_tma = matches!(args.first(), Some(Value::Unknown(why, _)) if why.contains("make_tiled_tma_atom"));
        let async_atom = atom.contains("tma") || atom.contains("bulk") || made_by_tma;
        if let Some(bar) = barrier {
            let barrier = match &bar {
                Value::Smem(_) => Some(self.barrier_of(&bar, api::arg(call, "tma_bar_ptr").or(api::arg(call, "mbar_ptr")), site)),
                _ => None,
            };
            if let Some(b) = barrier {
                let bytes = copy_bytes(dst, &name(2), kwargs, self.ctas);
                self.record_mem(MemKind::CopyTx { barrier: b, bytes }, site);
            }
            if let Some((buffer, stage)) = self.buffer_of(dst, &name(2)) {
                if matches!(dst, Value::Smem(_)) {
                    let region = Region { stage, element: Element::Whole };
                    self.record_mem(MemKind::AsyncCopy { buffer, region, write: true, barrier, by: AsyncOp::Tma }, site);
                }
            }
            // The global tensor it reads, by the async proxy.
            if matches!(src, Value::Gmem(_)) {
                if let Some((buffer, _)) = self.buffer_of(src, &name(1)) {
                    self.record_mem(MemKind::AsyncRead { buffer }, site);
                }
            }
            return;
        }
        if async_atom && matches!(src, Value::Smem(_)) {
            if let Some((buffer, stage)) = self.buffer_of(src, &name(1)) {
                let region = Region { stage, element: Element::Whole };
                self.record_mem(MemKind::AsyncCopy { buffer, region, write: false, barrier: None, by: AsyncOp::Tma }, site);
            }
            return;
        }
        self.record_generic_copy(src, dst, &name(1), &name(2), site);
    }

    /// `prims.cp_async_bulk_tensor_shared_cta_global(dst, tma_desc, coords,
    /// mbar)`: a TMA load the calling thread issues into `dst`, completing
    /// on `mbar`. Its bytes are the tensor map's box, which the kernel does
    /// not show: they are not counted.
    ///
    /// `prims.cp_async_bulk_tensor_shared_cluster_global(dst, tma_desc,
    /// coords, mbar, im2col, multicast_mask=, group=)` is the same load into
    /// the cluster's window: with a `multicast_mask`, the tile lands at
    /// `dst`'s offset in each CTA whose bit is set, each completing on the
    /// barrier at `mbar`'s offset in that CTA; with `group=CTA_2`, the
    /// package routes every completion to that barrier in the issuer's pair
    /// leader (the even rank: it clears the rank's low bit of the address).
    /// A mask or group not known statically, or bytes delivered to another
    /// CTA's barrier (which the synchronization model does not count), make
    /// the kernel not checked, named.
    pub(super) fn record_primitive_tma_load(&mut self, call: &cute_ir::ast::Call, args: &[Value], kwargs: &[(String, Value)]) {
        let site = call.range;
        let (Some(dst), Some(bar)) = (args.first(), args.get(3)) else { return };
        let Some((receivers, pair_leader)) = self.cluster_tma_targets(call, kwargs) else { return };
        let in_cta = |v: &Value, cta: u32| match v {
            Value::Smem(s) => Value::Smem(SmemRef { cta: Some(cta), ..s.clone() }),
            other => other.clone(),
        };
        let name = call.args.first().and_then(primitive_buffer_name);
        for cta in receivers {
            let barrier = match bar {
                Value::Smem(_) => Some(self.barrier_of(&in_cta(bar, pair_leader.unwrap_or(cta)), api::arg(call, "mbar_ptr"), site)),
                _ => None,
            };
            if let Some(b) = barrier {
                let how = "the bytes of a TMA load of `cutlass.experimental.primitives` come from its tensor map".to_string();
                self.record_mem(MemKind::CopyTx { barrier: b, bytes: TxBytes { value: None, lanes: 1, how } }, site);
            }
            let dst = in_cta(dst, cta);
            if let Some((buffer, stage)) = self.buffer_of(&dst, name.as_deref().unwrap_or("tensor")) {
                if matches!(dst, Value::Smem(_)) {
                    let region = Region { stage, element: Element::Whole };
                    self.record_mem(MemKind::AsyncCopy { buffer, region, write: true, barrier, by: AsyncOp::Tma }, site);
                }
            }
        }
    }

    /// Where a TMA load of the primitives lands: the CTAs that receive it
    /// (this one, or those of `multicast_mask=`), and with `group=CTA_2` the
    /// pair leader whose barrier completes them all. `None` (and the kernel
    /// not checked, named) when the mask or group is not known.
    fn cluster_tma_targets(&mut self, call: &cute_ir::ast::Call, kwargs: &[(String, Value)]) -> Option<(Vec<u32>, Option<u32>)> {
        let site = call.range;
        let given = |key: &str| kwargs.iter().find(|(k, v)| k == key && !matches!(v, Value::None)).map(|(_, v)| v.clone());
        let rank = self.cta - self.cluster_base;
        let pair_leader = match (given("group"), api::arg(call, "group")) {
            (None, _) => None,
            (Some(Value::Str(g)), _) if g.eq_ignore_ascii_case("cta_1") => None,
            (Some(Value::Str(g)), _) if g.eq_ignore_ascii_case("cta_2") => Some(self.cluster_base + (rank & !1)),
            (_, Some(e)) if e.dotted_last().is_some_and(|g| g.eq_ignore_ascii_case("cta_1")) => None,
            (_, Some(e)) if e.dotted_last().is_some_and(|g| g.eq_ignore_ascii_case("cta_2")) => Some(self.cluster_base + (rank & !1)),
            _ => {
                self.unresolved(site, "the CTA group of this cluster TMA load is not known statically".to_string());
                return None;
            }
        };
        let receivers = match given("multicast_mask") {
            None => vec![self.cta],
            Some(mask) => match self.masked_ctas(&mask) {
                Ok(ctas) => ctas,
                Err(why) => {
                    self.unresolved(site, format!("the multicast mask of this cluster TMA load does not name CTAs of the cluster ({why})"));
                    return None;
                }
            },
        };
        // The synchronization model takes the bytes a barrier expects as
        // arriving (`MemKind::CopyTx` is the memory analysis's): a load one
        // CTA issues for another CTA's barrier is what lets that barrier's
        // phase complete, and without it the model would let the waiter run
        // ahead of the issuer.
        let completes_on: Vec<u32> = match pair_leader {
            Some(leader) => vec![leader],
            None => receivers.clone(),
        };
        if let Some(&other) = completes_on.iter().find(|&&c| c != self.cta) {
            let how = match pair_leader {
                Some(_) => "`group=CTA_2` routes it to the pair leader",
                None => "its `multicast_mask` names it",
            };
            self.unresolved(
                site,
                format!(
                    "this TMA load completes its bytes on the barrier of CTA {} ({how}): transaction bytes one CTA delivers to another's barrier are not modelled",
                    other - self.cluster_base
                ),
            );
            return None;
        }
        Some((receivers, pair_leader))
    }

    /// `prims.cp_async_bulk_global_shared_cta(dst, src, size)`,
    /// `prims.cp_reduce_async_bulk_global_shared_cta(dst, src, size, op=...)`
    /// and `prims.cp_async_bulk_tensor_reduce(tma_desc, src, red_kind, coords)`:
    /// a bulk copy or reduction out of `src`, read by the async proxy as a TMA
    /// store's is (its bulk group, the proxy fence before it). A source that
    /// is not a buffer the analysis knows leaves the kernel not checked: the
    /// read would go unseen.
    pub(super) fn record_primitive_bulk_store(&mut self, call: &cute_ir::ast::Call, args: &[Value], kwargs: &[(String, Value)]) {
        let src = self.arg_value(call, "src_mem", &["src"], args, kwargs);
        let name = cute_ir::api::arg(call, "src_mem").or(cute_ir::api::arg(call, "src")).and_then(primitive_buffer_name);
        let known = match &src {
            Some(v @ Value::Smem(_)) => self.buffer_of(v, name.as_deref().unwrap_or("tensor")),
            _ => None,
        };
        match known {
            Some((buffer, stage)) => {
                let region = Region { stage, element: Element::Whole };
                self.record_mem(MemKind::AsyncCopy { buffer, region, write: false, barrier: None, by: AsyncOp::Tma }, call.range);
            }
            None => {
                let callee = primitive_name(call).unwrap_or("a bulk copy");
                self.unresolved(call.range, format!("`{callee}` reads shared memory the memory analysis does not know as a buffer, so its read by the async proxy is not followed"));
            }
        }
    }

    /// `prims.cp_async_bulk_tensor_global_shared_cta(tma_desc, src, coords)`:
    /// a TMA store the calling thread issues out of `src`, read by the async
    /// proxy as a `cute.copy` with a TMA store atom is.
    pub(super) fn record_primitive_tma_store(&mut self, call: &cute_ir::ast::Call, args: &[Value]) {
        let Some(src) = args.get(1) else { return };
        let name = call.args.get(1).and_then(primitive_buffer_name);
        if let Some((buffer, stage)) = self.buffer_of(src, name.as_deref().unwrap_or("tensor")) {
            if matches!(src, Value::Smem(_)) {
                let region = Region { stage, element: Element::Whole };
                self.record_mem(MemKind::AsyncCopy { buffer, region, write: false, barrier: None, by: AsyncOp::Tma }, call.range);
            }
        }
    }

    /// Cluster launch control, for the memory-ordering analysis:
    /// `issue_clc_query(mbar, response)` has the async proxy write its
    /// response into `response`, completing on `mbar`, as a TMA load does;
    /// `clc_response(response)` reads it with the thread's own loads. A
    /// persistent scheduler that queries again into the same response must
    /// fence the reads of the last one first (`proxy`). The bytes of the
    /// response are those the barrier is told to expect.
    ///
    /// Bulk groups: `cp_async_bulk_commit_group()` and
    /// `cp_async_bulk_wait_group(k, read=...)` order the thread after the
    /// reads of its TMA stores (`memory`'s `BulkWait`).
    pub(super) fn async_proxy_call(&mut self, call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> Option<Value> {
        let qualname = call.qualname.as_deref()?;
        let name = qualname.strip_prefix("cutlass.cute.arch.").or_else(|| qualname.strip_prefix("cutlass.experimental.primitives."))?;
        let arg = |i: usize, key: &str| args.get(i).or_else(|| kwargs.iter().find(|(k, _)| k == key).map(|(_, v)| v)).cloned();
        let response_name = |i: usize, key: &str| api::arg(call, key).or(call.args.get(i)).and_then(Expr::dotted).unwrap_or_else(|| "clc_response".to_string());
        match name {
            "issue_clc_query" => {
                let (Some(bar), Some(response)) = (arg(0, "mbar_ptr"), arg(1, "clc_response_ptr")) else { return None };
                let barrier = matches!(bar, Value::Smem(_)).then(|| self.barrier_of(&bar, api::arg(call, "mbar_ptr").or(call.args.first()), call.range));
                let (buffer, stage) = self.buffer_of(&response, &response_name(1, "clc_response_ptr"))?;
                let region = Region { stage, element: Element::Whole };
                self.record_mem(MemKind::AsyncCopy { buffer, region, write: true, barrier, by: AsyncOp::ClcQuery }, call.range);
                Some(Value::None)
            }
            "clc_response" => {
                let response = arg(0, "result_addr")?;
                let (buffer, stage) = self.buffer_of(&response, &response_name(0, "result_addr"))?;
                let region = Region { stage, element: Element::Whole };
                self.record_mem(MemKind::Access { buffer, region, write: false }, call.range);
                Some(Value::unknown("the response of a cluster launch control query"))
            }
            "cp_async_bulk_commit_group" => {
                self.record_mem(MemKind::BulkCommit, call.range);
                Some(Value::None)
            }
            "cp_async_bulk_wait_group" => {
                // A count not known is taken as 0, the wait for every group:
                // said, as it may hide a reuse the real count allows.
                let pending = match arg(0, "group").and_then(|v| v.as_int()) {
                    Some(n) => n.clamp(0, u32::MAX as i64) as u32,
                    None => {
                        self.shared.notes.insert("a `cp_async_bulk_wait_group` count not known statically is taken as 0 (it waits for every bulk group)".to_string());
                        0
                    }
                };
                self.record_mem(MemKind::BulkWait { pending }, call.range);
                Some(Value::None)
            }
            _ => None,
        }
    }

    /// A `PipelineTmaStore`'s methods, for the calling thread's bulk groups:
    /// `producer_commit` commits its TMA stores, `producer_acquire` waits
    /// until at most `stages - 1` groups are in flight, `producer_tail`
    /// until none is.
    pub(super) fn record_store_pipeline(&mut self, method: &str, stages: Option<i64>, site: TextRange) {
        match method {
            "producer_commit" => self.record_mem(MemKind::BulkCommit, site),
            "producer_acquire" | "producer_tail" => {
                let pending = match (method, stages) {
                    ("producer_tail", _) => 0,
                    (_, Some(n)) => (n - 1).clamp(0, u32::MAX as i64) as u32,
                    (_, None) => {
                        self.shared.notes.insert("the stage count of a `PipelineTmaStore` is not known statically: its `producer_acquire` is taken to wait for every earlier store".to_string());
                        0
                    }
                };
                self.record_mem(MemKind::BulkWait { pending }, site);
            }
            _ => {}
        }
    }

    fn record_generic_copy(&mut self, src: &Value, dst: &Value, src_name: &str, dst_name: &str, site: TextRange) {
        if let Some((buffer, stage)) = self.buffer_of(src, src_name) {
            self.record_mem(MemKind::Access { buffer, region: Region { stage, element: Element::Whole }, write: false }, site);
        }
        if let Some((buffer, stage)) = self.buffer_of(dst, dst_name) {
            self.record_mem(MemKind::Access { buffer, region: Region { stage, element: Element::Whole }, write: true }, site);
        }
    }

    /// Calls the API table does not know that still touch memory or make a
    /// view of it. Returns the value of the call when it is a view.
    pub(super) fn memory_call(&mut self, call: &cute_ir::ast::Call, receiver: Option<&Value>, args: &[Value]) -> Option<Value> {
        let last = call.dotted_name()?;
        // `cute.gemm(mma, d, a, b, c)`: an MMA, whose accumulator in tensor
        // memory it writes (asynchronously: `Tcgen05Commit` says when done).
        if call.qualname.as_deref() == Some(cute_ir::slice::GEMM) {
            if args.iter().any(is_tmem) {
                self.issued_mma = true;
                self.record_mem(MemKind::TmemAccess { mma: true, write: true, register: false }, call.range);
            }
            return Some(Value::None);
        }
        // `llvm.ptrtoint(T.i64(), p.llvm_ptr)`: the address of `p` as an
        // integer, which inline assembly takes as an operand (the helpers
        // that hand a tensor element's address to `ld`/`st`/`atom`). It
        // stays the pointer, as `p.toint()` does.
        if last == "ptrtoint" && is_llvm_dialect(call) {
            if let Some(p @ (Value::Gmem(_) | Value::Smem(_))) = args.get(1) {
                return Some(p.clone());
            }
        }
        if GENERIC_COPIES.contains(&last) {
            let name = |i: usize| argument_name(call, i);
            if let (Some(src), Some(dst)) = (args.first(), args.get(1)) {
                self.record_generic_copy(src, dst, &name(0), &name(1), call.range);
            }
            return Some(Value::None);
        }
        view_call(last, receiver, args)
    }

    /// `prims.red(op, type_, a, b, ...)` and `prims.atomicrmw(op, ptr, a,
    /// ...)`: an update of the word the pointer names, by the operation and
    /// with the semantics their enum members name (`mem_order=` relaxed when
    /// left out, `mem_scope=`/`syncscope=` the GPU, as in PTX). A word that
    /// cannot be placed is reported when the update orders memory.
    pub(super) fn record_primitive_atomic(&mut self, call: &cute_ir::ast::Call, args: &[Value]) {
        let red = primitive_name(call) == Some("red");
        let member = |name: &str| api::arg(call, name).and_then(Expr::dotted).and_then(|d| d.rsplit('.').next().map(str::to_ascii_lowercase));
        let order = member("mem_order").and_then(|s| Order::parse(&s)).unwrap_or(Order::Relaxed);
        let scope = member(if red { "mem_scope" } else { "syncscope" }).and_then(|s| Scope::parse(&s)).unwrap_or(Scope::Gpu);
        let (ptr_at, value_at) = if red { (2, 3) } else { (1, 2) };
        let value = args.get(value_at).and_then(Value::as_int);
        let update = match (member("op").as_deref(), value) {
            (Some("add"), Some(v)) => Update::Add(v),
            (Some("inc"), _) => Update::Add(1),
            (Some("exch"), Some(v)) => Update::Set(v),
            _ => Update::Other,
        };
        let Some(ptr) = args.get(ptr_at) else { return };
        let name = call.args.get(ptr_at).map(root_name).unwrap_or_else(|| "counter".to_string());
        match self.buffer_of(ptr, &name) {
            Some((buffer, _)) => self.record_rmw(buffer, pointer_offset(ptr), None, update, order, scope, call.range),
            None => self.unplaced_sync_access(call, order.releases() || order.acquires()),
        }
    }

    /// An atomic, ordered load or store whose pointer the analysis cannot
    /// place: left out like any access it cannot place, unless it orders
    /// memory or a thread waits on what it reads (`synchronizes`), which is
    /// reported rather than passed over.
    fn unplaced_sync_access(&mut self, call: &cute_ir::ast::Call, synchronizes: bool) {
        if synchronizes {
            let callee = call.func.dotted().unwrap_or_else(|| call.name().to_string());
            self.unresolved(call.range, format!("`{callee}` orders memory that does not resolve to a kernel argument or shared buffer"));
        }
    }

    /// `atomic_*`, `red` and `store` on a synchronization variable.
    pub(super) fn record_update(&mut self, api: Api, call: &cute_ir::ast::Call, args: &[Value], kwargs: &[(String, Value)]) {
        let Some(ptr) = args.first() else { return };
        let name = call.args.first().map(root_name).unwrap_or_else(|| "counter".to_string());
        let Some((buffer, _)) = self.buffer_of(ptr, &name) else {
            let (order, _) = order_and_scope(kwargs, if api == Api::Store { Order::Weak } else { Order::Relaxed });
            self.unplaced_sync_access(call, order.releases() || order.acquires());
            return;
        };
        let offset = pointer_offset(ptr);
        let ticket = self.ticket_delta.take().filter(|_| offset.is_none());
        let op = call.name();
        let val = args.get(1).or(kwargs.iter().find(|(k, _)| k == "val").map(|(_, v)| v)).and_then(Value::as_int);
        let red_op = kwargs.iter().find(|(k, _)| k == "op").map(|(_, v)| v.clone());
        let update = match (op, val) {
            ("atomic_add", Some(v)) => Update::Add(v),
            ("atomic_exch" | "store", Some(v)) => Update::Set(v),
            ("red", Some(v)) if matches!(&red_op, Some(Value::Str(s)) if s.contains("add")) => Update::Add(v),
            _ => Update::Other,
        };
        let (order, scope) = order_and_scope(kwargs, if api == Api::Store { Order::Weak } else { Order::Relaxed });
        self.record_rmw(buffer, offset, ticket, update, order, scope, call.range);
    }

    /// An update of a counter. When the caller branches on the value it
    /// returns (`if atomic_add(ctr, 1) == n - 1:`, the last CTA to arrive),
    /// the branch is also a read: the thread whose update brings the
    /// counter to the target takes it, after every other update.
    fn record_rmw(&mut self, buffer: BufferIx, offset: Option<i64>, ticket: Option<i64>, update: Update, order: Order, scope: Scope, site: TextRange) {
        let recorded = self.memory.len();
        self.record_mem(MemKind::Update { buffer, offset, ticket, update: update.clone(), order, scope, drawn: None }, site);
        let index = (self.memory.len() > recorded).then_some(recorded);
        let made = AtomicUpdate { buffer, offset, ticket, update, order, scope, site, index };
        if let Some(guard) = self.pending_guard.take() {
            self.observe_update_result(&made, guard);
        }
        self.last_update = Some(made);
    }

    /// The read a branch on what the update `made` returned makes (`if
    /// atomic_add(ctr, 1) == n - 1:`, or the same through a name bound to
    /// the result): in the way where the branch is taken, the thread goes
    /// on once the counter satisfies `guard`.
    pub(super) fn observe_update_result(&mut self, made: &AtomicUpdate, guard: Guard) {
        let AtomicUpdate { buffer, offset, ticket, ref update, order, scope, site, .. } = *made;
        // Only conditions that the growing counter comes to satisfy wait;
        // the other way of the branch goes on at once.
        if matches!(guard.exit_when, GuardCmp::Eq | GuardCmp::Ge | GuardCmp::Gt) {
            let target = match (update, guard.target) {
                (Update::Add(d), Some(t)) => Some(t + d),
                _ => None,
            };
            // `atomic_add(...) == t` is taken by the thread whose addition
            // was the (t + 1)-th: what it then reads comes after at least
            // that many additions. Every thread takes it in the way where
            // it is taken, and a thread whose addition comes later than
            // that still goes on (it waits for the count to be at least
            // t + 1, not to be it again).
            let exit_when = match (update, guard.exit_when) {
                (Update::Add(d), GuardCmp::Eq) if *d > 0 => GuardCmp::Ge,
                (_, cmp) => cmp,
            };
            self.record_mem(MemKind::Observe { buffer, offset, ticket, order, scope, guard: Some(Guard { target, exit_when, ..guard }) }, site);
        }
    }

    /// `llvm.inline_asm(...)` whose assembly synchronizes
    /// (`cute_ir::ptx`): its loads, reductions, atomics and fences, on the
    /// buffers its address operands point into. What the checker does not
    /// model (branches, hand-written barriers) is reported, never dropped.
    pub(super) fn record_inline_ptx(&mut self, call: &cute_ir::ast::Call, args: &[Value], kwargs: &[(String, Value)]) {
        let arg = |name: &str, pos: usize| kwargs.iter().find(|(k, _)| k == name).map(|(_, v)| v).or(args.get(pos));
        let Some(Value::Str(asm)) = arg("asm_string", 2) else { return };
        let outputs = match arg("constraints", 3) {
            Some(Value::Str(c)) => ptx::output_count(c),
            _ => 0,
        };
        let operands: Vec<Value> = match arg("operands_", 1) {
            Some(Value::Tuple(v)) => v.clone(),
            _ => Vec::new(),
        };
        let site = call.range;
        // An operand's value (inputs are numbered after the outputs), or
        // a literal's.
        let operand_value = |v: ptx::PtxValue| match v {
            ptx::PtxValue::Operand(k) => k.checked_sub(outputs).and_then(|i| operands.get(i)).and_then(Value::as_int),
            ptx::PtxValue::Immediate(v) => Some(v),
        };
        for sync in ptx::sync_instructions(asm) {
            // An access to memory the analysis cannot place is left out,
            // like any other; one that synchronizes (semantics stronger
            // than relaxed, or the read a spin loop waits on) is reported.
            let strong = |sem: &Option<String>| !matches!(sem.as_deref(), None | Some("relaxed" | "weak"));
            let counter = |run: &mut Self, addr: usize, what: &str, synchronizes: bool| {
                let ptr = addr.checked_sub(outputs).and_then(|i| operands.get(i));
                let found = ptr.and_then(|p| run.buffer_of(p, "counter").map(|(b, _)| (b, pointer_offset(p))));
                let synchronizes = synchronizes || run.pending_guard.is_some();
                if found.is_none() && synchronizes {
                    run.unresolved(site, format!("its inline PTX `{what}` addresses memory that does not resolve to a kernel argument or shared buffer"));
                }
                found
            };
            let semantics = |sem: &Option<String>, scope: &Option<String>, default: Order| {
                let volatile = sem.as_deref() == Some("volatile");
                let order = match sem.as_deref() {
                    Some("volatile") => Order::Relaxed,
                    Some(s) => Order::parse(s).unwrap_or(default),
                    None => default,
                };
                let scope = scope.as_deref().and_then(Scope::parse).unwrap_or(if volatile { Scope::Sys } else { Scope::Gpu });
                (order, scope)
            };
            match sync {
                PtxSync::Load { addr, sem, scope } => {
                    let Some((buffer, offset)) = counter(self, addr, "ld", strong(&sem)) else { continue };
                    let (order, scope) = semantics(&sem, &scope, Order::Weak);
                    let guard = self.pending_guard.take();
                    self.record_mem(MemKind::Observe { buffer, offset, ticket: None, order, scope, guard }, site);
                }
                PtxSync::Store { addr, value, sem, scope } => {
                    let Some((buffer, offset)) = counter(self, addr, "st", strong(&sem)) else { continue };
                    let (order, scope) = semantics(&sem, &scope, Order::Weak);
                    let update = match value.and_then(operand_value) {
                        Some(v) => Update::Set(v),
                        None => Update::Other,
                    };
                    self.record_mem(MemKind::Update { buffer, offset, ticket: None, update, order, scope, drawn: None }, site);
                }
                PtxSync::ReadModifyWrite { addr, op, value, sem, scope, returns } => {
                    let what = format!("{}.{op}", if returns { "atom" } else { "red" });
                    let Some((buffer, offset)) = counter(self, addr, &what, strong(&sem)) else { continue };
                    let (order, scope) = semantics(&sem, &scope, Order::Relaxed);
                    let value = value.and_then(operand_value);
                    let update = match (op.as_str(), value) {
                        ("add", Some(v)) => Update::Add(v),
                        ("inc", _) => Update::Add(1),
                        ("exch", Some(v)) => Update::Set(v),
                        _ => Update::Other,
                    };
                    self.record_rmw(buffer, offset, None, update, order, scope, site);
                }
                PtxSync::Fence { scope } => {
                    let scope = scope.as_deref().and_then(Scope::parse).unwrap_or(Scope::Gpu);
                    self.record_mem(MemKind::Fence { scope }, site);
                }
                PtxSync::ProxyFence => self.record_mem(MemKind::ProxyFence, site),
                PtxSync::GridDependencyWait => self.record_mem(MemKind::GridDependencyWait, site),
                PtxSync::SpinLoad { addr, sem, scope, exit_when, value } => {
                    // A wait, reported when its word cannot be placed
                    // whatever its semantics.
                    let Some((buffer, offset)) = counter(self, addr, "ld", true) else { continue };
                    let (order, scope) = semantics(&sem, &scope, Order::Weak);
                    let target = operand_value(value);
                    let Some(exit_when) = GuardCmp::of(exit_when) else { continue };
                    let guard = Guard { exit_when, target, spin: true, ticket: false };
                    self.record_mem(MemKind::Observe { buffer, offset, ticket: None, order, scope, guard: Some(guard) }, site);
                }
                PtxSync::Unmodelled { what } => {
                    self.unresolved(site, format!("its inline PTX uses {what}, which is not modelled"));
                }
            }
        }
    }

    /// A load of a synchronization variable; `guard` when the thread goes on
    /// only once the value satisfies it.
    pub(super) fn record_observe(&mut self, call: &cute_ir::ast::Call, guard: Option<Guard>, args: &[Value], kwargs: &[(String, Value)]) {
        let guard = guard.or_else(|| self.pending_guard.take());
        let Some(ptr) = args.first().or(kwargs.iter().find(|(k, _)| k == "ptr").map(|(_, v)| v)) else { return };
        let name = api::arg(call, "ptr").map(root_name).unwrap_or_else(|| "counter".to_string());
        let (order, scope) = order_and_scope(kwargs, Order::Weak);
        let Some((buffer, _)) = self.buffer_of(ptr, &name) else {
            self.unplaced_sync_access(call, guard.is_some() || order.acquires());
            return;
        };
        let offset = pointer_offset(ptr);
        let ticket = self.ticket_delta.take().filter(|_| offset.is_none());
        self.record_mem(MemKind::Observe { buffer, offset, ticket, order, scope, guard }, call.range);
    }

    /// A call that reads a synchronization variable and returns what it
    /// read: a `load`, an atomic, inline PTX that loads, or a helper of this
    /// file that makes one.
    pub(super) fn is_observing_call(&self, e: &Expr) -> bool {
        matches!(e, Expr::Call(c) if api::reads_sync_variable(c) || callee_name(c).is_some_and(|n| self.observing.contains(n)))
    }

    /// `while load(ctr, ...) < N: pass` and the like: the read whose value
    /// the loop waits on, and the condition on which it exits. `read` names
    /// a variable that stands for the read (`while v != n: v = ld(ctr)`).
    /// `None` when the condition is not a comparison of one such read with
    /// a value.
    pub(super) fn spin_guard<'e>(
        &mut self,
        cond: &'e Expr,
        env: &Env,
        exit_when_true: bool,
        read: Option<(&str, &'e Expr)>,
    ) -> Option<(&'e Expr, Guard)> {
        let Expr::Compare { op, lhs, rhs } = cond else { return None };
        let reading = |e: &'e Expr| -> Option<&'e Expr> {
            match (e, read) {
                (Expr::Name(n), Some((var, call))) if n == var => Some(call),
                _ if self.is_observing_call(e) => Some(e),
                _ => None,
            }
        };
        let (call, other, load_on_left) = match (reading(lhs), reading(rhs)) {
            (Some(c), _) => (c, rhs.as_ref(), true),
            (None, Some(c)) => (c, lhs.as_ref(), false),
            _ => return None,
        };
        let target = eval(other, env, self).as_int();
        // The comparison with the load on the left.
        let cmp = GuardCmp::of(if load_on_left { *op } else { op.mirrored()? })?;
        // A `while` exits when its condition is false; an `if` branch is
        // taken when it is true.
        let exit_when = if exit_when_true { cmp } else { cmp.negated() };
        // A wait on an address computed from a ticket (`flags + ticket - 1`
        // with `ticket = atomic_add(counter, 1)`): the CTA it waits for drew
        // its ticket before, so it has started.
        let mut calls = Vec::new();
        call.calls(&mut calls);
        let ticket = calls.iter().flat_map(|c| c.args.iter().chain(c.kwargs.iter().map(|(_, a)| a))).any(|a| {
            let mut uses = Vec::new();
            a.collect_uses(&mut uses);
            uses.iter().any(|n| matches!(env.get(n.as_str()), Some(Value::Unknown(w, _)) if &**w == super::calls::ATOMIC_RESULT))
        });
        Some((call, Guard { exit_when, target, spin: !exit_when_true, ticket }))
    }

    /// Run the reading call `call` with `guard` on the read it makes.
    pub(super) fn observe_with(&mut self, call: &Expr, guard: Guard, env: &Env) -> Value {
        self.pending_guard = Some(guard);
        let value = eval(call, env, self);
        self.pending_guard = None;
        value
    }

    /// `fence_proxy`, `fence_view_async_shared`, `fence_acq_rel_*`.
    pub(super) fn record_fence(&mut self, api: Api, call: &cute_ir::ast::Call, args: &[Value]) {
        match api {
            Api::FenceViewAsyncShared => self.record_mem(MemKind::ProxyFence, call.range),
            Api::FenceProxy => {
                let kind = match (args.first(), call.args.first()) {
                    (Some(Value::Str(s)), _) => s.clone(),
                    (_, Some(e)) => e.dotted().unwrap_or_default(),
                    _ => String::new(),
                };
                if kind.to_ascii_lowercase().contains("async") {
                    self.record_mem(MemKind::ProxyFence, call.range);
                }
            }
            Api::FenceAcqRel => {
                let scope = call.name().rsplit('_').next().and_then(Scope::parse).unwrap_or(Scope::Gpu);
                self.record_mem(MemKind::Fence { scope }, call.range);
            }
            _ => {}
        }
    }
}

/// The bytes a TMA load delivers to its barrier: its destination's
/// elements, when the destination's element type and shape are known. A
/// copy multicast to several CTAs (`mcast_mask`) delivers to every CTA of
/// the mask, which is not modelled; in a cluster of one CTA the mask can
/// only name that CTA, and the copy is a plain one.
fn copy_bytes(dst: &Value, dst_name: &str, kwargs: &[(String, Value)], cluster_ctas: u32) -> TxBytes {
    let unknown = |how: String| TxBytes { value: None, lanes: 1, how };
    let multicast = kwargs.iter().any(|(k, v)| k == "mcast_mask" && !matches!(v, Value::None | Value::Int(0)));
    if multicast && cluster_ctas > 1 {
        return unknown("the copy is multicast (`mcast_mask`) and the bytes each CTA receives are not modelled".to_string());
    }
    let only_cta = if multicast { ", multicast to the one CTA of its cluster" } else { "" };
    match dst {
        Value::Smem(SmemRef { tile: Some(t), .. }) => TxBytes {
            value: Some(t.bytes() as u64),
            lanes: 1,
            how: format!("{} in its destination `{dst_name}`{only_cta}", t.describe()),
        },
        _ => unknown(format!("the element type or shape of its destination `{dst_name}` is not known statically")),
    }
}

/// The name a pointer expression is built from (`peer_halo + it % 2` ->
/// `peer_halo`, `ctr.iterator` -> `ctr`).
/// The name a copy's tensor argument is shown by: `tiles_s[None, stage]` is
/// named after `tiles_s`.
fn argument_name(call: &Call, i: usize) -> String {
    let arg = match call.args.get(i) {
        Some(Expr::Subscript { base, .. }) => Some(&**base),
        other => other,
    };
    arg.and_then(Expr::dotted).unwrap_or_else(|| "tensor".to_string())
}

fn root_name(e: &Expr) -> String {
    match e {
        Expr::Name(n) => n.clone(),
        Expr::Attr { base, attr } if matches!(attr.as_str(), "iterator" | "llvm_ptr" | "ptr") => root_name(base),
        Expr::Attr { .. } => e.dotted().unwrap_or_else(|| "counter".to_string()),
        Expr::Binary { lhs, .. } => root_name(lhs),
        Expr::Call(c) => c.args.first().map(root_name).unwrap_or_else(|| "counter".to_string()),
        _ => "counter".to_string(),
    }
}

/// The address a load, atomic or store of `call` takes, as the ticket the
/// thread drew plus a known amount: `flags.iterator + ticket - 1` gives -1
/// when `ticket` holds an atomic's result (a ticket drawn from a counter).
/// `None` when the address uses no such value, or uses it other than by
/// adding a known amount (a call, a product): such an address is not known
/// statically, like any other.
pub(super) fn ticket_delta(call: &Call, env: &Env) -> Option<i64> {
    let ptr = call.args.first().or(call.kwargs.iter().find(|(k, _)| k == "ptr").map(|(_, e)| e))?;
    let mut uses = Vec::new();
    ptr.collect_uses(&mut uses);
    let drawn: Vec<&String> =
        uses.iter().filter(|n| matches!(env.get(n.as_str()), Some(Value::Unknown(w, _)) if &**w == super::calls::ATOMIC_RESULT)).collect();
    let mut calls = Vec::new();
    ptr.calls(&mut calls);
    if drawn.is_empty() || !calls.is_empty() {
        return None;
    }
    // The same address with the ticket taken as 0, and as 1: an address
    // that moves by one with the ticket is the ticket plus its offset at 0.
    let at = |t: i64| {
        let mut env = env.clone();
        for n in &drawn {
            env.insert((*n).clone(), Value::Int(t));
        }
        match eval(ptr, &env, &mut NoCalls) {
            Value::Gmem(g) => g.offset,
            _ => None,
        }
    };
    let (zero, one) = (at(0)?, at(1)?);
    (one - zero == 1).then_some(zero)
}

/// Calls evaluated without a thread (an address with a call in it is not
/// taken apart: see `ticket_delta`).
struct NoCalls;

impl cute_ir::eval::CallHandler for NoCalls {
    fn call(&mut self, call: &Call, _: &Value, args: Vec<Value>, kwargs: Vec<(String, Value)>, _: &Env) -> Value {
        cute_ir::eval::pure_call(call, &args, &kwargs).unwrap_or(Value::unknown("a call"))
    }
}

fn pointer_offset(v: &Value) -> Option<i64> {
    match v {
        Value::Smem(s) if s.alloc.contains('?') => None,
        Value::Smem(s) => Some(s.offset),
        Value::Gmem(g) => g.offset,
        _ => None,
    }
}

/// `sem=` and `scope=` of an atomic, load or store; the defaults are those
/// of PTX (`.relaxed` for atomics, a weak access otherwise; `.gpu`).
fn order_and_scope(kwargs: &[(String, Value)], default: Order) -> (Order, Scope) {
    let text = |k: &str| match kwargs.iter().find(|(n, _)| n == k).map(|(_, v)| v) {
        Some(Value::Str(s)) => Some(s.clone()),
        _ => None,
    };
    let order = text("sem").and_then(|s| Order::parse(&s)).unwrap_or(default);
    let scope = text("scope").and_then(|s| Scope::parse(&s)).unwrap_or(Scope::Gpu);
    (order, scope)
}

/// The part of a buffer an index selects.
/// Element accesses of a buffer that is also used by stages (`sA[None,
/// None, s]`, a pipeline's `tiles[None, state.index]`) index the stage in
/// their last coordinate, as CuTe lays staged shared memory out
/// (`(..., STAGES)`): `sA[row, col, s]` is element `(row, col)` of stage `s`.
pub(super) fn stage_element_accesses(memory: &mut [ThreadMemory]) {
    let mut staged = std::collections::BTreeSet::new();
    for op in memory.iter().flat_map(|t| &t.ops) {
        if let MemKind::Access { buffer, region, .. } | MemKind::AsyncCopy { buffer, region, .. } = &op.kind {
            if region.stage.is_some() {
                staged.insert(*buffer);
            }
        }
    }
    for op in memory.iter_mut().flat_map(|t| &mut t.ops) {
        if let MemKind::Access { buffer, region, .. } = &mut op.kind {
            if let (true, None, Element::At(coords)) = (staged.contains(buffer), region.stage, &region.element) {
                if coords.len() >= 2 {
                    let mut coords = coords.clone();
                    region.stage = coords.pop();
                    region.element = Element::At(coords);
                }
            }
        }
    }
}

fn region_of_index(index: &Value) -> Region {
    match index {
        Value::Int(i) => Region { stage: None, element: Element::At(vec![*i]) },
        Value::Tuple(items) => {
            if let Some(stage) = cute_ir::eval::stage_of_view(index) {
                return Region { stage: Some(stage), element: Element::Whole };
            }
            let ints: Option<Vec<i64>> = items.iter().map(Value::as_int).collect();
            match ints {
                Some(v) => Region { stage: None, element: Element::At(v) },
                None => Region { stage: None, element: Element::Unknown },
            }
        }
        _ => Region { stage: None, element: Element::Unknown },
    }
}

/// Subscript expressions (base, index) in an expression, outside calls of
/// the synchronization API (their pointers are not loads). Of a conditional
/// expression, only the branch `decide` picks (both when it cannot).
fn collect_subscripts<'e>(e: &'e Expr, decide: &mut dyn FnMut(&Expr) -> Option<bool>, out: &mut Vec<(&'e Expr, &'e Expr)>) {
    match e {
        Expr::Subscript { base, index } => {
            // `t[None, None, stage]` selects a view of `t`, whose elements
            // are read where the view is indexed.
            if !index.keeps_a_mode() {
                out.push((base, index));
            }
            collect_subscripts(index, decide, out);
        }
        Expr::Call(c) => {
            if c.api.is_some() {
                return;
            }
            c.args.iter().for_each(|a| collect_subscripts(a, decide, out));
            c.kwargs.iter().for_each(|(_, a)| collect_subscripts(a, decide, out));
        }
        Expr::Binary { lhs, rhs, .. } | Expr::Compare { lhs, rhs, .. } | Expr::BoolOp { lhs, rhs, .. } => {
            collect_subscripts(lhs, decide, out);
            collect_subscripts(rhs, decide, out);
        }
        Expr::Unary { operand, .. } => collect_subscripts(operand, decide, out),
        Expr::IfExp { cond, then, orelse } => {
            collect_subscripts(cond, decide, out);
            match decide(cond) {
                Some(true) => collect_subscripts(then, decide, out),
                Some(false) => collect_subscripts(orelse, decide, out),
                None => {
                    collect_subscripts(then, decide, out);
                    collect_subscripts(orelse, decide, out);
                }
            }
        }
        Expr::Tuple(items) => items.iter().for_each(|a| collect_subscripts(a, decide, out)),
        Expr::Attr { base, .. } => collect_subscripts(base, decide, out),
        _ => {}
    }
}

/// Whether `call` is a copy between tensors outside the API table
/// (`cute.autovec_copy(src, dst)`).
/// Whether a value is (a view of) tensor memory.
fn is_tmem(v: &Value) -> bool {
    matches!(v, Value::Smem(s) if s.is_tmem())
}

pub(super) fn is_generic_copy(call: &cute_ir::ast::Call) -> bool {
    call.dotted_name().is_some_and(|last| GENERIC_COPIES.contains(&last))
}

/// The view a call makes of a buffer (`local_tile`, `partition_S`,
/// `tma_partition`, ...), `None` for any other call. A function of the
/// arguments alone: every lane computes it alike (see `uniform`).
pub(super) fn view_call(last: &str, receiver: Option<&Value>, args: &[Value]) -> Option<Value> {
    if last == "tma_partition" {
        // (smem view, gmem view) of arguments 3 and 4, in that order.
        // The shared-memory view has the elements of the tensor
        // partitioned (its first mode becomes the TMA mode), unless the
        // copy is multicast: then each CTA loads a slice of it.
        let single_cta = args.get(2).and_then(cute_ir::layout::Layout::of_value).is_some_and(|l| l.size() == 1);
        let view = |v: Option<&Value>| match v {
            Some(Value::Smem(s)) if !single_cta => Value::Smem(SmemRef { tile: None, ..s.clone() }),
            Some(v @ (Value::Smem(_) | Value::Gmem(_))) => v.clone(),
            _ => Value::unknown("a TMA partition"),
        };
        return Some(Value::Tuple(vec![view(args.get(3)), view(args.get(4))]));
    }
    if VIEW_FUNCTIONS.contains(&last) || last.starts_with("partition_") {
        let buffer = args.iter().chain(receiver).find(|v| matches!(v, Value::Smem(_) | Value::Gmem(_)));
        // A view keeps its buffer (a peer's stays the peer's); element
        // offsets into global memory are no longer known, nor the shape
        // of a shared-memory view unless it only regroups modes.
        return buffer.map(|b| match b {
            Value::Gmem(g) => Value::Gmem(GmemRef { offset: None, ..g.clone() }),
            Value::Smem(s) => {
                let tile = s.tile.as_ref().and_then(|t| match last {
                    "group_modes" => match (args.get(1).and_then(Value::as_int), args.get(2).and_then(Value::as_int)) {
                        (Some(b), Some(e)) => t.group(b, e),
                        _ => None,
                    },
                    // A pointer of known element type given a layout.
                    "make_tensor" => {
                        let layout = args.get(1).and_then(cute_ir::layout::Layout::of_value)?;
                        let modes = layout.modes.iter().map(|m| m.iter().map(|l| l.0).product()).collect();
                        Some(Tile { modes, ..(**t).clone() })
                    }
                    _ => None,
                });
                Value::Smem(SmemRef { tile: tile.map(std::sync::Arc::new), ..s.clone() })
            }
            other => other.clone(),
        });
    }
    None
}

/// The buffer a primitive copy's pointer argument names: `sA` for
/// `sA.data_ptr()` as for `sA`; `None` for another expression.
fn primitive_buffer_name(e: &Expr) -> Option<String> {
    match e {
        Expr::Call(c) => match &c.func {
            Expr::Attr { base, .. } => base.dotted(),
            _ => None,
        },
        e => e.dotted(),
    }
}

impl<'a> ThreadRun<'a> {
    /// Loads and atomics of synchronization variables, fences, inline PTX and
    /// copies: recorded for the memory-ordering analysis.
    pub(super) fn memory_operation(&mut self, api: Api, call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> Value {
        let site = call.range;
        match api {
            Api::Load => {
                self.record_observe(call, None, args, kwargs);
                opaque_result(api).expect("a load's value")
            }
            Api::Atomic if is_primitive(call) => {
                self.record_primitive_atomic(call, args);
                opaque_result(api).expect("an update's value")
            }
            Api::Atomic | Api::Store => {
                self.record_update(api, call, args, kwargs);
                opaque_result(api).expect("an update's value")
            }
            Api::FenceProxy | Api::FenceViewAsyncShared | Api::FenceAcqRel => {
                self.record_fence(api, call, args);
                Value::None
            }
            Api::GridDepWait => {
                // `prims.griddepcontrol(kind)` waits only for the kind
                // `wait`; a kind not known is taken as one (a wait orders
                // more, and hides no hang).
                let launch_dependents = match (args.first(), call.args.first()) {
                    (Some(Value::Str(s)), _) => s.eq_ignore_ascii_case("launch_dependents"),
                    (_, Some(e)) => e.dotted().is_some_and(|d| d.to_ascii_uppercase().ends_with("LAUNCH_DEPENDENTS")),
                    _ => false,
                };
                if !launch_dependents {
                    self.record_mem(MemKind::GridDependencyWait, site);
                }
                Value::None
            }
            Api::InlineAsm => {
                self.record_inline_ptx(call, args, kwargs);
                opaque_result(api).expect("inline PTX's value")
            }
            Api::Copy if primitive_name(call) == Some("cp_async_bulk_tensor_global_shared_cta") => {
                self.record_primitive_tma_store(call, args);
                Value::None
            }
            Api::Copy if matches!(primitive_name(call), Some("cp_async_bulk_global_shared_cta" | "cp_reduce_async_bulk_global_shared_cta" | "cp_async_bulk_tensor_reduce")) => {
                self.record_primitive_bulk_store(call, args, kwargs);
                Value::None
            }
            Api::Copy if is_primitive(call) => {
                self.record_primitive_tma_load(call, args, kwargs);
                Value::None
            }
            Api::Copy => {
                if call.kwargs.iter().any(|(k, _)| k == "tma_bar_ptr" || k == "mbar_ptr") && !self.converged() {
                    self.partial_collective(
                        site,
                        "this TMA/bulk `cute.copy` elects a lane itself, over the full warp (`elect.sync`, member mask 0xffffffff)",
                        FULL_MASK,
                    );
                }
                self.record_copy(call, args, kwargs);
                Value::None
            }
            _ => Value::None,
        }
    }
}

/// An update of a counter by an atomic whose result the thread may branch
/// on (`arrived = atomic_add(done, 1)` then `if arrived == n - 1:`).
#[derive(Clone, Debug)]
pub(super) struct AtomicUpdate {
    pub(super) buffer: BufferIx,
    pub(super) offset: Option<i64>,
    pub(super) ticket: Option<i64>,
    pub(super) update: Update,
    pub(super) order: Order,
    pub(super) scope: Scope,
    pub(super) site: TextRange,
    /// Its place among the thread's memory operations, when recorded.
    pub(super) index: Option<usize>,
}

/// Whether a call is of the MLIR LLVM dialect's Python binding
/// (`from cutlass._mlir.dialects import llvm`; `llvm.ptrtoint(...)` as
/// written when the import is not known).
fn is_llvm_dialect(call: &cute_ir::ast::Call) -> bool {
    match call.qualname.as_deref() {
        Some(q) => q.rsplit_once('.').is_some_and(|(module, _)| module == "llvm" || module.ends_with(".dialects.llvm")),
        None => matches!(&call.func, Expr::Attr { base, .. } if matches!(&**base, Expr::Name(n) if n == "llvm")),
    }
}
