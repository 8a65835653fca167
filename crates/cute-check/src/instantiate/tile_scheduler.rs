//! `cutlass.utils.StaticPersistentTileScheduler`: the persistent tile loop
//! every role of a kernel runs.
//!
//! A persistent kernel hands each CTA the tiles `block_idx`, `block_idx +
//! grid`, `block_idx + 2 * grid`, ...: `advance_to_next_work(advance_count=k)`
//! moves the scheduler `k` tiles on, and `get_current_work()` (or
//! `initial_work_tile_info()`) gives a `WorkTileInfo` whose `is_valid_tile`
//! says whether the CTA still has that tile. How many tiles a CTA gets is
//! known only at run time, but it is one count for every role of the CTA:
//! a producer warp that walks every tile and two consumer warp groups that
//! take every other tile (a ping-pong kernel: one advances once before its
//! loop, both advance twice per iteration) must share it, or the model would
//! have the producer fill tiles no consumer takes.
//!
//! So the scheduler is a cursor each thread keeps (the package's
//! `_current_work_linear_idx`, in tiles), and a CTA is taken to get as many
//! tiles as a loop of unknown length is explored for
//! ([`InstantiateOptions::unknown_trip_count`]): a work tile at cursor `c`
//! is valid when `c` is below that count, in every role alike. Advances
//! made in a loop of unknown length leave the cursor unknown.
//!
//! [`InstantiateOptions::unknown_trip_count`]: super::InstantiateOptions

use cute_ir::ast::Call;
use cute_ir::eval::Value;

use super::ThreadRun;
use crate::pipeline::obj as object;

/// The scheduler object: attribute `id`, the key of its cursor in
/// [`ThreadRun::tile_cursors`].
pub(super) const SCHEDULER: &str = "StaticPersistentTileScheduler";
/// What `get_current_work()` gives: attribute `is_valid_tile`.
const WORK_TILE: &str = "WorkTileInfo";

/// Whether `call` creates a static persistent tile scheduler of the
/// installed package (`utils.StaticPersistentTileScheduler.create(...)`).
/// The schedulers that fetch their tiles at run time (cluster launch
/// control, grouped and MoE schedulers) hand tiles out otherwise and are
/// not read as this one.
pub(super) fn creates_scheduler(call: &Call) -> bool {
    call.qualname.as_deref().is_some_and(|q| {
        q.starts_with("cutlass.utils.") && (q.ends_with(".StaticPersistentTileScheduler.create") || q == "cutlass.utils.StaticPersistentTileScheduler.create")
    })
}

impl ThreadRun<'_> {
    /// `StaticPersistentTileScheduler.create(...)`: a scheduler at the CTA's
    /// first tile. A scheduler is an object (a copy of the name is the same
    /// scheduler), so its cursor lives with the thread, keyed by where it
    /// was created.
    pub(super) fn create_tile_scheduler(&mut self, call: &Call) -> Value {
        let id = format!("scheduler@{}", call.range.start);
        self.tile_cursors.insert(id.clone(), Some(0));
        object(SCHEDULER, &[("id", Value::Str(id))])
    }

    /// A method of a scheduler [`Self::create_tile_scheduler`] made.
    pub(super) fn tile_scheduler_method(&mut self, scheduler: &Value, method: &str, args: &[Value], kwargs: &[(String, Value)]) -> Value {
        let Some(Value::Str(id)) = crate::pipeline::attribute(scheduler, "id") else { return Value::unknown("a tile scheduler") };
        let cursor = self.tile_cursors.get(&id).copied().flatten();
        match method {
            "advance_to_next_work" => {
                let count = kwargs.iter().find(|(k, _)| k == "advance_count").map(|(_, v)| v).or(args.first());
                let step = match count {
                    None => Some(1),
                    Some(v) => v.as_int(),
                };
                // A step not known statically, or one taken in a loop whose
                // trip count is not known (`while not found and
                // work_tile.is_valid_tile:`, skipping tiles on a runtime
                // test, explored for a few iterations that stand for no
                // count), leaves the tiles this role still takes unknown:
                // its loop is then explored as any loop on a runtime
                // condition is.
                let counted = step.filter(|_| self.loops_of_unknown_length == 0);
                self.tile_cursors.insert(id, cursor.zip(counted).map(|(c, s)| c + s));
                Value::None
            }
            "get_current_work" | "initial_work_tile_info" => {
                let valid = match cursor {
                    Some(c) => {
                        let tiles = i64::from(self.options.unknown_trip_count);
                        self.shared.bounded = true;
                        self.shared.notes.insert(format!(
                            "the tiles the persistent tile scheduler gives a CTA are not known statically: each CTA is taken to get {tiles}, the iterations a loop of unknown length is explored for, in every role alike"
                        ));
                        Value::Bool(c < tiles)
                    }
                    None => Value::unknown("whether the tile scheduler's work tile is valid (it was advanced by a count not known statically)"),
                };
                object(WORK_TILE, &[("is_valid_tile", valid)])
            }
            _ => Value::unknown(format!("`{method}` of a tile scheduler")),
        }
    }
}
