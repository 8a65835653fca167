//! The lanes of one converged warp and what they touch in shared memory.
//!
//! Lane 0 records the warp's accesses for all its lanes. For an element that
//! differs across lanes (`buf[tidx + 1]`) the other lanes say which element
//! each touches, and those elements are added next to lane 0's
//! ([`add_lane_elements`]), so that the memory-ordering analysis sees what the
//! warp touches, not only lane 0's part of it. The last lane always reports: a
//! neighbour's element that belongs to the next warp (`buf[31 + 1]`) then meets
//! that warp's access.
//!
//! Lanes of one warp also race with each other: code that exchanges data
//! through shared memory on the assumption that a warp runs in lock-step
//! (`smem[lane] = v; w = smem[lane ^ 1]`) races on every GPU with independent
//! thread scheduling. Nothing between two accesses orders the lanes unless it
//! is `sync_warp` or an operation of the whole warp, so accesses are grouped by
//! [`Stretch`]. So that the lanes between lane 0 and the last need not evaluate
//! every access of every kernel, lane 0 first names the accesses where lanes
//! could race at all ([`race_points`]): those of a buffer the warp both writes
//! and reads in one stretch. Only those are evaluated by every lane, and their
//! elements are compared between lanes ([`lane_races`], `LaneRace` in the
//! model, which `smem-race` reports). Where lanes also touch the buffer on
//! their own in that stretch, in a branch that splits the warp
//! (`if lane < 16: buf[lane] += buf[lane + 16]`), the elements are added for
//! the analysis too, which pairs them with those accesses.

use rustc_hash::{FxHashMap, FxHashSet};

use cute_syntax::TextRange;

use crate::model::{opposite_branches, BufferIx, Element, LaneRace, MemKind, MemOp, Region, ThreadMemory};

/// Where a converged warp is between the points that order its lanes: the
/// warp's converged points before it (its synchronization operations and
/// `sync_warp` calls, which every lane counts: `MemOp::warp_point`). Any
/// operation of the whole warp counts as ordering, so no race is reported
/// across one.
pub(super) type Stretch = u32;

/// Who an access of lane 0's stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Lanes {
    /// Every lane, each at its own element.
    Each,
    /// Every lane, all at lane 0's element.
    All,
    /// Lane 0 alone, in a branch that splits the warp.
    Own,
}

/// An access of shared or global memory that lane 0 recorded.
#[derive(Clone, Copy, Debug)]
pub(super) struct WarpAccess {
    pub(super) site: TextRange,
    pub(super) stretch: Stretch,
    /// Index in lane 0's memory operations.
    pub(super) index: usize,
    pub(super) lanes: Lanes,
}

/// What a lane other than 0 reports of an access whose element differs
/// across lanes: where, in which stretch, in which buffer, and its element.
pub(super) type LaneRegion = (TextRange, Stretch, BufferIx, Region);

/// An access that every lane evaluates: its site, in one stretch.
pub(super) type RacePoint = (TextRange, Stretch);

/// The race points of a warp, each with whether lanes touch its buffer on
/// their own in its stretch (then the lanes' elements are added to the
/// model, see [`add_lane_elements`]).
pub(super) type RacePoints = FxHashMap<RacePoint, bool>;

fn access_of(op: &MemOp) -> Option<(BufferIx, &Region, bool)> {
    match &op.kind {
        MemKind::Access { buffer, region, write } => Some((*buffer, region, *write)),
        _ => None,
    }
}

/// The accesses whose element differs across lanes and that could race with
/// another lane's: in a stretch where lane 0, for the warp or on its own,
/// both writes and reads their buffer. `shared` says which buffers are this
/// CTA's shared memory.
pub(super) fn race_points(ops: &[MemOp], accesses: &[WarpAccess], shared: impl Fn(BufferIx) -> bool) -> RacePoints {
    #[derive(Default)]
    struct Seen {
        writes: bool,
        reads: bool,
        on_their_own: bool,
        sites: Vec<TextRange>,
    }
    let mut by_stretch: FxHashMap<(Stretch, BufferIx), Seen> = FxHashMap::default();
    for a in accesses {
        let Some((buffer, _, write)) = ops.get(a.index).and_then(access_of) else { continue };
        if !shared(buffer) {
            continue;
        }
        let seen = by_stretch.entry((a.stretch, buffer)).or_default();
        seen.writes |= write;
        seen.reads |= !write;
        seen.on_their_own |= a.lanes == Lanes::Own;
        if a.lanes == Lanes::Each {
            seen.sites.push(a.site);
        }
    }
    by_stretch
        .into_iter()
        .filter(|(_, seen)| seen.writes && seen.reads)
        .flat_map(|((stretch, _), seen)| seen.sites.into_iter().map(move |site| ((site, stretch), seen.on_their_own)))
        .collect()
}

