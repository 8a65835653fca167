//! CUTE003 arrive-count-mismatch: arrivals per phase differ from the init
//! count. See `arrive_count_mismatch.md` for the user documentation.
//!
//! Decided on the model: for each mbarrier with one init count `n`, the
//! arrivals of all threads (`A`) against the phases its waiters wait for
//! (`W`, the same for every waiting thread). `A != n * W` is a mismatch.
//! Irregular protocols (waiters that wait different numbers of times,
//! several init counts) are left to the checker. Its quick fixes are
//! offered where the model, repaired the same way, explores clean
//! ([`verify`]): the count of an `mbarrier_init`, or the size of a
//! pipeline's cooperative group ([`group_size`]). `vacuous-wait` offers the
//! same count where a round's arrivals outnumber it ([`raised_count`]).

use std::collections::BTreeMap;

use cute_check::model::{describe_threads, BarrierKind, Model, OpKind};
use cute_ir::ast::StmtKind;
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
    /// The repairs that hold (see [`verify`]).
    pub repair: Repairs,
}

/// Which repairs of a mismatch leave a model that runs clean: decided by
/// exploring the repaired model ([`verify`]), so that a count lowered to
/// the arrivals is not offered where it lets the arriving threads run
/// phases ahead of a waiter that does not arrive.
#[derive(Clone, Debug, Default)]
pub struct Repairs {
    /// The init count set to the arrivals of one phase.
    pub count: bool,
    /// The one arrive, alone in an `if` on the thread, taken out of it (the
    /// `if` statement's range): every thread that waits then arrives.
    pub unguard: Option<TextRange>,
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
        out.push(Mismatch { bar: b, init_site, expected, arrivals, phases, contributions, repair: Repairs::default() });
    }
    out
}

/// The count the arrivals make per phase, when they are regular.
fn derived_count(m: &Mismatch) -> Option<u32> {
    (m.arrivals.is_multiple_of(m.phases as u64) && m.arrivals > 0).then(|| u32::try_from(m.arrivals / m.phases as u64).ok()).flatten()
}

/// Decides which repairs of `m` hold: each is made on a copy of the model,
/// which `clean` explores (true when every run finishes with no hazard).
/// Lowering the count is right where the threads that wait are throttled
/// (they arrive too, or another barrier holds the arriving side back);
/// where a waiter that does not arrive would be overtaken, the arrive it
/// skips is what is missing: when that arrive is alone in an `if` on the
/// thread, taking it out of the `if` is the repair, if the model with every
/// waiting thread arriving there runs clean and matches its count.
pub fn verify(ctx: &KernelContext<'_>, model: &Model, m: &mut Mismatch, clean: &mut dyn FnMut(&Model) -> bool) {
    if let Some(count) = derived_count(m) {
        m.repair.count = count_holds(model, m, count, clean);
    }
    m.repair.unguard = unguarded(ctx, model, m, clean);
    // Lanes that skip the arrive but run the protocol with their warp: a
    // count lowered to the arrivals made would leave what they did before
    // it (their writes, their `cp.async` copies, which each thread's
    // `PipelineCpAsync` commit tracks) unpublished.
    if lanes_skip(ctx, model, m) {
        m.repair.count = false;
    }
}

/// Whether the one arrive of `m` is alone in an `if` on the thread, made by
/// threads that each stand for a converged warp (lane 0 of each, no other
/// lane of theirs with operations of its own): the other lanes of those
/// warps skip it.
fn lanes_skip(ctx: &KernelContext<'_>, model: &Model, m: &Mismatch) -> bool {
    let [(site, _, _)] = m.contributions.as_slice() else { return false };
    let Some((_, chain)) = ctx.ancestors(*site) else { return false };
    let [.., guard, _] = chain.as_slice() else { return false };
    let StmtKind::If { cond, then, orelse } = &guard.kind else { return false };
    if then.len() != 1 || !orelse.is_empty() || !ctx.varies_across_threads(cond) {
        return false;
    }
    let arriving: Vec<(u32, u32)> = model
        .groups
        .iter()
        .filter(|g| g.ops.iter().any(|o| o.site == *site && matches!(o.kind, OpKind::Arrive { bar, .. } if bar == m.bar)))
        .flat_map(|g| g.threads.iter().copied())
        .collect();
    let with_ops = |t: &(u32, u32)| model.groups.iter().any(|g| !g.ops.is_empty() && g.threads.contains(t));
    !arriving.is_empty() && arriving.iter().all(|&(cta, tid)| tid % 32 == 0 && !(tid + 1..tid + 32).any(|l| with_ops(&(cta, l))))
}

