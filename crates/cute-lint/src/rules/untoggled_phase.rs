//! CUTE001 untoggled-phase: a wait parity that is not flipped once per phase.
//! See `untoggled_phase.md` for the user documentation.
//!
//! The checker finds the hang; this rule explains it. When the exploration
//! deadlocks and some thread of the model waits on one barrier twice in a row
//! with the same parity (the flip between them is missing), that wait gets
//! this diagnostic, with the deadlock's trace, instead of the generic
//! `deadlock`. The parity argument is then read to say how the loop
//! mistreats it (a literal, a reset inside the loop, no flip, a flip on some
//! paths only, two flips) and to offer the matching quick fix.

use cute_ir::api::{self, Api};
use cute_ir::ast::{BinOp, Call, Expr, Stmt, StmtKind, Target, UnOp};
use cute_syntax::TextRange;

use super::Rule;
use crate::context::KernelContext;
use crate::{Edit, Fix, Severity};

pub const RULE: Rule = Rule {
    code: "CUTE001",
    name: "untoggled-phase",
    default_severity: Severity::Error,
    summary: "an mbarrier wait parity is not flipped exactly once per completed phase",
    doc: include_str!("untoggled_phase.md"),
};

/// How a loop mistreats the parity of a wait inside it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cause {
    /// `mbarrier_wait(bar, 0)`: the parity is a constant.
    Literal { arg: TextRange, loop_stmt: TextRange },
    /// `phase = 0` inside the loop undoes the flip of the previous iteration.
    Reset { var: String, reset: TextRange, initialised_before_loop: bool, loop_stmt: TextRange },
    /// The loop never flips the parity.
    NoFlip { var: String },
    /// The flip sits under a condition: some iterations keep the old parity.
    ConditionalFlip { var: String, branch: TextRange, flip: TextRange, only_statement: bool },
    /// Two flips per iteration cancel out.
    DoubleFlip { var: String },
    /// A pipeline state passed to `consumer_wait`/`producer_acquire` is
    /// never advanced in the loop: every iteration waits on the same stage
    /// with the same phase.
    NoAdvance { var: String, loop_stmt: TextRange, body_end: u32 },
}

/// For a pipeline wait (`consumer_wait(state)`, `producer_acquire(state)`,
/// or a participant's `consumer.wait()`, whose state is the participant's):
/// whether the loop around it never advances the state.
pub fn pipeline_cause_of(ctx: &KernelContext<'_>, call: &Call) -> Option<Cause> {
    let var = match (call.args.first(), &call.func) {
        (Some(Expr::Name(state)), _) => state,
        (None, Expr::Attr { base, attr }) if matches!(attr.as_str(), "wait" | "acquire") => match base.as_ref() {
            Expr::Name(participant) => participant,
            _ => return None,
        },
        _ => return None,
    };
    let (_, chain) = ctx.ancestors(call.range)?;
    let innermost = chain.iter().rev().find(|s| matches!(s.kind, StmtKind::For { .. } | StmtKind::While { .. }))?;
    let body = body(innermost);
    let mut advanced = false;
    cute_ir::ast::for_each_expr(body, &mut |e| {
        let mut calls = Vec::new();
        e.calls(&mut calls);
        advanced |= calls.iter().any(|c| {
            matches!(&c.func, Expr::Attr { base, attr } if attr == "advance" && matches!(base.as_ref(), Expr::Name(b) if b == var))
        });
    });
    if advanced {
        return None;
    }
    Some(Cause::NoAdvance { var: var.clone(), loop_stmt: innermost.range, body_end: body.last()?.range.end })
}

