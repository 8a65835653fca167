//! What an editor shows on hover over a synchronization call: the protocol of
//! the barrier it touches, as the checker models it (who initialises it and
//! with which count, which sites arrive and how often, who waits on which
//! parity), so the reason behind a diagnostic can be read at any call; over
//! the read an inter-CTA spin waits on, whom it waits for and whether the
//! grid lets it end (`forward_progress::describe_wait`). Like
//! code actions, it is recomputed from the current text, never taken from the
//! client.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use cute_check::model::{describe_threads, Barrier, BarrierKind, Model, OpKind};
use cute_check::{instantiate, Scenario};
use cute_ir::api::Api;
use cute_ir::ast::{Call, StmtKind};
use cute_ir::launch::Launches;
use cute_ir::{lower_recovering, slice_kernel};
use cute_syntax::{LineIndex, TextRange};

use crate::context::KernelContext;
use crate::AnalysisOptions;

/// Markdown describing the call at `range`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hover {
    pub range: TextRange,
    pub markdown: String,
}

/// Calls that create barrier operations in the model.
fn is_sync_call(call: &Call) -> bool {
    matches!(
        Api::of_call(call),
        Some(
            Api::MbarrierInit
                | Api::MbarrierArrive
                | Api::MbarrierArriveAndExpectTx
                | Api::MbarrierWait
                | Api::SyncThreads
                | Api::Barrier
                | Api::BarrierArrive
                | Api::ClusterArrive
                | Api::ClusterArriveRelaxed
                | Api::ClusterWait
                | Api::Pipeline
        )
    )
}

/// Threads of one cluster as (CTA, thread index in the CTA).
type Threads = BTreeSet<(u32, u32)>;

/// At most this many rows per kind of operation, and barriers per hover.
const MAX_ROWS: usize = 6;
const MAX_BARRIERS: usize = 3;

/// The hover for the synchronization call under `offset`, if there is one.
pub fn hover(text: &str, offset: u32, options: &AnalysisOptions) -> Option<Hover> {
    let tree = cute_syntax::parse(text).ok()?;
    let module = lower_recovering(&tree);
    let index = LineIndex::new(text);
    let function = module
        .functions
        .iter()
        .filter(|f| f.range.start <= offset && offset <= f.range.end)
        .min_by_key(|f| f.range.len())?;
    let ctx = KernelContext { text, index: &index, module: &module, kernel: function };
    let (_, chain) = ctx.ancestors(TextRange { start: offset, end: offset })?;
    let mut calls = Vec::new();
    match &chain.last()?.kind {
        StmtKind::Expr(e) | StmtKind::Assign { value: e, .. } | StmtKind::AugAssign { value: e, .. } => e.calls(&mut calls),
        StmtKind::If { cond: e, .. } | StmtKind::While { cond: e, .. } => e.calls(&mut calls),
        StmtKind::Return(Some(e)) => e.calls(&mut calls),
        _ => {}
    }
    // A load or atomic an inter-CTA spin waits on gets the wait's progress.
    let reads_counter = |c: &Call| matches!(Api::of_call(c), Some(Api::Load | Api::Atomic));
    let call = calls
        .into_iter()
        .filter(|c| c.range.start <= offset && offset <= c.range.end && (is_sync_call(c) || reads_counter(c)))
        .min_by_key(|c| c.range.len())?;
    let site = call.range;

    // A call in a helper runs in whichever kernel calls it.
    let in_kernel = module.kernels().any(|k| std::ptr::eq(k, function));
    let kernels: Vec<_> = if in_kernel { vec![function] } else { module.kernels().collect() };
    let launches = Launches::of_module(&module);
    let inst_options = crate::analysis::instantiate_options(options);
    for kernel in kernels {
        let slice = slice_kernel(&module, kernel, text);
        let launch = launches.of_kernel(&module, kernel);
        let model = instantiate(&module, kernel, &slice.kept_ids(), &launch, &Scenario::new(), &inst_options).model;
        if let Some(u) = model.unresolved.iter().find(|u| u.site == site) {
            let markdown = format!(
                "**{}** in `{}`: not modelled, because {}.",
                callee(text, call),
                model.kernel,
                u.what
            );
            return Some(Hover { range: site, markdown });
        }
        if reads_counter(call) {
            if let Some(markdown) = crate::rules::forward_progress::describe_wait(&model, site, options) {
                return Some(Hover { range: site, markdown });
            }
            continue;
        }
        let markdown = describe(&model, site, &index, (!in_kernel).then_some(model.kernel.as_str()));
        if let Some(markdown) = markdown {
            return Some(Hover { range: site, markdown });
        }
    }
    None
}

