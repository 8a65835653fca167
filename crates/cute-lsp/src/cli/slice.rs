//! `cute-lsp slice`: the sync slice of each kernel, statement by statement
//! (`yes`: kept for synchronization; `mem`: kept only for the
//! memory-ordering analysis), or the statements a thread inlining a helper
//! runs of it; of the file as `check` reads it, with what it needs of its
//! package linked in.

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct SliceArgs {
    pub file: std::path::PathBuf,
    /// Only this kernel, or this helper as a thread inlining it runs it
    /// (name or Class.method).
    #[arg(long)]
    pub kernel: Option<String>,
}

pub fn run(args: SliceArgs) -> ExitCode {
    let (text, module) = match super::load_linked_module(&args.file) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    let named = |f: &&cute_ir::ast::FunctionDef| args.kernel.as_ref().is_none_or(|n| *n == f.name || *n == f.display_name());
    let kernels: Vec<_> = module.kernels().filter(named).collect();
    let index = cute_syntax::LineIndex::new(&text);
    if kernels.is_empty() {
        match &args.kernel {
            Some(n) => match module.functions.iter().find(|f| named(f)) {
                Some(helper) => {
                    let slice = cute_ir::slice::slice_helper_table(&module, helper, &text);
                    println!("helper {} (the statements a thread inlining it runs)", slice.kernel);
                    print_slice(&slice, &index, false);
                    return ExitCode::SUCCESS;
                }
                None => {
                    // A definition in a section left out for a syntax error
                    // is not in the module.
                    let lines: Vec<String> = module.syntax_errors.iter().map(|r| (index.line_of(r.start) + 1).to_string()).collect();
                    let left_out = match lines.is_empty() {
                        true => String::new(),
                        false => format!(" (parts of it were left out for syntax errors at line {})", lines.join(", ")),
                    };
                    eprintln!("cute-lsp: no kernel or helper named `{n}` in `{}`{left_out}", args.file.display());
                    return ExitCode::from(2);
                }
            },
            None => println!("no @cute.kernel functions in `{}`", args.file.display()),
        }
    }
    for k in kernels {
        let slice = cute_ir::slice_kernel(&module, k, &text);
        println!("kernel {}", slice.kernel);
        print_slice(&slice, &index, true);
    }
    ExitCode::SUCCESS
}

/// Prints `slice` as a table; `kernel` says whether it is a kernel's (a
/// helper keeps nothing for memory ordering alone).
fn print_slice(slice: &cute_ir::Slice, index: &cute_syntax::LineIndex, kernel: bool) {
    println!("input statements : {}", slice.entries.len());
    let sync = slice.entries.iter().filter(|e| e.sync).count();
    match kernel {
        true => println!("slice kept       : {} ({sync} for synchronization, {} more for memory ordering)", slice.kept_count(), slice.kept_count() - sync),
        false => println!("slice kept       : {}", slice.kept_count()),
    }
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
