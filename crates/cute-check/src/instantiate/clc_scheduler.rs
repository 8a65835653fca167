//! `cutlass.utils.ClcDynamicPersistentTileScheduler`: the persistent tile
//! loop whose tiles cluster launch control hands out, for the memory-ordering
//! analysis (how the query's response reaches the threads is the
//! `PipelineClcFetchAsync` ring's, in `pipeline.rs`).
//!
//! As the installed package implements it:
//!
//! - `create(params, block_idx, grid_dim, clc_response_ptr, insert_fence=True)`
//!   keeps the response buffer;
//! - `advance_to_next_work(mbarrier_addr)` has one elected lane issue the
//!   query (`issue_clc_query(mbarrier_addr, response)`): the async proxy
//!   writes the response. It is recorded as a write of the buffer that no
//!   barrier phase completes: the ring's `producer_acquire` already stands
//!   for the response's arrival on `full` (see `pipeline.rs`), so the write
//!   serves the proxy order of what was read before it, not the order of what
//!   is read after;
//! - `get_current_work()` reads the response with the thread's own loads
//!   (`clc_response`) and then, unless `insert_fence=False`, fences the
//!   proxies (`fence_proxy("async.shared", space="cta")`), so that the next
//!   query may overwrite what it read;
//! - `initial_work_tile_info()` reads nothing of it.
//!
//! A scheduler made with `insert_fence=False` leaves the fence to the kernel:
//! a read handed back for the next query with no fence of its own is then
//! `missing-proxy-fence`. An `insert_fence` not known statically makes the
//! kernel not checked.

use cute_ir::ast::Call;
use cute_ir::eval::Value;

use super::ThreadRun;
use crate::model::{AsyncOp, Element, MemKind, Region};
use crate::pipeline::obj as object;

/// The scheduler object: attributes `response` (the buffer its queries
/// write), `fence` (whether it fences after reading one) and `name` (how
/// the kernel names the buffer).
pub(super) const CLC_SCHEDULER: &str = "ClcDynamicPersistentTileScheduler";

/// Whether `call` creates a cluster launch control tile scheduler of the
/// installed package (`utils.ClcDynamicPersistentTileScheduler.create(...)`).
pub(super) fn creates_clc_scheduler(call: &Call) -> bool {
    call.qualname.as_deref().is_some_and(|q| q.starts_with("cutlass.utils.") && q.ends_with(".ClcDynamicPersistentTileScheduler.create"))
}

impl ThreadRun<'_> {
    pub(super) fn create_clc_scheduler(&mut self, call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> Value {
        let kw = |k: &str| kwargs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        let response = args.get(3).cloned().or_else(|| kw("clc_response_ptr")).unwrap_or(Value::None);
        let fence = args.get(4).cloned().or_else(|| kw("insert_fence")).unwrap_or(Value::Bool(true));
        let name = cute_ir::api::arg(call, "clc_response_ptr").or(call.args.get(3)).and_then(|e| e.dotted()).unwrap_or_else(|| "clc_response".to_string());
        object(CLC_SCHEDULER, &[("response", response), ("fence", fence), ("name", Value::Str(name.into()))])
    }

    /// A method of a scheduler [`Self::create_clc_scheduler`] made: what it
    /// does to the response buffer. The work tile it gives is not known.
    pub(super) fn clc_scheduler_method(&mut self, call: &Call, scheduler: &Value, method: &str) -> Value {
        let attr = |k: &str| crate::pipeline::attribute(scheduler, k).unwrap_or(Value::None);
        let name = match attr("name") {
            Value::Str(s) => s.to_string(),
            _ => "clc_response".to_string(),
        };
        let buffer = self.buffer_of(&attr("response"), &name);
        match method {
            "advance_to_next_work" => {
                if let Some((buffer, stage)) = buffer {
                    let region = Region { stage, element: Element::Whole };
                    self.record_mem(MemKind::AsyncCopy { buffer, region, write: true, barrier: None, by: AsyncOp::ClcQuery }, call.range);
                }
                Value::None
            }
            "get_current_work" => {
                if let Some((buffer, stage)) = buffer {
                    let region = Region { stage, element: Element::Whole };
                    self.record_mem(MemKind::Access { buffer, region, write: false }, call.range);
                }
                match attr("fence").as_bool() {
                    Some(true) => self.record_mem(MemKind::ProxyFence, call.range),
                    Some(false) => {}
                    None => self.unresolved(
                        call.range,
                        "whether this `ClcDynamicPersistentTileScheduler` fences the proxies after reading a response (`insert_fence`) is not known statically".to_string(),
                    ),
                }
                Value::unknown("the work tile of a cluster launch control query")
            }
            _ => Value::unknown(format!("`{method}` of a cluster launch control tile scheduler")),
        }
    }
}
