use std::process::ExitCode;

#[derive(clap::Args)]
pub struct PromelaArgs {
    pub file: std::path::PathBuf,
    /// Only this kernel (name or Class.method).
    #[arg(long)]
    pub kernel: Option<String>,
}

pub fn run(_args: PromelaArgs) -> ExitCode {
    ExitCode::SUCCESS
}
