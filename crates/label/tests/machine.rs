//! Every path on this machine, labeled by rampart-label and by
//! libselinux: must be 100% identical.
//!
//! The walk covers /usr /etc /var /opt /dev /run /home /root /srv like
//! `find -xdev` (symlinks not followed, no other filesystems below each
//! start). Each path is looked up with its `lstat` type and with mode 0.
//! With `RAMPART_FULL=1` every path is checked; otherwise every 10th
//! (a deterministic sample of the sorted walk).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::time::Instant;

use common::{bytes, every, full, machine_paths, oracle, LabelQuery};
use rampart_label::{FileContexts, SpecFiles, S_IFMT};

#[test]
#[ignore = "needs the system policy: compared with libselinux"]
fn machine_walk_matches_libselinux() {
    let policy = common::system_policy();
    let fc = FileContexts::load(&SpecFiles::system(), &policy).unwrap();
    let walked = machine_paths();
    let sample = if full() { walked.clone() } else { every(&walked, 10) };
    let mut queries: Vec<LabelQuery> = Vec::with_capacity(sample.len() * 2);
    for (p, mode) in &sample {
        queries.push((bytes(p), mode & S_IFMT));
        queries.push((bytes(p), 0));
    }
    let t = Instant::now();
    let want = oracle(&[], &queries, 2);
    let oracle_time = t.elapsed();
    let t = Instant::now();
    let got: Vec<&str> = queries.iter().map(|(p, m)| fc.lookup_mode(p, *m).as_str()).collect();
    let ours = t.elapsed();
    let mut bad = 0usize;
    for (((path, mode), w), g) in queries.iter().zip(&want).zip(&got) {
        if w != g {
            bad += 1;
            if bad <= 20 {
                eprintln!("MISMATCH {:?} mode {mode:o}: libselinux {w}, rampart {g}", String::from_utf8_lossy(path));
            }
        }
    }
    println!(
        "machine walk: {} paths found, {} checked{} x 2 lookups (lstat type, mode 0) = {} lookups; {} differ \
         (libselinux {:.1} s on 2 processes, rampart {:.3} s)",
        walked.len(),
        sample.len(),
        if full() { " (RAMPART_FULL=1: all)" } else { " (every 10th; RAMPART_FULL=1 for all)" },
        queries.len(),
        bad,
        oracle_time.as_secs_f64(),
        ours.as_secs_f64()
    );
    assert!(sample.len() > 1000, "the walk found too few paths to be meaningful");
    assert_eq!(bad, 0, "{bad} of {} lookups differ from libselinux", queries.len());
}

/// Regexes compile on first use; loading promises every translation
/// compiles. Checked for every spec of the system configuration.
#[test]
#[ignore = "needs the system policy: its file_contexts"]
fn every_system_spec_translates_to_a_regex_that_compiles() {
    let policy = common::system_policy();
    let fc = FileContexts::load(&SpecFiles::system(), &policy).unwrap();
    let bad = fc.uncompilable();
    for (spec, why) in bad.iter().take(10) {
        eprintln!("{}: {:?} does not compile: {why}", spec.origin, spec.regex);
    }
    assert!(fc.specs().len() > 1000, "the system file_contexts has too few specs to be meaningful");
    assert!(bad.is_empty(), "{} of {} specs do not compile", bad.len(), fc.specs().len());
}
