//! CUTE007 single-lane-collective: a warp-collective operation reached by
//! part of a warp. See `single_lane_collective.md`.
//!
//! Decided on the model, which records every lane that reaches a warp
//! collective while its warp is split (a lane test, `elect_one`) with the
//! member mask the call names: a lane of the mask that reaches it fewer
//! times than the others is missing.

use std::collections::BTreeMap;

use cute_check::model::Model;
use cute_ir::api::Api;
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
                fixes: if copy {
                    copy_out_of_elect(ctx, *site).into_iter().collect()
                } else {
                    member_mask(ctx, *site, reached).into_iter().chain(out_of_lane_test(ctx, *site)).collect()
                },
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
    let lines = ctx.statement_lines(stmt.range);
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

/// A vote or `sync_warp` with the default member mask that the same lanes
/// of every warp reach: the mask named for them (`mask=0x0000ffff` under
/// `if lane < 16:`), the collective of those lanes the code asks for. Not
/// for shuffles, whose lanes read lanes the mask would leave out.
fn member_mask(ctx: &KernelContext<'_>, site: TextRange, reached: &[u32]) -> Option<crate::Fix> {
    let call = ctx.call_at(site)?;
    if !matches!(call.api, Some(Api::Vote | Api::SyncWarp)) {
        return None;
    }
    let position = call.params.iter().position(|p| *p == "mask")?;
    if call.args.len() > position || call.kwargs.iter().any(|(k, _)| k == "mask") || call.kwargs.iter().any(|(k, _)| k.is_empty()) {
        return None;
    }
    let mut by_warp: BTreeMap<u32, u32> = BTreeMap::new();
    for &t in reached {
        *by_warp.entry(t / 32).or_default() |= 1 << (t % 32);
    }
    let mut masks = by_warp.values();
    let mask = *masks.next()?;
    if mask == u32::MAX || masks.any(|m| *m != mask) {
        return None;
    }
    // Before the closing parenthesis, after a trailing comma if there is one.
    let text = ctx.slice(call.range);
    let close = text.rfind(')')?;
    let before = text[..close].trim_end();
    let sep = if before.ends_with('(') {
        ""
    } else if before.ends_with(',') {
        " "
    } else {
        ", "
    };
    let at = call.range.start + before.len() as u32;
    let written = format!("{mask:#010x}");
    Some(crate::Fix {
        title: format!("Name the lanes that reach it: `mask={written}`"),
        edits: vec![crate::Edit { range: TextRange { start: at, end: at }, new_text: format!("{sep}mask={written}") }],
        applicability: crate::Applicability::Unsafe,
    })
}

/// A collective in an `if` on the lane (no `else`) whose statements up to
/// the collective's compute values only (assignments to names, no element
/// read or written, no call but the collectives and arithmetic), with those
/// names read nowhere the other lanes would see them change: those
/// statements are moved before the `if`, run by the whole warp, and the
/// lane test guards only the statements after them.
fn out_of_lane_test(ctx: &KernelContext<'_>, site: TextRange) -> Option<crate::Fix> {
    let kernel = ctx.kernel.range;
    if !(kernel.start <= site.start && site.end <= kernel.end) || ctx.module.linked_file(site).is_some() {
        return None;
    }
    let (function, chain) = ctx.ancestors(site)?;
    let at = chain.iter().rposition(|s| matches!(s.kind, StmtKind::If { .. }) && s.range != site)?;
    if chain[at + 1..].iter().any(|s| matches!(s.kind, StmtKind::With { .. } | StmtKind::While { .. })) {
        return None;
    }
    let guard = chain[at];
    let StmtKind::If { cond, then, orelse } = &guard.kind else { return None };
    if !orelse.is_empty() || !ctx.varies_across_threads(cond) {
        return None;
    }
    let inside = chain.get(at + 1)?.id;
    let k = then.iter().position(|s| s.id == inside)?;
    let moved = &then[..=k];
    // Values only: names bound, nothing stored or read from memory, no
    // control flow out of the block.
    let mut bound = Vec::new();
    let mut stores = false;
    cute_ir::ast::for_each_binding(moved, &mut |t, _| {
        stores |= !matches!(t, cute_ir::ast::Target::Name(_) | cute_ir::ast::Target::Tuple(_));
        bound.extend(t.bound_names());
    });
    if stores || !statements_compute_only(moved) {
        return None;
    }
    let mut pure = true;
    cute_ir::ast::for_each_expr(moved, &mut |e| pure &= computes_only(e));
    if !pure {
        return None;
    }
    let mut in_cond = Vec::new();
    cond.collect_uses(&mut in_cond);
    let root = |n: &String| n.split('.').next().unwrap_or_default().to_string();
    if in_cond.iter().any(|n| bound.contains(&root(n))) {
        return None;
    }
    // The lanes that skip the `if` now bind those names too: nothing they
    // run may read them (after the `if`, or anywhere in a loop around it).
    let looped = chain[..at].iter().any(|s| matches!(s.kind, StmtKind::For { .. } | StmtKind::While { .. }));
    let mut reads = Vec::new();
    reads_outside(&function.body, guard.range, looped, &mut reads);
    if reads.iter().any(|n| bound.contains(&root(n))) {
        return None;
    }
    // The `if` (not an `elif`) on one line of its own; its body on the
    // lines after it.
    let header = ctx.full_line(guard.range.start);
    let header_text = ctx.slice(header);
    if !header_text.trim_start().starts_with("if ") || !header_text.trim_end().ends_with(':') || then[0].range.start < header.end {
        return None;
    }
    let (outer, inner) = (ctx.indentation_at(guard.range.start), ctx.indentation_at(then[0].range.start));
    let body = TextRange { start: header.end, end: ctx.next_line_start(moved[k].range.end.saturating_sub(1)) };
    let mut new_text: String = ctx
        .slice(body)
        .split_inclusive('\n')
        .map(|line| match line.strip_prefix(inner.as_str()) {
            Some(rest) => format!("{outer}{rest}"),
            None => line.to_string(),
        })
        .collect();
    if then.len() > k + 1 {
        new_text.push_str(header_text);
    }
    Some(crate::Fix {
        title: "Run the collective with the whole warp: move it before the lane test".to_string(),
        edits: vec![crate::Edit { range: TextRange { start: header.start, end: body.end }, new_text }],
        applicability: crate::Applicability::Unsafe,
    })
}

