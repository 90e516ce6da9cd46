//! `rampart demo`: enforcement on real processes, end to end, touching
//! nothing outside a tmpfs it creates in a private mount namespace.
//!
//! The scene: a tmpfs labeled like a small web server (content, an
//! executable, a shadow file, an init script interpreter). `rampart run`
//! starts the init script interpreter in `initrc_t` (the policy's
//! transition from `unconfined_t`, checked, as `run_init` would), which
//! drops to www-data and starts the web server binary (`httpd_exec_t`:
//! the policy moves it to `httpd_t`). The web server may read its content
//! and may not read the shadow file. The same interpreter run directly by
//! an unconfined shell is refused: a confined domain is entered only
//! through the launcher, whose sandbox holds what fanotify cannot see
//! (docs/security.md). `rampart run` then asks for `httpd_t` directly,
//! which the policy refuses to an unconfined shell (no `process
//! transition`), exactly as `runcon` would fail. Then AppArmor, stacked:
//! a shipped profile confines a process in `httpd_t` (demo_apparmor.rs).

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rampart_enforce::private_mounts;
use rampart_enforce::Client;

use super::demo_apparmor;
use crate::error::CliError;

const CONTENT: &str = "system_u:object_r:httpd_sys_content_t:s0";
const SHADOW: &str = "system_u:object_r:shadow_t:s0";
const HTTPD_EXEC: &str = "system_u:object_r:httpd_exec_t:s0";
const INITRC_EXEC: &str = "system_u:object_r:initrc_exec_t:s0";
const INITRC: &str = "system_u:system_r:initrc_t:s0";
const HTTPD: &str = "system_u:system_r:httpd_t:s0";

pub(super) fn err(what: &str) -> impl Fn(io::Error) -> CliError + '_ {
    move |e| CliError::input(format!("demo: {what}: {e}"))
}

pub(super) fn write_labeled(path: &Path, contents: &[u8], context: &str, mode: u32) -> Result<(), CliError> {
    fs::write(path, contents).map_err(err("writing the demo files"))?;
    fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(mode)).map_err(err("chmod"))?;
    rampart_label::set_label(path, context).map_err(err("labeling the demo files"))
}

struct Scene {
    dir: PathBuf,
    socket: PathBuf,
    log: PathBuf,
}

impl Scene {
    fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    fn build(&self) -> Result<(), CliError> {
        for d in ["www", "etc", "bin", "run"] {
            fs::create_dir(self.path(d)).map_err(err("creating the demo tree"))?;
        }
        write_labeled(&self.path("www/index.html"), b"<h1>hello from httpd_t</h1>\n", CONTENT, 0o644)?;
        // World-readable: the policy, not the mode, keeps httpd from it.
        write_labeled(&self.path("etc/shadow"), b"root:$6$not-a-real-hash:19000:0:99999:7:::\n", SHADOW, 0o644)?;
        let cat = fs::read("/bin/cat").map_err(err("reading /bin/cat"))?;
        write_labeled(&self.path("bin/httpd"), &cat, HTTPD_EXEC, 0o755)?;
        let sh = fs::read("/bin/sh").map_err(err("reading /bin/sh"))?;
        write_labeled(&self.path("bin/rc"), &sh, INITRC_EXEC, 0o755)
    }
}

