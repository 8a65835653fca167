//! The findings of an execution: per buffer, each candidate pair whose regions
//! may meet is judged by the rules of its kind (an async copy and a generic
//! access, two accesses of shared memory, a write and a read of global memory),
//! and the findings are put back in the order of their pairs. In global memory
//! any pair that may overlap counts: data published between CTAs is read at
//! indices often known only at run time. Past `MAX_PAIRS` (2,000,000) pairs,
//! or out of time, the analysis stops and says so.
//!
//! The rules of each kind: `proxy` gives `missing-proxy-fence`,
//! `fence-after-sync`, `read-before-wait` and `smem-race`; `shared` gives
//! `smem-race`, `dsmem-race` and `scope-too-narrow`; `message_passing` gives
//! `missing-wait`, `missing-release`, `missing-acquire` and
//! `scope-too-narrow`.

use rustc_hash::FxHashMap as HashMap;

use crate::model::*;

use super::event::{accessed_buffer, region_and_write};
use super::pairs::candidate_pairs;
use super::{out_of_time, Execution, MemoryFinding};

/// Pairs of accesses compared at most.
const MAX_PAIRS: usize = 2_000_000;

impl<'m> Execution<'m> {
    pub(super) fn who(&self, model: &Model, a: usize) -> String {
        describe_threads(&[self.actors[a].thread], model.ctas)
    }

    pub(super) fn cta_of(&self, a: usize) -> u32 {
        self.actors[a].thread.0
    }

    pub(super) fn findings(&self, model: &Model, deadline: std::time::Instant) -> Result<Vec<MemoryFinding>, String> {
        let mut out = Vec::new();
        let mut checked = 0usize;
        let mut by_buffer: HashMap<BufferIx, Vec<usize>> = HashMap::default();
        for (i, e) in self.events.iter().enumerate() {
            if let Some(b) = accessed_buffer(&e.kind) {
                by_buffer.entry(b).or_default().push(i);
            }
        }
        let mut buffers: Vec<_> = by_buffer.into_iter().collect();
        buffers.sort_by_key(|(b, _)| *b);
        for (buffer, events) in buffers {
            let space = &model.buffers[buffer as usize].space;
            // Findings in the order of their pairs (the order the accesses
            // ran in), whatever the order the pairs are found in.
            let mut found: Vec<((usize, usize), MemoryFinding)> = Vec::new();
            let mut stopped = None;
            let mut visit = |i: usize, j: usize| {
                checked += 1;
                if checked > MAX_PAIRS {
                    stopped = Some(format!("more than {MAX_PAIRS} pairs of accesses to compare, too many for the memory-ordering analysis"));
                    return false;
                }
                if checked % 4096 == 0 && std::time::Instant::now() > deadline {
                    stopped = Some(out_of_time());
                    return false;
                }
                let (e1, e2) = (&self.events[i], &self.events[j]);
                let (Some((r1, _)), Some((r2, _))) = (region_and_write(&e1.kind), region_and_write(&e2.kind)) else {
                    return true;
                };
                // Data published between CTAs is read where the producer
                // wrote it, at indices often known only at run time: there
                // any pair that may overlap counts.
                let overlap = if matches!(space, Space::Global) { r1.may_overlap(&r2) } else { r1.overlaps(&r2) };
                if !overlap {
                    return true;
                }
                let finding = match (e1.async_id.is_some(), e2.async_id.is_some()) {
                    (true, true) => None,
                    (true, false) => self.async_vs_generic(model, buffer, e1, e2),
                    (false, true) => self.async_vs_generic(model, buffer, e2, e1),
                    (false, false) => match space {
                        Space::Global => self.message_passing(model, buffer, e1, e2),
                        Space::Shared { cta } => self.shared_pair(model, buffer, *cta, e1, e2),
                    },
                };
                found.extend(finding.map(|f| ((i, j), f)));
                true
            };
            candidate_pairs(&self.events, &events, matches!(space, Space::Shared { .. }), &mut visit);
            if let Some(why) = stopped.or_else(|| self.pair_not_known.borrow_mut().take()) {
                return Err(why);
            }
            found.sort_by_key(|(pair, _)| *pair);
            out.extend(found.into_iter().map(|(_, f)| f));
        }
        Ok(out)
    }
}
