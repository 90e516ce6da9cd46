//! The AppArmor side of a decision, for a process `rampart run
//! --apparmor` put under a profile (its label: crate::subject_label).
//! The engine is rampart_apparmor's (the kernel's file.c and domain.c);
//! this module gives it what the kernel's hooks would: the name, the
//! request, the owner, and writes its records.
//!
//! * **The name** is the opened file's path as the kernel builds it for
//!   the daemon (`readlink /proc/self/fd/N`: `d_path`). AppArmor names a
//!   file from its mount namespace's root (not a chroot's), as the
//!   daemon's readlink does for processes of its namespace (a process of
//!   another mount namespace: see docs/security.md). A deleted file
//!   (`" (deleted)"` appended, the name gone) is mediated by its last
//!   name: the kernel checked the open under that name before the unlink
//!   (and revalidates reads by the open's decision,
//!   `PATH_DELEGATE_DELETED`). A name that is not absolute (a
//!   disconnected path) is denied with the kernel's "Failed name lookup
//!   \- disconnected path" (no `attach_disconnected` support).
//!   Directories end in `/` (`PATH_IS_DIR`).
//! * **The request** of an open: `aa_map_file_to_perms` of the open's
//!   flags (`r`, `w`, `a` instead of `w` with `O_APPEND`, `w` for
//!   `O_TRUNC`, create for `O_CREAT`); none for the open an exec makes
//!   (`FMODE_EXEC`: the exec event decides it, as the kernel's bprm
//!   hooks do). As for SELinux (crate::access) the
//!   widest request is checked first and the flags are read only when
//!   that is not simply allowed; unreadable flags count as the widest.
//!   A read event asks `r`, and is audited only when it is denied: the
//!   kernel revalidates a read only for a descriptor another label
//!   opened, and the daemon cannot tell which opened it, so a read that
//!   passes (complain mode included) adds no record to the open's.
//! * **The owner**: the file's uid equals the thread's fsuid (read from
//!   `/proc/TID/status` only when the owner and other rules differ).
//! * **One snapshot** of the profile set per check
//!   ([`LiveProfiles::current`]). A profile a reload removed denies (the
//!   kernel would keep the old profile alive for its tasks; here, as with
//!   an SELinux domain the new policy lacks, the label no longer means
//!   anything, so nothing is allowed): reported once per name.
//! * **Permissive daemon** (`--permissive`, `setenforce 0`): every
//!   profile behaves as in complain mode (`apparmor="ALLOWED"`).
//! * **Stacks**: a label `A//&B` (as `px -> &B` makes it, and as the
//!   kernel renders it: the profiles sorted by name) is every one of its
//!   profiles at once. Each decides every access, and each audits its own
//!   denials; the access happens only if all allow it. At an exec each
//!   profile follows its own x rule and the new label is the stack of the
//!   results ([`AppArmor::exec`]), as the kernel's `fn_label_build` does.
//! * **Supervised calls** (chmod, chown, truncate, unlink, rmdir, rename,
//!   link: crate::supervisor) are asked as the kernel's path hooks ask
//!   them ([`AppArmor::path_call`], [`AppArmor::link_call`]): `chmod`,
//!   `chown`, `truncate` (`w` and setattr), `unlink`/`rmdir` (delete),
//!   `rename_src` (`r`, `w`, delete, getattr, setattr) and `rename_dest`
//!   (`w`, create, setattr) on the new name, `link` with its pair rule.
//! * **Signals** sent by a launched process (crate::signals) are asked
//!   as `aa_may_signal` asks them ([`AppArmor::signal`]): the sender's
//!   profiles `send`, then the target's `receive`, each against the
//!   other's label (`unconfined` outside every profile).

use std::fs::Metadata;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::sync::{Mutex, PoisonError, RwLock};

use rampart_apparmor::audit::{
    file_message, net_message, peer_message, rlimit_message, FileAudit, NetAudit, PeerAudit, PeerOperation, RlimitAudit,
};
use rampart_apparmor::file::{link_perm, path_perm, perms_decision, FileDecision, Record, RecordKind};
use rampart_apparmor::perms::*;
use rampart_apparmor::{domain, ipc, net, LiveProfiles, Mode, Profile, Subject};
use rustc_hash::FxHashSet;

use crate::apparmor_log::AppArmorLog;
use crate::limits::LimitChange;
use crate::marks::{NameGrant, ProfileInScope};

/// Everything an open may ask of AppArmor.
const WIDEST_OPEN: u32 = MAY_READ | MAY_WRITE | MAY_APPEND | AA_MAY_CREATE;

/// `aa_map_file_to_perms` of raw open flags.
pub fn open_request(flags: u64) -> u32 {
    let access = flags & libc::O_ACCMODE as u64;
    let mut perms = 0;
    // OPEN_FMODE: O_RDONLY reads, O_WRONLY writes, O_RDWR both, 3 neither.
    if access == libc::O_WRONLY as u64 || access == libc::O_RDWR as u64 {
        perms |= MAY_WRITE;
    }
    if access == libc::O_RDONLY as u64 || access == libc::O_RDWR as u64 {
        perms |= MAY_READ;
    }
    if flags & libc::O_APPEND as u64 != 0 && perms & MAY_WRITE != 0 {
        perms = (perms & !MAY_WRITE) | MAY_APPEND;
    }
    if flags & libc::O_TRUNC as u64 != 0 {
        perms |= MAY_WRITE;
    }
    if flags & libc::O_CREAT as u64 != 0 {
        perms |= AA_MAY_CREATE;
    }
    perms
}

/// The event's file and who acts on it.
pub struct FileEvent<'a> {
    pub tid: u32,
    pub tgid: u32,
    pub fd: BorrowedFd<'a>,
    pub md: &'a Metadata,
}

