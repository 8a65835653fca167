//! CUTE033 divergent-barrier: a CTA-wide or aligned barrier reached by
//! some of the threads that must execute it. See `divergent_barrier.md`.
//!
//! Decided on the model's registrations, which record every lane that
//! reaches each barrier call: a CTA-wide barrier (`sync_threads`, barrier 0)
//! must be reached the same number of times by every thread of the CTA; an
//! aligned one (`barrier`, `bar.sync`; `barrier_arrive`, `bar.arrive`,
//! unless `aligned=False`) by all lanes of a warp together.

use std::collections::{BTreeMap, BTreeSet};

use std::ops::Not;

use cute_check::model::Model;
use cute_ir::ast::{Expr, Stmt, StmtKind};
use cute_syntax::TextRange;

use super::Rule;
use crate::context::KernelContext;
use crate::named::{barrier_name, branch_around, describe, returns_before, why_not_reached};
use crate::{Related, Severity};

pub const RULE: Rule = Rule {
    code: "CUTE033",
    name: "divergent-barrier",
    default_severity: Severity::Error,
    summary: "a CTA-wide or aligned barrier under thread-dependent control flow, or with participants that return before it",
    doc: include_str!("divergent_barrier.md"),
};

pub struct Divergent {
    pub site: TextRange,
    pub cta: u32,
    pub id: i64,
    /// The whole CTA must reach it (else: every lane of a warp).
    pub cta_wide: bool,
    pub reached: Vec<u32>,
    pub missing: Vec<u32>,
}

pub fn find(model: &Model) -> Vec<Divergent> {
    let tpc = model.threads_per_cta;
    let mut out: Vec<Divergent> = Vec::new();
    let mut by_site: BTreeMap<(TextRange, u32), Vec<&cute_check::model::BarrierUse>> = BTreeMap::new();
    for u in &model.barrier_uses {
        by_site.entry((u.site, u.cta)).or_default().push(u);
    }
    for ((site, cta), uses) in by_site {
        if out.iter().any(|d| d.site == site) {
            continue;
        }
        let id = uses[0].id;
        if uses.iter().any(|u| u.cta_wide || (u.id == 0 && u.count == tpc)) {
            let mut times: BTreeMap<u32, u32> = (0..tpc).map(|t| (t, 0)).collect();
            for u in &uses {
                for &t in &u.threads {
                    *times.entry(t).or_default() += 1;
                }
            }
            let most = times.values().copied().max().unwrap_or(0);
            if times.values().any(|&n| n != most) {
                let reached: Vec<u32> = times.iter().filter(|(_, &n)| n == most).map(|(&t, _)| t).collect();
                let missing: Vec<u32> = times.iter().filter(|(_, &n)| n != most).map(|(&t, _)| t).collect();
                out.push(Divergent { site, cta, id, cta_wide: true, reached, missing });
                continue;
            }
        }
        // Aligned: the lanes of a warp reach it together.
        for u in uses.iter().filter(|u| u.aligned) {
            let present: BTreeSet<u32> = u.threads.iter().copied().collect();
            let warps: BTreeSet<u32> = present.iter().map(|t| t / 32).collect();
            let missing: Vec<u32> =
                warps.iter().flat_map(|w| (w * 32..((w + 1) * 32).min(tpc)).filter(|t| !present.contains(t))).collect();
            if !missing.is_empty() {
                out.push(Divergent { site, cta, id, cta_wide: false, reached: present.into_iter().collect(), missing });
                break;
            }
        }
    }
    out
}

pub fn diagnostic(
    ctx: &KernelContext<'_>,
    model: &Model,
    d: &Divergent,
    trace: Vec<Related>,
    notes: Vec<String>,
    severity: Severity,
) -> crate::Diagnostic {
    let reached = describe(model, d.cta, &d.reached);
    let missing = describe(model, d.cta, &d.missing);
    let call = ctx.slice(d.site).split('(').next().unwrap_or("barrier").trim().to_string();
    // Threads missing from a barrier that no thread-dependent branch
    // encloses: they returned before it.
    let returned = d.cta_wide && branch_around(ctx, d.site).is_none() && !returns_before(ctx, d.site).is_empty();
    let mut notes = notes;
    let what = if returned {
        notes.insert(
            0,
            "CuTe DSL does not compile a `return` under a condition decided at run time (UNSUP_EARLY_EXIT: a staged `if` runs as a whole)".to_string(),
        );
        format!(
            "`{call}` is a CTA-wide barrier: all {} threads of the CTA must reach it together, but {missing} return before it (only {reached} reach it)",
            model.threads_per_cta,
        )
    } else if d.cta_wide {
        format!(
            "`{call}` is a CTA-wide barrier: all {} threads of the CTA must reach it together, but {missing} {} not (it is reached only by {reached})",
            model.threads_per_cta,
            if d.missing.len() == 1 { "does" } else { "do" }
        )
    } else {
        format!(
            "`{call}` on {} is aligned: every lane of a warp must execute it together, but {missing} {} not (it is reached only by {reached})",
            barrier_name(model, d.cta, d.id),
            if d.missing.len() == 1 { "does" } else { "do" }
        )
    };
    let mut related = why_not_reached(ctx, d.site);
    related.push(Related { range: d.site, message: format!("reached by {reached}; never by {missing}"), file: None, event: None });
    related.extend(trace);
    crate::Diagnostic {
        code: RULE.code,
        name: RULE.name,
        severity,
        message: format!("`{}`: {what}", ctx.kernel.display_name()),
        range: d.site,
        label: "reached by part of the threads that must execute it".to_string(),
        related,
        notes,
        help: Some(if returned {
            "let every thread reach the barrier: guard only the work with the bounds check (`if tidx < n:`) instead of returning early".to_string()
        } else if d.cta_wide {
            "move the barrier out of the thread-dependent branch (and before any early return), or synchronize the participating warps with a named barrier (`cute.arch.barrier(barrier_id=1..15, number_of_threads=...)`)".to_string()
        } else if call.ends_with("barrier_arrive") {
            "branch on the warp index (not the lane or thread index) around it, so whole warps take the same path; or pass `aligned=False` (`barrier.cta.arrive`), which lets the lanes of a warp arrive from different branches, each lane once".to_string()
        } else {
            "branch on the warp index (not the lane or thread index) around aligned barriers, so whole warps take the same path".to_string()
        }),
        fixes: if returned { Vec::new() } else { out_of_branch(ctx, model, d).into_iter().collect() },
    }
}

