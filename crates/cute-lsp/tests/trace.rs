//! `cute-lsp trace` as a user meets it: the interleaving of the untoggled
//! phase bug twin drawn with a lane per group and per barrier, a box per
//! step and the stuck waits marked, as a page or as SVG; the rustc-style
//! report pointing at it; and a clear error, exit status 2, for a line with
//! no finding, a finding with no trace, a malformed location or output.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn cute_lsp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cute-lsp")).args(args).current_dir(root()).output().expect("cute-lsp runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const BUG: &str = "tests/fixtures/untoggled_phase/jacobi_cluster_bug.py";

/// The line (from 1) of the finding, and the `trace` objects of its steps.
fn finding() -> (u32, Vec<serde_json::Value>) {
    let out = cute_lsp(&["check", "--format", "json", BUG]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("one JSON array on stdout");
    let d = &v[0];
    let line = d["range"]["start"]["line"].as_u64().unwrap() as u32 + 1;
    (line, d["related"].as_array().unwrap().iter().filter_map(|r| r.get("trace").cloned()).collect())
}

/// The values of `attribute` on the elements whose markup opens with `open`.
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
fn the_json_steps_carry_their_facts() {
    let (_, steps) = finding();
    assert!(steps.len() >= 3, "{steps:#?}");
    for s in &steps {
        let kind = s["kind"].as_str().unwrap();
        assert!(["prefix", "step", "stuck", "hazard"].contains(&kind), "{s}");
        if kind != "prefix" {
            assert!(s["lane"]["threads"].is_string() && s["op"].is_string(), "{s}");
            let b = &s["barrier"];
            assert!(b["name"].is_string() && b["expected"].is_u64() && b["pending"].is_u64() && b["parity"].is_u64(), "{s}");
        }
    }
    assert_eq!(steps.last().unwrap()["kind"], "stuck");
    assert!(steps.iter().any(|s| s["kind"] == "stuck" && s["parity"].is_u64()));
}

#[test]
fn the_page_has_every_lane_step_and_stuck_wait() {
    let (line, steps) = finding();
    let out = cute_lsp(&["trace", &format!("{BUG}:{line}")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let page = stdout(&out);
    assert!(page.starts_with("<!DOCTYPE html>") && page.contains("<svg "), "{page}");
    assert!(!page.contains("<script"));

    let lanes: BTreeSet<String> = attributes(&page, r#"<g class="lane""#, "data-lane").into_iter().collect();
    let mut expected = BTreeSet::new();
    for s in &steps {
        if let Some(t) = s["lane"]["threads"].as_str() {
            expected.insert(t.to_string());
        }
        for b in s["barrier"].as_object().into_iter().chain(s["barriers"].as_array().into_iter().flatten().filter_map(|b| b.as_object())) {
            expected.insert(b["name"].as_str().unwrap().to_string());
        }
    }
    assert_eq!(lanes, expected);
    // Two CTAs: a lane per group and per barrier of each.
    assert!(lanes.iter().any(|l| l.ends_with("of CTA 1")) && lanes.iter().any(|l| l.ends_with("of CTA 0")), "{lanes:?}");

    let drawn = attributes(&page, r#"<g class="step "#, "data-step");
    let moves: Vec<String> = steps.iter().filter(|s| s["kind"] == "prefix" || s["kind"] == "step").map(|s| s["first"].to_string()).collect();
    assert_eq!(drawn, moves);
    let stuck: Vec<&serde_json::Value> = steps.iter().filter(|s| s["kind"] == "stuck").collect();
    assert_eq!(attributes(&page, r#"<g class="stuck""#, "data-lane"), stuck.iter().map(|s| s["lane"]["threads"].as_str().unwrap().to_string()).collect::<Vec<_>>());
    assert_eq!(attributes(&page, r#"<g class="stuck""#, "data-parity"), stuck.iter().map(|s| s["parity"].to_string()).collect::<Vec<_>>());
    // The finding's wait is among the stuck ones.
    assert!(attributes(&page, r#"<g class="stuck""#, "data-line").contains(&line.to_string()));
    // The steps as the text report words them.
    assert_eq!(page.matches("<li class=\"step\">").count() + page.matches("<li class=\"prefix\">").count(), moves.len());
}

#[test]
fn svg_and_html_files() {
    let (line, _) = finding();
    let dir = std::env::temp_dir().join(format!("cute-lsp-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (svg, html) = (dir.join("t.svg"), dir.join("t.html"));
    for path in [&svg, &html] {
        let out = cute_lsp(&["trace", &format!("{BUG}:{line}"), "-o", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(stdout(&out).is_empty());
    }
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(svg.starts_with("<?xml") && svg.contains(r#"<svg xmlns="http://www.w3.org/2000/svg""#) && !svg.contains("<html"));
    assert!(svg.contains(r#"<g class="stuck""#));
    let html = std::fs::read_to_string(html).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains(r#"<g class="stuck""#));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_report_points_at_the_picture() {
    let (line, _) = finding();
    let out = cute_lsp(&["check", BUG]);
    assert!(stdout(&out).contains(&format!("= help: see the interleaving: cute-lsp trace {BUG}:{line}")), "{}", stdout(&out));
}

#[test]
fn a_line_without_a_finding_is_a_clear_error() {
    let (line, _) = finding();
    let out = cute_lsp(&["trace", &format!("{BUG}:1")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).is_empty());
    let err = stderr(&out);
    assert!(err.contains(&format!("no finding starts on line 1 of `{BUG}`")), "{err}");
    assert!(err.contains(&format!("findings with a trace start on line {line} (untoggled-phase)")), "{err}");
}

#[test]
fn a_finding_without_a_trace_is_a_clear_error() {
    let file = "tests/fixtures/smem_race/lane_exchange_bug.py";
    let out = cute_lsp(&["check", "--format", "json", file]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let line = v[0]["range"]["start"]["line"].as_u64().unwrap() + 1;
    let out = cute_lsp(&["trace", &format!("{file}:{line}")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("(smem-race) carries no trace to draw"), "{}", stderr(&out));
}

#[test]
fn usage_errors() {
    for args in [vec!["trace", BUG], vec!["trace", "x.py:0"], vec!["trace", "does/not/exist.py:3"], vec!["trace", "x.py:3", "-o", "t.png"], vec!["trace"]] {
        let out = cute_lsp(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stdout(&out).is_empty());
    }
}
