//! The kernel-side cache: fanotify ignore marks, so that the kernel stops
//! asking about opens and reads whose answer cannot be "deny".
//!
//! Two kinds of mark, on an inode:
//! * **open** (`FAN_OPEN_PERM` ignored): placed when every domain in
//!   scope may open the object for anything (`open read write append`).
//!   The answer is then subject-independent, so no open needs asking.
//! * **access** (`FAN_ACCESS_PERM` ignored): placed when every domain in
//!   scope may read the object. Reads are then decided at open, like
//!   SELinux's `file_permission` revalidation that does nothing while the
//!   policy is unchanged (seed 002): in steady state reads cause no
//!   events.
//!
//! **Scope.** The domains in scope are the default domain and every domain
//! a process of the cgroup tree runs in or is about to enter. A domain
//! whose every process carries the launcher's supervised-opens filter
//! (crate::supervised, "Opens": an open asking to write or truncate goes
//! to the daemon, which decides it and makes it) never opens for writing
//! through the kernel's path, so for it an open mark needs only `open
//! read` ([`InScope::direct_writes`] false). So a confined web server that
//! may only read its content leaves the content's open marks in place,
//! for itself and for everyone else (issue 8).
//!
//! Why every domain in scope, and not only those seen opening the inode:
//! a descriptor travels unseen. It is inherited across fork and exec,
//! received over `SCM_RIGHTS`, taken with `pidfd_getfd`; SELinux checks
//! the receiver (`fd { use }` and the file's permissions at receipt, then
//! `file_permission` per read), the daemon sees only the reads. A reader
//! list kept from open events (an earlier design) let a confined domain
//! read through a descriptor an unconfined process opened and passed to
//! it. So an inode that some domain in scope may not read keeps its
//! reads as events, each decided for the reading domain; an inode every
//! domain in scope may read needs none.
//!
//! What the policy grants is asked through a [`Judge`]: for an object
//! whose label was left unresolved ([`crate::path_labels`]) a permission
//! counts as granted only if it is on every label the object may have.
//!
//! Invariant: a mark exists only while the AVC snapshot and the scope it
//! was justified under are current. Every change that could turn an
//! allow into a deny (policy reload, boolean change, enforcing or
//! permissive change, relabel, a new domain entering scope) bumps the
//! epoch and flushes every inode mark; a relabel the daemon makes itself
//! (a supervised process's, or a new object's label) removes that
//! inode's only ([`Marks::relabeled`]), as every other answer kept is by
//! label, not by inode. After a flush the next read of
//! each open file is an event again: that read is re-decided for the
//! reading domain (revocation), and the access mark is re-armed only if
//! every domain in scope still may read it.
//!
//! **Names** (AppArmor, crate::apparmor): a profile decides by the
//! path an open used, and an inode may have several names (hard links)
//! or change its name (rename), which no inode mark can follow by
//! itself. So while a process runs under a profile (from its `rampart run
//! --apparmor` request or exec transition on, until the housekeeper finds
//! no cgroup of that profile left) its profile is in scope (a new one
//! flushes the marks, [`Marks::profile_enters`]), and a mark is placed
//! only if, besides SELinux's conditions, every profile in scope allows
//! what it lets pass (any open, or a read) by the file's one name,
//! silently, owner or not ([`Judge::names_allow`]: a regular file with
//! one link). Every rename, link and unlink on a marked filesystem then
//! flushes the marks ([`Marks::names_changed`], crate::name_changes);
//! without that watcher no mark rests on names. A profile whose every
//! process opens for writing through the daemon (see "Scope") needs only
//! `r` of the name for an open mark.
//!
//! Races: placing and flushing follow the protocol of [`crate::epoch`]
//! (an event takes a ticket before it reads any state; its marks are
//! placed only if no flush happened since, and a flush waits for
//! placements in progress), model-checked with loom.

use std::io;
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::epoch::{Epoch, Ticket};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use rampart_avc::{ClassIdx, Perms, Sid};
use rustc_hash::FxHashMap;

use crate::fanotify;
use crate::object_label::ObjectLabel;

const SHARDS: usize = 32;

