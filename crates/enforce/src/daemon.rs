//! The daemon's lifecycle: load, mark, serve, reload, shut down.
//!
//! Threads:
//! * **responders** (`threads`, default 2; [`crate::responder`]): each
//!   reads the fanotify groups and answers what it read, so events of
//!   different processes are decided in parallel without a hand-off on
//!   the way to the answer. `pollers` of them (one by default) wait on
//!   the groups; the others are woken when events queue up.
//! * **housekeeper**: settles exec transitions in flight (woken when one
//!   starts, then every millisecond while there are some:
//!   [`crate::cgroups`]), drops exec
//!   requests of processes that are gone, closes retired groups, and
//!   keeps the event rate.
//! * **control**: the socket server ([`crate::control`]).
//! * **audit writer**: the [`AsyncSink`]'s thread; the responders only
//!   enqueue, so a slow or full log never holds an answer.
//! * the calling thread waits for SIGTERM/SIGINT (stop) and SIGHUP
//!   (reload), and reports overload answers on stderr
//!   ([`crate::overload_notice`]).
//!
//! Shutdown answers every event already read, then closes the group: the
//! kernel then allows every event still queued (fail-open). A daemon
//! killed outright gets the same from the kernel when its descriptor
//! closes: processes are never left blocked, and nothing is enforced
//! until it starts again (see docs/architecture.md, "Failure and restart").

use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::os::unix::thread::JoinHandleExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rampart_apparmor::{LiveProfiles, Mode, ProfileSet};
use rampart_avc::audit::{AsyncConfig, AsyncSink, FileSink, LineFormat, StderrSink};
use rampart_avc::{AuditInfo, AuditSink, Avc, AvcConfig, Perms, Sid};
use rampart_label::{FileContexts, ObjectLabeler, SpecFiles};
use rampart_policy::Policy;

use crate::access::{mapping, Classes};
use crate::apparmor::AppArmor;
use crate::apparmor_log::AppArmorLog;
use crate::calls_in_flight::Journal;
use crate::cgroups::Cgroups;
use crate::config::DaemonConfig;
use crate::control::{
    AppArmorStatus, Caller, ConfinedProcess, ControlHandler, ControlServer, ExecGrant, Request, Status, Supervised,
    PERMISSION_DENIED,
};
use crate::device_access::DeviceNodes;
use crate::enforcer::Enforcer;
use crate::groups::Groups;
use crate::marked_fs::MarkedFilesystems;
use crate::marks::{InScope, ProfileInScope};
use crate::objects::{security_context, unlabeled_context, ObjectSids};
use crate::overload_notice::OverloadNotice;
use crate::own_threads;
use crate::procs::ExecRequest;
use crate::responder::{self, Role};
use crate::sandbox::Forbidden;
use crate::supervisor::{self, Supervisor};

const HOUSEKEEPING: Duration = Duration::from_millis(500);
/// While an exec transition is in flight: its new image waits, frozen,
/// until the housekeeper has seen it commit.
const SETTLING: Duration = Duration::from_millis(1);
const REAP_EVERY: Duration = Duration::from_secs(5);
/// How often overload answers are reported ([`crate::overload_notice`]).
const NOTICE_EVERY: Duration = Duration::from_secs(1);

/// Why the daemon could not start.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error("{0}")]
    Setup(String),
    #[error("{what}: {source}")]
    Io { what: String, source: io::Error },
}

fn io_err(what: impl Into<String>) -> impl FnOnce(io::Error) -> DaemonError {
    let what = what.into();
    move |source| DaemonError::Io { what, source }
}

/// The running daemon's state, shared with the control thread.
pub struct Daemon {
    pub enforcer: Arc<Enforcer>,
    config: DaemonConfig,
    /// `None`: AppArmor alone (`--no-selinux`), under the built-in
    /// allow-all policy ([`APPARMOR_ALONE_POLICY`]).
    policy_path: Option<PathBuf>,
    started: Instant,
    /// (time, events) at the last rate sample, and the rate.
    rate: Mutex<(Instant, u64, f64)>,
    seqno: AtomicU64,
    /// Serves the supervised calls of launched processes; started with
    /// the first listener (crate::supervisor).
    supervisor: Mutex<Option<Arc<Supervisor>>>,
    /// Where the supervisor writes down its calls in flight, in the
    /// service manager's store (crate::calls_in_flight); `None` without
    /// a store.
    journal: Option<Arc<Journal>>,
}

/// Loads the AppArmor profiles; files that fail to compile are reported
/// and skipped, as the init scripts do.
fn load_apparmor(source: &rampart_apparmor::Source) -> Result<LiveProfiles, String> {
    let live = LiveProfiles::load(source.clone()).map_err(|e| format!("--apparmor: {e}"))?;
    report_apparmor(&live.current());
    Ok(live)
}

fn report_apparmor(set: &ProfileSet) {
    for f in &set.failures {
        eprintln!("rampartd: apparmor: {f}");
    }
}

/// The profile set's counts, and the processes of `confined` (pid,
/// profile) with their profiles' modes.
fn apparmor_status(live: &LiveProfiles, confined: Vec<(u32, String)>) -> AppArmorStatus {
    let set = live.current();
    let c = set.mode_counts();
    let mode = |name: &str| match set.policy.profile(name).map(|p| p.mode) {
        Some(Mode::Enforce | Mode::User) => "enforce",
        Some(Mode::Complain) => "complain",
        Some(Mode::Kill) => "kill",
        Some(Mode::Unconfined) => "unconfined",
        None => "unknown",
    };
    let processes = confined
        .into_iter()
        .map(|(pid, profile)| ConfinedProcess { pid, mode: mode(&profile).to_owned(), profile })
        .collect();
    AppArmorStatus {
        dir: live.source().dir.display().to_string(),
        profiles: set.policy.profiles().count() as u64,
        enforce: c.enforce as u64,
        complain: c.complain as u64,
        kill: c.kill as u64,
        unconfined: c.unconfined as u64,
        failed_files: set.failures.len() as u64,
        disabled_files: set.disabled.len() as u64,
        processes,
    }
}

