//! The `cutlass.pipeline` classes, expanded into the mbarrier operations their
//! methods perform (as the installed package implements them):
//!
//! - `PipelineAsync.create(num_stages=S, producer_group=P, consumer_group=C,
//!   barrier_storage=base)`: `full[i] = base + i`, `empty[i] = base + S + i`;
//!   warp 0 (its elected lane) initialises `full[i]` with P's thread count and
//!   `empty[i]` with C's; then, unless `defer_sync=True`, `mbarrier_init_fence()`
//!   and a CTA barrier.
//! - `producer_acquire(s)`: wait on `empty[s.index]` with `s.phase`;
//!   `producer_commit(s)`: every calling thread arrives on `full[s.index]`;
//!   `consumer_wait(s)`: wait on `full[s.index]`; `consumer_release(s)`: every
//!   calling thread arrives on `empty[s.index]`; `producer_tail(s)`: acquire
//!   and advance once per stage.
//! - `PipelineCpAsync`: the same barriers and methods; `producer_commit` is
//!   `cp.async.mbarrier.arrive.noinc` on `full`, which every calling thread
//!   makes once its `cp.async` copies have landed (an arrival of the
//!   producer count, as `PipelineAsync`'s; the copies are writes made before
//!   it).
//! - `PipelineTmaAsync`: the same barriers, but `producer_acquire` also makes
//!   the elected lane arrive (with the transaction bytes) on `full`,
//!   `producer_commit` does nothing (the TMA completes the bytes), and
//!   `consumer_release` is signalled by one lane per consumer warp in a
//!   single-CTA cluster (lane `tidx % 32` = 0, `tidx=` the thread's own
//!   index unless given; `mcast_mode_mn=` chooses peers, of which a
//!   one-CTA cluster has none).
//! - `PipelineClcFetchAsync` (cluster launch control): `producer_acquire`
//!   waits on `empty`, then lane `l` of the fetching warp announces the
//!   query's response on CTA `l`'s `full` barrier (the response completes
//!   the phase); `consumer_release` arrives from every calling thread on the
//!   `empty` barrier of the cluster's first CTA.
//! - `PipelineUmmaAsync.producer_tail(s)`: the even CTA ranks of the cluster
//!   advance to the last stage used and acquire it once.
//! - `make_pipeline_state(Producer|Consumer, S)`: index 0, phase 1 for a
//!   producer (a fresh barrier lets its first acquire pass) and 0 for a
//!   consumer (a `ProducerConsumer` state starts as a producer's);
//!   `advance()` steps the index and flips the phase on wrap.
//!
//! - `PipelineTmaStore.create(num_stages=, producer_group=)`: no mbarriers;
//!   `producer_commit()` commits the thread's bulk (TMA store) group,
//!   `producer_acquire()` and `producer_tail()` wait for the thread's own
//!   older groups (`cp.async.bulk.wait_group.read`). Nothing passes between
//!   threads, so these are no operations of the model.
//! - `TmemAllocator(..., barrier_for_retrieve=bar, allocator_warp_id=w,
//!   is_two_cta=False)`: `wait_for_alloc()` (and `reserve`) is
//!   `bar.arrive_and_wait()`; `allocate`, `retrieve_ptr`,
//!   `relinquish_alloc_permit` and `free` synchronize nothing in one CTA; a
//!   two-CTA allocator's `free` is the pair's handshake on its deallocation
//!   barrier (see `instantiate/tmem.rs`).
//! - Over a cluster of more than one CTA, the Blackwell pipelines signal the
//!   CTAs their `cta_layout_vmnk` names (see `cluster.rs`).
//!
//! - `PipelineOrder` (groups that take turns): see `order.rs`.
//! - A package's subclasses of these classes and of `NamedBarrier` (in the
//!   kernel's file or a linked module): see `subclass.rs`. Their barrier
//!   arrays (`sync_object_full.arrive(index, dst)`, `wait(index, phase)`,
//!   `arrive_and_expect_tx(index, tx)`) are what the package's
//!   `MbarrierArray` does for the class's operation on that side;
//!   `PipelineState(stages, count, index, phase)` made by hand is a state.
//!
//! A stage count that is a kernel argument not known statically
//! (`num_stages=self.ab_stage`) is the two stages the ring is modelled with
//! wherever the kernel reads it ([`assume_stage_counts`]); the finding or
//! verdict then states it. Other pipeline classes, and a `create(...)`
//! argument the model does not know (masks, a `tidx=` in another lane,
//! `enable_multicast_signaling=` on the Hopper pipelines), stay unresolved:
//! their kernels are reported as not checked, naming the call.
//!
//! How a thread runs these (states advancing per statement, try-wait
//! tokens, participants and their handles) is `instantiate/pipelines.rs` and
//! `instantiate/participants.rs`.

mod cluster;
mod order;
pub mod subclass;

pub use order::{arrive as order_arrive, initial_state as order_initial_state, wait as order_wait, ORDER};

use std::collections::BTreeMap;

use cute_ir::api::Api;
use cute_ir::ast::{Call, Expr, FunctionDef};
use cute_ir::eval::{Bindings, Object, SmemRef, Value};
use cute_syntax::TextRange;

/// Which pipeline class an object is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Async,
    /// Threads produce with `cp.async` copies, threads consume.
    CpAsync,
    TmaAsync,
    /// Blackwell: TMA loads consumed by `tcgen05` MMAs.
    TmaUmma,
    /// Blackwell: threads produce, MMAs consume.
    AsyncUmma,
    /// Blackwell: MMAs produce (a `tcgen05.commit` arrives), threads consume.
    UmmaAsync,
    /// Cluster launch control: one warp of the cluster's first CTA fetches
    /// the next tile, whose response the hardware writes into every CTA;
    /// threads of every CTA consume it and release it on the first CTA.
    ClcFetch,
}

