//! From source text to diagnostics, without the database (the CLI's path, and
//! what the salsa queries bottom out in): [`analyze_text`] parses, lowers,
//! slices and launches every kernel of a file, and [`check_kernel`] checks one.
//!
//! What a kernel is reported for is decided by the models instantiated from its
//! slice (`check_slice_with`); its text and positions only shape the
//! diagnostics. In order:
//!
//! 1. The first run of the threads decides every condition on a runtime value
//!    as false. If it meets a construct the model does not represent, or runs
//!    out of time, the kernel is `analysis-incomplete` (naming the construct)
//!    and nothing else is run. If the other ways of deciding the conditions it
//!    met would not fit in the statement budget, none is run (a verdict needs
//!    them all) and the kernel is reported as not checked, naming the
//!    conditions' lines.
//! 2. Each way of deciding the conditions (`ways.rs`) is a model of its own;
//!    ways that build the same model are explored and analysed once. One way
//!    that meets an unmodelled construct makes the kernel not checked, whatever
//!    the others gave. The ways share the configured time budget
//!    (`max-time-ms`) besides each check's own.
//! 3. Per model, the findings read off the model itself (repeated or misplaced
//!    initialisations, partial-warp collectives, stale tokens, transaction
//!    bytes); then the search for mixed named-barrier generations
//!    (`cute_check::overrun`), and the exploration, on the model with one
//!    barrier per party where groups take turns. A deadlock gets its most
//!    specific explanation (a named-barrier rule, `arrive-count-mismatch`,
//!    `named-barrier-deadlock`, `untoggled-phase`, a pipeline used out of
//!    its role (as `deadlock`), `vacuous-wait`, else `deadlock`), which
//!    carries the trace. A clean model goes on to the
//!    memory-ordering analysis.
//! 4. Across the ways: a finding is reported only when every way has one
//!    (otherwise it rests on a guess about the data, and the kernel is
//!    `analysis-incomplete`, naming the condition that parts two ways deciding
//!    everything else alike). Memory-ordering findings alike
//!    (`memory_findings`): one that only some ways of deciding the data have
//!    is named in a note of that `analysis-incomplete`, never dropped. A condition past what a way decides is decided
//!    only as false: a finding then may rest on it alone and is not reported,
//!    and a clean kernel is "checked only in part", naming the conditions
//!    explored one way.
//! 5. `read-before-grid-dependency` is the exception: a read of global memory
//!    before `griddepcontrol_wait()` in one way is on a path the kernel's code
//!    has, so each way's reads are collected (`GridDependency`) and judged
//!    together once every way has run, whatever the other ways found.
//!    `forward-progress` likewise collects each way's inter-CTA waits
//!    (`ForwardProgress`) and judges them against the grid once: a wait on a
//!    path of one way is a wait the kernel has.
//!
//! A finding that rests on an assumption of the model (an assumed block, a host
//! value taken from a default, a condition decided one way) is a warning, with
//! the assumption as a note (`context::severity_for`).

use std::time::Duration;

use cute_check::explore::{Counterexample, ExploreOptions, Outcome};
use cute_check::memory::MemoryFinding;
use cute_check::model::{Model, OpKind};
use cute_check::{explore, Budget, InstantiateOptions, Scenario, Verdict, MAX_OPEN_CONDITIONS};
use cute_ir::api::Api;
use cute_ir::ast::FunctionDef;
use cute_ir::launch::{Launch, Launches};
use cute_ir::{lower_recovering, slice_kernel, Module};
use cute_syntax::{LineIndex, TextRange};

use crate::context::{severity_for, steps_to_related, KernelContext};
use crate::rules::forward_progress::ForwardProgress;
use crate::rules::read_before_grid_dependency::GridDependency;
use crate::rules::{
    analysis_incomplete, arrive_count_mismatch, barrier_recycling, deadlock, divergent_barrier, mbarrier_init_hazard,
    named_barrier_count_mismatch, named_barrier_deadlock, single_lane_collective, tx_count_mismatch, untoggled_phase,
    vacuous_wait,
};
use crate::{suppress, Diagnostic, Related};

mod ways;
use ways::Ways;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AnalysisOptions {
    pub max_states: usize,
    pub max_time: Duration,
    /// Bytes one exploration's states may take (`Budget::max_bytes`).
    pub max_bytes: usize,
    /// Iterations explored for loops whose trip count is not known.
    pub unknown_trip_count: u32,
    /// Steps of a counterexample shown before older ones are summarised.
    pub max_trace_steps: usize,
    /// Cores the threads of one kernel run on (0: all available). What is
    /// reported does not depend on it; a caller that already keeps every
    /// core busy with other files says 1.
    pub workers: usize,
    /// The GPU architecture the kernels are for (`sm_90a`), which bounds
    /// how many CTAs are resident at once (`forward-progress`); `None`:
    /// `CUTE_DSL_ARCH`, else `sm_90a`.
    pub target: Option<String>,
}

impl Default for AnalysisOptions {
    fn default() -> Self {
        AnalysisOptions {
            max_states: 2_000_000,
            max_bytes: cute_check::explore::DEFAULT_MAX_BYTES,
            max_time: Duration::from_secs(2),
            unknown_trip_count: 3,
            max_trace_steps: 14,
            workers: 0,
            target: None,
        }
    }
}


