//! System V shared memory segments, semaphore sets and message queues of
//! the processes `rampart run` started, decided per object as SELinux
//! decides them: an object is labeled with the domain of the process that
//! made it, and every use is checked against that label (`create` at its
//! making, `associate` at a `*get` that finds it, `read` and `write` at
//! `shmat` and `semop`, `write` and `enqueue` at `msgsnd`, `read` at
//! `msgrcv`, with `msg { send }` and `msg { receive }` on the message's
//! label, `getattr`, `setattr`, `destroy`, `lock` at the `*ctl` calls).
//!
//! Why: an IPC object is protected by its mode bits only, so a confined
//! process under the owner's uid (or root) attaches another domain's
//! memory (a confined web server reading a database's shared buffers) or
//! takes its semaphores or reads its messages. crate::sysv_ipc refuses a whole class to a
//! domain granted none of it; a domain granted some (its own objects:
//! `self:shm`) needs the label of each object it names.
//!
//! How: the launcher's filter hands `shmget`, `shmat`, `shmctl`,
//! `semget`, `semop`, `semtimedop`, `semctl`, `msgget`, `msgsnd`,
//! `msgrcv` and `msgctl` over (crate::supervised; on i386 they are
//! refused). rampartd makes every `*get` itself, in a thread that takes the caller's effective user, group,
//! groups and capabilities (the object's owner and creator, and the mode
//! bits' check, are the caller's), so it knows which object a launched
//! process made: it records the object's id with the caller's domain.
//! Any other object (made outside rampartd's tree, or before this daemon
//! started) is the default domain's, as the processes outside the tree
//! are. The other calls name an object by its id, a register no other
//! thread can change: checked, then made by the kernel. An id is not
//! reused before the kernel's sequence number for its slot wraps
//! (`ipc_addid`).
//!
//! What differs: the creator's process id the object shows (`shm_cpid`,
//! /proc/sysvipc) is rampartd's, so `kernel.shm_rmid_forced` removes a
//! segment when rampartd exits, not when its maker does; a caller in
//! another IPC namespace than rampartd's is refused every call
//! (`EACCES`: the records and /proc/sysvipc are rampartd's namespace's); `SHM_HUGETLB` is checked against rampartd's memory lock
//! limit; `IPC_INFO` and the class's `*_INFO` are not checked (SELinux's
//! `system { ipc_info }`); a `semop` is checked as altering (`read
//! write`) even when it only waits for zero (`read`): its operations are
//! in the caller's memory, which another thread could change after the
//! daemon read them; a message is labeled by the kernel from its sender
//! (`security_transition_sid` of class `msg`: the queue's type unless a
//! rule says otherwise, the sender's user and level), and which message
//! a `msgrcv` the kernel makes will take is not known here, so a receive
//! is checked against a message the queue's maker would have sent (the
//! same label wherever senders share their user and level).
//!
//! What is left: a record outlives its object until the next pruning
//! (when the records double), so an object made outside the tree that
//! gets a recorded id meanwhile takes the recorded label. The kernel
//! gives an id again only after the sequence number of its slot wraps
//! (about four million objects made, or `kernel.shm_next_id` and its
//! kin, which need `CAP_CHECKPOINT_RESTORE`); checking each object
//! against what was recorded of it would read /proc/sysvipc at every
//! call.

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::sync::{Mutex, OnceLock, PoisonError};

use rampart_avc::{ClassIdx, Perms, Sid};

use crate::enforcer::{Enforcer, Subject};
pub(crate) use crate::supervised::IpcKind as Kind;
use crate::thread_creds::{capget, capset, Creds, PeerIds};

