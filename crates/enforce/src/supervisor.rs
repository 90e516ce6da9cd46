//! The daemon's side of the supervised calls (crate::supervised): chmod,
//! chown, truncate by name, unlink, rmdir, rename, link, mkdir, mknod,
//! symlink and the times (utime...) by processes `rampart run` started
//! come here (seccomp user
//! notification), are
//! checked against the policy as SELinux's hooks check them, and are
//! made by the daemon, or refused with `EACCES` and an AVC line. Opens
//! asking to write come here too, and are served as crate::supervised_open
//! says.
//!
//! Why the daemon makes the call itself: answering "continue" would let
//! the kernel read the caller's path again, which another thread of the
//! caller may have changed since the daemon read it (the classic race of
//! user notification). So the daemon reads each path once, resolves it
//! to descriptors of its own, checks the labels of what they name, and
//! acts on those descriptors, never on the caller's memory again.
//!
//! How one call is served, by a worker: a thread with a private
//! `fs_struct` (`unshare(CLONE_FS)`: its root directory is its own) and
//! the launcher's Landlock ruleset enforced on it once (the caller
//! carries that ruleset: a call must not escape it by being made here;
//! built when the first listener came, from the daemon's mount table
//! then). A worker that cannot return to the daemon's root and
//! credentials after a call ends, and another takes its place. The
//! workers are a [`CallThreads`] pool shared out by the caller's label:
//! a call waits on the object's inode lock as the kernel's would, and a
//! process can hold that lock for seconds (a 1 GiB write holds it
//! throughout), so a domain's calls held there hold back only that
//! domain's (a fixed few workers were all held by one domain's calls,
//! and every launched process's calls waited behind them).
//! 1. As root, on a thread of the call pool (crate::call_threads): the
//!    caller's root, working directory or directory
//!    descriptors (`/proc/TID/...`, opened `O_PATH`), its path strings
//!    (`/proc/TID/mem`, once), its file credentials; then the
//!    notification is checked still valid (the thread number was not
//!    reused meanwhile).
//! 2. In the caller's root (`chroot` in a private `fs_struct`) and with
//!    its file credentials ([`crate::thread_creds`]), each path is
//!    resolved to `O_PATH` descriptors: the object, or the parent
//!    directory and the last name (and the object that name holds).
//!    Magic links (`/proc/self/fd/N`) are not followed (`ELOOP`) and
//!    objects on procfs are refused (`EACCES`): in the daemon they would
//!    name the daemon's own.
//! 3. Back to the daemon's root and credentials: labels and checks, for
//!    objects on the marked filesystems (elsewhere, as for opens,
//!    nothing is mediated).
//! 4. With the caller's credentials again, the call, made on the
//!    descriptors (`fchmodat2`/`fchownat`/`utimensat` with `AT_EMPTY_PATH`,
//!    `truncate` and `linkat` through `/proc/self/fd`, `unlinkat` and
//!    `renameat2` on the parent directories and last names). Its result
//!    is the caller's.
//!
//! What SELinux checks, here as in its hooks (`selinux_inode_setattr`,
//! `may_link`, `may_rename`, and `selinux_inode_permission` on the
//! directories the call writes): chmod and chown `setattr` on the
//! object, and times set to a value (set to now: `write`); truncate
//! `write` and `open` (`open_perms`); unlink `search
//! write remove_name` on the directory and `unlink` on the file (rmdir:
//! `rmdir` on the directory); link `search write add_name` and `link`;
//! mkdir, mknod and symlink `search write add_name` on the directory
//! and `create` on the label the kernel would give the new object
//! (checked before the object is made, which is then labeled:
//! [`serve_make`], crate::new_labels);
//! rename `search write remove_name` on the old directory, `rename` on
//! the object (`reparent` for a directory moved between directories),
//! `search write add_name` on the new one and, if the new name is taken,
//! `remove_name` there and `unlink`/`rmdir` on what it holds
//! (`RENAME_EXCHANGE`: both ways). Not checked: `search` on the
//! directories a path walks through (fanotify's opens do not check it
//! either).
//!
//! What is left: between step 2 and step 4 another process may replace
//! the object a last name holds (a rename over it): unlink, rename and
//! link then act on the new object, which was not checked. chmod, chown,
//! truncate and the link source act on the checked inode itself.

use std::collections::HashMap;
use std::ffi::{CStr, CString, OsStr};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::sync::{Arc, Mutex, PoisonError};

use rampart_apparmor::perms::{
    AA_MAY_CHMOD, AA_MAY_CHOWN, AA_MAY_CREATE, AA_MAY_DELETE, AA_MAY_GETATTR, AA_MAY_SETATTR, MAY_READ, MAY_WRITE,
};
use rampart_avc::{Perms, Sid};

use crate::access::ClassPerms;
use crate::apparmor::{AppArmor, FileEvent};
use crate::call_interrupts::{self, Interrupts};
use crate::call_threads::{self, After, CallThreads};
use crate::calls_in_flight::{Entry, Journal};
use crate::controlling_tty;
use crate::enforcer::{Checked, Enforcer};
use crate::fifo_opens;
use crate::ipc_objects;
use crate::marks::ObjectAt;
use crate::new_labels::{self, NameLock};
use crate::pidfd::RecentThreads;
use crate::sockets::Use;
use crate::supervised::{self, Attr, FileArg, Inspected, Make, Op, SchedTarget, TimesLayout};
use crate::supervised_open;
use crate::thread_creds::{Creds, PeerIds};
use crate::unix_connects;

const PATH_MAX: usize = 4096;

/// Where a Unix socket's connect goes, when the daemon makes it
/// (crate::unix_connects).
enum UnixTarget {
    /// A socket file, by path.
    Path(unix_connects::Caller),
    /// An abstract name.
    Abstract(unix_connects::AbstractTarget),
}

/// What every call needs of the daemon.
pub struct Context {
    pub enforcer: Arc<Enforcer>,
    /// The marked filesystems: devices (`st_dev`) and their `major:minor`.
    pub marked: crate::marked_fs::MarkedFilesystems,
    /// The kernel's memfd filesystems (crate::memfds), whose files a
    /// `PROT_EXEC` mapping is checked on too (crate::exec_memory).
    pub memfd_devs: Vec<u64>,
    /// The launcher's Landlock ruleset (crate::sandbox), built once from
    /// the marked filesystems and the daemon's protected directories.
    pub ruleset: OwnedFd,
    /// Where calls in flight are written down for the next daemon
    /// (crate::calls_in_flight); `None` without a service manager's store.
    pub journal: Option<Arc<Journal>>,
    /// Creations against renames, links and unlinks (crate::new_labels).
    pub names: NameLock,
    /// Whether objects get SELinux labels in their xattr (crate::new_labels):
    /// not while AppArmor runs alone, whose built-in policy's one context
    /// is nobody's label.
    pub writes_labels: bool,
    /// Label writes that failed, each kind reported once.
    pub label_failures: new_labels::Failures,
    /// Who bound launched processes' Unix sockets (crate::unix_names).
    pub(crate) bound: crate::unix_names::Bound,
    /// Who made the shared memory segments and semaphore sets of
    /// launched processes (crate::ipc_objects).
    pub(crate) ipc_objects: ipc_objects::Objects,
}

/// One received call, for a worker.
struct Job {
    listener: Arc<OwnedFd>,
    id: u64,
    call: Call,
    /// Cleared once the call is answered.
    entry: Option<Entry>,
}

/// A worker's state (see the module docs): set up once in its thread.
struct Worker {
    home: Home,
    /// Its opens (crate::supervised_open) are answered at once.
    _registered: crate::own_threads::Registered,
}

/// Who shares the workers: a caller's domain and profile.
type Label = (Sid, Option<Arc<str>>);

/// The listeners of every launched process tree, the thread that waits
/// on them, and the workers that serve their calls.
pub struct Supervisor {
    epoll: OwnedFd,
    listeners: Mutex<HashMap<RawFd, Arc<OwnedFd>>>,
    /// Whether each listener's answers wake their caller on the
    /// answering CPU ([`Supervisor::wake_callers_here`]).
    wake_here: Mutex<HashMap<RawFd, bool>>,
    context: Arc<Context>,
    /// What serves path calls, shared out by the caller's label: a call
    /// may wait long on an inode lock its caller's domain holds (a huge
    /// write), and then holds back only that label's calls.
    workers: Arc<CallThreads<Label, Worker>>,
    /// What the workers need besides their state.
    shared: Shared,
    /// Where the calls that may block for long are made (connects),
    /// shared out by the caller's label.
    blocking: CallThreads<Label>,
    /// What interrupts them as the callers' signals would.
    interrupts: Arc<Interrupts>,
}

/// What a worker needs besides its job: the daemon's context, and where
/// FIFO opens wait for a reader (crate::fifo_opens).
#[derive(Clone)]
struct Shared {
    cx: Arc<Context>,
    waits: fifo_opens::Waits,
}

