//! Benchmark of the AppArmor engine (docs/benchmarks.md, "AppArmor").
//!
//! 1. compiles every shipped profile file (/etc/apparmor.d and
//!    /usr/share/apparmor/extra-profiles) with apparmor_parser, timed;
//! 2. times a plain read of the binaries, and loading them (each file one
//!    `.replace` into its own policy, as the reference test does);
//! 3. generates the reference test's queries (tests/reference/pyref.py,
//!    400 paths per profile, which also times python3-apparmor's AARE
//!    matcher over the same queries) and times Rampart's file decision
//!    per query, and a `regex` crate matcher (one RegexSet per profile,
//!    built from the parser's glob conversion of every rule) on the same
//!    queries.
//!
//! ```sh
//! cargo run --release -p rampart-apparmor --example bench_apparmor
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rampart_apparmor::file::path_perm;
use rampart_apparmor::perms::parse_letters;
use rampart_apparmor::Policy;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn profile_files() -> Vec<PathBuf> {
    let mut v = Vec::new();
    for dir in ["/etc/apparmor.d", "/usr/share/apparmor/extra-profiles"] {
        let mut here: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file() && !p.file_name().unwrap().to_string_lossy().starts_with("README"))
            .collect();
        here.sort();
        v.extend(here);
    }
    v
}

/// Per (file, profile): the rule regexes and (owner, deny, letters).
type RuleTable = HashMap<(String, String), (Vec<String>, Vec<(bool, bool, u32)>)>;

struct Rules {
    set: regex::RegexSet,
    /// (owner, deny, letters) per regex
    meta: Vec<(bool, bool, u32)>,
}

fn main() {
    let out = std::env::temp_dir().join(format!("rampart-aa-bench-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let files = profile_files();

    // 1. compile
    let t = Instant::now();
    let mut bins: HashMap<String, PathBuf> = HashMap::new();
    for (i, f) in files.iter().enumerate() {
        let bin = out.join(format!("{i}.bin"));
        let mut c = Command::new("/sbin/apparmor_parser");
        c.args(["-Q", "-K", "--skip-cache", "-o"]).arg(&bin).arg(f);
        if f.starts_with("/usr/share/apparmor/extra-profiles") {
            c.args(["-I", "/etc/apparmor.d", "-I", "/usr/share/apparmor/extra-profiles"]);
        }
        let o = c.output().expect("apparmor_parser (scripts/install-deps.sh)");
        assert!(o.status.success(), "{}: {}", f.display(), String::from_utf8_lossy(&o.stderr));
        bins.insert(f.display().to_string(), bin);
    }
    let compile = t.elapsed();
    let mut names: Vec<&String> = bins.keys().collect();
    names.sort();

    // 2. read and load
    let mut reads = Vec::new();
    let mut blobs: Vec<Vec<u8>> = Vec::new();
    for _ in 0..11 {
        let t = Instant::now();
        blobs = names.iter().map(|n| std::fs::read(&bins[*n]).unwrap()).collect();
        reads.push(t.elapsed());
    }
    let bytes: usize = blobs.iter().map(Vec::len).sum();
    let mut loads = Vec::new();
    let mut profiles = 0;
    for _ in 0..11 {
        let t = Instant::now();
        let mut n = 0;
        for b in &blobs {
            let mut p = Policy::new();
            n += p.load(b).unwrap();
            std::hint::black_box(&p);
        }
        loads.push(t.elapsed());
        profiles = n;
    }
    println!(
        "compile: {} files, {profiles} profiles, {bytes} bytes of binary policy\n  apparmor_parser (sequential): {:.2} s\n  plain read of the binaries (median of 11): {:.3} ms\n  Rampart load (median of 11): {:.3} ms",
        files.len(),
        compile.as_secs_f64(),
        median(reads).as_secs_f64() * 1e3,
        median(loads.clone()).as_secs_f64() * 1e3
    );

    // 3. queries
    let tsv = out.join("ref.tsv");
    let rules_tsv = out.join("rules.tsv");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/pyref.py");
    let o = Command::new("/usr/bin/python3")
        .arg(&script)
        .arg(&tsv)
        .args(["400", "19"])
        .env("PYREF_TIME", "1")
        .env("PYREF_RULES", &rules_tsv)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let py = String::from_utf8_lossy(&o.stdout).trim().to_owned();
    let text = std::fs::read_to_string(&tsv).unwrap();
    let mut policies: HashMap<&str, Policy> = HashMap::new();
    let mut queries = Vec::new();
    for l in text.lines() {
        let f: Vec<&str> = l.split('\t').collect();
        policies.entry(f[0]).or_insert_with(|| Policy::from_files(&[&bins[f[0]]]).unwrap());
        queries.push((f[0], f[1], f[3], f[4] == "1"));
    }
    let subjects: Vec<_> = queries
        .iter()
        .map(|(file, prof, path, owner)| (policies[file].resolve(prof).unwrap(), path.as_bytes(), *owner))
        .collect();
    let r = parse_letters("r").unwrap();
    let mut passes = Vec::new();
    let mut sink = 0u32;
    for _ in 0..5 {
        let t = Instant::now();
        for (s, path, owner) in &subjects {
            sink ^= path_perm(*s, path, r, *owner).perms.allow;
        }
        passes.push(t.elapsed());
    }
    std::hint::black_box(sink);
    let ours = median(passes).as_nanos() as f64 / subjects.len() as f64;

    // the regex crate over the same rules
    let mut by_profile: RuleTable = HashMap::new();
    for l in std::fs::read_to_string(&rules_tsv).unwrap().lines() {
        let f: Vec<&str> = l.split('\t').collect();
        let e = by_profile.entry((f[0].to_owned(), f[1].to_owned())).or_default();
        e.0.push(format!("^(?:{})$", f[5]));
        e.1.push((f[2] == "1", f[3] == "1", if f[4] == "-" { 0 } else { parse_letters(f[4]).unwrap() }));
    }
    let t = Instant::now();
    let sets: HashMap<(String, String), Rules> = by_profile
        .into_iter()
        .map(|(k, (pats, meta))| {
            let set = regex::RegexSetBuilder::new(&pats).size_limit(1 << 30).dfa_size_limit(1 << 30).build().unwrap();
            (k, Rules { set, meta })
        })
        .collect();
    let regex_build = t.elapsed();
    let rq: Vec<(&Rules, &str, bool)> = queries
        .iter()
        .map(|(file, prof, path, owner)| (&sets[&(file.to_string(), prof.to_string())], *path, *owner))
        .collect();
    let mut passes = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        for (rules, path, owner) in &rq {
            let (mut allow, mut deny) = (0u32, 0u32);
            for i in rules.set.matches(path).iter() {
                let (o, d, letters) = rules.meta[i];
                if o && !*owner {
                    continue;
                }
                if d {
                    deny |= letters;
                } else {
                    allow |= letters;
                }
            }
            sink ^= allow & !deny;
        }
        passes.push(t.elapsed());
    }
    std::hint::black_box(sink);
    let re = median(passes).as_nanos() as f64 / rq.len() as f64;
    println!(
        "queries: {} (the reference test's, RAMPART_FULL size)\n  Rampart path_perm: {ours:.0} ns/query (median of 5 passes)\n  regex crate RegexSet per profile: {re:.0} ns/query (median of 3; sets built in {:.2} s)\n  python3-apparmor: {py}",
        subjects.len(),
        regex_build.as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&out);
}
