//! CUTE006 read-before-wait: shared memory filled by an async copy is read before a completed wait on the copy's barrier. See `read_before_wait.md`; the finding
//! comes from the memory-ordering analysis (`cute_check::memory`) and is
//! turned into a diagnostic by `crate::memory`.

use super::Rule;
use crate::Severity;

pub const RULE: Rule = Rule {
    code: "CUTE006",
    name: "read-before-wait",
    default_severity: Severity::Error,
    summary: "shared memory filled by an async copy is read before a completed wait on the copy's barrier",
    doc: include_str!("read_before_wait.md"),
};
