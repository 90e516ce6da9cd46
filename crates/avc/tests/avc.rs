//! Behaviour of the AVC on the small policies in `tests/data` (see
//! `avc_a.conf`; `avc_b.conf` is the "reloaded" policy without `secret_t`
//! and without `allow user_t data_t:file read`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use rampart_avc::*;
use rampart_policy::{HandleUnknown, Policy};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

const USER: &str = "system_u:system_r:user_t";
const INIT: &str = "system_u:system_r:init_t";
const SUB: &str = "system_u:system_r:sub_t";
const DATA_FILE: &str = "system_u:object_r:data_t";
const SECRET: &str = "system_u:object_r:secret_t";
const UNLABELED: &str = "system_u:object_r:unlabeled_t";

fn policy_bytes(name: &str) -> Vec<u8> {
    std::fs::read(format!("{DATA}/{name}")).unwrap()
}

/// The policy with its header's handle_unknown bits (config word at byte
/// 20: 0x2 reject, 0x4 allow) set to `handle`.
fn with_handle_unknown(mut bytes: Vec<u8>, handle: HandleUnknown) -> Policy {
    assert_eq!(u32::from_le_bytes(bytes[16..20].try_into().unwrap()), 33, "unexpected header layout");
    let mut config = u32::from_le_bytes(bytes[20..24].try_into().unwrap()) & !0x6;
    config |= match handle {
        HandleUnknown::Deny => 0,
        HandleUnknown::Reject => 0x2,
        HandleUnknown::Allow => 0x4,
    };
    bytes[20..24].copy_from_slice(&config.to_le_bytes());
    let policy = Policy::from_bytes(&bytes).unwrap();
    assert_eq!(policy.handle_unknown, handle);
    policy
}

fn policy(name: &str) -> Arc<Policy> {
    Arc::new(Policy::from_bytes(&policy_bytes(name)).unwrap())
}

fn mapping() -> Mapping {
    Mapping::new(&[
        ("file", &["read", "write", "getattr", "open", "execute", "frobnicate"]),
        ("process", &["signal", "transition"]),
        ("widget", &["poke", "prod"]),
    ])
    .unwrap()
}

struct Fixture {
    avc: Arc<Avc>,
    sink: Arc<MemorySink>,
    file: ClassIdx,
}

impl Fixture {
    fn new(policy: Arc<Policy>) -> Fixture {
        Fixture::with_config(policy, |_| {})
    }

    fn with_config(policy: Arc<Policy>, tweak: impl FnOnce(&mut AvcConfig)) -> Fixture {
        let sink = Arc::new(MemorySink::new());
        let mut config = AvcConfig::new(policy, mapping(), sink.clone());
        tweak(&mut config);
        let avc = Arc::new(Avc::new(config).unwrap());
        let file = avc.mapping().class("file").unwrap();
        Fixture { avc, sink, file }
    }

    fn sid(&self, context: &str) -> Sid {
        self.avc.intern(context).unwrap()
    }

    fn perms(&self, class: ClassIdx, names: &[&str]) -> Perms {
        self.avc.mapping().perms(class, names).unwrap()
    }

    fn check(&self, s: &str, t: &str, class: ClassIdx, perms: &[&str]) -> Decision {
        let requested = self.perms(class, perms);
        self.avc.has_perm(self.sid(s), self.sid(t), class, requested, &AuditInfo::default())
    }

    fn events(&self) -> Vec<String> {
        self.sink.events()
    }
}

#[test]
fn the_avc_is_shared_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Avc>();
    send_sync::<Subject>();
    send_sync::<Object>();
}