/// The SELinux policy of a daemon that runs AppArmor alone
/// (`--no-selinux`): one domain allowed everything, so every SELinux
/// check passes and writes nothing (data/apparmor-alone.conf, compiled
/// with checkpolicy).
pub const APPARMOR_ALONE_POLICY: &[u8] = include_bytes!("../data/apparmor-alone.33");
/// Its only context, every process's and every file's.
pub const APPARMOR_ALONE_CONTEXT: &str = "system_u:system_r:unconfined_t";

/// Labels the machine's device nodes and gives every domain its device
/// program again (crate::device_access); a domain it fails for keeps
/// the program it had, said on stderr.
fn label_devices(e: &Enforcer) {
    // One scan at a time, stored in order: a scan under the old
    // file_contexts must not land after a reload's.
    static SCANNING: Mutex<()> = Mutex::new(());
    let _scanning = SCANNING.lock().unwrap_or_else(PoisonError::into_inner);
    let nodes = DeviceNodes::scan(&e.classes, &|fd, md| e.objects.sid_of(&e.avc, fd, md), e.apparmor.clone());
    for failure in e.cgroups.set_devices(&e.avc, nodes) {
        eprintln!("rampartd: {failure}");
    }
}

/// The policy at `path`, or the built-in one (AppArmor alone).
fn load_policy(path: Option<&Path>) -> Result<Policy, String> {
    match path {
        Some(path) => Policy::from_file(path).map_err(|e| format!("{}: {e}", path.display())),
        None => Policy::from_bytes(APPARMOR_ALONE_POLICY).map_err(|e| format!("the built-in policy: {e}")),
    }
}

/// The file_contexts (none when AppArmor runs alone: every file gets the
/// policy's one context).
fn load_contexts(config: &DaemonConfig, policy: &Policy) -> Result<FileContexts, String> {
    let files = match &config.file_contexts {
        _ if !config.selinux => SpecFiles { files: Vec::new(), subs_dist: None, subs: None },
        Some(p) => SpecFiles::from_base(p),
        None => SpecFiles::system(),
    };
    FileContexts::load(&files, policy).map_err(|e| format!("file_contexts: {e}"))
}

/// What the daemon says it loaded: the policy file, or that there is
/// none.
fn policy_name(path: Option<&Path>) -> String {
    path.map_or_else(|| "none (AppArmor alone: --no-selinux)".into(), |p| p.display().to_string())
}

/// `path` must be a mount point: the daemon marks the whole filesystem
/// it names, and a path inside `/` would silently mark the root
/// filesystem.
fn check_mount_point(path: &Path) -> Result<(), DaemonError> {
    let md = std::fs::metadata(path).map_err(io_err(format!("--mark {}", path.display())))?;
    let parent = path.join("..");
    let pmd = std::fs::metadata(&parent).map_err(io_err(format!("--mark {}", parent.display())))?;
    if md.dev() == pmd.dev() && md.ino() != pmd.ino() {
        return Err(DaemonError::Setup(format!(
            "--mark {}: not a mount point; rampart enforces on whole filesystems, so give a mount's root \
             (see findmnt -T {})",
            path.display(),
            path.display()
        )));
    }
    Ok(())
}

impl Daemon {
    /// Loads everything and builds the enforcer; marks nothing yet.
    pub fn new(config: DaemonConfig, groups: Groups) -> Result<Daemon, DaemonError> {
        let policy_path = match &config.policy {
            _ if !config.selinux => None,
            Some(p) => Some(p.clone()),
            None => Some(rampart_policy::default_policy_path().map_err(|e| DaemonError::Setup(e.to_string()))?),
        };
        let policy = Arc::new(load_policy(policy_path.as_deref()).map_err(DaemonError::Setup)?);
        let parsed = policy
            .parse_context(&config.default_context)
            .map_err(|e| DaemonError::Setup(format!("--default-context {}: {e}", config.default_context)))?;
        if !policy.context_is_valid(&parsed) {
            return Err(DaemonError::Setup(format!(
                "--default-context {}: not a valid context in {}",
                config.default_context,
                policy_name(policy_path.as_deref())
            )));
        }
        let contexts = load_contexts(&config, &policy).map_err(DaemonError::Setup)?;
        let sink: Arc<dyn AuditSink> = match &config.audit_log {
            Some(path) => {
                let file = FileSink::open(path, LineFormat::Auditd)
                    .map_err(io_err(format!("--audit-log {}", path.display())))?;
                Arc::new(AsyncSink::new(file, AsyncConfig::default()).map_err(io_err("audit writer thread"))?)
            }
            None => Arc::new(
                AsyncSink::new(StderrSink::new(LineFormat::Dmesg), AsyncConfig::default())
                    .map_err(io_err("audit writer thread"))?,
            ),
        };
        let map = mapping().map_err(|e| DaemonError::Setup(e.to_string()))?;
        let classes = Classes::new(&map).ok_or_else(|| DaemonError::Setup("file classes missing".into()))?;
        let mut avc_config = AvcConfig::new(Arc::clone(&policy), map, sink);
        avc_config.enforcing = !config.permissive;
        let avc = Arc::new(
            Avc::new(avc_config)
                .map_err(|e| DaemonError::Setup(format!("{}: {e}", policy_name(policy_path.as_deref()))))?,
        );
        for domain in &config.permissive_domains {
            avc.set_permissive_domain(domain, true)
                .map_err(|e| DaemonError::Setup(format!("permissive domain {domain}: {e}")))?;
        }
        let default_sid = avc.intern(&config.default_context).map_err(|e| DaemonError::Setup(e.to_string()))?;
        let unlabeled = avc.intern(&unlabeled_context(&policy)).map_err(|e| DaemonError::Setup(e.to_string()))?;
        let objects = ObjectSids::new(&avc, Arc::new(ObjectLabeler::new(Arc::new(contexts))), unlabeled);
        let cgroups = Cgroups::open(&config.cgroup, &avc, default_sid, unlabeled).map_err(DaemonError::Setup)?;
        let apparmor = match &config.apparmor {
            Some(source) => {
                let profiles = load_apparmor(source).map_err(DaemonError::Setup)?;
                let what = config.audit_log.as_ref().map_or("standard error".into(), |p| p.display().to_string());
                let log = AppArmorLog::open(config.audit_log.as_deref())
                    .map_err(io_err(format!("AppArmor audit records to {what}")))?;
                Some(Arc::new(AppArmor::new(profiles, log)))
            }
            None => None,
        };
        let enforcer =
            Enforcer::new(avc, classes, objects, groups, cgroups, default_sid, config.ignore_marks, apparmor);
        label_devices(&enforcer);
        Ok(Daemon {
            enforcer: Arc::new(enforcer),
            config,
            policy_path,
            started: Instant::now(),
            rate: Mutex::new((Instant::now(), 0, 0.0)),
            seqno: AtomicU64::new(1),
            supervisor: Mutex::new(None),
            journal: None,
        })
    }

