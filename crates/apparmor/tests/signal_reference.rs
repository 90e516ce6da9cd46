//! Reference test: Rampart's signal decisions (`ipc::signal_perm`) on
//! the shipped profiles, as compiled by apparmor_parser with signal
//! mediation, against python3-apparmor.
//!
//! `reference/pysignal.py` reads /etc/apparmor.d and
//! /usr/share/apparmor/extra-profiles with python3-apparmor (`SignalRule`
//! for access, signal set, peer AARE and audit/deny), plus synthetic
//! profiles it writes for what the shipped ones lack (deny and audit
//! deny rules, complain, kill, audit and unconfined modes, profiles
//! without signal rules, stacks whose whole name is denied). For every
//! profile, child profile and hat it generates queries (Linux signal
//! numbers from the rules' sets plus `exists`, common and real-time
//! ones; peers from the rules' peer globs, near misses, `unconfined`,
//! the profile's own name, other profiles, random names and stacks) and
//! writes whether the text grants each, whether an `audit` rule covers
//! it and whether a deny rule without `audit` quiets it. We compile each
//! profile file with apparmor_parser for the 3.0 ABI features (which
//! have `signal`), load the binaries and compare the decision and the
//! audit record with what those sets and the profile's mode imply:
//! - granted: allowed, with an AUDIT record when an `audit` rule (or the
//!   `audit` flag) covers it, else none;
//! - not granted and quieted (no `audit` flag): refused without a record,
//!   complain mode included (aa_check_perms returns before complain
//!   mode's pass);
//! - otherwise: enforce refuses with DENIED, kill with KILL, complain
//!   allows with ALLOWED; an unconfined profile allows everything.
//!
//! What python3-apparmor does not model (access aliases, `rtmin+N`
//! numbers, signal numbering, `@{profile_name}` as the parser expands
//! it, the kernel's match of stacked peer labels) is added on its side
//! from apparmor_parser's and the kernel's documented behaviour, never
//! from Rampart: see pysignal.py's module doc.
//!
//! Sample: 164 profiles (154 shipped, 10 synthetic); two instances of
//! each peer glob and a few random peers per profile (about 95,000
//! queries, about 12 s with the compiles) by default, eight (about
//! 260,000) with `RAMPART_FULL=1`. Every disagreement fails the test,
//! listing the first 20 and the count of each class. Needs the packages
//! of scripts/install-deps.sh.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use rampart_apparmor::file::RecordKind;
use rampart_apparmor::ipc::{signal_name, signal_perm, AA_MAY_RECEIVE, AA_MAY_SEND};
use rampart_apparmor::Policy;

const PARSER: &str = "/sbin/apparmor_parser";
/// A feature set with `signal`: without it the parser drops signal rules.
const FEATURES: &str = "/etc/apparmor.d/abi/3.0";

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
    sig: i32,
    peer: &'a str,
    send: bool,
    /// An allow rule covers it and no deny rule does.
    grant: bool,
    /// An `audit` allow rule covers it.
    audit: bool,
    /// A deny rule without `audit` covers it.
    quiet: bool,
    /// How the peer label was matched: whole, components or invisible.
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
        sig: f[4].parse().unwrap(),
        peer: f[5],
        send: match f[6] {
            "send" => true,
            "receive" => false,
            a => panic!("bad access {a} in {l}"),
        },
        grant: bit(f[7]),
        audit: bit(f[8]),
        quiet: bit(f[9]),
        how: f[10],
    }
}

/// The decision and the record kind the profile text implies.
fn expected(e: &Expect) -> (bool, Option<RecordKind>) {
    if e.mode == "unconfined" {
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

#[derive(Default)]
struct Tally {
    queries: usize,
    granted: usize,
    audited: usize,
    quieted: usize,
    decision_agree: usize,
    record_agree: usize,
    disagree: usize,
    /// (class, count): disagreements by mode, expectation and peer match
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
        let request = if e.send { AA_MAY_SEND } else { AA_MAY_RECEIVE };
        let d = signal_perm(p, e.peer, e.sig, request);
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
                "{} grant={} audit={} quiet={} {}: got allowed={} {:?}",
                e.mode,
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
                    "{} ({}) {} signal={} peer={}: got allowed={} record={:?} / python grant={} audit={} quiet={} ({}) so allowed={} record={:?}",
                    e.profile,
                    e.file,
                    if e.send { "send" } else { "receive" },
                    signal_name(e.sig),
                    e.peer,
                    d.allowed,
                    d.record.map(|r| r.kind),
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
fn shipped_signal_rules_agree_with_python3_apparmor() {
    need_tools();
    let dir = std::env::temp_dir().join(format!("rampart-aa-sigref-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rounds = if std::env::var_os("RAMPART_FULL").is_some() { "8" } else { "2" };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/pysignal.py");
    let o = Command::new("/usr/bin/python3").arg(&script).arg(&dir).arg("23").arg(rounds).output().unwrap();
    assert!(o.status.success(), "pysignal.py failed: {}", String::from_utf8_lossy(&o.stderr));
    let tsv = std::fs::read_to_string(dir.join("signal.tsv")).unwrap();
    let mut files: Vec<&str> = tsv.lines().map(|l| l.split('\t').next().unwrap()).collect();
    files.sort_unstable();
    files.dedup();
    let bins = compile_all(&files, &dir.join("bin"));
    let (t, profiles) = run(&tsv, &bins);
    eprintln!(
        "signal: {profiles} profiles of {} files, {} queries ({} granted, {} of them audited; {} quieted denials); decision agrees {}, record agrees {}; {} disagree",
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
    assert!(t.queries > 50_000, "too few queries: {}", t.queries);
    assert_eq!(t.disagree, 0, "queries where Rampart and python3-apparmor disagree on signals");
    let _ = std::fs::remove_dir_all(&dir);
}
