//! `rampart apparmor status|complain|enforce`: the system's profile
//! directory as aa-status, aa-complain and aa-enforce see it (issue 11,
//! item 5). The directory walk, compilation and cache are
//! `rampart_apparmor::profile_set`'s, the file edits
//! `rampart_apparmor::profile_flags`'s; this module resolves the
//! command's arguments, prints, and asks a running rampartd to reload.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use rampart_apparmor::domain::find_attach;
use rampart_apparmor::policy::ROOT_NS;
use rampart_apparmor::profile_flags::{set_mode_in_file, ModeChange};
use rampart_apparmor::{Mode, ProfileSet, Source};
use rampart_enforce::{Client, ConfinedProcess, ControlError};

use crate::cli::{AppArmorDir, AppArmorMode, AppArmorStatusArgs};
use crate::error::CliError;

/// Compiles the directory's set; failed files are reported on stderr.
fn load(dir: &AppArmorDir) -> Result<ProfileSet, CliError> {
    let source = Source { cache: dir.cache.clone(), features: dir.features.clone(), ..Source::new(&dir.profiles) };
    let set = ProfileSet::load(&source).map_err(|e| {
        let hint = if e.starts_with("cache directory") { " (give --cache DIR, a directory you may write)" } else { "" };
        CliError::input(format!("{e}{hint}"))
    })?;
    for f in &set.failures {
        eprintln!("rampart: apparmor: {f}");
    }
    Ok(set)
}

/// `status`: aa-status's profile part, then its process part from a
/// running rampartd (which alone knows who runs under a profile).
pub fn status(args: &AppArmorStatusArgs) -> Result<u8, CliError> {
    let set = load(&args.dir)?;
    print!("{}", render_status(&set, &args.dir.profiles));
    let socket = &args.socket.socket;
    let status = Client::connect(socket).map_err(ControlError::from).and_then(|mut c| c.status());
    match status {
        Ok(s) => match s.apparmor {
            Some(a) => print!("{}", render_processes(&a.processes)),
            None => println!("rampartd at {} runs no AppArmor profiles: 0 processes are confined.", socket.display()),
        },
        Err(ControlError::NotRunning { .. }) => {
            println!("No rampartd listening at {}: 0 processes are confined.", socket.display())
        }
        Err(e) => return Err(CliError::input(format!("asking rampartd for the confined processes: {e}"))),
    }
    Ok(0)
}

/// aa-status's process part: how many, then by mode `   EXE (PID) PROFILE`.
fn render_processes(processes: &[ConfinedProcess]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} processes have profiles defined.", processes.len());
    let titles = [
        ("enforce", "in enforce mode"),
        ("complain", "in complain mode"),
        ("kill", "in kill mode"),
        ("unknown", "under a profile a reload removed"),
    ];
    for (mode, title) in titles {
        let these: Vec<&ConfinedProcess> = processes.iter().filter(|p| p.mode == mode).collect();
        // aa-status always prints the enforce and complain counts.
        if these.is_empty() && !matches!(mode, "enforce" | "complain") {
            continue;
        }
        let _ = writeln!(out, "{} processes are {title}.", these.len());
        for p in these {
            let exe = std::fs::read_link(format!("/proc/{}/exe", p.pid))
                .map_or_else(|_| String::from("?"), |e| e.display().to_string());
            let _ = writeln!(out, "   {exe} ({}) {}", p.pid, p.profile);
        }
    }
    out
}

