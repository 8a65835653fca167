//! CUTE060 forward-progress: an inter-CTA spin wait whose termination needs a progress guarantee CUDA does not
//! give. See `forward_progress.md` for the three progress models and the verdict each gives.
//!
//! The waits come from `cute_check::progress`, over the model of every way
//! of deciding the kernel's runtime conditions; how many CTAs fit at once
//! comes from its table of GPUs, for the target (`target`, else
//! `CUTE_DSL_ARCH`, else `sm_90a`). A wait is judged against the grid:
//! a grid no larger than what is sure to be resident (one CTA per SM, or
//! `min_blocks_per_mp`), a cooperative launch, or a grid computed from the
//! device's SM count or maximum of active clusters (the persistent idiom)
//! fits, and nothing is reported. Otherwise an all-to-all barrier or a chain
//! waiting for later CTAs hangs under OBE, what CUDA gives (an error when
//! the grid exceeds what can ever be resident, a warning when only the
//! registers the compiler allots decide it); a chain waiting for earlier
//! CTAs relies on in-order start, LOBE, which CUDA does not promise (a
//! warning). A wait on a ticket terminates under OBE; a wait whose CTA, or
//! whose grid, is not known statically is reported as `analysis-incomplete`.

use cute_check::model::Model;
use cute_check::progress::{self, InterCtaWait, ProgressModel, WaitShape};
use cute_syntax::TextRange;

use super::{analysis_incomplete, Rule};
use crate::context::KernelContext;
use crate::{AnalysisOptions, Diagnostic, Related, Severity};

pub const RULE: Rule = Rule {
    code: "CUTE060",
    name: "forward-progress",
    default_severity: Severity::Error,
    summary: "an inter-CTA spin wait needs CTAs to be co-resident, or to start in block-index order, in a grid that can exceed what fits at once",
    doc: include_str!("forward_progress.md"),
};

/// The target taken when none is configured and `CUTE_DSL_ARCH` is not set.
const DEFAULT_TARGET: &str = "sm_90a";

/// The inter-CTA waits of every way of one kernel.
#[derive(Default)]
pub(crate) struct ForwardProgress {
    waits: Vec<InterCtaWait>,
    /// The first model's launch: grid, block, assumptions.
    model: Option<Model>,
}

impl ForwardProgress {
    pub(crate) fn add_way(&mut self, model: &Model) {
        for w in progress::inter_cta_waits(model) {
            if !self.waits.contains(&w) {
                self.waits.push(w);
            }
        }
        if self.model.is_none() && !self.waits.is_empty() {
            // Only what the launch gives is read: the operations are not.
            self.model = Some(Model { groups: Vec::new(), memory: Vec::new(), barrier_uses: Vec::new(), ..model.clone() });
        }
    }

    pub(crate) fn diagnostics(self, ctx: &KernelContext<'_>, options: &AnalysisOptions) -> Vec<Diagnostic> {
        let Some(model) = self.model else { return Vec::new() };
        let residency = &model.grid.residency;
        // Every CTA is resident at once, or the launch fails.
        if residency.cooperative || residency.from_device.is_some() {
            return Vec::new();
        }
        let mut notes: Vec<String> = Vec::new();
        let arch = target_arch(options, &mut notes);
        let fits = progress::residency(arch, model.threads_per_cta, residency.smem, residency.min_blocks_per_mp);
        notes.push(format!("at most {} CTAs are resident at once: {}", fits.max, fits.how));
        if residency.smem.is_none() {
            notes.push("the launch gives no `smem=`: shared memory is not counted against residency".to_string());
        }
        if model.block_assumed {
            notes.extend(model.assumptions.iter().filter(|a| a.contains("threads per CTA")).cloned());
        }
        let kernel = ctx.kernel.display_name();
        let mut out: Vec<Diagnostic> = Vec::new();
        let mut undecided: Vec<(TextRange, String)> = Vec::new();
        // The strongest shape at each site.
        let mut waits = self.waits;
        waits.sort_by_key(|w| (w.site, w.shape, w.waiter));
        for w in &waits {
            if out.iter().any(|d| d.range == w.site) || undecided.iter().any(|(s, _)| *s == w.site) {
                continue;
            }
            // Waits by one CTA alone leave the others free to finish and
            // make room: only a role many CTAs take can fill the GPU.
            // (CTAs that wait at this site by static index, in either
            // direction: pairs that exchange flags fill the GPU as well.)
            let static_index = |s: WaitShape| matches!(s, WaitShape::Later | WaitShape::Earlier);
            let mut waiters: Vec<u64> = waits
                .iter()
                .filter(|o| o.site == w.site && (o.shape == w.shape || static_index(o.shape) && static_index(w.shape)))
                .map(|o| o.waiter)
                .collect();
            waiters.sort();
            waiters.dedup();
            let many = waiters.len() >= 2 || w.shape == WaitShape::AllToAll;
            // What terminates under OBE, what CUDA gives, is not reported.
            if w.shape.terminates(ProgressModel::Obe) == Some(true) || !many {
                continue;
            }
            let Some(grid) = model.grid.ctas() else {
                undecided.push((
                    w.site,
                    format!(
                        "whether the CTAs of `{kernel}` waiting on `{}` here all make progress was not decided: the grid of its launch is not known statically",
                        w.buffer
                    ),
                ));
                continue;
            };
            if grid <= fits.min {
                continue;
            }
            if w.shape == WaitShape::Unknown {
                undecided.push((
                    w.site,
                    format!(
                        "whether the CTAs of `{kernel}` waiting on `{}` here all make progress was not decided: the CTA each waits for is known neither by block index nor by a ticket drawn from a counter",
                        w.buffer
                    ),
                ));
                continue;
            }
            out.push(diagnostic(ctx, w, &waiters, grid, &fits, &notes, &model));
        }
        for (site, message) in undecided {
            out.push(analysis_incomplete::progress_not_decided(site, message, notes.clone()));
        }
        out
    }
}

