//! `rampart bench seeds`: the command line, and its JSON at the hidden
//! smoke size (the real sizes take minutes). No test asserts a timing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::Value;

#[test]
#[ignore = "needs the system policy"]
fn smoke_json_through_the_command() {
    let policy = system_policy();
    let out = with_policy(&policy, &["bench", "seeds", "--smoke", "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("rampart bench: AVC hits"), "progress goes to stderr:\n{}", out.stderr);
    let json: Value = serde_json::from_str(&out.stdout).expect("one JSON object on stdout");
    let hit_variants = [
        "none",
        "global_mutex",
        "rwlock",
        "shared_counter",
        "kref",
        "percpu_ref",
        "module_refcount",
        "unsync_hashmap",
        "rampart",
    ];
    for v in hit_variants {
        for t in ["1", "2"] {
            assert!(json["hit_ns"][v][t].is_number(), "hit_ns.{v}.{t}");
        }
        assert!(json["chatroom_msgs_per_s"][v].is_number(), "chatroom_msgs_per_s.{v}");
    }
    for v in hit_variants.iter().chain(&["full_revalidate"]) {
        for t in ["1", "2"] {
            assert!(json["rcutest_s"][v][t].is_number(), "rcutest_s.{v}.{t}");
        }
        for op in ["read", "write"] {
            assert!(json["rw_overhead_pct"][v][op].is_number(), "rw_overhead_pct.{v}.{op}");
        }
    }
    assert_eq!(json["metadata"]["policy"], policy.to_str().unwrap());
    assert_eq!(json["metadata"]["quick"], false);
    assert!(json["metadata"]["nproc"].is_u64() && json["metadata"]["date"].is_string());
    assert!(json["memory"]["rampart"]["per_thread"].as_array().is_some_and(|r| !r.is_empty()));
    assert!(json["memory"]["rampart"]["total_bytes"].is_u64());
}

#[test]
#[ignore = "needs the system policy"]
fn smoke_tables_without_json() {
    let policy = system_policy();
    let out = with_policy(&policy, &["bench", "seeds", "--smoke"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    for needle in
        ["### Targets", "### 1. AVC hits", "### 2. rcutest", "### 3. lmbench", "### 4. Chat room", "`rampart`"]
    {
        assert!(out.stdout.contains(needle), "missing {needle}:\n{}", out.stdout);
    }
    // A smoke or quick run writes no file unless asked.
    assert!(!out.stderr.contains("wrote"), "{}", out.stderr);
}

/// `--workloads apparmor`: only the AppArmor workload runs (progress and
/// tables name nothing else), from a precompiled binary when given one;
/// a binary that cannot be read is an error that names it.
#[test]
#[ignore = "needs the system policy, apparmor_parser and apparmor-profiles"]
fn the_apparmor_workload_alone() {
    let policy = system_policy();
    assert!(
        std::path::Path::new("/usr/share/apparmor/extra-profiles/usr.sbin.lighttpd").exists(),
        "needs apparmor-profiles: install it with scripts/install-deps.sh"
    );
    let out = with_policy(&policy, &["bench", "seeds", "--smoke", "--workloads", "apparmor"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("rampart bench: AppArmor opens"), "{}", out.stderr);
    assert!(!out.stderr.contains("AVC hits") && !out.stdout.contains("### 1. AVC hits"), "{}", out.stdout);
    assert!(out.stdout.contains("## Seed 003") && out.stdout.contains("| **`rampart`** | cached |"), "{}", out.stdout);
    let bad = with_policy(
        &policy,
        &["bench", "seeds", "--smoke", "--workloads", "apparmor", "--apparmor-policy", "/nonexistent/aa.bin"],
    );
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("/nonexistent/aa.bin"), "{}", bad.stderr);
}

#[test]
fn usage_errors_exit_2() {
    for (args, needle) in [
        (&["bench"][..], "`rampart bench` needs a subcommand"),
        (&["bench", "seed"], "unrecognized subcommand 'seed' (did you mean `seeds`?)"),
        (&["bench", "seeds", "extra"], "unexpected argument 'extra'"),
        (&["bench", "seeds", "--quick", "--smoke"], "cannot be used with"),
        (&["bench", "seeds", "--json=yes"], "unexpected value 'yes' for '--json'"),
        (&["bench", "seeds", "--out"], "a value is required for '--out <PATH>'"),
        (&["bench", "seeds", "--bool", "a=on"], "unexpected argument '--bool'"),
        (&["bench", "seeds", "--batch"], "unexpected argument '--batch'"),
        (&["bench", "seeds", "--workloads", "hits,nope"], "invalid value 'nope' for '--workloads <W,W,...>'"),
        (&["bench", "seeds", "--apparmor-policy"], "a value is required for '--apparmor-policy <FILE>'"),
        (&["check", "--quick", "s", "t", "c"], "unexpected argument '--quick'"),
        (&["policy", "info", "--out", "x.md"], "unexpected argument '--out'"),
        (&["bnech"], "did you mean `bench`"),
        (&["bench", "enforce", "--rounds", "x"], "invalid value 'x' for '--rounds <N>'"),
        (&["bench", "enforce", "--rounds", "0"], "invalid value '0' for '--rounds <N>'"),
        (&["bench", "enforce", "--measure-ms"], "a value is required for '--measure-ms <N>'"),
        (&["bench", "enforce", "--variants", "none,nope"], "invalid value 'nope' for '--variants <LIST>'"),
        (&["bench", "enforce", "--bogus"], "unexpected argument '--bogus'"),
        (&["bench", "enforce", "--quick=yes"], "unexpected value 'yes' for '--quick'"),
        (&["bench", "enforce", "--no-split=1"], "unexpected value '1' for '--no-split'"),
        (&["bench", "enforce", "--out", "x.md"], "missing --write-docs"),
        (&["bench", "enforce", "--pin-cpu", "0", "--no-pinned"], "cannot be used with"),
        (&["bench", "enforce", "extra"], "unexpected argument 'extra'"),
        (&["bench", "enforces"], "unrecognized subcommand 'enforces'"),
    ] {
        let out = rampart(args, "");
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stderr.starts_with("rampart: error: "), "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(needle), "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty());
    }
}

#[test]
#[ignore = "needs the system policy"]
fn unwritable_out_is_an_error_before_running() {
    let policy = system_policy();
    let out = with_policy(&policy, &["bench", "seeds", "--smoke", "--out", "/nonexistent-dir/bench.md"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("does not exist"), "{}", out.stderr);
    assert!(!out.stderr.contains("AVC hits"), "it should fail before running:\n{}", out.stderr);
}

#[test]
fn help_for_bench() {
    for args in [&["help", "bench"][..], &["bench", "--help"]] {
        let out = rampart(args, "");
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        assert!(out.stdout.contains("Usage: rampart bench"), "{args:?}");
        assert!(out.stdout.contains("  seeds ") && out.stdout.contains("  enforce "), "{args:?}:\n{}", out.stdout);
    }
    for args in
        [&["bench", "seeds", "-h"][..], &["help", "bench", "seeds"], &["--policy", "p", "bench", "seeds", "--help"]]
    {
        let out = rampart(args, "");
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        assert!(out.stdout.contains("Usage: rampart bench seeds"), "{args:?}");
        assert!(out.stdout.contains("--quick") && !out.stdout.contains("--smoke"), "{args:?}:\n{}", out.stdout);
    }
    assert!(rampart(&["help"], "").stdout.contains("  bench "));
}

#[test]
fn bench_enforce_checks_where_it_writes_before_running() {
    let out = rampart(&["bench", "enforce", "--quick", "--write-docs", "--out", "/nonexistent-dir/bench.md"], "");
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("its folder does not exist"), "{}", out.stderr);
    assert!(!out.stderr.contains("round 1"), "it should fail before running:\n{}", out.stderr);
}

#[test]
fn help_for_bench_enforce() {
    // Issue 18: with --policy first, this printed `bench seeds`'s usage.
    for args in [&["bench", "enforce", "--help"][..], &["--policy", "p", "bench", "enforce", "--help"]] {
        let out = rampart(args, "");
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(out.stdout.contains("Usage: rampart bench enforce"), "{}", out.stdout);
        assert!(out.stdout.contains("--no-mixed") && !out.stdout.contains("--open-loop <"), "{}", out.stdout);
    }
    assert!(rampart(&["help", "bench"], "").stdout.contains("enforce"));
}

/// The mixed-domain workloads' client (hidden `--open-loop`), the one
/// part of `bench enforce` that runs without root: `OPS WALL_NS SLEEPS`
/// (its voluntary context switches: at least none, at most one per open).
#[test]
fn bench_enforce_open_loop_client() {
    let file = std::env::temp_dir().join(format!("rampart-open-loop-{}", std::process::id()));
    std::fs::write(&file, b"x").unwrap();
    let out = rampart(&["bench", "enforce", "--measure-ms", "20", "--open-loop", file.to_str().unwrap()], "");
    std::fs::remove_file(&file).unwrap();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let words: Vec<u64> = out.stdout.split_whitespace().map(|w| w.parse().unwrap()).collect();
    assert!(words.len() == 3 && words[0] > 0 && words[2] <= words[0], "{}", out.stdout);
}

#[test]
fn bench_enforce_clients_are_thread_counts() {
    for bad in ["0", "1,x", "1,,2", "300"] {
        let out = rampart(&["bench", "enforce", "--quick", "--clients", bad], "");
        assert_eq!(out.code, 2, "--clients {bad}: {}", out.stderr);
        assert!(out.stderr.contains("--clients"), "--clients {bad}: {}", out.stderr);
        assert!(!out.stderr.contains("round 1"), "it should fail before running:\n{}", out.stderr);
    }
    assert!(rampart(&["bench", "enforce", "--help"], "").stdout.contains("--clients"));
}

/// `bench seeds --threads`: the scaling workloads at every count asked
/// (1 and 2 always), and counts outside 1 to 256 refused.
#[test]
#[ignore = "needs the system policy"]
fn seeds_threads_are_thread_counts() {
    let policy = system_policy();
    let out = with_policy(&policy, &["bench", "seeds", "--smoke", "--json", "--threads", "1,4"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let json: Value = serde_json::from_str(&out.stdout).unwrap();
    for t in ["1", "2", "4"] {
        assert!(json["hit_ns"]["rampart"][t].is_number(), "hit_ns.rampart.{t}: {}", json["hit_ns"]["rampart"]);
        assert!(json["rcutest_s"]["rampart"][t].is_number(), "rcutest_s.rampart.{t}");
    }
    for bad in ["0", "1,x", "300"] {
        let out = with_policy(&policy, &["bench", "seeds", "--smoke", "--threads", bad]);
        assert_eq!(out.code, 2, "--threads {bad}: {}", out.stderr);
    }
}
