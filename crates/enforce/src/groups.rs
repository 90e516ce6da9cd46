//! The daemon's fanotify groups: the current ones, one per marked
//! filesystem, which carry its filesystem mark and the ignore marks of its
//! inodes, and retiring ones still answering what they queued. Revocation
//! replaces the current groups instead of flushing their ignore marks.
//!
//! Why a group per filesystem: an opener waiting for its answer sleeps on
//! its group's one wait queue, and every answer wakes every sleeper of the
//! group (docs/architecture.md, "The openers' wait queue"), so openers on
//! different filesystems should not share one. Measured without Rampart
//! (`contrib/repro/wait-queue-herd.sh`, 2 CPUs, openers spread over two
//! tmpfs): with one group an opener slept 9.1 times per open at 16
//! openers and 3.4 at 8, with a group each 5.1 and 2.3 (docs/benchmarks.md).
//! Paths on one filesystem share its group: two groups marking one
//! filesystem would both be asked about every open, one after the other.
//!
//! Why: the kernel lets a permission event pass unasked when it races
//! with the removal of one of the group's marks on the same object
//! (`fanotify_handle_event`: if `fsnotify_prepare_user_wait` fails "we
//! race with mark deletion. Just let the operation pass"). A removed mark
//! lingers on its inode while events queued before its removal still
//! hold it, so after `FAN_MARK_FLUSH` the opens and reads of a busy inode
//! pass unasked for a moment: exactly when a boolean change or reload
//! must take effect (reproduced in `contrib/repro/mark-removal-race.c`,
//! run by `tests/kernel_mark_removal.rs`:
//! thousands of opens in 100,000 pass unasked while a mark on their inode
//! is placed and flushed, none for a second group that does not remove
//! marks).
//!
//! So a change that must remove ignore marks ([`MarkTarget::flush`])
//! starts new groups with the same filesystem marks and no inode marks,
//! which ask about every open and read from then on, and makes them
//! current. Then it retires the old groups: their filesystem marks are
//! removed (no new events; a race there only lets an old group pass an
//! event a new one also asks about) and their ignore marks flushed, and
//! each is closed once its queue is empty, so nothing it queued is left to
//! the kernel's allow-on-close. Responders wait on every live group at
//! once with epoll. If new groups cannot be made (descriptor or group
//! limits), the current groups' ignore marks are flushed instead, with the
//! race above.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use rustc_hash::FxHashMap;

use crate::fanotify::{self, Group};
use crate::marks::{InodeKey, MarkTarget, ObjectAt};

/// What the filesystem marks report.
pub const MARK_MASK: u64 = fanotify::OPEN_PERM | fanotify::OPEN_EXEC_PERM | fanotify::ACCESS_PERM | fanotify::ONDIR;

/// See the module docs.
pub struct Groups {
    epoll: OwnedFd,
    /// Every group responders may read: the current and retiring ones.
    live: Mutex<FxHashMap<RawFd, Arc<Group>>>,
    /// One per shard, in the same order.
    current: RwLock<Vec<Arc<Group>>>,
    retiring: Mutex<Vec<Arc<Group>>>,
    /// Bumped whenever `live` changes (see [`LiveView`]).
    generation: AtomicU64,
    /// The marked paths by filesystem: each shard has a group of its own.
    shards: Vec<Shard>,
    /// The marked filesystems' device numbers.
    devices: Vec<u64>,
    /// A group that only carries exec marks on single files outside the
    /// marked filesystems (programs `rampart run` will execute): it has no
    /// ignore marks, so it is never rotated. Made on first use, so the
    /// usual daemon has one live group, which a spinning responder reads
    /// without `epoll_wait` ([`LiveView::single`]).
    execs: std::sync::OnceLock<Arc<Group>>,
    /// How many pending `rampart run` requests watch each file's exec
    /// (`(dev, ino)`): the mark goes only with the last, so one launch's
    /// exec cannot unwatch the file another launch is about to execute.
    exec_watchers: Mutex<FxHashMap<(u64, u64), usize>>,
}

/// The marked paths of one filesystem (`dev`: its device, `None` for a
/// path that could not be read; it gets a shard of its own).
struct Shard {
    dev: Option<u64>,
    paths: Vec<PathBuf>,
}

/// `filesystems` grouped by device, in the order first seen.
fn shards_of(filesystems: &[PathBuf]) -> Vec<Shard> {
    let mut shards: Vec<Shard> = Vec::new();
    for p in filesystems {
        let dev = std::fs::metadata(p).ok().map(|m| m.dev());
        match shards.iter_mut().find(|s| dev.is_some() && s.dev == dev) {
            Some(s) => s.paths.push(p.clone()),
            None => shards.push(Shard { dev, paths: vec![p.clone()] }),
        }
    }
    shards
}

/// A responder's own copy of the live groups, refreshed when they change:
/// finding the group of a wake-up then reads one shared atomic instead of
/// taking a lock (or a reference count) every responder contends for.
#[derive(Default)]
pub struct LiveView {
    generation: u64,
    groups: Vec<(RawFd, Arc<Group>)>,
}

