//! CUTE031 named-barrier-deadlock: a generation of a named barrier never
//! collects its count. See `named_barrier_deadlock.md`.
//!
//! Decided on a deadlock the explorer found: when the threads left blocked
//! all wait at named barriers (none at an mbarrier, whose protocol would be
//! the cause), the hang is the named barrier's. The registrations of the
//! model then tell whether enough threads ever register for that generation
//! (under-subscription) or whether the missing ones are held elsewhere.

use std::collections::BTreeSet;

use cute_check::explore::Counterexample;
use cute_check::model::{BarrierKind, Model, OpKind};
use cute_syntax::TextRange;

use super::Rule;
use crate::context::KernelContext;
use crate::named::{barrier_name, by_id, describe, thread_count_argument};
use crate::{Edit, Fix, Related, Severity};

pub const RULE: Rule = Rule {
    code: "CUTE031",
    name: "named-barrier-deadlock",
    default_severity: Severity::Error,
    summary: "a generation of a named barrier can never collect its thread count (under-subscription, an id shared by independent groups)",
    doc: include_str!("named_barrier_deadlock.md"),
};

pub struct Stuck {
    pub site: TextRange,
    pub cta: u32,
    pub id: i64,
    pub round: u32,
    pub count: u32,
    /// Who waits there forever.
    pub waiting: String,
    /// Threads that ever register for the generation.
    pub registered: u32,
    /// (site, count, who) of the generation's registrations.
    pub uses: Vec<(TextRange, u32, String)>,
    /// Every registration site of the id, when setting their count to
    /// `registered` is a consistent fix.
    pub fix_sites: Vec<TextRange>,
}

/// The named-barrier wait a deadlock leaves blocked, when every blocked
/// thread waits at a named barrier.
pub fn explain(model: &Model, cex: &Counterexample) -> Option<Stuck> {
    let mut stuck: Vec<(TextRange, u32, u32, u32)> = Vec::new(); // site, group, pos, threads
    for (g, slots) in cex.last.groups.iter().enumerate() {
        let group = model.groups.get(g)?;
        for &(pos, n) in slots {
            let Some(op) = group.ops.get(pos as usize) else { continue };
            let OpKind::Wait { bar, .. } = op.kind else { continue };
            match model.barriers.get(bar as usize)?.kind {
                BarrierKind::NamedBarrier(_) => stuck.push((op.site, g as u32, pos, n)),
                BarrierKind::Mbarrier => return None,
                _ => {}
            }
        }
    }
    stuck.sort();
    let &(site, g, pos, n) = stuck.first()?;
    let group = &model.groups[g as usize];
    let OpKind::Wait { bar, .. } = group.ops[pos as usize].kind else { return None };
    let barrier = &model.barriers[bar as usize];
    let BarrierKind::NamedBarrier(id) = barrier.kind else { return None };
    let count = barrier.preset_count?;
    let arrivals_before = group.ops[..pos as usize].iter().filter(|o| matches!(o.kind, OpKind::Arrive { bar: b, .. } if b == bar)).count();
    let round = arrivals_before.saturating_sub(1) as u32;
    let ids = by_id(model).into_iter().find(|u| u.cta == barrier.cta && u.id == id)?;
    let registered = ids.threads_in(round);
    let mut uses: Vec<(TextRange, u32, String)> = ids
        .rounds
        .get(&round)
        .map(|us| us.iter().map(|u| (u.site, u.count, describe(model, u.cta, &u.threads))).collect())
        .unwrap_or_default();
    uses.sort_by_key(|u| u.0);
    let uniform = ids.rounds.values().flatten().all(|u| u.count == count && !u.cta_wide)
        && ids.rounds.keys().all(|&r| ids.threads_in(r) == registered);
    let fix_sites = if registered < count && registered > 0 && registered % 32 == 0 && uniform {
        let sites: BTreeSet<TextRange> = ids.rounds.values().flatten().map(|u| u.site).collect();
        sites.into_iter().collect()
    } else {
        Vec::new()
    };
    let waiting = if n == group.size() { group.describe(model.ctas) } else { format!("{n} of {}", group.describe(model.ctas)) };
    Some(Stuck { site, cta: barrier.cta, id, round, count, waiting, registered, uses, fix_sites })
}

