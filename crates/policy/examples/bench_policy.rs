//! Policy engine benchmark: Rampart beside libsepol, in one run.
//!
//! `cargo run --release -p rampart-policy --example bench_policy [-- --policy PATH] [--queries N] [--loads N]`
//!
//! Measures, for the same policy file and the same query stream (generated
//! by the libsepol oracle's stratified generator):
//! - load time from memory until ready to answer (rounds of 3 loads per
//!   side, interleaved; medians);
//! - compute_av per query without any cache (contexts resolved first,
//!   untimed, on both sides; median of 5 passes);
//! - resident memory growth from loading.
//!
//! Prints a Markdown table with ratios (Rampart / libsepol).

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Instant;

use rampart_policy::{Booleans, Policy};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> Res<()> {
    let mut policy_path = rampart_policy::default_policy_path()?;
    let mut queries = 100_000usize;
    let mut loads = 30usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            // Internal: load once in this fresh process and print the
            // resident memory it added.
            "--rss-child" => {
                let path = args.next().ok_or("--rss-child needs a path")?;
                let bytes = std::fs::read(&path)?;
                let before = vm_rss_kib()?;
                let p = Policy::from_bytes(&bytes)?;
                let after = vm_rss_kib()?;
                println!("delta_kib={}", after - before);
                drop(p);
                return Ok(());
            }
            "--policy" => policy_path = args.next().ok_or("--policy needs a path")?.into(),
            "--queries" => queries = args.next().ok_or("--queries needs N")?.parse()?,
            "--loads" => loads = args.next().ok_or("--loads needs N")?.parse()?,
            other => return Err(format!("unknown argument `{other}`").into()),
        }
    }
    let oracle = rampart_oracle::oracle_path();
    let bytes = std::fs::read(&policy_path)?;

    // The query stream, from libsepol's own structures.
    let mut child = Command::new(oracle).arg(&policy_path).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?;
    child.stdin.take().ok_or("no stdin")?.write_all(format!("gen 20261122 {queries}\n").as_bytes())?;
    let out = child.wait_with_output()?;
    let query_text = String::from_utf8(out.stdout)?;
    let query_file = std::env::temp_dir().join(format!("rampart-bench-queries-{}.txt", std::process::id()));
    std::fs::write(&query_file, &query_text)?;

    // Load time, interleaved in rounds so both sides see the same noise
    // on a shared machine: each round times 3 of our loads and 3 of
    // libsepol's (in the oracle process); medians over all rounds.
    let rounds = loads.div_ceil(3);
    let mut ours_ns = Vec::with_capacity(rounds * 3);
    let mut sepol_ns = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        for _ in 0..3 {
            let t = Instant::now();
            let p = Policy::from_bytes(&bytes)?;
            ours_ns.push(t.elapsed().as_nanos() as f64);
            drop(p);
        }
        sepol_ns.push(oracle_number(oracle, &["--time-load", path_str(&policy_path)?, "3"], "median_ns")?);
    }
    let our_load = median(&mut ours_ns);
    let sepol_load = median(&mut sepol_ns);

    // Resident memory: one load in a fresh process on each side (the file
    // is read before the first reading, so only the policy structures
    // count).
    let me = std::env::current_exe()?;
    let our_rss = oracle_number(&me, &["--rss-child", path_str(&policy_path)?], "delta_kib")?;
    let policy = Policy::from_bytes(&bytes)?;
    let sepol_rss = oracle_number(oracle, &["--rss", path_str(&policy_path)?], "delta_kib")?;

    // compute_av without cache over the valid queries.
    let bools = Booleans::defaults(&policy);
    let mut resolved = Vec::new();
    for line in query_text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if let [s, t, c] = f[..] {
            if let (Ok(s), Ok(t), Some(c)) = (policy.parse_context(s), policy.parse_context(t), policy.class_by_name(c))
            {
                resolved.push((s, t, c));
            }
        }
    }
    let mut per_query = Vec::new();
    let mut checksum = 0u32;
    for _ in 0..5 {
        let t = Instant::now();
        for (s, tc, c) in &resolved {
            let d = policy.compute_av(&bools, s, tc, *c);
            checksum = checksum.wrapping_add(d.allowed ^ d.auditdeny);
        }
        per_query.push(t.elapsed().as_nanos() as f64 / resolved.len().max(1) as f64);
    }
    let our_av = median(&mut per_query);
    let sepol_av =
        oracle_number(oracle, &["--time-av", path_str(&policy_path)?, path_str(&query_file)?], "median_ns_per_query")?;
    let _ = std::fs::remove_file(&query_file);

    println!(
        "policy: {} ({} bytes); {} valid queries of {queries} (checksum {checksum:08x})\n",
        policy_path.display(),
        bytes.len(),
        resolved.len()
    );
    println!("| measure | libsepol 3.4 | Rampart | ratio (Rampart / libsepol) |");
    println!("|---|---|---|---|");
    println!(
        "| load until ready (median of {} rounds of 3) | {:.2} ms | {:.2} ms | {:.2}x |",
        rounds,
        sepol_load / 1e6,
        our_load / 1e6,
        our_load / sepol_load
    );
    println!(
        "| compute_av, no cache (median of 5 passes) | {:.0} ns | {:.0} ns | {:.3}x |",
        sepol_av,
        our_av,
        our_av / sepol_av
    );
    println!(
        "| resident memory added by the load | {:.1} MiB | {:.1} MiB | {:.2}x |",
        sepol_rss / 1024.0,
        our_rss / 1024.0,
        our_rss / sepol_rss
    );
    drop(policy);
    Ok(())
}

fn path_str(p: &std::path::Path) -> Res<&str> {
    p.to_str().ok_or_else(|| "path is not UTF-8".into())
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Runs a measuring program and returns `key=VALUE` from its output.
fn oracle_number(oracle: &std::path::Path, args: &[&str], key: &str) -> Res<f64> {
    let out = Command::new(oracle).args(args).output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace()
        .find_map(|w| w.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
        .ok_or_else(|| format!("oracle printed no `{key}`: {text}"))?
        .parse::<f64>()
        .map_err(Into::into)
}

fn vm_rss_kib() -> Res<f64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).ok_or("no VmRSS")?;
    Ok(line.split_whitespace().nth(1).ok_or("bad VmRSS")?.parse()?)
}
