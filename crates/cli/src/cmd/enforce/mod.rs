//! The enforcement commands: `daemon` (rampartd in the foreground),
//! `run` (the runcon analog, and with `--apparmor` aa-exec's), the control commands `status`,
//! `setenforce`, `reload` and `setbool`, and `demo`.

mod demo;
mod demo_apparmor;

use std::os::unix::process::CommandExt;
use std::path::Path;

use rampart_enforce::{Client, ControlError, DaemonConfig, ExecGrant, FileConfig, Status};

use crate::cli::{DaemonArgs, RunArgs, SetBoolArgs, SetEnforceArgs, SocketArg, StatusArgs};
use crate::error::CliError;

pub use demo::run as demo;

fn control(e: ControlError) -> CliError {
    CliError::input(e.to_string())
}

fn client(socket: &SocketArg) -> Result<Client, CliError> {
    Client::connect(&socket.socket).map_err(|e| control(e.into()))
}

/// `rampart daemon`: the `--config` file under the flags; `policy` is
/// rampart's global `--policy`.
pub fn daemon(policy: Option<&Path>, args: DaemonArgs) -> Result<u8, CliError> {
    let file = match &args.config {
        Some(p) => FileConfig::load(p).map_err(CliError::input)?,
        None => FileConfig::default(),
    };
    let flags = FileConfig { policy: policy.map(Path::to_path_buf), ..args.flags };
    let config = DaemonConfig::resolve(file, flags).map_err(CliError::usage)?;
    rampart_enforce::run_daemon(config).map_err(|e| CliError::input(format!("rampartd: {e}")))?;
    Ok(0)
}

/// `rampart status`: `sestatus`-style text, or JSON.
pub fn status(args: &StatusArgs) -> Result<u8, CliError> {
    let status = client(&args.socket)?.status().map_err(control)?;
    if args.json {
        let text = serde_json::to_string_pretty(&status).map_err(|e| CliError::input(e.to_string()))?;
        println!("{text}");
    } else {
        print!("{}", render_status(&status));
    }
    Ok(0)
}

pub fn setenforce(args: &SetEnforceArgs) -> Result<u8, CliError> {
    client(&args.socket)?.set_enforcing(args.enforcing).map_err(control)?;
    Ok(0)
}

pub fn reload(args: &SocketArg) -> Result<u8, CliError> {
    let seqno = client(args)?.reload().map_err(control)?;
    println!("policy reloaded (sequence number {seqno})");
    Ok(0)
}

pub fn setbool(args: &SetBoolArgs) -> Result<u8, CliError> {
    client(&args.socket)?.set_boolean(&args.name, args.value).map_err(control)?;
    Ok(0)
}

/// `rampart run`: asks the daemon for the exec context, sandboxes itself
/// for what fanotify cannot see (rampart_enforce's sandbox), then execs.
/// Exit statuses as runcon's: 125 when rampart itself fails, 126 when
/// the command cannot be run, 127 when it is not found. With
/// `--no-sandbox`, only the exec context (testing the daemon alone).
pub fn run_in_context(args: RunArgs) -> u8 {
    let RunArgs { socket: SocketArg { socket }, context, apparmor, force, no_sandbox, command } = args;
    let fail = |msg: String, code: u8| {
        eprintln!("rampart: run: {msg}");
        code
    };
    let mut client = match Client::connect(&socket) {
        Ok(c) => c,
        Err(e) => return fail(control(e.into()).to_string(), 125),
    };
    let Some((program, args)) = command.split_first() else { return fail("no command given".into(), 125) };
    let Some(path) = resolve_program(program) else {
        return fail(format!("{}: command not found", program.to_string_lossy()), 127);
    };
    let (marked, protected, opens) = match client.status() {
        Ok(s) => (s.marked_devices, s.protected_dirs, s.supervised_opens),
        Err(e) => return fail(control(e).to_string(), 125),
    };
    // The calls fanotify never sees go to the daemon from here on
    // (rampart_enforce's supervised calls): the filter first, its
    // listener handed over with the request. Already under a launcher's
    // filter (a `rampart run` inside a confined domain), a second
    // listener is refused: that filter's listener serves this process.
    // With the daemon's supervised opens, the filter also hands over
    // every open asking to write (rampart_enforce's supervised calls).
    let listener = if no_sandbox {
        None
    } else {
        match rampart_enforce::supervise_system_calls(opens) {
            Ok(l) => Some(l),
            Err(e) if e.raw_os_error() == Some(libc::EPERM) => None,
            Err(e) => return fail(format!("cannot install the supervising filter: {e}"), 125),
        }
    };
    let supervise = listener.as_ref().map(std::os::fd::AsRawFd::as_raw_fd);
    let grant = match client.set_exec_labels(
        context.as_deref(),
        apparmor.as_deref(),
        force,
        Some(&path.to_string_lossy()),
        supervise,
        opens,
    ) {
        Ok(grant) => grant,
        Err(e) => {
            // A denial by the policy is the exec failing, as with runcon.
            let code = if e.to_string().contains("Permission denied") { 126 } else { 125 };
            return fail(e.to_string(), code);
        }
    };
    drop(client);
    drop(listener);
    // From an older daemon: the sandbox without what it did not say.
    let mut grant = grant.unwrap_or(ExecGrant { capabilities: u64::MAX, ..Default::default() });
    if supervise.is_some() {
        // The daemon decides each truncate by name, link and rename
        // exactly, for SELinux and the profile alike.
        use rampart_enforce::Forbidden::{LinkRename, TruncateByName};
        grant.forbid.retain(|f| !matches!(f, TruncateByName | LinkRename));
    }
    // Entering a domain clears these, sandbox or not (crate::sandbox).
    if let Err(e) = rampart_enforce::clear_inherited_state() {
        return fail(
            format!("cannot clear what a change of domain clears (personality, parent-death signal): {e}"),
            125,
        );
    }
    if !no_sandbox {
        if let Err(code) = confine_self(&marked, &protected, &grant, supervise.is_some(), supervise.is_some() && opens)
        {
            return code;
        }
    }
    let err = std::process::Command::new(program).args(args).exec();
    let code = if err.kind() == std::io::ErrorKind::NotFound { 127 } else { 126 };
    fail(format!("{}: {err}", program.to_string_lossy()), code)
}