#[test]
fn allows_denies_and_audits_like_the_policy() {
    let f = Fixture::new(policy("avc_a.33"));
    let d = f.check(USER, DATA_FILE, f.file, &["read", "open"]);
    assert!(d.passes() && d.denied.is_empty());
    assert!(f.events().is_empty());
    // auditallow user_t data_t:file getattr
    let d = f.check(USER, DATA_FILE, f.file, &["getattr"]);
    assert!(d.passes());
    assert_eq!(d.auditallow, f.perms(f.file, &["getattr"]));
    assert_eq!(
        f.events(),
        ["avc: granted { getattr } scontext=system_u:system_r:user_t tcontext=system_u:object_r:data_t tclass=file permissive=0 module=selinux"]
    );
    // Denied (write needs the boolean allow_write), audited.
    let d = f.check(USER, DATA_FILE, f.file, &["read", "write"]);
    assert!(!d.passes());
    assert_eq!((d.allowed, d.denied), (f.perms(f.file, &["read"]), f.perms(f.file, &["write"])));
    assert_eq!(f.events().len(), 2);
    assert!(f.events()[1].starts_with("avc: denied { write } scontext=system_u:system_r:user_t"));
    // dontaudit user_t secret_t:file read: denied, not audited.
    let d = f.check(USER, SECRET, f.file, &["read"]);
    assert!(!d.passes() && d.auditdeny.is_empty());
    assert_eq!(f.events().len(), 2);
}

#[test]
fn audit_info_reaches_the_sink() {
    let f = Fixture::new(policy("avc_a.33"));
    let info = AuditInfo { pid: Some(42), comm: Some("cat".into()), path: Some("/srv/x".into()), extra: vec![] };
    let requested = f.perms(f.file, &["write"]);
    f.avc.has_perm(f.sid(USER), f.sid(DATA_FILE), f.file, requested, &info);
    assert!(f.events()[0].ends_with("module=selinux pid=42 comm=cat path=/srv/x"), "{:?}", f.events());
}

/// A caller's unknown permission (`frobnicate`) and class (`widget`) under
/// each `handle_unknown`.
#[test]
fn unknown_names_follow_handle_unknown() {
    let bytes = policy_bytes("avc_a.33");

    let deny = Fixture::new(Arc::new(with_handle_unknown(bytes.clone(), HandleUnknown::Deny)));
    let widget = deny.avc.mapping().class("widget").unwrap();
    let d = deny.check(USER, DATA_FILE, deny.file, &["read", "frobnicate"]);
    assert_eq!(d.denied, deny.perms(deny.file, &["frobnicate"]));
    assert_eq!(d.auditdeny, d.denied, "unknown permissions' denials are audited");
    let d = deny.check(USER, DATA_FILE, widget, &["poke", "prod"]);
    assert_eq!((d.allowed, d.denied), (Perms::NONE, deny.perms(widget, &["poke", "prod"])));
    assert_eq!(d.auditdeny, d.denied);

    let allow = Fixture::new(Arc::new(with_handle_unknown(bytes.clone(), HandleUnknown::Allow)));
    let d = allow.check(USER, DATA_FILE, allow.file, &["read", "frobnicate"]);
    assert!(d.passes() && d.denied.is_empty());
    // Known permissions still follow the policy.
    assert!(!allow.check(USER, DATA_FILE, allow.file, &["write"]).passes());
    let d = allow.check(USER, DATA_FILE, widget, &["poke", "prod"]);
    assert!(d.passes() && d.denied.is_empty());
    // A bit the mapping does not declare is never allowed in a known class.
    let undeclared = Perms::from_bits(1 << 20);
    let d = allow.avc.has_perm_noaudit(allow.sid(USER), allow.sid(DATA_FILE), allow.file, undeclared);
    assert_eq!((d.denied, d.auditdeny), (undeclared, undeclared));

    let reject = Arc::new(with_handle_unknown(bytes, HandleUnknown::Reject));
    let sink: Arc<dyn AuditSink> = Arc::new(NullSink);
    let err = Avc::new(AvcConfig::new(reject.clone(), mapping(), sink)).unwrap_err();
    assert_eq!(err, AvcError::RejectedUnknown { class: "file".into(), perm: Some("frobnicate".into()) });
    // A policy that defines everything the mapping names loads fine.
    let known_only = Mapping::new(&[("file", &["read", "write"])]).unwrap();
    let avc = Avc::new(AvcConfig::new(reject.clone(), known_only, Arc::new(NullSink))).unwrap();
    // Loading a rejecting policy into a running AVC fails and changes nothing.
    let seqno = allow.avc.seqno();
    assert!(matches!(allow.avc.load_policy(reject), Err(AvcError::RejectedUnknown { .. })));
    assert_eq!(allow.avc.seqno(), seqno);
    drop(avc);
}

