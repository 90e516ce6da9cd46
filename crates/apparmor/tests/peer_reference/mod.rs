//! What the signal, ptrace and socket-creation reference tests share
//! (tests/signal_reference.rs, tests/ptrace_reference.rs,
//! tests/net_reference.rs): running their python3-apparmor side,
//! compiling the profile files its queries name for a feature set with
//! signal, ptrace and network mediation, and comparing each decision
//! and record with what the profile text implies.
//!
//! The python side writes one line per query:
//! `FILE PROFILE MODE AUDIT_ALL Q1 Q2 Q3 GRANT AUDIT QUIET HOW` (tabs),
//! where Q1-Q3 are the test's own query columns, GRANT says an allow
//! rule covers it and no deny rule does, AUDIT that an `audit` allow
//! rule covers it, QUIET that a deny rule without `audit` does, and HOW
//! how the query was matched (for signal and ptrace the peer label:
//! `unconfined` for an unconfined tracer, which the kernel lets through
//! before any rule; for sockets the shapes of the rules that cover it).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use rampart_apparmor::file::RecordKind;
use rampart_apparmor::ipc::PeerDecision;
use rampart_apparmor::{Policy, Profile};

const PARSER: &str = "/sbin/apparmor_parser";
/// A feature set with `signal`, `ptrace` and `network`: without it the
/// parser drops their rules.
const FEATURES: &str = "/etc/apparmor.d/abi/3.0";

/// One query and what the profile text says of it.
pub struct Line<'a> {
    pub file: &'a str,
    pub profile: &'a str,
    pub mode: &'a str,
    pub audit_all: bool,
    /// The test's own columns.
    pub query: [&'a str; 3],
    pub grant: bool,
    pub audit: bool,
    pub quiet: bool,
    pub how: &'a str,
}

/// What Rampart answered a query: the decision, the request its record
/// must carry, and the query as a message names it.
pub struct Answer {
    pub decision: PeerDecision,
    pub request: u32,
    pub name: String,
}

/// Runs `script` (tests/reference/, writing `WHAT.tsv`) with `seed`,
/// compiles, asks `ask` every query and fails on any disagreement, after
/// printing the counts, the classes and the first 20 examples.
pub fn check(what: &str, script: &str, seed: &str, min_queries: usize, ask: &dyn Fn(&Profile, &Line) -> Answer) {
    need_tools();
    let dir = std::env::temp_dir().join(format!("rampart-aa-{what}ref-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rounds = if std::env::var_os("RAMPART_FULL").is_some() { "8" } else { "2" };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference").join(script);
    let o = Command::new("/usr/bin/python3").arg(&script).arg(&dir).arg(seed).arg(rounds).output().unwrap();
    assert!(o.status.success(), "{} failed: {}", script.display(), String::from_utf8_lossy(&o.stderr));
    let tsv = std::fs::read_to_string(dir.join(format!("{what}.tsv"))).unwrap();
    let mut files: Vec<&str> = tsv.lines().map(|l| l.split('\t').next().unwrap()).collect();
    files.sort_unstable();
    files.dedup();
    let bins = compile_all(&files, &dir.join("bin"));
    let (t, profiles) = run(&tsv, &bins, ask);
    eprintln!(
        "{what}: {profiles} profiles of {} files, {} queries ({} granted, {} of them audited; {} quieted denials); decision agrees {}, record agrees {}; {} disagree",
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
    assert!(t.queries > min_queries, "too few queries: {}", t.queries);
    assert_eq!(t.disagree, 0, "queries where Rampart and python3-apparmor disagree on {what}");
    let _ = std::fs::remove_dir_all(&dir);
}

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

fn parse_line(l: &str) -> Line<'_> {
    let f: Vec<&str> = l.split('\t').collect();
    assert_eq!(f.len(), 11, "bad reference line {l}");
    let bit = |s: &str| match s {
        "0" => false,
        "1" => true,
        _ => panic!("bad flag {s} in {l}"),
    };
    Line {
        file: f[0],
        profile: f[1],
        mode: f[2],
        audit_all: bit(f[3]),
        query: [f[4], f[5], f[6]],
        grant: bit(f[7]),
        audit: bit(f[8]),
        quiet: bit(f[9]),
        how: f[10],
    }
}

/// The decision and the record kind the profile text implies.
fn expected(e: &Line) -> (bool, Option<RecordKind>) {
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

fn run(tsv: &str, bins: &HashMap<String, PathBuf>, ask: &dyn Fn(&Profile, &Line) -> Answer) -> (Tally, usize) {
    let mut t = Tally::default();
    let mut policies: HashMap<&str, Policy> = HashMap::new();
    let mut profiles = HashSet::new();
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
        let Answer { decision: d, request, name } = ask(p, &e);
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
                name.split_whitespace().next().unwrap_or_default(),
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
                    "{} ({}) {name}: got allowed={} record={:?} / python grant={} audit={} quiet={} ({}) so allowed={} record={:?}",
                    e.profile,
                    e.file,
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
