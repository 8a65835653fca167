//! What the named-barrier rules (CUTE030-CUTE033) share: the registrations
//! of the model grouped by CTA, barrier id and round, descriptions of the
//! threads that make them, and the `number_of_threads=` argument of a call.

use std::collections::BTreeMap;

use cute_check::model::{describe_threads, BarrierUse, Model};
use cute_ir::ast::{Expr, Stmt, StmtKind};
use cute_syntax::TextRange;

use crate::context::KernelContext;

/// The registrations of one CTA with one barrier id, by round.
pub struct IdUses<'m> {
    pub cta: u32,
    pub id: i64,
    pub rounds: BTreeMap<u32, Vec<&'m BarrierUse>>,
}

impl IdUses<'_> {
    /// Threads registering in a round (each thread once per round).
    pub fn threads_in(&self, round: u32) -> u32 {
        self.rounds.get(&round).map_or(0, |us| us.iter().map(|u| u.threads.len() as u32).sum())
    }
}

/// Every (CTA, id) of the model with its registrations, in order.
pub fn by_id(model: &Model) -> Vec<IdUses<'_>> {
    let mut map: BTreeMap<(u32, i64), BTreeMap<u32, Vec<&BarrierUse>>> = BTreeMap::new();
    for u in &model.barrier_uses {
        map.entry((u.cta, u.id)).or_default().entry(u.round).or_default().push(u);
    }
    map.into_iter().map(|((cta, id), rounds)| IdUses { cta, id, rounds }).collect()
}

/// "warps 4..7", "threads 0..15 of warp 0", with the CTA when there are several.
pub fn describe(model: &Model, cta: u32, tids: &[u32]) -> String {
    let mut tids = tids.to_vec();
    tids.sort_unstable();
    tids.dedup();
    // Full warps are named as warps, lanes of a partial warp as threads.
    let mut out: Vec<(u32, u32)> = Vec::new();
    let mut partial: Vec<u32> = Vec::new();
    let mut i = 0;
    while i < tids.len() {
        let warp = tids[i] / 32;
        let lanes_in_warp = (model.threads_per_cta.saturating_sub(warp * 32)).min(32) as usize;
        let j = tids[i..].iter().take_while(|&&t| t / 32 == warp).count();
        if j == lanes_in_warp {
            out.push((cta, warp * 32));
        } else {
            partial.extend_from_slice(&tids[i..i + j]);
        }
        i += j;
    }
    let mut parts = Vec::new();
    if !out.is_empty() {
        parts.push(describe_threads(&out, model.ctas));
    }
    if !partial.is_empty() {
        let mut runs: Vec<String> = Vec::new();
        let mut i = 0;
        while i < partial.len() {
            let mut j = i;
            while j + 1 < partial.len() && partial[j + 1] == partial[j] + 1 {
                j += 1;
            }
            runs.push(if j > i { format!("{}..{}", partial[i], partial[j]) } else { partial[i].to_string() });
            i = j + 1;
        }
        let noun = if partial.len() == 1 { "thread" } else { "threads" };
        let cta_note = if model.ctas > 1 { format!(" of CTA {cta}") } else { String::new() };
        if runs.len() > 4 {
            let n = runs.len();
            parts.push(format!("{noun} {}, ... ({n} ranges){cta_note}", runs[..3].join(", ")));
        } else {
            parts.push(format!("{noun} {}{cta_note}", runs.join(", ")));
        }
    }
    if parts.is_empty() {
        "no thread".to_string()
    } else {
        parts.join(" and ")
    }
}

/// "`named barrier 1`" / "barrier 0 (`sync_threads`)", with the CTA when there are several.
pub fn barrier_name(model: &Model, cta: u32, id: i64) -> String {
    let base = if id == 0 { "barrier 0 (the one `sync_threads` uses)".to_string() } else { format!("named barrier {id}") };
    if model.ctas > 1 {
        format!("{base} of CTA {cta}")
    } else {
        base
    }
}

/// The range of the value of keyword argument `name` in the call at `site`.
pub fn kwarg_value(ctx: &KernelContext<'_>, site: TextRange, name: &str) -> Option<TextRange> {
    ctx.argument_range(site, &[name], usize::MAX)
}

