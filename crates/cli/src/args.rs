//! Command-line parsing: turns `argv` into a [`Cli`] or a usage error.
//!
//! Hand-written rather than generated so that every message follows the
//! project's style (lowercase, user input in backticks, a hint on what to
//! do) and the exit status of usage errors is always 2. Options may
//! appear anywhere, before or after the command name; `--` ends options.

use std::ffi::OsString;
use std::path::PathBuf;

#[cfg(feature = "bench")]
use crate::cmd::bench::BenchArgs;
use crate::error::CliError;
use crate::help::Topic;

/// A parsed command line.
#[derive(Debug, PartialEq, Eq)]
pub struct Cli {
    /// `--policy PATH`; `None` means the system policy.
    pub policy: Option<PathBuf>,
    pub command: Command,
}

#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    /// Print help on a topic to stdout.
    Help(Topic),
    Version,
    Info,
    Check(CheckArgs),
    Batch(BatchArgs),
    Explain(ExplainArgs),
    #[cfg(feature = "bench")]
    Bench(BenchArgs),
    /// `label`, `getlabel`, `relabel` (parsed by `cmd::label::args`).
    Label(crate::cmd::label::LabelCommand),
    /// `daemon`, `run`, `status`, `setenforce`, `reload`, `setbool`,
    /// `demo` (parsed by `cmd::enforce::args`).
    Enforce(crate::cmd::enforce::EnforceCommand),
    /// `bench enforce` (parsed by `cmd::bench_enforce`).
    #[cfg(feature = "bench")]
    BenchEnforce(crate::cmd::bench_enforce::BenchEnforceArgs),
    /// `apparmor check|attach|info` (parsed by `cmd::apparmor`).
    AppArmor(crate::cmd::apparmor::AppArmorArgs),
}

/// A `--bool NAME=on|off` setting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoolSetting {
    pub name: String,
    pub value: bool,
}

/// The three names every query needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryArgs {
    pub scontext: String,
    pub tcontext: String,
    pub class: String,
}

#[derive(Debug, PartialEq, Eq)]
pub struct CheckArgs {
    pub query: QueryArgs,
    pub perms: Vec<String>,
    pub bools: Vec<BoolSetting>,
}

#[derive(Debug, PartialEq, Eq)]
pub struct BatchArgs {
    /// Memoize contexts and decisions (off with `--no-cache`).
    pub cache: bool,
    pub bools: Vec<BoolSetting>,
}

#[derive(Debug, PartialEq, Eq)]
pub struct ExplainArgs {
    pub query: QueryArgs,
    pub perm: String,
    pub bools: Vec<BoolSetting>,
}

/// Every option seen, wherever it was; checked against the command later.
#[derive(Default)]
struct Options {
    policy: Option<PathBuf>,
    bools: Vec<BoolSetting>,
    batch: bool,
    format: Option<String>,
    no_cache: bool,
    help: bool,
    version: bool,
    /// `--quick`, `--json`, `--smoke`: only `rampart bench` takes them.
    bench_flags: Vec<String>,
    out: Option<PathBuf>,
}

