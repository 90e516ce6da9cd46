//! The kernel-side cache: fanotify ignore marks, so that the kernel stops
//! asking about opens and reads whose answer cannot be "deny".
//!
//! Two kinds of mark, on an inode:
//! * **open** (`FAN_OPEN_PERM` ignored): placed when every domain in
//!   scope may open the object for anything (`open read write append`).
//!   The answer is then subject-independent, so no open needs asking.
//! * **access** (`FAN_ACCESS_PERM` ignored): placed when every domain
//!   known to have opened the object for reading (its *readers*) may
//!   still read it. Reads are then decided at open, like SELinux's
//!   `file_permission` revalidation that does nothing while the policy
//!   is unchanged (seed 002): in steady state reads cause no events.
//!
//! Invariant: a mark exists only while the AVC snapshot and the scope it
//! was justified under are current. Every change that could turn an
//! allow into a deny (policy reload, boolean change, enforcing or
//! permissive change, relabel, a new domain entering scope) bumps the
//! epoch and flushes every inode mark. After a flush the next read of
//! each open file is an event again: that read is re-decided for the
//! reading domain (revocation), and the access mark is re-armed only if
//! all the inode's readers still may read it.
//!
//! Races: placing and flushing follow the protocol of [`crate::epoch`]
//! (a placer re-checks the epoch after placing and removes its own mark
//! if a flush began meanwhile), model-checked with loom.
//!
//! Bounds: readers are remembered for at most [`MAX_TRACKED_INODES`]
//! inodes and [`MAX_READERS`] domains each; beyond either, no access mark
//! is placed (reads stay events: slower, never wrong).

use std::io;
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::epoch::Epoch;
use std::sync::{Mutex, PoisonError, RwLock};

use rampart_avc::{Avc, ClassIdx, Perms, Sid};
use rustc_hash::FxHashMap;

use crate::fanotify::{self, Group};

pub const MAX_TRACKED_INODES: usize = 1 << 20;
pub const MAX_READERS: usize = 16;
const SHARDS: usize = 32;

/// An inode: `(dev, ino)`.
pub type InodeKey = (u64, u64);

/// Where marks go: the fanotify group, or a model in tests.
pub trait MarkTarget: Send + Sync {
    fn ignore(&self, fd: BorrowedFd<'_>, inode: InodeKey, mask: u64) -> io::Result<()>;
    fn unignore(&self, fd: BorrowedFd<'_>, inode: InodeKey, mask: u64) -> io::Result<()>;
    fn flush(&self) -> io::Result<()>;
}

impl MarkTarget for Group {
    fn ignore(&self, fd: BorrowedFd<'_>, _inode: InodeKey, mask: u64) -> io::Result<()> {
        self.ignore_inode(fd, mask)
    }
    fn unignore(&self, fd: BorrowedFd<'_>, _inode: InodeKey, mask: u64) -> io::Result<()> {
        self.unignore_inode(fd, mask)
    }
    fn flush(&self) -> io::Result<()> {
        self.flush_inode_marks()
    }
}

/// The object an event was about.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    pub inode: InodeKey,
    pub sid: Sid,
    pub class: ClassIdx,
    /// Everything an open of this class can ask for.
    pub any_open: Perms,
    pub read: Perms,
}

#[derive(Default)]
struct Shard {
    readers: FxHashMap<InodeKey, Vec<Sid>>,
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
    scope: RwLock<Vec<Sid>>,
    /// (object SID, class) -> (every domain in scope may open it fully,
    /// the epoch that answer was computed in).
    open_ok: RwLock<FxHashMap<(Sid, ClassIdx), (bool, u64)>>,
    shards: Vec<Mutex<Shard>>,
    placed: AtomicU64,
    flushes: AtomicU64,
}

impl<T: MarkTarget> Marks<T> {
    /// `enabled: false` never places a mark (every open and read is an
    /// event): for measuring, and for debugging a suspected mark bug.
    pub fn new(target: T, scope: Vec<Sid>, enabled: bool) -> Marks<T> {
        Marks {
            target,
            enabled,
            epoch: Epoch::new(),
            scope: RwLock::new(scope),
            open_ok: RwLock::new(FxHashMap::default()),
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            placed: AtomicU64::new(0),
            flushes: AtomicU64::new(0),
        }
    }

    pub fn target(&self) -> &T {
        &self.target
    }

