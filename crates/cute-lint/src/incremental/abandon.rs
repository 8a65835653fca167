//! Long computations that a query can walk away from.
//!
//! A salsa write waits until every database clone in use has been dropped, and
//! a query notices a pending write only when it calls into the database. An
//! exploration (bounded by seconds) or an instantiation therefore runs on a
//! thread of its own while the query waits for it, checking for cancellation
//! every 5 ms (a query that ran a two-second exploration inline would hold an
//! edit back that long); a cancelled query unwinds at once and lets the write
//! proceed. The computation finishes in the background and its result is kept
//! here, so the next revision that asks for the same key (the same model after
//! another keystroke) takes it instead of starting over.

use std::hash::Hash;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

/// How often a waiting query looks for a pending write.
const POLL: Duration = Duration::from_millis(5);

/// Finished results nobody has claimed yet are forgotten past this many.
const MAX_UNCLAIMED: usize = 64;

type Slot<V> = Arc<(Mutex<Option<Result<V, String>>>, Condvar)>;

/// Keyed by whole models: hashed with a fast hash, as salsa's own tables are.
pub struct Inflight<K, V> {
    slots: Mutex<rustc_hash::FxHashMap<K, Slot<V>>>,
}

impl<K, V> Default for Inflight<K, V> {
    fn default() -> Self {
        Inflight { slots: Mutex::new(rustc_hash::FxHashMap::default()) }
    }
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panic".to_string())
}

impl<K: Hash + Eq + Clone, V: Clone + Send + 'static> Inflight<K, V> {
    /// `work()`, run on its own thread (or joined if already running for
    /// `key`), while the calling query stays cancellable.
    pub fn run(&self, db: &dyn salsa::Database, key: &K, work: impl FnOnce() -> V + Send + 'static) -> V {
        let slot = {
            let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(slot) = slots.get(key) {
                slot.clone()
            } else {
                if slots.len() >= MAX_UNCLAIMED {
                    slots.retain(|_, s| s.0.lock().unwrap_or_else(PoisonError::into_inner).is_none());
                }
                let slot: Slot<V> = Arc::new((Mutex::new(None), Condvar::new()));
                let filled = slot.clone();
                let job = move || {
                    let result = std::panic::catch_unwind(AssertUnwindSafe(work)).map_err(|p| panic_text(&*p));
                    *filled.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(result);
                    filled.1.notify_all();
                };
                // Without a thread (resource limits), compute here.
                let job = Arc::new(Mutex::new(Some(job)));
                let spawned = {
                    let job = job.clone();
                    std::thread::Builder::new()
                        .name("cute-lsp-check".to_string())
                        .spawn(move || {
                            if let Some(job) = job.lock().unwrap_or_else(PoisonError::into_inner).take() {
                                job()
                            }
                        })
                        .is_ok()
                };
                if !spawned {
                    if let Some(job) = job.lock().unwrap_or_else(PoisonError::into_inner).take() {
                        job()
                    }
                }
                slots.insert(key.clone(), slot.clone());
                slot
            }
        };
        let result = loop {
            {
                let guard = slot.0.lock().unwrap_or_else(PoisonError::into_inner);
                let (guard, _) =
                    slot.1.wait_timeout_while(guard, POLL, |r| r.is_none()).unwrap_or_else(PoisonError::into_inner);
                if let Some(result) = guard.as_ref() {
                    break result.clone();
                }
            }
            db.unwind_if_revision_cancelled();
        };
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        if slots.get(key).is_some_and(|s| Arc::ptr_eq(s, &slot)) {
            slots.remove(key);
        }
        drop(slots);
        match result {
            Ok(value) => value,
            Err(message) => std::panic::resume_unwind(Box::new(message)),
        }
    }
}