/// The parity argument of a wait, when the wait is in a loop and the loop
/// mistreats it.
pub fn cause_of(ctx: &KernelContext<'_>, wait: &Call) -> Option<Cause> {
    let arg = api::arg(wait, "phase")?;
    let (_, chain) = ctx.ancestors(wait.range)?;
    let loops: Vec<&Stmt> = chain.iter().copied().filter(|s| matches!(s.kind, StmtKind::For { .. } | StmtKind::While { .. })).collect();
    let innermost = *loops.last()?;
    if literal(arg).is_some() {
        return Some(Cause::Literal { arg: arg_range(ctx, wait, arg)?, loop_stmt: innermost.range });
    }
    let Expr::Name(var) = arg else { return None };
    // The loop that owns the parity: the innermost one whose body assigns it.
    let owner = loops.iter().rev().find(|l| assigns(body(l), var)).copied().unwrap_or(loops[0]);
    let mut flips_top = 0u32;
    let mut conditional: Option<(TextRange, TextRange, bool)> = None;
    for s in body(owner) {
        match classify(s, var) {
            Some(Assignment::Flip) => flips_top += 1,
            Some(Assignment::Reset) => {
                let initialised_before_loop = assigned_before(ctx, var, owner.range.start);
                return Some(Cause::Reset { var: var.clone(), reset: s.range, initialised_before_loop, loop_stmt: owner.range });
            }
            Some(Assignment::Other) => return None,
            None => {
                if let StmtKind::If { then, orelse, .. } = &s.kind {
                    let mut inner = Vec::new();
                    collect_assignments(then, var, &mut inner);
                    collect_assignments(orelse, var, &mut inner);
                    if inner.iter().any(|(a, _)| *a != Assignment::Flip) {
                        return None;
                    }
                    if let Some((_, flip)) = inner.first() {
                        let only = then.len() == 1 && orelse.is_empty();
                        conditional.get_or_insert((s.range, *flip, only));
                    }
                } else if assigns(std::slice::from_ref(s), var) {
                    // Assigned in a nested loop or a `with`: not read here.
                    return None;
                }
            }
        }
    }
    match (flips_top, conditional) {
        (1, None) => None,
        (0, None) => Some(Cause::NoFlip { var: var.clone() }),
        (0, Some((branch, flip, only_statement))) => Some(Cause::ConditionalFlip { var: var.clone(), branch, flip, only_statement }),
        (1, Some(_)) | (2.., _) => Some(Cause::DoubleFlip { var: var.clone() }),
    }
}

fn body(s: &Stmt) -> &[Stmt] {
    match &s.kind {
        StmtKind::For { body, .. } | StmtKind::While { body, .. } => body,
        _ => &[],
    }
}

fn literal(e: &Expr) -> Option<i64> {
    match e {
        Expr::Int(i) => Some(*i),
        Expr::Bool(b) => Some(*b as i64),
        Expr::Call(c) if Api::of_call(c) == Some(Api::IntCast) && c.args.len() == 1 => literal(&c.args[0]),
        _ => None,
    }
}

fn arg_range(ctx: &KernelContext<'_>, wait: &Call, arg: &Expr) -> Option<TextRange> {
    // The AST keeps ranges for calls only: find the argument's text inside
    // the call, from the end (the parity is the last argument).
    if let Expr::Call(c) = arg {
        return Some(c.range);
    }
    let call_text = ctx.slice(wait.range);
    let lit = literal(arg)?.to_string();
    let close = call_text.rfind(')')?;
    let at = call_text[..close].rfind(lit.as_str())?;
    let start = wait.range.start + at as u32;
    Some(TextRange { start, end: start + lit.len() as u32 })
}

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum Assignment {
    Flip,
    Reset,
    Other,
}

fn is_var(e: &Expr, var: &str) -> bool {
    matches!(e, Expr::Name(n) if n == var)
}

fn classify(s: &Stmt, var: &str) -> Option<Assignment> {
    match &s.kind {
        StmtKind::AugAssign { target: Target::Name(n), op, value } if n == var => Some(match (op, value) {
            (BinOp::BitXor, v) if literal(v) == Some(1) => Assignment::Flip,
            // `phase ^= k` with a computed k (advance by several stages):
            // not a one-step flip, and not ours to judge.
            _ => Assignment::Other,
        }),
        StmtKind::Assign { targets, value } if targets.iter().any(|t| matches!(t, Target::Name(n) if n == var)) => {
            Some(if literal(value).is_some() {
                Assignment::Reset
            } else if is_flip_of(value, var) {
                Assignment::Flip
            } else {
                Assignment::Other
            })
        }
        _ => None,
    }
}

/// Whether `s` flips `var` once (`var ^= 1`, `var = 1 - var`, ...).
fn is_flip(s: &Stmt, var: &str) -> bool {
    classify(s, var) == Some(Assignment::Flip)
}

