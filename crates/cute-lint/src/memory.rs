//! Findings of the memory-ordering analysis (`cute_check::memory`) as
//! diagnostics of the ten memory-ordering rules (`read-before-wait`,
//! `fence-after-sync`, `missing-proxy-fence`, `missing-acquire`,
//! `missing-release`, `scope-too-narrow`, `missing-wait`, `smem-race`,
//! `dsmem-race`, `tmem-lifetime`, `missing-tmem-fence`): the rule each finding names, its evidence as related
//! information, and the quick fix its repair describes. The reads before
//! `griddepcontrol_wait` are handed back as they are: whether one is a
//! finding depends on the other ways of deciding the kernel's conditions
//! (`rules/read_before_grid_dependency.rs`).

use cute_check::memory::{MemoryFinding, MemoryRule, Repair};
use cute_check::model::{MemKind, Model};
use cute_ir::ast::StmtKind;
use cute_syntax::TextRange;

use crate::context::KernelContext;
use crate::rules::{
    bulk_group_in_flight, deadlock, dsmem_race, fence_after_sync, missing_acquire, missing_proxy_fence, missing_release, missing_tmem_fence, missing_wait, read_before_grid_dependency,
    read_before_wait, scope_too_narrow, smem_race, tmem_lifetime, Rule,
};
use crate::{Diagnostic, Edit, Fix, Related, Severity};

fn rule_of(rule: MemoryRule) -> &'static Rule {
    match rule {
        MemoryRule::FenceAfterSync => &fence_after_sync::RULE,
        MemoryRule::MissingProxyFence => &missing_proxy_fence::RULE,
        MemoryRule::ReadBeforeWait => &read_before_wait::RULE,
        MemoryRule::MissingAcquire => &missing_acquire::RULE,
        MemoryRule::MissingRelease => &missing_release::RULE,
        MemoryRule::ScopeTooNarrow => &scope_too_narrow::RULE,
        MemoryRule::MissingWait => &missing_wait::RULE,
        MemoryRule::SmemRace => &smem_race::RULE,
        MemoryRule::DsmemRace => &dsmem_race::RULE,
        MemoryRule::ReadBeforeGridDependency => &read_before_grid_dependency::RULE,
        MemoryRule::BulkGroupInFlight => &bulk_group_in_flight::RULE,
        MemoryRule::TmemLifetime => &tmem_lifetime::RULE,
        MemoryRule::MissingTmemFence => &missing_tmem_fence::RULE,
        MemoryRule::CounterNeverReached => &deadlock::RULE,
    }
}

/// The memory-ordering diagnostics of one model, analysed by `analyze`
/// ([`cute_check::memory::analyze`] or its memoized form). `notes` are the
/// assumptions the model rests on; with any, findings are warnings. `Err`
/// is the `analysis-incomplete` report of a model too large to analyse.
/// The reads before `griddepcontrol_wait` come second, as found.
pub fn diagnostics(
    ctx: &KernelContext<'_>,
    model: &Model,
    notes: &[String],
    analyze: &mut crate::analysis::MemoryAnalyzer<'_>,
) -> Result<(Vec<Diagnostic>, Vec<MemoryFinding>), Diagnostic> {
    match analyze(model) {
        Ok(findings) => {
            let (early, findings): (Vec<MemoryFinding>, Vec<MemoryFinding>) =
                findings.into_iter().partition(|f| f.rule == MemoryRule::ReadBeforeGridDependency);
            Ok((findings.into_iter().map(|f| diagnostic(ctx, model, f, notes)).collect(), early))
        }
        Err(reason) => Err(crate::rules::analysis_incomplete::memory_not_checked(ctx, &reason, notes)),
    }
}

