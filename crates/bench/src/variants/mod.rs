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

use std::collections::HashMap;
use std::sync::Arc;

use rampart_avc::{Avc, CacheKey, ClassIdx, KeyHasher, Object, Perms, Sid, Subject};

use crate::error::BenchError;

/// A decision cache as the baselines keep it: packed key -> permissions
/// that pass, with Rampart's hash function.
pub type KeyMap = HashMap<u64, Perms, KeyHasher>;

/// Most threads a per-thread variant keeps separate state for; more
/// threads share slots (still correct, only no longer private).
pub const MAX_THREADS: usize = 64;

/// A design under test. Shared by every thread of a workload.
pub trait Checker: Sync {
    /// What one thread checks through: often just `&Self`; a copy of the
    /// cache or a private counter slot for per-thread designs.
    type Thread<'a>: ThreadCheck
    where
        Self: 'a;
    /// An open object (a file, a device) checked on every read or write.
    type Open<'a>: OpenCheck
    where
        Self: 'a;

    /// The checker of thread `index` (0-based within the workload).
    fn thread(&self, index: usize) -> Self::Thread<'_>;

    /// Opens `object` for `subject` with `perms` of `class`; later calls
    /// to [`OpenCheck::permission`] check those permissions again.
    fn open<'a>(
        &'a self,
        index: usize,
        subject: &'a Subject,
        object: &'a Object,
        class: ClassIdx,
        perms: Perms,
    ) -> Result<Self::Open<'a>, BenchError>;
}

/// One thread's checks.
pub trait ThreadCheck {
    /// Whether `perms` of `class` pass for `ssid` on `tsid`.
    fn check(&mut self, ssid: Sid, tsid: Sid, class: ClassIdx, perms: Perms) -> bool;
}

/// The check on each use of an open object.
pub trait OpenCheck {
    /// Whether the permissions asked at open still pass.
    fn permission(&mut self) -> bool;
}

/// The open-object check of a variant without a fast path: a full check
/// of the (subject, object) key through the variant's cache on every use,
/// as SELinux did on every read and write before 2007.
pub struct PerCall<T> {
    thread: T,
    ssid: Sid,
    tsid: Sid,
    class: ClassIdx,
    perms: Perms,
}

impl<T: ThreadCheck> PerCall<T> {
    pub fn new(thread: T, subject: &Subject, object: &Object, class: ClassIdx, perms: Perms) -> PerCall<T> {
        PerCall { thread, ssid: subject.sid(), tsid: object.sid(), class, perms }
    }
}

impl<T: ThreadCheck> OpenCheck for PerCall<T> {
    #[inline]
    fn permission(&mut self) -> bool {
        self.thread.check(self.ssid, self.tsid, self.class, self.perms)
    }
}

/// [`Checker`] for the common shape: every thread checks through `&$t`
/// (which implements [`ThreadCheck`]) and open objects check in full on
/// every use ([`PerCall`]).
macro_rules! shared_per_call_checker {
    ($t:ty) => {
        impl $crate::variants::Checker for $t {
            type Thread<'a> = &'a $t;
            type Open<'a> = $crate::variants::PerCall<&'a $t>;

            fn thread(&self, _index: usize) -> &$t {
                self
            }

            fn open<'a>(
                &'a self,
                index: usize,
                subject: &'a rampart_avc::Subject,
                object: &'a rampart_avc::Object,
                class: rampart_avc::ClassIdx,
                perms: rampart_avc::Perms,
            ) -> Result<Self::Open<'a>, $crate::error::BenchError> {
                Ok($crate::variants::PerCall::new(self.thread(index), subject, object, class, perms))
            }
        }
    };
}
pub(crate) use shared_per_call_checker;

/// The packed key every cache here uses, as Rampart's cache packs it.
#[inline]
pub fn key(ssid: Sid, tsid: Sid, class: ClassIdx) -> u64 {
    CacheKey::new(ssid, tsid, class).as_u64()
}

/// The slow path of every baseline: a separate Rampart AVC asked for the
/// full vector, standing in for the policy engine behind a cache. Only
/// misses reach it, and every cache is warmed before it is timed.
#[derive(Clone)]
pub struct SecurityServer {
    avc: Arc<Avc>,
}

impl SecurityServer {
    pub fn new(avc: Arc<Avc>) -> SecurityServer {
        SecurityServer { avc }
    }

    /// The permissions of `class` that pass for `ssid` on `tsid`.
    #[cold]
    #[inline(never)]
    pub fn compute(&self, ssid: Sid, tsid: Sid, class: ClassIdx) -> Perms {
        passing(&self.avc, ssid, tsid, class)
    }
}

/// The permissions that pass: allowed ones, plus denied ones when the
/// denial is not enforced (permissive), matching [`rampart_avc::Decision::passes`].
pub fn passing(avc: &Avc, ssid: Sid, tsid: Sid, class: ClassIdx) -> Perms {
    let d = avc.has_perm_noaudit(ssid, tsid, class, Perms::ALL);
    if d.permissive {
        d.allowed | d.denied
    } else {
        d.allowed
    }
}

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
