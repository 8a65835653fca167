//! CUTE021 missing-release: a producer's data writes are not ordered before its flag update (relaxed update, or other threads' writes with no barrier before the release). See `missing_release.md`; the finding
//! comes from the memory-ordering analysis (`cute_check::memory`) and is
//! turned into a diagnostic by `crate::memory`.

use super::Rule;
use crate::Severity;

pub const RULE: Rule = Rule {
    code: "CUTE021",
    name: "missing-release",
    default_severity: Severity::Error,
    summary: "a producer's data writes are not ordered before its flag update (relaxed update, or other threads' writes with no barrier before the release)",
    doc: include_str!("missing_release.md"),
};