    /// The AppArmor profile an exec request may enter: a loaded profile;
    /// a caller already under one may only keep it (label changes are
    /// not yet supported: docs/security.md).
    fn exec_profile<'a>(
        &self,
        caller: &crate::enforcer::Subject,
        asked: Option<&'a str>,
    ) -> Result<Option<&'a str>, String> {
        let Some(name) = asked else { return Ok(None) };
        let Some(apparmor) = &self.enforcer.apparmor else {
            return Err(format!(
                "--apparmor {name}: rampartd runs without AppArmor profiles; start it with --apparmor [DIR]"
            ));
        };
        if !apparmor.exists(name) {
            return Err(format!(
                "--apparmor {name}: no such AppArmor profile is loaded (see rampart apparmor status; \
                 profiles load from {})",
                apparmor.profiles.source().dir.display()
            ));
        }
        match caller.apparmor.as_deref() {
            Some(own) if own != name => Err(format!(
                "--apparmor {name}: the caller runs under the AppArmor profile {own}; changing it is not yet \
                 supported (docs/security.md)"
            )),
            _ => Ok(Some(name)),
        }
    }

    /// The AppArmor profiles, if the daemon runs them.
    fn apparmor(&self) -> Option<&LiveProfiles> {
        self.enforcer.apparmor.as_ref().map(|a| &a.profiles)
    }

    fn flush_marks(&self) -> Result<(), String> {
        let _scope = self.enforcer.scope_changes.lock().unwrap_or_else(PoisonError::into_inner);
        // Names matter while a process runs under a profile or is about
        // to (crate::marks); the flush below follows the change.
        let e = &self.enforcer;
        let mut profiles = e.cgroups.apparmor_profiles();
        for p in e.requests.profiles() {
            ProfileInScope::merge_into(&mut profiles, p);
        }
        e.marks.set_profiles(profiles);
        let mut scope = Vec::new();
        for d in self.enforcer.cgroups.domains().into_iter().chain(self.enforcer.requests.domains()) {
            InScope::merge_into(&mut scope, d);
        }
        self.enforcer.marks.flush(Some(scope)).map_err(|e| format!("flushing ignore marks: {e}"))
    }

    fn sample_rate(&self) {
        let events = self.enforcer.counters.events.load(Ordering::Relaxed);
        let mut r = self.rate.lock().unwrap_or_else(PoisonError::into_inner);
        let secs = r.0.elapsed().as_secs_f64();
        if secs >= 1.0 {
            *r = (Instant::now(), events, (events - r.1) as f64 / secs);
        }
    }
}