fn last_error(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

impl Supervisor {
    /// Starts the serving thread.
    pub fn start(context: Context) -> io::Result<Arc<Supervisor>> {
        // SAFETY: no pointers.
        let raw = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if raw < 0 {
            return Err(last_error("epoll_create1"));
        }
        // SAFETY: just created, ours alone.
        let epoll = unsafe { OwnedFd::from_raw_fd(raw) };
        let context = Arc::new(context);
        let daemon = Arc::new(DaemonState::current()?);
        let (cx, state) = (Arc::clone(&context), Arc::clone(&daemon));
        let waits = fifo_opens::start(move || {
            let home = Home::enter(&cx, &state)?;
            Ok(move || home.back())
        })?;
        let cx = Arc::clone(&context);
        let workers = CallThreads::with_setup("supervised calls", move || {
            // Registered before anything is opened.
            let registered = crate::own_threads::register_current();
            Ok(Worker { home: Home::enter(&cx, &daemon)?, _registered: registered })
        });
        let s = Arc::new(Supervisor {
            epoll,
            listeners: Mutex::new(HashMap::new()),
            wake_here: Mutex::new(HashMap::new()),
            shared: Shared { cx: Arc::clone(&context), waits },
            context,
            workers: Arc::new(workers),
            blocking: CallThreads::new(),
            interrupts: Arc::default(),
        });
        let serving = Arc::clone(&s);
        std::thread::Builder::new().name("supervisor".into()).spawn(move || serving.serve())?;
        Ok(s)
    }

    /// Serves the calls of the processes under `listener` from now on.
    pub fn add(&self, listener: OwnedFd) -> io::Result<()> {
        let fd = listener.as_raw_fd();
        // A new listener wakes callers on their own CPU.
        self.wake_here.lock().unwrap_or_else(PoisonError::into_inner).insert(fd, false);
        let mut listeners = self.listeners.lock().unwrap_or_else(PoisonError::into_inner);
        let mut ev = libc::epoll_event { events: (libc::EPOLLIN | libc::EPOLLHUP) as u32, u64: fd as u64 };
        // SAFETY: `ev` is valid for the call; both descriptors are open.
        if unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) } < 0 {
            return Err(last_error("epoll_ctl"));
        }
        listeners.insert(fd, Arc::new(listener));
        Ok(())
    }

    fn serve(self: Arc<Self>) {
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; 16];
        loop {
            // Was a call already waiting? Then callers are queuing.
            let mut n = epoll_wait(self.epoll.as_fd(), &mut events, 0);
            let idle = n == 0;
            if idle {
                n = epoll_wait(self.epoll.as_fd(), &mut events, -1);
            }
            if n < 0 {
                if io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                eprintln!("rampartd: supervisor: {}", last_error("epoll_wait"));
                return;
            }
            for ev in &events[..n as usize] {
                let fd = ev.u64 as RawFd;
                let listener = self.listeners.lock().unwrap_or_else(PoisonError::into_inner).get(&fd).cloned();
                let Some(listener) = listener else { continue };
                if ev.events & libc::EPOLLIN as u32 != 0 {
                    self.wake_callers_here(fd, listener.as_fd(), idle && n == 1);
                    if let Some(notif) = receive(listener.as_fd()) {
                        self.dispatch(listener, &notif);
                    }
                } else if ev.events & libc::EPOLLHUP as u32 != 0 {
                    // Every process of that tree exited.
                    self.remove(fd);
                }
            }
        }
    }

    /// Writes `notif` down, gathers it and hands it to a worker (or
    /// answers its error).
    fn dispatch(&self, listener: Arc<OwnedFd>, notif: &libc::seccomp_notif) {
        let entry = self.context.journal.as_ref().and_then(|j| j.record(notif));
        // Calls on processes are decided here, without a worker's state:
        // no path is read, and the kernel makes the call (crate::signals,
        // crate::limits, crate::sched, crate::process_ids, crate::process_reads,
        // crate::exec_memory, crate::sockets).
        let e = &self.context.enforcer;
        let Some(op) = supervised::decode(notif.data.nr as u32, notif.data.args) else {
            return respond(listener.as_fd(), notif.id, Err(libc::ENOSYS));
        };
        if let Op::Connect { fd, addr, len } = op {
            return self.connect(listener, notif, (fd, addr, len), entry);
        }
        if op == Op::CloneSharingFs {
            crate::fs_sharing::note_clone();
            return carry_on(listener.as_fd(), notif.id);
        }
        if let Op::IpcGet { kind, key, arg, flags } = op {
            let made = ipc_objects::get(e, &self.context.ipc_objects, notif.pid, kind, (key, arg, flags));
            return respond(listener.as_fd(), notif.id, made);
        }
        if let Op::Listen { fd, backlog } = op {
            let bound = &self.context.bound;
            return respond(listener.as_fd(), notif.id, listen((e, bound), listener.as_fd(), notif, (fd, backlog)));
        }
        if let Op::Ftruncate { fd, length } = op {
            return self.ftruncate(listener, notif, (fd, length), entry);
        }
        if let Op::Fallocate { fd, mode, offset, len } = op {
            return self.on_call_pool(listener, notif, "a fallocate", entry, move |cx, tid, still_pending| {
                crate::append_only::fallocate(&cx.enforcer, tid, (fd, mode, offset, len), &cx.marked, still_pending)
                    .map(Some)
            });
        }
        if let Op::Prlimit { pid, resource, new, old } = op {
            let whose = crate::limits::whose(notif.pid, pid);
            if new != 0 && whose != crate::limits::Whose::Other {
                return self.set_own_limit(listener, notif, (resource, new, old, whose), entry);
            }
            // Checked, then made by the kernel.
            match crate::limits::decide(e, notif.pid, (pid, whose, resource), new != 0, old != 0) {
                Ok(()) => carry_on(listener.as_fd(), notif.id),
                Err(errno) => respond(listener.as_fd(), notif.id, Err(errno)),
            }
            return;
        }
        if let Op::Mprotect { .. } = op {
            // On the call pool: deciding reads the caller's memory map,
            // which the caller can keep locked (docs/security.md).
            return self.on_call_pool(listener, notif, "an mprotect", entry, move |cx, tid, _| {
                let devices = crate::exec_memory::Devices { marked: &cx.marked, memfds: &cx.memfd_devs };
                crate::exec_memory::decide(&cx.enforcer, tid, op, &devices).map(|()| None)
            });
        }
        if let Op::SetFlags { fd, flags } = op {
            let still_pending = || pending(listener.as_fd(), notif.id);
            let answer = crate::append_only::set_flags(e, notif.pid, (fd, flags), &self.context.marked, still_pending);
            return respond(listener.as_fd(), notif.id, answer);
        }
        let on_process = match op {
            Op::Signal { to, sig } => Some(crate::signals::decide(e, notif.pid, to, sig)),
            Op::SetOwner { to } => Some(crate::signals::decide_owner(e, notif.pid, to).inspect(|()| {
                e.cgroups.owners.note(to);
            })),
            Op::Capset => Some(crate::own_capabilities::decide(e, notif.pid)),
            Op::Sched { to, set } => {
                // migrate_pages, move_pages: ptrace's read mode first, as
                // the kernel checks it (`PTRACE_MODE_READ_REALCREDS`),
                // then `setsched` (`security_task_movememory`).
                let look = match to {
                    SchedTarget::Thread(pid) if supervised::nr::MOVES_MEMORY.contains(&(notif.data.nr as u32)) => {
                        crate::process_reads::decide(e, notif.pid, Inspected::Thread(pid))
                    }
                    _ => Ok(()),
                };
                Some(look.and_then(|()| crate::sched::decide(e, notif.pid, to, set)))
            }
            Op::Ids { pid, session } => {
                let perms = if session { e.classes.getsession } else { e.classes.getpgid };
                Some(crate::process_ids::decide(e, notif.pid, pid, perms))
            }
            Op::SetPgid { pid } => Some(crate::process_ids::decide(e, notif.pid, pid, e.classes.setpgid)),
            Op::Inspect { of } => Some(crate::process_reads::decide(e, notif.pid, of)),
            // Decided from the descriptor and the flags: no read of the
            // caller's memory or map (an mprotect's, above, on the pool).
            Op::Mmap { .. } | Op::Shmat { .. } => {
                let devices =
                    crate::exec_memory::Devices { marked: &self.context.marked, memfds: &self.context.memfd_devs };
                let segment = match op {
                    Op::Shmat { id, flags } => ipc_objects::shmat(e, &self.context.ipc_objects, notif.pid, id, flags),
                    _ => Ok(()),
                };
                Some(segment.and_then(|()| crate::exec_memory::decide(e, notif.pid, op, &devices)))
            }
            Op::IpcCtl { kind, id, cmd } => {
                Some(ipc_objects::control(e, &self.context.ipc_objects, notif.pid, (kind, id), cmd))
            }
            Op::Semop { id } => Some(ipc_objects::semop(e, &self.context.ipc_objects, notif.pid, id)),
            Op::Message { id, receive } => {
                Some(ipc_objects::message(e, &self.context.ipc_objects, notif.pid, id, receive))
            }
            Op::Exec => Some(exec_started(e, listener.as_fd(), notif)),
            Op::Socket { family, ty, protocol } => Some(crate::sockets::decide(e, notif.pid, family, ty, protocol)),
            _ => None,
        };
        if let Some(answer) = on_process {
            match answer {
                Ok(()) => carry_on(listener.as_fd(), notif.id),
                Err(errno) => respond(listener.as_fd(), notif.id, Err(errno)),
            }
            drop(entry);
            return;
        }
        // Its subject here, for its label; what it names is read on the
        // call pool (reading waits on the caller's memory map, which the
        // caller can keep locked: docs/security.md), then the call goes to
        // the workers.
        let tid = notif.pid;
        let subject = match self.context.enforcer.subject(tid, &mut RecentThreads::default(), true) {
            Ok(Some(s)) => s,
            Ok(None) => return respond(listener.as_fd(), notif.id, Err(libc::EPERM)),
            Err(err) => {
                eprintln!("rampartd: supervisor: refused a call of thread {tid}: its cgroup is unknown ({err})");
                return respond(listener.as_fd(), notif.id, Err(libc::EPERM));
            }
        };
        let label = (subject.sid, subject.apparmor.clone());
        let (shared, workers, notif) = (self.shared.clone(), Arc::clone(&self.workers), *notif);
        let answer_on = Arc::clone(&listener);
        let gather: call_threads::Job = Box::new(move || {
            let call = match prepare(listener.as_fd(), &notif, op, subject) {
                Ok(call) => call,
                Err(errno) => return respond(listener.as_fd(), notif.id, Err(errno)),
            };
            let (answer_on, id) = (Arc::clone(&listener), notif.id);
            let label = (call.subject.sid, call.subject.apparmor.clone());
            let job = Job { listener, id, call, entry };
            let served = workers.run_with(label, Box::new(move |worker: &Worker| serve_job(&shared, worker, job)));
            if served.is_err() {
                respond(answer_on.as_fd(), id, Err(libc::EAGAIN));
            }
        });
        if self.blocking.run(label, gather).is_err() {
            respond(answer_on.as_fd(), notif.id, Err(libc::EAGAIN));
        }
    }

    /// A connect (crate::sockets), decided and made on a thread of
    /// [`CallThreads`] (a handshake may take minutes; reading the address
    /// waits on the caller's memory map), which answers it: see
    /// [`connect_on_pool`].
    fn connect(
        &self,
        listener: Arc<OwnedFd>,
        notif: &libc::seccomp_notif,
        call: (i32, u64, i32),
        entry: Option<Entry>,
    ) {
        let (tid, id) = (notif.pid, notif.id);
        let caller = match crate::signals::caller(&self.context.enforcer, tid, "a connect") {
            Ok(caller) => caller,
            Err(errno) => return respond(listener.as_fd(), id, Err(errno)),
        };
        let label = (caller.sid, caller.apparmor.clone());
        let (cx, interrupts, answer_on) =
            (Arc::clone(&self.context), Arc::clone(&self.interrupts), Arc::clone(&listener));
        let job: call_threads::Job = Box::new(move || {
            let answer = connect_on_pool(&cx, &interrupts, answer_on.as_fd(), (id, tid), caller, call);
            respond(answer_on.as_fd(), id, answer);
            drop(entry);
        });
        if self.blocking.run(label, job).is_err() {
            respond(listener.as_fd(), id, Err(libc::EAGAIN));
        }
    }

    /// An ftruncate (crate::append_only), decided and made on the call
    /// pool: on a file of a slow or hostile filesystem (a FUSE server that
    /// never answers) it may wait, and must hold no thread that receives
    /// calls.
    fn ftruncate(&self, listener: Arc<OwnedFd>, notif: &libc::seccomp_notif, call: (i32, i64), entry: Option<Entry>) {
        self.on_call_pool(listener, notif, "an ftruncate", entry, move |cx, tid, still_pending| {
            crate::append_only::truncate(&cx.enforcer, tid, call, &cx.marked, still_pending).map(Some)
        });
    }

    /// A `setrlimit`, or `prlimit64` setting the caller's own limits
    /// (crate::limits), decided and made where the daemon makes it on the
    /// call pool: it reads the caller's memory, where a fault may wait on
    /// the caller.
    fn set_own_limit(
        &self,
        listener: Arc<OwnedFd>,
        notif: &libc::seccomp_notif,
        call: (u32, u64, u64, crate::limits::Whose),
        entry: Option<Entry>,
    ) {
        self.on_call_pool(listener, notif, "a setrlimit", entry, move |cx, tid, still_pending| {
            crate::limits::set_own(&cx.enforcer, tid, call, still_pending)
        });
    }

    /// Serves call `notif` (`what`, for the log) by `serve` on a thread
    /// of [`CallThreads`], which answers it: `Ok(Some(v))` its value,
    /// `Ok(None)` made by the kernel, `Err` its error. `serve` gets the
    /// caller's thread id and whether the call is still pending.
    fn on_call_pool(
        &self,
        listener: Arc<OwnedFd>,
        notif: &libc::seccomp_notif,
        what: &str,
        entry: Option<Entry>,
        serve: impl FnOnce(&Context, u32, &dyn Fn() -> bool) -> Result<Option<i64>, i32> + Send + 'static,
    ) {
        let (cx, tid, id) = (Arc::clone(&self.context), notif.pid, notif.id);
        let label = match crate::signals::caller(&cx.enforcer, tid, what) {
            Ok(caller) => (caller.sid, caller.apparmor),
            Err(errno) => return respond(listener.as_fd(), id, Err(errno)),
        };
        let answer_on = Arc::clone(&listener);
        let job: call_threads::Job = Box::new(move || {
            let still_pending = || pending(answer_on.as_fd(), id);
            match serve(&cx, tid, &still_pending) {
                Ok(None) => carry_on(answer_on.as_fd(), id),
                Ok(Some(value)) => respond(answer_on.as_fd(), id, Ok(value)),
                Err(errno) => respond(answer_on.as_fd(), id, Err(errno)),
            }
            drop(entry);
        });
        if self.blocking.run(label, job).is_err() {
            respond(listener.as_fd(), id, Err(libc::EAGAIN));
        }
    }

    /// Serves the calls a previous daemon received and did not answer
    /// (crate::calls_in_flight), each on the listener it is still
    /// pending on; returns how many were.
    pub fn replay(&self, calls: &[libc::seccomp_notif]) -> usize {
        let mut served = 0;
        for notif in calls {
            let listeners: Vec<Arc<OwnedFd>> =
                self.listeners.lock().unwrap_or_else(PoisonError::into_inner).values().cloned().collect();
            if let Some(listener) = listeners.into_iter().find(|l| pending(l.as_fd(), notif.id)) {
                self.dispatch(listener, notif);
                served += 1;
            }
        }
        served
    }

    fn remove(&self, fd: RawFd) {
        let mut listeners = self.listeners.lock().unwrap_or_else(PoisonError::into_inner);
        // SAFETY: removing a registered descriptor; no event is read.
        unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_DEL, fd, std::ptr::null_mut()) };
        listeners.remove(&fd);
        self.wake_here.lock().unwrap_or_else(PoisonError::into_inner).remove(&fd);
    }

    /// Whether answers on listener `fd` wake their caller on the
    /// answering thread's CPU (`here`) or on the caller's own
    /// (`SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP`, Linux 6.6). Here, when this
    /// thread was idle and received one call: the caller then runs on
    /// the CPU this thread is about to leave instead of waking a halted
    /// one, which on these virtual machines costs more than the decision.
    /// Not when calls were waiting: every caller answered would join
    /// this thread's CPU and compete with it (docs/benchmarks.md,
    /// "Supervised calls: waking the caller": a lone caller's 46 µs over
    /// the bare call became 18; sixteen at once, always here, were 1.7x
    /// slower, and are as before with this choice).
    /// The kernel reads the flag as it answers; an older one refuses it
    /// and callers wake as before.
    fn wake_callers_here(&self, fd: RawFd, listener: BorrowedFd<'_>, here: bool) {
        let mut states = self.wake_here.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(state) = states.get_mut(&fd) else { return };
        if *state != here {
            const SYNC_WAKE_UP: u64 = 1;
            // SAFETY: SET_FLAGS reads its flags argument by value.
            let rc = unsafe {
                libc::ioctl(
                    listener.as_raw_fd(),
                    libc::SECCOMP_IOCTL_NOTIF_SET_FLAGS,
                    if here { SYNC_WAKE_UP } else { 0 },
                )
            };
            if rc == 0 {
                *state = here;
            }
        }
    }
}

