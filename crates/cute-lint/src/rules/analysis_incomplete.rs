//! CUTE090 analysis-incomplete: a budget was hit or a construct is not modelled.
//! See `analysis_incomplete.md` for the user documentation.

use super::Rule;
use crate::Severity;

pub const RULE: Rule = Rule {
    code: "CUTE090",
    name: "analysis-incomplete",
    default_severity: Severity::Info,
    summary: "the checker stopped at a budget or met a construct it does not model",
    doc: include_str!("analysis_incomplete.md"),
};

use cute_check::model::Model;
use cute_syntax::TextRange;

use crate::context::KernelContext;

/// The label of the note of a kernel not checked for a construct the model
/// does not represent.
const NOT_RESOLVED: &str = "not resolved";

/// What the server answers for a document whose check outlived the
/// request's deadline (`request-deadline-ms`): not checked yet, said at the
/// top of the file.
pub fn request_deadline(deadline: std::time::Duration) -> crate::Diagnostic {
    info(
        TextRange::default(),
        format!(
            "cute-lsp did not finish checking this file within {} ms (`request-deadline-ms`): its findings are not shown; the check goes on, and the next request gets them once it is done",
            deadline.as_millis()
        ),
        "not checked in time",
        Vec::new(),
    )
}

fn info(range: TextRange, message: String, label: &str, notes: Vec<String>) -> crate::Diagnostic {
    crate::Diagnostic {
        code: RULE.code,
        name: RULE.name,
        severity: RULE.default_severity,
        message,
        range,
        label: label.to_string(),
        related: Vec::new(),
        notes,
        help: None,
        fixes: Vec::new(),
    }
}

/// Whether an inter-CTA wait terminates could not be decided (the grid, or
/// the CTA it waits for, is not known statically): `forward-progress`.
pub fn progress_not_decided(range: TextRange, message: String, notes: Vec<String>) -> crate::Diagnostic {
    info(range, message, "progress not decided", notes)
}

pub fn file_not_parsed(why: &str) -> crate::Diagnostic {
    info(TextRange::default(), format!("this file could not be analysed: {why}"), "not analysed", Vec::new())
}

/// The note at a file's first syntax error. `left_out`: whether the
/// sections holding errors were left out (`cute_syntax::recover`), and
/// `kernels` the kernels they define.
pub fn syntax_error(at: TextRange, left_out: bool, kernels: &[String]) -> crate::Diagnostic {
    let names = kernels.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
    let message = match (left_out, kernels.len()) {
        (false, _) => "syntax error: the kernels of this file are analysed as far as they parse".to_string(),
        (true, 0) => "syntax error: the kernels of this file are checked without the top-level statement it is in".to_string(),
        (true, 1) => format!("syntax error: {names} is not checked until it parses; the other kernels of this file are checked without it"),
        (true, _) => format!("syntax error: {names} are not checked until they parse; the other kernels of this file are checked without them"),
    };
    info(at, message, "the parser could not read this", Vec::new())
}

/// The syntax-error note of a lowered file, when it has an error and
/// kernels (checked or left out).
pub fn syntax_error_of(module: &cute_ir::Module, has_kernels: bool) -> Option<crate::Diagnostic> {
    let first = *module.syntax_errors.first()?;
    let kernels: Vec<String> = module.broken_kernels.iter().map(|(name, _)| name.clone()).collect();
    (has_kernels || !kernels.is_empty()).then(|| syntax_error(first, !module.left_out.is_empty(), &kernels))
}

/// A kernel of a file that reads something of its package that could not
/// be followed (`Module::link_problems`): what comes from it is unknown.
pub fn package_not_followed(ctx: &KernelContext<'_>) -> Option<crate::Diagnostic> {
    let problems = &ctx.module.link_problems;
    (!problems.is_empty()).then(|| {
        info(
            ctx.kernel.name_range,
            format!("`{}` was checked without part of its package: {}", ctx.kernel.display_name(), problems.join("; ")),
            "checked without part of its package",
            vec!["what the file takes from there is not known, and synchronization in it is not seen".to_string()],
        )
    })
}

