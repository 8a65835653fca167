//! CUTE090 analysis-incomplete: a budget was hit or a construct is not modelled.
//! See `analysis_incomplete.md` for the user documentation.

use super::Rule;
use crate::Severity;

pub const RULE: Rule = Rule {
    code: "CUTE090",
    name: "analysis-incomplete",
    default_severity: Severity::Info,
    summary: "the checker stopped at a budget or met a construct it does not model",
    doc: include_str!("analysis_incomplete.md"),
};