fn diagnostic(ctx: &KernelContext<'_>, model: &Model, f: MemoryFinding, notes: &[String]) -> Diagnostic {
    let rule = rule_of(f.rule);
    // Whether transaction bytes arrive bears on hangs, not on ordering.
    let mut notes: Vec<String> = notes.iter().filter(|n| !n.contains("transaction bytes")).cloned().collect();
    let release = (f.rule == MemoryRule::ScopeTooNarrow).then(|| arrive_release(model, f.site)).flatten();
    // A relaxed arrive orders nothing, by definition: only a scoped one
    // rests on reading the memory model.
    if matches!(release, Some(Some(_))) {
        notes.push(
            "assuming a CTA-scoped remote `mbarrier_arrive` does not publish the arriving thread's stores to the peer CTA (the PTX memory model does not promise it; the DSL documents the cluster scope for DSMEM hand-off)"
                .to_string(),
        );
    }
    notes.extend(branches_taken(ctx, model, &f));
    let severity = if notes.is_empty() { rule.default_severity } else { Severity::Warning };
    let fixes = match f.rule {
        MemoryRule::ReadBeforeWait => read_before_wait::fix(ctx, model, &f.repair),
        MemoryRule::TmemLifetime => fix(ctx, f.rule, &f.repair).or_else(|| wait_for_alloc_first(ctx, f.site)),
        _ => fix(ctx, f.rule, &f.repair),
    }
    .into_iter()
    .collect();
    Diagnostic {
        code: rule.code,
        name: rule.name,
        severity,
        message: format!("`{}`: {}", ctx.kernel.display_name(), f.message),
        range: f.site,
        label: if release == Some(None) { "relaxed: releases nothing".to_string() } else { label(f.rule).to_string() },
        related: f.steps.into_iter().map(|(range, message)| Related { range, message, file: None, event: None }).collect(),
        notes,
        help: if release == Some(None) {
            Some("arrive with release semantics at a scope containing both parties (`cluster_arrive()` for `cluster_arrive_relaxed()`, no `relaxed=True`)".to_string())
        } else {
            help(f.rule).map(str::to_string)
        },
        fixes,
    }
}

/// The conditions on runtime values, run both ways, under which an access
/// of finding `f` lies (its site or a step of its trace): the finding rests
/// on the data taking that branch.
fn branches_taken(ctx: &KernelContext<'_>, model: &Model, f: &MemoryFinding) -> Vec<String> {
    let within = |span: TextRange, r: TextRange| span.start <= r.start && r.end <= span.end;
    model
        .memory_conditions
        .iter()
        .filter(|c| within(c.span, f.site) || f.steps.iter().any(|(r, _)| within(c.span, *r)))
        .map(|c| {
            format!(
                "an access of it lies under the condition at line {} (on {}): it happens only where the data takes that branch (both branches were checked)",
                ctx.line(c.span.start),
                c.why
            )
        })
        .collect()
}

/// The release scope of the arrive at `site` (`Some(None)`: relaxed),
/// when it is one the memory model records.
fn arrive_release(model: &Model, site: TextRange) -> Option<Option<cute_check::model::Scope>> {
    model.memory.iter().flat_map(|t| &t.ops).find_map(|m| match m.kind {
        MemKind::ArriveRelease { scope } if m.site == site => Some(scope),
        _ => None,
    })
}

fn label(rule: MemoryRule) -> &'static str {
    match rule {
        MemoryRule::FenceAfterSync => "the fence must come before the barrier",
        MemoryRule::MissingProxyFence => "no proxy fence before this barrier",
        MemoryRule::ReadBeforeWait => "read before the copy is known to have landed",
        MemoryRule::MissingAcquire => "observes the counter without acquire",
        MemoryRule::MissingRelease => "does not release the data written before it",
        MemoryRule::ScopeTooNarrow => "scope does not contain both parties",
        MemoryRule::MissingWait => "does not wait for the counter to reach its target",
        MemoryRule::SmemRace | MemoryRule::DsmemRace => "races with another access",
        MemoryRule::ReadBeforeGridDependency => "read before `griddepcontrol_wait()`",
        MemoryRule::BulkGroupInFlight => "the TMA store may still be reading this buffer",
        MemoryRule::TmemLifetime => "tensor memory used before its allocation is published, freed too early, twice, or never",
        MemoryRule::MissingTmemFence => "no `fence_view_async_tmem_store()` between the tensor-memory store and this hand-off",
        MemoryRule::CounterNeverReached => "never exits: the grid does not add that much",
    }
}

