//! CUTE040 smem-race: two accesses to the same shared-memory location, one a write, not ordered by happens-before. See `smem_race.md`; the finding
//! comes from the memory-ordering analysis (`cute_check::memory`) and is
//! turned into a diagnostic by `crate::memory`.

use super::Rule;
use crate::Severity;

pub const RULE: Rule = Rule {
    code: "CUTE040",
    name: "smem-race",
    default_severity: Severity::Error,
    summary: "two accesses to the same shared-memory location, one a write, not ordered by happens-before",
    doc: include_str!("smem_race.md"),
};