/// Permissive denials are reported once, then cached as granted: for a
/// permissive type, a runtime permissive domain and global permissive mode.
#[test]
fn permissive_denial_reported_once_then_granted() {
    let f = Fixture::new(policy("avc_a.33"));
    // sub_t is `permissive` in the policy and has no read on data_t.
    let first = f.check(SUB, DATA_FILE, f.file, &["read"]);
    assert!(first.passes() && first.permissive && first.denied == f.perms(f.file, &["read"]));
    let second = f.check(SUB, DATA_FILE, f.file, &["read"]);
    assert!(second.passes() && !second.permissive && second.denied.is_empty());
    assert_eq!(
        f.events(),
        ["avc: denied { read } scontext=system_u:system_r:sub_t tcontext=system_u:object_r:data_t tclass=file permissive=1 module=selinux"]
    );
    // Another permission of the same vector is reported on its own, once.
    f.check(SUB, DATA_FILE, f.file, &["read", "write"]);
    f.check(SUB, DATA_FILE, f.file, &["write"]);
    assert_eq!(f.events().len(), 2);
    assert!(f.events()[1].contains("denied { write }"));

    // A domain made permissive at run time.
    assert!(!f.check(INIT, DATA_FILE, f.file, &["read"]).passes());
    f.avc.set_permissive_domain("init_t", true).unwrap();
    assert!(f.check(INIT, DATA_FILE, f.file, &["read"]).permissive);
    assert!(f.check(INIT, DATA_FILE, f.file, &["read"]).denied.is_empty());
    f.avc.set_permissive_domain("init_t", false).unwrap();
    assert!(!f.check(INIT, DATA_FILE, f.file, &["read"]).passes());
    assert!(matches!(f.avc.set_permissive_domain("domain", true), Err(AvcError::UnknownType(_))));

    // Global permissive mode.
    let before = f.events().len();
    f.avc.set_enforcing(false);
    assert!(f.check(USER, DATA_FILE, f.file, &["write"]).permissive);
    assert!(f.check(USER, DATA_FILE, f.file, &["write"]).denied.is_empty());
    assert_eq!(f.events().len(), before + 1);
    f.avc.set_enforcing(true);
    assert!(!f.check(USER, DATA_FILE, f.file, &["write"]).passes());
}

/// Under load from two threads the permissive denial is still reported
/// exactly once per snapshot (the L2 grant is a compare-and-swap).
#[test]
fn permissive_denial_reported_once_across_threads() {
    let f = Fixture::new(policy("avc_a.33"));
    let (s, t) = (f.sid(SUB), f.sid(DATA_FILE));
    let read = f.perms(f.file, &["read"]);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                for _ in 0..1000 {
                    assert!(f.avc.has_perm(s, t, f.file, read, &AuditInfo::default()).passes());
                }
            });
        }
    });
    assert_eq!(f.events().len(), 1, "{:?}", f.events());
}

#[test]
fn booleans_change_several_at_once_and_survive_reload() {
    let f = Fixture::new(policy("avc_a.33"));
    assert!(!f.check(USER, DATA_FILE, f.file, &["write"]).passes());
    assert!(f.check(USER, DATA_FILE, f.file, &["execute"]).passes());
    let seqno = f.avc.set_booleans(&[("allow_write", true), ("allow_exec", false)]).unwrap();
    assert_eq!(seqno, f.avc.seqno());
    let d = f.check(USER, DATA_FILE, f.file, &["write", "execute"]);
    assert_eq!((d.allowed, d.denied), (f.perms(f.file, &["write"]), f.perms(f.file, &["execute"])));
    assert_eq!(d.seqno, seqno);
    // Nothing changes on an unknown name.
    assert_eq!(
        f.avc.set_booleans(&[("allow_write", false), ("nope", true)]),
        Err(AvcError::UnknownBoolean("nope".into()))
    );
    assert_eq!(f.avc.seqno(), seqno);
    // Values carry over to a reloaded policy by name.
    f.avc.load_policy(policy("avc_b.33")).unwrap();
    let d = f.check(USER, DATA_FILE, f.file, &["write", "execute"]);
    assert_eq!((d.allowed, d.denied), (f.perms(f.file, &["write"]), f.perms(f.file, &["execute"])));
}

