//! The checkable model of a kernel: one cluster of CTAs, each thread a
//! straight-line sequence of synchronization operations (`Init`, `Arrive`,
//! `Wait`), threads with equal sequences grouped (they are interchangeable,
//! which the explorer exploits).
//!
//! One cluster is enough: mbarriers, CTA and named barriers live in a CTA or a
//! cluster, so one cluster of the launch holds their protocols. (A kernel that
//! synchronizes through global memory has a few clusters modelled, with their
//! block indices known.)
//!
//! Besides the operations, a [`Model`] carries what the rules read off it
//! directly: the assumptions it rests on (`assumptions`, said in every
//! finding), the constructs it could not represent (`unresolved`: the kernel is
//! then not checked), every registration with a hardware barrier id
//! ([`BarrierUse`]: site, the count it names, the round, that is the thread's
//! how-many-th use of that id, and every lane that makes it), warp collectives
//! reached by part of a warp, stale try-wait tokens ([`StaleToken`]), barriers
//! initialised past their storage ([`StorageOverrun`]), and the memory
//! operations of each thread between its synchronization operations
//! ([`ThreadMemory`], for `crate::memory`).

use cute_syntax::TextRange;

pub type BarrierIx = u32;

/// What kind of object a barrier is. CTA barriers (`sync_threads`), named
/// barriers and the cluster barrier are modelled as mbarriers that are
/// initialised before the kernel starts, with one arrival per participant
/// and a generation bit as phase.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum BarrierKind {
    Mbarrier,
    CtaBarrier,
    NamedBarrier(i64),
    ClusterBarrier,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Barrier {
    /// How the user's code names it (`gate`, `full + 1`), for messages.
    pub name: String,
    pub cta: u32,
    pub kind: BarrierKind,
    /// Expected arrivals per phase for barriers initialised before the
    /// kernel runs (CTA, named and cluster barriers); mbarriers get theirs
    /// from an `Init` operation.
    pub preset_count: Option<u32>,
}