/// `cute.arch.mbarrier_wait` of a call, for headings.
fn callee(text: &str, call: &Call) -> String {
    let name = call.func.dotted().unwrap_or_else(|| {
        let s = text.get(call.range.start as usize..call.range.end as usize).unwrap_or("");
        s.split('(').next().unwrap_or(s).trim().to_string()
    });
    format!("`{name}`")
}

/// The kind and name of a barrier; several barriers of a CTA can share them
/// (`bars + s` for each stage `s`).
fn kind_and_name(b: &Barrier) -> (String, String) {
    let kind = match b.kind {
        BarrierKind::Mbarrier => "mbarrier".to_string(),
        BarrierKind::CtaBarrier => "CTA barrier".to_string(),
        BarrierKind::NamedBarrier(id) => format!("named barrier {id}"),
        BarrierKind::ClusterBarrier => "cluster barrier".to_string(),
    };
    (kind, b.name.clone())
}

/// Barriers that are the same object in each CTA: the `j`-th barrier of a
/// kind and name in every CTA (barriers are numbered in the order threads
/// first use them, which is the same in every CTA). Returns each barrier's
/// family as (kind, name, j).
fn families(model: &Model) -> Vec<(String, String, usize)> {
    let mut seen: BTreeMap<(String, String, u32), usize> = BTreeMap::new();
    model
        .barriers
        .iter()
        .map(|b| {
            let (kind, name) = kind_and_name(b);
            let j = seen.entry((kind.clone(), name.clone(), b.cta)).or_default();
            *j += 1;
            (kind, name, *j - 1)
        })
        .collect()
}

fn title(b: &Barrier) -> String {
    match b.kind {
        BarrierKind::Mbarrier => format!("mbarrier `{}`", b.name),
        BarrierKind::CtaBarrier => "the CTA barrier (`sync_threads`)".to_string(),
        BarrierKind::NamedBarrier(id) => format!("named barrier {id}"),
        BarrierKind::ClusterBarrier => "the cluster barrier".to_string(),
    }
}

/// "warps 0..3 of each CTA" when every CTA has the same threads, else the
/// per-CTA list.
fn who(threads: &Threads, ctas: u32) -> String {
    let per_cta: BTreeMap<u32, BTreeSet<u32>> = threads.iter().fold(BTreeMap::new(), |mut m, &(c, t)| {
        m.entry(c).or_default().insert(t);
        m
    });
    if ctas > 1 && per_cta.len() == ctas as usize && per_cta.values().all(|s| Some(s) == per_cta.values().next()) {
        let one: Vec<(u32, u32)> = per_cta.values().next().into_iter().flatten().map(|&t| (0, t)).collect();
        return format!("{} of each CTA", describe_threads(&one, 1));
    }
    let all: Vec<(u32, u32)> = threads.iter().copied().collect();
    describe_threads(&all, ctas)
}

fn times(n: usize) -> String {
    match n {
        1 => "once".to_string(),
        2 => "twice".to_string(),
        n => format!("{n} times"),
    }
}

/// "parity 0 every time", "parity 0, 1, 0, ... (flips each time)", or the list.
fn parities(seq: &[u8]) -> String {
    let n = seq.len();
    let count = if n == 1 { "1 wait".to_string() } else { format!("{n} waits") };
    if seq.iter().all(|&p| p == seq[0]) {
        return if n == 1 { format!("parity {}", seq[0]) } else { format!("parity {} every time ({count})", seq[0]) };
    }
    let shown: Vec<String> = seq.iter().take(8).map(u8::to_string).collect();
    let more = if n > 8 { ", ..." } else { "" };
    let flips = seq.windows(2).all(|w| w[0] != w[1]);
    let how = if flips { format!("flips each time, {count}") } else { count };
    format!("parities {}{more} ({how})", shown.join(", "))
}

