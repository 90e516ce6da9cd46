//! Subjects the kernel keeps: every confined process lives in a cgroup
//! v2 of its domain, so the kernel, not a message stream, carries the
//! domain to every child, whatever the clone flags (`CLONE_PARENT`
//! included) and however fast the process forks (the proc connector
//! drops messages under load: `ENOBUFS`). The cgroups outlive the daemon,
//! so a restarted daemon finds every confined process in its domain.
//!
//! Layout, under the unified hierarchy (found in `/proc/self/mountinfo`:
//! `/sys/fs/cgroup` on pure v2 systems, `/sys/fs/cgroup/unified` on
//! hybrid ones), in a tree of the daemon's own (`--cgroup`, default
//! `rampart`):
//!
//! * `ROOT/<context>`: the processes of one domain (the directory is
//!   named by the full context, which never holds a `/`); with an
//!   AppArmor profile, `ROOT/<context>@aa.<hex of the profile name>`
//!   ([`crate::subject_label`]).
//! * `ROOT/exec.<n>`: one exec transition in flight ([`ExecInFlight`]),
//!   frozen (`cgroup.freeze`), with its parameters in the xattr
//!   `trusted.rampart.exec` so a restarted daemon can finish it.
//!
//! The tree sits directly under the hierarchy's root, owned by root: to
//! move a process out, a writer needs write access to `cgroup.procs` of
//! the common ancestor of both cgroups, the hierarchy's root, which a
//! delegated subtree (systemd's `user@UID.service`) does not give. A tree
//! nested in the process's own (possibly delegated) cgroup would let its
//! owner move it out.
//!
//! # One exec, one transition
//!
//! A transition is decided at the exec's permission event, before the
//! new image exists, and the exec can still fail after it (`E2BIG`, a
//! denied interpreter). So the process is moved, before the exec is
//! answered, into a frozen cgroup of its own: the kernel freezes each of
//! its threads as it returns to user space, which the exec's thread does
//! only when the exec has committed (the new image's first instruction)
//! or failed (the old image again). Until then its events are decided in
//! its old domain, as the kernel would (credentials change at commit).
//! The housekeeper then looks ([`Cgroups::settle`]): if the process's
//! executable is now the decided file (or the `#!` interpreter it names;
//! where it ran that image already, its memory map tells:
//! crate::same_image), the exec committed and the process moves to the
//! new domain; children
//! other threads forked meanwhile (old code) and a process whose exec
//! failed (all its threads frozen, the executable unchanged) move back to
//! the old domain. Moving out of the frozen cgroup thaws them. No user
//! code runs in the new domain unless it is the decided file's. An exec
//! cgroup is published before its process moves in (an event must find
//! its node), and it counts as settled when empty only once the process
//! entered it: the housekeeper, settling another exec, once removed a
//! cgroup being made, and that exec was refused.
//!
//! Where a domain of the tree may not read the new one, its cgroup is
//! frozen too, from before the exec is answered until the new image is
//! non-dumpable ([`crate::memory_guard`]); a process whose pending
//! signals are flushed in its new domain, and whose new domain's cgroup
//! such a guard holds frozen, settles once the guard closes.
//!
//! A domain cgroup that no process is in any more is removed by the
//! housekeeper ([`Cgroups::prune_empty_domains`]): its domain leaves the
//! scope of the ignore marks (crate::marks).
//!
//! Lookups: an event's thread is mapped to its cgroup id
//! ([`crate::pidfd`]), then to a [`Node`] through a table published
//! with `ArcSwap` (read without locks or shared writes, seeds 000/004);
//! changes (rare: a new domain, an exec in flight) copy it under a mutex.

use std::ffi::CString;
use std::fs;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

use arc_swap::{ArcSwap, ArcSwapOption};
use rampart_avc::{Avc, Sid};
use rustc_hash::FxHashMap;

use crate::device_access::DeviceNodes;
use crate::file_owners::NamedOwners;
use crate::fs_sharing;
use crate::limits::{self, LimitChange};
use crate::marks::{InScope, ProfileInScope};
use crate::memory_guard::{Guard, Guards};
use crate::same_image::{OldMemory, Outcome};
use crate::secure_exec;
use crate::signal_state::{self, SignalReset};
use crate::subject_label::{self, Label, EXEC_PREFIX};

/// The xattr holding an exec in flight's parameters.
const EXEC_XATTR: &str = "trusted.rampart.exec";

/// Names tried for an exec cgroup before the exec is refused.
const EXEC_NAME_TRIES: usize = 64;

/// A file by device and inode.
pub type FileId = (u64, u64);

/// What a cgroup of the tree stands for.
#[derive(Clone, Debug)]
pub enum Node {
    Domain(Label),
    Exec(Arc<ExecInFlight>),
}

impl Node {
    /// The labels its processes have or are about to take.
    fn labels(&self) -> [Option<&Label>; 2] {
        match self {
            Node::Domain(l) => [Some(l), None],
            Node::Exec(e) => [Some(&e.plan.from), Some(&e.plan.to)],
        }
    }
}

/// One exec transition in flight (see the module docs).
#[derive(Debug)]
pub struct ExecInFlight {
    pub dir: PathBuf,
    pub plan: ExecPlan,
    /// Where the process goes back to when the exec fails and `from` is
    /// a domain without a cgroup of the tree (the default domain).
    pub origin: Option<PathBuf>,
    /// The process was moved into `dir`: until then its cgroup is empty
    /// because it is being made, not because the exec settled (the
    /// housekeeper removed such a cgroup under `begin_exec`, which then
    /// refused the exec: `ENODEV`).
    entered: AtomicBool,
    /// The domains kept frozen until it settles (crate::memory_guard).
    guard: Mutex<Option<Guard>>,
}

impl ExecInFlight {
    fn new(dir: PathBuf, plan: ExecPlan, origin: Option<PathBuf>, entered: bool) -> ExecInFlight {
        ExecInFlight { dir, plan, origin, entered: AtomicBool::new(entered), guard: Mutex::new(None) }
    }