impl Daemon {
    /// The directories whose files decide what the daemon loads: the
    /// policy's, every file_contexts file's, `/etc/selinux` where the
    /// system's are used (its `config` names the policy type), and the
    /// AppArmor profile directory and cache. Canonical, none beneath
    /// another.
    fn protected_dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = Vec::new();
        if let Some(policy) = &self.policy_path {
            let mut files = vec![policy.clone()];
            let specs = match &self.config.file_contexts {
                Some(p) => SpecFiles::from_base(p),
                None => SpecFiles::system(),
            };
            files.extend(specs.files.iter().map(|(p, _)| p.clone()));
            files.extend(specs.subs_dist.iter().chain(&specs.subs).cloned());
            dirs.extend(files.iter().filter_map(|f| f.parent()).filter_map(|d| d.canonicalize().ok()));
            if self.config.policy.is_none() || self.config.file_contexts.is_none() {
                dirs.push(PathBuf::from("/etc/selinux"));
            }
        }
        // the AppArmor profiles and their compiled cache (trusted on load)
        if let Some(live) = self.apparmor() {
            let s = live.source();
            dirs.extend([&s.dir, &s.cache].into_iter().filter_map(|d| d.canonicalize().ok()));
        }
        dirs.sort();
        dirs.dedup();
        let all = dirs.clone();
        dirs.retain(|d| !all.iter().any(|other| other != d && d.starts_with(other)));
        dirs
    }

    /// What domain `sid` may do to no object of any type, and whether it
    /// may write every type (crate::sandbox::Forbidden): nothing while it,
    /// or the daemon, is permissive.
    fn forbidden_everywhere(&self, sid: Sid) -> Vec<Forbidden> {
        let e = &self.enforcer;
        let (policy, bools, enforcing) = e.avc.policy_state();
        let Some(s) = e.avc.context(sid).and_then(|c| policy.parse_context(c).ok()) else { return Vec::new() };
        if !enforcing || policy.is_permissive(s.ty) {
            return Vec::new();
        }
        // How many types grant `perm` of `class`, and of how many (a
        // permission the policy does not define: no claim, all).
        let granted_on = |class: &str, perm: &str| {
            let types = policy.types.iter().enumerate().filter(|(_, t)| !t.attribute);
            let Some((c, bit)) = policy.class_by_name(class).and_then(|c| Some((c, policy.perm_bit(c, perm)?))) else {
                let n = types.count();
                return (n, n);
            };
            types.fold((0, 0), |(granted, all), (i, _)| {
                let target = rampart_policy::Context { ty: rampart_policy::TypeId(i as u32 + 1), ..s.clone() };
                (granted + usize::from(policy.compute_av(&bools, &s, &target, c).allowed & bit != 0), all + 1)
            })
        };
        // Whether some rule grants `perm` of `class` (`None`: any of its
        // permissions) on some type, from the rules alone (constraints
        // can only deny more); a class or permission the policy does not
        // define: no claim, true.
        let granted_somewhere = |class: &str, perm: Option<&str>| {
            let Some(c) = policy.class_by_name(class) else { return true };
            match perm.map(|p| policy.perm_bit(c, p)) {
                None => policy.grants_some(&bools, s.ty, c, u32::MAX),
                Some(Some(bit)) => policy.grants_some(&bools, s.ty, c, bit),
                Some(None) => true,
            }
        };
        let mut forbid = Vec::new();
        let (writable, types) = granted_on("file", "write");
        if writable == 0 {
            forbid.push(Forbidden::Truncate);
        }
        if writable < types {
            forbid.push(Forbidden::TruncateByName);
        }
        if !granted_somewhere("dir", Some("remove_name")) {
            forbid.push(Forbidden::Unlink);
        }
        if !granted_somewhere("file", Some("setattr")) && !granted_somewhere("dir", Some("setattr")) {
            forbid.push(Forbidden::Setattr);
        }
        // System V IPC (crate::sysv_ipc: SELinux checks the class at every
        // call on an object) and anonymous inodes (crate::anon_inodes: at
        // their making).
        let classes = [
            ("shm", Forbidden::Shm),
            ("sem", Forbidden::Sem),
            ("msgq", Forbidden::Msg),
            ("anon_inode", Forbidden::AnonInode),
        ];
        for (class, forbidden) in classes {
            if !granted_somewhere(class, None) {
                forbid.push(forbidden);
            }
        }
        // Abstract Unix names: the daemon makes every connect to one, and
        // the kernel refuses the process the rest outside its sandbox
        // (crate::unix_connects).
        forbid.push(Forbidden::AbstractUnix);
        forbid
    }

    /// Whether a SIGHUP from process `pid` may reload the policy: as a
    /// `reload` request, `security { load_policy }` for the sender's
    /// domain (audited). A sender that cannot be identified any more (it
    /// exited; 0: the kernel or another pid namespace) is not obeyed.
    fn may_reload_on_signal(&self, pid: libc::pid_t) -> Result<(), String> {
        let pid = u32::try_from(pid).ok().filter(|&p| p > 0).ok_or("the sender cannot be identified")?;
        let info = crate::pidfd::pidfd_open(pid)
            .and_then(|fd| crate::pidfd::process_info(std::os::fd::AsFd::as_fd(&fd)))
            .map_err(|e| format!("the sender cannot be identified ({e})"))?;
        let caller = Caller { pid: info.pid, euid: info.euid, cgroup_id: info.cgroup_id };
        let subject = self.enforcer.subject_in(caller.pid, caller.cgroup_id);
        self.check_security(&caller, subject.sid, self.enforcer.classes.load_policy, "load a policy")
    }

    /// The `security` check of `op` for `caller`'s domain, audited like
    /// the kernel's (`tclass=security`).
    fn check_security(&self, caller: &Caller, subject: Sid, perm: Perms, op: &str) -> Result<(), String> {
        let e = &self.enforcer;
        let (policy, _, _) = e.avc.policy_state();
        let target = e.avc.intern(&security_context(&policy)).map_err(|err| err.to_string())?;
        let decision = e.avc.has_perm_noaudit(subject, target, e.classes.security, perm);
        if !decision.audited().is_empty() {
            let info = AuditInfo {
                pid: Some(caller.pid),
                comm: crate::pidfd::comm(caller.pid),
                path: None,
                extra: Vec::new(),
            };
            e.avc.audit_decision(subject, target, e.classes.security, &decision, &info);
        }
        if decision.passes() {
            return Ok(());
        }
        let perm_name = e.avc.mapping().perm_names(e.classes.security, perm).join(" ");
        Err(format!(
            "permission denied: {} may not {op} (the policy denies {{ {perm_name} }} security)",
            e.avc.context(subject).unwrap_or("?")
        ))
    }
}

impl ControlHandler for Daemon {
    /// Root only, and then as the kernel checks the same operation for the
    /// caller's domain: `security { setenforce }`, `{ setbool }`,
    /// `{ load_policy }` for a reload; `exec-context` needs the path of
    /// the program (its transition is checked against it: `process
    /// setexec`, `transition`, `entrypoint` in `set_exec_context`), and
    /// `force` only from the default domain (a confined domain never
    /// skips its checks). `status` and `labels-changed` (which only makes
    /// the daemon read labels again) are open to root in any domain.
    fn authorize(&self, request: &Request, caller: &Caller) -> Result<(), String> {
        if caller.euid != 0 {
            return Err(PERMISSION_DENIED.into());
        }
        let e = &self.enforcer;
        let subject = e.subject_in(caller.pid, caller.cgroup_id);
        if subject.exec.is_some() {
            return Err("the caller is in the middle of an exec transition; try again".into());
        }
        let c = &e.classes;
        match request {
            Request::Status | Request::LabelsChanged => Ok(()),
            Request::SetEnforce { .. } => self.check_security(caller, subject.sid, c.setenforce, "setenforce"),
            Request::SetBool { .. } => self.check_security(caller, subject.sid, c.setbool, "set booleans"),
            Request::Reload => self.check_security(caller, subject.sid, c.load_policy, "load a policy"),
            Request::ExecContext { force: true, .. } if subject.sid != e.default_sid => Err(format!(
                "permission denied: --force skips the policy's checks, which only the default domain may do; \
                 {} is confined",
                e.avc.context(subject.sid).unwrap_or("?")
            )),
            Request::ExecContext { force: false, path: None, .. } => {
                Err("exec-context needs the path of the program that will be executed (its transition and \
                 entrypoint are checked against it)"
                    .into())
            }
            Request::ExecContext { .. } => Ok(()),
        }
    }

