//! CUTE005 mbarrier-init-hazard: an mbarrier initialised by more than one
//! thread, or used before its initialisation. See `mbarrier_init_hazard.md`.

use cute_check::model::{describe_threads, BarrierKind, Model, OpKind};
use cute_check::semantics::Hazard;
use cute_syntax::TextRange;

use super::Rule;
use crate::context::KernelContext;
use crate::{Related, Severity};

pub const RULE: Rule = Rule {
    code: "CUTE005",
    name: "mbarrier-init-hazard",
    default_severity: Severity::Error,
    summary: "an mbarrier is initialised by several threads or used before its initialisation",
    doc: include_str!("mbarrier_init_hazard.md"),
};

/// A barrier whose init runs in more than one thread: (barrier, first init
/// site, the threads as (cta, thread)).
pub type RepeatedInit = (u32, TextRange, Vec<(u32, u32)>);

pub fn repeated_inits(model: &Model) -> Vec<RepeatedInit> {
    let mut out = Vec::new();
    for (b, barrier) in model.barriers.iter().enumerate() {
        if barrier.kind != BarrierKind::Mbarrier {
            continue;
        }
        let mut threads = Vec::new();
        let mut first: Option<TextRange> = None;
        for g in &model.groups {
            let inits = g.ops.iter().filter(|o| matches!(o.kind, OpKind::Init { bar, .. } if bar as usize == b));
            for op in inits {
                first = Some(first.map_or(op.site, |f| f.min(op.site)));
                threads.extend(g.threads.iter().copied());
            }
        }
        threads.sort_unstable();
        threads.dedup();
        if threads.len() > 1 {
            let site = first.unwrap();
            // The same init statement run for the barrier of every CTA (or
            // stage) is one mistake: report it once.
            if !out.iter().any(|(_, s, _)| *s == site) {
                out.push((b as u32, site, threads));
            }
        }
    }
    out
}

pub fn repeated_init_diagnostic(
    ctx: &KernelContext<'_>,
    model: &Model,
    (bar, site, threads): &RepeatedInit,
) -> crate::Diagnostic {
    let name = model.barriers[*bar as usize].display(model.ctas);
    let per_warp = threads.iter().all(|&(_, t)| t % 32 == 0) && threads.len() > 1;
    crate::Diagnostic {
        code: RULE.code,
        name: RULE.name,
        severity: Severity::Error,
        message: format!(
            "`{}`: {name} is initialised by {} threads ({}){}",
            ctx.kernel.display_name(),
            threads.len(),
            describe_threads(threads, model.ctas).replace("warp", "lane 0 of warp"),
            if per_warp { "; `elect_one` elects one lane per warp, not per CTA" } else { "" }
        ),
        range: *site,
        label: "runs in more than one thread".to_string(),
        related: threads
            .iter()
            .take(8)
            .map(|&t| Related {
                range: *site,
                message: format!("{} initialises {name}", describe_threads(&[t], model.ctas).replace("warp", "lane 0 of warp")),
            })
            .collect(),
        notes: Vec::new(),
        help: Some("guard the initialisation with `if cute.arch.warp_idx() == 0:` around `elect_one`".to_string()),
        fixes: Vec::new(),
    }
}

pub fn hazard_diagnostic(
    ctx: &KernelContext<'_>,
    model: &Model,
    hazard: &Hazard,
    trace: Vec<Related>,
    notes: Vec<String>,
) -> crate::Diagnostic {
    let (bar, what) = match hazard {
        Hazard::ArriveBeforeInit { bar, .. } => (bar, "this arrival can reach {} before it is initialised"),
        Hazard::WaitBeforeInit { bar, .. } => (bar, "this wait can reach {} before it is initialised"),
        Hazard::InitWhileInUse { bar, .. } => (bar, "this initialisation can hit {} while arrivals are pending"),
    };
    let name = model.barriers[*bar as usize].display(model.ctas);
    crate::Diagnostic {
        code: RULE.code,
        name: RULE.name,
        severity: Severity::Error,
        message: format!("`{}`: {}", ctx.kernel.display_name(), what.replace("{}", &name)),
        range: hazard.site(),
        label: "not ordered after the initialisation".to_string(),
        related: trace,
        notes,
        help: Some(
            "initialise from one thread, then `mbarrier_init_fence()` and `sync_threads()` (or `cluster_arrive()`/`cluster_wait()` when other CTAs use it) before the first use"
                .to_string(),
        ),
        fixes: Vec::new(),
    }
}
