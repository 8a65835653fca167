//! CUTE030 named-barrier-count-mismatch: the registrations of one
//! generation of a named barrier name different thread counts, or a count
//! the hardware cannot honour. See `named_barrier_count_mismatch.md`.
//!
//! Decided on the model's registrations (`Model::barrier_uses`): every lane
//! that reaches a `barrier`/`barrier_arrive`/`sync_threads` is recorded with
//! the count it names and the round (its how-many-th use of the id), so the
//! threads that register for one generation, and what they each say, are
//! known exactly.

use std::collections::BTreeSet;

use cute_check::model::Model;
use cute_syntax::TextRange;

use super::Rule;
use crate::context::KernelContext;
use crate::named::{barrier_name, by_id, describe, kwarg_value};
use crate::{Edit, Fix, Related, Severity};

pub const RULE: Rule = Rule {
    code: "CUTE030",
    name: "named-barrier-count-mismatch",
    default_severity: Severity::Error,
    summary: "threads registering for one generation of a named barrier name different thread counts, or a count that is not a multiple of 32 or exceeds the CTA",
    doc: include_str!("named_barrier_count_mismatch.md"),
};

pub struct CountMismatch {
    pub cta: u32,
    pub id: i64,
    pub round: u32,
    /// The registration whose count is wrong.
    pub site: TextRange,
    pub count: u32,
    /// What is wrong with it, as a clause.
    pub what: String,
    /// Threads that register for the generation.
    pub reaching: u32,
    /// (site, count, who) of every registration of the generation.
    pub uses: Vec<(TextRange, u32, String)>,
    /// Sites whose count differs from `reaching`, when `reaching` is a
    /// valid count (the quick fix).
    pub fix_sites: Vec<TextRange>,
}

pub fn find(model: &Model) -> Vec<CountMismatch> {
    let mut out: Vec<CountMismatch> = Vec::new();
    let tpc = model.threads_per_cta;
    for ids in by_id(model) {
        for (&round, uses) in &ids.rounds {
            let reaching = ids.threads_in(round);
            let counts: BTreeSet<u32> = uses.iter().map(|u| u.count).collect();
            // The count most threads name.
            let majority = counts
                .iter()
                .copied()
                .max_by_key(|&c| (uses.iter().filter(|u| u.count == c).map(|u| u.threads.len()).sum::<usize>(), c == reaching))
                .unwrap_or(0);
            let mut sites: Vec<_> = uses.iter().collect();
            sites.sort_by_key(|u| u.site);
            // With the block size assumed (no launch found), neither the
            // CTA's size nor how many threads reach the barrier is known.
            let exceeds = |c: u32| !model.block_assumed && c > tpc;
            let invalid = sites.iter().find(|u| !u.cta_wide && (u.count % 32 != 0 || exceeds(u.count)));
            let differing = sites
                .iter()
                .find(|u| u.count != reaching && counts.len() > 1 && !model.block_assumed)
                .or_else(|| sites.iter().find(|u| u.count != majority));
            let (bad, what) = match (invalid, differing) {
                (Some(u), _) if exceeds(u.count) => (u, format!("names {} threads, more than the {tpc} of the CTA", u.count)),
                (Some(u), _) => (u, format!("names {} threads, not a multiple of the warp size (32)", u.count)),
                (None, Some(u)) if counts.len() > 1 => {
                    let others: Vec<String> = counts.iter().filter(|&&c| c != u.count).map(|c| c.to_string()).collect();
                    (u, format!("names {} threads, other registrations of the same generation name {}", u.count, others.join(", ")))
                }
                _ => continue,
            };
            let valid_total = reaching > 0 && reaching % 32 == 0 && reaching <= tpc;
            let fix_sites = if valid_total {
                sites.iter().filter(|u| u.count != reaching && !u.cta_wide).map(|u| u.site).collect()
            } else {
                Vec::new()
            };
            let mismatch = CountMismatch {
                cta: ids.cta,
                id: ids.id,
                round,
                site: bad.site,
                count: bad.count,
                what,
                reaching,
                uses: sites.iter().map(|u| (u.site, u.count, describe(model, u.cta, &u.threads))).collect(),
                fix_sites,
            };
            if !out.iter().any(|m| m.site == mismatch.site) {
                out.push(mismatch);
            }
            // One report per barrier id and CTA: later rounds repeat it.
            break;
        }
    }
    out
}

pub fn diagnostic(
    ctx: &KernelContext<'_>,
    model: &Model,
    m: &CountMismatch,
    trace: Vec<Related>,
    notes: Vec<String>,
    severity: Severity,
) -> crate::Diagnostic {
    let name = barrier_name(model, m.cta, m.id);
    let mut related: Vec<Related> = m
        .uses
        .iter()
        .map(|(site, count, who)| Related { range: *site, message: format!("{who} register here with number_of_threads={count}"), file: None, event: None })
        .collect();
    related.extend(trace);
    let edits: Vec<Edit> = m
        .fix_sites
        .iter()
        .filter_map(|&s| kwarg_value(ctx, s, "number_of_threads").map(|range| Edit { range, new_text: m.reaching.to_string() }))
        .collect();
    let fixes = if !edits.is_empty() && edits.len() == m.fix_sites.len() {
        vec![Fix { title: format!("count the {} threads that reach {name}", m.reaching), edits, applicability: crate::Applicability::Unsafe }]
    } else {
        Vec::new()
    };
    let generation = if m.round == 0 { "its first generation".to_string() } else { format!("generation {}", m.round) };
    crate::Diagnostic {
        code: RULE.code,
        name: RULE.name,
        severity,
        message: format!(
            "`{}`: this registration with {name} {}; {} threads register for {generation}",
            ctx.kernel.display_name(),
            m.what,
            m.reaching
        ),
        range: m.site,
        label: format!("number_of_threads={}", m.count),
        related,
        notes,
        help: Some(
            "every `barrier`/`barrier_arrive` of one generation must name the same count: the number of threads that register, a multiple of 32 no larger than the CTA"
                .to_string(),
        ),
        fixes,
    }
}