    fn status(&self) -> Status {
        let c = &self.enforcer.counters;
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let stats = self.enforcer.avc.stats().total();
        let (_, _, enforcing) = self.enforcer.avc.policy_state();
        Status {
            mode: if enforcing { "enforcing" } else { "permissive" }.into(),
            policy: policy_name(self.policy_path.as_deref()),
            policy_seqno: self.enforcer.avc.seqno(),
            events_per_second: self.rate.lock().unwrap_or_else(PoisonError::into_inner).2,
            queue_depth: load(&c.in_flight),
            allowed: load(&c.allowed),
            denied: load(&c.denied),
            permissive_denials: load(&c.permissive_denials),
            overloaded: load(&c.overloaded),
            tracked_processes: self.enforcer.cgroups.process_count() as u64,
            ignore_marks: self.enforcer.marks.placed(),
            decided_without_path: load(&c.without_path),
            marked_devices: self.marked_filesystems().devices().iter().copied().map(device_name).collect(),
            protected_dirs: self.protected_dirs(),
            supervised_opens: self.config.supervised_opens,
            avc_lookups: stats.lookups,
            avc_hits: stats.hits,
            avc_misses: stats.misses,
            uptime_seconds: self.started.elapsed().as_secs_f64(),
            apparmor: self.apparmor().map(|a| Box::new(apparmor_status(a, self.enforcer.cgroups.apparmor_processes()))),
        }
    }

    fn set_enforcing(&self, enforcing: bool) -> Result<(), String> {
        self.enforcer.avc.set_enforcing(enforcing);
        // A permissive daemon's domains hold no device program.
        label_devices(&self.enforcer);
        self.flush_marks()
    }

    /// The AppArmor profiles first (unchanged files from the cache): if
    /// they cannot be read, nothing changes; then the SELinux policy.
    fn reload(&self) -> Result<u64, String> {
        if let Some(live) = self.apparmor() {
            let set = live.reload().map_err(|e| format!("AppArmor profiles: {e}"))?;
            report_apparmor(&set);
        }
        let Some(path) = &self.policy_path else {
            // AppArmor alone: the profiles were all there was to reload.
            label_devices(&self.enforcer);
            self.flush_marks()?;
            return Ok(self.enforcer.avc.seqno());
        };
        let policy = Arc::new(load_policy(Some(path))?);
        let contexts = load_contexts(&self.config, &policy)?;
        let seqno = self.enforcer.avc.load_policy(Arc::clone(&policy)).map_err(|e| e.to_string())?;
        let unlabeled = self.enforcer.avc.intern(&unlabeled_context(&policy)).map_err(|e| e.to_string())?;
        self.enforcer.objects.replace(&self.enforcer.avc, Arc::new(ObjectLabeler::new(Arc::new(contexts))), unlabeled);
        label_devices(&self.enforcer);
        self.flush_marks()?;
        self.seqno.store(seqno, Ordering::Relaxed);
        Ok(seqno)
    }

    fn set_boolean(&self, name: &str, value: bool) -> Result<u64, String> {
        let seqno = self.enforcer.avc.set_booleans(&[(name, value)]).map_err(|e| e.to_string())?;
        label_devices(&self.enforcer);
        self.flush_marks()?;
        Ok(seqno)
    }

    fn set_exec_context(&self, pid: u32, context: &str, force: bool, path: Option<&str>) -> Result<ExecGrant, String> {
        self.set_exec_labels(pid, Some(context), None, force, path, Supervised::default())
    }

    fn set_exec_labels(
        &self,
        pid: u32,
        context: Option<&str>,
        apparmor: Option<&str>,
        force: bool,
        path: Option<&str>,
        supervised: Supervised,
    ) -> Result<ExecGrant, String> {
        let e = &self.enforcer;
        if context.is_some() && self.policy_path.is_none() {
            return Err("rampartd runs AppArmor alone (--no-selinux): there is no SELinux context to enter; \
                        start the program under a profile with rampart run --apparmor PROFILE"
                .into());
        }
        if let Some(context) = context {
            let (policy, _, _) = e.avc.policy_state();
            let parsed = policy.parse_context(context).map_err(|err| format!("invalid context {context}: {err}"))?;
            if !policy.context_is_valid(&parsed) {
                return Err(format!("invalid context {context}: not valid in the loaded policy"));
            }
        }
        if !e.cgroups.enabled() {
            return Err("rampartd runs without a cgroup v2 hierarchy: it cannot keep a process in a domain".into());
        }
        let caller = e.subject_of_process(pid).map_err(|err| format!("cannot identify the caller: {err}"))?;
        if !supervised.calls && !caller.launched {
            // No filter (`rampart run --no-sandbox`): what it starts may
            // share a working directory unseen.
            crate::fs_sharing::note_clone();
        }
        if caller.exec.is_some() {
            return Err("the caller is in the middle of an exec transition".into());
        }
        let subject = caller.sid;
        let sid = match context {
            Some(context) => e.avc.intern(context).map_err(|err| err.to_string())?,
            None => subject,
        };
        let apparmor = self.exec_profile(&caller, apparmor)?;
        if !force {
            let d = e.avc.has_perm_noaudit(subject, subject, e.classes.process, e.classes.setexec);
            if !d.passes() {
                return Err(format!(
                    "permission denied: {} may not set an exec context (process setexec)",
                    e.avc.context(subject).unwrap_or("?")
                ));
            }
        }
        // Opens are supervised if the launcher says its filter hands them
        // over and it runs in the default domain (a launcher inside a
        // domain runs under its domain's filters, whose listener serves
        // what it starts too: then as its domain).
        let opens_supervised =
            if caller.launched { caller.opens_supervised } else { supervised.opens && self.config.supervised_opens };
        let request = ExecRequest { sid, force, apparmor: apparmor.map(Arc::from), opens_supervised };
        let mut watched = None;
        if let Some(path) = path {
            let file = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(path)
                .map_err(|err| format!("{path}: {err}"))?;
            e.check_exec_request(pid, subject, &file, &request).map_err(|err| format!("{path}: {err}"))?;
            // A program outside the marked filesystems: its exec must
            // still be an event, where the transition is recorded.
            if e.marks.target().watch_exec(&file).map_err(|err| format!("{path}: watching its exec: {err}"))? {
                watched = Some(file);
            }
        }
        // The new domain is in scope before any of its processes runs.
        let id = crate::pidfd::process_id(pid).ok();
        {
            let _scope = e.scope_changes.lock().unwrap_or_else(PoisonError::into_inner);
            e.marks
                .enter_scope(InScope { who: sid, direct_writes: !opens_supervised })
                .map_err(|err| format!("flushing ignore marks: {err}"))?;
            if let Some(profile) = &request.apparmor {
                let entry = ProfileInScope { who: Arc::clone(profile), direct_writes: !opens_supervised };
                e.marks.profile_enters(entry).map_err(|err| format!("flushing ignore marks: {err}"))?;
            }
            if let Some(old) = e.requests.insert(pid, id, request, watched).and_then(|h| h.watched) {
                e.marks.target().unwatch_exec(&old);
            }
        }
        // Under a profile, also its capability rules (a bound: the kernel's
        // AppArmor would deny the others at use).
        let profile_caps = match (&e.apparmor, apparmor) {
            (Some(a), Some(name)) => a.capabilities(name),
            _ => u64::MAX,
        };
        // Links and renames (crate::sandbox::Forbidden::LinkRename) for
        // every process under a profile, complain mode and a permissive
        // daemon included: a reload can enforce the profile, and an exec
        // can move the process into an enforced one, while the sandbox
        // cannot be tightened after the launch. A launcher that hands
        // its listener over drops it: the daemon then decides each link
        // and rename (crate::supervisor).
        let mut forbid = self.forbidden_everywhere(sid);
        if apparmor.is_some() {
            forbid.push(Forbidden::LinkRename);
        }
        Ok(ExecGrant {
            capabilities: crate::entry::capabilities_of(&e.entry_checks(), sid) & profile_caps,
            revoke: crate::entry::unauthorized_descriptors(&e.entry_checks(), pid, sid),
            forbid,
        })
    }

