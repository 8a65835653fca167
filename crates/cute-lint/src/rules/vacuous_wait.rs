//! CUTE002 vacuous-wait: a wait that its barrier's phases have overtaken.
//! See `vacuous_wait.md` for the user documentation.

use super::Rule;
use crate::Severity;

pub const RULE: Rule = Rule {
    code: "CUTE002",
    name: "vacuous-wait",
    default_severity: Severity::Error,
    summary: "a wait's parity names the wrong phase: arrivals run two phases ahead of it, or a first wait on a fresh barrier uses parity 1, or a pipeline wait is handed the try-wait token of another stage",
    doc: include_str!("vacuous_wait.md"),
};

use cute_check::explore::Counterexample;
use cute_check::model::{Model, OpKind};
use cute_check::semantics;

use cute_check::model::BarrierKind;
use cute_ir::ast::{Expr, Stmt, StmtKind, Target};
use cute_syntax::TextRange;

use crate::context::KernelContext;

/// A wait of the counterexample's final state whose barrier completed more
/// phases than the one the wait stands for: the arrivals lapped it, and a
/// parity names two phases at once. `None` when the hang has another cause.
///
/// The phase a wait stands for follows from the parities of its thread's
/// waits on that barrier: each wait wants the first completed count after the
/// previous wait's whose parity differs from its own (a consumer's `0, 1, 0`
/// wants completions 1, 2, 3; a producer's `1, 0, 1` on a free ring wants
/// 0, 1, 2).
pub fn diagnostic(
    ctx: &KernelContext<'_>,
    model: &Model,
    cex: &Counterexample,
    related: Vec<crate::Related>,
    notes: Vec<String>,
    severity: Severity,
) -> Option<crate::Diagnostic> {
    let completed = completions(model, cex)?;
    let mut lapped = Vec::new();
    for (g, slots) in cex.last.groups.iter().enumerate() {
        let group = &model.groups[g];
        for &(pos, _) in slots {
            let Some(op) = group.ops.get(pos as usize) else { continue };
            let OpKind::Wait { bar, .. } = op.kind else { continue };
            // The completion each wait of this thread on `bar` stands for,
            // counted from the barrier's last init in its program.
            let mut wanted: Option<u32> = None;
            for earlier in &group.ops[..=pos as usize] {
                match earlier.kind {
                    OpKind::Init { bar: b, .. } if b == bar => wanted = None,
                    OpKind::Wait { bar: b, parity } if b == bar => {
                        let from = wanted.map_or(0, |w| w + 1);
                        wanted = Some(if from % 2 != parity as u32 { from } else { from + 1 });
                    }
                    _ => {}
                }
            }
            let (Some(wanted), Some(&done)) = (wanted, completed.get(bar as usize)) else { continue };
            if done > wanted {
                lapped.push((op.site, bar, wanted, done, group.describe(model.ctas)));
            }
        }
    }
    lapped.sort();
    let (site, bar, wanted, done, who) = lapped.into_iter().next()?;
    let name = model.barriers[bar as usize].display(model.ctas);
    let kernel = ctx.kernel.display_name();
    // A first wait with parity 1 stands for the phase before the barrier's
    // first: right for a barrier its waiter finds free (a producer's
    // `empty`), wrong for one whose first phase brings data. Lapped there,
    // it is the initial parity that is off, not the arrivals that ran ahead.
    let initial = wanted == 0 && done > 0;
    let (message, label, help, fixes) = if initial {
        (
            format!(
                "`{kernel}`: {who} first waits on {name} with parity 1: a freshly initialised mbarrier is in phase 0, so parity 1 names the phase before it and passes at once, before any arrival; once phase 0 completes ({done} completed here) the parities are off by one and this wait blocks forever"
            ),
            "the first wait on a fresh barrier with parity 1 passes at once".to_string(),
            "start the phase at 0 for a barrier whose phases are completed by the data's arrival (`full`); parity 1 first is right only for a barrier the waiter finds free (a producer's `empty`)".to_string(),
            initial_phase_fix(ctx, site).or_else(|| literal_phase_fix(ctx, site)).into_iter().collect(),
        )
    } else {
        let message = format!(
            "`{kernel}`: {who} waits for completion {wanted} of {name}, but {done} phases have completed: the arrivals ran ahead by two phases, the wait's parity now names a later phase, and it blocks forever (or, a phase later, passes without its data)"
        );
        match super::untoggled_phase::flip_on_wrap(ctx, site) {
            Some((stage, fix)) => (
                message,
                "this wait's phase has been overtaken".to_string(),
                format!("the parity flips on every iteration, but each barrier of the ring completes a phase once per turn of `{stage}`: flip it when `{stage}` wraps to 0"),
                vec![fix],
            ),
            None => (
                message,
                "this wait's phase has been overtaken".to_string(),
                "throttle the arriving side: make it wait for the waiter to consume each phase (an `empty` barrier, or a pipeline), so it is never more than one phase ahead".to_string(),
                release_through_clone(ctx).or_else(|| throttle_with_empty_barrier(ctx, model, bar, site)).into_iter().collect(),
            ),
        }
    };
    Some(crate::Diagnostic {
        code: RULE.code,
        name: RULE.name,
        severity,
        message,
        range: site,
        label,
        related,
        notes,
        help: Some(help),
        fixes,
    })
}