/// What the warp whose last lane has just run leaves, once its lanes'
/// reports are lined up: the races between its lanes go to lane 0's memory
/// ([`lane_races`]), and the other lanes' elements next to lane 0's
/// accesses ([`add_lane_elements`]). `lanes[l]` is what lane `l` reported
/// (`None` for a lane that did not run, or lane 0 itself); `own[l]` is lane
/// `l`'s memory.
pub(super) fn settle_warp(
    lane0: &mut ThreadMemory,
    accesses: &[WarpAccess],
    points: &RacePoints,
    lanes: &[Option<Vec<LaneRegion>>],
    own: &[Option<&ThreadMemory>],
) {
    let (each, reports) = lined_up(accesses, points, lanes);
    lane0.lane_races = lane_races(&lane0.ops, accesses, points, &each, &reports);
    let last_lane = lanes.len().saturating_sub(1) as u32;
    add_lane_elements(lane0, points, &each, &reports, last_lane, own);
}

/// A lane's regions, by position among lane 0's accesses of `Lanes::Each`
/// (`None` where it reports nothing).
type Report<'r> = (u32, Vec<Option<&'r LaneRegion>>);

/// Lane 0's accesses of `Lanes::Each`, and the lanes' reports lined up with
/// them. The last lane reports every such access, the others those at
/// `points`; a lane whose report does not line up (it met other accesses,
/// in another order) is left out.
fn lined_up<'r>(accesses: &[WarpAccess], points: &RacePoints, lanes: &'r [Option<Vec<LaneRegion>>]) -> (Vec<WarpAccess>, Vec<Report<'r>>) {
    let each: Vec<WarpAccess> = accesses.iter().copied().filter(|a| a.lanes == Lanes::Each).collect();
    let last = lanes.len().saturating_sub(1);
    let reports = lanes
        .iter()
        .enumerate()
        .filter_map(|(lane, report)| {
            let report = report.as_ref()?;
            let expected = each.iter().map(|a| lane == last || points.contains_key(&(a.site, a.stretch)));
            let mut regions = report.iter();
            let mut by_access = Vec::with_capacity(each.len());
            for (a, reported) in each.iter().zip(expected) {
                if !reported {
                    by_access.push(None);
                    continue;
                }
                let r = regions.next().filter(|r| (r.0, r.1) == (a.site, a.stretch))?;
                by_access.push(Some(r));
            }
            regions.next().is_none().then_some((lane as u32, by_access))
        })
        .collect();
    (each, reports)
}

/// At most this many lanes are remembered per element and kind of access:
/// two suffice to find one of another lane.
const LANES_KEPT: usize = 2;

#[derive(Default)]
struct Touches {
    /// (lane, access) of the first writes and reads, from distinct lanes.
    writes: Vec<(u32, usize)>,
    reads: Vec<(u32, usize)>,
}

impl Touches {
    /// Keeps `access` of `lane` among the first of distinct lanes, counted
    /// apart for each set of branches it may lie in (`MemOp::branches`): an
    /// access in one branch of a condition every thread decides alike meets
    /// the first accesses of its own branch, not only the other branch's.
    fn keep(list: &mut Vec<(u32, usize)>, lane: u32, access: usize, ops: &[MemOp]) {
        let alike = list.iter().filter(|(_, other)| ops[*other].branches == ops[access].branches);
        let (kept, has_lane) = alike.fold((0, false), |(n, has), (l, _)| (n + 1, has || *l == lane));
        if kept < LANES_KEPT && !has_lane {
            list.push((lane, access));
        }
    }
}

