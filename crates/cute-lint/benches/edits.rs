//! Edits that need no check, timed in process through the salsa database:
//! what the server does between a `didChange` and its publish, without the
//! transport.
//!
//! ```sh
//! cargo bench -p cute-lint --bench edits -- FILE PATTERN INSERT [--rounds N] [--package DIR]
//! ```
//!
//! Opens FILE, then inserts INSERT right after each occurrence of PATTERN
//! in turn (an edit of one kernel at a time, as a user types), linting the
//! file after every insertion; repeats that N times (default 20). Prints the
//! time of opening and the median, 95th percentile and total of the edits.
//! With `--package DIR`, the file is checked as the server checks it in a
//! workspace folder DIR: with what it imports from its package linked in.
//! Each edit runs through `run_edit`, so that an instruction count of the
//! edits alone is one `valgrind --tool=callgrind --collect-atstart=no
//! --toggle-collect=edits::run_edit` away (repeatable where wall time is
//! not).

use std::time::Instant;

use cute_lint::{AnalysisOptions, Database, Diagnostic, SourceFile};
use salsa::Setter;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let mut rounds = 20;
    if let Some(at) = args.iter().position(|a| a == "--rounds") {
        rounds = args.get(at + 1).and_then(|n| n.parse().ok()).unwrap_or(rounds);
        args.drain(at..(at + 2).min(args.len()));
    }
    let mut package = None;
    if let Some(at) = args.iter().position(|a| a == "--package") {
        package = args.get(at + 1).map(std::path::PathBuf::from);
        args.drain(at..(at + 2).min(args.len()));
    }
    let [path, pattern, insert] = args.as_slice() else {
        eprintln!("usage: edits FILE PATTERN INSERT [--rounds N] [--package DIR]");
        std::process::exit(2);
    };
    let mut text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) => {
            eprintln!("cannot read {path}: {err}");
            std::process::exit(2);
        }
    };
    let sites = text.matches(pattern.as_str()).count();
    if sites == 0 {
        eprintln!("`{pattern}` does not occur in {path}");
        std::process::exit(2);
    }
    let mut db = Database::default();
    if let Some(dir) = package {
        db.with_package(vec![dir]);
    }
    let path = std::fs::canonicalize(path).map_or(path.clone(), |p| p.display().to_string());
    let file = SourceFile::new(&db, path.clone(), text.clone());
    let options = AnalysisOptions::default();
    let started = Instant::now();
    // Not through `run_edit`: an instruction count of the edits leaves the opening out.
    let opened = cute_lint::lint_file_with(&db, file, options.clone()).len();
    println!("{path}: opened in {:.1} ms, {opened} diagnostics; {sites} sites of the edit", started.elapsed().as_secs_f64() * 1e3);

    let mut times = Vec::with_capacity(rounds * sites);
    let before = cute_lint::check_counts();
    for _ in 0..rounds {
        for k in 0..sites {
            let at = text.match_indices(pattern.as_str()).nth(k).map(|(i, _)| i + pattern.len()).unwrap_or(text.len());
            text.insert_str(at, insert);
            let started = Instant::now();
            file.set_text(&mut db).to(text.clone());
            let found = run_edit(&db, file, &options).len();
            times.push(started.elapsed().as_secs_f64() * 1e3);
            if found != opened {
                eprintln!("edit {k}: {found} diagnostics, {opened} at open");
            }
        }
    }
    // What the edits re-ran: a kernel edit outside its synchronization
    // should re-run neither instantiations nor explorations.
    let after = cute_lint::check_counts();
    println!(
        "re-run by the edits: {} instantiations, {} explorations, {} memory analyses, {} whole-file checks",
        after.instantiations - before.instantiations,
        after.explorations - before.explorations,
        after.memory_analyses - before.memory_analyses,
        after.whole_file - before.whole_file
    );
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    println!(
        "{} edits: p50 {:.2} ms, p95 {:.2} ms, max {:.2} ms, total {:.0} ms",
        times.len(),
        at(0.5),
        at(0.95),
        at(1.0),
        times.iter().sum::<f64>()
    );
}

/// What the server computes for one version of the file: its diagnostics
/// and its line index (for the positions of the publish).
#[inline(never)]
fn run_edit(db: &Database, file: SourceFile, options: &AnalysisOptions) -> std::sync::Arc<Vec<Diagnostic>> {
    let diagnostics = cute_lint::lint_file_with(db, file, options.clone());
    let _ = cute_lint::line_index(db, file);
    diagnostics
}