/// A SID whose type the new policy lacks resolves to the unlabeled
/// context there, and back to its own type when a policy has it again.
#[test]
fn sids_survive_reload_and_resolve_to_unlabeled() {
    let f = Fixture::new(policy("avc_a.33"));
    // In A: user_t may getattr secret_t; read is dontaudit.
    assert!(f.check(USER, SECRET, f.file, &["getattr"]).passes());
    assert!(f.check(USER, SECRET, f.file, &["read"]).auditdeny.is_empty());
    assert!(f.events().is_empty());

    f.avc.load_policy(policy("avc_b.33")).unwrap();
    // In B secret_t is gone: the SID is unlabeled_t's (getattr allowed by
    // `allow domain unlabeled_t:file getattr`, read denied and audited).
    let unlabeled = f.check(USER, UNLABELED, f.file, &["getattr", "read"]);
    let secret = f.check(USER, SECRET, f.file, &["getattr", "read"]);
    assert_eq!(
        (secret.allowed, secret.denied, secret.auditdeny),
        (unlabeled.allowed, unlabeled.denied, unlabeled.auditdeny)
    );
    assert!(!secret.auditdeny.is_empty());
    // The audit record keeps the SID's own context.
    assert!(f.events().last().unwrap().contains("tcontext=system_u:object_r:secret_t"), "{:?}", f.events());
    f.avc.load_policy(policy("avc_a.33")).unwrap();
    assert!(f.check(USER, SECRET, f.file, &["getattr"]).passes());
    assert!(f.check(USER, SECRET, f.file, &["read"]).auditdeny.is_empty());
}

#[test]
fn handle_rechecks_only_when_something_changed() {
    let f = Fixture::new(policy("avc_a.33"));
    let subject = Subject::new(f.sid(USER));
    let object = Object::new(f.sid(DATA_FILE));
    let read = f.perms(f.file, &["read"]);
    let write = f.perms(f.file, &["write"]);
    let mut h = f.avc.open(&subject, &object, f.file, read | f.perms(f.file, &["open"])).unwrap();
    let lookups = f.avc.stats().total().lookups;
    for _ in 0..100 {
        assert!(h.permission(read));
    }
    assert!(!h.permission(write), "not requested at open");
    assert_eq!(f.avc.stats().total().lookups, lookups, "nothing changed: no AVC lookup");
    // Opening for write is denied outright.
    let err = f.avc.open(&subject, &object, f.file, write).unwrap_err();
    assert_eq!(err.decision.denied, write);

    // Relabel: secret_t allows no read.
    object.relabel(f.sid(SECRET));
    assert!(!h.permission(read));
    object.relabel(f.sid(DATA_FILE));
    assert!(h.permission(read));
    // Context change of the subject.
    subject.set_sid(f.sid(INIT));
    assert!(!h.permission(read));
    subject.set_sid(f.sid(USER));
    assert!(h.permission(read));
    // Policy reload: B has no read on data_t.
    f.avc.load_policy(policy("avc_b.33")).unwrap();
    assert!(!h.permission(read));
    f.avc.load_policy(policy("avc_a.33")).unwrap();
    assert!(h.permission(read));
    // Boolean change revokes write.
    f.avc.set_booleans(&[("allow_write", true)]).unwrap();
    let mut w = f.avc.open(&subject, &object, f.file, write).unwrap();
    assert!(w.permission(write));
    f.avc.set_booleans(&[("allow_write", false)]).unwrap();
    assert!(!w.permission(write));
    assert_eq!(w.granted(), Perms::NONE);
}

/// Denies `write` on objects of type `data_t`.
struct NoWriteToData {
    dropped: Arc<AtomicBool>,
}