impl Barrier {
    pub fn display(&self, ctas: u32) -> String {
        match self.kind {
            BarrierKind::ClusterBarrier => "the cluster barrier".to_string(),
            BarrierKind::CtaBarrier if ctas > 1 => format!("the CTA barrier of CTA {}", self.cta),
            BarrierKind::CtaBarrier => "the CTA barrier".to_string(),
            _ if ctas > 1 => format!("`{}` of CTA {}", self.name, self.cta),
            _ => format!("`{}`", self.name),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// `mbarrier_init(bar, count)`.
    Init { bar: BarrierIx, count: u32 },
    /// One arrival of `count` on `bar` (local or remote).
    Arrive { bar: BarrierIx, count: u32 },
    /// Block while the current phase parity of `bar` equals `parity`.
    Wait { bar: BarrierIx, parity: u8 },
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Op {
    pub kind: OpKind,
    /// The call in the user's code.
    pub site: TextRange,
}

/// Threads that run the same sequence of operations. In code where a warp
/// runs converged, its lane 0 acts for the whole warp (its arrivals count
/// once per lane) and the other lanes have no operations of their own.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Group {
    pub ops: Vec<Op>,
    /// (cta, thread index within the CTA), ascending.
    pub threads: Vec<(u32, u32)>,
}

impl Group {
    pub fn size(&self) -> u32 {
        self.threads.len() as u32
    }

    /// "CTA 0, threads 1..127" / "thread 0 of CTA 1" / "threads 0, 32, 64 of CTA 0".
    pub fn describe(&self, ctas: u32) -> String {
        describe_threads(&self.threads, ctas)
    }
}

/// Threads of one cluster, for messages. Lane 0 of a warp stands for its
/// whole warp in converged code, so it is named as the warp.
pub fn describe_threads(threads: &[(u32, u32)], ctas: u32) -> String {
    let mut parts = Vec::new();
    let mut by_cta: std::collections::BTreeMap<u32, (Vec<u32>, Vec<u32>)> = Default::default();
    for &(c, t) in threads {
        let entry = by_cta.entry(c).or_default();
        if t % 32 == 0 {
            entry.0.push(t / 32);
        } else {
            entry.1.push(t);
        }
    }
    for (cta, (mut warps, mut lanes)) in by_cta {
        // Lane 0 stands for its warp unless other lanes of that warp are
        // listed on their own: then the warp is split, and lane 0 is one
        // thread among them (or, with all 31 others, the whole warp again).
        let split: Vec<u32> = warps.iter().copied().filter(|w| lanes.iter().any(|t| t / 32 == *w)).collect();
        for w in split {
            if lanes.iter().filter(|t| *t / 32 == w).count() == 31 {
                lanes.retain(|t| t / 32 != w);
            } else {
                warps.retain(|x| *x != w);
                lanes.push(w * 32);
            }
        }
        lanes.sort_unstable();
        let mut who = Vec::new();
        if !warps.is_empty() {
            who.push(if warps.len() == 1 { format!("warp {}", ranges(&warps)) } else { format!("warps {}", ranges(&warps)) });
        }
        if !lanes.is_empty() {
            who.push(if lanes.len() == 1 { format!("thread {}", ranges(&lanes)) } else { format!("threads {}", ranges(&lanes)) });
        }
        let who = who.join(" and ");
        parts.push(if ctas > 1 { format!("{who} of CTA {cta}") } else { who });
    }
    parts.join(", ")
}

/// `consumer_wait(state, token)` whose token tested another stage or phase
/// than the one it waits for. The package skips the wait when the token is
/// true, and a token of a phase that has completed (the stage just
/// consumed, tested before `advance()`) is true: the wait can then pass
/// without its phase completing. The wait itself is modelled as made, so
/// that this is reported once, here, rather than through its consequences.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StaleToken {
    /// The wait.
    pub site: TextRange,
    /// The `consumer_try_wait` that made the token.
    pub token_site: TextRange,
    /// What the token tested and what the wait is for ("stage 0, phase 0").
    pub tested: String,
    pub waited: String,
}

/// An `if` on a runtime value that only memory accesses depend on: no
/// synchronization lies under it, so the threads run both its branches, one
/// after the other, and the memory analysis sees the accesses of either. A
/// finding that involves an access under it rests on the data taking that
/// branch.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MemoryCondition {
    /// The whole `if` statement, its branches included.
    pub span: TextRange,
    /// What the condition is on ("the argument `n` of `host`").
    pub why: String,
}

/// An mbarrier initialised past the end of the shared-storage field it is
/// taken from (`mbar: MemRange[Int64, STAGES]` holding a ring of
/// `2 * STAGES` barriers): it lies in whatever follows the field.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StorageOverrun {
    /// The initialisation (the pipeline's `create`, or the `mbarrier_init`).
    pub site: TextRange,
    /// The barrier, as the model names it (`empty[1] of mbar`).
    pub barrier: String,
    /// The field and its element count.
    pub field: String,
    pub len: i64,
    /// The barrier's index in the field.
    pub index: i64,
}

/// One thread, for messages: "thread 5", "thread 5 of CTA 1".
pub fn describe_thread(cta: u32, tid: u32, ctas: u32) -> String {
    if ctas > 1 {
        format!("thread {tid} of CTA {cta}")
    } else {
        format!("thread {tid}")
    }
}

fn ranges(ids: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        out.push(if j > i { format!("{}..{}", ids[i], ids[j]) } else { ids[i].to_string() });
        i = j + 1;
    }
    if out.len() > 4 {
        let n = out.len();
        format!("{}, ... ({} ranges)", out[..3].join(", "), n)
    } else {
        out.join(", ")
    }
}