/// Statements of assignments, expressions and `for` loops over them only.
fn statements_compute_only(stmts: &[cute_ir::ast::Stmt]) -> bool {
    stmts.iter().all(|s| match &s.kind {
        StmtKind::Assign { .. } | StmtKind::AugAssign { .. } | StmtKind::Expr(_) | StmtKind::Pass => true,
        StmtKind::For { body, .. } => statements_compute_only(body),
        StmtKind::If { then, orelse, .. } => statements_compute_only(then) && statements_compute_only(orelse),
        _ => false,
    })
}

/// An expression with no element read and no call but the warp
/// collectives, loop ranges and arithmetic.
fn computes_only(e: &Expr) -> bool {
    const ARITHMETIC: &[&str] = &["fmax", "fmin", "max", "min", "abs", "exp2", "exp", "log2", "log", "sqrt", "rsqrt", "Float32", "Float16", "BFloat16", "Int32", "Uint32", "Int64", "Boolean"];
    let ok = match e {
        Expr::Subscript { .. } => false,
        Expr::Call(c) => match c.api {
            Some(Api::Shuffle | Api::Vote | Api::WarpReduction | Api::WarpRedux | Api::Range) => true,
            Some(_) => false,
            None => c.func.last_segment().is_some_and(|n| ARITHMETIC.contains(&n)),
        },
        _ => true,
    };
    let mut children = true;
    e.for_each_child(&mut |c| children &= computes_only(c));
    ok && children
}

/// The names read by the statements of `stmts` other than `guard` that run
/// after it (any of them in a loop around it, when `looped`), and by the
/// headers of the statements around it.
fn reads_outside(stmts: &[cute_ir::ast::Stmt], guard: TextRange, looped: bool, out: &mut Vec<String>) {
    for s in stmts {
        if s.range == guard {
            continue;
        }
        let around = s.range.start <= guard.start && guard.end <= s.range.end;
        if around {
            match &s.kind {
                StmtKind::If { cond, then, orelse } => {
                    cond.collect_uses(out);
                    reads_outside(then, guard, looped, out);
                    reads_outside(orelse, guard, looped, out);
                }
                StmtKind::For { iter, body, .. } => {
                    iter.collect_uses(out);
                    reads_outside(body, guard, looped, out);
                }
                StmtKind::While { cond, body } => {
                    cond.collect_uses(out);
                    reads_outside(body, guard, looped, out);
                }
                StmtKind::With { items, body } => {
                    items.iter().for_each(|(e, _)| e.collect_uses(out));
                    reads_outside(body, guard, looped, out);
                }
                _ => {}
            }
        } else if looped || s.range.start >= guard.end {
            let one = std::slice::from_ref(s);
            cute_ir::ast::for_each_expr(one, &mut |e| e.collect_uses(out));
            cute_ir::ast::for_each_binding(one, &mut |t, _| t.collect_uses(out));
            // An augmented assignment reads its target.
            cute_ir::ast::for_each_binding(one, &mut |t, v| {
                if v.is_none() {
                    out.extend(t.bound_names());
                }
            });
        }
    }
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