/// Parses the arguments after the program name.
pub fn parse(argv: Vec<OsString>) -> Result<Cli, CliError> {
    // File-label commands take file names (bytes) and restorecon's flags.
    if crate::cmd::label::args::applies(&argv) {
        return crate::cmd::label::args::parse(argv);
    }
    if crate::cmd::apparmor::applies(&argv) {
        return Ok(Cli { policy: None, command: Command::AppArmor(crate::cmd::apparmor::parse(argv)?) });
    }
    #[cfg(feature = "bench")]
    if crate::cmd::bench_enforce::applies(&argv) {
        return Ok(Cli { policy: None, command: Command::BenchEnforce(crate::cmd::bench_enforce::parse(argv)?) });
    }
    #[cfg(not(feature = "bench"))]
    if command_word(&argv) == Some("bench") {
        return Err(CliError::usage(
            "this rampart is built without the benchmarks; build them with `cargo build --release -p rampart --features bench`",
        ));
    }
    if crate::cmd::enforce::args::applies(&argv) {
        return Ok(Cli { policy: None, command: Command::Enforce(crate::cmd::enforce::args::parse(argv)?) });
    }
    let mut opts = Options::default();
    let mut words: Vec<String> = Vec::new();
    let mut args = argv.into_iter();
    let mut only_words = false;
    while let Some(arg) = args.next() {
        if only_words {
            words.push(utf8(arg)?);
            continue;
        }
        // `--policy` takes a path, which need not be UTF-8.
        if arg == "--policy" {
            let path = args.next().ok_or_else(|| missing_value("--policy", "PATH"))?;
            opts.policy = Some(PathBuf::from(path));
            continue;
        }
        if let Some(path) = arg.to_str().and_then(|a| a.strip_prefix("--policy=")) {
            opts.policy = Some(PathBuf::from(path));
            continue;
        }
        let arg = utf8(arg)?;
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        let mut value = |what: &str| -> Result<String, CliError> {
            match &inline {
                Some(v) => Ok(v.clone()),
                None => args.next().map(utf8).transpose()?.ok_or_else(|| missing_value(&name, what)),
            }
        };
        match name.as_str() {
            "--" => only_words = true,
            "--bool" => opts.bools.push(parse_bool_setting(&value("NAME=on|off")?)?),
            "--format" => opts.format = Some(value("FORMAT")?),
            "--batch" | "--no-cache" | "-h" | "--help" | "-V" | "--version" | "--quick" | "--json" | "--smoke"
                if inline.is_some() =>
            {
                return Err(CliError::usage(format!(
                    "option `{name}` takes no value; remove `={}`",
                    inline.unwrap_or_default()
                )));
            }
            "--batch" => opts.batch = true,
            "--no-cache" => opts.no_cache = true,
            "--quick" | "--json" | "--smoke" => opts.bench_flags.push(name.clone()),
            "--out" => opts.out = Some(PathBuf::from(value("PATH")?)),
            "-h" | "--help" => opts.help = true,
            "-V" | "--version" => opts.version = true,
            _ if name.starts_with('-') && name.len() > 1 => {
                return Err(CliError::usage(format!("unknown option `{name}`; run `rampart help` for the options")));
            }
            _ => words.push(arg),
        }
    }
    let policy = opts.policy.take();
    let command = command(words, opts)?;
    Ok(Cli { policy, command })
}

fn utf8(arg: OsString) -> Result<String, CliError> {
    arg.into_string().map_err(|a| {
        CliError::usage(format!("argument `{}` is not valid UTF-8; policy names are ASCII", a.to_string_lossy()))
    })
}

fn missing_value(option: &str, what: &str) -> CliError {
    CliError::usage(format!("option `{option}` needs a value: `{option} {what}`"))
}

/// `NAME=on|off` (also `true|false`, `1|0`, as `setsebool` accepts).
pub fn parse_bool_setting(s: &str) -> Result<BoolSetting, CliError> {
    let Some((name, value)) = s.split_once('=') else {
        return Err(CliError::usage(format!("`--bool` expects NAME=on|off, got `{s}`")));
    };
    if name.is_empty() {
        return Err(CliError::usage(format!("`--bool {s}` has no boolean name; write NAME=on|off")));
    }
    let value = match value.to_ascii_lowercase().as_str() {
        "on" | "true" | "1" => true,
        "off" | "false" | "0" => false,
        _ => return Err(CliError::usage(format!("boolean value `{value}` in `--bool {s}` must be `on` or `off`"))),
    };
    Ok(BoolSetting { name: name.to_owned(), value })
}

/// Builds the command from the non-option words and checks that every
/// option given applies to it.
fn command(words: Vec<String>, opts: Options) -> Result<Command, CliError> {
    let mut words = words.into_iter();
    let Some(name) = words.next() else {
        if opts.version {
            return Ok(Command::Version);
        }
        if opts.help {
            return Ok(Command::Help(Topic::Main));
        }
        return Err(CliError::usage("no command given; run `rampart help` for the list of commands"));
    };
    let rest: Vec<String> = words.collect();
    let topic = match name.as_str() {
        "help" => return help_command(&rest),
        "policy" => Topic::Policy,
        "check" => Topic::Check,
        "explain" => Topic::Explain,
        "bench" => Topic::Bench,
        _ => return Err(unknown_command(&name)),
    };
    if opts.help {
        return Ok(Command::Help(topic));
    }
    if opts.version {
        return Err(CliError::usage("`--version` takes no command; run `rampart --version`"));
    }
    if topic != Topic::Bench {
        if let Some(flag) = opts.bench_flags.first().cloned().or(opts.out.as_ref().map(|_| "--out".to_owned())) {
            return Err(CliError::usage(format!("option `{flag}` is only valid with `rampart bench seeds`")));
        }
    }
    match topic {
        Topic::Bench => bench_command(&rest, opts),
        Topic::Policy => policy_command(&rest, &opts),
        Topic::Check => check_command(rest, opts),
        _ => explain_command(rest, opts),
    }
}