    /// Lets go of the domains it kept frozen.
    fn close_guard(&self, guards: &Guards) {
        if let Some(g) = self.guard.lock().unwrap_or_else(PoisonError::into_inner).take() {
            guards.close(g);
        }
    }
}

/// What an exec transition is about.
#[derive(Debug)]
pub struct ExecPlan {
    /// The label before the exec (its events are decided in it).
    pub from: Label,
    /// The label the exec enters once it has committed.
    pub to: Label,
    /// The process (thread group id) and the thread that execs.
    pub tgid: u32,
    pub tid: u32,
    /// Executables that prove the exec committed: the file and the
    /// interpreter its `#!` line names.
    pub images: Vec<FileId>,
    /// The executable before the exec.
    pub old_image: Option<FileId>,
    /// Where that executable is one of `images` (a shell running a `#!`
    /// script), its memory map before the exec, which tells a committed
    /// exec from a failed one (crate::same_image); `None` there (a record
    /// of an older daemon): it settles in the old domain.
    pub old_memory: Option<OldMemory>,
    /// The new image runs in secure-execution mode (AT_SECURE), as the
    /// kernel runs it unless the policy grants `process noatsecure` (or,
    /// under AppArmor, for `Px`, `Cx` and `Ux`): crate::secure_exec.
    pub at_secure: bool,
    /// What the exec does to the process's resource limits before the
    /// new image runs (SELinux's `rlimitinh`, AppArmor's `set rlimit`):
    /// crate::limits.
    pub(crate) limits: LimitChange,
    /// What of the signal state the new image starts without (SELinux's
    /// `siginh`, the parent-death signal): crate::signal_state.
    pub signals: SignalReset,
    /// The new image may run sharing its working directory with old
    /// code (`process share`, or permissive): crate::fs_sharing.
    pub may_share: bool,
}

/// The daemon's cgroup tree (see the module docs).
pub struct Cgroups {
    hierarchy: PathBuf,
    root: PathBuf,
    default_sid: Sid,
    nodes: ArcSwap<FxHashMap<u64, Node>>,
    /// Some node exists: until then every process is in the default
    /// domain and no event needs its thread's cgroup.
    populated: AtomicBool,
    changes: Mutex<()>,
    next_exec: AtomicU64,
    /// Rung when an exec goes in flight, so the housekeeper settles it
    /// without waiting for its next round.
    doorbell: (Mutex<bool>, Condvar),
    /// Whom granted `F_SETOWN`s named: their files lose that owner when
    /// they change domain (crate::file_owners).
    pub owners: NamedOwners,
    /// Domains kept frozen while an exec makes its image non-dumpable
    /// (crate::memory_guard).
    guards: Guards,
    /// The machine's device nodes, labeled: each domain cgroup gets the
    /// device program they give its domain (crate::device_access). Unset
    /// until the daemon has scanned them; no domain is entered before.
    devices: ArcSwapOption<DeviceNodes>,
}

fn file_id(md: &fs::Metadata) -> FileId {
    (md.dev(), md.ino())
}

/// The executable of `pid` now, by device and inode.
pub fn image_of(pid: u32) -> Option<FileId> {
    fs::metadata(format!("/proc/{pid}/exe")).ok().map(|m| file_id(&m))
}

/// Moves process `pid` (all its threads) into the cgroup `dir`.
fn move_process(dir: &Path, pid: u32) -> io::Result<()> {
    fs::write(dir.join("cgroup.procs"), pid.to_string())
}

/// How many threads process `pid` has.
pub(crate) fn thread_count(pid: u32) -> Option<u32> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("Threads:")).and_then(|n| n.trim().parse().ok())
}

/// The processes in the cgroup `dir`.
fn members(dir: &Path) -> Vec<u32> {
    ids_in(&dir.join("cgroup.procs"))
}

/// The ids a `cgroup.procs` or `cgroup.threads` file lists.
fn ids_in(file: &Path) -> Vec<u32> {
    fs::read_to_string(file).map(|s| s.lines().filter_map(|l| l.trim().parse().ok()).collect()).unwrap_or_default()
}

pub(crate) fn is_frozen(dir: &Path) -> bool {
    fs::read_to_string(dir.join("cgroup.events")).is_ok_and(|s| s.lines().any(|l| l.trim() == "frozen 1"))
}

fn cstring(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, format!("{} holds a NUL byte", p.display())))
}

