//! Hand-written expectations from apparmor.d(5) (and, where the manual
//! is silent, the kernel's file.c and domain.c), for a profile compiled
//! by apparmor_parser: globs `*`, `**`, `?`, `[...]`, `[^...]`,
//! `{a,b}`, variables, `owner`, `deny`, `audit`, append, lock, mmap,
//! directories, every exec qualifier, link pairs and `subset`, complain,
//! kill, audit and unconfined profile modes, attachment and conflicts,
//! and `.replace` order. Each expected line was written from the rule
//! text, not from Rampart's output. Needs apparmor_parser
//! (scripts/install-deps.sh).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
mod common;

use rampart_apparmor::{query, Policy};

fn compile(name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name);
    let dir = std::env::temp_dir().join(format!("rampart-aa-sem-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // tests run in parallel: one output file per call
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out = dir.join(format!("{name}.{n}.bin"));
    common::apparmor_parser(&src, &out, &[]);
    out
}

/// (query, expected answer) pairs; `#` starts an explanation.
const CHECKS: &[(&str, &str)] = &[
    // plain path: exactly that file
    ("t\t/etc/a\tr", "allow\tr\taudit=-,quiet=-,log=NONE\t-"),
    ("t\t/etc/a\tw", "deny\tr\taudit=-,quiet=-,log=DENIED:w:w\t-"),
    ("t\t/etc/ab\tr", "deny\t-\taudit=-,quiet=-,log=DENIED:r:r\t-"),
    // `*`: any characters but `/`
    ("t\t/g/x.conf\tr", "allow\tr\taudit=-,quiet=-,log=NONE\t-"),
    ("t\t/g/sub/x.conf\tr", "deny\t-\taudit=-,quiet=-,log=DENIED:r:r\t-"),
    // `**`: across `/`; `w` also allows appending (`a` is the O_APPEND-only
    // subset of write)
    ("t\t/h/a/b/c\tw", "allow\trwa\taudit=-,quiet=-,log=NONE\t-"),
    // `?`: exactly one character
    ("t\t/q/file\tr", "allow\tr\taudit=-,quiet=-,log=NONE\t-"),
    ("t\t/q/fil\tr", "deny\t-\taudit=-,quiet=-,log=DENIED:r:r\t-"),
    ("t\t/q/filee\tr", "deny\t-\taudit=-,quiet=-,log=DENIED:r:r\t-"),
    // character classes
    ("t\t/c/bx\tr", "allow\tr\taudit=-,quiet=-,log=NONE\t-"),
    ("t\t/c/cx\tr", "deny\t-\taudit=-,quiet=-,log=DENIED:r:r\t-"),
    ("t\t/n/cx\tr", "allow\tr\taudit=-,quiet=-,log=NONE\t-"),
    ("t\t/n/ax\tr", "deny\t-\taudit=-,quiet=-,log=DENIED:r:r\t-"),
    // alternation
    ("t\t/alt/two/f\tr", "allow\tr\taudit=-,quiet=-,log=NONE\t-"),
    ("t\t/alt/three/f\tr", "deny\t-\taudit=-,quiet=-,log=DENIED:r:r\t-"),
    // variables: a set variable stands for each value
    ("t\t/srv/a/data\tr", "allow\tr\taudit=-,quiet=-,log=NONE\t-"),
    ("t\t/srv/b/data\tr", "allow\tr\taudit=-,quiet=-,log=NONE\t-"),
    ("t\t/srv/c/data\tr", "deny\t-\taudit=-,quiet=-,log=DENIED:r:r\t-"),
    ("t\t/opt/one/f\tr", "allow\tr\taudit=-,quiet=-,log=NONE\t-"),
    // owner: only when the task's fsuid owns the file
    ("t\t/o/x\tw\towner=1", "allow\trwa\taudit=-,quiet=-,log=NONE\t-"),
    ("t\t/o/x\tw\towner=0", "deny\t-\taudit=-,quiet=-,log=DENIED:w:w\t-"),
    // deny wins over allow and is not logged (deny implies quiet) ...
    ("t\t/d/secret\tw", "deny\tr\taudit=-,quiet=wa,log=NONE\t-"),
    ("t\t/d/secret\tr", "allow\tr\taudit=-,quiet=wa,log=NONE\t-"),
    // ... unless it is `audit deny`
    ("t\t/d/loud\tw", "deny\tr\taudit=-,quiet=-,log=DENIED:w:w\t-"),
    // audit: allowed and logged
    ("t\t/au/x\tr", "allow\tr\taudit=r,quiet=-,log=AUDIT:r\t-"),
    // append only
    ("t\t/ap/log\ta", "allow\ta\taudit=-,quiet=-,log=NONE\t-"),
    ("t\t/ap/log\tw", "deny\ta\taudit=-,quiet=-,log=DENIED:w:w\t-"),
    // lock, mmap
    ("t\t/k/lock\tk", "allow\trk\taudit=-,quiet=-,log=NONE\t-"),
    ("t\t/m/lib.so\tm", "allow\trm\taudit=-,quiet=-,log=NONE\t-"),
    // directories are named with a trailing slash
    ("t\t/dir/\tr", "allow\tr\taudit=-,quiet=-,log=NONE\t-"),
    ("t\t/dir\tr", "deny\t-\taudit=-,quiet=-,log=DENIED:r:r\t-"),
    // exec: ix inherits (and implies m)
    ("t\t/x/ix\tx", "allow\txm\taudit=-,quiet=-,log=NONE|x:NONE\tix;target=t;info=ix fallback;scrub=0"),
    // Px: the profile attached to the path, environment scrubbed
    ("t\t/x/px\tx", "allow\tx\taudit=-,quiet=-,log=NONE|x:NONE\tPx;target=tgt;info=-;scrub=1"),
    // px with no profile for the path: exec fails
    (
        "t\t/x/pxmissing\tx",
        "deny\tx\taudit=-,quiet=-,log=NONE|x:DENIED:x:x\tpx;target=-;info=profile transition not found;scrub=0",
    ),
    // pix falls back to inheriting
    ("t\t/x/pix\tx", "allow\txm\taudit=-,quiet=-,log=NONE|x:NONE\tpix;target=t;info=ix fallback;scrub=0"),
    // named transitions are x-table entries; cx -> child names t//child
    ("t\t/x/cx\tx", "allow\tx\taudit=-,quiet=-,log=NONE|x:NONE\tpx->t//child;target=t//child;info=-;scrub=0"),
    (
        "t\t/x/cxmissing\tx",
        "deny\tx\taudit=-,quiet=-,log=NONE|x:DENIED:x:x\tpx->t//nochild;target=-;info=profile transition not found;scrub=0",
    ),
    ("t\t/x/named\tx", "allow\tx\taudit=-,quiet=-,log=NONE|x:NONE\tpx->tgt;target=tgt;info=-;scrub=0"),
    // fallbacks when nothing attaches: u to unconfined (PUx scrubs), i to
    // the current profile
    ("t\t/x/pux\tx", "allow\tx\taudit=-,quiet=-,log=NONE|x:NONE\tpux;target=unconfined;info=ux fallback;scrub=0"),
    ("t\t/x/PUx\tx", "allow\tx\taudit=-,quiet=-,log=NONE|x:NONE\tPUx;target=unconfined;info=ux fallback;scrub=1"),
    ("t\t/x/cix\tx", "allow\txm\taudit=-,quiet=-,log=NONE|x:NONE\tcix;target=t;info=ix fallback;scrub=0"),
    ("t\t/x/Pix\tx", "allow\txm\taudit=-,quiet=-,log=NONE|x:NONE\tPix;target=t;info=ix fallback;scrub=0"),
    // cx without a name: the child profile attached to the path
    ("t\t/x/cxattach\tx", "allow\tx\taudit=-,quiet=-,log=NONE|x:NONE\tcx;target=t//child;info=-;scrub=0"),
    // ux / Ux: unconfined, Ux scrubs
    ("t\t/x/ux\tx", "allow\tx\taudit=-,quiet=-,log=NONE|x:NONE\tux;target=unconfined;info=ux fallback;scrub=0"),
    ("t\t/x/Ux\tx", "allow\tx\taudit=-,quiet=-,log=NONE|x:NONE\tUx;target=unconfined;info=ux fallback;scrub=1"),
    // deny x: no exec permission, quietly refused
    ("t\t/x/denied\tx", "deny\t-\taudit=-,quiet=x,log=NONE|x:NONE\t-;target=-;info=-;scrub=0"),
    ("t\t/x/nothing\tx", "deny\t-\taudit=-,quiet=-,log=NONE|x:DENIED:x:x\t-;target=-;info=-;scrub=0"),
    // link pairs: link NEW -> TARGET
    ("t\t/l/new\tl\tlink=/l/src", "allow\tl\taudit=-,quiet=-,log=NONE\t-"),
    ("t\t/l/new\tl\tlink=/l/other", "deny\t-\taudit=-,quiet=-,log=DENIED:l:l\t-"),
    // subset: the link may not grant more than the target has
    ("t\t/l/sub\tl\tlink=/l/src", "allow\tl\taudit=-,quiet=-,log=NONE\t-"),
    ("t\t/l/sub2\tl\tlink=/l/other", "deny\trl\taudit=-,quiet=-,log=DENIED:wa:wa\t-"),
    // complain: violations allowed and logged as ALLOWED ...
    ("cm\t/cm/ok\tw", "allow\tr\taudit=-,quiet=-,log=ALLOWED:w:w\t-"),
    // ... except explicit (quiet) deny rules, which the kernel still
    // enforces (file.c aa_audit_file returns the error when every denied
    // bit is quieted)
    ("cm\t/cm/no\tw", "deny\t-\taudit=-,quiet=wa,log=NONE\t-"),
    ("cm\t/cm/loud\tw", "allow\t-\taudit=-,quiet=-,log=ALLOWED:w:w\t-"),
    // complain exec without permission: a learning null profile
    ("cm\t/cm/bin\tx", "allow\t-\taudit=-,quiet=-,log=NONE|x:ALLOWED:x:x\t-;target=cm//null-/cm/bin;info=-;scrub=0"),
    // kill mode
    ("kl\t/kl/no\tr", "deny\t-\taudit=-,quiet=-,log=KILL:r:r\t-"),
    ("kl\t/kl/ok\tr", "allow\tr\taudit=-,quiet=-,log=NONE\t-"),
    // audit flag: every allowed access logged
    ("au\t/au/ok\tr", "allow\tr\taudit=-,quiet=-,log=AUDIT:r\t-"),
    ("au\t/au/no\tr", "deny\t-\taudit=-,quiet=-,log=DENIED:r:r\t-"),
    // unconfined mode and the unconfined profile: no mediation
    ("un\t/anything\trw", "allow\trwaxmlk\taudit=-,quiet=-,log=NONE\t-"),
    ("unconfined\t/usr/bin/t\tx", "allow\trwaxmlk\taudit=-,quiet=-,log=NONE|x:NONE\t-;target=t;info=-;scrub=0"),
    // children never attach from unconfined
    ("unconfined\t/x/cxattach\tx", "allow\trwaxmlk\taudit=-,quiet=-,log=NONE|x:NONE\t-;target=unconfined;info=-;scrub=0"),
];

const ATTACH: &[(&str, &str)] = &[
    ("/usr/bin/t", "t\t-"),
    ("/x/px", "tgt\t-"),
    ("/usr/bin/cm", "cm\t-"),
    ("/nothing", "unconfined\t-"),
    ("/x/cxattach", "unconfined\t-"),
];

#[test]
#[ignore = "needs apparmor_parser: compiles the profiles"]
fn hand_written_expectations() {
    let policy = Policy::from_files(&[compile("semantics.profile")]).unwrap();
    let mut bad = Vec::new();
    for (q, want) in CHECKS {
        let got = query::check_line(&policy, q);
        if got != *want {
            bad.push(format!("{q}\n   got  {got}\n   want {want}"));
        }
    }
    for (q, want) in ATTACH {
        let got = query::attach_line(&policy, q);
        if got != *want {
            bad.push(format!("attach {q}\n   got  {got}\n   want {want}"));
        }
    }
    assert!(bad.is_empty(), "{} of {} differ:\n{}", bad.len(), CHECKS.len() + ATTACH.len(), bad.join("\n"));
}

#[test]
#[ignore = "needs apparmor_parser: compiles the profiles"]
fn malformed_lines_are_errors() {
    let policy = Policy::from_files(&[compile("semantics.profile")]).unwrap();
    for q in ["nosuch\t/a\tr", "t\t/a", "t\t/a\tq", "t\trelative\tr", "t\t/a\tr\towner=2", "t\t/a\t"] {
        assert!(query::check_line(&policy, q).starts_with("error\t"), "{q}");
    }
}

#[test]
#[ignore = "needs apparmor_parser: compiles the profiles"]
fn equal_attachments_conflict_and_longer_wins() {
    let policy = Policy::from_files(&[compile("conflict.profile")]).unwrap();
    assert_eq!(query::attach_line(&policy, "/opt/dup/x"), "unconfined\tconflicting profile attachments");
    // a longer literal prefix is more specific
    assert_eq!(query::attach_line(&policy, "/opt/dup/longer"), "longer\t-");
    // a confined exec into the conflict: pix falls back to inheriting and
    // says why; px fails
    assert_eq!(
        query::check_line(&policy, "caller\t/opt/dup/x\tx"),
        "allow\txm\taudit=-,quiet=-,log=NONE|x:NONE\tpix;target=caller;info=conflicting profile attachments - ix fallback;scrub=0"
    );
    assert_eq!(
        query::check_line(&policy, "caller\t/opt/dup/y\tx"),
        "deny\tx\taudit=-,quiet=-,log=NONE|x:DENIED:x:x\tpx;target=-;info=profile transition not found;scrub=0"
    );
}

#[test]
#[ignore = "needs apparmor_parser: compiles the profiles"]
fn replace_keeps_position_and_new_profiles_go_first() {
    let a = compile("semantics.profile");
    let b = compile("replace.profile");
    let policy = Policy::from_files(&[a, b]).unwrap();
    let names: Vec<&str> = policy.profiles().map(|(_, p)| p.name.as_str()).collect();
    let before = Policy::from_files(&[compile("semantics.profile")]).unwrap();
    let old: Vec<&str> = before.profiles().map(|(_, p)| p.name.as_str()).collect();
    // `fresh` is new: head of the list; `t` keeps its place
    assert_eq!(names[0], "fresh");
    assert_eq!(&names[1..], &old[..]);
    // and it is the new `t`
    assert!(query::check_line(&policy, "t\t/etc/b\tr").starts_with("allow\t"));
    assert!(query::check_line(&policy, "t\t/etc/a\tr").starts_with("deny\t"));
}

/// Stacks and namespaces, from domain.c (`x_to_label`): `-> &name`
/// stacks `name` on the current profile, on top of what the exec would
/// give without it (the attached profile, or the fallback); labels list
/// their profiles sorted by name, joined by `//&`.
const STACKS: &[(&str, &str)] = &[
    // nothing attaches to /x/stack and px has no fallback: the exec fails
    (
        "s\t/x/stack\tx",
        "deny\tx\taudit=-,quiet=-,log=NONE|x:DENIED:x:x\tpx->&tgt;target=-;info=profile transition not found;scrub=0",
    ),
    // pix: inherit s, stacked with s//&tgt
    (
        "s\t/x/stackix\tx",
        "allow\txm\taudit=-,quiet=-,log=NONE|x:NONE\tpix->&tgt;target=s//&tgt;info=ix fallback;scrub=0",
    ),
    // att attaches to /x/stackattach: att stacked with s//&tgt
    ("s\t/x/stackattach\tx", "allow\tx\taudit=-,quiet=-,log=NONE|x:NONE\tpx->&tgt;target=att//&s//&tgt;info=-;scrub=0"),
    // a named target in another namespace
    ("s\t/x/nsx\tx", "allow\tx\taudit=-,quiet=-,log=NONE|x:NONE\tpx->:other:foo;target=:other:foo;info=-;scrub=0"),
    // a profile of another namespace, by its :ns:name
    (":other:foo\t/f\tr", "allow\tr\taudit=-,quiet=-,log=NONE\t-"),
    (":other:foo\t/g\tr", "deny\t-\taudit=-,quiet=-,log=DENIED:r:r\t-"),
];

#[test]
#[ignore = "needs apparmor_parser: compiles the profiles"]
fn stacks_and_namespaces() {
    let policy = Policy::from_files(&[compile("stack.profile"), compile("ns.profile")]).unwrap();
    assert_eq!(policy.namespaces().iter().map(|n| n.name.as_str()).collect::<Vec<_>>(), ["root", "other"]);
    let mut bad = Vec::new();
    for (q, want) in STACKS {
        let got = query::check_line(&policy, q);
        if got != *want {
            bad.push(format!("{q}\n   got  {got}\n   want {want}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // profiles of another namespace do not attach from root's unconfined
    assert_eq!(query::attach_line(&policy, "/opt/foo"), "unconfined\t-");
}

/// One namespace per load (policy_unpack.c `verify_header` keeps the
/// last header's namespace; policy.c `aa_replace_profiles` puts the whole
/// set there): apparmor_parser writes `:other:x` as a header namespace,
/// so a plain profile in the same file lands in `other` too.
#[test]
#[ignore = "needs apparmor_parser: compiles the profiles"]
fn a_load_goes_to_one_namespace() {
    let dir = std::env::temp_dir().join(format!("rampart-aa-sem-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("mixed.profile");
    std::fs::write(&src, "profile plain {\n}\nprofile :other:x {\n}\n").unwrap();
    let out = dir.join("mixed.bin");
    common::apparmor_parser(&src, &out, &[]);
    let policy = Policy::from_files(&[out]).unwrap();
    let names: Vec<(&str, &str)> = policy.profiles().map(|(ns, p)| (ns, p.name.as_str())).collect();
    assert_eq!(names, [("other", "x"), ("other", "plain")]);
    assert!(policy.profile("plain").is_none());
    assert!(policy.profile(":other:plain").is_some());
}

/// Sockets (`network` rules, crates/apparmor/src/net.rs): a profile
/// makes the families and types it names (AppArmor 3's parser names no
/// protocol: `network inet stream,` is every inet stream socket), deny
/// wins and is quiet unless audited, a profile with no network rule
/// makes no socket, Unix ones included, and complain mode lets a denial
/// through with a record. A match that dies says where (`info=`).
/// Expected from the rule text.
#[test]
fn sockets_as_apparmor_d_says() {
    use rampart_apparmor::file::RecordKind::{Allowed, Audit, Denied};
    use rampart_apparmor::net::create_perm;
    let dir = std::env::temp_dir().join(format!("rampart-aa-net-{}", std::process::id()));
    let policy = common::with_ipc_rules("network.profile", &dir);
    let (unix, inet, inet6, netlink, packet) = (1, 2, 10, 16, 17);
    let (stream, dgram, raw) = (1, 2, 3);
    let (af, ty) = (Some("failed af match"), Some("failed type match"));
    // (profile, family, type, protocol, allowed, record kind, info)
    let checks = [
        ("streamer", inet, stream, 0, true, None, None),
        ("streamer", inet, stream, 6, true, None, None),
        ("streamer", inet, dgram, 0, false, Some(Denied), ty),
        ("streamer", inet6, dgram, 17, true, None, None),
        ("streamer", inet6, stream, 0, false, Some(Denied), ty),
        ("streamer", netlink, raw, 0, false, Some(Denied), af),
        ("streamer", unix, stream, 0, true, None, None),
        ("streamer", unix, dgram, 0, true, None, None),
        ("anything", inet, stream, 0, true, None, None),
        ("anything", inet, dgram, 17, true, Some(Audit), None),
        ("anything", inet6, stream, 0, false, None, None), // deny is quiet
        ("anything", packet, raw, 0, false, None, None),
        // audit deny: the parser leaves no state for the denied type.
        ("anything", netlink, raw, 0, false, Some(Denied), ty),
        ("anything", netlink, dgram, 0, true, None, None),
        ("anything", unix, stream, 0, true, None, None),
        ("nothing", unix, stream, 0, false, Some(Denied), af),
        ("nothing", inet, stream, 0, false, Some(Denied), af),
        ("learner", inet, stream, 0, true, None, None),
        ("learner", inet, dgram, 0, true, Some(Allowed), ty),
    ];
    for (i, &(profile, family, kind, protocol, allowed, record, info)) in checks.iter().enumerate() {
        let d = create_perm(policy.profile(profile).unwrap(), family, kind, protocol);
        assert_eq!(d.allowed, allowed, "case {i}: {profile} {family} {kind} {protocol}");
        assert_eq!(d.record.map(|r| r.kind), record, "case {i}: {profile} {family} {kind} {protocol}");
        assert_eq!(d.record.and_then(|r| r.info), info, "case {i}: {profile} {family} {kind} {protocol}");
    }
    // A bind or a connect asks the same rules for `bind`, `connect`
    // (AppArmor 3 compiles every network permission into a rule).
    use rampart_apparmor::net::{sk_perm, AA_MAY_BIND, AA_MAY_CONNECT};
    let uses = [
        ("streamer", inet, stream, true, None),
        ("streamer", inet, dgram, false, Some(Denied)),
        ("anything", inet, dgram, true, Some(Audit)),
        ("nothing", unix, stream, false, Some(Denied)),
        ("learner", inet, dgram, true, Some(Allowed)),
    ];
    for request in [AA_MAY_BIND, AA_MAY_CONNECT] {
        for (i, &(profile, family, kind, allowed, record)) in uses.iter().enumerate() {
            let d = sk_perm(policy.profile(profile).unwrap(), request, family, kind, 0);
            let what = format!("{request:#x} {i}: {profile} {family} {kind}");
            assert_eq!((d.allowed, d.record.map(|r| r.kind)), (allowed, record), "{what}");
            assert!(d.record.iter().all(|r| r.request == request), "{what}");
        }
    }
}

/// Signal rules (apparmor.d(5) "Signal rules"), compiled for a feature
/// set with signal mediation: `set=` lists signals (none: all), `peer=`
/// is an AARE over the other end's label, send and receive are separate
/// permissions, `deny` wins and quiets unless `audit deny`, a profile
/// with no signal rule denies every signal, and complain mode lets an
/// unquieted denial through. Expected from the rule text.
#[test]
fn signals_as_apparmor_d_says() {
    use rampart_apparmor::file::RecordKind::{Allowed, Audit, Denied};
    use rampart_apparmor::ipc::{signal_perm, AA_MAY_RECEIVE as RECV, AA_MAY_SEND as SEND};
    let dir = std::env::temp_dir().join(format!("rampart-aa-sig-{}", std::process::id()));
    let policy = common::with_ipc_rules("signals.profile", &dir);
    let (term, usr1, usr2, hup, int, kill, quit, rtmin2) = (15, 10, 12, 1, 2, 9, 3, 34);
    // (profile, peer, signal, request, allowed, record kind)
    let checks = [
        ("sender", "receiver", term, SEND, true, None),
        ("sender", "receiver", usr1, SEND, true, None),
        ("sender", "receiver", hup, SEND, true, None),         // peer=rece*
        ("sender", "receiver", 14, SEND, false, Some(Denied)), // alrm: peer=recv*
        ("sender", "receiver", rtmin2, SEND, true, None),
        ("sender", "receiver", int, SEND, true, Some(Audit)),
        ("sender", "receiver", kill, SEND, false, None), // deny wins, quiet
        ("sender", "receiver", quit, SEND, true, None),
        ("sender", "receiver", usr2, SEND, false, Some(Denied)),
        ("sender", "receiver", 0, SEND, false, Some(Denied)), // `exists` not in any set
        ("sender", "receiver", term, RECV, false, Some(Denied)),
        ("sender", "receivers", term, SEND, false, Some(Denied)), // peer is a whole label
        ("sender", "sender", usr2, SEND, true, None),             // no set: every signal
        ("sender", "sender", 40, RECV, true, None),
        ("sender", "unconfined", kill, RECV, true, None),
        ("sender", "unconfined", kill, SEND, false, Some(Denied)),
        ("receiver", "sender", term, RECV, true, None),
        ("receiver", "sender", rtmin2, RECV, true, None),
        ("receiver", "sender", usr1, RECV, false, Some(Denied)),
        ("receiver", "unconfined", term, RECV, false, Some(Denied)),
        ("silent", "silent", term, SEND, false, Some(Denied)), // no rule: nothing, itself included
        ("learner", "receiver", term, SEND, true, Some(Allowed)),
        ("learner", "receiver", kill, SEND, false, None), // quieted deny holds in complain mode
    ];
    let mut wrong = Vec::new();
    for (profile, peer, sig, request, allowed, kind) in checks {
        let d = signal_perm(policy.profile(profile).unwrap(), peer, sig, request);
        if d.allowed != allowed || d.record.map(|r| r.kind) != kind {
            wrong.push(format!("{profile} {peer} sig {sig} req {request}: got {d:?}, expected {allowed} {kind:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// ptrace rules (apparmor.d(5) "PTrace rules"), compiled with ptrace
/// mediation: the tracer's `trace` and `read` name the peers it may
/// trace or read, the tracee's `tracedby` and `readby` those it lets; a
/// profile without ptrace rules allows neither, its own label included;
/// an unconfined tracer is not asked of the tracee. Expected from the
/// rule text.
#[test]
fn ptrace_as_apparmor_d_says() {
    use rampart_apparmor::ipc::{tracee_perm, tracer_perm, AA_PTRACE_READ as READ, AA_PTRACE_TRACE as TRACE};
    let dir = std::env::temp_dir().join(format!("rampart-aa-ptrace-{}", std::process::id()));
    let policy = common::with_ipc_rules("ptrace.profile", &dir);
    let tracer = |p: &str, peer: &str, request| tracer_perm(policy.profile(p).unwrap(), peer, request).allowed;
    let tracee = |p: &str, peer: &str, request| tracee_perm(policy.profile(p).unwrap(), peer, request).allowed;
    let checks = [
        ("tracer traces tracee", tracer("tracer", "tracee", TRACE), true),
        ("tracer traces reader", tracer("tracer", "reader", TRACE), false),
        ("tracer reads reader (read*)", tracer("tracer", "reader", READ), true),
        ("tracer reads reader2 (deny)", tracer("tracer", "reader2", READ), false),
        ("tracer traces itself", tracer("tracer", "tracer", TRACE), false),
        ("tracer traces unconfined", tracer("tracer", "unconfined", TRACE), false),
        ("tracee traced by tracer", tracee("tracee", "tracer", TRACE), true),
        ("tracee traced by reader", tracee("tracee", "reader", TRACE), false),
        ("tracee traced by unconfined", tracee("tracee", "unconfined", TRACE), true),
        ("reader read by tracer", tracee("reader", "tracer", READ), true),
        ("reader traced by tracer", tracee("reader", "tracer", TRACE), false),
        ("closed reads itself", tracer("closed", "closed", READ), false),
        ("closed read by tracer", tracee("closed", "tracer", READ), false),
    ];
    let wrong: Vec<String> =
        checks.iter().filter(|(_, got, want)| got != want).map(|(what, got, _)| format!("{what}: {got}")).collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
