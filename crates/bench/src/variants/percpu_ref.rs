//! `percpu_ref`: the 2024 fix for AppArmor's label refcount (seed 003):
//! the reference is taken on a per-CPU counter instead of the shared one.
//! Here each thread owns a counter slot on its own cache line and updates
//! it with a plain load and store (the kernel's `this_cpu_inc` is not a
//! locked instruction either). The price is memory: one padded counter
//! per label per CPU (here: per thread slot).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rampart_avc::protocol::CachePadded;
use rampart_avc::{ClassIdx, Object, Perms, Sid, Subject};

use super::checker::{key, Checker, KeyMap, PerCall, SecurityServer, ThreadCheck, MAX_THREADS};
use crate::error::BenchError;

pub struct PercpuRef {
    map: Arc<KeyMap>,
    /// One counter per thread slot, each alone on its cache line.
    refs: Box<[CachePadded<AtomicU64>]>,
    server: SecurityServer,
}

impl PercpuRef {
    pub fn new(map: Arc<KeyMap>, server: SecurityServer) -> PercpuRef {
        PercpuRef { map, refs: slots(), server }
    }

    /// Bytes the per-thread counters take for one label.
    pub fn counter_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.refs)
    }
}

/// One zeroed counter per thread slot ([`MAX_THREADS`]), each alone on
/// its cache line.
pub(crate) fn slots() -> Box<[CachePadded<AtomicU64>]> {
    (0..MAX_THREADS).map(|_| CachePadded(AtomicU64::new(0))).collect()
}

/// One thread's view: its own counter slot.
pub struct PercpuThread<'a> {
    owner: &'a PercpuRef,
    slot: &'a AtomicU64,
}

impl Checker for PercpuRef {
    type Thread<'a> = PercpuThread<'a>;
    type Open<'a> = PerCall<PercpuThread<'a>>;

    fn thread(&self, index: usize) -> PercpuThread<'_> {
        // `refs` has MAX_THREADS > 0 slots; extra threads share a slot.
        let slot = &self.refs[index % self.refs.len()];
        PercpuThread { owner: self, slot }
    }

    fn open<'a>(
        &'a self,
        index: usize,
        subject: &'a Subject,
        object: &'a Object,
        class: ClassIdx,
        perms: Perms,
    ) -> Result<Self::Open<'a>, BenchError> {
        Ok(PerCall::new(self.thread(index), subject, object, class, perms))
    }
}

/// Adds `delta` to a counter this thread alone writes: load and store
/// (also the AppArmor workload's per-CPU count, crate::apparmor::designs).
#[inline]
pub(crate) fn add(counter: &AtomicU64, delta: u64) {
    // Relaxed: the slot's only writer is this thread (workloads give each
    // thread its own index), and the count publishes no other memory; a
    // reclaim worker summing the slots would only need a recent value.
    counter.store(counter.load(Ordering::Relaxed).wrapping_add(delta), Ordering::Relaxed);
}

impl ThreadCheck for PercpuThread<'_> {
    #[inline]
    fn check(&mut self, ssid: Sid, tsid: Sid, class: ClassIdx, perms: Perms) -> bool {
        add(self.slot, 1);
        let pass = match self.owner.map.get(&key(ssid, tsid, class)) {
            Some(passing) => passing.contains(perms),
            None => self.owner.server.compute(ssid, tsid, class).contains(perms),
        };
        add(self.slot, u64::MAX); // -1
        pass
    }
}
