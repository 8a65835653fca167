//! The picture as SVG, from the layout: lanes, column headers, one
//! `<g class="step">` per step with its box, its arrow to or from the
//! barrier's lane and the barrier's state after it, and one
//! `<g class="stuck">` (or `hazard`) per wait left at the end. The structure
//! is in the markup (`data-lane`, `data-step`, `data-line`, `data-op`,
//! `data-barrier`, `data-parity`) so that a reader or a test finds it
//! without the geometry; each box has a `<title>` with the step's full
//! sentence. Its style is inside it, so the file stands alone.

use std::fmt::Write;

use cute_lint::{BarrierAt, EventKind, EventOp};

use super::layout::{BarrierState, Lane, LaneKind, Layout, Rect, GUTTER, TOP};
use super::markup::{clip, escape, plain};
use super::view::TraceView;

/// Characters of a line in a box.
const BOX_CHARS: usize = 27;

const STYLE: &str = "
.trace { font: 11px system-ui, -apple-system, 'Segoe UI', sans-serif; }
.trace text { fill: #1d2330; }
.lane-bg.threads { fill: #f3f6fc; }
.lane-bg.barrier { fill: #fdf8ec; }
.lane-bg.odd { fill-opacity: 0.55; }
.lane-label { font-weight: 600; }
.lane-kind { fill: #6b7280 !important; font-size: 10px; }
.column-label { fill: #6b7280 !important; }
.grid { stroke: #e2e6ee; }
.section { stroke: #9aa3b5; stroke-dasharray: 6 4; }
.step > rect { fill: #ffffff; stroke: #4a6fa5; stroke-width: 1.2; }
.step.op-wait > rect { stroke: #2f855a; }
.step.op-init > rect { stroke: #8a6d3b; }
.step.prefix > rect { fill: #eceff4; stroke: #9aa3b5; stroke-dasharray: 4 3; }
.arrow { stroke: #4a6fa5; stroke-width: 1.5; fill: none; }
.arrow.wait { stroke: #2f855a; stroke-dasharray: 4 2; }
.arrow.init { stroke: #8a6d3b; }
.barrier-state rect { fill: #fff8e1; stroke: #b7791f; }
.barrier-state.completed rect { fill: #e6f6ea; stroke: #2f855a; }
.stuck > rect, .hazard > rect { fill: #fde8e8; stroke: #c53030; stroke-width: 2; }
.barrier-end rect { fill: #fde8e8; stroke: #c53030; stroke-width: 1.5; }
.connector { stroke: #c53030; stroke-width: 1.2; stroke-dasharray: 3 3; fill: none; }
.strong { font-weight: 600; }
";

pub fn svg(view: &TraceView, layout: &Layout) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="trace" width="{w}" height="{h}" viewBox="0 0 {w} {h}" data-code="{code}" data-name="{name}" data-line="{line}" role="img">"#,
        w = layout.width,
        h = layout.height,
        code = escape(&view.code),
        name = escape(&view.name),
        line = view.line,
    );
    let _ = write!(out, "<title>{}</title>", escape(&format!("{} {}: {}", view.code, view.name, view.message)));
    let _ = write!(out, "<style>{STYLE}</style>");
    out.push_str(concat!(
        r#"<defs>"#,
        r##"<marker id="head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" fill="#4a6fa5"/></marker>"##,
        r##"<marker id="head-wait" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" fill="#2f855a"/></marker>"##,
        r##"<marker id="head-init" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" fill="#8a6d3b"/></marker>"##,
        r##"<marker id="head-stuck" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" fill="#c53030"/></marker>"##,
        r#"</defs>"#,
    ));
    lanes(&mut out, layout);
    columns(&mut out, layout);
    steps(&mut out, view, layout);
    end(&mut out, view, layout);
    out.push_str("</svg>");
    out
}

fn lanes(out: &mut String, layout: &Layout) {
    out.push_str(r#"<g class="lanes">"#);
    for (i, lane) in layout.lanes.iter().enumerate() {
        let kind = match lane.kind {
            LaneKind::Threads => "threads",
            LaneKind::Barrier => "barrier",
        };
        let cta = lane.cta.map(|c| format!(r#" data-cta="{c}""#)).unwrap_or_default();
        let _ = write!(out, r#"<g class="lane" data-lane="{}" data-kind="{kind}"{cta}>"#, escape(&lane.name));
        let _ = write!(
            out,
            r#"<rect class="lane-bg {kind}{odd}" x="0" y="{}" width="{}" height="{}"/>"#,
            lane.y,
            layout.width,
            lane.height,
            odd = if i % 2 == 1 { " odd" } else { "" },
        );
        let label = match lane.kind {
            LaneKind::Threads => lane.name.clone(),
            LaneKind::Barrier => plain(&lane.name),
        };
        let _ = write!(out, "<title>{}</title>", escape(&label));
        let mid = lane.y + lane.height / 2;
        let _ = write!(out, r#"<text class="lane-label" x="12" y="{}">{}</text>"#, mid - 2, escape(&clip(&label, 34)));
        let _ = write!(out, r#"<text class="lane-kind" x="12" y="{}">{}</text>"#, mid + 12, if lane.kind == LaneKind::Threads { "threads" } else { "barrier" });
        out.push_str("</g>");
    }
    let _ = write!(out, r#"<line class="section" x1="0" y1="{y}" x2="{}" y2="{y}"/>"#, layout.width, y = layout.barriers_top);
    out.push_str("</g>");
}

fn columns(out: &mut String, layout: &Layout) {
    out.push_str(r#"<g class="columns">"#);
    let bottom = layout.lanes.last().map_or(TOP, |l: &Lane| l.y + l.height);
    for (x, width, label) in &layout.columns {
        let _ = write!(out, r#"<line class="grid" x1="{x}" y1="{}" x2="{x}" y2="{bottom}"/>"#, TOP - 6);
        let _ = write!(out, r#"<text class="column-label" x="{}" y="{}" text-anchor="middle">{}</text>"#, x + width / 2, TOP - 14, escape(label));
    }
    let _ = write!(out, r#"<text class="column-label" x="12" y="{}">time →</text>"#, TOP - 14);
    let _ = write!(out, r#"<line class="grid" x1="{GUTTER}" y1="{}" x2="{GUTTER}" y2="{bottom}"/>"#, TOP - 6);
    out.push_str("</g>");
}

/// A box with up to three lines of text, the first one bold.
fn boxed(out: &mut String, rect: Rect, lines: &[String]) {
    let chars = BOX_CHARS * rect.w as usize / super::layout::BOX_W as usize;
    let _ = write!(out, r#"<rect x="{}" y="{}" width="{}" height="{}" rx="4"/>"#, rect.x, rect.y, rect.w, rect.h);
    let top = rect.y + rect.h / 2 + 4 - (lines.len() as u32 - 1) * 7;
    for (i, line) in lines.iter().enumerate() {
        let class = if i == 0 { r#" class="strong""# } else { "" };
        let _ = write!(out, r#"<text{class} x="{}" y="{}" text-anchor="middle">{}</text>"#, rect.center_x(), top + i as u32 * 14, escape(&clip(line, chars)));
    }
}

/// A barrier as a box names it: `gate`, `CTA barrier`.
fn short(b: &BarrierAt) -> String {
    if let (Some(a), Some(z)) = (b.display.find('`'), b.display.rfind('`')) {
        if z > a {
            return b.display[a + 1..z].to_string();
        }
    }
    let name = b.display.strip_prefix("the ").unwrap_or(&b.display);
    name.split(" of CTA ").next().unwrap_or(name).to_string()
}

fn state(out: &mut String, layout: &Layout, s: &BarrierState, class: &str, end: bool) {
    let b = &s.barrier;
    let completed = if s.completed.is_some() { " completed" } else { "" };
    let _ = write!(
        out,
        r#"<g class="{class}{completed}" data-lane="{}" data-arrived="{}" data-expected="{}" data-pending="{}" data-parity="{}">"#,
        escape(&layout.lanes[s.lane].name),
        b.expected - b.pending,
        b.expected,
        b.pending,
        b.parity
    );
    let lines = if b.expected == 0 {
        vec!["not initialised".to_string()]
    } else {
        let phase = match (end, s.completed) {
            (true, _) => format!("phase {} never completes", b.parity),
            (false, Some(done)) => format!("phase {done} done → {}", b.parity),
            (false, None) => format!("phase {}", b.parity),
        };
        vec![format!("{}/{} arrived", b.expected - b.pending, b.expected), phase]
    };
    let _ = write!(out, "<title>{}</title>", escape(&format!("{}: {}", plain(&b.display), lines.join(", "))));
    boxed(out, s.rect, &lines);
    out.push_str("</g>");
}

fn steps(out: &mut String, view: &TraceView, layout: &Layout) {
    out.push_str(r#"<g class="steps">"#);
    for mark in &layout.steps {
        let step = &view.steps[mark.step];
        let e = &step.event;
        let lane = mark.lane.map_or("*".to_string(), |l| layout.lanes[l].name.clone());
        let op = e.op.map(|o| format!(r#" data-op="{}""#, o.as_str())).unwrap_or_default();
        let barrier = e.barrier.as_ref().map(|b| format!(r#" data-barrier="{}""#, escape(&b.display))).unwrap_or_default();
        let class = match (e.kind, e.op) {
            (EventKind::Prefix, _) => "step prefix".to_string(),
            (_, Some(o)) => format!("step op-{}", o.as_str()),
            _ => "step".to_string(),
        };
        let _ = write!(
            out,
            r#"<g class="{class}" data-step="{}" data-last="{}" data-line="{}" data-lane="{}" data-threads="{}"{op}{barrier}>"#,
            e.first,
            e.last,
            step.line,
            escape(&lane),
            e.threads,
        );
        let _ = write!(out, "<title>{}</title>", escape(&format!("{}: {}", step.place(), step.message)));
        if let Some(a) = mark.arrow {
            let (class, marker) = match a.op {
                EventOp::Arrive => ("arrive", "head"),
                EventOp::Init => ("init", "head-init"),
                EventOp::Wait => ("wait", "head-wait"),
            };
            // Arrivals and inits point into the barrier's lane; a wait that
            // passes points back at the threads.
            let (y1, y2) = if a.op == EventOp::Wait { (a.to_y, a.from_y) } else { (a.from_y, a.to_y) };
            let _ = write!(out, r#"<line class="arrow {class}" x1="{x}" y1="{y1}" x2="{x}" y2="{y2}" marker-end="url(#{marker})"/>"#, x = a.x);
        }
        let lines = match e.kind {
            EventKind::Prefix => vec![
                if e.first == e.last { format!("step {}", e.first) } else { format!("steps {}-{}", e.first, e.last) },
                "every thread runs".to_string(),
                "without blocking".to_string(),
            ],
            _ => {
                let size = e.lane.as_ref().map_or(0, |l| l.size);
                let who = if e.threads < size { format!(" · {} of {size}", e.threads) } else { String::new() };
                let what = match (e.op, &e.barrier) {
                    (Some(EventOp::Arrive), Some(b)) => format!("arrive ×{} on {}", e.count.unwrap_or(1), short(b)),
                    (Some(EventOp::Init), Some(b)) => format!("init {} with {}", short(b), e.count.unwrap_or(0)),
                    (Some(EventOp::Wait), Some(b)) => format!("wait {} phase {} ✓", short(b), e.parity.unwrap_or(0)),
                    _ => String::new(),
                };
                vec![format!("{}{who}", step.place()), what]
            }
        };
        boxed(out, mark.rect, &lines);
        for s in &mark.states {
            state(out, layout, s, "barrier-state", false);
        }
        out.push_str("</g>");
    }
    out.push_str("</g>");
}

fn end(out: &mut String, view: &TraceView, layout: &Layout) {
    if layout.ends.is_empty() {
        return;
    }
    out.push_str(r#"<g class="end">"#);
    // Connectors under the boxes they join.
    for mark in &layout.ends {
        let Some(bl) = mark.barrier_lane else { continue };
        let Some(target) = layout.end_states.iter().find(|s| s.lane == bl) else { continue };
        let _ = write!(
            out,
            r#"<line class="connector" x1="{x}" y1="{}" x2="{x}" y2="{}" marker-end="url(#head-stuck)"/>"#,
            mark.rect.bottom(),
            target.rect.y,
            x = mark.connector_x
        );
    }
    for s in &layout.end_states {
        // A barrier a stuck wait waits on never completes that phase; one a
        // hazard touches is only shown as it is.
        let waited_on = layout.ends.iter().any(|m| m.barrier_lane == Some(s.lane) && view.steps[m.step].event.kind == EventKind::Stuck);
        state(out, layout, s, "barrier-end", waited_on);
    }
    for mark in &layout.ends {
        let step = &view.steps[mark.step];
        let e = &step.event;
        let class = if e.kind == EventKind::Stuck { "stuck" } else { "hazard" };
        let barrier = e.barrier.as_ref().map(|b| format!(r#" data-barrier="{}""#, escape(&b.display))).unwrap_or_default();
        let parity = e.parity.map(|p| format!(r#" data-parity="{p}""#)).unwrap_or_default();
        let op = e.op.map(|o| format!(r#" data-op="{}""#, o.as_str())).unwrap_or_default();
        let _ = write!(
            out,
            r#"<g class="{class}" data-line="{}" data-lane="{}" data-threads="{}"{op}{barrier}{parity}>"#,
            step.line,
            escape(&layout.lanes[mark.lane].name),
            e.threads
        );
        let _ = write!(out, "<title>{}</title>", escape(&format!("{}: {}", step.place(), step.message)));
        let size = e.lane.as_ref().map_or(0, |l| l.size);
        let who = if e.threads < size { format!(" · {} of {size}", e.threads) } else { String::new() };
        let lines = match (e.kind, &e.barrier) {
            (EventKind::Stuck, Some(b)) => vec![format!("stuck at {}{who}", step.place()), format!("waits for phase {} of {}", e.parity.unwrap_or(0), short(b))],
            (_, Some(b)) => vec![format!("{}{who}: hazard", step.place()), format!("{} on {}", e.op.map_or("", |o| o.as_str()), short(b))],
            _ => vec![step.place()],
        };
        boxed(out, mark.rect, &lines);
        out.push_str("</g>");
    }
    out.push_str("</g>");
}
