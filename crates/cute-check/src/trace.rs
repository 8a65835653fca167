//! Counterexamples as a short list of steps a person can follow: consecutive
//! moves of threads of one group at one operation are folded into one step
//! ("128 threads of CTA 0 arrive on `gate`"), each step names the barrier
//! state after it, and long prefixes are summarised.
//!
//! Each step carries, next to its sentence, the same facts as data (`Event`:
//! which group moved, the operation, the barrier and its count and phase
//! after it), so that a front end can draw the interleaving without reading
//! the sentences back.

use cute_syntax::TextRange;

use crate::explore::{initial_state, successor, Counterexample, State};
use crate::model::{describe_threads, Model, OpKind};
use crate::semantics::BarState;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub site: TextRange,
    pub message: String,
    pub event: Event,
}

/// What a step of a trace is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// The first steps, summarised: the threads ran without blocking.
    Prefix,
    /// Threads of one group took one operation.
    Step,
    /// Threads of one group wait at the end and never pass.
    Stuck,
    /// An operation the kernel must never make in that state (an arrival or
    /// wait before the initialisation, an initialisation in use, a named
    /// barrier registered for the wrong generation); the trace ends there.
    Hazard,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Prefix => "prefix",
            EventKind::Step => "step",
            EventKind::Stuck => "stuck",
            EventKind::Hazard => "hazard",
        }
    }
}

/// The operation of a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventOp {
    Init,
    Arrive,
    Wait,
}

impl EventOp {
    pub fn as_str(self) -> &'static str {
        match self {
            EventOp::Init => "init",
            EventOp::Arrive => "arrive",
            EventOp::Wait => "wait",
        }
    }

    fn of(kind: &OpKind) -> (EventOp, u32) {
        match *kind {
            OpKind::Init { bar, .. } => (EventOp::Init, bar),
            OpKind::Arrive { bar, .. } => (EventOp::Arrive, bar),
            OpKind::Wait { bar, .. } => (EventOp::Wait, bar),
        }
    }
}

/// A group of threads of the model, as a trace names it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Lane {
    /// Its index among the model's groups.
    pub group: u32,
    /// "warps 1..3 of CTA 0".
    pub threads: String,
    /// The CTA of its threads when they are all in one.
    pub cta: Option<u32>,
    /// How many threads it has (a warp's lane 0 standing for the warp).
    pub size: u32,
}

/// A barrier and its state at some point of a trace.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BarrierAt {
    /// Its index among the model's barriers.
    pub index: u32,
    /// As messages name it: "`gate` of CTA 0", "the CTA barrier".
    pub display: String,
    pub cta: u32,
    /// Arrivals per phase; 0 while not initialised.
    pub expected: u32,
    /// Arrivals still missing in the current phase.
    pub pending: u32,
    /// Parity of the current (incomplete) phase.
    pub parity: u8,
}

/// A step of a trace as data: the facts its message states.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Event {
    pub kind: EventKind,
    /// The steps it covers, numbered from 1 (`first == last` but for a
    /// prefix); stuck and hazard events come after the last step and carry
    /// its number + 1.
    pub first: u32,
    pub last: u32,
    /// The group that moved (or is stuck); none for a prefix.
    pub lane: Option<Lane>,
    /// How many of the group's threads took the step (or are stuck).
    pub threads: u32,
    pub op: Option<EventOp>,
    /// The barrier operated on, in its state after the step (at the end for
    /// a stuck wait).
    pub barrier: Option<BarrierAt>,
    /// Arrivals each thread makes (arrive), or the count initialised (init).
    pub count: Option<u32>,
    /// The parity a wait passes (the phase it waits for to complete).
    pub parity: Option<u8>,
    /// After a prefix: the state of each mbarrier it leaves.
    pub barriers: Vec<BarrierAt>,
}

impl Event {
    fn new(kind: EventKind, first: u32, last: u32) -> Event {
        Event { kind, first, last, lane: None, threads: 0, op: None, barrier: None, count: None, parity: None, barriers: Vec::new() }
    }

    /// A hazard at `op` of `group`, taken by `threads` of its threads, with
    /// the barriers in `bars`, after step `after`.
    pub fn hazard(model: &Model, group: u32, pos: u32, threads: u32, bars: &[BarState], after: u32) -> Event {
        let op = &model.groups[group as usize].ops[pos as usize];
        let (what, bar) = EventOp::of(&op.kind);
        Event {
            lane: Some(lane(model, group)),
            threads,
            op: Some(what),
            barrier: Some(barrier_at(model, bar, &bars[bar as usize])),
            ..Event::new(EventKind::Hazard, after + 1, after + 1)
        }
    }
}

/// The lane of group `g`.
pub fn lane(model: &Model, g: u32) -> Lane {
    let group = &model.groups[g as usize];
    let first = group.threads.first().map(|t| t.0);
    let cta = first.filter(|c| group.threads.iter().all(|t| t.0 == *c));
    Lane { group: g, threads: describe_threads(&group.threads, model.ctas), cta, size: group.size() }
}

/// Barrier `bar` in state `state`.
pub fn barrier_at(model: &Model, bar: u32, state: &BarState) -> BarrierAt {
    let b = &model.barriers[bar as usize];
    BarrierAt { index: bar, display: b.display(model.ctas), cta: b.cta, expected: state.expected, pending: state.pending, parity: state.parity }
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
                let event = Event::hazard(model, mv.group, mv.pos, 1, &state.bars, folded.len() as u32);
                hazard_step = Some(Step { site: op.site, message: format!("then: {who} {what}"), event });
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
        let bars = &folded[skip - 1].3.bars;
        let event = Event {
            barriers: (0..bars.len())
                .filter(|i| model.barriers[*i].preset_count.is_none())
                .map(|i| barrier_at(model, i as u32, &bars[i]))
                .collect(),
            ..Event::new(EventKind::Prefix, 1, skip as u32)
        };
        steps.push(Step {
            event,
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
        let (what_op, bar) = EventOp::of(&op.kind);
        let number = i as u32 + 1;
        let event = Event {
            lane: Some(lane(model, *g)),
            threads: *n,
            op: Some(what_op),
            barrier: Some(barrier_at(model, bar, &after.bars[bar as usize])),
            count: match op.kind {
                OpKind::Init { count, .. } | OpKind::Arrive { count, .. } => Some(count),
                OpKind::Wait { .. } => None,
            },
            parity: match op.kind {
                OpKind::Wait { parity, .. } => Some(parity),
                _ => None,
            },
            ..Event::new(EventKind::Step, number, number)
        };
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
        steps.push(Step { site: op.site, message: format!("step {}: {who} {what}", i + 1), event });
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
                let end = folded.len() as u32 + 1;
                let event = Event {
                    lane: Some(lane(model, g as u32)),
                    threads: n,
                    op: Some(EventOp::Wait),
                    barrier: Some(barrier_at(model, bar, b)),
                    parity: Some(parity),
                    ..Event::new(EventKind::Stuck, end, end)
                };
                steps.push(Step {
                    event,
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
