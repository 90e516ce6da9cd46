//! `rampart apparmor`: the command-line contract (issue 10). Profiles
//! are compiled by apparmor_parser (scripts/install-deps.sh); expected
//! lines are written from apparmor.d(5), as in crates/apparmor's
//! semantics test.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn compile(dir: &Path, name: &str, text: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let src = dir.join(name);
    std::fs::write(&src, text).unwrap();
    let out = dir.join(format!("{name}.bin"));
    let o = Command::new("/sbin/apparmor_parser")
        .args(["-Q", "-K", "--skip-cache", "-o"])
        .arg(&out)
        .arg(&src)
        .output()
        .expect("apparmor_parser: run scripts/install-deps.sh");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

fn rampart(args: &[&str], files: &[&Path], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rampart"))
        .args(args)
        .args(files)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    (o.status.code().unwrap_or(-1), String::from_utf8(o.stdout).unwrap(), String::from_utf8(o.stderr).unwrap())
}

#[test]
#[ignore = "needs apparmor_parser: compiles the profiles"]
fn check_attach_and_info() {
    let dir = std::env::temp_dir().join(format!("rampart-cli-aa-{}", std::process::id()));
    let a = compile(&dir, "a", "profile web /usr/bin/web {\n  /srv/** r,\n  owner /home/*/ rw,\n  deny /srv/secret r,\n  /usr/bin/helper Px,\n}\nprofile helper /usr/bin/helper flags=(complain) {\n}\n");
    let input = "web\t/srv/www/index.html\tr\n\
                 web\t/srv/secret\tr\n\
                 web\t/home/u/\tw\towner=0\n\
                 web\t/home/u/\tw\n\
                 web\t/usr/bin/helper\tx\n\
                 helper\t/etc/shadow\tr\n\
                 bogus line\n";
    let (code, out, err) = rampart(&["apparmor", "check", "--batch"], &[&a], input);
    assert_eq!(code, 0, "{err}");
    let want = "allow\tr\taudit=-,quiet=-,log=NONE\t-\n\
                deny\t-\taudit=-,quiet=r,log=NONE\t-\n\
                deny\t-\taudit=-,quiet=-,log=DENIED:w:w\t-\n\
                allow\trwa\taudit=-,quiet=-,log=NONE\t-\n\
                allow\tx\taudit=-,quiet=-,log=NONE|x:NONE\tPx;target=helper;info=-;scrub=1\n\
                allow\t-\taudit=-,quiet=-,log=ALLOWED:r:r\t-\n";
    let (head, last) = out.rsplit_once("error\t").unwrap();
    assert_eq!(head, want);
    assert!(last.ends_with('\n'));

    let (code, out, _) = rampart(&["apparmor", "attach", "--batch"], &[&a], "/usr/bin/web\n/usr/bin/other\n");
    assert_eq!(code, 0);
    assert_eq!(out, "web\t-\nunconfined\t-\n");

    let (code, out, _) = rampart(&["apparmor", "info"], &[&a], "");
    assert_eq!(code, 0);
    assert!(out.starts_with("2 profiles loaded\n"), "{out}");
    assert!(out.contains("\tweb\tenforce\t") && out.contains("\thelper\tcomplain\t"), "{out}");

    // a file that is not a policy: status 2 and the offset
    let junk = dir.join("junk");
    std::fs::write(&junk, b"not a policy").unwrap();
    let (code, _, err) = rampart(&["apparmor", "info"], &[&junk], "");
    assert_eq!(code, 2);
    assert!(err.contains("byte offset 0"), "{err}");
    let (code, _, err) = rampart(&["apparmor", "check"], &[&a], "");
    assert_eq!(code, 2, "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