/// Something the model could not resolve, which stops the check of the
/// kernel. `what` is the reason as a clause ("the parity passed to this
/// `mbarrier_wait` is not known statically").
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Unresolved {
    pub site: TextRange,
    pub what: String,
    /// A place that explains it (the definition of a helper handed on),
    /// shown next to it.
    pub origin: Option<(TextRange, String)>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Model {
    pub kernel: String,
    pub ctas: u32,
    pub threads_per_cta: u32,
    pub barriers: Vec<Barrier>,
    pub groups: Vec<Group>,
    /// Assumptions the verdict rests on (launch shape, loop bounds, ...).
    pub assumptions: Vec<String>,
    /// Whether some loop was cut at a bound (the verdict is bounded).
    pub bounded: bool,
    /// Whether running the threads hit the instantiation's time budget.
    pub out_of_time: bool,
    /// Whether `threads_per_cta` is assumed (no launch found), not read.
    pub block_assumed: bool,
    /// Values the synchronization depends on that could not be resolved.
    pub unresolved: Vec<Unresolved>,
    /// Warp-collective operations that some lanes of their member mask do
    /// not reach: (site, what, CTA, the lanes that reach it, the lanes that
    /// do not), thread indices within the CTA, in the first CTA where it
    /// happens. A TMA or bulk `cute.copy` (which elects a lane itself) and
    /// `elect_one` under `elect_one` or a lane test; `sync_warp`, shuffles,
    /// votes and warp reductions in a branch that splits the warp, with the
    /// default member mask or a known one.
    pub partial_warp_collectives: Vec<(TextRange, String, u32, Vec<u32>, Vec<u32>)>,
    /// Pipeline waits handed the try-wait token of another stage or phase
    /// (see [`StaleToken`]).
    pub stale_tokens: Vec<StaleToken>,
    /// mbarriers initialised past the end of their storage field, by site
    /// and index (see [`StorageOverrun`]).
    pub storage_overruns: Vec<StorageOverrun>,
    /// Conditions on runtime values only memory accesses depend on, whose
    /// branches every thread ran one after the other (see
    /// [`MemoryCondition`]).
    pub memory_conditions: Vec<MemoryCondition>,
    /// CTAs per cluster (`ctas` counts every modelled CTA; more than one
    /// cluster is modelled when CTAs synchronize through global memory).
    pub cluster_ctas: u32,
    /// Memory the threads access, for the memory-ordering analysis.
    pub buffers: Vec<Buffer>,
    /// Each thread's memory operations and fences, placed between its
    /// synchronization operations. Only threads that record operations
    /// (lane 0 of a converged warp, every lane of a split one) appear.
    pub memory: Vec<ThreadMemory>,
    /// Every registration with a CTA or named barrier (`sync_threads`,
    /// `barrier`, `barrier_arrive`), with the thread count it names and the
    /// threads that make it, every lane counted (the named-barrier rules
    /// read these; exploration does not).
    pub barrier_uses: Vec<BarrierUse>,
    /// The launch's grid and what decides how many of its CTAs are
    /// resident at once (`crate::progress`).
    pub grid: GridShape,
}

/// The grid of the launch, which block index each modelled CTA has, and
/// the launch's arguments that bound residency.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct GridShape {
    /// CTAs in the grid (x, y, z), when known.
    pub dims: Option<[u32; 3]>,
    /// With a grid larger than the CTAs modelled: which of its clusters
    /// the modelled ones are.
    pub stands_in: Option<StandsIn>,
    pub residency: cute_ir::launch::LaunchResidency,
}

/// The clusters of a grid larger than the CTAs modelled that the modelled
/// clusters are, in order: its first and its last, the clusters the
/// kernel's tests of the block index single out (`bidx == N // 2`), and the
/// clusters after the first up to the number modelled, so that a role the
/// CTAs between share is taken by at least two.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StandsIn {
    clusters: [u32; MAX_MODELLED_CLUSTERS],
    len: u8,
    cluster_ctas: u32,
}

/// The most clusters a grid is modelled by.
pub const MAX_MODELLED_CLUSTERS: usize = 8;

