//! Counterexamples as a short list of steps a person can follow: consecutive
//! moves of threads of one group at one operation are folded into one step
//! ("128 threads of CTA 0 arrive on `gate`"), each step names the barrier
//! state after it, and long prefixes are summarised.

use cute_syntax::TextRange;

use crate::explore::{initial_state, successor, Counterexample, State};
use crate::model::{describe_threads, Model, OpKind};
use crate::semantics::BarState;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub site: TextRange,
    pub message: String,
}

/// Steps of the trace, at most `max_steps` (the earliest ones summarised).
pub fn render(model: &Model, cex: &Counterexample, max_steps: usize) -> Vec<Step> {
    let mut folded: Vec<(u32, u32, u32, State)> = Vec::new(); // group, pos, threads, state after
    let mut state = initial_state(model);
    let mut hazard_step: Option<Step> = None;
    for mv in &cex.moves {
        state = match successor(model, &state, *mv) {
            Ok(s) => s,
            Err(hazard) => {
                let op = &model.groups[mv.group as usize].ops[mv.pos as usize];
                let who = who(model, mv.group, 1);
                let bar = match op.kind {
                    OpKind::Init { bar, .. } | OpKind::Arrive { bar, .. } | OpKind::Wait { bar, .. } => bar,
                };
                let name = model.barriers[bar as usize].display(model.ctas);
                let what = match hazard {
                    crate::semantics::Hazard::ArriveBeforeInit { .. } => format!("arrives on {name}, which is not initialised yet"),
                    crate::semantics::Hazard::WaitBeforeInit { .. } => format!("waits on {name}, which is not initialised yet"),
                    crate::semantics::Hazard::InitWhileInUse { .. } => {
                        format!("initialises {name} again while {}", bar_state(&state.bars[bar as usize]))
                    }
                };
                hazard_step = Some(Step { site: op.site, message: format!("then: {who} {what}") });
                break;
            }
        };
        match folded.last_mut() {
            Some(last) if last.0 == mv.group && last.1 == mv.pos => {
                last.2 += 1;
                last.3 = state.clone();
            }
            _ => folded.push((mv.group, mv.pos, 1, state.clone())),
        }
    }
    let mut steps = Vec::new();
    let skip = folded.len().saturating_sub(max_steps.saturating_sub(1));
    if skip > 0 {
        let first_site = model.groups[folded[0].0 as usize].ops[folded[0].1 as usize].site;
        steps.push(Step {
            site: first_site,
            message: format!(
                "steps 1-{skip}: the threads run {} operations without blocking ({})",
                folded[..skip].iter().map(|f| f.2 as usize).sum::<usize>(),
                bar_summary(model, &folded[skip - 1].3.bars)
            ),
        });
    }
    for (i, (g, pos, n, after)) in folded.iter().enumerate().skip(skip) {
        let group = &model.groups[*g as usize];
        let op = &group.ops[*pos as usize];
        let who = who(model, *g, *n);
        let what = match op.kind {
            OpKind::Init { bar, count } => {
                format!("initialises {} with {count} arrivals", model.barriers[bar as usize].display(model.ctas))
            }
            OpKind::Arrive { bar, count } => {
                let b = &model.barriers[bar as usize];
                let times = if count > 1 { format!(" ({count} arrivals each)") } else { String::new() };
                format!("{} on {}{times}; {}", verb(*n, "arrives", "arrive"), b.display(model.ctas), bar_state(&after.bars[bar as usize]))
            }
            OpKind::Wait { bar, parity } => format!(
                "{} on {} with parity {parity} and {}; {}",
                verb(*n, "waits", "wait"),
                model.barriers[bar as usize].display(model.ctas),
                verb(*n, "passes", "pass"),
                bar_state(&after.bars[bar as usize])
            ),
        };
        steps.push(Step { site: op.site, message: format!("step {}: {who} {what}", i + 1) });
    }
    if let Some(step) = hazard_step {
        steps.push(step);
        return steps;
    }
    // The stuck threads.
    for (g, slots) in cex.last.groups.iter().enumerate() {
        let group = &model.groups[g];
        for &(pos, n) in slots {
            let Some(op) = group.ops.get(pos as usize) else { continue };
            if let OpKind::Wait { bar, parity } = op.kind {
                let b = &cex.last.bars[bar as usize];
                steps.push(Step {
                    site: op.site,
                    message: format!(
                        "stuck: {} {} on {} with parity {parity} forever: its phase {parity} {}",
                        who(model, g as u32, n),
                        verb(n, "waits", "wait"),
                        model.barriers[bar as usize].display(model.ctas),
                        if b.parity == parity {
                            format!("is still open with {} of {} arrivals missing, and no thread that could arrive can move", b.pending, b.expected)
                        } else {
                            "never completes".to_string()
                        }
                    ),
                });
            }
        }
    }
    steps
}

fn verb(n: u32, one: &str, many: &str) -> String {
    if n == 1 { one.to_string() } else { many.to_string() }
}

fn who(model: &Model, g: u32, n: u32) -> String {
    let group = &model.groups[g as usize];
    if n == group.size() {
        describe_threads(&group.threads, model.ctas)
    } else if n == 1 {
        format!("one of {}", describe_threads(&group.threads, model.ctas))
    } else {
        format!("{n} of {}", describe_threads(&group.threads, model.ctas))
    }
}

fn bar_state(b: &BarState) -> String {
    if !b.initialised() {
        return "not initialised".to_string();
    }
    format!("now {}/{} arrivals in phase parity {}", b.expected - b.pending, b.expected, b.parity)
}

fn bar_summary(model: &Model, bars: &[BarState]) -> String {
    let parts: Vec<String> = bars
        .iter()
        .enumerate()
        .filter(|(i, _)| model.barriers[*i].preset_count.is_none())
        .map(|(i, b)| format!("{}: {}", model.barriers[i].display(model.ctas), bar_state(b)))
        .collect();
    if parts.is_empty() {
        "no mbarrier involved".to_string()
    } else {
        parts.join("; ")
    }
}
