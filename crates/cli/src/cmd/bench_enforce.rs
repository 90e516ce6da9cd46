//! `rampart bench enforce`: what a fanotify permission listener costs the
//! processes it watches, for no listener, a trivial responder, fapolicyd
//! and rampartd side by side (issue 5). The work is in
//! `rampart_bench::enforce`; this module parses the command line (its own
//! flags take values, unlike `bench seeds`'s) and writes where asked.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use rampart_bench::enforce::{report, run as run_benchmark, EnforceOptions, Listener};

use crate::error::CliError;

pub const USAGE: &str = "\
usage: rampart bench enforce [--quick] [--json] [--write-docs] [--out PATH]
                             [--rounds N] [--measure-ms N] [--clients N,N,...]
                             [--no-mixed]
                             [--variants none,trivial,fapolicyd,rampartd]
                             [--pin-cpu N | --no-pinned] [--no-split]
                             [--rampart PATH] [--policy PATH]

Measures open and exec latency and event throughput on a tmpfs mounted in
a private mount namespace, with no listener, a trivial responder,
fapolicyd (run in the namespace, watching only that tmpfs) and rampartd
(this binary's `daemon`, unless --rampart says otherwise). Needs root.
--quick takes about a minute; the full run writes the enforcement section
of docs/benchmarks.md with --write-docs (or of --out PATH). After the
unpinned rounds come the same rounds with everything on one CPU
(--no-pinned skips them) and with the clients on one CPU and the listeners
on another (--no-split skips them). Extra daemon
flags for measuring alternatives: RAMPART_BENCH_DAEMON_ARGS=\"--spin-us 0\".
--clients sets the client thread counts of the open and first-touch
workloads (default 1, 2 and the powers of two up to the CPUs available;
1 is always run, ratios are over it). The mixed-domain workloads (no
listener and rampartd: opens of httpd_t's content while an httpd_t
process is alive, by a client in httpd_t, and a second after it exited)
need Debian's policy; --no-mixed skips them. (--open-loop FILE is their
client: it opens FILE for --measure-ms and prints OPS WALL_NS.)
";

/// The parsed command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BenchEnforceArgs {
    pub options: EnforceOptions,
    pub json: bool,
    /// Where to write the docs section, if anywhere.
    pub docs: Option<PathBuf>,
    pub help: bool,
    /// Only the mixed-domain workloads' client: open this file in a loop.
    pub open_loop: Option<PathBuf>,
}

/// The first two words are `bench enforce`.
pub fn applies(argv: &[OsString]) -> bool {
    let words: Vec<&str> = argv.iter().filter_map(|a| a.to_str()).filter(|a| !a.starts_with('-')).take(2).collect();
    words == ["bench", "enforce"]
}

fn number<T: std::str::FromStr>(word: &str, option: &str) -> Result<T, CliError> {
    word.parse().map_err(|_| CliError::usage(format!("option `{option}` needs a number, got `{word}`")))
}