fn unknown_command(name: &str) -> CliError {
    let hint = crate::suggest::did_you_mean(
        name,
        ["policy", "check", "explain", "bench", "label", "getlabel", "relabel", "help"],
    );
    CliError::usage(format!("unknown command `{name}`{hint}; run `rampart help` for the list of commands"))
}

fn help_command(rest: &[String]) -> Result<Command, CliError> {
    let topic = match rest.first().map(String::as_str) {
        None => Topic::Main,
        Some("policy") => Topic::Policy,
        Some("check") => Topic::Check,
        Some("explain") => Topic::Explain,
        Some("bench") => Topic::Bench,
        Some("label") => Topic::Label,
        Some("getlabel") => Topic::GetLabel,
        Some("relabel") => Topic::Relabel,
        Some("help") => Topic::Main,
        Some(other) => return Err(unknown_command(other)),
    };
    let allowed_extra = usize::from(
        (topic == Topic::Policy && rest.get(1).is_some_and(|s| s == "info"))
            || (topic == Topic::Bench && rest.get(1).is_some_and(|s| s == "seeds")),
    );
    if rest.len() > 1 + allowed_extra {
        return Err(CliError::usage(format!("`rampart help` takes one command name, got `{}`", rest.join(" "))));
    }
    Ok(Command::Help(topic))
}

/// Options that only `check --batch` accepts.
fn reject_batch_options(opts: &Options, command: &str) -> Result<(), CliError> {
    let misplaced = if opts.batch {
        Some("--batch")
    } else if opts.format.is_some() {
        Some("--format")
    } else if opts.no_cache {
        Some("--no-cache")
    } else {
        None
    };
    match misplaced {
        Some(o) => Err(CliError::usage(format!(
            "option `{o}` is only valid with `rampart check --batch`, not with `{command}`"
        ))),
        None => Ok(()),
    }
}

fn policy_command(rest: &[String], opts: &Options) -> Result<Command, CliError> {
    reject_batch_options(opts, "rampart policy")?;
    if !opts.bools.is_empty() {
        return Err(CliError::usage(
            "option `--bool` is not valid with `rampart policy`; it applies to `check` and `explain`",
        ));
    }
    match rest {
        [] => Err(CliError::usage("missing subcommand; run `rampart policy info`")),
        [sub] if sub == "info" => Ok(Command::Info),
        [sub] => {
            Err(CliError::usage(format!("unknown subcommand `{sub}` of `rampart policy`; the only one is `info`")))
        }
        [_, extra, ..] => {
            Err(CliError::usage(format!("unexpected argument `{extra}`; `rampart policy info` takes none")))
        }
    }
}

fn bench_command(rest: &[String], opts: Options) -> Result<Command, CliError> {
    reject_batch_options(&opts, "rampart bench")?;
    if !opts.bools.is_empty() {
        return Err(CliError::usage(
            "option `--bool` is not valid with `rampart bench`; it applies to `check` and `explain`",
        ));
    }
    #[cfg(feature = "bench")]
    return Ok(Command::Bench(crate::cmd::bench::command(rest, &opts.bench_flags, opts.out)?));
    #[cfg(not(feature = "bench"))]
    {
        let _ = rest;
        Err(CliError::usage("this rampart is built without the benchmarks (`--features bench`)"))
    }
}

/// The command word of `argv`: its first word that is no option (nor
/// `--policy`'s value).
#[cfg(not(feature = "bench"))]
fn command_word(argv: &[OsString]) -> Option<&str> {
    let mut it = argv.iter();
    while let Some(a) = it.next() {
        if a == "--policy" {
            it.next();
            continue;
        }
        let s = a.to_str()?;
        if !s.starts_with('-') {
            return Some(s);
        }
    }
    None
}

fn check_command(rest: Vec<String>, opts: Options) -> Result<Command, CliError> {
    if opts.batch {
        if let Some(first) = rest.first() {
            return Err(CliError::usage(format!(
                "unexpected argument `{first}`: `rampart check --batch` reads SCONTEXT TCONTEXT CLASS lines from stdin"
            )));
        }
        if let Some(f) = &opts.format {
            if f != "hex" {
                return Err(CliError::usage(format!("unknown batch format `{f}`; the only format is `hex`")));
            }
        }
        return Ok(Command::Batch(BatchArgs { cache: !opts.no_cache, bools: opts.bools }));
    }
    if opts.format.is_some() || opts.no_cache {
        let o = if opts.format.is_some() { "--format" } else { "--no-cache" };
        return Err(CliError::usage(format!("option `{o}` needs `--batch`; run `rampart check --help`")));
    }
    let mut rest = rest.into_iter();
    let query = query_args(&mut rest, "rampart check SCONTEXT TCONTEXT CLASS [PERM...]")?;
    Ok(Command::Check(CheckArgs { query, perms: rest.collect(), bools: opts.bools }))
}

