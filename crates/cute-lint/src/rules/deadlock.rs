//! CUTE050 deadlock: unfinished threads, none enabled, no more specific cause.
//! See `deadlock.md` for the user documentation.

use super::Rule;
use crate::Severity;

pub const RULE: Rule = Rule {
    code: "CUTE050",
    name: "deadlock",
    default_severity: Severity::Error,
    summary: "a reachable state has unfinished threads and none can move",
    doc: include_str!("deadlock.md"),
};