pub fn unresolved(ctx: &KernelContext<'_>, model: &Model) -> crate::Diagnostic {
    let first = &model.unresolved[0];
    // The other constructs not modelled are related information (below), at their
    // sites; the notes keep what has no site of its own.
    let mut notes: Vec<String> = Vec::new();
    for note in &model.assumptions {
        if !notes.contains(note) {
            notes.push(note.clone());
        }
    }
    let mut diagnostic = info(
        first.site,
        format!("`{}` was not checked: {}", ctx.kernel.display_name(), first.what),
        NOT_RESOLVED,
        notes,
    );
    if let Some((range, message)) = &first.origin {
        diagnostic.related.push(crate::Related { range: *range, message: message.clone(), file: None, event: None });
    }
    // A construct met in a helper: say which kernel reaches it.
    let kernel = ctx.kernel.range;
    if !(kernel.start <= first.site.start && first.site.end <= kernel.end) {
        diagnostic.related.push(crate::Related {
            range: ctx.kernel.name_range,
            message: format!("reached from the kernel `{}`", ctx.kernel.display_name()),
            file: None,
            event: None,
        });
    }
    diagnostic.related.extend(
        model.unresolved.iter().skip(1).map(|u| crate::Related { range: u.site, message: u.what.clone(), file: None, event: None }),
    );
    diagnostic
}

pub fn budget(ctx: &KernelContext<'_>, reason: &str, states: usize) -> crate::Diagnostic {
    info(
        ctx.kernel.name_range,
        format!("`{}` was checked only in part: {reason} ({states} states explored)", ctx.kernel.display_name()),
        "not fully checked",
        Vec::new(),
    )
}

/// The search for named-barrier generations that mix up (barrier
/// recycling) ran out of budget without an answer.
pub fn generations_not_settled(ctx: &KernelContext<'_>, states: usize) -> crate::Diagnostic {
    info(
        ctx.kernel.name_range,
        format!(
            "`{}` was checked only in part: whether a `barrier_arrive` can register with a named barrier's next generation early was not settled within {states} states",
            ctx.kernel.display_name()
        ),
        "not fully checked",
        Vec::new(),
    )
}

/// The combinations of runtime conditions were not all explored in time.
pub fn conditions_over_budget(ctx: &KernelContext<'_>, explored: usize, all: usize, budget: std::time::Duration) -> crate::Diagnostic {
    info(
        ctx.kernel.name_range,
        format!(
            "`{}` was checked only in part: {explored} of the {all} ways of deciding its conditions on runtime values were explored within {} s",
            ctx.kernel.display_name(),
            budget.as_secs_f64()
        ),
        "not fully checked",
        Vec::new(),
    )
}

/// The combinations of runtime conditions would not all be explored within
/// the statement budget: each runs the threads again, and the first run
/// showed that the others together would pass it.
pub fn conditions_too_costly(ctx: &KernelContext<'_>, lines: &[crate::context::SourceLine], ways: usize, budget: usize) -> crate::Diagnostic {
    let lines: Vec<String> = lines.iter().map(ToString::to_string).collect();
    let mut diagnostic = info(
        ctx.kernel.name_range,
        format!(
            "`{}` was not checked: its synchronization depends on conditions on runtime values (line{} {}), and running its threads for each of the {ways} ways of deciding them would execute more than the {budget} statements they may",
            ctx.kernel.display_name(),
            if lines.len() == 1 { "" } else { "s" },
            lines.join(", "),
        ),
        "not checked",
        Vec::new(),
    );
    diagnostic.help = Some(
        "each condition known at compile time (a `cutlass.Constexpr` parameter, a `cutlass.const_expr` test) halves the ways to run"
            .to_string(),
    );
    diagnostic
}