/// What an exec under a profile does.
pub enum ExecOutcome {
    /// Allowed, under the same profile.
    Allowed,
    /// Allowed, and the process changes label (`px`, `cx`, `ux`, named
    /// transitions and their fallbacks): the new profile's name (as the
    /// cgroup label keeps it), `None` for `unconfined`.
    Transition {
        to: Option<String>,
        scrub: bool,
        mode: String,
    },
    Denied,
    /// Allowed by the profile, but to a label rampartd cannot keep (a
    /// stack): refused, with what it would have done.
    Unsupported(String),
}

/// The profiles and their records.
pub struct AppArmor {
    pub profiles: LiveProfiles,
    log: AppArmorLog,
    /// Profile names already reported as gone.
    gone: Mutex<FxHashSet<String>>,
    /// The marked filesystems mounted once in the daemon's namespace
    /// (crate::name_changes keeps it): only their files' names are known.
    mounted_once: RwLock<Vec<u64>>,
    /// Answers that need no name (crate::mount_prefix).
    prefixes: crate::mount_prefix::MountPrefixes,
}

/// The name the kernel mediates, or the record's info for a name that
/// cannot be built (with the readlink text, for the record).
fn name_of(fd: BorrowedFd<'_>, md: &Metadata) -> Result<Vec<u8>, (&'static str, Vec<u8>)> {
    let Some(link) = rampart_label::fd_link(fd) else { return Err(("Failed name lookup", Vec::new())) };
    let mut name = link.as_os_str().as_bytes().to_vec();
    if !name.starts_with(b"/") {
        return Err(("Failed name lookup - disconnected path", name));
    }
    const DELETED: &[u8] = b" (deleted)";
    if name.ends_with(DELETED) {
        // A file really named so is still there as this inode.
        let same = std::fs::symlink_metadata(&link).is_ok_and(|m| m.dev() == md.dev() && m.ino() == md.ino());
        if md.nlink() == 0 || !same {
            name.truncate(name.len() - DELETED.len());
        }
    }
    if md.is_dir() && !name.ends_with(b"/") {
        name.push(b'/');
    }
    Ok(name)
}

/// The thread's fsuid (`/proc/TID/status`, the fourth `Uid:` field).
fn fsuid(tid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    let uids = status.lines().find_map(|l| l.strip_prefix("Uid:"))?;
    uids.split_whitespace().nth(3)?.parse().ok()
}

/// A profile's namespace (`None`: the root one) and its name in it.
fn split_namespace(name: &str) -> (Option<&str>, &str) {
    match name.strip_prefix(':').and_then(|r| r.split_once(':')) {
        Some((ns, n)) => (Some(ns), n),
        None => (None, name),
    }
}

/// Which end of a decision between two labels a profile decides for:
/// the one that asks (sender, tracer) or the one asked about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    Subject,
    Object,
}

/// The label of a process under no profile, as a peer.
const UNCONFINED: &str = "unconfined";

/// The separator of a stack's profiles in a label (`A//&B`).
const STACK: &str = "//&";

/// The profiles of `label`: itself, or each profile of a stack.
fn stacked(label: &str) -> impl Iterator<Item = &str> {
    label.split(STACK).filter(|p| !p.is_empty())
}

/// Whether every profile of `label` allows (each asked, so each audits
/// its own denial).
fn every(label: &str, mut allows: impl FnMut(&str) -> bool) -> bool {
    // Not `all`: it would stop at the first denial, and the others'
    // records would be missing.
    let mut all = true;
    for p in stacked(label) {
        all &= allows(p);
    }
    all
}

/// The hard limit of `resource` a `set rlimit` rule of `p` bounds, if
/// one does.
fn rlimit_bound(p: &Profile, resource: u32) -> Option<u64> {
    if resource >= 32 || p.rlimit_mask & (1 << resource) == 0 {
        return None;
    }
    p.rlimits.get(usize::try_from(resource).ok()?).copied()
}

/// A decision that asks nothing more: allowed, nothing to log.
fn silent(d: &FileDecision) -> bool {
    d.allowed && d.record.is_none()
}

impl AppArmor {
    pub fn new(profiles: LiveProfiles, log: AppArmorLog) -> AppArmor {
        AppArmor {
            profiles,
            log,
            gone: Mutex::new(FxHashSet::default()),
            mounted_once: RwLock::new(Vec::new()),
            prefixes: Default::default(),
        }
    }

    /// Whether `name` (a profile, or a stack of them) is loaded now.
    pub fn exists(&self, name: &str) -> bool {
        let set = self.profiles.current();
        stacked(name).all(|p| set.policy.profile(p).is_some())
    }

    /// The capabilities a process under `name` may use (bit `i`:
    /// capability `i`): the profile's `capability` rules in enforce
    /// mode, all of them in complain mode.
    pub fn capabilities(&self, name: &str) -> u64 {
        let set = self.profiles.current();
        stacked(name).fold(u64::MAX, |caps, name| {
            caps & match set.policy.profile(name) {
                Some(p) if matches!(p.mode, Mode::Enforce | Mode::Kill | Mode::User) => p.caps[0],
                Some(_) => u64::MAX,
                None => 0,
            }
        })
    }

    /// What an exec from label `from` to label `to` (`None`: unconfined)
    /// does to the resource limits, added to `change`, as
    /// `apparmor_bprm_committing_creds` and `__aa_transition_rlimits`
    /// do it: nothing when the label stays or the new one is unconfined;
    /// else the soft limits the old profiles set are reset and the new
    /// profiles' `set rlimit` rules lower the hard limits (whatever the
    /// profiles' modes: limits are not permissions).
    pub(crate) fn transition_limits(&self, from: Option<&str>, to: Option<&str>, change: &mut LimitChange) {
        let Some(to) = to.filter(|&to| Some(to) != from) else { return };
        let set = self.profiles.current();
        for p in from.into_iter().flat_map(stacked).filter_map(|name| set.policy.profile(name)) {
            change.reset_soft |= p.rlimit_mask;
        }
        for p in stacked(to).filter_map(|name| set.policy.profile(name)) {
            for r in 0..u32::try_from(p.rlimits.len()).unwrap_or(u32::MAX) {
                if let Some(max) = rlimit_bound(p, r) {
                    change.cap(r, max);
                }
            }
        }
    }