/// Connect `id` of thread `tid` (`caller`): its socket and address are
/// read once, and the connect is made on that socket with that address;
/// a Unix socket's connect to a path or an abstract name to what was
/// checked (crate::unix_connects). Never by the kernel, which would read
/// the descriptor and the address again.
fn connect_on_pool(
    cx: &Context,
    interrupts: &Arc<Interrupts>,
    listener: BorrowedFd<'_>,
    (id, tid): (u64, u32),
    caller: crate::enforcer::Subject,
    (fd, addr, len): (i32, u64, i32),
) -> Result<i64, i32> {
    let e = &cx.enforcer;
    let mem = File::open(format!("/proc/{tid}/mem")).map_err(|_| libc::ESRCH)?;
    let (socket, bytes) = gather_address(tid, fd, &mem, addr, len)?;
    let unix_target = match unix_connects::path_in(&bytes) {
        _ if !crate::sockets::is_unix(socket.as_fd()) => None,
        Some(path) => Some(UnixTarget::Path(unix_connects::gather(tid, path)?)),
        None if unix_connects::abstract_name(&bytes).is_some() => {
            Some(UnixTarget::Abstract(unix_connects::gather_abstract(e, tid, socket.as_fd(), &bytes)?))
        }
        None => None,
    };
    // Still the caller: what was read under /proc/TID is its.
    if !pending(listener, id) {
        return Err(libc::ESRCH);
    }
    crate::sockets::decide_use(e, tid, &caller, (socket.as_fd(), &bytes), Use::Connect)?;
    if unix_target.is_some() {
        unix_connects::valid_length(&bytes)?;
    }
    match unix_target {
        Some(UnixTarget::Path(path)) => {
            let call = unix_connects::Call { id, tid, subject: &caller, interrupts };
            unix_connects::connect(cx, &call, socket.as_fd(), path)
        }
        Some(UnixTarget::Abstract(target)) => {
            unix_connects::decide_peer(e, tid, &caller, &target, &cx.bound)?;
            let call = unix_connects::Call { id, tid, subject: &caller, interrupts };
            unix_connects::connect_abstract(&call, socket.as_fd(), target)
        }
        None => {
            let len = libc::socklen_t::try_from(bytes.len()).map_err(|_| libc::EINVAL)?;
            let connect = || {
                // SAFETY: `bytes` holds `len` bytes for the call.
                let rc = unsafe { libc::connect(socket.as_raw_fd(), bytes.as_ptr().cast(), len) };
                if rc < 0 {
                    Err(errno_of(&io::Error::last_os_error()))
                } else {
                    Ok(0)
                }
            };
            interrupts
                .run(id, tid, connect)
                .map_err(|errno| call_interrupts::interrupted(errno, has_send_timeout(socket.as_fd())))
        }
    }
}

/// `epoll_wait` into `events` (`timeout` in milliseconds, -1: none): the
/// number of events, or -1 with errno.
fn epoll_wait(epoll: BorrowedFd<'_>, events: &mut [libc::epoll_event], timeout: i32) -> i32 {
    let room = i32::try_from(events.len()).unwrap_or(i32::MAX);
    // SAFETY: the kernel writes at most `room` entries into `events`.
    unsafe { libc::epoll_wait(epoll.as_raw_fd(), events.as_mut_ptr(), room, timeout) }
}

/// Serves `job` on `worker` and answers it; then back to the daemon's
/// root and credentials, or the thread ends ([`After::EndThread`]) and
/// another takes its place.
fn serve_job(shared: &Shared, worker: &Worker, job: Job) -> After {
    let (cx, home) = (&shared.cx, &worker.home);
    // `entry` lives until the answer is given.
    let Job { listener, id, call, mut entry } = job;
    match serve_call(cx, home, call) {
        Ok(Answer::Install { fd, cloexec }) => {
            if let Err(errno) = supervised_open::install(listener.as_fd(), id, fd.as_fd(), cloexec) {
                // The caller went, or has no descriptor left.
                respond(listener.as_fd(), id, Err(errno));
            }
        }
        Ok(Answer::WaitForReader { object, flags, creds, cloexec, caller }) => {
            let wait = fifo_opens::Wait {
                listener: Arc::clone(&listener),
                id,
                caller,
                signals_checked: std::time::Instant::now(),
                object,
                flags,
                creds,
                cloexec,
                _entry: entry.take(),
            };
            if let Err(errno) = shared.waits.wait(wait) {
                respond(listener.as_fd(), id, Err(errno));
            }
        }
        Ok(Answer::Value(v)) => respond(listener.as_fd(), id, Ok(v)),
        Err(errno) => respond(listener.as_fd(), id, Err(errno)),
    }
    drop(entry);
    match home.back() {
        Ok(()) => After::Continue,
        Err(e) => {
            eprintln!("rampartd: supervisor: a worker cannot return to the daemon's state ({e}); replacing it");
            After::EndThread
        }
    }
}

/// The daemon's root directory, credentials and umask, taken once from
/// the thread that starts the supervisor: every worker starts from them
/// and returns to them, never from the thread that happens to start it
/// (a replacement is started by a worker that could not return).
struct DaemonState {
    root: OwnedFd,
    creds: Creds,
    umask: libc::mode_t,
}

impl DaemonState {
    /// The calling thread's.
    fn current() -> io::Result<DaemonState> {
        let root =
            open_path(libc::AT_FDCWD, OsStr::new("/"), libc::O_DIRECTORY).map_err(io::Error::from_raw_os_error)?;
        let creds = Creds::current()?;
        // SAFETY: umask cannot fail; it is set back at once.
        let umask = unsafe { libc::umask(0o022) };
        // SAFETY: as above.
        unsafe { libc::umask(umask) };
        Ok(DaemonState { root, creds, umask })
    }
}

/// A worker's own state, which it returns to after every call.
struct Home {
    daemon: Arc<DaemonState>,
}

impl Home {
    /// Makes the calling thread a worker (see the module docs), in the
    /// daemon's state whatever its own was.
    fn enter(cx: &Context, daemon: &Arc<DaemonState>) -> io::Result<Home> {
        // SAFETY: unshare with a flag only: this thread's fs_struct
        // becomes its own, so its chroot and chdir touch no other thread.
        if unsafe { libc::unshare(libc::CLONE_FS) } < 0 {
            return Err(last_error("unshare(CLONE_FS)"));
        }
        let home = Home { daemon: Arc::clone(daemon) };
        home.back()?;
        crate::sandbox::enforce_ruleset(&cx.ruleset)?;
        Ok(home)
    }

    /// Back to the daemon's credentials, root directory and umask.
    fn back(&self) -> io::Result<()> {
        let daemon = &self.daemon;
        daemon.creds.assume()?;
        // SAFETY: umask cannot fail; this thread's fs_struct is its own.
        unsafe { libc::umask(daemon.umask) };
        enter_root(daemon.root.as_fd()).map_err(io::Error::from_raw_os_error)
    }
}

/// The next notification, if the calling task is still there.
fn receive(listener: BorrowedFd<'_>) -> Option<libc::seccomp_notif> {
    // SAFETY: seccomp_notif is plain data; the kernel wants it zeroed.
    let mut notif: libc::seccomp_notif = unsafe { std::mem::zeroed() };
    // SAFETY: NOTIF_RECV writes one seccomp_notif into `notif`.
    let rc = unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_RECV, &mut notif) };
    (rc == 0).then_some(notif)
}

/// Call `id` is still waiting for its answer on `listener`.
pub(crate) fn pending(listener: BorrowedFd<'_>, id: u64) -> bool {
    let mut id = id;
    // SAFETY: ID_VALID reads one u64.
    unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_ID_VALID, &mut id) == 0 }
}

/// Notes that the thread of call `notif` (an execve or execveat) starts
/// an exec, before the kernel makes it (crate::exec_calls). A thread that
/// is gone, or whose number may already name another (the call is no
/// longer pending), is not noted: its events count as programs'.
fn exec_started(e: &Enforcer, listener: BorrowedFd<'_>, notif: &libc::seccomp_notif) -> Result<(), i32> {
    let thread = crate::pidfd::thread_pidfd(notif.pid).and_then(|fd| crate::pidfd::pidfs_id(fd.as_fd()));
    if let Ok(thread) = thread {
        // Pending after the pidfd was taken: the number was the caller's.
        if pending(listener, notif.id) {
            e.exec_calls.started(thread);
        }
    }
    Ok(())
}

/// Answers call `id`: `Ok(v)` its return value, `Err(errno)` its error.
pub(crate) fn respond(listener: BorrowedFd<'_>, id: u64, result: Result<i64, i32>) {
    let (val, error) = match result {
        Ok(v) => (v, 0),
        Err(errno) => (0, -errno),
    };
    let mut resp = libc::seccomp_notif_resp { id, val, error, flags: 0 };
    // SAFETY: NOTIF_SEND reads one seccomp_notif_resp. A caller that was
    // killed meanwhile makes it fail with ENOENT: nothing to do.
    unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_SEND, &mut resp) };
}

/// Lets the kernel make call `id` itself, as the caller asked it. Only
/// for calls whose arguments the caller cannot change after the check:
/// the kernel reads them again (crate::signals, crate::limits).
fn carry_on(listener: BorrowedFd<'_>, id: u64) {
    let flags = libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32;
    let mut resp = libc::seccomp_notif_resp { id, val: 0, error: 0, flags };
    // SAFETY: as in `respond`.
    unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_SEND, &mut resp) };
}

pub(crate) fn errno_of(e: &io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EPERM)
}

/// `O_PATH` open of `path` relative to `dir`.
pub(crate) fn open_path(dir: RawFd, path: &OsStr, flags: i32) -> Result<OwnedFd, i32> {
    let c = CString::new(path.as_bytes()).map_err(|_| libc::EINVAL)?;
    // SAFETY: `c` is NUL-terminated and outlives the call.
    let fd = unsafe { libc::openat(dir, c.as_ptr(), flags | libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO));
    }
    // SAFETY: just opened, ours alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn rc(r: libc::c_long) -> Result<i64, i32> {
    if r < 0 {
        Err(io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO))
    } else {
        Ok(r)
    }
}

/// A path operand as read from the caller: its directory (an `O_PATH`
/// handle in the caller's view) and the string.
struct PathArg {
    dir: OwnedFd,
    path: Vec<u8>,
    follow: bool,
    empty_ok: bool,
}