fn help(rule: MemoryRule) -> Option<&'static str> {
    Some(match rule {
        MemoryRule::FenceAfterSync => "fence first, barrier second: move the proxy fence before the barrier",
        MemoryRule::MissingProxyFence => "insert `cute.arch.fence_proxy(\"async.shared\", space=\"cta\")` before the barrier, in every accessing thread",
        MemoryRule::ReadBeforeWait => "wait on the copy's barrier (for the phase it completes) before reading",
        MemoryRule::MissingAcquire => "add `sem=\"acquire\"` (`.acquire` in PTX) and a scope containing the producer",
        MemoryRule::MissingRelease => "release the update (`sem=\"release\"`, `.release` in PTX), after a barrier that joins every writing thread",
        MemoryRule::ScopeTooNarrow => "widen the scope to the smallest one containing both parties",
        MemoryRule::MissingWait => "spin until the counter reaches the number of updates that publish the data, then join with a barrier",
        MemoryRule::BulkGroupInFlight => "wait for the store's bulk group (`cp_async_bulk_wait_group(k, read=True)`, or the store pipeline's `producer_acquire`) before the barrier or arrive that frees the buffer",
        MemoryRule::TmemLifetime => "read the address back only after `wait_for_alloc()` or a barrier after the allocation; put a barrier every user of the tensor memory takes (for an MMA, a wait on its last `tcgen05.commit`) between the last use and the free; free each allocation once, before the kernel exits",
        MemoryRule::MissingTmemFence => "insert `cute.arch.fence_view_async_tmem_store()` after the `tcgen05` stores and before the commit, arrive or barrier that hands the tensor memory over, in the storing warp",
        MemoryRule::CounterNeverReached => "wait for the number of additions the grid makes (one per CTA that adds, times what each adds), or have every CTA the target counts add",
        MemoryRule::SmemRace | MemoryRule::DsmemRace | MemoryRule::ReadBeforeGridDependency => return None,
    })
}

/// Whether the call at `site` is inline assembly (its repairs edit the
/// PTX text instead of keyword arguments).
fn is_inline_asm(ctx: &KernelContext<'_>, site: TextRange) -> bool {
    ctx.call_at(site).is_some_and(|c| c.api == Some(cute_ir::api::Api::InlineAsm))
}


