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
        fixes: Vec::new(),
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
        fixes: Vec::new(),
    }
}