fn explain_command(rest: Vec<String>, opts: Options) -> Result<Command, CliError> {
    reject_batch_options(&opts, "rampart explain")?;
    let usage = "rampart explain SCONTEXT TCONTEXT CLASS PERM";
    let mut rest = rest.into_iter();
    let query = query_args(&mut rest, usage)?;
    let perm = rest.next().ok_or_else(|| CliError::usage(format!("missing PERM; usage: {usage}")))?;
    if let Some(extra) = rest.next() {
        return Err(CliError::usage(format!(
            "unexpected argument `{extra}`: explain takes one permission; usage: {usage}"
        )));
    }
    Ok(Command::Explain(ExplainArgs { query, perm, bools: opts.bools }))
}

fn query_args(rest: &mut impl Iterator<Item = String>, usage: &str) -> Result<QueryArgs, CliError> {
    let mut next = |what: &str| rest.next().ok_or_else(|| CliError::usage(format!("missing {what}; usage: {usage}")));
    Ok(QueryArgs { scontext: next("SCONTEXT")?, tcontext: next("TCONTEXT")?, class: next("CLASS")? })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Cli, CliError> {
        parse(args.iter().map(OsString::from).collect())
    }

    #[test]
    fn policy_option_before_or_after_command() {
        let a = p(&["--policy", "/x", "policy", "info"]).unwrap();
        let b = p(&["policy", "info", "--policy=/x"]).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.policy, Some(PathBuf::from("/x")));
        assert_eq!(a.command, Command::Info);
    }

    #[test]
    fn check_with_perms_and_bools() {
        let c = p(&["check", "s", "--bool", "a=on", "t", "file", "read", "--bool=b=off", "write"]).unwrap();
        let Command::Check(c) = c.command else { panic!("not check") };
        assert_eq!(c.query, QueryArgs { scontext: "s".into(), tcontext: "t".into(), class: "file".into() });
        assert_eq!(c.perms, vec!["read", "write"]);
        assert_eq!(
            c.bools,
            vec![BoolSetting { name: "a".into(), value: true }, BoolSetting { name: "b".into(), value: false }]
        );
    }

    #[test]
    fn batch() {
        let c = p(&["check", "--batch", "--format", "hex", "--no-cache"]).unwrap();
        assert_eq!(c.command, Command::Batch(BatchArgs { cache: false, bools: vec![] }));
        assert!(p(&["check", "--batch", "--format", "json"]).is_err());
        assert!(p(&["check", "--batch", "s"]).is_err());
        assert!(p(&["check", "--no-cache", "s", "t", "c"]).is_err());
        assert!(p(&["explain", "--batch", "s", "t", "c", "p"]).is_err());
    }

    #[test]
    fn help_forms() {
        for args in [&["--help"][..], &["help"], &["-h"], &["help", "help"]] {
            assert_eq!(p(args).unwrap().command, Command::Help(Topic::Main));
        }
        assert_eq!(p(&["check", "--help"]).unwrap().command, Command::Help(Topic::Check));
        assert_eq!(p(&["help", "explain"]).unwrap().command, Command::Help(Topic::Explain));
        assert_eq!(p(&["help", "policy", "info"]).unwrap().command, Command::Help(Topic::Policy));
        assert_eq!(p(&["policy", "info", "-h"]).unwrap().command, Command::Help(Topic::Policy));
        assert!(p(&["help", "nope"]).is_err());
    }

    #[test]
    fn usage_errors() {
        for args in [
            &[][..],
            &["chek"],
            &["check", "s", "t"],
            &["explain", "s", "t", "c"],
            &["explain", "s", "t", "c", "p", "q"],
            &["policy"],
            &["policy", "stats"],
            &["policy", "info", "x"],
            &["check", "--policy"],
            &["check", "--bool", "x"],
            &["check", "--bool", "x=maybe"],
            &["check", "--frobnicate"],
            &["check", "--batch=yes"],
            &["policy", "info", "--bool", "a=on"],
        ] {
            let e = p(args).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{args:?}");
        }
    }

    #[test]
    fn double_dash_ends_options() {
        let c = p(&["check", "--", "-s", "t", "c"]).unwrap();
        let Command::Check(c) = c.command else { panic!("not check") };
        assert_eq!(c.query.scontext, "-s");
    }
}
