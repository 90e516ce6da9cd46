//! What the AppArmor tests share: compiling a profile with the
//! ecosystem's own compiler (installed by scripts/install-deps.sh).

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

/// `apparmor_parser -Q -K --skip-cache -o OUT [EXTRA...] SRC`; fails the
/// test, with the parser's message, unless it succeeds.
pub fn apparmor_parser(src: &Path, out: &Path, extra: &[&OsStr]) {
    let o = Command::new("/sbin/apparmor_parser")
        .args(["-Q", "-K", "--skip-cache", "-o"])
        .arg(out)
        .args(extra)
        .arg(src)
        .output()
        .expect("apparmor_parser: run scripts/install-deps.sh");
    assert!(o.status.success(), "{}: {}", src.display(), String::from_utf8_lossy(&o.stderr));
}

/// `tests/data/NAME` compiled into `dir` for AppArmor 3.0's features
/// (the 3.0 ABI file: signal and ptrace mediation, which the parser's
/// fallback set lacks), and loaded.
#[allow(dead_code)] // only the tests of signal and ptrace rules use it
pub fn with_ipc_rules(name: &str, dir: &Path) -> rampart_apparmor::Policy {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name);
    std::fs::create_dir_all(dir).expect("the output directory");
    let out = dir.join(format!("{name}.bin"));
    let features = [OsStr::new("--features-file"), OsStr::new("/etc/apparmor.d/abi/3.0")];
    apparmor_parser(&src, &out, &features);
    rampart_apparmor::Policy::from_files(&[&out]).expect("the compiled profiles load")
}
