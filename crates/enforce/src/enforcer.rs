//! Decides one permission event: who asks (the opening thread's cgroup),
//! for what (the object's label and class), and what the policy says
//! (the AVC). The answer goes to the kernel first; the audit line,
//! statistics and ignore marks come after, so a slow log never holds an
//! open.
//!
//! ```text
//! event ─> subject (thread id ─> pidfd ─> cgroup id ─> domain; skipped
//!          while no process is confined: everyone is in the default domain)
//!       ─> object  (fstat ─> (dev, ino) ─> label cache ─> SID; no xattr
//!          and granted on every path label: unresolved, no path)
//!       ─> AVC (everything an open could ask; the opener's flags only
//!          when some of that is denied)
//!       ─> AppArmor, for a subject under a profile (crate::apparmor: the
//!          file's path; allowed only if both modules allow)
//!       ─> answer ─> audit ─> ignore marks
//! ```

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rampart_apparmor::ipc::AA_PTRACE_TRACE;
use rampart_avc::{AuditInfo, Avc, ClassIdx, Decision, Perms, Sid};
use rampart_label::FileType;
use rampart_policy::{CreateKind, POLICYCAP_EXTENDED_SOCKET_CLASS, POLICYCAP_NNP_NOSUID_TRANSITION};

use crate::access::{opener_flags, ClassPerms, Classes};
use crate::apparmor::{AppArmor, ExecOutcome, FileEvent};
use crate::backlog::Backlog;
use crate::cgroups::{image_of, Cgroups, ExecInFlight, ExecPlan, FileId, Node};
use crate::epoch::Ticket;
use crate::event::PermEvent;
use crate::exec_calls::{ExecCalls, Role};
use crate::fanotify::{self, Group};
use crate::groups::Groups;
use crate::handoff::Handoff;
use crate::limits::LimitChange;
use crate::marks::{EventObject, InScope, Marks, ProfileInScope};
use crate::object_label::ObjectLabel;
use crate::objects::{EventAccess, ObjectSids};
use crate::own_threads;
use crate::path_labels::Grants;
use crate::pidfd::{self, RecentThreads};
use crate::procs::{ExecRequest, ExecRequests};
use crate::signal_state::SignalReset;
use crate::subject_label::Label;

/// Event counters (Relaxed: statistics only; nothing is ordered by them).
#[derive(Debug, Default)]
pub struct Counters {
    pub events: AtomicU64,
    pub allowed: AtomicU64,
    pub denied: AtomicU64,
    pub permissive_denials: AtomicU64,
    pub overloaded: AtomicU64,
    /// Events read and not yet answered.
    pub in_flight: AtomicU64,
    pub exec_transitions: AtomicU64,
    /// Opens and reads allowed with the object's label left unresolved
    /// (crate::path_labels): answered without an AVC lookup.
    pub without_path: AtomicU64,
}

/// Relaxed: a count. One bumped before an answer is seen by a `status`
/// request its opener makes after the answer: the answer's write and
/// the opener's wake-up order it, as system calls and locks do.
fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

/// One check of an event, kept for the audit after the answer.
pub(crate) struct Checked {
    pub ssid: Sid,
    pub tsid: Sid,
    pub class: ClassIdx,
    pub decision: Decision,
}

/// An exec's checks (Enforcer::exec_checks).
struct ExecChecks {
    /// What decides the exec, each audited.
    checks: Vec<Checked>,
    /// The domain it enters, if it may.
    entered: Option<Sid>,
    /// `process2 nosuid_transition`, audited, deciding only `entered`
    /// (a computed transition falls back to the old domain without it).
    nosuid: Option<Checked>,
    /// Why an asked domain may not be entered beyond `checks`.
    refused: Option<String>,
}

/// Who an event is about.
#[derive(Clone, Debug)]
pub struct Subject {
    /// The domain its events are decided in.
    pub sid: Sid,
    /// Its AppArmor profile (`None`: unconfined by AppArmor).
    pub apparmor: Option<Arc<str>>,
    /// Its process, when it was looked up.
    pub tgid: Option<u32>,
    /// The exec transition in flight it is part of, if any.
    pub exec: Option<Arc<ExecInFlight>>,
    /// It is in the daemon's cgroup tree: started by `rampart run` or a
    /// descendant of such a process, so it carries the launcher's sandbox
    /// (crate::entry).
    pub launched: bool,
    /// Its opens for writing go through the daemon (crate::marks,
    /// "Scope").
    pub opens_supervised: bool,
}

/// The decision side of the daemon, shared by its responder threads.
pub struct Enforcer {
    pub avc: Arc<Avc>,
    pub classes: Classes,
    pub objects: ObjectSids,
    pub cgroups: Cgroups,
    pub requests: ExecRequests,
    pub marks: Marks<Groups>,
    pub default_sid: Sid,
    pub self_pid: u32,
    pub counters: Counters,
    /// Wakes helper responders ([`crate::backlog`]), also before a slow
    /// decision so it does not hold other processes' events.
    pub helpers: Backlog,
    /// Events a responder read beyond the one it answers itself
    /// ([`crate::handoff`]).
    pub handed_off: Handoff<(Arc<Group>, PermEvent)>,
    /// Held from a domain's entry into the scope until what keeps it
    /// there (an exec in flight, a request) is recorded, and while the
    /// scope is recomputed from those records: a shrinking scope must not
    /// drop a domain that was just entered.
    pub scope_changes: std::sync::Mutex<()>,
    /// The AppArmor profiles (`--apparmor`), stacked with SELinux (shared
    /// with the domains' device programs: crate::device_access).
    pub apparmor: Option<Arc<AppArmor>>,
    /// The exec calls of launched threads, which tell a program's exec
    /// event from its interpreters' ([`crate::exec_calls`]).
    pub exec_calls: ExecCalls,
}