/// What step 1 gathers (see the module docs).
struct Gathered {
    root: OwnedFd,
    args: Vec<PathArg>,
    /// An extended attribute's name and value (`setxattr`), or name.
    xattr: Option<(CString, Vec<u8>)>,
    creds: Creds,
    /// The caller's umask (an open, which may create).
    umask: u32,
    /// An open's path names the caller's own descriptor (`/dev/stdout`,
    /// `/proc/self/fd/N`): what it is open on (`O_PATH`).
    fd_alias: Option<OwnedFd>,
    /// A symbolic link's target (`symlink`), read once.
    link_target: Option<CString>,
    /// A memfd's name (`memfd_create`), read once.
    memfd_name: Option<CString>,
    /// The times a `utime*` call sets, read once (`None`: now, or not
    /// such a call).
    times: Option<[libc::timespec; 2]>,
    /// A bind's or connect's socket (the daemon's copy) and address,
    /// read once.
    address: Option<(OwnedFd, Vec<u8>)>,
    /// A bind's working directory (where a Unix socket's relative path
    /// is made).
    cwd: Option<OwnedFd>,
    /// An inotify watch's instance (the daemon's copy).
    watcher: Option<OwnedFd>,
}

/// `MFD_NAME_MAX_LEN` (mm/memfd.c).
const MFD_NAME_MAX: usize = 255 - "memfd:".len();
/// `XATTR_NAME_MAX` and `XATTR_SIZE_MAX`.
const XATTR_NAME_MAX: usize = 255;
const XATTR_SIZE_MAX: u64 = 65536;

/// The name and value a `setxattr` or `removexattr` names, read once.
fn read_xattr(mem: &File, op: &Op) -> Result<Option<(CString, Vec<u8>)>, i32> {
    let (name, value) = match *op {
        Op::SetXattr { name, value, size, .. } => (name, Some((value, size))),
        Op::RemoveXattr { name, .. } => (name, None),
        _ => return Ok(None),
    };
    let name = read_string(mem, name)?;
    if name.is_empty() || name.len() > XATTR_NAME_MAX {
        return Err(libc::ERANGE);
    }
    let value = match value {
        Some((_, size)) if size > XATTR_SIZE_MAX => return Err(libc::E2BIG),
        Some((addr, size)) => {
            let mut v = vec![0u8; size as usize];
            if size > 0 {
                mem.read_exact_at(&mut v, addr).map_err(|_| libc::EFAULT)?;
            }
            v
        }
        None => Vec::new(),
    };
    Ok(Some((CString::new(name).map_err(|_| libc::EINVAL)?, value)))
}

/// Reads the NUL-terminated string at `addr` in the caller's memory.
fn read_string(mem: &File, addr: u64) -> Result<Vec<u8>, i32> {
    let mut out = Vec::new();
    let mut chunk = [0u8; 256];
    while out.len() < PATH_MAX {
        let n = mem.read_at(&mut chunk, addr + out.len() as u64).map_err(|_| libc::EFAULT)?;
        if n == 0 {
            return Err(libc::EFAULT);
        }
        if let Some(end) = chunk[..n].iter().position(|&b| b == 0) {
            out.extend_from_slice(&chunk[..end]);
            return Ok(out);
        }
        out.extend_from_slice(&chunk[..n]);
    }
    Err(libc::ENAMETOOLONG)
}

/// A call after step 1, for a worker.
struct Call {
    op: Op,
    tid: u32,
    gathered: Gathered,
    subject: crate::enforcer::Subject,
}

/// Step 1 of the call `notif` of `subject`, on the call pool (not on a
/// worker: workers are Landlock-restricted, and Landlock refuses them
/// ptrace access, so `/proc/TID/mem` and `/proc/TID/root`, to the
/// caller; not on the thread that receives calls: reading the caller's
/// memory waits on its memory map's lock, which the caller can hold).
fn prepare(
    listener: BorrowedFd<'_>,
    notif: &libc::seccomp_notif,
    op: Op,
    subject: crate::enforcer::Subject,
) -> Result<Call, i32> {
    let tid = notif.pid;
    let gathered = gather(tid, &op)?;
    let mut id = notif.id;
    // SAFETY: ID_VALID reads one u64. Still valid: `tid` is the caller,
    // blocked in the call, so what was read under /proc/TID is its.
    if unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_ID_VALID, &mut id) } < 0 {
        return Err(libc::ESRCH);
    }
    Ok(Call { op, tid, gathered, subject })
}

/// Whether thread `tid`'s descriptor `fd` was opened `O_PATH` (its
/// `fdinfo` says; unreadable: not, and the kernel answers for it).
fn opened_as_path(tid: u32, fd: i32) -> bool {
    let info = std::fs::read_to_string(format!("/proc/{tid}/fdinfo/{fd}")).unwrap_or_default();
    flags_in_fdinfo(&info).is_some_and(|flags| flags & libc::O_PATH as u32 != 0)
}

/// The `flags:` of an `fdinfo` text (octal).
fn flags_in_fdinfo(info: &str) -> Option<u32> {
    let flags = info.lines().find_map(|l| l.strip_prefix("flags:"))?.trim();
    u32::from_str_radix(flags, 8).ok()
}

/// Step 1 for `op` of thread `tid`.
fn gather(tid: u32, op: &Op) -> Result<Gathered, i32> {
    let args = operands(op);
    let proc = |rest: &str| open_path(libc::AT_FDCWD, OsStr::new(&format!("/proc/{tid}/{rest}")), 0);
    let root = proc("root").map_err(|_| libc::ESRCH)?;
    // The kernel checks a watch's instance before its path.
    let watcher = match *op {
        Op::Watch { fd, mask, .. } => {
            let pidfd = crate::pidfd::thread_pidfd(tid).map_err(|_| libc::ESRCH)?;
            Some(crate::watches::instance(pidfd.as_fd(), fd, mask)?)
        }
        _ => None,
    };
    let mem = File::open(format!("/proc/{tid}/mem")).map_err(|_| libc::ESRCH)?;
    let mut out = Vec::new();
    for a in &args {
        out.push(match *a {
            FileArg::Path { dirfd, path, follow, empty_ok } => {
                let dir = if dirfd == libc::AT_FDCWD { proc("cwd") } else { proc(&format!("fd/{dirfd}")) }
                    .map_err(|e| if e == libc::ENOENT { libc::EBADF } else { e })?;
                PathArg { dir, path: read_string(&mem, path)?, follow, empty_ok }
            }
            // fchmod, fchown, fsetxattr, fremovexattr, futimens: the kernel
            // takes no `O_PATH` descriptor for them (`EBADF`).
            FileArg::Fd(fd) if opened_as_path(tid, fd) => return Err(libc::EBADF),
            FileArg::Fd(fd) => PathArg {
                dir: proc(&format!("fd/{fd}")).map_err(|_| libc::EBADF)?,
                path: Vec::new(),
                follow: true,
                empty_ok: true,
            },
        });
    }
    let xattr = read_xattr(&mem, op)?;
    // Read once: the credentials, and an open's umask.
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).map_err(|_| libc::ESRCH)?;
    let creds = Creds::from_status(&status).ok_or(libc::ESRCH)?;
    // `/dev/stderr`, `/proc/self/fd/N` and the like name one of the
    // caller's own descriptors, through a magic link step 2 does not
    // follow (an open; a watch that follows a final link, as libsystemd's
    // watches by descriptor do).
    let alias = || {
        let n = out.first().and_then(|a| supervised_open::descriptor_alias(tid, &a.path));
        n.and_then(|n| proc(&format!("fd/{n}")).ok())
    };
    let (umask, fd_alias) = match op {
        Op::Open { .. } => (supervised_open::umask_in(&status)?, alias()),
        Op::Watch { mask, .. } if mask & crate::watches::IN_DONT_FOLLOW == 0 => (0, alias()),
        Op::Make { .. } | Op::Bind { .. } => (supervised_open::umask_in(&status)?, None),
        _ => (0, None),
    };
    let link_target = match *op {
        Op::Make { what: Make::Symlink { target }, .. } => match read_string(&mem, target)? {
            t if t.is_empty() => return Err(libc::ENOENT),
            t => Some(CString::new(t).map_err(|_| libc::EINVAL)?),
        },
        _ => None,
    };
    let memfd_name = match *op {
        // The kernel's limit: "memfd:" and the name fit NAME_MAX.
        Op::MemfdCreate { name, .. } => match read_string(&mem, name)? {
            n if n.len() > MFD_NAME_MAX => return Err(libc::EINVAL),
            n => Some(CString::new(n).map_err(|_| libc::EINVAL)?),
        },
        _ => None,
    };
    let times = read_times(&mem, op)?;
    let (address, cwd) = match *op {
        Op::Bind { fd, addr, len } => {
            let address = gather_address(tid, fd, &mem, addr, len)?;
            let cwd = if crate::sockets::names_a_path(&address.1) {
                Some(proc("cwd").map_err(|_| libc::ESRCH)?)
            } else {
                None
            };
            (Some(address), cwd)
        }
        _ => (None, None),
    };
    Ok(Gathered {
        root,
        args: out,
        xattr,
        creds,
        umask,
        fd_alias,
        link_target,
        memfd_name,
        times,
        address,
        cwd,
        watcher,
    })
}

/// Whether `socket` has a send timeout (`SO_SNDTIMEO`), which bounds a
/// blocking connect (`false` if it cannot be read).
pub(crate) fn has_send_timeout(socket: BorrowedFd<'_>) -> bool {
    let mut tv = libc::timeval { tv_sec: 0, tv_usec: 0 };
    let mut len = std::mem::size_of::<libc::timeval>() as libc::socklen_t;
    // SAFETY: `tv` and `len` are valid for the call, `len` its size.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_SNDTIMEO,
            (&mut tv as *mut libc::timeval).cast(),
            &mut len,
        )
    };
    rc == 0 && (tv.tv_sec != 0 || tv.tv_usec != 0)
}

/// A bind's or connect's socket (the daemon's copy of descriptor `fd`)
/// and address (`len` bytes at `addr`), with the kernel's errors in its
/// order (`__sys_bind`, `__sys_connect`: `EBADF`, `ENOTSOCK`, then
/// `move_addr_to_kernel`'s `EINVAL` and `EFAULT`).
fn gather_address(tid: u32, fd: i32, mem: &File, addr: u64, len: i32) -> Result<(OwnedFd, Vec<u8>), i32> {
    let socket = take_socket(tid, fd)?;
    let len = usize::try_from(len).ok().filter(|&l| l <= std::mem::size_of::<libc::sockaddr_storage>());
    let mut bytes = vec![0u8; len.ok_or(libc::EINVAL)?];
    mem.read_exact_at(&mut bytes, addr).map_err(|_| libc::EFAULT)?;
    Ok((socket, bytes))
}

/// The daemon's copy of thread `tid`'s descriptor `fd`, a socket
/// (`EBADF`, `ENOTSOCK` as the kernel's socket calls answer).
fn take_socket(tid: u32, fd: i32) -> Result<OwnedFd, i32> {
    let pidfd = crate::pidfd::thread_pidfd(tid).map_err(|_| libc::ESRCH)?;
    let socket = crate::pidfd::take_descriptor(pidfd.as_fd(), fd).map_err(|_| libc::EBADF)?;
    let md = File::from(socket.try_clone().map_err(|e| errno_of(&e))?).metadata().map_err(|e| errno_of(&e))?;
    if std::os::unix::fs::FileTypeExt::is_socket(&md.file_type()) {
        Ok(socket)
    } else {
        Err(libc::ENOTSOCK)
    }
}

