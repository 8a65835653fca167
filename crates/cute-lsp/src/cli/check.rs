//! `cute-lsp check`: lint files, print rustc-style text (codespan-reporting),
//! the JSON contract (`Diagnostic::to_json`: one array, LSP-style ranges in
//! UTF-16), or one of the formats for CI and review in `format/`: `concise`
//! (a `path:line:col: CODE name: message` line per finding), `github`
//! (GitHub Actions annotations) and `sarif` (a SARIF 2.1.0 log for code
//! scanning). `human`, `concise` and `github` close with a summary line on
//! stderr.
//!
//! Files are checked on every core and reported in the order given, each as
//! soon as it and those before it are done. While other files keep the other
//! cores busy, a file's kernels run their threads on one core. Exit status: 0
//! without errors, 1 with an error, 2 when the command could not run or a path
//! given could not be read.
//!
//! Each file is checked under the configuration of the nearest
//! `cute-lsp.toml` or `pyproject.toml` (`cute_lint::config`), with the
//! command line's `--select`, `--extend-select`, `--ignore` and
//! `--severity` on top (`selection.rs`: a rule or level that is none stops
//! the run with status 2 before anything is checked). `--exit-zero` exits 0
//! with errors found (still 2 for a path not read), `--output-file` writes
//! the report to a file, `--quiet` drops the summary line on standard error,
//! and `--statistics` follows the report with the kernels checked in full
//! or not and the findings per rule (`statistics.rs`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use codespan_reporting::diagnostic::{Diagnostic as Report, Label, Severity as ReportSeverity};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{self, Config};
use cute_lint::{analyze_file, AnalysisOptions, Diagnostic, Severity};
use cute_syntax::LineIndex;

use super::fix::{self, FixArgs, Fixed};
use super::format;
use super::progress::Progress;
use super::selection::{self, SelectionArgs};
use super::statistics::{self, FileFacts, Statistics};

#[derive(clap::Args)]
pub struct CheckArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: Format,
    /// Exit with status 0 even when errors are found (still 2 when a path
    /// could not be read).
    #[arg(long)]
    pub exit_zero: bool,
    /// Write the report (and the statistics) to this file instead of
    /// standard output.
    #[arg(long, value_name = "PATH")]
    pub output_file: Option<PathBuf>,
    /// No summary line on standard error.
    #[arg(long, short)]
    pub quiet: bool,
    /// After the report: per path given, the @cute.kernel functions found
    /// and how many were checked in full, within loop bounds only or not
    /// (and why), then the findings per rule.
    #[arg(long)]
    pub statistics: bool,
    /// A further directory absolute imports are searched under (as `src` in
    /// the configuration); may be given more than once. A file's package
    /// root (the directory above its outermost `__init__.py`) and its own
    /// directory are always searched.
    #[arg(long, value_name = "DIR")]
    pub src: Vec<PathBuf>,
    /// Files or directories (every *.py below a directory).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub selection: SelectionArgs,
    #[command(flatten)]
    pub fixes: FixArgs,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Text reports as rustc prints them, with the trace, notes, help and fixes.
    Human,
    /// One JSON array of diagnostics (LSP-style ranges, UTF-16 columns).
    Json,
    /// One `path:line:col: CODE name: message` line per finding.
    Concise,
    /// GitHub Actions workflow commands (`::error file=...::message`).
    Github,
    /// A SARIF 2.1.0 log (GitHub code scanning, SARIF viewers).
    Sarif,
}

/// Expand directories into the Python files below them, sorted; with the
/// paths that could not be read, each with why. The others are still
/// checked, as a linter run over a tree with one bad path should be.
pub fn collect_files(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<String>) {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for p in paths {
        let walked = std::fs::metadata(p).and_then(|meta| {
            if meta.is_dir() {
                walk(p, &mut out)
            } else {
                out.push(p.clone());
                Ok(())
            }
        });
        if let Err(e) = walked {
            problems.push(format!("cannot read `{}`: {e}", p.display()));
        }
    }
    (out, problems)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let path = e.path();
        let name = e.file_name();
        let hidden = name.to_string_lossy().starts_with('.');
        if e.file_type()?.is_dir() {
            if !hidden && name != "__pycache__" && name != "node_modules" {
                walk(&path, out)?;
            }
        } else if path.extension().is_some_and(|x| x == "py") {
            out.push(path);
        }
    }
    Ok(())
}

