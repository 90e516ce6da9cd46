//! Command lines of the enforcement commands: `daemon`, `run`, `status`,
//! `setenforce`, `reload`, `setbool`, `demo`. Same rules as the other
//! parsers (options anywhere, `--` ends them, usage errors exit 2),
//! except `run`, where everything after `--` (or after the first word)
//! is the command to start, as with `runcon`.

use std::ffi::OsString;
use std::path::PathBuf;

use rampart_enforce::config::FileConfig;

use crate::error::CliError;

pub const WORDS: [&str; 7] = ["daemon", "run", "status", "setenforce", "reload", "setbool", "demo"];

/// A parsed enforcement command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EnforceCommand {
    Help(&'static str),
    Daemon { config_file: Option<PathBuf>, flags: Box<FileConfig> },
    Run { socket: PathBuf, context: String, force: bool, sandbox: bool, command: Vec<OsString> },
    Status { socket: PathBuf, json: bool },
    SetEnforce { socket: PathBuf, enforcing: bool },
    Reload { socket: PathBuf },
    SetBool { socket: PathBuf, name: String, value: bool },
    Demo,
}

/// Whether `argv`'s command word is one of [`WORDS`].
pub fn applies(argv: &[OsString]) -> bool {
    let mut it = argv.iter();
    while let Some(a) = it.next() {
        if a == "--policy" {
            it.next();
            continue;
        }
        let Some(s) = a.to_str() else { return false };
        if s.starts_with('-') {
            continue;
        }
        return WORDS.contains(&s);
    }
    false
}

fn utf8(a: OsString) -> Result<String, CliError> {
    a.into_string().map_err(|a| CliError::usage(format!("argument `{}` is not valid UTF-8", a.to_string_lossy())))
}

/// `on|off|1|0|true|false` as `setsebool` and `setenforce` accept them.
fn on_off(word: &str, what: &str) -> Result<bool, CliError> {
    match word.to_ascii_lowercase().as_str() {
        "on" | "1" | "true" | "enforcing" => Ok(true),
        "off" | "0" | "false" | "permissive" => Ok(false),
        _ => Err(CliError::usage(format!("{what} `{word}`: use on or off (1 or 0)"))),
    }
}

fn number(word: &str, option: &str) -> Result<usize, CliError> {
    word.parse().map_err(|_| CliError::usage(format!("option `{option}` needs a number, got `{word}`")))
}

