use std::process::ExitCode;

#[derive(clap::Args)]
pub struct CheckArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: Format,
    /// Files or directories.
    #[arg(required = true)]
    pub paths: Vec<std::path::PathBuf>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Format {
    Human,
    Json,
}

pub fn run(_args: CheckArgs) -> ExitCode {
    ExitCode::SUCCESS
}
