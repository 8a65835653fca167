//! CUTE004 tx-count-mismatch: the transaction bytes announced on an mbarrier
//! differ from the bytes the TMA copies naming it deliver in the phase. See
//! `tx_count_mismatch.md` for the user documentation.
//!
//! Decided on the model's memory operations: per barrier, each thread's
//! announcements (`ExpectTx`) and copies (`CopyTx`) on it, in program order,
//! form rounds (a run of announcements and the run of copies that follows
//! it, or precedes it when the thread copies first); round k of every thread
//! is phase k. A barrier is judged only when every thread that touches it
//! has the same number of well-formed rounds and every byte count of it
//! resolves: anything else (a copy of unknown size, multicast, copies issued
//! by a thread that announces nothing) is left alone, so a report is always a
//! sum of known numbers that differ.

use std::collections::BTreeMap;

use cute_check::model::{describe_threads, BarrierKind, MemKind, Model, TxBytes};
use cute_syntax::TextRange;

use super::Rule;
use crate::context::KernelContext;
use crate::{Edit, Fix, Related, Severity};

pub const RULE: Rule = Rule {
    code: "CUTE004",
    name: "tx-count-mismatch",
    default_severity: Severity::Error,
    summary: "the bytes an mbarrier is told to expect differ from the bytes the TMA copies naming it deliver per phase",
    doc: include_str!("tx_count_mismatch.md"),
};

/// One announcement or copy of a round, with who makes it.
#[derive(Clone, Debug)]
pub struct TxSite {
    pub site: TextRange,
    pub bytes: TxBytes,
    pub who: String,
    /// `mbarrier_arrive_and_expect_tx` or a pipeline's `producer_acquire`
    /// (as opposed to a bare `mbarrier_expect_tx`).
    pub arrives: bool,
}

pub struct Mismatch {
    pub bar: u32,
    /// The phase (round) where the sums first differ.
    pub phase: usize,
    pub declared: u64,
    pub delivered: u64,
    pub expects: Vec<TxSite>,
    pub copies: Vec<TxSite>,
    /// Whether every phase delivers the same bytes (then the announcement
    /// can be set to them).
    pub regular: bool,
}

enum Item {
    Expect(TxSite),
    Copy(TxSite),
}

/// (announcements, copies) of one round of one thread.
type Round = (Vec<TxSite>, Vec<TxSite>);

pub fn find(model: &Model) -> Vec<Mismatch> {
    // Per barrier, per thread: its transaction operations in order.
    let mut by_barrier: BTreeMap<u32, Vec<Vec<Item>>> = BTreeMap::new();
    for t in &model.memory {
        let who = describe_threads(&[t.thread], model.ctas);
        let mut mine: BTreeMap<u32, Vec<Item>> = BTreeMap::new();
        for op in &t.ops {
            match &op.kind {
                MemKind::ExpectTx {
                    barrier,
                    arrives,
                    bytes,
                } => mine.entry(*barrier).or_default().push(Item::Expect(TxSite {
                    site: op.site,
                    bytes: bytes.clone(),
                    who: who.clone(),
                    arrives: *arrives,
                })),
                MemKind::CopyTx { barrier, bytes } => {
                    mine.entry(*barrier).or_default().push(Item::Copy(TxSite {
                        site: op.site,
                        bytes: bytes.clone(),
                        who: who.clone(),
                        arrives: false,
                    }))
                }
                _ => {}
            }
        }
        for (b, items) in mine {
            by_barrier.entry(b).or_default().push(items);
        }
    }

    let mut out: Vec<Mismatch> = Vec::new();
    let mut irregular = false;
    for (bar, threads) in by_barrier {
        if model
            .barriers
            .get(bar as usize)
            .is_none_or(|b| b.kind != BarrierKind::Mbarrier)
        {
            continue;
        }
        let Some(rounds) = threads
            .into_iter()
            .map(rounds_of)
            .collect::<Option<Vec<Vec<Round>>>>()
        else {
            irregular = true;
            continue;
        };
        let count = rounds[0].len();
        if count == 0 || rounds.iter().any(|r| r.len() != count) {
            irregular = true;
            continue;
        }
        let sum = |sites: &mut dyn Iterator<Item = &TxSite>| {
            sites.map(|s| s.bytes.total()).sum::<Option<u64>>()
        };
        let mut phases: Vec<(u64, u64)> = Vec::new();
        for k in 0..count {
            let declared = sum(&mut rounds.iter().flat_map(|r| &r[k].0));
            let delivered = sum(&mut rounds.iter().flat_map(|r| &r[k].1));
            match (declared, delivered) {
                (Some(d), Some(c)) => phases.push((d, c)),
                _ => break,
            }
        }
        if phases.len() != count {
            continue;
        }
        let Some(phase) = phases.iter().position(|(d, c)| d != c) else {
            continue;
        };
        let (declared, delivered) = phases[phase];
        let regular = phases.iter().all(|p| p.1 == delivered);
        let expects: Vec<TxSite> = rounds.iter().flat_map(|r| r[phase].0.clone()).collect();
        let copies: Vec<TxSite> = rounds.iter().flat_map(|r| r[phase].1.clone()).collect();
        // One report per announcement: every stage of a ring, every barrier
        // of a loop makes the same mistake.
        let key: Vec<TextRange> = expects.iter().map(|e| e.site).collect();
        if out
            .iter()
            .any(|m| m.expects.iter().map(|e| e.site).collect::<Vec<_>>() == key)
        {
            continue;
        }
        out.push(Mismatch {
            bar,
            phase,
            declared,
            delivered,
            expects,
            copies,
            regular,
        });
    }
    // Across CTAs a copy can complete on a peer's barrier (a CTA pair
    // sharing one announcement): with any barrier whose rounds do not line
    // up, the per-CTA sums are not the whole story.
    if irregular && model.ctas > 1 {
        return Vec::new();
    }
    out
}