impl StandsIn {
    /// `clusters` (ascending, at most [`MAX_MODELLED_CLUSTERS`]) of
    /// `cluster_ctas` CTAs each.
    pub fn new(clusters: &[u32], cluster_ctas: u32) -> StandsIn {
        let mut at = [0; MAX_MODELLED_CLUSTERS];
        at[..clusters.len()].copy_from_slice(clusters);
        StandsIn { clusters: at, len: clusters.len() as u8, cluster_ctas }
    }

    /// The grid's clusters modelled, in order.
    pub fn clusters(&self) -> &[u32] {
        &self.clusters[..self.len as usize]
    }

    /// The linear block index of modelled CTA `cta`.
    pub fn block_index(&self, cta: u32) -> u32 {
        let modelled = (cta / self.cluster_ctas) as usize;
        self.clusters[modelled.min(self.len as usize - 1)] * self.cluster_ctas + cta % self.cluster_ctas
    }
}

impl GridShape {
    /// The linear block index of modelled CTA `cta`.
    pub fn block_index(&self, cta: u32) -> u64 {
        match self.stands_in {
            Some(s) => u64::from(s.block_index(cta)),
            None => u64::from(cta),
        }
    }

    pub fn ctas(&self) -> Option<u64> {
        self.dims.map(|d| d.iter().map(|&x| u64::from(x)).product())
    }
}

/// One registration site of a hardware barrier (`bar.sync` / `bar.arrive`)
/// as the threads of one CTA reach it in one round.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BarrierUse {
    pub cta: u32,
    /// The hardware barrier id (0 for `sync_threads`).
    pub id: i64,
    /// The thread count the call names (the CTA's threads when it names none).
    pub count: u32,
    /// `bar.sync` (the thread waits for the generation), not `bar.arrive`.
    pub sync: bool,
    /// `.aligned`: every lane of a warp must execute the call together
    /// (`bar.sync`, and `bar.arrive` unless `aligned=False` makes it
    /// `barrier.cta.arrive`).
    pub aligned: bool,
    /// `sync_threads()`, or a barrier that names no thread count (every
    /// thread of the CTA takes part, whatever the id).
    pub cta_wide: bool,
    /// How many registrations with this id each of these threads made
    /// before this one: the generation it registers for when the threads'
    /// uses line up.
    pub round: u32,
    pub site: TextRange,
    /// Thread indices within the CTA, ascending, every lane of a warp.
    pub threads: Vec<u32>,
}

pub type BufferIx = u32;

/// Where a buffer lives.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Space {
    /// Shared memory of one CTA (reached locally or from a peer).
    Shared { cta: u32 },
    Global,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Buffer {
    /// How the code names it (`stile`, `data`), for messages.
    pub name: String,
    pub space: Space,
}

/// The part of a buffer an access touches, as far as it is known.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Region {
    /// The stage of a staged buffer, when the access goes through a view of
    /// one stage.
    pub stage: Option<i64>,
    pub element: Element,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Element {
    /// The whole buffer (or stage): a copy of a tile, a TMA transfer.
    Whole,
    /// One element at known coordinates.
    At(Vec<i64>),
    /// An element whose coordinates are not known statically.
    Unknown,
}

impl Region {
    pub const WHOLE: Region = Region { stage: None, element: Element::Whole };

    /// Whether two accesses certainly touch a common element. Unknown
    /// coordinates overlap only with whole-buffer accesses: the analysis
    /// reports what it can show, not what it cannot rule out.
    pub fn overlaps(&self, other: &Region) -> bool {
        let same_stage = match (self.stage, other.stage) {
            (Some(a), Some(b)) => a == b,
            (None, None) => true,
            // A whole-buffer access covers every stage.
            (None, Some(_)) => self.element == Element::Whole,
            (Some(_), None) => other.element == Element::Whole,
        };
        same_stage
            && match (&self.element, &other.element) {
                (Element::Whole, _) | (_, Element::Whole) => true,
                (Element::At(a), Element::At(b)) => a == b,
                _ => false,
            }
    }
}