/// How one side of a pipeline signals the other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Signal {
    /// Every calling thread arrives (`PipelineOp.AsyncThread`).
    Threads,
    /// The elected lane of each calling warp arrives once: a `tcgen05.commit`
    /// (arriving when the MMAs issued before it complete), or the consumer
    /// release of `PipelineTmaAsync`.
    OneLanePerWarp,
    /// `producer_acquire` arrives with the transaction bytes, the TMA copy
    /// completes the phase, `producer_commit` does nothing.
    Tma,
}

impl Kind {
    const ALL: [(Kind, &'static str); 7] = [
        (Kind::Async, "PipelineAsync"),
        (Kind::CpAsync, "PipelineCpAsync"),
        (Kind::TmaAsync, "PipelineTmaAsync"),
        (Kind::TmaUmma, "PipelineTmaUmma"),
        (Kind::AsyncUmma, "PipelineAsyncUmma"),
        (Kind::UmmaAsync, "PipelineUmmaAsync"),
        (Kind::ClcFetch, "PipelineClcFetchAsync"),
    ];

    fn name(self) -> &'static str {
        Kind::ALL.iter().find(|(k, _)| *k == self).map_or("", |(_, n)| n)
    }

    fn of_name(name: &str) -> Option<Kind> {
        Kind::ALL.iter().find(|(_, n)| *n == name).map(|(k, _)| *k)
    }

    /// (producer's signal on `full`, consumer's signal on `empty`), as the
    /// installed package's `create` and methods implement them.
    fn signals(self) -> (Signal, Signal) {
        match self {
            Kind::Async | Kind::CpAsync => (Signal::Threads, Signal::Threads),
            Kind::TmaAsync | Kind::TmaUmma => (Signal::Tma, Signal::OneLanePerWarp),
            // The acquire signals (see `stage_action`); the query's response
            // completes the phase.
            Kind::ClcFetch => (Signal::Tma, Signal::Threads),
            Kind::AsyncUmma => (Signal::Threads, Signal::OneLanePerWarp),
            Kind::UmmaAsync => (Signal::OneLanePerWarp, Signal::Threads),
        }
    }
}

pub const PIPELINE: &str = "Pipeline";
/// A `PipelineTmaStore`: its methods order only the calling thread's own
/// bulk copies.
pub const TMA_STORE: &str = "PipelineTmaStore";
/// A `cutlass.utils.TmemAllocator`: attributes `barrier` (its
/// `barrier_for_retrieve`), `warp` (`allocator_warp_id`).
pub const TMEM_ALLOCATOR: &str = "TmemAllocator";
/// The stages a ring whose stage count is not known is modelled with.
const ASSUMED_STAGES: i64 = 2;
pub const STATE: &str = "PipelineState";
pub const GROUP: &str = "CooperativeGroup";
/// `PipelineProducer` / `PipelineConsumer` from `make_participants()`:
/// attributes `pipeline`, `producer` (bool) and `id`, the key of their
/// state, which lives with the thread (their methods change it in place).
pub const PARTICIPANT: &str = "PipelineParticipant";
/// The handle `acquire`/`wait` return: `pipeline`, `producer`, `state`.
pub const HANDLE: &str = "PipelineHandle";

/// Binds the stage counts the kernel's pipelines are created with, where
/// they are its arguments (`num_stages=self.ab_stage`, a `Constexpr`
/// parameter) not known statically, to [`ASSUMED_STAGES`]: the count those
/// pipelines are modelled with. The kernel reads the same argument elsewhere
/// (a producer's prologue runs `min(self.ab_stage, k_tiles)` times, a state
/// is made with `make_pipeline_state(Producer, self.ab_stage)`), and a model
/// that mixed two counts would run code no launch runs. Returns the notes
/// that say what was assumed.
pub fn assume_stage_counts(kernel: &FunctionDef, params: &mut Bindings) -> Vec<String> {
    let mut counts: Vec<Expr> = Vec::new();
    cute_ir::ast::any_call(&kernel.body, |c| {
        if c.api == Some(Api::Pipeline) && c.func.dotted().is_some_and(|d| d.ends_with(".create")) {
            counts.extend(c.kwargs.iter().filter(|(k, _)| k == "num_stages").map(|(_, e)| e.clone()));
        }
        false
    });
    let mut notes = Vec::new();
    for count in &counts {
        let slot = match count {
            Expr::Name(n) => params.get_mut(n),
            Expr::Attr { base, attr } if matches!(base.as_ref(), Expr::Name(b) if b == "self") => match params.get_mut("self") {
                Some(Value::Object(o)) if o.attrs.get(attr).is_some_and(Value::is_unknown) => {
                    std::sync::Arc::make_mut(o).attrs.get_mut(attr)
                }
                _ => None,
            },
            _ => None,
        };
        if let Some(v) = slot.filter(|v| v.is_unknown()) {
            *v = Value::Int(ASSUMED_STAGES);
            let name = count.dotted().unwrap_or_default();
            notes.push(format!("the stage count `{name}` is not known statically: assuming {ASSUMED_STAGES} stages"));
        }
    }
    notes
}

/// What `consumer_try_wait` / `producer_try_acquire` return: whether the
/// phase of the stage they test had completed (known only at run time), with
/// that stage's barrier and phase.
const TOKEN: &str = cute_ir::eval::RUNTIME_VALUE;