/// listen of descriptor `fd` with `backlog` by the caller of `notif`,
/// checked (crate::sockets), then made by the daemon on its copy of the
/// socket: the kernel would look the descriptor up again, which another
/// thread may have pointed at a socket the caller's domain may not
/// listen on. A listening Unix socket shows its peers who listened
/// (`SO_PEERCRED`): its listen is made by a thread of its own that takes
/// the caller's effective user, group and groups first (the process id
/// peers see is rampartd's); another socket's by this thread.
fn listen(
    (e, bound): (&Enforcer, &crate::unix_names::Bound),
    listener: BorrowedFd<'_>,
    notif: &libc::seccomp_notif,
    (fd, backlog): (i32, i32),
) -> Result<i64, i32> {
    let tid = notif.pid;
    let socket = take_socket(tid, fd)?;
    // Only a Unix socket keeps who listened (`update_peercred`).
    let ids = if crate::sockets::is_unix(socket.as_fd()) {
        let status = std::fs::read_to_string(format!("/proc/{tid}/status")).map_err(|_| libc::ESRCH)?;
        Some(PeerIds::from_status(&status).ok_or(libc::ESRCH)?)
    } else {
        None
    };
    let caller = crate::signals::caller(e, tid, "a listen")?;
    // Still the caller: what was read under /proc/TID is its.
    if !pending(listener, notif.id) {
        return Err(libc::ESRCH);
    }
    crate::sockets::decide_use(e, tid, &caller, (socket.as_fd(), &[]), Use::Listen)?;
    if ids.is_some() {
        // A socket the kernel named (an automatic name, at a connect
        // with `SO_PASSCRED`) is its listener's, unless bound before.
        bound.record(socket.as_fd(), caller.sid)?;
    }
    let listen = move || {
        // SAFETY: integer arguments; `socket` is open.
        if unsafe { libc::listen(socket.as_raw_fd(), backlog) } < 0 {
            Err(errno_of(&io::Error::last_os_error()))
        } else {
            Ok(0)
        }
    };
    match ids {
        Some(ids) => ids.run_as(listen).map_err(|e| {
            eprintln!("rampartd: supervisor: a listen of thread {tid} failed: {e}");
            libc::EPERM
        })?,
        None => listen(),
    }
}

/// bind, checked (crate::sockets), then made by the daemon on its copy of
/// the socket: with the address it checked, and on the socket it checked
/// (the kernel would look the descriptor up again, which another thread
/// may have pointed at another socket). With the caller's credentials; a
/// Unix socket's path in the caller's root, from its working directory,
/// with its umask (the socket file's mode). A Unix socket's abstract or
/// automatic name is bound with the daemon's credentials: the kernel
/// asks none of those. Leaves the thread in any state (the worker goes
/// [`Home::back`]).
fn serve_bind(cx: &Context, call: Call) -> Result<Answer, i32> {
    let Call { tid, gathered, subject, .. } = call;
    let (socket, addr) = gathered.address.as_ref().ok_or(libc::EFAULT)?;
    crate::sockets::decide_use(&cx.enforcer, tid, &subject, (socket.as_fd(), addr), Use::Bind)?;
    let path = crate::sockets::names_a_path(addr);
    if path {
        let cwd = gathered.cwd.as_ref().ok_or(libc::ESRCH)?;
        enter_root(gathered.root.as_fd())?;
        // SAFETY: fchdir of an open directory; this thread's fs_struct is
        // its own (Home::enter).
        if unsafe { libc::fchdir(cwd.as_raw_fd()) } < 0 {
            return Err(errno_of(&io::Error::last_os_error()));
        }
        // SAFETY: umask cannot fail; this thread's fs_struct is its own.
        unsafe { libc::umask(gathered.umask & 0o777) };
    }
    let unix = crate::sockets::is_unix(socket.as_fd());
    // Recorded before the bind, so that no connect finds the name
    // unrecorded; forgotten if the bind fails (crate::unix_names).
    let recorded = unix && cx.bound.record(socket.as_fd(), subject.sid)?;
    if path || !unix {
        gathered.creds.assume().map_err(|e| errno_of(&e))?;
    }
    let len = libc::socklen_t::try_from(addr.len()).map_err(|_| libc::EINVAL)?;
    // SAFETY: `addr` holds `len` bytes for the call.
    if unsafe { libc::bind(socket.as_raw_fd(), addr.as_ptr().cast(), len) } < 0 {
        let errno = errno_of(&io::Error::last_os_error());
        if recorded {
            cx.bound.forget(socket.as_fd());
        }
        return Err(errno);
    }
    Ok(Answer::Value(0))
}

/// The two times a `utime*` call names, read once, as timespecs (`None`:
/// a null pointer, now). Microseconds or nanoseconds out of range give
/// `EINVAL`, as the kernel answers.
fn read_times(mem: &File, op: &Op) -> Result<Option<[libc::timespec; 2]>, i32> {
    let Op::Times { times, layout, .. } = *op else { return Ok(None) };
    if times == 0 {
        return Ok(None);
    }
    let mut raw = [0u8; 32];
    let len = if layout == TimesLayout::Utimbuf { 16 } else { 32 };
    mem.read_exact_at(&mut raw[..len], times).map_err(|_| libc::EFAULT)?;
    let mut w = [0i64; 4];
    for (word, bytes) in w.iter_mut().zip(raw.chunks_exact(8)) {
        let mut b = [0u8; 8];
        b.copy_from_slice(bytes);
        *word = i64::from_ne_bytes(b);
    }
    let ts = |tv_sec: i64, tv_nsec: i64| libc::timespec { tv_sec, tv_nsec };
    let valid = |sub: i64, per_second: i64, special: bool| {
        (0..per_second).contains(&sub) || (special && (sub == libc::UTIME_NOW || sub == libc::UTIME_OMIT))
    };
    Ok(Some(match layout {
        TimesLayout::Utimbuf => [ts(w[0], 0), ts(w[1], 0)],
        TimesLayout::Timeval if valid(w[1], 1_000_000, false) && valid(w[3], 1_000_000, false) => {
            [ts(w[0], w[1] * 1000), ts(w[2], w[3] * 1000)]
        }
        TimesLayout::Timespec if valid(w[1], 1_000_000_000, true) && valid(w[3], 1_000_000_000, true) => {
            [ts(w[0], w[1]), ts(w[2], w[3])]
        }
        _ => return Err(libc::EINVAL),
    }))
}

/// Times that set a value (`ATTR_*_SET`: SELinux checks `setattr`), not
/// only now or nothing (`write`).
fn sets_explicit_times(times: Option<&[libc::timespec; 2]>) -> bool {
    times.is_some_and(|t| t.iter().any(|t| t.tv_nsec != libc::UTIME_NOW && t.tv_nsec != libc::UTIME_OMIT))
}

/// An object a call names, resolved (step 3).
pub(crate) struct Object {
    pub(crate) fd: OwnedFd,
    pub(crate) md: std::fs::Metadata,
}

impl Object {
    /// The object `fd` names; on procfs refused (`EACCES`): `/proc/self`
    /// in the daemon is the daemon (crate::supervised_open).
    pub(crate) fn of(fd: OwnedFd) -> Result<Object, i32> {
        if supervised_open::on_procfs(fd.as_fd()) {
            return Err(libc::EACCES);
        }
        let md = File::from(fd.try_clone().map_err(|e| errno_of(&e))?).metadata().map_err(|e| errno_of(&e))?;
        Ok(Object { fd, md })
    }
}

/// A last name in a directory, and the object it holds (if any).
struct Name {
    parent: Object,
    last: CString,
    holds: Option<Object>,
}

/// Resolves `a` to the object it names.
fn resolve_object(a: &PathArg) -> Result<Object, i32> {
    if a.path.is_empty() {
        if !a.empty_ok {
            return Err(libc::ENOENT);
        }
        return Object::of(a.dir.try_clone().map_err(|e| errno_of(&e))?);
    }
    let flags = if a.follow { 0 } else { libc::O_NOFOLLOW };
    Object::of(supervised_open::path_of(a.dir.as_fd(), &a.path, flags)?)
}

/// Resolves `a` to a directory and a last name in it.
fn resolve_name(a: &PathArg) -> Result<Name, i32> {
    let trimmed = {
        let mut p = a.path.as_slice();
        while p.len() > 1 && p.ends_with(b"/") {
            p = &p[..p.len() - 1];
        }
        p
    };
    if trimmed.is_empty() {
        return Err(libc::ENOENT);
    }
    let Some((dir, last)) = supervised_open::split_last(trimmed) else {
        let dots = trimmed == b".." || trimmed.ends_with(b"/..");
        return Err(if dots { libc::ENOTEMPTY } else { libc::EINVAL });
    };
    let parent = Object::of(supervised_open::path_of(a.dir.as_fd(), dir, libc::O_DIRECTORY)?)?;
    let holds = match supervised_open::path_of(parent.fd.as_fd(), last, libc::O_NOFOLLOW) {
        Ok(fd) => Some(Object::of(fd)?),
        Err(libc::ENOENT) => None,
        Err(e) => return Err(e),
    };
    Ok(Name { parent, last: CString::new(last).map_err(|_| libc::EINVAL)?, holds })
}

/// The operands of a call, resolved.
enum Resolved {
    Setattr(Object, Attr),
    Truncate(Object, i64),
    Remove(Name, bool),
    Rename(Box<Name>, Box<Name>, u32),
    Link(Object, Name),
    /// An extended attribute set (`Some(value, flags)`) or removed.
    Xattr(Object, CString, Option<(Vec<u8>, i32)>),
    /// Times set (`None`: now).
    Times(Object, Option<[libc::timespec; 2]>),
}

/// The SELinux label's attribute: a relabel.
const XATTR_SELINUX: &[u8] = b"security.selinux";

impl Resolved {
    /// A write of `security.selinux`: the new label, if this is one.
    fn relabel(&self) -> Option<(&Object, &[u8])> {
        match self {
            Resolved::Xattr(o, name, Some((value, _))) if name.as_bytes() == XATTR_SELINUX => Some((o, value)),
            _ => None,
        }
    }

    /// The objects a rename or link gives a new name.
    fn renamed(&self) -> Vec<&Object> {
        match self {
            Resolved::Rename(from, to, flags) => {
                let exchanged = (flags & libc::RENAME_EXCHANGE != 0).then_some(&to.holds);
                [Some(&from.holds), exchanged].into_iter().flatten().flatten().collect()
            }
            Resolved::Link(o, _) => vec![o],
            _ => Vec::new(),
        }
    }
}

fn resolve(
    op: &Op,
    args: &[PathArg],
    xattr: Option<&(CString, Vec<u8>)>,
    times: Option<[libc::timespec; 2]>,
) -> Result<Resolved, i32> {
    Ok(match *op {
        Op::Setattr { attr, .. } => Resolved::Setattr(resolve_object(&args[0])?, attr),
        Op::Truncate { length, .. } => Resolved::Truncate(resolve_object(&args[0])?, length),
        Op::Remove { dir, .. } => Resolved::Remove(resolve_name(&args[0])?, dir),
        Op::Rename { flags, .. } => {
            Resolved::Rename(Box::new(resolve_name(&args[0])?), Box::new(resolve_name(&args[1])?), flags)
        }
        Op::Link { .. } => Resolved::Link(resolve_object(&args[0])?, resolve_name(&args[1])?),
        Op::SetXattr { flags, .. } => {
            let (name, value) = xattr.cloned().ok_or(libc::EFAULT)?;
            Resolved::Xattr(resolve_object(&args[0])?, name, Some((value, flags)))
        }
        Op::RemoveXattr { .. } => {
            let (name, _) = xattr.cloned().ok_or(libc::EFAULT)?;
            Resolved::Xattr(resolve_object(&args[0])?, name, None)
        }
        Op::Times { .. } => Resolved::Times(resolve_object(&args[0])?, times),
        // Served by `serve_open`, `serve_make` and `serve_watch`; calls on
        // processes by `Supervisor::dispatch`.
        Op::Open { .. }
        | Op::Make { .. }
        | Op::Watch { .. }
        | Op::Signal { .. }
        | Op::SetOwner { .. }
        | Op::Prlimit { .. }
        | Op::Capset
        | Op::Sched { .. }
        | Op::Ids { .. }
        | Op::SetPgid { .. }
        | Op::Inspect { .. }
        | Op::Mmap { .. }
        | Op::Shmat { .. }
        | Op::IpcGet { .. }
        | Op::IpcCtl { .. }
        | Op::Semop { .. }
        | Op::Message { .. }
        | Op::Mprotect { .. }
        | Op::MemfdCreate { .. }
        | Op::Socket { .. }
        | Op::Bind { .. }
        | Op::Connect { .. }
        | Op::Listen { .. }
        | Op::SetFlags { .. }
        | Op::Ftruncate { .. }
        | Op::Fallocate { .. }
        | Op::CloneSharingFs
        | Op::Exec => return Err(libc::ENOSYS),
    })
}