fn fix(ctx: &KernelContext<'_>, rule: MemoryRule, repair: &Repair) -> Option<Fix> {
    match repair {
        Repair::None => None,
        Repair::MoveFenceBefore { fence, barrier } => {
            let call = ctx.slice(*fence).to_string();
            let remove = ctx.full_line(fence.start);
            let line = ctx.slice(remove).trim().to_string();
            // Only a fence alone on its line (a comment may follow) is moved
            // mechanically, with its comment.
            let code = line.split('#').next().unwrap_or("").trim();
            if code != call.trim() {
                return None;
            }
            Some(Fix {
                title: "Move the proxy fence before the barrier".to_string(),
                edits: vec![ctx.insert_line_before(*barrier, &line), Edit { range: remove, new_text: String::new() }],
                applicability: crate::Applicability::Safe,
            })
        }
        Repair::InsertProxyFenceBefore { site } => {
            let prefix = ctx.arch_prefix(*site);
            Some(Fix {
                title: "Insert a proxy fence before the barrier".to_string(),
                edits: vec![ctx.insert_line_before(*site, &format!("{prefix}.fence_proxy(\"async.shared\", space=\"cta\")"))],
                applicability: crate::Applicability::Safe,
            })
        }
        Repair::InsertTmemStoreFenceBefore { site, after } => tmem_store_fence_before(ctx, *site, *after),
        Repair::SetSem { call, sem } if is_inline_asm(ctx, *call) => {
            // One assembly string may hold the update and the read (a
            // `red` then a spin on the same word): the rule says which of
            // them the semantics go to.
            let text = cute_ir::ptx::with_semantics(ctx.slice(*call), rule == MemoryRule::MissingAcquire, sem)?;
            Some(Fix { title: format!("Use `.{sem}` in the PTX instruction"), edits: vec![Edit { range: *call, new_text: text }], applicability: crate::Applicability::Safe })
        }
        Repair::SetScope { call, scope } if is_inline_asm(ctx, *call) => {
            let source = ctx.slice(*call);
            let text = cute_ir::ptx::with_scope(source, false, scope.name()).or_else(|| cute_ir::ptx::with_scope(source, true, scope.name()))?;
            Some(Fix { title: format!("Use `.{}` in the PTX instruction", scope.name()), edits: vec![Edit { range: *call, new_text: text }], applicability: crate::Applicability::Safe })
        }
        Repair::SetSem { call, sem } => {
            set_keyword(ctx, *call, "sem", &format!("\"{sem}\"")).map(|edit| Fix { title: format!("Use `sem=\"{sem}\"`"), edits: vec![edit], applicability: crate::Applicability::Safe })
        }
        Repair::SetScope { call, scope } => {
            let c = ctx.call_at(*call)?;
            let is_arrive = c.func.dotted().is_some_and(|d| d.ends_with("mbarrier_arrive"));
            if is_arrive {
                // A relaxed arrive stays relaxed whatever its scope: no
                // scope alone repairs it.
                if c.kwargs.iter().any(|(k, _)| k == "relaxed") {
                    return None;
                }
                let member = scope.name().to_ascii_uppercase();
                // A scope written as a member of an enum (`nvvm.MemScopeKind.CTA`,
                // `prims.MemScope.CTA`) becomes that enum's wider member; else
                // the arrive of `cutlass.experimental.primitives` takes the
                // package's `MemScope` (`prims.MemScope.CLUSTER`), and
                // `cute.arch`'s an NVVM scope, which needs its import.
                let written = c.kwargs.iter().find(|(k, _)| k == "scope").and_then(|(_, e)| e.dotted());
                let primitive = c.qualname.as_deref().and_then(cute_ir::api::primitive_name).is_some();
                let module = c.func.dotted().and_then(|d| d.rsplit_once('.').map(|(m, _)| m.to_string()));
                let (value, import) = match (written.as_deref().and_then(|w| w.rsplit_once('.')), module) {
                    (Some((enumeration, _)), _) => (format!("{enumeration}.{member}"), false),
                    (None, Some(module)) if primitive => (format!("{module}.MemScope.{member}"), false),
                    // The module's imports, not its text: a kernel checked in
                    // its frame (`incremental.rs`) has the file's imports
                    // without their lines.
                    _ => (format!("nvvm.MemScopeKind.{member}"), ctx.module.imports.get("nvvm").is_none()),
                };
                let mut edits = vec![set_keyword(ctx, *call, "scope", &value)?];
                if import {
                    edits.push(Edit { range: TextRange { start: 0, end: 0 }, new_text: "from cutlass._mlir.dialects import nvvm\n".to_string() });
                }
                return Some(Fix { title: format!("Release at {} scope", scope.name()), edits, applicability: crate::Applicability::Safe });
            }
            // `cluster_arrive_relaxed()` takes no scope: the arrive that
            // releases is `cluster_arrive()`.
            if c.func.dotted().is_some_and(|d| d.ends_with("cluster_arrive_relaxed")) {
                let text = ctx.slice(*call).replacen("cluster_arrive_relaxed", "cluster_arrive", 1);
                return Some(Fix {
                    title: "Use `cluster_arrive()`, which releases".to_string(),
                    edits: vec![Edit { range: *call, new_text: text }],
                    applicability: crate::Applicability::Safe,
                });
            }
            let edit = set_keyword(ctx, *call, "scope", &format!("\"{}\"", scope.name()))?;
            Some(Fix { title: format!("Use `scope=\"{}\"`", scope.name()), edits: vec![edit], applicability: crate::Applicability::Safe })
        }
        // The whole warp must take the `sync_warp` (under `if lane < 16:`
        // it would hang), and the whole CTA the CTA barrier (a barrier
        // inside `if tidx == 0:` would hang the other threads). Where both
        // accesses are inside the branch that splits the warp, a
        // `sync_warp()` before that branch orders nothing between them,
        // and one between them would need the mask of the lanes that take
        // the branch: no fix is offered.
        Repair::InsertWarpSyncBefore { site, stmt, after } => {
            let fix = barrier_before(ctx, *site, *stmt, "sync_warp", "Insert `sync_warp()` between the two accesses")?;
            let at = fix.edits.first()?.range.start;
            let kernel = ctx.kernel.range;
            let within_kernel = kernel.start <= after.start && after.end <= kernel.end;
            (!within_kernel || after.start < at).then_some(fix)
        }
        // A CTA barrier goes outside the branches on the thread around the
        // free (inside, it would hang the warps that do not take them); it
        // orders the uses before the free only when nothing but the free
        // (and giving up the allocation permit) is inside those branches.
        Repair::InsertBarrierBefore { site, stmt } if rule == MemoryRule::TmemLifetime => {
            let kernel = ctx.kernel.range;
            let at = if kernel.start <= site.start && site.end <= kernel.end { *site } else { ctx.kernel_statement(*stmt)?.range };
            let outer = outside_thread_branches(ctx, at)?;
            let only_the_free = ctx.slice(outer).lines().all(|line| {
                let code = line.split('#').next().unwrap_or("").trim();
                code.is_empty()
                    || code == "else:"
                    || code.starts_with("if ")
                    || code.starts_with("elif ")
                    || code.starts_with("with ")
                    || ["free(", "dealloc_tmem(", "relinquish"].iter().any(|f| code.contains(f))
            });
            only_the_free.then(|| barrier_before(ctx, *site, *stmt, "sync_threads", "Insert a CTA barrier before the free")).flatten()
        }
        Repair::InsertBarrierBefore { site, stmt } => barrier_before(ctx, *site, *stmt, "sync_threads", "Insert a CTA barrier before the release"),
        Repair::InsertCtaBarrierBetween { site, stmt, after } => cta_barrier_between(ctx, *site, *stmt, *after),
        Repair::WaitForStoreGroup { copy, barrier } => store_group_wait(ctx, *copy, *barrier),
        // Made by the rule itself, which knows how the kernel spells its wait.
        Repair::InsertGridDependencyWaitBefore { .. } | Repair::InsertWaitBefore { .. } => None,
    }
}