/// The file at `path` lowered as [`analyze_file`] checks it: with what it
/// needs of its package linked in, read through `sources`; and the text its
/// positions are in (the file's, then each linked module's at its base).
/// `None` when the file does not parse.
pub fn lower_linked(path: &std::path::Path, text: &str, sources: &dyn cute_ir::link::Sources) -> Option<(String, Module)> {
    let tree = cute_syntax::parse(text).ok()?;
    let module = cute_ir::link::link(lower_recovering(&tree), text, path, sources);
    let text = match module.linked.is_empty() {
        true => text.to_string(),
        false => crate::linked::linked_text(text, &module),
    };
    Some((text, module))
}

/// Explores a model; the database memoizes it, the command line does not.
pub type Explorer<'a> = dyn FnMut(&Model, &ExploreOptions) -> Outcome + 'a;

pub fn analyze_text(text: &str, options: &AnalysisOptions) -> Vec<Diagnostic> {
    analyze_text_with(text, options, &mut |m, o| explore(m, o))
}

/// [`analyze_text`] of the file at `path`, with the modules it imports from
/// its package linked in (`cute_ir::link`), read through `sources`.
pub fn analyze_file(path: &std::path::Path, text: &str, options: &AnalysisOptions, sources: &dyn cute_ir::link::Sources) -> Vec<Diagnostic> {
    analyze_linked(Some((path, sources)), text, options, &mut |m, o| explore(m, o))
}

pub fn analyze_text_with(text: &str, options: &AnalysisOptions, explorer: &mut Explorer<'_>) -> Vec<Diagnostic> {
    analyze_linked(None, text, options, explorer)
}

fn analyze_linked(
    file: Option<(&std::path::Path, &dyn cute_ir::link::Sources)>,
    text: &str,
    options: &AnalysisOptions,
    explorer: &mut Explorer<'_>,
) -> Vec<Diagnostic> {
    // Kernels are recognised through imports of `cutlass.cute`, and nothing
    // is reported about a file without kernels: a file that never spells
    // `cute`, or has no decorator that could make a kernel, is not parsed
    // (most Python files of a code base that uses the DSL in places).
    if !text.contains("cute") || !cute_syntax::may_define_kernels(text) {
        return Vec::new();
    }
    let index = LineIndex::new(text);
    let mut diags = match cute_syntax::parse(text) {
        Ok(tree) => {
            let module = lower_recovering(&tree);
            match file {
                Some((path, sources)) => {
                    let module = cute_ir::link::link(module, text, path, sources);
                    if module.linked.is_empty() {
                        analyze_module(text, &index, &module, options, explorer)
                    } else {
                        let linked = crate::linked::linked_text(text, &module);
                        analyze_module(&linked, &LineIndex::new(&linked), &module, options, explorer)
                    }
                }
                None => analyze_module(text, &index, &module, options, explorer),
            }
        }
        Err(e) => vec![analysis_incomplete::file_not_parsed(&e.to_string())],
    };
    diags.retain(|d| !suppress::is_suppressed(d, &index));
    diags.sort_by_key(|d| (d.range.start, d.code));
    diags.dedup();
    diags
}

fn analyze_module(
    text: &str,
    index: &LineIndex,
    module: &Module,
    options: &AnalysisOptions,
    explorer: &mut Explorer<'_>,
) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let kernels: Vec<&FunctionDef> = module.kernels().collect();
    diags.extend(analysis_incomplete::syntax_error_of(module, !kernels.is_empty()));
    let launches = Launches::of_module(module);
    for kernel in kernels {
        let ctx = KernelContext { text, index, module, kernel };
        let launch = launches.of_kernel(module, kernel);
        diags.extend(check_kernel(&ctx, &launch, options, explorer).into_iter().map(|d| crate::linked::relocate(d, module, kernel)));
    }
    diags
}

/// Runs the memory-ordering analysis of a model
/// ([`cute_check::memory::analyze`]); the database memoizes it, the command
/// line does not.
pub type MemoryAnalyzer<'a> = dyn FnMut(&Model) -> Result<Vec<MemoryFinding>, String> + 'a;

/// The checks a kernel's rules run on its models: instantiation,
/// exploration and memory-ordering analysis.
pub struct Checkers<'c, 'a> {
    pub explore: &'c mut Explorer<'a>,
    pub instantiate: &'c mut Instantiator<'a>,
    pub memory: &'c mut MemoryAnalyzer<'a>,
}

/// Everything cute-lsp reports about one kernel.
pub fn check_kernel_with(
    ctx: &KernelContext<'_>,
    launch: &Launch,
    options: &AnalysisOptions,
    checkers: &mut Checkers<'_, '_>,
) -> Vec<Diagnostic> {
    let kept = slice_kernel(ctx.module, ctx.kernel, ctx.text).kept_ids();
    let mut found = check_slice_with(ctx, &kept, launch, options, checkers);
    found.extend(analysis_incomplete::package_not_followed(ctx));
    found
}

/// How a kernel is instantiated under `options`.
pub(crate) fn instantiate_options(options: &AnalysisOptions) -> InstantiateOptions {
    InstantiateOptions { unknown_trip_count: options.unknown_trip_count, workers: options.workers, ..Default::default() }
}