fn line(index: &LineIndex, site: TextRange) -> u32 {
    index.line_of(site.start) + 1
}

fn describe(model: &Model, site: TextRange, index: &LineIndex, kernel: Option<&str>) -> Option<String> {
    let family_of = families(model);
    // The families the call touches, in order of first appearance.
    let mut touched: Vec<&(String, String, usize)> = Vec::new();
    for g in &model.groups {
        for op in g.ops.iter().filter(|o| o.site == site) {
            let bar = match op.kind {
                OpKind::Init { bar, .. } | OpKind::Arrive { bar, .. } | OpKind::Wait { bar, .. } => bar,
            };
            let f = &family_of[bar as usize];
            if !touched.contains(&f) {
                touched.push(f);
            }
        }
    }
    if touched.is_empty() {
        return None;
    }
    // Families with the same protocol (the stages of a pipeline) are shown once.
    let mut shown: Vec<(String, String, Vec<usize>, String)> = Vec::new();
    for fam in &touched {
        let members: Vec<u32> = (0..model.barriers.len() as u32).filter(|&b| family_of[b as usize] == **fam).collect();
        let body = protocol(model, &members, site, index);
        match shown.iter_mut().find(|(kind, name, _, other)| (kind, name, other) == (&fam.0, &fam.1, &body)) {
            Some(entry) => entry.2.push(fam.2),
            None => shown.push((fam.0.clone(), fam.1.clone(), vec![fam.2], body)),
        }
    }
    let ctas = model.ctas.max(1);
    let mut out = String::new();
    for (kind, name, ordinals, body) in shown.iter().take(MAX_BARRIERS) {
        let first = family_of.iter().position(|f| (&f.0, &f.1, f.2) == (kind, name, ordinals[0])).unwrap();
        let first = &model.barriers[first];
        let _ = write!(out, "**{}**", title(first));
        if let Some(k) = kernel {
            let _ = write!(out, " in `{k}`");
        }
        let same_name = family_of.iter().filter(|f| (&f.0, &f.1) == (kind, name)).map(|f| f.2).max().unwrap_or(0) + 1;
        let mut about = Vec::new();
        if ordinals.len() > 1 {
            about.push(format!("{} barriers of this name, each with this protocol", ordinals.len()));
        } else if same_name > 1 {
            about.push(format!("barrier {} of the {same_name} of this name", ordinals[0] + 1));
        }
        if per_cta(first) && ctas > 1 {
            about.push(format!("one in each of {ctas} CTAs"));
        }
        if !about.is_empty() {
            let _ = write!(out, ": {}", about.join("; "));
        }
        let _ = writeln!(out, " ({} threads per CTA)\n", model.threads_per_cta);
        let _ = writeln!(out, "{body}\n");
    }
    if shown.len() > MAX_BARRIERS {
        let _ = writeln!(out, "... and {} more barriers\n", shown.len() - MAX_BARRIERS);
    }
    if !model.assumptions.is_empty() {
        let _ = writeln!(out, "Assuming {}.", model.assumptions.join("; "));
    }
    if model.bounded {
        let _ = writeln!(out, "Loops without a known trip count are cut at a bound.");
    }
    Some(out.trim_end().to_string())
}

/// Barriers that exist once per CTA (the cluster barrier exists once).
fn per_cta(b: &Barrier) -> bool {
    matches!(b.kind, BarrierKind::Mbarrier | BarrierKind::CtaBarrier | BarrierKind::NamedBarrier(_))
}

