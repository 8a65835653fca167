//! CUTE032 barrier-recycling: a thread registers for a generation of a
//! named barrier while an earlier one is still filling, so the generations
//! mix. See `barrier_recycling.md`.
//!
//! Decided two ways on the model. The registrations (`Model::barrier_uses`)
//! show more threads registering for one generation than its count (two
//! groups sharing an id: the first `count` arrivals complete it, whoever
//! they are). And `cute_check::overrun` searches the interleavings for a
//! thread whose k-th registration lands in another generation than the k-th
//! (a `barrier_arrive` producer looping ahead of its consumers).

use std::collections::BTreeSet;

use cute_check::model::{BarrierKind, Model};
use cute_ir::ast::{Expr, Stmt, StmtKind};
use cute_check::overrun::Overrun;
use cute_syntax::TextRange;

use super::Rule;
use crate::context::{steps_to_related, KernelContext};
use crate::named::{barrier_name, by_id, describe};
use crate::{Related, Severity};

pub const RULE: Rule = Rule {
    code: "CUTE032",
    name: "barrier-recycling",
    default_severity: Severity::Error,
    summary: "a thread can register for generation k+1 of a named barrier while generation k is still filling, so arrivals of two generations mix",
    doc: include_str!("barrier_recycling.md"),
};

/// More threads register for one generation than its count.
pub struct Oversubscribed {
    pub cta: u32,
    pub id: i64,
    pub round: u32,
    pub count: u32,
    pub registered: u32,
    pub site: TextRange,
    pub uses: Vec<(TextRange, u32, String)>,
}

pub fn oversubscribed(model: &Model) -> Vec<Oversubscribed> {
    let mut out: Vec<Oversubscribed> = Vec::new();
    for ids in by_id(model) {
        // Groups that take turns (each run of `count` threads its own
        // generation) mix only if a turn can start while another fills:
        // the search decides (`cute_check::overrun::turn_taking`).
        let barrier = model.barriers.iter().position(|b| b.cta == ids.cta && b.kind == BarrierKind::NamedBarrier(ids.id));
        if barrier.is_some_and(|b| cute_check::overrun::turn_taking(model, b as u32).is_some()) {
            continue;
        }
        for (&round, uses) in &ids.rounds {
            let counts: BTreeSet<u32> = uses.iter().map(|u| u.count).collect();
            let (Some(&count), 1) = (counts.iter().next(), counts.len()) else { continue };
            let registered = ids.threads_in(round);
            if registered <= count || uses.iter().any(|u| u.cta_wide) {
                continue;
            }
            let mut uses: Vec<(TextRange, u32, String)> =
                uses.iter().map(|u| (u.site, u.count, describe(model, u.cta, &u.threads))).collect();
            uses.sort_by_key(|u| u.0);
            // The registration of the last group in source order is the one
            // that spills into another group's generation.
            let site = uses.last().map(|u| u.0).unwrap_or_default();
            if !out.iter().any(|o| o.site == site) {
                out.push(Oversubscribed { cta: ids.cta, id: ids.id, round, count, registered, site, uses });
            }
            break;
        }
    }
    out
}

pub fn oversubscribed_diagnostic(
    ctx: &KernelContext<'_>,
    model: &Model,
    o: &Oversubscribed,
    trace: Vec<Related>,
    notes: Vec<String>,
    severity: Severity,
) -> crate::Diagnostic {
    let name = barrier_name(model, o.cta, o.id);
    let mut related: Vec<Related> = o
        .uses
        .iter()
        .map(|(site, count, who)| Related { range: *site, message: format!("{who} register here (number_of_threads={count})"), file: None, event: None })
        .collect();
    related.extend(trace);
    crate::Diagnostic {
        code: RULE.code,
        name: RULE.name,
        severity,
        message: format!(
            "`{}`: {} threads register with {name} for one generation of {}: the first {} to arrive complete it, whichever group they belong to, and the rest start the next",
            ctx.kernel.display_name(),
            o.registered,
            o.count,
            o.count
        ),
        range: o.site,
        label: format!("a generation of {} threads shared by {} registrations", o.count, o.registered),
        related,
        notes,
        help: Some("give each group of threads its own barrier id (ids 1-15), with its own thread count".to_string()),
        fixes: one_site_count(ctx, o).into_iter().collect(),
    }
}

