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
    // A pipeline used out of its role names the misuse instead.
    let role = pipeline_role(ctx, model, cex, true);
    let help = role.as_ref().map(|r| r.help.clone()).unwrap_or_else(|| {
        "make the arrivals per phase match the init count on every path, and each wait's parity match the phase it waits for".to_string()
    });
    let fixes: Vec<crate::Fix> = role.as_ref().and_then(|r| r.fix.clone()).into_iter().collect();
    let (range, what) = role.map_or((range, what), |r| (r.site, r.what));
    crate::Diagnostic {
        code: RULE.code,
        name: RULE.name,
        severity,
        message: format!("`{}` can hang: {what}", ctx.kernel.display_name()),
        range,
        label: "blocks forever in the interleaving below".to_string(),
        related,
        notes,
        help: Some(help),
        fixes,
    }
}

/// A hang a pipeline used out of its role explains ([`pipeline_role`]).
pub struct RoleMisuse {
    pub site: cute_syntax::TextRange,
    pub what: String,
    pub help: String,
    pub fix: Option<crate::Fix>,
}

/// What a pipeline method does to a ring, read from its name (the
/// pipeline's own, a participant's or flash-attention's index-and-phase
/// forms).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Tail,
    Acquire,
    Wait,
    Release,
}

fn role_of(call: &cute_ir::ast::Call) -> Option<(Role, String, &'static str)> {
    let cute_ir::ast::Expr::Attr { base, attr } = &call.func else { return None };
    let (role, method) = match attr.as_str() {
        "producer_tail" => (Role::Tail, "producer_tail"),
        "tail" => (Role::Tail, "tail"),
        "producer_acquire" | "producer_acquire_w_index_phase" => (Role::Acquire, "producer_acquire"),
        "acquire" | "acquire_and_advance" => (Role::Acquire, "acquire"),
        "consumer_wait" | "consumer_wait_w_index_phase" => (Role::Wait, "consumer_wait"),
        "wait" | "wait_and_advance" => (Role::Wait, "wait"),
        "consumer_release" | "consumer_release_w_index" => (Role::Release, "consumer_release"),
        "release" => (Role::Release, "release"),
        _ => return None,
    };
    Some((role, base.dotted().unwrap_or_else(|| "the pipeline".to_string()), method))
}