    fn labels_changed(&self) -> Result<(), String> {
        self.enforcer.objects.clear();
        self.flush_marks()
    }

    fn supervise(&self, pid: u32, fd: i32) -> Result<(), String> {
        let pidfd = crate::pidfd::pidfd_open(pid).map_err(|e| format!("supervise: the caller: {e}"))?;
        let listener = crate::pidfd::take_descriptor(std::os::fd::AsFd::as_fd(&pidfd), fd)
            .map_err(|e| format!("supervise: descriptor {fd} of the caller: {e}"))?;
        self.supervise_listener(listener, true).map_err(|e| format!("supervise: descriptor {fd} of the caller: {e}"))
    }
}

impl Daemon {
    /// The marked filesystems (crate::marked_fs).
    fn marked_filesystems(&self) -> MarkedFilesystems {
        MarkedFilesystems::of_paths(&self.config.marks)
    }

    /// Serves the calls under `listener` (crate::supervisor), starting
    /// the supervisor with the first; `keep`: also hand it to the service
    /// manager's store, so that the next daemon gets it back
    /// (crate::fd_store).
    fn supervise_listener(&self, listener: std::os::fd::OwnedFd, keep: bool) -> Result<(), String> {
        let what = rampart_label::fd_link(std::os::fd::AsFd::as_fd(&listener));
        if what.as_deref() != Some(Path::new("anon_inode:seccomp notify")) {
            return Err("not a seccomp listener".into());
        }
        if keep {
            if let Err(e) = crate::fd_store::store(std::os::fd::AsFd::as_fd(&listener), crate::fd_store::NAME) {
                eprintln!("rampartd: cannot keep a listener in the service manager's store ({e}): after a restart, the supervised calls of its processes fail");
            }
        }
        let mut running = self.supervisor.lock().unwrap_or_else(PoisonError::into_inner);
        if running.is_none() {
            let marked = self.marked_filesystems();
            let names: Vec<String> = marked.devices().iter().copied().map(device_name).collect();
            let ruleset = crate::sandbox::build_ruleset(&names, &self.protected_dirs(), &[], false)
                .map_err(|e| format!("the launcher's Landlock ruleset: {e}"))?;
            let context = supervisor::Context {
                enforcer: Arc::clone(&self.enforcer),
                marked,
                memfd_devs: crate::memfds::devices(),
                ruleset,
                journal: self.journal.clone(),
                names: Default::default(),
                writes_labels: self.config.selinux,
                label_failures: Default::default(),
                bound: Default::default(),
                ipc_objects: Default::default(),
            };
            *running = Some(Supervisor::start(context).map_err(|e| e.to_string())?);
        }
        running.as_ref().map_or(Ok(()), |s| s.add(listener)).map_err(|e| e.to_string())
    }
}

/// A device as mountinfo and the status reply write it (`major:minor`).
fn device_name(dev: u64) -> String {
    format!("{}:{}", libc::major(dev), libc::minor(dev))
}

/// Signals the calling thread waits for; blocked in every thread.
fn control_signals() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset initialise and fill a local set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

extern "C" fn wake(_: libc::c_int) {}

/// SIGUSR1 interrupts a responder's blocking read at shutdown, and a
/// connect made for a caller that a signal interrupts
/// (crate::call_interrupts): a no-op handler installed without
/// `SA_RESTART`, so the call returns `EINTR`.
pub(crate) fn install_wakeup() -> io::Result<()> {
    // SAFETY: `sa` is fully initialised before use; the handler is an
    // async-signal-safe no-op.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = wake as *const () as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        sa.sa_flags = 0;
        if libc::sigaction(libc::SIGUSR1, &sa, std::ptr::null_mut()) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Starts the watcher of name changes (crate::name_changes), which lets
/// ignore marks rest on AppArmor's decisions; without it (reported) they
/// never do.
fn watch_names(daemon: &Arc<Daemon>, config: &DaemonConfig, stop: &Arc<AtomicBool>) -> Option<JoinHandle<()>> {
    let changes = match crate::name_changes::NameChanges::watch(&config.marks) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("rampartd: cannot watch name changes ({e}): no ignore mark while a profile is in use");
            return None;
        }
    };
    let (e, s) = (Arc::clone(&daemon.enforcer), Arc::clone(stop));
    let spawned =
        std::thread::Builder::new().name("name-changes".into()).spawn(move || crate::name_changes::run(e, changes, s));
    match spawned {
        Ok(h) => {
            daemon.enforcer.marks.names_watched();
            Some(h)
        }
        Err(e) => {
            eprintln!("rampartd: cannot start the name-change watcher ({e}): no ignore mark while a profile is in use");
            None
        }
    }
}