pub fn run(args: CheckArgs) -> ExitCode {
    let overrides = match args.selection.layer() {
        Ok(mut layer) => {
            if let Some(missing) = args.src.iter().find(|d| !d.is_dir()) {
                eprintln!("cute-lsp: --src {}: not a directory", missing.display());
                return ExitCode::from(2);
            }
            let cwd = std::env::current_dir().unwrap_or_default();
            layer.src = args.src.iter().map(|d| cwd.join(d)).collect();
            layer
        }
        Err(e) => {
            eprintln!("cute-lsp: {e}");
            return ExitCode::from(2);
        }
    };
    let mut out = match selection::report_output(args.output_file.as_deref()) {
        Ok(out) => out,
        Err(e) => {
            eprintln!("cute-lsp: {e}");
            return ExitCode::from(2);
        }
    };
    let mut stats = args.statistics.then(|| Statistics::new(&args.paths));
    let (files, problems) = collect_files(&args.paths);
    for p in &problems {
        eprintln!("cute-lsp: {p}");
    }
    // Files found but not read (the paths in `problems` were never found).
    let mut unreadable = 0usize;
    let mut json = Vec::new();
    let mut sarif = format::sarif::Log::default();
    let mut errors = 0usize;
    let mut total = 0usize;
    // Files are checked on every core and reported in the order given, as
    // each one and those before it are done. While other files keep the
    // other cores busy, a file's kernels run their threads on one core:
    // spreading them too would only add the cost of merging what they left.
    // Every file of the run reads the modules it imports through one cache:
    // each is read and lowered once however many kernels import it.
    let sources = cute_lint::DiskSources::default();
    let check = |path: &PathBuf, cores_idle| check_file(path, cores_idle, &overrides, args.statistics, args.fixes, &sources);
    let mut fixes_applied = 0usize;
    let mut files_fixed = 0usize;
    // Findings left with a fix that only --unsafe-fixes applies.
    let mut unsafe_left = 0usize;
    let progress = Progress::over(files.len(), args.quiet);
    for_each_in_order(&files, check, |path, checked| progress.file_done(&path.display().to_string(), || {
        let display = path.display().to_string();
        let (text, diags, facts, fixed) = match checked {
            Ok(checked) => checked,
            Err(e) => {
                eprintln!("cute-lsp: cannot read `{display}`: {e}");
                unreadable += 1;
                return;
            }
        };
        // With fixes applied, the findings are those of the fixed text,
        // which is reported.
        let text = match fixed.filter(|f| !f.applied.is_empty()) {
            None => text,
            Some(Fixed { text: fixed, applied }) => {
                fixes_applied += applied.len();
                files_fixed += 1;
                if args.fixes.diff {
                    let _ = write!(out, "{}", fix::unified_diff(&display, &text, &fixed));
                } else if let Err(e) = std::fs::write(path, &fixed) {
                    eprintln!("cute-lsp: cannot write the fixes to `{display}`: {e}");
                    unreadable += 1;
                    return;
                }
                fixed
            }
        };
        if args.fixes.applies() && !args.fixes.unsafe_fixes {
            unsafe_left += diags.iter().filter(|d| d.fixes.iter().any(|f| f.applicability == cute_lint::Applicability::Unsafe)).count();
        }
        if args.fixes.diff {
            // The diff is the report.
            errors += diags.iter().filter(|d| d.severity == Severity::Error).count();
            total += diags.len();
            return;
        }
        let index = LineIndex::new(&text);
        errors += diags.iter().filter(|d| d.severity == Severity::Error).count();
        total += diags.len();
        if let (Some(stats), Some(facts)) = (&mut stats, facts) {
            stats.add(path, facts, &diags);
        }
        match args.format {
            Format::Json => json.extend(diags.iter().map(|d| d.to_json(&display, &index))),
            Format::Human => print_human(&mut out, &display, &text, &diags),
            // As for `human`, a report that cannot be written (a closed pipe)
            // does not stop the check; the final flush says so.
            Format::Concise => {
                let _ = format::concise::write(&mut out, &display, &text, &index, &diags);
            }
            Format::Github => {
                let _ = format::github::write(&mut out, &display, &text, &index, &diags);
            }
            Format::Sarif => sarif.add(&display, &text, &index, &diags),
        }
    }));
    progress.finish();
    let (checked, not_read) = (files.len() - unreadable, problems.len() + unreadable);
    let mut written = match args.format {
        Format::Json => writeln!(out, "{}", serde_json::Value::Array(json)),
        Format::Sarif => sarif.write(&mut out),
        Format::Human | Format::Concise | Format::Github => Ok(()),
    };
    if let Some(stats) = &stats {
        // A machine-readable report stays one document: its tables go to
        // standard error.
        written = match args.format {
            Format::Json | Format::Sarif => written.and_then(|()| stats.write(&mut std::io::stderr())),
            Format::Human | Format::Concise | Format::Github => written.and_then(|()| stats.write(&mut out)),
        };
    }
    if let Err(e) = written.and_then(|()| out.flush()) {
        let to = args.output_file.as_ref().map_or("standard output".to_string(), |p| format!("`{}`", p.display()));
        eprintln!("cute-lsp: cannot write the report to {to}: {e}");
        return ExitCode::from(2);
    }
    match args.format {
        Format::Json | Format::Sarif => {}
        Format::Human | Format::Concise | Format::Github if args.quiet => {}
        Format::Human | Format::Concise | Format::Github => {
            let unread = if not_read > 0 { format!(", {not_read} path(s) not read") } else { String::new() };
            if total == 0 {
                eprintln!("cute-lsp: {checked} file(s) checked, no findings{unread}");
            } else {
                eprintln!("cute-lsp: {checked} file(s) checked, {total} finding(s), {errors} error(s){unread}");
            }
        }
    }
    if args.fixes.applies() && !args.quiet {
        let done = if args.fixes.diff { "would be applied" } else { "applied" };
        eprintln!("cute-lsp: {fixes_applied} fix(es) {done} in {files_fixed} file(s)");
        if unsafe_left > 0 {
            eprintln!("cute-lsp: {unsafe_left} finding(s) left have a fix that changes what the kernel synchronizes on: --unsafe-fixes applies it");
        }
    }
    // A path that could not be read is an error of the run (2) whatever was
    // found in the others.
    if not_read > 0 {
        ExitCode::from(2)
    } else if errors > 0 && !args.exit_zero {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// One file's text and findings, under the nearest configuration file
/// (rules, severities, budgets) with `overrides` on top; and with
/// `statistics`, what they need of the file.
/// With `fixes` applying, the fixes applied and the findings left after them
/// (see `fix.rs`).
fn check_file(
    path: &Path,
    cores_idle: bool,
    overrides: &cute_lint::Config,
    statistics: bool,
    fixes: FixArgs,
    sources: &cute_lint::DiskSources,
) -> std::io::Result<(String, Vec<Diagnostic>, Option<FileFacts>, Option<Fixed>)> {
    let bytes = std::fs::read(path)?;
    let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let (config, config_file, problems) = cute_lint::config::discover(&absolute);
    for p in problems {
        eprintln!("cute-lsp: {p}");
    }
    let config = config.with(overrides);
    let options = AnalysisOptions { workers: if cores_idle { 0 } else { 1 }, ..config.analysis_options() };
    let sources = with_roots(&config, config_file.as_deref(), sources);
    Ok(match String::from_utf8(bytes) {
        Ok(text) => {
            let analyze = |t: &str| analyze_file(&absolute, t, &options, &sources);
            let all = analyze(&text);
            if fixes.applies() {
                let check = |t: &str| config.apply(&analyze(t));
                let (fixed, left) = fix::apply_fixes(&text, config.apply(&all), fixes, check);
                let facts = statistics.then(|| match fixed.applied.is_empty() {
                    true => statistics::facts(&text, &all),
                    false => statistics::facts(&fixed.text, &analyze(&fixed.text)),
                });
                return Ok((text, left, facts, Some(fixed)));
            }
            let facts = statistics.then(|| statistics::facts(&text, &all));
            (text, config.apply(&all), facts, None)
        }
        Err(e) => {
            let all = vec![cute_lint::rules::analysis_incomplete::file_not_parsed("it is not valid UTF-8")];
            let facts = statistics.then(|| statistics::facts(&String::from_utf8_lossy(e.as_bytes()), &all));
            (String::new(), config.apply(&all), facts, None)
        }
    })
}

/// Where the modules a file imports are read from: `sources`, under the
/// configuration's `src` and the Python environment it names (or the
/// active one).
fn with_roots<'s>(config: &cute_lint::Config, config_file: Option<&Path>, sources: &'s cute_lint::DiskSources) -> cute_lint::sources::WithRoots<'s> {
    let virtual_env = std::env::var_os("VIRTUAL_ENV").map(PathBuf::from);
    let mut roots = config.src.clone();
    roots.extend(config.environment_roots(config_file, virtual_env.as_deref()));
    cute_lint::sources::WithRoots { sources, roots }
}