/// A hang that a pipeline role explains, read off the counterexample's last
/// state: a `producer_tail` (or a producer participant's `tail()`) stuck in
/// a thread that already ran one on the same ring (the first advanced its
/// state a full round, so the second waits for releases no consumer makes)
/// or that never acquired a stage of it (a consumer's tail waits for its
/// own releases); or a pipeline wait stuck on a barrier whose every
/// signalling thread has finished (its partner left the ring while it
/// still waits; with `partner_gone` only).
pub fn pipeline_role(ctx: &KernelContext<'_>, model: &Model, cex: &Counterexample, partner_gone: bool) -> Option<RoleMisuse> {
    let line = |site: cute_syntax::TextRange| ctx.line(site.start);
    let finished = |g: usize| cex.last.groups[g].iter().all(|&(pos, _)| pos as usize >= model.groups[g].ops.len());
    let mut found: Vec<RoleMisuse> = Vec::new();
    for (g, slots) in cex.last.groups.iter().enumerate() {
        let group = &model.groups[g];
        for &(pos, _) in slots {
            let Some(op) = group.ops.get(pos as usize) else { continue };
            let OpKind::Wait { bar, .. } = op.kind else { continue };
            if model.barriers[bar as usize].kind != cute_check::model::BarrierKind::Mbarrier {
                continue;
            }
            let Some(call) = ctx.call_at(op.site) else { continue };
            let Some((role, pipe, method)) = role_of(call) else { continue };
            let who = group.describe(model.ctas);
            let barrier = model.barriers[bar as usize].display(model.ctas);
            if role == Role::Tail {
                // The tail's own waits: the operations at its site around the
                // stuck one, a stage each (a barrier met again is the same
                // tail's previous run, in a loop).
                let bar_of = |o: &cute_check::model::Op| match o.kind {
                    OpKind::Wait { bar, .. } => Some(bar),
                    _ => None,
                };
                let mut ring: Vec<u32> = vec![bar];
                let mut start = pos as usize;
                while start > 0 && group.ops[start - 1].site == op.site && bar_of(&group.ops[start - 1]).is_some_and(|b| !ring.contains(&b)) {
                    start -= 1;
                    ring.extend(bar_of(&group.ops[start]));
                }
                let mut end = pos as usize + 1;
                while end < group.ops.len() && group.ops[end].site == op.site && bar_of(&group.ops[end]).is_some_and(|b| !ring.contains(&b)) {
                    ring.extend(bar_of(&group.ops[end]));
                    end += 1;
                }
                let earlier = |want: Role| {
                    group.ops[..start].iter().rev().find(|o| {
                        matches!(o.kind, OpKind::Wait { bar, .. } if ring.contains(&bar))
                            && ctx.call_at(o.site).and_then(role_of).is_some_and(|(r, ..)| r == want)
                    })
                };
                if let Some(first) = earlier(Role::Tail) {
                    let lines = match first.site == op.site {
                        true => format!("on each trip of the loop around line {}", line(op.site)),
                        false => format!("line {}, then line {}", line(first.site), line(op.site)),
                    };
                    found.push(RoleMisuse {
                        site: op.site,
                        what: format!(
                            "`{method}` runs twice on `{pipe}` in {who} ({lines}): the first advanced the state a full round, so the second waits on {barrier} for releases that never come"
                        ),
                        help: format!("run `{method}` once per ring, after the producer's last acquire"),
                        fix: (first.site != op.site).then(|| drop_second_tail(ctx, op.site)).flatten(),
                    });
                    continue;
                }
                // A hand-rolled acquire is a wait on the same `empty` barriers.
                let acquired = group.ops[..start].iter().any(|o| matches!(o.kind, OpKind::Wait { bar, .. } if ring.contains(&bar)));
                if !acquired {
                    found.push(RoleMisuse {
                        site: op.site,
                        what: format!(
                            "`{method}` on `{pipe}` is run by {who}, which never acquired a stage of it (it is not the ring's producer): the tail waits on {barrier} for releases that never come"
                        ),
                        help: format!("run `{method}` in the role that produces into `{pipe}` (the one that calls its acquire), not in its consumers"),
                        fix: None,
                    });
                    continue;
                }
            }
            // Releases on the barrier a producer waits on, by a thread that
            // waited for fewer stages of that pipeline than it releases.
            if role != Role::Wait {
                if let Some((site, what, help)) = over_release(ctx, model, bar, &who, &barrier, line(op.site)) {
                    found.push(RoleMisuse { site, what, help, fix: None });
                    continue;
                }
            }
            // Judged only once the phase arithmetic has no more specific
            // cause (`vacuous-wait`), and only where no arrival of the phase
            // waited for has come.
            let b = &cex.last.bars[bar as usize];
            if !partner_gone || b.pending != b.expected {
                continue;
            }
            // A wait whose signalling threads have all finished: those
            // that arrive on a barrier of its side of the ring (`empty[i] of
            // storage`, any stage; a stage never signalled at all has the
            // same partner).
            let side = |b: u32| {
                let b = &model.barriers[b as usize];
                let (which, ring) = b.name.split_once('[').and_then(|(w, rest)| Some((w, rest.split_once("] of ")?.1)))?;
                Some((which.to_string(), ring.to_string(), b.cta))
            };
            let same_side = |b: u32| b == bar || side(b).is_some_and(|s| Some(s) == side(bar));
            let signallers: Vec<usize> = model
                .groups
                .iter()
                .enumerate()
                .filter(|(_, h)| h.ops.iter().any(|o| matches!(o.kind, OpKind::Arrive { bar: b, .. } if same_side(b))))
                .map(|(h, _)| h)
                .collect();
            if signallers.is_empty() || signallers.contains(&g) || !signallers.iter().all(|&h| finished(h)) {
                continue;
            }
            let last = signallers
                .iter()
                .filter_map(|&h| model.groups[h].ops.iter().rev().find(|o| matches!(o.kind, OpKind::Arrive { bar: b, .. } if same_side(b))).map(|o| (h, o.site)))
                .max_by_key(|(_, site)| *site);
            let Some((h, last)) = last else { continue };
            let partner = model.groups[h].describe(model.ctas);
            let (signal, partner_role) = if role == Role::Wait { ("commits", "producer") } else { ("releases", "consumer") };
            found.push(RoleMisuse {
                site: op.site,
                what: format!(
                    "{who} still {} in `{method}` on `{pipe}` after its {partner_role} left the ring: {partner}, {} signal {barrier}, has finished (its last arrival on that side of the ring at line {}), so the phase it waits for never completes",
                    if group.size() == 1 { "waits" } else { "wait" },
                    if signallers.len() > 1 { "one of the threads that" } else { "the only thread(s) to" },
                    line(last)
                ),
                help: format!("make the {partner_role} of `{pipe}` run as many stages as its partner ({signal} once per stage the other side takes), or the partner stop where it stops"),
                fix: None,
            });
        }
    }
    found.sort_by_key(|r| r.site);
    found.into_iter().next()
}

