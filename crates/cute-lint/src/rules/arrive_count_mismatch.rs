//! CUTE003 arrive-count-mismatch: arrivals per phase differ from the init
//! count. See `arrive_count_mismatch.md` for the user documentation.
//!
//! Decided on the model: for each mbarrier with one init count `n`, the
//! arrivals of all threads (`A`) against the phases its waiters wait for
//! (`W`, the same for every waiting thread). `A != n * W` is a mismatch.
//! Irregular protocols (waiters that wait different numbers of times,
//! several init counts) are left to the checker.

use std::collections::BTreeMap;

use cute_check::model::{describe_threads, BarrierKind, Model, OpKind};
use cute_syntax::TextRange;

use super::Rule;
use crate::context::KernelContext;
use crate::{Edit, Fix, Related, Severity};

pub const RULE: Rule = Rule {
    code: "CUTE003",
    name: "arrive-count-mismatch",
    default_severity: Severity::Error,
    summary: "the arrivals per phase of an mbarrier differ from its init count",
    doc: include_str!("arrive_count_mismatch.md"),
};

pub struct Mismatch {
    pub bar: u32,
    pub init_site: TextRange,
    pub expected: u32,
    pub arrivals: u64,
    /// How many times each arriving thread arrives: the rounds of the protocol.
    pub phases: u32,
    /// (site, arrivals per round there, who)
    pub contributions: Vec<(TextRange, u64, String)>,
}

pub fn find(model: &Model) -> Vec<Mismatch> {
    let mut out = Vec::new();
    for (b, barrier) in model.barriers.iter().enumerate() {
        if barrier.kind != BarrierKind::Mbarrier {
            continue;
        }
        let b = b as u32;
        let mut counts: Vec<(u32, TextRange)> = Vec::new();
        // Per waiting group: the phases its waits need completed. A wait on
        // parity p passes once the current parity differs from p, so a
        // producer's first wait on parity 1 needs none.
        let mut needed: Vec<u64> = Vec::new();
        // Per arriving group: how many times each of its threads arrives.
        let mut rounds: Vec<u64> = Vec::new();
        let mut arrivals = 0u64;
        let mut by_site: BTreeMap<TextRange, (u64, Vec<(u32, u32)>)> = BTreeMap::new();
        for g in &model.groups {
            let mut completions = 0u64;
            let mut waits = 0;
            let mut arrive_ops = 0u64;
            for op in &g.ops {
                match op.kind {
                    OpKind::Init { bar, count } if bar == b => counts.push((count, op.site)),
                    OpKind::Wait { bar, parity } if bar == b => {
                        waits += 1;
                        if (completions % 2) as u8 == parity {
                            completions += 1;
                        }
                    }
                    OpKind::Arrive { bar, count } if bar == b => {
                        let n = count as u64 * g.size() as u64;
                        arrivals += n;
                        arrive_ops += 1;
                        let entry = by_site.entry(op.site).or_default();
                        entry.0 += n;
                        entry.1.extend(g.threads.iter().copied());
                    }
                    _ => {}
                }
            }
            if waits > 0 {
                needed.push(completions);
            }
            if arrive_ops > 0 {
                rounds.push(arrive_ops);
            }
        }
        let Some(&(expected, init_site)) = counts.first() else { continue };
        let (Some(&phases), Some(&round_count)) = (needed.first(), rounds.first()) else { continue };
        if counts.iter().any(|c| c.0 != expected) || needed.iter().any(|&w| w != phases) || rounds.iter().any(|&r| r != round_count) {
            continue;
        }
        let n = expected as u64;
        // Either the arrivals complete exactly the phases the waiters need
        // (plus possibly one more nobody waits for), or the count is wrong;
        // and the arrivals of one round must make one phase.
        let completes_needed = arrivals == n * phases || arrivals == n * (phases + 1);
        let per_round = arrivals / round_count;
        if completes_needed || (arrivals.is_multiple_of(round_count) && per_round == n) {
            continue;
        }
        let phases = round_count as u32;
        let contributions = by_site
            .into_iter()
            .map(|(site, (n, mut threads))| {
                threads.sort_unstable();
                threads.dedup();
                (site, n / round_count, describe_threads(&threads, model.ctas))
            })
            .collect();
        // One report per init site: a loop initialising every stage of a
        // ring makes the same mistake for each of them.
        if out.iter().any(|m: &Mismatch| m.init_site == init_site) {
            continue;
        }
        out.push(Mismatch { bar: b, init_site, expected, arrivals, phases, contributions });
    }
    out
}

pub fn diagnostic(
    ctx: &KernelContext<'_>,
    model: &Model,
    m: &Mismatch,
    trace: Vec<Related>,
    notes: Vec<String>,
    severity: Severity,
) -> crate::Diagnostic {
    let name = model.barriers[m.bar as usize].display(model.ctas);
    let per_phase = if m.arrivals.is_multiple_of(m.phases as u64) {
        let n = m.arrivals / m.phases as u64;
        format!("{n} {} per phase", if n == 1 { "arrives" } else { "arrive" })
    } else {
        format!("{} arrivals are made over its {} phases", m.arrivals, m.phases)
    };
    let mut related: Vec<Related> = m
        .contributions
        .iter()
        .map(|(site, n, who)| Related { range: *site, message: format!("{} per phase here ({who})", arrivals(*n as u64)), file: None, event: None })
        .collect();
    related.extend(trace);
    let fixes = if m.arrivals.is_multiple_of(m.phases as u64) && m.arrivals > 0 {
        count_argument(ctx, m.init_site)
            .map(|range| {
                vec![Fix {
                    title: format!("initialise {name} with {}", arrivals(m.arrivals / m.phases as u64)),
                    edits: vec![Edit { range, new_text: (m.arrivals / m.phases as u64).to_string() }],
                    applicability: crate::Applicability::Unsafe,
                }]
            })
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    crate::Diagnostic {
        code: RULE.code,
        name: RULE.name,
        severity,
        message: format!(
            "`{}`: {name} is initialised for {} per phase, but {per_phase}",
            ctx.kernel.display_name(),
            arrivals(m.expected as u64)
        ),
        range: m.init_site,
        label: format!("expects {} per phase", arrivals(m.expected as u64)),
        related,
        notes,
        help: Some("make the init count equal the arrivals of one phase on every path".to_string()),
        fixes,
    }
}

/// The text range of the count argument of the `mbarrier_init` call at `site`
/// (second positional argument, or `cnt=` / `expected=`).
fn count_argument(ctx: &KernelContext<'_>, site: TextRange) -> Option<TextRange> {
    ctx.argument_range(site, &["cnt", "expected", "count"], 1)
}

/// "1 arrival", "32 arrivals".
fn arrivals(n: u64) -> String {
    if n == 1 {
        "1 arrival".to_string()
    } else {
        format!("{n} arrivals")
    }
}
