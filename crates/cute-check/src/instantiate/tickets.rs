//! Tests of the ticket each CTA draws, decided per CTA.
//!
//! `ticket = atomic_add(counter, 1)` deals the CTAs of the grid the tickets
//! 0, 1, 2, ... in the order they arrive, one each, and a test of the ticket
//! (`if ticket == 0:`, the CTA that arrives first takes a role; `if ticket >
//! 0:`, every CTA but the first waits for the one before) holds in some CTAs
//! and not in others. Decided alike in every thread, as other conditions on
//! runtime values are, it would make every CTA the first, which no run does
//! (and which leaves every CTA waiting for a CTA before it that is not
//! there). So the ways of deciding it are sets of modelled CTAs
//! ([`Decision::InCtas`]): each set of CTAs the tickets that pass the test
//! can go to. In such a way, each CTA's addition waits until the count is
//! one its decision needs (`MemKind::Update::drawn`), so the tickets the
//! memory analysis deals agree with the way.
//!
//! A test is decided per CTA where the whole grid is modelled, and in a
//! larger grid where it singles out the first ticket (`ticket == 0`, `ticket
//! > 0`): the CTAs are alike but for their tickets, so one modelled CTA can
//! stand for the one that draws it, and the modelled CTAs draw the first
//! tickets (as the memory analysis has them draw them). Any other test (the
//! last ticket of a grid larger than the CTAs modelled: `if ticket ==
//! NUM_CTAS - 1:`) is about the order in which CTAs modelled and not
//! modelled draw: it is decided alike, and the CTAs not modelled are taken
//! to have drawn before the modelled one that passes it
//! (`memory/schedule.rs`).

use crate::model::GuardCmp;

/// The sets of the `modelled` CTAs (bit `c` for CTA `c`) in which `ticket
/// cmp k` can hold, with the tickets 0 to `grid` - 1 dealt one per CTA and
/// the first `modelled` of them to the modelled CTAs; empty where the test
/// is not decided per CTA (see the module's documentation).
pub(super) fn ticket_masks(cmp: GuardCmp, k: i64, modelled: u32, grid: Option<u64>) -> Vec<u64> {
    if modelled == 0 || modelled > 64 {
        return Vec::new();
    }
    let m = i64::from(modelled);
    let grid = grid.and_then(|g| i64::try_from(g).ok());
    // Whether some ticket past the modelled CTAs' passes the test, and
    // whether some fails it: the test compares with one constant, so the
    // tickets next to it and at the ends decide.
    let beyond: Vec<i64> = [m, k - 1, k, k + 1, grid.map_or(m.saturating_add(k.abs()).saturating_add(2), |g| g - 1)]
        .into_iter()
        .filter(|&t| t >= m && grid.is_none_or(|g| t < g))
        .collect();
    let passes_beyond = beyond.iter().any(|&t| cmp.holds(t, k));
    let fails_beyond = beyond.iter().any(|&t| !cmp.holds(t, k));
    let passing = (0..m).filter(|&t| cmp.holds(t, k)).count() as u32;
    // In a grid larger than the CTAs modelled, only a test of the first
    // ticket: which CTAs draw the tickets after it, and in which order
    // with the CTAs not modelled, is what the other tests are about (the
    // last arrival), and the modelled CTAs drawing the first tickets would
    // hide the CTAs not modelled that draw after them.
    let first_only_passes = cmp.holds(0, k) && passing == 1 && !passes_beyond;
    let first_only_fails = !cmp.holds(0, k) && passing + 1 == modelled && !fails_beyond;
    if grid != Some(m) && !first_only_passes && !first_only_fails {
        return Vec::new();
    }
    let all = if modelled == 64 { u64::MAX } else { (1u64 << modelled) - 1 };
    let window = |start: u32, len: u32| (0..len).fold(0u64, |mask, i| mask | 1 << ((start + i) % modelled));
    match passing {
        0 => vec![0],
        p if p == modelled => vec![all],
        // Any CTA can hold the one ticket that passes, or the one that
        // fails; of larger sets, each window of CTAs in turn (every CTA in
        // and out of the set, not every set).
        p => (0..modelled).map(|start| window(start, p)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_of_the_first_ticket_holds_in_any_one_cta() {
        assert_eq!(ticket_masks(GuardCmp::Eq, 0, 4, Some(4)), [0b0001, 0b0010, 0b0100, 0b1000]);
        assert_eq!(ticket_masks(GuardCmp::Eq, 0, 5, Some(4096)), [1, 2, 4, 8, 16]);
        assert_eq!(ticket_masks(GuardCmp::Eq, 0, 5, None), [1, 2, 4, 8, 16]);
    }

    #[test]
    fn every_cta_but_the_first_holds_in_all_but_one() {
        assert_eq!(ticket_masks(GuardCmp::Gt, 0, 3, Some(3)), [0b011, 0b110, 0b101]);
        assert_eq!(ticket_masks(GuardCmp::Ne, 0, 3, Some(4096)), [0b011, 0b110, 0b101]);
        assert_eq!(ticket_masks(GuardCmp::Ge, 1, 3, None), [0b011, 0b110, 0b101]);
        // Tickets past the first: per CTA only where the grid is modelled.
        assert_eq!(ticket_masks(GuardCmp::Gt, 1, 3, Some(3)), [0b001, 0b010, 0b100]);
        assert!(ticket_masks(GuardCmp::Gt, 1, 3, Some(9)).is_empty());
        assert!(ticket_masks(GuardCmp::Eq, 2, 4, Some(5)).is_empty());
    }

    #[test]
    fn the_last_ticket_is_per_cta_only_where_the_whole_grid_is_modelled() {
        assert_eq!(ticket_masks(GuardCmp::Eq, 3, 4, Some(4)), [1, 2, 4, 8]);
        assert!(ticket_masks(GuardCmp::Eq, 63, 5, Some(64)).is_empty());
        assert!(ticket_masks(GuardCmp::Lt, 32, 5, Some(64)).is_empty());
        assert!(ticket_masks(GuardCmp::Eq, 4, 4, Some(5)).is_empty());
        assert!(ticket_masks(GuardCmp::Ge, 4, 4, None).is_empty());
    }

    #[test]
    fn a_test_no_modelled_ticket_passes_is_false_everywhere() {
        assert_eq!(ticket_masks(GuardCmp::Lt, 0, 4, Some(4)), [0]);
        assert_eq!(ticket_masks(GuardCmp::Ge, 0, 4, Some(4)), [0b1111]);
    }
}
