//! CUTE010 fence-after-sync: the proxy fence comes after the barrier it should precede (fence first, barrier second). See `fence_after_sync.md`; the finding
//! comes from the memory-ordering analysis (`cute_check::memory`) and is
//! turned into a diagnostic by `crate::memory`.

use super::Rule;
use crate::Severity;

pub const RULE: Rule = Rule {
    code: "CUTE010",
    name: "fence-after-sync",
    default_severity: Severity::Error,
    summary: "the proxy fence comes after the barrier it should precede (fence first, barrier second)",
    doc: include_str!("fence_after_sync.md"),
};