fn is_flip_of(e: &Expr, var: &str) -> bool {
    match e {
        Expr::Binary { op: BinOp::BitXor, lhs, rhs } => {
            (is_var(lhs, var) && literal(rhs) == Some(1)) || (is_var(rhs, var) && literal(lhs) == Some(1))
        }
        Expr::Binary { op: BinOp::Sub, lhs, rhs } => literal(lhs) == Some(1) && is_var(rhs, var),
        Expr::Unary { op: UnOp::Not, operand } => is_var(operand, var),
        Expr::Call(c) if Api::of_call(c) == Some(Api::IntCast) && c.args.len() == 1 => is_flip_of(&c.args[0], var),
        _ => false,
    }
}

fn collect_assignments(stmts: &[Stmt], var: &str, out: &mut Vec<(Assignment, TextRange)>) {
    for s in stmts {
        if let Some(a) = classify(s, var) {
            out.push((a, s.range));
        }
        match &s.kind {
            StmtKind::If { then, orelse, .. } => {
                collect_assignments(then, var, out);
                collect_assignments(orelse, var, out);
            }
            StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. } => {
                collect_assignments(body, var, out)
            }
            _ => {}
        }
    }
}

fn assigns(stmts: &[Stmt], var: &str) -> bool {
    let mut out = Vec::new();
    collect_assignments(stmts, var, &mut out);
    !out.is_empty()
}

fn assigned_before(ctx: &KernelContext<'_>, var: &str, offset: u32) -> bool {
    let Some((f, _)) = ctx.ancestors(TextRange { start: offset, end: offset }) else { return false };
    let mut out = Vec::new();
    collect_assignments(&f.body, var, &mut out);
    out.iter().any(|(_, r)| r.end <= offset)
}

impl Cause {
    pub fn explanation(&self, ctx: &KernelContext<'_>) -> String {
        match self {
            Cause::Literal { arg, .. } => format!(
                "the wait passes the constant parity `{}` in every iteration, but the barrier's phase parity alternates",
                ctx.slice(*arg)
            ),
            Cause::Reset { var, reset, .. } => format!(
                "`{var}` is reset at line {} inside the loop, so the flip of the previous iteration is lost",
                ctx.line(reset.start)
            ),
            Cause::NoFlip { var } => format!("`{var}` is never flipped inside the loop"),
            Cause::ConditionalFlip { var, branch, .. } => format!(
                "`{var}` is flipped only when the condition at line {} holds, so some iterations wait on a stale parity",
                ctx.line(branch.start)
            ),
            Cause::DoubleFlip { var } => format!("`{var}` is flipped twice per iteration, which cancels out"),
            Cause::NoAdvance { var, loop_stmt, .. } => format!(
                "`{var}` is never advanced in the loop at line {}, so every iteration waits on the same stage with the same phase",
                ctx.line(loop_stmt.start)
            ),
        }
    }

    pub fn fixes(&self, ctx: &KernelContext<'_>, wait: &Call) -> Vec<Fix> {
        let Some((_, chain)) = ctx.ancestors(wait.range) else { return Vec::new() };
        let Some(wait_stmt) = chain.last() else { return Vec::new() };
        let after_wait = ctx.next_line_start(wait_stmt.range.end);
        let wait_indent = ctx.indentation_at(wait_stmt.range.start);
        match self {
            Cause::Literal { arg, loop_stmt } => {
                let var = fresh_name(ctx, "phase", wait.range);
                let loop_indent = ctx.indentation_at(loop_stmt.start);
                let loop_line = ctx.full_line(loop_stmt.start).start;
                vec![Fix {
                    title: format!("track the parity in `{var}` and flip it after the wait"),
                    edits: vec![
                        Edit { range: TextRange { start: loop_line, end: loop_line }, new_text: format!("{loop_indent}{var} = {}\n", ctx.slice(*arg)) },
                        Edit { range: *arg, new_text: var.clone() },
                        Edit { range: TextRange { start: after_wait, end: after_wait }, new_text: format!("{wait_indent}{var} ^= 1\n") },
                    ],
                    applicability: crate::Applicability::Unsafe,
                }]
            }
            Cause::Reset { var, reset, initialised_before_loop, loop_stmt } => {
                let reset_line = TextRange { start: ctx.full_line(reset.start).start, end: ctx.next_line_start(reset.end) };
                let mut edits = vec![Edit { range: reset_line, new_text: String::new() }];
                let title = if *initialised_before_loop {
                    format!("remove the reset of `{var}` inside the loop")
                } else {
                    let loop_line = ctx.full_line(loop_stmt.start).start;
                    let indent = ctx.indentation_at(loop_stmt.start);
                    edits.insert(0, Edit {
                        range: TextRange { start: loop_line, end: loop_line },
                        new_text: format!("{indent}{}\n", ctx.slice(*reset).trim()),
                    });
                    format!("initialise `{var}` once, before the loop")
                };
                vec![Fix { title, edits, applicability: crate::Applicability::Unsafe }]
            }
            Cause::NoFlip { var } => vec![Fix {
                title: format!("flip `{var}` after the wait"),
                edits: vec![Edit { range: TextRange { start: after_wait, end: after_wait }, new_text: format!("{wait_indent}{var} ^= 1\n") }],
                applicability: crate::Applicability::Unsafe,
            }],
            Cause::ConditionalFlip { var, branch, flip, only_statement: true } => {
                let indent = ctx.indentation_at(branch.start);
                let range = TextRange { start: ctx.full_line(branch.start).start, end: ctx.next_line_start(branch.end) };
                vec![Fix {
                    title: format!("flip `{var}` in every iteration"),
                    edits: vec![Edit { range, new_text: format!("{indent}{}\n", ctx.slice(*flip).trim()) }],
                    applicability: crate::Applicability::Unsafe,
                }]
            }
            Cause::NoAdvance { var, body_end, .. } => {
                let at = ctx.next_line_start(*body_end);
                let indent = ctx.indentation_at(*body_end);
                vec![Fix {
                    title: format!("advance `{var}` at the end of each iteration"),
                    edits: vec![Edit { range: TextRange { start: at, end: at }, new_text: format!("{indent}{var}.advance()\n") }],
                    applicability: crate::Applicability::Unsafe,
                }]
            }
            _ => Vec::new(),
        }
    }
}