/// An inode: `(dev, ino)`.
pub type InodeKey = (u64, u64);

/// Where marks go: the fanotify group, or a model in tests.
pub trait MarkTarget: Send + Sync {
    fn ignore(&self, fd: BorrowedFd<'_>, inode: InodeKey, mask: u64) -> io::Result<()>;
    /// Removes the marks of one inode, `at`.
    fn forget(&self, at: ObjectAt<'_>, inode: InodeKey) -> io::Result<()>;
    fn flush(&self) -> io::Result<()>;
}

/// An object, for [`MarkTarget::forget`]: a descriptor open on it, or its
/// directory and its name there (the name itself, not followed: an object
/// that cannot be opened, a symbolic link or a device, has one).
#[derive(Clone, Copy, Debug)]
pub enum ObjectAt<'a> {
    Fd(BorrowedFd<'a>),
    Name(BorrowedFd<'a>, &'a std::ffi::CStr),
}

/// What the policy grants, as the marks ask it
/// ([`crate::path_labels::Grants`]).
pub trait Judge {
    /// `subject` is allowed `perms` on `target`, in `epoch`.
    fn may(&self, subject: Sid, target: &EventObject, perms: Perms, epoch: u64) -> bool;

    /// What every profile in `profiles` allows of the file `fd` under
    /// every name it has, silently (AppArmor: see "Names"). Asked only
    /// while names matter, at most once per event; without an answer,
    /// nothing.
    fn names_allow(&self, profiles: &[ProfileInScope], fd: BorrowedFd<'_>) -> NameGrant {
        let _ = (profiles, fd);
        NameGrant::NONE
    }
}

/// What the profiles in scope let a mark pass unasked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NameGrant {
    /// Any open (an open mark).
    pub any_open: bool,
    /// A read (an access mark).
    pub read: bool,
}

impl NameGrant {
    pub const NONE: NameGrant = NameGrant { any_open: false, read: false };
    /// No profile in scope: names do not limit marks.
    pub const ALL: NameGrant = NameGrant { any_open: true, read: true };
}

/// Who is in scope: an SELinux domain (`InScope<Sid>`), or an AppArmor
/// profile ([`ProfileInScope`], see "Names").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InScope<K = Sid> {
    pub who: K,
    /// Some process of it may open files for writing without the daemon
    /// deciding that open itself (no supervised-opens filter): an open
    /// mark must then be justified for every kind of open.
    pub direct_writes: bool,
}

/// An AppArmor profile in scope, by name.
pub type ProfileInScope = InScope<Arc<str>>;

impl<K: PartialEq> InScope<K> {
    /// Adds `entry` to `scope`: one already there keeps direct writes if
    /// either had them.
    pub fn merge_into(scope: &mut Vec<InScope<K>>, entry: InScope<K>) {
        match scope.iter_mut().find(|s| s.who == entry.who) {
            Some(s) => s.direct_writes |= entry.direct_writes,
            None => scope.push(entry),
        }
    }
}

/// The object an event was about.
#[derive(Clone, Copy, Debug)]
pub struct EventObject {
    pub inode: InodeKey,
    pub label: ObjectLabel,
    pub class: ClassIdx,
    /// Everything an open of this class can ask for.
    pub any_open: Perms,
    /// What an open for reading asks (`open read`).
    pub read_open: Perms,
    pub read: Perms,
}

/// Per (object label, class): an answer about every domain in scope, and
/// the epoch it was computed in (never used in a later one).
#[derive(Default)]
struct ScopeAnswers(RwLock<FxHashMap<(ObjectLabel, ClassIdx), (bool, u64)>>);

impl ScopeAnswers {
    fn get_or(&self, key: (ObjectLabel, ClassIdx), epoch: u64, compute: impl FnOnce() -> bool) -> bool {
        if let Some(&(ok, at)) = self.0.read().unwrap_or_else(PoisonError::into_inner).get(&key) {
            if at == epoch {
                return ok;
            }
        }
        let ok = compute();
        // An answer computed across a flush is stored under the old
        // epoch, so it is never used after the flush.
        self.0.write().unwrap_or_else(PoisonError::into_inner).insert(key, (ok, epoch));
        ok
    }