impl Region {
    /// Whether two accesses can touch a common element: they cannot when
    /// they name different stages or different known elements.
    pub fn may_overlap(&self, other: &Region) -> bool {
        if let (Some(a), Some(b)) = (self.stage, other.stage) {
            if a != b {
                return false;
            }
        }
        !matches!((&self.element, &other.element), (Element::At(a), Element::At(b)) if a != b)
    }
}

/// Memory scopes of PTX, narrowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    Cta,
    Cluster,
    Gpu,
    Sys,
}

impl Scope {
    pub fn parse(s: &str) -> Option<Scope> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "cta" | "block" => Scope::Cta,
            "cluster" => Scope::Cluster,
            "gpu" | "device" => Scope::Gpu,
            "sys" | "system" => Scope::Sys,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Scope::Cta => "cta",
            Scope::Cluster => "cluster",
            Scope::Gpu => "gpu",
            Scope::Sys => "sys",
        }
    }
}

/// The memory-order semantics of an atomic or a load/store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Order {
    /// A plain (weak) load or store.
    Weak,
    Relaxed,
    Acquire,
    Release,
    AcqRel,
}

impl Order {
    pub fn parse(s: &str) -> Option<Order> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "relaxed" => Order::Relaxed,
            "acquire" => Order::Acquire,
            "release" => Order::Release,
            "acq_rel" | "acqrel" => Order::AcqRel,
            "weak" => Order::Weak,
            _ => return None,
        })
    }

    pub fn releases(self) -> bool {
        matches!(self, Order::Release | Order::AcqRel)
    }

    pub fn acquires(self) -> bool {
        matches!(self, Order::Acquire | Order::AcqRel)
    }

    pub fn name(self) -> &'static str {
        match self {
            Order::Weak => "weak",
            Order::Relaxed => "relaxed",
            Order::Acquire => "acquire",
            Order::Release => "release",
            Order::AcqRel => "acq_rel",
        }
    }
}

/// How an update changes a counter.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Update {
    Add(i64),
    Set(i64),
    /// An operation whose effect on the value is not known.
    Other,
}

/// The condition a blocking read waits for: it returns once the counter
/// compares to `target` this way.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Guard {
    pub exit_when: GuardCmp,
    /// `None`: a threshold not known statically (the read is taken to wait
    /// for every update that can come).
    pub target: Option<i64>,
    /// A spin loop (the thread waits), not a branch taken on one reading.
    pub spin: bool,
    /// The address read is computed from the value an atomic returned to
    /// this thread (a ticket drawn from a counter), not from its indices.
    pub ticket: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GuardCmp {
    Ge,
    Gt,
    Le,
    Lt,
    Eq,
    Ne,
}

impl GuardCmp {
    /// The guard a comparison of the word read (on the left) makes;
    /// `None` for a membership or identity test.
    pub fn of(op: cute_ir::ast::CmpOp) -> Option<GuardCmp> {
        use cute_ir::ast::CmpOp;
        Some(match op {
            CmpOp::Lt => GuardCmp::Lt,
            CmpOp::Le => GuardCmp::Le,
            CmpOp::Gt => GuardCmp::Gt,
            CmpOp::Ge => GuardCmp::Ge,
            CmpOp::Eq => GuardCmp::Eq,
            CmpOp::Ne => GuardCmp::Ne,
            _ => return None,
        })
    }

    pub fn negated(self) -> GuardCmp {
        match self {
            GuardCmp::Lt => GuardCmp::Ge,
            GuardCmp::Le => GuardCmp::Gt,
            GuardCmp::Gt => GuardCmp::Le,
            GuardCmp::Ge => GuardCmp::Lt,
            GuardCmp::Eq => GuardCmp::Ne,
            GuardCmp::Ne => GuardCmp::Eq,
        }
    }

