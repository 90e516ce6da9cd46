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
fn compare(policy: &Path) -> Option<usize> {
    let path = policy.to_str().unwrap();
    let theirs_text = tool("seinfo", &[path])?;
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
    Some(compared)
}

#[test]
fn system_policy_counts_match_seinfo() {
    let Some(policy) = system_policy() else { return };
    let Some(n) = compare(&policy) else { return };
    assert!(n >= 40, "only {n} counts compared");
    eprintln!("{n} counts agree with seinfo on {}", policy.display());
}

/// The seed policies exercise aliases, MLS, name transitions and old
/// versions.
#[test]
fn seed_policies_counts_match_seinfo() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../policy/tests/data");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("skipped: no {}", dir.display());
        return;
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| e.len() == 2 && e.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    files.sort();
    let mut compared = 0;
    for f in files.iter().chain(test_policy("deny").iter()) {
        compared += usize::from(compare(f).is_some());
    }
    eprintln!("{compared} policies agree with seinfo");
}

/// The counts seinfo's statistics leave out, checked against its other
/// listings: type aliases (`seinfo -t -x`) and name-based type transitions
/// (`sesearch -T` lines with a name).
#[test]
fn extra_counts_match_setools_listings() {
    let Some(policy) = system_policy() else { return };
    let path = policy.to_str().unwrap();
    let Some(types) = tool("seinfo", &[path, "-t", "-x"]) else { return };
    let Some(trans) = sesearch(&policy, &["-T"]) else { return };
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