    fn clear(&self) {
        self.0.write().unwrap_or_else(PoisonError::into_inner).clear();
    }
}

#[derive(Default)]
struct Shard {
    /// Inodes given an access mark, and in which epoch (a mark of an
    /// older epoch was flushed).
    access_armed: FxHashMap<InodeKey, u64>,
}

/// Ignore-mark bookkeeping (see the module docs).
pub struct Marks<T: MarkTarget> {
    target: T,
    enabled: bool,
    /// Bumped before every flush; see "Races".
    epoch: Epoch,
    /// Processes not started under Rampart, also those that were running
    /// before the daemon: always in scope.
    default: Sid,
    scope: RwLock<Vec<InScope>>,
    /// Every domain in scope may open the object for anything.
    open_ok: ScopeAnswers,
    /// Every domain in scope may read the object.
    read_ok: ScopeAnswers,
    shards: Vec<Mutex<Shard>>,
    placed: AtomicU64,
    flushes: AtomicU64,
    /// Decisions depend on names (see "Names"): `profiles` is not empty.
    names_matter: AtomicBool,
    /// The profiles processes run under, or are about to.
    profiles: RwLock<Vec<ProfileInScope>>,
    /// Name changes are watched (crate::name_changes): only then may a
    /// mark rest on names.
    names_watched: AtomicBool,
}

impl<T: MarkTarget> Marks<T> {
    /// `enabled: false` never places a mark (every open and read is an
    /// event): for measuring, and for debugging a suspected mark bug.
    pub fn new(target: T, default: Sid, enabled: bool) -> Marks<T> {
        Marks {
            target,
            enabled,
            epoch: Epoch::new(),
            default,
            scope: RwLock::new(vec![InScope { who: default, direct_writes: true }]),
            open_ok: ScopeAnswers::default(),
            read_ok: ScopeAnswers::default(),
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            placed: AtomicU64::new(0),
            flushes: AtomicU64::new(0),
            names_matter: AtomicBool::new(false),
            profiles: RwLock::new(Vec::new()),
            names_watched: AtomicBool::new(false),
        }
    }

    /// The profiles processes run under or are about to (see "Names");
    /// the caller flushes next (crate::daemon's `flush_marks`).
    pub fn set_profiles(&self, profiles: Vec<ProfileInScope>) {
        let on = !profiles.is_empty();
        *self.profiles.write().unwrap_or_else(PoisonError::into_inner) = profiles;
        // SeqCst, with the load in `names_matter`: a placer that took its
        // ticket after the flush that follows this store sees it.
        self.names_matter.store(on, Ordering::SeqCst);
    }

    /// A process is about to run under `profile`: if it is new to the
    /// scope, or now has direct writes, the marks placed without it are
    /// no longer justified.
    pub fn profile_enters(&self, profile: ProfileInScope) -> io::Result<()> {
        {
            let mut profiles = self.profiles.write().unwrap_or_else(PoisonError::into_inner);
            let before = profiles.clone();
            ProfileInScope::merge_into(&mut profiles, profile);
            if *profiles == before {
                return Ok(());
            }
        }
        // SeqCst: see `set_profiles`.
        self.names_matter.store(true, Ordering::SeqCst);
        self.flush(None)
    }

    /// Name changes are watched from now on: marks may rest on names.
    pub fn names_watched(&self) {
        // SeqCst, with the load in `names_grant`: only turns marks on.
        self.names_watched.store(true, Ordering::SeqCst);
    }

    /// Name changes are no longer watched: no mark rests on names again,
    /// and those that did go.
    pub fn names_unwatched(&self) {
        // SeqCst: a placer that took its ticket after the flush below
        // sees it.
        self.names_watched.store(false, Ordering::SeqCst);
        let _ = self.flush(None);
    }

    /// A file may have a new name (crate::name_changes): the marks that
    /// rest on names go.
    pub fn names_changed(&self) -> io::Result<()> {
        if self.names_scope().is_none() {
            return Ok(());
        }
        self.flush(None)
    }

