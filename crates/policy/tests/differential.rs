//! Differential test: Rampart's `compute_av` against libsepol 3.4.
//!
//! The oracle (crates/oracle) is libsepol linked statically; it also
//! generates the queries from its own policy structures, stratified over
//! rule-guided pairs, random pairs, constraint-heavy classes, MLS ranges
//! with categories, aliases, every class, many users and roles, and
//! invalid contexts. Five boolean configurations are compared: defaults,
//! all on, all off and two random ones; the boolean values are read back
//! from libsepol, so both sides run on identical states.
//!
//! Sample size: 1,000,000 queries with `RAMPART_FULL=1` (CI), else 100,000.
//! Every decision must be bit-identical, and every query one side rejects
//! the other must reject too.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rampart_oracle::{Answer, Oracle};
use rampart_policy::{Booleans, Policy};

const POLICY: &str = "/etc/selinux/default/policy/policy.33";

#[derive(Debug, Clone, Copy)]
enum BoolConfig {
    Defaults,
    AllOn,
    AllOff,
    Random(u64),
}

fn apply(oracle: &mut Oracle, config: BoolConfig) -> std::io::Result<()> {
    match config {
        BoolConfig::Defaults => oracle.bools_default(),
        BoolConfig::AllOn => oracle.bools_all(true),
        BoolConfig::AllOff => oracle.bools_all(false),
        BoolConfig::Random(seed) => oracle.bools_random(seed),
    }
}

/// Our boolean state, built from the values libsepol reports by name.
fn mirror(policy: &Policy, oracle: &mut Oracle) -> Booleans {
    let theirs = oracle.bools().expect("oracle bools");
    assert_eq!(theirs.len(), policy.bools.len(), "boolean count differs from libsepol");
    let mut values = vec![false; policy.bools.len()];
    for (name, value) in theirs {
        let id = policy.names.bools.get(&name).unwrap_or_else(|| panic!("libsepol boolean `{name}` unknown to us"));
        values[id.index()] = value;
    }
    Booleans::from_values(policy, values)
}

fn ours(policy: &Policy, bools: &Booleans, line: &str) -> Result<(u32, u32, u32, bool), String> {
    let f: Vec<&str> = line.split_whitespace().collect();
    let [s, t, c] = f[..] else { return Err(format!("malformed line `{line}`")) };
    let s = policy.parse_context(s).map_err(|e| e.to_string())?;
    let t = policy.parse_context(t).map_err(|e| e.to_string())?;
    let c = policy.class_by_name(c).ok_or_else(|| format!("unknown class `{c}`"))?;
    let d = policy.compute_av(bools, &s, &t, c);
    Ok((d.allowed, d.auditallow, d.auditdeny, d.permissive))
}

/// What one comparison run covered.
#[derive(Default)]
struct Tally {
    total: usize,
    invalid: usize,
    some_allowed: usize,
    some_dontaudit: usize,
    some_auditallow: usize,
    permissive: usize,
    classes: std::collections::HashSet<String>,
    mismatches: Vec<String>,
}

/// Runs `per_config` generated queries per boolean configuration through
/// libsepol and us, tallying agreement.
fn compare(policy_path: &str, configs: &[BoolConfig], per_config: usize, seed_base: u64) -> (Policy, Tally) {
    let policy = Policy::from_bytes(&std::fs::read(policy_path).expect("read policy")).expect("load policy");
    let mut oracle = Oracle::spawn(policy_path).expect("spawn libsepol oracle");
    let mut t = Tally::default();
    for (i, &config) in configs.iter().enumerate() {
        apply(&mut oracle, config).expect("set booleans in oracle");
        let bools = mirror(&policy, &mut oracle);
        let queries = oracle.generate(seed_base + i as u64, per_config).expect("generate queries");
        assert_eq!(queries.len(), per_config);
        let answers = oracle.answers(&queries).expect("oracle answers");
        for (q, a) in queries.iter().zip(answers) {
            t.total += 1;
            let mine = ours(&policy, &bools, q);
            let agree = match (&mine, &a) {
                (Ok((al, aa, ad, p)), Answer::Decision(d)) => {
                    if let Some(c) = q.split_whitespace().nth(2) {
                        t.classes.insert(c.to_owned());
                    }
                    t.some_allowed += usize::from(d.allowed != 0);
                    t.some_dontaudit += usize::from(d.auditdeny != u32::MAX);
                    t.some_auditallow += usize::from(d.auditallow != 0);
                    t.permissive += usize::from(d.permissive);
                    *al == d.allowed && *aa == d.auditallow && *ad == d.auditdeny && *p == d.permissive
                }
                (Err(_), Answer::Error(_)) => {
                    t.invalid += 1;
                    true
                }
                _ => false,
            };
            if !agree && t.mismatches.len() < 25 {
                t.mismatches
                    .push(format!("{policy_path} {config:?}: `{q}`\n    libsepol: {a:?}\n    rampart:  {mine:?}"));
            }
        }
    }
    println!(
        "differential compute_av on {policy_path}: {} queries ({} valid, {} invalid rejected by both) over {} boolean configurations, {} classes; {} mismatches",
        t.total,
        t.total - t.invalid,
        t.invalid,
        configs.len(),
        t.classes.len(),
        t.mismatches.len()
    );
    println!(
        "  decisions with some permission allowed: {}; with dontaudit: {}; with auditallow: {}; permissive source: {}",
        t.some_allowed, t.some_dontaudit, t.some_auditallow, t.permissive
    );
    (policy, t)
}