/// Start the wait's phase variable at 0: its assignment from the literal 1
/// (`phase = 1`, `phase = cutlass.Int32(1)`) in the kernel's body before
/// the wait.
fn initial_phase_fix(ctx: &KernelContext<'_>, wait: TextRange) -> Option<crate::Fix> {
    let call = ctx.call_at(wait)?;
    let Some(Expr::Name(var)) = call.args.get(1).or_else(|| call.kwargs.iter().find(|(k, _)| k == "phase").map(|(_, v)| v)) else {
        return None;
    };
    let assignment = ctx
        .kernel
        .body
        .iter()
        .take_while(|s| s.range.end <= wait.start)
        .filter(|s| matches!(&s.kind, StmtKind::Assign { targets, .. } if matches!(targets.as_slice(), [Target::Name(n)] if n == var)))
        .last()?;
    let text = ctx.slice(assignment.range);
    let value = text.split_once('=')?.1.trim();
    if !matches!(value, "1" | "cutlass.Int32(1)" | "Int32(1)") {
        return None;
    }
    let one = assignment.range.start + text.rfind('1')? as u32;
    Some(crate::Fix {
        title: format!("start `{var}` at 0"),
        edits: vec![crate::Edit { range: TextRange { start: one, end: one + 1 }, new_text: "0".to_string() }],
        applicability: crate::Applicability::Unsafe,
    })
}

/// Wait for phase 0: the wait's phase written as the literal 1
/// (`mbarrier_wait(full, 1)`, `while not prims.mbarrier_try_wait_parity(mbar, 1):`),
/// in no loop (but the spin on it), so that it is the first wait and the
/// only one that statement makes.
fn literal_phase_fix(ctx: &KernelContext<'_>, wait: TextRange) -> Option<crate::Fix> {
    if ctx.module.linked_file(wait).is_some() {
        return None;
    }
    let (_, chain) = ctx.ancestors(wait)?;
    let [outer @ .., _] = chain.as_slice() else { return None };
    if outer.iter().any(|s| matches!(s.kind, StmtKind::For { .. } | StmtKind::While { .. })) {
        return None;
    }
    let phase = ctx.argument_range(wait, &["phase"], 1)?;
    if ctx.slice(phase) != "1" {
        return None;
    }
    Some(crate::Fix {
        title: "wait for phase 0, the first phase of a fresh barrier".to_string(),
        edits: vec![crate::Edit { range: phase, new_text: "0".to_string() }],
        applicability: crate::Applicability::Unsafe,
    })
}

