//! `rampart`: mandatory access control from userspace.
//!
//! This file only dispatches: [`cli`] defines and parses the command
//! line, the modules under [`cmd`] do the work and return their output
//! and exit status, and errors end the process with status 2.

mod cli;
mod cmd;
mod error;
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

use clap::{CommandFactory, Parser};

use cli::{Cli, Command, PolicyCommand};
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
/// the file-label and enforcement commands use their model tools'
/// statuses).
fn run() -> Result<u8, CliError> {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        // Help (`--help`, `help COMMAND`) goes to stdout with status 0.
        Err(e) if e.exit_code() == 0 => {
            e.print()?;
            return Ok(0);
        }
        Err(e) => return Err(CliError::usage(cli::usage_error(&e, &argv))),
    };
    let policy = cli.policy.as_deref();
    let load = || load::policy(policy);
    let command = match (cli.command, cli.version) {
        (None, true) => return print(format!("rampart {}\n", env!("CARGO_PKG_VERSION")), 0),
        (Some(_), true) => return Err(CliError::usage("`--version` takes no command; run `rampart --version`")),
        (None, false) => {
            return Err(CliError::usage("no command given; run `rampart help` for the list of commands"));
        }
        (Some(command), false) => command,
    };
    let (text, code) = match command {
        Command::Policy(PolicyCommand::Info) => {
            let (path, policy) = load()?;
            (cmd::info::run(&path, &policy), 0)
        }
        Command::Check(a) if a.batch => {
            let (_, policy) = load()?;
            let bools = load::booleans(&policy, &a.bools)?;
            cmd::batch::run(&policy, &bools, !a.no_cache, std::io::stdin().lock(), std::io::stdout().lock())?;
            (String::new(), 0)
        }
        Command::Check(a) => cmd::check::run(&load()?.1, &a)?,
        Command::Explain(a) => cmd::explain::run(&load()?.1, &a)?,
        Command::Label(a) => (String::new(), cmd::label::label(policy, &a)?),
        Command::Getlabel(a) => (String::new(), cmd::label::getlabel(&a)?),
        Command::Relabel(a) => (String::new(), cmd::label::relabel(policy, &a)?),
        Command::Daemon(a) => (String::new(), cmd::enforce::daemon(policy, *a)?),
        Command::Run(a) => (String::new(), cmd::enforce::run_in_context(a)),
        Command::Status(a) => (String::new(), cmd::enforce::status(&a)?),
        Command::Setenforce(a) => (String::new(), cmd::enforce::setenforce(&a)?),
        Command::Reload(a) => (String::new(), cmd::enforce::reload(&a)?),
        Command::Setbool(a) => (String::new(), cmd::enforce::setbool(&a)?),
        Command::Demo => (String::new(), cmd::enforce::demo()?),
        Command::Apparmor(a) => (String::new(), cmd::apparmor::run(&a)?),
        #[cfg(feature = "bench")]
        Command::Bench(cli::BenchCommand::Seeds(a)) => cmd::bench::run(policy, &a)?,
        #[cfg(feature = "bench")]
        Command::Bench(cli::BenchCommand::Enforce(a)) => cmd::bench_enforce::run(policy, &a)?,
        #[cfg(not(feature = "bench"))]
        Command::Bench { .. } => {
            return Err(CliError::usage(
                "this rampart is built without the benchmarks; build them with \
                 `cargo build --release -p rampart --features bench`",
            ))
        }
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "rampart", &mut out);
            (String::from_utf8_lossy(&out).into_owned(), 0)
        }
        // Pages for the commands, not for `help` (clap_mangen::generate_to
        // leaves it out too).
        Command::Manpage { dir: Some(dir) } => {
            clap_mangen::generate_to(Cli::command(), &dir)?;
            (String::new(), 0)
        }
        Command::Manpage { dir: None } => {
            let mut out = Vec::new();
            clap_mangen::Man::new(Cli::command().disable_help_subcommand(true)).render(&mut out)?;
            (String::from_utf8_lossy(&out).into_owned(), 0)
        }
    };
    print(text, code)
}

/// Writes `text` to stdout; a reader gone away is not an error.
fn print(text: String, code: u8) -> Result<u8, CliError> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(code),
    }
}