    /// Whether some confined profile of `label` bounds `resource` with a
    /// `set rlimit` rule (crate::limits then makes a change of its hard
    /// limit itself, on the limits it checked).
    pub(crate) fn bounds(&self, label: &str, resource: u32) -> bool {
        let set = self.profiles.current();
        stacked(label)
            .filter_map(|name| set.policy.profile(name))
            .any(|p| p.mode != Mode::Unconfined && rlimit_bound(p, resource).is_some())
    }

    /// A change of the caller's own limits of `resource` to hard limit
    /// `hard` by a process under `label`, as the kernel's
    /// `aa_task_setrlimit` checks it (`profile_setrlimit`, for each
    /// confined profile of the label): a profile whose `set rlimit` rule
    /// bounds the resource refuses a hard limit above that bound, and
    /// records it (complain mode: recorded, let through; kill mode:
    /// recorded as such, refused, the process not killed). `who`: the
    /// caller's pid and tid.
    pub(crate) fn setrlimit(
        &self,
        label: &str,
        (resource, hard): (u32, u64),
        (pid, tid): (u32, u32),
        enforcing: &dyn Fn() -> bool,
    ) -> bool {
        let set = self.profiles.current();
        every(label, |name| {
            let Some(p) = self.profile(&set.policy, name) else { return false };
            let Some(bound) = rlimit_bound(p, resource).filter(|&max| hard > max) else { return true };
            if p.mode == Mode::Unconfined {
                return true;
            }
            let kind = match p.mode {
                Mode::Complain => RecordKind::Allowed,
                Mode::Kill => RecordKind::Kill,
                _ => RecordKind::Denied,
            };
            let record = Record { kind, request: 0, denied: 0, info: None };
            self.permissive_unless(kind == RecordKind::Allowed, Some(record), enforcing, |record| {
                self.record_rlimit(p, (pid, tid), record);
                let what = if record.kind == RecordKind::Allowed { "let through" } else { "refused" };
                eprintln!(
                    "rampartd: AppArmor: {what} a setrlimit of resource {resource} to hard limit {hard} by pid {pid}: \
                     above the bound of profile {:?} ({bound})",
                    p.name
                );
            })
        })
    }

    /// A change of the limits of another process, under `peer`, by a
    /// process under `label` (`aa_task_setrlimit`): without
    /// `CAP_SYS_RESOURCE` (`capable`), a caller whose label differs from
    /// the target's is refused, each confined profile recording it
    /// (`info="cap_sys_resource"`); otherwise the new hard limit must be
    /// within the bounds, which lies in the caller's memory, read again
    /// by the kernel: refused, coarser than AppArmor, wherever an
    /// enforced profile of the label bounds `resource` (logged, no
    /// record). `who`: the caller's pid and tid.
    pub(crate) fn setrlimit_of_other(
        &self,
        (label, peer): (&str, Option<&str>),
        resource: u32,
        capable: bool,
        (pid, tid): (u32, u32),
        enforcing: &dyn Fn() -> bool,
    ) -> bool {
        if self.unconfined(Some(label)) {
            return true;
        }
        let set = self.profiles.current();
        if Some(label) != peer && !capable {
            return every(label, |name| {
                let Some(p) = self.profile(&set.policy, name) else { return false };
                if p.mode == Mode::Unconfined {
                    return true;
                }
                let kind = if p.mode == Mode::Complain { RecordKind::Allowed } else { RecordKind::Denied };
                let record = Record { kind, request: 0, denied: 0, info: Some("cap_sys_resource") };
                self.permissive_unless(kind == RecordKind::Allowed, Some(record), enforcing, |record| {
                    self.record_rlimit(p, (pid, tid), record);
                })
            });
        }
        let bounded = stacked(label)
            .filter_map(|name| set.policy.profile(name))
            .any(|p| matches!(p.mode, Mode::Enforce | Mode::Kill | Mode::User) && rlimit_bound(p, resource).is_some());
        if bounded && enforcing() {
            eprintln!(
                "rampartd: AppArmor: refused a prlimit of resource {resource} of another process by pid {pid}: \
                 profile {label:?} bounds it, and the new limits lie in memory the kernel would read again \
                 (coarser than AppArmor)"
            );
            return false;
        }
        true
    }

    /// Writes profile `p`'s `setrlimit` record of pid `pid` (thread `tid`).
    fn record_rlimit(&self, p: &Profile, (pid, tid): (u32, u32), record: &Record) {
        let (namespace, profile) = split_namespace(&p.name);
        let comm = crate::pidfd::comm(tid).unwrap_or_default();
        let audit =
            RlimitAudit { namespace, profile, pid, comm: comm.as_bytes(), kind: record.kind, info: record.info };
        self.log.record(rlimit_message(&audit));
    }

    /// Whether `name` is enforced (not complain mode): a refusal of an
    /// exec into it is then enforced (crate::entry::apparmor_refusal).
    pub fn enforces(&self, name: &str) -> bool {
        let set = self.profiles.current();
        stacked(name).any(|name| match set.policy.profile(name) {
            Some(p) => matches!(p.mode, Mode::Enforce | Mode::Kill | Mode::User),
            None => true,
        })
    }