impl Enforcer {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        avc: Arc<Avc>,
        classes: Classes,
        objects: ObjectSids,
        groups: Groups,
        cgroups: Cgroups,
        default_sid: Sid,
        ignore_marks: bool,
        apparmor: Option<Arc<AppArmor>>,
    ) -> Enforcer {
        let mut marks = Marks::new(groups, default_sid, ignore_marks);
        marks.start_with(&cgroups.domains());
        // Processes an earlier daemon put under profiles: no mark yet, so
        // nothing to flush.
        marks.set_profiles(cgroups.apparmor_profiles());
        Enforcer {
            avc,
            classes,
            objects,
            cgroups,
            requests: ExecRequests::default(),
            marks,
            default_sid,
            self_pid: std::process::id(),
            counters: Counters::default(),
            helpers: Backlog::default(),
            handed_off: Handoff::default(),
            scope_changes: std::sync::Mutex::new(()),
            apparmor,
            exec_calls: ExecCalls::default(),
        }
    }

    /// Answers `event` on `group`, then audits and places marks.
    /// `threads` is the calling responder's cache of thread pidfds.
    pub fn handle(&self, group: &Group, event: PermEvent, threads: &mut RecentThreads) {
        bump(&self.counters.events);
        let tid = event.pid;
        if own_threads::contains(tid) {
            // Our own opens (logs, config, policy) are never held.
            self.answer(group, event.fd.as_fd(), true);
            return;
        }
        // Before anything a mark depends on is looked up (crate::epoch).
        let ticket = self.marks.ticket();
        let file = File::from(event.fd);
        let Ok(md) = file.metadata() else {
            self.answer(group, file.as_fd(), true);
            return;
        };
        let Some(cp) = self.classes.of_mode(md.mode()) else {
            self.answer(group, file.as_fd(), true);
            return;
        };
        let exec = event.mask & fanotify::OPEN_EXEC_PERM != 0;
        if exec {
            // An exec is the slow decision (a domain transition, possibly
            // a mark flush): let a helper take the events queued meanwhile.
            self.helpers.signal();
        }
        let subject = match self.subject(tid, threads, exec) {
            Ok(Some(s)) => s,
            Ok(None) => {
                self.answer(group, file.as_fd(), true);
                return;
            }
            Err(e) => {
                // Whose event this is cannot be known: uncertainty denies.
                self.answer(group, file.as_fd(), false);
                eprintln!("rampartd: denied an event of thread {tid}: its cgroup is unknown ({e})");
                return;
            }
        };
        if exec {
            let tsid = self.objects.sid_of(&self.avc, file.as_fd(), &md);
            // A launched thread's exec calls are noted: is this event its
            // program's, or an interpreter's (crate::exec_calls)?
            let role = if subject.launched && subject.exec.is_none() {
                self.exec_calls.role(threads.id(tid).ok())
            } else {
                Role::Unknown
            };
            if role == Role::Interpreter {
                self.interpreter(group, &file, &md, tid, &subject, Some(subject.sid), tsid, cp);
            } else {
                self.exec(group, &file, &md, tid, &subject, tsid, cp, role);
            }
            return;
        }
        let asked = if event.mask & fanotify::OPEN_PERM != 0 {
            cp.any_open()
        } else if event.mask & fanotify::ACCESS_PERM != 0 {
            cp.read
        } else {
            self.answer(group, file.as_fd(), true);
            return;
        };
        let query = EventAccess { subject: subject.sid, class: cp.class, perms: asked, epoch: ticket.epoch() };
        let label = self.objects.label_of(&self.avc, file.as_fd(), &md, Some(query));
        let target = EventObject {
            inode: (md.dev(), md.ino()),
            label,
            class: cp.class,
            any_open: cp.any_open(),
            read_open: cp.open | cp.read,
            read: cp.read,
        };
        let opener = Opener { tid, tgid: subject.tgid, subject: subject.sid, ticket };
        let aa = subject.apparmor.as_deref().map(|profile| (profile, &md));
        if event.mask & fanotify::OPEN_PERM != 0 {
            self.open(group, &file, opener, &target, cp, aa);
        } else {
            self.read(group, &file, opener, &target, cp, aa);
        }
    }

    /// Who thread `tid` is: its domain from its cgroup (`Ok(None)`: a
    /// thread of the daemon). While no process is confined every thread
    /// is in the default domain and nothing is looked up, unless
    /// `need_process` (an exec needs the process).
    pub fn subject(&self, tid: u32, threads: &mut RecentThreads, need_process: bool) -> io::Result<Option<Subject>> {
        if !need_process && !self.cgroups.populated() {
            return Ok(Some(self.default_subject(None)));
        }
        let info = match threads.info(tid) {
            Ok(info) => info,
            // The thread is gone: nobody waits for this answer.
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => return Ok(Some(self.default_subject(None))),
            Err(e) => return Err(e),
        };
        if info.tgid == self.self_pid {
            return Ok(None);
        }
        Ok(Some(self.subject_in(info.tgid, info.cgroup_id)))
    }

    fn default_subject(&self, tgid: Option<u32>) -> Subject {
        Subject { sid: self.default_sid, apparmor: None, tgid, exec: None, launched: false, opens_supervised: false }
    }

    /// The subject of process `tgid` in cgroup `cgroup_id`.
    pub fn subject_in(&self, tgid: u32, cgroup_id: u64) -> Subject {
        let (label, exec) = match self.cgroups.node(cgroup_id) {
            None => return self.default_subject(Some(tgid)),
            Some(Node::Domain(label)) => (label, None),
            // Credentials change when the exec commits; until the
            // housekeeper has seen it, the old label (crate::cgroups).
            Some(Node::Exec(x)) => (x.plan.from.clone(), Some(x)),
        };
        Subject {
            sid: label.sid,
            apparmor: label.apparmor,
            tgid: Some(tgid),
            exec,
            launched: true,
            opens_supervised: label.opens_supervised,
        }
    }

    /// The subject of process `pid` (a control request's peer).
    pub fn subject_of_process(&self, pid: u32) -> io::Result<Subject> {
        let fd = pidfd::pidfd_open(pid)?;
        let info = pidfd::thread_info(fd.as_fd())?;
        Ok(self.subject_in(info.tgid, info.cgroup_id))
    }

    /// Whether domain `from` may signal domain `to` (`process signal`),
    /// without an audit (crate::file_owners).
    pub fn may_signal(&self, from: Sid, to: Sid) -> bool {
        self.avc.has_perm_noaudit(from, to, self.classes.process, self.classes.signals.signal).passes()
    }

    /// The labels of the tree that may not read label `to`'s memory
    /// (SELinux: `process ptrace`, `file read` of the process, what it
    /// asks at an open of `/proc/PID/mem` and of the files `ptrace`
    /// guards, enforced; AppArmor, for a label under a profile: its
    /// ptrace rules, `trace` and `read`, both ends), and whether any
    /// label, the default one included, may not (crate::memory_guard). A domain with no process
    /// in the tree is not counted: a process enters it later only from
    /// a domain of the tree (kept out itself if it may not read `to`,
    /// else it could read the memory and hand it over anyway) or from
    /// outside (another launch, which Landlock keeps out, or the default
    /// domain, counted).
    fn kept_out_of(&self, to: &Label) -> (Vec<Label>, bool) {
        let selinux = |from: Sid| {
            if from == to.sid || !self.avc.enforced_for(from) {
                return false;
            }
            let read =
                self.classes.of_mode(libc::S_IFREG).map(|f| self.avc.has_perm_noaudit(from, to.sid, f.class, f.read));
            let ptrace = self.avc.has_perm_noaudit(from, to.sid, self.classes.process, self.classes.ptrace);
            !ptrace.passes() || !read.is_some_and(|r| r.passes())
        };
        // AppArmor's ptrace rules, where the reader is under a profile
        // (none while the daemon is permissive: complain mode).
        let apparmor = |from: &Label| {
            from.apparmor.is_some()
                && self.avc.policy_state().2
                && !self
                    .apparmor
                    .as_ref()
                    .is_some_and(|aa| aa.may_read_memory(from.apparmor.as_deref(), to.apparmor.as_deref()))
        };
        let kept_out = |from: &Label| from != to && (selinux(from.sid) || apparmor(from));
        let labels: Vec<Label> = self.cgroups.live_labels(&self.avc).into_iter().filter(|l| kept_out(l)).collect();
        let any = !labels.is_empty() || selinux(self.default_sid);
        (labels, any)
    }

    /// What crate::entry's checks read.
    pub fn entry_checks(&self) -> crate::entry::Checks<'_> {
        crate::entry::Checks {
            avc: &self.avc,
            classes: &self.classes,
            objects: &self.objects,
            default_sid: self.default_sid,
        }
    }

    fn grants(&self) -> Grants<'_> {
        Grants { avc: &self.avc, paths: self.objects.paths(), apparmor: self.apparmor.as_deref() }
    }

    /// Whether the AppArmor side allows `ask` of a subject under a
    /// profile (`aa`: the profile and the file's metadata); true without.
    fn apparmor_allows(
        &self,
        file: &File,
        opener: &Opener,
        aa: Option<(&str, &std::fs::Metadata)>,
        ask: AaAsk<'_>,
    ) -> bool {
        let Some((profile, md)) = aa else { return true };
        let Some(apparmor) = &self.apparmor else { return false };
        let ev = FileEvent { tid: opener.tid, tgid: opener.tgid.unwrap_or(opener.tid), fd: file.as_fd(), md };
        let enforcing = || self.avc.policy_state().2;
        match ask {
            AaAsk::Open(flags) => apparmor.open(profile, &ev, flags, &enforcing),
            AaAsk::Read => apparmor.read(profile, &ev, &mut || opener_flags(opener.tid), &enforcing),
        }
    }

    fn open(
        &self,
        group: &Group,
        file: &File,
        opener: Opener,
        target: &EventObject,
        cp: ClassPerms,
        aa: Option<(&str, &std::fs::Metadata)>,
    ) {
        let Opener { tid, tgid, subject, ticket } = opener;
        // The opener's flags, read from /proc at most once, and only if a
        // module needs them.
        let flags_cell = std::cell::OnceCell::new();
        let mut flags = || {
            *flags_cell.get_or_init(|| {
                // Slow: let a helper take the events queued meanwhile.
                self.helpers.signal();
                opener_flags(tid)
            })
        };
        let ObjectLabel::Sid(tsid) = target.label else {
            if !self.apparmor_allows(file, &opener, aa, AaAsk::Open(&mut flags)) {
                self.answer(group, file.as_fd(), false);
                return;
            }
            // Granted on every label the path could give, with nothing to
            // audit (crate::path_labels).
            self.answer(group, file.as_fd(), true);
            bump(&self.counters.without_path);
            self.marks.after_open(&self.grants(), file.as_fd(), target, ticket);
            return;
        };
        let any = cp.any_open();
        let first = self.avc.has_perm_noaudit(subject, tsid, cp.class, any);
        let decision = if first.denied.is_empty() {
            first
        } else {
            let requested = flags().map_or(any, |f| cp.for_flags(f));
            masked(first, requested)
        };
        // Stacked: both modules decide, each audits its own denial.
        let apparmor = self.apparmor_allows(file, &opener, aa, AaAsk::Open(&mut flags));
        self.answer(group, file.as_fd(), decision.passes() && apparmor);
        self.audit_checks(tid, tgid, file.as_fd(), &[Checked { ssid: subject, tsid, class: cp.class, decision }]);
        if decision.denied.is_empty() && apparmor {
            self.marks.after_open(&self.grants(), file.as_fd(), target, ticket);
        }
    }

    /// A read of a file no access mark covers (revalidation after a
    /// change, or a file opened unseen).
    fn read(
        &self,
        group: &Group,
        file: &File,
        reader: Opener,
        target: &EventObject,
        cp: ClassPerms,
        aa: Option<(&str, &std::fs::Metadata)>,
    ) {
        let Opener { tid, tgid, subject, ticket } = reader;
        let apparmor = self.apparmor_allows(file, &reader, aa, AaAsk::Read);
        let allowed = match target.label {
            ObjectLabel::Sid(tsid) => {
                let decision = self.avc.has_perm_noaudit(subject, tsid, cp.class, cp.read);
                self.answer(group, file.as_fd(), decision.passes() && apparmor);
                self.audit_checks(
                    tid,
                    tgid,
                    file.as_fd(),
                    &[Checked { ssid: subject, tsid, class: cp.class, decision }],
                );
                decision.denied.is_empty() && apparmor
            }
            ObjectLabel::Unresolved(_) => {
                self.answer(group, file.as_fd(), apparmor);
                bump(&self.counters.without_path);
                apparmor
            }
        };
        if allowed {
            self.marks.after_read(&self.grants(), file.as_fd(), target, ticket);
        }
    }

    /// An exec: the file's `execute`, then the domain transition (or
    /// `execute_no_trans`); a transition moves the process into a frozen
    /// cgroup of its own before the exec is allowed (crate::cgroups).
    /// `role`: the event is known to be the program's, or not known
    /// (crate::exec_calls).
    #[allow(clippy::too_many_arguments)]
    fn exec(
        &self,
        group: &Group,
        file: &File,
        md: &std::fs::Metadata,
        tid: u32,
        subject: &Subject,
        tsid: Sid,
        cp: ClassPerms,
        role: Role,
    ) {
        let Some(tgid) = subject.tgid else {
            // The thread is gone: nobody waits for this answer.
            self.answer(group, file.as_fd(), false);
            return;
        };
        if let Some(x) = &subject.exec {
            // The exec in flight opens its interpreters (ELF `ld.so`, `#!`)
            // as exec events of its own thread, which run in the domain
            // entered. Another thread's exec meanwhile would race it:
            // refused.
            let to = (tid == x.plan.tid).then_some(x.plan.to.sid);
            self.interpreter(group, file, md, tid, subject, to, tsid, cp);
            return;
        }
        let (request, held) = self.requests.take(tgid, pidfd::process_id(tgid).ok());
        if let Some(watched) = held.and_then(|h| h.watched) {
            self.marks.target().unwatch_exec(&watched);
        }
        let launcher = request.is_some();
        // The AppArmor label after the exec: the launcher's request, else
        // the subject's, or where the profile's x rule moves it.
        let mut apparmor = request.as_ref().and_then(|r| r.apparmor.clone()).or_else(|| subject.apparmor.clone());
        let x =
            self.exec_checks(subject.sid, tsid, cp, request.as_ref(), crate::exec_memory::mapped_by_exec(file), || {
                crate::exec_mount::may_grant(file.as_fd(), tid).unwrap_or(false)
            });
        let (checks, new_domain, nosuid) = (x.checks, x.entered, x.nosuid);
        let mut allow = x.refused.is_none() && checks.iter().all(|c| c.decision.passes());
        let mut profile_change = None;
        // AppArmor's share of secure-execution mode (crate::secure_exec).
        let mut scrub_for_apparmor = false;
        match self.apparmor_exec(file, md, tid, tgid, subject, role) {
            ExecOutcome::Allowed => {}
            ExecOutcome::Transition { to, scrub, mode } => {
                apparmor = to.as_deref().map(Arc::from);
                scrub_for_apparmor = scrub;
                profile_change = Some((to, mode));
            }
            ExecOutcome::Denied => allow = false,
            ExecOutcome::Unsupported(why) => {
                allow = false;
                eprintln!(
                    "rampartd: refused the exec of {} by pid {tgid} under the AppArmor profile {}: {why}; \
                     learning profiles are not supported (docs/security.md)",
                    rampart_label::fd_link(file.as_fd()).map_or("?".into(), |p| p.to_string_lossy().into_owned()),
                    subject.apparmor.as_deref().unwrap_or("?"),
                );
            }
        }
        if let Some((to, mode)) = profile_change.filter(|_| allow) {
            allow = self.apparmor_transition_allowed(&exec_of(tid, tgid, file, md, subject), to.as_deref(), &mode);
        }
        // An unconfined process's exec of a program an enforce-mode
        // profile attaches to: AppArmor would put it under that profile,
        // but only the launcher can give a process the sandbox a profile
        // needs (crate::entry; its links and renames decided), so the
        // exec is refused, as an exec transition into a confined domain
        // is, and `rampart run --apparmor` is the way in.
        if allow && !launcher && subject.apparmor.is_none() {
            if let Some(profile) = self.apparmor.as_ref().and_then(|a| a.attachment(file.as_fd(), md)) {
                let enforcing = self.avc.policy_state().2;
                allow = !enforcing;
                eprintln!(
                    "rampartd: {} the exec of {} by pid {tgid}: the AppArmor profile {profile} attaches to it, and a \
                     process enters a profile only through the launcher: start it with `rampart run --apparmor \
                     {profile}` (docs/security.md)",
                    if enforcing { "refused" } else { "permissive: allowed" },
                    rampart_label::fd_link(file.as_fd()).map_or("?".into(), |p| p.to_string_lossy().into_owned()),
                );
            }
        }
        let from =
            Label { sid: subject.sid, apparmor: subject.apparmor.clone(), opens_supervised: subject.opens_supervised };
        // The launcher says whether its filter supervises opens; an exec
        // keeps the filters it runs under.
        let opens_supervised = request.as_ref().map_or(subject.opens_supervised, |r| r.opens_supervised);
        let new_label = new_domain.map(|sid| Label { sid, apparmor, opens_supervised });
        // A domain change runs the new image in secure-execution mode
        // unless the policy grants `process noatsecure`, as SELinux's
        // exec hook decides (and audits) it; `--force` launches skip the
        // policy's exec checks, this one too.
        let checked_transition =
            new_domain.filter(|&new| new != subject.sid && !request.as_ref().is_some_and(|r| r.force));
        let transition_check =
            |perm| checked_transition.map(|new| self.check(subject.sid, new, self.classes.process, perm));
        let noatsecure = transition_check(self.classes.noatsecure);
        // Likewise the soft resource limits, unless `process rlimitinh`
        // (SELinux's `selinux_bprm_committing_creds`): crate::limits.
        let rlimitinh = transition_check(self.classes.rlimitinh);
        // And the signal state, unless `process siginh` (SELinux's
        // `selinux_bprm_committed_creds`): crate::signal_state.
        let siginh = transition_check(self.classes.siginh);
        // A process sharing its working directory, root and umask with
        // another changes domain only if the old domain may share them
        // with the new one (SELinux's `process share` for
        // `LSM_UNSAFE_SHARE`, refused with `EPERM`): crate::fs_sharing.
        let share_check =
            checked_transition.map(|new| self.check(subject.sid, new, self.classes.process, self.classes.share));
        // Whether a sharer another thread makes after this decision may
        // stay (crate::cgroups kills the new image otherwise).
        let may_share = share_check.as_ref().map_or(true, |c| c.decision.passes());
        let share =
            share_check.filter(|_| allow && crate::fs_sharing::shares_with_another(tgid, self.cgroups.threads()));
        if share.as_ref().is_some_and(|c| !c.decision.passes()) {
            allow = false;
        }
        // A traced process changes domain only if its tracer may trace it
        // there (SELinux's `ptrace_parent_sid` check in its exec hook).
        let tracer = new_label.as_ref().filter(|new| **new != from).and_then(|_| crate::entry::tracer(tid));
        let ptrace = tracer.zip(checked_transition).map(|(tracer, new)| {
            let sid = self.subject_of_process(tracer).map_or(self.default_sid, |s| s.sid);
            self.check(sid, new, self.classes.process, self.classes.ptrace)
        });
        if ptrace.as_ref().is_some_and(|c| !c.decision.passes()) {
            allow = false;
        }
        // And a profile only if its tracer's label may trace the new one
        // (AppArmor's `may_change_ptraced_domain`, audited).
        let new_profile = new_label.as_ref().filter(|new| new.apparmor != from.apparmor);
        if let Some((tracer, new)) = tracer.zip(new_profile).filter(|_| allow) {
            let tracer_label = self.subject_of_process(tracer).ok().and_then(|s| s.apparmor);
            if tracer_label.is_some() {
                let enforcing = || self.avc.policy_state().2;
                allow = self.apparmor.as_ref().is_some_and(|aa| {
                    aa.ptrace(
                        tracer_label.as_deref(),
                        new.apparmor.as_deref(),
                        AA_PTRACE_TRACE,
                        (tgid, tid),
                        &enforcing,
                    )
                });
            }
        }
        if let Some(new) = new_domain.filter(|&new| allow && !launcher && new != subject.sid) {
            if let Some(why) = crate::entry::refusal(&self.entry_checks(), &exec_of(tid, tgid, file, md, subject), new)
            {
                let enforced = self.avc.enforced_for(new);
                allow = !enforced;
                eprintln!(
                    "rampartd: {} the exec of {} by pid {tgid} ({}): {why} (docs/security.md)",
                    if enforced { "refused" } else { "permissive: allowed" },
                    rampart_label::fd_link(file.as_fd()).map_or("?".into(), |p| p.to_string_lossy().into_owned()),
                    self.avc.context(subject.sid).unwrap_or("?"),
                );
            }
        }
        if let Some(new) = new_label.as_ref().filter(|new| allow && **new != from) {
            allow = self.alone_in_its_process(file, tgid, new.sid);
        }
        if let Some(new) = new_label.filter(|new| allow && *new != from) {
            // Before the answer: once the exec runs, the new domain's
            // opens must not meet marks placed without it in scope, nor,
            // under a profile, marks at all (crate::marks).
            let _scope = self.scope_changes.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let _ = self.marks.enter_scope(InScope { who: new.sid, direct_writes: !new.opens_supervised });
            if let Some(profile) = &new.apparmor {
                let entry = ProfileInScope { who: Arc::clone(profile), direct_writes: !new.opens_supervised };
                let _ = self.marks.profile_enters(entry);
            }
            let mut images = vec![(md.dev(), md.ino())];
            images.extend(script_interpreter(file, tgid));
            let at_secure = scrub_for_apparmor || noatsecure.as_ref().is_some_and(|c| !c.decision.passes());
            let mut limits = LimitChange { secure_exec: at_secure, ..LimitChange::default() };
            if rlimitinh.as_ref().is_some_and(|c| !c.decision.passes()) {
                limits.reset_soft = LimitChange::ALL;
            }
            if let Some(aa) = &self.apparmor {
                aa.transition_limits(from.apparmor.as_deref(), new.apparmor.as_deref(), &mut limits);
            }
            let old_image = image_of(tgid);
            // A shell running a `#!` script runs its interpreter already:
            // its memory map will tell a committed exec from a failed one.
            let old_memory = match old_image.filter(|old| images.contains(old)) {
                None => None,
                Some(_) => match crate::same_image::OldMemory::of(tgid) {
                    Ok(memory) => Some(memory),
                    Err(why) => {
                        let enforced = self.avc.enforced_for(new.sid);
                        allow = !enforced;
                        eprintln!(
                            "rampartd: {} the exec of {} by pid {tgid}: it runs the image the exec would, and \
                             whether the exec committed could not be told: {why} (docs/security.md)",
                            if enforced { "refused" } else { "permissive: allowed, settled in the old domain," },
                            rampart_label::fd_link(file.as_fd())
                                .map_or("?".into(), |p| p.to_string_lossy().into_owned()),
                        );
                        None
                    }
                },
            };
            let reset_signals = siginh.as_ref().is_some_and(|c| !c.decision.passes());
            // SELinux clears it at every change of domain, AppArmor at
            // every change into a profile; the launcher clears its own.
            let reset_parent_death =
                !launcher && (new.sid != from.sid || (new.apparmor.is_some() && new.apparmor != from.apparmor));
            // The domains that may not read the new one's memory: kept
            // out of it (crate::memory_guard).
            let (kept_out, undumpable) = self.kept_out_of(&new);
            let mut signals = SignalReset { signals: reset_signals, parent_death: reset_parent_death, undumpable };
            if let Some(tracer) = tracer.filter(|_| !signals.is_empty()) {
                // The reset needs ptrace of the daemon's own, and a process
                // has one tracer (crate::signal_state): refused, or while
                // permissive let through without it.
                let enforced = self.avc.enforced_for(new.sid);
                allow = !enforced;
                signals = SignalReset::default();
                eprintln!(
                    "rampartd: {} the exec of {} by pid {tgid}: it is traced by pid {tracer}, and its signal \
                     state (or dumpability) must be reset as it enters {}, which the daemon does with ptrace: \
                     run it untraced (docs/security.md)",
                    if enforced { "refused" } else { "permissive: allowed, not reset," },
                    rampart_label::fd_link(file.as_fd()).map_or("?".into(), |p| p.to_string_lossy().into_owned()),
                    self.avc.context(new.sid).unwrap_or("?"),
                );
            }
            let plan = ExecPlan {
                from,
                to: new,
                tgid,
                tid,
                images,
                old_image,
                old_memory,
                at_secure,
                limits,
                signals,
                may_share,
            };
            if allow {
                match self.cgroups.begin_exec(&self.avc, plan, if signals.undumpable { &kept_out } else { &[] }) {
                    Ok(()) => bump(&self.counters.exec_transitions),
                    Err(e) => {
                        // Without its cgroup the new domain could not hold:
                        // the exec is refused.
                        allow = false;
                        eprintln!("rampartd: refused an exec of pid {tgid}: its transition cannot be recorded ({e})");
                    }
                }
            }
        } else if allow && !launcher && role != Role::Interpreter && subject.launched {
            allow = self.guard_exec_in_domain(file, tid, tgid, from);
        }
        self.answer(group, file.as_fd(), allow);
        self.audit_checks(tid, Some(tgid), file.as_fd(), nosuid.as_slice());
        self.audit_checks(tid, Some(tgid), file.as_fd(), &checks);
        self.audit_checks(tid, Some(tgid), file.as_fd(), share.as_slice());
        self.audit_checks(tid, Some(tgid), file.as_fd(), ptrace.as_slice());
        if allow {
            self.audit_checks(tid, Some(tgid), file.as_fd(), noatsecure.as_slice());
            self.audit_checks(tid, Some(tgid), file.as_fd(), rlimitinh.as_slice());
            self.audit_checks(tid, Some(tgid), file.as_fd(), siginh.as_slice());
        }
    }

    /// Whether the exec of `file` by process `tgid`, which would enter
    /// domain `new`, may: only if the process has one thread, the exec's.
    /// A transition commits when the process runs an image it planned
    /// (crate::cgroups), and a `#!` script's plan holds its interpreter:
    /// another thread's exec of that interpreter, under way as this one
    /// fails (`E2BIG`), would commit in its place and run the other
    /// thread's code in `new`. A process of one thread gains no thread
    /// while its only one is in the exec. Refused (logged) unless `new`
    /// is permissive; coarser than SELinux, which knows which thread
    /// committed.
    fn alone_in_its_process(&self, file: &File, tgid: u32, new: Sid) -> bool {
        let threads = crate::cgroups::thread_count(tgid);
        if threads == Some(1) {
            return true;
        }
        let enforced = self.avc.enforced_for(new);
        eprintln!(
            "rampartd: {} the exec of {} by pid {tgid}: it has {} threads, and a process changes domain only with \
             one, so that no other thread's exec can commit in its place: exec from a process of one thread (fork \
             first) (docs/security.md)",
            if enforced { "refused" } else { "permissive: allowed" },
            rampart_label::fd_link(file.as_fd()).map_or("?".into(), |p| p.to_string_lossy().into_owned()),
            threads.map_or("an unknown number of".into(), |n| n.to_string()),
        );
        !enforced
    }

    /// An exec without a change of domain by a launched process: the
    /// kernel makes the new image dumpable, so where a domain may not
    /// read this one it is held as a transition is, frozen and made
    /// non-dumpable before its first instruction, with those domains kept
    /// out meanwhile (crate::memory_guard). Returns whether it may run.
    fn guard_exec_in_domain(&self, file: &File, tid: u32, tgid: u32, label: Label) -> bool {
        let (kept_out, undumpable) = self.kept_out_of(&label);
        if !undumpable {
            return true;
        }
        let program = || rampart_label::fd_link(file.as_fd()).map_or("?".into(), |p| p.to_string_lossy().into_owned());
        if let Some(tracer) = crate::entry::tracer(tid) {
            // As for a transition: the daemon's ptrace would be a second.
            let enforced = self.avc.enforced_for(label.sid);
            eprintln!(
                "rampartd: {} the exec of {} by pid {tgid}: it is traced by pid {tracer}, and its image must be made \
                 non-dumpable, which the daemon does with ptrace: run it untraced (docs/security.md)",
                if enforced { "refused" } else { "permissive: allowed, left dumpable," },
                program(),
            );
            return !enforced;
        }
        // Settled by being frozen, committed or not (crate::cgroups): no
        // images to tell them apart by.
        let plan = ExecPlan {
            from: label.clone(),
            to: label,
            tgid,
            tid,
            images: Vec::new(),
            old_image: None,
            old_memory: None,
            at_secure: false,
            limits: LimitChange::default(),
            signals: SignalReset { undumpable: true, ..SignalReset::default() },
            may_share: true,
        };
        match self.cgroups.begin_exec(&self.avc, plan, &kept_out) {
            Ok(()) => true,
            Err(e) => {
                eprintln!("rampartd: refused the exec of {} by pid {tgid}: it cannot be held ({e})", program());
                false
            }
        }
    }

    /// Whether an exec may move its process to the AppArmor profile `to`
    /// (`None`: unconfined) by an x rule qualified `mode`: the entry
    /// invariant (crate::entry::apparmor_refusal), enforced unless the
    /// daemon is permissive or the new profile in complain mode.
    fn apparmor_transition_allowed(&self, exec: &crate::entry::Exec<'_>, to: Option<&str>, mode: &str) -> bool {
        let Some(apparmor) = &self.apparmor else { return false };
        let enforcing = || self.avc.policy_state().2;
        let program =
            || rampart_label::fd_link(exec.file.as_fd()).map_or("?".into(), |p| p.to_string_lossy().into_owned());
        let caps = to.map_or(u64::MAX, |p| apparmor.capabilities(p));
        let mediated = |dev: u64| self.marks.target().covers(dev);
        let unusable = || {
            to.map(|p| apparmor.unusable_descriptors(p, (exec.tid, exec.tgid), &mediated, &enforcing))
                .unwrap_or_default()
        };
        let Some(why) = crate::entry::apparmor_refusal(exec, to, caps, unusable) else {
            return true;
        };
        let enforced = enforcing() && to.is_some_and(|p| apparmor.enforces(p));
        eprintln!(
            "rampartd: {} the exec of {} by pid {} ({mode} to the AppArmor profile {}): {why} (docs/security.md)",
            if enforced { "refused" } else { "permissive: allowed" },
            program(),
            exec.tgid,
            to.unwrap_or("unconfined"),
        );
        !enforced
    }

    /// The AppArmor side of an exec by `subject` (allowed for a subject
    /// under no profile) of `file`, in `role` (crate::exec_calls).
    fn apparmor_exec(
        &self,
        file: &File,
        md: &std::fs::Metadata,
        tid: u32,
        tgid: u32,
        subject: &Subject,
        role: Role,
    ) -> ExecOutcome {
        let Some(profile) = subject.apparmor.as_deref() else { return ExecOutcome::Allowed };
        let Some(apparmor) = &self.apparmor else { return ExecOutcome::Denied };
        let ev = FileEvent { tid, tgid, fd: file.as_fd(), md };
        apparmor.exec(profile, &ev, role != Role::Program, &|| self.avc.policy_state().2)
    }

    /// SELinux's exec checks of `subject` executing a file labeled `tsid`
    /// (`execute`; then `execute_no_trans`, or `process transition` and
    /// `entrypoint` of the new domain, which `request` may name and whose
    /// checks `request.force` skips; then, if the exec `maps` the file,
    /// the entered domain's mapping of it), and the domain the exec
    /// enters if they all pass. `may_grant` says whether the file's mount
    /// may grant a transition (crate::exec_mount), asked only for one.
    fn exec_checks(
        &self,
        subject: Sid,
        tsid: Sid,
        cp: ClassPerms,
        request: Option<&ExecRequest>,
        maps: bool,
        may_grant: impl FnOnce() -> bool,
    ) -> ExecChecks {
        let mut checks = vec![self.check(subject, tsid, cp.class, cp.execute)];
        let mut new = match request {
            Some(r) => Some(r.sid),
            None => self.transition(subject, tsid),
        };
        let (mut nosuid, mut refused) = (None, None);
        if let Some(to) = new.filter(|&to| to != subject && !request.is_some_and(|r| r.force) && !may_grant()) {
            let (check, passes) = self.nosuid_transition(subject, to);
            nosuid = check;
            if !passes {
                let context = |sid| self.avc.context(sid).unwrap_or("?");
                let why = format!(
                    "op=security_bounded_transition seresult=denied oldcontext={} newcontext={}: the file's mount \
                     may not grant a transition (nosuid, or another mount namespace's)",
                    context(subject),
                    context(to)
                );
                eprintln!("rampartd: {why}");
                // SELinux's `check_nnp_nosuid`: a computed transition falls
                // back to the old domain, an asked one fails.
                match request {
                    None => new = Some(subject),
                    Some(_) => refused = Some(why),
                }
            }
        }
        match new {
            None => checks.push(self.denial(subject, tsid, cp.class, cp.execute_no_trans)),
            Some(new) if new == subject => {
                if request.is_none() {
                    checks.push(self.check(subject, tsid, cp.class, cp.execute_no_trans));
                }
            }
            Some(new) => {
                if !request.is_some_and(|r| r.force) && refused.is_none() {
                    checks.push(self.check(subject, new, self.classes.process, self.classes.transition));
                    checks.push(self.check(new, tsid, cp.class, cp.entrypoint));
                }
            }
        }
        let passes = |checks: &[Checked]| refused.is_none() && checks.iter().all(|c| c.decision.passes());
        if let Some(new) = new.filter(|_| maps && passes(&checks) && !request.is_some_and(|r| r.force)) {
            self.image_checks(new, tsid, cp, &mut checks);
        }
        let entered = new.filter(|_| passes(&checks));
        ExecChecks { checks, entered, nosuid, refused }
    }

    /// An interpreter an exec opens (crate::exec_calls) by `subject`,
    /// whose code will run in domain `to` (`None`: refused):
    /// `interpreter_checks`, and the profiles' side.
    #[allow(clippy::too_many_arguments)]
    fn interpreter(
        &self,
        group: &Group,
        file: &File,
        md: &std::fs::Metadata,
        tid: u32,
        subject: &Subject,
        to: Option<Sid>,
        tsid: Sid,
        cp: ClassPerms,
    ) {
        let (Some(tgid), Some(to)) = (subject.tgid, to) else {
            self.answer(group, file.as_fd(), false);
            return;
        };
        let checks = self.interpreter_checks(subject.sid, to, tsid, cp, file);
        let allow = checks.iter().all(|c| c.decision.passes())
            && matches!(
                self.apparmor_exec(file, md, tid, tgid, subject, Role::Interpreter),
                ExecOutcome::Allowed | ExecOutcome::Transition { .. }
            );
        self.answer(group, file.as_fd(), allow);
        self.audit_checks(tid, Some(tgid), file.as_fd(), &checks);
    }

    /// What the kernel asks of an interpreter (`file`, labeled `tsid`)
    /// an exec opens: `execute` by the domain `from` the exec started in
    /// (`MAY_EXEC` at its open, before the commit), then, if the loader
    /// maps it, the mapping by the domain `to` it runs in.
    fn interpreter_checks(&self, from: Sid, to: Sid, tsid: Sid, cp: ClassPerms, file: &File) -> Vec<Checked> {
        let mut checks = vec![self.check(from, tsid, cp.class, cp.execute)];
        if checks[0].decision.passes() && crate::exec_memory::mapped_by_exec(file) {
            self.image_checks(to, tsid, cp, &mut checks);
        }
        checks
    }

    /// The kernel's ELF loader maps an image (`file` labeled `tsid`) in
    /// the domain the exec entered: its checks, appended to `checks` up
    /// to the first denial (crate::exec_memory::image_perms). The kernel
    /// would kill the process there, past the exec's point of no return;
    /// the daemon refuses the exec instead (docs/security.md).
    fn image_checks(&self, domain: Sid, tsid: Sid, cp: ClassPerms, checks: &mut Vec<Checked>) {
        for perms in crate::exec_memory::image_perms(&cp) {
            let check = self.check(domain, tsid, cp.class, perms);
            let passes = check.decision.passes();
            checks.push(check);
            if !passes {
                return;
            }
        }
    }

    /// SELinux's `check_nnp_nosuid` for a transition from `old` to `new`
    /// by a file whose mount may not grant one: the `process2
    /// nosuid_transition` check, made if the policy declares the
    /// `nnp_nosuid_transition` capability, and whether the transition
    /// passes (that check, or `new` bounded by `old`: typebounds).
    fn nosuid_transition(&self, old: Sid, new: Sid) -> (Option<Checked>, bool) {
        let (policy, _, _) = self.avc.policy_state();
        let check = policy
            .has_policycap(POLICYCAP_NNP_NOSUID_TRANSITION)
            .then(|| self.check(old, new, self.classes.process2, self.classes.nosuid_transition));
        if check.as_ref().is_some_and(|c| c.decision.passes()) {
            return (check, true);
        }
        let ty = |sid| self.avc.context(sid).and_then(|c| policy.parse_context(c).ok()).map(|c| c.ty);
        let bounded = ty(old).zip(ty(new)).is_some_and(|(old, new)| policy.bounded_transition(old, new));
        (check, bounded)
    }

    /// Checks an exec request (`rampart run`) against the file it will
    /// execute, before the exec, auditing denials. Returns the domain it
    /// would enter, or what was denied.
    pub fn check_exec_request(&self, pid: u32, subject: Sid, file: &File, request: &ExecRequest) -> Result<(), String> {
        let md = file.metadata().map_err(|e| e.to_string())?;
        let cp = self.classes.file().filter(|_| md.is_file()).ok_or("not a regular file")?;
        let tsid = self.objects.sid_of(&self.avc, file.as_fd(), &md);
        let x = self.exec_checks(subject, tsid, cp, Some(request), crate::exec_memory::mapped_by_exec(file), || {
            crate::exec_mount::may_grant(file.as_fd(), pid).unwrap_or(false)
        });
        self.audit_checks(pid, Some(pid), file.as_fd(), x.nosuid.as_slice());
        self.audit_checks(pid, Some(pid), file.as_fd(), &x.checks);
        let checks = x.checks;
        match x.entered {
            Some(_) => Ok(()),
            None if x.refused.is_some() => Err(format!("Permission denied: {}", x.refused.unwrap_or_default())),
            None => {
                let denied: Vec<String> = checks
                    .iter()
                    .filter(|c| !c.decision.passes())
                    .map(|c| {
                        let class = self.avc.mapping().class_name(c.class).unwrap_or("?");
                        format!("{{ {} }} {class}", self.avc.mapping().perm_names(c.class, c.decision.denied).join(" "))
                    })
                    .collect();
                Err(format!("Permission denied: the policy denies {}", denied.join(", ")))
            }
        }
    }

    /// The label the kernel gives a message `sender` puts on a queue
    /// labeled `queue` (`security_transition_sid` of class `msg`:
    /// crate::ipc_objects); `None` if the policy gives it no valid one.
    pub(crate) fn message_sid(&self, sender: Sid, queue: Sid) -> Option<Sid> {
        self.transition_sid(sender, queue, "msg")
    }

    /// `security_transition_sid(s, t, class)`, by the loaded policy.
    fn transition_sid(&self, s: Sid, t: Sid, class: &str) -> Option<Sid> {
        let (policy, bools, _) = self.avc.policy_state();
        let s = policy.parse_context(self.avc.context(s)?).ok()?;
        let t = policy.parse_context(self.avc.context(t)?).ok()?;
        let class = policy.class_by_name(class)?;
        let new = policy.compute_create(&bools, &s, &t, class, CreateKind::Transition, None).ok()?;
        self.avc.intern(&policy.context_to_string(&new)).ok()
    }

    /// The domain `subject` enters by executing a file labeled `tsid`
    /// (`None` if the policy cannot compute a valid one).
    fn transition(&self, subject: Sid, tsid: Sid) -> Option<Sid> {
        self.transition_sid(subject, tsid, "process")
    }

    /// The label the kernel gives an object of `mode`'s type that
    /// `subject` makes as `name` in a directory labeled `parent` (`name`
    /// `None`: an unnamed `O_TMPFILE`): `type_transition` rules, by name
    /// too, role and range rules and class defaults, as
    /// `selinux_inode_init_security` computes it. The error (no valid
    /// label: the kernel refuses the creation) says why.
    pub fn new_object_sid(&self, subject: Sid, parent: Sid, mode: u32, name: Option<&[u8]>) -> Result<Sid, String> {
        let (policy, bools, _) = self.avc.policy_state();
        let context = |sid| {
            let text = self.avc.context(sid).ok_or_else(|| format!("no context for SID {sid:?}"))?;
            policy.parse_context(text).map_err(|e| format!("{text}: {e}"))
        };
        let (s, t) = (context(subject)?, context(parent)?);
        let file_type = FileType::from_mode(mode).ok_or_else(|| format!("mode {mode:o} is no file type"))?;
        let class = rampart_label::file_class(&policy, file_type)
            .ok_or_else(|| format!("the policy has no class {}", file_type.class_name()))?;
        // A name that is not UTF-8 matches no filename rule of a policy,
        // whose names are.
        let name = name.and_then(|n| std::str::from_utf8(n).ok());
        let new = rampart_label::new_file_label(&policy, &bools, &s, &t, class, name).map_err(|e| e.to_string())?;
        self.avc.intern(&policy.context_to_string(&new)).map_err(|e| e.to_string())
    }

    fn check(&self, ssid: Sid, tsid: Sid, class: ClassIdx, perms: Perms) -> Checked {
        Checked { ssid, tsid, class, decision: self.avc.has_perm_noaudit(ssid, tsid, class, perms) }
    }

    /// A denial the policy did not make (no valid new context).
    fn denial(&self, ssid: Sid, tsid: Sid, class: ClassIdx, perms: Perms) -> Checked {
        let mut c = self.check(ssid, tsid, class, perms);
        c.decision.denied = perms;
        c.decision.allowed = Perms::NONE;
        c.decision.auditdeny = perms;
        c
    }

    fn answer(&self, group: &Group, fd: BorrowedFd<'_>, allow: bool) {
        // Counted first: a process that saw its answer and then asks
        // `rampart status` finds it counted (tests count events so).
        bump(if allow { &self.counters.allowed } else { &self.counters.denied });
        let _ = group.respond(fd, allow);
    }

    /// Audits what the kernel would (after the answer): `pid=` is the
    /// process (looked up now if the event did not need it), `comm=` the
    /// thread's name, as in the kernel's AVC records.
    /// Audits `checks` of thread `tid` on the object open as `fd` (also a
    /// supervised call's: crate::supervisor).
    pub(crate) fn audit_checks(&self, tid: u32, tgid: Option<u32>, fd: BorrowedFd<'_>, checks: &[Checked]) {
        self.audit(tid, tgid, || rampart_label::fd_link(fd).map(|p| p.to_string_lossy().into_owned()), checks);
    }

    /// Checks `perms` of class `process` from `ssid` (thread `tid`, of
    /// process `tgid`) on `tsid`, and audits it as the kernel would (no
    /// path: the object is a process). Whether it passes (a permissive
    /// denial passes).
    pub(crate) fn check_process(&self, tid: u32, tgid: Option<u32>, ssid: Sid, tsid: Sid, perms: Perms) -> bool {
        self.check_label(tid, tgid, ssid, tsid, self.classes.process, perms)
    }

    /// Checks `perms` of `class` from `ssid` (thread `tid`, of process
    /// `tgid`) on the label `tsid` of an object without a path (a
    /// process, a memfd not yet made: crate::memfds), and audits it.
    /// Whether it passes.
    pub(crate) fn check_label(
        &self,
        tid: u32,
        tgid: Option<u32>,
        ssid: Sid,
        tsid: Sid,
        class: ClassIdx,
        perms: Perms,
    ) -> bool {
        self.check_label_with(tid, tgid, (ssid, tsid, class, perms), Vec::new())
    }

    /// [`Enforcer::check_label`] with the audit line's object fields
    /// (`extra`: a socket's `src=` port, `saddr=` address: crate::sockets).
    pub(crate) fn check_label_with(
        &self,
        tid: u32,
        tgid: Option<u32>,
        (ssid, tsid, class, perms): (Sid, Sid, ClassIdx, Perms),
        extra: Vec<(String, String)>,
    ) -> bool {
        self.check_label_lazy(tid, tgid, (ssid, tsid, class, perms), || extra)
    }

    /// [`Enforcer::check_label_with`], the audit line's fields made only
    /// where a line is written (crate::ipc_objects reads an object's key).
    pub(crate) fn check_label_lazy(
        &self,
        tid: u32,
        tgid: Option<u32>,
        (ssid, tsid, class, perms): (Sid, Sid, ClassIdx, Perms),
        extra: impl FnOnce() -> Vec<(String, String)>,
    ) -> bool {
        let checked = self.check(ssid, tsid, class, perms);
        self.audit_with(tid, tgid, || None, extra, std::slice::from_ref(&checked));
        checked.decision.passes()
    }

    /// Whether the loaded policy gives sockets of most address families
    /// classes of their own (`extended_socket_class`: crate::sockets).
    pub(crate) fn extended_socket_classes(&self) -> bool {
        self.avc.policy_state().0.has_policycap(POLICYCAP_EXTENDED_SOCKET_CLASS)
    }

    /// Checks `create` of a socket of `class` (one of
    /// crate::access::SOCKET_CLASSES) by `ssid` (thread `tid`, of process
    /// `tgid`) on the label the socket would get, and audits it as
    /// `selinux_socket_create` does. Whether it passes.
    pub(crate) fn check_socket_create(&self, tid: u32, tgid: Option<u32>, ssid: Sid, class: &str) -> bool {
        let Some(perms) = self.classes.socket(class) else { return false };
        match self.socket_sid(ssid, class) {
            Ok(tsid) => self.check_label(tid, tgid, ssid, tsid, perms.class, perms.create),
            Err(why) => {
                // The kernel refuses the socket (`security_transition_sid`
                // fails) unless it is globally permissive.
                eprintln!("rampartd: no label for a {class} of thread {tid}: {why}");
                !self.avc.policy_state().2
            }
        }
    }

    /// The label of a socket of `class` that `subject` makes (the kernel's
    /// `socket_sockcreate_sid`). A class the policy lacks has no rules:
    /// the socket takes the subject's label, as the kernel's unmapped
    /// class does.
    pub(crate) fn socket_sid(&self, subject: Sid, class: &str) -> Result<Sid, String> {
        let (policy, bools, _) = self.avc.policy_state();
        let Some(class) = policy.class_by_name(class) else { return Ok(subject) };
        let text = self.avc.context(subject).ok_or_else(|| format!("no context for SID {subject:?}"))?;
        let s = policy.parse_context(text).map_err(|e| format!("{text}: {e}"))?;
        let new = policy.compute_socket_create(&bools, &s, class).map_err(|e| e.to_string())?;
        self.avc.intern(&policy.context_to_string(&new)).map_err(|e| e.to_string())
    }

    /// Checks and audits the permissions `which` picks of `file`'s class
    /// for thread `tid` (in `ssid`), a file it maps (crate::exec_memory).
    pub(crate) fn check_mapped_file(
        &self,
        tid: u32,
        tgid: Option<u32>,
        ssid: Sid,
        file: &File,
        which: &dyn Fn(&ClassPerms) -> Perms,
    ) -> bool {
        let Ok(md) = file.metadata() else { return false };
        let Some(cp) = self.classes.of_mode(md.mode()) else { return false };
        let tsid = self.objects.sid_of(&self.avc, file.as_fd(), &md);
        let checked = self.check(ssid, tsid, cp.class, which(&cp));
        self.audit_checks(tid, tgid, file.as_fd(), std::slice::from_ref(&checked));
        checked.decision.passes()
    }

    fn audit(&self, tid: u32, tgid: Option<u32>, path: impl FnOnce() -> Option<String>, checks: &[Checked]) {
        self.audit_with(tid, tgid, path, Vec::new, checks);
    }

    fn audit_with(
        &self,
        tid: u32,
        tgid: Option<u32>,
        path: impl FnOnce() -> Option<String>,
        extra: impl FnOnce() -> Vec<(String, String)>,
        checks: &[Checked],
    ) {
        let mut path = Some(path);
        let mut extra = Some(extra);
        let mut info = None;
        for c in checks {
            if c.decision.audited().is_empty() {
                continue;
            }
            if !c.decision.denied.is_empty() && c.decision.permissive {
                bump(&self.counters.permissive_denials);
            }
            let info = info.get_or_insert_with(|| AuditInfo {
                pid: Some(tgid.unwrap_or_else(|| {
                    pidfd::thread_pidfd(tid).and_then(|fd| pidfd::thread_info(fd.as_fd())).map_or(tid, |i| i.tgid)
                })),
                comm: pidfd::comm(tid),
                path: path.take().and_then(|p| p()),
                extra: extra.take().map(|e| e()).unwrap_or_default(),
            });
            self.avc.audit_decision(c.ssid, c.tsid, c.class, &c.decision, info);
        }
    }
}