/// Take the token after the state advances: the statement
/// `token = pipe.consumer_try_wait(state)` followed, in its block, by
/// `state.advance()` (on one line each) trade places, so that the token
/// tests the stage the next wait is for. Anything else between them, or
/// another spelling, gets no fix.
fn token_after_advance(ctx: &KernelContext<'_>, token_site: TextRange) -> Option<crate::Fix> {
    if ctx.module.linked_file(token_site).is_some() {
        return None;
    }
    let (_, chain) = ctx.ancestors(token_site)?;
    let [outer @ .., token] = chain.as_slice() else { return None };
    let StmtKind::Assign { targets, value: Expr::Call(call) } = &token.kind else { return None };
    if call.range != token_site || !matches!(targets.as_slice(), [Target::Name(_)]) || !call.func.dotted_last().is_some_and(|f| f == "consumer_try_wait") {
        return None;
    }
    let Some(Expr::Name(state)) = call.args.first().or_else(|| call.kwargs.iter().find(|(k, _)| k == "state").map(|(_, v)| v)) else { return None };
    let block: &[cute_ir::ast::Stmt] = match outer.last().map(|s| &s.kind) {
        None => &ctx.kernel.body,
        Some(StmtKind::If { then, orelse, .. }) => {
            if then.iter().any(|s| s.range == token.range) {
                then
            } else {
                orelse
            }
        }
        Some(StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. }) => body,
        Some(_) => return None,
    };
    let at = block.iter().position(|s| s.range == token.range)?;
    let advance = block.get(at + 1)?;
    let StmtKind::Expr(Expr::Call(adv)) = &advance.kind else { return None };
    let advances = matches!(&adv.func, Expr::Attr { base, attr } if attr == "advance" && matches!(base.as_ref(), Expr::Name(n) if n == state));
    let one_line = |r: TextRange| !ctx.slice(r).contains('\n');
    if !advances || !adv.args.is_empty() || !adv.kwargs.is_empty() || !one_line(token.range) || !one_line(advance.range) {
        return None;
    }
    // Only blank lines and comments between the two.
    let gap = ctx.slice(TextRange { start: ctx.next_line_start(token.range.end), end: ctx.full_line(advance.range.start).start });
    if gap.lines().any(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#')) {
        return None;
    }
    let advance_line = ctx.full_line(advance.range.start);
    let at = ctx.full_line(token.range.start).start;
    Some(crate::Fix {
        title: format!("take the token after `{state}.advance()`"),
        edits: vec![
            crate::Edit { range: TextRange { start: at, end: at }, new_text: ctx.slice(advance_line).to_string() },
            crate::Edit { range: advance_line, new_text: String::new() },
        ],
        applicability: crate::Applicability::Unsafe,
    })
}

/// Completed phases of every barrier along the counterexample, since its
/// last init. `None` if the moves do not replay (never for a real trace).
fn completions(model: &Model, cex: &Counterexample) -> Option<Vec<u32>> {
    let mut bars = semantics::initial_barriers(model);
    let mut completed = vec![0u32; bars.len()];
    for m in &cex.moves {
        let op = model.groups.get(m.group as usize)?.ops.get(m.pos as usize)?;
        if let OpKind::Init { bar, .. } = op.kind {
            completed[bar as usize] = 0;
        }
        if semantics::apply(&op.kind, op.site, &mut bars).ok()? {
            if let OpKind::Arrive { bar, .. } = op.kind {
                completed[bar as usize] += 1;
            }
        }
    }
    Some(completed)
}