    fn shard(&self, inode: InodeKey) -> std::sync::MutexGuard<'_, Shard> {
        let i = (inode.1 ^ inode.0.rotate_left(29)) as usize % SHARDS;
        self.shards[i].lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Domains in scope now.
    pub fn scope(&self) -> Vec<Sid> {
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
    /// every mark. `scope`, if given, replaces the domains in scope.
    /// Readers are kept: they still hold their descriptors.
    pub fn flush(&self, scope: Option<Vec<Sid>>) -> io::Result<()> {
        // The change is published before the bump (crate::epoch): the
        // caller's (AVC snapshot, labels) already, the scope here.
        if let Some(scope) = scope {
            *self.scope.write().unwrap_or_else(PoisonError::into_inner) = scope;
        }
        self.epoch.bump();
        // Cached answers carry their epoch and are never used after the
        // bump; clearing only frees them.
        self.open_ok.write().unwrap_or_else(PoisonError::into_inner).clear();
        for s in &self.shards {
            s.lock().unwrap_or_else(PoisonError::into_inner).access_armed.clear();
        }
        self.placed.store(0, Ordering::Relaxed);
        self.flushes.fetch_add(1, Ordering::Relaxed);
        self.target.flush()
    }

    /// `sid` is about to run (an exec transition): if it is new to the
    /// scope, the open marks placed without it are no longer justified.
    pub fn enter_scope(&self, sid: Sid) -> io::Result<()> {
        if self.scope.read().unwrap_or_else(PoisonError::into_inner).contains(&sid) {
            return Ok(());
        }
        let mut scope = self.scope();
        scope.push(sid);
        self.flush(Some(scope))
    }

    /// After an allowed open of `target` by `subject` (answered already):
    /// record the reader and place what marks are justified.
    pub fn after_open(&self, avc: &Avc, fd: BorrowedFd<'_>, target: &Target, subject: Sid, granted_read: bool) {
        if !self.enabled {
            return;
        }
        let epoch = self.epoch.begin();
        let mut mask = 0;
        if self.open_ignorable(avc, target, epoch) {
            mask |= fanotify::OPEN_PERM;
        }
        if self.access_ignorable(avc, target, granted_read.then_some(subject), epoch, true) {
            mask |= fanotify::ACCESS_PERM;
        }
        self.place(fd, target.inode, mask, epoch);
    }

    /// After a read event (a read since the last flush, or of a file no
    /// access mark covers): record the reader if allowed, and re-arm the
    /// access mark if every reader may read.
    pub fn after_access(&self, avc: &Avc, fd: BorrowedFd<'_>, target: &Target, subject: Sid, allowed: bool) {
        if !self.enabled {
            return;
        }
        let epoch = self.epoch.begin();
        let reader = Some(subject);
        if !allowed {
            // Remember the denied reader: its descriptor keeps the inode
            // from being re-armed.
            self.add_reader(target.inode, subject);
            return;
        }
        // The kernel asked, so no access mark covers the inode, whatever
        // `access_armed` remembers: do not consult it.
        if self.access_ignorable(avc, target, reader, epoch, false) {
            self.place(fd, target.inode, fanotify::ACCESS_PERM, epoch);
        }
    }

    fn place(&self, fd: BorrowedFd<'_>, inode: InodeKey, mask: u64, epoch: u64) {
        if mask == 0 {
            return;
        }
        match self.target.ignore(fd, inode, mask) {
            Ok(()) => {
                self.placed.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => {
                // The group's mark limit: start over.
                let _ = self.flush(None);
                return;
            }
            Err(_) => return,
        }
        if !self.epoch.still(epoch) {
            // A flush raced with us: our mark may predate it.
            let _ = self.target.unignore(fd, inode, mask);
        }
    }

    fn add_reader(&self, inode: InodeKey, subject: Sid) -> Option<Vec<Sid>> {
        let mut shard = self.shard(inode);
        let tracked = shard.readers.len();
        let readers = match shard.readers.get_mut(&inode) {
            Some(r) => r,
            None if tracked * SHARDS >= MAX_TRACKED_INODES => return None,
            None => shard.readers.entry(inode).or_default(),
        };
        if !readers.contains(&subject) {
            if readers.len() >= MAX_READERS {
                return None;
            }
            readers.push(subject);
        }
        Some(readers.clone())
    }

    /// Every reader of the inode (with `new_reader` added) may read it,
    /// and (if `consult_armed`) no access mark was placed on it in
    /// `epoch` already.
    fn access_ignorable(
        &self,
        avc: &Avc,
        target: &Target,
        new_reader: Option<Sid>,
        epoch: u64,
        consult_armed: bool,
    ) -> bool {
        let readers = match new_reader {
            Some(s) => self.add_reader(target.inode, s),
            None => Some(self.shard(target.inode).readers.get(&target.inode).cloned().unwrap_or_default()),
        };
        let Some(readers) = readers else { return false };
        if consult_armed && self.shard(target.inode).access_armed.get(&target.inode) == Some(&epoch) {
            return false;
        }
        let ok = readers.iter().all(|&r| avc.peek(r, target.sid, target.class, target.read).denied.is_empty());
        if ok {
            self.shard(target.inode).access_armed.insert(target.inode, epoch);
        }
        ok
    }

    /// Every domain in scope may open the object for anything.
    fn open_ignorable(&self, avc: &Avc, target: &Target, epoch: u64) -> bool {
        let key = (target.sid, target.class);
        if let Some(&(ok, at)) = self.open_ok.read().unwrap_or_else(PoisonError::into_inner).get(&key) {
            if at == epoch {
                return ok;
            }
        }
        let ok = self
            .scope()
            .iter()
            .all(|&s| avc.peek(s, target.sid, target.class, target.any_open).denied.is_empty());
        // An answer computed across a flush is stored under the old
        // epoch, so it is never used after the flush.
        self.open_ok.write().unwrap_or_else(PoisonError::into_inner).insert(key, (ok, epoch));
        ok
    }
}
