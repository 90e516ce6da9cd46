//! System V shared memory of the processes `rampart run` started, decided
//! per segment as SELinux decides it: a segment is labeled with the domain
//! of the process that made it, and every use is checked against that
//! label (`shm { create }` at its making, `associate` at a `shmget` that
//! finds it, `read` and `write` at `shmat`, `getattr`, `setattr`,
//! `destroy`, `lock` at `shmctl`).
//!
//! Why: a segment is protected by its mode bits only, so a confined
//! process under the owner's uid (or root) attaches another domain's
//! memory: a confined web server reading a database's shared buffers.
//! crate::sysv_ipc refuses the whole class to a domain granted none of
//! it; a domain granted some (its own segments: `self:shm`) needs the
//! label of each segment it names.
//!
//! How: the launcher's filter hands `shmget`, `shmat` and `shmctl` over
//! (crate::supervised; on i386 they are refused). rampartd makes every
//! `shmget` itself, in a thread that takes the caller's effective user,
//! group, groups and capabilities (the segment's owner and creator, and
//! the mode bits' check, are the caller's), so it knows which segment a
//! launched process made: it records the segment's id with the caller's
//! domain. Any other segment (made outside rampartd's tree, or before
//! this daemon started) is the default domain's, as the processes
//! outside the tree are. `shmat` and `shmctl` name a segment by its id, a
//! register no other thread can change: checked, then made by the
//! kernel. An id is not reused before the kernel's sequence number for
//! its slot wraps (`ipc_addid`).
//!
//! What differs: the creator's process id the segment shows
//! (`shm_cpid`, /proc/sysvipc/shm) is rampartd's, so
//! `kernel.shm_rmid_forced` removes it when rampartd exits, not when its
//! maker does; a caller in another IPC namespace than rampartd's is
//! refused (`EACCES`); `SHM_HUGETLB` is checked against rampartd's
//! memory lock limit; `IPC_INFO` and `SHM_INFO` are not checked
//! (SELinux's `system { ipc_info }`).

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::sync::{Mutex, PoisonError};

use rampart_avc::Sid;

use crate::enforcer::{Enforcer, Subject};
use crate::thread_creds::{capget, capset, Creds, PeerIds};

const IPC_CREAT: i32 = 0o1000;
const IPC_EXCL: i32 = 0o2000;
const IPC_PRIVATE: i32 = 0;
/// `shmat`'s read-only flag.
const SHM_RDONLY: u32 = 0o10000;
/// `shmctl` commands (uapi ipc.h, shm.h); `IPC_64` is the version bit.
const IPC_RMID: i32 = 0;
const IPC_SET: i32 = 1;
const IPC_STAT: i32 = 2;
const SHM_LOCK: i32 = 11;
const SHM_UNLOCK: i32 = 12;
const SHM_STAT: i32 = 13;
const SHM_STAT_ANY: i32 = 15;
const IPC_64: i32 = 0x100;
/// Records kept at least before pruning.
const PRUNE_FROM: usize = 1024;
/// Times a `shmget` asking to create retries when the key appears and
/// goes between its lookup and its creation.
const TRIES: usize = 3;

/// The domains that made the segments of launched processes, by id.
#[derive(Default)]
pub(crate) struct Segments {
    by_id: Mutex<(HashMap<i32, Sid>, usize)>,
}

impl Segments {
    fn record(&self, id: i32, domain: Sid) {
        let mut guard = self.by_id.lock().unwrap_or_else(PoisonError::into_inner);
        let (by_id, prune_at) = &mut *guard;
        if by_id.len() >= (*prune_at).max(PRUNE_FROM) {
            let live = listed();
            by_id.retain(|id, _| live.iter().any(|s| s.id == *id));
            *prune_at = by_id.len() * 2;
        }
        by_id.insert(id, domain);
    }

    /// The label of segment `id`: its maker's domain, else the default
    /// domain's.
    fn label(&self, e: &Enforcer, id: i32) -> Sid {
        self.by_id.lock().unwrap_or_else(PoisonError::into_inner).0.get(&id).copied().unwrap_or(e.default_sid)
    }
}

