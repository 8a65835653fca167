//! CUTE007 single-lane-collective: a warp-collective operation reached by
//! part of a warp. See `single_lane_collective.md`.
//!
//! Decided on the model, which records every lane that reaches a warp
//! collective while its warp is split (a lane test, `elect_one`) with the
//! member mask the call names: a lane of the mask that reaches it fewer
//! times than the others is missing.

use std::collections::BTreeMap;

use cute_check::model::Model;
use cute_ir::ast::{Expr, StmtKind};
use cute_syntax::TextRange;

use super::Rule;
use crate::context::KernelContext;
use crate::named::{describe, first_line};
use crate::{Related, Severity};

pub const RULE: Rule = Rule {
    code: "CUTE007",
    name: "single-lane-collective",
    default_severity: Severity::Error,
    summary: "a warp-collective operation (TMA copy, elect_one, sync_warp, shuffle, vote, warp reduction) is reached by part of a warp only",
    doc: include_str!("single_lane_collective.md"),
};

pub fn diagnostics(ctx: &KernelContext<'_>, model: &Model) -> Vec<crate::Diagnostic> {
    model
        .partial_warp_collectives
        .iter()
        .map(|(site, what, cta, reached, missing)| {
            let reached_text = describe_lanes(model, *cta, reached);
            let missing_text = describe_lanes(model, *cta, missing);
            let singular = |text: &str| matches!(text.split(' ').next(), Some("lane" | "thread" | "warp"));
            let verb = if singular(&missing_text) { "does" } else { "do" };
            let reach = if singular(&reached_text) { "reaches" } else { "reach" };
            let mut related = Vec::new();
            if let Some(branch) = splitting_branch(ctx, *site) {
                related.push(Related { range: branch, message: "this splits the warp: only some of its lanes run the collective below".to_string(), file: None, event: None });
            }
            related.push(Related { range: *site, message: format!("reached by {reached_text}; never by {missing_text}"), file: None, event: None });
            let copy = what.contains("cute.copy") || what.starts_with("`elect_one`");
            crate::Diagnostic {
                code: RULE.code,
                name: RULE.name,
                severity: Severity::Error,
                message: format!(
                    "`{}`: {what}, but only {reached_text} {reach} it and {missing_text} {verb} not, so it waits for lanes that never come (undefined behaviour)",
                    ctx.kernel.display_name()
                ),
                range: *site,
                label: "reached by part of a warp only".to_string(),
                related,
                notes: Vec::new(),
                help: Some(if copy {
                    "issue it from the whole warp (guard with the warp index), outside `elect_one`".to_string()
                } else {
                    "run the collective with every lane of its member mask (the whole warp by default) and guard only what follows with the lane test (`if lane == 0:` after the reduction), or pass a `mask=` naming exactly the lanes that reach it".to_string()
                }),
                fixes: if copy { copy_out_of_elect(ctx, *site).into_iter().collect() } else { Vec::new() },
            }
        })
        .collect()
}

/// A copy that `elect_one` leaves to one lane, moved out of it: when the
/// copy's statement is the last of the `with` block (and not its only one),
/// dedenting it to the block's level issues it from the whole warp right
/// after the block, in the same order with the block's other statements.
fn copy_out_of_elect(ctx: &KernelContext<'_>, site: TextRange) -> Option<crate::Fix> {
    let (_, chain) = ctx.ancestors(site)?;
    let at = chain.iter().rposition(|s| matches!(&s.kind, StmtKind::With { items, .. } if items.iter().any(|(e, _)| is_elect_one(e))))?;
    let (with, stmt) = (chain[at], *chain.get(at + 1)?);
    let StmtKind::With { body, .. } = &with.kind else { return None };
    if body.len() < 2 || body.last().map(|s| s.id) != Some(stmt.id) {
        return None;
    }
    let (outer, inner) = (ctx.indentation_at(with.range.start), ctx.indentation_at(stmt.range.start));
    let lines = TextRange { start: ctx.full_line(stmt.range.start).start, end: ctx.next_line_start(stmt.range.end.saturating_sub(1)) };
    let new_text: String = ctx
        .slice(lines)
        .split_inclusive('\n')
        .map(|line| match line.strip_prefix(inner.as_str()) {
            Some(rest) => format!("{outer}{rest}"),
            None => line.to_string(),
        })
        .collect();
    Some(crate::Fix {
        title: "Issue the copy from the whole warp, after `elect_one`".to_string(),
        edits: vec![crate::Edit { range: lines, new_text }],
        applicability: crate::Applicability::Unsafe,
    })
}

fn is_elect_one(e: &Expr) -> bool {
    matches!(e, Expr::Call(c) if c.api == Some(cute_ir::api::Api::ElectOne))
}

/// "lane 0 of warps 0..3" when the same lanes of several warps are meant,
/// else as the named-barrier rules name threads ("threads 0..15").
fn describe_lanes(model: &Model, cta: u32, tids: &[u32]) -> String {
    let mut by_warp: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for &t in tids {
        by_warp.entry(t / 32).or_default().push(t % 32);
    }
    let mut lane_sets = by_warp.values();
    let first = lane_sets.next();
    let same = first.is_some_and(|f| lane_sets.all(|l| l == f));
    match first {
        Some(lanes) if same && by_warp.len() > 1 && lanes.len() < 32 => {
            let noun = if lanes.len() == 1 { "lane" } else { "lanes" };
            let warps: Vec<u32> = by_warp.keys().copied().collect();
            let cta_note = if model.ctas > 1 { format!(" of CTA {cta}") } else { String::new() };
            format!("{noun} {} of warps {}{cta_note}", runs(lanes), runs(&warps))
        }
        _ => describe(model, cta, tids),
    }
}

/// "0..3, 7" for ascending numbers.
fn runs(xs: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < xs.len() {
        let mut j = i;
        while j + 1 < xs.len() && xs[j + 1] == xs[j] + 1 {
            j += 1;
        }
        out.push(if j > i { format!("{}..{}", xs[i], xs[j]) } else { xs[i].to_string() });
        i = j + 1;
    }
    out.join(", ")
}

/// The innermost branch (`if`, `with elect_one()`) around `site` in its
/// function, as its first line.
fn splitting_branch(ctx: &KernelContext<'_>, site: cute_syntax::TextRange) -> Option<cute_syntax::TextRange> {
    let (_, chain) = ctx.ancestors(site)?;
    let branch = chain.iter().rev().filter(|s| s.range != site).find(|s| match &s.kind {
        StmtKind::If { .. } => true,
        StmtKind::With { items, .. } => items.iter().any(|(e, _)| is_elect_one(e)),
        _ => false,
    })?;
    Some(first_line(ctx, branch))
}