/// [`check_kernel_with`] on the statements `kept` of the kernel's slice.
///
/// What it reports is decided by the models instantiated from the slice
/// (their explorations, memory-ordering analyses and the rules reading
/// them); the kernel's text and positions only shape the diagnostics. The
/// database relies on this to remember kernels found clean by their
/// instantiation key alone.
pub(crate) fn check_slice_with(
    ctx: &KernelContext<'_>,
    kept: &cute_ir::Kept,
    launch: &Launch,
    options: &AnalysisOptions,
    checkers: &mut Checkers<'_, '_>,
) -> Vec<Diagnostic> {
    let mut grid = GridDependency::default();
    let mut progress = ForwardProgress::default();
    let mut diags = check_ways(ctx, kept, launch, options, checkers, &mut grid, &mut progress);
    diags.extend(grid.diagnostics(ctx, launch));
    diags.extend(progress.diagnostics(ctx, options));
    diags
}

/// [`check_slice_with`] but for `read-before-grid-dependency`, whose reads
/// of each way are collected in `grid`: a read before the wait on the path
/// of one way is one whatever the others give.
fn check_ways(
    ctx: &KernelContext<'_>,
    kept: &cute_ir::Kept,
    launch: &Launch,
    options: &AnalysisOptions,
    checkers: &mut Checkers<'_, '_>,
    grid: &mut GridDependency,
    progress: &mut ForwardProgress,
) -> Vec<Diagnostic> {
    let Checkers { explore: explorer, instantiate, memory: memory_analyzer } = checkers;
    let module = ctx.module;
    let kernel = ctx.kernel;
    let inst_options = instantiate_options(options);
    let explore_options = ExploreOptions {
        budget: Budget { max_states: options.max_states, max_time: options.max_time, max_bytes: options.max_bytes },
        full_expansion: false,
    };

    // The runs of warps of each way are kept for the ways after it.
    let reuse = cute_check::Reuse::default();
    let base = instantiate(module, kernel, kept, launch, &Scenario::new(), &inst_options, &reuse);
    // A kernel whose threads ran out of time once, or that met a construct
    // the model does not represent, is not run again per way of deciding
    // its runtime conditions: it is reported as not checked (with the
    // constructs its first run meets; the other ways may meet others).
    let may_branch = !base.model.out_of_time && base.model.unresolved.is_empty();
    // The first run decides every condition as false; each other way runs
    // the threads again, within one statement budget for them all. A verdict
    // needs every way of the conditions the first run met, so none is run
    // when they would not fit. (The first run stops as soon as its count
    // shows it.)
    if may_branch && ways::other_ways_over_budget(&base, &inst_options) {
        let lines: Vec<crate::context::SourceLine> =
            base.open_conditions.iter().take(MAX_OPEN_CONDITIONS).map(|c| ctx.line(c.site.start)).collect();
        let ways = 1 << base.open_conditions.len().min(MAX_OPEN_CONDITIONS);
        return vec![analysis_incomplete::conditions_too_costly(ctx, &lines, ways, inst_options.max_steps_total)];
    }
    let mut first_run = Some(base);
    let mut ways = Ways::new(&inst_options);

    // Ways of deciding the conditions that build the same model are explored
    // and analysed once.
    // (A first run that met no condition is the only way.)
    let single_way = !may_branch || first_run.as_ref().is_some_and(|r| r.open_conditions.is_empty());
    let seen = std::cell::RefCell::new(ModelsSeen { remember: !single_way, seen: Vec::new() });
    let explorer = &mut |model: &Model, o: &ExploreOptions| seen.borrow_mut().explore(model, o, &mut **explorer);
    let memory_analyzer = &mut |model: &Model| seen.borrow_mut().analyze_memory(model, &mut **memory_analyzer);

    // Reasons the verdict is partial, reported together unless a finding
    // with a counterexample makes them moot.
    let mut incomplete: Vec<Diagnostic> = Vec::new();
    // The ways run, each with every condition its run met decided.
    let mut ways_run: Vec<Scenario> = Vec::new();
    // Findings per way run. With conditions on runtime values, a finding is
    // reported only when every way of deciding them has one; otherwise it
    // rests on a guess about the data, and is not reported as a bug.
    let mut per_scenario: Vec<Vec<Diagnostic>> = Vec::new();
    // Memory-ordering findings per way, by its index in `ways_run` (none
    // where the model could not be run: unresolved, deadlocked or over
    // budget).
    let mut memory_per_scenario: Vec<(usize, Vec<Diagnostic>)> = Vec::new();
    // The ways of deciding the runtime conditions share one time budget
    // (each check has its own besides): a kernel with many of them is not
    // checked for seconds per combination.
    let started = std::time::Instant::now();
    let mut ways_not_taken = 0;
    while let Some(way) = ways.next() {
        if !ways_run.is_empty() && started.elapsed() > options.max_time {
            break;
        }
        let run = match first_run.take() {
            Some(first) => first,
            None => instantiate(module, kernel, kept, launch, &way, &inst_options, &reuse),
        };
        let model = run.model;
        let scenario = ways.ran(way, &run.open_conditions, &run.costs, may_branch);
        // The first run decides a test of the ticket each CTA draws alike
        // in every thread, as every condition: where no run deals the
        // tickets so (every CTA the first to arrive), it only served to
        // find the conditions.
        if model.unresolved.is_empty() && ways::no_run_takes(&scenario, ways.met(), model.ctas) {
            ways_not_taken += 1;
            continue;
        }
        ways_run.push(scenario);
        let scenario = ways_run.last().expect("just pushed");
        let this_way = ways_run.len() - 1;
        if !model.unresolved.is_empty() || model.out_of_time {
            grid.not_checked();
        }
        if !model.unresolved.is_empty() {
            // The kernel is not checked, whatever the other ways give: they
            // are not run (the constructs they would meet are not listed).
            incomplete.insert(0, analysis_incomplete::unresolved(ctx, &model));
            return analysis_incomplete::merge(incomplete).into_iter().collect();
        }
        progress.add_way(&model);
        if model.groups.is_empty() {
            // Nothing synchronizes: any two threads that share memory race.
            if !model.memory.is_empty() {
                match crate::memory::diagnostics(ctx, &model, &model.assumptions, memory_analyzer) {
                    Ok((found, early)) => {
                        grid.add_way(&model, early, path_of(ctx, &ways, scenario), &model.assumptions);
                        memory_per_scenario.push((this_way, found))
                    }
                    Err(not_checked) => {
                        grid.not_checked();
                        incomplete.push(not_checked)
                    }
                }
            }
            // Warp collectives (shuffles, votes) synchronize the lanes of a
            // warp without any barrier.
            per_scenario.push(single_lane_collective::diagnostics(ctx, &model));
            continue;
        }
        let mut scenario_notes: Vec<String> = Vec::new();
        for (stmt, taken) in scenario {
            if let Some(c) = ways.met().iter().find(|c| c.stmt == *stmt) {
                scenario_notes.push(format!("assuming the condition at line {} (on {}) is {}", ctx.line(c.site.start), c.why, c.at_site(*taken).describe()));
            }
        }
        // Findings read off the model itself, whatever the interleaving.
        let mut findings: Vec<Diagnostic> = mbarrier_init_hazard::repeated_inits(&model)
            .iter()
            .map(|r| mbarrier_init_hazard::repeated_init_diagnostic(ctx, &model, r))
            .collect();
        findings.extend(
            mbarrier_init_hazard::storage_overruns(&model)
                .into_iter()
                .map(|(site, overruns)| mbarrier_init_hazard::storage_overrun_diagnostic(ctx, site, &overruns, crate::Severity::Error)),
        );
        findings.extend(single_lane_collective::diagnostics(ctx, &model));
        findings.extend(vacuous_wait::stale_tokens(ctx, &model));
        // They rest on what the model assumed (an assumed block decides how
        // many warps elect a lane) as every finding does: a warning that
        // says so.
        {
            let severity = severity_for(&model, &scenario_notes);
            for f in &mut findings {
                f.severity = f.severity.max(severity);
                for note in model.assumptions.iter().chain(&scenario_notes) {
                    if !f.notes.contains(note) {
                        f.notes.push(note.clone());
                    }
                }
            }
        }
        {
            // The model takes announced bytes to arrive; this rule is what
            // checks that they do, so that assumption is not one of its own.
            let mut notes: Vec<String> =
                model.assumptions.iter().filter(|n| !n.contains("transaction bytes")).cloned().collect();
            notes.extend(scenario_notes.iter().cloned());
            let severity = if notes.is_empty() { crate::Severity::Error } else { crate::Severity::Warning };
            for m in tx_count_mismatch::find(&model) {
                findings.push(tx_count_mismatch::diagnostic(ctx, &model, &m, notes.clone(), severity));
            }
        }
        let mut mismatches = arrive_count_mismatch::find(&model);
        for m in &mut mismatches {
            // A repair is offered where the repaired model runs clean.
            arrive_count_mismatch::verify(ctx, &model, m, &mut |repaired| {
                let separated = cute_check::overrun::separate_turns(repaired);
                let outcome = explorer(separated.as_ref().unwrap_or(repaired), &explore_options);
                matches!(outcome.verdict, Verdict::Clean) && outcome.hazards.is_empty()
            });
        }

        let named = NamedFindings::of(&model, options);
        // Groups that take turns at a named barrier: the search above checks
        // that the turns never overlap; everything below runs on the model
        // where each party has a barrier of its own (its generations are
        // then counted as the threads count them).
        let separated = cute_check::overrun::separate_turns(&model);
        let explored = separated.as_ref().unwrap_or(&model);
        let outcome = explorer(explored, &explore_options);
        for (hazard, cex) in outcome.hazards.iter().take(1) {
            let trace = steps_to_related(cute_check::trace::render(explored, cex, options.max_trace_steps));
            let mut hazard = mbarrier_init_hazard::hazard_diagnostic(ctx, explored, hazard, trace, explored.assumptions.clone());
            hazard.severity = severity_for(explored, &scenario_notes);
            findings.push(hazard);
        }
        let mut all_notes = explored.assumptions.clone();
        all_notes.extend(scenario_notes.iter().cloned());
        let severity = severity_for(explored, &scenario_notes);
        match outcome.verdict {
            Verdict::Deadlock(cex) => {
                // The most specific explanation of the hang carries its trace.
                let trace = steps_to_related(cute_check::trace::render(explored, &cex, options.max_trace_steps));
                let named = named.diagnostics(ctx, &model, Some(trace), &all_notes, severity, options);
                if !named.is_empty() {
                    findings.extend(named);
                    for m in &mismatches {
                        findings.push(arrive_count_mismatch::diagnostic(ctx, explored, m, Vec::new(), all_notes.clone(), severity));
                    }
                    per_scenario.push(findings);
                    continue;
                }
                match mismatches.first() {
                    Some(m) => {
                        let trace = steps_to_related(cute_check::trace::render(explored, &cex, options.max_trace_steps));
                        findings.push(arrive_count_mismatch::diagnostic(ctx, explored, m, trace, all_notes.clone(), severity));
                        for m in &mismatches[1..] {
                            findings.push(arrive_count_mismatch::diagnostic(ctx, explored, m, Vec::new(), all_notes.clone(), severity));
                        }
                    }
                    None => match named_barrier_deadlock::explain(explored, &cex) {
                        Some(stuck) => {
                            let trace = steps_to_related(cute_check::trace::render(explored, &cex, options.max_trace_steps));
                            findings.push(named_barrier_deadlock::diagnostic(ctx, explored, &stuck, trace, all_notes.clone(), severity));
                        }
                        None => {
                            let mut found = explain_deadlock(ctx, explored, &cex, scenario_notes, options);
                            // A wait overtaken because a round's arrivals
                            // outnumber the count: the count is the repair.
                            if found.name == vacuous_wait::RULE.name && found.fixes.is_empty() {
                                found.fixes.extend(arrive_count_mismatch::raised_count(ctx, explored, found.range, &mut |repaired| {
                                    let separated = cute_check::overrun::separate_turns(repaired);
                                    let outcome = explorer(separated.as_ref().unwrap_or(repaired), &explore_options);
                                    matches!(outcome.verdict, Verdict::Clean) && outcome.hazards.is_empty()
                                }));
                            }
                            // Commits that signal another CTA's barrier:
                            // its own never completes (a hang), or, where
                            // the other CTA's barrier gets two commits, its
                            // phases run ahead of its waits.
                            if (found.name == deadlock::RULE.name || found.name == vacuous_wait::RULE.name) && found.fixes.is_empty() {
                                found.fixes.extend(deadlock::commit_mask(ctx, explored, &mut |repaired| {
                                    let outcome = explorer(repaired, &explore_options);
                                    matches!(outcome.verdict, Verdict::Clean) && outcome.hazards.is_empty()
                                }));
                            }
                            // A wait for the phase after the one its
                            // arrivals complete (a producer's first wait
                            // written with the consumer's parity).
                            // Clean means the memory analysis too: a
                            // wait flipped to pass before any arrival would
                            // end the hang and order nothing.
                            if found.name == deadlock::RULE.name && found.fixes.is_empty() {
                                found.fixes.extend(deadlock::flipped_parity(ctx, explored, &cex, &mut |repaired| {
                                    let outcome = explorer(repaired, &explore_options);
                                    matches!(outcome.verdict, Verdict::Clean)
                                        && outcome.hazards.is_empty()
                                        && crate::memory::diagnostics(ctx, repaired, &all_notes, memory_analyzer).is_ok_and(|(found, _)| found.is_empty())
                                }));
                            }
                            findings.push(found)
                        }
                    },
                }
                per_scenario.push(findings);
                continue;
            }
            verdict => {
                if matches!(verdict, Verdict::Clean) {
                    match crate::memory::diagnostics(ctx, explored, &all_notes, memory_analyzer) {
                        Ok((found, early)) => {
                            grid.add_way(explored, early, path_of(ctx, &ways, scenario), &explored.assumptions);
                            memory_per_scenario.push((this_way, found))
                        }
                        Err(not_checked) => {
                            grid.not_checked();
                            incomplete.push(not_checked)
                        }
                    }
                }
                for m in &mismatches {
                    findings.push(arrive_count_mismatch::diagnostic(ctx, explored, m, Vec::new(), all_notes.clone(), severity));
                }
                findings.extend(named.diagnostics(ctx, &model, None, &all_notes, severity, options));
                if !findings.is_empty() {
                    per_scenario.push(findings);
                    continue;
                }
                per_scenario.push(Vec::new());
                match verdict {
                    Verdict::Incomplete(reason) => incomplete.push(analysis_incomplete::budget(ctx, &reason, outcome.states)),
                    Verdict::Clean if explored.bounded => incomplete.push(analysis_incomplete::bounded(ctx, &model)),
                    _ => {}
                }
                if named.overrun == cute_check::overrun::Verdict::OutOfBudget {
                    incomplete.push(analysis_incomplete::generations_not_settled(ctx, OVERRUN_STATES));
                }
            }
        }
    }
    if ways_run.len() + ways_not_taken < ways.made() {
        // What the other combinations would give is not known: no finding
        // rests on part of them.
        incomplete.insert(0, analysis_incomplete::conditions_over_budget(ctx, ways_run.len(), ways.made(), options.max_time));
        return analysis_incomplete::merge(incomplete).into_iter().collect();
    }
    let met = ways.met();
    let (mut memory, in_part) = memory_findings(met, &ways_run, memory_per_scenario);
    let depends_on = |c: &cute_check::OpenCondition| {
        analysis_incomplete::depends_on_data(ctx, c.site, &format!("line {} (on {})", ctx.line(c.site.start), c.why))
    };
    // A memory-ordering finding of some ways of deciding the conditions on
    // runtime data and not of others rests on the data: the kernel is
    // checked only in part, naming the condition and what the ways it
    // holds in have.
    if let Some(first) = in_part.first() {
        let on_data: Vec<cute_check::OpenCondition> = met.iter().filter(|c| !c.on_memory).cloned().collect();
        let per_way: Vec<Vec<Diagnostic>> = (0..ways_run.len()).map(|i| in_part.iter().filter(|(_, ways)| ways.contains(&i)).map(|(d, _)| d.clone()).collect()).collect();
        let c = deciding_condition(&on_data, &ways_run, &per_way);
        let mut said = depends_on(c);
        for (d, holds_in) in &in_part {
            let taken = holds_in
                .iter()
                .find_map(|&i| ways_run[i].get(&c.stmt))
                .map_or(String::new(), |t| format!(" with the condition at line {} {}", ctx.line(c.site.start), c.at_site(*t).outcome()));
            said.notes.push(format!("found{taken} only: `{}` at line {}: {}", d.name, ctx.line(d.range.start), d.message));
        }
        said.related.extend(first.0.related.iter().cloned());
        incomplete.insert(0, said);
    }
    // A condition on the counter of a loop whose trip count is not known
    // (`if k == n - 1:` in `for k in range(n)`) is decided once for every
    // iteration of a scenario, which no run does: findings of such
    // scenarios are not evidence.
    let on_unknown_counter = met.iter().find(|c| c.why == cute_check::UNKNOWN_LOOP_COUNTER);
    if let (Some(c), true) = (on_unknown_counter, per_scenario.iter().any(|f| !f.is_empty())) {
        incomplete.insert(0, depends_on(c));
        return analysis_incomplete::merge(incomplete).into_iter().collect();
    }
    // Conditions decided only as false (past what a way decides, or the
    // budget): a finding in every way may rest on them alone.
    if let Some(c) = ways.one_way().first() {
        let one_way = analysis_incomplete::conditions_one_way(ctx, ways.one_way());
        if per_scenario.iter().any(|f| !f.is_empty()) {
            incomplete.insert(0, depends_on(c));
            incomplete[0].notes.push(one_way.message);
            return analysis_incomplete::merge(incomplete).into_iter().collect();
        }
        // A race in every way run is not made up by the conditions left;
        // it is reported as depending on the data.
        for m in &mut memory {
            m.severity = m.severity.max(crate::Severity::Warning);
            m.notes.push(one_way.message.clone());
        }
        incomplete.insert(0, one_way);
    }
    if !per_scenario.is_empty() && per_scenario.iter().all(|f| !f.is_empty()) {
        let mut findings = per_scenario.swap_remove(0);
        if ways_run.len() > 1 {
            for f in &mut findings {
                f.severity = f.severity.max(crate::Severity::Warning);
            }
        }
        findings.extend(memory);
        return findings;
    }
    if !memory.is_empty() && per_scenario.iter().all(|f| f.is_empty()) {
        return memory;
    }
    if per_scenario.iter().any(|f| !f.is_empty()) {
        let c = deciding_condition(met, &ways_run, &per_scenario);
        incomplete.insert(0, depends_on(c));
    }
    analysis_incomplete::merge(incomplete).into_iter().collect()
}

