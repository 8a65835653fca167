//! Lanes that act on their own, and their warp: a lane meets its warp at each
//! of the warp's converged operations (`WarpPoint`: lane 0 acts for the warp
//! once every lane has done what precedes it, and the lanes go on knowing what
//! it knew then), and the other lanes of a mask at a `sync_warp(mask)` of the
//! split warp (`MemKind::LaneSync`: the two halves of a warp can each
//! synchronize on their own half).
//! Lanes of a warp do not run in lock-step: only these meetings order them.

use crate::model::*;

use super::actor::{two, Actor, Blocked};
use super::clock::{join, same_except};
use super::Execution;

impl<'m> Execution<'m> {
    /// A lane other than lane 0 reaching an item that follows `point`
    /// converged operations of its warp: it goes on once lane 0 has done
    /// them, and knows what lane 0 knew then.
    pub(super) fn meet_warp(&mut self, a: usize, point: u32) -> bool {
        let Some(l) = self.actors[a].leader else { return true };
        if point <= self.actors[a].joined_point {
            return true;
        }
        if self.actors[l].snapshots.len() < point as usize {
            self.actors[a].blocked = Some(Blocked::Leader { leader: l, point });
            return false;
        }
        let (actor, leader) = two(&mut self.actors, a, l);
        let (ctl, mmo) = &leader.snapshots[point as usize - 1];
        join(&mut actor.ctl, ctl);
        join(&mut actor.mmo, mmo);
        if same_except(ctl, &actor.ctl, a) && same_except(mmo, &actor.mmo, a) {
            actor.stamp_base = Some((ctl.clone(), mmo.clone()));
        }
        actor.joined_point = point;
        true
    }

    /// Actor `a` at a `sync_warp(mask)` of its split warp: it goes on once
    /// every lane of the mask that meets there (each that has one in its
    /// program) has come to the same one, and then they all go on knowing
    /// what any of them knew.
    pub(super) fn meet_lanes(&mut self, a: usize, mask: u32) -> bool {
        let (cta, tid) = self.actors[a].thread;
        let passed = |actor: &Actor| actor.lane_syncs.iter().find(|(m, _)| *m == mask).map_or(0, |(_, n)| *n);
        let round = passed(&self.actors[a]);
        let meets = |actor: &Actor| actor.mem.iter().any(|m| m.kind == MemKind::LaneSync { mask });
        // The thread itself always meets there, in the mask or not (a lane
        // outside the mask that reaches it meets no one else): every
        // successful step moves it on.
        let group: Vec<usize> = (0..self.actors.len())
            .filter(|&b| {
                let (c, t) = self.actors[b].thread;
                b == a || (c == cta && t / 32 == tid / 32 && mask & (1 << (t % 32)) != 0 && meets(&self.actors[b]))
            })
            .collect();
        let here = |actor: &Actor| {
            passed(actor) == round && actor.mem.get(actor.next_mem).is_some_and(|m| m.kind == MemKind::LaneSync { mask })
        };
        if !group.iter().all(|&b| passed(&self.actors[b]) > round || here(&self.actors[b])) {
            return false;
        }
        let meeting: Vec<usize> = group.into_iter().filter(|&b| here(&self.actors[b])).collect();
        let width = self.actors[a].ctl.len();
        let (mut ctl, mut mmo) = (vec![0; width], vec![0; width]);
        for &b in &meeting {
            join(&mut ctl, &self.actors[b].ctl);
            join(&mut mmo, &self.actors[b].mmo);
        }
        for b in meeting {
            let actor = &mut self.actors[b];
            join(&mut actor.ctl, &ctl);
            join(&mut actor.mmo, &mmo);
            actor.next_mem += 1;
            match actor.lane_syncs.iter_mut().find(|(m, _)| *m == mask) {
                Some((_, n)) => *n += 1,
                None => actor.lane_syncs.push((mask, 1)),
            }
            actor.stamp_base = None;
        }
        true
    }

    /// Lane 0 at the warp's converged operation number `point`: every other
    /// lane must have done what precedes it, and lane 0 acts for all of them.
    pub(super) fn gather_lanes(&mut self, a: usize, point: u32) -> bool {
        let lanes = std::mem::take(&mut self.actors[a].lanes);
        let ready = lanes.iter().all(|&l| !self.next_point(l).is_some_and(|p| p <= point));
        if ready {
            for &l in &lanes {
                let (actor, lane) = two(&mut self.actors, a, l);
                join(&mut actor.ctl, &lane.ctl);
                join(&mut actor.mmo, &lane.mmo);
            }
        }
        self.actors[a].lanes = lanes;
        ready
    }

    /// The warp point of an actor's next item, if it has one.
    fn next_point(&self, a: usize) -> Option<u32> {
        let actor = &self.actors[a];
        let mem = actor.mem.get(actor.next_mem).map(|m| m.warp_point);
        let op = actor.points.get(actor.next_op).map(|p| p.before);
        match (mem, op) {
            (Some(m), Some(o)) => Some(m.min(o)),
            (m, o) => m.or(o),
        }
    }
}
