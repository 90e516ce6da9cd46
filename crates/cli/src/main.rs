//! `rampart`: SELinux access decisions from the kernel binary policy.
//!
//! This file only dispatches: [`args`] parses the command line, the
//! modules under [`cmd`] do the work and return their output and exit
//! status, and errors end the process with status 2.

mod args;
mod cmd;
mod error;
mod help;
mod load;
mod query;
mod render;
mod rules;
mod suggest;
#[cfg(test)]
mod testing;
mod why;

use std::io::Write;
use std::process::ExitCode;

use args::Command;
use error::CliError;

fn main() -> ExitCode {
    match run() {
        Ok(code) => ExitCode::from(code),
        Err(CliError::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "rampart: error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// Runs the command; `Ok` holds the exit status (0, or 1 for a denial;
/// the file-label commands use their model tool's statuses).
fn run() -> Result<u8, CliError> {
    let cli = args::parse(std::env::args_os().skip(1).collect())?;
    let load = || load::policy(cli.policy.as_deref());
    let (text, code) = match &cli.command {
        Command::Help(topic) => (help::text(*topic).to_owned(), 0),
        Command::Version => (format!("rampart {}\n", env!("CARGO_PKG_VERSION")), 0),
        Command::Info => {
            let (path, policy) = load()?;
            (cmd::info::run(&path, &policy), 0)
        }
        Command::Check(a) => cmd::check::run(&load()?.1, a)?,
        Command::Explain(a) => cmd::explain::run(&load()?.1, a)?,
        #[cfg(feature = "bench")]
        Command::Bench(a) => cmd::bench::run(cli.policy.as_deref(), a)?,
        Command::Label(a) => (String::new(), cmd::label::run(cli.policy.as_deref(), a)?),
        Command::Enforce(c) => (String::new(), cmd::enforce::run(c.clone())?),
        #[cfg(feature = "bench")]
        Command::BenchEnforce(a) => cmd::bench_enforce::run(a)?,
        Command::AppArmor(a) => (String::new(), cmd::apparmor::run(a)?),
        Command::Batch(a) => {
            let (_, policy) = load()?;
            let bools = load::booleans(&policy, &a.bools)?;
            cmd::batch::run(&policy, &bools, a.cache, std::io::stdin().lock(), std::io::stdout().lock())?;
            (String::new(), 0)
        }
    };
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(code),
    }
}