    /// The profiles in scope, if names matter (read by a placer holding
    /// off flushes).
    fn names_scope(&self) -> Option<Vec<ProfileInScope>> {
        // SeqCst: see `set_profiles`.
        if !self.names_matter.load(Ordering::SeqCst) {
            return None;
        }
        Some(self.profiles.read().unwrap_or_else(PoisonError::into_inner).clone())
    }

    /// What the profiles in scope (if any) let pass unasked of `fd`.
    fn names_grant(&self, judge: &dyn Judge, fd: BorrowedFd<'_>) -> NameGrant {
        let Some(profiles) = self.names_scope() else { return NameGrant::ALL };
        // SeqCst: see `names_unwatched`.
        if !self.names_watched.load(Ordering::SeqCst) {
            return NameGrant::NONE;
        }
        judge.names_allow(&profiles, fd)
    }

    pub fn target(&self) -> &T {
        &self.target
    }

    fn shard(&self, inode: InodeKey) -> std::sync::MutexGuard<'_, Shard> {
        let i = (inode.1 ^ inode.0.rotate_left(29)) as usize % SHARDS;
        self.shards[i].lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Domains in scope now.
    pub fn scope(&self) -> Vec<InScope> {
        self.scope.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Marks placed since the last flush.
    pub fn placed(&self) -> u64 {
        self.placed.load(Ordering::Relaxed)
    }

    pub fn flushes(&self) -> u64 {
        self.flushes.load(Ordering::Relaxed)
    }

    /// Something that may turn an allow into a deny happened: remove
    /// every mark. `scope`, if given, replaces the domains in scope (the
    /// default domain is always kept).
    pub fn flush(&self, scope: Option<Vec<InScope>>) -> io::Result<()> {
        // The caller published its change (AVC snapshot, labels) already
        // (crate::epoch); placers read the scope only while holding off
        // this flush.
        let _flushing = self.epoch.advance();
        if let Some(mut scope) = scope {
            InScope::merge_into(&mut scope, InScope { who: self.default, direct_writes: true });
            *self.scope.write().unwrap_or_else(PoisonError::into_inner) = scope;
        }
        // Cached answers carry their epoch and are never used after the
        // bump; clearing only frees them.
        self.open_ok.clear();
        self.read_ok.clear();
        for s in &self.shards {
            s.lock().unwrap_or_else(PoisonError::into_inner).access_armed.clear();
        }
        self.placed.store(0, Ordering::Relaxed);
        self.flushes.fetch_add(1, Ordering::Relaxed);
        self.target.flush()
    }

    /// The object `at` was given another label, published already (a
    /// supervised relabel, or a new object's label: crate::new_labels):
    /// the marks an event decided under its
    /// earlier label may have placed on it go. The protocol of
    /// [`Marks::flush`], for one inode: placements in progress finish
    /// first, later ones begun before are refused, then its marks are
    /// removed. Marks on other inodes stay; the answers cached per label
    /// are dropped with the epoch, and computed again.
    pub fn relabeled(&self, at: ObjectAt<'_>, inode: InodeKey) -> io::Result<()> {
        if !self.enabled {
            return Ok(());
        }
        let _flushing = self.epoch.advance();
        self.target.forget(at, inode)
    }

    /// When an event begins, before its subject, label or decision is
    /// looked up: marks it justifies are placed only if nothing changed
    /// since.
    pub fn ticket(&self) -> Ticket {
        self.epoch.ticket()
    }

    /// Before any mark is placed: `domains` are in scope from the start
    /// (processes an earlier daemon confined, `cgroups.rs`).
    pub fn start_with(&mut self, domains: &[InScope]) {
        let scope = self.scope.get_mut().unwrap_or_else(PoisonError::into_inner);
        for d in domains {
            InScope::merge_into(scope, *d);
        }
    }

    /// `domain` is about to run (an exec transition): if it is new to the
    /// scope, or now has direct writes, the open marks placed without it
    /// are no longer justified.
    pub fn enter_scope(&self, domain: InScope) -> io::Result<()> {
        let mut scope = self.scope();
        let before = scope.clone();
        InScope::merge_into(&mut scope, domain);
        if scope == before {
            return Ok(());
        }
        self.flush(Some(scope))
    }

    /// After an allowed open (answered already), in an event begun with
    /// `ticket`: place what marks are justified.
    pub fn after_open(&self, judge: &dyn Judge, fd: BorrowedFd<'_>, target: &EventObject, ticket: Ticket) {
        if !self.enabled {
            return;
        }
        let Some(placing) = self.epoch.hold(ticket) else {
            // Something changed since the event began.
            return;
        };
        let epoch = ticket.epoch();
        // Asked once, and only if SELinux's conditions leave it to decide.
        let mut names = None;
        let mut grant = || *names.get_or_insert_with(|| self.names_grant(judge, fd));
        let open_mark = self.open_ignorable(judge, target, epoch) && grant().any_open;
        let mut mask = if open_mark { fanotify::OPEN_PERM } else { 0 };
        // With an open mark no open of this inode is asked again in this
        // epoch, so whether its access mark is armed is never consulted:
        // not recorded.
        if (open_mark || !self.access_armed(target.inode, epoch))
            && self.read_ignorable(judge, target, epoch)
            && grant().read
        {
            if !open_mark {
                self.note_access_armed(target.inode, epoch);
            }
            mask |= fanotify::ACCESS_PERM;
        }
        let full = self.place(fd, target.inode, mask);
        drop(placing);
        if full {
            // The group's mark limit: start over.
            let _ = self.flush(None);
        }
    }

    /// After an allowed read event (a read since the last flush, or of a
    /// file no access mark covers), in an event begun with `ticket`:
    /// re-arm the access mark if every domain in scope may read the file.
    pub fn after_read(&self, judge: &dyn Judge, fd: BorrowedFd<'_>, target: &EventObject, ticket: Ticket) {
        if !self.enabled {
            return;
        }
        let Some(placing) = self.epoch.hold(ticket) else {
            return;
        };
        // The kernel asked, so no access mark covers the inode, whatever
        // `access_armed` remembers: do not consult it.
        let epoch = ticket.epoch();
        let ignorable = self.read_ignorable(judge, target, epoch) && self.names_grant(judge, fd).read;
        if ignorable {
            self.note_access_armed(target.inode, epoch);
        }
        let full = ignorable && self.place(fd, target.inode, fanotify::ACCESS_PERM);
        drop(placing);
        if full {
            let _ = self.flush(None);
        }
    }

    /// Places `mask` on the inode of `fd`; true if the group is out of
    /// marks (the caller flushes, once it no longer holds off flushes).
    fn place(&self, fd: BorrowedFd<'_>, inode: InodeKey, mask: u64) -> bool {
        if mask == 0 {
            return false;
        }
        match self.target.ignore(fd, inode, mask) {
            Ok(()) => {
                self.placed.fetch_add(1, Ordering::Relaxed);
                false
            }
            Err(e) => e.raw_os_error() == Some(libc::ENOSPC),
        }
    }

    /// An access mark was placed on the inode in `epoch` already.
    fn access_armed(&self, inode: InodeKey, epoch: u64) -> bool {
        self.shard(inode).access_armed.get(&inode) == Some(&epoch)
    }

    fn note_access_armed(&self, inode: InodeKey, epoch: u64) {
        self.shard(inode).access_armed.insert(inode, epoch);
    }

    /// Every domain in scope may read the object.
    fn read_ignorable(&self, judge: &dyn Judge, target: &EventObject, epoch: u64) -> bool {
        self.read_ok.get_or((target.label, target.class), epoch, || {
            self.scope().iter().all(|s| judge.may(s.who, target, target.read, epoch))
        })
    }

    /// Every domain in scope may open the object for anything it can
    /// open it for unasked: any open, or a read for a domain whose opens
    /// for writing are supervised (see "Scope").
    fn open_ignorable(&self, judge: &dyn Judge, target: &EventObject, epoch: u64) -> bool {
        self.open_ok.get_or((target.label, target.class), epoch, || {
            self.scope().iter().all(|s| {
                let perms = if s.direct_writes { target.any_open } else { target.read_open };
                judge.may(s.who, target, perms, epoch)
            })
        })
    }
}
