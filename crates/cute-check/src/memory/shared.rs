//! Two generic accesses of shared memory that the memory clock does not order.
//! Ordered by timing alone, they name a remote arrive whose release is too
//! narrow for the peer CTA (`scope-too-narrow`); otherwise they race, reported
//! at the write (`dsmem-race` across CTAs, `smem-race` inside one, with a
//! `sync_warp()` for two lanes of one warp). Inside one CTA only races between
//! a write and a read of known elements are reported: warps that store the
//! same values redundantly are a common, harmless idiom.

use cute_syntax::TextRange;

use crate::model::*;

use super::event::{region_and_write, Event};
use super::lane_race::subscript;
use super::{Execution, MemoryFinding, MemoryRule, Repair};

impl<'m> Execution<'m> {
    /// Two generic accesses of shared memory.
    pub(super) fn shared_pair(&self, model: &Model, buffer: BufferIx, owner: u32, e1: &Event, e2: &Event) -> Option<MemoryFinding> {
        let (first, second) = if e1.ctl[e1.actor] <= e2.ctl[e1.actor] { (e1, e2) } else { (e2, e1) };
        if first.mmo[first.actor] <= second.mmo[first.actor] {
            return None;
        }
        let name = &model.buffers[buffer as usize].name;
        let remote = self.cta_of(e1.actor) != owner || self.cta_of(e2.actor) != owner;
        let describe = |e: &Event| {
            let w = region_and_write(&e.kind).is_some_and(|(_, w)| w);
            format!("{} {} `{name}` of CTA {owner}", self.who(model, e.actor), if w { "writes" } else { "reads" })
        };
        if first.ctl[first.actor] <= second.ctl[first.actor] {
            // Ordered by timing, not by memory semantics: a release too
            // narrow for the other side.
            let (arrive, relaxed) = self.narrow_release_after(first, self.cta_of(second.actor))?;
            let peer = self.cta_of(second.actor);
            let (message, step) = if relaxed {
                (
                    format!(
                        "this arrive is relaxed: it releases nothing, so the data handed over through `{name}` is not ordered before the reads of the threads of CTA {peer} that wait for it (arrive with release semantics at cluster scope)"
                    ),
                    "arrives relaxed: it releases nothing, for any CTA".to_string(),
                )
            } else {
                (
                    format!(
                        "this arrive releases at CTA scope, which does not contain the threads of CTA {peer} that wait for it; the data handed over through `{name}` is not ordered before their reads (pass a cluster scope)"
                    ),
                    "arrives with a CTA-scoped release: it orders nothing for a peer CTA".to_string(),
                )
            };
            return Some(MemoryFinding {
                rule: MemoryRule::ScopeTooNarrow,
                site: arrive,
                message,
                steps: vec![(first.site, describe(first)), (arrive, step), (second.site, describe(second))],
                repair: Repair::SetScope { call: arrive, scope: Scope::Cluster },
            });
        }
        if !remote {
            // Races inside one CTA are reported only on known elements, and
            // only between a write and a read: warps that store the same
            // values redundantly are a common, harmless idiom.
            let both_known = [e1, e2].iter().all(|e| region_and_write(&e.kind).is_some_and(|(r, _)| matches!(r.element, Element::At(_))));
            let both_write = [e1, e2].iter().all(|e| region_and_write(&e.kind).is_some_and(|(_, w)| w));
            if !both_known || both_write {
                return None;
            }
        }
        // Reported at the write (both writes: the later one), which is what
        // a second buffer or barrier has to protect.
        let writes = |e: &Event| region_and_write(&e.kind).is_some_and(|(_, w)| w);
        let (other, at) = if writes(e2) { (e1, e2) } else { (e2, e1) };
        let (t1, t2) = (self.actors[e1.actor].thread, self.actors[e2.actor].thread);
        if !remote && t1.1 / 32 == t2.1 / 32 {
            // Two lanes of one warp (one of them in a branch that splits
            // it): a `sync_warp` of the whole warp orders them, before the
            // branch that holds the later access.
            let element = match region_and_write(&at.kind).map(|(r, _)| r.element.clone()) {
                Some(Element::At(at)) => subscript(&at),
                _ => String::new(),
            };
            // Lane 0 on its own is a thread, not its warp.
            let who = |e: &Event| match self.actors[e.actor].thread {
                (cta, tid) if tid % 32 == 0 && !self.actors[e.actor].mem[e.index].converged => describe_thread(cta, tid, model.ctas),
                _ => self.who(model, e.actor),
            };
            let describe = |e: &Event| format!("{} {} `{name}{element}`", who(e), if writes(e) { "writes" } else { "reads" });
            let (earlier, later) = if e1.stmt <= e2.stmt { (e1, e2) } else { (e2, e1) };
            return Some(MemoryFinding {
                rule: MemoryRule::SmemRace,
                site: at.site,
                message: format!(
                    "{} while {}, lanes of the same warp: lanes of a warp do not run in lock-step, and no `sync_warp()` or barrier orders the two",
                    describe(at),
                    describe(other)
                ),
                steps: vec![
                    (earlier.site, describe(earlier)),
                    (later.site, format!("{}, with no `sync_warp()` or barrier since the access above", describe(later))),
                ],
                repair: Repair::InsertWarpSyncBefore { site: later.site, stmt: later.stmt, after: earlier.site },
            });
        }
        // Two warps of one CTA: a CTA barrier between the two statements,
        // in the order the program runs them, orders them.
        let (earlier, later) = if e1.stmt <= e2.stmt { (e1, e2) } else { (e2, e1) };
        Some(MemoryFinding {
            rule: if remote { MemoryRule::DsmemRace } else { MemoryRule::SmemRace },
            site: at.site,
            message: format!("{} while {}: no barrier orders the two", describe(at), describe(other)),
            steps: vec![(other.site, describe(other)), (at.site, format!("{}, unordered with the access above", describe(at)))],
            repair: if remote { Repair::None } else { Repair::InsertCtaBarrierBetween { site: later.site, stmt: later.stmt, after: earlier.site } },
        })
    }

    /// A remote arrive of `e`'s thread after `e`, released at a scope that
    /// does not contain `cta`, or relaxed (true: it releases nothing).
    fn narrow_release_after(&self, e: &Event, cta: u32) -> Option<(TextRange, bool)> {
        let actor = &self.actors[e.actor];
        let from = self.cta_of(e.actor);
        actor.mem[e.index..].iter().find_map(|m| match m.kind {
            MemKind::ArriveRelease { scope: Some(s) } if !self.scope_contains(s, from, cta) => Some((m.site, false)),
            MemKind::ArriveRelease { scope: None } => Some((m.site, true)),
            _ => None,
        })
    }
}
