//! CUTE005 mbarrier-init-hazard: an mbarrier initialised by more than one
//! thread, used before its initialisation, or initialised outside its
//! storage. See `mbarrier_init_hazard.md`.

use cute_check::model::{describe_threads, BarrierKind, Model, OpKind, StorageOverrun};
use cute_check::semantics::Hazard;
use cute_ir::api::Api;
use cute_ir::ast::{Expr, Stmt, StmtKind};
use cute_syntax::TextRange;

use super::Rule;
use crate::context::KernelContext;
use crate::{Edit, Fix, Related, Severity};

pub const RULE: Rule = Rule {
    code: "CUTE005",
    name: "mbarrier-init-hazard",
    default_severity: Severity::Error,
    summary: "an mbarrier is initialised by several threads, used before its initialisation, or initialised past the end of its storage",
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
                file: None,
                event: None,
            })
            .collect(),
        notes: Vec::new(),
        help: Some("guard the initialisation with `if cute.arch.warp_idx() == 0:` around `elect_one`".to_string()),
        fixes: if per_warp { guard_with_first_warp(ctx, *site).into_iter().collect() } else { Vec::new() },
    }
}

/// The initialisations that put mbarriers past the end of their storage
/// field, one per site: (site, the overruns there).
pub fn storage_overruns(model: &Model) -> Vec<(TextRange, Vec<&StorageOverrun>)> {
    let mut out: Vec<(TextRange, Vec<&StorageOverrun>)> = Vec::new();
    for o in &model.storage_overruns {
        match out.iter_mut().find(|(site, _)| *site == o.site) {
            Some((_, found)) => found.push(o),
            None => out.push((o.site, vec![o])),
        }
    }
    out
}

/// An initialisation that puts mbarriers past the end of their storage
/// field: they lie in what follows it (another ring's barriers, a buffer,
/// padding), which their initialisation and arrivals overwrite.
pub fn storage_overrun_diagnostic(ctx: &KernelContext<'_>, site: TextRange, overruns: &[&StorageOverrun], severity: Severity) -> crate::Diagnostic {
    let first = overruns[0];
    let needed = overruns.iter().map(|o| o.index + 1).max().unwrap_or(first.len);
    let named: Vec<String> = overruns.iter().take(3).map(|o| format!("`{}`", o.barrier)).collect();
    let what = match overruns.len() {
        1 => format!("{} lies", named[0]),
        2 => format!("{} and {} lie", named[0], named[1]),
        3 => format!("{}, {} and {} lie", named[0], named[1], named[2]),
        n => format!("{} mbarriers ({}, ...) lie", n, named.join(", ")),
    };
    crate::Diagnostic {
        code: RULE.code,
        name: RULE.name,
        severity,
        message: format!(
            "`{}`: {what} past the end of `{}`, which holds {} mbarrier{} where {needed} are initialised from it",
            ctx.kernel.display_name(),
            first.field,
            first.len,
            if first.len == 1 { "" } else { "s" }
        ),
        range: site,
        label: "initialises mbarriers outside their storage".to_string(),
        related: overruns
            .iter()
            .take(8)
            .map(|o| Related { range: site, message: format!("{} is element {} of `{}` ({} elements)", o.barrier, o.index, o.field, o.len), file: None, event: None })
            .collect(),
        notes: Vec::new(),
        help: Some(format!("declare `{}` with room for every barrier it holds (`MemRange[cutlass.Int64, {needed}]`)", first.field)),
        fixes: room_for_every_barrier(ctx, &first.field, first.len, needed).into_iter().collect(),
    }
}

/// Declare the storage field `field` (`mbar: MemRange[cutlass.Int64,
/// STAGES]`) with `needed` elements: its length rewritten, as `2 * STAGES`
/// where the barriers are twice the length as written (a pipeline's `full`
/// and `empty` per stage), else as the number. Offered where one class the
/// kernel names declares a `MemRange` field of that name, on one line.
/// Unsafe: the fields after it move.
fn room_for_every_barrier(ctx: &KernelContext<'_>, field: &str, len: i64, needed: i64) -> Option<Fix> {
    let mut found = Vec::new();
    for class in ctx.classes_named_by_kernel().filter(|c| c.memrange_fields.iter().any(|f| f.name == field)) {
        let mut offset = class.range.start;
        for line in ctx.slice(class.range).split_inclusive('\n') {
            let code = line.split('#').next().unwrap_or("");
            let declares = code.trim_start().strip_prefix(field).is_some_and(|rest| rest.trim_start().starts_with(':'));
            if let (true, Some(open), Some(close)) = (declares, code.find('['), code.rfind(']')) {
                // The length: after the last comma inside the brackets.
                let comma = code[open..close].rfind(',').map(|i| open + i + 1)?;
                let written = code[comma..close].trim();
                let start = offset + (comma + code[comma..close].find(written)?) as u32;
                found.push((TextRange { start, end: start + written.len() as u32 }, written.to_string()));
            }
            offset += line.len() as u32;
        }
    }
    let [(range, written)] = found.as_slice() else { return None };
    let simple = written.parse::<i64>().is_err() && written.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.');
    let new_len = if needed == 2 * len && simple { format!("2 * {written}") } else { needed.to_string() };
    Some(Fix {
        title: format!("Declare `{field}` with room for {needed} mbarriers"),
        edits: vec![Edit { range: *range, new_text: new_len }],
        applicability: crate::Applicability::Unsafe,
    })
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
        fixes: match hazard {
            Hazard::ArriveBeforeInit { bar, .. } | Hazard::WaitBeforeInit { bar, .. } => {
                order_after_init(ctx, model, *bar).into_iter().collect()
            }
            Hazard::InitWhileInUse { .. } => Vec::new(),
        },
    }
}