const IPC_CREAT: i32 = 0o1000;
const IPC_EXCL: i32 = 0o2000;
const IPC_PRIVATE: i32 = 0;
/// `shmat`'s read-only flag.
const SHM_RDONLY: u32 = 0o10000;
/// `*ctl` commands (uapi ipc.h, shm.h, sem.h); `IPC_64` is the version
/// bit.
const IPC_RMID: i32 = 0;
const IPC_SET: i32 = 1;
const IPC_STAT: i32 = 2;
const SHM_LOCK: i32 = 11;
const SHM_UNLOCK: i32 = 12;
const SHM_STAT: i32 = 13;
const SHM_STAT_ANY: i32 = 15;
const GETPID: i32 = 11;
const GETVAL: i32 = 12;
const GETALL: i32 = 13;
const GETNCNT: i32 = 14;
const GETZCNT: i32 = 15;
const SETVAL: i32 = 16;
const SETALL: i32 = 17;
const SEM_STAT: i32 = 18;
const SEM_STAT_ANY: i32 = 20;
const MSG_STAT: i32 = 11;
const MSG_STAT_ANY: i32 = 13;
const IPC_64: i32 = 0x100;
/// Records kept at least before pruning.
const PRUNE_FROM: usize = 1024;
/// Times a `*get` asking to create retries when the key appears and goes
/// between its lookup and its creation.
const TRIES: usize = 3;

/// Its objects as /proc/sysvipc lists them.
fn list_of(kind: Kind) -> &'static str {
    match kind {
        Kind::Shm => "/proc/sysvipc/shm",
        Kind::Sem => "/proc/sysvipc/sem",
        Kind::Msg => "/proc/sysvipc/msg",
    }
}

fn name_of(kind: Kind) -> &'static str {
    match kind {
        Kind::Shm => "shm",
        Kind::Sem => "sem",
        Kind::Msg => "msg",
    }
}

/// The domains that made the objects of launched processes, by class and
/// id.
#[derive(Default)]
pub(crate) struct Objects {
    /// The records, and how many there may be before the next pruning.
    by_id: Mutex<(Records, usize)>,
}

/// Each object's maker, by class and id.
type Records = HashMap<(Kind, i32), Sid>;

impl Objects {
    fn record(&self, kind: Kind, id: i32, domain: Sid) {
        let mut guard = self.by_id.lock().unwrap_or_else(PoisonError::into_inner);
        let (by_id, prune_at) = &mut *guard;
        if by_id.len() >= (*prune_at).max(PRUNE_FROM) {
            let live: HashSet<(Kind, i32)> = [Kind::Shm, Kind::Sem, Kind::Msg]
                .into_iter()
                .flat_map(|k| listed(k).into_iter().map(move |o| (k, o.id)))
                .collect();
            by_id.retain(|key, _| live.contains(key));
            *prune_at = by_id.len() * 2;
        }
        by_id.insert((kind, id), domain);
    }

    /// The label of object `id`: its maker's domain, else the default
    /// domain's.
    fn label(&self, e: &Enforcer, kind: Kind, id: i32) -> Sid {
        self.by_id.lock().unwrap_or_else(PoisonError::into_inner).0.get(&(kind, id)).copied().unwrap_or(e.default_sid)
    }
}

/// An object as /proc/sysvipc lists it.
struct Listed {
    key: i32,
    id: i32,
}

/// The objects of `kind` in rampartd's IPC namespace (none if the list
/// cannot be read).
fn listed(kind: Kind) -> Vec<Listed> {
    let text = std::fs::read_to_string(list_of(kind)).unwrap_or_default();
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let mut f = line.split_ascii_whitespace();
            Some(Listed { key: f.next()?.parse().ok()?, id: f.next()?.parse().ok()? })
        })
        .collect()
}

/// The class and the permissions the daemon checks of `kind`.
fn class_of(e: &Enforcer, kind: Kind) -> (ClassIdx, &crate::access::IpcPerms) {
    let perms = match kind {
        Kind::Shm => &e.classes.shm,
        Kind::Sem => &e.classes.sem,
        Kind::Msg => &e.classes.msgq,
    };
    (perms.class, perms)
}

/// Checks `perms` of object `id` of `kind` (its key, for the audit line,
/// when listed) for `subject`.
fn check(
    e: &Enforcer,
    objects: &Objects,
    (tid, subject): (u32, &Subject),
    (kind, id): (Kind, i32),
    perms: Perms,
) -> bool {
    let key = || listed(kind).into_iter().find(|s| s.id == id).map(|s| s.key);
    check_key(e, (tid, subject), kind, (objects.label(e, kind, id), key), perms)
}

