//! CUTE006 read-before-wait: shared memory filled by an async copy is read before a completed wait on the copy's barrier. See `read_before_wait.md`; the finding
//! comes from the memory-ordering analysis (`cute_check::memory`) and is
//! turned into a diagnostic by `crate::memory`.

use cute_check::memory::Repair;
use cute_check::model::{MemKind, Model};
use cute_ir::api::Api;
use cute_ir::ast::{Call, Expr, Stmt, StmtKind, UnOp};
use cute_syntax::TextRange;

use super::Rule;
use crate::context::KernelContext;
use crate::{Applicability, Edit, Fix, Severity};

pub const RULE: Rule = Rule {
    code: "CUTE006",
    name: "read-before-wait",
    default_severity: Severity::Error,
    summary: "shared memory filled by an async copy is read before a completed wait on the copy's barrier",
    doc: include_str!("read_before_wait.md"),
};

/// The quick fix of a read before the wait ([`Repair::InsertWaitBefore`]),
/// in the kernel's own spelling of its waits:
///
/// * the reading thread waits on the copy's barrier, for the phase the copy
///   completes, later in the same block as the read (`pipe.consumer_wait(state)`
///   or `mbarrier_wait(full, phase)` after a hoisted read): that wait moves up
///   to before the statement that reads. Nothing between the two that
///   synchronizes, binds a name the wait reads or leaves the block (a
///   `break`, a `return`) is crossed, so the thread's synchronization stays
///   what it was, only earlier: `Safe`.
/// * else it waits on another barrier before the read, with a literal phase,
///   outside any loop, and the copy (outside any loop too) names its barrier
///   by a variable bound once in the kernel's body: a wait on that variable,
///   spelled like that wait, follows it (the copy's barrier is then waited
///   for the one phase it completes). A new wait changes what the kernel
///   synchronizes on: `Unsafe`.
///
/// Anything else gets no fix.
pub fn fix(ctx: &KernelContext<'_>, model: &Model, repair: &Repair) -> Option<Fix> {
    let Repair::InsertWaitBefore { site, stmt, copy, phase, later, earlier } = repair else { return None };
    let kernel = ctx.kernel.range;
    let read = if kernel.start <= site.start && site.end <= kernel.end { *ctx.ancestors(*site)?.1.last()? } else { ctx.kernel_statement(*stmt)? };
    if let Some(fix) = later.and_then(|w| move_wait_up(ctx, model, read, w)) {
        return Some(fix);
    }
    let (wait, parity) = (*earlier)?;
    wait_after(ctx, read, *copy, *phase, wait, parity)
}

/// The statement that is exactly the wait at `site`, with the blocks holding
/// it (outermost first): the call on one line of the kernel
/// (`pipe.consumer_wait(state)`), or a spin on a try-wait that does nothing
/// else (`while not mbarrier_try_wait_parity(bar, 0): pass`).
fn call_statement<'c>(ctx: &'c KernelContext<'_>, site: TextRange) -> Option<(&'c Stmt, Vec<&'c Stmt>, &'c Call)> {
    let kernel = ctx.kernel.range;
    if !(kernel.start <= site.start && site.end <= kernel.end) || ctx.module.linked_file(site).is_some() {
        return None;
    }
    let (_, mut chain) = ctx.ancestors(site)?;
    let stmt = chain.pop()?;
    let call = match &stmt.kind {
        StmtKind::Expr(Expr::Call(call)) if !ctx.slice(stmt.range).contains('\n') => call,
        StmtKind::While { cond: Expr::Unary { op: UnOp::Not, operand }, body } if body.iter().all(|s| matches!(s.kind, StmtKind::Pass)) => {
            let Expr::Call(call) = &**operand else { return None };
            call
        }
        _ => return None,
    };
    (call.range == site).then_some((stmt, chain, call))
}

/// Whether `chain` (blocks, outermost first) is where `prefix` is.
fn starts_with(chain: &[&Stmt], prefix: &[&Stmt]) -> bool {
    chain.len() >= prefix.len() && chain.iter().zip(prefix).all(|(a, b)| a.range == b.range)
}