impl LiveView {
    /// The group, when only one is live (no rotation in progress): a
    /// spinning responder reads it directly, without `epoll_wait`.
    pub fn single(&self) -> Option<&Arc<Group>> {
        match self.groups.as_slice() {
            [(_, g)] => Some(g),
            _ => None,
        }
    }
}

impl Groups {
    /// A first group, watched by the epoll set; nothing is marked until
    /// [`Groups::mark_filesystems`].
    pub fn new(filesystems: Vec<PathBuf>) -> io::Result<Groups> {
        // SAFETY: epoll_create1 takes a flag word and returns a new
        // descriptor or -1.
        let raw = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` was just returned by epoll_create1 and is owned by
        // nobody else.
        let epoll = unsafe { OwnedFd::from_raw_fd(raw) };
        let mut shards = shards_of(&filesystems);
        if shards.is_empty() {
            // Nothing to mark: one group all the same, for the responders.
            shards.push(Shard { dev: None, paths: Vec::new() });
        }
        let first = shards.iter().map(|_| Group::new().map(Arc::new)).collect::<io::Result<Vec<_>>>()?;
        let devices = shards.iter().filter_map(|s| s.dev).collect();
        let groups = Groups {
            epoll,
            live: Mutex::new(FxHashMap::default()),
            current: RwLock::new(first.clone()),
            retiring: Mutex::new(Vec::new()),
            generation: AtomicU64::new(0),
            shards,
            devices,
            execs: std::sync::OnceLock::new(),
            exec_watchers: Mutex::new(FxHashMap::default()),
        };
        for g in first {
            groups.watch(g)?;
        }
        Ok(groups)
    }

    /// Marks every filesystem, each on its shard's current group.
    pub fn mark_filesystems(&self) -> Result<(), (PathBuf, io::Error)> {
        let current = self.current();
        self.shards.iter().zip(current.iter()).try_for_each(|(shard, g)| mark_all(g, &shard.paths))
    }

    /// Whether files of device `dev` are on a marked filesystem (their
    /// opens are events).
    pub fn covers(&self, dev: u64) -> bool {
        self.devices.contains(&dev)
    }

    /// Makes every exec of the file open as `file` an event, if it is
    /// outside the marked filesystems (returns whether it was marked).
    pub fn watch_exec(&self, file: &std::fs::File) -> io::Result<bool> {
        let md = file.metadata()?;
        if self.covers(md.dev()) {
            return Ok(false);
        }
        let execs = match self.execs.get() {
            Some(g) => g,
            None => {
                let _guard = self.retiring.lock().unwrap_or_else(PoisonError::into_inner);
                if self.execs.get().is_none() {
                    let group = Arc::new(Group::new()?);
                    self.watch(Arc::clone(&group))?;
                    let _ = self.execs.set(group);
                }
                self.execs.get().ok_or_else(|| io::Error::other("no exec group"))?
            }
        };
        // Held across the mark, so a count and the mark change together.
        let mut watchers = self.exec_watchers.lock().unwrap_or_else(PoisonError::into_inner);
        let count = watchers.entry((md.dev(), md.ino())).or_insert(0);
        if *count == 0 {
            execs.watch_inode(file.as_fd(), fanotify::OPEN_EXEC_PERM)?;
        }
        *count += 1;
        Ok(true)
    }

    /// Undoes one [`Groups::watch_exec`]: the mark goes with the file's
    /// last watcher.
    pub fn unwatch_exec(&self, file: &std::fs::File) {
        let Some(execs) = self.execs.get() else { return };
        let Ok(md) = file.metadata() else { return };
        let mut watchers = self.exec_watchers.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (md.dev(), md.ino());
        match watchers.get_mut(&key) {
            Some(count) if *count > 1 => *count -= 1,
            Some(_) => {
                watchers.remove(&key);
                let _ = execs.unwatch_inode(file.as_fd(), fanotify::OPEN_EXEC_PERM);
            }
            None => {}
        }
    }

    /// The current groups, one per shard.
    fn current(&self) -> Vec<Arc<Group>> {
        self.current.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// The current group of the filesystem of device `dev` (the first one
    /// for a device no shard has).
    fn current_for(&self, dev: u64) -> Option<Arc<Group>> {
        let i = self.shards.iter().position(|s| s.dev == Some(dev)).unwrap_or(0);
        self.current.read().unwrap_or_else(PoisonError::into_inner).get(i).cloned()
    }

    /// Brings `view` up to date with the live groups.
    pub fn refresh_if_changed(&self, view: &mut LiveView) {
        // Relaxed: a hint; a group missing from the view is looked up
        // again under the lock (see `wait`).
        if view.generation != self.generation.load(Ordering::Relaxed) {
            self.refresh(view);
        }
    }

    /// Waits up to `timeout_ms` for a group with queued events. `view` is
    /// the caller's copy of the live groups; it also lets go of retired
    /// ones, so a responder calls this at least every `timeout_ms`.
    pub fn wait<'v>(&self, view: &'v mut LiveView, timeout_ms: i32) -> io::Result<Option<&'v Arc<Group>>> {
        self.refresh_if_changed(view);
        let mut event = libc::epoll_event { events: 0, u64: 0 };
        // SAFETY: one writable epoll_event for the duration of the call.
        let n = unsafe { libc::epoll_wait(self.epoll.as_raw_fd(), &mut event, 1, timeout_ms) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        if n == 0 {
            return Ok(None);
        }
        let fd = RawFd::try_from(event.u64).unwrap_or(-1);
        if !view.groups.iter().any(|(f, _)| *f == fd) {
            self.refresh(view);
        }
        Ok(view.groups.iter().find(|(f, _)| *f == fd).map(|(_, g)| g))
    }

    fn refresh(&self, view: &mut LiveView) {
        let live = self.live.lock().unwrap_or_else(PoisonError::into_inner);
        // Relaxed: read under the lock that every change holds.
        view.generation = self.generation.load(Ordering::Relaxed);
        view.groups = live.iter().map(|(fd, g)| (*fd, Arc::clone(g))).collect();
    }

    /// Closes retiring groups whose queue is empty (what they read is
    /// answered by the responders holding them).
    pub fn reap(&self) {
        let mut retiring = self.retiring.lock().unwrap_or_else(PoisonError::into_inner);
        retiring.retain(|g| {
            if g.queued_bytes().is_ok_and(|n| n > 0) {
                return true;
            }
            self.unwatch(g);
            false
        });
    }

    fn watch(&self, group: Arc<Group>) -> io::Result<()> {
        let fd = group.as_fd().as_raw_fd();
        let mut event = libc::epoll_event { events: libc::EPOLLIN as u32, u64: fd as u64 };
        self.changed(|live| {
            live.insert(fd, group);
        });
        // SAFETY: both descriptors are open; `event` is valid for the call.
        if unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut event) } < 0 {
            let e = io::Error::last_os_error();
            self.changed(|live| {
                live.remove(&fd);
            });
            return Err(e);
        }
        Ok(())
    }

    fn unwatch(&self, group: &Group) {
        let fd = group.as_fd().as_raw_fd();
        // SAFETY: removing a descriptor that is still open (the group is
        // alive) from our epoll set; no event pointer is needed.
        unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_DEL, fd, std::ptr::null_mut()) };
        self.changed(|live| {
            live.remove(&fd);
        });
    }

    fn changed(&self, change: impl FnOnce(&mut FxHashMap<RawFd, Arc<Group>>)) {
        let mut live = self.live.lock().unwrap_or_else(PoisonError::into_inner);
        change(&mut live);
        // Relaxed: views reread the map under this lock.
        self.generation.fetch_add(1, Ordering::Relaxed);
    }

    /// Replaces the current groups by new ones without inode marks.
    fn rotate(&self) -> io::Result<()> {
        // Changes in a burst (domains entering the scope at boot) should
        // not pile up groups until the housekeeper's next round.
        self.reap();
        let mut new = Vec::with_capacity(self.shards.len());
        for shard in &self.shards {
            let made = Group::new().map(Arc::new).and_then(|g| {
                self.watch(Arc::clone(&g))?;
                match mark_all(&g, &shard.paths) {
                    Ok(()) => Ok(g),
                    Err((_, e)) => {
                        self.unwatch(&g);
                        Err(e)
                    }
                }
            });
            match made {
                Ok(g) => new.push(g),
                Err(e) => {
                    for g in &new {
                        self.unwatch(g);
                    }
                    return Err(e);
                }
            }
        }
        let old = std::mem::replace(&mut *self.current.write().unwrap_or_else(PoisonError::into_inner), new);
        for (shard, g) in self.shards.iter().zip(&old) {
            for m in &shard.paths {
                let _ = g.unmark_filesystem(m, MARK_MASK);
            }
            let _ = g.flush_inode_marks();
        }
        self.retiring.lock().unwrap_or_else(PoisonError::into_inner).extend(old);
        Ok(())
    }
}

fn mark_all(group: &Group, filesystems: &[PathBuf]) -> Result<(), (PathBuf, io::Error)> {
    for m in filesystems {
        group.mark_filesystem(m, MARK_MASK).map_err(|e| (m.clone(), e))?;
    }
    Ok(())
}

impl MarkTarget for Groups {
    fn ignore(&self, fd: BorrowedFd<'_>, inode: InodeKey, mask: u64) -> io::Result<()> {
        match self.current_for(inode.0) {
            Some(g) => g.ignore_inode(fd, mask),
            None => Ok(()),
        }
    }

    fn forget(&self, at: ObjectAt<'_>, inode: InodeKey) -> io::Result<()> {
        self.current_for(inode.0).map_or(Ok(()), |g| g.forget_inode(at))
    }

    fn flush(&self) -> io::Result<()> {
        match self.rotate() {
            Ok(()) => Ok(()),
            Err(e) => {
                eprintln!("rampartd: warning: no new fanotify groups ({e}); flushing ignore marks instead");
                self.current().iter().try_for_each(|g| g.flush_inode_marks())
            }
        }
    }
}
