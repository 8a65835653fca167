//! The `cute-lsp` binary: a language server (`--stdio`) and a command line
//! (`check`, `trace`, `explain`, `rules`, `slice`, `promela`) over the same
//! engine.

mod cli;
mod server;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Running a kernel's threads makes and drops many small values (tuples of
/// coordinates, argument lists): the system allocator took about a sixth of
/// the time of a sweep over whole code bases.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Has tree-sitter allocate through the same allocator: parsing builds and
/// frees a node per token, and the C library's allocator took a tenth of
/// the time spent parsing whole code bases.
fn parse_with_the_global_allocator() {
    use std::ffi::c_void;
    unsafe extern "C" fn calloc(count: usize, size: usize) -> *mut c_void {
        let Some(bytes) = count.checked_mul(size) else { return std::ptr::null_mut() };
        // SAFETY: mimalloc's allocation of `bytes`, zeroed as calloc's must be.
        unsafe {
            let p = libmimalloc_sys::mi_malloc(bytes);
            if !p.is_null() {
                std::ptr::write_bytes(p.cast::<u8>(), 0, bytes);
            }
            p
        }
    }
    let allocator = tree_sitter::Allocator {
        malloc: libmimalloc_sys::mi_malloc,
        calloc,
        realloc: libmimalloc_sys::mi_realloc,
        free: libmimalloc_sys::mi_free,
    };
    // SAFETY: one allocator family (mimalloc's, which aligns as malloc
    // does), installed once, before any tree-sitter object exists.
    unsafe { tree_sitter::set_allocator(Some(allocator)) };
}

#[derive(Parser)]
#[command(name = "cute-lsp", version, about = "Finds synchronization bugs in CuTe DSL kernels")]
struct Args {
    /// Run the language server over standard input and output.
    #[arg(long)]
    stdio: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the language server over standard input and output (same as --stdio).
    Serve,
    /// Lint files; a directory means every *.py below it.
    Check(cli::check::CheckArgs),
    /// Draw the counterexample of the finding that starts on a line: its interleaving as swimlanes (HTML or SVG).
    Trace(cli::trace::TraceArgs),
    /// Print a rule's documentation.
    Explain {
        /// Rule name (untoggled-phase) or code (CUTE001).
        rule: String,
    },
    /// List every rule: code, name, default severity, summary.
    Rules,
    /// Print the synchronization slice of each kernel: every statement kept or dropped, and why.
    Slice(cli::slice::SliceArgs),
    /// Print the Promela model of a kernel's synchronization skeleton, for SPIN.
    Promela(cli::promela::PromelaArgs),
}

fn main() -> ExitCode {
    restore_sigpipe();
    parse_with_the_global_allocator();
    let args = Args::parse();
    match args.command {
        None if args.stdio => server::run_stdio(),
        Some(Command::Serve) => server::run_stdio(),
        None => {
            eprintln!("cute-lsp: nothing to do; run `cute-lsp --stdio` for the server or `cute-lsp --help`");
            ExitCode::from(2)
        }
        Some(Command::Check(a)) => cli::check::run(a),
        Some(Command::Trace(a)) => cli::trace::run(a),
        Some(Command::Explain { rule }) => cli::explain(&rule),
        Some(Command::Rules) => cli::rules(),
        Some(Command::Slice(a)) => cli::slice::run(a),
        Some(Command::Promela(a)) => cli::promela::run(a),
    }
}

/// `cute-lsp check ... | head` should stop quietly when the pipe closes, as
/// command-line tools do, instead of failing on the next write.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: setting a signal disposition to its default at start-up, before
    // any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