/// Parses the arguments after the program name; `policy` is the global
/// `--policy` (the daemon's policy file).
pub fn parse(argv: Vec<OsString>) -> Result<EnforceCommand, CliError> {
    let mut args = argv.into_iter();
    let mut words: Vec<String> = Vec::new();
    let mut command_words: Vec<OsString> = Vec::new();
    let mut flags = FileConfig::default();
    let mut config_file = None;
    let mut socket: Option<PathBuf> = None;
    let (mut json, mut help, mut force, mut no_sandbox) = (false, false, false, false);
    let mut context: Option<String> = None;
    let mut after_mark = false;
    let mut marks: Vec<PathBuf> = Vec::new();
    let mut permissive_domains = Vec::new();
    while let Some(arg) = args.next() {
        let is_run = words.first().is_some_and(|w| w == "run");
        if arg == "--" {
            command_words.extend(args.by_ref());
            break;
        }
        let s = arg.to_str().map(str::to_owned);
        let Some(s) = s else {
            if after_mark {
                marks.push(PathBuf::from(arg));
                continue;
            }
            return Err(CliError::usage(format!("argument `{}` is not valid UTF-8", arg.to_string_lossy())));
        };
        let (name, inline) = match s.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_owned(), Some(v.to_owned())),
            _ => (s.clone(), None),
        };
        let mut value = |what: &str| -> Result<OsString, CliError> {
            match &inline {
                Some(v) => Ok(OsString::from(v)),
                None => args
                    .next()
                    .ok_or_else(|| CliError::usage(format!("option `{name}` needs a value: `{name} {what}`"))),
            }
        };
        if !name.starts_with('-') || name == "-" {
            if after_mark {
                marks.push(PathBuf::from(arg));
                continue;
            }
            if is_run {
                // The command to run starts at its first word.
                command_words.push(arg);
                command_words.extend(args.by_ref());
                break;
            }
            words.push(s);
            continue;
        }
        after_mark = false;
        match name.as_str() {
            "-h" | "--help" => help = true,
            "--json" => json = true,
            "--force" => force = true,
            "--no-sandbox" => no_sandbox = true,
            "--permissive" => flags.permissive = Some(true),
            "--no-ignore-marks" => flags.ignore_marks = Some(false),
            "--mark" => {
                marks.push(PathBuf::from(value("PATH")?));
                after_mark = inline.is_none();
            }
            "--policy" => flags.policy = Some(PathBuf::from(value("FILE")?)),
            "--file-contexts" => flags.file_contexts = Some(PathBuf::from(value("FILE")?)),
            "--default-context" => flags.default_context = Some(utf8(value("CONTEXT")?)?),
            "--audit-log" => flags.audit_log = Some(PathBuf::from(value("FILE")?)),
            "--socket" => socket = Some(PathBuf::from(value("PATH")?)),
            "--cgroup" => flags.cgroup = Some(utf8(value("NAME")?)?),
            "--config" => config_file = Some(PathBuf::from(value("FILE")?)),
            "--threads" => flags.threads = Some(number(&utf8(value("N")?)?, "--threads")?),
            "--queue-bound" => flags.queue_bound = Some(number(&utf8(value("N")?)?, "--queue-bound")?),
            "--spin-us" => flags.spin_us = Some(number(&utf8(value("N")?)?, "--spin-us")? as u64),
            "--pollers" => flags.pollers = Some(number(&utf8(value("N")?)?, "--pollers")?),
            "--overload-answer" => flags.overload_answer = Some(utf8(value("allow|deny")?)?),
            "--permissive-domain" => permissive_domains.push(utf8(value("TYPE")?)?),
            "--context" | "-c" => context = Some(utf8(value("CONTEXT")?)?),
            _ => return Err(CliError::usage(format!("unknown option `{name}`; run `rampart help` for the options"))),
        }
    }
    if !marks.is_empty() {
        flags.mark = Some(marks);
    }
    if !permissive_domains.is_empty() {
        flags.permissive_domains = Some(permissive_domains);
    }
    let mut words = words.into_iter();
    let name = words.next().unwrap_or_default();
    let rest: Vec<String> = words.collect();
    if help {
        return Ok(EnforceCommand::Help(super::help::text(&name)));
    }
    let explicit_socket = socket.clone();
    let socket = socket.unwrap_or_else(|| PathBuf::from(rampart_enforce::control::DEFAULT_SOCKET));
    let no_extra = |n: usize| match rest.get(n) {
        Some(extra) => Err(CliError::usage(format!("unexpected argument `{extra}` for `rampart {name}`"))),
        None => Ok(()),
    };
    let cmd = match name.as_str() {
        "daemon" => {
            no_extra(0)?;
            flags.socket = explicit_socket;
            EnforceCommand::Daemon { config_file, flags: Box::new(flags) }
        }
        "run" => {
            let context = context.ok_or_else(|| {
                CliError::usage(
                    "missing `--context CTX`; usage: rampart run [--socket PATH] --context CTX [--force] [--no-sandbox] -- CMD [ARGS]",
                )
            })?;
            if command_words.is_empty() {
                return Err(CliError::usage("missing the command to run: rampart run --context CTX -- CMD [ARGS]"));
            }
            EnforceCommand::Run { socket, context, force, sandbox: !no_sandbox, command: command_words }
        }
        "status" => {
            no_extra(0)?;
            EnforceCommand::Status { socket, json }
        }
        "setenforce" => {
            let word = rest
                .first()
                .ok_or_else(|| CliError::usage("usage: rampart setenforce 1|0 (or Enforcing|Permissive)"))?;
            no_extra(1)?;
            EnforceCommand::SetEnforce { socket, enforcing: on_off(word, "mode")? }
        }
        "reload" => {
            no_extra(0)?;
            EnforceCommand::Reload { socket }
        }
        "setbool" => {
            let (Some(n), Some(v)) = (rest.first(), rest.get(1)) else {
                return Err(CliError::usage("usage: rampart setbool NAME on|off"));
            };
            no_extra(2)?;
            EnforceCommand::SetBool { socket, name: n.clone(), value: on_off(v, "boolean value")? }
        }
        "demo" => {
            no_extra(0)?;
            EnforceCommand::Demo
        }
        other => return Err(CliError::usage(format!("unknown command `{other}`"))),
    };
    Ok(cmd)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<EnforceCommand, CliError> {
        parse(args.iter().map(OsString::from).collect())
    }

    #[test]
    fn daemon_marks_and_flags() {
        let EnforceCommand::Daemon { flags, config_file } =
            p(&["daemon", "--mark", "/a", "/b", "--permissive", "--threads=3", "--mark=/c", "--pollers", "2"]).unwrap()
        else {
            panic!()
        };
        assert_eq!(flags.mark.unwrap(), vec![PathBuf::from("/a"), "/b".into(), "/c".into()]);
        assert_eq!(flags.threads, Some(3));
        assert_eq!(flags.pollers, Some(2));
        assert_eq!(flags.permissive, Some(true));
        assert!(config_file.is_none());
    }

    #[test]
    fn run_takes_the_rest() {
        let EnforceCommand::Run { context, command, force, .. } =
            p(&["run", "--context", "a:b:c:s0", "--", "ls", "--all"]).unwrap()
        else {
            panic!()
        };
        assert_eq!(context, "a:b:c:s0");
        assert_eq!(command, vec![OsString::from("ls"), "--all".into()]);
        assert!(!force);
        let EnforceCommand::Run { command, .. } = p(&["run", "-c", "x", "ls", "-l"]).unwrap() else { panic!() };
        assert_eq!(command, vec![OsString::from("ls"), "-l".into()]);
    }

    #[test]
    fn usage_errors() {
        for args in [
            &["run", "--", "ls"][..],
            &["run", "--context", "x"],
            &["setenforce"],
            &["setenforce", "maybe"],
            &["setbool", "x"],
            &["setbool", "x", "perhaps"],
            &["status", "extra"],
            &["daemon", "--threads", "many"],
            &["daemon", "--bogus"],
        ] {
            assert_eq!(p(args).unwrap_err().exit_code(), 2, "{args:?}");
        }
        assert!(matches!(
            p(&["setenforce", "Permissive"]).unwrap(),
            EnforceCommand::SetEnforce { enforcing: false, .. }
        ));
        assert!(applies(&[OsString::from("--policy"), "x".into(), "status".into()]));
        assert!(!applies(&[OsString::from("check")]));
    }
}
