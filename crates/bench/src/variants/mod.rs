//! The designs being compared, one small self-contained implementation
//! each, behind one interface so the workloads are generic over them.
//!
//! Why generic and not `dyn`: a virtual call per check would add the same
//! few nanoseconds to every variant and blur the differences being
//! measured (and the floor, [`unsync_hashmap`], would no longer be a plain
//! `HashMap` lookup). Each workload is monomorphised per variant; the
//! driver picks one through [`Variants::visit`].
//!
//! Every cache here maps the packed key ([`rampart_avc::CacheKey`]) to
//! the set of permissions that pass, hashed with [`rampart_avc::KeyHasher`]
//! (Rampart's own hash), and fills a miss from the same reference AVC
//! ([`SecurityServer`]), so all variants give the same answers (tested)
//! and differ only in how a lookup is synchronised.

pub mod checker;
pub mod full_revalidate;
pub mod global_mutex;
pub mod kref;
pub mod module_refcount;
pub mod none;
pub mod percpu_ref;
pub mod rampart;
pub mod rwlock;
pub mod shared_counter;
pub mod unsync_hashmap;

use std::sync::Arc;

use rampart_avc::Avc;

pub use checker::{key, passing, Checker, KeyMap, OpenCheck, PerCall, SecurityServer, ThreadCheck, MAX_THREADS};

/// The variants, named as in the report and the JSON output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum VariantId {
    None,
    GlobalMutex,
    Rwlock,
    SharedCounter,
    Kref,
    PercpuRef,
    ModuleRefcount,
    FullRevalidate,
    UnsyncHashmap,
    Rampart,
}

impl VariantId {
    /// Every variant, in report order.
    pub const ALL: [VariantId; 10] = [
        VariantId::None,
        VariantId::GlobalMutex,
        VariantId::Rwlock,
        VariantId::SharedCounter,
        VariantId::Kref,
        VariantId::PercpuRef,
        VariantId::ModuleRefcount,
        VariantId::FullRevalidate,
        VariantId::UnsyncHashmap,
        VariantId::Rampart,
    ];

    pub fn name(self) -> &'static str {
        match self {
            VariantId::None => "none",
            VariantId::GlobalMutex => "global_mutex",
            VariantId::Rwlock => "rwlock",
            VariantId::SharedCounter => "shared_counter",
            VariantId::Kref => "kref",
            VariantId::PercpuRef => "percpu_ref",
            VariantId::ModuleRefcount => "module_refcount",
            VariantId::FullRevalidate => "full_revalidate",
            VariantId::UnsyncHashmap => "unsync_hashmap",
            VariantId::Rampart => "rampart",
        }
    }

    /// What it models, for the report.
    pub fn describe(self) -> &'static str {
        match self {
            VariantId::None => "no check at all",
            VariantId::GlobalMutex => "one Mutex around a HashMap cache (SELinux AVC, 2001; seed 004)",
            VariantId::Rwlock => "RwLock around the HashMap (KaiGai's rwlock patch, 2004; seed 000)",
            VariantId::SharedCounter => "lock-free immutable map, one shared AtomicU64 statistics counter per lookup",
            VariantId::Kref => {
                "lock-free map, a shared label Arc cloned and dropped per check (AppArmor, 2024; seed 003)"
            }
            VariantId::PercpuRef => "lock-free map, per-thread padded reference counters (the 2024 fix; seed 003)",
            VariantId::ModuleRefcount => {
                "lock-free map, a shared atomic refcount around each module call (Stacker, 2005; seed 001)"
            }
            VariantId::FullRevalidate => {
                "Rampart AVC, full check on every read/write, no handle (before the 2007 fix; seed 002)"
            }
            VariantId::UnsyncHashmap => "plain std HashMap, Rampart's hash, one private copy per thread (the floor)",
            VariantId::Rampart => "rampart_avc::Avc: has_perm_noaudit; Handle::permission for open objects",
        }
    }

    pub fn from_name(name: &str) -> Option<VariantId> {
        VariantId::ALL.into_iter().find(|v| v.name() == name)
    }

    /// Takes part in the AVC-hit workload (`full_revalidate` is the same
    /// check as Rampart there: it differs only on open objects).
    pub fn in_hits(self) -> bool {
        self != VariantId::FullRevalidate
    }

    /// Takes part in the open-object workloads (rcutest, read/write).
    pub fn in_files(self) -> bool {
        true
    }

    /// Takes part in the chat room (per-message checks, no handles, so
    /// `full_revalidate` would repeat `rampart`).
    pub fn in_chat(self) -> bool {
        self != VariantId::FullRevalidate
    }
}

/// Something to do with one variant, whatever its type.
pub trait Visit {
    type Out;
    fn visit<C: Checker>(&mut self, id: VariantId, checker: &C) -> Self::Out;
}

/// One instance of every variant, built over the same decisions.
pub struct Variants {
    pub none: none::NoCheck,
    pub global_mutex: global_mutex::GlobalMutex,
    pub rwlock: rwlock::RwLockCache,
    pub shared_counter: shared_counter::SharedCounter,
    pub kref: kref::Kref,
    pub percpu_ref: percpu_ref::PercpuRef,
    pub module_refcount: module_refcount::ModuleRefcount,
    pub full_revalidate: full_revalidate::FullRevalidate,
    pub unsync_hashmap: unsync_hashmap::UnsyncHashmap,
    pub rampart: rampart::Rampart,
}

impl Variants {
    /// `table` holds the decision of every key the workloads use (for the
    /// prebuilt immutable maps); the caches that fill themselves
    /// (`global_mutex`, `rwlock`) start empty and are warmed by the
    /// workloads. `rampart` and `full_revalidate` get AVCs of their own.
    pub fn new(server: SecurityServer, table: KeyMap, rampart: Avc, full_revalidate: Avc) -> Variants {
        let table = Arc::new(table);
        Variants {
            none: none::NoCheck,
            global_mutex: global_mutex::GlobalMutex::new(server.clone()),
            rwlock: rwlock::RwLockCache::new(server.clone()),
            shared_counter: shared_counter::SharedCounter::new(Arc::clone(&table), server.clone()),
            kref: kref::Kref::new(Arc::clone(&table), server.clone()),
            percpu_ref: percpu_ref::PercpuRef::new(Arc::clone(&table), server.clone()),
            module_refcount: module_refcount::ModuleRefcount::new(Arc::clone(&table), server.clone()),
            full_revalidate: full_revalidate::FullRevalidate::new(full_revalidate),
            unsync_hashmap: unsync_hashmap::UnsyncHashmap::new(table, server),
            rampart: rampart::Rampart::new(rampart),
        }
    }

    /// Runs `visitor` on variant `id`.
    pub fn visit<V: Visit>(&self, id: VariantId, visitor: &mut V) -> V::Out {
        match id {
            VariantId::None => visitor.visit(id, &self.none),
            VariantId::GlobalMutex => visitor.visit(id, &self.global_mutex),
            VariantId::Rwlock => visitor.visit(id, &self.rwlock),
            VariantId::SharedCounter => visitor.visit(id, &self.shared_counter),
            VariantId::Kref => visitor.visit(id, &self.kref),
            VariantId::PercpuRef => visitor.visit(id, &self.percpu_ref),
            VariantId::ModuleRefcount => visitor.visit(id, &self.module_refcount),
            VariantId::FullRevalidate => visitor.visit(id, &self.full_revalidate),
            VariantId::UnsyncHashmap => visitor.visit(id, &self.unsync_hashmap),
            VariantId::Rampart => visitor.visit(id, &self.rampart),
        }
    }
}
