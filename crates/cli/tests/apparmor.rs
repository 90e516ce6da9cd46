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

/// `status`, `complain` and `enforce` on a copy of /etc/apparmor.d
/// (apparmor-profiles): the profiles listed are those `apparmor_parser
/// -N` lists (with hats), and a mode set by name, by program or by file
/// shows in the next `status`.
#[test]
#[ignore = "needs apparmor_parser and /etc/apparmor.d"]
fn status_complain_and_enforce() {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-aa-dir-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let dir = root.join("apparmor.d");
    assert!(Command::new("cp").arg("-a").arg("/etc/apparmor.d").arg(&dir).status().unwrap().success());
    std::os::unix::fs::symlink("../usr.sbin.nscd", dir.join("disable/usr.sbin.nscd")).unwrap();
    let (d, cache) = (dir.to_str().unwrap(), root.join("cache"));
    let common = ["--profiles", d, "--cache", cache.to_str().unwrap(), "--socket", "/nonexistent/rampart.sock"];
    let status = || {
        let (code, out, err) = rampart(&[&["apparmor", "status"][..], &common[..]].concat(), &[], "");
        assert_eq!(code, 0, "{err}");
        // mode -> names
        let mut modes: Vec<(String, Vec<String>)> = Vec::new();
        for line in out.lines().skip(1) {
            match line.strip_prefix("   ") {
                Some(name) => modes.last_mut().unwrap().1.push(name.to_owned()),
                None => modes.push((line.to_owned(), Vec::new())),
            }
        }
        (out, modes)
    };
    let (out, modes) = status();
    let names: std::collections::BTreeSet<String> =
        modes.iter().take(4).flat_map(|(_, n)| n.iter().filter(|n| !n.contains("//^")).cloned()).collect();
    let n = Command::new("/sbin/apparmor_parser").args(["-N", "-I", d, "--base", d, d]).output().unwrap();
    let want: std::collections::BTreeSet<String> =
        String::from_utf8(n.stdout).unwrap().lines().map(str::to_owned).collect();
    assert_eq!(names, want, "{out}");
    assert!(
        out.starts_with(&format!(
            "{} profiles are loaded (from {d}).\n",
            modes.iter().take(4).map(|m| m.1.len()).sum::<usize>()
        )),
        "{out}"
    );
    assert!(out.contains(&format!("1 profile files are disabled.\n   {d}/usr.sbin.nscd\n")), "{out}");
    let in_mode = |modes: &[(String, Vec<String>)], mode: &str, name: &str| {
        modes.iter().find(|(h, _)| h.ends_with(&format!("in {mode} mode."))).unwrap().1.iter().any(|n| n == name)
    };
    assert!(in_mode(&modes, "enforce", "lsb_release") && in_mode(&modes, "complain", "ping"));

    // by profile name, by program (ping attaches to /usr/bin/ping), by
    // file name
    for (args, said) in [
        (["complain", "man_groff"], "Setting man_groff to complain mode.\n"),
        (["enforce", "/usr/bin/ping"], "Setting ping to enforce mode.\n"),
        (["complain", "lsb_release"], &*format!("Setting {d}/lsb_release to complain mode.\n")),
    ] {
        let (code, out, err) = rampart(&[&["apparmor"][..], &args[..], &common[..]].concat(), &[], "");
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(out.starts_with(said), "{args:?}: {out}");
        assert!(out.contains("No rampartd listening at /nonexistent/rampart.sock"), "{out}");
    }
    let (_, modes) = status();
    assert!(in_mode(&modes, "complain", "lsb_release") && in_mode(&modes, "enforce", "ping"));
    // one profile of usr.bin.man's three
    assert!(in_mode(&modes, "enforce", "/usr/bin/man") && in_mode(&modes, "complain", "man_groff"));

    // enforce by file name removes the disable/ link (as aa-enforce)
    let (code, _, err) = rampart(&[&["apparmor", "enforce", "usr.sbin.nscd"][..], &common[..]].concat(), &[], "");
    assert_eq!(code, 0, "{err}");
    let (out, modes) = status();
    assert!(out.contains("0 profile files are disabled.") && in_mode(&modes, "enforce", "nscd"), "{out}");

    let (code, out, err) = rampart(&[&["apparmor", "complain", "no_such_profile"][..], &common[..]].concat(), &[], "");
    assert_eq!(code, 2);
    assert!(out.is_empty() && err.contains("no_such_profile: no profile file, profile or program"), "{err}");
    let _ = std::fs::remove_dir_all(&root);
}