/// What a `cutlass.pipeline` call means for the thread that makes it.
pub enum Action {
    /// A plain value (a group, a state, a pipeline object).
    Value(Value),
    /// A value the model makes with an assumption, which is said.
    Assumed(Value, String),
    /// Initialise the ring from warp 0 (each barrier with its count and its
    /// name in the ring, `full[0]`), then synchronize as `sync` says.
    /// `assumed`: what the model takes for a value it does not know.
    Create { pipeline: Value, inits: Vec<(SmemRef, u32, String)>, sync: InitSync, assumed: Option<String> },
    /// Each in turn (a signal that reaches the barriers of several CTAs).
    Each(Vec<Action>),
    Wait { bar: SmemRef, phase: i64 },
    /// Every calling thread arrives.
    Arrive { bar: SmemRef },
    /// Lane 0 of the calling warp arrives once; with `commit`, as a
    /// `tcgen05.commit` (the UMMA side of a Blackwell pipeline), once the
    /// MMAs the thread issued are done.
    ArriveOneLane { bar: SmemRef, commit: bool },
    /// Wait, then lane 0 arrives on `full` (TMA producer acquire),
    /// announcing `bytes` (the pipeline's `tx_count`).
    WaitThenArriveOneLane { wait: SmemRef, phase: i64, arrive: SmemRef, bytes: Value },
    /// Lane 0 of the calling warp arrives, announcing `bytes` (a barrier
    /// array's `arrive_and_expect_tx`, a TMA producer's arrival).
    ArriveTx { bar: SmemRef, bytes: Value },
    /// `producer_tail`: one acquire per stage, advancing the state.
    Tail { waits: Vec<(SmemRef, i64)> },
    /// A wait handed the try-wait token of another stage or phase (see
    /// `model::StaleToken`): the wait, made, and what to report.
    StaleToken { bar: SmemRef, phase: i64, token_site: TextRange, tested: String, waited: String },
    Nothing,
    /// A `PipelineTmaStore` method on the calling thread's bulk groups
    /// (`producer_commit`, `producer_acquire`, `producer_tail`), with the
    /// pipeline's stage count when known.
    BulkGroup { method: String, stages: Option<i64> },
    Unsupported(String),
    /// A pipeline method called on something that is not a pipeline this
    /// kernel creates (the call, as written): a parameter, or what an
    /// unmodelled `create` gave.
    NotAPipeline(String),
}

/// How `create` makes its barriers' initialisation visible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitSync {
    /// `defer_sync=True`: the kernel does (`pipeline_init_arrive/wait`).
    Deferred,
    /// A CTA barrier.
    Cta,
    /// Over a cluster: a relaxed cluster arrive, then a cluster wait.
    Cluster,
}

/// What an unmodelled `create` gives: its own note says why, so the calls
/// on it add none.
pub const UNMODELLED_PIPELINE: &str = "a pipeline whose creation is not modelled";

/// Methods only a `NamedBarrier` has (`arrive` and `wait` are pipelines' too).
pub fn is_named_barrier_method(method: &str) -> bool {
    matches!(
        method,
        "arrive_and_wait" | "arrive_unaligned" | "wait_unaligned" | "sync" | "arrive_w_index" | "arrive_and_wait_w_index" | "get_barrier"
    )
}

fn kwarg<'a>(kwargs: &'a [(String, Value)], name: &str) -> Option<&'a Value> {
    kwargs.iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

pub(crate) fn obj(class: &str, attrs: &[(&str, Value)]) -> Value {
    Value::Object(std::sync::Arc::new(Object {
        class: class.to_string(),
        attrs: attrs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect::<BTreeMap<_, _>>(),
    }))
}

fn attr(v: &Value, name: &str) -> Option<Value> {
    match v {
        Value::Object(o) => o.attrs.get(name).cloned(),
        _ => None,
    }
}

fn stage_barrier(pipeline: &Value, which: &str, state: &Value) -> Option<(SmemRef, i64)> {
    let base = match attr(pipeline, which)? {
        Value::Smem(s) => s,
        _ => return None,
    };
    let index = attr(state, "index")?.as_int()?;
    let phase = attr(state, "phase")?.as_int()?;
    Some((SmemRef { offset: base.offset + index, ..base }, phase))
}

/// Threads a cooperative group stands for (`threads_per_cta` for
/// `Agent.ThreadBlock`).
fn group_threads(group: &Value, threads_per_cta: u32, ctas: u32) -> Result<u32, Option<std::sync::Arc<str>>> {
    if let Value::Unknown(why, _) = group {
        return Err(Some(why.clone()));
    }
    let size = match attr(group, "size") {
        Some(Value::Int(n)) => n as u32,
        Some(Value::Unknown(why, _)) => return Err(Some(why)),
        _ => return Err(None),
    };
    let agent = match attr(group, "agent") {
        Some(Value::Str(s)) => s,
        _ => return Err(None),
    };
    Ok(match agent.as_str() {
        "Thread" => size,
        "Warp" => size * 32,
        "ThreadBlock" => size * threads_per_cta,
        "ThreadBlockCluster" => size * threads_per_cta * ctas,
        _ => return Err(None),
    })
}

/// The arrivals a stage's `empty` barrier expects when a `PipelineTmaUmma`
/// is created with `enable_multicast_signaling=True`: the consumer group
/// counts the threads of the consumer warps in a CTA, and each warp signals
/// once per multicast peer (the CTAs of its row when `mcast_mode_mn` selects
/// M, of its column when it selects N, itself counted once). As the
/// package's `create` computes it; `None` for a group of partial warps,
/// which it rejects.
fn multicast_signalers(consumer_threads: u32, (ctas_m, ctas_n): (i64, i64), (m, n): (bool, bool)) -> Option<u32> {
    if consumer_threads % 32 != 0 {
        return None;
    }
    let peers = if m { ctas_n } else { 0 } + if n { ctas_m } else { 0 } - i64::from(m && n);
    u32::try_from(peers).ok().filter(|&p| p > 0).map(|p| p * (consumer_threads / 32))
}

/// The thread that makes a pipeline call, and the cluster it runs in.
#[derive(Clone, Copy, Debug)]
pub struct Caller {
    pub threads_per_cta: u32,
    /// CTAs in the cluster.
    pub ctas: u32,
    /// The index of the cluster's first CTA among the modelled CTAs.
    pub cluster_base: u32,
    /// The caller's CTA's rank in its cluster.
    pub rank: u32,
    /// The caller's index in its CTA.
    pub tid: u32,
}