/// Parses everything after the program name (`bench enforce ...`).
pub fn parse(argv: Vec<OsString>) -> Result<BenchEnforceArgs, CliError> {
    let mut options = EnforceOptions::default();
    let (mut json, mut write_docs, mut help) = (false, false, false);
    let mut out: Option<PathBuf> = None;
    let mut open_loop: Option<PathBuf> = None;
    let mut words = 0;
    let mut args = argv.into_iter();
    while let Some(arg) = args.next() {
        let arg = arg
            .into_string()
            .map_err(|a| CliError::usage(format!("argument `{}` is not valid UTF-8", a.to_string_lossy())))?;
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        let mut value = |what: &str| -> Result<String, CliError> {
            match &inline {
                Some(v) => Ok(v.clone()),
                None => args
                    .next()
                    .and_then(|v| v.into_string().ok())
                    .ok_or_else(|| CliError::usage(format!("option `{name}` needs a value ({what})"))),
            }
        };
        match name.as_str() {
            "--quick" | "--json" | "--write-docs" | "--no-pinned" | "--no-split" | "--no-mixed" | "-h" | "--help"
                if inline.is_some() =>
            {
                return Err(CliError::usage(format!("option `{name}` takes no value")));
            }
            "--quick" => options.quick = true,
            "--json" => json = true,
            "--write-docs" => write_docs = true,
            "--no-pinned" => options.pinned_pass = false,
            "--no-split" => options.split_pass = false,
            "--no-mixed" => options.mixed = false,
            "--open-loop" => open_loop = Some(PathBuf::from(value("FILE")?)),
            "-h" | "--help" => help = true,
            "--out" => out = Some(PathBuf::from(value("PATH")?)),
            "--rounds" => options.rounds = Some(number(&value("N")?, "--rounds")?),
            "--measure-ms" => options.measure = Some(Duration::from_millis(number(&value("N")?, "--measure-ms")?)),
            "--pin-cpu" => options.pin_cpu = Some(number(&value("N")?, "--pin-cpu")?),
            "--rampart" => options.rampart = PathBuf::from(value("PATH")?),
            "--policy" => options.policy = PathBuf::from(value("PATH")?),
            "--clients" => {
                options.clients = value("LIST")?
                    .split(',')
                    .map(|n| {
                        let count: usize = number(n.trim(), "--clients")?;
                        if (1..=256).contains(&count) {
                            Ok(count)
                        } else {
                            Err(CliError::usage(format!("`--clients {n}`: give thread counts from 1 to 256")))
                        }
                    })
                    .collect::<Result<_, _>>()?;
            }
            "--variants" => {
                options.listeners = value("LIST")?
                    .split(',')
                    .map(|s| {
                        Listener::parse(s.trim()).ok_or_else(|| {
                            CliError::usage(format!(
                                "unknown variant `{s}` in `--variants`; give some of none,trivial,fapolicyd,rampartd"
                            ))
                        })
                    })
                    .collect::<Result<_, _>>()?;
            }
            _ if name.starts_with('-') => {
                return Err(CliError::usage(format!("unknown option `{name}`; run `rampart bench enforce --help`")));
            }
            // `bench` and `enforce`.
            _ if words < 2 => words += 1,
            _ => {
                return Err(CliError::usage(format!(
                    "unexpected argument `{arg}`; `rampart bench enforce` takes only options"
                )))
            }
        }
    }
    if options.rounds == Some(0) {
        return Err(CliError::usage("`--rounds 0` measures nothing; give at least 1"));
    }
    if options.pin_cpu.is_some() && !options.pinned_pass {
        return Err(CliError::usage("`--pin-cpu` and `--no-pinned` exclude each other; give one"));
    }
    let docs = match (write_docs, out) {
        (true, out) => Some(out.unwrap_or_else(|| PathBuf::from(crate::cmd::bench::DEFAULT_OUT))),
        (false, Some(_)) => return Err(CliError::usage("`--out` says where `--write-docs` writes; give both")),
        (false, None) => None,
    };
    Ok(BenchEnforceArgs { options, json, docs, help, open_loop })
}

/// Runs the benchmark; returns what to print on stdout.
pub fn run(args: &BenchEnforceArgs) -> Result<(String, u8), CliError> {
    if args.help {
        return Ok((USAGE.to_owned(), 0));
    }
    if let Some(file) = &args.open_loop {
        let text =
            rampart_bench::enforce::mixed::open_loop_client(file, args.options.measure()).map_err(CliError::input)?;
        return Ok((text, 0));
    }
    if let Some(path) = &args.docs {
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
    let report = run_benchmark(&args.options).map_err(|e| CliError::input(e.to_string()))?;
    if let Some(path) = &args.docs {
        let written = report.write_docs(path, report::COMMAND).map_err(|e| CliError::input(e.to_string()))?;
        eprintln!("rampart bench enforce: wrote {}", written.display());
    }
    let text = if args.json { format!("{}\n", report.json_text()) } else { report.text() };
    Ok((text, 0))
}
