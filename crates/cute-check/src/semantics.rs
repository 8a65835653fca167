//! The transition relation shared by the explorers: what one operation does to
//! the barriers, and when it can run.
//!
//! An mbarrier holds an expected count, a pending count and a phase parity.
//! `Arrive` lowers the pending count; reaching zero completes the phase: the
//! parity flips and the pending count is reloaded. `Wait(p)` can run once the
//! phase with parity `p` has completed, i.e. while the current parity is not
//! `p` (a fresh barrier is in phase 0, so `Wait(1)` passes at once).
//!
//! `sync_threads`, named barriers and the cluster barrier are modelled as
//! barriers initialised before any thread runs, with one arrival per
//! participant and the generation's parity as the phase.

use crate::model::{Model, OpKind};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BarState {
    /// Arrivals per phase; 0 while the barrier is not initialised.
    pub expected: u32,
    /// Arrivals still missing in the current phase.
    pub pending: u32,
    /// Parity of the current (incomplete) phase.
    pub parity: u8,
}

impl BarState {
    pub fn initialised(&self) -> bool {
        self.expected > 0
    }
}

/// Something that should not happen on a correct kernel and that the model
/// does not give a meaning to (the path is not explored further).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Hazard {
    ArriveBeforeInit { bar: u32, site: cute_syntax::TextRange },
    WaitBeforeInit { bar: u32, site: cute_syntax::TextRange },
    InitWhileInUse { bar: u32, site: cute_syntax::TextRange },
}

pub fn initial_barriers(model: &Model) -> Vec<BarState> {
    model
        .barriers
        .iter()
        .map(|b| match b.preset_count {
            Some(n) => BarState { expected: n, pending: n, parity: 0 },
            None => BarState { expected: 0, pending: 0, parity: 0 },
        })
        .collect()
}

pub fn enabled(op: &OpKind, bars: &[BarState]) -> bool {
    match *op {
        OpKind::Wait { bar, parity } => {
            let b = bars[bar as usize];
            // An uninitialised wait is reported as a hazard when taken.
            !b.initialised() || b.parity != parity
        }
        OpKind::Arrive { .. } | OpKind::Init { .. } => true,
    }
}

/// Apply an enabled operation. Returns whether a phase completed.
pub fn apply(op: &OpKind, site: cute_syntax::TextRange, bars: &mut [BarState]) -> Result<bool, Hazard> {
    match *op {
        OpKind::Init { bar, count } => {
            let b = &mut bars[bar as usize];
            if b.initialised() && b.pending != b.expected {
                return Err(Hazard::InitWhileInUse { bar, site });
            }
            *b = BarState { expected: count, pending: count, parity: 0 };
            Ok(false)
        }
        OpKind::Arrive { bar, count } => {
            let b = &mut bars[bar as usize];
            if !b.initialised() {
                return Err(Hazard::ArriveBeforeInit { bar, site });
            }
            if count < b.pending {
                b.pending -= count;
                Ok(false)
            } else {
                // Extra arrivals spill into the next phase.
                let spill = (count - b.pending) % b.expected;
                b.parity ^= 1;
                b.pending = b.expected - spill;
                Ok(true)
            }
        }
        OpKind::Wait { bar, .. } => {
            if !bars[bar as usize].initialised() {
                return Err(Hazard::WaitBeforeInit { bar, site });
            }
            Ok(false)
        }
    }
}

impl Hazard {
    pub fn site(&self) -> cute_syntax::TextRange {
        match self {
            Hazard::ArriveBeforeInit { site, .. } | Hazard::WaitBeforeInit { site, .. } | Hazard::InitWhileInUse { site, .. } => *site,
        }
    }

    /// The same hazard at another site (to map position-independent sites back).
    pub fn at(&self, site: cute_syntax::TextRange) -> Hazard {
        match *self {
            Hazard::ArriveBeforeInit { bar, .. } => Hazard::ArriveBeforeInit { bar, site },
            Hazard::WaitBeforeInit { bar, .. } => Hazard::WaitBeforeInit { bar, site },
            Hazard::InitWhileInUse { bar, .. } => Hazard::InitWhileInUse { bar, site },
        }
    }
}