/// Whether the model with `m`'s barrier initialised for `count` runs
/// clean. The count is written once for all the barriers that init makes
/// alike (every stage of a ring, the pipeline's `empty[i]`), so the repair
/// sets it for each of them.
fn count_holds(model: &Model, m: &Mismatch, count: u32, clean: &mut dyn FnMut(&Model) -> bool) -> bool {
    let root = |b: u32| model.barriers[b as usize].name.split('[').next().unwrap_or_default().to_string();
    let mut repaired = model.clone();
    for g in &mut repaired.groups {
        for op in &mut g.ops {
            if let OpKind::Init { bar, count: c } = &mut op.kind {
                if *bar == m.bar || (op.site == m.init_site && *c == m.expected && root(*bar) == root(m.bar)) {
                    *c = count;
                }
            }
        }
    }
    clean(&repaired)
}

/// The repair of a wait at `wait` that its barrier's phases overtook
/// (`vacuous-wait`) because the barrier completes a phase before all the
/// arrivals of a round are in: every arriving thread arrives the same
/// number of times, those rounds bring more arrivals than the init count,
/// and the model with the count raised to them runs clean. The fix is the
/// one this rule offers for a wrong count.
pub fn raised_count(ctx: &KernelContext<'_>, model: &Model, wait: TextRange, clean: &mut dyn FnMut(&Model) -> bool) -> Option<Fix> {
    let bar = model.groups.iter().flat_map(|g| &g.ops).find_map(|o| match o.kind {
        OpKind::Wait { bar, .. } if o.site == wait => Some(bar),
        _ => None,
    })?;
    let mut inits: Vec<(u32, TextRange)> = Vec::new();
    let mut rounds: Vec<u64> = Vec::new();
    let mut arrivals = 0u64;
    for g in &model.groups {
        let mut arrive_ops = 0u64;
        for op in &g.ops {
            match op.kind {
                OpKind::Init { bar: b, count } if b == bar => inits.push((count, op.site)),
                OpKind::Arrive { bar: b, count } if b == bar => {
                    arrivals += count as u64 * g.size() as u64;
                    arrive_ops += 1;
                }
                _ => {}
            }
        }
        if arrive_ops > 0 {
            rounds.push(arrive_ops);
        }
    }
    let (&(expected, init_site), Some(&round_count)) = (inits.first()?, rounds.first()) else { return None };
    if inits.iter().any(|i| i.0 != expected) || rounds.iter().any(|&r| r != round_count) || arrivals <= expected as u64 * round_count {
        return None;
    }
    let m = Mismatch { bar, init_site, expected, arrivals, phases: round_count as u32, contributions: Vec::new(), repair: Repairs::default() };
    let count = derived_count(&m)?;
    count_holds(model, &m, count, clean).then(|| count_fix(ctx, model, &m, count)).flatten()
}

