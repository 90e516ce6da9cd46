//! The three ways of keeping the task's label alive during a check that
//! seed 003 compares, around the same decision ([`Label::decide`]).

use std::hint::black_box;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use rampart_avc::protocol::{CachePadded, Published, Reader};

use super::paths::PathReq;
use super::{Decide, Label};
use crate::variants::percpu_ref::{add, slots};
use crate::variants::MAX_THREADS;

/// A design under test, shared by every thread of a run.
pub trait Design: Sync {
    type Thread<'a>: OpenPath
    where
        Self: 'a;
    /// The checker of thread `index` (0-based within the run).
    fn thread(&self, index: usize) -> Self::Thread<'_>;
}

/// One thread's opens.
pub trait OpenPath {
    /// Whether the task's profile lets it open `p` for reading.
    fn open(&mut self, p: &PathReq, how: Decide) -> bool;
}

/// The designs, named as in the report and the JSON output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DesignId {
    Kref,
    PercpuRef,
    Rampart,
}

impl DesignId {
    pub const ALL: [DesignId; 3] = [DesignId::Kref, DesignId::PercpuRef, DesignId::Rampart];

    pub fn name(self) -> &'static str {
        match self {
            DesignId::Kref => "kref",
            DesignId::PercpuRef => "percpu_ref",
            DesignId::Rampart => "rampart",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            DesignId::Kref => "one shared `Arc<Label>` cloned and dropped around each check (aa_get_label/aa_put_label, 2024)",
            DesignId::PercpuRef => "a per-thread counter on its own cache line, raised and lowered around each check (the proposed percpu_ref fix)",
            DesignId::Rampart => "the label published as the AVC publishes its snapshots (`Published`/`Reader` of rampart-avc): per check one read of a read-mostly sequence number, no write",
        }
    }
}

/// `kref`: every check takes a reference on the one shared label (an
/// atomic increment of the line all threads write) and drops it (an
/// atomic decrement).
pub struct Kref {
    label: Arc<Label>,
}

impl Kref {
    pub fn new(label: Arc<Label>) -> Kref {
        Kref { label }
    }
}

impl Design for Kref {
    type Thread<'a> = &'a Kref;
    fn thread(&self, _index: usize) -> &Kref {
        self
    }
}

impl OpenPath for &Kref {
    #[inline]
    fn open(&mut self, p: &PathReq, how: Decide) -> bool {
        // aa_get_label: one atomic increment of the shared count.
        let label = black_box(Arc::clone(&self.label));
        let allowed = label.decide(p, how);
        // aa_put_label: one atomic decrement.
        drop(label);
        allowed
    }
}

/// `percpu_ref`: the reference is counted on the thread's own slot; the
/// shared `Arc` is only read.
pub struct PercpuRef {
    label: Arc<Label>,
    refs: Box<[CachePadded<AtomicU64>]>,
}

impl PercpuRef {
    pub fn new(label: Arc<Label>) -> PercpuRef {
        PercpuRef { label, refs: slots() }
    }
}

/// One thread's view: the label and its own counter slot.
pub struct PercpuThread<'a> {
    label: &'a Label,
    slot: &'a AtomicU64,
}

impl Design for PercpuRef {
    type Thread<'a> = PercpuThread<'a>;
    fn thread(&self, index: usize) -> PercpuThread<'_> {
        // MAX_THREADS > 0 slots; threads beyond share a slot (still
        // correct: `add` is a plain load and store per slot owner, and
        // the count is never read here).
        PercpuThread { label: &self.label, slot: &self.refs[index % MAX_THREADS] }
    }
}

impl OpenPath for PercpuThread<'_> {
    #[inline]
    fn open(&mut self, p: &PathReq, how: Decide) -> bool {
        add(self.slot, 1);
        let allowed = self.label.decide(p, how);
        add(self.slot, u64::MAX); // -1
        allowed
    }
}

/// `rampart`: the label is a published snapshot; each thread holds its
/// own `Arc` of the one it last saw and refreshes only when the sequence
/// number moved (never, in this workload).
pub struct Rampart {
    published: Published<Label>,
}

impl Rampart {
    pub fn new(label: Arc<Label>) -> Rampart {
        Rampart { published: Published::new(label) }
    }
}

/// One thread's reader of the published label.
pub struct RampartThread<'a> {
    published: &'a Published<Label>,
    reader: Reader<Label>,
}

impl Design for Rampart {
    type Thread<'a> = RampartThread<'a>;
    fn thread(&self, _index: usize) -> RampartThread<'_> {
        RampartThread { published: &self.published, reader: Reader::new() }
    }
}

impl OpenPath for RampartThread<'_> {
    #[inline]
    fn open(&mut self, p: &PathReq, how: Decide) -> bool {
        if !self.reader.is_current(self.published) {
            // Once per publish per thread: the old snapshot is released
            // (freed here if this thread was its last holder).
            drop(self.reader.refresh(self.published));
        }
        self.reader.held().is_some_and(|label| label.decide(p, how))
    }
}

/// One instance of each design, over the same label.
pub struct Designs {
    pub kref: Kref,
    pub percpu_ref: PercpuRef,
    pub rampart: Rampart,
}

impl Designs {
    pub fn new(label: Arc<Label>) -> Designs {
        Designs {
            kref: Kref::new(Arc::clone(&label)),
            percpu_ref: PercpuRef::new(Arc::clone(&label)),
            rampart: Rampart::new(label),
        }
    }
}