    /// The device accesses (crate::device_program's `ACCESS_READ`,
    /// `ACCESS_WRITE`) every profile of `label` allows on the device node
    /// `name`, as an open asks them, not as the node's owner (the opener
    /// is not known: coarser, never laxer); complain mode allows them.
    pub fn device_access(&self, label: &str, name: &[u8]) -> u32 {
        use crate::device_program::{ACCESS_READ, ACCESS_WRITE};
        let set = self.profiles.current();
        let mut access = ACCESS_READ | ACCESS_WRITE;
        for component in stacked(label) {
            let Some(p) = set.policy.profile(component) else { return 0 };
            let allows = |flags: i32| path_perm(Subject::Profile(p), name, open_request(flags as u64), false).allowed;
            if !allows(libc::O_RDONLY) {
                access &= !ACCESS_READ;
            }
            if !allows(libc::O_WRONLY) && !allows(libc::O_WRONLY | libc::O_APPEND) {
                access &= !ACCESS_WRITE;
            }
        }
        access
    }

    /// The marked filesystems now mounted once (`dev`s).
    pub fn set_mounted_once(&self, devices: Vec<u64>) {
        *self.mounted_once.write().unwrap_or_else(PoisonError::into_inner) = devices;
        self.prefixes.mounts_changed();
    }

    /// What every profile of `profiles` allows of the file `fd` (any
    /// open, a read) silently (nothing to audit), whoever asks it (owner
    /// or not), under every name the file has: an ignore mark may then
    /// let it pass unasked (crate::marks, "Names"). Only a regular file
    /// with one link, a name, on a filesystem mounted once qualifies (its
    /// one name is the one its descriptor shows); a rename, link or mount
    /// afterwards flushes the marks (crate::name_changes).
    pub fn all_allow(&self, profiles: &[ProfileInScope], fd: BorrowedFd<'_>) -> NameGrant {
        let Ok(md) = fd.try_clone_to_owned().and_then(|owned| std::fs::File::from(owned).metadata()) else {
            return NameGrant::NONE;
        };
        let once = self.mounted_once.read().unwrap_or_else(PoisonError::into_inner).contains(&md.dev());
        if !md.is_file() || md.nlink() != 1 || !once {
            return NameGrant::NONE;
        }
        let Ok(name) = name_of(fd, &md) else { return NameGrant::NONE };
        let set = self.profiles.current();
        let mut grant = NameGrant::ALL;
        for profile in profiles {
            // Opens asking to write or create of a profile whose opens are
            // supervised never meet a mark (crate::marks, "Scope").
            let any_open = if profile.direct_writes { WIDEST_OPEN } else { MAY_READ };
            for component in stacked(&profile.who) {
                let Some(p) = set.policy.profile(component) else { return NameGrant::NONE };
                for owner in [false, true] {
                    let allows = |request| silent(&path_perm(Subject::Profile(p), &name, request, owner));
                    grant.any_open &= allows(any_open);
                    grant.read &= grant.any_open || allows(MAY_READ);
                }
            }
        }
        grant
    }

    /// An open by a process under `profile`; `flags` reads the open's
    /// flags (slow: called only if needed). `enforcing`: the daemon's
    /// mode, asked only on a denial.
    pub fn open(
        &self,
        profile: &str,
        ev: &FileEvent<'_>,
        flags: &mut dyn FnMut() -> Option<u64>,
        enforcing: &dyn Fn() -> bool,
    ) -> bool {
        every(profile, |p| self.file(p, ev, "open", WIDEST_OPEN, flags, enforcing))
    }

    /// A read of a file no mark covers, by a process under `profile`;
    /// `call` reads the flags of the open call the thread is in (an exec
    /// reads its program: allowed, as the kernel does for a file opened
    /// by the exec).
    pub fn read(
        &self,
        profile: &str,
        ev: &FileEvent<'_>,
        call: &mut dyn FnMut() -> Option<u64>,
        enforcing: &dyn Fn() -> bool,
    ) -> bool {
        every(profile, |p| self.file(p, ev, "file_perm", MAY_READ, call, enforcing))
    }

    fn file(
        &self,
        profile: &str,
        ev: &FileEvent<'_>,
        operation: &str,
        widest: u32,
        flags: &mut dyn FnMut() -> Option<u64>,
        enforcing: &dyn Fn() -> bool,
    ) -> bool {
        let set = self.profiles.current();
        let Some(p) = self.profile(&set.policy, profile) else { return false };
        // Without the name, when no name below the file's mount changes
        // the answer and it asks nothing more (crate::mount_prefix).
        if ev.md.is_file() && p.mode != Mode::Unconfined {
            if let Some((other, owned)) = self.prefixes.perms(&set, p, ev.fd) {
                if silent(&perms_decision(p, other, widest)) && silent(&perms_decision(p, owned, widest)) {
                    return true;
                }
            }
        }
        let name = match name_of(ev.fd, ev.md) {
            Ok(name) => name,
            Err((info, shown)) => return self.unnamed(p, ev, operation, widest, info, &shown, enforcing),
        };
        let subject = Subject::Profile(p);
        // Both halves of the rule first: the fsuid is read only if the
        // owner could change the answer.
        let (other, owned) = (path_perm(subject, &name, widest, false), path_perm(subject, &name, widest, true));
        let is_read = widest == MAY_READ;
        if silent(&other) && silent(&owned) {
            return true;
        }
        let fsuid = fsuid(ev.tid);
        let owner = fsuid == Some(ev.md.uid());
        let widest_decision = if owner { owned } else { other };
        let decision = if silent(&widest_decision) {
            widest_decision
        } else {
            match flags() {
                // An exec's own open (and reads): the kernel's
                // `apparmor_file_open` leaves them to the exec's checks
                // (the exec event here).
                Some(f) if f & crate::access::FMODE_EXEC_FLAG != 0 => return true,
                Some(f) if !is_read => path_perm(subject, &name, open_request(f), owner),
                _ => widest_decision,
            }
        };
        let allowed = decision.allowed || !enforcing();
        if is_read && allowed {
            return true;
        }
        self.permissive_unless(decision.allowed, decision.record, enforcing, |record| {
            self.log(p, ev, operation, &name, fsuid.unwrap_or(u32::MAX), record)
        })
    }

