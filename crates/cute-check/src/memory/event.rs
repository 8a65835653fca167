//! The events of an execution: each memory operation as it ran, with its
//! clocks, and what an access touches (its buffer, its region, whether it
//! writes). An atomic update is a write of the element its pointer points at.

use std::borrow::Cow;

use cute_syntax::TextRange;

use crate::model::*;

use super::clock::Stamp;

/// One memory operation as executed.
pub(super) struct Event {
    pub(super) actor: usize,
    /// Position in the actor's memory program.
    pub(super) index: usize,
    pub(super) kind: MemKind,
    pub(super) site: TextRange,
    /// Its kernel statement (`MemOp::stmt`).
    pub(super) stmt: u32,
    /// See `MemOp::branches`.
    pub(super) branches: Option<std::sync::Arc<[(u32, bool)]>>,
    pub(super) ctl: Stamp,
    pub(super) mmo: Stamp,
    /// For an async copy: its own clock component.
    pub(super) async_id: Option<usize>,
}

pub(super) fn accessed_buffer(kind: &MemKind) -> Option<BufferIx> {
    match kind {
        MemKind::Access { buffer, .. } | MemKind::AsyncCopy { buffer, .. } => Some(*buffer),
        // A scalar exchange into a buffer that is read as data (DSMEM
        // hand-off through `atomic_exch`) is a write of it.
        MemKind::Update { buffer, .. } => Some(*buffer),
        _ => None,
    }
}

/// Whether an access writes (an atomic update does); false for what is no
/// access.
pub(super) fn writes(kind: &MemKind) -> bool {
    match kind {
        MemKind::Access { write, .. } | MemKind::AsyncCopy { write, .. } => *write,
        MemKind::Update { .. } => true,
        _ => false,
    }
}

pub(super) fn region_and_write(kind: &MemKind) -> Option<(Cow<'_, Region>, bool)> {
    match kind {
        MemKind::Access { region, write, .. } | MemKind::AsyncCopy { region, write, .. } => Some((Cow::Borrowed(region), *write)),
        // An atomic writes the element its pointer points at.
        MemKind::Update { offset: Some(o), .. } => Some((Cow::Owned(Region { stage: None, element: Element::At(vec![*o]) }), true)),
        MemKind::Update { .. } => Some((Cow::Owned(Region { stage: None, element: Element::Unknown }), true)),
        _ => None,
    }
}
