//! Waits of one CTA on others through global memory, for the progress
//! guarantees they need (the progress models of Sorensen et al., "Specifying
//! and Testing GPU Workgroup Progress Models", OOPSLA 2021; `forward-progress`).
//!
//! A spin loop on a global counter or flag (a guarded `Observe` that spins)
//! waits for the CTAs whose updates of that location can satisfy it. The
//! model runs clusters that stand for the grid (its first and last, those
//! the kernel's tests of the block index single out: see `StandsIn`), so each modelled wait names the block indices
//! of the CTAs it waits for, and its shape follows:
//!
//! - every modelled cluster updates the location, the waiting CTA too: an
//!   all-to-all barrier (a software grid barrier), which needs every CTA of
//!   the grid resident at once;
//! - the address comes from a ticket (an atomic's returned value): the CTA
//!   waited for drew its ticket first, so it has started;
//! - otherwise the CTAs waited for are chosen by static block index: later
//!   ones, or only earlier ones;
//! - an address known neither way: the CTA waited for is not known.
//!
//! Waits on updates from the waiting CTA's own cluster only are left out: a
//! cluster is co-scheduled. How many CTAs fit at once is [`residency`], from
//! a small table of the GPUs a target names ([`Arch`]).

use cute_syntax::TextRange;

use crate::model::{MemKind, Model, Space};

/// The shape of an inter-CTA wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WaitShape {
    /// Every CTA arrives on one counter and waits for every other.
    AllToAll,
    /// Waits for a CTA of a higher block index, chosen statically.
    Later,
    /// Waits only for CTAs of lower block indices, chosen statically.
    Earlier,
    /// The address comes from a ticket drawn from a global counter.
    Ticket,
    /// The CTA waited for is known neither by index nor by ticket.
    Unknown,
}

/// The progress models that decide an inter-CTA wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProgressModel {
    /// Occupancy-bound execution, what CUDA gives in practice: a CTA that
    /// has started keeps being scheduled; one that has not starts only when
    /// a resident one finishes, in no promised order.
    Obe,
    /// Linear OBE: CTAs also start in block-index order.
    Lobe,
    /// Only the lowest-indexed unfinished CTA is sure to progress.
    Hsa,
}

impl ProgressModel {
    pub const ALL: [ProgressModel; 3] = [ProgressModel::Obe, ProgressModel::Lobe, ProgressModel::Hsa];

    pub fn name(self) -> &'static str {
        match self {
            ProgressModel::Obe => "OBE",
            ProgressModel::Lobe => "LOBE",
            ProgressModel::Hsa => "HSA",
        }
    }
}

impl WaitShape {
    /// Whether a wait of this shape, made by a role that many CTAs of the
    /// grid take, terminates under `model` in a grid that can exceed what
    /// fits at once (in one that fits, every CTA is resident and OBE makes
    /// each progress). `None` for a wait whose CTAs are not known.
    /// `tests/progress_models.rs` checks these against the paper's
    /// termination oracle, and on its suite of litmus tests.
    pub fn terminates(self, model: ProgressModel) -> Option<bool> {
        use ProgressModel::*;
        Some(match (self, model) {
            (WaitShape::Unknown, _) => return None,
            // The CTA waited for drew its ticket first: it has started. HSA
            // favours the lowest block index, which may hold a later ticket.
            (WaitShape::Ticket, Obe | Lobe) => true,
            (WaitShape::Ticket, Hsa) => false,
            // The CTA waited for has a lower index: LOBE started it, HSA
            // runs it first.
            (WaitShape::Earlier, Lobe | Hsa) => true,
            (WaitShape::Earlier, Obe) => false,
            (WaitShape::AllToAll | WaitShape::Later, _) => false,
        })
    }
}

/// One spin wait of a modelled CTA on CTAs of other clusters.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct InterCtaWait {
    /// The read the thread spins on.
    pub site: TextRange,
    pub shape: WaitShape,
    /// The block index of the waiting CTA.
    pub waiter: u64,
    /// The CTAs of other clusters whose updates it waits for: block index
    /// and the update's site.
    pub waited: Vec<(u64, TextRange)>,
    /// The buffer's name, for messages.
    pub buffer: String,
}

