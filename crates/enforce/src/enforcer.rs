//! Decides one permission event: who asks (the process table), for what
//! (the object's label and class), and what the policy says (the AVC).
//! The answer goes to the kernel first; the audit line, statistics and
//! ignore marks come after, so a slow log never holds an open.
//!
//! ```text
//! event ─> subject (pid [+ pidfd id] ─> process table ─> domain)
//!       ─> object  (fstat ─> (dev, ino) ─> label cache ─> SID; no xattr
//!          and granted on every path label: unresolved, no path)
//!       ─> AVC (everything an open could ask; the opener's flags only
//!          when some of that is denied)
//!       ─> answer ─> audit ─> ignore marks
//! ```

use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use rampart_avc::{AuditInfo, Avc, ClassIdx, Decision, Perms, Sid};
use rampart_policy::CreateKind;

use crate::access::{opener_flags, ClassPerms, Classes};
use crate::epoch::Ticket;
use crate::event::PermEvent;
use crate::fanotify::{self, Group};
use crate::groups::Groups;
use crate::marks::{Marks, Target};
use crate::objects::{ObjectSids, Query};
use crate::path_labels::{Grants, ObjectLabel};
use crate::pidfd;
use crate::proc_connector::{ProcConnector, ProcEvent};
use crate::procs::{Entry, ExecRequest, PendingExec, Processes, PENDING_EXEC_WINDOW};
use crate::responder::Backlog;

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

fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

/// One check of an event, kept for the audit after the answer.
struct Checked {
    ssid: Sid,
    tsid: Sid,
    class: ClassIdx,
    decision: Decision,
}

/// The decision side of the daemon, shared by its responder threads.
pub struct Enforcer {
    pub avc: Arc<Avc>,
    pub classes: Classes,
    pub objects: ObjectSids,
    pub procs: Processes,
    pub marks: Marks<Groups>,
    pub default_sid: Sid,
    pub self_pid: u32,
    pub counters: Counters,
    /// Wakes helper responders ([`crate::responder`]), also before a slow
    /// decision so it does not hold other processes' events.
    pub helpers: Backlog,
    connector: Option<Mutex<ProcConnector>>,
}

impl Enforcer {
    pub fn new(
        avc: Arc<Avc>,
        classes: Classes,
        objects: ObjectSids,
        groups: Groups,
        default_sid: Sid,
        connector: Option<ProcConnector>,
        ignore_marks: bool,
    ) -> Enforcer {
        Enforcer {
            avc,
            classes,
            objects,
            procs: Processes::default(),
            marks: Marks::new(groups, default_sid, ignore_marks),
            default_sid,
            self_pid: std::process::id(),
            counters: Counters::default(),
            helpers: Backlog::default(),
            connector: connector.map(Mutex::new),
        }
    }

    /// Answers `event` on `group`, then audits and places marks. Returns
    /// the event's pidfd, for the caller to keep or close
    /// ([`crate::pidfd::RecentPidfds`]).
    pub fn handle(&self, group: &Group, mut event: PermEvent) -> Option<OwnedFd> {
        let pidfd = event.pidfd.take();
        self.decide(group, event, pidfd.as_ref().map(AsFd::as_fd));
        pidfd
    }