/// Whether the keyword argument `name` of a pipeline call is read only as
/// an offset from the calling thread's lane: `tidx=` of `create` must name
/// a thread in the caller's lane (see [`action`]), so two lanes that pass
/// their own index less the same whole warps make the same pipeline.
pub fn reads_as_lane_offset(name: &str) -> bool {
    name == "tidx"
}

/// The meaning of a pipeline call made by `caller`. `receiver` is the
/// evaluated object a method is called on (for `pipe.consumer_wait(state)`).
pub fn action(call: &Call, receiver: Option<&Value>, args: &[Value], kwargs: &[(String, Value)], caller: Caller) -> Action {
    let Caller { threads_per_cta, ctas, tid, .. } = caller;
    let name = call.name();
    let arg_text = |i: usize| call.args.get(i).and_then(Expr::dotted).unwrap_or_default();
    match name {
        "CooperativeGroup" => {
            let agent = arg_text(0).rsplit('.').next().unwrap_or("").to_string();
            let size = args.get(1).cloned().or_else(|| kwarg(kwargs, "size").cloned()).unwrap_or(Value::Int(1));
            Action::Value(obj(GROUP, &[("agent", Value::Str(agent)), ("size", size)]))
        }
        "make_pipeline_state" => {
            // `ProducerConsumer` (one thread both fetches and reads, as a
            // CLC scheduler warp does) starts as a producer does.
            let producer = arg_text(0).rsplit('.').next().is_some_and(|t| t.starts_with("Producer"));
            let stages = args.get(1).cloned().or_else(|| kwarg(kwargs, "stages").cloned());
            // A stage count not known statically (`self.num_acc_stage`) is
            // the one its pipeline is modelled with when that one is not
            // known either (see `create`); a state used on a pipeline of
            // another, known, count is not modelled (`stage_action`).
            let (stages, assumed) = match stages.as_ref().and_then(Value::as_int) {
                Some(n) => (Value::Int(n), false),
                None => (Value::Int(ASSUMED_STAGES), true),
            };
            let state = obj(
                STATE,
                &[
                    ("stages", stages),
                    ("index", Value::Int(0)),
                    ("phase", Value::Int(producer as i64)),
                    ("count", Value::Int(0)),
                    ("assumed_stages", Value::Bool(assumed)),
                ],
            );
            if assumed {
                Action::Assumed(
                    state,
                    format!("the stage count of a pipeline state is not known statically: assuming {ASSUMED_STAGES} stages, as for its pipeline"),
                )
            } else {
                Action::Value(state)
            }
        }
        // `PipelineState(stages, count, index, phase)` made by hand (a
        // package's `_w_index` methods make one for a stage and phase).
        "PipelineState" if receiver.is_none() => {
            let field = |name: &str, pos: usize| kwarg(kwargs, name).or_else(|| args.get(pos)).cloned().unwrap_or(Value::unknown(format!("the {name} of a pipeline state")));
            Action::Value(obj(
                STATE,
                &[("stages", field("stages", 0)), ("count", field("count", 1)), ("index", field("index", 2)), ("phase", field("phase", 3))],
            ))
        }
        "create" => {
            let written = call.func.dotted().unwrap_or_default();
            let class_name = written.rsplit('.').nth(1).unwrap_or("");
            let class = format!("`{written}`");
            if class_name == ORDER {
                return order::create(&written, call.range.start, kwargs, caller);
            }
            if class_name == TMA_STORE {
                return Action::Value(obj(TMA_STORE, &[("stages", kwarg(kwargs, "num_stages").cloned().unwrap_or(Value::None))]));
            }
            let Some(kind) = Kind::of_name(class_name) else {
                return Action::Unsupported(class);
            };
            // Arguments that change the protocol the model does not know
            // (`enable_multicast_signaling=True` on the Hopper pipelines
            // signals the consumers per warp and peer): not modelled, never
            // ignored.
            const MODELLED: &[&str] = &[
                "barrier_storage",
                "num_stages",
                "producer_group",
                "consumer_group",
                "tx_count",
                "cta_layout_vmnk",
                "defer_sync",
                "name",
                "loc",
                "ip",
                "tidx",
            ];
            // `tidx=` picks the lanes that signal a consumer release (lane
            // `tidx % 32` of each warp signals the CTA of that rank): an index
            // offset from the thread's own by whole warps (`tidx - 32 *
            // first_warp`) picks the lanes the default does.
            if let Some(t) = kwarg(kwargs, "tidx").filter(|t| !matches!(t, Value::None)) {
                match t.as_int() {
                    Some(t) if t.rem_euclid(32) == i64::from(tid % 32) => {}
                    Some(_) => return Action::Unsupported(format!("{class} with a `tidx=` in another lane than the calling thread's")),
                    None => return Action::Unsupported(format!("{class} with a `tidx=` not known statically")),
                }
            }
            // `mcast_mode_mn=` chooses the peers a release is multicast to
            // (those in the same row, column, or either): in a cluster of
            // one CTA there is none, and every mode but `(0, 0)` signals
            // the CTA itself.
            // (A `PipelineTmaUmma` over a cluster multicasts along the
            // modes chosen, see `cluster.rs`.)
            let mcast_mode_mn = match kwarg(kwargs, "mcast_mode_mn").map(|v| match v {
                Value::Tuple(m) => m.iter().map(Value::as_int).collect::<Option<Vec<_>>>(),
                _ => None,
            }) {
                None => Some((true, true)),
                Some(Some(m)) if m.len() == 2 && m.iter().all(|x| (0..=1).contains(x)) && m != [0, 0] => Some((m[0] == 1, m[1] == 1)),
                Some(_) => None,
            };
            let modelled_multicast = |k: &str| {
                (k == "mcast_mode_mn" && mcast_mode_mn.is_some() && (ctas == 1 || kind == Kind::TmaUmma))
                    || (k == "enable_multicast_signaling" && kind == Kind::TmaUmma)
            };
            if let Some((k, _)) = kwargs.iter().find(|(k, v)| {
                !MODELLED.contains(&k.as_str()) && !matches!(v, Value::None | Value::Bool(false)) && !modelled_multicast(k)
            }) {
                return Action::Unsupported(format!("{class} with `{k}=`"));
            }
            // Across a cluster the Blackwell pipelines signal the peer CTAs
            // the cluster layout names; the Hopper TMA pipeline's releases
            // (one lane per peer) are not modelled.
            let cluster_layout = kwarg(kwargs, "cta_layout_vmnk").filter(|l| !matches!(l, Value::None) && ctas > 1);
            let clustered = cluster_layout.is_some();
            let signals = match (kind, cluster_layout) {
                (_, None) | (Kind::Async | Kind::ClcFetch, _) => None,
                (Kind::TmaUmma | Kind::UmmaAsync | Kind::AsyncUmma, Some(layout)) => {
                    match cluster::ClusterLayout::of_value(layout, ctas) {
                        Ok(layout) => Some(cluster::signals(kind, &layout, caller.rank, mcast_mode_mn.unwrap_or((true, true)))),
                        Err(why) => return Action::Unsupported(format!("{class} across a cluster of {ctas} CTAs ({why})")),
                    }
                }
                (Kind::CpAsync | Kind::TmaAsync, Some(_)) => {
                    return Action::Unsupported(format!("{class} across a cluster of {ctas} CTAs (multicast signals)"))
                }
            };
            // The stage count is often computed on the host from the shared
            // memory left (`self.num_ab_stage`); the protocol does not depend
            // on it, so a ring of two stages stands for it, and says so. The
            // group sizes are arrival counts: those are never guessed.
            let (stages, assumed) = match kwarg(kwargs, "num_stages").map(|v| (v.as_int(), v)) {
                Some((Some(n), _)) => (Some(n), None),
                Some((None, _)) => (
                    Some(ASSUMED_STAGES),
                    Some(format!("the stage count of a `{class_name}` is not known statically: assuming {ASSUMED_STAGES} stages")),
                ),
                None => (None, None),
            };
            let group = |name: &str| match kwarg(kwargs, name) {
                Some(g) => group_threads(g, threads_per_cta, ctas),
                None => Err(None),
            };
            let (producers, consumers) = (group("producer_group"), group("consumer_group"));
            let storage = match kwarg(kwargs, "barrier_storage") {
                Some(Value::Smem(s)) => Some(s.clone()),
                None | Some(Value::None) => Some(SmemRef::new(format!("pipeline@{}", call.range.start))),
                _ => None,
            };
            // Which value is missing, and, where the evaluator knows it,
            // what it came from: the author can then see which host value
            // or attribute to make known.
            let not_known = |what: &str, why: Option<std::sync::Arc<str>>| {
                let from = why.map(|w| format!(", from {w}")).unwrap_or_default();
                Action::Unsupported(format!("{class} ({what} is not known statically{from})"))
            };
            let (stages, producers, consumers, base) = match (stages, producers, consumers, storage) {
                (Some(stages), Ok(producers), Ok(consumers), Some(base)) => (stages, producers, consumers, base),
                (None, ..) => return not_known("its stage count", None),
                (_, Err(why), ..) => return not_known("the size of its producer group", why),
                (_, _, Err(why), _) => return not_known("the size of its consumer group", why),
                (.., None) => return not_known("its barrier storage", None),
            };
            let consumers = match kwarg(kwargs, "enable_multicast_signaling") {
                None | Some(Value::None | Value::Bool(false)) => consumers,
                Some(Value::Bool(true)) => {
                    let layout_mn = match &cluster_layout {
                        Some(layout) => match cluster::ClusterLayout::of_value(layout, ctas) {
                            Ok(layout) => layout.extents_mn(),
                            Err(why) => return Action::Unsupported(format!("{class} across a cluster of {ctas} CTAs ({why})")),
                        },
                        None => (1, 1),
                    };
                    match multicast_signalers(consumers, layout_mn, mcast_mode_mn.unwrap_or((true, true))) {
                        Some(n) => n,
                        None => {
                            return Action::Unsupported(format!(
                                "{class} with `enable_multicast_signaling=True` and a consumer group of {consumers} threads, not whole warps (which the package rejects)"
                            ))
                        }
                    }
                }
                Some(_) => return Action::Unsupported(format!("{class} with an `enable_multicast_signaling=` not known statically")),
            };
            // The package's own synchronization after the inits: a CTA
            // barrier, or a (relaxed) cluster barrier over a cluster.
            let sync = match kwarg(kwargs, "defer_sync").and_then(Value::as_bool) {
                Some(true) => InitSync::Deferred,
                _ if clustered => InitSync::Cluster,
                _ => InitSync::Cta,
            };
            let full = base.clone();
            let empty = SmemRef { offset: base.offset + stages, ..base };
            // A leader's `full` phase also waits for the copies of the CTAs
            // that deliver into it (`cluster::Signals::delivered_by`).
            let full_count = producers + signals.as_ref().map_or(0, |s| s.delivered_by.len() as u32);
            let mut inits = Vec::new();
            for i in 0..stages {
                inits.push((SmemRef { offset: full.offset + i, ..full.clone() }, full_count, format!("full[{i}]")));
                inits.push((SmemRef { offset: empty.offset + i, ..empty.clone() }, consumers, format!("empty[{i}]")));
            }
            // Whom this CTA's signals reach: the CTAs, as indices among the
            // modelled ones, of each side's barriers.
            let ctas_of = |ranks: &[u32]| Value::Tuple(ranks.iter().map(|r| Value::Int(i64::from(caller.cluster_base + r))).collect());
            let (leader, full_ctas, empty_ctas, delivers_to) = match &signals {
                Some(s) => (s.leader, ctas_of(&s.full), ctas_of(&s.empty), ctas_of(&s.delivers_to)),
                // The CLC fetch: lane `l` of the fetching warp announces the
                // response on CTA `l`'s `full` barrier, for every CTA of the
                // cluster (the warp's lanes in lockstep, its lane 0 makes
                // them all); every consumer releases on the first CTA's
                // `empty`.
                None if kind == Kind::ClcFetch => {
                    let all: Vec<u32> = (0..ctas.min(32)).collect();
                    (true, ctas_of(&all), ctas_of(&[0]), Value::None)
                }
                None => (true, Value::None, Value::None, Value::None),
            };
            let pipeline = obj(
                PIPELINE,
                &[
                    ("kind", Value::Str(kind.name().to_string())),
                    ("stages", Value::Int(stages)),
                    ("full", Value::Smem(full)),
                    ("empty", Value::Smem(empty)),
                    ("tx_count", kwarg(kwargs, "tx_count").cloned().unwrap_or(Value::unknown("the `tx_count` of the pipeline"))),
                    ("leader", Value::Bool(leader)),
                    ("full_ctas", full_ctas),
                    ("empty_ctas", empty_ctas),
                    ("delivers_to", delivers_to),
                    ("rank", Value::Int(i64::from(caller.rank))),
                ],
            );
            Action::Create { pipeline, inits, sync, assumed }
        }
        "make_participants" | "make_producer" | "make_consumer" => {
            let Some(pipe) = receiver.filter(|r| matches!(r, Value::Object(o) if o.class == PIPELINE)) else {
                return Action::NotAPipeline(call.func.dotted().unwrap_or_else(|| name.to_string()));
            };
            let participant = |producer: bool| {
                let id = format!("{}@{}", if producer { "producer" } else { "consumer" }, call.range.start);
                obj(PARTICIPANT, &[("pipeline", pipe.clone()), ("producer", Value::Bool(producer)), ("id", Value::Str(id))])
            };
            Action::Value(match name {
                "make_producer" => participant(true),
                "make_consumer" => participant(false),
                _ => Value::Tuple(vec![participant(true), participant(false)]),
            })
        }
        method if receiver.is_some_and(|r| matches!(r, Value::Object(o) if o.class == TMA_STORE)) => match method {
            // `cp.async.bulk.commit_group` / `wait_group.read`: the calling
            // thread's own copies, for the memory analysis.
            "producer_acquire" | "producer_commit" | "producer_tail" => Action::BulkGroup {
                method: method.to_string(),
                stages: receiver.and_then(|r| attr(r, "stages")).and_then(|v| v.as_int()),
            },
            _ => Action::Unsupported(format!("`{method}` on a `PipelineTmaStore`")),
        },
        method => {
            let Some(pipe) = receiver.filter(|r| matches!(r, Value::Object(o) if o.class == PIPELINE)) else {
                return Action::NotAPipeline(call.func.dotted().unwrap_or(method.to_string()));
            };
            // flash-attention's pipelines (its `create` returns subclasses of
            // the package's) add `producer_acquire_w_index_phase(index,
            // phase)`, `producer_commit_w_index(index)` and their consumer
            // twins: the method of that name on the state (index, phase).
            if let Some(base) = method.strip_suffix("_w_index_phase").or_else(|| method.strip_suffix("_w_index")) {
                let phase = if method.ends_with("_phase") { args.get(1).cloned() } else { Some(Value::Int(0)) };
                let state = state(
                    attr(pipe, "stages").unwrap_or(Value::None),
                    args.first().cloned().unwrap_or(Value::None),
                    phase.unwrap_or(Value::None),
                );
                let token = if method.ends_with("_phase") { args.get(2).or_else(|| kwarg(kwargs, "try_wait_token")).or_else(|| kwarg(kwargs, "try_acquire_token")) } else { None };
                return match token.filter(|t| !matches!(t, Value::None)) {
                    Some(token) => with_token(pipe, base, &state, token),
                    None => stage_action(pipe, base, &state),
                };
            }
            let state = args.first().cloned().unwrap_or(Value::None);
            if matches!(method, "consumer_try_wait" | "producer_try_acquire") {
                return try_wait(pipe, method, &state, call.range);
            }
            let token = args.get(1).or_else(|| kwarg(kwargs, "try_wait_token")).or_else(|| kwarg(kwargs, "try_acquire_token"));
            match token {
                Some(token) => with_token(pipe, method, &state, token),
                None => stage_action(pipe, method, &state),
            }
        }
    }
}

