//! Atomics and locks from `std`, or from loom in the loom build
//! (`RUSTFLAGS="--cfg loom"`), so the loom models exercise the very
//! protocol code the daemon runs ([`crate::epoch`], [`crate::label_cache`], [`crate::handoff`],
//! [`crate::memory_guard`], [`crate::call_threads`]'s shares).

#[cfg(loom)]
pub use loom::sync::{
    atomic::AtomicU64, atomic::AtomicUsize, Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
};
#[cfg(not(loom))]
pub use std::sync::{
    atomic::AtomicU64, atomic::AtomicUsize, Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
};