impl Module for NoWriteToData {
    fn name(&self) -> &str {
        "nowrite"
    }

    fn check(&self, query: &Query<'_>) -> ModuleDecision {
        if query.class_name == "file" && query.target_type() == Some("data_t") {
            ModuleDecision { allowed: !query.perm("write"), ..ModuleDecision::ALLOW_ALL }
        } else {
            ModuleDecision::ALLOW_ALL
        }
    }
}

impl Drop for NoWriteToData {
    fn drop(&mut self) {
        self.dropped.store(true, Ordering::SeqCst);
    }
}

#[test]
fn stacked_module_denies_is_named_and_is_freed_after_unregister() {
    let f = Fixture::new(policy("avc_a.33"));
    f.avc.set_booleans(&[("allow_write", true)]).unwrap();
    assert!(f.check(USER, DATA_FILE, f.file, &["write"]).passes());
    let dropped = Arc::new(AtomicBool::new(false));
    f.avc.register_module(Arc::new(NoWriteToData { dropped: dropped.clone() })).unwrap();
    let again = f.avc.register_module(Arc::new(NoWriteToData { dropped: Arc::new(AtomicBool::new(false)) }));
    assert_eq!(again, Err(AvcError::DuplicateModule("nowrite".into())));
    let d = f.check(USER, DATA_FILE, f.file, &["read", "write"]);
    assert_eq!((d.allowed, d.denied), (f.perms(f.file, &["read"]), f.perms(f.file, &["write"])));
    assert!(
        f.events().last().unwrap().contains("denied { write }")
            && f.events().last().unwrap().ends_with("module=nowrite")
    );
    // SELinux denies first: SELinux is named.
    f.check(INIT, DATA_FILE, f.file, &["write"]);
    assert!(f.events().last().unwrap().ends_with("module=selinux"), "{:?}", f.events());
    // Global permissive mode: the module's denial is reported once, not enforced.
    f.avc.set_enforcing(false);
    assert!(f.check(USER, DATA_FILE, f.file, &["write"]).permissive);
    f.avc.set_enforcing(true);

    // Another thread holds the snapshot with the module until it checks again.
    let (s, t) = (f.sid(USER), f.sid(DATA_FILE));
    let write = f.perms(f.file, &["write"]);
    let (to_worker, worker_rx) = std::sync::mpsc::channel::<()>();
    let (to_main, main_rx) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|scope| {
        let (avc, file) = (&f.avc, f.file);
        scope.spawn(move || {
            assert!(!avc.has_perm_noaudit(s, t, file, write).passes());
            to_main.send(()).unwrap();
            worker_rx.recv().unwrap();
            // Refreshes: the old snapshot (and the module) is released.
            assert!(avc.has_perm_noaudit(s, t, file, write).passes());
            to_main.send(()).unwrap();
            worker_rx.recv().unwrap();
        });
        main_rx.recv().unwrap();
        assert_eq!(f.avc.unregister_module("nopes"), Err(AvcError::UnknownModule("nopes".into())));
        f.avc.unregister_module("nowrite").unwrap();
        f.avc.quiesce();
        assert!(!dropped.load(Ordering::SeqCst), "freed while a thread may still check in it");
        to_worker.send(()).unwrap();
        main_rx.recv().unwrap();
        assert!(dropped.load(Ordering::SeqCst), "not freed after every thread moved on");
        to_worker.send(()).unwrap();
    });
    assert!(f.check(USER, DATA_FILE, f.file, &["write"]).passes());
}

/// A module that, for files, asks the AVC about a process signal from
/// inside its check (and answers process queries without asking, so the
/// inner check does not recurse).
struct Reentrant {
    avc: OnceLock<Weak<Avc>>,
    sids: (Sid, Sid),
    class: ClassIdx,
}

impl Module for Reentrant {
    fn name(&self) -> &str {
        "reentrant"
    }