    /// A denial (or complain-mode pass) for a file whose name cannot be
    /// built, as the kernel's `path_name` audits it.
    #[allow(clippy::too_many_arguments)]
    fn unnamed(
        &self,
        p: &Profile,
        ev: &FileEvent<'_>,
        operation: &str,
        request: u32,
        info: &'static str,
        shown: &[u8],
        enforcing: &dyn Fn() -> bool,
    ) -> bool {
        let complain = p.mode == Mode::Complain;
        let kind = if complain { RecordKind::Allowed } else { RecordKind::Denied };
        let record = Record { kind, request, denied: request, info: Some(info) };
        let fsuid = fsuid(ev.tid).unwrap_or(u32::MAX);
        self.permissive_unless(complain, Some(record), enforcing, |r| self.log(p, ev, operation, shown, fsuid, r))
    }

    /// An exec of the event's file by a process under `label` (a profile
    /// or a stack): each profile's x rule and transition
    /// (`AppArmor::exec_one`); denied if one denies, and the new label
    /// the stack of each profile's new one (unconfined ones drop out).
    /// `interpreter`: the event may be an interpreter the exec opens
    /// (crate::exec_calls), which the kernel maps without an x rule.
    pub fn exec(
        &self,
        label: &str,
        ev: &FileEvent<'_>,
        interpreter: bool,
        enforcing: &dyn Fn() -> bool,
    ) -> ExecOutcome {
        let outcomes: Vec<(&str, ExecOutcome)> =
            stacked(label).map(|p| (p, self.exec_one(p, ev, interpreter, enforcing))).collect();
        let mut next: Vec<&str> = Vec::new();
        let (mut scrub, mut modes) = (false, Vec::new());
        for (p, outcome) in &outcomes {
            match outcome {
                ExecOutcome::Denied => return ExecOutcome::Denied,
                ExecOutcome::Unsupported(why) => return ExecOutcome::Unsupported(why.clone()),
                ExecOutcome::Allowed => next.push(p),
                ExecOutcome::Transition { to, scrub: s, mode } => {
                    next.extend(to.as_deref().map(stacked).into_iter().flatten());
                    scrub |= *s;
                    modes.push(mode.clone());
                }
            }
        }
        next.sort_unstable();
        next.dedup();
        let mut old: Vec<&str> = stacked(label).collect();
        old.sort_unstable();
        if modes.is_empty() || next == old {
            return ExecOutcome::Allowed;
        }
        let to = (!next.is_empty()).then(|| next.join(STACK));
        ExecOutcome::Transition { to, scrub, mode: modes.join(",") }
    }

    /// An exec of the event's file by a process under `profile`
    /// (`domain::exec`: the x rule and its transition).
    fn exec_one(
        &self,
        profile: &str,
        ev: &FileEvent<'_>,
        interpreter: bool,
        enforcing: &dyn Fn() -> bool,
    ) -> ExecOutcome {
        let set = self.profiles.current();
        let Some(p) = self.profile(&set.policy, profile) else { return ExecOutcome::Denied };
        let name = match name_of(ev.fd, ev.md) {
            Ok(name) => name,
            Err((info, shown)) => {
                let allowed = self.unnamed(p, ev, "exec", MAY_EXEC, info, &shown, enforcing);
                return if allowed { ExecOutcome::Allowed } else { ExecOutcome::Denied };
            }
        };
        let fsuid = fsuid(ev.tid);
        let owner = fsuid == Some(ev.md.uid());
        let ns = match profile.strip_prefix(':').and_then(|r| r.split_once(':')) {
            Some((ns, _)) => ns,
            None => rampart_apparmor::policy::ROOT_NS,
        };
        let d = domain::exec(&set.policy, ns, Subject::Profile(p), &name, owner);
        let fsuid_or_none = fsuid.unwrap_or(u32::MAX);
        if d.allowed {
            if let Some(r) = &d.record {
                self.log(p, ev, "exec", &name, fsuid_or_none, r);
            }
        }
        match d.label {
            Some(label) if d.allowed => self.transition(p, ns, label, d.scrub, d.mode),
            _ => {
                let mapped = interpreter.then(|| path_perm(Subject::Profile(p), &name, AA_EXEC_MMAP, owner));
                if mapped.is_some_and(|m| m.perms.allow & AA_EXEC_MMAP != 0) {
                    // An exec event is also how an exec opens its ELF
                    // interpreter (`ld.so`), which the kernel maps (`m`)
                    // without an x rule; the code runs under the same
                    // profile, which may map it anyway (docs/security.md).
                    // Not for an event known to be the program's.
                    return ExecOutcome::Allowed;
                }
                let allowed = self.permissive_unless(false, d.record, enforcing, |r| {
                    self.log(p, ev, "exec", &name, fsuid_or_none, r);
                });
                if allowed {
                    ExecOutcome::Allowed
                } else {
                    ExecOutcome::Denied
                }
            }
        }
    }

    /// The outcome of an allowed exec by `p` (in namespace `ns`) whose
    /// new label is `label` (`domain::exec`'s rendering).
    fn transition(&self, p: &Profile, ns: &str, label: String, scrub: bool, mode: String) -> ExecOutcome {
        if label == p.name {
            return ExecOutcome::Allowed;
        }
        if label == "unconfined" {
            return ExecOutcome::Transition { to: None, scrub, mode };
        }
        // A complain-mode profile's exec of a program it has no rule for
        // enters a learning profile (`P//null-PATH`), itself in complain
        // mode with no rule: the process stays under P, in complain mode
        // too, whose records name P (docs/security.md).
        if label.starts_with(&format!("{}//null-", p.name)) && p.mode == Mode::Complain {
            return ExecOutcome::Allowed;
        }
        if label.contains("//null-") {
            return ExecOutcome::Unsupported(format!(
                "the profile's rule ({mode}) would change the AppArmor label to {label}, a learning profile"
            ));
        }
        let to = if ns == rampart_apparmor::policy::ROOT_NS { label } else { format!(":{ns}:{label}") };
        ExecOutcome::Transition { to: Some(to), scrub, mode }
    }

