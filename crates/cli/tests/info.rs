//! `rampart policy info` against `seinfo` (setools): every count both
//! print must agree, on the system policy, the policy crate's seed
//! policies and the CLI's test policy.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::*;

/// `Label: N` pairs of seinfo-style output (`Policy Version: 33 (...)`
/// gives `Policy Version` = 33).
fn counts(text: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let mut label: Vec<&str> = Vec::new();
        for word in line.split_whitespace() {
            match (label.last(), word.parse::<u64>()) {
                (Some(prev), Ok(n)) if prev.ends_with(':') => {
                    let text = label.join(" ");
                    out.insert(text.trim_end_matches(':').to_owned(), n);
                    label.clear();
                }
                _ => label.push(word),
            }
        }
    }
    out
}

/// Compares one policy; returns how many counts were compared.
fn compare(policy: &Path) -> usize {
    let path = policy.to_str().unwrap();
    let theirs_text = tool("seinfo", &[path]);
    let ours = with_policy(policy, &["policy", "info"]);
    assert_eq!(ours.code, 0, "{}", ours.stderr);
    let (theirs, ours_counts) = (counts(&theirs_text), counts(&ours.stdout));
    let mut compared = 0;
    for (label, n) in &theirs {
        match ours_counts.get(label) {
            Some(m) => {
                assert_eq!(m, n, "{label} differs for {path}: rampart {m}, seinfo {n}");
                compared += 1;
            }
            None => panic!("rampart does not print `{label}` (seinfo: {n}) for {path}"),
        }
    }
    // The header lines, verbatim.
    for (a, b) in ours.stdout.lines().zip(theirs_text.lines()).take(4) {
        assert_eq!(a, b);
    }
    compared
}

#[test]
#[ignore = "needs the system policy and setools: compared with seinfo/sesearch"]
fn system_policy_counts_match_seinfo() {
    let policy = system_policy();
    let n = compare(&policy);
    assert!(n >= 40, "only {n} counts compared");
    eprintln!("{n} counts agree with seinfo on {}", policy.display());
}

/// The seed policies exercise aliases, MLS, name transitions and old
/// versions.
#[test]
#[ignore = "needs setools and checkpolicy: compared with seinfo"]
fn seed_policies_counts_match_seinfo() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../policy/tests/data");
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| e.len() == 2 && e.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    files.sort();
    files.push(test_policy("deny"));
    for f in &files {
        compare(f);
    }
    eprintln!("{} policies agree with seinfo", files.len());
}

/// The counts seinfo's statistics leave out, checked against its other
/// listings: type aliases (`seinfo -t -x`) and name-based type transitions
/// (`sesearch -T` lines with a name).
#[test]
#[ignore = "needs the system policy and setools: compared with seinfo/sesearch"]
fn extra_counts_match_setools_listings() {
    let policy = system_policy();
    let path = policy.to_str().unwrap();
    let types = tool("seinfo", &[path, "-t", "-x"]);
    let trans = sesearch(&policy, &["-T"]);
    let aliases: u64 = types
        .lines()
        .filter_map(|l| l.split_once(" alias ").map(|(_, rest)| rest))
        .map(|rest| match rest.strip_prefix("{ ") {
            Some(set) => set.split(" }").next().unwrap_or("").split_whitespace().count() as u64,
            None => 1,
        })
        .sum();
    // `type_transition S T:C NEW NAME;`: five words with a name.
    let named =
        trans.iter().filter(|l| l.starts_with("type_transition") && l.split_whitespace().count() == 5).count() as u64;
    let ours = counts(&with_policy(&policy, &["policy", "info"]).stdout);
    assert_eq!(ours["Aliases"], aliases);
    assert_eq!(ours["Filename_trans"], named);
}