fn operands(op: &Op) -> Vec<FileArg> {
    match *op {
        Op::Setattr { target, .. } | Op::Truncate { target, .. } | Op::Times { target, .. } => vec![target],
        Op::Remove { name, .. } => vec![name],
        Op::Rename { from, to, .. } | Op::Link { from, to } => vec![from, to],
        Op::SetXattr { target, .. }
        | Op::RemoveXattr { target, .. }
        | Op::Open { target, .. }
        | Op::Watch { target, .. } => vec![target],
        Op::Make { name, .. } => vec![name],
        // Decided without a worker (`Supervisor::dispatch`).
        Op::Signal { .. }
        | Op::SetOwner { .. }
        | Op::Prlimit { .. }
        | Op::Capset
        | Op::Sched { .. }
        | Op::Ids { .. }
        | Op::SetPgid { .. }
        | Op::Inspect { .. }
        | Op::Mmap { .. }
        | Op::Shmat { .. }
        | Op::IpcGet { .. }
        | Op::IpcCtl { .. }
        | Op::Semop { .. }
        | Op::Message { .. }
        | Op::Mprotect { .. }
        | Op::MemfdCreate { .. }
        | Op::Socket { .. }
        | Op::Bind { .. }
        | Op::Connect { .. }
        | Op::Listen { .. }
        | Op::SetFlags { .. }
        | Op::Ftruncate { .. }
        | Op::Fallocate { .. }
        | Op::CloneSharingFs
        | Op::Exec => Vec::new(),
    }
}

/// Enters the directory `root` as this thread's root (its `fs_struct`
/// is private: `unshare(CLONE_FS)` first).
pub(crate) fn enter_root(root: BorrowedFd<'_>) -> Result<(), i32> {
    // SAFETY: integer and NUL-terminated string arguments.
    unsafe {
        if libc::fchdir(root.as_raw_fd()) < 0 || libc::chroot(c".".as_ptr()) < 0 {
            return Err(io::Error::last_os_error().raw_os_error().unwrap_or(libc::EPERM));
        }
    }
    Ok(())
}

/// What a served call answers.
enum Answer {
    /// The call's return value.
    Value(i64),
    /// A descriptor to install in the caller, as the return value.
    Install { fd: OwnedFd, cloexec: bool },
    /// A FIFO opened for writing, checked, whose open must wait for a
    /// reader (crate::fifo_opens).
    WaitForReader { object: OwnedFd, flags: i32, creds: Creds, cloexec: bool, caller: u32 },
}

/// One call (see the module docs), or `Err(errno)`. Leaves the thread
/// in any state: the worker goes [`Home::back`].
fn serve_call(cx: &Context, home: &Home, call: Call) -> Result<Answer, i32> {
    match call.op {
        Op::Open { flags, mode, .. } => return serve_open(cx, home, call, flags, mode),
        Op::Make { what, .. } => return serve_make(cx, home, call, what),
        Op::MemfdCreate { flags, .. } => return serve_memfd(cx, home, call, flags),
        Op::Bind { .. } => return serve_bind(cx, call),
        Op::Watch { mask, .. } => return serve_watch(cx, home, call, mask).map(Answer::Value),
        _ => {}
    }
    let Call { op, tid, gathered, subject } = call;
    let e = &cx.enforcer;
    // Step 2, in the caller's root and with its credentials.
    enter_root(gathered.root.as_fd())?;
    gathered.creds.assume().map_err(|e| errno_of(&e))?;
    if let Some([atime, mtime]) = gathered.times {
        if atime.tv_nsec == libc::UTIME_OMIT && mtime.tv_nsec == libc::UTIME_OMIT {
            // "Nothing to do, we must not even check the path" (utimensat).
            return Ok(Answer::Value(0));
        }
    }
    let resolved = resolve(&op, &gathered.args, gathered.xattr.as_ref(), gathered.times);
    home.back().map_err(|e| errno_of(&e))?;
    let resolved = resolved?;
    // Step 3: both modules (stacked: each checks, each audits). A label
    // is checked wherever it decides: the marked filesystems, and device
    // nodes wherever they lie (`object_sid`).
    let labeled = |o: &Object| cx.marked.holds(o.fd.as_fd(), &o.md) || decided_device(&o.md);
    if let Some((o, value)) = resolved.relabel().filter(|(o, _)| labeled(o)) {
        // Made with the daemon's credentials (without SELinux in the
        // kernel, `security.*` needs CAP_SYS_ADMIN; SELinux asks the
        // owner or CAP_FOWNER instead, and relabelfrom/relabelto).
        relabel_allowed(cx, tid, subject.tgid, subject.sid, o, value, &gathered.creds)?;
        let done = perform(&resolved);
        if done.is_ok() {
            // The file's label changed: its cached label and the marks its
            // old label justified go (its inode's only: every other answer
            // cached is by label).
            e.objects.forget((o.md.dev(), o.md.ino()));
            if let Err(err) = e.marks.relabeled(ObjectAt::Fd(o.fd.as_fd()), (o.md.dev(), o.md.ino())) {
                eprintln!("rampartd: removing the marks of a relabeled file: {err}; flushing every mark");
                let _ = e.marks.flush(None);
            }
        }
        return done.map(Answer::Value);
    }
    if let Resolved::Xattr(o, name, None) = &resolved {
        if name.as_bytes() == XATTR_SELINUX && labeled(o) {
            // SELinux: "no one is allowed to remove a SELinux security
            // label" (selinux_inode_removexattr), without an AVC line.
            return Err(libc::EACCES);
        }
    }
    let selinux = allowed(cx, tid, subject.tgid, subject.sid, &resolved);
    let apparmor = match &subject.apparmor {
        Some(profile) => apparmor_allows(cx, tid, subject.tgid.unwrap_or(tid), profile, &resolved),
        None => true,
    };
    if !(selinux && apparmor) {
        return Err(libc::EACCES);
    }
    // Step 4: a name change waits for creations between making and
    // labeling (crate::new_labels).
    let _changing = matches!(resolved, Resolved::Remove(..) | Resolved::Rename(..) | Resolved::Link(..))
        .then(|| cx.names.changing());
    // A file given a new name keeps its label, as in SELinux: one its
    // path gave it goes into its xattr first (crate::new_labels::keep;
    // directories are not renamed there: the Landlock ruleset).
    let kept = |o: &&Object| cx.writes_labels && !o.md.is_dir() && cx.marked.holds(o.fd.as_fd(), &o.md);
    for o in resolved.renamed().into_iter().filter(kept) {
        if let Err(err) = new_labels::keep(&cx.enforcer, o.fd.as_fd(), &o.md) {
            cx.label_failures.report(o.md.dev(), "a renamed or linked file keeps no label", &err);
        }
    }
    if let Resolved::Truncate(o, length) = &resolved {
        crate::limits::may_grow_file(tid, o.md.size(), *length)?;
    }
    gathered.creds.assume().map_err(|e| errno_of(&e))?;
    perform(&resolved).map(Answer::Value)
}

/// inotify_add_watch (crate::watches), in the kernel's order, each
/// refusal ending it: the mode bits with the caller's credentials,
/// SELinux's `read` of the object, then its `watch` (on the marked
/// filesystems only, as every check here); then the watch, made on the
/// daemon's copy of the caller's instance with the caller's credentials.
fn serve_watch(cx: &Context, home: &Home, call: Call, mask: u32) -> Result<i64, i32> {
    let Call { tid, gathered, subject, .. } = call;
    let instance = gathered.watcher.as_ref().ok_or(libc::EBADF)?;
    let arg = gathered.args.first().ok_or(libc::EFAULT)?;
    let class = |o: &Object| cx.enforcer.classes.of_mode(o.md.mode()).filter(|_| cx.marked.holds(o.fd.as_fd(), &o.md));
    enter_root(gathered.root.as_fd())?;
    gathered.creds.assume().map_err(|e| errno_of(&e))?;
    let o = match &gathered.fd_alias {
        Some(fd) => fd.try_clone().map_err(|e| errno_of(&e)).and_then(Object::of),
        None => resolve_object(arg),
    };
    let o = o.and_then(|o| {
        if mask & crate::watches::IN_ONLYDIR != 0 && !o.md.is_dir() {
            return Err(libc::ENOTDIR);
        }
        if class(&o).is_some() {
            crate::thread_creds::mode_allows(o.fd.as_fd(), libc::R_OK)?;
        }
        Ok(o)
    });
    // The checks as the daemon; the watch names the object through the
    // daemon's `/proc`.
    home.back().map_err(|e| errno_of(&e))?;
    let o = o?;
    if let Some(cp) = class(&o) {
        for perms in crate::watches::perms(&cp, mask) {
            if !checked(cx, tid, subject.tgid, subject.sid, &[(&o, perms)]) {
                return Err(libc::EACCES);
            }
        }
    }
    gathered.creds.assume().map_err(|e| errno_of(&e))?;
    crate::watches::add(instance.as_fd(), o.fd.as_fd(), mask)
}

/// memfd_create, made with the caller's credentials, then labeled
/// (crate::memfds).
fn serve_memfd(cx: &Context, home: &Home, call: Call, flags: u32) -> Result<Answer, i32> {
    let Call { tid, gathered, subject, .. } = call;
    let name = gathered.memfd_name.as_deref().ok_or(libc::EFAULT)?;
    let plan = crate::memfds::plan(&cx.enforcer, tid, &subject, flags, cx.writes_labels)?;
    gathered.creds.assume().map_err(|e| errno_of(&e))?;
    let made = crate::memfds::make(name, plan.flags);
    home.back().map_err(|e| errno_of(&e))?;
    let fd = made?;
    if let Some(sid) = plan.label {
        if let Err(err) = new_labels::set(&cx.enforcer, ObjectAt::Fd(fd.as_fd()), sid) {
            let dev = File::from(fd.try_clone().map_err(|e| errno_of(&e))?).metadata().map_or(0, |md| md.dev());
            cx.label_failures.report(dev, "a memfd keeps no label", &err);
        }
    }
    Ok(Answer::Install { fd, cloexec: flags & crate::memfds::MFD_CLOEXEC != 0 })
}

/// mkdir, mknod or symlink, checked before the object is made, as
/// `may_create` checks ([`may_create`]) and as AppArmor's path hooks check
/// (create on its name), then made in the caller's root with its
/// credentials and umask, and labeled (crate::new_labels).
fn serve_make(cx: &Context, home: &Home, call: Call, what: Make) -> Result<Answer, i32> {
    let Call { tid, gathered, subject, .. } = call;
    let arg = gathered.args.first().ok_or(libc::EINVAL)?;
    enter_root(gathered.root.as_fd())?;
    gathered.creds.assume().map_err(|e| errno_of(&e))?;
    let name = resolve_name(arg).map_err(|e| if e == libc::EINVAL || e == libc::ENOTEMPTY { libc::EEXIST } else { e });
    home.back().map_err(|e| errno_of(&e))?;
    let name = name?;
    if name.holds.is_some() {
        return Err(libc::EEXIST);
    }
    let mode = match what {
        Make::Dir { .. } => libc::S_IFDIR,
        Make::Symlink { .. } => libc::S_IFLNK,
        Make::Node { mode, .. } if mode & libc::S_IFMT == 0 => libc::S_IFREG,
        Make::Node { mode, .. } => mode & libc::S_IFMT,
    };
    // A device node is decided by its label wherever it lies
    // (`object_sid`): made anywhere, it is checked and labeled as on a
    // marked filesystem. On the kernel's filesystems (a directory of
    // bpffs, configfs, tracefs) checked on the policy's labels
    // (crate::kernel_files), which label it by path themselves.
    let device = mode == libc::S_IFCHR || mode == libc::S_IFBLK;
    let on_kernel_fs = crate::kernel_files::holds(name.parent.fd.as_fd());
    let label = if cx.marked.holds(name.parent.fd.as_fd(), &name.parent.md) || device || on_kernel_fs {
        Some(create_allowed(cx, tid, &subject, &name, mode, what).ok_or(libc::EACCES)?)
    } else {
        None
    };
    // Until it is labeled, its name stays its own (crate::new_labels).
    let _making = cx.names.making();
    enter_root(gathered.root.as_fd())?;
    gathered.creds.assume().map_err(|e| errno_of(&e))?;
    // SAFETY: umask cannot fail; this thread's fs_struct is its own.
    unsafe { libc::umask(gathered.umask & 0o777) };
    make(&name, what, gathered.link_target.as_deref())?;
    home.back().map_err(|e| errno_of(&e))?;
    if let Some(sid) = label.filter(|_| cx.writes_labels && !on_kernel_fs) {
        let at = ObjectAt::Name(name.parent.fd.as_fd(), &name.last);
        if let Err(e) = inode_at(&name).and_then(|inode| new_labels::write(&cx.enforcer, at, inode, sid)) {
            cx.label_failures.report(name.parent.md.dev(), "a new object keeps the label of its path", &e);
        }
    }
    Ok(Answer::Value(0))
}

