//! CUTE023 missing-wait: the consumer reads published data on a path where the counter may still be below its target. See `missing_wait.md`; the finding
//! comes from the memory-ordering analysis (`cute_check::memory`) and is
//! turned into a diagnostic by `crate::memory`.

use super::Rule;
use crate::Severity;

pub const RULE: Rule = Rule {
    code: "CUTE023",
    name: "missing-wait",
    default_severity: Severity::Error,
    summary: "the consumer reads published data on a path where the counter may still be below its target",
    doc: include_str!("missing_wait.md"),
};