    fn check(&self, query: &Query<'_>) -> ModuleDecision {
        if query.class == self.class {
            return ModuleDecision::ALLOW_ALL;
        }
        let avc = self.avc.get().and_then(Weak::upgrade).unwrap();
        let inner = avc.has_perm_noaudit(self.sids.0, self.sids.1, self.class, Perms::from_bits(1));
        if inner.passes() {
            ModuleDecision::ALLOW_ALL
        } else {
            ModuleDecision::DENY_ALL
        }
    }
}

#[test]
fn module_calling_back_into_the_avc_is_answered_uncached() {
    let f = Fixture::new(policy("avc_a.33"));
    let user = f.sid(USER);
    let process = f.avc.mapping().class("process").unwrap();
    let module = Arc::new(Reentrant { avc: OnceLock::new(), sids: (user, user), class: process });
    module.avc.set(Arc::downgrade(&f.avc)).unwrap();
    f.avc.register_module(module).unwrap();
    // The inner check (user_t signal user_t) passes, so the module allows.
    assert!(f.check(USER, DATA_FILE, f.file, &["read"]).passes());
    let misses = f.avc.stats().total().misses;
    assert!(f.check(USER, DATA_FILE, f.file, &["read"]).passes());
    assert_eq!(f.avc.stats().total().misses, misses, "the outer decision was cached");
    // Unregister before the fixture drops (the module holds a weak ref only).
    f.avc.unregister_module("reentrant").unwrap();
}

#[test]
fn stats_count_like_the_kernel() {
    let f = Fixture::new(policy("avc_a.33"));
    let (user, data) = (f.sid(USER), f.sid(DATA_FILE));
    let read = f.perms(f.file, &["read"]);
    for _ in 0..10 {
        f.avc.has_perm_noaudit(user, data, f.file, read);
    }
    f.avc.has_perm_noaudit(user, f.sid(SECRET), f.file, read);
    let total = f.avc.stats().total();
    assert_eq!((total.lookups, total.hits, total.misses, total.allocations), (11, 9, 2, 2));
    // A publish retires the table: freed when this thread moves on.
    f.avc.set_enforcing(true);
    f.avc.has_perm_noaudit(user, data, f.file, read);
    let total = f.avc.stats().total();
    assert_eq!((total.allocations, total.frees), (3, 2));
    let text = f.avc.stats().to_string();
    assert!(text.starts_with("lookups hits misses allocations reclaims frees\n12 9 3 3 0 2\n"), "{text}");
    // quiesce releases the current table too.
    f.avc.quiesce();
    assert_eq!(f.avc.stats().total().frees, 2, "still current: the AVC holds it");
}

#[test]
fn l2_threshold_triggers_reclaims() {
    let f = Fixture::with_config(policy("avc_a.33"), |c| c.l2_threshold = 4);
    let subjects: Vec<Sid> = [USER, INIT, SUB].iter().map(|c| f.sid(c)).collect();
    let objects: Vec<Sid> = [DATA_FILE, SECRET, UNLABELED].iter().map(|c| f.sid(c)).collect();
    let start = f.avc.seqno();
    let read = f.perms(f.file, &["read"]);
    for s in &subjects {
        for t in &objects {
            f.avc.has_perm_noaudit(*s, *t, f.file, read);
        }
    }
    let total = f.avc.stats().total();
    assert_eq!(total.misses, 9);
    assert!(total.reclaims >= 4 && f.avc.seqno() > start, "{total:?}");
    assert!(total.frees >= 4, "{total:?}");
}

#[test]
fn unknown_and_foreign_ids_are_denied() {
    let f = Fixture::new(policy("avc_a.33"));
    let other = Mapping::new(&[("a", &[]), ("b", &[]), ("c", &[]), ("d", &[])]).unwrap();
    let foreign = other.class("d").unwrap();
    let user = f.sid(USER);
    let d = f.avc.has_perm_noaudit(user, user, foreign, Perms::from_bits(1));
    assert!(!d.passes());
    assert!(matches!(f.avc.intern(""), Err(AvcError::InvalidContext { .. })));
}

