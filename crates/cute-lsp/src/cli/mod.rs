//! Command-line front end: `check` (`check.rs`, its formats for CI in
//! `format/`, its rule selection in `selection.rs` and `--statistics` in
//! `statistics.rs`), `trace` (a finding's counterexample drawn as swimlanes,
//! `trace.rs` and `trace/`), `explain` (a rule's documentation, the Markdown
//! next to its module), `rules` (the catalogue), `slice` (`slice.rs`) and
//! `promela` (`promela.rs`). Positions become line and column here, at the edge;
//! everything below speaks byte offsets.

pub mod check;
pub mod fix;
pub mod format;
pub mod progress;
pub mod promela;
pub mod selection;
pub mod slice;
pub mod statistics;
pub mod trace;

use std::process::ExitCode;

use cute_lint::rules;

/// Read and lower a file for the commands that work on one file, with the
/// error message and exit status 2 when that is not possible.
pub fn load_module(path: &std::path::Path) -> Result<(String, cute_ir::Module), ExitCode> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        eprintln!("cute-lsp: cannot read `{}`: {e}", path.display());
        ExitCode::from(2)
    })?;
    let module = cute_ir::lower_text(&text).map_err(|e| {
        eprintln!("cute-lsp: {e}");
        ExitCode::from(2)
    })?;
    Ok((text, module))
}

/// [`load_module`] as `check` reads the file: with what it needs of its
/// package linked in (found as `check` finds it: the package root, the
/// configuration's `src`, the Python environment), and the text its
/// positions are in. A file that does not parse is [`load_module`]'s.
pub fn load_linked_module(path: &std::path::Path) -> Result<(String, cute_ir::Module), ExitCode> {
    let (text, module) = load_module(path)?;
    let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let disk = cute_lint::DiskSources::default();
    let sources = check::sources_for(&absolute, &cute_lint::Config::default(), &disk);
    Ok(cute_lint::lower_linked(&absolute, &text, &sources).unwrap_or((text, module)))
}

pub fn explain(rule: &str) -> ExitCode {
    match rules::find(rule) {
        Some(r) => {
            print!("{}", r.doc);
            ExitCode::SUCCESS
        }
        None => {
            eprintln!("cute-lsp: no rule named `{rule}`; `cute-lsp rules` lists them");
            ExitCode::from(2)
        }
    }
}

pub fn rules() -> ExitCode {
    let width = rules::ALL.iter().map(|r| r.name.len()).max().unwrap_or(0);
    for r in rules::ALL {
        println!("{}  {:<width$}  {:<8} {}", r.code, r.name, r.default_severity.as_str(), r.summary);
    }
    ExitCode::SUCCESS
}