/// Take out the second of two tails run on one ring: the statement that is
/// exactly the call at `site`, on a line of its own in the kernel, in no
/// loop. The first tail then drains the ring as the package means it to.
/// Unsafe: a wait goes.
fn drop_second_tail(ctx: &KernelContext<'_>, site: cute_syntax::TextRange) -> Option<crate::Fix> {
    let kernel = ctx.kernel.range;
    if !(kernel.start <= site.start && site.end <= kernel.end) || ctx.module.linked_file(site).is_some() {
        return None;
    }
    let (_, chain) = ctx.ancestors(site)?;
    let [outer @ .., stmt] = chain.as_slice() else { return None };
    let alone = matches!(&stmt.kind, cute_ir::ast::StmtKind::Expr(cute_ir::ast::Expr::Call(c)) if c.range == site) && !ctx.slice(stmt.range).contains('\n');
    let looped = outer.iter().any(|s| matches!(s.kind, cute_ir::ast::StmtKind::For { .. } | cute_ir::ast::StmtKind::While { .. }));
    // The only statement of its block: taking it out would leave the block empty.
    let block_of_one = ctx.block_holding(outer.last().copied(), stmt.range).len() == 1;
    if !alone || looped || block_of_one {
        return None;
    }
    Some(crate::Fix {
        title: format!("Remove the second `{}`", ctx.slice(site)),
        edits: vec![crate::Edit { range: ctx.full_line(stmt.range.start), new_text: String::new() }],
        applicability: crate::Applicability::Unsafe,
    })
}

/// The calls (runs of operations at one site) of `ops` a predicate holds for.
fn calls<'m>(ops: &'m [cute_check::model::Op], keep: impl Fn(&cute_check::model::Op) -> bool) -> Vec<&'m cute_check::model::Op> {
    let mut out: Vec<&cute_check::model::Op> = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        if keep(op) && (i == 0 || ops[i - 1].site != op.site || !keep(&ops[i - 1])) {
            out.push(op);
        }
    }
    out
}

