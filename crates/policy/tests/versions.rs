//! Policy versions 30 to 33 read the same.
//!
//! * Every tiny seed policy in `tests/data/` (compiled by checkpolicy from
//!   the `.conf` next to it, see `tests/data/README.md`) loads.
//! * The same tiny policy compiled for versions 30, 31, 32 and 33 loads
//!   to the same symbols, rules and decisions.
//! * If checkpolicy and the system policy are installed, the system
//!   policy converted to versions 30, 31 and 32 (at test time, into a
//!   temporary directory) agrees with the version 33 original.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use rampart_policy::*;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// The compiled seed policies: files named `NAME.VERSION`.
fn seed_files() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(data_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().and_then(|e| e.to_str()).is_some_and(|e| e.len() == 2 && e.bytes().all(|b| b.is_ascii_digit())))
        .collect();
    out.sort();
    out
}

fn load(path: &Path) -> Policy {
    let bytes = std::fs::read(path).unwrap();
    Policy::from_bytes(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_seed_policy_loads() {
    let seeds = seed_files();
    assert!(seeds.len() >= 8, "expected the compiled seed policies in {}", data_dir().display());
    for path in &seeds {
        let p = load(path);
        let version: u32 = path.extension().unwrap().to_str().unwrap().parse().unwrap();
        assert_eq!(p.version, version, "{}", path.display());
        let name = path.file_stem().unwrap().to_str().unwrap();
        assert_eq!(p.mls, name.contains("mls") && !name.contains("nonmls"), "{}", path.display());
        assert!(!p.avtab.is_empty() && !p.types.is_empty() && !p.users.is_empty(), "{}", path.display());
        println!("{}: {} classes, {} types, {} avtab entries", path.display(), p.classes.len(), p.types.len(), p.avtab.len());
    }
}
