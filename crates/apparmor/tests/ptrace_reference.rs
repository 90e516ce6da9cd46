//! Reference test: Rampart's ptrace decisions (`ipc::tracer_perm`,
//! `ipc::tracee_perm`) on the shipped profiles, as compiled by
//! apparmor_parser with ptrace mediation, against python3-apparmor.
//!
//! `reference/pyptrace.py` reads /etc/apparmor.d and
//! /usr/share/apparmor/extra-profiles with python3-apparmor (`PtraceRule`
//! for access, peer AARE and audit/deny), plus synthetic profiles it
//! writes for what the shipped ones lack (deny and audit deny rules,
//! audit allow rules, complain, kill, audit and unconfined modes,
//! access aliases, profiles without ptrace rules, stacks whose whole
//! name is denied, rules about the unconfined tracer,
//! `@{profile_name}` in children, hats and glob-named profiles). For
//! every profile, child profile and hat it generates queries (role
//! tracer or tracee, request trace or read; peers from the rules' peer
//! globs, near misses, `unconfined` here and in another namespace, the
//! profile's own name and family, other profiles, random names and
//! stacks) and writes whether the text grants each, whether an `audit`
//! rule covers it and whether a deny rule without `audit` quiets it. We
//! compile each profile file with apparmor_parser for the 3.0 ABI
//! features (which have `ptrace`), load the binaries and compare the
//! decision and the audit record with what those sets and the profile's
//! mode imply:
//! - an unconfined profile allows everything, and a tracee allows an
//!   unconfined tracer before looking at anything (ipc.c
//!   profile_tracee_perm): allowed, no record;
//! - granted: allowed, with an AUDIT record when an `audit` rule (or the
//!   `audit` flag) covers it, else none;
//! - not granted and quieted (no `audit` flag): refused without a record,
//!   complain mode included (aa_check_perms returns before complain
//!   mode's pass);
//! - otherwise: enforce refuses with DENIED, kill with KILL, complain
//!   allows with ALLOWED.
//!
//! The record's request is the tracer's `trace`/`read` bit, or for a
//! tracee the `tracedby`/`readby` bit (the request shifted by
//! PTRACE_PERM_SHIFT); its denied mask is the request, or 0 for AUDIT.
//!
//! What python3-apparmor does not model (access aliases, `@{profile_name}`
//! as the parser expands it, the kernel's match of stacked peer labels,
//! the unconfined tracer) is added on its side from apparmor_parser's
//! and the kernel's documented behaviour, never from Rampart: see
//! pyptrace.py's module doc.
//!
//! Sample: 167 profiles (154 shipped, 13 synthetic); two instances of
//! each peer glob, 24 other profiles and a few random peers per profile
//! (about 26,000 queries, about 10 s with the compiles) by default,
//! eight rounds (about 86,000) with `RAMPART_FULL=1`. Every disagreement
//! fails the test, listing the first 20 and the count of each class.
//! Needs the packages of scripts/install-deps.sh.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use rampart_apparmor::file::RecordKind;
use rampart_apparmor::ipc::{tracee_perm, tracer_perm, AA_PTRACE_READ, AA_PTRACE_TRACE};
use rampart_apparmor::Policy;

const PARSER: &str = "/sbin/apparmor_parser";
/// A feature set with `ptrace`: without it the parser drops ptrace rules.
const FEATURES: &str = "/etc/apparmor.d/abi/3.0";
/// `PTRACE_PERM_SHIFT`: a tracee's `tracedby`/`readby` bits.
const PTRACE_PERM_SHIFT: u32 = 2;

fn need_tools() {
    let ok = Path::new(PARSER).exists()
        && Path::new(FEATURES).exists()
        && Command::new("/usr/bin/python3").args(["-c", "import apparmor.aa"]).status().is_ok_and(|s| s.success())
        && Path::new("/etc/apparmor.d/usr.sbin.nscd").exists()
        && Path::new("/usr/share/apparmor/extra-profiles").is_dir();
    assert!(
        ok,
        "needs apparmor, python3-apparmor, apparmor-profiles and apparmor-profiles-extra: run scripts/install-deps.sh"
    );
}