/// [`with_roots`] under the configuration that applies to the file at
/// `absolute`, with `overrides` on top.
pub fn sources_for<'s>(absolute: &Path, overrides: &cute_lint::Config, sources: &'s cute_lint::DiskSources) -> cute_lint::sources::WithRoots<'s> {
    let (config, config_file, _) = cute_lint::config::discover(absolute);
    with_roots(&config.with(overrides), config_file.as_deref(), sources)
}

/// One file's text and findings as `check` reports them with no options:
/// under the nearest configuration file, no fix applied (`trace`).
pub fn check_one(path: &Path) -> std::io::Result<(String, Vec<Diagnostic>)> {
    let sources = cute_lint::DiskSources::default();
    let (text, diags, _, _) = check_file(path, true, &cute_lint::Config::default(), false, FixArgs::default(), &sources)?;
    Ok((text, diags))
}

/// Runs `work` on every item on all cores and hands the results to
/// `report` in the items' order, each as soon as it and those before it
/// are done. `work` is told whether some cores have no item left to take
/// (the last items of the run, or fewer items than cores).
fn for_each_in_order<T: Sync, R: Send>(items: &[T], work: impl Fn(&T, bool) -> R + Sync, mut report: impl FnMut(&T, R)) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let workers = cores.min(items.len().max(1));
    let next = AtomicUsize::new(0);
    let (sender, receiver) = std::sync::mpsc::channel::<(usize, R)>();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let sender = sender.clone();
            let (next, work) = (&next, &work);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let cores_idle = items.len().saturating_sub(i) < cores;
                if i >= items.len() || sender.send((i, work(&items[i], cores_idle))).is_err() {
                    break;
                }
            });
        }
        drop(sender);
        let mut done = std::collections::BTreeMap::new();
        let mut reported = 0;
        for (i, result) in receiver {
            done.insert(i, result);
            while let Some(result) = done.remove(&reported) {
                report(&items[reported], result);
                reported += 1;
            }
        }
    })
}