/// The conditions a way decides, where they are and how, for the path a
/// finding of that way takes.
fn path_of(ctx: &KernelContext<'_>, ways: &Ways, scenario: &Scenario) -> Vec<(TextRange, String)> {
    let mut path: Vec<(TextRange, String)> = scenario
        .iter()
        .filter_map(|(stmt, taken)| {
            let c = ways.met().iter().find(|c| c.stmt == *stmt)?;
            Some((c.site, format!("on this path the condition at line {} (on {}) is {}", ctx.line(c.site.start), c.why, c.at_site(*taken).outcome())))
        })
        .collect();
    path.sort_by_key(|(site, _)| *site);
    path
}

/// What exploring a kernel's models and analysing their memory ordering
/// gave, by model. Ways of deciding the kernel's conditions on runtime
/// values often build the same model (a condition that chooses between
/// values its synchronization does not tell apart, or guards accesses that
/// stay the same): half of them on the code bases of BENCHMARKS.md. Such a
/// model is explored and analysed once.
struct ModelsSeen {
    /// Whether models are kept at all (not with one way of deciding).
    remember: bool,
    seen: Vec<Seen>,
}

type Seen = (Model, Option<Outcome>, Option<Result<Vec<MemoryFinding>, String>>);

impl ModelsSeen {
    fn explore(&mut self, model: &Model, options: &ExploreOptions, explorer: &mut Explorer<'_>) -> Outcome {
        match self.entry(model) {
            Some((_, outcome, _)) => outcome.get_or_insert_with(|| explorer(model, options)).clone(),
            None => explorer(model, options),
        }
    }

