//! `rampart bench enforce`: what a fanotify permission listener costs the
//! processes it watches, for no listener, a trivial responder, fapolicyd
//! and rampartd side by side (issue 5). The work is in
//! `rampart_bench::enforce`; this module turns the command line into
//! its options and writes where asked.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rampart_bench::enforce::{report, run as run_benchmark, EnforceOptions, Listener};

use crate::cli::BenchEnforceArgs;
use crate::error::CliError;

/// The benchmark's options from the command line; `policy` is rampart's
/// global `--policy` (the policy rampartd loads).
fn options(policy: Option<&Path>, args: &BenchEnforceArgs) -> EnforceOptions {
    let defaults = EnforceOptions::default();
    EnforceOptions {
        quick: args.quick,
        rounds: args.rounds,
        measure: args.measure_ms.map(Duration::from_millis),
        listeners: match &args.variants {
            Some(names) => names.iter().filter_map(|n| Listener::parse(n)).collect(),
            None => defaults.listeners,
        },
        rampart: args.rampart.clone().unwrap_or(defaults.rampart),
        policy: policy.map_or(defaults.policy, Path::to_path_buf),
        pin_cpu: args.pin_cpu,
        pinned_pass: !args.no_pinned,
        split_pass: !args.no_split,
        clients: args.clients.clone().unwrap_or(defaults.clients),
        mixed: !args.no_mixed,
        ..defaults
    }
}

/// Runs the benchmark; returns what to print on stdout.
pub fn run(policy: Option<&Path>, args: &BenchEnforceArgs) -> Result<(String, u8), CliError> {
    let options = options(policy, args);
    if let Some(file) = &args.open_loop {
        let text = rampart_bench::enforce::mixed::open_loop_client(file, options.measure()).map_err(CliError::input)?;
        return Ok((text, 0));
    }
    let docs =
        args.write_docs.then(|| args.out.clone().unwrap_or_else(|| PathBuf::from(crate::cmd::bench::DEFAULT_OUT)));
    if let Some(path) = &docs {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
        if !path.is_file() {
            return Err(CliError::input(format!(
                "cannot write the enforcement section into `{}`: {}; run from the repository root or pass `--out PATH` \
                 (a file with the `<!-- enforce:begin -->` and `<!-- enforce:end -->` markers, or none yet)",
                path.display(),
                if dir.is_dir() { "no such file" } else { "its folder does not exist" }
            )));
        }
    }
    let report = run_benchmark(&options).map_err(|e| CliError::input(e.to_string()))?;
    if let Some(path) = &docs {
        for written in report.write_docs(path, report::COMMAND).map_err(|e| CliError::input(e.to_string()))? {
            eprintln!("rampart bench enforce: wrote {}", written.display());
        }
    }
    let text = if args.json { format!("{}\n", report.json_text()) } else { report.text() };
    Ok((text, 0))
}
