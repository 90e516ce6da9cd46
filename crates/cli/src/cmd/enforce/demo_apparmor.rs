//! `rampart demo`'s AppArmor part: lighttpd's shipped profile
//! (`usr.sbin.lighttpd`, from the apparmor-profiles package), compiled by
//! `apparmor_parser` as the daemon loads any profile directory, confining
//! a process on the demo tmpfs, stacked on the SELinux domain `httpd_t`.
//!
//! The profile reads web content by path (`abstractions/web-data`:
//! `/srv/www/htdocs/** r`), so the demo's `www` directory is bound at
//! `/srv/www/htdocs`, on a tmpfs mounted over `/srv` in the demo's private
//! mount namespace (nothing outside it sees either). The same inode is then
//! allowed under one name and denied under the other: AppArmor decides by
//! path, SELinux by label, and an access happens only if both allow it.
//!
//! Missing pieces (no `/srv`, no apparmor_parser, no shipped profile) skip
//! this part with a note; the SELinux demo runs regardless.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rampart_enforce::private_mounts;

use super::demo::{err, step, write_labeled};
use crate::error::CliError;

/// The shipped profile and its name (it is named by the path it attaches to).
const SHIPPED: &str = "/usr/share/apparmor/extra-profiles/usr.sbin.lighttpd";
const PROFILE: &str = "/usr/sbin/lighttpd";
/// What the profile's includes need, from the system's profile directory.
const INCLUDES: [&str; 3] = ["abstractions", "tunables", "abi"];
const PARSER: &str = "/sbin/apparmor_parser";
const SRV: &str = "/srv";
const HTTPD: &str = "system_u:system_r:httpd_t:s0";
const SHADOW: &str = "system_u:object_r:shadow_t:s0";

/// The profile directory and where the web content is seen by the profile.
pub struct Stage {
    profiles: PathBuf,
    cache: PathBuf,
    htdocs: PathBuf,
}

/// Why the AppArmor part cannot run here, if it cannot.
fn missing() -> Option<String> {
    let needed = [(SHIPPED, "apparmor-profiles"), (PARSER, "apparmor"), (SRV, "the /srv directory")];
    let absent: Vec<&str> = needed.iter().filter(|(p, _)| !Path::new(p).exists()).map(|(_, what)| *what).collect();
    (!absent.is_empty()).then(|| absent.join(", "))
}

/// Mounts the stage: a tmpfs over /srv holding the profile directory and
/// its cache, and the demo's `www` bound at /srv/www/htdocs (with a
/// shadow file placed among the content). `None` (with a note) when the
/// system lacks what it needs.
pub fn prepare(www: &Path) -> Result<Option<Stage>, CliError> {
    if let Some(what) = missing() {
        println!("# AppArmor part skipped: missing {what} (scripts/install-deps.sh installs them)");
        return Ok(None);
    }
    write_labeled(&www.join("leaked-shadow"), b"root:$6$not-a-real-hash:19000:0:99999:7:::\n", SHADOW, 0o644)?;
    let srv = Path::new(SRV);
    private_mounts::mount_tmpfs("rampart-demo-srv", srv, "size=16m").map_err(err("mounting a tmpfs on /srv"))?;
    let stage = Stage {
        profiles: srv.join("apparmor/profiles"),
        cache: srv.join("apparmor/cache"),
        htdocs: srv.join("www/htdocs"),
    };
    for d in [&stage.profiles, &stage.cache, &stage.htdocs] {
        fs::create_dir_all(d).map_err(err("creating the AppArmor stage"))?;
    }
    fs::copy(SHIPPED, stage.profiles.join("usr.sbin.lighttpd")).map_err(err("copying the shipped profile"))?;
    for include in INCLUDES {
        std::os::unix::fs::symlink(Path::new("/etc/apparmor.d").join(include), stage.profiles.join(include))
            .map_err(err("linking the profile's includes"))?;
    }
    private_mounts::mount(&www.to_string_lossy(), &stage.htdocs, None, libc::MS_BIND, None)
        .map_err(err("binding the web content at /srv/www/htdocs"))?;
    Ok(Some(stage))
}

/// The daemon's flags for the stage's profiles.
pub fn daemon_args(stage: &Stage) -> [OsString; 4] {
    ["--apparmor".into(), stage.profiles.clone().into(), "--apparmor-cache".into(), stage.cache.clone().into()]
}

/// The scenes: `cat` under lighttpd's profile and `httpd_t` (`--force`:
/// root in the default domain may start any domain, like runcon).
pub fn scenes(stage: &Stage, exe: &Path, socket: &Path, www: &Path, shadow: &Path) {
    // `rampart run` of `program` under the profile and httpd_t.
    let launch = |program: &[OsString]| -> Vec<OsString> {
        let mut args: Vec<OsString> = ["run", "--socket"].map(OsString::from).into();
        args.push(socket.into());
        args.extend(["--force", "--context", HTTPD, "--apparmor", PROFILE, "--"].map(OsString::from));
        args.extend_from_slice(program);
        args
    };
    let cat = |file: &Path| launch(&["/bin/cat".into(), file.into()]);
    let htdocs = |name: &str| stage.htdocs.join(name);
    let scenes: [(&str, PathBuf); 4] = [
        ("under lighttpd's shipped AppArmor profile and httpd_t, cat reads /srv/www/htdocs/index.html: both allow (abstractions/web-data: /srv/www/htdocs/** r)", htdocs("index.html")),
        ("the same file by its other name, on the demo tmpfs: SELinux allows (its label), AppArmor denies (no rule for that path)", www.join("index.html")),
        ("a shadow_t file among the web content: AppArmor allows (its path), SELinux denies (its label)", htdocs("leaked-shadow")),
        ("the shadow file: both deny, each module logs its own denial", shadow.to_path_buf()),
    ];
    for (title, file) in scenes {
        let args = cat(&file);
        step(title, exe, &args.iter().map(OsString::as_os_str).collect::<Vec<_>>());
    }
    // A process that stays under the profile while aa-status looks.
    let sleeper = launch(&["/bin/sleep".into(), "30".into()]);
    let sleeping = Command::new(exe).args(&sleeper).stdout(Stdio::null()).stderr(Stdio::null()).spawn();
    if let Ok(child) = &sleeping {
        wait_for_exe(child.id(), Path::new("/usr/bin/sleep"));
    }
    let mut status: Vec<OsString> = ["apparmor", "status", "--socket"].map(OsString::from).into();
    status.extend([socket.into(), "--profiles".into(), stage.profiles.clone().into()]);
    status.extend(["--cache".into(), stage.cache.clone().into()]);
    step(
        "AppArmor's view, like aa-status, while sleep runs under the profile",
        exe,
        &status.iter().map(OsString::as_os_str).collect::<Vec<_>>(),
    );
    if let Ok(mut child) = sleeping {
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// Waits (at most 5 s) until process `pid` runs `program`.
fn wait_for_exe(pid: u32, program: &Path) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|p| p == program) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Unmounts the stage.
pub fn remove(stage: &Stage) {
    let _ = private_mounts::detach(&stage.htdocs);
    let _ = private_mounts::detach(Path::new(SRV));
}