/// A fix inserting `fence_view_async_tmem_store()` on the line before the
/// hand-off at `site`, outside the `with elect_one()` blocks (and branches
/// on `elect_one()`) around it: `tcgen05.wait::st` is `.sync.aligned`, the
/// whole warp takes it. None where the hand-off is not in the kernel's text,
/// sits in another branch on the thread or lane (the fence there would not be
/// taken by the whole warp), or the place would not come after the store.
fn tmem_store_fence_before(ctx: &KernelContext<'_>, site: TextRange, after: TextRange) -> Option<Fix> {
    use cute_ir::api::Api;
    let kernel = ctx.kernel.range;
    if !(kernel.start <= site.start && site.end <= kernel.end) {
        return None;
    }
    let (_, chain) = ctx.ancestors(site)?;
    let calls_any = |e: &cute_ir::ast::Expr, apis: &[Api]| {
        let mut calls = Vec::new();
        e.calls(&mut calls);
        calls.iter().any(|c| c.api.is_some_and(|a| apis.contains(&a)))
    };
    let mut at = *chain.last()?;
    let mut escaping = true;
    for s in chain.iter().rev().skip(1) {
        let elects = match &s.kind {
            StmtKind::With { items, .. } => items.iter().any(|(e, _)| calls_any(e, &[Api::ElectOne])),
            StmtKind::If { cond, .. } => calls_any(cond, &[Api::ElectOne]),
            _ => false,
        };
        if escaping && elects {
            at = s;
            continue;
        }
        escaping = false;
        // A branch that splits the warp further out: the fence would not be
        // taken by all of its lanes.
        if let StmtKind::If { cond, .. } = &s.kind {
            if calls_any(cond, &[Api::ThreadIdx, Api::ThreadIdxX, Api::LaneIdx, Api::ElectOne]) {
                return None;
            }
        }
    }
    let in_kernel = kernel.start <= after.start && after.end <= kernel.end;
    if in_kernel && after.end > at.range.start {
        return None;
    }
    let prefix = ctx.arch_prefix(site);
    let prefix = if prefix.ends_with(".arch") { prefix } else { "cute.arch".to_string() };
    Some(Fix {
        title: "Insert `fence_view_async_tmem_store()` before the hand-off".to_string(),
        edits: vec![ctx.insert_line_before(at.range, &format!("{prefix}.fence_view_async_tmem_store()"))],
        applicability: crate::Applicability::Safe,
    })
}