/// `consumer_try_wait(state)` / `producer_try_acquire(state)`: a test of
/// the stage's phase that does not block. Its token remembers the stage and
/// phase it tested, and where it was made (see `with_token`).
fn try_wait(pipe: &Value, method: &str, state: &Value, site: TextRange) -> Action {
    let which = if method == "consumer_try_wait" { "full" } else { "empty" };
    Action::Value(match stage_barrier(pipe, which, state) {
        Some((bar, phase)) => obj(
            TOKEN,
            &[
                ("barrier", Value::Smem(bar)),
                ("phase", Value::Int(phase)),
                ("site", Value::Tuple(vec![Value::Int(site.start as i64), Value::Int(site.end as i64)])),
            ],
        ),
        None => Value::unknown("whether the stage's phase has completed (a try-wait token)"),
    })
}

/// `consumer_wait(state, token)` / `producer_acquire(state, token)`: the
/// package skips the wait when the token is true, that is when the phase it
/// tested had completed. A token of this very stage and phase skips only a
/// wait that would pass at once, so the wait is modelled. A token of another
/// stage or phase (taken before the state advanced, or of another state)
/// can be true while this phase is still open: that is reported
/// (`Action::StaleToken`).
fn with_token(pipe: &Value, method: &str, state: &Value, token: &Value) -> Action {
    let which = match method {
        "consumer_wait" => "full",
        "producer_acquire" => "empty",
        _ => return stage_action(pipe, method, state),
    };
    let (Some(Value::Smem(tested)), Some(tested_phase), Some(Value::Tuple(site))) =
        (attr(token, "barrier"), attr(token, "phase").and_then(|p| p.as_int()), attr(token, "site"))
    else {
        return stage_action(pipe, method, state);
    };
    let Some((bar, phase)) = stage_barrier(pipe, which, state) else { return stage_action(pipe, method, state) };
    if bar == tested && phase == tested_phase {
        return stage_action(pipe, method, state);
    }
    if method == "producer_acquire" {
        return Action::Unsupported("`producer_acquire` with the try-acquire token of another stage or phase".to_string());
    }
    let base = match attr(pipe, which) {
        Some(Value::Smem(b)) => b.offset,
        _ => bar.offset,
    };
    let token_site = match site.as_slice() {
        [start, end] => TextRange { start: start.as_int().unwrap_or(0) as u32, end: end.as_int().unwrap_or(0) as u32 },
        _ => TextRange { start: 0, end: 0 },
    };
    Action::StaleToken {
        tested: format!("stage {}, phase {}", tested.offset - base, tested_phase),
        waited: format!("stage {}, phase {}", bar.offset - base, phase),
        bar,
        phase,
        token_site,
    }
}

