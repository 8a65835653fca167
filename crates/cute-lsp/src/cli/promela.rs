//! `cute-lsp promela`: the model of each kernel that `check` explores, as a
//! Promela program for SPIN (`spin -a`, `cc`, `./pan -a`); of the file as
//! `check` reads it, with what it needs of its package linked in.

use std::process::ExitCode;

use cute_check::explore::{explore, ExploreOptions, Verdict};
use cute_check::model::Model;
use cute_check::promela::{spin_limits, to_promela, PromelaOptions};
use cute_check::{instantiate, InstantiateOptions, Scenario};
use cute_ir::ast::FunctionDef;
use cute_ir::launch::resolve_launch;
use cute_ir::Module;
use cute_syntax::{LineIndex, TextRange};

#[derive(clap::Args)]
pub struct PromelaArgs {
    pub file: std::path::PathBuf,
    /// Only this kernel (name or Class.method).
    #[arg(long)]
    pub kernel: Option<String>,
    /// Threads per CTA, instead of the launch's block (SPIN handles a few
    /// threads per CTA; counts written as literals in the kernel do not scale).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: Option<u32>,
    /// Write one `<kernel>.pml` per kernel into this directory instead of
    /// printing.
    #[arg(long, short = 'o', value_name = "DIR")]
    pub output: Option<std::path::PathBuf>,
}

pub fn run(args: PromelaArgs) -> ExitCode {
    let (text, module) = match super::load_linked_module(&args.file) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    let kernels: Vec<&FunctionDef> = module
        .kernels()
        .filter(|k| args.kernel.as_ref().is_none_or(|n| *n == k.name || *n == k.display_name()))
        .collect();
    if kernels.is_empty() {
        match &args.kernel {
            Some(n) => eprintln!("cute-lsp: no kernel named `{n}` in `{}`", args.file.display()),
            None => eprintln!("cute-lsp: no @cute.kernel functions in `{}`", args.file.display()),
        }
        return ExitCode::from(2);
    }
    if let Some(dir) = &args.output {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!("cute-lsp: cannot create `{}`: {e}", dir.display());
            return ExitCode::from(2);
        }
    } else if kernels.len() > 1 {
        eprintln!(
            "cute-lsp: {} kernels in `{}`: printing one Promela program each; pass --kernel NAME (or -o DIR) for a single SPIN input",
            kernels.len(),
            args.file.display()
        );
    }

    let index = LineIndex::new(&text);
    let mut status = ExitCode::SUCCESS;
    for kernel in kernels {
        let name = kernel.display_name();
        let program = match program_for(&args, &text, &index, &module, kernel) {
            Ok(p) => p,
            Err(why) => {
                eprintln!("cute-lsp: kernel `{name}`: {why}");
                status = ExitCode::from(1);
                continue;
            }
        };
        match &args.output {
            Some(dir) => {
                let file_name: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
                let path = dir.join(format!("{file_name}.pml"));
                if let Err(e) = std::fs::write(&path, program) {
                    eprintln!("cute-lsp: cannot write `{}`: {e}", path.display());
                    return ExitCode::from(2);
                }
                println!("{}", path.display());
            }
            None => print!("{program}"),
        }
    }
    status
}

/// The model of `kernel` as `check` builds it (base scenario: conditions on
/// runtime values taken as false), exported.
fn program_for(args: &PromelaArgs, text: &str, index: &LineIndex, module: &Module, kernel: &FunctionDef) -> Result<String, String> {
    let slice = cute_ir::slice_kernel(module, kernel, text);
    let kept = slice.kept_ids();
    let launch = resolve_launch(module, kernel);
    let options = InstantiateOptions::default();
    let build = |block: Option<[u32; 3]>| {
        let mut launch = launch.clone();
        if block.is_some() {
            launch.block = block;
            launch.block_assumed = None;
        }
        instantiate(module, kernel, &kept, &launch, &Scenario::new(), &options)
    };
    let inst = build(args.threads.map(|n| [n, 1, 1]));
    let model = inst.model;
    if model.groups.is_empty() {
        return Err("no thread synchronizes: there is nothing to model".to_string());
    }
    if !model.unresolved.is_empty() {
        let what: Vec<String> =
            model.unresolved.iter().map(|u| format!("line {}: {}", index.line_of(u.site.start) + 1, u.what)).collect();
        return Err(format!("the model is incomplete: {}", what.join("; ")));
    }

    let mut notes = vec![format!("Source: {}", args.file.display())];
    if let Some(n) = args.threads {
        let launched = launch.block.filter(|_| launch.block_assumed.is_none());
        notes.push(format!("Threads per CTA set to {n} (--threads); the launch says {}.", describe_block(launched)));
    }
    for c in &inst.open_conditions {
        notes.push(format!(
            "The condition at line {} (on {}) is taken as false in every thread; `cute-lsp check` explores both outcomes.",
            index.line_of(c.site.start) + 1,
            c.why
        ));
    }
    let verdict = verdict_of(&model);
    notes.push(format!("cute-check's verdict on this model: {verdict}."));
    if args.threads.is_some() {
        let full = build(None).model;
        let full_verdict = verdict_of(&full);
        if full.unresolved.is_empty() && short(&full_verdict) != short(&verdict) {
            eprintln!(
                "cute-lsp: warning: kernel `{}`: with {} threads per CTA the model is {}, at the launch's size it is {}; \
                 arrival counts written as literals do not follow --threads",
                model.kernel,
                model.threads_per_cta,
                short(&verdict),
                short(&full_verdict)
            );
            notes.push(format!("At the launch's size the verdict is: {full_verdict}."));
        }
    }
    if let Err(why) = spin_limits(&model) {
        eprintln!("cute-lsp: warning: kernel `{}`: {why}; pass --threads N with a small N", model.kernel);
        notes.push(format!("SPIN cannot run this model as is: {why}."));
    }

    let describe = |site: TextRange| describe_site(text, index, site);
    Ok(to_promela(&model, &PromelaOptions { describe_site: Some(&describe), notes, termination_claim: true }))
}

fn describe_block(block: Option<[u32; 3]>) -> String {
    match block {
        Some([x, y, z]) => format!("block=[{x}, {y}, {z}]"),
        None => "nothing (the launch was not found)".to_string(),
    }
}

fn verdict_of(model: &Model) -> String {
    let outcome = explore(model, &ExploreOptions::default());
    let hazard = if outcome.hazards.is_empty() { "" } else { ", with a hazard on some path" };
    match outcome.verdict {
        Verdict::Clean => format!("clean ({} states{hazard})", outcome.states),
        Verdict::Deadlock(cex) => format!("deadlock after {} moves ({} states)", cex.moves.len(), outcome.states),
        Verdict::Incomplete(why) => format!("incomplete ({why})"),
    }
}

fn short(verdict: &str) -> &str {
    verdict.split(' ').next().unwrap_or(verdict)
}

/// `line 75: mbarrier_wait`: the line and the called function.
fn describe_site(text: &str, index: &LineIndex, site: TextRange) -> String {
    let line = index.line_of(site.start) + 1;
    let call = text.get(site.start as usize..site.end as usize).unwrap_or("");
    let callee = call.split('(').next().unwrap_or("").trim();
    let callee = callee.rsplit('.').next().unwrap_or(callee);
    if callee.is_empty() || !callee.chars().all(|c| c.is_alphanumeric() || c == '_') {
        format!("line {line}")
    } else {
        format!("line {line}: {callee}")
    }
}
