//! The renderer on a trace made by hand: its lanes, its steps, the marker
//! of the stuck wait, labels from the user's code escaped, and the page
//! standing alone.

use cute_lint::{BarrierAt, EventKind, EventOp, Lane, TraceEvent};

use super::view::{Step, TraceView};
use super::{output_kind, parse_location, render, Output};

/// A name as hostile as user code can make one.
const NAME: &str = "`bar<script>alert(\"x\")</script>&'`";

fn barrier(pending: u32, parity: u8) -> BarrierAt {
    BarrierAt { index: 0, display: NAME.to_string(), cta: 0, expected: 2, pending, parity }
}

fn lane(group: u32, threads: &str, size: u32) -> Lane {
    Lane { group, threads: threads.to_string(), cta: Some(0), size }
}

fn event(kind: EventKind, n: u32, lane: Option<Lane>, op: Option<EventOp>, barrier: Option<BarrierAt>) -> TraceEvent {
    TraceEvent { kind, first: n, last: n, lane, threads: 1, op, barrier, count: None, parity: None, barriers: Vec::new() }
}

fn view() -> TraceView {
    let prefix = TraceEvent { last: 2, barriers: vec![barrier(2, 0)], ..event(EventKind::Prefix, 1, None, None, None) };
    let arrive = TraceEvent { count: Some(1), ..event(EventKind::Step, 3, Some(lane(0, "warp 0", 1)), Some(EventOp::Arrive), Some(barrier(1, 0))) };
    let completes = TraceEvent { count: Some(1), ..event(EventKind::Step, 4, Some(lane(1, "warps 1..3", 3)), Some(EventOp::Arrive), Some(barrier(2, 1))) };
    let stuck = TraceEvent { parity: Some(1), ..event(EventKind::Stuck, 5, Some(lane(0, "warp 0", 1)), Some(EventOp::Wait), Some(barrier(2, 1))) };
    let step = |line: u32, message: &str, event: TraceEvent| Step { line, file: None, message: message.to_string(), event };
    TraceView {
        file: "k<1>.py".to_string(),
        line: 9,
        code: "CUTE050".to_string(),
        name: "deadlock".to_string(),
        severity: "error".to_string(),
        message: format!("`k` hangs on {NAME}"),
        steps: vec![
            step(3, "steps 1-2: the threads run", prefix),
            step(7, "step 3: warp 0 arrives", arrive),
            step(8, "step 4: one of warps 1..3 arrives <now>", completes),
            step(9, "stuck: warp 0 waits forever", stuck),
        ],
        others: vec![(4, "see <here>".to_string())],
        notes: vec!["a note & more".to_string()],
        help: Some("flip the parity".to_string()),
    }
}

/// The values of `attribute` on the elements that open with `open`.
fn attributes(markup: &str, open: &str, attribute: &str) -> Vec<String> {
    markup
        .match_indices(open)
        .map(|(at, _)| {
            let tag = &markup[at..at + markup[at..].find('>').unwrap()];
            let key = format!(" {attribute}=\"");
            let start = tag.find(&key).map(|i| i + key.len()).unwrap_or_else(|| panic!("no {attribute} in {tag}"));
            tag[start..start + tag[start..].find('"').unwrap()].to_string()
        })
        .collect()
}

