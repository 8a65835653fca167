//! `cute-lsp trace FILE:LINE`: the counterexample of the finding that starts
//! on LINE, drawn as swimlanes. The file is checked as `check` checks it
//! (nearest configuration, no option), the finding is taken from the result
//! (one that carries a trace when several start on the line), and its steps
//! go through three stages, one module each: `view.rs` (the finding as
//! lines and facts), `layout.rs` (lanes, columns, boxes, arrows) and
//! `svg.rs` / `html.rs` (the markup, every label escaped by `markup.rs`).
//!
//! The output is a page that stands alone (standard output, or `-o` a path
//! ending in `.html`), or the SVG alone (`-o` a path ending in `.svg`).
//! Exit status 2 when the command cannot run: a malformed location, a file
//! not read, no finding with a trace on that line (the message lists the
//! lines that have one), an output that cannot be written.

mod html;
mod layout;
mod markup;
mod svg;
mod view;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use cute_syntax::LineIndex;

pub use view::TraceView;

#[derive(clap::Args)]
pub struct TraceArgs {
    /// The finding: the file and the line its report starts on.
    #[arg(value_name = "FILE:LINE")]
    pub location: String,
    /// Write to this file: a page if it ends in `.html`, the picture alone
    /// if it ends in `.svg`. Without it, the page goes to standard output.
    #[arg(long, short, value_name = "PATH")]
    pub output: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    Html,
    Svg,
}

/// `FILE:LINE` as a path and a line counted from 1.
pub fn parse_location(location: &str) -> Result<(PathBuf, u32), String> {
    let bad = || format!("`{location}` is not FILE:LINE (a path, a colon and a line number counted from 1)");
    let (file, line) = location.rsplit_once(':').ok_or_else(bad)?;
    let line: u32 = line.trim().parse().map_err(|_| bad())?;
    if file.is_empty() || line == 0 {
        return Err(bad());
    }
    Ok((PathBuf::from(file), line))
}

/// What `-o` asks for, from its extension.
pub fn output_kind(path: Option<&std::path::Path>) -> Result<Output, String> {
    let Some(path) = path else { return Ok(Output::Html) };
    match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("html" | "htm") => Ok(Output::Html),
        Some("svg") => Ok(Output::Svg),
        _ => Err(format!("-o `{}` must end in .html (a page) or .svg (the picture alone)", path.display())),
    }
}

/// The markup of a finding's trace.
pub fn render(view: &TraceView, output: Output) -> String {
    let layout = layout::layout(view);
    let picture = svg::svg(view, &layout);
    match output {
        Output::Svg => format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{picture}\n"),
        Output::Html => html::html(view, &picture),
    }
}

pub fn run(args: TraceArgs) -> ExitCode {
    let usage = |message: String| {
        eprintln!("cute-lsp: {message}");
        ExitCode::from(2)
    };
    let (path, line) = match parse_location(&args.location) {
        Ok(at) => at,
        Err(e) => return usage(e),
    };
    let output = match output_kind(args.output.as_deref()) {
        Ok(o) => o,
        Err(e) => return usage(e),
    };
    let (text, diags) = match super::check::check_one(&path) {
        Ok(checked) => checked,
        Err(e) => return usage(format!("cannot read `{}`: {e}", path.display())),
    };
    let index = LineIndex::new(&text);
    let line_of = |d: &cute_lint::Diagnostic| index.line_of(d.range.start) + 1;
    let display = path.display().to_string();
    let on_line: Vec<&cute_lint::Diagnostic> = diags.iter().filter(|d| line_of(d) == line).collect();
    let Some(finding) = on_line.iter().find(|d| d.has_trace()) else {
        let with_trace: Vec<String> = diags.iter().filter(|d| d.has_trace()).map(|d| format!("{} ({})", line_of(d), d.name)).collect();
        let here = match on_line.as_slice() {
            [] => format!("no finding starts on line {line} of `{display}`"),
            found => format!(
                "the finding{} on line {line} of `{display}` ({}) carr{} no trace to draw",
                if found.len() > 1 { "s" } else { "" },
                found.iter().map(|d| d.name).collect::<Vec<_>>().join(", "),
                if found.len() > 1 { "y" } else { "ies" }
            ),
        };
        let lines = match with_trace.as_slice() {
            [] => format!("no finding of `{display}` carries a trace"),
            lines => format!("findings with a trace start on line {}", lines.join(", ")),
        };
        return usage(format!("{here}; {lines}"));
    };
    let view = TraceView::of(&display, &index, finding);
    let markup = render(&view, output);
    let written = match &args.output {
        Some(to) => std::fs::write(to, markup).map_err(|e| format!("cannot write `{}`: {e}", to.display())),
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(markup.as_bytes()).and_then(|()| stdout.flush()).map_err(|e| format!("cannot write the page: {e}"))
        }
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => usage(e),
    }
}

#[cfg(test)]
mod tests;