/// The `if` on the thread around the one arrive of `m`, when every waiting
/// thread arriving there (the model given an arrive before each wait of the
/// waiters that do not arrive, at the waits the arriving threads make too)
/// runs clean with no mismatch left.
fn unguarded(ctx: &KernelContext<'_>, model: &Model, m: &Mismatch, clean: &mut dyn FnMut(&Model) -> bool) -> Option<TextRange> {
    let [(site, _, _)] = m.contributions.as_slice() else { return None };
    let kernel = ctx.kernel.range;
    if !(kernel.start <= site.start && site.end <= kernel.end) || ctx.module.linked_file(*site).is_some() {
        return None;
    }
    let (_, chain) = ctx.ancestors(*site)?;
    let [.., guard, arrive] = chain.as_slice() else { return None };
    let StmtKind::Expr(cute_ir::ast::Expr::Call(call)) = &arrive.kind else { return None };
    let StmtKind::If { cond, then, orelse } = &guard.kind else { return None };
    if call.range != *site || then.len() != 1 || !orelse.is_empty() || !ctx.varies_across_threads(cond) || ctx.slice(guard.range).matches('\n').count() != 1 {
        return None;
    }
    // The arrive as the arriving threads make it, and the waits that follow it.
    let count = model.groups.iter().flat_map(|g| &g.ops).find_map(|o| match o.kind {
        OpKind::Arrive { bar, count } if bar == m.bar && o.site == *site => Some(count),
        _ => None,
    })?;
    // The other lanes of the warps that arrive skip the `if` but run the
    // protocol with their lane 0, which stands for them in the model: out
    // of the `if`, each of the warp's lanes arrives there. (A thread that
    // stands for a warp taking the `if` whole arrives for all its lanes.)
    if count == 1 && lanes_skip(ctx, model, m) {
        let mut repaired = model.clone();
        for g in &mut repaired.groups {
            for op in g.ops.iter_mut().filter(|o| o.site == *site) {
                // Every barrier the arrive signals there (each stage of a ring).
                if let OpKind::Arrive { count: c, .. } = &mut op.kind {
                    *c *= 32.min(model.threads_per_cta);
                }
            }
        }
        if find(&repaired).iter().all(|r| r.bar != m.bar) && clean(&repaired) {
            return Some(guard.range);
        }
    }
    let arrives = |g: &cute_check::model::Group| g.ops.iter().any(|o| matches!(o.kind, OpKind::Arrive { bar, .. } if bar == m.bar));
    let waits_of_arrivers: Vec<TextRange> = model
        .groups
        .iter()
        .filter(|g| arrives(g))
        .flat_map(|g| &g.ops)
        .filter(|o| matches!(o.kind, OpKind::Wait { bar, .. } if bar == m.bar))
        .map(|o| o.site)
        .collect();
    let mut repaired = model.clone();
    let mut added = false;
    for g in repaired.groups.iter_mut().filter(|g| !arrives(g)) {
        let mut ops = Vec::with_capacity(g.ops.len());
        for op in g.ops.drain(..) {
            if matches!(op.kind, OpKind::Wait { bar, .. } if bar == m.bar) && waits_of_arrivers.contains(&op.site) {
                ops.push(cute_check::model::Op { kind: OpKind::Arrive { bar: m.bar, count }, site: *site });
                added = true;
            }
            ops.push(op);
        }
        g.ops = ops;
    }
    // The threads' memory operations count the synchronization operations
    // before them, which the added arrives shift: not needed to explore.
    repaired.memory.clear();
    let holds = added && find(&repaired).iter().all(|r| r.bar != m.bar) && clean(&repaired);
    holds.then_some(guard.range)
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
    let mut fixes = Vec::new();
    if let (true, Some(count)) = (m.repair.count, derived_count(m)) {
        fixes.extend(count_fix(ctx, model, m, count));
    }
    if let Some(guard) = m.repair.unguard {
        // The `if` line goes; the arrive, on the next line, takes its place.
        let arrive_line = ctx.full_line(guard.end.saturating_sub(1));
        let text = ctx.slice(arrive_line).trim();
        fixes.push(Fix {
            title: "Arrive in every thread that waits: take the arrive out of its `if`".to_string(),
            edits: vec![Edit {
                range: TextRange { start: ctx.full_line(guard.start).start, end: arrive_line.end },
                new_text: format!("{}{text}\n", ctx.indentation_at(guard.start)),
            }],
            applicability: crate::Applicability::Unsafe,
        });
    }
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

/// The fix that initialises `m`'s barrier with `count`: the count argument
/// of its `mbarrier_init`, or the group size of its pipeline
/// ([`group_size`]).
fn count_fix(ctx: &KernelContext<'_>, model: &Model, m: &Mismatch, count: u32) -> Option<Fix> {
    let name = model.barriers[m.bar as usize].display(model.ctas);
    let edit = match ctx.call_at(m.init_site) {
        Some(call) if call.name() == "create" => group_size(ctx, model, m, call, count),
        _ => count_argument(ctx, m.init_site).map(|range| Edit { range, new_text: count.to_string() }),
    }?;
    Some(Fix { title: format!("initialise {name} with {}", arrivals(count as u64)), edits: vec![edit], applicability: crate::Applicability::Unsafe })
}

/// The text range of the count argument of the `mbarrier_init` call at `site`
/// (second positional argument, or `cnt=` / `expected=`).
fn count_argument(ctx: &KernelContext<'_>, site: TextRange) -> Option<TextRange> {
    ctx.argument_range(site, &["cnt", "expected", "count"], 1)
}

/// The edit that makes a pipeline's `create(...)` at `m.init_site`
/// initialise the barriers of `m` with `count`: the size of the cooperative
/// group of that side (`producer_group=` for `full`, `consumer_group=` for
/// `empty`), written in the call or in the one assignment of the name it
/// passes. Where the package counts the group's threads as the barrier's
/// count (no multicast signalling, no peer CTA's copies added to a
/// leader's `full`): the size, in the group's agent (`Agent.Warp` counts
/// warps), or the group written anew in threads when the count is not
/// whole warps. A group passed to several pipelines is written anew in the
/// `create` call, so that the others keep theirs.
fn group_size(ctx: &KernelContext<'_>, model: &Model, m: &Mismatch, create: &cute_ir::ast::Call, count: u32) -> Option<Edit> {
    use cute_ir::ast::{Expr, Target};
    if ctx.module.linked_file(m.init_site).is_some() {
        return None;
    }
    let side = match model.barriers[m.bar as usize].name.split('[').next()? {
        "full" => "producer_group",
        "empty" => "consumer_group",
        _ => return None,
    };
    let kwarg = |name: &str| create.kwargs.iter().find(|(k, _)| k == name).map(|(_, e)| e);
    // The package's count is not the group's size there.
    if kwarg("enable_multicast_signaling").is_some_and(|e| !matches!(e, Expr::Name(n) if n == "False" || n == "None"))
        || (side == "producer_group" && model.ctas > 1 && kwarg("cta_layout_vmnk").is_some())
    {
        return None;
    }
    let (function, _) = ctx.ancestors(m.init_site)?;
    let group_call = |e: &Expr| match e {
        Expr::Call(c) if c.name() == "CooperativeGroup" => Some(c.as_ref().clone()),
        _ => None,
    };
    let passed = kwarg(side)?;
    // The group as written in the call, or the one value its name is given
    // in the function, before the call; with whether another call reads it.
    let (group, shared) = match passed {
        Expr::Name(name) => {
            let mut values = Vec::new();
            cute_ir::ast::for_each_binding(&function.body, &mut |t, v| {
                if matches!(t, Target::Name(n) if n == name) || t.bound_names().contains(name) {
                    values.push(v);
                }
            });
            let [Some(value)] = values.as_slice() else { return None };
            let group = group_call(value)?;
            if group.range.start > m.init_site.start {
                return None;
            }
            let mut uses = Vec::new();
            cute_ir::ast::for_each_expr(&function.body, &mut |e| e.collect_uses(&mut uses));
            (group, uses.iter().filter(|u| *u == name).count() > 1)
        }
        e => (group_call(e)?, false),
    };
    let agent_range = ctx.argument_range(group.range, &["agent"], 0)?;
    let agent = ctx.slice(agent_range);
    let per_unit = match agent.rsplit('.').next()? {
        "Thread" => 1,
        "Warp" => 32,
        _ => return None,
    };
    let size = ctx.argument_range(group.range, &["size"], 1);
    let whole_group = |range: TextRange| {
        let callee = ctx.slice(TextRange { start: group.range.start, end: group.range.start + ctx.slice(group.range).find('(')? as u32 });
        let thread = format!("{}.Thread", agent.rsplit_once('.')?.0);
        Some(Edit { range, new_text: format!("{callee}({thread}, {count})") })
    };
    if shared {
        return whole_group(passed_range(ctx, create, side)?);
    }
    if count % per_unit != 0 {
        return whole_group(group.range);
    }
    let new_text = (count / per_unit).to_string();
    Some(match size {
        Some(range) => Edit { range, new_text },
        // `CooperativeGroup(Agent.Thread)`: a size of one, given now.
        None => Edit { range: TextRange { start: agent_range.end, end: agent_range.end }, new_text: format!(", {new_text}") },
    })
}

/// The text range of the value of keyword argument `name` of `call`.
fn passed_range(ctx: &KernelContext<'_>, call: &cute_ir::ast::Call, name: &str) -> Option<TextRange> {
    ctx.argument_range(call.range, &[name], usize::MAX)
}

/// "1 arrival", "32 arrivals".
fn arrivals(n: u64) -> String {
    if n == 1 {
        "1 arrival".to_string()
    } else {
        format!("{n} arrivals")
    }
}