/// Moves the wait at `wait` up to before `read`'s statement in their block.
fn move_wait_up(ctx: &KernelContext<'_>, model: &Model, read: &Stmt, wait: TextRange) -> Option<Fix> {
    let (stmt, parents, call) = call_statement(ctx, wait)?;
    let (_, read_chain) = ctx.ancestors(read.range)?;
    if !starts_with(&read_chain, &parents) {
        return None;
    }
    let first = *read_chain.get(parents.len())?;
    if first.range.end > stmt.range.start {
        return None;
    }
    let crossed = TextRange { start: first.range.start, end: stmt.range.start };
    let between: Vec<Stmt> =
        ctx.block_holding(parents.last().copied(), stmt.range).iter().filter(|s| crossed.start <= s.range.start && s.range.end <= crossed.end).cloned().collect();
    if cute_ir::ast::leaves_block(&between) {
        return None;
    }
    // What the wait reads must be bound before the read already.
    let mut reads = Vec::new();
    call.func.collect_uses(&mut reads);
    call.args.iter().for_each(|a| a.collect_uses(&mut reads));
    call.kwargs.iter().for_each(|(_, a)| a.collect_uses(&mut reads));
    let mut bound = Vec::new();
    cute_ir::ast::for_each_binding(&between, &mut |t, _| t.collect_defs(&mut bound));
    if reads.iter().any(|r| bound.contains(r)) {
        return None;
    }
    // Nothing it crosses synchronizes or issues a copy, here or in a
    // helper it calls.
    let inside = |r: TextRange| crossed.start <= r.start && r.end <= crossed.end;
    let syncs = model.groups.iter().flat_map(|g| &g.ops).any(|o| inside(o.site))
        || model.memory.iter().flat_map(|t| &t.ops).any(|m| inside(m.site) && !matches!(m.kind, MemKind::Access { .. }));
    let helpers = cute_ir::ast::any_call(&between, |c| {
        c.func.dotted_last().is_some_and(|name| ctx.module.functions.iter().any(|f| f.name == name && f.range != ctx.kernel.range))
    });
    if syncs || helpers {
        return None;
    }
    // The wait's lines, taken out, and written again before the read's
    // statement at its indentation.
    let lines = ctx.statement_lines(stmt.range);
    let (from, to) = (ctx.indentation_at(stmt.range.start), ctx.indentation_at(first.range.start));
    let text: String = ctx.slice(lines).lines().map(|l| format!("{to}{}\n", l.strip_prefix(from.as_str()).unwrap_or(l.trim_start()))).collect();
    let at = ctx.full_line(first.range.start).start;
    Some(Fix {
        title: format!("Move `{}` before the read", ctx.slice(call.range)),
        edits: vec![Edit { range: TextRange { start: at, end: at }, new_text: text }, Edit { range: lines, new_text: String::new() }],
        applicability: Applicability::Safe,
    })
}

/// Inserts, after the reading thread's wait at `wait` (for `parity`), the
/// same wait on the copy's barrier.
fn wait_after(ctx: &KernelContext<'_>, read: &Stmt, copy: TextRange, phase: u32, wait: TextRange, parity: u8) -> Option<Fix> {
    let (stmt, parents, call) = call_statement(ctx, wait)?;
    if call.api != Some(Api::MbarrierWait) || phase != 0 || parity != 0 {
        return None;
    }
    let loops = |chain: &[&Stmt]| chain.iter().any(|s| matches!(s.kind, StmtKind::For { .. } | StmtKind::While { .. }));
    let (_, read_chain) = ctx.ancestors(read.range)?;
    if loops(&parents) || !starts_with(&read_chain, &parents) || stmt.range.end > read.range.start {
        return None;
    }
    // The wait's phase is the literal 0.
    let phase_arg = ctx.argument_range(wait, &["phase"], 1)?;
    if ctx.slice(phase_arg) != "0" {
        return None;
    }
    // The copy, once, names its barrier by a variable the kernel's body binds once, before the wait.
    let copy_call = ctx.call_at(copy)?;
    let (_, copy_chain) = ctx.ancestors(copy)?;
    if loops(&copy_chain) {
        return None;
    }
    let Some((_, Expr::Name(barrier))) = copy_call.kwargs.iter().find(|(k, _)| k == "tma_bar_ptr" || k == "mbar_ptr") else { return None };
    let mut bindings = 0;
    cute_ir::ast::for_each_binding(&ctx.kernel.body, &mut |t, _| bindings += t.bound_names().iter().filter(|n| *n == barrier).count());
    let at_top = ctx.kernel.body.iter().any(|s| {
        s.range.end <= stmt.range.start
            && matches!(&s.kind, StmtKind::Assign { targets, .. } if targets.iter().any(|t| t.bound_names().contains(barrier)))
    });
    let param = ctx.kernel.params.iter().any(|p| &p.name == barrier);
    if !((bindings == 1 && at_top) || (bindings == 0 && param)) {
        return None;
    }
    let bar_arg = ctx.argument_range(wait, &["mbar_ptr"], 0)?;
    let text = format!(
        "{}{barrier}{}",
        &ctx.text[call.range.start as usize..bar_arg.start as usize],
        &ctx.text[bar_arg.end as usize..call.range.end as usize]
    );
    let at = ctx.next_line_start(stmt.range.end);
    Some(Fix {
        title: format!("Wait on `{barrier}` before the read"),
        edits: vec![Edit { range: TextRange { start: at, end: at }, new_text: format!("{}{text}\n", ctx.indentation_at(stmt.range.start)) }],
        applicability: Applicability::Unsafe,
    })
}
