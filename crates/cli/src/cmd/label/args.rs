//! Command lines of `rampart label`, `getlabel` and `relabel`.
//!
//! Separate from the shared parser (`crate::args`) because operands and
//! path options are file names, kept as raw bytes (`OsString`), and
//! because `relabel` takes restorecon's clustered short flags (`-Rnv`).
//! Same rules otherwise: options anywhere, before or after the command,
//! `--` ends them, `--policy` and `-h/--help` work everywhere, and every
//! usage error is a `CliError::Usage` (exit status 2).

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use rampart_label::FileType;

use super::{LabelCommand, LookupArgs, RelabelArgs, Source};
use crate::args::{Cli, Command};
use crate::error::CliError;
use crate::help::Topic;

/// The `--type` words, in file_contexts order.
pub const TYPE_NAMES: &str = "file dir lnk_file chr_file blk_file sock_file fifo_file";

/// Options (of every command) whose value is the next argument; the
/// pre-scan in [`applies`] skips those values.
const VALUE_OPTIONS: [&str; 7] = ["--policy", "--file-contexts", "--type", "--root", "--bool", "--format", "--out"];

/// The file type named by a `--type` word (the policy's class names).
pub fn parse_type(word: &str) -> Option<FileType> {
    FileType::ALL.into_iter().find(|t| t.class_name() == word)
}

fn is_ours(word: &OsStr) -> bool {
    matches!(word.as_bytes(), b"label" | b"getlabel" | b"relabel")
}

/// Whether the command word of `argv` (the first argument that is not an
/// option or an option's value) is `label`, `getlabel` or `relabel`.
pub fn applies(argv: &[OsString]) -> bool {
    let mut it = argv.iter();
    while let Some(a) = it.next() {
        let b = a.as_bytes();
        if b == b"--" {
            return it.next().is_some_and(|w| is_ours(w));
        }
        if b.len() > 1 && b[0] == b'-' {
            if VALUE_OPTIONS.iter().any(|o| o.as_bytes() == b) {
                it.next();
            }
            continue;
        }
        return is_ours(a);
    }
    false
}

/// Everything seen on the command line, checked against the command at
/// the end.
#[derive(Default)]
struct Seen {
    policy: Option<PathBuf>,
    file_contexts: Option<PathBuf>,
    file_type: Option<OsString>,
    root: Option<PathBuf>,
    batch: bool,
    help: bool,
    version: bool,
    relabel: RelabelArgs,
    /// Command-specific options given, in order.
    given: Vec<&'static str>,
    /// The first option no file-label command knows.
    unknown: Option<String>,
    words: Vec<OsString>,
}

/// Parses a command line whose command is one of ours (see [`applies`]).
pub fn parse(argv: Vec<OsString>) -> Result<Cli, CliError> {
    let mut seen = Seen::default();
    let mut args = argv.into_iter();
    let mut only_words = false;
    while let Some(arg) = args.next() {
        let b = arg.as_bytes();
        if only_words || b == b"-" || !b.starts_with(b"-") {
            seen.words.push(arg);
        } else if b == b"--" {
            only_words = true;
        } else if b.starts_with(b"--") {
            long(&mut seen, &arg, &mut args)?;
        } else {
            short(&mut seen, &b[1..]);
        }
    }
    build(seen)
}

fn long(seen: &mut Seen, arg: &OsStr, rest: &mut impl Iterator<Item = OsString>) -> Result<(), CliError> {
    let b = arg.as_bytes();
    let (name, inline) = match b.iter().position(|&c| c == b'=') {
        Some(i) => (String::from_utf8_lossy(&b[..i]).into_owned(), Some(OsStr::from_bytes(&b[i + 1..]).to_owned())),
        None => (String::from_utf8_lossy(b).into_owned(), None),
    };
    let takes_value = matches!(name.as_str(), "--policy" | "--file-contexts" | "--root" | "--type");
    if !takes_value && inline.is_some() && matches!(name.as_str(), "--batch" | "--help" | "--version") {
        return Err(CliError::usage(format!(
            "option `{name}` takes no value; remove `={}`",
            inline.unwrap_or_default().to_string_lossy()
        )));
    }
    let mut value = |what: &str| match inline.clone() {
        Some(v) => Ok(v),
        None => rest.next().ok_or_else(|| CliError::usage(format!("option `{name}` needs a value: `{name} {what}`"))),
    };
    match name.as_str() {
        "--policy" => seen.policy = Some(value("PATH")?.into()),
        "--file-contexts" => {
            seen.file_contexts = Some(value("DIR_OR_FILE")?.into());
            seen.given.push("--file-contexts");
        }
        "--root" => {
            seen.root = Some(value("DIR")?.into());
            seen.given.push("--root");
        }
        "--type" => {
            seen.file_type = Some(value("TYPE")?);
            seen.given.push("--type");
        }
        "--batch" => {
            seen.batch = true;
            seen.given.push("--batch");
        }
        "--help" => seen.help = true,
        "--version" => seen.version = true,
        _ => {
            seen.unknown.get_or_insert(name);
        }
    }
    Ok(())
}