/// The launcher's sandbox (rampart_enforce's sandbox functions), set on itself
/// before its exec; `Err`: the exit status, after saying why.
fn confine_self(
    marked: &[String],
    protected: &[std::path::PathBuf],
    grant: &ExecGrant,
    supervised: bool,
    supervised_opens: bool,
) -> Result<(), u8> {
    let fail = |msg: String| {
        eprintln!("rampart: run: {msg}");
        125
    };
    rampart_enforce::restrict_filesystem(marked, protected, &grant.forbid, (supervised_opens, supervised))
        .map_err(|e| fail(format!("cannot set the Landlock ruleset: {e}")))?;
    rampart_enforce::refuse_system_calls(&grant.forbid, supervised)
        .map_err(|e| fail(format!("cannot install the system call filter: {e}")))?;
    rampart_enforce::revoke_descriptors(&grant.revoke)
        .map_err(|e| fail(format!("cannot revoke the descriptors the new domain may not use: {e}")))?;
    rampart_enforce::bound_capabilities(grant.capabilities)
        .map_err(|e| fail(format!("cannot bound the capabilities to the policy's: {e}")))?;
    Ok(())
}

/// The file `execvp` would run for `program`: itself if it contains a
/// slash, else the first executable match in `PATH`.
fn resolve_program(program: &std::ffi::OsStr) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let p = std::path::Path::new(program);
    if program.as_encoded_bytes().contains(&b'/') {
        return p.exists().then(|| p.to_path_buf());
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|dir| dir.join(p))
        .find(|c| std::fs::metadata(c).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

/// `sestatus`-style text.
pub fn render_status(s: &Status) -> String {
    let rows: [(&str, String); 16] = [
        ("rampartd status:", "running".into()),
        ("Current mode:", s.mode.clone()),
        ("Loaded policy:", s.policy.clone()),
        ("Policy sequence number:", s.policy_seqno.to_string()),
        ("Uptime (s):", format!("{:.1}", s.uptime_seconds)),
        ("Events per second:", format!("{:.1}", s.events_per_second)),
        ("Queue depth:", s.queue_depth.to_string()),
        ("Allowed:", s.allowed.to_string()),
        ("Denied:", s.denied.to_string()),
        ("Permissive denials:", s.permissive_denials.to_string()),
        ("Overload answers:", s.overloaded.to_string()),
        ("Tracked processes:", s.tracked_processes.to_string()),
        ("Ignore marks:", s.ignore_marks.to_string()),
        ("Decided without the path:", s.decided_without_path.to_string()),
        ("Supervised opens:", if s.supervised_opens { "on" } else { "off" }.into()),
        ("AVC lookups/hits/misses:", format!("{} {} {}", s.avc_lookups, s.avc_hits, s.avc_misses)),
    ];
    let mut out: String = rows.iter().map(|(k, v)| format!("{k:<32}{v}\n")).collect();
    if let Some(a) = &s.apparmor {
        for (k, v) in [
            ("AppArmor profiles:", format!("{} from {} (enforced under rampart run --apparmor)", a.profiles, a.dir)),
            (
                "AppArmor modes:",
                format!("{} enforce, {} complain, {} kill, {} unconfined", a.enforce, a.complain, a.kill, a.unconfined),
            ),
            ("AppArmor files:", format!("{} failed to compile, {} disabled", a.failed_files, a.disabled_files)),
        ] {
            out.push_str(&format!("{k:<32}{v}\n"));
        }
    }
    out
}