/// Starts the watcher of device nodes (crate::device_watch), which gives
/// the domains their device programs again when a node comes, goes or
/// is relabeled; without it (reported) that waits for a policy change.
fn watch_devices(daemon: &Arc<Daemon>, stop: &Arc<AtomicBool>) -> Option<JoinHandle<()>> {
    let watch = match crate::device_watch::DeviceWatch::start() {
        Ok(w) => w,
        Err(e) => {
            eprintln!("rampartd: cannot watch /dev ({e}): a device plugged in waits for the next policy change");
            return None;
        }
    };
    let (d, s) = (Arc::clone(daemon), Arc::clone(stop));
    let relabel = move || label_devices(&d.enforcer);
    let spawned = std::thread::Builder::new()
        .name("device-watch".into())
        .spawn(move || crate::device_watch::run(watch, relabel, &s));
    spawned.map_err(|e| eprintln!("rampartd: cannot start the device watcher ({e})")).ok()
}

fn housekeeper(daemon: Arc<Daemon>, stop: Arc<AtomicBool>) {
    let _registered = own_threads::register_current();
    let e = &daemon.enforcer;
    let mut last_reap = Instant::now();
    let mut last_round = Instant::now();
    // Relaxed: `stop` only ends the loop.
    while !stop.load(Ordering::Relaxed) {
        if e.cgroups.settle(&e.avc, &|from, to| e.may_signal(from, to)) > 0 {
            std::thread::sleep(SETTLING);
        } else {
            e.cgroups.wait_for_exec(HOUSEKEEPING);
        }
        if last_round.elapsed() < HOUSEKEEPING {
            continue;
        }
        last_round = Instant::now();
        // A domain whose last process exited leaves the scope: the marks
        // it kept from the kernel come back.
        if e.cgroups.prune_empty_domains(&e.avc) {
            if let Err(err) = daemon.flush_marks() {
                eprintln!("rampartd: {err}");
            }
        }
        e.marks.target().reap();
        e.cgroups.owners.prune();
        daemon.sample_rate();
        if last_reap.elapsed() >= REAP_EVERY {
            let gone = e.requests.prune(|pid, id| match (crate::pidfd::process_id(pid), id) {
                (Ok(now), Some(known)) => now == known,
                (Ok(_), None) => true,
                (Err(_), _) => false,
            });
            for watched in gone.into_iter().filter_map(|h| h.watched) {
                e.marks.target().unwatch_exec(&watched);
            }
            last_reap = Instant::now();
        }
    }
}

/// The journal of calls in flight (crate::calls_in_flight): a previous
/// daemon's, with the calls it holds, or a new one handed to the service
/// manager's store; `None` without a store.
fn journal(stored: Vec<std::os::fd::OwnedFd>) -> (Option<Arc<Journal>>, Vec<libc::seccomp_notif>) {
    let mut adopted = None;
    let mut calls = Vec::new();
    for fd in stored {
        match Journal::adopt(fd) {
            Ok((journal, held)) => {
                calls.extend(held);
                adopted.get_or_insert(journal);
            }
            Err(e) => eprintln!("rampartd: a stored journal of supervised calls cannot be read: {e}"),
        }
    }
    if let Some(journal) = adopted {
        return (Some(Arc::new(journal)), calls);
    }
    let created = match Journal::create() {
        Ok(j) => j,
        Err(e) => {
            eprintln!("rampartd: no journal of supervised calls ({e}): calls in flight at a restart are not served");
            return (None, calls);
        }
    };
    match crate::fd_store::store(created.fd(), crate::calls_in_flight::NAME) {
        Ok(true) => (Some(Arc::new(created)), calls),
        Ok(false) => (None, calls),
        Err(e) => {
            eprintln!("rampartd: cannot keep the journal of supervised calls in the service manager's store ({e})");
            (None, calls)
        }
    }
}