/// A variable name not yet used in the function holding `at`.
fn fresh_name(ctx: &KernelContext<'_>, base: &str, at: TextRange) -> String {
    let mut names = Vec::new();
    if let Some((f, _)) = ctx.ancestors(at) {
        names.extend(f.params.iter().map(|p| p.name.clone()));
        collect_names(&f.body, &mut names);
    }
    let taken = |n: &str| names.iter().any(|m| m == n);
    if !taken(base) {
        return base.to_string();
    }
    (2..).map(|i| format!("{base}{i}")).find(|n| !taken(n)).unwrap()
}

/// A ring of barriers indexed by a stage that wraps, whose parity flips on
/// every iteration: `wait(full + stage, phase)` in a loop whose body, at its
/// top level, advances `stage = (stage + 1) % S` and then flips `phase ^= 1`.
/// Each barrier completes one phase per turn of the ring, so the parity must
/// flip when the stage wraps: the flip goes under `if stage == 0:`. The
/// stage, and the fix, when the loop is written so; any other spelling (an
/// advance after the flip, a wrap test of its own, several advances) gets
/// none.
pub(crate) fn flip_on_wrap(ctx: &KernelContext<'_>, wait: TextRange) -> Option<(String, crate::Fix)> {
    if ctx.module.linked_file(wait).is_some() {
        return None;
    }
    let call = ctx.call_at(wait)?;
    let Some(Expr::Name(phase)) = call.args.get(1).or_else(|| call.kwargs.iter().find(|(k, _)| k == "phase").map(|(_, v)| v)) else {
        return None;
    };
    let barrier = call.args.first().or_else(|| call.kwargs.iter().find(|(k, _)| k == "mbar_ptr").map(|(_, v)| v))?;
    let mut indices = Vec::new();
    barrier.collect_uses(&mut indices);
    let (_, chain) = ctx.ancestors(wait)?;
    let owner = chain.iter().rev().find(|s| matches!(s.kind, StmtKind::For { .. } | StmtKind::While { .. }))?;
    let (StmtKind::For { body, .. } | StmtKind::While { body, .. }) = &owner.kind else { return None };
    // The one flip of the parity at the loop's top level, and the advance of
    // a stage the barrier is indexed by, before it.
    let flips: Vec<&Stmt> = body.iter().filter(|s| is_flip(s, phase)).collect();
    let [flip] = flips.as_slice() else { return None };
    let advance = |s: &Stmt| -> Option<String> {
        let StmtKind::Assign { targets, value } = &s.kind else { return None };
        let [Target::Name(stage)] = targets.as_slice() else { return None };
        let Expr::Binary { op: BinOp::Mod, lhs, .. } = value else { return None };
        let Expr::Binary { op: BinOp::Add, lhs: base, rhs: one } = lhs.as_ref() else { return None };
        (matches!(base.as_ref(), Expr::Name(n) if n == stage) && matches!(one.as_ref(), Expr::Int(1)) && indices.contains(stage)).then(|| stage.clone())
    };
    let advances: Vec<(u32, String)> = body.iter().filter_map(|s| advance(s).map(|v| (s.range.start, v))).collect();
    let [(at, stage)] = advances.as_slice() else { return None };
    let mut bindings = 0;
    cute_ir::ast::for_each_binding(body, &mut |t, _| bindings += usize::from(matches!(t, Target::Name(n) if n == stage)));
    if *at > flip.range.start || bindings != 1 {
        return None;
    }
    let line_start = ctx.text[..flip.range.start as usize].rfind('\n').map_or(0, |i| i + 1);
    let indent = &ctx.text[line_start..flip.range.start as usize];
    if !indent.chars().all(|c| c == ' ') {
        return None;
    }
    let flip_text = ctx.slice(flip.range);
    Some((
        stage.clone(),
        crate::Fix {
            title: format!("flip `{phase}` only when `{stage}` wraps to 0"),
            edits: vec![crate::Edit { range: flip.range, new_text: format!("if {stage} == 0:\n{indent}    {flip_text}") }],
            applicability: crate::Applicability::Unsafe,
        },
    ))
}