/// Conditions on runtime values that some way of running the threads
/// decided only as false: past the conditions one way decides, or past
/// the statement budget of the runs (see `analysis/ways.rs`).
pub fn conditions_one_way(ctx: &KernelContext<'_>, conditions: &[cute_check::OpenCondition]) -> crate::Diagnostic {
    // In the order of the text; a long list is cut short.
    const LISTED: usize = 4;
    let mut conditions: Vec<&cute_check::OpenCondition> = conditions.iter().collect();
    conditions.sort_by_key(|c| c.site.start);
    let mut lines: Vec<String> =
        conditions.iter().take(LISTED).map(|c| format!("{} (on {}{})", ctx.line(c.site.start), c.why, if c.negated_at_site { "; the test written there only as true" } else { "" })).collect();
    if conditions.len() > LISTED {
        lines.push(format!("and {} more", conditions.len() - LISTED));
    }
    let mut diagnostic = info(
        ctx.kernel.name_range,
        format!(
            "`{}` was checked only in part: the condition{} on runtime values at line{} {} {} explored only as false",
            ctx.kernel.display_name(),
            if conditions.len() == 1 { "" } else { "s" },
            if conditions.len() == 1 { "" } else { "s" },
            lines.join(", "),
            if conditions.len() == 1 { "was" } else { "were" },
        ),
        "not fully checked",
        vec![format!(
            "each way of running the threads decides at most {} conditions on runtime values, and all ways together execute at most the statement budget",
            cute_check::MAX_OPEN_CONDITIONS
        )],
    );
    diagnostic.help = Some(
        "each condition known at compile time (a `cutlass.Constexpr` parameter, a `cutlass.const_expr` test) halves the ways to run"
            .to_string(),
    );
    diagnostic
}

/// The synchronization was checked, the ordering of memory accesses not.
/// The model's assumptions (`notes`) go with it: which CTAs of the grid
/// were modelled, for one, often says why.
pub fn memory_not_checked(ctx: &KernelContext<'_>, reason: &str, notes: &[String]) -> crate::Diagnostic {
    info(
        ctx.kernel.name_range,
        format!("the memory accesses of `{}` were not checked for ordering: {reason}", ctx.kernel.display_name()),
        "memory ordering not checked",
        notes.to_vec(),
    )
}

pub fn bounded(ctx: &KernelContext<'_>, model: &Model) -> crate::Diagnostic {
    info(
        ctx.kernel.name_range,
        format!("`{}` was checked for a bounded number of loop iterations only", ctx.kernel.display_name()),
        "bounded verdict",
        model.assumptions.clone(),
    )
}

/// One diagnostic per kernel: the first reason leads, the others follow as
/// notes (deduplicated).
pub fn merge(mut reasons: Vec<crate::Diagnostic>) -> Option<crate::Diagnostic> {
    if reasons.is_empty() {
        return None;
    }
    // A way of deciding the runtime conditions that met a construct the
    // model does not represent leaves the kernel not checked, whatever the
    // others gave: that is the verdict, the rest are notes.
    if let Some(i) = reasons.iter().position(|r| r.label == NOT_RESOLVED) {
        let not_checked = reasons.remove(i);
        reasons.insert(0, not_checked);
    }
    let mut first = reasons.remove(0);
    for r in reasons {
        if r.message != first.message && !first.notes.contains(&r.message) {
            first.notes.push(r.message);
        }
        for n in r.notes {
            if !first.notes.contains(&n) {
                first.notes.push(n);
            }
        }
    }
    Some(first)
}

/// Some ways of deciding a condition on runtime data hang or break a
/// protocol and others do not: the verdict depends on the data.
pub fn depends_on_data(ctx: &KernelContext<'_>, site: TextRange, condition: &str) -> crate::Diagnostic {
    info(
        site,
        format!(
            "`{}` was checked only in part: whether its synchronization is correct depends on the condition at {condition}, which is not known statically",
            ctx.kernel.display_name()
        ),
        "decided at run time",
        vec!["make the condition static (a `cutlass.Constexpr`, a module constant, a warp-index test) to get a verdict".to_string()],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One way of deciding the runtime conditions checked within loop
    /// bounds and another not checked: the kernel is not checked.
    #[test]
    fn a_way_not_checked_is_the_verdict() {
        let bounded = info(TextRange::default(), "`k` was checked for a bounded number of loop iterations only".into(), "bounded verdict", Vec::new());
        let not_checked = info(TextRange::default(), "`k` was not checked: a reason".into(), NOT_RESOLVED, vec!["a note".into()]);
        let merged = merge(vec![bounded, not_checked]).unwrap();
        assert_eq!(merged.message, "`k` was not checked: a reason");
        assert_eq!(merged.notes, ["a note", "`k` was checked for a bounded number of loop iterations only"]);
    }
}
