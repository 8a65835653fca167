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

use cute_check::explore::Counterexample;
use cute_check::model::{Model, OpKind};

use crate::context::KernelContext;

pub fn diagnostic(
    ctx: &KernelContext<'_>,
    model: &Model,
    cex: &Counterexample,
    related: Vec<crate::Related>,
    notes: Vec<String>,
    severity: Severity,
) -> crate::Diagnostic {
    // Place it on the first blocked wait in source order.
    let mut stuck: Vec<(cute_syntax::TextRange, String)> = Vec::new();
    for (g, slots) in cex.last.groups.iter().enumerate() {
        let group = &model.groups[g];
        for &(pos, n) in slots {
            if let Some(op) = group.ops.get(pos as usize) {
                if let OpKind::Wait { bar, parity } = op.kind {
                    let b = &cex.last.bars[bar as usize];
                    let who = if n == group.size() { group.describe(model.ctas) } else { format!("{n} of {}", group.describe(model.ctas)) };
                    stuck.push((
                        op.site,
                        format!(
                            "{who} {} forever on {} (parity {parity}; {} of {} arrivals missing)",
                            if n == 1 { "waits" } else { "wait" },
                            model.barriers[bar as usize].display(model.ctas),
                            b.pending,
                            b.expected
                        ),
                    ));
                }
            }
        }
    }
    stuck.sort();
    let (range, what) = stuck.first().cloned().unwrap_or((ctx.kernel.name_range, "threads block forever".to_string()));
    crate::Diagnostic {
        code: RULE.code,
        name: RULE.name,
        severity,
        message: format!("`{}` can hang: {what}", ctx.kernel.display_name()),
        range,
        label: "blocks forever in the interleaving below".to_string(),
        related,
        notes,
        help: Some("make the arrivals per phase match the init count on every path, and each wait's parity match the phase it waits for".to_string()),
        fixes: Vec::new(),
    }
}