    pub fn holds(self, value: i64, target: i64) -> bool {
        match self {
            GuardCmp::Ge => value >= target,
            GuardCmp::Gt => value > target,
            GuardCmp::Le => value <= target,
            GuardCmp::Lt => value < target,
            GuardCmp::Eq => value == target,
            GuardCmp::Ne => value != target,
        }
    }
}

/// What performs an access of shared memory on its own, after the thread
/// that issued it has gone on: in the async proxy, or (`StAsync`) in the
/// generic proxy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AsyncOp {
    /// A TMA or bulk copy.
    Tma,
    /// A cluster launch control query (`issue_clc_query`), writing its
    /// response.
    ClcQuery,
    /// `st.async` (`store_async_dsmem`): a store into a peer CTA's shared
    /// memory that completes on the peer's mbarrier, performed in the
    /// generic proxy (no proxy fence orders it; release at cluster scope
    /// when it completes).
    StAsync,
}

/// A memory operation or fence of one thread.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum MemKind {
    /// A load or store of the thread itself (the generic proxy).
    Access { buffer: BufferIx, region: Region, write: bool },
    /// A TMA or bulk copy, performed by the async proxy: into shared memory
    /// (`write`, completing on `barrier`), or out of it (a TMA store); or the
    /// response a cluster launch control query writes (`by`).
    AsyncCopy { buffer: BufferIx, region: Region, write: bool, barrier: Option<BarrierIx>, by: AsyncOp },
    /// The global tensor a TMA load reads (the async proxy), for what the
    /// thread reads before `griddepcontrol_wait` (`memory::grid_dependency`).
    AsyncRead { buffer: BufferIx },
    /// `griddepcontrol_wait()`: the thread waits for the grids its launch
    /// depends on to complete, their memory visible to it from here on.
    GridDependencyWait,
    /// `mbarrier_arrive_and_expect_tx` (`arrives`) or `mbarrier_expect_tx`
    /// announcing the bytes of the copies that follow.
    ExpectTx { barrier: BarrierIx, arrives: bool, bytes: TxBytes },
    /// The bytes a TMA load delivers to the barrier it names (recorded
    /// whether or not its destination is a buffer the analysis knows).
    CopyTx { barrier: BarrierIx, bytes: TxBytes },
    /// How the thread's next arrive releases: `None` for a relaxed arrive,
    /// a scope for a release at that scope (a remote mbarrier arrive is
    /// CTA-scoped unless told otherwise).
    ArriveRelease { scope: Option<Scope> },
    /// `cp.async.bulk.commit_group`: the thread's TMA stores since its last
    /// commit form a group.
    BulkCommit,
    /// `cp.async.bulk.wait_group(pending)` (with `read=True` or without):
    /// the thread goes on once at most `pending` of its groups are still
    /// reading their shared memory.
    BulkWait { pending: u32 },
    /// `fence.proxy.async`: orders the thread's generic accesses before its
    /// later async-proxy operations (and the barriers that follow).
    ProxyFence,
    /// `sync_warp()` by a converged warp: a meeting point of its lanes, one
    /// of the warp's converged points (see [`WarpPoint`]), that orders what
    /// each lane did before it before what any lane does after it.
    WarpSync,
    /// `sync_warp(mask)` by a lane of a warp split by a branch: a meeting
    /// point of the lanes of `mask` that reach it, which orders what each of
    /// them did before it before what any of them does after it (the two
    /// halves of a warp may each synchronize on their own half).
    LaneSync { mask: u32 },
    /// `fence.acq_rel` at a scope.
    Fence { scope: Scope },
    /// A `tcgen05` operation on the CTA's tensor memory: an MMA
    /// (`cute.gemm`, asynchronous: it is done once a later `tcgen05.commit`
    /// of the same thread has arrived), or a copy from or into it (`cute.copy`
    /// with a tensor-memory operand: a load when it reads it). `register`:
    /// a `tcgen05.ld` or `tcgen05.st` between tensor memory and the
    /// thread's registers, asynchronous in its thread until a `tcgen05.wait`
    /// of its kind ([`MemKind::TmemWait`]); not a `tcgen05.cp` from shared
    /// memory, which the thread's later `tcgen05` operations follow in order.
    TmemAccess { mma: bool, write: bool, register: bool },
    /// `fence_view_async_tmem_load()` (`ld`, `tcgen05.wait::ld`) or
    /// `fence_view_async_tmem_store()` (`st`, `tcgen05.wait::st`): the
    /// thread's earlier tensor-memory loads (stores) are complete; both when
    /// the kind is not known.
    TmemWait { ld: bool, st: bool },
    /// The thread's warp allocates tensor memory (`alloc_tmem`,
    /// `TmemAllocator.allocate` in the allocator warp).
    TmemAlloc,
    /// The thread's warp frees tensor memory (`dealloc_tmem`,
    /// `TmemAllocator.free` in the allocator warp).
    TmemFree,
    /// The thread reads back the address of its CTA's tensor memory, which
    /// the allocation wrote to shared memory (`retrieve_tmem_ptr`,
    /// `TmemAllocator.retrieve_ptr`): the allocation must happen before it.
    TmemRetrieve,
    /// A `tcgen05.commit` on `barrier` (made by a UMMA pipeline's commit or
    /// release too): the thread's MMAs issued before it arrive there once
    /// done. Recorded just before the arrive.
    Tcgen05Commit { barrier: BarrierIx },
    /// An atomic or a store to a synchronization variable: element
    /// `offset`; or, with `ticket` (and no `offset`), an address computed
    /// from a ticket the thread drew (`flags.iterator + ticket - 1`, `ticket`
    /// an atomic's result): that ticket plus `ticket`, which the memory
    /// analysis resolves as the thread runs. `drawn`: the value the update
    /// finds must compare so to the number given (a test of the ticket it
    /// draws, decided per CTA by the way run: `instantiate/tickets.rs`); the
    /// thread waits until it does.
    Update { buffer: BufferIx, offset: Option<i64>, ticket: Option<i64>, update: Update, order: Order, scope: Scope, drawn: Option<(GuardCmp, i64)> },
    /// A read of a synchronization variable; with a guard, the thread goes
    /// on only once the guard holds (a spin loop, or the branch taken on it).
    /// Its element is `offset`, or (`ticket`) as an update's.
    Observe { buffer: BufferIx, offset: Option<i64>, ticket: Option<i64>, order: Order, scope: Scope, guard: Option<Guard> },
}

