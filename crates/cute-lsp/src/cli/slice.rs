use std::process::ExitCode;

#[derive(clap::Args)]
pub struct SliceArgs {
    pub file: std::path::PathBuf,
    /// Only this kernel (name or Class.method).
    #[arg(long)]
    pub kernel: Option<String>,
}

pub fn run(_args: SliceArgs) -> ExitCode {
    ExitCode::SUCCESS
}
