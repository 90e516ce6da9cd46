//! Property test of the ignore marks (issue 5, item 6): under random
//! opens, reads, boolean flips, relabels and domains entering scope, an
//! ignore mark never lets through what the policy denies.
//!
//! * The kernel is a model [`MarkTarget`]: per inode, the ignored mask.
//!   An open of an inode whose mask has `OPEN_PERM` is let through
//!   without asking the daemon, a read of one with `ACCESS_PERM` too;
//!   every other open or read is an event, which the test decides as
//!   `enforcer.rs` does (the AVC, then `Marks::after_open` or
//!   `Marks::after_read`). The model can also run out of marks
//!   (`ENOSPC`), like a fanotify group at its mark limit.
//! * Changes are made as the daemon makes them: `Avc::set_booleans` then
//!   `Marks::flush(None)`; a relabel (the inode gets another SID) then
//!   `Marks::flush(None)` or, drawn half the time, `Marks::relabeled`
//!   (that inode's marks only, as for a relabel the daemon makes); `Marks::enter_scope` before a new domain runs;
//!   and, when every confined process exited, `Marks::flush` with the
//!   default domain as the only scope.
//! * Subjects are kept by the kernel (cgroups), so they outlive the
//!   daemon: a restart drops every mark (the old group is closed) and a
//!   new `Marks` starts with the running domains in scope
//!   (`Marks::start_with`, as the daemon does with the domains it finds
//!   in its cgroup tree), while every process keeps its domain and its
//!   descriptors. Marks are per filesystem here as in the daemon: one
//!   device, whatever mount the opens come through.
//! * The invariant is checked after every step against libsepol (through
//!   rampart-oracle), never against the AVC:
//!   - an inode whose mask has `OPEN_PERM`: every domain that may run (in
//!     `Marks::scope()`, and every domain the test runs) is allowed
//!     `open read write append` on the inode's current label in its
//!     class (`open read` for a directory), or `open read` if the domain's
//!     opens for writing are supervised (crate::supervised, "Opens": each
//!     seed draws which domains run under that filter; their opens asking
//!     to write never meet a mark, they are decided by the daemon, here
//!     compared with libsepol);
//!   - an inode whose mask has `ACCESS_PERM`: every domain holding a
//!     descriptor open for reading on it is allowed `read`. The test
//!     tracks the holders itself, independently of `Marks`, including
//!     the opens the kernel let through unasked under an open mark and
//!     descriptors passed to another domain (`SCM_RIGHTS`, which the
//!     daemon never sees).
//!
//!   Every event's AVC decision is also compared with libsepol's.
//! * Even inodes have no xattr: their label comes from their path, and
//!   the test leaves it *unresolved* where `PathLabels` says every label
//!   a path could give (here: every label of the world in its class) is
//!   granted, as `Enforcer::decide` does. Such an event is allowed
//!   without the label, which libsepol must confirm for the real one, and
//!   its marks are justified for all the candidates.
//! * Not vacuous: the run must place both kinds of mark many times, let
//!   many opens and reads through unasked, and make boolean flips,
//!   relabels and scope entries that *needed* their flush (the marks
//!   standing before it already broke the invariant under the new state).
//!   And the checker must catch a daemon that forgets a flush (on a
//!   boolean change, on a relabel, a domain entering scope) or a kernel
//!   whose flush does nothing.
//!
//! Each seed draws its own world from the pools (swarm testing): some
//! domains, labels and booleans, 4 to 16 inodes, a mark limit; files are
//! also deleted and created (new inodes no domain has opened yet).
//!
//! Seeds: 1 to 32 of 3000 steps. `RAMPART_MARKS_SEED=N` runs only seed N
//! (every failure prints its seed, world and the steps that led to it);
//! `RAMPART_MARKS_SEEDS=N` runs seeds 1 to N; `RAMPART_MARKS_STEPS=N`
//! changes the steps per seed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt;
use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rampart_avc::{Avc, AvcConfig, Decision, NullSink, Perms, Sid};
use rampart_enforce::testing::{
    mapping, ClassPerms, Classes, EventObject, Grants, InScope, InodeKey, MarkTarget, Marks, ObjectAt, ObjectLabel,
    PathLabels, ACCESS_PERM, OPEN_PERM,
};
use rampart_label::FileType;
use rampart_oracle::{Answer, Oracle};
use rampart_policy::Policy;

// ---------------------------------------------------------------------
// The pools: domains, labels and booleans the Debian policy ties together.

/// Domains; the first is the default domain, always in scope.
const DOMAINS: [&str; 5] = [
    "unconfined_u:unconfined_r:unconfined_t:s0-s0:c0.c1023",
    "system_u:system_r:httpd_t:s0",
    "system_u:system_r:ftpd_t:s0",
    "user_u:user_r:user_t:s0",
    "staff_u:staff_r:staff_t:s0-s0:c0.c1023",
];

/// Object labels `(class, context)`. Booleans decide many of them for
/// httpd_t and ftpd_t (`sesearch -A -s httpd_t -c file -p read`):
/// user_home_t (httpd_read_user_content; ftp_home_dir, read-write),
/// user_tmp_t (ftp_home_dir), httpd_*_content_t (httpd_builtin_scripting,
/// httpd_unified, httpd_enable_cgi), public_content_rw_t
/// (allow_httpd_anon_write, allow_ftpd_anon_write), nfs_t
/// (use_nfs_home_dirs with ftp_home_dir or httpd_enable_homedirs), every
/// non-auth type (allow_ftpd_full_access); etc_t is read by all, shadow_t
/// by none of them but unconfined_t; one label has a category.
const LABELS: [(&str, &str); 17] = [
    ("file", "system_u:object_r:user_home_t:s0"),
    ("file", "user_u:object_r:user_home_t:s0"),
    ("file", "system_u:object_r:user_home_t:s0:c5"),
    ("file", "system_u:object_r:user_tmp_t:s0"),
    ("file", "system_u:object_r:httpd_user_content_t:s0"),
    ("file", "system_u:object_r:httpd_sys_content_t:s0"),
    ("file", "system_u:object_r:httpd_sys_rw_content_t:s0"),
    ("file", "system_u:object_r:public_content_t:s0"),
    ("file", "system_u:object_r:public_content_rw_t:s0"),
    ("file", "system_u:object_r:etc_t:s0"),
    ("file", "system_u:object_r:shadow_t:s0"),
    ("file", "system_u:object_r:tmp_t:s0"),
    ("file", "system_u:object_r:nfs_t:s0"),
    ("dir", "system_u:object_r:user_home_t:s0"),
    ("dir", "system_u:object_r:public_content_rw_t:s0"),
    ("dir", "system_u:object_r:httpd_sys_content_t:s0"),
    ("dir", "system_u:object_r:nfs_t:s0"),
];

/// The booleans flipped.
const BOOLEANS: [&str; 11] = [
    "httpd_read_user_content",
    "httpd_enable_homedirs",
    "httpd_builtin_scripting",
    "httpd_unified",
    "httpd_enable_cgi",
    "allow_httpd_anon_write",
    "ftp_home_dir",
    "allow_ftpd_full_access",
    "allow_ftpd_anon_write",
    "allow_ftpd_use_nfs",
    "use_nfs_home_dirs",
];

