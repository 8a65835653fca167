//! Kernels found clean, remembered by what decides their diagnostics.
//!
//! Whether a kernel gets diagnostics is decided by the models instantiated from
//! its slice (see [`crate::analysis::check_slice_with`]); its text and
//! positions only shape them. A kernel whose instantiation key
//! ([`canonical::Key`], positions ranked, datapath cut) and options were once
//! found clean is clean again: an edit to its comments, its datapath or the
//! lines above it publishes at once, without taking its models out of the memo,
//! decoding them and running the rules on them again (for a 256-thread smoother
//! with 17,668 memory entries, that is most of the cost of a comment edit).

use std::sync::{Mutex, PoisonError};

use super::canonical;
use crate::analysis::AnalysisOptions;

/// Clean kernels remembered, at most; past it the set starts over.
const MAX_REMEMBERED: usize = 4096;

pub type CleanKey = (canonical::Key, AnalysisOptions);

/// Keys are whole kernel bodies, hashed on every edit of a kernel, so with
/// FxHash rather than the standard SipHash.
#[derive(Default)]
pub struct CleanKernels {
    keys: Mutex<rustc_hash::FxHashSet<CleanKey>>,
}

impl CleanKernels {
    pub fn contains(&self, key: &CleanKey) -> bool {
        self.keys.lock().unwrap_or_else(PoisonError::into_inner).contains(key)
    }

    pub fn insert(&self, key: CleanKey) {
        let mut keys = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
        if keys.len() >= MAX_REMEMBERED {
            keys.clear();
        }
        keys.insert(key);
    }
}