/// Races between lanes of the warp whose lane 0 left `ops`, in accesses it
/// made for the whole warp. One race is reported per pair of sites.
fn lane_races(ops: &[MemOp], accesses: &[WarpAccess], points: &RacePoints, each: &[WarpAccess], reports: &[Report<'_>]) -> Vec<LaneRace> {
    if points.is_empty() {
        return Vec::new();
    }
    let position: FxHashMap<usize, usize> = each.iter().enumerate().map(|(p, a)| (a.index, p)).collect();
    let varying = |index: usize| position.contains_key(&index);

    let mut races = Vec::new();
    let mut seen_sites: FxHashSet<(TextRange, TextRange)> = FxHashSet::default();
    let mut touches: FxHashMap<(BufferIx, Option<i64>, &[i64]), Touches> = FxHashMap::default();
    let mut current_stretch = None;
    for a in accesses.iter().filter(|a| a.lanes != Lanes::Own) {
        let Some((buffer, region, write)) = ops.get(a.index).and_then(access_of) else { continue };
        if current_stretch != Some(a.stretch) {
            // Something ordered the lanes: earlier accesses no longer race.
            touches.clear();
            current_stretch = Some(a.stretch);
        }
        // Every lane's element of this access.
        let mut elements: Vec<(u32, BufferIx, &Region)> = vec![(0, buffer, region)];
        match position.get(&a.index) {
            Some(&p) => elements.extend(reports.iter().filter_map(|(lane, by_access)| by_access[p].map(|r| (*lane, r.2, &r.3)))),
            // The same element in every lane: two lanes stand for them all.
            None if a.lanes == Lanes::All => elements.push((1, buffer, region)),
            None => {}
        }
        for (lane, buffer, region) in elements {
            let Element::At(at) = &region.element else { continue };
            let entry = touches.entry((buffer, region.stage, at.as_slice())).or_default();
            let others = if write { &entry.reads } else { &entry.writes };
            // Accesses in opposite branches of a condition every thread
            // decides alike never both happen.
            let both_happen = |other: usize| !opposite_branches(ops[other].branches.as_deref(), ops[a.index].branches.as_deref());
            if let Some(&(other_lane, other)) = others.iter().find(|&&(l, other)| l != lane && both_happen(other)) {
                // Two accesses of one element by every lane (a flag all
                // lanes write, then read) are left alone: lanes that store
                // the same value race harmlessly, and the value is not known.
                if (varying(a.index) || varying(other)) && seen_sites.insert((ops[other].site, a.site)) {
                    races.push(LaneRace {
                        first: other as u32,
                        first_lane: other_lane,
                        second: a.index as u32,
                        second_lane: lane,
                        element: at.clone(),
                    });
                }
            }
            Touches::keep(if write { &mut entry.writes } else { &mut entry.reads }, lane, a.index, ops);
        }
    }
    races
}

/// Adds the other lanes' elements of lane 0's accesses of `Lanes::Each`
/// next to lane 0's, in the warp's place in the order: the last lane's
/// everywhere, the others' at the race points where lanes also touch the
/// buffer on their own, for the memory-ordering analysis. An element a
/// lane also touches on its own (in `own`) is not added for it, since the
/// added element is ordered as lane 0's and would meet the lane's own
/// access as another thread's.
fn add_lane_elements(
    lane0: &mut ThreadMemory,
    points: &RacePoints,
    each: &[WarpAccess],
    reports: &[Report<'_>],
    last_lane: u32,
    own: &[Option<&ThreadMemory>],
) {
    let mut extra: Vec<(usize, Vec<Region>)> = Vec::new();
    for (p, a) in each.iter().enumerate() {
        let Some((buffer, lane0_region, _)) = lane0.ops.get(a.index).and_then(access_of) else { continue };
        let mut added: Vec<Region> = Vec::new();
        let every_lane = points.get(&(a.site, a.stretch)).copied().unwrap_or(false);
        for (lane, by_access) in reports {
            if *lane != last_lane && !every_lane {
                continue;
            }
            let Some((_, _, lane_buffer, region)) = by_access[p] else { continue };
            let touched_on_its_own = || {
                own.get(*lane as usize).copied().flatten().is_some_and(|m| {
                    m.ops.iter().any(|op| match &op.kind {
                        MemKind::Access { buffer: b, region: r, .. } | MemKind::AsyncCopy { buffer: b, region: r, .. } => b == lane_buffer && r == region,
                        _ => false,
                    })
                })
            };
            if *lane_buffer == buffer && region != lane0_region && !added.contains(region) && !touched_on_its_own() {
                added.push(region.clone());
            }
        }
        if !added.is_empty() {
            extra.push((a.index, added));
        }
    }
    if extra.is_empty() {
        return;
    }
    let mut ops = Vec::with_capacity(lane0.ops.len() + extra.iter().map(|(_, r)| r.len()).sum::<usize>());
    // Where each operation moves to, for the lane races that name them.
    let mut moved_to = Vec::with_capacity(lane0.ops.len());
    let mut extra = extra.into_iter().peekable();
    for (i, op) in std::mem::take(&mut lane0.ops).into_iter().enumerate() {
        moved_to.push(ops.len() as u32);
        let added = extra.next_if(|(at, _)| *at == i).map(|(_, regions)| regions).unwrap_or_default();
        let MemKind::Access { buffer, write, .. } = op.kind else {
            ops.push(op);
            continue;
        };
        let copies: Vec<MemOp> =
            added.into_iter().map(|region| MemOp { kind: MemKind::Access { buffer, region, write }, ..op.clone() }).collect();
        ops.push(op);
        ops.extend(copies);
    }
    lane0.ops = ops;
    for race in &mut lane0.lane_races {
        race.first = moved_to[race.first as usize];
        race.second = moved_to[race.second as usize];
    }
}
