//! `cute-lsp slice`: the sync slice of each kernel, statement by statement
//! (`yes`: kept for synchronization; `mem`: kept only for the
//! memory-ordering analysis).

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct SliceArgs {
    pub file: std::path::PathBuf,
    /// Only this kernel (name or Class.method).
    #[arg(long)]
    pub kernel: Option<String>,
}

pub fn run(args: SliceArgs) -> ExitCode {
    let (text, module) = match super::load_module(&args.file) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    let kernels: Vec<_> = module
        .kernels()
        .filter(|k| args.kernel.as_ref().is_none_or(|n| *n == k.name || *n == k.display_name()))
        .collect();
    if kernels.is_empty() {
        match &args.kernel {
            Some(n) => {
                eprintln!("cute-lsp: no kernel named `{n}` in `{}`", args.file.display());
                return ExitCode::from(2);
            }
            None => println!("no @cute.kernel functions in `{}`", args.file.display()),
        }
    }
    let index = cute_syntax::LineIndex::new(&text);
    for k in kernels {
        let slice = cute_ir::slice_kernel(&module, k, &text);
        println!("kernel {}", slice.kernel);
        println!("input statements : {}", slice.entries.len());
        let sync = slice.entries.iter().filter(|e| e.sync).count();
        println!("slice kept       : {} ({sync} for synchronization, {} more for memory ordering)", slice.kept_count(), slice.kept_count() - sync);
        println!("slice dropped    : {}", slice.entries.len() - slice.kept_count());
        println!();
        println!("{:>4} {:>5} {:<4} {:<56} why", "id", "line", "kept", "statement");
        for e in &slice.entries {
            let line = index.line_of(e.range.start) + 1;
            let mut stmt = e.text.trim().to_string();
            if stmt.chars().count() > 56 {
                stmt = stmt.chars().take(53).collect::<String>() + "...";
            }
            let kept = match (e.sync, e.kept) {
                (true, _) => "yes",
                (false, true) => "mem",
                (false, false) => "-",
            };
            println!("{:>4} {:>5} {:<4} {:<56} {}", e.id, line, kept, stmt, e.reason);
        }
        println!();
    }
    ExitCode::SUCCESS
}