/// The rows of one family: its init or preset count, each arrive site, each
/// wait site with its parities, and the phases the arrivals complete.
fn protocol(model: &Model, members: &[u32], site: TextRange, index: &LineIndex) -> String {
    let ctas = model.ctas.max(1);
    let first = &model.barriers[members[0] as usize];
    let per_cta = per_cta(first);
    let mut out = String::new();
    // Per site: who, and what. Arrivals and inits are counted per thread.
    // Init sites: who, with which counts.
    let mut inits: BTreeMap<TextRange, (Threads, BTreeSet<u32>)> = BTreeMap::new();
    // Arrive sites by (site, count, lands on another CTA): who, how often per thread.
    let mut arrives: BTreeMap<(TextRange, u32, bool), (Threads, usize)> = BTreeMap::new();
    // Wait sites by (site, parities in order): who.
    let mut waits: BTreeMap<(TextRange, Vec<u8>), Threads> = BTreeMap::new();
    // Arrivals each barrier of the family receives over the whole kernel.
    let mut received: BTreeMap<u32, u64> = BTreeMap::new();
    let mut expected: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
    for g in &model.groups {
        let mut seqs: BTreeMap<TextRange, Vec<u8>> = BTreeMap::new();
        // By (site, count, CTA of the barrier arrived on): arrivals per thread.
        let mut arrive_counts: BTreeMap<(TextRange, u32, u32), usize> = BTreeMap::new();
        for op in &g.ops {
            match op.kind {
                OpKind::Init { bar, count } if members.contains(&bar) => {
                    let e = inits.entry(op.site).or_default();
                    e.0.extend(g.threads.iter().copied());
                    e.1.insert(count);
                    expected.entry(bar).or_default().insert(count);
                }
                OpKind::Arrive { bar, count } if members.contains(&bar) => {
                    *arrive_counts.entry((op.site, count, model.barriers[bar as usize].cta)).or_default() += 1;
                    *received.entry(bar).or_default() += u64::from(count) * g.threads.len() as u64;
                }
                OpKind::Wait { bar, parity } if members.contains(&bar) => {
                    seqs.entry(op.site).or_default().push(parity);
                }
                _ => {}
            }
        }
        for ((s, count, target), n) in arrive_counts {
            for &(cta, thread) in &g.threads {
                // Whether the arrival lands on another CTA's barrier.
                let remote = per_cta && cta != target;
                let e = arrives.entry((s, count, remote)).or_default();
                e.0.insert((cta, thread));
                e.1 = e.1.max(n);
            }
        }
        for (s, seq) in seqs {
            waits.entry((s, seq)).or_default().extend(g.threads.iter().copied());
        }
    }
    for &b in members {
        if let Some(count) = model.barriers[b as usize].preset_count {
            expected.entry(b).or_default().insert(count);
        }
    }

    let here = |s: TextRange| if s == site { " (this call)" } else { "" };
    let mut rows: Vec<String> = Vec::new();
    for (s, (threads, counts)) in &inits {
        let counts: Vec<String> = counts.iter().map(u32::to_string).collect();
        rows.push(format!(
            "- **init** line {}{}: {}; {} arrivals per phase",
            line(index, *s),
            here(*s),
            who(threads, ctas),
            counts.join(" or "),
        ));
    }
    if inits.is_empty() {
        if let Some(count) = first.preset_count {
            rows.push(format!("- ready before the kernel: {count} arrivals per phase, one per participating thread"));
        }
    }
    push_capped(&mut out, rows, "init");

    let mut rows = Vec::new();
    for ((s, count, remote), (threads, n)) in &arrives {
        let whose = match (per_cta && ctas > 1, remote) {
            (false, _) => String::new(),
            (true, false) => " on their own CTA's barrier".to_string(),
            (true, true) => " on a peer CTA's barrier".to_string(),
        };
        let each = if *count == 1 { "1 arrival".to_string() } else { format!("{count} arrivals") };
        rows.push(format!(
            "- **arrive** line {}{}: {}; {each}{whose}, {}",
            line(index, *s),
            here(*s),
            who(threads, ctas),
            times(*n)
        ));
    }
    push_capped(&mut out, rows, "arrive");

    let mut rows = Vec::new();
    for ((s, seq), threads) in &waits {
        rows.push(format!("- **wait** line {}{}: {}; {}", line(index, *s), here(*s), who(threads, ctas), parities(seq)));
    }
    push_capped(&mut out, rows, "wait");

    // Completed phases: what the arrivals add up to against the count.
    let mut totals: BTreeSet<String> = BTreeSet::new();
    for &b in members {
        let got = received.get(&b).copied().unwrap_or(0);
        let Some(counts) = expected.get(&b) else { continue };
        if counts.len() != 1 || got == 0 {
            continue;
        }
        let per_phase = u64::from(*counts.iter().next().unwrap());
        let phases = got / per_phase;
        let rest = got % per_phase;
        let mut line =
            format!("{got} arrivals in all: {phases} phase{} of {per_phase}", if phases == 1 { "" } else { "s" });
        if rest > 0 {
            let _ = write!(line, " and {rest} arrivals toward a phase that never completes");
        }
        totals.insert(line);
    }
    if totals.len() == 1 {
        let scope = if per_cta && ctas > 1 { "Each CTA's barrier receives " } else { "It receives " };
        let _ = writeln!(out, "\n{scope}{}.", totals.into_iter().next().unwrap());
    } else {
        for &b in members {
            let got = received.get(&b).copied().unwrap_or(0);
            let _ = writeln!(out, "\n{} receives {got} arrivals.", model.barriers[b as usize].display(ctas));
        }
    }
    out.trim_end().to_string()
}

