//! Bad configurations: every error names the file and line (or the
//! path) and says what to do; where libselinux rejects the same input,
//! the oracle confirms it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use rampart_label::{FileContexts, LabelError, SpecFiles};

const OK: &str = "/.* system_u:object_r:default_t:s0\n";

fn policy() -> rampart_policy::Policy {
    common::system_policy()
}

struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("rampart-label-bad-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }

    fn file(&self, name: &str, text: &[u8]) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn load(base: &Path) -> Result<FileContexts, LabelError> {
    FileContexts::load(&SpecFiles::from_base(base), &policy())
}

/// Whether libselinux's `selabel_open` accepts the configuration.
fn libselinux_opens(base: &Path) -> bool {
    Command::new(common::oracle_path())
        .arg("--path")
        .arg(base)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap()
        .success()
}

/// Loads `text` as line 2 (after a valid line 1) and checks the error.
fn bad_line(tag: &str, line: &[u8], expect: &[&str], libselinux_rejects: bool) -> String {
    let dir = Dir::new(tag);
    let mut text = OK.as_bytes().to_vec();
    text.extend_from_slice(line);
    text.push(b'\n');
    let base = dir.file("file_contexts", &text);
    let err = load(&base).unwrap_err();
    let msg = err.to_string();
    let at = format!("{}:2:", base.display());
    assert!(msg.starts_with(&at), "error does not start with {at}: {msg}");
    for e in expect {
        assert!(msg.contains(e), "error lacks `{e}`: {msg}");
    }
    if libselinux_rejects {
        assert!(!libselinux_opens(&base), "libselinux accepts {:?}", String::from_utf8_lossy(line));
    }
    println!("{tag}: {msg}");
    msg
}

#[test]
#[ignore = "needs the system policy: validates the contexts"]
fn malformed_lines_name_file_and_line() {
    bad_line("missing", b"/only-a-regex", &["line is missing fields", "REGEX [TYPE] CONTEXT"], true);
    bad_line("type", b"/a -x system_u:object_r:etc_t:s0", &["invalid file type `-x`", "-d -l"], true);
    bad_line("type2", b"/a --- system_u:object_r:etc_t:s0", &["invalid file type `---`"], true);
    bad_line("ascii", "/caf\u{e9} system_u:object_r:etc_t:s0".as_bytes(), &["non-ASCII"], true);
}

#[test]
#[ignore = "needs the system policy: validates the contexts"]
fn invalid_regexes_name_file_and_line() {
    bad_line(
        "paren",
        b"/a(b system_u:object_r:etc_t:s0",
        &["invalid regex `/a(b`", "missing closing parenthesis"],
        false,
    );
    bad_line("close", b"/a)b system_u:object_r:etc_t:s0", &["unmatched closing parenthesis"], false);
    bad_line("class", b"/a[b system_u:object_r:etc_t:s0", &["missing terminating ]"], false);
    bad_line("range", b"/a[z-a] system_u:object_r:etc_t:s0", &["range out of order"], false);
    bad_line("quant", b"/a|*x system_u:object_r:etc_t:s0", &["quantifier does not follow"], false);
    bad_line("escape", b"/a\\y system_u:object_r:etc_t:s0", &["unrecognized character follows"], false);
    bad_line("backref", b"/(a)\\1 system_u:object_r:etc_t:s0", &["not supported"], false);
    bad_line("dollar", b"/a$b system_u:object_r:etc_t:s0", &["`$`", "not supported"], false);
    bad_line("look", b"/a(?=b) system_u:object_r:etc_t:s0", &["not supported"], false);
}

#[test]
#[ignore = "needs the system policy: validates the contexts"]
fn invalid_contexts_name_file_and_line() {
    let msg = bad_line("ctx", b"/a system_u:object_r:no_such_t:s0", &["`no_such_t` is not defined", "<<none>>"], false);
    assert!(msg.contains("invalid context `system_u:object_r:no_such_t:s0`"), "{msg}");
    bad_line("role", b"/a system_u:bogus_r:etc_t:s0", &["bogus_r"], false);
    bad_line("mls", b"/a system_u:object_r:etc_t", &["MLS"], false);
    // <<none>> is never validated.
    let dir = Dir::new("none");
    let base = dir.file("file_contexts", format!("{OK}/x <<none>>\n/y -d <<none>>\n").as_bytes());
    let fc = load(&base).unwrap();
    assert!(matches!(fc.lookup(b"/x", None), rampart_label::Lookup::Excluded(_)));
    // Unvalidated loading accepts contexts the policy does not know.
    let base = dir.file("other", b"/z user_u:whatever_r:nope_t\n");
    let fc = FileContexts::load_unvalidated(&SpecFiles::from_base(&base)).unwrap();
    assert_eq!(fc.lookup(b"/z", None).context(), Some("user_u:whatever_r:nope_t"));
}

#[test]
#[ignore = "needs the system policy: validates the contexts"]
fn errors_in_later_files_name_them() {
    let dir = Dir::new("later");
    let base = dir.file("file_contexts", OK.as_bytes());
    dir.file("file_contexts.homedirs", b"# c\n\n/home/[^/]+/x -q user_u:object_r:user_home_t:s0\n");
    let msg = load(&base).unwrap_err().to_string();
    assert!(msg.starts_with(&format!("{}.homedirs:3: invalid file type `-q`", base.display())), "{msg}");
    dir.file("file_contexts.homedirs", OK.as_bytes());
    dir.file("file_contexts.local", b"/l system_u:object_r:etc_t:s0\n/m(\tsystem_u:object_r:etc_t:s0\n");
    let msg = load(&base).unwrap_err().to_string();
    assert!(msg.starts_with(&format!("{}.local:2: invalid regex `/m(`", base.display())), "{msg}");
}

#[test]
#[ignore = "needs the system policy: validates the contexts"]
fn unreadable_files_are_named() {
    let dir = Dir::new("io");
    let missing = dir.0.join("nope");
    let msg = load(&missing).unwrap_err().to_string();
    assert!(msg.starts_with(&format!("cannot read `{}`", missing.display())), "{msg}");
    assert!(msg.contains("No such file"), "{msg}");
    assert!(msg.contains("check that it exists and is readable"), "{msg}");
    // A directory where a file should be: EISDIR.
    let base = dir.file("file_contexts", OK.as_bytes());
    std::fs::create_dir(dir.0.join("file_contexts.homedirs")).unwrap();
    let msg = load(&base).unwrap_err().to_string();
    assert!(msg.starts_with(&format!("cannot read `{}.homedirs`", base.display())), "{msg}");
    // A compiled file.
    let bin = dir.file("fc.bin", &[0x8a, 0xff, 0x7c, 0xf9, 5, 0, 0, 0]);
    let msg = load(&bin).unwrap_err().to_string();
    assert!(msg.contains("compiled file_contexts.bin") && msg.contains(&bin.display().to_string()), "{msg}");
    // Missing optional files and subs files are fine.
    std::fs::remove_dir(dir.0.join("file_contexts.homedirs")).unwrap();
    assert!(load(&base).is_ok());
}