/// The spin waits of `model`'s CTAs on CTAs of other clusters.
pub fn inter_cta_waits(model: &Model) -> Vec<InterCtaWait> {
    let cluster = |cta: u32| cta / model.cluster_ctas.max(1);
    let clusters = model.ctas.div_ceil(model.cluster_ctas.max(1));
    let compatible = |a: Option<i64>, b: Option<i64>| a.is_none() || b.is_none() || a == b;
    let mut out: Vec<InterCtaWait> = Vec::new();
    for t in &model.memory {
        let (cta, _) = t.thread;
        for m in &t.ops {
            let MemKind::Observe { buffer, offset, guard: Some(guard), .. } = &m.kind else { continue };
            if !guard.spin || !matches!(model.buffers.get(*buffer as usize).map(|b| &b.space), Some(Space::Global)) {
                continue;
            }
            // Every update of the location, by CTA.
            let updates: Vec<(u32, Option<i64>, TextRange)> = model
                .memory
                .iter()
                .flat_map(|u| u.ops.iter().map(move |o| (u.thread.0, o)))
                .filter_map(|(c, o)| match &o.kind {
                    MemKind::Update { buffer: b, offset: o2, .. } if b == buffer && compatible(*offset, *o2) => Some((c, *o2, o.site)),
                    _ => None,
                })
                .collect();
            let mut others: Vec<(u64, TextRange)> =
                updates.iter().filter(|(c, _, _)| cluster(*c) != cluster(cta)).map(|(c, _, s)| (model.grid.block_index(*c), *s)).collect();
            if others.is_empty() {
                continue;
            }
            others.sort();
            others.dedup_by_key(|(c, _)| *c);
            let mut updating: Vec<u32> = updates.iter().map(|(c, _, _)| cluster(*c)).collect();
            updating.sort();
            updating.dedup();
            let waiter = model.grid.block_index(cta);
            // The waiting CTA updates the very location it waits on (not one
            // whose address is not known).
            let own = offset.is_some() && updates.iter().any(|(c, o, _)| *c == cta && o == offset);
            let shape = if guard.ticket {
                WaitShape::Ticket
            } else if own && updating.len() as u32 == clusters {
                WaitShape::AllToAll
            } else if offset.is_none() || updates.iter().any(|(c, o, _)| cluster(*c) != cluster(cta) && o.is_none()) {
                WaitShape::Unknown
            } else if others.iter().any(|(b, _)| *b > waiter) {
                WaitShape::Later
            } else {
                WaitShape::Earlier
            };
            let wait = InterCtaWait {
                site: m.site,
                shape,
                waiter,
                waited: others,
                buffer: model.buffers[*buffer as usize].name.clone(),
            };
            if !out.contains(&wait) {
                out.push(wait);
            }
        }
    }
    out
}

/// What the occupancy of an SM is bounded by on one GPU architecture, as
/// the CUDA C++ Programming Guide's table of compute capabilities gives it,
/// with the SM count of the part named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arch {
    pub name: &'static str,
    /// The part whose SM count is taken.
    pub part: &'static str,
    pub sms: u32,
    pub max_threads_per_sm: u32,
    pub max_ctas_per_sm: u32,
    /// Shared memory per SM, bytes.
    pub smem_per_sm: u64,
    /// Shared memory the system reserves per CTA, bytes.
    pub smem_reserved_per_cta: u64,
}

pub const ARCHS: &[Arch] = &[
    Arch { name: "sm_80", part: "A100", sms: 108, max_threads_per_sm: 2048, max_ctas_per_sm: 32, smem_per_sm: 164 * 1024, smem_reserved_per_cta: 1024 },
    Arch { name: "sm_90", part: "H100 SXM5", sms: 132, max_threads_per_sm: 2048, max_ctas_per_sm: 32, smem_per_sm: 228 * 1024, smem_reserved_per_cta: 1024 },
    Arch { name: "sm_100", part: "B200", sms: 148, max_threads_per_sm: 2048, max_ctas_per_sm: 32, smem_per_sm: 228 * 1024, smem_reserved_per_cta: 1024 },
    Arch { name: "sm_120", part: "RTX 5090", sms: 170, max_threads_per_sm: 1536, max_ctas_per_sm: 32, smem_per_sm: 100 * 1024, smem_reserved_per_cta: 1024 },
];

