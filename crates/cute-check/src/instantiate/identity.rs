//! A name bound to an unknown value holds one run-time value: its copies
//! and the constants added to it are offsets of that value
//! (`cute_ir::eval::Identity`).
//!
//! A kernel counts down an unknown number of tiles and tests how far it is:
//!
//! ```python
//! k_tile_count_init = k_tile_count
//! while k_tile_count > 0:
//!     if k_tile_count_init != k_tile_count:   # every tile but the first
//!         rescale(...)                         # waits on the MMA warp
//!     k_tile_count -= 1
//! ```
//!
//! Both sides are unknown, but their difference is not: the test is false
//! in the first iteration and true after it, in every launch. Deciding it
//! as an open condition would run ways no launch has (the first tile
//! waiting for a rescale the MMA warp never signals) and report them. The
//! thread numbers the unknown values it binds to names, so an identity is
//! never shared by two values: another thread's, a recomputed one
//! (`k_tile_count = get_k_tile_count(...)` in the next work tile) and any
//! value computed from it other than by adding a constant each get their
//! own or none.

use cute_ir::ast::Target;
use cute_ir::eval::{Identity, Value};

use super::ThreadRun;

impl ThreadRun<'_> {
    /// `v` as the assignment to `targets` binds it: an unknown bound to a
    /// name, or to a name of a tuple target item by item, becomes a value of
    /// its own, the same for every name it is bound to at once.
    pub(super) fn identified(&mut self, targets: &[Target], v: Value) -> Value {
        match targets {
            [Target::Tuple(items)] => match v {
                Value::Tuple(values) if values.len() == items.len() => {
                    Value::Tuple(items.iter().zip(values).map(|(t, v)| self.identified(std::slice::from_ref(t), v)).collect())
                }
                other => other,
            },
            _ if targets.iter().all(|t| matches!(t, Target::Name(_))) => match v {
                Value::Unknown(_, identity) if !identity.is_known() => v.with_identity(self.next_identity()),
                other => other,
            },
            _ => v,
        }
    }

    fn next_identity(&mut self) -> Identity {
        let thread = u64::from(self.cta) * u64::from(self.threads_per_cta) + u64::from(self.tid);
        self.bindings += 1;
        Identity::bound(thread << 32 | u64::from(self.bindings))
    }
}