    /// The descriptors of process `tgid` (thread `tid` execs) that a
    /// process under `profile` may not use, as the kernel's
    /// `aa_inherit_files` revalidates them at an exec that changes label
    /// (its `file_inherit` records): regular files and directories of the
    /// filesystems whose opens the daemon mediates (`mediated`: of a
    /// device; elsewhere the process could open the file anew), each for
    /// what its open mode uses. The kernel skips descriptors opened by an
    /// unconfined task (delegation) and by a label the new one contains;
    /// the daemon cannot tell who opened a descriptor, so it checks them
    /// all (stricter; docs/security.md).
    pub fn unusable_descriptors(
        &self,
        label: &str,
        ids: (u32, u32),
        mediated: &dyn Fn(u64) -> bool,
        enforcing: &dyn Fn() -> bool,
    ) -> Vec<i32> {
        let mut unusable: Vec<i32> =
            stacked(label).flat_map(|p| self.unusable_descriptors_one(p, ids, mediated, enforcing)).collect();
        unusable.sort_unstable();
        unusable.dedup();
        unusable
    }

    fn unusable_descriptors_one(
        &self,
        profile: &str,
        (tid, tgid): (u32, u32),
        mediated: &dyn Fn(u64) -> bool,
        enforcing: &dyn Fn() -> bool,
    ) -> Vec<i32> {
        let set = self.profiles.current();
        // A profile a reload removed denies everything anyway.
        let Some(p) = self.profile(&set.policy, profile) else { return Vec::new() };
        let fsuid = fsuid(tid);
        let mut unusable = Vec::new();
        for crate::pidfd::HeldFile { n, file, md, flags } in crate::pidfd::held_files(tgid) {
            if !mediated(md.dev()) {
                continue;
            }
            // The open's O_CREAT and O_TRUNC are gone from its flags, as
            // from the kernel's `f_flags`: `aa_map_file_to_perms`.
            let request = open_request(flags as u64);
            let ev = FileEvent { tid, tgid, fd: file.as_fd(), md: &md };
            let allowed = match name_of(file.as_fd(), &md) {
                Ok(name) => {
                    let owner = fsuid == Some(md.uid());
                    let d = path_perm(Subject::Profile(p), &name, request, owner);
                    self.permissive_unless(d.allowed, d.record, enforcing, |r| {
                        self.log(p, &ev, "file_inherit", &name, fsuid.unwrap_or(u32::MAX), r)
                    })
                }
                Err((info, shown)) => self.unnamed(p, &ev, "file_inherit", request, info, &shown, enforcing),
            };
            if !allowed {
                unusable.push(n);
            }
        }
        unusable
    }

    /// The enforce-mode profile AppArmor would attach to an exec of the
    /// event's file by an unconfined process (`find_attach` over the root
    /// namespace's profiles), if any.
    pub fn attachment(&self, fd: BorrowedFd<'_>, md: &Metadata) -> Option<String> {
        let set = self.profiles.current();
        let ns = set.policy.namespaces().iter().find(|n| n.name == rampart_apparmor::policy::ROOT_NS)?;
        let name = name_of(fd, md).ok()?;
        let attach = domain::find_attach(ns.profiles.iter().filter(|p| p.parent().is_none()), &name);
        attach.profile.filter(|p| matches!(p.mode, Mode::Enforce | Mode::Kill | Mode::User)).map(|p| p.name.clone())
    }

    /// A supervised call's check of `name` (the object of `ev`, or a name
    /// it is to get) for `request`, by a process under `label`;
    /// `operation` as the kernel's records name it.
    pub fn path_call(
        &self,
        label: &str,
        ev: &FileEvent<'_>,
        name: &[u8],
        request: u32,
        operation: &str,
        enforcing: &dyn Fn() -> bool,
    ) -> bool {
        let fsuid = fsuid(ev.tid);
        let owner = fsuid == Some(ev.md.uid());
        self.named_call(label, ev, name, (request, operation), (fsuid, owner), enforcing)
    }

    /// A supervised creation of `name` (mkdir, mknod, symlink) by a
    /// process under `label`: create on the name, the caller counting as
    /// the owner (the kernel's `common_perm_create` conditions on
    /// `current_fsuid()`). `ev` is the directory, for the record.
    pub fn create_call(
        &self,
        label: &str,
        ev: &FileEvent<'_>,
        name: &[u8],
        operation: &str,
        enforcing: &dyn Fn() -> bool,
    ) -> bool {
        self.named_call(label, ev, name, (AA_MAY_CREATE, operation), (fsuid(ev.tid), true), enforcing)
    }

    /// `request` on `name` under every profile of `label`, recorded as
    /// `operation`; `owner`: whether the caller (`fsuid`) counts as the
    /// file's owner.
    fn named_call(
        &self,
        label: &str,
        ev: &FileEvent<'_>,
        name: &[u8],
        (request, operation): (u32, &str),
        (fsuid, owner): (Option<u32>, bool),
        enforcing: &dyn Fn() -> bool,
    ) -> bool {
        let set = self.profiles.current();
        every(label, |profile| {
            let Some(p) = self.profile(&set.policy, profile) else { return false };
            let d = path_perm(Subject::Profile(p), name, request, owner);
            self.permissive_unless(d.allowed, d.record, enforcing, |r| {
                self.log(p, ev, operation, name, fsuid.unwrap_or(u32::MAX), r)
            })
        })
    }