const ALL_CONFIGS: [BoolConfig; 5] = [
    BoolConfig::Defaults,
    BoolConfig::AllOn,
    BoolConfig::AllOff,
    BoolConfig::Random(0x5eed_0001),
    BoolConfig::Random(0x5eed_0002),
];

#[test]
#[ignore = "needs the system policy: compared with libsepol"]
fn compute_av_matches_libsepol() {
    if !std::path::Path::new(POLICY).exists() {
        panic!("{POLICY} missing: run scripts/install-deps.sh (selinux-policy-default)");
    }
    let full = std::env::var("RAMPART_FULL").is_ok_and(|v| v == "1");
    let per_config = if full { 200_000 } else { 20_000 };
    // Another stream: RAMPART_DIFF_SEED=N.
    let seed_base: u64 = std::env::var("RAMPART_DIFF_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(1000);
    let (policy, t) = compare(POLICY, &ALL_CONFIGS, per_config, seed_base);
    assert!(t.mismatches.is_empty(), "decisions differ from libsepol:\n{}", t.mismatches.join("\n"));
    assert_eq!(t.classes.len(), policy.classes.len(), "not every class was exercised");
    assert!(
        t.some_allowed > t.total / 10 && t.some_dontaudit > 0,
        "the sample hardly reaches granted or dontaudit decisions"
    );
}

/// The small hand-written policies (tests/data, compiled by checkpolicy
/// for versions 30 to 33) exercise what the Debian policy lacks:
/// permissive types, typebounds, validatetrans, non-MLS policies.
#[test]
fn small_policies_match_libsepol() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("tests/data")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().and_then(|e| e.to_str()).is_some_and(|e| e.len() == 2 && e.starts_with('3')))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no compiled test policies in {dir}");
    let mut permissive_seen = 0;
    for f in files {
        let path = f.to_str().expect("utf-8 path");
        let (_, t) = compare(path, &ALL_CONFIGS, 2_000, 7);
        assert!(t.mismatches.is_empty(), "decisions differ from libsepol:\n{}", t.mismatches.join("\n"));
        permissive_seen += t.permissive;
    }
    assert!(permissive_seen > 0, "no test policy exercised a permissive type");
}

/// Several booleans committed at once with `Booleans::with` give the same
/// state and decisions as libsepol after `bool ...; commit`.
#[test]
#[ignore = "needs the system policy: compared with libsepol"]
fn boolean_commit_matches_libsepol() {
    let bytes = std::fs::read(POLICY)
        .unwrap_or_else(|e| panic!("{POLICY}: {e}; run scripts/install-deps.sh (selinux-policy-default)"));
    let policy = Policy::from_bytes(&bytes).expect("load policy");
    let mut oracle = Oracle::spawn(POLICY).expect("spawn libsepol oracle");
    oracle.bools_default().expect("defaults");
    let defaults = Booleans::defaults(&policy);
    assert_eq!(defaults, mirror(&policy, &mut oracle), "default boolean values differ");
    // Flip every third boolean in one commit.
    let changes: Vec<(rampart_policy::BoolId, bool)> = policy
        .bools
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 3 == 0)
        .map(|(i, b)| (rampart_policy::BoolId(i as u32 + 1), !b.default))
        .collect();
    let named: Vec<(&str, bool)> = changes.iter().map(|(id, v)| (policy.bools[id.index()].name.as_str(), *v)).collect();
    oracle.set_bools(&named).expect("commit booleans");
    let committed = defaults.with(&policy, &changes);
    assert_ne!(committed, defaults);
    assert_eq!(committed, mirror(&policy, &mut oracle), "state after commit differs");
    let queries = oracle.generate(77, 5_000).expect("generate");
    let answers = oracle.answers(&queries).expect("answers");
    let mut compared = 0;
    for (q, a) in queries.iter().zip(answers) {
        if let (Ok(mine), Answer::Decision(d)) = (ours(&policy, &committed, q), a) {
            assert_eq!(mine, (d.allowed, d.auditallow, d.auditdeny, d.permissive), "after commit: `{q}`");
            compared += 1;
        }
    }
    assert!(compared > 4_000);
}