/// The fix of a buffer written while the TMA store at `copy` may still read
/// it: the issuing thread waits for its bulk groups
/// (`cp_async_bulk_wait_group(0, read=True)`, which is always enough) on
/// the line after the `cp_async_bulk_commit_group()` that follows the
/// store in its block, before any synchronization of the issuer after the
/// store; with `barrier`, a CTA barrier after the branches on the thread
/// around the store carries the wait to the other threads. None where the
/// store is not in the kernel's text or its commit is not the statement
/// after it (a `PipelineTmaStore`'s, another function's). Only a wait
/// added, it strengthens ordering (safe); with a barrier, every thread must
/// reach it (unsafe).
fn store_group_wait(ctx: &KernelContext<'_>, copy: TextRange, barrier: bool) -> Option<Fix> {
    let kernel = ctx.kernel.range;
    if !(kernel.start <= copy.start && copy.end <= kernel.end) {
        return None;
    }
    let (_, chain) = ctx.ancestors(copy)?;
    let [.., block, store] = chain.as_slice() else { return None };
    let body = match &block.kind {
        StmtKind::If { then, orelse, .. } => if then.iter().any(|s| std::ptr::eq(s, *store)) { then } else { orelse },
        StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. } => body,
        _ => return None,
    };
    let at = body.iter().position(|s| std::ptr::eq(s, *store))?;
    let commit = body.get(at + 1)?;
    let StmtKind::Expr(cute_ir::ast::Expr::Call(call)) = &commit.kind else { return None };
    if call.name() != "cp_async_bulk_commit_group" || ctx.slice(commit.range).contains('\n') {
        return None;
    }
    let prefix = ctx.arch_prefix(call.range);
    let line = |at: TextRange, text: String| ctx.insert_line_after(at, &text);
    let mut edits = vec![line(commit.range, format!("{prefix}.cp_async_bulk_wait_group(0, read=True)"))];
    if barrier {
        let branches = outside_thread_branches(ctx, copy)?;
        if branches == store.range {
            return None;
        }
        let sync = line(branches, format!("{prefix}.sync_threads()"));
        // At the same place when the commit ends the branch: one edit, the
        // wait first.
        match edits.first_mut() {
            Some(wait) if wait.range == sync.range => wait.new_text.push_str(&sync.new_text),
            _ => edits.push(sync),
        }
    }
    Some(Fix {
        title: if barrier {
            "Wait for the store's bulk group after its commit, and carry the wait to every thread with a CTA barrier".to_string()
        } else {
            "Wait for the store's bulk group after its commit".to_string()
        },
        edits,
        applicability: if barrier { crate::Applicability::Unsafe } else { crate::Applicability::Safe },
    })
}

/// A fix inserting `cute.arch.<barrier>()` before the kernel statement of
/// the access at `site` (made in a helper, `site` is the helper's: then
/// before the kernel statement `stmt` that calls it), and before the
/// branches on the thread or lane around it.
fn barrier_before(ctx: &KernelContext<'_>, site: TextRange, stmt: u32, barrier: &str, title: &str) -> Option<Fix> {
    let kernel = ctx.kernel.range;
    let site = if kernel.start <= site.start && site.end <= kernel.end { site } else { ctx.kernel_statement(stmt)?.range };
    let at = outside_thread_branches(ctx, site)?;
    let prefix = ctx.arch_prefix(site);
    Some(Fix { title: title.to_string(), edits: vec![ctx.insert_line_before(at, &format!("{prefix}.{barrier}()"))], applicability: crate::Applicability::Unsafe })
}