fn print_human(out: &mut dyn Write, path: &str, text: &str, diags: &[Diagnostic]) {
    let mut files = SimpleFiles::new();
    let own = files.add(path.to_string(), text.to_string());
    // The other files related locations are in (modules linked into the
    // check), added once each.
    let mut others: Vec<(std::sync::Arc<std::path::Path>, usize)> = Vec::new();
    let config = Config::default();
    for d in diags {
        let severity = match d.severity {
            Severity::Error => ReportSeverity::Error,
            Severity::Warning => ReportSeverity::Warning,
            Severity::Info => ReportSeverity::Note,
        };
        let range = |r: cute_syntax::TextRange, text: &str| r.start as usize..(r.end.max(r.start) as usize).min(text.len());
        let mut labels = vec![Label::primary(own, range(d.range, text)).with_message(&d.label)];
        let mut notes: Vec<String> = Vec::new();
        for (i, r) in d.related.iter().enumerate() {
            // Trace steps become numbered notes with their line; the first
            // few also label the code.
            let (file, in_text, where_) = match &r.file {
                None => (own, text, String::new()),
                Some(other) => {
                    let id = match others.iter().find(|(p, _)| *p == other.path) {
                        Some((_, id)) => *id,
                        None => {
                            let id = files.add(relative_to_cwd(&other.path), other.text.to_string());
                            others.push((other.path.clone(), id));
                            id
                        }
                    };
                    (id, &*other.text, format!(" of {}", relative_to_cwd(&other.path)))
                }
            };
            let line = in_text[..(r.range.start as usize).min(in_text.len())].matches('\n').count() + 1;
            notes.push(format!("{:>2}. line {line}{where_}: {}", i + 1, r.message));
            if i < 3 && (r.range != d.range || r.file.is_some()) {
                labels.push(Label::secondary(file, range(r.range, in_text)).with_message(format!("step {}", i + 1)));
            }
        }
        notes.extend(d.notes.iter().map(|n| format!("note: {n}")));
        if let Some(h) = &d.help {
            notes.push(format!("help: {h}"));
        }
        if d.has_trace() {
            let line = text[..(d.range.start as usize).min(text.len())].matches('\n').count() + 1;
            notes.push(format!("help: see the interleaving: cute-lsp trace {path}:{line}"));
        }
        for f in &d.fixes {
            notes.push(format!("fix available: {}", f.title));
        }
        let report = Report::new(severity)
            .with_code(d.code)
            .with_message(format!("{}: {}", d.name, d.message))
            .with_labels(labels)
            .with_notes(notes);
        let _ = term::emit_to_io_write(out, &config, &files, &report);
    }
}

/// A path as the user would type it from here: relative to the current
/// directory when it is under it.
fn relative_to_cwd(path: &Path) -> String {
    let cwd = std::env::current_dir().ok().and_then(|d| d.canonicalize().ok());
    match cwd.as_deref().and_then(|d| path.strip_prefix(d).ok()) {
        Some(rel) => rel.display().to_string(),
        None => path.display().to_string(),
    }
}