/// The table's entry for a target (`sm_90a`, `sm_100f`, `90`): its family.
pub fn arch(target: &str) -> Option<&'static Arch> {
    let digits: String = target.trim().trim_start_matches("sm_").chars().take_while(char::is_ascii_digit).collect();
    let name = match digits.parse::<u32>().ok()? {
        80 => "sm_80",
        90 => "sm_90",
        100 | 101 | 103 | 110 => "sm_100",
        120 | 121 => "sm_120",
        _ => return None,
    };
    ARCHS.iter().find(|a| a.name == name)
}

/// How many CTAs of a launch are resident at once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Residency {
    /// At most this many: SMs times what threads, CTA slots and shared
    /// memory allow per SM (registers can only lower it).
    pub max: u64,
    /// At least this many: one CTA per SM, or `min_blocks_per_mp` where
    /// the other bounds allow it (the compiler limits registers for it).
    pub min: u64,
    /// How `max` was found.
    pub how: String,
}

/// The CTAs of `threads` threads (and `smem` bytes of shared memory, when
/// known) that fit on `arch` at once.
pub fn residency(arch: &Arch, threads: u32, smem: Option<u64>, min_blocks_per_mp: Option<u32>) -> Residency {
    let warps_threads = threads.max(1).div_ceil(32) * 32;
    let by_threads = arch.max_threads_per_sm / warps_threads;
    let mut per_sm = arch.max_ctas_per_sm.min(by_threads);
    let mut why = vec![format!("{by_threads} of {threads} threads by the {} threads of an SM", arch.max_threads_per_sm)];
    if let Some(bytes) = smem {
        let by_smem = u32::try_from(arch.smem_per_sm / (bytes + arch.smem_reserved_per_cta)).unwrap_or(u32::MAX);
        per_sm = per_sm.min(by_smem);
        why.push(format!("{by_smem} by {bytes} bytes of shared memory"));
    }
    if per_sm == arch.max_ctas_per_sm {
        why.push(format!("{} CTA slots", arch.max_ctas_per_sm));
    }
    let per_sm = per_sm.max(1);
    let min_per_sm = min_blocks_per_mp.unwrap_or(1).clamp(1, per_sm);
    Residency {
        max: u64::from(arch.sms) * u64::from(per_sm),
        min: u64::from(arch.sms) * u64::from(min_per_sm),
        how: format!(
            "{} SMs of an {} ({}) x {per_sm} CTAs per SM ({})",
            arch.sms,
            arch.part,
            arch.name,
            why.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_name_their_family() {
        assert_eq!(arch("sm_90a").unwrap().sms, 132);
        assert_eq!(arch("sm_100a").unwrap().name, "sm_100");
        assert_eq!(arch("sm_120").unwrap().max_threads_per_sm, 1536);
        assert_eq!(arch("80").unwrap().name, "sm_80");
        assert!(arch("sm_75").is_none());
        assert!(arch("gfx90a").is_none());
    }

    #[test]
    fn residency_is_bounded_by_threads_slots_and_shared_memory() {
        let h100 = arch("sm_90a").unwrap();
        // 128 threads: 16 per SM by threads.
        let r = residency(h100, 128, None, None);
        assert_eq!((r.max, r.min), (132 * 16, 132));
        // 32 threads: the 32 CTA slots bound it.
        assert_eq!(residency(h100, 32, None, None).max, 132 * 32);
        // 100 KiB of shared memory: two per SM.
        assert_eq!(residency(h100, 128, Some(100 * 1024), None).max, 132 * 2);
        // min_blocks_per_mp raises what is sure, within what fits.
        assert_eq!(residency(h100, 128, None, Some(4)).min, 132 * 4);
        assert_eq!(residency(h100, 1024, None, Some(4)).min, 132 * 2);
        // An odd thread count takes whole warps.
        assert_eq!(residency(h100, 33, None, None).max, 132 * 32);
        assert_eq!(residency(h100, 100, None, None).max, 132 * 16);
    }
}