#[test]
fn one_lane_per_group_and_per_barrier() {
    let svg = render(&view(), Output::Svg);
    let escaped = super::markup::escape(NAME);
    assert_eq!(attributes(&svg, r#"<g class="lane""#, "data-lane"), vec!["warp 0".to_string(), "warps 1..3".to_string(), escaped]);
    assert_eq!(attributes(&svg, r#"<g class="lane""#, "data-kind"), vec!["threads", "threads", "barrier"]);
}

#[test]
fn one_box_per_step_at_its_line() {
    let svg = render(&view(), Output::Svg);
    assert_eq!(attributes(&svg, r#"<g class="step "#, "data-step"), vec!["1", "3", "4"]);
    assert_eq!(attributes(&svg, r#"<g class="step "#, "data-line"), vec!["3", "7", "8"]);
    assert_eq!(attributes(&svg, r#"<g class="step "#, "data-lane"), vec!["*", "warp 0", "warps 1..3"]);
    assert_eq!(attributes(&svg, r#"<g class="step op-arrive""#, "data-op"), vec!["arrive", "arrive"]);
    // Each arrival points into the barrier's lane, with its state after.
    assert_eq!(svg.matches(r#"<line class="arrow arrive""#).count(), 2);
    assert_eq!(attributes(&svg, r#"<g class="barrier-state"#, "data-arrived"), vec!["0", "1", "0"]);
    // The second arrival completes phase 0: the state says so.
    assert!(svg.contains(r#"<g class="barrier-state completed""#));
    assert!(svg.contains("phase 0 done → 1"));
    assert!(svg.contains("line 8 · 1 of 3"));
}

#[test]
fn the_stuck_wait_is_marked_with_its_phase() {
    let svg = render(&view(), Output::Svg);
    assert_eq!(attributes(&svg, r#"<g class="stuck""#, "data-lane"), vec!["warp 0"]);
    assert_eq!(attributes(&svg, r#"<g class="stuck""#, "data-parity"), vec!["1"]);
    assert_eq!(attributes(&svg, r#"<g class="stuck""#, "data-line"), vec!["9"]);
    assert!(svg.contains(r#"<line class="connector""#));
    assert!(svg.contains("phase 1 never completes"));
}

#[test]
fn labels_from_the_code_are_escaped() {
    for output in [Output::Svg, Output::Html] {
        let markup = render(&view(), output);
        assert!(!markup.contains("<script"), "{markup}");
        assert!(!markup.contains("<now>") && !markup.contains("<here>") && !markup.contains("k<1>"));
        assert!(markup.contains("bar&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;"));
    }
}

#[test]
fn the_markup_is_balanced() {
    for output in [Output::Svg, Output::Html] {
        let markup = render(&view(), output);
        for tag in ["g", "text", "title", "svg", "marker"] {
            assert_eq!(markup.matches(&format!("<{tag} ")).count() + markup.matches(&format!("<{tag}>")).count(), markup.matches(&format!("</{tag}>")).count(), "<{tag}>");
        }
    }
}

#[test]
fn the_page_stands_alone() {
    let page = render(&view(), Output::Html);
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains("<svg "));
    // The only URL is the SVG namespace; markers are referenced in the page.
    assert_eq!(page.matches("http").count(), 1);
    assert!(!page.contains("src=") && !page.contains("<link") && !page.contains("<script"));
    assert!(page.contains("line 4: see &lt;here&gt;") && page.contains("note: a note &amp; more") && page.contains("help: flip the parity"));
    assert_eq!(page.matches("<li class=").count(), 4);
}

#[test]
fn locations_and_outputs() {
    assert_eq!(parse_location("a/b.py:12"), Ok(("a/b.py".into(), 12)));
    assert_eq!(parse_location("C:/x.py:3"), Ok(("C:/x.py".into(), 3)));
    assert!(parse_location("a.py").is_err());
    assert!(parse_location("a.py:0").is_err());
    assert!(parse_location(":4").is_err());
    assert_eq!(output_kind(None), Ok(Output::Html));
    assert_eq!(output_kind(Some("t.SVG".as_ref())), Ok(Output::Svg));
    assert_eq!(output_kind(Some("t.html".as_ref())), Ok(Output::Html));
    assert!(output_kind(Some("t.png".as_ref())).is_err());
}

#[test]
fn a_step_in_another_file_names_it() {
    let mut v = view();
    v.steps[1].file = Some("sync.py".to_string());
    let svg = render(&v, Output::Svg);
    assert!(svg.contains("line 7 of sync.py"), "{svg}");
    assert_eq!(v.steps[0].place(), "line 3");
}