/// Compiles the profile files the queries name, two at a time.
fn compile_all(files: &[&str], out: &Path) -> HashMap<String, PathBuf> {
    std::fs::create_dir_all(out).unwrap();
    let jobs: Vec<(String, PathBuf)> =
        files.iter().enumerate().map(|(i, f)| (f.to_string(), out.join(format!("{i}.bin")))).collect();
    let halves: Vec<Vec<(String, PathBuf)>> =
        vec![jobs.iter().step_by(2).cloned().collect(), jobs.iter().skip(1).step_by(2).cloned().collect()];
    std::thread::scope(|s| {
        for half in &halves {
            s.spawn(move || {
                for (src, bin) in half {
                    let mut c = Command::new(PARSER);
                    c.args(["-Q", "-K", "--skip-cache", "--features-file", FEATURES, "-o"]).arg(bin).arg(src);
                    if src.starts_with("/usr/share/apparmor/extra-profiles") {
                        c.args(["-I", "/etc/apparmor.d", "-I", "/usr/share/apparmor/extra-profiles"]);
                    }
                    let o = c.output().unwrap();
                    assert!(
                        o.status.success(),
                        "apparmor_parser failed on {src}: {}",
                        String::from_utf8_lossy(&o.stderr)
                    );
                }
            });
        }
    });
    jobs.into_iter().collect()
}

struct Expect<'a> {
    file: &'a str,
    profile: &'a str,
    mode: &'a str,
    audit_all: bool,
    /// The profile traces or reads the peer (else it is the tracee).
    tracer: bool,
    /// `AA_PTRACE_TRACE` or `AA_PTRACE_READ`.
    request: u32,
    peer: &'a str,
    /// An allow rule covers it and no deny rule does.
    grant: bool,
    /// An `audit` allow rule covers it.
    audit: bool,
    /// A deny rule without `audit` covers it.
    quiet: bool,
    /// How the peer label was matched: whole, components or invisible,
    /// or `unconfined` for an unconfined tracer.
    how: &'a str,
}

fn parse_line(l: &str) -> Expect<'_> {
    let f: Vec<&str> = l.split('\t').collect();
    assert_eq!(f.len(), 11, "bad reference line {l}");
    let bit = |s: &str| match s {
        "0" => false,
        "1" => true,
        _ => panic!("bad flag {s} in {l}"),
    };
    Expect {
        file: f[0],
        profile: f[1],
        mode: f[2],
        audit_all: bit(f[3]),
        tracer: match f[4] {
            "tracer" => true,
            "tracee" => false,
            r => panic!("bad role {r} in {l}"),
        },
        request: match f[5] {
            "trace" => AA_PTRACE_TRACE,
            "read" => AA_PTRACE_READ,
            r => panic!("bad request {r} in {l}"),
        },
        peer: f[6],
        grant: bit(f[7]),
        audit: bit(f[8]),
        quiet: bit(f[9]),
        how: f[10],
    }
}

/// The decision and the record kind the profile text implies.
fn expected(e: &Expect) -> (bool, Option<RecordKind>) {
    if e.mode == "unconfined" || e.how == "unconfined" {
        (true, None)
    } else if e.grant {
        (true, (e.audit || e.audit_all).then_some(RecordKind::Audit))
    } else if e.quiet && !e.audit_all {
        (false, None)
    } else {
        match e.mode {
            "complain" => (true, Some(RecordKind::Allowed)),
            "kill" => (false, Some(RecordKind::Kill)),
            "enforce" => (false, Some(RecordKind::Denied)),
            m => panic!("unknown mode {m}"),
        }
    }
}

/// The query as the kernel's audit record names it.
fn query_name(e: &Expect) -> &'static str {
    match (e.tracer, e.request == AA_PTRACE_TRACE) {
        (true, true) => "trace",
        (true, false) => "read",
        (false, true) => "tracedby",
        (false, false) => "readby",
    }
}

#[derive(Default)]
struct Tally {
    queries: usize,
    granted: usize,
    audited: usize,
    quieted: usize,
    decision_agree: usize,
    record_agree: usize,
    disagree: usize,
    /// (class, count): disagreements by mode, query, expectation and
    /// peer match
    classes: HashMap<String, usize>,
    examples: Vec<String>,
}