fn render_status(set: &ProfileSet, dir: &Path) -> String {
    let mut out = String::new();
    let mut by_mode = |title: &str, modes: &[Mode]| {
        let mut names: Vec<String> = set
            .policy
            .profiles()
            .filter(|(_, p)| modes.contains(&p.mode))
            .map(|(ns, p)| if ns == ROOT_NS { p.name.clone() } else { format!(":{ns}:{}", p.name) })
            .collect();
        names.sort();
        let _ = writeln!(out, "{} profiles are in {title} mode.", names.len());
        for n in names {
            let _ = writeln!(out, "   {n}");
        }
    };
    let mut head = String::new();
    let _ = writeln!(head, "{} profiles are loaded (from {}).", set.policy.profiles().count(), dir.display());
    by_mode("enforce", &[Mode::Enforce, Mode::User]);
    by_mode("complain", &[Mode::Complain]);
    by_mode("kill", &[Mode::Kill]);
    by_mode("unconfined", &[Mode::Unconfined]);
    let _ = writeln!(out, "{} profile files are disabled.", set.disabled.len());
    for d in &set.disabled {
        let _ = writeln!(out, "   {}", d.display());
    }
    let _ = writeln!(out, "{} profile files failed to compile.", set.failures.len());
    head + &out
}

/// `complain` and `enforce`.
pub fn set_mode(args: &AppArmorMode, mode: ModeChange) -> Result<u8, CliError> {
    let dir = &args.dir.profiles;
    // compiled only when a profile name or a program is given
    let mut set = None;
    for arg in &args.targets {
        let (file, program) = resolve(arg, &args.dir, &mut set)?;
        set_mode_in_file(dir, &file, program.as_deref(), mode).map_err(CliError::input)?;
        let word = if mode == ModeChange::Complain { "complain" } else { "enforce" };
        println!(
            "Setting {} to {word} mode.",
            program.as_deref().map_or_else(|| file.display().to_string(), str::to_owned)
        );
    }
    if !args.no_reload {
        reload(&args.socket.socket)?;
    }
    Ok(0)
}

/// A command argument as aa-complain reads it: a file of the directory
/// (path or name), a profile's name, or a program's path.
fn resolve(arg: &str, dir: &AppArmorDir, set: &mut Option<ProfileSet>) -> Result<(PathBuf, Option<String>), CliError> {
    let path = Path::new(arg);
    let canonical_dir =
        dir.profiles.canonicalize().map_err(|e| CliError::input(format!("{}: {e}", dir.profiles.display())))?;
    if path.exists() || arg.starts_with('/') {
        if let Ok(c) = path.canonicalize() {
            if c.starts_with(&canonical_dir) && c.is_file() {
                return Ok((c, None));
            }
        }
    } else if dir.profiles.join(arg).is_file() {
        return Ok((dir.profiles.join(arg), None));
    }
    let set = match set {
        Some(s) => s,
        None => set.insert(load(dir)?),
    };
    let name = if arg.starts_with('/') && set.file_of(arg).is_none() {
        // a program: the profile attached at its exec
        let root = set.policy.namespaces().iter().find(|n| n.name == ROOT_NS);
        let attached = root
            .and_then(|ns| find_attach(ns.profiles.iter().filter(|p| p.parent().is_none()), arg.as_bytes()).profile);
        attached.map(|p| p.name.clone())
    } else {
        Some(arg.to_owned())
    };
    match name.as_deref().and_then(|n| set.file_of(n).map(|f| (f.to_owned(), n))) {
        Some((file, n)) => Ok((file, Some(n.to_owned()))),
        None => Err(CliError::input(format!(
            "{arg}: no profile file, profile or program of that name in {} (see `rampart apparmor status`)",
            dir.profiles.display()
        ))),
    }
}

/// Asks a running rampartd to reload; none listening is not an error.
fn reload(socket: &Path) -> Result<(), CliError> {
    let connected = Client::connect(socket).map_err(ControlError::from);
    match connected.and_then(|mut c| c.reload()) {
        Ok(seqno) => println!("rampartd reloaded (sequence number {seqno})."),
        Err(ControlError::NotRunning { .. }) => {
            println!("No rampartd listening at {}; the change applies when it starts.", socket.display())
        }
        Err(e) => return Err(CliError::input(format!("the profile files changed, but {e}"))),
    }
    Ok(())
}