/// A `PipelineState` at `index` and `phase` of a ring of `stages`, not yet
/// advanced.
fn state(stages: Value, index: Value, phase: Value) -> Value {
    obj(STATE, &[("stages", stages), ("index", index), ("phase", phase), ("count", Value::Int(0))])
}

/// The state a participant starts from: index 0, phase 1 for a producer (a
/// free ring lets its first acquire pass), 0 for a consumer.
pub fn initial_state(pipe: &Value, producer: bool) -> Value {
    let stages = attr(pipe, "stages").unwrap_or(Value::unknown("the stage count"));
    state(stages, Value::Int(0), Value::Int(producer as i64))
}

/// A handle on the stage `state` of `pipe`.
pub fn handle(pipe: &Value, producer: bool, state: &Value) -> Value {
    let field = |name: &str| attr(state, name).unwrap_or(Value::unknown(format!("the handle's {name}")));
    let barrier = match stage_action(pipe, if producer { "producer_get_barrier" } else { "consumer_get_barrier" }, state) {
        Action::Value(v) => v,
        _ => Value::unknown("the handle's barrier"),
    };
    obj(
        HANDLE,
        &[
            ("pipeline", pipe.clone()),
            ("producer", Value::Bool(producer)),
            ("state", state.clone()),
            ("index", field("index")),
            ("count", field("count")),
            ("barrier", barrier),
        ],
    )
}