/// The fix of an init that `elect_one` runs once per warp: the `with
/// elect_one()` block that holds it, under `if <arch>.warp_idx() == 0:`.
/// Only when no branch encloses that block (its warps are then every warp
/// of the CTA, and the first one is among them).
fn guard_with_first_warp(ctx: &KernelContext<'_>, init: TextRange) -> Option<Fix> {
    let (function, chain) = ctx.ancestors(init)?;
    if function.range != ctx.kernel.range {
        return None;
    }
    let elect = chain.iter().position(|s| match &s.kind {
        StmtKind::With { items, .. } => items.iter().any(|(e, _)| calls(e, Api::ElectOne)),
        _ => false,
    })?;
    if chain[..elect].iter().any(|s| !matches!(s.kind, StmtKind::With { .. })) {
        return None;
    }
    let block = chain[elect];
    let lines = ctx.statement_lines(block.range);
    let indent = ctx.indentation_at(block.range.start);
    let mut new_text = format!("{indent}if {}.warp_idx() == 0:\n", ctx.arch_prefix(init));
    for line in ctx.slice(lines).split_inclusive('\n') {
        if !line.trim().is_empty() {
            new_text.push_str("    ");
        }
        new_text.push_str(line);
    }
    Some(Fix { title: "Initialise from the first warp only".to_string(), edits: vec![Edit { range: lines, new_text }], applicability: crate::Applicability::Unsafe })
}

/// The fix of a use that can reach a barrier before its init: after the
/// kernel statement that initialises it (and the `mbarrier_init_fence()`
/// right after that statement, inserted when missing), a barrier that
/// orders the initialising thread before every user: the cluster's when a
/// thread of another CTA uses the barrier, the CTA's otherwise.
fn order_after_init(ctx: &KernelContext<'_>, model: &Model, bar: u32) -> Option<Fix> {
    let init = model.groups.iter().flat_map(|g| &g.ops).find_map(|o| match o.kind {
        OpKind::Init { bar: b, .. } if b == bar => Some(o.site),
        _ => None,
    })?;
    let (function, chain) = ctx.ancestors(init)?;
    if function.range != ctx.kernel.range {
        return None;
    }
    let top = *chain.first()?;
    let body = &ctx.kernel.body;
    let at = body.iter().position(|s| std::ptr::eq(s, top))?;
    let prefix = ctx.arch_prefix(init);
    let mut inserted = Vec::new();
    let after = match body.get(at + 1) {
        Some(fence @ Stmt { kind: StmtKind::Expr(e), .. }) if calls(e, Api::MbarrierInitFence) => fence,
        _ => {
            inserted.push(format!("{prefix}.mbarrier_init_fence()"));
            top
        }
    };
    let owner = model.barriers.get(bar as usize)?.cta;
    let from_other_cta = model.groups.iter().any(|g| {
        g.threads.iter().any(|&(cta, _)| cta != owner)
            && g.ops.iter().any(|o| matches!(o.kind, OpKind::Arrive { bar: b, .. } | OpKind::Wait { bar: b, .. } if b == bar))
    });
    let title = if from_other_cta {
        inserted.push(format!("{prefix}.cluster_arrive_relaxed()"));
        inserted.push(format!("{prefix}.cluster_wait()"));
        "Synchronize the cluster after the initialisation"
    } else {
        inserted.push(format!("{prefix}.sync_threads()"));
        "Synchronize the CTA after the initialisation"
    };
    let indent = ctx.indentation_at(top.range.start);
    let start = ctx.next_line_start(after.range.end.saturating_sub(1));
    let new_text: String = inserted.iter().map(|line| format!("{indent}{line}\n")).collect();
    Some(Fix { title: title.to_string(), edits: vec![Edit { range: TextRange { start, end: start }, new_text }], applicability: crate::Applicability::Unsafe })
}

/// Whether `e` is a call of the DSL function `api`.
fn calls(e: &Expr, api: Api) -> bool {
    matches!(e, Expr::Call(c) if Api::of_call(c) == Some(api))
}