/// Thread slots: an exited thread's slot (and statistics row) goes to the
/// next new thread; two AVCs used in turn by one thread keep separate
/// slots; an AVC dropped and replaced is never confused with its
/// successor (the cached slot pointer names the AVC by a unique id).
#[test]
fn thread_slots_are_reused_kept_apart_and_never_confused() {
    let f = Fixture::new(policy("avc_a.33"));
    let (user, data) = (f.sid(USER), f.sid(DATA_FILE));
    let read = f.perms(f.file, &["read"]);
    for _ in 0..3 {
        let avc = Arc::clone(&f.avc);
        std::thread::spawn(move || assert!(avc.has_perm_noaudit(user, data, f.file, read).passes())).join().unwrap();
    }
    let rows = f.avc.stats().rows;
    assert_eq!(rows.len(), 1, "each new thread took the exited thread's slot: {rows:?}");
    assert_eq!(rows[0].lookups, 3);

    // Two AVCs, alternately, on this thread.
    let g = Fixture::new(policy("avc_b.33"));
    let (g_user, g_data) = (g.sid(USER), g.sid(DATA_FILE));
    for _ in 0..3 {
        assert!(f.avc.has_perm_noaudit(user, data, f.file, read).passes());
        assert!(!g.avc.has_perm_noaudit(g_user, g_data, g.file, read).passes());
    }
    assert_eq!((f.avc.stats().total().lookups, g.avc.stats().total().lookups), (6, 3));

    // Dropped while this thread has it cached, then replaced (perhaps at
    // the same address): the new AVC gets a slot of its own.
    drop(g);
    let h = Fixture::new(policy("avc_b.33"));
    assert!(!h.avc.has_perm_noaudit(h.sid(USER), h.sid(DATA_FILE), h.file, read).passes());
    assert_eq!(h.avc.stats().rows.len(), 1);
    assert_eq!(h.avc.stats().total().lookups, 1);
}

/// A check from a thread-local destructor, run at thread exit after this
/// thread's claims may already be released, still works (it borrows a
/// slot for the one call) and leaves the slot free for the next thread.
#[test]
fn checks_from_thread_local_destructors_borrow_a_slot() {
    /// What to check at thread exit, and where to say whether it passed.
    struct ExitCheck {
        avc: Arc<Avc>,
        key: (Sid, Sid, ClassIdx, Perms),
        passed: Arc<AtomicBool>,
    }
    struct CheckOnDrop(Option<ExitCheck>);
    impl Drop for CheckOnDrop {
        fn drop(&mut self) {
            if let Some(ExitCheck { avc, key: (s, t, class, perms), passed }) = self.0.take() {
                passed.store(avc.has_perm_noaudit(s, t, class, perms).passes(), Ordering::SeqCst);
            }
        }
    }
    thread_local! {
        static AT_EXIT: std::cell::RefCell<CheckOnDrop> = const { std::cell::RefCell::new(CheckOnDrop(None)) };
    }
    let f = Fixture::new(policy("avc_a.33"));
    let (user, data) = (f.sid(USER), f.sid(DATA_FILE));
    let read = f.perms(f.file, &["read"]);
    let passed = Arc::new(AtomicBool::new(false));
    {
        let (avc, passed) = (Arc::clone(&f.avc), Arc::clone(&passed));
        std::thread::spawn(move || {
            // Registered before the AVC's own thread-locals, so destroyed
            // after them (where destruction order is the reverse).
            let check = ExitCheck { avc: Arc::clone(&avc), key: (user, data, f.file, read), passed };
            AT_EXIT.with(|d| d.borrow_mut().0 = Some(check));
            assert!(avc.has_perm_noaudit(user, data, f.file, read).passes());
        })
        .join()
        .unwrap();
    }
    assert!(passed.load(Ordering::SeqCst), "the check at thread exit did not pass");
    assert_eq!(f.avc.stats().total().lookups, 2);
    // The slot is free again: the next thread takes it.
    let avc = Arc::clone(&f.avc);
    std::thread::spawn(move || avc.has_perm_noaudit(user, data, f.file, read)).join().unwrap();
    assert_eq!(f.avc.stats().rows.len(), 1, "{:?}", f.avc.stats());
}