/// A thread that releases stages of a pipeline (arriving on `bar`, which
/// a stuck producer waits on) it never waited for: no `consumer_wait` on
/// that pipeline at all, or fewer than its releases. Its releases run
/// ahead of the stages produced, so the producer's wait names a phase
/// already completed or one that never will. The message and the help.
fn over_release(ctx: &KernelContext<'_>, model: &Model, bar: u32, stuck: &str, barrier: &str, at: crate::context::SourceLine) -> Option<(cute_syntax::TextRange, String, String)> {
    for group in &model.groups {
        let role = |o: &cute_check::model::Op| ctx.call_at(o.site).and_then(role_of);
        let releases_here = calls(&group.ops, |o| matches!(o.kind, OpKind::Arrive { bar: b, .. } if b == bar) && role(o).is_some_and(|(r, ..)| r == Role::Release));
        let Some(first) = releases_here.first() else { continue };
        let (_, pipe, method) = role(first)?;
        let releases = calls(&group.ops, |o| matches!(o.kind, OpKind::Arrive { .. }) && role(o).is_some_and(|(r, p, _)| r == Role::Release && p == pipe)).len();
        let waits = calls(&group.ops, |o| matches!(o.kind, OpKind::Wait { .. }) && role(o).is_some_and(|(r, p, _)| r == Role::Wait && p == pipe)).len();
        // A thread that waits on other pipelines may hand its stages over
        // through a handle or a helper: judged only where it waits on none.
        let waits_anywhere = calls(&group.ops, |o| matches!(o.kind, OpKind::Wait { .. }) && role(o).is_some_and(|(r, ..)| r == Role::Wait)).len();
        let who = group.describe(model.ctas);
        // Placed on the release past the waits: the first where it waits on
        // nothing, the one after the last wait otherwise.
        let (site, what) = if waits_anywhere == 0 {
            (first.site, format!("`{method}` on `{pipe}` is run by {who}, which never waits on it (no `consumer_wait`)"))
        } else if waits > 0 && releases > waits {
            let extra = calls(&group.ops, |o| matches!(o.kind, OpKind::Arrive { .. }) && role(o).is_some_and(|(r, p, _)| r == Role::Release && p == pipe))[waits].site;
            (extra, format!("{who} releases {releases} stages of `{pipe}` but waits for {waits}"))
        } else {
            continue;
        };
        return Some((
            site,
            format!(
                "{what}: its releases on {barrier} run ahead of the stages produced, so {stuck}'s wait at line {at} names a phase that has already completed or never will"
            ),
            format!("release a stage of `{pipe}` only in the role that waited for it, once per `consumer_wait`"),
        ));
    }
    None
}

/// A `tcgen05` commit whose `multicast_mask=` is one literal bit, so that
/// the commits of other CTAs of the cluster land on that CTA's mbarrier
/// and their own never completes: the mask `1 << rank` (the CTA's rank in
/// the cluster, under the name the kernel binds it to; none where it binds
/// none) signals each CTA's
/// own barrier. Offered where the model with each such arrive moved to the
/// barrier of the same name in the committing CTA runs clean (`clean`).
/// Unsafe: it changes which barrier is signalled.
pub fn commit_mask(ctx: &KernelContext<'_>, model: &Model, clean: &mut dyn FnMut(&Model) -> bool) -> Option<crate::Fix> {
    if model.ctas < 2 {
        return None;
    }
    let mut repaired = model.clone();
    let mut site = None;
    for g in &mut repaired.groups {
        let Some(&(cta, _)) = g.threads.first() else { continue };
        if g.threads.iter().any(|t| t.0 != cta) {
            continue;
        }
        for op in &mut g.ops {
            let OpKind::Arrive { bar, .. } = &mut op.kind else { continue };
            let target = &model.barriers[*bar as usize];
            if target.cta == cta || target.kind != cute_check::model::BarrierKind::Mbarrier {
                continue;
            }
            let call = ctx.call_at(op.site)?;
            if !call.name().ends_with("commit") || ctx.module.linked_file(op.site).is_some() {
                return None;
            }
            let mask = call.kwargs.iter().find(|(k, _)| k == "multicast_mask").map(|(_, v)| v)?;
            if !matches!(mask, cute_ir::ast::Expr::Int(v) if v.count_ones() == 1) || site.is_some_and(|s| s != op.site) {
                return None;
            }
            site = Some(op.site);
            *bar = model.barriers.iter().position(|b| b.cta == cta && b.name == target.name && b.kind == target.kind)? as u32;
        }
    }
    let site = site?;
    if !clean(&repaired) {
        return None;
    }
    let mut rank = None;
    cute_ir::ast::for_each_binding(&ctx.kernel.body, &mut |t, v| {
        if let (cute_ir::ast::Target::Name(n), Some(cute_ir::ast::Expr::Call(c))) = (t, v) {
            if c.api == Some(cute_ir::api::Api::ClusterRank) && c.args.is_empty() {
                rank = Some(n.clone());
            }
        }
    });
    let rank = rank?;
    let range = ctx.argument_range(site, &["multicast_mask"], usize::MAX)?;
    Some(crate::Fix {
        title: format!("Signal each CTA's own barrier: `multicast_mask=1 << {rank}`"),
        edits: vec![crate::Edit { range, new_text: format!("1 << {rank}") }],
        applicability: crate::Applicability::Unsafe,
    })
}