/// Checks `perms` of an object labeled `tsid` for `subject`; its key,
/// for the audit line, read only where one is written.
fn check_key(
    e: &Enforcer,
    (tid, subject): (u32, &Subject),
    kind: Kind,
    (tsid, key): (Sid, impl FnOnce() -> Option<i32>),
    perms: Perms,
) -> bool {
    let extra = || key().map(|k| vec![("key".to_owned(), k.to_string())]).unwrap_or_default();
    e.check_label_lazy(tid, subject.tgid, (subject.sid, tsid, class_of(e, kind).0, perms), extra)
}

fn answer(allowed: bool) -> Result<(), i32> {
    if allowed {
        Ok(())
    } else {
        Err(libc::EACCES)
    }
}

/// `shmat` of segment `id` with `flags` by thread `tid`: `read`, and
/// `write` unless `SHM_RDONLY` (`selinux_shm_shmat`). `Ok`: the kernel
/// makes the call.
pub(crate) fn shmat(e: &Enforcer, objects: &Objects, tid: u32, id: i32, flags: u32) -> Result<(), i32> {
    in_our_namespace(tid, "a shmat")?;
    let subject = crate::signals::caller(e, tid, "a shmat")?;
    let shm = &e.classes.shm;
    let perms = if flags & SHM_RDONLY != 0 { shm.read } else { shm.read | shm.write };
    answer(check(e, objects, (tid, &subject), (Kind::Shm, id), perms))
}

/// `semop` or `semtimedop` of set `id` by thread `tid`: `read write`
/// (see the module docs). `Ok`: the kernel makes the call.
pub(crate) fn semop(e: &Enforcer, objects: &Objects, tid: u32, id: i32) -> Result<(), i32> {
    in_our_namespace(tid, "a semop")?;
    let subject = crate::signals::caller(e, tid, "a semop")?;
    let sem = &e.classes.sem;
    answer(check(e, objects, (tid, &subject), (Kind::Sem, id), sem.read | sem.write))
}

/// `msgsnd` (`receive` false) or `msgrcv` of queue `id` by thread `tid`:
/// a send needs `msgq { write }`, `msg { send }` on the message's label
/// and `msgq { enqueue }` from it (`selinux_msg_queue_msgsnd`), a receive
/// `msgq { read }` and `msg { receive }` (`selinux_msg_queue_msgrcv`).
/// The message's label is the kernel's for a message its sender puts on
/// the queue (`security_transition_sid` of class `msg`): the caller's
/// for a send, the queue's maker's for a receive (the message the
/// kernel will hand over is not known here; see the module docs).
/// `Ok`: the kernel makes the call.
pub(crate) fn message(e: &Enforcer, objects: &Objects, tid: u32, id: i32, receive: bool) -> Result<(), i32> {
    let what = if receive { "a msgrcv" } else { "a msgsnd" };
    in_our_namespace(tid, what)?;
    let subject = crate::signals::caller(e, tid, what)?;
    let (q, m) = (&e.classes.msgq, &e.classes.msg);
    let queue = objects.label(e, Kind::Msg, id);
    let sender = if receive { queue } else { subject.sid };
    let Some(message) = e.message_sid(sender, queue) else {
        eprintln!("rampartd: refused a message call of thread {tid}: the policy gives its message no label");
        return Err(libc::EACCES);
    };
    let key = || listed(Kind::Msg).into_iter().find(|s| s.id == id).map(|s| s.key);
    let extra = || key().map(|k| vec![("key".to_owned(), k.to_string())]).unwrap_or_default();
    let checks = if receive {
        [(subject.sid, queue, q.class, q.read), (subject.sid, message, m.class, m.receive)].to_vec()
    } else {
        [
            (subject.sid, queue, q.class, q.write),
            (subject.sid, message, m.class, m.send),
            (message, queue, q.class, q.enqueue),
        ]
        .to_vec()
    };
    answer(checks.into_iter().all(|c| e.check_label_lazy(tid, subject.tgid, c, extra)))
}

