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