/// The barrier as the last statement of an `if` on the thread: a CTA-wide
/// one, in an `if` with no `else` whose surroundings every thread runs
/// alike (no other thread-dependent branch or loop around it, and no other
/// CTA-wide barrier that only some threads reach), is moved
/// right after the `if`, where every thread reaches it, in the same order
/// with the branch's statements for the threads that take it; an aligned
/// one that ends both branches of an `if`/`else` alike is written once
/// after them, which each thread runs in the same order as before.
fn out_of_branch(ctx: &KernelContext<'_>, model: &Model, d: &Divergent) -> Option<crate::Fix> {
    let kernel = ctx.kernel.range;
    if !(kernel.start <= d.site.start && d.site.end <= kernel.end) || ctx.module.linked_file(d.site).is_some() {
        return None;
    }
    let (_, chain) = ctx.ancestors(d.site)?;
    let [outer @ .., guard, stmt] = chain.as_slice() else { return None };
    let StmtKind::Expr(Expr::Call(call)) = &stmt.kind else { return None };
    let StmtKind::If { cond, then, orelse } = &guard.kind else { return None };
    if call.range != d.site || !ctx.varies_across_threads(cond) || ctx.slice(ctx.full_line(guard.range.start)).trim_end().ends_with(':').not() {
        return None;
    }
    let lines = |s: &Stmt| ctx.statement_lines(s.range);
    let (indent, inner) = (ctx.indentation_at(guard.range.start), ctx.indentation_at(stmt.range.start));
    let dedented = |range: TextRange| -> String {
        ctx.slice(range)
            .split_inclusive('\n')
            .map(|line| match line.strip_prefix(inner.as_str()) {
                Some(rest) => format!("{indent}{rest}"),
                None => line.to_string(),
            })
            .collect()
    };
    if d.cta_wide {
        let uniform = outer.iter().all(|s| match &s.kind {
            StmtKind::If { cond, .. } | StmtKind::While { cond, .. } => !ctx.varies_across_threads(cond),
            StmtKind::For { iter, .. } => !ctx.varies_across_threads(iter),
            _ => true,
        });
        if !uniform || !orelse.is_empty() || then.len() < 2 || then.last().map(|s| s.id) != Some(stmt.id) {
            return None;
        }
        // The threads that skip it must take no CTA-wide barrier of their
        // own elsewhere (another branch's): moved, this one would be a
        // barrier too many for them.
        if find(model).iter().any(|o| o.cta_wide && o.site != d.site) {
            return None;
        }
        let range = lines(stmt);
        return Some(crate::Fix {
            title: "Move the barrier after the `if`, where every thread reaches it".to_string(),
            edits: vec![crate::Edit { range, new_text: dedented(range) }],
            applicability: crate::Applicability::Unsafe,
        });
    }
    // Both branches end with the same barrier: it goes after them.
    let (Some(a), Some(b)) = (then.last(), orelse.last()) else { return None };
    let same = |x: &Stmt, y: &Stmt| matches!((&x.kind, &y.kind), (StmtKind::Expr(Expr::Call(p)), StmtKind::Expr(Expr::Call(q))) if p.written_like(q));
    if then.len() < 2 || orelse.len() < 2 || !same(a, b) || !(a.id == stmt.id || b.id == stmt.id) || ctx.indentation_at(b.range.start) != inner {
        return None;
    }
    let kept = lines(b);
    Some(crate::Fix {
        title: "Arrive once after the `if`/`else`, from every lane together".to_string(),
        edits: vec![crate::Edit { range: lines(a), new_text: String::new() }, crate::Edit { range: kept, new_text: dedented(kept) }],
        applicability: crate::Applicability::Safe,
    })
}