fn set_xattr(dir: &Path, name: &str, value: &[u8]) -> io::Result<()> {
    let (path, name) = (cstring(dir)?, CString::new(name).map_err(|_| io::ErrorKind::InvalidInput)?);
    // SAFETY: both strings are NUL-terminated and live across the call;
    // `value` is valid for `value.len()` bytes.
    let rc = unsafe { libc::setxattr(path.as_ptr(), name.as_ptr(), value.as_ptr().cast(), value.len(), 0) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn get_xattr(dir: &Path, name: &str) -> io::Result<Vec<u8>> {
    let (path, name) = (cstring(dir)?, CString::new(name).map_err(|_| io::ErrorKind::InvalidInput)?);
    let mut buf = vec![0u8; 4096];
    // SAFETY: as in set_xattr; `buf` is writable for its length.
    let n = unsafe { libc::getxattr(path.as_ptr(), name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    buf.truncate(n as usize);
    Ok(buf)
}

/// The directory name of `label` in the tree.
fn label_dir_name(avc: &Avc, label: &Label) -> io::Result<String> {
    let context =
        avc.context(label.sid).ok_or_else(|| io::Error::other(format!("no context for SID {:?}", label.sid)))?;
    subject_label::dir_name(context, label.apparmor.as_deref(), label.opens_supervised).map_err(io::Error::other)
}

impl Cgroups {
    /// Opens (creating if needed) the tree `name` under the unified
    /// hierarchy and reads back what an earlier daemon left there. Without
    /// a cgroup v2 hierarchy in the daemon's mount namespace (a sandbox
    /// that hides `/sys/fs/cgroup`, as the enforcement benchmark's does),
    /// the tree is disabled: every process is in the default domain, and
    /// `rampart run` requests and execs that would enter another domain
    /// are refused.
    pub fn open(name: &str, avc: &Avc, default_sid: Sid, fallback: Sid) -> Result<Cgroups, String> {
        if name.is_empty() || name.contains('/') || name.starts_with('.') || name.starts_with("cgroup.") {
            return Err(format!("--cgroup {name:?}: give one directory name (no '/'), such as rampart"));
        }
        let mountinfo = fs::read_to_string("/proc/self/mountinfo").map_err(|e| format!("/proc/self/mountinfo: {e}"))?;
        let Some(hierarchy) = crate::mountinfo::cgroup2_mounts(&mountinfo).into_iter().next() else {
            eprintln!(
                "rampartd: warning: no cgroup v2 (unified) hierarchy is mounted here; processes cannot be \
                 confined (every exec into another domain is refused); mount one: \
                 mount -t cgroup2 none /sys/fs/cgroup/unified"
            );
            return Ok(Cgroups::new(PathBuf::new(), PathBuf::new(), default_sid));
        };
        let root = hierarchy.join(name);
        match fs::create_dir(&root) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(format!("creating the cgroup {}: {e}", root.display())),
        }
        let cgroups = Cgroups::new(hierarchy, root, default_sid);
        cgroups.recover(avc, fallback)?;
        if !cgroups.processes().is_empty() {
            // Processes an earlier daemon launched: their clones were not
            // seen here, so any of them may share a working directory.
            fs_sharing::note_clone();
        }
        Ok(cgroups)
    }

    fn new(hierarchy: PathBuf, root: PathBuf, default_sid: Sid) -> Cgroups {
        Cgroups {
            hierarchy,
            root,
            default_sid,
            nodes: ArcSwap::from_pointee(FxHashMap::default()),
            populated: AtomicBool::new(false),
            changes: Mutex::new(()),
            next_exec: AtomicU64::new(0),
            doorbell: (Mutex::new(false), Condvar::new()),
            owners: NamedOwners::default(),
            guards: Guards::default(),
            devices: ArcSwapOption::empty(),
        }
    }

    /// Takes `nodes` as the machine's devices and gives every domain
    /// cgroup its device program again (after a policy load, a boolean
    /// change, a switch of the daemon's mode, and at the start, for the
    /// domains an earlier daemon left);
    /// the domains it failed for, with why.
    pub fn set_devices(&self, avc: &Avc, nodes: DeviceNodes) -> Vec<String> {
        let nodes = Arc::new(nodes);
        let _guard = self.changes.lock().unwrap_or_else(PoisonError::into_inner);
        self.devices.store(Some(Arc::clone(&nodes)));
        let mut failed = Vec::new();
        for node in self.nodes.load().values() {
            let Node::Domain(label) = node else { continue };
            let Ok(name) = label_dir_name(avc, label) else { continue };
            if let Err(e) = crate::device_access::apply(&self.root.join(name), &nodes, avc, label) {
                failed.push(e);
            }
        }
        failed
    }

    /// Waits up to `timeout` for an exec to go in flight.
    pub fn wait_for_exec(&self, timeout: std::time::Duration) {
        let (rung, bell) = &self.doorbell;
        let guard = rung.lock().unwrap_or_else(PoisonError::into_inner);
        let (mut guard, _) =
            bell.wait_timeout_while(guard, timeout, |rung| !*rung).unwrap_or_else(PoisonError::into_inner);
        *guard = false;
    }

    fn ring(&self) {
        let (rung, bell) = &self.doorbell;
        *rung.lock().unwrap_or_else(PoisonError::into_inner) = true;
        bell.notify_one();
    }

    /// Whether processes can be confined (a cgroup v2 hierarchy exists).
    pub fn enabled(&self) -> bool {
        !self.root.as_os_str().is_empty()
    }

    fn unavailable() -> io::Error {
        io::Error::new(io::ErrorKind::Unsupported, "no cgroup v2 hierarchy: processes cannot be confined")
    }

    /// Reads the domains and execs in flight an earlier daemon left.
    /// A domain whose context the policy no longer accepts runs as
    /// `fallback` (the unlabeled context, as the kernel maps it).
    fn recover(&self, avc: &Avc, fallback: Sid) -> Result<(), String> {
        let entries = fs::read_dir(&self.root).map_err(|e| format!("{}: {e}", self.root.display()))?;
        let mut nodes = FxHashMap::default();
        // Domains an earlier daemon froze for an exec's guard.
        let mut frozen = Vec::new();
        for entry in entries.flatten() {
            let Ok(md) = entry.metadata() else { continue };
            if !md.is_dir() {
                continue;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let dir = entry.path();
            if let Some(n) = name.strip_prefix(EXEC_PREFIX) {
                let n: u64 = n.parse().unwrap_or(0);
                self.next_exec.fetch_max(n + 1, Ordering::Relaxed);
                match get_xattr(&dir, EXEC_XATTR).ok().and_then(|v| decode_exec(&v, &dir, avc)) {
                    Some(exec) => {
                        // Thawed by the last daemon's shutdown: frozen
                        // again, so it settles as any exec in flight.
                        let _ = fs::write(dir.join("cgroup.freeze"), "1");
                        nodes.insert(md.ino(), Node::Exec(Arc::new(exec)));
                    }
                    None => eprintln!(
                        "rampartd: warning: {}: an exec in flight without readable parameters; \
                         its processes run in the default domain",
                        dir.display()
                    ),
                }
            } else if let Some(parsed) = subject_label::parse_dir_name(&name) {
                if fs::read_to_string(dir.join("cgroup.freeze")).is_ok_and(|f| f.trim() == "1") {
                    frozen.push(dir.clone());
                }
                let sid = avc.intern(parsed.context).unwrap_or(fallback);
                let apparmor = parsed.profile.map(Arc::from);
                nodes
                    .insert(md.ino(), Node::Domain(Label { sid, apparmor, opens_supervised: parsed.opens_supervised }));
            }
        }
        // Kept frozen until the execs that may need it settle; thawed now
        // if none does (crate::memory_guard).
        let mut guarded = false;
        for node in nodes.values() {
            if let Node::Exec(x) = node {
                if x.plan.signals.undumpable {
                    let guard = self.guards.adopt(x.plan.to.sid, frozen.clone());
                    *x.guard.lock().unwrap_or_else(PoisonError::into_inner) = Some(guard);
                    guarded = true;
                }
            }
        }
        if !guarded {
            for dir in &frozen {
                let _ = fs::write(dir.join("cgroup.freeze"), "0");
            }
        }
        if !nodes.is_empty() {
            self.nodes.store(Arc::new(nodes));
            // Release: see `populated`.
            self.populated.store(true, Ordering::Release);
        }
        Ok(())
    }

    /// Whether any process may be outside the default domain. Acquire
    /// pairs with the Release in `publish`: a responder that sees it set
    /// also sees the node table it was set for. A process is moved into a
    /// cgroup only after its node is published, so its events find it.
    pub fn populated(&self) -> bool {
        self.populated.load(Ordering::Acquire)
    }

    /// The node of cgroup `id` (`None`: a cgroup outside the tree, the
    /// default domain).
    pub fn node(&self, id: u64) -> Option<Node> {
        self.nodes.load().get(&id).cloned()
    }

    /// Every domain a process of the tree runs in or is about to enter
    /// (crate::marks, "Scope").
    pub fn domains(&self) -> Vec<InScope> {
        self.in_scope(|l| Some(l.sid))
    }

    /// Every label a process of the tree has or is about to take: a
    /// domain's whose cgroup holds a process, and both of each exec in
    /// flight.
    pub fn live_labels(&self, avc: &Avc) -> Vec<Label> {
        let mut out: Vec<Label> = Vec::new();
        for node in self.nodes.load().values() {
            if matches!(node, Node::Domain(l) if !self.populated_dir(avc, l)) {
                continue;
            }
            for l in node.labels().into_iter().flatten() {
                if !out.contains(l) {
                    out.push(l.clone());
                }
            }
        }
        out
    }

    /// Whether `label`'s cgroup holds a process (`populated 1`).
    fn populated_dir(&self, avc: &Avc, label: &Label) -> bool {
        let Ok(name) = label_dir_name(avc, label) else { return true };
        fs::read_to_string(self.root.join(name).join("cgroup.events"))
            .is_ok_and(|s| s.lines().any(|l| l.trim() == "populated 1"))
    }

    /// The AppArmor profiles processes of the tree run under, or are
    /// about to enter or leave (crate::marks: names then matter).
    pub fn apparmor_profiles(&self) -> Vec<ProfileInScope> {
        self.in_scope(|l| l.apparmor.clone())
    }

    /// What `who` says of each label a process of the tree has or is
    /// about to take, merged.
    fn in_scope<K: PartialEq>(&self, who: impl Fn(&Label) -> Option<K>) -> Vec<InScope<K>> {
        let mut out = Vec::new();
        for node in self.nodes.load().values() {
            for l in node.labels().into_iter().flatten() {
                if let Some(k) = who(l) {
                    InScope::merge_into(&mut out, InScope { who: k, direct_writes: !l.opens_supervised });
                }
            }
        }
        out
    }

    /// The processes of the tree under an AppArmor profile, with it, by
    /// pid (`rampart apparmor status`, like aa-status's process list). A
    /// process whose exec is in flight (its own frozen cgroup, until the
    /// housekeeper settles it) is listed under the profile it enters, or
    /// else the one it leaves.
    pub fn apparmor_processes(&self) -> Vec<(u32, String)> {
        if !self.enabled() {
            return Vec::new();
        }
        let Ok(entries) = fs::read_dir(&self.root) else { return Vec::new() };
        let mut out: Vec<(u32, String)> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let profile = subject_label::parse_dir_name(&name)?.profile?;
                Some(members(&e.path()).into_iter().map(move |pid| (pid, profile.clone())))
            })
            .flatten()
            .collect();
        for node in self.nodes.load().values() {
            if let Node::Exec(e) = node {
                if let Some(profile) = e.plan.to.apparmor.as_ref().or(e.plan.from.apparmor.as_ref()) {
                    out.extend(members(&e.dir).into_iter().map(|pid| (pid, profile.to_string())));
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// Processes in the tree.
    pub fn process_count(&self) -> usize {
        self.processes().len()
    }

    /// The processes of the tree, by pid: every process `rampart run`
    /// started and their descendants (crate::signals).
    pub fn processes(&self) -> Vec<u32> {
        if !self.enabled() {
            return Vec::new();
        }
        let Ok(entries) = fs::read_dir(&self.root) else { return Vec::new() };
        entries.flatten().flat_map(|e| members(&e.path())).collect()
    }

    /// Every thread of the processes in the tree (one `cgroup.threads`
    /// read per domain).
    pub fn threads(&self) -> Vec<u32> {
        if !self.enabled() {
            return Vec::new();
        }
        let Ok(entries) = fs::read_dir(&self.root) else { return Vec::new() };
        entries.flatten().flat_map(|e| ids_in(&e.path().join("cgroup.threads"))).collect()
    }

    /// Changes the node table; the caller holds `changes`, so the table
    /// and `populated` move together.
    fn publish(&self, change: impl FnOnce(&mut FxHashMap<u64, Node>)) {
        let mut nodes = FxHashMap::clone(&self.nodes.load());
        change(&mut nodes);
        let populated = !nodes.is_empty();
        self.nodes.store(Arc::new(nodes));
        // Release: see `populated`. A table emptied here held no process:
        // a node goes only once its cgroup is removed (empty), and a
        // process enters a cgroup only after its node is published.
        self.populated.store(populated, Ordering::Release);
    }

    /// Removes the cgroups of domains no process runs in any more (issue
    /// 8: the scope shrinks with them); true if any went. The kernel
    /// refuses to remove a populated cgroup, so a process moved in
    /// meanwhile keeps its domain's.
    pub fn prune_empty_domains(&self, avc: &Avc) -> bool {
        if !self.enabled() {
            return false;
        }
        let _guard = self.changes.lock().unwrap_or_else(PoisonError::into_inner);
        let gone: Vec<u64> = self
            .nodes
            .load()
            .iter()
            .filter_map(|(id, node)| match node {
                Node::Domain(label) => {
                    let dir = self.root.join(label_dir_name(avc, label).ok()?);
                    fs::remove_dir(dir).is_ok().then_some(*id)
                }
                Node::Exec(_) => None,
            })
            .collect();
        if gone.is_empty() {
            return false;
        }
        self.publish(|nodes| {
            for id in &gone {
                nodes.remove(id);
            }
        });
        true
    }

    /// The cgroup of `label` (made on first use).
    fn domain_dir(&self, avc: &Avc, label: &Label) -> io::Result<PathBuf> {
        if !self.enabled() {
            return Err(Self::unavailable());
        }
        let dir = self.root.join(label_dir_name(avc, label)?);
        let _guard = self.changes.lock().unwrap_or_else(PoisonError::into_inner);
        match fs::create_dir(&dir) {
            // Made again while a guard keeps its domain out.
            Ok(()) => self.guards.refreeze(&dir)?,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        let id = fs::metadata(&dir)?.ino();
        if !matches!(self.nodes.load().get(&id), Some(Node::Domain(l)) if l == label) {
            // Before any process enters: its devices (crate::device_access).
            let devices =
                self.devices.load_full().ok_or_else(|| io::Error::other("the device nodes are not labeled yet"))?;
            crate::device_access::apply(&dir, &devices, avc, label).map_err(io::Error::other)?;
            self.publish(|n| {
                n.insert(id, Node::Domain(label.clone()));
            });
        }
        Ok(dir)
    }

    /// Moves `pid` into `label` (an exec that committed).
    fn enter_domain(&self, avc: &Avc, label: &Label, pid: u32) -> io::Result<()> {
        move_process(&self.domain_dir(avc, label)?, pid)
    }

    /// Records an exec in flight and moves its process into its frozen
    /// cgroup (see the module docs), after freezing the domains in
    /// `kept_out` (crate::memory_guard). On error nothing is left behind
    /// and the exec must be refused.
    pub fn begin_exec(&self, avc: &Avc, plan: ExecPlan, kept_out: &[Label]) -> io::Result<()> {
        if !self.enabled() {
            return Err(Self::unavailable());
        }
        let guard = if kept_out.is_empty() {
            None
        } else {
            let mut out = Vec::with_capacity(kept_out.len());
            for label in kept_out {
                out.push((label.sid, self.root.join(label_dir_name(avc, label)?)));
            }
            Some(self.guards.open(plan.to.sid, out, plan.signals.signals)?)
        };
        let origin = if plan.from.is_default(self.default_sid) { self.cgroup_of(plan.tgid) } else { None };
        let tgid = plan.tgid;
        // A name another made (none may: crate::kernel_files) is skipped.
        let mut made = Err(io::Error::from(io::ErrorKind::AlreadyExists));
        for _ in 0..EXEC_NAME_TRIES {
            let n = self.next_exec.fetch_add(1, Ordering::Relaxed);
            let dir = self.root.join(format!("{EXEC_PREFIX}{n}"));
            made = fs::create_dir(&dir).map(|()| dir);
            if !matches!(&made, Err(e) if e.kind() == io::ErrorKind::AlreadyExists) {
                break;
            }
        }
        let dir = match made {
            Ok(dir) => dir,
            Err(e) => {
                if let Some(g) = guard {
                    self.guards.close(g);
                }
                return Err(e);
            }
        };
        let exec = Arc::new(ExecInFlight::new(dir.clone(), plan, origin, false));
        *exec.guard.lock().unwrap_or_else(PoisonError::into_inner) = guard;
        let mut published = None;
        let made = (|| {
            set_xattr(&dir, EXEC_XATTR, encode_exec(&exec, avc).as_bytes())?;
            fs::write(dir.join("cgroup.freeze"), "1")?;
            let id = fs::metadata(&dir)?.ino();
            {
                let _guard = self.changes.lock().unwrap_or_else(PoisonError::into_inner);
                self.publish(|n| {
                    n.insert(id, Node::Exec(Arc::clone(&exec)));
                });
            }
            published = Some(id);
            move_process(&dir, tgid)?;
            // Release: a housekeeper that sees it reads the cgroup after
            // the move (`settle_one`).
            exec.entered.store(true, Ordering::Release);
            Ok(())
        })();
        match &made {
            Ok(()) => self.ring(),
            Err(_) => {
                if let Some(id) = published {
                    let _guard = self.changes.lock().unwrap_or_else(PoisonError::into_inner);
                    self.publish(|n| {
                        n.remove(&id);
                    });
                }
                let _ = self.remove(&dir);
                exec.close_guard(&self.guards);
            }
        }
        made
    }

    /// The domain process `pid` runs in (the old one during its exec in
    /// flight; the default one outside the tree or once it is gone).
    fn domain_of(&self, pid: u32) -> Sid {
        let id = crate::pidfd::pidfd_open(pid).and_then(|fd| crate::pidfd::thread_info(fd.as_fd()));
        match id.ok().and_then(|info| self.node(info.cgroup_id)) {
            Some(Node::Domain(label)) => label.sid,
            Some(Node::Exec(x)) => x.plan.from.sid,
            None => self.default_sid,
        }
    }

    /// The cgroup `pid` is in now, if outside the tree.
    fn cgroup_of(&self, pid: u32) -> Option<PathBuf> {
        let text = fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
        let rel = text.lines().find_map(|l| l.strip_prefix("0::"))?;
        let dir = self.hierarchy.join(rel.trim_start_matches('/'));
        (!dir.starts_with(&self.root)).then_some(dir)
    }

    /// Settles every exec in flight that can be (see the module docs);
    /// returns how many are still in flight. `may_signal(from, to)`: the
    /// policy lets domain `from` signal domain `to`.
    pub fn settle(&self, avc: &Avc, may_signal: &dyn Fn(Sid, Sid) -> bool) -> usize {
        let execs: Vec<(u64, Arc<ExecInFlight>)> = self
            .nodes
            .load()
            .iter()
            .filter_map(|(id, n)| match n {
                Node::Exec(e) => Some((*id, Arc::clone(e))),
                Node::Domain(_) => None,
            })
            .collect();
        let mut left = 0;
        for (id, exec) in execs {
            if !self.settle_one(avc, &exec, may_signal) {
                left += 1;
                continue;
            }
            if self.remove(&exec.dir).is_ok() || !exec.dir.exists() {
                {
                    let _guard = self.changes.lock().unwrap_or_else(PoisonError::into_inner);
                    self.publish(|n| {
                        n.remove(&id);
                    });
                }
                exec.close_guard(&self.guards);
            } else {
                left += 1;
            }
        }
        left
    }

    /// One exec: true once its cgroup is empty.
    fn settle_one(&self, avc: &Avc, x: &ExecInFlight, may_signal: &dyn Fn(Sid, Sid) -> bool) -> bool {
        let (exec, dir) = (&x.plan, &x.dir);
        let procs = members(dir);
        if procs.is_empty() {
            // Acquire: see `begin_exec`. Not yet entered: being made.
            return x.entered.load(Ordering::Acquire);
        }
        // Frozen first, executable second: once every thread is frozen in
        // user space no exec can commit any more, so the executable read
        // after it is final. (Read the other way round, an exec committing
        // between the two reads would look failed.)
        let frozen = is_frozen(dir);
        let in_domain = exec.from == exec.to;
        let committed = if in_domain {
            // An exec in its domain (crate::memory_guard): its image is
            // made non-dumpable whether it committed or failed, unless it
            // failed in a process of several threads (where the call would
            // land on one stopped anywhere), whose dumpability a failed
            // exec left as it was.
            frozen && thread_count(exec.tgid) == Some(1)
        } else if !image_of(exec.tgid).is_some_and(|now| exec.images.contains(&now)) {
            false
        } else if !exec.old_image.is_some_and(|old| exec.images.contains(&old)) {
            true
        } else {
            // The image it ran before: told by its memory map.
            // Once frozen: nothing changes the map any more.
            match exec.old_memory.as_ref().filter(|_| frozen).map(|old| old.outcome(exec.tgid)) {
                Some(Outcome::Committed) => true,
                Some(Outcome::Unknown) => {
                    kill_unsettled(exec.tgid, "whether its exec committed cannot be told (crate::same_image)");
                    return false;
                }
                Some(Outcome::Failed) | None => false,
            }
        };
        // Its injected calls run once it is in its new domain's cgroup,
        // which no guard may freeze meanwhile (crate::memory_guard): the
        // cgroup is pinned, unless a guard holds it frozen already. Then
        // a process whose pending signals are flushed (as it runs there)
        // waits; the others are reset before they move.
        let pin = if committed {
            let Ok(name) = label_dir_name(avc, &exec.to) else { return false };
            self.guards.pin(self.root.join(name))
        } else {
            None
        };
        if committed && exec.signals.signals && pin.is_none() {
            return false;
        }
        if committed && !in_domain && !exec.may_share {
            // A process another thread made sharing its working directory
            // after the exec was decided (crate::fs_sharing), which stays
            // old code: the new image must not run with it.
            if let Some(sharer) =
                members(dir).into_iter().find(|&m| m != exec.tgid && fs_sharing::same_fs(exec.tgid, m))
            {
                kill_unsettled(exec.tgid, &format!("it shares its working directory with pid {sharer}, old code"));
                return false;
            }
        }
        if committed && exec.at_secure {
            if !frozen {
                // Its stack is written only when the exec returns to user
                // space, where the freezer holds it: set AT_SECURE then.
                return false;
            }
            if let Err(e) = secure_exec::set_at_secure(exec.tgid) {
                // The new image must not run without it.
                kill_unsettled(exec.tgid, &format!("secure-execution mode, and AT_SECURE could not be set ({e})"));
                return false;
            }
        }
        if committed && !exec.limits.is_empty() {
            if !frozen {
                return false;
            }
            if let Err(e) = limits::apply(exec.tgid, &exec.limits) {
                // The old domain's limits must not reach the new one.
                kill_unsettled(exec.tgid, &format!("its resource limits could not be set ({e})"));
                return false;
            }
        }
        let signals = exec.signals;
        // Stopped while frozen, reset once thawed in its new domain.
        let mut stopped = None;
        if committed && !signals.is_empty() {
            if !frozen {
                return false;
            }
            match signal_state::stop(exec.tgid) {
                Ok(t) => stopped = Some(t),
                Err(e) => {
                    kill_unsettled(exec.tgid, &format!("its signal state could not be reset ({e})"));
                    return false;
                }
            }
        }
        if committed {
            // Before it runs (it cannot yet: frozen, or stopped above).
            // In its own domain its owners may keep it.
            let may_keep = |holder: u32| may_signal(self.domain_of(holder), exec.to.sid);
            let cleared = if in_domain { 0 } else { self.owners.clear(exec.tgid, || self.processes(), may_keep) };
            if cleared > 0 {
                eprintln!(
                    "rampartd: pid {} enters {}: {cleared} files lost it as their owner, their holders may not \
                     signal it there (docs/security.md)",
                    exec.tgid,
                    avc.context(exec.to.sid).unwrap_or("?"),
                );
            }
            match stopped {
                // Its new domain held frozen, nothing to flush: the calls
                // run here, the cgroup thawed while the process stays
                // stopped, and it moves (frozen there) before it is let go.
                Some(t) if pin.is_none() => {
                    // Any other process here is old code (a child another
                    // thread forked before the exec): back to the old
                    // domain first, frozen there while a guard keeps that
                    // domain out, so that the thaw lets this process alone
                    // run (crate::memory_guard).
                    let back = self.old_domain_dir(avc, x);
                    if let Ok(back) = &back {
                        send_back(dir, back, Some(exec.tgid));
                    }
                    if back.is_err() || members(dir).iter().any(|&p| p != exec.tgid) {
                        if let Err(e) = t.release() {
                            kill_unsettled(exec.tgid, &format!("it could not be let go before a retry ({e})"));
                        }
                        return false;
                    }
                    let _ = fs::write(dir.join("cgroup.freeze"), "0");
                    let moved = signal_state::reset_then(exec.tgid, t, signals, || {
                        self.enter_domain(avc, &exec.to, exec.tgid).inspect_err(|_| {
                            // Let go frozen here: settled next round.
                            let _ = fs::write(dir.join("cgroup.freeze"), "1");
                        })
                    });
                    if let Err(e) = moved {
                        eprintln!("rampartd: resetting pid {} and moving it into its new domain: {e}", exec.tgid);
                        return false;
                    }
                }
                stopped => {
                    if let Err(e) = self.enter_domain(avc, &exec.to, exec.tgid) {
                        eprintln!("rampartd: moving pid {} into its new domain: {e}", exec.tgid);
                        // Let go unchanged: still frozen here, settled next round.
                        if let Some(Err(e)) = stopped.map(|t| t.release()) {
                            kill_unsettled(exec.tgid, &format!("it could not be let go after a failed move ({e})"));
                        }
                        return false;
                    }
                    if let Some(t) = stopped {
                        if let Err(e) = signal_state::reset(exec.tgid, t, signals) {
                            kill_unsettled(exec.tgid, &format!("its signal state could not be reset ({e})"));
                        }
                    }
                }
            }
        } else if !frozen {
            // The exec may still commit: its thread has not come back.
            return false;
        }
        // Everything else left is old code: back to the old domain.
        let Ok(back) = self.old_domain_dir(avc, x) else { return false };
        send_back(dir, &back, None);
        members(dir).is_empty()
    }

    /// Where an exec's old code goes back to: its old domain's cgroup, or
    /// where it came from outside the tree.
    fn old_domain_dir(&self, avc: &Avc, x: &ExecInFlight) -> io::Result<PathBuf> {
        match (&x.origin, x.plan.from.is_default(self.default_sid)) {
            (Some(origin), true) => Ok(origin.clone()),
            _ => self.domain_dir(avc, &x.plan.from),
        }
    }

    fn remove(&self, dir: &Path) -> io::Result<()> {
        fs::remove_dir(dir)
    }

    /// At shutdown: settles what can be, thaws execs still in flight
    /// (nothing is enforced once the daemon is gone, and a frozen process
    /// would wait for the next one), and removes the cgroups no process is
    /// in (the tree too if it is then empty). Those with processes stay,
    /// with their parameters, for the next daemon.
    pub fn shutdown(&self, avc: &Avc) {
        if !self.enabled() {
            return;
        }
        // Coarser than the policy: every owner named is taken away.
        self.settle(avc, &|_, _| false);
        for node in self.nodes.load().values() {
            if let Node::Exec(x) = node {
                let _ = fs::write(x.dir.join("cgroup.freeze"), "0");
                x.close_guard(&self.guards);
            }
        }
        if let Ok(entries) = fs::read_dir(&self.root) {
            for e in entries.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) && members(&e.path()).is_empty() {
                    let _ = fs::remove_dir(e.path());
                }
            }
        }
        let _ = fs::remove_dir(&self.root);
    }
}

/// Moves every process of cgroup `dir` but `except` into `back`.
fn send_back(dir: &Path, back: &Path, except: Option<u32>) {
    for pid in members(dir).into_iter().filter(|&p| Some(p) != except) {
        if let Err(e) = move_process(back, pid) {
            if e.raw_os_error() != Some(libc::ESRCH) {
                eprintln!("rampartd: moving pid {pid} back to {}: {e}", back.display());
            }
        }
    }
}

/// Ends `pid`, whose exec into a new domain cannot start as the policy
/// says (`why`), as the kernel ends an exec that fails after its point of
/// no return.
fn kill_unsettled(pid: u32, why: &str) {
    eprintln!(
        "rampartd: killed pid {pid}: its exec into a new domain must start in the state the policy gives it: {why}"
    );
    // SAFETY: kill takes a pid and a signal number; the process is held
    // by this exec (frozen in its cgroup, or stopped by this thread).
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
}

fn encode_exec(e: &ExecInFlight, avc: &Avc) -> String {
    let ctx = |s: Sid| avc.context(s).unwrap_or("").to_owned();
    let p = &e.plan;
    let mut out = format!("from {}\nto {}\ntgid {}\ntid {}\n", ctx(p.from.sid), ctx(p.to.sid), p.tgid, p.tid);
    // The profiles as directory names carry them: hex, so any name fits
    // on one line.
    for (key, label) in [("from_aa", &p.from), ("to_aa", &p.to)] {
        if let Some(name) = label.apparmor.as_deref().and_then(|a| subject_label::dir_name("x", Some(a), false).ok()) {
            out.push_str(&format!("{key} {name}\n"));
        }
    }
    for (key, label) in [("from_so", &p.from), ("to_so", &p.to)] {
        if label.opens_supervised {
            out.push_str(&format!("{key} 1\n"));
        }
    }
    for (dev, ino) in &p.images {
        out.push_str(&format!("image {dev} {ino}\n"));
    }
    if let Some(old) = &p.old_memory {
        let layout: Vec<String> = old.layout.iter().map(u64::to_string).collect();
        out.push_str(&format!("layout {}\n", layout.join(" ")));
        let random: String = old.random.iter().map(|b| format!("{b:02x}")).collect();
        out.push_str(&format!("random {random}\n"));
    }
    if let Some((dev, ino)) = p.old_image {
        out.push_str(&format!("old {dev} {ino}\n"));
    }
    if let Some(o) = &e.origin {
        out.push_str(&format!("origin {}\n", o.display()));
    }
    if !p.at_secure {
        out.push_str("noatsecure 1\n");
    }
    if !p.signals.signals {
        out.push_str("siginh 1\n");
    }
    if p.may_share {
        out.push_str("share 1\n");
    }
    if !p.signals.parent_death {
        out.push_str("pdeath_keep 1\n");
    }
    if !p.signals.undumpable {
        out.push_str("dumpable 1\n");
    }
    out.push_str(&format!("limits_reset {}\n", p.limits.reset_soft));
    for (r, max) in &p.limits.lower_hard {
        out.push_str(&format!("limits_max {r} {max}\n"));
    }
    out
}

fn decode_exec(bytes: &[u8], dir: &Path, avc: &Avc) -> Option<ExecInFlight> {
    let text = std::str::from_utf8(bytes).ok()?;
    let (mut from, mut to, mut tgid, mut tid) = (None, None, None, None);
    let (mut from_aa, mut to_aa) = (None, None);
    let (mut from_so, mut to_so) = (false, false);
    let profile = |rest: &str| subject_label::parse_dir_name(rest).and_then(|n| n.profile).map(Arc::<str>::from);
    let (mut images, mut old_image, mut origin) = (Vec::new(), None, None);
    let (mut layout, mut random) = (None, None);
    // Without the line (an older daemon's record): the safe side.
    let mut at_secure = true;
    // Without the lines (an older daemon's record): the safe side.
    let mut signals = SignalReset { signals: true, parent_death: true, undumpable: true };
    // Without the line (an older daemon's record): every soft limit reset.
    let mut limits = LimitChange { reset_soft: LimitChange::ALL, ..LimitChange::default() };
    // Without the line: the safe side.
    let mut may_share = false;
    let id = |rest: &str| -> Option<FileId> {
        let (d, i) = rest.split_once(' ')?;
        Some((d.parse().ok()?, i.parse().ok()?))
    };
    for line in text.lines() {
        let (key, rest) = line.split_once(' ')?;
        match key {
            "from" => from = avc.intern(rest).ok(),
            "from_aa" => from_aa = Some(profile(rest)?),
            "to_aa" => to_aa = Some(profile(rest)?),
            "from_so" => from_so = true,
            "to_so" => to_so = true,
            "to" => to = avc.intern(rest).ok(),
            "tgid" => tgid = rest.parse().ok(),
            "tid" => tid = rest.parse().ok(),
            "image" => images.push(id(rest)?),
            "old" => old_image = Some(id(rest)?),
            "layout" => {
                let words: Vec<u64> = rest.split(' ').map(str::parse).collect::<Result<_, _>>().ok()?;
                layout = Some(words.try_into().ok()?);
            }
            "random" => {
                let bytes: Vec<u8> = (0..rest.len())
                    .step_by(2)
                    .map(|i| rest.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()))
                    .collect::<Option<_>>()?;
                random = Some(bytes.try_into().ok()?);
            }
            "origin" => origin = Some(PathBuf::from(rest)),
            "noatsecure" => at_secure = false,
            "siginh" => signals.signals = false,
            "share" => may_share = true,
            "pdeath_keep" => signals.parent_death = false,
            "dumpable" => signals.undumpable = false,
            "limits_reset" => limits.reset_soft = rest.parse().ok()?,
            "limits_max" => {
                let (r, max) = rest.split_once(' ')?;
                limits.cap(r.parse().ok()?, max.parse().ok()?);
            }
            _ => {}
        }
    }
    let from = Label { sid: from?, apparmor: from_aa, opens_supervised: from_so };
    let to = Label { sid: to?, apparmor: to_aa, opens_supervised: to_so };
    // Not a line of its own: a secure exec caps its stack (crate::limits).
    limits.secure_exec = at_secure;
    let old_memory = layout.zip(random).map(|(layout, random)| OldMemory { layout, random });
    let plan = ExecPlan {
        from,
        to,
        tgid: tgid?,
        tid: tid?,
        images,
        old_image,
        old_memory,
        at_secure,
        limits,
        signals,
        may_share,
    };
    // Found at startup: whatever was to enter it did (or never will).
    Some(ExecInFlight::new(dir.to_path_buf(), plan, origin, true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rampart_avc::{AvcConfig, NullSink};

    fn avc() -> Avc {
        let policy = rampart_policy::Policy::from_bytes(crate::daemon::APPARMOR_ALONE_POLICY).unwrap();
        let config = AvcConfig::new(Arc::new(policy), crate::access::mapping().unwrap(), Arc::new(NullSink));
        Avc::new(config).unwrap()
    }

    #[test]
    fn an_exec_in_flight_reads_back_as_it_was_written() {
        let avc = avc();
        let sid = avc.intern("system_u:system_r:unconfined_t").unwrap();
        let label = |profile: Option<&str>| Label { sid, apparmor: profile.map(Arc::from), opens_supervised: false };
        let mut limits = LimitChange { reset_soft: 1 << 4, ..LimitChange::default() };
        limits.cap(7, 100);
        let plan = ExecPlan {
            from: label(None),
            to: label(Some("a//b")),
            tgid: 42,
            tid: 43,
            images: vec![(1, 2)],
            old_image: Some((1, 3)),
            old_memory: Some(OldMemory { layout: [1, 2, 3, 4, 5, 6, 7, 8, 9, u64::MAX], random: [0xa5; 16] }),
            at_secure: false,
            limits: limits.clone(),
            signals: SignalReset { signals: false, parent_death: false, undumpable: false },
            may_share: true,
        };
        let x = ExecInFlight::new(PathBuf::from("/x"), plan, None, true);
        let text = encode_exec(&x, &avc);
        let back = decode_exec(text.as_bytes(), Path::new("/x"), &avc).unwrap();
        assert_eq!(back.plan.limits, limits);
        assert!(!back.plan.at_secure);
        assert_eq!(back.plan.signals, SignalReset { signals: false, parent_death: false, undumpable: false });
        assert_eq!((back.plan.tgid, back.plan.tid, back.plan.old_image), (42, 43, Some((1, 3))));
        assert_eq!(back.plan.old_memory, x.plan.old_memory);
        assert_eq!(back.plan.to.apparmor.as_deref(), Some("a//b"));
        assert!(back.plan.may_share);
        // An older daemon's record, without the lines: the safe side.
        let older: String = text
            .lines()
            .filter(|l| {
                !l.starts_with("limits_")
                    && !["noatsecure 1", "siginh 1", "pdeath_keep 1", "dumpable 1", "share 1"].contains(l)
            })
            .map(|l| format!("{l}\n"))
            .collect();
        let back = decode_exec(older.as_bytes(), Path::new("/x"), &avc).unwrap();
        assert_eq!(back.plan.limits.reset_soft, LimitChange::ALL);
        assert!(back.plan.at_secure && back.plan.limits.secure_exec);
        assert_eq!(back.plan.signals, SignalReset { signals: true, parent_death: true, undumpable: true });
        assert!(!back.plan.may_share);
    }
}