/// Waits handed the try-wait token of another stage or phase
/// (`model::StaleToken`): the package skips the wait when the token is true,
/// and a token of a phase that has completed is true, so the wait can pass
/// before its own phase completes.
pub fn stale_tokens(ctx: &KernelContext<'_>, model: &Model) -> Vec<crate::Diagnostic> {
    model
        .stale_tokens
        .iter()
        .map(|t| crate::Diagnostic {
            code: RULE.code,
            name: RULE.name,
            severity: Severity::Error,
            message: format!(
                "`{}`: this wait is skipped when its token is true, but the token tested {} and the wait is for {}: once that phase has completed, the wait passes without its own phase completing and the stage is read before it is full",
                ctx.kernel.display_name(),
                t.tested,
                t.waited
            ),
            range: t.site,
            label: format!("waits for {}, with a token of {}", t.waited, t.tested),
            related: vec![
                crate::Related { range: t.token_site, message: format!("the token is taken here, on {}", t.tested), file: None, event: None },
                crate::Related { range: t.site, message: format!("the wait for {} is skipped when that token is true", t.waited), file: None, event: None },
            ],
            notes: Vec::new(),
            help: Some("take the token on the state the wait is for: call `consumer_try_wait(state)` after `state.advance()`, just before the wait".to_string()),
            fixes: token_after_advance(ctx, t.token_site).into_iter().collect(),
        })
        .collect()
}

/// A consumer that keeps a copy of its state (`current = state.clone()`),
/// advances the state, then releases through the advanced state
/// (`pipe.consumer_release(state)`) in the same block: it releases the next
/// stage, which it has not read, and the producer's phases run ahead. The
/// fix releases through the copy, the stage just read. Offered where the
/// kernel does this once, with neither name bound again in between.
fn release_through_clone(ctx: &KernelContext<'_>) -> Option<crate::Fix> {
    fn blocks<'s>(stmts: &'s [cute_ir::ast::Stmt], out: &mut Vec<&'s [cute_ir::ast::Stmt]>) {
        out.push(stmts);
        for s in stmts {
            match &s.kind {
                StmtKind::If { then, orelse, .. } => {
                    blocks(then, out);
                    blocks(orelse, out);
                }
                StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. } => blocks(body, out),
                _ => {}
            }
        }
    }
    // `name.method()` as a statement, or the value of an assignment.
    let method_on = |e: &Expr, method: &str| -> Option<String> {
        let Expr::Call(c) = e else { return None };
        let Expr::Attr { base, attr } = &c.func else { return None };
        let Expr::Name(n) = base.as_ref() else { return None };
        (attr == method && c.args.is_empty() && c.kwargs.is_empty()).then(|| n.clone())
    };
    let binds = |s: &cute_ir::ast::Stmt, name: &str| {
        let mut bound = false;
        cute_ir::ast::for_each_binding(std::slice::from_ref(s), &mut |t, _| bound |= t.bound_names().iter().any(|n| n == name));
        bound
    };
    let mut all = Vec::new();
    blocks(&ctx.kernel.body, &mut all);
    let mut found = Vec::new();
    for block in all {
        for (i, s) in block.iter().enumerate() {
            let StmtKind::Assign { targets, value } = &s.kind else { continue };
            let ([Target::Name(copy)], Some(state)) = (targets.as_slice(), method_on(value, "clone")) else { continue };
            let rest = &block[i + 1..];
            let Some(advance) = rest.iter().position(|s| matches!(&s.kind, StmtKind::Expr(e) if method_on(e, "advance").as_deref() == Some(&state))) else { continue };
            for s in &rest[advance + 1..] {
                if binds(s, copy) || binds(s, &state) || matches!(&s.kind, StmtKind::Expr(e) if method_on(e, "advance").as_deref() == Some(&state)) {
                    break;
                }
                let StmtKind::Expr(Expr::Call(call)) = &s.kind else { continue };
                let passed = call.args.first().or_else(|| call.kwargs.iter().find(|(k, _)| k == "state").map(|(_, e)| e));
                if call.name() == "consumer_release" && matches!(passed, Some(Expr::Name(n)) if *n == state) {
                    found.push((ctx.argument_range(call.range, &["state"], 0)?, copy.clone()));
                }
            }
        }
    }
    let [(range, copy)] = found.as_slice() else { return None };
    Some(crate::Fix {
        title: format!("Release through `{copy}`, the state of the stage read"),
        edits: vec![crate::Edit { range: *range, new_text: copy.clone() }],
        applicability: crate::Applicability::Unsafe,
    })
}