fn run(tsv: &str, bins: &HashMap<String, PathBuf>) -> (Tally, usize) {
    let mut t = Tally::default();
    let mut policies: HashMap<&str, Policy> = HashMap::new();
    let mut profiles = std::collections::HashSet::new();
    for line in tsv.lines() {
        let e = parse_line(line);
        let policy = policies.entry(e.file).or_insert_with(|| Policy::from_files(&[&bins[e.file]]).unwrap());
        let Some(p) = policy.profile(e.profile) else {
            panic!("profile `{}` of {} not in the compiled binary", e.profile, e.file);
        };
        if profiles.insert((e.file, e.profile)) {
            assert_eq!(p.mode.as_str(), e.mode, "mode of {} in {}", e.profile, e.file);
            assert_eq!(p.audit_all, e.audit_all, "audit flag of {} in {}", e.profile, e.file);
        }
        let (d, request) = if e.tracer {
            (tracer_perm(p, e.peer, e.request), e.request)
        } else {
            (tracee_perm(p, e.peer, e.request), e.request << PTRACE_PERM_SHIFT)
        };
        let (want_allowed, want_kind) = expected(&e);
        t.queries += 1;
        t.granted += usize::from(e.grant);
        t.audited += usize::from(e.grant && e.audit);
        t.quieted += usize::from(!e.grant && e.quiet);
        let decision_ok = d.allowed == want_allowed;
        let record_ok = match (d.record, want_kind) {
            (None, None) => true,
            (Some(r), Some(k)) => {
                r.kind == k && r.request == request && r.denied == if k == RecordKind::Audit { 0 } else { request }
            }
            _ => false,
        };
        t.decision_agree += usize::from(decision_ok);
        t.record_agree += usize::from(record_ok);
        if !(decision_ok && record_ok) {
            t.disagree += 1;
            let class = format!(
                "{}{} {} grant={} audit={} quiet={} {}: got allowed={} {:?}",
                e.mode,
                if e.audit_all { "+audit" } else { "" },
                query_name(&e),
                e.grant as u8,
                e.audit as u8,
                e.quiet as u8,
                e.how,
                d.allowed,
                d.record.map(|r| r.kind)
            );
            *t.classes.entry(class).or_default() += 1;
            if t.examples.len() < 20 {
                t.examples.push(format!(
                    "{} ({}) {} peer={}: got allowed={} record={:?} / python grant={} audit={} quiet={} ({}) so allowed={} record={:?}",
                    e.profile,
                    e.file,
                    query_name(&e),
                    e.peer,
                    d.allowed,
                    d.record,
                    e.grant as u8,
                    e.audit as u8,
                    e.quiet as u8,
                    e.how,
                    want_allowed,
                    want_kind
                ));
            }
        }
    }
    (t, profiles.len())
}

#[test]
#[ignore = "needs apparmor_parser, python3-apparmor and the shipped profiles"]
fn shipped_ptrace_rules_agree_with_python3_apparmor() {
    need_tools();
    let dir = std::env::temp_dir().join(format!("rampart-aa-ptraceref-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rounds = if std::env::var_os("RAMPART_FULL").is_some() { "8" } else { "2" };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/pyptrace.py");
    let o = Command::new("/usr/bin/python3").arg(&script).arg(&dir).arg("29").arg(rounds).output().unwrap();
    assert!(o.status.success(), "pyptrace.py failed: {}", String::from_utf8_lossy(&o.stderr));
    let tsv = std::fs::read_to_string(dir.join("ptrace.tsv")).unwrap();
    let mut files: Vec<&str> = tsv.lines().map(|l| l.split('\t').next().unwrap()).collect();
    files.sort_unstable();
    files.dedup();
    let bins = compile_all(&files, &dir.join("bin"));
    let (t, profiles) = run(&tsv, &bins);
    eprintln!(
        "ptrace: {profiles} profiles of {} files, {} queries ({} granted, {} of them audited; {} quieted denials); decision agrees {}, record agrees {}; {} disagree",
        files.len(),
        t.queries,
        t.granted,
        t.audited,
        t.quieted,
        t.decision_agree,
        t.record_agree,
        t.disagree
    );
    let mut classes: Vec<(&String, &usize)> = t.classes.iter().collect();
    classes.sort();
    for (c, n) in classes {
        eprintln!("  {n:6} {c}");
    }
    for x in &t.examples {
        eprintln!("  {x}");
    }
    assert!(profiles > 150, "too few profiles: {profiles}");
    assert!(t.queries > 20_000, "too few queries: {}", t.queries);
    assert_eq!(t.disagree, 0, "queries where Rampart and python3-apparmor disagree on ptrace");
    let _ = std::fs::remove_dir_all(&dir);
}
