//! The picture as a page that stands alone: the finding's heading, the SVG
//! inline, then the steps as the text report words them, and the finding's
//! other locations, notes and help. No script, no external resource.

use std::fmt::Write;

use super::markup::escape;
use super::view::TraceView;

const STYLE: &str = "
body { font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', sans-serif; color: #1d2330; margin: 24px; background: #ffffff; }
h1 { font-size: 18px; margin: 0 0 4px; }
h1 .code { color: #c53030; }
h1 .code.warning { color: #b7791f; }
.where { color: #4b5563; margin: 0 0 12px; font-family: ui-monospace, monospace; }
.message { margin: 0 0 16px; max-width: 70em; }
.picture { overflow-x: auto; border: 1px solid #e2e6ee; border-radius: 6px; padding: 8px 0; }
.legend { color: #4b5563; font-size: 12px; margin: 8px 0 16px; }
.legend span { display: inline-block; width: 12px; height: 12px; border-radius: 3px; vertical-align: -2px; margin: 0 4px 0 12px; border: 1.5px solid; }
.legend .l-arrive { border-color: #4a6fa5; }
.legend .l-wait { border-color: #2f855a; }
.legend .l-state { border-color: #b7791f; background: #fff8e1; }
.legend .l-stuck { border-color: #c53030; background: #fde8e8; }
h2 { font-size: 15px; margin: 20px 0 6px; }
ol.steps { font-family: ui-monospace, monospace; font-size: 12.5px; padding-left: 3em; }
ol.steps li.stuck, ol.steps li.hazard { color: #9b2c2c; }
ul.notes { font-size: 13px; }
";

pub fn html(view: &TraceView, svg: &str) -> String {
    let mut out = String::new();
    let title = format!("{} {} at {}:{}", view.code, view.name, view.file, view.line);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(&title)
    );
    let _ = writeln!(
        out,
        r#"<h1><span class="code {sev}">{sev}[{code}]</span> {name}</h1>"#,
        sev = escape(&view.severity),
        code = escape(&view.code),
        name = escape(&view.name)
    );
    let _ = writeln!(out, r#"<p class="where">{}:{}</p>"#, escape(&view.file), view.line);
    let _ = writeln!(out, r#"<p class="message">{}</p>"#, escape(&view.message));
    let _ = writeln!(out, r#"<div class="picture">{svg}</div>"#);
    out.push_str(concat!(
        r#"<p class="legend">"#,
        r#"<span class="l-arrive"></span>an arrival, into the barrier's lane"#,
        r#"<span class="l-wait"></span>a wait that passes"#,
        r#"<span class="l-state"></span>the barrier after the step: arrivals of this phase, its parity"#,
        r#"<span class="l-stuck"></span>a wait that never passes"#,
        "</p>\n",
    ));
    out.push_str("<h2>Steps</h2>\n<ol class=\"steps\">\n");
    for s in &view.steps {
        let _ = writeln!(out, r#"<li class="{}">{}: {}</li>"#, s.event.kind.as_str(), escape(&s.place()), escape(&s.message));
    }
    out.push_str("</ol>\n");
    let mut notes: Vec<String> = view.others.iter().map(|(line, m)| format!("line {line}: {m}")).collect();
    notes.extend(view.notes.iter().map(|n| format!("note: {n}")));
    notes.extend(view.help.iter().map(|h| format!("help: {h}")));
    if !notes.is_empty() {
        out.push_str("<h2>Notes</h2>\n<ul class=\"notes\">\n");
        for n in notes {
            let _ = writeln!(out, "<li>{}</li>", escape(&n));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</body>\n</html>\n");
    out
}