/// A thread's operations on one barrier as rounds: each run of
/// announcements with the run of copies after it (or before it, when the
/// thread's first operation is a copy). `None` when the runs do not pair up.
fn rounds_of(items: Vec<Item>) -> Option<Vec<Round>> {
    let mut runs: Vec<(bool, Vec<TxSite>)> = Vec::new();
    for item in items {
        let (is_expect, site) = match item {
            Item::Expect(s) => (true, s),
            Item::Copy(s) => (false, s),
        };
        match runs.last_mut() {
            Some((e, sites)) if *e == is_expect => sites.push(site),
            _ => runs.push((is_expect, vec![site])),
        }
    }
    if runs.len() % 2 != 0 {
        return None;
    }
    let expects_first = runs.first().is_some_and(|r| r.0);
    Some(
        runs.chunks(2)
            .map(|pair| {
                let (a, b) = (pair[0].1.clone(), pair[1].1.clone());
                if expects_first {
                    (a, b)
                } else {
                    (b, a)
                }
            })
            .collect(),
    )
}

pub fn diagnostic(
    ctx: &KernelContext<'_>,
    model: &Model,
    m: &Mismatch,
    notes: Vec<String>,
    severity: Severity,
) -> crate::Diagnostic {
    let name = model.barriers[m.bar as usize].display(model.ctas);
    let primary = m.expects[0].site;
    let phase = m.phase;
    let mut related = Vec::new();
    let mut step = 0;
    let mut next = || {
        step += 1;
        step
    };
    for e in &m.expects {
        let how = declared_how(ctx, e);
        let lanes = if e.bytes.lanes > 1 {
            format!(" by each of its {} lanes", e.bytes.lanes)
        } else {
            String::new()
        };
        related.push(Related {
            range: e.site,
            message: format!(
                "step {}: {} announces {}{lanes} on {name} for its phase {phase}: {how}",
                next(),
                e.who,
                bytes(e.bytes.value.unwrap_or(0))
            ),
            file: None,
            event: None,
        });
    }
    for c in &m.copies {
        related.push(Related {
            range: c.site,
            message: format!(
                "step {}: {} issues a TMA copy that completes on {name}, delivering {}: {}",
                next(),
                c.who,
                bytes(c.bytes.total().unwrap_or(0)),
                c.bytes.how
            ),
            file: None,
            event: None,
        });
    }
    let outcome = if m.declared > m.delivered {
        format!(
            "the phase waits for {} that never come, so it never completes and every wait on it hangs",
            bytes(m.declared - m.delivered)
        )
    } else {
        format!(
            "the phase can complete while {} are still in flight: a waiter reads the tile before it has landed, and the late bytes underflow the transaction count of the next phase",
            bytes(m.delivered - m.declared)
        )
    };
    related.push(Related {
        range: primary,
        message: format!("step {}: {outcome}", next()),
        file: None,
        event: None,
    });

    let fixes = quick_fix(ctx, m).into_iter().collect();
    let copies = if m.copies.len() == 1 {
        "the TMA copy that completes on it delivers".to_string()
    } else {
        format!(
            "the {} TMA copies that complete on it deliver",
            m.copies.len()
        )
    };
    crate::Diagnostic {
        code: RULE.code,
        name: RULE.name,
        severity,
        message: format!(
            "`{}`: {name} is told to expect {} per phase, but {copies} {}",
            ctx.kernel.display_name(),
            bytes(m.declared),
            bytes(m.delivered)
        ),
        range: primary,
        label: format!("announces {}, {} arrive", bytes(m.declared), bytes(m.delivered)),
        related,
        notes,
        help: Some(
            "announce exactly the bytes the copies of one phase deliver: `cute.size_in_bytes(dtype, layout)` of each copy's destination tile (one stage), summed"
                .to_string(),
        ),
        fixes,
    }
}

