//! `rampart check --batch --format hex` against libsepol: the whole
//! command path (parsing, --bool, the local cache, output format) on a
//! stratified query stream, with and without `--no-cache`, under default
//! booleans and with every boolean switched on by `--bool`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::process::{Command, Stdio};

use rampart_oracle::Oracle;

const POLICY: &str = "/etc/selinux/default/policy/policy.33";

fn run_batch(args: &[String], input: &str) -> Vec<String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rampart"))
        .args(["--policy", POLICY, "check", "--batch", "--format", "hex"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn rampart");
    let mut stdin = child.stdin.take().expect("stdin");
    let text = input.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
    let out = child.wait_with_output().expect("rampart output");
    writer.join().expect("writer thread").expect("write queries");
    assert!(out.status.success(), "rampart exited with {}", out.status);
    String::from_utf8(out.stdout).expect("utf-8").lines().map(str::to_owned).collect()
}

#[test]
#[ignore = "needs the system policy: compared with libsepol"]
fn batch_hex_matches_libsepol() {
    let mut oracle = Oracle::spawn(POLICY).expect("spawn oracle");
    let queries = oracle.generate(4242, 20_000).expect("generate");
    let input = queries.join("\n") + "\n";
    let all_on: Vec<String> = oracle
        .bools()
        .expect("bools")
        .into_iter()
        .flat_map(|(name, _)| ["--bool".to_owned(), format!("{name}=on")])
        .collect();
    for (label, args, set) in [
        ("defaults", vec![], false),
        ("defaults, --no-cache", vec!["--no-cache".to_owned()], false),
        ("all on", all_on.clone(), true),
    ] {
        if set {
            oracle.bools_all(true).expect("all on")
        } else {
            oracle.bools_default().expect("defaults")
        }
        let theirs = oracle.query_batch(&queries).expect("oracle answers");
        let ours = run_batch(&args, &input);
        assert_eq!(ours.len(), queries.len(), "{label}: one output line per query");
        let mut errors = 0;
        for ((q, mine), sepol) in queries.iter().zip(&ours).zip(&theirs) {
            if sepol.starts_with("error:") {
                assert!(mine.starts_with("error:"), "{label}: libsepol rejects `{q}`, rampart said `{mine}`");
                errors += 1;
            } else {
                // The oracle appends the permissive flag; the batch format has three fields.
                let expected: Vec<&str> = sepol.split_whitespace().take(3).collect();
                assert_eq!(mine, &expected.join(" "), "{label}: `{q}`");
            }
        }
        println!("batch vs libsepol ({label}): {} queries, {errors} rejected by both", queries.len());
        assert!(errors > 0 && errors < queries.len() / 10);
    }
}
