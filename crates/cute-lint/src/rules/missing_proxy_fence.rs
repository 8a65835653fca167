//! CUTE011 missing-proxy-fence: generic accesses to shared memory reach an async-proxy operation (TMA) with no proxy fence in the accessing threads. See `missing_proxy_fence.md`; the finding
//! comes from the memory-ordering analysis (`cute_check::memory`) and is
//! turned into a diagnostic by `crate::memory`.

use super::Rule;
use crate::Severity;

pub const RULE: Rule = Rule {
    code: "CUTE011",
    name: "missing-proxy-fence",
    default_severity: Severity::Error,
    summary: "generic accesses to shared memory reach an async-proxy operation (TMA) with no proxy fence in the accessing threads",
    doc: include_str!("missing_proxy_fence.md"),
};
