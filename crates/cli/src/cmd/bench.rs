//! `rampart bench seeds [--quick] [--json] [--out PATH] [--threads N,..]
//! [--workloads W,..] [--apparmor-policy FILE]`: reruns the seed
//! experiments (AVC hits, rcutest, lmbench read/write, chat room, AppArmor
//! opens) with
//! Rampart beside the designs the seeds measured, in one process, and
//! reports medians (issue 4).
//!
//! The work is in the `rampart-bench` crate; this module prints progress
//! on stderr, and writes the results where
//! asked. The full run writes its section of docs/benchmarks.md and the
//! charts in docs/img/; `--quick` and the hidden `--smoke` (seconds, for
//! tests) write only with an explicit `--out`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rampart_bench::{Params, Size, Workload};

use crate::cli::SeedsArgs;
use crate::error::CliError;

/// Where the full run writes unless `--out` says otherwise.
pub const DEFAULT_OUT: &str = "docs/benchmarks.md";

/// Runs the benchmarks; returns what to print on stdout.
pub fn run(policy_path: Option<&Path>, args: &SeedsArgs) -> Result<(String, u8), CliError> {
    let (path, policy) = crate::load::policy(policy_path)?;
    let size = match (args.quick, args.smoke) {
        (true, _) => Size::Quick,
        (_, true) => Size::Smoke,
        _ => Size::Full,
    };
    let out = match (&args.out, size) {
        (Some(o), _) => Some(o.clone()),
        (None, Size::Full) => Some(PathBuf::from(DEFAULT_OUT)),
        (None, _) => None,
    };
    if let Some(o) = &out {
        let dir = o.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if !dir.is_dir() {
            return Err(CliError::input(format!(
                "cannot write `{}`: folder `{}` does not exist; run from the repository root or pass `--out PATH`",
                o.display(),
                dir.display()
            )));
        }
    }
    let mut params = Params::for_size(size);
    if let Some(threads) = &args.threads {
        params = params.with_threads(threads);
    }
    if let Some(names) = &args.workloads {
        // clap admits only the workloads' names.
        let workloads: Vec<Workload> = names.iter().filter_map(|n| Workload::from_name(n)).collect();
        params = params.with_workloads(&workloads);
    }
    if let Some(rounds) = args.rounds {
        params = params.with_rounds(rounds);
    }
    params.apparmor_policy = args.apparmor_policy.clone();
    let mut progress = |line: &str| {
        let _ = writeln!(std::io::stderr(), "rampart bench: {line}");
    };
    let report = rampart_bench::run(path, Arc::new(policy), size, &params, &mut progress).map_err(bench_error)?;
    let command = command_line();
    if let Some(o) = &out {
        let written = rampart_bench::docs::write(&report, o, &command).map_err(bench_error)?;
        for w in written {
            progress(&format!("wrote {}", w.display()));
        }
    }
    let text = if args.json { format!("{}\n", report.json_text()) } else { report.text(&command) };
    Ok((text, 0))
}

fn bench_error(e: rampart_bench::BenchError) -> CliError {
    match e {
        rampart_bench::BenchError::Io { what, source } => CliError::input(format!("{what}: {source}")),
        other => CliError::input(other.to_string()),
    }
}

/// This invocation, as the document's "exact command".
fn command_line() -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    format!("target/release/rampart {}", args.join(" "))
}