/// An attribute of a pipeline object.
pub fn attribute(v: &Value, name: &str) -> Option<Value> {
    attr(v, name)
}

/// What `pipe.method(state)` does, for the methods that take a state.
/// Whether the signal on a pipeline's `which` barrier (`full` from the
/// producer, `empty` from the consumer) is a `tcgen05.commit`: the MMA side
/// of a Blackwell pipeline.
fn umma_side(kind: Kind, which: &str) -> bool {
    match kind {
        Kind::UmmaAsync => which == "full",
        Kind::TmaUmma | Kind::AsyncUmma => which == "empty",
        _ => false,
    }
}

pub fn stage_action(pipe: &Value, method: &str, state: &Value) -> Action {
    let kind = match attr(pipe, "kind") {
        Some(Value::Str(k)) => Kind::of_name(&k).unwrap_or(Kind::Async),
        _ => Kind::Async,
    };
    let (produce, consume) = kind.signals();
    // A state whose stage count was assumed, on a pipeline of a known other
    // count: the ring the code walks is not the one modelled.
    if matches!(attr(state, "assumed_stages"), Some(Value::Bool(true)))
        && attr(pipe, "stages").and_then(|v| v.as_int()).is_some_and(|n| n != ASSUMED_STAGES)
    {
        return Action::Unsupported(format!("`{method}` on a pipeline state whose stage count is not known statically"));
    }
    let at = |which: &str| stage_barrier(pipe, which, state);
    let unsupported = || Action::Unsupported(format!("`{method}` on a state that is not known statically"));
    // A signal on the stage's barrier of every CTA it reaches (the
    // caller's own outside a cluster).
    let signal = |how: Signal, which: &str, bar: SmemRef| {
        let one = |bar: SmemRef| match how {
            Signal::Threads => Action::Arrive { bar },
            Signal::OneLanePerWarp => Action::ArriveOneLane { bar, commit: umma_side(kind, which) },
            Signal::Tma => Action::Nothing,
        };
        match in_ctas(pipe, &format!("{which}_ctas"), &bar) {
            Some(bars) => Action::Each(bars.into_iter().map(one).collect()),
            None => one(bar),
        }
    };
    let leader = !matches!(attr(pipe, "leader"), Some(Value::Bool(false)));
    // Over a cluster, a TMA producer's copies of the stage it acquired
    // complete the phases of the other leaders they are delivered to.
    let deliveries = |acquire: Action, full: &SmemRef| match in_ctas(pipe, "delivers_to", full) {
        Some(bars) if !bars.is_empty() => {
            Action::Each(std::iter::once(acquire).chain(bars.into_iter().map(|bar| Action::ArriveOneLane { bar, commit: false })).collect())
        }
        _ => acquire,
    };
    match method {
        "producer_acquire" => match (at("empty"), at("full")) {
            // A CLC fetch: the lanes that announce the response on the
            // `full` barrier of a CTA do (see `create`).
            (Some((bar, phase)), Some((full, _))) if kind == Kind::ClcFetch => Action::Each(vec![
                Action::Wait { bar, phase },
                Action::Assumed(Value::None, "the response of a cluster launch control query is assumed to arrive".to_string()),
                signal(Signal::OneLanePerWarp, "full", full),
            ]),
            // The CTA that does not lead its pair waits; its copies complete
            // the leader's phase.
            (Some((bar, phase)), Some((full, _))) if produce == Signal::Tma && !leader => deliveries(Action::Wait { bar, phase }, &full),
            (Some((wait, phase)), Some((full, _))) if produce == Signal::Tma => {
                // A `PipelineTmaUmma` producer announces the bytes from the
                // leader CTA only, for the copies of both CTAs of a pair.
                let bytes = match kind {
                    Kind::TmaAsync => attr(pipe, "tx_count").unwrap_or(Value::unknown("the `tx_count` of the pipeline")),
                    _ => Value::unknown(format!("the transaction bytes of a `{}` (announced by the leader CTA)", kind.name())),
                };
                deliveries(Action::WaitThenArriveOneLane { wait, phase, arrive: full.clone(), bytes }, &full)
            }
            (Some((bar, phase)), _) => Action::Wait { bar, phase },
            _ => unsupported(),
        },
        "producer_commit" => at("full").map(|(bar, _)| signal(produce, "full", bar)).unwrap_or_else(unsupported),
        "consumer_wait" => at("full").map(|(bar, phase)| Action::Wait { bar, phase }).unwrap_or_else(unsupported),
        "consumer_release" => at("empty").map(|(bar, _)| signal(consume, "empty", bar)).unwrap_or_else(unsupported),
        "producer_get_barrier" => at("full").map(|(b, _)| Action::Value(Value::Smem(b))).unwrap_or_else(unsupported),
        "consumer_get_barrier" => at("empty").map(|(b, _)| Action::Value(Value::Smem(b))).unwrap_or_else(unsupported),
        // `PipelineUmmaAsync`'s tail: the even ranks of the cluster advance
        // to the last stage used and acquire it once.
        "producer_tail" if kind == Kind::UmmaAsync => {
            let stages = attr(pipe, "stages").and_then(|v| v.as_int()).unwrap_or(0);
            let even = attr(pipe, "rank").and_then(|r| r.as_int()).is_none_or(|r| r % 2 == 0);
            if !even || stages < 1 {
                return Action::Tail { waits: Vec::new() };
            }
            let last = (1..stages).try_fold(state.clone(), |s, _| advanced(&s));
            match last.as_ref().and_then(|s| stage_barrier(pipe, "empty", s)) {
                Some(wait) => Action::Tail { waits: vec![wait] },
                None => unsupported(),
            }
        }
        "producer_tail" => {
            let mut s = state.clone();
            let mut waits = Vec::new();
            let stages = attr(pipe, "stages").and_then(|v| v.as_int()).unwrap_or(0);
            for _ in 0..stages {
                match stage_barrier(pipe, "empty", &s) {
                    Some(w) => waits.push(w),
                    None => return unsupported(),
                }
                s = advanced(&s).unwrap_or(s);
            }
            Action::Tail { waits }
        }
        _ => Action::Unsupported(format!("`{method}`")),
    }
}