/// Most inodes per world.
const INODES: usize = 16;
const STEPS: usize = 3000;
/// Seeds 1 to `SEEDS`.
const SEEDS: u64 = 32;

// ---------------------------------------------------------------------
// Small tools.

/// xorshift64*.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// The system policy; fails the test if it is not installed.
fn policy() -> (PathBuf, Arc<Policy>) {
    let path = rampart_policy::default_policy_path().unwrap_or_else(|e| {
        panic!(
            "missing prerequisite: the system policy ({e}); \
             install it with scripts/install-deps.sh"
        )
    });
    let policy = Policy::from_file(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (path, Arc::new(policy))
}

// ---------------------------------------------------------------------
// The kernel's side: a model mark target.

#[derive(Default)]
struct Model {
    masks: Mutex<HashMap<InodeKey, u64>>,
    limit: usize,
    /// A broken kernel (for the checker's own test): flush does nothing.
    flush_is_noop: bool,
    /// Ignore bits newly set: `OPEN_PERM`, `ACCESS_PERM`.
    opens_placed: AtomicU64,
    accesses_placed: AtomicU64,
    enospc: AtomicU64,
}

impl Model {
    fn new(limit: usize, flush_is_noop: bool) -> Model {
        Model { limit, flush_is_noop, ..Model::default() }
    }
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<InodeKey, u64>> {
        self.masks.lock().unwrap_or_else(PoisonError::into_inner)
    }
    fn mask(&self, inode: InodeKey) -> u64 {
        self.lock().get(&inode).copied().unwrap_or(0)
    }
    fn snapshot(&self) -> Vec<(InodeKey, u64)> {
        let mut v: Vec<_> = self.lock().iter().map(|(&k, &m)| (k, m)).collect();
        v.sort_unstable();
        v
    }
}

impl MarkTarget for Model {
    fn ignore(&self, _fd: std::os::fd::BorrowedFd<'_>, inode: InodeKey, mask: u64) -> io::Result<()> {
        let mut masks = self.lock();
        let old = masks.get(&inode).copied().unwrap_or(0);
        if old == 0 && masks.len() >= self.limit {
            self.enospc.fetch_add(1, Ordering::Relaxed);
            return Err(io::Error::from_raw_os_error(libc::ENOSPC));
        }
        let new = old | mask;
        if new & !old & OPEN_PERM != 0 {
            self.opens_placed.fetch_add(1, Ordering::Relaxed);
        }
        if new & !old & ACCESS_PERM != 0 {
            self.accesses_placed.fetch_add(1, Ordering::Relaxed);
        }
        if new != 0 {
            masks.insert(inode, new);
        }
        Ok(())
    }
    fn forget(&self, _at: ObjectAt<'_>, inode: InodeKey) -> io::Result<()> {
        if !self.flush_is_noop {
            self.lock().remove(&inode);
        }
        Ok(())
    }
    fn flush(&self) -> io::Result<()> {
        if !self.flush_is_noop {
            self.lock().clear();
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------
// The reference: libsepol, with its answers cached per boolean state.

struct Reference {
    oracle: Oracle,
    /// Booleans the test changes, and their current values as bits.
    names: Vec<&'static str>,
    defaults: u64,
    values: u64,
    contexts: Vec<String>,
    context_ids: HashMap<String, u32>,
    classes: Vec<String>,
    /// Per class: `(perm name, bit)`.
    perm_bits: Vec<Vec<(String, u32)>>,
    /// `(boolean values, scontext id, tcontext id, class id)` -> allowed.
    cache: HashMap<(u64, u32, u32, u32), u32>,
    queries: u64,
}

impl Reference {
    fn new(policy: &std::path::Path, names: &[&'static str]) -> Reference {
        let mut oracle = Oracle::spawn(policy).expect("spawn the libsepol oracle");
        oracle.bools_default().expect("oracle: default booleans");
        let all: HashMap<String, bool> = oracle.bools().expect("oracle: booleans").into_iter().collect();
        let mut defaults = 0;
        for (i, n) in names.iter().enumerate() {
            let v = *all.get(*n).unwrap_or_else(|| panic!("boolean {n} not in the policy"));
            defaults |= u64::from(v) << i;
        }
        Reference {
            oracle,
            names: names.to_vec(),
            defaults,
            values: defaults,
            contexts: Vec::new(),
            context_ids: HashMap::new(),
            classes: Vec::new(),
            perm_bits: Vec::new(),
            cache: HashMap::new(),
            queries: 0,
        }
    }

    fn reset(&mut self) {
        self.oracle.bools_default().expect("oracle: default booleans");
        self.values = self.defaults;
    }

    fn value(&self, b: usize) -> bool {
        self.values & (1 << b) != 0
    }

    fn set(&mut self, b: usize, value: bool) {
        self.oracle.set_bool(self.names[b], value).expect("oracle: set boolean");
        self.values = (self.values & !(1 << b)) | (u64::from(value) << b);
    }

    fn context(&mut self, c: &str) -> u32 {
        if let Some(&id) = self.context_ids.get(c) {
            return id;
        }
        let id = self.contexts.len() as u32;
        self.contexts.push(c.to_owned());
        self.context_ids.insert(c.to_owned(), id);
        id
    }

    fn class(&mut self, c: &str) -> u32 {
        if let Some(i) = self.classes.iter().position(|x| x == c) {
            return i as u32;
        }
        let perms = self.oracle.perms(c).expect("oracle: class permissions");
        self.classes.push(c.to_owned());
        self.perm_bits.push(perms);
        (self.classes.len() - 1) as u32
    }

    /// libsepol's bits for `perms` of class `class`.
    fn bits(&self, class: u32, perms: &[&str]) -> u32 {
        perms
            .iter()
            .map(|p| {
                self.perm_bits[class as usize]
                    .iter()
                    .find(|(n, _)| n == p)
                    .unwrap_or_else(|| panic!("class {} has no permission {p}", self.classes[class as usize]))
                    .1
            })
            .fold(0, |a, b| a | b)
    }

    /// libsepol's allowed vector for `s` on `t` in `class`, now.
    fn allowed(&mut self, s: u32, t: u32, class: u32) -> u32 {
        let key = (self.values, s, t, class);
        if let Some(&a) = self.cache.get(&key) {
            return a;
        }
        self.queries += 1;
        let (sc, tc, cc) = (&self.contexts[s as usize], &self.contexts[t as usize], &self.classes[class as usize]);
        let answer = match self.oracle.query(sc, tc, cc).expect("oracle query") {
            Answer::Decision(d) => {
                assert!(!d.permissive, "{sc} is permissive: choose enforced domains");
                d.allowed
            }
            Answer::Error(e) => panic!("libsepol rejects `{sc} {tc} {cc}`: {e}"),
        };
        self.cache.insert(key, answer);
        answer
    }
}

// ---------------------------------------------------------------------
// The world: the daemon's state, the processes' descriptors, the labels.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    None,
    /// The daemon changes a boolean but does not flush.
    SkipFlushOnBoolean,
    /// The daemon learns of a relabel but does not flush.
    SkipFlushOnRelabel,
    /// A new domain runs without `enter_scope`.
    SkipEnterScope,
    /// The kernel's flush removes nothing.
    KernelFlushIsNoop,
    /// A restarted daemon starts with the default domain alone in scope,
    /// forgetting the domains whose processes still run.
    RestartForgetsRunningDomains,
    /// The daemon counts every domain's opens for writing as supervised,
    /// while none is.
    TrustsUnsupervisedWrites,
}

impl Fault {
    /// Whether a step of `kind` is where this fault acts.
    fn acts_in(self, kind: StepKind) -> bool {
        match self {
            Fault::None => false,
            Fault::SkipFlushOnBoolean => kind == StepKind::Flip,
            Fault::SkipFlushOnRelabel => kind == StepKind::Relabel,
            Fault::SkipEnterScope => kind == StepKind::Enter,
            Fault::KernelFlushIsNoop => {
                matches!(kind, StepKind::Flip | StepKind::Relabel | StepKind::Enter)
            }
            // It acts at the restart, but breaks the invariant at a later
            // open: every step after a restart counts.
            Fault::RestartForgetsRunningDomains => kind != StepKind::Restart,
            // Acts wherever a mark is placed or a domain enters.
            Fault::TrustsUnsupervisedWrites => true,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StepKind {
    Open,
    Read,
    Flip,
    Relabel,
    Enter,
    Exit,
    Create,
    Restart,
    Pass,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flags {
    Read,
    Write,
    ReadWrite,
    Append,
}

impl Flags {
    fn libc(self) -> u64 {
        (match self {
            Flags::Read => libc::O_RDONLY,
            Flags::Write => libc::O_WRONLY,
            Flags::ReadWrite => libc::O_RDWR,
            Flags::Append => libc::O_WRONLY | libc::O_APPEND,
        }) as u64
    }
    fn perms(self) -> &'static [&'static str] {
        match self {
            Flags::Read => &["open", "read"],
            Flags::Write => &["open", "write"],
            Flags::ReadWrite => &["open", "read", "write"],
            Flags::Append => &["open", "append"],
        }
    }
    fn reads(self) -> bool {
        matches!(self, Flags::Read | Flags::ReadWrite)
    }
}

struct Domain {
    context: String,
    sid: Sid,
    rid: u32,
}

struct Label {
    class: &'static str,
    context: String,
    sid: Sid,
    rid: u32,
    cid: u32,
    cp: ClassPerms,
    /// libsepol's bits: everything an open can ask, an open for reading,
    /// and `read`.
    any_open_bits: u32,
    read_open_bits: u32,
    read_bits: u32,
}

/// The file type of a label's class.
fn file_type(class: &str) -> Option<FileType> {
    match class {
        "file" => Some(FileType::Regular),
        "dir" => Some(FileType::Directory),
        _ => None,
    }
}

/// A broken invariant: `(inode, domain, "open" or "read")`.
type Violation = (usize, usize, &'static str);

#[derive(Clone, Copy, Debug, Default)]
struct Stats {
    steps: u64,
    open_events: u64,
    opens_denied: u64,
    opens_unasked: u64,
    read_events: u64,
    reads_denied: u64,
    reads_unasked: u64,
    open_marks_placed: u64,
    access_marks_placed: u64,
    enospc: u64,
    flushes: u64,
    flips: u64,
    flips_needed: u64,
    relabels: u64,
    relabels_needed: u64,
    entries: u64,
    entries_needed: u64,
    exits: u64,
    restarts: u64,
    creates: u64,
    /// Descriptors passed to another domain (`SCM_RIGHTS`).
    passes: u64,
    /// Events decided without the label (inodes without an xattr).
    unresolved_opens: u64,
    unresolved_reads: u64,
    /// Opens for writing by a supervised domain (decided by the daemon).
    supervised_opens: u64,
    /// Per step, the open marks standing that only supervision justifies
    /// (a supervised domain in scope may not open the inode for writing).
    relaxed_marks: u64,
}

impl Stats {
    fn add(&mut self, o: &Stats) {
        self.steps += o.steps;
        self.open_events += o.open_events;
        self.opens_denied += o.opens_denied;
        self.opens_unasked += o.opens_unasked;
        self.read_events += o.read_events;
        self.reads_denied += o.reads_denied;
        self.reads_unasked += o.reads_unasked;
        self.open_marks_placed += o.open_marks_placed;
        self.access_marks_placed += o.access_marks_placed;
        self.enospc += o.enospc;
        self.flushes += o.flushes;
        self.flips += o.flips;
        self.flips_needed += o.flips_needed;
        self.relabels += o.relabels;
        self.relabels_needed += o.relabels_needed;
        self.entries += o.entries;
        self.entries_needed += o.entries_needed;
        self.exits += o.exits;
        self.restarts += o.restarts;
        self.creates += o.creates;
        self.passes += o.passes;
        self.unresolved_opens += o.unresolved_opens;
        self.unresolved_reads += o.unresolved_reads;
        self.supervised_opens += o.supervised_opens;
        self.relaxed_marks += o.relaxed_marks;
    }
}

struct World<'r> {
    r: &'r mut Reference,
    avc: Avc,
    marks: Marks<Model>,
    /// The labels an inode without an xattr may have: every label of the
    /// world in its class.
    paths: PathLabels,
    domains: Vec<Domain>,
    labels: Vec<Label>,
    /// Per inode: its label (index into `labels`).
    inodes: Vec<usize>,
    /// Per inode: its inode number. A created file takes a new one, or
    /// one a deleted file freed.
    inos: Vec<u64>,
    freed: Vec<u64>,
    next_ino: u64,
    running: Vec<bool>,
    /// Per domain: its processes run under the supervised-opens filter
    /// (never the default domain's).
    supervised: Vec<bool>,
    /// The booleans this world flips (indices into the reference's).
    flippable: Vec<usize>,
    /// `(inode, domain)`: the domain holds a descriptor open for reading.
    holders: BTreeSet<(usize, usize)>,
    by_sid: HashMap<Sid, usize>,
    /// Any real descriptor: the model ignores it.
    fd: File,
    fault: Fault,
    /// The kernel's mark limit per group.
    limit: usize,
    stats: Stats,
    /// Every step: the inode it concerned (`None`: all of them), what.
    log: Vec<(Option<usize>, String)>,
}

const DEV: u64 = 0xfd00;

impl<'r> World<'r> {
    #[allow(clippy::too_many_arguments)]
    fn new(
        r: &'r mut Reference,
        policy: &Arc<Policy>,
        domains: &[String],
        labels: &[(&'static str, String)],
        flippable: Vec<usize>,
        inodes: Vec<usize>,
        fault: Fault,
        limit: usize,
    ) -> World<'r> {
        r.reset();
        let map = mapping().expect("mapping");
        let classes = Classes::new(&map).expect("classes");
        let avc = Avc::new(AvcConfig::new(Arc::clone(policy), map, Arc::new(NullSink))).expect("avc");
        let domains: Vec<Domain> = domains
            .iter()
            .map(|c| Domain { context: c.clone(), sid: avc.intern(c).expect("intern"), rid: r.context(c) })
            .collect();
        let labels: Vec<Label> = labels
            .iter()
            .map(|(class, c)| {
                let cp = match *class {
                    "file" => classes.file(),
                    "dir" => classes.of_mode(libc::S_IFDIR),
                    _ => None,
                }
                .expect("class");
                let cid = r.class(class);
                let any: &[&str] =
                    if *class == "dir" { &["open", "read"] } else { &["open", "read", "write", "append"] };
                Label {
                    class,
                    context: c.clone(),
                    sid: avc.intern(c).expect("intern"),
                    rid: r.context(c),
                    cid,
                    cp,
                    any_open_bits: r.bits(cid, any),
                    read_open_bits: r.bits(cid, &["open", "read"]),
                    read_bits: r.bits(cid, &["read"]),
                }
            })
            .collect();
        let by_sid = domains.iter().enumerate().map(|(i, d)| (d.sid, i)).collect();
        let paths = Self::path_labels(&labels);
        let mut running = vec![false; domains.len()];
        running[0] = true;
        let marks = Marks::new(Model::new(limit, fault == Fault::KernelFlushIsNoop), domains[0].sid, true);
        let inos: Vec<u64> = (1000..).take(inodes.len()).collect();
        World {
            r,
            next_ino: 1000 + inos.len() as u64,
            inos,
            freed: Vec::new(),
            avc,
            marks,
            paths,
            domains,
            labels,
            inodes,
            supervised: vec![false; running.len()],
            running,
            flippable,
            holders: BTreeSet::new(),
            by_sid,
            fd: File::open("/dev/null").expect("/dev/null"),
            fault,
            limit,
            stats: Stats::default(),
            log: Vec::new(),
        }
    }

    /// What a daemon computes from file_contexts: every label of the
    /// world in its class (a fresh cache, as a new daemon has).
    fn path_labels(labels: &[Label]) -> PathLabels {
        PathLabels::with_candidates(|ft| {
            labels.iter().filter(|l| Some(ft) == file_type(l.class)).map(|l| l.sid).collect()
        })
    }

    fn model(&self) -> &Model {
        self.marks.target()
    }

    fn key(&self, i: usize) -> InodeKey {
        (DEV, self.inos[i])
    }

    /// Inode `i` as an event of domain `sid` asking `perms` sees it, in
    /// `epoch`: unresolved if it has no xattr and every label its path
    /// could give grants them.
    fn target(&self, i: usize, sid: Sid, perms: Perms, epoch: u64) -> EventObject {
        let l = &self.labels[self.inodes[i]];
        let ft = file_type(l.class).expect("file or dir");
        let label = if Self::path_labeled(i) && self.paths.allow(&self.avc, sid, l.cp.class, perms, ft, epoch) {
            ObjectLabel::Unresolved(ft)
        } else {
            ObjectLabel::Sid(l.sid)
        };
        EventObject {
            inode: self.key(i),
            label,
            class: l.cp.class,
            any_open: l.cp.any_open(),
            read_open: l.cp.open | l.cp.read,
            read: l.cp.read,
        }
    }

    /// Even inodes have no xattr (a replacing file keeps its slot's kind).
    fn path_labeled(i: usize) -> bool {
        i % 2 == 0
    }

    fn grants(&self) -> Grants<'_> {
        Grants { avc: &self.avc, paths: &self.paths, apparmor: None }
    }

    fn note(&mut self, inode: Option<usize>, line: String) {
        self.log.push((inode, line));
    }

    /// The last steps that concerned the inodes of `v` or every inode.
    fn history(&self, v: &[Violation]) -> Vec<String> {
        let inodes: HashSet<usize> = v.iter().map(|&(i, _, _)| i).collect();
        let mut lines: Vec<String> = self
            .log
            .iter()
            .rev()
            .filter(|(i, _)| i.map_or(true, |i| inodes.contains(&i)))
            .take(60)
            .map(|(_, l)| l.clone())
            .collect();
        lines.reverse();
        lines
    }

    fn type_of(context: &str) -> &str {
        context.split(':').nth(2).unwrap_or(context)
    }

    fn describe_inode(&self, i: usize) -> String {
        let l = &self.labels[self.inodes[i]];
        format!("inode {i} ({} {})", l.class, l.context)
    }

    /// libsepol allows `bits` of domain `d` on inode `i`'s label now.
    fn reference_allows(&mut self, d: usize, i: usize, bits: u32) -> bool {
        let l = &self.labels[self.inodes[i]];
        let (s, t, c) = (self.domains[d].rid, l.rid, l.cid);
        self.r.allowed(s, t, c) & bits == bits
    }

    /// Domain `d` opens inode `i` with `flags`. Returns whether the open
    /// succeeded and whether the daemon was asked.
    fn open(&mut self, d: usize, i: usize, flags: Flags) -> (bool, bool) {
        assert!(self.running[d], "only running domains open files");
        if self.supervised[d] && flags != Flags::Read {
            return (self.supervised_open(d, i, flags), true);
        }
        // As Enforcer::handle: the ticket before the label is looked up.
        let ticket = self.marks.ticket();
        let key = self.key(i);
        let label = self.inodes[i];
        let (cp, lsid) = (self.labels[label].cp, self.labels[label].sid);
        let sid = self.domains[d].sid;
        let target = self.target(i, sid, cp.any_open(), ticket.epoch());
        let (opened, asked) = if self.model().mask(key) & OPEN_PERM != 0 {
            self.stats.opens_unasked += 1;
            (true, false)
        } else {
            self.stats.open_events += 1;
            // As Enforcer::open: everything an open can ask first, the
            // opener's flags only when some of that is denied.
            let first = match target.label {
                ObjectLabel::Sid(_) => self.avc.has_perm_noaudit(sid, lsid, cp.class, cp.any_open()),
                // Allowed without the label: what libsepol says of the
                // real one is checked below.
                ObjectLabel::Unresolved(_) => {
                    self.stats.unresolved_opens += 1;
                    let none = Perms::NONE;
                    Decision {
                        allowed: cp.any_open(),
                        denied: none,
                        auditallow: none,
                        auditdeny: none,
                        permissive: false,
                        seqno: 0,
                    }
                }
            };
            let requested = cp.for_flags(flags.libc());
            let allowed = (first.denied & requested).is_empty();
            let any_bits = self.labels[label].any_open_bits;
            let req_bits = self.r.bits(self.labels[label].cid, flags.perms());
            let (ref_any, ref_req) = (self.reference_allows(d, i, any_bits), self.reference_allows(d, i, req_bits));
            assert_eq!(
                (first.denied.is_empty(), allowed),
                (ref_any, ref_req),
                "the AVC and libsepol disagree on {} opening {} {:?}",
                self.domains[d].context,
                self.describe_inode(i),
                flags
            );
            if allowed {
                self.marks.after_open(&self.grants(), self.fd.as_fd(), &target, ticket);
            } else {
                self.stats.opens_denied += 1;
            }
            (allowed, true)
        };
        if opened && flags.reads() {
            self.holders.insert((i, d));
        }
        (opened, asked)
    }

    /// Domain `d`, under the supervised-opens filter, opens inode `i` for
    /// writing: the daemon decides it (the AVC for what the flags ask,
    /// crate::supervisor) and places no mark.
    fn supervised_open(&mut self, d: usize, i: usize, flags: Flags) -> bool {
        let l = &self.labels[self.inodes[i]];
        let (cp, lsid, cid) = (l.cp, l.sid, l.cid);
        let allowed =
            self.avc.has_perm_noaudit(self.domains[d].sid, lsid, cp.class, cp.for_flags(flags.libc())).passes();
        let bits = self.r.bits(cid, flags.perms());
        let reference = self.reference_allows(d, i, bits);
        assert_eq!(allowed, reference, "the AVC and libsepol disagree on a supervised open {flags:?}");
        self.stats.supervised_opens += 1;
        if allowed && flags.reads() {
            self.holders.insert((i, d));
        }
        allowed
    }

    /// What the daemon is told of domain `d`'s opens.
    fn in_scope(&self, d: usize) -> InScope {
        let trusted = self.fault == Fault::TrustsUnsupervisedWrites && d != 0;
        InScope { who: self.domains[d].sid, direct_writes: !self.supervised[d] && !trusted }
    }

    /// Domain `d` reads inode `i` through a descriptor it holds. Returns
    /// whether the read succeeded and whether the daemon was asked.
    fn read(&mut self, d: usize, i: usize) -> (bool, bool) {
        assert!(self.holders.contains(&(i, d)), "reads go through a descriptor open for reading");
        let key = self.key(i);
        if self.model().mask(key) & ACCESS_PERM != 0 {
            self.stats.reads_unasked += 1;
            return (true, false);
        }
        self.stats.read_events += 1;
        let ticket = self.marks.ticket();
        let sid = self.domains[d].sid;
        let read = self.labels[self.inodes[i]].cp.read;
        let target = self.target(i, sid, read, ticket.epoch());
        let allowed = match target.label {
            ObjectLabel::Sid(t) => self.avc.has_perm_noaudit(sid, t, target.class, target.read).denied.is_empty(),
            ObjectLabel::Unresolved(_) => {
                self.stats.unresolved_reads += 1;
                true
            }
        };
        let read_bits = self.labels[self.inodes[i]].read_bits;
        let reference = self.reference_allows(d, i, read_bits);
        assert_eq!(
            allowed,
            reference,
            "the AVC and libsepol disagree on {} reading {}",
            self.domains[d].context,
            self.describe_inode(i)
        );
        if allowed {
            self.marks.after_read(&self.grants(), self.fd.as_fd(), &target, ticket);
        } else {
            self.stats.reads_denied += 1;
        }
        (allowed, true)
    }

    /// Sets boolean `b` (index into the reference's names) as the daemon
    /// does; returns whether the flush was needed.
    fn set_boolean(&mut self, b: usize, value: bool) -> bool {
        let name = self.r.names[b];
        self.avc.set_booleans(&[(name, value)]).expect("set boolean");
        self.r.set(b, value);
        self.stats.flips += 1;
        let needed = !self.violations().is_empty();
        self.stats.flips_needed += u64::from(needed);
        if self.fault != Fault::SkipFlushOnBoolean {
            self.marks.flush(None).expect("flush");
        }
        needed
    }

    /// Inode `i` is relabeled `label`, and the daemon told: it flushes
    /// every mark, or (`one_inode`, as when it labels an object it just
    /// made, crate::new_labels) removes that inode's.
    fn relabel(&mut self, i: usize, label: usize, one_inode: bool) -> bool {
        assert_eq!(self.labels[label].class, self.labels[self.inodes[i]].class, "a relabel keeps the class");
        self.inodes[i] = label;
        self.stats.relabels += 1;
        let needed = !self.violations().is_empty();
        self.stats.relabels_needed += u64::from(needed);
        if self.fault != Fault::SkipFlushOnRelabel {
            if one_inode {
                let inode = (DEV, self.inos[i]);
                self.marks.relabeled(ObjectAt::Fd(self.fd.as_fd()), inode).expect("forget one inode");
            } else {
                self.marks.flush(None).expect("flush");
            }
        }
        needed
    }

    /// Domain `d` is about to run (an exec transition).
    fn enter(&mut self, d: usize) -> bool {
        self.running[d] = true;
        self.stats.entries += 1;
        let needed = !self.violations().is_empty();
        self.stats.entries_needed += u64::from(needed);
        if self.fault != Fault::SkipEnterScope {
            self.marks.enter_scope(self.in_scope(d)).expect("enter scope");
        }
        needed
    }

    /// The file of inode `i` is deleted (its descriptors closed, the
    /// inode and its mark gone) and another file, labeled `label`, takes
    /// its place: a new inode that no domain has opened yet.
    fn replace(&mut self, i: usize, label: usize, reuse: bool) {
        let old = self.inos[i];
        self.marks.target().lock().remove(&(DEV, old));
        self.holders.retain(|&(j, _)| j != i);
        self.inos[i] = match (reuse, self.freed.is_empty()) {
            (true, false) => self.freed.remove(0),
            _ => {
                self.next_ino += 1;
                self.next_ino - 1
            }
        };
        self.freed.push(old);
        self.inodes[i] = label;
        self.stats.creates += 1;
    }

    /// A process of domain `to` receives a descriptor of inode `i` open
    /// for reading (`SCM_RIGHTS`): nothing asks the daemon.
    fn pass(&mut self, i: usize, to: usize) {
        assert!(self.running[to], "only a running process receives a descriptor");
        self.holders.insert((i, to));
        self.stats.passes += 1;
    }

    /// Every process but those of the default domain exited (their
    /// descriptors closed); the daemon recomputes its scope.
    fn exit_all(&mut self) {
        for r in self.running.iter_mut().skip(1) {
            *r = false;
        }
        self.holders.retain(|&(_, d)| d == 0);
        self.stats.exits += 1;
        self.marks.flush(Some(vec![self.in_scope(0)])).expect("flush");
    }

    /// The daemon restarts: its group is closed (every mark gone) and a
    /// new one starts with the domains its cgroup tree holds; processes
    /// keep their domains and descriptors.
    fn restart(&mut self) {
        self.carry_model_stats();
        let model = Model::new(self.limit, self.fault == Fault::KernelFlushIsNoop);
        let mut marks = Marks::new(model, self.domains[0].sid, true);
        let running: Vec<InScope> =
            (0..self.domains.len()).filter(|&d| self.running[d]).map(|d| self.in_scope(d)).collect();
        if self.fault != Fault::RestartForgetsRunningDomains {
            marks.start_with(&running);
        }
        self.marks = marks;
        self.paths = Self::path_labels(&self.labels);
        self.stats.restarts += 1;
    }

    /// Adds the current kernel model's counters to the stats (before it
    /// is replaced at a restart, and at the end).
    fn carry_model_stats(&mut self) {
        let m = self.marks.target();
        self.stats.open_marks_placed += m.opens_placed.load(Ordering::Relaxed);
        self.stats.access_marks_placed += m.accesses_placed.load(Ordering::Relaxed);
        self.stats.enospc += m.enospc.load(Ordering::Relaxed);
        self.stats.flushes += self.marks.flushes();
    }

    /// The open marks standing that some domain in scope could not have
    /// were its opens for writing not supervised.
    fn relaxed_marks(&mut self) -> u64 {
        let scope: Vec<usize> = self.marks.scope().iter().filter_map(|s| self.by_sid.get(&s.who).copied()).collect();
        let slots: HashMap<InodeKey, usize> = (0..self.inos.len()).map(|i| (self.key(i), i)).collect();
        let mut n = 0;
        for (key, mask) in self.model().snapshot() {
            let Some(&i) = slots.get(&key) else { continue };
            let any = self.labels[self.inodes[i]].any_open_bits;
            if mask & OPEN_PERM != 0 && scope.iter().any(|&d| self.supervised[d] && !self.reference_allows(d, i, any)) {
                n += 1;
            }
        }
        n
    }

    /// Every ignore mark standing now that lets through what libsepol
    /// denies.
    fn violations(&mut self) -> Vec<Violation> {
        let mut may_run: Vec<usize> = self
            .marks
            .scope()
            .iter()
            .map(|s| {
                *self.by_sid.get(&s.who).unwrap_or_else(|| panic!("a SID in scope that no domain has: {:?}", s.who))
            })
            .collect();
        may_run.extend((0..self.domains.len()).filter(|&d| self.running[d]));
        may_run.sort_unstable();
        may_run.dedup();
        let slots: HashMap<InodeKey, usize> = (0..self.inos.len()).map(|i| (self.key(i), i)).collect();
        let mut out = Vec::new();
        for (key, mask) in self.model().snapshot() {
            let i = *slots.get(&key).expect("marks only on live inodes");
            let l = self.inodes[i];
            if mask & OPEN_PERM != 0 {
                for &d in &may_run {
                    // The test's own account of who is supervised, not
                    // what the daemon was told.
                    let bits =
                        if self.supervised[d] { self.labels[l].read_open_bits } else { self.labels[l].any_open_bits };
                    if !self.reference_allows(d, i, bits) {
                        out.push((i, d, "open"));
                    }
                }
            }
            if mask & ACCESS_PERM != 0 {
                let holders: Vec<usize> = self.holders.range((i, 0)..(i + 1, 0)).map(|&(_, d)| d).collect();
                for d in holders {
                    if !self.reference_allows(d, i, self.labels[l].read_bits) {
                        out.push((i, d, "read"));
                    }
                }
            }
        }
        out
    }

    fn explain(&self, v: &[Violation]) -> String {
        v.iter()
            .map(|&(i, d, what)| {
                let l = &self.labels[self.inodes[i]];
                let (mark, perms) = match (what, l.class) {
                    ("open", "dir") => ("an OPEN", "open read"),
                    ("open", _) => ("an OPEN", "open read write append"),
                    _ => ("an ACCESS", "read"),
                };
                format!(
                    "  {} has {mark} ignore mark, but libsepol denies {} {{ {perms} }} on {} (booleans: {})",
                    self.describe_inode(i),
                    self.domains[d].context,
                    l.context,
                    self.booleans()
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn booleans(&self) -> String {
        let on: Vec<&str> = (0..self.r.names.len()).filter(|&b| self.r.value(b)).map(|b| self.r.names[b]).collect();
        format!("on: {}", if on.is_empty() { "none".into() } else { on.join(" ") })
    }

    fn collect_stats(&mut self) -> Stats {
        self.carry_model_stats();
        self.stats
    }

    /// One random step; returns its kind, the inode it concerned
    /// (`None`: every inode) and a description.
    fn random_step(&mut self, rng: &mut Rng) -> (StepKind, Option<usize>, String) {
        let roll = rng.below(100);
        let idle: Vec<usize> = (1..self.domains.len()).filter(|&d| !self.running[d]).collect();
        if roll < 4 {
            let b = self.flippable[rng.below(self.flippable.len())];
            let v = !self.r.value(b);
            let needed = self.set_boolean(b, v);
            let name = self.r.names[b];
            return (
                StepKind::Flip,
                None,
                format!("setbool {name} {}{}", u8::from(v), if needed { " (revokes)" } else { "" }),
            );
        }
        if roll < 7 {
            let i = rng.below(self.inodes.len());
            let class = self.labels[self.inodes[i]].class;
            let choices: Vec<usize> =
                (0..self.labels.len()).filter(|&l| l != self.inodes[i] && self.labels[l].class == class).collect();
            if !choices.is_empty() {
                let l = choices[rng.below(choices.len())];
                let from = Self::type_of(&self.labels[self.inodes[i]].context).to_owned();
                let one_inode = rng.below(2) == 0;
                let needed = self.relabel(i, l, one_inode);
                return (
                    StepKind::Relabel,
                    Some(i),
                    format!(
                        "relabel inode {i} {from} -> {}{}{}",
                        self.labels[l].context,
                        if one_inode { " (its marks removed)" } else { "" },
                        if needed { " (revokes)" } else { "" }
                    ),
                );
            }
        }
        if roll < 9 && !idle.is_empty() {
            let d = idle[rng.below(idle.len())];
            let needed = self.enter(d);
            return (
                StepKind::Enter,
                None,
                format!("{} enters scope{}", self.domains[d].context, if needed { " (revokes)" } else { "" }),
            );
        }
        if roll < 13 {
            let i = rng.below(self.inodes.len());
            let l = rng.below(self.labels.len());
            let reuse = rng.below(4) == 0;
            self.replace(i, l, reuse);
            return (
                StepKind::Create,
                Some(i),
                format!("inode {i} is replaced by a new file: {}", self.describe_inode(i)),
            );
        }
        if roll < 14 && rng.below(3) == 0 {
            self.exit_all();
            return (StepKind::Exit, None, "every confined process exits".into());
        }
        if roll < 15 && rng.below(2) == 0 {
            self.restart();
            return (StepKind::Restart, None, "the daemon restarts; processes keep their domains".into());
        }
        if roll < 17 && !self.holders.is_empty() {
            let n = rng.below(self.holders.len());
            let &(i, d) = self.holders.iter().nth(n).expect("holder");
            let running: Vec<usize> = (0..self.domains.len()).filter(|&e| self.running[e] && e != d).collect();
            if !running.is_empty() {
                let to = running[rng.below(running.len())];
                self.pass(i, to);
                return (
                    StepKind::Pass,
                    Some(i),
                    format!(
                        "{} passes its descriptor of {} to {}",
                        Self::type_of(&self.domains[d].context),
                        self.describe_inode(i),
                        Self::type_of(&self.domains[to].context)
                    ),
                );
            }
        }
        if roll < 55 && !self.holders.is_empty() {
            let n = rng.below(self.holders.len());
            let &(i, d) = self.holders.iter().nth(n).expect("holder");
            let (ok, asked) = self.read(d, i);
            return (
                StepKind::Read,
                Some(i),
                format!(
                    "{} reads {}: {}{}",
                    Self::type_of(&self.domains[d].context),
                    self.describe_inode(i),
                    if ok { "allowed" } else { "denied" },
                    if asked { "" } else { " (unasked: ACCESS mark)" }
                ),
            );
        }
        let running: Vec<usize> = (0..self.domains.len()).filter(|&d| self.running[d]).collect();
        let d = running[rng.below(running.len())];
        let i = rng.below(self.inodes.len());
        let flags = if self.labels[self.inodes[i]].class == "dir" {
            Flags::Read
        } else {
            [Flags::Read, Flags::Read, Flags::Write, Flags::ReadWrite, Flags::Append][rng.below(5)]
        };
        let (ok, asked) = self.open(d, i, flags);
        (
            StepKind::Open,
            Some(i),
            format!(
                "{} opens {} {flags:?}: {}{}",
                Self::type_of(&self.domains[d].context),
                self.describe_inode(i),
                if ok { "allowed" } else { "denied" },
                if asked { "" } else { " (unasked: OPEN mark)" }
            ),
        )
    }
}

// ---------------------------------------------------------------------
// Runs.

struct Failure {
    seed: u64,
    step: usize,
    kind: StepKind,
    what: String,
    violations: String,
    setup: String,
    trace: Vec<String>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "seed {} (rerun: RAMPART_MARKS_SEED={}), step {} ({:?}: {}): an ignore mark lets through what the policy denies:",
            self.seed, self.seed, self.step, self.kind, self.what
        )?;
        writeln!(f, "{}", self.violations)?;
        writeln!(f, "{}", self.setup)?;
        writeln!(f, "the last steps on those inodes, and every flip, scope change and exit:")?;
        for line in &self.trace {
            writeln!(f, "  {line}")?;
        }
        Ok(())
    }
}

/// About half of `pool`, at least `min` of it.
fn draw<T: Copy>(rng: &mut Rng, pool: &[T], min: usize) -> Vec<T> {
    loop {
        let v: Vec<T> = pool.iter().copied().filter(|_| rng.below(2) == 0).collect();
        if v.len() >= min.min(pool.len()) {
            return v;
        }
    }
}

/// `steps` random steps from `seed`. `Fault::None` stops at the first
/// broken invariant; with a fault, the run goes on and fails at the
/// first step where the fault acts and a violation appears that was not
/// there before it.
fn run(r: &mut Reference, policy: &Arc<Policy>, seed: u64, steps: usize, fault: Fault) -> Result<Stats, Failure> {
    let mut rng = Rng::new(seed);
    // Swarm testing: each seed draws its own world from the pools, some
    // small enough for rare interleavings to be common.
    let mut domains = vec![DOMAINS[0].to_owned()];
    domains.extend(draw(&mut rng, &DOMAINS[1..], 1).into_iter().map(str::to_owned));
    let labels: Vec<(&'static str, String)> =
        draw(&mut rng, &LABELS, 3).into_iter().map(|(c, l)| (c, l.to_owned())).collect();
    let flippable: Vec<usize> = loop {
        let v: Vec<usize> = (0..BOOLEANS.len()).filter(|_| rng.below(4) == 0).collect();
        if !v.is_empty() {
            break v;
        }
    };
    let inodes: Vec<usize> = (0..4 + rng.below(INODES - 3)).map(|_| rng.below(labels.len())).collect();
    // The mark limit: three quarters of the inodes.
    let limit = (inodes.len() * 3 / 4).max(2);
    let setup = format!(
        "world: domains {}; labels {}; booleans {}; {} inodes, mark limit {limit}",
        domains.iter().map(|d| World::type_of(d)).collect::<Vec<_>>().join(" "),
        labels.iter().map(|(c, l)| format!("{}:{c}", World::type_of(l))).collect::<Vec<_>>().join(" "),
        flippable.iter().map(|&b| BOOLEANS[b]).collect::<Vec<_>>().join(" "),
        inodes.len()
    );
    let mut w = World::new(r, policy, &domains, &labels, flippable.clone(), inodes, fault, limit);
    // Which confined domains run under the supervised-opens filter (none
    // when the daemon is to be caught trusting an unsupervised one).
    for d in 1..w.supervised.len() {
        w.supervised[d] = fault != Fault::TrustsUnsupervisedWrites && rng.below(2) == 0;
    }
    // The world's booleans start at random values.
    for &b in &flippable {
        if rng.below(2) == 0 {
            let v = !w.r.value(b);
            w.set_boolean(b, v);
        }
    }
    w.stats = Stats::default();
    w.note(None, setup.clone());
    let mut before: HashSet<Violation> = HashSet::new();
    for step in 0..steps {
        let (kind, inode, what) = w.random_step(&mut rng);
        w.stats.steps += 1;
        w.note(inode, format!("{step}: {what}"));
        let now = w.violations();
        let fresh: Vec<Violation> = now.iter().copied().filter(|v| !before.contains(v)).collect();
        let failed = match fault {
            Fault::None => !now.is_empty(),
            _ => fault.acts_in(kind) && !fresh.is_empty(),
        };
        if failed {
            let shown = if fault == Fault::None { &now } else { &fresh };
            let violations = w.explain(shown);
            return Err(Failure { seed, step, kind, what, violations, setup, trace: w.history(shown) });
        }
        before = now.into_iter().collect();
        w.stats.relaxed_marks += w.relaxed_marks();
    }
    Ok(w.collect_stats())
}

fn seeds() -> Vec<u64> {
    match (env_number("RAMPART_MARKS_SEED"), env_number("RAMPART_MARKS_SEEDS")) {
        (Some(s), _) => vec![s],
        (None, Some(n)) => (1..=n).collect(),
        (None, None) => (1..=SEEDS).collect(),
    }
}

#[test]
#[ignore = "needs the system policy: checked against libsepol"]
fn an_ignore_mark_never_lets_through_what_the_policy_denies() {
    let (path, policy) = policy();
    let mut r = Reference::new(&path, &BOOLEANS);
    let steps = env_number("RAMPART_MARKS_STEPS").map_or(STEPS, |n| n as usize);
    let mut total = Stats::default();
    let seeds = seeds();
    for &seed in &seeds {
        match run(&mut r, &policy, seed, steps, Fault::None) {
            Ok(s) => total.add(&s),
            Err(f) => panic!("{f}"),
        }
    }
    let t = total;
    println!(
        "marks property: {} seeds x {steps} steps; open events {} ({} denied), opens let through by an OPEN mark {}; \
         read events {} ({} denied), reads let through by an ACCESS mark {}",
        seeds.len(),
        t.open_events,
        t.opens_denied,
        t.opens_unasked,
        t.read_events,
        t.reads_denied,
        t.reads_unasked
    );
    println!(
        "  marks placed: OPEN {}, ACCESS {}; ENOSPC {}; flushes {}; boolean flips {} ({} needed their flush), relabels {} ({} needed), \
         scope entries {} ({} needed), exits {}, restarts {}, descriptors passed {}; libsepol queries {}",
        t.open_marks_placed,
        t.access_marks_placed,
        t.enospc,
        t.flushes,
        t.flips,
        t.flips_needed,
        t.relabels,
        t.relabels_needed,
        t.entries,
        t.entries_needed,
        t.exits,
        t.restarts,
        t.passes,
        r.queries
    );
    println!(
        "  decided without the label (no xattr, every path label grants it): opens {}, reads {}",
        t.unresolved_opens, t.unresolved_reads
    );
    println!(
        "  supervised opens for writing {}; open marks only supervision justifies, summed over steps {}",
        t.supervised_opens, t.relaxed_marks
    );
    if seeds.len() < SEEDS as usize || steps < STEPS {
        return;
    }
    // Not vacuous: marks were placed, used, and revoked for cause.
    assert!(t.open_marks_placed >= 500 && t.access_marks_placed >= 500, "too few marks placed");
    assert!(t.opens_unasked >= 500 && t.reads_unasked >= 500, "marks hardly let anything through");
    assert!(t.opens_denied >= 100 && t.reads_denied >= 20, "the pools hardly reach denials");
    assert!(t.flips_needed >= 20, "too few boolean flips revoked a standing mark");
    assert!(t.relabels_needed >= 20, "too few relabels revoked a standing mark");
    assert!(t.entries_needed >= 10, "too few scope entries revoked a standing mark");
    assert!(t.enospc > 0, "the mark limit was never reached");
    assert!(t.restarts >= 100, "too few restarts");
    assert!(t.passes >= 1000, "too few descriptors passed");
    assert!(t.unresolved_opens >= 100 && t.unresolved_reads >= 10, "too few events decided without the label");
    assert!(t.supervised_opens >= 100, "too few supervised opens");
    assert!(t.relaxed_marks >= 100, "supervision hardly ever justified a mark the scope would refuse otherwise");
}

/// The checker itself: a daemon that forgets one flush, or a kernel
/// whose flush does nothing, is caught right at the step that needed it.
#[test]
#[ignore = "needs the system policy: checked against libsepol"]
fn the_checker_catches_a_forgotten_flush() {
    let (path, policy) = policy();
    let mut r = Reference::new(&path, &BOOLEANS);
    for fault in [
        Fault::SkipFlushOnBoolean,
        Fault::SkipFlushOnRelabel,
        Fault::SkipEnterScope,
        Fault::KernelFlushIsNoop,
        Fault::RestartForgetsRunningDomains,
        Fault::TrustsUnsupervisedWrites,
    ] {
        let caught = (100..110).find_map(|seed| run(&mut r, &policy, seed, 2000, fault).err());
        match caught {
            Some(f) => println!("{fault:?} caught: seed {}, step {} ({:?}: {})", f.seed, f.step, f.kind, f.what),
            None => panic!("the checker misses {fault:?} in 10 seeds of 2000 steps"),
        }
    }
}

// ---------------------------------------------------------------------
// Minimal sequences.

fn world_for<'r>(
    r: &'r mut Reference,
    policy: &Arc<Policy>,
    domains: &[String],
    labels: &[(&'static str, String)],
    inodes: usize,
) -> World<'r> {
    World::new(r, policy, domains, labels, (0..BOOLEANS.len()).collect(), vec![0; inodes], Fault::None, usize::MAX)
}

fn bool_index(name: &str) -> usize {
    BOOLEANS.iter().position(|b| *b == name).expect("a boolean of the pool")
}

/// The start of the two sequences below: ftp_home_dir on, ftpd_t in
/// scope; unconfined_t opens a user_home_t file O_RDONLY (OPEN and ACCESS
/// marks); ftpd_t opens it O_RDONLY, let through unasked; ftp_home_dir
/// off (a flush), which denies ftpd_t `read`. Then `next` goes on in that
/// world.
fn after_an_unseen_reader_loses_read(next: impl FnOnce(&mut World<'_>)) {
    let (path, policy) = policy();
    let mut r = Reference::new(&path, &BOOLEANS);
    let domains = vec![DOMAINS[0].to_owned(), "system_u:system_r:ftpd_t:s0".to_owned()];
    let labels = vec![("file", "system_u:object_r:user_home_t:s0".to_owned())];
    let mut w = world_for(&mut r, &policy, &domains, &labels, 1);
    let ftp_home_dir = bool_index("ftp_home_dir");
    w.set_boolean(ftp_home_dir, true);
    w.enter(1);
    assert_eq!(w.open(0, 0, Flags::Read), (true, true), "unconfined_t opens user_home_t");
    assert_ne!(w.model().mask(w.key(0)) & OPEN_PERM, 0, "precondition: an OPEN mark (both domains may open it fully)");
    assert_eq!(w.open(1, 0, Flags::Read), (true, false), "ftpd_t's open is let through unasked");
    w.set_boolean(ftp_home_dir, false);
    let read_bits = w.labels[0].read_bits;
    assert!(!w.reference_allows(1, 0, read_bits), "precondition: ftp_home_dir off denies ftpd_t read");
    next(&mut w);
}

/// A descriptor received over `SCM_RIGHTS` is never seen by the daemon:
/// with httpd_t in scope, unconfined_t opens a user_home_t file (an event;
/// may an ACCESS mark follow?), then passes its descriptor to httpd_t,
/// which may not read user_home_t.
#[test]
#[ignore = "needs the system policy: checked against libsepol"]
fn a_descriptor_passed_to_another_domain_is_still_decided() {
    let (path, policy) = policy();
    let mut r = Reference::new(&path, &BOOLEANS);
    let domains = vec![DOMAINS[0].to_owned(), "system_u:system_r:httpd_t:s0".to_owned()];
    let labels = vec![("file", "system_u:object_r:user_home_t:s0".to_owned())];
    let mut w = world_for(&mut r, &policy, &domains, &labels, 1);
    w.set_boolean(bool_index("httpd_read_user_content"), false);
    w.set_boolean(bool_index("httpd_enable_homedirs"), false);
    w.enter(1);
    assert_eq!(w.open(0, 0, Flags::Read), (true, true), "unconfined_t opens user_home_t (an event)");
    w.pass(0, 1);
    let read_bits = w.labels[0].read_bits;
    assert!(!w.reference_allows(1, 0, read_bits), "precondition: httpd_t may not read user_home_t");
    let v = w.violations();
    assert!(
        v.is_empty(),
        "minimal sequence: httpd_t enters scope; unconfined_t opens a user_home_t file O_RDONLY (event); it passes \
         the descriptor to httpd_t:\n{}\n(httpd_t's read is {})",
        w.explain(&v),
        if w.read(1, 0).1 { "asked" } else { "let through unasked" }
    );
}

/// A domain that opens a file for reading under an OPEN mark is never
/// asked about, so `Marks` does not know it as a reader. After a boolean
/// change denies it `read`, a read by another (known) reader re-arms the
/// ACCESS mark, and the unknown reader's reads are let through.
#[test]
#[ignore = "needs the system policy: checked against libsepol"]
fn a_reader_let_in_by_an_open_mark_is_still_revoked() {
    after_an_unseen_reader_loses_read(|w| {
        assert_eq!(w.read(0, 0), (true, true), "unconfined_t's read after the flush is an event");
        let v = w.violations();
        assert!(
            v.is_empty(),
            "minimal sequence: setbool ftp_home_dir 1; ftpd_t enters scope; unconfined_t opens a user_home_t file \
             O_RDONLY (OPEN+ACCESS marks); ftpd_t opens it O_RDONLY (unasked); setbool ftp_home_dir 0 (flush); \
             unconfined_t reads (event, ACCESS mark re-armed):\n{}\n(ftpd_t's next read is {})",
            w.explain(&v),
            if w.read(1, 0).1 { "asked" } else { "let through unasked" }
        );
    });
}

/// The default domain's opens need no table entry, but one that places
/// an open mark while another domain is in scope does: that domain may
/// then open the inode unseen. Without the entry, an open by the default
/// domain after a boolean change would find the inode "opened by the
/// default domain only" and re-arm the ACCESS mark over the other
/// domain's descriptor.
#[test]
#[ignore = "needs the system policy: checked against libsepol"]
fn an_open_mark_placed_while_others_are_in_scope_is_remembered() {
    after_an_unseen_reader_loses_read(|w| {
        assert_eq!(w.open(0, 0, Flags::Read), (true, true), "unconfined_t's open after the flush is an event");
        let v = w.violations();
        assert!(
            v.is_empty(),
            "minimal sequence: setbool ftp_home_dir 1; ftpd_t enters scope; unconfined_t opens a user_home_t file \
             O_RDONLY (OPEN+ACCESS marks); ftpd_t opens it O_RDONLY (unasked); setbool ftp_home_dir 0 (flush); \
             unconfined_t opens it again (event):\n{}",
            w.explain(&v)
        );
    });
}