    fn decide(&self, group: &Group, event: PermEvent, pidfd: Option<BorrowedFd<'_>>) {
        bump(&self.counters.events);
        if event.pid == self.self_pid {
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
        if event.mask & fanotify::OPEN_EXEC_PERM != 0 {
            // An exec is the slow decision (connector drain, domain
            // transition, possibly a mark flush): let a helper take the
            // events queued meanwhile.
            self.helpers.signal();
            // An exec the connector reported earlier (this process's
            // previous one) is applied first: applied after the pending
            // transition this exec records, it would take it for its own.
            self.sync_processes();
        }
        let subject = self.subject(event.pid, pidfd);
        if event.mask & fanotify::OPEN_EXEC_PERM != 0 {
            let tsid = self.objects.sid_of(&self.avc, file.as_fd(), &md);
            self.exec(group, &file, event.pid, subject, tsid, cp);
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
        let query = Query { subject, class: cp.class, perms: asked, epoch: ticket.epoch() };
        let label = self.objects.label_of(&self.avc, file.as_fd(), &md, Some(query));
        let target =
            Target { inode: (md.dev(), md.ino()), label, class: cp.class, any_open: cp.any_open(), read: cp.read };
        let opener = Opener { pid: event.pid, subject, ticket };
        if event.mask & fanotify::OPEN_PERM != 0 {
            self.open(group, &file, opener, &target, cp);
        } else {
            self.read(group, &file, opener, &target, cp);
        }
    }

    fn grants(&self) -> Grants<'_> {
        Grants { avc: &self.avc, paths: self.objects.paths() }
    }

    fn open(&self, group: &Group, file: &File, opener: Opener, target: &Target, cp: ClassPerms) {
        let Opener { pid, subject, ticket } = opener;
        let ObjectLabel::Sid(tsid) = target.label else {
            // Granted on every label the path could give, with nothing to
            // audit (crate::path_labels).
            self.answer(group, file.as_fd(), true);
            bump(&self.counters.without_path);
            self.marks.after_open(&self.grants(), file.as_fd(), target, subject, !cp.read.is_empty(), ticket);
            return;
        };
        let any = cp.any_open();
        let first = self.avc.has_perm_noaudit(subject, tsid, cp.class, any);
        let decision = if first.denied.is_empty() {
            first
        } else {
            // Reading the opener's flags from /proc is slow: let a helper
            // take the events queued meanwhile.
            self.helpers.signal();
            let requested = opener_flags(pid).map_or(any, |f| cp.for_flags(f));
            masked(first, requested)
        };
        self.answer(group, file.as_fd(), decision.passes());
        self.audit(pid, file.as_fd(), &[Checked { ssid: subject, tsid, class: cp.class, decision }]);
        if decision.denied.is_empty() {
            let read = decision.allowed.contains(cp.read) && !cp.read.is_empty();
            self.marks.after_open(&self.grants(), file.as_fd(), target, subject, read, ticket);
        }
    }

    /// A read of a file no access mark covers (revalidation after a
    /// change, or a file opened unseen).
    fn read(&self, group: &Group, file: &File, reader: Opener, target: &Target, cp: ClassPerms) {
        let Opener { pid, subject, ticket } = reader;
        let allowed = match target.label {
            ObjectLabel::Sid(tsid) => {
                let decision = self.avc.has_perm_noaudit(subject, tsid, cp.class, cp.read);
                self.answer(group, file.as_fd(), decision.passes());
                self.audit(pid, file.as_fd(), &[Checked { ssid: subject, tsid, class: cp.class, decision }]);
                decision.denied.is_empty()
            }
            ObjectLabel::Unresolved(_) => {
                self.answer(group, file.as_fd(), true);
                bump(&self.counters.without_path);
                true
            }
        };
        self.marks.after_access(&self.grants(), file.as_fd(), target, subject, allowed, ticket);
    }

    /// An exec: the file's `execute`, then the domain transition (or
    /// `execute_no_trans`), recorded before the exec is allowed.
    fn exec(&self, group: &Group, file: &File, pid: u32, subject: Sid, tsid: Sid, cp: ClassPerms) {
        let entry = self.procs.get(pid);
        let now = Instant::now();
        let interpreter =
            entry.and_then(|e| e.pending).is_some_and(|p| now.duration_since(p.since) < PENDING_EXEC_WINDOW);
        let (checks, new_domain) = if interpreter {
            (vec![self.check(subject, tsid, cp.class, cp.execute)], None)
        } else {
            self.exec_checks(subject, tsid, cp, entry.and_then(|e| e.request))
        };
        let allow = checks.iter().all(|c| c.decision.passes());
        if let Some(new) = new_domain {
            // Before the answer: once the exec runs, the new domain's
            // opens must not meet marks placed without it in scope.
            if new != subject {
                let _ = self.marks.enter_scope(new);
                bump(&self.counters.exec_transitions);
            }
            let id = self.process_id(pid, None);
            let fresh = Entry { sid: subject, id, request: None, pending: None };
            self.procs.update(pid, fresh, |e| e.pending = Some(PendingExec { sid: new, since: now }));
        }
        self.answer(group, file.as_fd(), allow);
        self.audit(pid, file.as_fd(), &checks);
    }

    /// SELinux's exec checks of `subject` executing a file labeled `tsid`
    /// (`execute`; then `execute_no_trans`, or `process transition` and
    /// `entrypoint` of the new domain, which `request` may name and whose
    /// checks `request.force` skips), and the domain the exec enters if
    /// they all pass.
    fn exec_checks(
        &self,
        subject: Sid,
        tsid: Sid,
        cp: ClassPerms,
        request: Option<ExecRequest>,
    ) -> (Vec<Checked>, Option<Sid>) {
        let mut checks = vec![self.check(subject, tsid, cp.class, cp.execute)];
        let new = match request {
            Some(r) => Some(r.sid),
            None => self.transition(subject, tsid),
        };
        match new {
            None => checks.push(self.denial(subject, tsid, cp.class, cp.execute_no_trans)),
            Some(new) if new == subject => {
                if request.is_none() {
                    checks.push(self.check(subject, tsid, cp.class, cp.execute_no_trans));
                }
            }
            Some(new) => {
                if !request.is_some_and(|r| r.force) {
                    checks.push(self.check(subject, new, self.classes.process, self.classes.transition));
                    checks.push(self.check(new, tsid, cp.class, cp.entrypoint));
                }
            }
        }
        let entered = new.filter(|_| checks.iter().all(|c| c.decision.passes()));
        (checks, entered)
    }

    /// Checks an exec request (`rampart run`) against the file it will
    /// execute, before the exec, auditing denials. Returns the domain it
    /// would enter, or what was denied.
    pub fn check_exec_request(&self, pid: u32, subject: Sid, file: &File, request: ExecRequest) -> Result<(), String> {
        let md = file.metadata().map_err(|e| e.to_string())?;
        let cp = self.classes.file().filter(|_| md.is_file()).ok_or("not a regular file")?;
        let tsid = self.objects.sid_of(&self.avc, file.as_fd(), &md);
        let (checks, entered) = self.exec_checks(subject, tsid, cp, Some(request));
        self.audit(pid, file.as_fd(), &checks);
        match entered {
            Some(_) => Ok(()),
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

    /// The domain `subject` enters by executing a file labeled `tsid`
    /// (`None` if the policy cannot compute a valid one).
    fn transition(&self, subject: Sid, tsid: Sid) -> Option<Sid> {
        let (policy, bools, _) = self.avc.policy_state();
        let s = policy.parse_context(self.avc.context(subject)?).ok()?;
        let t = policy.parse_context(self.avc.context(tsid)?).ok()?;
        let class = policy.class_by_name("process")?;
        let new = policy.compute_create(&bools, &s, &t, class, CreateKind::Transition, None).ok()?;
        self.avc.intern(&policy.context_to_string(&new)).ok()
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

    /// The domain of `pid`. An unknown pid runs in the default domain,
    /// unless the connector has not told us about its fork yet: when any
    /// process is tracked, its queued events are applied first.
    pub fn subject(&self, pid: u32, pidfd: Option<BorrowedFd<'_>>) -> Sid {
        let mut entry = self.procs.get(pid);
        let needs_sync = match entry {
            None => !self.procs.is_empty(),
            // An exec may have completed: apply it before deciding.
            Some(e) => e.pending.is_some() || e.request.is_some(),
        };
        if needs_sync {
            self.sync_processes();
            entry = self.procs.get(pid);
        }
        let Some(e) = entry else {
            return self.default_sid;
        };
        if e.id.is_none() {
            return e.sid;
        }
        let id = pidfd.and_then(|fd| pidfd::pidfs_id(fd).ok());
        self.procs.get_checked(pid, id).map_or(self.default_sid, |e| e.sid)
    }

    fn process_id(&self, pid: u32, pidfd: Option<BorrowedFd<'_>>) -> Option<u64> {
        match pidfd {
            Some(fd) => pidfd::pidfs_id(fd).ok(),
            None => pidfd::process_id(pid).ok(),
        }
    }

    /// Applies the connector's queued fork, exec and exit events. The
    /// lock is held until they are applied: a thread that finds the queue
    /// empty must also find what another thread drained already applied.
    pub fn sync_processes(&self) {
        let Some(connector) = &self.connector else {
            return;
        };
        let mut connector = connector.lock().unwrap_or_else(PoisonError::into_inner);
        let events = match connector.drain() {
            Ok(events) => events,
            Err(_) => vec![ProcEvent::Overrun],
        };
        for event in events {
            match event {
                ProcEvent::Fork { parent_tgid, child_pid, child_tgid, .. }
                    if child_pid == child_tgid && self.procs.get(parent_tgid).is_some() =>
                {
                    self.procs.fork(parent_tgid, child_tgid, pidfd::process_id(child_tgid).ok());
                }
                ProcEvent::Exec { tgid, .. } => {
                    if let Some(e) = self.procs.exec(tgid) {
                        if e.sid == self.default_sid {
                            self.procs.exit(tgid);
                        }
                    }
                }
                ProcEvent::Exit { pid, tgid, .. } if pid == tgid => self.procs.exit(tgid),
                ProcEvent::Overrun => {
                    self.reap();
                }
                _ => {}
            }
        }
    }

    /// Drops entries of processes that are gone.
    pub fn reap(&self) -> usize {
        self.procs.retain_alive(|pid, id| match (pidfd::process_id(pid), id) {
            (Ok(now), Some(known)) => now == known,
            (Ok(_), None) => true,
            (Err(_), _) => false,
        })
    }

    /// The connector's descriptor, for a thread that waits on it.
    pub fn connector_fd(&self) -> Option<std::os::fd::RawFd> {
        self.connector.as_ref().map(|c| c.lock().unwrap_or_else(PoisonError::into_inner).as_raw_fd())
    }

    fn answer(&self, group: &Group, fd: BorrowedFd<'_>, allow: bool) {
        let _ = group.respond(fd, allow);
        bump(if allow { &self.counters.allowed } else { &self.counters.denied });
    }

    /// Audits what the kernel would (after the answer).
    fn audit(&self, pid: u32, fd: BorrowedFd<'_>, checks: &[Checked]) {
        let mut info = None;
        for c in checks {
            if c.decision.audited().is_empty() {
                continue;
            }
            if !c.decision.denied.is_empty() && c.decision.permissive {
                bump(&self.counters.permissive_denials);
            }
            let info = info.get_or_insert_with(|| AuditInfo {
                pid: Some(pid),
                comm: pidfd::comm(pid),
                path: rampart_label::fd_link(fd).map(|p| p.to_string_lossy().into_owned()),
                extra: Vec::new(),
            });
            self.avc.audit_decision(c.ssid, c.tsid, c.class, &c.decision, info);
        }
    }
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

/// Who opened (or read), and when the event began.
#[derive(Clone, Copy)]
struct Opener {
    pid: u32,
    subject: Sid,
    ticket: Ticket,
}
