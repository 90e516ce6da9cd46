//! The one place that chooses between `std` and `loom` synchronisation.
//!
//! The lock-free protocols of this crate ([`crate::publish`],
//! [`crate::l2`] and [`crate::claim`]) import their atomics, `Arc` and
//! `Mutex` from here, so building with `RUSTFLAGS="--cfg loom"` runs the
//! very same code under the loom model checker (`tests/loom.rs`).
//! Everything that is not part of a modelled protocol (the SID table,
//! statistics, handles) uses `std` directly. Under loom, `Mutex` stands in
//! for `arc_swap::ArcSwap` (see [`crate::publish`]), so only the loom build
//! re-exports it.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize};
#[cfg(loom)]
pub(crate) use loom::sync::{Arc, Mutex};

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize};
#[cfg(not(loom))]
pub(crate) use std::sync::Arc;

/// The value inside `arc` if this was its last reference (`std`'s
/// `Arc::into_inner`; loom's `Arc` only has `try_unwrap`, which can fail
/// for two racing last holders, so there the count is best effort).
pub(crate) fn into_inner<T>(arc: Arc<T>) -> Option<T> {
    #[cfg(loom)]
    {
        Arc::try_unwrap(arc).ok()
    }
    #[cfg(not(loom))]
    {
        Arc::into_inner(arc)
    }
}

/// A value written once, before it is shared, and only read afterwards.
/// Under loom it is a tracked cell, so the models check that every read is
/// ordered after the write (that publication really happens-before use);
/// otherwise it is the plain value.
#[cfg(loom)]
pub(crate) struct Immutable<T>(loom::cell::UnsafeCell<T>);

#[cfg(loom)]
impl<T: Copy> Immutable<T> {
    pub(crate) fn new(value: T) -> Immutable<T> {
        Immutable(loom::cell::UnsafeCell::new(value))
    }

    pub(crate) fn get(&self) -> T {
        // SAFETY: the value is never written after `new`; loom checks
        // that this read is ordered after that initialisation.
        self.0.with(|p| unsafe { *p })
    }
}

#[cfg(not(loom))]
pub(crate) struct Immutable<T>(T);

#[cfg(not(loom))]
impl<T: Copy> Immutable<T> {
    pub(crate) fn new(value: T) -> Immutable<T> {
        Immutable(value)
    }

    #[inline]
    pub(crate) fn get(&self) -> T {
        self.0
    }
}