/// The first line of a statement, as a range.
pub fn first_line(ctx: &KernelContext<'_>, stmt: &Stmt) -> TextRange {
    let end = ctx.next_line_start(stmt.range.start).saturating_sub(1).max(stmt.range.start).min(stmt.range.end);
    TextRange { start: stmt.range.start, end }
}

/// Why some threads do not reach `site`: the innermost branch around it and
/// the `return` statements of its function that come before it.
pub fn why_not_reached(ctx: &KernelContext<'_>, site: TextRange) -> Vec<crate::Related> {
    let mut out = Vec::new();
    if let Some(branch) = branch_around(ctx, site) {
        out.push(crate::Related {
            range: branch,
            message: "this depends on the thread: only some threads run the barrier below".to_string(),
            file: None,
            event: None,
        });
    }
    for r in returns_before(ctx, site) {
        out.push(crate::Related { range: r, message: "threads that return here never reach the barrier".to_string(), file: None, event: None });
    }
    out
}

/// The first line of the innermost branch or loop around `site` in its
/// function.
pub fn branch_around(ctx: &KernelContext<'_>, site: TextRange) -> Option<TextRange> {
    let (_, chain) = ctx.ancestors(site)?;
    let branch = chain.iter().rev().find(|s| matches!(s.kind, StmtKind::If { .. } | StmtKind::While { .. } | StmtKind::For { .. }))?;
    Some(first_line(ctx, branch))
}

/// The first lines of the `return` statements of `site`'s function that
/// come before it.
pub fn returns_before(ctx: &KernelContext<'_>, site: TextRange) -> Vec<TextRange> {
    fn returns<'a>(stmts: &'a [Stmt], before: u32, out: &mut Vec<&'a Stmt>) {
        for s in stmts {
            if s.range.start >= before {
                return;
            }
            match &s.kind {
                StmtKind::Return(_) => out.push(s),
                StmtKind::If { then, orelse, .. } => {
                    returns(then, before, out);
                    returns(orelse, before, out);
                }
                StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. } => returns(body, before, out),
                _ => {}
            }
        }
    }
    let Some((f, _)) = ctx.ancestors(site) else { return Vec::new() };
    let mut rets = Vec::new();
    returns(&f.body, site.start, &mut rets);
    rets.into_iter().map(|r| first_line(ctx, r)).collect()
}

/// Where the thread count of the named-barrier call at `site` is written:
/// its `number_of_threads=`, or the `num_threads=` of the one
/// `NamedBarrier(...)` of this file assigned to the name the call is made
/// on (`epilogue_sync.arrive_and_wait()`), directly or through the
/// `barrier_for_retrieve=` of a `TmemAllocator` (`tmem.wait_for_alloc()`).
pub fn thread_count_argument(ctx: &KernelContext<'_>, site: TextRange) -> Option<TextRange> {
    if ctx.module.linked_file(site).is_some() {
        return None;
    }
    let call = ctx.call_at(site)?;
    if let Some(range) = ctx.argument_range(call.range, &["number_of_threads"], usize::MAX) {
        return Some(range);
    }
    let Expr::Attr { base, .. } = &call.func else { return None };
    let made_as = |object: &str| -> Option<cute_ir::ast::Call> {
        let mut made = Vec::new();
        for f in ctx.module.functions.iter().filter(|f| ctx.module.linked_file(f.range).is_none()) {
            cute_ir::ast::for_each_binding(&f.body, &mut |t, v| {
                let mut defs = Vec::new();
                t.collect_defs(&mut defs);
                if defs.iter().any(|d| d == object) {
                    made.push(v.cloned());
                }
            });
        }
        match made.as_slice() {
            [Some(Expr::Call(construction))] => Some((**construction).clone()),
            _ => None,
        }
    };
    let mut construction = made_as(&base.dotted()?)?;
    if construction.name() == "TmemAllocator" {
        let barrier = construction
            .kwargs
            .iter()
            .find(|(k, _)| k == "barrier_for_retrieve")
            .map(|(_, v)| v)
            .or_else(|| construction.args.get(1))?
            .clone();
        construction = match barrier {
            Expr::Call(inline) => *inline,
            other => made_as(&other.dotted()?)?,
        };
    }
    if construction.name() != "NamedBarrier" {
        return None;
    }
    ctx.argument_range(construction.range, &["num_threads"], 1)
}
