//! CUTE041 dsmem-race: two accesses to the same shared memory from different CTAs of a cluster, one a write, not ordered by happens-before. See `dsmem_race.md`; the finding
//! comes from the memory-ordering analysis (`cute_check::memory`) and is
//! turned into a diagnostic by `crate::memory`.

use super::Rule;
use crate::Severity;

pub const RULE: Rule = Rule {
    code: "CUTE041",
    name: "dsmem-race",
    default_severity: Severity::Error,
    summary: "two accesses to the same shared memory from different CTAs of a cluster, one a write, not ordered by happens-before",
    doc: include_str!("dsmem_race.md"),
};