/// The exec being decided, as crate::entry reads it.
fn exec_of<'a>(
    tid: u32,
    tgid: u32,
    file: &'a File,
    md: &'a std::fs::Metadata,
    subject: &Subject,
) -> crate::entry::Exec<'a> {
    crate::entry::Exec { tid, tgid, file, md, launched: subject.launched }
}

/// `d` restricted to the permissions `requested`.
fn masked(d: Decision, requested: Perms) -> Decision {
    Decision {
        allowed: d.allowed & requested,
        denied: d.denied & requested,
        auditallow: d.auditallow & requested,
        auditdeny: d.auditdeny & requested,
        permissive: d.permissive && !(d.denied & requested).is_empty(),
        seqno: d.seqno,
    }
}

/// What AppArmor is asked about an event.
enum AaAsk<'a> {
    /// An open, with a way to read its flags.
    Open(&'a mut dyn FnMut() -> Option<u64>),
    Read,
}

/// Who opened (or read), and when the event began.
#[derive(Clone, Copy)]
struct Opener {
    tid: u32,
    tgid: Option<u32>,
    subject: Sid,
    ticket: Ticket,
}

/// The interpreter a `#!` script names, as the process `tgid` would find
/// it (through its root), by device and inode: the executable of the
/// process once such an exec has committed. Read through the event's
/// descriptor, which raises no event.
fn script_interpreter(file: &File, tgid: u32) -> Option<FileId> {
    let mut head = [0u8; 256];
    let n = file.read_at(&mut head, 0).ok()?;
    let line = head.get(..n)?.strip_prefix(b"#!")?;
    let line = line.split(|&b| b == b'\n').next()?;
    let path = line.split(|&b| b == b' ' || b == b'\t').find(|w| !w.is_empty())?;
    let path = std::str::from_utf8(path).ok()?;
    let md = std::fs::metadata(format!("/proc/{tgid}/root/{}", path.trim_start_matches('/'))).ok()?;
    Some((md.dev(), md.ino()))
}