    fn analyze_memory(&mut self, model: &Model, analyzer: &mut MemoryAnalyzer<'_>) -> Result<Vec<MemoryFinding>, String> {
        match self.entry(model) {
            Some((_, _, found)) => found.get_or_insert_with(|| analyzer(model)).clone(),
            None => analyzer(model),
        }
    }

    /// What is known of `model`, an empty entry for one not seen before
    /// (none when models are not kept).
    fn entry(&mut self, model: &Model) -> Option<&mut Seen> {
        if !self.remember {
            return None;
        }
        let at = match self.seen.iter().position(|(m, ..)| m == model) {
            Some(at) => at,
            None => {
                self.seen.push((model.clone(), None, None));
                self.seen.len() - 1
            }
        };
        Some(&mut self.seen[at])
    }
}

/// The condition a verdict found in some ways of deciding the conditions
/// and not in others depends on: the first met that parts two ways run,
/// alike in every other condition, one with findings and one without; failing
/// that, alike in every other condition both decide (a condition nested under
/// it is decided in one only); the first condition met when none does alone.
/// `per_scenario[i]` holds the findings of `ways[i]`.
fn deciding_condition<'a>(
    met: &'a [cute_check::OpenCondition],
    ways: &[Scenario],
    per_scenario: &[Vec<Diagnostic>],
) -> &'a cute_check::OpenCondition {
    let differ_only_in = |a: &Scenario, b: &Scenario, stmt, both_decide_all: bool| {
        a.get(&stmt).is_some_and(|taken| b.get(&stmt).is_some_and(|other| taken.is_opposite_of(*other)))
            && (!both_decide_all || a.keys().eq(b.keys()))
            && a.iter().all(|(k, v)| *k == stmt || b.get(k).is_none_or(|w| w == v))
    };
    let parts = |stmt, both_decide_all| {
        (0..ways.len()).any(|i| {
            !per_scenario[i].is_empty()
                && (0..ways.len())
                    .any(|j| per_scenario[j].is_empty() && differ_only_in(&ways[i], &ways[j], stmt, both_decide_all))
        })
    };
    [true, false]
        .into_iter()
        .find_map(|both_decide_all| met.iter().find(|c| parts(c.stmt, both_decide_all)))
        .unwrap_or(&met[0])
}