/// Runs the daemon in the foreground until SIGTERM or SIGINT.
pub fn run_daemon(config: DaemonConfig) -> Result<(), DaemonError> {
    let _registered = own_threads::register_current();
    let signals = control_signals();
    // SAFETY: blocks signals in this thread (inherited by threads spawned
    // below) so only `sigwait` here receives them.
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &signals, std::ptr::null_mut()) };
    install_wakeup().map_err(io_err("installing the SIGUSR1 handler"))?;
    for m in &config.marks {
        check_mount_point(m)?;
    }
    // Before any thread reads the environment (crate::fd_store).
    let stored = crate::fd_store::take_stored();
    let groups = Groups::new(config.marks.clone())
        .map_err(io_err("fanotify_init (rampartd needs root and CONFIG_FANOTIFY_ACCESS_PERMISSIONS)"))?;
    let (journal, in_flight) = journal(stored.journals);
    let daemon = Arc::new(Daemon { journal, ..Daemon::new(config.clone(), groups)? });
    let kept = stored.listeners.len();
    for listener in stored.listeners {
        if let Err(e) = daemon.supervise_listener(listener, false) {
            eprintln!("rampartd: a stored listener: {e}");
        }
    }
    if kept > 0 {
        eprintln!("rampartd: serving the supervised calls of {kept} process trees launched before this start");
    }
    let supervisor = daemon.supervisor.lock().unwrap_or_else(PoisonError::into_inner).clone();
    if let Some(s) = supervisor.filter(|_| !in_flight.is_empty()) {
        let served = s.replay(&in_flight);
        eprintln!("rampartd: serving {served} supervised calls the previous daemon received and did not answer");
    }
    let stop = Arc::new(AtomicBool::new(false));
    let mut notice = OverloadNotice::new(config.overload_allow, config.queue_bound);
    let mut responders: Vec<JoinHandle<()>> = Vec::new();
    for i in 0..config.threads {
        let (e, s) = (Arc::clone(&daemon.enforcer), Arc::clone(&stop));
        let settings = responder::Settings {
            bound: config.queue_bound as u64,
            overload_allow: config.overload_allow,
            spin: config.spin,
            read_batch: config.read_batch,
            pollers: config.pollers,
            spin_check: config.spin_check,
        };
        let role = if i < config.pollers { Role::Poller } else { Role::Helper };
        let h = std::thread::Builder::new()
            .name(format!("responder-{i}"))
            .spawn(move || responder::run(e, s, settings, role))
            .map_err(io_err("spawning a responder thread"))?;
        responders.push(h);
    }
    let marked = daemon
        .enforcer
        .marks
        .target()
        .mark_filesystems()
        .map_err(|(m, e)| DaemonError::Io { what: format!("marking {}", m.display()), source: e });
    let housekeeping = {
        let (d, s) = (Arc::clone(&daemon), Arc::clone(&stop));
        std::thread::Builder::new().name("housekeeper".into()).spawn(move || housekeeper(d, s))
    };
    let name_watcher = if daemon.apparmor().is_some() { watch_names(&daemon, &config, &stop) } else { None };
    let device_watcher = watch_devices(&daemon, &stop);
    let server = match (&marked, &housekeeping) {
        (Ok(()), Ok(_)) => Some(
            ControlServer::bind(&config.socket, Arc::clone(&daemon) as Arc<dyn ControlHandler>)
                .map_err(io_err(format!("control socket {}", config.socket.display()))),
        ),
        _ => None,
    };
    let result = match (marked, housekeeping, server) {
        (Err(e), _, _) => Err(e),
        (_, Err(e), _) => Err(io_err("spawning the housekeeper")(e)),
        (_, _, Some(Err(e))) => Err(e),
        (Ok(()), Ok(hk), Some(Ok(server))) => {
            eprintln!(
                "rampartd: {} on {} (pid {}, policy {}, control socket {})",
                if config.permissive { "permissive" } else { "enforcing" },
                config.marks.iter().map(|m| m.display().to_string()).collect::<Vec<_>>().join(", "),
                std::process::id(),
                policy_name(daemon.policy_path.as_deref()),
                config.socket.display()
            );
            if let Some(a) = daemon.apparmor().map(|a| apparmor_status(a, Vec::new())) {
                eprintln!(
                    "rampartd: AppArmor: {} profiles from {} ({} enforce, {} complain), {} files failed to compile; \
                     enforced on processes started with rampart run --apparmor",
                    a.profiles, a.dir, a.enforce, a.complain, a.failed_files
                );
            }
            wait_for_stop(&daemon, &signals, &mut notice);
            server.shutdown();
            stop.store(true, Ordering::Relaxed);
            let _ = hk.join();
            for w in [name_watcher, device_watcher].into_iter().flatten() {
                let _ = w.join();
            }
            Ok(())
        }
        (Ok(()), Ok(_), None) => Ok(()),
    };
    stop.store(true, Ordering::Relaxed);
    daemon.enforcer.helpers.wake_all();
    for h in responders {
        while !h.is_finished() {
            // SAFETY: the thread has not been joined, so its pthread_t is
            // valid; SIGUSR1's handler is a no-op.
            unsafe { libc::pthread_kill(h.as_pthread_t(), libc::SIGUSR1) };
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = h.join();
    }
    let c = &daemon.enforcer.counters;
    report_overloads(&mut notice, &daemon);
    eprintln!(
        "rampartd: stopping: {} events, {} allowed, {} denied; the kernel allows whatever is still queued",
        c.events.load(Ordering::Relaxed),
        c.allowed.load(Ordering::Relaxed),
        c.denied.load(Ordering::Relaxed)
    );
    daemon.enforcer.cgroups.shutdown(&daemon.enforcer.avc);
    // Dropping the daemon closes the fanotify descriptors.
    drop(daemon);
    result
}

/// Waits for SIGTERM or SIGINT, reloading on SIGHUP and reporting
/// overload answers every [`NOTICE_EVERY`] in between.
fn wait_for_stop(daemon: &Daemon, signals: &libc::sigset_t, notice: &mut OverloadNotice) {
    let timeout = libc::timespec { tv_sec: NOTICE_EVERY.as_secs() as libc::time_t, tv_nsec: 0 };
    loop {
        // SAFETY: siginfo_t is plain data; all zeroes is a valid value.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `signals` is an initialised set, `info` a writable
        // siginfo_t and `timeout` a valid timespec, all alive for the call.
        let sig = unsafe { libc::sigtimedwait(signals, &mut info, &timeout) };
        report_overloads(notice, daemon);
        if sig < 0 {
            // EAGAIN (the timeout) or EINTR.
            continue;
        }
        if sig == libc::SIGHUP {
            // SAFETY: for a signal sent by kill(2) or sigqueue the kernel
            // fills si_pid (0 when sent by the kernel or from outside our
            // pid namespace).
            let sender = unsafe { info.si_pid() };
            if let Err(why) = daemon.may_reload_on_signal(sender) {
                eprintln!("rampartd: SIGHUP from pid {sender} ignored: {why}");
                continue;
            }
            match daemon.reload() {
                Ok(seqno) => {
                    eprintln!("rampartd: reloaded {} (seqno {seqno})", policy_name(daemon.policy_path.as_deref()))
                }
                Err(e) => eprintln!("rampartd: reload failed, keeping the old policy: {e}"),
            }
            continue;
        }
        return;
    }
}

/// Writes the notice of overload answers given since the last one, if any.
fn report_overloads(notice: &mut OverloadNotice, daemon: &Daemon) {
    // Relaxed: a count for the operator; no other memory depends on it.
    if let Some(line) = notice.since_last(daemon.enforcer.counters.overloaded.load(Ordering::Relaxed)) {
        eprintln!("{line}");
    }
}