/// The GPU of the target (`target`, else `CUTE_DSL_ARCH`, else
/// [`DEFAULT_TARGET`]); one not in the table is said in `notes`.
fn target_arch(options: &AnalysisOptions, notes: &mut Vec<String>) -> &'static progress::Arch {
    let target = options.target.clone().or_else(|| std::env::var("CUTE_DSL_ARCH").ok()).unwrap_or_else(|| DEFAULT_TARGET.to_string());
    progress::arch(&target).unwrap_or_else(|| {
        notes.push(format!("the target `{target}` is not in the table of GPUs: taking {DEFAULT_TARGET}'s"));
        progress::arch(DEFAULT_TARGET).expect("the default target is in the table")
    })
}

/// What an editor shows on hover over the read an inter-CTA spin waits on
/// (`hover.rs`): whom it waits for, and whether the grid lets it end, with
/// what that rests on. A grid computed from the device (the persistent
/// idiom) is taken to fit, and the hover says that it is an assumption,
/// which no diagnostic does on a kernel that is clean.
pub(crate) fn describe_wait(model: &Model, site: TextRange, options: &AnalysisOptions) -> Option<String> {
    let w = progress::inter_cta_waits(model).into_iter().find(|w| w.site == site)?;
    let buffer = &w.buffer;
    let shape = match w.shape {
        WaitShape::AllToAll => format!("every CTA arrives on `{buffer}` and waits here for every other (a grid barrier)"),
        WaitShape::Later => format!("CTAs wait here for a CTA of a higher block index to set `{buffer}`"),
        WaitShape::Earlier => format!("CTAs wait here for a CTA of a lower block index to set `{buffer}`"),
        WaitShape::Ticket => format!("each CTA waits here for the CTA that drew the ticket before its own to set `{buffer}`: that CTA has started"),
        WaitShape::Unknown => format!("CTAs wait here on `{buffer}` for a CTA known neither by block index nor by a ticket"),
    };
    let residency = &model.grid.residency;
    let mut notes = Vec::new();
    let arch = target_arch(options, &mut notes);
    let fits = progress::residency(arch, model.threads_per_cta, residency.smem, residency.min_blocks_per_mp);
    let verdict = if w.shape.terminates(ProgressModel::Obe) == Some(true) {
        "It terminates under OBE, what CUDA gives, whatever the grid.".to_string()
    } else if residency.cooperative {
        "The launch is cooperative: every CTA is resident at once (or the launch fails), so it terminates.".to_string()
    } else if let Some(from) = &residency.from_device {
        format!(
            "**Assumed** to terminate: the grid is computed from `{from}` (the persistent idiom), taken to be at most the {} CTAs that fit at once on {} ({}), so every CTA is resident. A grid larger than what fits would hang under OBE.",
            fits.max, arch.name, fits.how
        )
    } else {
        match model.grid.ctas() {
            Some(grid) if grid <= fits.min => format!("All {grid} CTAs of the grid are resident at once ({}), so it terminates.", fits.how),
            Some(grid) => format!("The grid has {grid} CTAs and at most {} are resident at once ({}): see `forward-progress`. {}.", fits.max, fits.how, verdicts(w.shape)),
            None => "The grid is not known statically: whether every CTA it waits for can run is not decided.".to_string(),
        }
    };
    let notes: String = notes.iter().map(|n| format!("\n\n_{n}_")).collect();
    Some(format!("**inter-CTA wait** in `{}`: {shape}.\n\n{verdict}{notes}", model.kernel))
}