/// A `*ctl` of object `id` of `kind` (an index into the kernel's table
/// for the `*_STAT` commands) with command `cmd` by thread `tid`, as
/// `selinux_shm_shmctl` and `selinux_sem_semctl` check it. `Ok`: the
/// kernel makes the call (also where it refuses the command or the id
/// itself).
pub(crate) fn control(e: &Enforcer, objects: &Objects, tid: u32, (kind, id): (Kind, i32), cmd: i32) -> Result<(), i32> {
    let p = class_of(e, kind).1;
    let cmd = cmd & !IPC_64;
    let by_index = matches!(
        (kind, cmd),
        (Kind::Shm, SHM_STAT | SHM_STAT_ANY)
            | (Kind::Sem, SEM_STAT | SEM_STAT_ANY)
            | (Kind::Msg, MSG_STAT | MSG_STAT_ANY)
    );
    let perms = match (kind, cmd) {
        (_, IPC_STAT) | (_, IPC_SET) | (_, IPC_RMID) | (Kind::Shm, SHM_LOCK | SHM_UNLOCK) => match cmd {
            IPC_STAT => p.getattr | p.associate,
            IPC_SET => p.setattr,
            IPC_RMID => p.destroy,
            _ => p.lock,
        },
        _ if by_index => p.getattr | p.associate,
        (Kind::Sem, GETPID | GETNCNT | GETZCNT) => p.getattr,
        (Kind::Sem, GETVAL | GETALL) => p.read,
        (Kind::Sem, SETVAL | SETALL) => p.write,
        _ => return Ok(()),
    };
    in_our_namespace(tid, "an IPC control call")?;
    let id = if by_index {
        // Nothing there: EINVAL, as the kernel answers (answered here:
        // an object made at that index meanwhile would go unchecked).
        object_at(kind, id).ok_or(libc::EINVAL)?
    } else {
        id
    };
    let subject = crate::signals::caller(e, tid, "an IPC control call")?;
    answer(check(e, objects, (tid, &subject), (kind, id), perms))
}

/// The id of the object of `kind` at the index of the kernel's table
/// that `index` names: its low bits, as `ipcid_to_idx` reads them (24 of
/// them with `ipcmni_extend`, else 15), whatever the others hold.
fn object_at(kind: Kind, index: i32) -> Option<i32> {
    let mask = index_mask(&std::fs::read_to_string("/proc/cmdline").unwrap_or_default());
    listed(kind).into_iter().find(|s| s.id & mask == index & mask).map(|s| s.id)
}

/// The bits of an id that are its index, by the kernel's command line.
fn index_mask(cmdline: &str) -> i32 {
    if cmdline.split_whitespace().any(|w| w == "ipcmni_extend") {
        (1 << 24) - 1
    } else {
        (1 << 15) - 1
    }
}

/// `shmget(key, size, flags)` or `semget(key, nsems, flags)` (`kind`)
/// of thread `tid`, made by rampartd as the caller, in the order
/// `ipcget` takes its steps: a key that names an object is `EEXIST` with
/// `IPC_CREAT | IPC_EXCL`, else its size and mode bits are the kernel's
/// to check, then `associate` on its label; a new object needs `create`
/// (on the caller's own label), and is recorded. The call's result.
pub(crate) fn get(
    e: &Enforcer,
    objects: &Objects,
    tid: u32,
    kind: Kind,
    (key, arg, flags): (i32, u64, i32),
) -> Result<i64, i32> {
    let subject = crate::signals::caller(e, tid, &format!("a {}get", name_of(kind)))?;
    let caller = Caller::of(tid, kind)?;
    let p = class_of(e, kind).1;
    let create = |flags: i32| -> Result<i64, i32> {
        if !check_key(e, (tid, &subject), kind, (subject.sid, || Some(key)), p.create) {
            return Err(libc::EACCES);
        }
        let id = caller.call(kind, key, arg, flags)?;
        objects.record(kind, id, subject.sid);
        Ok(i64::from(id))
    };
    if key == IPC_PRIVATE {
        return create(flags);
    }
    let exclusive = flags & IPC_CREAT != 0 && flags & IPC_EXCL != 0;
    for _ in 0..TRIES {
        match caller.call(kind, key, arg, flags & !(IPC_CREAT | IPC_EXCL)) {
            Err(libc::ENOENT) if flags & IPC_CREAT != 0 => match create(flags | IPC_EXCL) {
                // Made by another process meanwhile: found next time.
                Err(libc::EEXIST) if !exclusive => continue,
                made => return made,
            },
            Err(libc::ENOENT) => return Err(libc::ENOENT),
            // The key names an object.
            _ if exclusive => return Err(libc::EEXIST),
            Err(errno) => return Err(errno),
            Ok(id) => {
                let label = objects.label(e, kind, id);
                return check_key(e, (tid, &subject), kind, (label, || Some(key)), p.associate)
                    .then_some(i64::from(id))
                    .ok_or(libc::EACCES);
            }
        }
    }
    Err(libc::EAGAIN)
}