pub fn diagnostic(
    ctx: &KernelContext<'_>,
    model: &Model,
    s: &Stuck,
    trace: Vec<Related>,
    notes: Vec<String>,
    severity: Severity,
) -> crate::Diagnostic {
    let name = barrier_name(model, s.cta, s.id);
    let generation = if s.round == 0 { "its first generation".to_string() } else { format!("generation {}", s.round) };
    let why = if s.registered < s.count {
        format!("{generation} needs {} threads, but only {} ever register for it", s.count, s.registered)
    } else {
        format!("{generation} needs {} threads, and the others that register for it are blocked elsewhere or have finished", s.count)
    };
    let mut related: Vec<Related> = s
        .uses
        .iter()
        .map(|(site, count, who)| Related { range: *site, message: format!("{who} register here (number_of_threads={count})"), file: None, event: None })
        .collect();
    related.extend(trace);
    // Each site's count where it is written: sites on one `NamedBarrier`
    // object share the count of its construction.
    let ranges: Vec<Option<TextRange>> = s.fix_sites.iter().map(|&site| thread_count_argument(ctx, site)).collect();
    let written: BTreeSet<TextRange> = ranges.iter().flatten().copied().collect();
    let mut fixes = if !written.is_empty() && ranges.iter().all(Option::is_some) {
        let edits = written.into_iter().map(|range| Edit { range, new_text: s.registered.to_string() }).collect();
        vec![Fix { title: format!("count the {} threads that reach {name}", s.registered), edits, applicability: crate::Applicability::Unsafe }]
    } else {
        Vec::new()
    };
    fixes.extend(own_id(ctx, model, s));
    crate::Diagnostic {
        code: RULE.code,
        name: RULE.name,
        severity,
        message: format!("`{}` can hang: {} {} forever at {name}: {why}", ctx.kernel.display_name(), s.waiting, if s.waiting.starts_with("thread ") || s.waiting.starts_with("warp ") { "waits" } else { "wait" }),
        range: s.site,
        label: format!("waits for {} threads that never all come", s.count),
        related,
        notes,
        help: Some(
            "name in number_of_threads exactly the threads that register for each generation, and give independent groups their own barrier ids"
                .to_string(),
        ),
        fixes,
    }
}

/// Two groups that register at the barrier with different counts, the id
/// written differently in each (`Barrier.TILE_READY` and
/// `Barrier.EPILOGUE`, two names of one value): the calls that write the
/// blocked group's id get an id of their own, the lowest that no named
/// barrier of the kernel uses, written in place of the name at each of
/// them. (The name's own definition may lie outside what the kernel's
/// check reads, a class of constants: the calls are what is edited.)
/// Unsafe: it changes which barrier threads meet at.
fn own_id(ctx: &KernelContext<'_>, model: &Model, s: &Stuck) -> Option<Fix> {
    let id_range = |site: TextRange| ctx.argument_range(site, &["barrier_id"], 0);
    let blocked = ctx.slice(id_range(s.site)?).trim().to_string();
    let ids = by_id(model).into_iter().find(|u| u.cta == s.cta && u.id == s.id)?;
    let mut counts: std::collections::BTreeMap<String, (BTreeSet<u32>, BTreeSet<TextRange>)> = std::collections::BTreeMap::new();
    for u in ids.rounds.values().flatten() {
        let range = id_range(u.site)?;
        let entry = counts.entry(ctx.slice(range).trim().to_string()).or_default();
        entry.0.insert(u.count);
        entry.1.insert(range);
    }
    let [a, b] = counts.values().map(|(c, _)| c).collect::<Vec<_>>()[..] else { return None };
    // A name (a constant, a member), not a literal or an expression.
    let named = blocked.split('.').all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_') && !p.starts_with(|c: char| c.is_ascii_digit()));
    if a.len() != 1 || b.len() != 1 || a == b || !named {
        return None;
    }
    let (_, ranges) = counts.get(&blocked)?;
    let used: BTreeSet<i64> = model.barriers.iter().filter_map(|b| if let BarrierKind::NamedBarrier(id) = b.kind { Some(id) } else { None }).collect();
    let free = (1..16).find(|i| !used.contains(i))?;
    Some(Fix {
        title: format!("Give the barriers written `{blocked}` an id of their own ({free})"),
        edits: ranges.iter().map(|&range| Edit { range, new_text: free.to_string() }).collect(),
        applicability: crate::Applicability::Unsafe,
    })
}
