//! `aa-complain` / `aa-enforce` (issue 11, item 5): every shipped profile
//! (/etc/apparmor.d and /usr/share/apparmor/extra-profiles) and a file of
//! unusual headers put in complain mode, then in enforce mode, by
//! Rampart and by python3-apparmor's `set_complain`/`set_enforce` (what
//! the tools call), in two copies of the directory: the files and the
//! `disable/`, `force-complain/` links must end up the same.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

use rampart_apparmor::profile_flags::{set_mode_in_file, ModeChange};

/// python3-apparmor on DIR MODE [FILE PROGRAM|-]...
const TOOL: &str = r#"
import sys
import apparmor.aa as aa
aa.profile_dir = sys.argv[1]
args = sys.argv[3:]
for file, program in zip(args[::2], args[1::2]):
    program = None if program == '-' else program
    (aa.set_complain if sys.argv[2] == 'complain' else aa.set_enforce)(file, program)
"#;

const ODD: &str = "\
# headers in every form the expressions know
abi <abi/3.0>,
include <tunables/global>
/usr/bin/plain {
}
  /usr/bin/flagged   flags=(audit,complain)   {   # comment
  ^hat_a flags=(kill) {
  }
  ^hat_b {
  }
  hat hat_c flags=(complain, audit) {
  }
}
profile \"with space\" /usr/bin/x flags=(enforce) {
}
profile named {
}
\tprofile tabbed @{HOME}/bin/t xattrs=(user.x=y) flags=(unconfined) {
}
profile quoted \"/opt/a b/c\" {
}
";

fn copy_tree(from: &Path, to: &Path) {
    assert!(Command::new("cp").arg("-a").arg(from).arg(to).status().unwrap().success());
}

fn profile_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .filter(|p| p.file_name().unwrap() != "README")
        .collect();
    v.sort();
    v
}

fn python(dir: &Path, mode: &str, jobs: &[(PathBuf, Option<&str>)]) {
    let mut c = Command::new("/usr/bin/python3");
    c.args(["-c", TOOL]).arg(dir).arg(mode);
    for (f, p) in jobs {
        c.arg(f).arg(p.unwrap_or("-"));
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "python3-apparmor (scripts/install-deps.sh): {}", String::from_utf8_lossy(&o.stderr));
}

fn same_trees(a: &Path, b: &Path) {
    let o = Command::new("diff").arg("-r").arg("--no-dereference").arg(a).arg(b).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
}

#[test]
#[ignore = "needs python3-apparmor and the shipped profiles (apparmor-profiles)"]
fn modes_are_set_as_aa_complain_and_aa_enforce_set_them() {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("aa-flags-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let base = root.join("base");
    copy_tree(Path::new("/etc/apparmor.d"), &base);
    for f in profile_files(Path::new("/usr/share/apparmor/extra-profiles")) {
        std::fs::copy(&f, base.join(format!("extra.{}", f.file_name().unwrap().to_string_lossy()))).unwrap();
    }
    std::fs::write(base.join("odd"), ODD).unwrap();
    // links the tools remove
    std::os::unix::fs::symlink("../usr.sbin.nscd", base.join("disable/usr.sbin.nscd")).unwrap();
    std::os::unix::fs::symlink("../bin.ping", base.join("force-complain/bin.ping")).unwrap();
    let (ours, theirs) = (root.join("ours"), root.join("theirs"));
    copy_tree(&base, &ours);
    copy_tree(&base, &theirs);
    let names = profile_files(&base);
    assert!(names.len() > 100, "{}", names.len());

    for (mode, change) in [("complain", ModeChange::Complain), ("enforce", ModeChange::Enforce)] {
        let mut jobs = Vec::new();
        for f in &names {
            let name = f.file_name().unwrap();
            let (o, t) = (ours.join(name), theirs.join(name));
            // files python3-apparmor cannot read either (not profiles)
            match set_mode_in_file(&ours, &o, None, change) {
                Ok(()) => jobs.push((t, None)),
                Err(e) => eprintln!("skipped: {e}"),
            }
        }
        assert!(jobs.len() > 100);
        python(&theirs, mode, &jobs);
        same_trees(&ours, &theirs);
    }

    // one profile of a file, by name (hats follow)
    let odd = |d: &Path| d.join("odd");
    set_mode_in_file(&ours, &odd(&ours), Some("/usr/bin/flagged"), ModeChange::Complain).unwrap();
    set_mode_in_file(&ours, &odd(&ours), Some("named"), ModeChange::Complain).unwrap();
    python(&theirs, "complain", &[(odd(&theirs), Some("/usr/bin/flagged")), (odd(&theirs), Some("named"))]);
    same_trees(&ours, &theirs);
    let text = std::fs::read_to_string(odd(&ours)).unwrap();
    assert!(text.contains("profile named flags=(complain) {"), "{text}");

    let e = set_mode_in_file(&ours, &odd(&ours), Some("absent"), ModeChange::Complain).unwrap_err();
    assert!(e.contains("absent") && e.contains("odd"), "{e}");
}
