//! CUTE020 missing-acquire: a consumer reads a flag or counter without acquire semantics, so the data it reads next is not ordered after the producer's writes. See `missing_acquire.md`; the finding
//! comes from the memory-ordering analysis (`cute_check::memory`) and is
//! turned into a diagnostic by `crate::memory`.

use super::Rule;
use crate::Severity;

pub const RULE: Rule = Rule {
    code: "CUTE020",
    name: "missing-acquire",
    default_severity: Severity::Error,
    summary: "a consumer reads a flag or counter without acquire semantics, so the data it reads next is not ordered after the producer's writes",
    doc: include_str!("missing_acquire.md"),
};
