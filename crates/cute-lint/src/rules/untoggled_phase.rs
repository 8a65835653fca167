//! CUTE001 untoggled-phase: a wait parity that is not flipped once per phase.
//! See `untoggled_phase.md` for the user documentation.

use super::Rule;
use crate::Severity;

pub const RULE: Rule = Rule {
    code: "CUTE001",
    name: "untoggled-phase",
    default_severity: Severity::Error,
    summary: "an mbarrier wait parity is not flipped exactly once per completed phase",
    doc: include_str!("untoggled_phase.md"),
};
