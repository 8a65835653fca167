//! Where everything of the picture goes: lanes top to bottom, time left to
//! right. One lane per group of threads that takes a step (ordered by CTA,
//! then as the model lists its groups), then one lane per barrier a step
//! touches (ordered by CTA, then index). One column per step, the folded
//! prefix first when there is one, and a last column for the end: the
//! stuck waits (or the hazard). Coordinates are whole pixels so that the
//! markup is the same on every machine.

use std::collections::BTreeMap;

use cute_lint::{BarrierAt, EventKind, EventOp};

use super::view::TraceView;

pub const GUTTER: u32 = 230;
pub const TOP: u32 = 44;
pub const COLUMN: u32 = 164;
pub const BOX_W: u32 = 150;
/// The end column is wider: its boxes say what each wait waits for.
pub const END_COLUMN: u32 = 230;
pub const BOX_H: u32 = 40;
const LANE_H: u32 = 56;
const SECTION_GAP: u32 = 22;
const MARGIN: u32 = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneKind {
    Threads,
    Barrier,
}

#[derive(Clone, Debug)]
pub struct Lane {
    pub kind: LaneKind,
    /// As the trace names it: a group's threads ("warps 1..3 of CTA 0") or
    /// a barrier ("`gate` of CTA 0").
    pub name: String,
    pub cta: Option<u32>,
    pub y: u32,
    pub height: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rect {
    pub x: u32,
    pub y: u32,
    pub w: u32,
    pub h: u32,
}

impl Rect {
    pub fn center_x(&self) -> u32 {
        self.x + self.w / 2
    }
    pub fn bottom(&self) -> u32 {
        self.y + self.h
    }
}

/// A barrier's state drawn in its lane.
#[derive(Clone, Debug)]
pub struct BarrierState {
    pub lane: usize,
    pub rect: Rect,
    pub barrier: BarrierAt,
    /// The phase of this parity completed at this step.
    pub completed: Option<u8>,
}

/// A vertical arrow between a step and its barrier's lane.
#[derive(Clone, Copy, Debug)]
pub struct Arrow {
    pub x: u32,
    pub from_y: u32,
    pub to_y: u32,
    pub op: EventOp,
}

/// One step of the trace, the prefix included.
#[derive(Clone, Debug)]
pub struct StepMark {
    /// Its index in `TraceView::steps`.
    pub step: usize,
    /// Its lane; none for the prefix, which spans every lane of threads.
    pub lane: Option<usize>,
    pub rect: Rect,
    pub states: Vec<BarrierState>,
    pub arrow: Option<Arrow>,
}

/// A wait that never passes, or the hazard the trace ends on.
#[derive(Clone, Debug)]
pub struct EndMark {
    pub step: usize,
    pub lane: usize,
    pub rect: Rect,
    /// The barrier's lane, and the connector's x.
    pub barrier_lane: Option<usize>,
    pub connector_x: u32,
}

#[derive(Clone, Debug)]
pub struct Layout {
    pub width: u32,
    pub height: u32,
    pub lanes: Vec<Lane>,
    /// Column headers: (x of the column, its width, label).
    pub columns: Vec<(u32, u32, String)>,
    pub steps: Vec<StepMark>,
    pub ends: Vec<EndMark>,
    /// The barriers' state at the end, in the end column.
    pub end_states: Vec<BarrierState>,
    /// y of the line between the lanes of threads and the barriers' lanes.
    pub barriers_top: u32,
}

/// The lane of a group: its CTA, then its index among the model's groups.
type ThreadKey = (u32, u32);

pub fn layout(view: &TraceView) -> Layout {
    // Lanes of threads, with how many end marks each holds.
    let mut threads: BTreeMap<ThreadKey, (String, Option<u32>, u32)> = BTreeMap::new();
    let mut barriers: BTreeMap<(u32, u32), String> = BTreeMap::new();
    for s in &view.steps {
        let e = &s.event;
        if let Some(lane) = &e.lane {
            let entry = threads.entry((lane.cta.unwrap_or(u32::MAX), lane.group)).or_insert_with(|| (lane.threads.clone(), lane.cta, 0));
            if matches!(e.kind, EventKind::Stuck | EventKind::Hazard) {
                entry.2 += 1;
            }
        }
        for b in e.barrier.iter().chain(&e.barriers) {
            barriers.entry((b.cta, b.index)).or_insert_with(|| b.display.clone());
        }
    }
    let mut lanes = Vec::new();
    let mut thread_lane: BTreeMap<u32, usize> = BTreeMap::new();
    let mut y = TOP;
    for ((_, group), (name, cta, ends)) in &threads {
        let height = LANE_H.max(8 + ends * (BOX_H + 4) + 4);
        thread_lane.insert(*group, lanes.len());
        lanes.push(Lane { kind: LaneKind::Threads, name: name.clone(), cta: *cta, y, height });
        y += height;
    }
    let barriers_top = y + SECTION_GAP / 2;
    y += SECTION_GAP;
    let mut barrier_lane: BTreeMap<u32, usize> = BTreeMap::new();
    for ((cta, index), name) in &barriers {
        barrier_lane.insert(*index, lanes.len());
        lanes.push(Lane { kind: LaneKind::Barrier, name: name.clone(), cta: Some(*cta), y, height: LANE_H });
        y += LANE_H;
    }
    let height = y + MARGIN;

    // Only the end column, the last, is wider.
    let column_x = |c: usize| GUTTER + c as u32 * COLUMN;
    let box_in = |lane: &Lane, c: usize, slot: u32| Rect { x: column_x(c) + (COLUMN - BOX_W) / 2, y: lane.y + 8 + slot * (BOX_H + 4), w: BOX_W, h: BOX_H };
    let end_box = |lane: &Lane, c: usize, slot: u32| Rect { w: END_COLUMN - (COLUMN - BOX_W), ..box_in(lane, c, slot) };
    let centred = |lane: &Lane, c: usize| Rect { y: lane.y + (lane.height - BOX_H) / 2, ..box_in(lane, c, 0) };

    // The parity each barrier was last seen in, to mark a completed phase.
    let mut parity: BTreeMap<u32, u8> = BTreeMap::new();
    let mut columns = Vec::new();
    let mut steps = Vec::new();
    let mut ends = Vec::new();
    let mut end_states: Vec<BarrierState> = Vec::new();
    let mut end_column = None;
    let mut slots: BTreeMap<usize, u32> = BTreeMap::new();
    for (i, s) in view.steps.iter().enumerate() {
        let e = &s.event;
        match e.kind {
            EventKind::Prefix => {
                let c = columns.len();
                columns.push((column_x(c), COLUMN, if e.first == e.last { format!("step {}", e.first) } else { format!("steps {}-{}", e.first, e.last) }));
                let (first, last) = (lanes.first(), lanes.iter().rfind(|l| l.kind == LaneKind::Threads));
                let rect = match (first, last) {
                    (Some(f), Some(l)) if f.kind == LaneKind::Threads => Rect { x: box_in(f, c, 0).x, y: f.y + 8, w: BOX_W, h: l.y + l.height - 8 - (f.y + 8) },
                    _ => Rect { x: column_x(c) + (COLUMN - BOX_W) / 2, y: TOP + 8, w: BOX_W, h: BOX_H },
                };
                let states = e
                    .barriers
                    .iter()
                    .filter_map(|b| {
                        let lane = *barrier_lane.get(&b.index)?;
                        parity.insert(b.index, b.parity);
                        Some(BarrierState { lane, rect: centred(&lanes[lane], c), barrier: b.clone(), completed: None })
                    })
                    .collect();
                steps.push(StepMark { step: i, lane: None, rect, states, arrow: None });
            }
            EventKind::Step => {
                let c = columns.len();
                columns.push((column_x(c), COLUMN, format!("step {}", e.first)));
                let Some(lane) = e.lane.as_ref().and_then(|l| thread_lane.get(&l.group)).copied() else { continue };
                let rect = centred(&lanes[lane], c);
                let mut states = Vec::new();
                let mut arrow = None;
                if let Some(b) = &e.barrier {
                    if let Some(&bl) = barrier_lane.get(&b.index) {
                        let before = parity.insert(b.index, b.parity).unwrap_or(0);
                        let completed = (before != b.parity && b.expected > 0).then_some(before);
                        let state = BarrierState { lane: bl, rect: centred(&lanes[bl], c), barrier: b.clone(), completed };
                        arrow = e.op.map(|op| Arrow { x: rect.center_x(), from_y: rect.bottom(), to_y: state.rect.y, op });
                        states.push(state);
                    }
                }
                steps.push(StepMark { step: i, lane: Some(lane), rect, states, arrow });
            }
            EventKind::Stuck | EventKind::Hazard => {
                let c = *end_column.get_or_insert_with(|| {
                    columns.push((column_x(columns.len()), END_COLUMN, if e.kind == EventKind::Stuck { "stuck".to_string() } else { "then".to_string() }));
                    columns.len() - 1
                });
                let Some(lane) = e.lane.as_ref().and_then(|l| thread_lane.get(&l.group)).copied() else { continue };
                let slot = slots.entry(lane).or_insert(0);
                let rect = end_box(&lanes[lane], c, *slot);
                *slot += 1;
                let bl = e.barrier.as_ref().and_then(|b| barrier_lane.get(&b.index)).copied();
                if let (Some(bl), Some(b)) = (bl, &e.barrier) {
                    if !end_states.iter().any(|s| s.lane == bl) {
                        end_states.push(BarrierState { lane: bl, rect: Rect { y: lanes[bl].y + (LANE_H - BOX_H) / 2, ..end_box(&lanes[bl], c, 0) }, barrier: b.clone(), completed: None });
                    }
                }
                let connector_x = rect.x + 16 + (16 * ends.len() as u32) % (rect.w - 32);
                ends.push(EndMark { step: i, lane, rect, barrier_lane: bl, connector_x });
            }
        }
    }
    let width = columns.last().map_or(GUTTER + COLUMN, |(x, w, _)| x + w) + MARGIN;
    Layout { width, height, lanes, columns, steps, ends, end_states, barriers_top }
}
