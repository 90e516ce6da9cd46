//! Benchmark: file_contexts lookup, rampart-label against libselinux.
//!
//! Walks this machine's /usr /etc /var /opt /dev /run /home /root /srv
//! (`find -xdev`-like, symlinks not followed), then times both
//! implementations over the same (path, lstat type) list: ours in this
//! process, libselinux's `selabel_lookup_raw` in `selabel-oracle
//! --time --passes 1`. After one untimed pass of ours (regexes compile
//! at first use), 5 rounds each time one pass of both, in alternating
//! order, so that load from other jobs hits both sides alike; each
//! side's median pass is reported as ns per lookup.
//!
//! ```sh
//! cargo run --release -p rampart-label --example bench_label            # every 4th path
//! cargo run --release -p rampart-label --example bench_label -- --all   # every path (~3 min for libselinux)
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Instant;

use rampart_label::{FileContexts, SpecFiles, S_IFMT};

fn main() {
    let all = std::env::args().any(|a| a == "--all");
    let policy = rampart_policy::Policy::from_file(&rampart_policy::default_policy_path().expect("policy path"))
        .expect("load policy");
    let rss_before = rss_kib();
    let t = Instant::now();
    let fc = FileContexts::load(&SpecFiles::system(), &policy).expect("load file_contexts");
    let load = t.elapsed();
    let rss_loaded = rss_kib();
    let walked = common::machine_paths();
    let paths = if all { walked.clone() } else { common::every(&walked, 4) };
    let queries: Vec<(Vec<u8>, u32)> = paths.iter().map(|(p, m)| (common::bytes(p), m & S_IFMT)).collect();
    println!(
        "file_contexts: {} specs, loaded and validated in {:.1} ms; machine walk: {} paths, benchmarking {}{}",
        fc.specs().len(),
        load.as_secs_f64() * 1e3,
        walked.len(),
        queries.len(),
        if all { "" } else { " (every 4th; --all for every path)" }
    );

    let before_lookups = rss_kib();
    let found = pass(&fc, &queries).1;
    println!(
        "rampart-label memory: +{} KiB RSS to load file_contexts, +{} KiB after one pass of lookups (regexes compile at first use); {found} labeled",
        rss_loaded.saturating_sub(rss_before),
        rss_kib().saturating_sub(before_lookups)
    );

    let list = rampart_oracle::selabel::TimeList::new(&queries).expect("write the path list");
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let oracle = || list.time(&["--passes", "1"]).expect("selabel-oracle --time");
        if round % 2 == 0 {
            ours.push(pass(&fc, &queries).0);
            theirs.push(oracle());
        } else {
            theirs.push(oracle());
            ours.push(pass(&fc, &queries).0);
        }
        println!("round {}: rampart-label {:.1} ns, libselinux {:.1} ns", round + 1, ours[round], theirs[round]);
    }
    let (ours, theirs) = (median(ours), median(theirs));
    println!("rampart-label lookup:            {ours:>10.1} ns/lookup (median of {ROUNDS} interleaved passes)");
    println!("libselinux selabel_lookup_raw:   {theirs:>10.1} ns/lookup (median of {ROUNDS} interleaved passes)");
    let ratio = ours / theirs;
    println!(
        "ratio: {ratio:.4}x ({:.0} times faster); target <= 0.1x: {}",
        theirs / ours,
        if ratio <= 0.1 { "met" } else { "NOT met" }
    );
}

const ROUNDS: usize = 5;

/// One pass of our lookups: ns per lookup, and how many found a label.
fn pass(fc: &FileContexts, queries: &[(Vec<u8>, u32)]) -> (f64, usize) {
    let t = Instant::now();
    let found = queries.iter().filter(|(p, m)| fc.lookup_mode(p, *m).context().is_some()).count();
    (t.elapsed().as_nanos() as f64 / queries.len() as f64, found)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// This process's resident set size.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmRSS:")).and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}
