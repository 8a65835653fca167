//! Warps: `elect_one` (lane 0 of a converged warp), `make_warp_uniform`, and
//! the collectives (`sync_warp`, shuffles, votes, warp reductions).
//!
//! A collective reached while its warp is split (a TMA or bulk `cute.copy`,
//! which elects a lane itself, is one too) is recorded per lane with its member
//! mask (the default full warp or a known integer; a mask computed at run time
//! is not recorded), for `single-lane-collective`: the lanes of the mask that
//! reach it fewer times than the others are reported.
//!
//! A `sync_warp` is a meeting point of the lanes of its mask, which the
//! memory-ordering analysis uses to order their shared-memory accesses: taken
//! while the warp is split, it meets only the lanes of the mask
//! (`MemKind::LaneSync`: the two halves of a warp each synchronizing on their
//! own half).

use std::collections::BTreeMap;

use cute_ir::api::Api;
use cute_ir::ast::Call;
use cute_ir::eval::Value;
use cute_syntax::TextRange;

use super::{calls::opaque_result, ThreadRun};
use crate::model::*;

/// Every lane of a warp.
pub(super) const FULL_MASK: u32 = u32::MAX;

/// What a warp collective is, for `single-lane-collective`.
pub(super) fn collective_what(api: Api, call: &Call, mask: u32) -> String {
    let name = call.qualname.clone().or_else(|| call.func.dotted()).unwrap_or_default();
    let name = name.rsplit('.').next().unwrap_or_default().to_string();
    match api {
        Api::WarpReduction => {
            format!("`{name}` exchanges values over the full warp (`shuffle_sync_bfly` with member mask 0xffffffff, whatever `threads_in_group` is)")
        }
        _ if mask == FULL_MASK => format!("`{name}` is collective over the full warp (member mask 0xffffffff)"),
        _ => format!("`{name}` is collective over the lanes of member mask {mask:#010x}"),
    }
}

/// The warp collectives some lanes of their member mask do not reach: for
/// each site, the first CTA where that happens, the lanes that reach it
/// (as often as any lane of their warp) and those of the member masks that
/// reach it fewer times. Lanes that reach it with the warp converged are not
/// recorded (they reach it together, as often as each other).
pub(super) fn partial_warp_collectives(
    reaches: BTreeMap<TextRange, (String, BTreeMap<(u32, u32), (u32, u32)>)>,
    threads_per_cta: u32,
) -> Vec<(TextRange, String, u32, Vec<u32>, Vec<u32>)> {
    let mut out = Vec::new();
    for (site, (what, by_thread)) in reaches {
        let mut warps: BTreeMap<(u32, u32), Vec<(u32, u32, u32)>> = BTreeMap::new();
        for (&(cta, tid), &(count, mask)) in &by_thread {
            warps.entry((cta, tid / 32)).or_default().push((tid, count, mask));
        }
        let mut found: Option<(u32, Vec<u32>, Vec<u32>)> = None;
        for ((cta, warp), lanes) in warps {
            if found.as_ref().is_some_and(|(c, ..)| *c != cta) {
                break;
            }
            let most = lanes.iter().map(|l| l.1).max().unwrap_or(0);
            let mask = lanes.iter().fold(0u32, |m, l| m | l.2);
            let count_of = |t: u32| lanes.iter().find(|l| l.0 == t).map_or(0, |l| l.1);
            let first = warp * 32;
            let last = (first + 32).min(threads_per_cta);
            let missing: Vec<u32> = (first..last).filter(|t| mask & (1 << (t % 32)) != 0 && count_of(*t) < most).collect();
            if missing.is_empty() {
                continue;
            }
            let entry = found.get_or_insert_with(|| (cta, Vec::new(), Vec::new()));
            entry.1.extend(lanes.iter().filter(|l| l.1 == most).map(|l| l.0));
            entry.2.extend(missing);
        }
        if let Some((cta, reached, missing)) = found {
            out.push((site, what, cta, reached, missing));
        }
    }
    out
}

impl<'a> ThreadRun<'a> {
    /// `elect_one`, `make_warp_uniform` and the warp collectives.
    pub(super) fn warp_call(&mut self, api: Api, call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> Value {
        let site = call.range;
        match api {
            Api::MakeWarpUniform => args.first().cloned().unwrap_or(Value::unknown("make_warp_uniform")),
            Api::ElectOne => Value::Bool(self.lane() == 0),
            Api::SyncWarp | Api::Shuffle | Api::Vote | Api::WarpReduction | Api::WarpRedux => {
                if !self.converged() {
                    if let Some(mask) = self.member_mask(api, call, args, kwargs) {
                        let what = collective_what(api, call, mask);
                        self.partial_collective(site, &what, mask);
                        if api == Api::SyncWarp {
                            // The lanes of the mask meet there.
                            self.record_mem(MemKind::LaneSync { mask }, site);
                        }
                    }
                }
                if api == Api::SyncWarp && self.converged() {
                    // A meeting point of the warp's lanes, counted by each.
                    self.record_mem(MemKind::WarpSync, site);
                    self.warp_point += 1;
                }
                opaque_result(api).expect("a warp collective's value")
            }
            _ => Value::None,
        }
    }

    /// A warp-collective operation over the lanes of `mask` reached by this
    /// thread while its warp is split.
    /// The lanes this lane stands in for decided as it did to get here, so
    /// they reach it too: it is recorded for them with the lane's other
    /// registrations (see [`StandIn`]).
    pub(super) fn partial_collective(&mut self, site: TextRange, what: &str, mask: u32) {
        self.shared.reach_collective(site, what, (self.cta, self.tid), mask);
        if self.stands_in() {
            self.collectives.push((site, what.into(), mask));
        }
    }

    /// The member mask of a warp collective: the default (the full warp) or
    /// a known integer; `None` when it is computed at run time.
    pub(super) fn member_mask(&mut self, api: Api, call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> Option<u32> {
        let param = match api {
            // `shuffle_sync_bfly(val, offset, mask=-1)` whatever
            // `threads_in_group` is.
            Api::WarpReduction => return Some(FULL_MASK),
            Api::WarpRedux => "mask_and_clamp",
            _ => "mask",
        };
        match self.arg_value(call, param, &[], args, kwargs) {
            None | Some(Value::None) => Some(FULL_MASK),
            // Only the low 32 bits are the mask (`-1` is every lane).
            Some(v) => v.as_int().map(|m| m as u32),
        }
    }
}