fn bytes(n: u64) -> String {
    if n == 1 {
        "1 byte".to_string()
    } else {
        format!("{n} bytes")
    }
}

/// How an announcement's bytes were found: the argument as written and its
/// value.
fn declared_how(ctx: &KernelContext<'_>, e: &TxSite) -> String {
    match declared_argument(ctx, e) {
        Some((range, _)) if ctx.slice(range).trim() != e.bytes.how => {
            format!("`{}` = {}", ctx.slice(range).trim(), e.bytes.how)
        }
        Some((range, _)) => format!("`{}`", ctx.slice(range).trim()),
        None => e.bytes.how.clone(),
    }
}

/// The argument that holds an announcement's bytes: `bytes` of an
/// `mbarrier_*expect_tx` call, or `tx_count=` of the one
/// `PipelineTmaAsync.create` of the kernel for a `producer_acquire`. The bool
/// says whether it is a pipeline's.
fn declared_argument(ctx: &KernelContext<'_>, e: &TxSite) -> Option<(TextRange, bool)> {
    let call = ctx.call_at(e.site)?;
    if matches!(
        call.api,
        Some(cute_ir::api::Api::MbarrierArriveAndExpectTx | cute_ir::api::Api::MbarrierExpectTx)
    ) {
        return ctx
            .argument_range(e.site, &["bytes"], 1)
            .map(|r| (r, false));
    }
    let mut creates = Vec::new();
    cute_ir::ast::any_call(&ctx.kernel.body, |c| {
        if c.func
            .dotted()
            .is_some_and(|d| d.ends_with("PipelineTmaAsync.create"))
        {
            creates.push(c.range);
        }
        false
    });
    match creates.as_slice() {
        [one] => ctx
            .argument_range(*one, &["tx_count"], usize::MAX)
            .map(|r| (r, true)),
        _ => None,
    }
}

/// Set the one announcement to the bytes every phase delivers.
fn quick_fix(ctx: &KernelContext<'_>, m: &Mismatch) -> Option<Fix> {
    if !m.regular {
        return None;
    }
    let first = &m.expects[0];
    if m.expects.iter().any(|e| e.site != first.site) {
        return None;
    }
    let per_lane_total = m.expects.len() as u64 * first.bytes.lanes as u64;
    if per_lane_total == 0 || !m.delivered.is_multiple_of(per_lane_total) {
        return None;
    }
    let value = m.delivered / per_lane_total;
    let (range, pipeline) = declared_argument(ctx, first)?;
    let what = if pipeline {
        "the pipeline's `tx_count`"
    } else {
        "the expected bytes"
    };
    Some(Fix {
        title: format!("set {what} to {value}"),
        edits: vec![Edit {
            range,
            new_text: value.to_string(),
        }],
        applicability: crate::Applicability::Unsafe,
    })
}