/// Hold the producer back with a second barrier, as a pipeline's `empty`
/// barriers do: the waiters arrive on it once they are done with the
/// round's data, and the arriving side waits on it before it writes the
/// next round. Offered for the raw-API shape of one producer loop and one
/// consumer loop over rounds `0, 1, ...` (`for k in range(n)`, any of the
/// DSL's ranges):
///
/// * the barrier is a variable bound once, to a field of a `@cute.struct`
///   (`full = storage.full.ptr` or `.data_ptr()`), initialised by one
///   `mbarrier_init(full, n)` on one line;
/// * the lapped wait sits directly in the consumer loop's body, and every
///   arrive on the barrier is one `mbarrier_arrive(full)` directly in the
///   producer loop's body;
/// * each waiting thread's share of arrivals is known: the lanes it stands
///   for, read from its arrival on the CTA barrier (every thread takes
///   `sync_threads()` after the init, once per lane it stands for).
///
/// The fix adds the field and its pointer, initialises the new barrier for
/// the waiting threads (per CTA), waits on it at the top of each producer
/// round with parity `(k + 1) % 2` (a free barrier passes round 0's wait,
/// parity 1; round `k` waits for the waiters' completion `k - 1`) and
/// arrives on it at the end of each consumer round. Unsafe: it changes what
/// the kernel synchronizes on.
fn throttle_with_empty_barrier(ctx: &KernelContext<'_>, model: &Model, bar: u32, wait: TextRange) -> Option<crate::Fix> {
    let kernel = ctx.kernel.range;
    let in_kernel = |r: TextRange| kernel.start <= r.start && r.end <= kernel.end && ctx.module.linked_file(r).is_none();
    if !in_kernel(wait) || model.barriers.get(bar as usize)?.kind != BarrierKind::Mbarrier {
        return None;
    }
    let ops = || model.groups.iter().flat_map(|g| g.ops.iter());
    // The barrier's init, and its name.
    let inits: Vec<TextRange> = ops().filter(|o| matches!(o.kind, OpKind::Init { bar: b, .. } if b == bar)).map(|o| o.site).collect();
    let init = *inits.first()?;
    if inits.iter().any(|s| *s != init) || !in_kernel(init) {
        return None;
    }
    let init_call = ctx.call_at(init)?;
    let Some(Expr::Name(full)) = init_call.args.first().or_else(|| init_call.kwargs.iter().find(|(k, _)| k == "mbar_ptr").map(|(_, v)| v)) else { return None };
    let (_, init_chain) = ctx.ancestors(init)?;
    let init_stmt = *init_chain.last()?;
    if ctx.slice(init_stmt.range).contains('\n') {
        return None;
    }
    let StorageField { binding, field, declaration, struct_text } = storage_field(ctx, full)?;
    let binding_text = ctx.slice(binding.range);
    let empty = if full.contains("full") { full.replacen("full", "empty", 1) } else { format!("{full}_empty") };
    let empty_field = if field.contains("full") { field.replacen("full", "empty", 1) } else { format!("{field}_empty") };
    let bound = |name: &str| {
        let mut bound = false;
        cute_ir::ast::for_each_binding(&ctx.kernel.body, &mut |t, _| bound |= t.bound_names().iter().any(|n| n == name));
        bound || ctx.kernel.params.iter().any(|p| p.name == name)
    };
    if bound(&empty) || struct_text.lines().any(|l| l.trim().strip_prefix(empty_field.as_str()).is_some_and(|r| r.trim_start().starts_with(':'))) {
        return None;
    }
    // The waiters' loop, and the producer's: each a `for k in <range>(n)`
    // whose body holds the wait / every arrive on the barrier directly.
    let arrives: Vec<TextRange> = ops().filter(|o| matches!(o.kind, OpKind::Arrive { bar: b, .. } if b == bar)).map(|o| o.site).collect();
    let arrive = *arrives.first()?;
    if arrives.iter().any(|s| *s != arrive) || !in_kernel(arrive) {
        return None;
    }
    let consumer = rounds_loop(ctx, wait)?;
    let producer = rounds_loop(ctx, arrive)?;
    let arrive_call = ctx.call_at(arrive)?;
    if std::ptr::eq(consumer.0, producer.0) || arrive_call.args.len() != 1 || !arrive_call.kwargs.is_empty() || !matches!(arrive_call.args.first(), Some(Expr::Name(n)) if n == full) {
        return None;
    }
    let count = waiting_lanes_per_cta(model, bar)?;
    let prefix = ctx.arch_prefix(wait);
    let prefix = if prefix.ends_with(".arch") { prefix } else { "cute.arch".to_string() };
    let line_after = |stmt: TextRange, text: String| ctx.insert_line_after(stmt, &text);
    let (decl_range, decl_line) = declaration;
    let indent: String = decl_line.chars().take_while(|c| c.is_whitespace()).collect();
    let declared_type = decl_line.trim().split_once(':')?.1.split('#').next()?.trim().to_string();
    let (producer_loop, k) = producer;
    let (consumer_loop, _) = consumer;
    let (first, last) = (producer_loop.first()?, consumer_loop.last()?);
    let edits = vec![
        crate::Edit { range: TextRange { start: decl_range.end, end: decl_range.end }, new_text: format!("{indent}{empty_field}: {declared_type}\n") },
        line_after(binding.range, format!("{empty} = {}", binding_text.split_once('=')?.1.trim().replacen(&format!(".{field}."), &format!(".{empty_field}."), 1))),
        line_after(init_stmt.range, format!("{}  # the threads that wait on `{full}`", init_call_with(ctx, init, &empty, count)?)),
        ctx.insert_line_before(first.range, &format!("{prefix}.mbarrier_wait({empty}, ({k} + 1) % 2)")),
        line_after(last.range, format!("{prefix}.mbarrier_arrive({empty})")),
    ];
    Some(crate::Fix {
        title: format!("Throttle the producer with an `{empty}` barrier the waiters arrive on once done with each round"),
        edits,
        applicability: crate::Applicability::Unsafe,
    })
}