pub fn overrun_diagnostic(
    ctx: &KernelContext<'_>,
    model: &Model,
    o: &Overrun,
    max_trace_steps: usize,
    notes: Vec<String>,
    severity: Severity,
) -> crate::Diagnostic {
    let group = &model.groups[o.group as usize];
    let op = &group.ops[o.pos as usize];
    let barrier = &model.barriers[o.bar as usize];
    let name = match barrier.kind {
        BarrierKind::NamedBarrier(id) => barrier_name(model, barrier.cta, id),
        _ => barrier.display(model.ctas),
    };
    let who = group.describe(model.ctas);
    let mut steps = cute_check::trace::render(model, &o.cex, max_trace_steps);
    steps.retain(|s| !s.message.starts_with("stuck:"));
    let after = steps.iter().map(|s| s.event.last).max().unwrap_or(0);
    let mut related = steps_to_related(steps);
    let what = if let Some(other) = o.sharing_turn_with {
        format!(
            "{who} can register with {name} while {} have made only part of their registrations for a generation of theirs: the two groups' arrivals count toward one generation",
            model.groups[other as usize].describe(model.ctas)
        )
    } else if o.ahead() {
        format!(
            "{who} can register for generation {} of {name} while generation {} still misses {} arrivals: arrivals meant for generation {} count toward generation {}",
            o.meant, o.lands, o.missing, o.meant, o.lands
        )
    } else {
        format!(
            "{who} can register for generation {} of {name} after it completed without them: their arrivals count toward generation {}",
            o.meant, o.lands
        )
    };
    let event = cute_check::trace::Event::hazard(model, o.group, o.pos, group.size(), &o.cex.last.bars, after);
    related.push(Related { range: op.site, message: format!("then: {what}"), file: None, event: Some(event) });
    crate::Diagnostic {
        code: RULE.code,
        name: RULE.name,
        severity,
        message: format!("`{}`: {what}", ctx.kernel.display_name()),
        range: op.site,
        label: if o.ahead() { "registers ahead of the generation that is filling".to_string() } else { "registers for a generation that is already over".to_string() },
        related,
        notes,
        help: Some(
            "make the threads that arrive wait for the consumers before they arrive again (a second barrier id or an mbarrier going the other way), so one generation completes before the next starts filling"
                .to_string(),
        ),
        fixes: if o.ahead() && o.sharing_turn_with.is_none() { back_pressure(ctx, model, op.site).into_iter().collect() } else { Vec::new() },
    }
}

/// The calls of the kernel on named barriers (`barrier`, `barrier_arrive`),
/// with the text of their `barrier_id` and `number_of_threads` arguments.
fn named_barrier_calls(ctx: &KernelContext<'_>) -> Vec<(cute_ir::ast::Call, String, String)> {
    let mut calls: Vec<cute_ir::ast::Call> = Vec::new();
    cute_ir::ast::for_each_expr(&ctx.kernel.body, &mut |e| {
        let mut inner = Vec::new();
        e.calls(&mut inner);
        calls.extend(inner.into_iter().cloned());
    });
    calls
        .into_iter()
        .filter(|c| c.func.dotted_last().is_some_and(|f| f == "barrier" || f == "barrier_arrive"))
        .filter_map(|c| {
            let id = ctx.argument_range(c.range, &["barrier_id"], 0).map(|r| ctx.slice(r).to_string())?;
            let n = ctx.argument_range(c.range, &["number_of_threads"], 1).map_or_else(String::new, |r| ctx.slice(r).to_string());
            Some((c, id, n))
        })
        .collect()
}

/// The call at `site` as the whole statement, on one line, right in the
/// body of a `for` loop: the statement and the loop.
fn in_loop_body<'c>(ctx: &'c KernelContext<'_>, site: TextRange) -> Option<(&'c Stmt, &'c Stmt)> {
    let (_, chain) = ctx.ancestors(site)?;
    let [.., lp, stmt] = chain.as_slice() else { return None };
    let StmtKind::Expr(Expr::Call(call)) = &stmt.kind else { return None };
    (call.range == site && matches!(lp.kind, StmtKind::For { .. }) && !ctx.slice(stmt.range).contains('\n')).then_some((*stmt, *lp))
}

