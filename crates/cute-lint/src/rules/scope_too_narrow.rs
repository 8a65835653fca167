//! CUTE022 scope-too-narrow: a release or acquire (or a remote arrive) whose scope does not contain both parties of the hand-off. See `scope_too_narrow.md`; the finding
//! comes from the memory-ordering analysis (`cute_check::memory`) and is
//! turned into a diagnostic by `crate::memory`.

use super::Rule;
use crate::Severity;

pub const RULE: Rule = Rule {
    code: "CUTE022",
    name: "scope-too-narrow",
    default_severity: Severity::Error,
    summary: "a release or acquire (or a remote arrive) whose scope does not contain both parties of the hand-off",
    doc: include_str!("scope_too_narrow.md"),
};
