//! Vector clocks: one entry per thread of the model and one per async copy,
//! joined along the edges of happens-before. A memory event keeps its clock
//! as a [`Stamp`]: between two synchronizations only the thread's own entry
//! moves, so its events share the rest.

use std::rc::Rc;

pub(super) type Clock = Vec<u32>;

pub(super) fn join(into: &mut [u32], from: &[u32]) {
    for (a, b) in into.iter_mut().zip(from) {
        *a = (*a).max(*b);
    }
}

/// A thread's clock at one of its memory operations: a clock shared with
/// its other operations since the last time it learnt something from
/// another thread, and its own entry.
pub(super) struct Stamp {
    pub(super) base: Rc<[u32]>,
    pub(super) own: usize,
    pub(super) value: u32,
}

impl std::ops::Index<usize> for Stamp {
    type Output = u32;

    fn index(&self, i: usize) -> &u32 {
        if i == self.own {
            &self.value
        } else {
            &self.base[i]
        }
    }
}

/// Whether two clocks agree except at `own`.
pub(super) fn same_except(a: &[u32], b: &[u32], own: usize) -> bool {
    a.len() == b.len() && a[..own] == b[..own] && a[own + 1..] == b[own + 1..]
}