/// What the named-barrier rules read off a model: counts that disagree,
/// barriers that not every required thread reaches, generations that mix.
struct NamedFindings {
    counts: Vec<named_barrier_count_mismatch::CountMismatch>,
    divergent: Vec<divergent_barrier::Divergent>,
    oversubscribed: Vec<barrier_recycling::Oversubscribed>,
    overrun: cute_check::overrun::Verdict,
}

/// States the search for mixed generations may visit.
const OVERRUN_STATES: usize = 100_000;

impl NamedFindings {
    fn of(model: &Model, options: &AnalysisOptions) -> NamedFindings {
        let counts = named_barrier_count_mismatch::find(model);
        let divergent = divergent_barrier::find(model);
        let mut oversubscribed = barrier_recycling::oversubscribed(model);
        // A generation whose counts disagree is one finding, not two.
        oversubscribed.retain(|o| !counts.iter().any(|c| c.cta == o.cta && c.id == o.id));
        // With counts that disagree or threads missing, the model's counts
        // are somebody's guess: the generations are not worth following.
        let overrun = if counts.is_empty() && divergent.is_empty() && oversubscribed.is_empty() {
            let budget = Budget { max_states: options.max_states.min(OVERRUN_STATES), max_time: options.max_time, max_bytes: options.max_bytes };
            cute_check::overrun::find(model, &budget)
        } else {
            cute_check::overrun::Verdict::Clear
        };
        NamedFindings { counts, divergent, oversubscribed, overrun }
    }

