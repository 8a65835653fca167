//! The pairs of a buffer's accesses to compare, visited as they are found and
//! never stored (a wide access meets every other): an access of a known element
//! meets only that element and the accesses of unknown or whole extent; two
//! reads, or two accesses of one thread in program order, are never compared;
//! two accesses in opposite branches of a condition every thread decides alike
//! (run both ways) never both happen and are not compared either;
//! in shared memory a thread's earlier accesses are taken latest first and left
//! once one is ordered by the memory clock (a thread's clock only grows along
//! its program).

use std::borrow::Cow;
use rustc_hash::FxHashMap as HashMap;

use crate::model::*;

use super::event::{region_and_write, writes, Event};

/// Visits the pairs of a buffer's accesses (among `of_buffer`, ascending,
/// which is the order they ran in) that may conflict, each as (earlier,
/// later), until `visit` returns false: accesses of known elements meet
/// only accesses of the same element and those of unknown extent, instead
/// of every other access; two reads never conflict, nor do two atomic
/// updates, nor two accesses one thread makes in program order. Pairs are many (a wide access meets
/// every other): they are visited as they are found, never stored.
///
/// With `prune` (shared memory, where a pair of the threads' own accesses
/// ordered by the memory clock is never a finding), see [`unordered_pairs`].
pub(super) fn candidate_pairs(events: &[Event], of_buffer: &[usize], prune: bool, visit: &mut dyn FnMut(usize, usize) -> bool) {
    let may_conflict = |i: usize, j: usize| {
        let (a, b) = (&events[i], &events[j]);
        let program_order = a.actor == b.actor && a.async_id.is_none() && b.async_id.is_none();
        let never_both = opposite_branches(a.branches.as_deref(), b.branches.as_deref());
        // Two atomic updates of one word (a weak store is none) are atomic
        // with respect to each other: no data race, whatever orders them
        // (what orders the data they publish is the message-passing
        // analysis's).
        let atomic = |k: &MemKind| matches!(k, MemKind::Update { order, .. } if *order != Order::Weak);
        let both_atomic = atomic(&a.kind) && atomic(&b.kind);
        !program_order && !never_both && !both_atomic && (writes(&a.kind) || writes(&b.kind))
    };
    let mut visit = |i: usize, j: usize| !may_conflict(i, j) || visit(i, j);
    if prune {
        unordered_pairs(events, of_buffer, &mut visit);
    } else {
        all_pairs(events, of_buffer, &mut visit);
    }
}

/// The element an access touches, `None` for one of unknown or whole
/// extent (which meets every access of the buffer).
fn element_of(event: &Event) -> Option<(Option<i64>, &[i64])> {
    match region_and_write(&event.kind) {
        Some((Cow::Borrowed(Region { stage, element: Element::At(at) }), _)) => Some((*stage, at.as_slice())),
        _ => None,
    }
}

/// Every pair (global memory, where accesses are not ordered through the
/// memory clock alone); false once `visit` stopped.
fn all_pairs(events: &[Event], of_buffer: &[usize], visit: &mut dyn FnMut(usize, usize) -> bool) -> bool {
    let mut by_element: HashMap<(Option<i64>, &[i64]), Vec<usize>> = HashMap::default();
    let mut wide = Vec::new();
    for &i in of_buffer {
        match element_of(&events[i]) {
            Some(key) => by_element.entry(key).or_default().push(i),
            None => wide.push(i),
        }
    }
    for group in by_element.values() {
        for (x, &i) in group.iter().enumerate() {
            if !group[x + 1..].iter().all(|&j| visit(i, j)) {
                return false;
            }
        }
    }
    for (x, &i) in wide.iter().enumerate() {
        if !wide[x + 1..].iter().all(|&j| visit(i, j)) {
            return false;
        }
        for group in by_element.values() {
            if !group.iter().all(|&j| visit(i.min(j), i.max(j))) {
                return false;
            }
        }
    }
    true
}

/// The pairs in shared memory, where a pair ordered by the memory clock is
/// never a finding: for each access, the earlier accesses of every other
/// thread are taken latest first, and those before the first one ordered
/// before it are skipped (the thread's clock only grows along its program,
/// so they are ordered too). Async copies are not ordered that way: they
/// pair with every access they may overlap. False once `visit` stopped.
fn unordered_pairs(events: &[Event], of_buffer: &[usize], visit: &mut dyn FnMut(usize, usize) -> bool) -> bool {
    type ByThread = HashMap<usize, Vec<usize>>;
    type Key<'e> = (Option<i64>, &'e [i64]);
    #[derive(Default)]
    struct Earlier<'e> {
        /// Accesses (async copies apart) by thread: of any element, of
        /// unknown or whole extent, of each known element.
        by_thread: ByThread,
        wide_by_thread: ByThread,
        element_by_thread: HashMap<Key<'e>, ByThread>,
        /// Every access and every copy: of any element, of unknown or whole
        /// extent, of each known element.
        all: Vec<usize>,
        wide: Vec<usize>,
        element: HashMap<Key<'e>, Vec<usize>>,
        copies: Vec<usize>,
        wide_copies: Vec<usize>,
        element_copies: HashMap<Key<'e>, Vec<usize>>,
    }
    let mut earlier = Earlier::default();
    // The earlier accesses of `lists`' other threads not ordered before `j`.
    let unordered = |lists: Option<&ByThread>, j: usize, visit: &mut dyn FnMut(usize, usize) -> bool| {
        let later = &events[j];
        for (&thread, accesses) in lists.into_iter().flatten() {
            if thread == later.actor {
                continue;
            }
            for &i in accesses.iter().rev() {
                if events[i].mmo[thread] <= later.mmo[thread] {
                    break;
                }
                if !visit(i, j) {
                    return false;
                }
            }
        }
        true
    };
    let each = |list: Option<&Vec<usize>>, j: usize, visit: &mut dyn FnMut(usize, usize) -> bool| list.into_iter().flatten().all(|&i| visit(i, j));
    for &j in of_buffer {
        let event = &events[j];
        let key = element_of(event);
        let copy = event.async_id.is_some();
        let go_on = match (key, copy) {
            (Some(k), true) => each(earlier.element.get(&k), j, visit) && each(Some(&earlier.wide), j, visit),
            (None, true) => each(Some(&earlier.all), j, visit),
            (Some(k), false) => {
                each(earlier.element_copies.get(&k), j, visit)
                    && each(Some(&earlier.wide_copies), j, visit)
                    && unordered(earlier.element_by_thread.get(&k), j, visit)
                    && unordered(Some(&earlier.wide_by_thread), j, visit)
            }
            (None, false) => each(Some(&earlier.copies), j, visit) && unordered(Some(&earlier.by_thread), j, visit),
        };
        if !go_on {
            return false;
        }
        earlier.all.push(j);
        match key {
            Some(k) => earlier.element.entry(k).or_default().push(j),
            None => earlier.wide.push(j),
        }
        if copy {
            earlier.copies.push(j);
            match key {
                Some(k) => earlier.element_copies.entry(k).or_default().push(j),
                None => earlier.wide_copies.push(j),
            }
        } else {
            earlier.by_thread.entry(event.actor).or_default().push(j);
            match key {
                Some(k) => earlier.element_by_thread.entry(k).or_default().entry(event.actor).or_default().push(j),
                None => earlier.wide_by_thread.entry(event.actor).or_default().push(j),
            }
        }
    }
    true
}