/// The inode the name `n` holds now (not followed).
fn inode_at(n: &Name) -> io::Result<(u64, u64)> {
    // SAFETY: stat is plain data, filled by the kernel.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `n.parent` is open, `n.last` NUL-terminated, `st` writable.
    if unsafe { libc::fstatat(n.parent.fd.as_raw_fd(), n.last.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((st.st_dev, st.st_ino))
}

/// Both modules' checks of a creation of a `mode`-type object at `n`,
/// audited: the label it is to have, or `None` if refused.
fn create_allowed(
    cx: &Context,
    tid: u32,
    subject: &crate::enforcer::Subject,
    n: &Name,
    mode: u32,
    what: Make,
) -> Option<Sid> {
    let e = &cx.enforcer;
    let label = may_create(cx, tid, subject, &n.parent, Some(&n.last), mode);
    if let Some(profile) = &subject.apparmor {
        let aa = e.apparmor.as_ref()?;
        let op = match what {
            Make::Dir { .. } => "mkdir",
            Make::Node { .. } => "mknod",
            Make::Symlink { .. } => "symlink_create",
        };
        let enforcing = || e.avc.policy_state().2;
        let ev = event(tid, subject.tgid.unwrap_or(tid), &n.parent);
        // A directory's name ends in `/` (the kernel's PATH_IS_DIR).
        let name = new_name(n).map(|mut p| {
            if mode == libc::S_IFDIR {
                p.push(b'/');
            }
            p
        });
        if !name.is_some_and(|p| aa.create_call(profile, &ev, &p, op, &enforcing)) {
            return None;
        }
    }
    label
}

/// SELinux's `may_create`, audited: `search write add_name` on the
/// directory `parent` and `create` on the label a `mode`-type object
/// made there as `name` gets ([`Enforcer::new_object_sid`]), which is
/// returned if both pass. An unnamed `O_TMPFILE` (`name` `None`): `search
/// write` on the directory only, as the kernel checks it.
fn may_create(
    cx: &Context,
    tid: u32,
    subject: &crate::enforcer::Subject,
    parent: &Object,
    name: Option<&CStr>,
    mode: u32,
) -> Option<Sid> {
    let e = &cx.enforcer;
    let d = &e.classes.dir_ops;
    let dir_perms = match name {
        Some(_) => d.search | d.write | d.add_name,
        None => d.search | d.write,
    };
    let mut allowed = checked(cx, tid, subject.tgid, subject.sid, &[(parent, dir_perms)]);
    let parent_sid = object_sid(cx, parent).unwrap_or_else(|| e.objects.sid_of(&e.avc, parent.fd.as_fd(), &parent.md));
    let label = match e.new_object_sid(subject.sid, parent_sid, mode, name.map(CStr::to_bytes)) {
        Ok(sid) => sid,
        Err(why) => {
            // The kernel refuses a creation without a valid label.
            eprintln!("rampartd: security_compute_sid: {why}: a creation by thread {tid} refused");
            return None;
        }
    };
    if let Some(cp) = e.classes.of_mode(mode).filter(|cp| name.is_some() && !cp.create.is_empty()) {
        let decision = e.avc.has_perm_noaudit(subject.sid, label, cp.class, cp.create);
        allowed &= decision.passes();
        let checked = Checked { ssid: subject.sid, tsid: label, class: cp.class, decision };
        e.audit_checks(tid, subject.tgid, parent.fd.as_fd(), &[checked]);
    }
    allowed.then_some(label)
}

/// Makes `what` as `n` (in the caller's root, with its credentials).
fn make(n: &Name, what: Make, link_target: Option<&CStr>) -> Result<(), i32> {
    let (dir, last) = (n.parent.fd.as_raw_fd(), n.last.as_ptr());
    // SAFETY: `dir` is open, `last` and the link target NUL-terminated,
    // all alive across the call.
    let rc = unsafe {
        match what {
            Make::Dir { mode } => libc::mkdirat(dir, last, mode as libc::mode_t) as libc::c_long,
            Make::Node { mode, dev } => libc::syscall(libc::SYS_mknodat, dir, last, mode, dev as u32),
            Make::Symlink { .. } => {
                let target = link_target.ok_or(libc::EFAULT)?;
                libc::symlinkat(target.as_ptr(), dir, last) as libc::c_long
            }
        }
    };
    if rc < 0 {
        return Err(io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO));
    }
    Ok(())
}

/// An open for writing (crate::supervised_open).
fn serve_open(cx: &Context, home: &Home, call: Call, flags: i32, mode: u32) -> Result<Answer, i32> {
    let Call { tid, gathered, subject, .. } = call;
    let arg = gathered.args.first().ok_or(libc::EINVAL)?;
    let cloexec = flags & libc::O_CLOEXEC != 0;
    // Step 1, in the caller's root, with its credentials and umask.
    enter_root(gathered.root.as_fd())?;
    gathered.creds.assume().map_err(|e| errno_of(&e))?;
    // SAFETY: umask cannot fail; this thread's fs_struct is its own.
    unsafe { libc::umask(gathered.umask & 0o777) };
    let target = match gathered.fd_alias {
        Some(fd) => supervised_open::alias_target(fd, flags),
        None => supervised_open::resolve(arg.dir.as_fd(), &arg.path, flags, mode),
    };
    home.back().map_err(|e| errno_of(&e))?;
    let (object, created, new_name) = match target? {
        supervised_open::Target::Path(fd) => return Ok(Answer::Install { fd, cloexec }),
        supervised_open::Target::Existing(fd, md) => (Object { fd, md }, false, None),
        supervised_open::Target::Created(fd, md, name) => (Object { fd, md }, true, name),
    };
    if !created && flags & libc::O_CREAT != 0 {
        supervised_open::may_open_existing_in_sticky(object.fd.as_fd(), &object.md, gathered.creds.fsuid)?;
    }
    // Step 2: the checks of an open event.
    if supervised_open::on_procfs(object.fd.as_fd()) {
        return Err(libc::EACCES);
    }
    if let Some(name) = new_name.as_ref().filter(|_| cx.marked.holds(object.fd.as_fd(), &object.md)) {
        // The creation, as `may_create` checks it before the kernel
        // creates: refused, the file made meanwhile goes again; allowed,
        // it is labeled through its descriptor (crate::new_labels).
        let parent = Object::of(name.parent.try_clone().map_err(|e| errno_of(&e))?)?;
        let Some(label) = may_create(cx, tid, &subject, &parent, name.name.as_deref(), object.md.mode()) else {
            supervised_open::remove_created(name, &object.md);
            return Err(libc::EACCES);
        };
        let inode = (object.md.dev(), object.md.ino());
        if cx.writes_labels {
            if let Err(e) = new_labels::write(&cx.enforcer, ObjectAt::Fd(object.fd.as_fd()), inode, label) {
                cx.label_failures.report(object.md.dev(), "a new file keeps the label of its path", &e);
            }
        }
    }
    if let Some(tsid) = object_sid(cx, &object) {
        if !open_allowed(cx, tid, &subject, &object, tsid, flags) {
            return Err(libc::EACCES);
        }
    }
    if !created && controlling_tty::is_dev_tty(&object.md) {
        // The caller's terminal, not the daemon's, found in its root and
        // decided as an open of the terminal's own node too.
        let tty = controlling_tty::of(tid)?;
        enter_root(gathered.root.as_fd())?;
        gathered.creds.assume().map_err(|e| errno_of(&e))?;
        let opened = controlling_tty::open(tty, flags);
        home.back().map_err(|e| errno_of(&e))?;
        let node = Object::of(opened?)?;
        if let Some(tsid) = object_sid(cx, &node) {
            if !open_allowed(cx, tid, &subject, &node, tsid, flags) {
                return Err(libc::EACCES);
            }
        }
        return Ok(Answer::Install { fd: node.fd, cloexec });
    }
    // Step 3, with the caller's credentials (the daemon's root).
    gathered.creds.assume().map_err(|e| errno_of(&e))?;
    let fd = if created {
        supervised_open::finish(object.fd.as_fd(), flags)?;
        object.fd
    } else {
        match supervised_open::reopen(object.fd.as_fd(), flags) {
            // A FIFO without a reader: the kernel's open would wait.
            Err(libc::ENXIO) if supervised_open::waits_for_reader(&object.md, flags) => {
                return Ok(Answer::WaitForReader {
                    object: object.fd,
                    flags,
                    creds: gathered.creds,
                    cloexec,
                    caller: tid,
                });
            }
            other => other?,
        }
    };
    Ok(Answer::Install { fd, cloexec })
}

/// The label a call on `o` is decided on: its own on the marked
/// filesystems and for a device node wherever it lies (a disk under a
/// marked filesystem, `/dev/kmsg`, an input
/// device, the watchdog: the device, not its node's filesystem, is what
/// a write reaches; terminals excepted: crate::controlling_tty), the
/// policy's on the kernel's filesystems
/// (crate::kernel_files); `None` elsewhere, where nothing is mediated.
fn object_sid(cx: &Context, o: &Object) -> Option<Sid> {
    let e = &cx.enforcer;
    if cx.marked.holds(o.fd.as_fd(), &o.md) || decided_device(&o.md) {
        return Some(e.objects.sid_of(&e.avc, o.fd.as_fd(), &o.md));
    }
    crate::kernel_files::sid_of(e, o.fd.as_fd(), &o.md)
}

/// A device node decided by its label and its path, wherever it lies
/// (`object_sid`); terminals excepted (crate::controlling_tty).
fn decided_device(md: &std::fs::Metadata) -> bool {
    let kind = md.file_type();
    std::os::unix::fs::FileTypeExt::is_block_device(&kind)
        || std::os::unix::fs::FileTypeExt::is_char_device(&kind) && !controlling_tty::is_terminal(md)
}

/// Both modules' open checks of `o` (labeled `tsid`) for `flags`,
/// audited (as crate::enforcer decides an open event).
fn open_allowed(cx: &Context, tid: u32, subject: &crate::enforcer::Subject, o: &Object, tsid: Sid, flags: i32) -> bool {
    let e = &cx.enforcer;
    let Some(cp) = e.classes.of_mode(o.md.mode()) else { return true };
    let decision = e.avc.has_perm_noaudit(subject.sid, tsid, cp.class, cp.for_flags(flags as u32 as u64));
    let mut allowed = decision.passes();
    e.audit_checks(tid, subject.tgid, o.fd.as_fd(), &[Checked { ssid: subject.sid, tsid, class: cp.class, decision }]);
    // AppArmor decides the marked filesystems' files (crate::apparmor)
    // and device nodes (as their domain's device program does:
    // crate::device_access).
    let decided = cx.marked.holds(o.fd.as_fd(), &o.md) || decided_device(&o.md);
    if let (true, Some(profile), Some(aa)) = (decided, &subject.apparmor, &e.apparmor) {
        let enforcing = || e.avc.policy_state().2;
        let ev = event(tid, subject.tgid.unwrap_or(tid), o);
        allowed &= aa.open(profile, &ev, &mut || Some(flags as u32 as u64), &enforcing);
    }
    allowed
}

/// `truncate(2)` of object `o`, through a descriptor opened for writing
/// with `O_NONBLOCK`: a lease on the file (`F_SETLEASE`, which its owner
/// may take) then answers `EWOULDBLOCK` at once, where the kernel's call
/// waits for the holder to let it go, up to `lease-break-time` (45 s by
/// default), and would hold this worker (four such calls held every
/// worker). The kernel's other errors stand: what is not a regular file
/// is not opened (a device's open has effects of its own).
fn truncate_object(o: &Object, length: i64) -> Result<i64, i32> {
    if o.md.is_dir() {
        return Err(libc::EISDIR);
    }
    if !o.md.is_file() {
        return Err(libc::EINVAL);
    }
    let writable = supervised_open::reopen_for_writing(o.fd.as_fd())?;
    // SAFETY: an open descriptor, a length.
    rc(unsafe { libc::ftruncate(writable.as_raw_fd(), length) } as libc::c_long)
}

/// Makes the call on the resolved descriptors.
fn perform(r: &Resolved) -> Result<i64, i32> {
    let self_fd = |o: &Object| CString::new(format!("/proc/self/fd/{}", o.fd.as_raw_fd())).map_err(|_| libc::EINVAL);
    // SAFETY (every call below): descriptors are open for the call,
    // strings NUL-terminated and alive across it.
    unsafe {
        match r {
            Resolved::Setattr(o, Attr::Mode(mode)) => {
                rc(libc::syscall(libc::SYS_fchmodat2, o.fd.as_raw_fd(), c"".as_ptr(), *mode, libc::AT_EMPTY_PATH))
            }
            Resolved::Setattr(o, Attr::Owner { uid, gid }) => {
                rc(libc::syscall(libc::SYS_fchownat, o.fd.as_raw_fd(), c"".as_ptr(), *uid, *gid, libc::AT_EMPTY_PATH))
            }
            Resolved::Truncate(o, length) => truncate_object(o, *length),
            Resolved::Remove(n, dir) => {
                rc(libc::unlinkat(n.parent.fd.as_raw_fd(), n.last.as_ptr(), if *dir { libc::AT_REMOVEDIR } else { 0 })
                    as libc::c_long)
            }
            Resolved::Rename(from, to, flags) => rc(libc::syscall(
                libc::SYS_renameat2,
                from.parent.fd.as_raw_fd(),
                from.last.as_ptr(),
                to.parent.fd.as_raw_fd(),
                to.last.as_ptr(),
                *flags,
            )),
            Resolved::Link(o, to) => rc(libc::linkat(
                libc::AT_FDCWD,
                self_fd(o)?.as_ptr(),
                to.parent.fd.as_raw_fd(),
                to.last.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            ) as libc::c_long),
            Resolved::Xattr(o, name, Some((value, flags))) => {
                rc(libc::setxattr(self_fd(o)?.as_ptr(), name.as_ptr(), value.as_ptr().cast(), value.len(), *flags)
                    as libc::c_long)
            }
            Resolved::Xattr(o, name, None) => {
                rc(libc::removexattr(self_fd(o)?.as_ptr(), name.as_ptr()) as libc::c_long)
            }
            Resolved::Times(o, t) => {
                let times = t.as_ref().map_or(std::ptr::null(), |t| t.as_ptr());
                rc(libc::utimensat(o.fd.as_raw_fd(), c"".as_ptr(), times, libc::AT_EMPTY_PATH) as libc::c_long)
            }
        }
    }
}

/// What SELinux checks for `r` (see the module docs): each object with
/// the permissions asked of it.
fn checks_of<'a>(e: &Enforcer, r: &'a Resolved) -> Vec<(&'a Object, Perms)> {
    let d = &e.classes.dir_ops;
    let perm =
        |o: &Object, pick: fn(&ClassPerms) -> Perms| e.classes.of_mode(o.md.mode()).map_or(Perms::NONE, |cp| pick(&cp));
    let removed = |o: &Object| if o.md.is_dir() { d.rmdir } else { perm(o, |cp| cp.unlink) };
    let mut v = Vec::new();
    match r {
        Resolved::Setattr(o, _) => v.push((o, perm(o, |cp| cp.setattr))),
        // Another attribute than the label: `setattr` (a relabel is
        // checked by `relabel_allowed`).
        Resolved::Xattr(o, _, _) if r.relabel().is_none() => v.push((o, perm(o, |cp| cp.setattr))),
        Resolved::Xattr(..) => {}
        Resolved::Truncate(o, _) => v.push((o, perm(o, |cp| cp.write | cp.open))),
        // As `selinux_inode_setattr`: times set to a value need
        // `setattr`, times set to now `write`.
        Resolved::Times(o, t) if sets_explicit_times(t.as_ref()) => v.push((o, perm(o, |cp| cp.setattr))),
        Resolved::Times(o, _) => v.push((o, perm(o, |cp| cp.write))),
        Resolved::Remove(n, _) => {
            v.push((&n.parent, d.search | d.write | d.remove_name));
            if let Some(h) = &n.holds {
                v.push((h, removed(h)));
            }
        }
        Resolved::Link(o, to) => {
            v.push((&to.parent, d.search | d.write | d.add_name));
            v.push((o, perm(o, |cp| cp.link)));
        }
        Resolved::Rename(from, to, flags) => {
            let between = (from.parent.md.dev(), from.parent.md.ino()) != (to.parent.md.dev(), to.parent.md.ino());
            let exchange = flags & libc::RENAME_EXCHANGE != 0;
            let (from, to): (&Name, &Name) = (from, to);
            let sides: &[(&Name, &Name)] = if exchange { &[(from, to), (to, from)] } else { &[(from, to)] };
            for &(src, dst) in sides {
                v.push((&src.parent, d.search | d.write | d.remove_name));
                if let Some(h) = &src.holds {
                    let reparent = if between && h.md.is_dir() { d.reparent } else { Perms::NONE };
                    v.push((h, perm(h, |cp| cp.rename) | reparent));
                }
                v.push((&dst.parent, d.search | d.write | d.add_name));
            }
            if let (false, Some(h)) = (exchange, &to.holds) {
                v.push((&to.parent, d.remove_name));
                v.push((h, removed(h)));
            }
        }
    }
    v
}