    /// A supervised `link` of the file of `ev` (named `target`) as `link`,
    /// by a process under `label`: `l` and the pair rule.
    pub fn link_call(
        &self,
        label: &str,
        ev: &FileEvent<'_>,
        link: &[u8],
        target: &[u8],
        enforcing: &dyn Fn() -> bool,
    ) -> bool {
        let set = self.profiles.current();
        let fsuid = fsuid(ev.tid);
        every(label, |profile| {
            let Some(p) = self.profile(&set.policy, profile) else { return false };
            let d = link_perm(Subject::Profile(p), link, target, fsuid == Some(ev.md.uid()));
            self.permissive_unless(d.allowed, d.record, enforcing, |r| {
                self.log(p, ev, "link", link, fsuid.unwrap_or(u32::MAX), r)
            })
        })
    }

    /// The name AppArmor mediates for the file open as `fd` (`None`: it
    /// has none the kernel could build; a supervised call on it is
    /// refused).
    pub fn name_of(fd: BorrowedFd<'_>, md: &Metadata) -> Option<Vec<u8>> {
        name_of(fd, md).ok()
    }

    /// A signal `sig` from a process under `sender` to one under
    /// `target` (`None`: unconfined), as the kernel's `aa_may_signal`
    /// checks it: every profile of the sender may send it to the
    /// target's label, then every profile of the target may receive it
    /// from the sender's (not asked, nor audited, once the sender is
    /// denied). `who`: the sender's pid and tid, for the records.
    pub fn signal(
        &self,
        sender: Option<&str>,
        target: Option<&str>,
        sig: i32,
        who: (u32, u32),
        enforcing: &dyn Fn() -> bool,
    ) -> bool {
        let check = |end, p: &Profile, peer: &str| {
            let request = if end == End::Subject { ipc::AA_MAY_SEND } else { ipc::AA_MAY_RECEIVE };
            ipc::signal_perm(p, peer, sig, request)
        };
        self.both_ends(PeerOperation::Signal(sig), (sender, target), &check, who, enforcing)
    }

    /// A socket of (`family`, `ty`, `protocol`) made by a process under
    /// `label`, as the kernel's `apparmor_socket_create` checks it: every
    /// profile of the label may create it (crate::sockets), each denial
    /// recorded. `who`: the caller's pid and tid.
    pub fn socket_create(
        &self,
        label: &str,
        kind: (i32, i32, i32),
        who: (u32, u32),
        enforcing: &dyn Fn() -> bool,
    ) -> bool {
        let (family, ty, protocol) = kind;
        self.socket_check(label, "create", kind, who, enforcing, &|p| net::create_perm(p, family, ty, protocol))
    }

    /// A bind, connect or listen (`what`) of a socket of (`family`, `ty`,
    /// `protocol`) by a process under `label`, as `apparmor_socket_bind`,
    /// `_connect` and `_listen` check it (`aa_sk_perm` with
    /// `AA_MAY_BIND`, `AA_MAY_CONNECT`, `AA_MAY_LISTEN`).
    pub(crate) fn socket_use(
        &self,
        label: &str,
        what: crate::sockets::Use,
        kind: (i32, i32, i32),
        who: (u32, u32),
        enforcing: &dyn Fn() -> bool,
    ) -> bool {
        use crate::sockets::Use;
        let (family, ty, protocol) = kind;
        let (operation, request) = match what {
            Use::Bind => ("bind", net::AA_MAY_BIND),
            Use::Connect => ("connect", net::AA_MAY_CONNECT),
            Use::Listen => ("listen", net::AA_MAY_LISTEN),
        };
        let check = |p: &Profile| net::sk_perm(p, request, family, ty, protocol);
        self.socket_check(label, operation, kind, who, enforcing, &check)
    }

    /// `check` of every profile of `label`, each denial recorded as
    /// `operation` on the socket (`family`, `ty`, `protocol`).
    fn socket_check(
        &self,
        label: &str,
        operation: &str,
        (family, ty, protocol): (i32, i32, i32),
        (pid, tid): (u32, u32),
        enforcing: &dyn Fn() -> bool,
        check: &dyn Fn(&Profile) -> ipc::PeerDecision,
    ) -> bool {
        let set = self.profiles.current();
        every(label, |profile| {
            let Some(p) = self.profile(&set.policy, profile) else { return false };
            let d = check(p);
            self.permissive_unless(d.allowed, d.record, enforcing, |record| {
                let (namespace, profile) = split_namespace(&p.name);
                let comm = crate::pidfd::comm(tid).unwrap_or_default();
                let audit = NetAudit {
                    operation,
                    namespace,
                    profile,
                    pid,
                    comm: comm.as_bytes(),
                    family,
                    ty,
                    protocol,
                    record,
                };
                self.log.record(net_message(&audit));
            })
        })
    }

    /// A ptrace access check (`request`: `AA_PTRACE_READ` or `TRACE`) by
    /// a process under `tracer` of one under `tracee`, as the kernel's
    /// `aa_may_ptrace` makes it (crate::process_reads): the tracer's
    /// profiles, then the tracee's, each denial recorded; an unconfined
    /// tracer (no profile, or profiles in `unconfined` mode) is not asked
    /// about. `who`: the tracer's pid and tid.
    pub fn ptrace(
        &self,
        tracer: Option<&str>,
        tracee: Option<&str>,
        request: u32,
        who: (u32, u32),
        enforcing: &dyn Fn() -> bool,
    ) -> bool {
        if self.unconfined(tracer) {
            return true;
        }
        let check = |end, p: &Profile, peer: &str| match end {
            End::Subject => ipc::tracer_perm(p, peer, request),
            End::Object => ipc::tracee_perm(p, peer, request),
        };
        self.both_ends(PeerOperation::Ptrace, (tracer, tracee), &check, who, enforcing)
    }

