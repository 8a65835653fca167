//! CUTE007 single-lane-collective: a warp-collective operation reached by
//! part of a warp. See `single_lane_collective.md`.

use cute_check::model::Model;

use super::Rule;
use crate::context::KernelContext;
use crate::{Related, Severity};

pub const RULE: Rule = Rule {
    code: "CUTE007",
    name: "single-lane-collective",
    default_severity: Severity::Error,
    summary: "a warp-collective operation (TMA copy, elect_one, sync_warp) is reached by part of a warp only",
    doc: include_str!("single_lane_collective.md"),
};

pub fn diagnostics(ctx: &KernelContext<'_>, model: &Model) -> Vec<crate::Diagnostic> {
    model
        .partial_warp_collectives
        .iter()
        .map(|(site, what, who)| crate::Diagnostic {
            code: RULE.code,
            name: RULE.name,
            severity: Severity::Error,
            message: format!("`{}`: {what}, so the warp waits for lanes that never come", ctx.kernel.display_name()),
            range: *site,
            label: "reached by part of a warp only".to_string(),
            related: vec![Related { range: *site, message: format!("reached by {who} only") }],
            notes: Vec::new(),
            help: Some("issue it from the whole warp (guard with the warp index), outside `elect_one`".to_string()),
            fixes: Vec::new(),
        })
        .collect()
}