/// A relabel of `o` to `value` (the context, NUL-terminated or not) by a
/// caller with `creds`, as `selinux_inode_setxattr` decides it: the
/// owner or CAP_FOWNER (`EPERM`), a context valid in the policy
/// (`EINVAL`), then `relabelfrom` on the old label and `relabelto` on the
/// new one (`EACCES`), audited.
fn relabel_allowed(
    cx: &Context,
    tid: u32,
    tgid: Option<u32>,
    subject: Sid,
    o: &Object,
    value: &[u8],
    creds: &Creds,
) -> Result<(), i32> {
    const CAP_FOWNER: u64 = 1 << 3;
    if creds.fsuid != o.md.uid() && creds.effective & CAP_FOWNER == 0 {
        return Err(libc::EPERM);
    }
    let e = &cx.enforcer;
    let Some(cp) = e.classes.of_mode(o.md.mode()) else { return Err(libc::EACCES) };
    let context = value.strip_suffix(b"\0").unwrap_or(value);
    let context = std::str::from_utf8(context).map_err(|_| libc::EINVAL)?;
    let (policy, _, _) = e.avc.policy_state();
    if !policy.parse_context(context).is_ok_and(|c| policy.context_is_valid(&c)) {
        return Err(libc::EINVAL);
    }
    let new = e.avc.intern(context).map_err(|_| libc::EINVAL)?;
    let old = e.objects.sid_of(&e.avc, o.fd.as_fd(), &o.md);
    let mut all = true;
    for (tsid, perms) in [(old, cp.relabelfrom), (new, cp.relabelto)] {
        let decision = e.avc.has_perm_noaudit(subject, tsid, cp.class, perms);
        all &= decision.passes();
        e.audit_checks(tid, tgid, o.fd.as_fd(), &[Checked { ssid: subject, tsid, class: cp.class, decision }]);
    }
    if all {
        Ok(())
    } else {
        Err(libc::EACCES)
    }
}

/// The checks of the module docs, audited; true if every one passes
/// (permissive included). A call that touches no marked filesystem is
/// not checked.
fn allowed(cx: &Context, tid: u32, tgid: Option<u32>, subject: Sid, r: &Resolved) -> bool {
    checked(cx, tid, tgid, subject, &checks_of(&cx.enforcer, r))
}

/// Each object with the permissions asked of it, audited; true if every
/// one passes (permissive included), or none is on a marked filesystem.
pub(crate) fn checked(cx: &Context, tid: u32, tgid: Option<u32>, subject: Sid, checks: &[(&Object, Perms)]) -> bool {
    let e = &cx.enforcer;
    let mut all = true;
    for &(o, perms) in checks {
        let Some(cp) = e.classes.of_mode(o.md.mode()) else { continue };
        if perms.is_empty() {
            continue;
        }
        let Some(tsid) = object_sid(cx, o) else { continue };
        let decision = e.avc.has_perm_noaudit(subject, tsid, cp.class, perms);
        all &= decision.passes();
        e.audit_checks(tid, tgid, o.fd.as_fd(), &[Checked { ssid: subject, tsid, class: cp.class, decision }]);
    }
    all
}

/// `o` as crate::apparmor's records describe it, acted on by thread
/// `tid` of `tgid`.
fn event(tid: u32, tgid: u32, o: &Object) -> FileEvent<'_> {
    FileEvent { tid, tgid, fd: o.fd.as_fd(), md: &o.md }
}

/// The name `n` is to give (its directory's name and the last name).
fn new_name(n: &Name) -> Option<Vec<u8>> {
    let mut name = AppArmor::name_of(n.parent.fd.as_fd(), &n.parent.md)?;
    name.extend_from_slice(n.last.as_bytes());
    Some(name)
}

/// What the kernel's AppArmor path hooks ask of `r`, for a process under
/// `profile` (crate::apparmor's "Supervised calls"); true if every check
/// passes. Calls off the marked filesystems are not checked (as opens).
fn apparmor_allows(cx: &Context, tid: u32, tgid: u32, profile: &str, r: &Resolved) -> bool {
    let e = &cx.enforcer;
    let Some(aa) = &e.apparmor else { return false };
    let enforcing = || e.avc.policy_state().2;
    let marked = |o: &Object| cx.marked.holds(o.fd.as_fd(), &o.md);
    let path = |o: &Object, name: Option<Vec<u8>>, request: u32, op: &str| match name {
        Some(name) => aa.path_call(profile, &event(tid, tgid, o), &name, request, op, &enforcing),
        None => false,
    };
    let own = |o: &Object| AppArmor::name_of(o.fd.as_fd(), &o.md);
    match r {
        Resolved::Setattr(o, attr) if marked(o) => {
            let (request, op) = match attr {
                Attr::Mode(_) => (AA_MAY_CHMOD, "chmod"),
                Attr::Owner { .. } => (AA_MAY_CHOWN, "chown"),
            };
            path(o, own(o), request, op)
        }
        Resolved::Truncate(o, _) if marked(o) => path(o, own(o), MAY_WRITE | AA_MAY_SETATTR, "truncate"),
        Resolved::Remove(n, dir) if marked(&n.parent) => match &n.holds {
            Some(h) => path(h, own(h), AA_MAY_DELETE, if *dir { "rmdir" } else { "unlink" }),
            None => true,
        },
        Resolved::Rename(from, to, flags) if marked(&from.parent) || marked(&to.parent) => {
            let exchange = flags & libc::RENAME_EXCHANGE != 0;
            let (from, to): (&Name, &Name) = (from, to);
            let sides: &[(&Name, &Name)] = if exchange { &[(from, to), (to, from)] } else { &[(from, to)] };
            sides.iter().all(|&(src, dst)| match &src.holds {
                Some(h) => {
                    let src_req = MAY_READ | AA_MAY_GETATTR | AA_MAY_SETATTR | AA_MAY_DELETE | MAY_WRITE;
                    path(h, own(h), src_req, "rename_src")
                        && path(h, new_name(dst), MAY_WRITE | AA_MAY_SETATTR | AA_MAY_CREATE, "rename_dest")
                }
                None => true,
            })
        }
        Resolved::Link(o, to) if marked(o) => match (new_name(to), own(o)) {
            (Some(link), Some(target)) => aa.link_call(profile, &event(tid, tgid, o), &link, &target, &enforcing),
            _ => false,
        },
        _ => true,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn a_descriptor_opened_as_a_path_is_told_apart() {
        let info = "pos:\t0\nflags:\t012100000\nmnt_id:\t25\n";
        assert_eq!(flags_in_fdinfo(info), Some(0o12100000));
        assert_eq!(flags_in_fdinfo("pos:\t0\n"), None);
        assert_eq!(flags_in_fdinfo("flags:\t9\n"), None, "not octal");
        let file = File::open("/").unwrap();
        // SAFETY: gettid cannot fail.
        let tid = unsafe { libc::gettid() } as u32;
        assert!(!opened_as_path(tid, file.as_raw_fd()));
        let path = open_path(libc::AT_FDCWD, OsStr::new("/"), 0).unwrap();
        assert!(opened_as_path(tid, path.as_raw_fd()));
    }
}