    /// A decision between two labels (`None`: unconfined), as ipc.c's
    /// `xcheck_labels` makes it: every profile of the subject's label
    /// against the object's, then, only if they all allow, every profile
    /// of the object's against the subject's; each profile audits its own
    /// denial (`who`: the asking task's pid and tid).
    fn both_ends(
        &self,
        op: PeerOperation,
        (subject, object): (Option<&str>, Option<&str>),
        check: &dyn Fn(End, &Profile, &str) -> ipc::PeerDecision,
        (pid, tid): (u32, u32),
        enforcing: &dyn Fn() -> bool,
    ) -> bool {
        let set = self.profiles.current();
        let side = |end, label: Option<&str>, peer: Option<&str>| {
            let Some(label) = label else { return true };
            let peer = peer.unwrap_or(UNCONFINED);
            every(label, |profile| {
                let Some(p) = self.profile(&set.policy, profile) else { return false };
                let d = check(end, p, peer);
                self.permissive_unless(d.allowed, d.record, enforcing, |record| {
                    let (namespace, profile) = split_namespace(&p.name);
                    let comm = crate::pidfd::comm(tid).unwrap_or_default();
                    let audit =
                        PeerAudit { operation: op, namespace, profile, pid, comm: comm.as_bytes(), peer, record };
                    self.log.record(peer_message(&audit));
                })
            })
        };
        side(End::Subject, subject, object) && side(End::Object, object, subject)
    }

    /// Whether a process under `tracer` may read the memory of one under
    /// `tracee` (`None`: unconfined) as `ptrace_may_access` asks AppArmor
    /// (`aa_may_ptrace`) at an open of `/proc/PID/mem` (trace) or
    /// `environ` (read): both modes, both ends, unaudited (the memory
    /// guard asks ahead of any access, crate::memory_guard). An
    /// unconfined tracer is not asked; a profile no longer loaded may
    /// not.
    pub fn may_read_memory(&self, tracer: Option<&str>, tracee: Option<&str>) -> bool {
        let Some(tracer) = tracer.filter(|_| !self.unconfined(tracer)) else { return true };
        let set = self.profiles.current();
        let allows = |label: &str, check: &dyn Fn(&Profile) -> bool| {
            stacked(label).all(|name| set.policy.profile(name).is_some_and(check))
        };
        [ipc::AA_PTRACE_TRACE, ipc::AA_PTRACE_READ].into_iter().all(|request| {
            allows(tracer, &|p| ipc::tracer_perm(p, tracee.unwrap_or(UNCONFINED), request).allowed)
                && tracee.map_or(true, |t| allows(t, &|p| ipc::tracee_perm(p, tracer, request).allowed))
        })
    }

    /// The kernel's `unconfined(label)` for a tracer: no profile, or
    /// every profile of the stack loaded in `unconfined` mode.
    fn unconfined(&self, label: Option<&str>) -> bool {
        let set = self.profiles.current();
        label.map_or(true, |l| stacked(l).all(|n| set.policy.profile(n).is_some_and(|p| p.mode == Mode::Unconfined)))
    }

    /// The loaded profile `name`, or `None` (reported once per name).
    fn profile<'p>(&self, policy: &'p rampart_apparmor::Policy, name: &str) -> Option<&'p Profile> {
        let found = policy.profile(name);
        if found.is_none() && self.gone.lock().unwrap_or_else(PoisonError::into_inner).insert(name.to_owned()) {
            eprintln!(
                "rampartd: the AppArmor profile {name:?} is no longer loaded (a reload removed it): every access \
                 of its processes is denied (docs/security.md); restore it and reload, or restart them"
            );
        }
        found
    }

    /// `allowed`, or, when the daemon is permissive, a denial let through
    /// as complain mode would (its record an `ALLOWED` one); logs the
    /// record through `log`.
    fn permissive_unless(
        &self,
        allowed: bool,
        record: Option<Record>,
        enforcing: &dyn Fn() -> bool,
        log: impl FnOnce(&Record),
    ) -> bool {
        let mut record = record;
        let mut allowed = allowed;
        if !allowed && !enforcing() {
            allowed = true;
            if let Some(r) = record.as_mut() {
                r.kind = RecordKind::Allowed;
            }
        }
        if let Some(r) = &record {
            log(r);
        }
        allowed
    }

    fn log(&self, p: &Profile, ev: &FileEvent<'_>, operation: &str, name: &[u8], fsuid: u32, record: &Record) {
        let (namespace, profile) = split_namespace(&p.name);
        let comm = crate::pidfd::comm(ev.tid).unwrap_or_default();
        self.log.record(file_message(&FileAudit {
            operation,
            namespace,
            profile,
            name,
            target: None,
            pid: ev.tgid,
            comm: comm.as_bytes(),
            fsuid,
            ouid: ev.md.uid(),
            record,
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stack_is_each_of_its_profiles() {
        assert_eq!(stacked("a//&b").collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(stacked("parent//child").collect::<Vec<_>>(), ["parent//child"], "a child is one profile");
        let mut asked = Vec::new();
        assert!(!every("a//&b//&c", |p| {
            asked.push(p.to_owned());
            p != "b"
        }));
        assert_eq!(asked, ["a", "b", "c"], "every profile is asked, and audits, even after a denial");
    }

    #[test]
    fn open_flags_map_as_the_kernel_maps_them() {
        let (rd, wr, rw) = (libc::O_RDONLY as u64, libc::O_WRONLY as u64, libc::O_RDWR as u64);
        let (append, trunc, creat) = (libc::O_APPEND as u64, libc::O_TRUNC as u64, libc::O_CREAT as u64);
        assert_eq!(open_request(rd), MAY_READ);
        assert_eq!(open_request(wr), MAY_WRITE);
        assert_eq!(open_request(rw), MAY_READ | MAY_WRITE);
        assert_eq!(open_request(wr | append), MAY_APPEND);
        assert_eq!(open_request(rd | append), MAY_READ, "append without write asks nothing more");
        assert_eq!(open_request(wr | trunc | creat), MAY_WRITE | AA_MAY_CREATE);
        assert_eq!(open_request(wr | append | trunc), MAY_APPEND | MAY_WRITE);
        assert_eq!(open_request(3), 0, "O_ACCMODE 3: neither read nor write");
    }
}
