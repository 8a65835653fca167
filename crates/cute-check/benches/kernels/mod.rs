//! What the benches that time the kernels of files share: their command
//! line (`[--runs N] [FILE ...]`), medians, and the kernels of a file with
//! the model of the default scenario's slice.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cute_ir::launch::Launches;

/// `--runs N` (else `runs`) and the files named; `cargo bench`'s own flags
/// (`--bench`) are passed over.
pub fn command_line(runs: usize) -> (usize, Vec<PathBuf>) {
    let mut runs = runs;
    let mut files = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).expect("--runs N"),
            s if s.starts_with("--") => {}
            path => files.push(PathBuf::from(path)),
        }
    }
    (runs, files)
}

/// The repository's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `f` `runs` times; the median time and the last result.
pub fn timed<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs {
        let started = Instant::now();
        last = Some(f());
        times.push(started.elapsed());
    }
    times.sort();
    (times[times.len() / 2], last.expect("at least one run"))
}

/// Calls `each` with every kernel of `file`, its module, its launch, the
/// file's text and a name for the table (`file.py: `kernel``); says on
/// standard error what it cannot read.
pub fn for_each_kernel(file: &Path, mut each: impl FnMut(&cute_ir::Module, &cute_ir::ast::FunctionDef, &cute_ir::launch::Launch, &str, String)) {
    let Ok(text) = std::fs::read_to_string(file) else {
        eprintln!("cannot read {}", file.display());
        return;
    };
    let Ok(tree) = cute_syntax::parse(&text) else {
        eprintln!("cannot parse {}", file.display());
        return;
    };
    let module = cute_ir::lower_recovering(&tree);
    let launches = Launches::of_module(&module);
    for kernel in module.kernels() {
        let launch = launches.of_kernel(&module, kernel);
        let name = format!("{}: `{}`", file.file_name().map_or_else(String::new, |f| f.to_string_lossy().into_owned()), kernel.display_name());
        each(&module, kernel, &launch, &text, name);
    }
}