/// A segment as /proc/sysvipc/shm lists it.
struct Listed {
    key: i32,
    id: i32,
}

/// The segments of rampartd's IPC namespace (none if the list cannot be
/// read).
fn listed() -> Vec<Listed> {
    let text = std::fs::read_to_string("/proc/sysvipc/shm").unwrap_or_default();
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let mut f = line.split_ascii_whitespace();
            Some(Listed { key: f.next()?.parse().ok()?, id: f.next()?.parse().ok()? })
        })
        .collect()
}

/// Checks `perms` of segment `id` (its key, for the audit line, when
/// listed) for `subject`.
fn check(e: &Enforcer, segments: &Segments, tid: u32, subject: &Subject, id: i32, perms: rampart_avc::Perms) -> bool {
    let key = listed().into_iter().find(|s| s.id == id).map(|s| s.key);
    check_key(e, tid, subject, (segments.label(e, id), key), perms)
}

fn check_key(
    e: &Enforcer,
    tid: u32,
    subject: &Subject,
    (tsid, key): (Sid, Option<i32>),
    perms: rampart_avc::Perms,
) -> bool {
    let extra = key.map(|k| vec![("key".to_owned(), k.to_string())]).unwrap_or_default();
    e.check_label_with(tid, subject.tgid, (subject.sid, tsid, e.classes.shm.class, perms), extra)
}

/// `shmat` of segment `id` with `flags` by thread `tid`: `read`, and
/// `write` unless `SHM_RDONLY` (`selinux_shm_shmat`). `Ok`: the kernel
/// makes the call.
pub(crate) fn shmat(e: &Enforcer, segments: &Segments, tid: u32, id: i32, flags: u32) -> Result<(), i32> {
    let subject = crate::signals::caller(e, tid, "a shmat")?;
    let shm = e.classes.shm;
    let perms = if flags & SHM_RDONLY != 0 { shm.read } else { shm.read | shm.write };
    if check(e, segments, tid, &subject, id, perms) {
        Ok(())
    } else {
        Err(libc::EACCES)
    }
}

/// `shmctl` of segment `id` (an index into the kernel's table for
/// `SHM_STAT` and `SHM_STAT_ANY`) with command `cmd` by thread `tid`, as
/// `selinux_shm_shmctl` checks it. `Ok`: the kernel makes the call (also
/// where it refuses the command or the id itself).
pub(crate) fn shmctl(e: &Enforcer, segments: &Segments, tid: u32, id: i32, cmd: i32) -> Result<(), i32> {
    let shm = e.classes.shm;
    let cmd = cmd & !IPC_64;
    let perms = match cmd {
        IPC_STAT | SHM_STAT | SHM_STAT_ANY => shm.getattr | shm.associate,
        IPC_SET => shm.setattr,
        SHM_LOCK | SHM_UNLOCK => shm.lock,
        IPC_RMID => shm.destroy,
        _ => return Ok(()),
    };
    let id = if cmd == SHM_STAT || cmd == SHM_STAT_ANY {
        match segment_at(id) {
            Some(id) => id,
            // No segment there: the kernel answers EINVAL.
            None => return Ok(()),
        }
    } else {
        id
    };
    let subject = crate::signals::caller(e, tid, "a shmctl")?;
    if check(e, segments, tid, &subject, id, perms) {
        Ok(())
    } else {
        Err(libc::EACCES)
    }
}

/// The id of the segment at index `index` of the kernel's table (its low
/// bits: `ipcid_to_idx`; 24 of them with `ipcmni_extend`).
fn segment_at(index: i32) -> Option<i32> {
    let extended =
        std::fs::read_to_string("/proc/cmdline").is_ok_and(|c| c.split_whitespace().any(|w| w == "ipcmni_extend"));
    let mask = if extended { (1 << 24) - 1 } else { (1 << 15) - 1 };
    listed().into_iter().find(|s| s.id & mask == index).map(|s| s.id)
}