/// What a call made as the caller takes of it.
struct Caller {
    ids: PeerIds,
    effective: u64,
}

/// Whether thread `tid` is in rampartd's IPC namespace: the records and
/// /proc/sysvipc are that namespace's, where the same ids name other
/// objects in another (a launch from a service with its own, systemd's
/// `PrivateIPC=`). Elsewhere every call is refused (`EACCES`).
fn in_our_namespace(tid: u32, what: &str) -> Result<(), i32> {
    static OURS: OnceLock<Option<u64>> = OnceLock::new();
    let ns = |path: &str| std::fs::metadata(path).map(|m| m.ino());
    let ours = (*OURS.get_or_init(|| ns("/proc/self/ns/ipc").ok())).ok_or(libc::EACCES)?;
    let theirs = ns(&format!("/proc/{tid}/ns/ipc")).map_err(|_| libc::ESRCH)?;
    if theirs != ours {
        eprintln!("rampartd: refused {what} of thread {tid}: it is in another IPC namespace than rampartd");
        return Err(libc::EACCES);
    }
    Ok(())
}

impl Caller {
    /// Thread `tid`'s ids, if it is in rampartd's IPC namespace.
    fn of(tid: u32, kind: Kind) -> Result<Caller, i32> {
        in_our_namespace(tid, &format!("a {}get", name_of(kind)))?;
        let status = std::fs::read_to_string(format!("/proc/{tid}/status")).map_err(|_| libc::ESRCH)?;
        let ids = PeerIds::from_status(&status).ok_or(libc::ESRCH)?;
        let effective = Creds::from_status(&status).ok_or(libc::ESRCH)?.effective;
        Ok(Caller { ids, effective })
    }

    /// The `*get` of `kind` in a thread that takes the caller's
    /// effective ids, groups and capabilities first, and gives them back
    /// after (crate::thread_creds: it lasts, so that the segments it
    /// makes do too).
    fn call(&self, kind: Kind, key: i32, arg: u64, flags: i32) -> Result<i32, i32> {
        let effective = self.effective;
        let made = self.ids.run_as(move || {
            let mut caps = capget()?;
            caps[0].effective = effective as u32 & caps[0].permitted;
            caps[1].effective = (effective >> 32) as u32 & caps[1].permitted;
            capset(&caps)?;
            // SAFETY: integer arguments only.
            let id = unsafe {
                match kind {
                    Kind::Shm => libc::shmget(key, arg as libc::size_t, flags),
                    Kind::Sem => libc::semget(key, arg as i32, flags),
                    Kind::Msg => libc::msgget(key, flags),
                }
            };
            Ok::<_, std::io::Error>(if id < 0 { Err(std::io::Error::last_os_error()) } else { Ok(id) })
        });
        match made {
            Ok(Ok(Ok(id))) => Ok(id),
            Ok(Ok(Err(err))) => Err(err.raw_os_error().unwrap_or(libc::EINVAL)),
            Ok(Err(err)) | Err(err) => {
                eprintln!("rampartd: a {}get cannot take its caller's ids: {err}", name_of(kind));
                Err(libc::EPERM)
            }
        }
    }
}