fn diagnostic(
    ctx: &KernelContext<'_>,
    w: &InterCtaWait,
    waiters: &[u64],
    grid: u64,
    fits: &progress::Residency,
    notes: &[String],
    model: &Model,
) -> Diagnostic {
    let kernel = ctx.kernel.display_name();
    let certain = grid > fits.max;
    let resident = if certain { fits.max } else { fits.min };
    let bound = if certain {
        format!("at most {} of its {grid} CTAs are resident at once", fits.max)
    } else {
        format!(
            "only {} of its {grid} CTAs are sure to be resident at once (up to {} fit, as the registers the compiler allots allow)",
            fits.min, fits.max
        )
    };
    let buffer = &w.buffer;
    let models = verdicts(w.shape);
    let (message, help, label) = match w.shape {
        WaitShape::AllToAll => (
            format!("`{kernel}`: every CTA waits here until all {grid} CTAs of the grid have arrived on `{buffer}`, but {bound}: the resident CTAs spin while the others cannot start"),
            format!("launch with `cooperative=True` (the launch then fails rather than hangs when the grid does not fit), or size the grid to at most {} CTAs, the persistent idiom (`max_active_clusters`)", fits.min),
            "grid barrier in a grid that can exceed residency",
        ),
        WaitShape::Later => (
            format!("`{kernel}`: CTAs wait here for a CTA of a higher block index to set `{buffer}`, but {bound}: when every resident CTA waits for one that has not started, none finishes to make room"),
            "wait only for CTAs that took a ticket before this one (draw the index from a global counter with `atomic_add`), or size the grid to what fits at once".to_string(),
            "waits for a later CTA that may not have started",
        ),
        _ => (
            format!("`{kernel}`: CTAs wait here for a CTA of a lower block index to set `{buffer}`, but {bound}: this terminates only if CTAs start in block-index order, which CUDA does not promise"),
            "draw the index from a global counter (`ticket = atomic_add(counter, 1)`) and wait for the CTA with the ticket before: it has started".to_string(),
            "relies on CTAs starting in block-index order",
        ),
    };
    // LOBE alone saves a chain on earlier CTAs; registers alone decide the
    // others when the grid could fit.
    let lobe_saves = w.shape.terminates(ProgressModel::Lobe) == Some(true);
    let severity = if lobe_saves || !certain || model.block_assumed { Severity::Warning } else { RULE.default_severity };
    let mut related = Vec::new();
    let spinning = if w.shape == WaitShape::AllToAll {
        format!("CTAs 0..{} are resident: each arrives on `{buffer}` and spins here for the {} that have not started", resident - 1, grid - resident)
    } else {
        let shown: Vec<String> = waiters.iter().take(3).map(u64::to_string).collect();
        format!("CTAs {} (the role every CTA of the grid but a few takes) spin here; a resident set of {resident} such CTAs fills the GPU", shown.join(", "))
    };
    related.push(Related { range: w.site, message: spinning, file: None, event: None });
    let (idx, site) = w.waited.iter().max_by_key(|(b, _)| *b).copied().unwrap_or((0, w.site));
    let cannot_start = match w.shape {
        WaitShape::AllToAll => format!("CTA {resident} and the CTAs after it arrive here, but never start: no resident CTA finishes to make room"),
        WaitShape::Later => format!("CTA {idx} sets `{buffer}` here for the CTA before it, but has not started: the resident CTAs wait for it and none finishes"),
        _ => format!("CTA {idx} sets `{buffer}` here: under OBE the CTAs it waits for may be the ones that have not started while later CTAs fill the GPU"),
    };
    related.push(Related { range: site, message: cannot_start, file: None, event: None });
    let mut notes = notes.to_vec();
    notes.insert(0, models);
    Diagnostic {
        code: RULE.code,
        name: RULE.name,
        severity,
        message,
        range: w.site,
        label: label.to_string(),
        related,
        notes,
        help: Some(help),
        fixes: Vec::new(),
    }
}

/// Which progress models the wait hangs under and which it terminates
/// under (`WaitShape::terminates`), as a note.
fn verdicts(shape: WaitShape) -> String {
    let described = |m: ProgressModel| match m {
        ProgressModel::Obe => "OBE (what CUDA gives: a CTA that has started keeps running, one that has not starts only when a resident one finishes, in no promised order)",
        ProgressModel::Lobe => "LOBE (CTAs start in block-index order)",
        ProgressModel::Hsa => "HSA (only the lowest-indexed unfinished CTA is sure to progress)",
    };
    let under = |terminates: bool| -> Vec<&str> {
        ProgressModel::ALL.into_iter().filter(|m| shape.terminates(*m) == Some(terminates)).map(described).collect()
    };
    let list = |names: Vec<&str>| match names.len() {
        0 => "none".to_string(),
        1 => names[0].to_string(),
        n => format!("{} and {}", names[..n - 1].join(", "), names[n - 1]),
    };
    let hangs = under(false);
    let terminates = under(true);
    if terminates.is_empty() {
        format!("progress models: it hangs under {}; it terminates only when the whole grid is resident at once", list(hangs))
    } else {
        format!("progress models: it hangs under {}; it terminates under {}", list(hangs), list(terminates))
    }
}
