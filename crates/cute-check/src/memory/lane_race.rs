//! Races between lanes of one converged warp that the slice found (see
//! `LaneRace`): lanes of a warp do not run in lock-step, so only a
//! `sync_warp()` or a barrier orders them. Reported at the write, with a
//! `sync_warp()` before the later access when the two are separate statements.

use crate::model::*;

use super::{MemoryFinding, MemoryRule, Repair};

/// A race between two lanes of one converged warp (see [`LaneRace`]),
/// reported at the write. The repair puts a `sync_warp` before the later
/// access, when the two are separate statements.
pub(super) fn lane_race(model: &Model, lane0: &ThreadMemory, race: &LaneRace) -> Option<MemoryFinding> {
    let (first, second) = (lane0.ops.get(race.first as usize)?, lane0.ops.get(race.second as usize)?);
    let (MemKind::Access { buffer, write: first_writes, .. }, MemKind::Access { write: second_writes, .. }) = (&first.kind, &second.kind) else {
        return None;
    };
    let name = &model.buffers[*buffer as usize].name;
    let (cta, lane0_tid) = lane0.thread;
    let element = subscript(&race.element);
    let describe = |lane: u32, writes: bool| {
        let does = if writes { "writes" } else { "reads" };
        format!("{} {does} `{name}{element}`", describe_thread(cta, lane0_tid + lane, model.ctas))
    };
    let (first_said, second_said) = (describe(race.first_lane, *first_writes), describe(race.second_lane, *second_writes));
    // Reported at the write.
    let (at, said, other_said) = if *second_writes { (second, &second_said, &first_said) } else { (first, &first_said, &second_said) };
    // Within one statement (`buf[lane] = buf[lane ^ 1]`) there is no place
    // for the `sync_warp`: the load has to move to a statement of its own.
    let repair = if first.stmt != second.stmt {
        Repair::InsertWarpSyncBefore { site: second.site, stmt: second.stmt, after: first.site }
    } else {
        Repair::None
    };
    Some(MemoryFinding {
        rule: MemoryRule::SmemRace,
        site: at.site,
        message: format!(
            "{said} while {other_said}, lanes of the same warp: lanes of a warp do not run in lock-step, and no `sync_warp()` or barrier orders the two"
        ),
        steps: vec![
            (first.site, first_said.clone()),
            (second.site, format!("{second_said}, with no `sync_warp()` or barrier since the access above")),
        ],
        repair,
    })
}

/// An element's coordinates as a subscript: `[3]`, `[1, 2]`.
pub(super) fn subscript(coords: &[i64]) -> String {
    format!("[{}]", coords.iter().map(i64::to_string).collect::<Vec<_>>().join(", "))
}
