//! One way to lock a standard mutex across the workspace.
//!
//! A panic in one task while it held a lock must not take every later caller down with it:
//! the data behind Conch's locks (maps of tabs, watchers, cards) stays usable, so a
//! poisoned lock is taken as it is.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex`, through a panic elsewhere that poisoned it.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