fn push_capped(out: &mut String, rows: Vec<String>, what: &str) {
    let n = rows.len();
    for row in rows.iter().take(MAX_ROWS) {
        let _ = writeln!(out, "{row}");
    }
    if n > MAX_ROWS {
        let _ = writeln!(out, "- ... and {} more {what} sites", n - MAX_ROWS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUG: &str = include_str!("../../../tests/fixtures/untoggled_phase/jacobi_cluster_bug.py");
    const CLEAN: &str = include_str!("../../../tests/fixtures/untoggled_phase/jacobi_cluster_clean.py");

    fn at(text: &str, needle: &str) -> u32 {
        text.find(needle).unwrap_or_else(|| panic!("{needle} not in the fixture")) as u32 + 3
    }

    /// The 1-based line of the first occurrence of `needle`.
    fn line(text: &str, needle: &str) -> usize {
        text[..at(text, needle) as usize].matches('\n').count() + 1
    }

    #[test]
    fn wait_shows_the_protocol_of_its_barrier() {
        let offset = at(BUG, "cute.arch.mbarrier_wait(gate");
        let h = hover(BUG, offset, &AnalysisOptions::default()).expect("a hover on the wait");
        assert_eq!(&BUG[h.range.start as usize..h.range.end as usize], "cute.arch.mbarrier_wait(gate, cutlass.Int32(0))");
        let md = &h.markdown;
        assert!(md.starts_with("**mbarrier `gate`**: one in each of 2 CTAs (128 threads per CTA)"), "{md}");
        assert!(md.contains("- **init** line 49: warp 0 of each CTA; 256 arrivals per phase\n"), "{md}");
        let (local, peer) = (line(BUG, "cute.arch.mbarrier_arrive(gate)"), line(BUG, "cute.arch.mbarrier_arrive(gate, peer)"));
        let wait = line(BUG, "cute.arch.mbarrier_wait(gate");
        assert!(
            md.contains(&format!("- **arrive** line {local}: warps 0..3 of each CTA; 32 arrivals on their own CTA's barrier, 30 times\n")),
            "{md}"
        );
        assert!(md.contains(&format!("- **arrive** line {peer}: warps 0..3 of each CTA; 32 arrivals on a peer CTA's barrier, 30 times\n")), "{md}");
        assert!(md.contains(&format!("- **wait** line {wait} (this call): warps 0..3 of each CTA; parity 0 every time (30 waits)\n")), "{md}");
        assert!(md.contains("Each CTA's barrier receives 7680 arrivals in all: 30 phases of 256."), "{md}");
    }

    #[test]
    fn the_clean_twin_flips() {
        let offset = at(CLEAN, "cute.arch.mbarrier_wait(gate");
        let h = hover(CLEAN, offset, &AnalysisOptions::default()).expect("a hover on the wait");
        assert!(h.markdown.contains("parities 0, 1, 0, 1, 0, 1, 0, 1, ... (flips each time, 30 waits)"), "{}", h.markdown);
    }

    #[test]
    fn arrive_and_cluster_barrier() {
        let h = hover(BUG, at(BUG, "cute.arch.mbarrier_arrive(gate, peer)"), &AnalysisOptions::default()).unwrap();
        let peer = line(BUG, "cute.arch.mbarrier_arrive(gate, peer)");
        assert!(h.markdown.contains(&format!("line {peer} (this call)")), "{}", h.markdown);
        let h = hover(BUG, at(BUG, "cute.arch.cluster_arrive_relaxed()"), &AnalysisOptions::default()).unwrap();
        assert!(h.markdown.starts_with("**the cluster barrier** (128 threads per CTA)"), "{}", h.markdown);
        assert!(h.markdown.contains("- ready before the kernel: 256 arrivals per phase"), "{}", h.markdown);
        assert!(h.markdown.contains("- **wait** line 53"), "{}", h.markdown);
    }

    #[test]
    fn nothing_off_synchronization() {
        for needle in ["cur[tid] = arr", "HALF = 128", "cute.arch.thread_idx()", "import cutlass"] {
            assert_eq!(hover(BUG, at(BUG, needle), &AnalysisOptions::default()), None, "{needle}");
        }
        assert_eq!(hover("def (:\n", 2, &AnalysisOptions::default()), None);
    }

    /// Over the read a spin between CTAs waits on: whom it waits for, and
    /// what its termination rests on, the persistent grid's fit said as
    /// the assumption it is.
    #[test]
    fn an_inter_cta_spin_shows_its_progress() {
        let persistent = include_str!("../../../tests/fixtures/forward_progress/persistent_grid_barrier_clean.py");
        let spin = "cute.arch.load(bar.iterator";
        let h = hover(persistent, at(persistent, spin), &AnalysisOptions::default()).expect("a hover on the spin");
        assert!(persistent[h.range.start as usize..h.range.end as usize].starts_with(spin));
        assert!(h.markdown.contains("every CTA arrives on `bar` and waits here for every other (a grid barrier)"), "{}", h.markdown);
        assert!(h.markdown.contains("**Assumed** to terminate: the grid is computed from `max_active_clusters` (the persistent idiom)"), "{}", h.markdown);
        let fits = include_str!("../../../tests/fixtures/forward_progress/grid_barrier_clean.py");
        let h = hover(fits, at(fits, spin), &AnalysisOptions::default()).expect("a hover on the spin");
        assert!(h.markdown.contains("CTAs of the grid are resident at once"), "{}", h.markdown);
        let bug = include_str!("../../../tests/fixtures/forward_progress/grid_barrier_bug.py");
        let h = hover(bug, at(bug, spin), &AnalysisOptions::default()).expect("a hover on the spin");
        assert!(h.markdown.contains("The grid has 4096 CTAs and at most 264 are resident at once"), "{}", h.markdown);
        let chain = include_str!("../../../tests/fixtures/forward_progress/chain_static_index_bug.py");
        let h = hover(chain, at(chain, "cute.arch.load(flags.iterator"), &AnalysisOptions::default()).expect("a hover on the spin");
        assert!(h.markdown.contains("CTAs wait here for a CTA of a lower block index to set `flags`"), "{}", h.markdown);
        // A load that no spin between CTAs waits on has no hover.
        let handoff = include_str!("../../../tests/fixtures/missing_acquire/relaxed_spin_clean.py");
        assert!(hover(handoff, at(handoff, "x = src[") , &AnalysisOptions::default()).is_none());
    }
}

#[cfg(test)]
mod method_kernel_tests {
    use super::*;

    const STAGES: &str = include_str!("../../../tests/fixtures/untoggled_phase/struct_methods_clean.py");

    #[test]
    fn stages_with_the_same_protocol_are_shown_once() {
        let offset = STAGES.find("mbarrier_wait(bars + s, phase)").unwrap() as u32 + 2;
        let md = hover(STAGES, offset, &AnalysisOptions::default()).expect("a hover on the wait").markdown;
        assert!(md.starts_with("**mbarrier `bars + s`**: 2 barriers of this name, each with this protocol"), "{md}");
        assert!(md.contains("parities 0, 1, 0, 1 (flips each time, 4 waits)"), "{md}");
        assert_eq!(md.matches("**init**").count(), 1, "{md}");
    }

    #[test]
    fn sync_threads_arrives_and_waits_at_one_site() {
        let offset = STAGES.find("cute.arch.sync_threads()").unwrap() as u32 + 2;
        let md = hover(STAGES, offset, &AnalysisOptions::default()).expect("a hover on sync_threads").markdown;
        assert!(md.starts_with("**the CTA barrier (`sync_threads`)**"), "{md}");
        assert!(md.contains("- **arrive** line 39 (this call)") && md.contains("- **wait** line 39 (this call)"), "{md}");
    }
}