/// A barrier pointer bound from a field of a `@cute.struct`.
struct StorageField<'c> {
    /// `full = storage.full.ptr` (or `.data_ptr()`): the one binding of the name, in the kernel's body.
    binding: &'c Stmt,
    /// The field's name.
    field: String,
    /// The field's declaration: its whole line, and that line's text.
    declaration: (TextRange, String),
    /// The text of the class declaring it.
    struct_text: &'c str,
}

/// The struct field the kernel binds the barrier pointer `name` to, once.
fn storage_field<'c>(ctx: &'c KernelContext<'_>, name: &str) -> Option<StorageField<'c>> {
    let mut bindings = Vec::new();
    cute_ir::ast::for_each_binding(&ctx.kernel.body, &mut |t, v| {
        if t.bound_names().iter().any(|n| n == name) {
            bindings.push(v.cloned());
        }
    });
    let [Some(value)] = bindings.as_slice() else { return None };
    let binding = ctx.kernel.body.iter().find(|s| matches!(&s.kind, StmtKind::Assign { targets, .. } if matches!(targets.as_slice(), [Target::Name(n)] if n == name)))?;
    let field = match value {
        Expr::Attr { base, attr } if attr == "ptr" => base.as_ref(),
        Expr::Call(c) if c.args.is_empty() => match &c.func {
            Expr::Attr { base, attr } if attr == "data_ptr" => base.as_ref(),
            _ => return None,
        },
        _ => return None,
    };
    let Expr::Attr { attr: field, .. } = field else { return None };
    // The struct that declares the field, on a line of its own.
    let (declaration, struct_text) = ctx.classes_named_by_kernel().find_map(|c| {
        let text = ctx.slice(c.range);
        let mut offset = c.range.start;
        for line in text.split_inclusive('\n') {
            if line.trim().strip_prefix(field.as_str()).is_some_and(|rest| rest.trim_start().starts_with(':')) && line.starts_with(' ') {
                return Some(((TextRange { start: offset, end: offset + line.len() as u32 }, line.to_string()), text));
            }
            offset += line.len() as u32;
        }
        None
    })?;
    Some(StorageField { binding, field: field.clone(), declaration, struct_text })
}