/// Back-pressure on a second barrier id: the arriving side's
/// `barrier_arrive(barrier_id=FULL, number_of_threads=N)` in a loop, and
/// the other side's `barrier(barrier_id=FULL, number_of_threads=N)` in a
/// loop of the same rounds, the only two uses of that id. The arriving side
/// then waits, right after its arrive, at `barrier(barrier_id=E, ...)` on
/// an id no barrier of the kernel uses, which the other side arrives at
/// once the round's body is done: one generation of each per round, the
/// arriving side never more than one round ahead. It changes what the kernel
/// synchronizes on (and serializes the two sides): unsafe.
fn back_pressure(ctx: &KernelContext<'_>, model: &Model, site: TextRange) -> Option<crate::Fix> {
    if ctx.module.linked_file(site).is_some() {
        return None;
    }
    let calls = named_barrier_calls(ctx);
    let (arrive, id, n) = calls.iter().find(|(c, _, _)| c.range == site)?;
    if arrive.func.dotted_last() != Some("barrier_arrive") || n.is_empty() {
        return None;
    }
    let same: Vec<_> = calls.iter().filter(|(_, i, _)| i == id).collect();
    let [_, _] = same.as_slice() else { return None };
    let (wait, _, wait_n) = same.iter().find(|(c, _, _)| c.range != site)?;
    if wait.func.dotted_last() != Some("barrier") || wait_n != n {
        return None;
    }
    let (arrive_stmt, arrive_loop) = in_loop_body(ctx, arrive.range)?;
    let (wait_stmt, wait_loop) = in_loop_body(ctx, wait.range)?;
    let (StmtKind::For { iter: a_iter, .. }, StmtKind::For { iter: w_iter, body: w_body, .. }) = (&arrive_loop.kind, &wait_loop.kind) else { return None };
    // A round that leaves its body early would skip the new arrive or wait.
    fn leaves(stmts: &[Stmt]) -> bool {
        stmts.iter().any(|s| match &s.kind {
            StmtKind::Break | StmtKind::Continue | StmtKind::Return(_) | StmtKind::Unsupported(_) => true,
            StmtKind::If { then, orelse, .. } => leaves(then) || leaves(orelse),
            StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. } => leaves(body),
            _ => false,
        })
    }
    let StmtKind::For { body: a_body, .. } = &arrive_loop.kind else { return None };
    if arrive_loop.range == wait_loop.range || !a_iter.written_like(w_iter) || leaves(a_body) || leaves(w_body) {
        return None;
    }
    // An id no named barrier of the kernel uses (0 is the CTA barrier).
    let used = model.barriers.iter().filter_map(|b| match b.kind {
        BarrierKind::NamedBarrier(id) => Some(id),
        _ => None,
    });
    let free = used.max().unwrap_or(0).max(0) + 1;
    if free > 15 {
        return None;
    }
    let func = |c: &cute_ir::ast::Call| ctx.slice(TextRange { start: c.range.start, end: c.range.start + ctx.slice(c.range).find('(').unwrap_or(0) as u32 }).to_string();
    let last = w_body.last()?;
    let at_arrive = ctx.next_line_start(arrive_stmt.range.end);
    let at_end = ctx.next_line_start(last.range.end);
    Some(crate::Fix {
        title: format!("Hold the arriving side back on barrier {free}, which the other side arrives at after each round"),
        edits: vec![
            crate::Edit {
                range: TextRange { start: at_arrive, end: at_arrive },
                new_text: format!("{}{}(barrier_id={free}, number_of_threads={n})\n", ctx.indentation_at(arrive_stmt.range.start), func(wait)),
            },
            crate::Edit {
                range: TextRange { start: at_end, end: at_end },
                new_text: format!("{}{}(barrier_id={free}, number_of_threads={n})\n", ctx.indentation_at(wait_stmt.range.start), func(arrive)),
            },
        ],
        applicability: crate::Applicability::Unsafe,
    })
}

/// All the threads of the generation register at one call: no two groups
/// share the id, the count is short. The fix counts them where the count is
/// written: the call's `number_of_threads=`, or the `num_threads=` of the
/// one `NamedBarrier(...)` of this file assigned to the name the call is
/// made on (`self.cta_sync_barrier = pipeline.NamedBarrier(barrier_id=1,
/// num_threads=threads - 32)` in an `__init__`, the barrier's
/// `arrive_and_wait()` in a method). Unsafe: it changes the count.
fn one_site_count(ctx: &KernelContext<'_>, o: &Oversubscribed) -> Option<crate::Fix> {
    let [(site, _, _)] = o.uses.as_slice() else { return None };
    if ctx.module.linked_file(*site).is_some() {
        return None;
    }
    let range = crate::named::thread_count_argument(ctx, *site)?;
    Some(crate::Fix {
        title: format!("count the {} threads that register at this call", o.registered),
        edits: vec![crate::Edit { range, new_text: o.registered.to_string() }],
        applicability: crate::Applicability::Unsafe,
    })
}
