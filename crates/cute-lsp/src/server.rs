//! The language server (placeholder until the server module lands).

use std::process::ExitCode;

pub fn run_stdio() -> ExitCode {
    eprintln!("cute-lsp: the server is not built yet");
    ExitCode::from(2)
}
