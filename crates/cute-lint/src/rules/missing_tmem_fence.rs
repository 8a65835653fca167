//! CUTE012 missing-tmem-fence: tensor memory written by `tcgen05` stores is handed to an MMA or another warp (a
//! commit, an mbarrier arrive, a barrier) with no `fence_view_async_tmem_store()` of the storing warp before the
//! hand-off. See `missing_tmem_fence.md`; the finding comes from the memory-ordering analysis
//! (`cute_check::memory`'s `tmem_fence`) and is turned into a diagnostic by `crate::memory`, whose quick fix
//! inserts the fence before the hand-off.

use super::Rule;
use crate::Severity;

pub const RULE: Rule = Rule {
    code: "CUTE012",
    name: "missing-tmem-fence",
    default_severity: Severity::Error,
    summary: "tensor memory written by `tcgen05` stores is handed to an MMA or another warp without `fence_view_async_tmem_store()` before the hand-off",
    doc: include_str!("missing_tmem_fence.md"),
};
