//! A progress bar for long runs of `cute-lsp check`: on standard error, only
//! when it is a terminal (nothing in CI logs, pipes or files) and the run is
//! not `--quiet`. The report is written above the bar, never through it.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress(Option<ProgressBar>);

impl Progress {
    /// A bar over `files` files, or none (see the module's doc).
    pub fn over(files: usize, quiet: bool) -> Self {
        if quiet || files < 2 || !std::io::stderr().is_terminal() {
            return Progress(None);
        }
        let bar = ProgressBar::with_draw_target(Some(files as u64), ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template("{bar:30} {pos}/{len} files checked {elapsed_precise} {wide_msg}")
            .expect("a valid template")
            .progress_chars("=> ");
        bar.set_style(style);
        Progress(Some(bar))
    }

    /// Runs `write` (a file's part of the report) with the bar out of the
    /// way, then counts the file as checked.
    pub fn file_done<R>(&self, name: &str, write: impl FnOnce() -> R) -> R {
        let Some(bar) = &self.0 else { return write() };
        let written = bar.suspend(write);
        bar.set_message(name.to_string());
        bar.inc(1);
        written
    }

    /// Takes the bar off the terminal.
    pub fn finish(&self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}