/// `shmget(key, size, flags)` of thread `tid`, made by rampartd as the
/// caller, in the order `ipcget` takes its steps: a key that names a
/// segment is `EEXIST` with `IPC_CREAT | IPC_EXCL`, else its size and mode
/// bits are the kernel's to check, then `associate` on its label; a new
/// segment needs `create` (on the caller's own label), and is recorded.
/// The call's result.
pub(crate) fn shmget(
    e: &Enforcer,
    segments: &Segments,
    tid: u32,
    (key, size, flags): (i32, u64, i32),
) -> Result<i64, i32> {
    let subject = crate::signals::caller(e, tid, "a shmget")?;
    let caller = Caller::of(tid)?;
    let shm = e.classes.shm;
    let create = |flags: i32| -> Result<i64, i32> {
        if !check_key(e, tid, &subject, (subject.sid, Some(key)), shm.create) {
            return Err(libc::EACCES);
        }
        let id = caller.call(key, size, flags)?;
        segments.record(id, subject.sid);
        Ok(i64::from(id))
    };
    if key == IPC_PRIVATE {
        return create(flags);
    }
    let exclusive = flags & IPC_CREAT != 0 && flags & IPC_EXCL != 0;
    for _ in 0..TRIES {
        match caller.call(key, size, flags & !(IPC_CREAT | IPC_EXCL)) {
            Err(libc::ENOENT) if flags & IPC_CREAT != 0 => match create(flags | IPC_EXCL) {
                // Made by another process meanwhile: found next time.
                Err(libc::EEXIST) if !exclusive => continue,
                made => return made,
            },
            Err(libc::ENOENT) => return Err(libc::ENOENT),
            // The key names a segment.
            _ if exclusive => return Err(libc::EEXIST),
            Err(errno) => return Err(errno),
            Ok(id) => {
                return if check_key(e, tid, &subject, (segments.label(e, id), Some(key)), shm.associate) {
                    Ok(i64::from(id))
                } else {
                    Err(libc::EACCES)
                };
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

impl Caller {
    /// Thread `tid`'s ids, if it is in rampartd's IPC namespace.
    fn of(tid: u32) -> Result<Caller, i32> {
        let ns = |path: String| std::fs::metadata(path).map(|m| m.ino());
        if ns(format!("/proc/{tid}/ns/ipc")).map_err(|_| libc::ESRCH)?
            != ns("/proc/self/ns/ipc".into()).map_err(|_| libc::EACCES)?
        {
            eprintln!("rampartd: refused a shmget of thread {tid}: it is in another IPC namespace than rampartd");
            return Err(libc::EACCES);
        }
        let status = std::fs::read_to_string(format!("/proc/{tid}/status")).map_err(|_| libc::ESRCH)?;
        let ids = PeerIds::from_status(&status).ok_or(libc::ESRCH)?;
        let effective = Creds::from_status(&status).ok_or(libc::ESRCH)?.effective;
        Ok(Caller { ids, effective })
    }

    /// `shmget(key, size, flags)` in a thread that takes the caller's
    /// effective ids, groups and capabilities first, and ends with it.
    fn call(&self, key: i32, size: u64, flags: i32) -> Result<i32, i32> {
        let made = self.ids.run_as(|| {
            let mut caps = capget()?;
            caps[0].effective = self.effective as u32 & caps[0].permitted;
            caps[1].effective = (self.effective >> 32) as u32 & caps[1].permitted;
            capset(&caps)?;
            // SAFETY: integer arguments only.
            let id = unsafe { libc::shmget(key, size as libc::size_t, flags) };
            Ok::<_, std::io::Error>(if id < 0 { Err(std::io::Error::last_os_error()) } else { Ok(id) })
        });
        match made {
            Ok(Ok(Ok(id))) => Ok(id),
            Ok(Ok(Err(err))) => Err(err.raw_os_error().unwrap_or(libc::EINVAL)),
            Ok(Err(err)) | Err(err) => {
                eprintln!("rampartd: a shmget cannot take its caller's ids: {err}");
                Err(libc::EPERM)
            }
        }
    }
}