/// A CTA barrier between the accesses of two warps of one CTA: before the
/// statement of the later one (`site`, or the kernel statement `stmt` that
/// calls the helper making it), outside the outermost branch on the thread
/// around it, and after the earlier one (`after`), so that every thread's earlier
/// accesses come before every thread's later ones. Every thread of the CTA
/// must reach it as often as the others: none where a loop or branch
/// around that place has a condition that varies across threads, or a
/// `return` comes before it; none where the earlier access is not in the
/// kernel's text before that place, or a loop holds both. Unsafe: a barrier
/// added.
fn cta_barrier_between(ctx: &KernelContext<'_>, site: TextRange, stmt: u32, after: TextRange) -> Option<Fix> {
    let kernel = ctx.kernel.range;
    let in_kernel = |r: TextRange| kernel.start <= r.start && r.end <= kernel.end;
    let site = if in_kernel(site) { site } else { ctx.kernel_statement(stmt)?.range };
    // Outside the outermost branch on the thread around the access (with
    // the branches every thread takes alike inside it).
    let (_, chain) = ctx.ancestors(site)?;
    let outermost_split = chain.iter().position(|s| match &s.kind {
        StmtKind::If { cond, .. } => ctx.varies_across_threads(cond),
        StmtKind::With { items, .. } => items.iter().any(|(e, _)| ctx.varies_across_threads(e)),
        _ => false,
    });
    let place = chain.get(outermost_split.unwrap_or(chain.len().checked_sub(1)?))?.range;
    if !in_kernel(after) || after.end > place.start {
        return None;
    }
    let (_, chain) = ctx.ancestors(place)?;
    let around = || chain.iter().filter(|s| s.range != place);
    // A loop around both: the race may be between one turn's later access
    // and the next turn's earlier one, which a barrier between them in
    // the text does not order.
    let common_loop = around().any(|s| matches!(s.kind, StmtKind::For { .. } | StmtKind::While { .. }) && s.range.start <= after.start && after.end <= s.range.end);
    let uniform = around().all(|s| match &s.kind {
        StmtKind::If { cond, .. } | StmtKind::While { cond, .. } => !ctx.varies_across_threads(cond),
        StmtKind::For { iter, .. } => !ctx.varies_across_threads(iter),
        _ => true,
    });
    let returns_before = returns_before(&ctx.kernel.body, place.start);
    if common_loop || !uniform || returns_before {
        return None;
    }
    let prefix = ctx.arch_prefix(site);
    Some(Fix {
        title: "Insert a CTA barrier between the two accesses".to_string(),
        edits: vec![ctx.insert_line_before(place, &format!("{prefix}.sync_threads()"))],
        applicability: crate::Applicability::Unsafe,
    })
}

/// Whether a `return` among `stmts` (at any depth) starts before `offset`.
fn returns_before(stmts: &[cute_ir::ast::Stmt], offset: u32) -> bool {
    stmts.iter().filter(|s| s.range.start < offset).any(|s| match &s.kind {
        StmtKind::Return(_) => true,
        StmtKind::If { then, orelse, .. } => returns_before(then, offset) || returns_before(orelse, offset),
        StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. } => returns_before(body, offset),
        _ => false,
    })
}

/// The statement holding `site`, or the outermost of the branches on the
/// thread or lane (`if tidx == 0:`) and `with elect_one()` blocks right
/// around it: where a barrier every thread must take can go. Branches that
/// every thread takes alike (`if bidx == 0:`) are left around it.
fn outside_thread_branches(ctx: &KernelContext<'_>, site: TextRange) -> Option<TextRange> {
    let (_, chain) = ctx.ancestors(site)?;
    let mut at = *chain.last()?;
    for s in chain.iter().rev().skip(1) {
        match &s.kind {
            StmtKind::With { .. } => {}
            StmtKind::If { cond, .. } if ctx.varies_across_threads(cond) => at = s,
            _ => break,
        }
    }
    Some(at.range)
}

/// An edit giving the call at `site` the keyword argument `name=value`,
/// replacing the one it has.
fn set_keyword(ctx: &KernelContext<'_>, site: TextRange, name: &str, value: &str) -> Option<Edit> {
    let text = ctx.slice(site);
    let bytes = text.as_bytes();
    // `name=` as a whole keyword (not `xname=`).
    let mut search = 0;
    while let Some(i) = text[search..].find(name).map(|i| i + search) {
        let before_ok = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        let rest = text[i + name.len()..].trim_start();
        if before_ok && rest.starts_with('=') && !rest.starts_with("==") {
            let value_start = i + name.len() + (text[i + name.len()..].len() - rest.len()) + 1;
            let tail = &text[value_start..];
            let lead = tail.len() - tail.trim_start().len();
            let v0 = value_start + lead;
            let v_len = value_len(&text[v0..]);
            let start = site.start + v0 as u32;
            return Some(Edit { range: TextRange { start, end: start + v_len as u32 }, new_text: value.to_string() });
        }
        search = i + name.len();
    }
    // No such keyword: add it before the closing parenthesis.
    let close = text.rfind(')')?;
    let inner = text[..close].trim_end();
    let sep = if inner.ends_with(',') || inner.ends_with('(') { " " } else { ", " };
    let at = site.start + inner.len() as u32;
    let sep = if inner.ends_with('(') { "" } else { sep };
    Some(Edit { range: TextRange { start: at, end: at }, new_text: format!("{sep}{name}={value}") })
}