/// A cluster of short flags (`-n`, `-Rnv`).
fn short(seen: &mut Seen, flags: &[u8]) {
    for &c in flags {
        let r = &mut seen.relabel;
        let name = match c {
            b'n' => set(&mut r.dry_run, "-n"),
            b'v' => set(&mut r.verbose, "-v"),
            b'R' => set(&mut r.recursive, "-R"),
            b'F' => set(&mut r.force, "-F"),
            // restorecon's "do not cross filesystems": always so here.
            b'x' => "-x",
            b'h' => {
                seen.help = true;
                continue;
            }
            b'V' => {
                seen.version = true;
                continue;
            }
            _ => {
                seen.unknown.get_or_insert_with(|| format!("-{}", String::from_utf8_lossy(&[c])));
                continue;
            }
        };
        seen.given.push(name);
    }
}

fn set(flag: &mut bool, name: &'static str) -> &'static str {
    *flag = true;
    name
}

fn build(seen: Seen) -> Result<Cli, CliError> {
    let mut words = seen.words.into_iter();
    let name = words.next().and_then(|w| w.into_string().ok()).unwrap_or_default();
    let (topic, allowed): (Topic, &[&str]) = match name.as_str() {
        "label" => (Topic::Label, &["--file-contexts", "--type", "--batch"]),
        "getlabel" => (Topic::GetLabel, &[]),
        "relabel" => (Topic::Relabel, &["--file-contexts", "--root", "-n", "-v", "-R", "-F", "-x"]),
        _ => return Err(CliError::usage("no command given; run `rampart help` for the list of commands")),
    };
    let cli = |command| Ok(Cli { policy: seen.policy, command });
    if seen.help {
        return cli(Command::Help(topic));
    }
    if seen.version {
        return Err(CliError::usage("`--version` takes no command; run `rampart --version`"));
    }
    let hint = format!("run `rampart help {name}` for its options");
    if let Some(o) = seen.unknown {
        return Err(CliError::usage(format!("unknown option `{o}` for `rampart {name}`; {hint}")));
    }
    if let Some(o) = seen.given.iter().find(|o| !allowed.contains(o)) {
        return Err(CliError::usage(format!("option `{o}` is not valid with `rampart {name}`; {hint}")));
    }
    let paths: Vec<PathBuf> = words.map(PathBuf::from).collect();
    let source = Source { file_contexts: seen.file_contexts };
    let command = match topic {
        Topic::Label if seen.batch => {
            if let Some(p) = paths.first() {
                return Err(CliError::usage(format!(
                    "unexpected argument `{}`: `rampart label --batch` reads PATH or PATH<TAB>TYPE lines from stdin",
                    p.display()
                )));
            }
            if seen.file_type.is_some() {
                return Err(CliError::usage(
                    "`--type` is for PATH arguments; with `--batch` give the type on each line (PATH<TAB>TYPE)",
                ));
            }
            LabelCommand::Batch(source)
        }
        Topic::Label => {
            let file_type = match seen.file_type {
                None => None,
                Some(w) => Some(w.to_str().and_then(parse_type).ok_or_else(|| {
                    CliError::usage(format!("unknown file type `{}`; use one of {TYPE_NAMES}", w.to_string_lossy()))
                })?),
            };
            LabelCommand::Lookup(LookupArgs { source, paths: need_paths(paths, "label [--type TYPE]")?, file_type })
        }
        Topic::GetLabel => LabelCommand::GetLabel(need_paths(paths, "getlabel")?),
        _ => LabelCommand::Relabel(RelabelArgs {
            source,
            paths: need_paths(paths, "relabel [-n] [-v] [-R] [-F] [-x] [--root DIR]")?,
            root: seen.root,
            ..seen.relabel
        }),
    };
    cli(Command::Label(command))
}

fn need_paths(paths: Vec<PathBuf>, usage: &str) -> Result<Vec<PathBuf>, CliError> {
    if paths.is_empty() {
        return Err(CliError::usage(format!("missing PATH; usage: rampart {usage} PATH...")));
    }
    Ok(paths)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    fn os(args: &[&[u8]]) -> Vec<OsString> {
        args.iter().map(|a| OsStr::from_bytes(a).to_owned()).collect()
    }

    fn p(args: &[&[u8]]) -> Result<Cli, CliError> {
        let argv = os(args);
        assert!(applies(&argv), "{args:?}");
        parse(argv)
    }

    fn label(c: Cli) -> LabelCommand {
        match c.command {
            Command::Label(l) => l,
            other => panic!("not a label command: {other:?}"),
        }
    }

    #[test]
    fn pre_scan_finds_the_command_word() {
        assert!(applies(&os(&[b"--policy", b"label", b"getlabel"])));
        assert!(applies(&os(&[b"--policy", b"x", b"relabel"])));
        assert!(!applies(&os(&[b"--policy", b"label"])));
        assert!(!applies(&os(&[b"check", b"label"])));
        assert!(applies(&os(&[b"-Rn", b"--", b"relabel"])));
        assert!(!applies(&os(&[b"help", b"label"])));
        assert!(!applies(&os(&[])));
    }

    #[test]
    fn paths_are_bytes() {
        let c = p(&[b"--policy", b"/p\xff", b"label", b"/a\xfe", b"--type=dir", b"--", b"-b"]).unwrap();
        assert_eq!(c.policy, Some(PathBuf::from(OsStr::from_bytes(b"/p\xff"))));
        let LabelCommand::Lookup(a) = label(c) else { panic!("not a lookup") };
        assert_eq!(a.paths, vec![PathBuf::from(OsStr::from_bytes(b"/a\xfe")), PathBuf::from("-b")]);
        assert_eq!(a.file_type, Some(FileType::Directory));
    }

    #[test]
    fn relabel_flags_cluster() {
        let c =
            p(&[b"-n", b"relabel", b"-RvF", b"-x", b"--root", b"/mnt", b"--file-contexts=/fc", b"/mnt/etc"]).unwrap();
        let LabelCommand::Relabel(r) = label(c) else { panic!("not relabel") };
        assert!(r.dry_run && r.verbose && r.recursive && r.force);
        assert_eq!(r.root, Some(PathBuf::from("/mnt")));
        assert_eq!(r.source.file_contexts, Some(PathBuf::from("/fc")));
        assert_eq!(r.paths, vec![PathBuf::from("/mnt/etc")]);
    }

    #[test]
    fn batch_and_help() {
        assert_eq!(label(p(&[b"label", b"--batch"]).unwrap()), LabelCommand::Batch(Source::default()));
        assert_eq!(p(&[b"relabel", b"-h"]).unwrap().command, Command::Help(Topic::Relabel));
        assert_eq!(p(&[b"getlabel", b"--help", b"--bogus"]).unwrap().command, Command::Help(Topic::GetLabel));
    }

    #[test]
    fn usage_errors() {
        for args in [
            &[&b"label"[..]][..],
            &[b"label", b"--type"],
            &[b"label", b"--type", b"directory", b"/x"],
            &[b"label", b"--type", b"link", b"/x"],
            &[b"label", b"--batch", b"/x"],
            &[b"label", b"--batch", b"--type", b"dir"],
            &[b"label", b"--batch=1"],
            &[b"label", b"-n", b"/x"],
            &[b"label", b"--root", b"/", b"/x"],
            &[b"getlabel"],
            &[b"getlabel", b"--type", b"dir", b"/x"],
            &[b"getlabel", b"--file-contexts", b"/fc", b"/x"],
            &[b"relabel"],
            &[b"relabel", b"-Rq", b"/x"],
            &[b"relabel", b"--bool", b"a=on", b"/x"],
            &[b"relabel", b"--batch", b"/x"],
            &[b"relabel", b"--root"],
            &[b"relabel", b"-V", b"/x"],
        ] {
            let e = p(args).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{args:?}");
            assert!(matches!(e, CliError::Usage(_)), "{args:?}: {e}");
        }
    }
}