/// The arrivals per CTA that the threads waiting on `bar` would make on a
/// barrier of their own, each once per lane it stands for: read from their
/// arrival on the CTA barrier, which every thread takes once per lane.
/// None where the waiters take no CTA barrier, or the CTAs differ.
fn waiting_lanes_per_cta(model: &Model, bar: u32) -> Option<u32> {
    let mut per_cta = std::collections::BTreeMap::<u32, u32>::new();
    for g in model.groups.iter().filter(|g| g.ops.iter().any(|o| matches!(o.kind, OpKind::Wait { bar: b, .. } if b == bar))) {
        let lanes = g.ops.iter().find_map(|o| match o.kind {
            OpKind::Arrive { bar: b, count } if model.barriers.get(b as usize).is_some_and(|b| b.kind == BarrierKind::CtaBarrier) => Some(count),
            _ => None,
        })?;
        for &(cta, _) in &g.threads {
            *per_cta.entry(cta).or_default() += lanes;
        }
    }
    let count = *per_cta.values().next()?;
    per_cta.values().all(|c| *c == count).then_some(count)
}

/// The init call at `init` (`mbarrier_init(full, 32)`) written for barrier
/// `name` and `count` arrivals, in its own spelling.
fn init_call_with(ctx: &KernelContext<'_>, init: TextRange, name: &str, count: u32) -> Option<String> {
    let call = ctx.call_at(init)?;
    let (bar, cnt) = (ctx.argument_range(init, &["mbar_ptr"], 0)?, ctx.argument_range(init, &["cnt", "count"], 1)?);
    if bar.end > cnt.start {
        return None;
    }
    let text = |a: u32, b: u32| ctx.text.get(a as usize..b as usize);
    Some(format!("{}{name}{}{count}{}", text(call.range.start, bar.start)?, text(bar.end, cnt.start)?, text(cnt.end, call.range.end)?))
}

/// The body of the loop over rounds `k = 0, 1, ...` (`for k in range(n)`,
/// `cutlass.range(n)`, `range_constexpr(n)`) whose body holds the call at
/// `site` as a statement of its own, and the loop's variable. None if the
/// body can leave a round early (`break`, `continue`, `return`).
fn rounds_loop<'c>(ctx: &'c KernelContext<'_>, site: TextRange) -> Option<(&'c [Stmt], String)> {
    let (_, chain) = ctx.ancestors(site)?;
    let [.., outer, stmt] = chain.as_slice() else { return None };
    let StmtKind::For { target: Target::Name(k), iter: Expr::Call(range), body } = &outer.kind else { return None };
    let ranged = range.func.dotted_last().is_some_and(|f| matches!(f, "range" | "range_constexpr" | "range_dynamic"));
    // Rounds from 0 by 1: one positional bound (`unroll=` and the like change nothing).
    let from_zero = range.args.len() == 1 && !range.kwargs.iter().any(|(k, _)| matches!(k.as_str(), "start" | "stop" | "end" | "step"));
    if !ranged || !from_zero || !matches!(&stmt.kind, StmtKind::Expr(Expr::Call(c)) if c.range == site) {
        return None;
    }
    (!cute_ir::ast::leaves_block(body)).then(|| (body.as_slice(), k.clone()))
}