    /// The diagnostics, the first carrying `trace` (a deadlock's), if any.
    fn diagnostics(
        &self,
        ctx: &KernelContext<'_>,
        model: &Model,
        mut trace: Option<Vec<Related>>,
        notes: &[String],
        severity: crate::Severity,
        options: &AnalysisOptions,
    ) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        for m in &self.counts {
            out.push(named_barrier_count_mismatch::diagnostic(ctx, model, m, trace.take().unwrap_or_default(), notes.to_vec(), severity));
        }
        for d in &self.divergent {
            out.push(divergent_barrier::diagnostic(ctx, model, d, trace.take().unwrap_or_default(), notes.to_vec(), severity));
        }
        for o in &self.oversubscribed {
            out.push(barrier_recycling::oversubscribed_diagnostic(ctx, model, o, trace.take().unwrap_or_default(), notes.to_vec(), severity));
        }
        if let cute_check::overrun::Verdict::Found(o) = &self.overrun {
            out.push(barrier_recycling::overrun_diagnostic(ctx, model, o, options.max_trace_steps, notes.to_vec(), severity));
        }
        out
    }
}

/// The memory-ordering findings that hold whatever the data: for every way
/// of deciding the conditions on runtime data, some way of deciding the
/// branches on values read from synchronization variables (which only
/// timing decides, so each way happens) has them. Then those that hold only
/// for some of the data, each with the ways (by index in `ways`) that have
/// it: not reported as bugs, but never dropped in silence (`check_ways`).
type InPart = Vec<(Diagnostic, Vec<usize>)>;

