//! A wait on a counter that no run of the grid satisfies.
//!
//! The schedule (`schedule.rs`) ends with a thread stuck on a read of a
//! counter that waits (a spin loop, or a branch taken on the value in the
//! way where it is taken). Most often the model is at fault: only some CTAs
//! of the grid are modelled, or the value comes from somewhere the model
//! does not see, and the kernel is reported as not checked. But where
//!
//! * every modelled update of the counter has been made (no thread still
//!   blocked elsewhere would add to it later),
//! * every update is the addition of a positive amount (the counter only
//!   grows), from 0 (the value the analysis starts every counter at: the
//!   host zeroes it before the launch, said in the finding),
//! * the grid is known, and the CTAs not modelled add as the modelled CTAs
//!   that add do (`CounterAdds`),
//!
//! the counter's last value is what the whole grid adds, and a wait for a
//! value at least past it (`>=`, `>`, `==` a value above) never returns. A
//! spin loop then hangs the kernel (`deadlock`); a branch is never taken,
//! and the way that takes it is a way no run takes (nothing to check).

use rustc_hash::FxHashMap as HashMap;

use crate::model::*;

use super::mem_ops::CounterRun;
use super::schedule::CounterAdds;
use super::{Execution, MemoryFinding, MemoryRule, Repair};

/// Why the run of a model stopped before its end.
pub(super) enum Stopped {
    /// The analysis cannot go on (the reason, for `analysis-incomplete`).
    NotChecked(String),
    /// A spin loop no run of the grid lets out: the kernel hangs.
    Hang(MemoryFinding),
    /// A branch on a counter's value, taken in this way of deciding the
    /// kernel's conditions, that no run of the grid takes.
    WayNotTaken,
}

impl From<String> for Stopped {
    fn from(why: String) -> Stopped {
        Stopped::NotChecked(why)
    }
}

impl<'m> Execution<'m> {
    /// Whether actor `a`, stuck on a read of a counter that waits, waits for
    /// a value the grid never gives the counter (`adds`: what the modelled
    /// threads add to each counter); and if so, what that means.
    pub(super) fn never_satisfied(
        &self,
        a: usize,
        model: &Model,
        counters: &HashMap<(BufferIx, Option<i64>), CounterRun>,
        adds: &HashMap<(BufferIx, Option<i64>), CounterAdds>,
    ) -> Option<Stopped> {
        let actor = &self.actors[a];
        let read = actor.mem.get(actor.next_mem)?;
        let MemKind::Observe { buffer, offset, guard: Some(guard), ticket: None, .. } = &read.kind else { return None };
        let target = guard.target?;
        let run = counters.get(&(*buffer, *offset)).filter(|c| c.total_updates > 0 && c.updates.len() >= c.total_updates)?;
        let added = adds.get(&(*buffer, *offset)).filter(|c| c.only_positive_adds())?;
        let value = run.value?;
        let grid = i64::try_from(model.grid.ctas()?).ok()?;
        let not_modelled = grid.saturating_sub(i64::from(model.ctas));
        let from_others = if not_modelled == 0 { 0 } else { added.per_cta()?.checked_mul(not_modelled)? };
        let last = value.checked_add(from_others)?;
        let never = match guard.exit_when {
            GuardCmp::Ge => last < target,
            GuardCmp::Gt => last <= target,
            GuardCmp::Eq => last < target,
            _ => false,
        };
        if !never {
            return None;
        }
        if !guard.spin {
            return Some(Stopped::WayNotTaken);
        }
        let name = &model.buffers[*buffer as usize].name;
        let wanted = if guard.exit_when == GuardCmp::Gt { format!("past {target}") } else { target.to_string() };
        let who = describe_threads(&[actor.thread], model.ctas);
        // The additions made, one step per call with the threads that made it.
        let mut adders: Vec<(cute_syntax::TextRange, i64, Vec<(u32, u32)>)> = Vec::new();
        for other in &self.actors {
            for m in other.mem {
                if let MemKind::Update { buffer: b, offset: o, update: Update::Add(k), .. } = &m.kind {
                    if b == buffer && o == offset {
                        match adders.iter_mut().find(|(site, add, _)| *site == m.site && add == k) {
                            Some((_, _, threads)) => threads.push(other.thread),
                            None => adders.push((m.site, *k, vec![other.thread])),
                        }
                    }
                }
            }
        }
        let mut steps: Vec<(cute_syntax::TextRange, String)> = adders
            .into_iter()
            .map(|(site, k, threads)| {
                let each = if threads.len() == 1 { "adds" } else { "each add" };
                (site, format!("{} {each} {k} to `{name}`", describe_threads(&threads, model.ctas)))
            })
            .collect();
        let grid_adds = if not_modelled > 0 {
            format!("the {grid} CTAs of the grid add {last} to it in all (the {not_modelled} not modelled adding as the modelled ones that add do)")
        } else {
            format!("the {grid} CTAs of the grid add {last} to it in all")
        };
        steps.push((read.site, format!("{who} spins here until `{name}` reaches {wanted}; {grid_adds}, and nothing adds after")));
        Some(Stopped::Hang(MemoryFinding {
            rule: MemoryRule::CounterNeverReached,
            site: read.site,
            message: format!(
                "this loop waits for `{name}` to reach {wanted}, but {grid_adds}: it never exits (assuming `{name}` holds 0 when the kernel starts)"
            ),
            steps,
            repair: Repair::None,
        }))
    }
}