pub fn diagnostic(
    ctx: &KernelContext<'_>,
    wait: &Call,
    cause: Option<&Cause>,
    related: Vec<crate::Related>,
    notes: Vec<String>,
    severity: Severity,
) -> crate::Diagnostic {
    // A flip on every iteration of a loop over a ring of barriers: once per
    // iteration is right for one barrier, not for each of the ring's.
    let on_wrap = if cause.is_none() { flip_on_wrap(ctx, wait.range) } else { None };
    crate::Diagnostic {
        code: RULE.code,
        name: RULE.name,
        severity,
        message: format!(
            "`{}` can hang at this wait: {}",
            ctx.kernel.display_name(),
            match (cause, &on_wrap) {
                (Some(c), _) => c.explanation(ctx),
                (None, Some((stage, _))) => format!("a thread reaches it twice in a row with the same parity: the parity flips on every iteration, but each barrier of the ring completes a phase once per turn of `{stage}`, so it must flip when `{stage}` wraps to 0"),
                (None, None) => "a thread reaches it twice in a row with the same parity, so the second wait stands for a phase that already completed or never will".to_string(),
            }
        ),
        range: wait.range,
        label: "the parity is not flipped once per completed phase".to_string(),
        related,
        notes,
        help: Some(match &on_wrap {
            Some((stage, _)) => format!("flip the parity after the advance only when the ring wraps: `if {stage} == 0:` around the flip"),
            None => "keep the parity in a variable set once before the loop, pass it to the wait, and flip it with `^= 1` after each wait".to_string(),
        }),
        fixes: match (cause, on_wrap) {
            (Some(c), _) => c.fixes(ctx, wait),
            (None, Some((_, fix))) => vec![fix],
            (None, None) => Vec::new(),
        },
    }
}

fn collect_names(stmts: &[Stmt], out: &mut Vec<String>) {
    for s in stmts {
        match &s.kind {
            StmtKind::Assign { targets, value } => {
                targets.iter().for_each(|t| t.collect_defs(out));
                value.collect_uses(out);
            }
            StmtKind::AugAssign { target, value, .. } => {
                target.collect_defs(out);
                value.collect_uses(out);
            }
            StmtKind::Expr(e) | StmtKind::Return(Some(e)) => e.collect_uses(out),
            StmtKind::If { cond, then, orelse } => {
                cond.collect_uses(out);
                collect_names(then, out);
                collect_names(orelse, out);
            }
            StmtKind::For { target, iter, body } => {
                target.collect_defs(out);
                iter.collect_uses(out);
                collect_names(body, out);
            }
            StmtKind::While { cond, body } => {
                cond.collect_uses(out);
                collect_names(body, out);
            }
            StmtKind::With { items, body } => {
                for (e, t) in items {
                    e.collect_uses(out);
                    if let Some(t) = t {
                        t.collect_defs(out);
                    }
                }
                collect_names(body, out);
            }
            _ => {}
        }
    }
}