fn memory_findings(met: &[cute_check::OpenCondition], ways: &[Scenario], per_scenario: Vec<(usize, Vec<Diagnostic>)>) -> (Vec<Diagnostic>, InPart) {
    use std::collections::BTreeMap;
    if per_scenario.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let on_data = |scenario: &Scenario| -> Vec<(cute_ir::ast::StmtId, cute_check::Decision)> {
        scenario
            .iter()
            .filter(|(stmt, _)| met.iter().any(|c| c.stmt == **stmt && !c.on_memory))
            .map(|(k, v)| (*k, *v))
            .collect()
    };
    // Per way of deciding the data: the findings of its ways, and the ways.
    let mut groups: BTreeMap<Vec<(cute_ir::ast::StmtId, cute_check::Decision)>, (Vec<Diagnostic>, Vec<usize>)> = BTreeMap::new();
    for (way, diags) in per_scenario {
        let (union, members) = groups.entry(on_data(&ways[way])).or_default();
        members.push(way);
        for d in diags {
            if !union.iter().any(|u| u.name == d.name && u.range == d.range) {
                union.push(d);
            }
        }
    }
    let depends_on_data = groups.len() > 1;
    let groups: Vec<(Vec<Diagnostic>, Vec<usize>)> = groups.into_values().collect();
    let same = |u: &Diagnostic, d: &Diagnostic| u.name == d.name && u.range == d.range;
    let mut everywhere = Vec::new();
    let mut in_part: InPart = Vec::new();
    for (union, _) in &groups {
        for d in union {
            let holds_in: Vec<usize> = groups.iter().filter(|(g, _)| g.iter().any(|u| same(u, d))).flat_map(|(_, w)| w.iter().copied()).collect();
            if holds_in.len() == groups.iter().map(|(_, w)| w.len()).sum::<usize>() {
                if !everywhere.iter().any(|u| same(u, d)) {
                    let mut d = d.clone();
                    if depends_on_data {
                        d.severity = d.severity.max(crate::Severity::Warning);
                    }
                    everywhere.push(d);
                }
            } else if !in_part.iter().any(|(u, _)| same(u, d)) {
                in_part.push((d.clone(), holds_in));
            }
        }
    }
    (everywhere, in_part)
}

/// A deadlock is an untoggled phase when a wait of the kernel mistreats its
/// parity; otherwise it is reported as a deadlock.
fn explain_deadlock(
    ctx: &KernelContext<'_>,
    model: &Model,
    cex: &Counterexample,
    mut notes: Vec<String>,
    options: &AnalysisOptions,
) -> Diagnostic {
    let steps = cute_check::trace::render(model, cex, options.max_trace_steps);
    let related = steps_to_related(steps);
    notes.splice(0..0, model.assumptions.iter().cloned());
    let severity = severity_for(model, &notes);

    // A thread that waits on the same barrier twice in a row with the same
    // parity did not flip it in between: that wait is the one to blame.
    let mut repeated: Vec<TextRange> = Vec::new();
    for group in &model.groups {
        let mut last: std::collections::HashMap<u32, u8> = Default::default();
        for op in &group.ops {
            if let OpKind::Wait { bar, parity } = op.kind {
                if last.insert(bar, parity) == Some(parity) && model.barriers[bar as usize].preset_count.is_none() {
                    repeated.push(op.site);
                }
            }
        }
    }
    repeated.sort();
    repeated.dedup();
    for site in &repeated {
        let Some(call) = ctx.call_at(*site) else { continue };
        let cause = match Api::of_call(call) {
            Some(Api::MbarrierWait) => untoggled_phase::cause_of(ctx, call),
            // A participant's `wait()`/`acquire()` is a method the API table
            // does not name; only a pipeline wait leaves a wait at its site.
            Some(Api::Pipeline) | None => untoggled_phase::pipeline_cause_of(ctx, call),
            _ => continue,
        };
        return untoggled_phase::diagnostic(ctx, call, cause.as_ref(), related, notes, severity);
    }
    // A pipeline used out of its role (a tail run twice or by a consumer, a
    // release with no wait) is named before the phase arithmetic it upsets;
    // a partner gone from the ring, after it (`deadlock::diagnostic`).
    if deadlock::pipeline_role(ctx, model, cex, false).is_some() {
        return deadlock::diagnostic(ctx, model, cex, related, notes, severity);
    }
    if let Some(d) = vacuous_wait::diagnostic(ctx, model, cex, related.clone(), notes.clone(), severity) {
        return d;
    }
    deadlock::diagnostic(ctx, model, cex, related, notes, severity)
}

/// Instantiates a kernel's slice for one way of deciding its conditions
/// ([`cute_check::instantiate_reusing`], taking up the runs of warps the
/// kernel's earlier ways kept in the `Reuse`); the database memoizes it,
/// the command line does not.
pub type Instantiator<'a> = dyn FnMut(
        &Module,
        &FunctionDef,
        &cute_ir::Kept,
        &Launch,
        &Scenario,
        &InstantiateOptions,
        &cute_check::Reuse,
    ) -> cute_check::Instantiated
    + 'a;

/// [`check_kernel_with`], instantiating directly.
pub fn check_kernel(
    ctx: &KernelContext<'_>,
    launch: &Launch,
    options: &AnalysisOptions,
    explorer: &mut Explorer<'_>,
) -> Vec<Diagnostic> {
    let mut checkers = Checkers {
        explore: explorer,
        instantiate: &mut |m, k, kept, l, s, o, reuse| cute_check::instantiate_reusing(m, k, kept, l, s, o, Some(reuse)),
        memory: &mut |m| cute_check::memory::analyze(m),
    };
    check_kernel_with(ctx, launch, options, &mut checkers)
}