/// Transaction bytes announced or delivered by one operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TxBytes {
    /// Bytes per lane that performs it, when known.
    pub value: Option<u64>,
    /// How many lanes perform it (a converged warp's expect: each lane adds
    /// the bytes).
    pub lanes: u32,
    /// How the value was found ("32 x 32 Float32 elements"), or why it is
    /// not known.
    pub how: String,
}

impl TxBytes {
    pub fn total(&self) -> Option<u64> {
        self.value.map(|v| v * self.lanes as u64)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MemOp {
    /// Synchronization operations the thread has performed before this.
    pub after: u32,
    /// Converged operations of the thread's warp before this (see
    /// [`WarpPoint`]).
    pub warp_point: u32,
    pub kind: MemKind,
    pub site: TextRange,
    /// The id of the kernel statement that performs it, directly or through
    /// a helper: its place in the program, wherever the helper's `site` is
    /// (statement ids grow in text order).
    pub stmt: u32,
    /// Whether a converged warp performs it through its lane 0, rather than
    /// the thread on its own (in a branch that splits its warp).
    pub converged: bool,
    /// The branches it lies in of conditions that every thread of the
    /// launch decides alike and that were run both ways (see
    /// [`MemoryCondition`]): the `if` statement, and whether in its `then`
    /// branch. Two accesses in opposite branches of one never both happen.
    pub branches: Option<std::sync::Arc<[(u32, bool)]>>,
}

/// Whether two sets of branches (see [`MemOp::branches`]) take one
/// condition both ways.
pub fn opposite_branches(a: Option<&[(u32, bool)]>, b: Option<&[(u32, bool)]>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.iter().any(|(stmt, then)| b.iter().any(|(other, other_then)| stmt == other && then != other_then)),
        _ => false,
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ThreadMemory {
    /// (cta, thread index within the CTA).
    pub thread: (u32, u32),
    pub ops: Vec<MemOp>,
    /// For each synchronization operation of the thread's group, where it
    /// stands among its warp's converged operations.
    pub op_points: Vec<WarpPoint>,
    /// For lane 0 of a converged warp: accesses of its lanes to a common
    /// element of shared memory that nothing orders (see [`LaneRace`]).
    pub lane_races: Vec<LaneRace>,
}

/// Two lanes of one converged warp that touch a common element of shared
/// memory, one writing and one reading, with no warp or CTA barrier between
/// the two accesses. Lanes of a warp do not run in lock-step (independent
/// thread scheduling): only `sync_warp` or a barrier orders them. The
/// accesses are lane 0's memory operations that stand for the warp's, by
/// index in [`ThreadMemory::ops`]; the lanes are lanes of that warp.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LaneRace {
    pub first: u32,
    pub first_lane: u32,
    pub second: u32,
    pub second_lane: u32,
    /// The element both touch.
    pub element: Vec<i64>,
}

/// In converged code lane 0 performs the warp's synchronization for all
/// lanes; lanes that then access memory on their own (in a branch on the
/// lane) are ordered against the warp's operations through these points:
/// the `before`-th converged operation of the warp is a meeting point of all
/// its lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WarpPoint {
    /// Converged operations of the warp before this one.
    pub before: u32,
    /// Whether this operation is itself one of the warp's converged ones.
    pub converged: bool,
}

impl Model {
    /// The same model with every operation's source range replaced by its
    /// rank among the model's distinct ranges, and without the notes that
    /// mention positions: what exploration depends on, and nothing that
    /// moves when lines are inserted above the kernel. Returns the sites
    /// table to map ranks back.
    pub fn position_independent(&self) -> (Model, Vec<TextRange>) {
        let mut sites: Vec<TextRange> = self.groups.iter().flat_map(|g| g.ops.iter().map(|o| o.site)).collect();
        sites.sort();
        sites.dedup();
        let rank = |r: TextRange| {
            let i = sites.binary_search(&r).expect("every site is in the table") as u32;
            TextRange { start: i, end: i }
        };
        let groups = self
            .groups
            .iter()
            .map(|g| Group {
                ops: g.ops.iter().map(|o| Op { kind: o.kind.clone(), site: rank(o.site) }).collect(),
                threads: g.threads.clone(),
            })
            .collect();
        let model = Model {
            kernel: String::new(),
            ctas: self.ctas,
            threads_per_cta: self.threads_per_cta,
            barriers: self.barriers.clone(),
            groups,
            assumptions: Vec::new(),
            bounded: self.bounded,
            out_of_time: self.out_of_time,
            block_assumed: self.block_assumed,
            unresolved: Vec::new(),
            partial_warp_collectives: Vec::new(),
            stale_tokens: Vec::new(),
            storage_overruns: Vec::new(),
            memory_conditions: Vec::new(),
            cluster_ctas: self.cluster_ctas,
            buffers: Vec::new(),
            memory: Vec::new(),
            barrier_uses: Vec::new(),
            grid: self.grid.clone(),
        };
        (model, sites)
    }

    pub fn thread_count(&self) -> u32 {
        self.groups.iter().map(Group::size).sum()
    }

    pub fn op_count(&self) -> usize {
        self.groups.iter().map(|g| g.ops.len()).sum()
    }
}
