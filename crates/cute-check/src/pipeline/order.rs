//! `cutlass.pipeline.PipelineOrder`: groups of threads that take turns
//! (the math warp groups of a ping-pong kernel), as the installed package
//! implements it.
//!
//! - `PipelineOrder.create(depth=D, length=L, group_id=g, producer_group=P,
//!   barrier_storage=base)`: `D * L` mbarriers, `order[k] = base + k`, each
//!   initialised with P's thread count by warp 0 (its elected lane), then,
//!   unless `defer_sync=True`, `mbarrier_init_fence()` and a CTA barrier.
//!   The group's state starts at index 0, phase `g == 0`: group 0 goes
//!   first (its first wait is on a phase that has already completed), the
//!   others wait for their turn.
//! - `wait(state=None)`: wait on `order[state.index * L + g]` with
//!   `state.phase`.
//! - `arrive(state=None)`: every calling thread arrives on
//!   `order[state.index * L + (g + 1) % L]`, handing the turn to the next
//!   group; then the state advances. Without a state the object's own
//!   advances in place and `None` is returned; with one, that state
//!   advances and is returned (the package advances it in place and
//!   returns it unless it is the object's own, which the kernel then holds
//!   already: either way the thread goes on with the advanced state).
//!
//! The object's own state lives with the thread, keyed by the object's
//! `id` (see `instantiate/participants.rs`, `order_method`).

use cute_ir::eval::{SmemRef, Value};

use super::{attr, group_threads, kwarg, obj, state, Action, Caller, InitSync};

/// A `PipelineOrder` object: attributes `order` (its first barrier),
/// `depth`, `length`, `group_id`, `id`.
pub const ORDER: &str = "PipelineOrder";

/// `PipelineOrder.create(...)`.
pub(super) fn create(written: &str, site_start: u32, kwargs: &[(String, Value)], caller: Caller) -> Action {
    let class = format!("`{written}`");
    const MODELLED: &[&str] = &["barrier_storage", "depth", "length", "group_id", "producer_group", "defer_sync", "name", "loc", "ip"];
    if let Some((k, _)) = kwargs.iter().find(|(k, v)| !MODELLED.contains(&k.as_str()) && !matches!(v, Value::None)) {
        return Action::Unsupported(format!("{class} with `{k}=`"));
    }
    let int = |name: &str| kwarg(kwargs, name).and_then(Value::as_int);
    let not_known = |what: &str| Action::Unsupported(format!("{class} ({what} is not known statically)"));
    let (Some(depth), Some(length)) = (int("depth"), int("length")) else { return not_known("its depth or length") };
    if depth < 1 || length < 1 || depth * length > 1024 {
        return Action::Unsupported(format!("{class} with depth {depth} and length {length}"));
    }
    // A thread outside the ordered groups (a producer warp given its own
    // warp-group index) may create the object without using it: its
    // `group_id` is only read by `wait` and `arrive`.
    let Some(group_id) = int("group_id") else { return not_known("its `group_id`") };
    let producers = match kwarg(kwargs, "producer_group").map(|g| group_threads(g, caller.threads_per_cta, caller.ctas)) {
        Some(Ok(n)) => n,
        _ => return not_known("the size of its producer group"),
    };
    let base = match kwarg(kwargs, "barrier_storage") {
        Some(Value::Smem(s)) => s.clone(),
        None | Some(Value::None) => SmemRef::new(format!("order@{site_start}")),
        _ => return not_known("its barrier storage"),
    };
    let inits = (0..depth * length)
        .map(|k| (SmemRef { offset: base.offset + k, ..base.clone() }, producers, format!("order[{k}]")))
        .collect();
    let sync = match kwarg(kwargs, "defer_sync").and_then(Value::as_bool) {
        Some(true) => InitSync::Deferred,
        _ => InitSync::Cta,
    };
    let order = obj(
        ORDER,
        &[
            ("order", Value::Smem(base)),
            ("depth", Value::Int(depth)),
            ("length", Value::Int(length)),
            ("group_id", Value::Int(group_id)),
            ("id", Value::Str(format!("order@{site_start}"))),
        ],
    );
    Action::Create { pipeline: order, inits, sync, assumed: None }
}

/// The state an order object starts with for its group.
pub fn initial_state(order: &Value) -> Value {
    let depth = attr(order, "depth").unwrap_or(Value::None);
    let first = matches!(attr(order, "group_id"), Some(Value::Int(0)));
    state(depth, Value::Int(0), Value::Int(first as i64))
}

/// The barrier of group `group` at `state`'s index, and the state's phase.
fn barrier(order: &Value, group: i64, state: &Value) -> Option<(SmemRef, i64)> {
    let Some(Value::Smem(base)) = attr(order, "order") else { return None };
    let length = attr(order, "length")?.as_int()?;
    let index = attr(state, "index")?.as_int()?;
    let phase = attr(state, "phase")?.as_int()?;
    Some((SmemRef { offset: base.offset + index * length + group, ..base }, phase))
}

/// `wait(state)`: this group's turn at the state's stage.
pub fn wait(order: &Value, state: &Value) -> Action {
    let group = attr(order, "group_id").and_then(|g| g.as_int());
    match group.and_then(|g| barrier(order, g, state)) {
        Some((bar, phase)) => Action::Wait { bar, phase },
        None => Action::Unsupported("`wait` of a `PipelineOrder` on a state that is not known statically".to_string()),
    }
}

/// `arrive(state)`: the next group's turn at the state's stage (the state
/// is advanced by the caller).
pub fn arrive(order: &Value, state: &Value) -> Action {
    let length = attr(order, "length").and_then(|l| l.as_int());
    let next = attr(order, "group_id").and_then(|g| g.as_int()).zip(length).map(|(g, l)| (g + 1).rem_euclid(l));
    match next.and_then(|n| barrier(order, n, state)) {
        Some((bar, _)) => Action::Arrive { bar },
        None => Action::Unsupported("`arrive` of a `PipelineOrder` on a state that is not known statically".to_string()),
    }
}