/// `bar` in each CTA the pipeline's attribute `ctas` lists (indices among
/// the modelled CTAs); `None` when it lists none (outside a cluster).
fn in_ctas(pipe: &Value, ctas: &str, bar: &SmemRef) -> Option<Vec<SmemRef>> {
    match attr(pipe, ctas) {
        Some(Value::Tuple(ctas)) => Some(ctas.iter().map(|c| SmemRef { cta: c.as_int().map(|c| c as u32), ..bar.clone() }).collect()),
        _ => None,
    }
}

/// `PipelineState.advance()`: next index, phase flipped on wrap.
pub fn advanced(state: &Value) -> Option<Value> {
    let Value::Object(o) = state else { return None };
    if o.class != STATE {
        return None;
    }
    let stages = o.attrs.get("stages")?.as_int()?;
    let mut index = o.attrs.get("index")?.as_int()? + 1;
    let mut phase = o.attrs.get("phase")?.as_int()?;
    let count = o.attrs.get("count").and_then(Value::as_int).unwrap_or(0) + 1;
    if index == stages {
        index = 0;
        phase ^= 1;
    }
    let mut next = o.clone();
    let attrs = &mut std::sync::Arc::make_mut(&mut next).attrs;
    attrs.insert("index".into(), Value::Int(index));
    attrs.insert("phase".into(), Value::Int(phase));
    attrs.insert("count".into(), Value::Int(count));
    Some(Value::Object(next))
}

#[cfg(test)]
mod tests {
    use super::multicast_signalers;

    /// The `empty` count `PipelineTmaUmma.create(..., enable_multicast_signaling=True)`
    /// computes: one arrival per consumer warp and multicast peer.
    #[test]
    fn multicast_signaling_counts_a_warp_per_peer() {
        // One CTA: the warp signals itself.
        assert_eq!(multicast_signalers(32, (1, 1), (true, true)), Some(1));
        // 2 x 2 CTAs, both modes: its row and its column, itself once.
        assert_eq!(multicast_signalers(32, (2, 2), (true, true)), Some(3));
        // 2 CTAs along M, 4 along N; A multicast along N only (mode M).
        assert_eq!(multicast_signalers(64, (2, 4), (true, false)), Some(8));
        assert_eq!(multicast_signalers(64, (2, 4), (false, true)), Some(4));
        // Partial warps, and no peer at all, are rejected by the package.
        assert_eq!(multicast_signalers(48, (1, 1), (true, true)), None);
        assert_eq!(multicast_signalers(32, (2, 2), (false, false)), None);
    }
}