/// A wait stuck on an mbarrier for the phase after the one its arrivals
/// complete: a producer's first wait on a barrier its consumers release,
/// written with the consumer's parity (`mbarrier_wait(empty, k % 2)`),
/// waits for a release that only its own progress could lead to. Offered
/// for a stuck wait whose call (`mbarrier_wait`, `mbarrier_try_wait`) writes
/// its phase in the kernel's text, where the model with every wait of that
/// call on the other parity runs clean (`clean`): the phase becomes
/// `(k + 1) % 2` for `k % 2`, the other literal for `0` or `1`, else
/// `phase ^ 1`. Unsafe: it changes the phase waited for.
pub fn flipped_parity(ctx: &KernelContext<'_>, model: &Model, cex: &Counterexample, clean: &mut dyn FnMut(&Model) -> bool) -> Option<crate::Fix> {
    use cute_check::model::BarrierKind;
    use cute_ir::ast::{BinOp, Expr};
    let kernel = ctx.kernel.range;
    let mut stuck: Vec<cute_syntax::TextRange> = cex
        .last
        .groups
        .iter()
        .enumerate()
        .flat_map(|(g, slots)| slots.iter().filter_map(move |&(pos, _)| model.groups[g].ops.get(pos as usize)))
        .filter(|o| matches!(o.kind, OpKind::Wait { bar, .. } if model.barriers[bar as usize].kind == BarrierKind::Mbarrier))
        .map(|o| o.site)
        .collect();
    stuck.sort();
    stuck.dedup();
    // Each try is an exploration: the first two stuck waits at most.
    for site in stuck.into_iter().take(2) {
        if !(kernel.start <= site.start && site.end <= kernel.end) || ctx.module.linked_file(site).is_some() {
            continue;
        }
        let Some(call) = ctx.call_at(site) else { continue };
        if !matches!(call.api, Some(cute_ir::api::Api::MbarrierWait | cute_ir::api::Api::MbarrierTryWait)) || call.name() == "mbarrier_conditional_try_wait" {
            continue;
        }
        let Some(phase) = ctx.argument_range(site, &["phase"], 1) else { continue };
        let mut repaired = model.clone();
        for op in repaired.groups.iter_mut().flat_map(|g| g.ops.iter_mut()).filter(|o| o.site == site) {
            if let OpKind::Wait { parity, .. } = &mut op.kind {
                *parity ^= 1;
            }
        }
        if !clean(&repaired) {
            continue;
        }
        let written = ctx.slice(phase);
        let value = call.args.get(1).or_else(|| call.kwargs.iter().find(|(k, _)| k == "phase").map(|(_, v)| v));
        let new_text = match value {
            Some(Expr::Int(v @ 0..=1)) => (1 - v).to_string(),
            // `k % 2`, `(k + s) % 2`: one more round.
            Some(Expr::Binary { op: BinOp::Mod, lhs, rhs })
                if matches!(rhs.as_ref(), Expr::Int(2)) && matches!(lhs.as_ref(), Expr::Name(_) | Expr::Attr { .. } | Expr::Binary { op: BinOp::Add | BinOp::Sub, .. }) =>
            {
                let dividend = written.rsplit_once('%').map(|(l, _)| l.trim())?;
                let dividend = dividend.strip_prefix('(').and_then(|d| d.strip_suffix(')')).unwrap_or(dividend);
                format!("({dividend} + 1) % 2")
            }
            Some(Expr::Name(_)) => format!("{written} ^ 1"),
            _ => format!("({written}) ^ 1"),
        };
        return Some(crate::Fix {
            title: format!("Wait for the other phase: `{new_text}`"),
            edits: vec![crate::Edit { range: phase, new_text }],
            applicability: crate::Applicability::Unsafe,
        });
    }
    None
}