fn start_daemon(scene: &Scene, extra: &[OsString]) -> Result<Child, CliError> {
    let exe = std::env::current_exe().map_err(err("finding the rampart binary"))?;
    let stderr = fs::File::create(scene.path("run/rampartd.log")).map_err(err("creating the daemon log"))?;
    let mut child = Command::new(exe)
        .arg("daemon")
        .arg("--mark")
        .arg(&scene.dir)
        .arg("--socket")
        .arg(&scene.socket)
        .arg("--audit-log")
        .arg(&scene.log)
        .args(extra)
        .stdin(Stdio::null())
        .stderr(stderr)
        .spawn()
        .map_err(err("starting rampart daemon"))?;
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if Client::connect(&scene.socket).is_ok() {
            return Ok(child);
        }
        if let Ok(Some(status)) = child.try_wait() {
            let log = fs::read_to_string(scene.path("run/rampartd.log")).unwrap_or_default();
            return Err(CliError::input(format!("demo: rampart daemon exited ({status}):\n{log}")));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    stop_daemon(&mut child);
    Err(CliError::input("demo: rampart daemon did not open its control socket within 20 s"))
}

fn stop_daemon(child: &mut Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill takes plain integers; `pid` is our own child.
        unsafe { libc::kill(pid, libc::SIGTERM) };
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The arguments as `step` takes them.
fn refs(args: &[OsString]) -> Vec<&OsStr> {
    args.iter().map(OsString::as_os_str).collect()
}

/// Runs one step, printing the command, its output and its status.
pub(super) fn step(title: &str, program: &Path, args: &[&OsStr]) {
    println!("\n## {title}");
    let shown: Vec<String> = args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    println!("$ {} {}", program.display(), shown.join(" "));
    match Command::new(program).args(args).output() {
        Ok(out) => {
            print!("{}", String::from_utf8_lossy(&out.stdout));
            print!("{}", String::from_utf8_lossy(&out.stderr));
            println!("(exit status {})", out.status.code().map_or("signal".to_owned(), |c| c.to_string()));
        }
        Err(e) => println!("(could not run: {e})"),
    }
}

fn scenes(scene: &Scene) -> Result<(), CliError> {
    let exe = std::env::current_exe().map_err(err("finding the rampart binary"))?;
    let rc = scene.path("bin/rc");
    let httpd = scene.path("bin/httpd");
    let index = scene.path("www/index.html");
    let shadow = scene.path("etc/shadow");
    // The init script: as www-data (no capability left that httpd_t
    // lacks), start httpd.
    let serve = |file: &Path| {
        format!("exec setpriv --reuid=33 --regid=33 --clear-groups {} {}", httpd.display(), file.display())
    };
    let init = |file: &Path| -> Vec<OsString> {
        let mut args: Vec<OsString> = ["run", "--socket"].map(OsString::from).into();
        args.extend([scene.socket.clone().into(), "--context".into(), INITRC.into(), "--".into(), rc.clone().into()]);
        args.extend(["-c".into(), serve(file).into()]);
        args
    };
    step(
        "rampart run starts the init script interpreter in initrc_t; as www-data it starts httpd (httpd_t); httpd reads its content: allowed",
        &exe,
        &refs(&init(&index)),
    );
    step("the same httpd reads the shadow file: denied", &exe, &refs(&init(&shadow)));
    step(
        "an unconfined shell runs the init script interpreter directly: refused (a confined domain is entered only through rampart run, whose sandbox holds what fanotify cannot see)",
        &rc,
        &["-c".as_ref(), serve(&index).as_ref()],
    );
    step(
        "an unconfined shell reads the shadow file: allowed (unconfined_t)",
        Path::new("/bin/cat"),
        &[shadow.as_ref()],
    );
    step(
        "rampart run into httpd_t directly: the policy has no process transition from unconfined_t (like runcon)",
        &exe,
        &[
            "run".as_ref(),
            "--socket".as_ref(),
            scene.socket.as_ref(),
            "--context".as_ref(),
            HTTPD.as_ref(),
            "--".as_ref(),
            httpd.as_ref(),
            index.as_ref(),
        ],
    );
    step("statistics", &exe, &["status".as_ref(), "--socket".as_ref(), scene.socket.as_ref()]);
    Ok(())
}

/// Runs the demo; exit status 0 when every scene behaved as the policy says.
pub fn run() -> Result<u8, CliError> {
    // SAFETY: geteuid has no arguments and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Err(CliError::input("demo: run as root (it mounts a tmpfs and listens to fanotify)"));
    }
    // A private mount namespace, so the tmpfs and the marks on it are
    // invisible to (and cannot affect) the rest of the machine.
    private_mounts::enter_private_namespace().map_err(err("entering a private mount namespace"))?;
    let dir = std::env::temp_dir().join(format!("rampart-demo.{}", std::process::id()));
    fs::create_dir_all(&dir).map_err(err("creating the demo directory"))?;
    private_mounts::mount_tmpfs("rampart-demo", &dir, "size=64m").map_err(err("mounting its tmpfs"))?;
    let scene = Scene { socket: dir.join("run/rampartd.sock"), log: dir.join("run/audit.log"), dir: dir.clone() };
    let result = (|| {
        scene.build()?;
        println!("# rampart demo: a labeled tmpfs at {} (private mount namespace)", dir.display());
        let stage = demo_apparmor::prepare(&scene.path("www"))?;
        let extra = stage.as_ref().map(demo_apparmor::daemon_args).map(Vec::from).unwrap_or_default();
        let mut daemon = start_daemon(&scene, &extra)?;
        let outcome = scenes(&scene).and_then(|()| {
            let Some(stage) = &stage else { return Ok(()) };
            let exe = std::env::current_exe().map_err(err("finding the rampart binary"))?;
            let (www, shadow) = (scene.path("www"), scene.path("etc/shadow"));
            demo_apparmor::scenes(stage, &exe, &scene.socket, &www, &shadow);
            Ok(())
        });
        stop_daemon(&mut daemon);
        if let Some(stage) = &stage {
            demo_apparmor::remove(stage);
        }
        outcome?;
        println!(
            "\n## audit log ({}): kernel AVC lines (readable by audit2allow) and AppArmor records (aa-logprof)",
            scene.log.display()
        );
        print!("{}", fs::read_to_string(&scene.log).unwrap_or_default());
        println!("\n## daemon log");
        print!("{}", fs::read_to_string(scene.path("run/rampartd.log")).unwrap_or_default());
        Ok(())
    })();
    let _ = private_mounts::detach(&dir);
    let _ = fs::remove_dir(&dir);
    result.map(|()| 0)
}