/// Length of one argument value at the start of `s` (up to a top-level
/// comma or closing parenthesis).
fn value_len(s: &str) -> usize {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    for (i, ch) in s.char_indices() {
        match quote {
            Some(q) if ch == q => quote = None,
            Some(_) => {}
            None => match ch {
                '"' | '\'' => quote = Some(ch),
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' if depth == 0 => return s[..i].trim_end().len(),
                ')' | ']' | '}' => depth -= 1,
                ',' if depth == 0 => return s[..i].trim_end().len(),
                _ => {}
            },
        }
    }
    s.trim_end().len()
}


/// The address read back (`tmem.retrieve_ptr(...)`) before the
/// `tmem.wait_for_alloc()` that follows it in the same block: the wait is
/// moved up to the line before the read's statement, when nothing between
/// them synchronizes (no call the API table knows) or touches the
/// allocator. Each thread waits at the same barrier the same number of
/// times, earlier: safe.
fn wait_for_alloc_first(ctx: &KernelContext<'_>, site: TextRange) -> Option<Fix> {
    let kernel = ctx.kernel.range;
    if !(kernel.start <= site.start && site.end <= kernel.end) || ctx.module.linked_file(site).is_some() {
        return None;
    }
    let call = ctx.call_at(site)?;
    let cute_ir::ast::Expr::Attr { base, attr } = &call.func else { return None };
    let object = base.dotted()?;
    if attr != "retrieve_ptr" {
        return None;
    }
    let (function, chain) = ctx.ancestors(site)?;
    let stmt = *chain.last()?;
    let block: &[cute_ir::ast::Stmt] = match chain.len().checked_sub(2).map(|i| &chain[i].kind) {
        None => &function.body,
        Some(StmtKind::If { then, orelse, .. }) => if then.iter().any(|s| s.id == stmt.id) { then } else { orelse },
        Some(StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. }) => body,
        Some(_) => return None,
    };
    let i = block.iter().position(|s| s.id == stmt.id)?;
    let is_wait = |s: &cute_ir::ast::Stmt| {
        matches!(&s.kind, StmtKind::Expr(cute_ir::ast::Expr::Call(c))
            if matches!(&c.func, cute_ir::ast::Expr::Attr { base, attr } if attr == "wait_for_alloc" && base.dotted().as_deref() == Some(object.as_str())))
    };
    let j = i + 1 + block[i + 1..].iter().position(is_wait)?;
    let between = &block[i + 1..j];
    let mut uses = Vec::new();
    cute_ir::ast::for_each_expr(between, &mut |e| e.collect_uses(&mut uses));
    let root = |n: &String| n.split('.').next().unwrap_or_default().to_string();
    let object_root = object.split('.').next().unwrap_or_default().to_string();
    let mut bound = Vec::new();
    cute_ir::ast::for_each_binding(between, &mut |t, _| bound.extend(t.bound_names()));
    if uses.iter().any(|n| root(n) == object_root) || bound.contains(&object_root) || cute_ir::ast::any_call(between, |c| c.api.is_some()) {
        return None;
    }
    let wait = &block[j];
    let lines = ctx.statement_lines(wait.range);
    let at = ctx.full_line(stmt.range.start).start;
    Some(Fix {
        title: format!("Wait for the allocation (`{object}.wait_for_alloc()`) before reading its address"),
        edits: vec![Edit { range: TextRange { start: at, end: at }, new_text: ctx.slice(lines).to_string() }, Edit { range: lines, new_text: String::new() }],
        applicability: crate::Applicability::Safe,
    })
}
