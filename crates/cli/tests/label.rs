//! `rampart label`, `label --batch`, `getlabel` and `relabel`.
//!
//! - `label PATH...` against libselinux (`selabel-oracle` from
//!   rampart-oracle, and the real `matchpathcon` byte for byte when it
//!   is installed) on a few hundred paths: real files of this machine,
//!   paths made from the system file_contexts' own regexes, non-UTF-8
//!   bytes, newlines, tabs, trailing and doubled slashes, missing files,
//!   with their lstat type and with every `--type`;
//! - `label --batch` against the oracle on the same paths, every type
//!   and no type, error lines kept in place, answers without closing
//!   stdin;
//! - `getlabel` and `relabel` on a tmpfs tree in a private mount
//!   namespace: the test re-executes itself under `unshare -m
//!   --propagation private` (root only), mounts a tmpfs on a directory it
//!   created under the temp dir, and touches nothing else. `relabel --root TMP` must write what
//!   libselinux says for the re-rooted path and lstat type, `-n` nothing,
//!   and symlinks are labeled themselves, never followed;
//! - malformed command lines exit 2 with a message, never a panic.
//!
//! Tests that need root, the system policy or matchpathcon are
//! `#[ignore]`d; run without them (`--include-ignored`), they fail saying
//! what is missing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use rampart_oracle::selabel::{lookup_batch, LabelQuery};

mod common;

const TYPES: [(&str, u32, &str); 7] = [
    ("file", 0o100000, "f"),
    ("dir", 0o040000, "d"),
    ("lnk_file", 0o120000, "l"),
    ("chr_file", 0o020000, "c"),
    ("blk_file", 0o060000, "b"),
    ("sock_file", 0o140000, "s"),
    ("fifo_file", 0o010000, "p"),
];
const S_IFMT: u32 = 0o170000;
const FILE_CONTEXTS: &str = "/etc/selinux/default/contexts/files/file_contexts";

struct Out {
    code: i32,
    stdout: Vec<u8>,
    stderr: String,
}

fn rampart<S: AsRef<OsStr>>(args: &[S], stdin: &[u8]) -> Out {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rampart"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rampart");
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let o = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let shown: Vec<_> = args.iter().map(|a| a.as_ref().to_string_lossy().into_owned()).collect();
    let out = Out {
        code: o.status.code().unwrap_or_else(|| panic!("rampart {shown:?} killed by a signal")),
        stdout: o.stdout,
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    };
    assert!(!out.stderr.contains("panicked"), "rampart {shown:?} panicked:\n{}", out.stderr);
    out
}

/// Fails the test unless the system policy and file_contexts are there.
fn require_system_policy() {
    common::system_policy();
    if !Path::new(FILE_CONTEXTS).exists() {
        common::missing(&format!("{FILE_CONTEXTS} (selinux-policy-default)"));
    }
}

fn oracle(queries: &[LabelQuery]) -> Vec<String> {
    lookup_batch::<&str>(&[], queries).expect("selabel-oracle")
}

fn lstat_mode(p: &[u8]) -> u32 {
    std::fs::symlink_metadata(OsStr::from_bytes(p)).map_or(0, |m| m.mode() & S_IFMT)
}

/// matchpathcon's trimming of one trailing slash.
fn trim_one_slash(p: &[u8]) -> &[u8] {
    match p {
        [rest @ .., b'/'] if !rest.is_empty() => rest,
        _ => p,
    }
}

/// A plausible path from a file_contexts regex: first alternatives,
/// first bracket characters, `x` for `.*`/`.+`, quantifiers dropped.
fn path_from_regex(re: &str) -> Vec<u8> {
    let b = re.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        i += 1;
        match c {
            b'\\' if i < b.len() => {
                out.push(b[i]);
                i += 1;
            }
            b'[' => {
                let negated = b.get(i) == Some(&b'^');
                let first = b.get(i + usize::from(negated)).copied().unwrap_or(b'a');
                while i < b.len() && b[i] != b']' {
                    i += 1;
                }
                i += 1;
                out.push(if negated { b'y' } else { first });
            }
            b'|' => {
                // Skip the other alternatives of this group.
                let mut depth = 0;
                while i < b.len() {
                    match b[i] {
                        b'(' => depth += 1,
                        b')' if depth == 0 => break,
                        b')' => depth -= 1,
                        _ => {}
                    }
                    i += 1;
                }
            }
            b'.' if matches!(b.get(i), Some(b'*' | b'+')) => out.push(b'x'),
            b'.' => out.push(b'z'),
            b'{' => {
                while i < b.len() && b[i] != b'}' {
                    i += 1;
                }
                i += 1;
            }
            b'(' | b')' | b'?' | b'*' | b'+' | b'^' | b'$' => {}
            _ => out.push(c),
        }
    }
    out
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<Vec<u8>>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut names: Vec<PathBuf> = rd.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    names.sort();
    for p in names {
        out.push(p.as_os_str().as_bytes().to_vec());
        if depth > 0 && std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir()) {
            walk(&p, depth - 1, out);
        }
    }
}

/// A few hundred paths; none empty, none starting with `-`.
fn corpus() -> Vec<Vec<u8>> {
    let fixed: &[&[u8]] = &[
        b"/",
        b"//",
        b"/etc/",
        b"/etc//passwd/",
        b"/etc/passwd",
        b"/etc/shadow",
        b"/usr/bin/ls",
        b"/bin/ls",
        b"/lib64/",
        b"/var/run/utmp",
        b"/run/utmp",
        b"/home/alice/.ssh/authorized_keys",
        b"/root/.bashrc",
        b"/tmp/x",
        b"/tmp",
        b"/proc/self",
        b"/dev/null",
        b"/nonexistent/a/b/",
        b"relative",
        b"./etc/passwd",
        b"/etc/\xff\xfe",
        b"/usr/lib/\xc3(/x",
        b"/var/log/\x80",
        b"/a\nb",
        b"/etc/pass\twd",
        b"/etc/with space",
        b"/var/www/html/index.html",
        b"/usr/share/doc/\xe9t\xe9/",
        b"/srv/x",
        b"/opt/y/z",
    ];
    let mut all: Vec<Vec<u8>> = fixed.iter().map(|p| p.to_vec()).collect();
    let mut real = Vec::new();
    for (dir, depth) in [("/dev", 1), ("/run", 2), ("/etc", 0), ("/usr/bin", 0), ("/var", 1)] {
        walk(Path::new(dir), depth, &mut real);
    }
    all.extend(real.into_iter().step_by(5).take(120));
    let text = std::fs::read_to_string(FILE_CONTEXTS).unwrap();
    let specs: Vec<&str> =
        text.lines().filter(|l| l.starts_with('/')).filter_map(|l| l.split_whitespace().next()).collect();
    for (i, re) in specs.iter().step_by(25).enumerate() {
        let p = path_from_regex(re);
        if i % 3 == 0 {
            let mut slash = p.clone();
            slash.push(b'/');
            all.push(slash);
            let mut odd = p.clone();
            odd.extend_from_slice(b"/\xff");
            all.push(odd);
        }
        all.push(p);
    }
    let mut seen = HashSet::new();
    all.retain(|p| !p.is_empty() && !p.starts_with(b"-") && seen.insert(p.clone()));
    all
}

fn os(p: &[u8]) -> OsString {
    OsString::from_vec(p.to_vec())
}

/// `rampart label [--type T] -- PATHS` against the oracle, byte for byte.
#[test]
#[ignore = "needs the system policy and matchpathcon: compared with libselinux"]
fn label_matches_libselinux() {
    require_system_policy();
    let paths = corpus();
    assert!(paths.len() >= 300, "only {} paths", paths.len());
    let mut checked = 0;
    for ty in std::iter::once(None).chain(TYPES.iter().map(Some)) {
        let queries: Vec<LabelQuery> = paths
            .iter()
            .map(|p| {
                let p = trim_one_slash(p);
                (p.to_vec(), ty.map_or_else(|| lstat_mode(p), |t| t.1))
            })
            .collect();
        let mut want = Vec::new();
        for ((p, _), ctx) in queries.iter().zip(oracle(&queries)) {
            assert!(!ctx.starts_with("error:"), "oracle: {ctx} for {p:?}");
            want.extend_from_slice(p);
            want.push(b'\t');
            want.extend_from_slice(ctx.as_bytes());
            want.push(b'\n');
        }
        let mut args: Vec<OsString> = vec!["label".into()];
        if let Some(t) = ty {
            args.extend(["--type".into(), t.0.into()]);
        }
        args.push("--".into());
        args.extend(paths.iter().map(|p| os(p)));
        let out = rampart(&args, b"");
        assert_eq!(out.code, 0, "{ty:?}: {}", out.stderr);
        assert!(out.stderr.is_empty(), "{}", out.stderr);
        if out.stdout != want {
            let got = String::from_utf8_lossy(&out.stdout);
            let exp = String::from_utf8_lossy(&want);
            let first = got.lines().zip(exp.lines()).find(|(a, b)| a != b);
            panic!("label {ty:?} differs from libselinux; first difference (ours, libselinux): {first:?}");
        }
        checked += paths.len();
        // The real matchpathcon prints the same bytes (its -m reads one letter).
        let mut cmd = Command::new("/usr/sbin/matchpathcon");
        if let Some(t) = ty {
            cmd.args(["-m", t.2]);
        }
        let m = cmd
            .arg("--")
            .args(paths.iter().map(|p| os(p)))
            .output()
            .unwrap_or_else(|e| common::missing(&format!("/usr/sbin/matchpathcon ({e}; selinux-utils)")));
        assert_eq!(m.status.code(), Some(0));
        assert!(m.stdout == want, "matchpathcon {ty:?} disagrees with rampart label");
    }
    println!("label: {} paths x 8 modes, {checked} lookups identical to libselinux", paths.len());
}

#[test]
#[ignore = "needs the system policy: compared with libselinux"]
fn label_of_an_empty_path_fails_like_matchpathcon() {
    require_system_policy();
    let out = rampart(&["label", "/etc", "", "/usr"], b"");
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("empty path"), "{}", out.stderr);
    let want = oracle(&[(b"/etc".to_vec(), lstat_mode(b"/etc")), (b"/usr".to_vec(), lstat_mode(b"/usr"))]);
    assert_eq!(out.stdout, format!("/etc\t{}\n/usr\t{}\n", want[0], want[1]).as_bytes());
}

/// `label --batch` against the oracle: every path with no type, every
/// type, and an empty TYPE; error lines stay in place.
#[test]
#[ignore = "needs the system policy: compared with libselinux"]
fn batch_matches_libselinux() {
    require_system_policy();
    let paths: Vec<Vec<u8>> = corpus().into_iter().filter(|p| !p.contains(&b'\n')).collect();
    let mut input = Vec::new();
    let mut queries: Vec<LabelQuery> = Vec::new();
    for (i, p) in paths.iter().enumerate() {
        let has_tab = p.contains(&b'\t');
        for (k, ty) in std::iter::once(None).chain(TYPES.iter().map(Some)).enumerate() {
            input.extend_from_slice(p);
            match ty {
                Some(t) => input.extend_from_slice(format!("\t{}", t.0).as_bytes()),
                // A path with a tab needs the tab at the end; others may use it.
                None if has_tab || (i + k) % 2 == 0 => input.push(b'\t'),
                None => {}
            }
            input.push(b'\n');
            queries.push((p.clone(), ty.map_or(0, |t| t.1)));
        }
    }
    let want = oracle(&queries);
    let out = rampart(&["label", "--batch"], &input);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let got: Vec<&[u8]> = out.stdout.split(|&b| b == b'\n').collect();
    assert_eq!(got.len(), want.len() + 1, "one answer per line");
    for ((q, w), g) in queries.iter().zip(&want).zip(&got) {
        assert_eq!(String::from_utf8_lossy(g), *w, "{:?} mode {:o}", String::from_utf8_lossy(&q.0), q.1);
    }
    println!("label --batch: {} lines identical to libselinux", want.len());

    // Errors are answered in place.
    let out = rampart(&["label", "--batch"], b"/etc\tdirectory\n\n/etc\tdir\n\tfile\n/etc/passwd\n");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let want = oracle(&[(b"/etc".to_vec(), 0o040000), (b"/etc/passwd".to_vec(), 0)]);
    let lines: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
    assert_eq!(lines.len(), 5, "{lines:?}");
    assert!(lines[0].starts_with("error: unknown file type `directory`"), "{}", lines[0]);
    assert!(lines[1].starts_with("error: empty path"), "{}", lines[1]);
    assert_eq!(lines[2], want[0]);
    assert!(lines[3].starts_with("error: empty path"), "{}", lines[3]);
    assert_eq!(lines[4], want[1]);
}

/// An answer arrives while stdin is still open.
#[test]
#[ignore = "needs the system policy: compared with libselinux"]
fn batch_answers_without_eof() {
    require_system_policy();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rampart"))
        .args(["label", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let want = oracle(&[(b"/etc/passwd".to_vec(), 0o100000), (b"/usr/bin\xff".to_vec(), 0)]);
    for (line, w) in [(&b"/etc/passwd\tfile\n"[..], &want[0]), (b"/usr/bin\xff\n", &want[1])] {
        stdin.write_all(line).unwrap();
        stdin.flush().unwrap();
        let mut answer = String::new();
        stdout.read_line(&mut answer).unwrap();
        assert_eq!(answer.trim_end(), w);
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn malformed_command_lines_exit_2() {
    let long = "x".repeat(5000);
    let cases: &[&[&str]] = &[
        &["label"],
        &["label", "--type"],
        &["label", "--type", "directory", "/etc"],
        &["label", "--type", "f", "/etc"],
        &["label", "--type=", "/etc"],
        &["label", "--batch", "/etc"],
        &["label", "--batch", "--type", "dir"],
        &["label", "--batch=yes"],
        &["label", "-n", "/etc"],
        &["label", "--root", "/", "/etc"],
        &["label", "--frobnicate", "/etc"],
        &["label", "--file-contexts"],
        &["label", "--policy"],
        &["getlabel"],
        &["getlabel", "--type", "dir", "/etc"],
        &["getlabel", "-R", "/etc"],
        &["getlabel", "--batch"],
        &["relabel"],
        &["relabel", "-n"],
        &["relabel", "-Rq", "/etc"],
        &["relabel", "-r", "/etc"],
        &["relabel", "--type", "file", "/etc"],
        &["relabel", "--bool", "a=on", "/etc"],
        &["relabel", "--root"],
        &["relabel", "-n", "--root", "/nonexistent-root", "/etc"],
        &["relabel", "-n", "--root", "/etc/passwd", "/etc"],
        &["-V", "relabel", "/etc"],
        &["--", "label"],
        &["label", "--type", &long, "/etc"],
        &["label", "--policy", "/nonexistent-policy", "/etc"],
        &["label", "--file-contexts", "/nonexistent-fc", "/etc"],
        &["label", "--batch", "--file-contexts", "/etc/passwd"],
    ];
    for args in cases {
        let out = rampart(args, b"");
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&out.stdout));
        assert!(out.stderr.starts_with("rampart: error: "), "{args:?}: {}", out.stderr);
        assert_eq!(out.stderr.lines().count(), 1, "{args:?}: {}", out.stderr);
    }
    // Non-UTF-8 option values and words are errors, not panics.
    let bad = OsString::from_vec(b"--type=\xff".to_vec());
    let out = rampart(&[OsString::from("label"), bad, OsString::from("/etc")], b"");
    assert_eq!(out.code, 2, "{}", out.stderr);
    let bad = OsString::from_vec(b"-\xff".to_vec());
    let out = rampart(&[OsString::from("relabel"), bad, OsString::from("/etc")], b"");
    assert_eq!(out.code, 2, "{}", out.stderr);
}

#[test]
fn help_texts() {
    for (args, needle) in [
        (&["help", "label"][..], "Usage: rampart label"),
        (&["label", "--help"], "--batch"),
        (&["getlabel", "-h"], "Usage: rampart getlabel"),
        (&["help", "relabel"], "-F"),
        (&["relabel", "-Rnh", "/x"], "Usage: rampart relabel"),
        (&["--help"], "  relabel "),
    ] {
        let out = rampart(args, b"");
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        assert!(String::from_utf8_lossy(&out.stdout).contains(needle), "{args:?}");
    }
}

// ---------------------------------------------------------------------
// getlabel and relabel in a private mount namespace.

const ENV: &str = "RAMPART_CLI_LABEL_NS_DIR";
const NS_TEST: &str = "getlabel_and_relabel_in_a_private_namespace";

#[test]
#[ignore = "needs root and the system policy: mounts a tmpfs in a private mount namespace"]
fn getlabel_and_relabel_in_a_private_namespace() {
    if let Some(dir) = std::env::var_os(ENV) {
        inner(Path::new(&dir));
        return;
    }
    require_system_policy();
    common::require_root("mount, mknod, security.* xattrs");
    let probe = Command::new("unshare").args(["-m", "--propagation", "private", "true"]).status();
    if !probe.is_ok_and(|s| s.success()) {
        common::missing("`unshare -m --propagation private` (util-linux, and CAP_SYS_ADMIN)");
    }
    let dir = std::env::temp_dir().join(format!("rampart-cli-label-ns-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("mnt")).unwrap();
    std::fs::write(dir.join("outside"), b"sentinel").unwrap();
    let status = Command::new("unshare")
        .args(["-m", "--propagation", "private"])
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", NS_TEST, "--include-ignored", "--nocapture", "--test-threads=1"])
        .env(ENV, &dir)
        .status()
        .unwrap();
    // The tmpfs died with the namespace, and nothing outside it got a label.
    let left: Vec<_> = std::fs::read_dir(dir.join("mnt")).unwrap().collect();
    assert!(left.is_empty(), "the tmpfs leaked out of the namespace");
    assert_eq!(rampart_label::get_label(&dir.join("outside")).unwrap(), None, "a file outside the tmpfs was labeled");
    assert_eq!(rampart_label::get_label(&dir).unwrap(), None, "the test directory was labeled");
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(status.success(), "the namespaced test failed: {status}");
}

fn c_path(p: &Path) -> std::ffi::CString {
    std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap()
}

/// Builds the tree; returns the entries (relative to the tmpfs root).
fn build_tree(root: &Path, outside: &Path) {
    let rel = |r: &[u8]| root.join(OsStr::from_bytes(r));
    for d in
        [&b"etc"[..], b"usr/bin", b"usr/lib", b"usr/share/\xff\xfe", b"var/log", b"run", b"dev", b"home/alice", b"tmp"]
    {
        std::fs::create_dir_all(rel(d)).unwrap();
    }
    for f in [
        &b"etc/passwd"[..],
        b"etc/shadow",
        b"etc/new\nline",
        b"usr/bin/ls",
        b"usr/lib/libx.so.1",
        b"usr/share/\xff\xfe/doc",
        b"var/log/messages",
        b"home/alice/.bashrc",
        b"tmp/junk",
    ] {
        std::fs::write(rel(f), b"x").unwrap();
    }
    std::os::unix::fs::symlink("../usr/bin/ls", rel(b"etc/alt")).unwrap();
    std::os::unix::fs::symlink(outside, rel(b"usr/bin/sh")).unwrap();
    std::os::unix::fs::symlink("../run", rel(b"var/run")).unwrap();
    let _sock = std::os::unix::net::UnixListener::bind(rel(b"run/sock")).unwrap();
    // SAFETY: valid NUL-terminated paths; mkfifo/mknod only create nodes.
    unsafe {
        assert_eq!(libc::mkfifo(c_path(&rel(b"run/initctl")).as_ptr(), 0o600), 0);
        assert_eq!(libc::mknod(c_path(&rel(b"dev/null")).as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)), 0);
        assert_eq!(libc::mknod(c_path(&rel(b"dev/sda")).as_ptr(), libc::S_IFBLK | 0o600, libc::makedev(8, 0)), 0);
    }
}

/// Every entry under `root` (itself included), sorted, with its lstat
/// mode type bits.
fn entries(root: &Path) -> Vec<(PathBuf, u32)> {
    fn rec(dir: &Path, out: &mut Vec<(PathBuf, u32)>) {
        let mut names: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        names.sort();
        for p in names {
            let md = std::fs::symlink_metadata(&p).unwrap();
            out.push((p.clone(), md.mode() & S_IFMT));
            if md.is_dir() {
                rec(&p, out);
            }
        }
    }
    let mut out = vec![(root.to_path_buf(), std::fs::symlink_metadata(root).unwrap().mode() & S_IFMT)];
    rec(root, &mut out);
    out
}

/// The path file_contexts is asked about for `p` under `root`.
fn rerooted(root: &Path, p: &Path) -> Vec<u8> {
    let rel = &p.as_os_str().as_bytes()[root.as_os_str().len()..];
    if rel.is_empty() {
        b"/".to_vec()
    } else {
        rel.to_vec()
    }
}

fn getlabel_output(paths: &[&Path]) -> Out {
    let mut args: Vec<&OsStr> = vec![OsStr::new("getlabel"), OsStr::new("--")];
    args.extend(paths.iter().map(|p| p.as_os_str()));
    rampart(&args, b"")
}

fn inner(dir: &Path) {
    assert!(dir.starts_with(std::env::temp_dir()), "refusing to work outside the temp dir: {}", dir.display());
    let root = dir.join("mnt");
    let st = Command::new("mount").args(["-t", "tmpfs", "-o", "size=16m", "rampart-test"]).arg(&root).status().unwrap();
    assert!(st.success(), "mount tmpfs failed");
    let outside = dir.join("outside");
    build_tree(&root, &outside);
    let all = entries(&root);
    let paths: Vec<&Path> = all.iter().map(|(p, _)| p.as_path()).collect();

    // The oracle: libselinux's label for each re-rooted path and type.
    let queries: Vec<LabelQuery> = all.iter().map(|(p, m)| (rerooted(&root, p), *m)).collect();
    let want: Vec<Option<String>> =
        oracle(&queries).into_iter().map(|c| if c == "<<none>>" { None } else { Some(c) }).collect();
    assert!(want.iter().any(Option::is_none) && want.iter().filter(|w| w.is_some()).count() > 10);

    // Fresh files have no label: `? PATH`, in argument order.
    let out = getlabel_output(&paths);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut expect = Vec::new();
    for p in &paths {
        expect.extend_from_slice(b"? ");
        expect.extend_from_slice(p.as_os_str().as_bytes());
        expect.push(b'\n');
    }
    assert_eq!(out.stdout, expect);

    // `rampart label` on real files of every type: the lstat type, as
    // libselinux (no re-rooting here: matchpathcon has none).
    let direct: Vec<LabelQuery> = all.iter().map(|(p, m)| (p.as_os_str().as_bytes().to_vec(), *m)).collect();
    let kinds: HashSet<u32> = all.iter().map(|(_, m)| *m).collect();
    assert_eq!(kinds.len(), 7, "the tree has every file type");
    let mut args: Vec<&OsStr> = vec![OsStr::new("label"), OsStr::new("--")];
    args.extend(paths.iter().map(|p| p.as_os_str()));
    let out = rampart(&args, b"");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut expect = Vec::new();
    for ((p, _), ctx) in direct.iter().zip(oracle(&direct)) {
        expect.extend_from_slice(p);
        expect.push(b'\t');
        expect.extend_from_slice(ctx.as_bytes());
        expect.push(b'\n');
    }
    assert_eq!(out.stdout, expect, "label on every file type");

    // -n: reports, writes nothing.
    let root_arg = root.as_os_str();
    let out = rampart(&[OsStr::new("relabel"), OsStr::new("-nRv"), OsStr::new("--root"), root_arg, root_arg], b"");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut would = 0;
    for ((p, _), w) in all.iter().zip(&want) {
        assert_eq!(rampart_label::get_label(p).unwrap(), None, "-n wrote {}", p.display());
        if let Some(ctx) = w {
            let mut line = b"Would relabel ".to_vec();
            line.extend_from_slice(p.as_os_str().as_bytes());
            line.extend_from_slice(format!(" from <no context> to {ctx}\n").as_bytes());
            assert!(out.stdout.windows(line.len()).any(|x| x == line), "missing: {}", String::from_utf8_lossy(&line));
            would += 1;
        }
    }
    let count = out.stdout.windows(14).filter(|x| x == b"Would relabel ").count();
    assert_eq!(count, would, "{}", String::from_utf8_lossy(&out.stdout));

    // The real run writes exactly libselinux's labels; quiet without -v.
    let out = rampart(&[OsStr::new("relabel"), OsStr::new("-R"), OsStr::new("--root"), root_arg, root_arg], b"");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{}", out.stderr);
    for ((p, _), w) in all.iter().zip(&want) {
        assert_eq!(&rampart_label::get_label(p).unwrap(), w, "{}", p.display());
    }
    // Symlinks: labeled themselves (as lnk_file), never followed.
    let sh = root.join("usr/bin/sh");
    let sh_label = oracle(&[(b"/usr/bin/sh".to_vec(), 0o120000)]).remove(0);
    assert_eq!(rampart_label::get_label(&sh).unwrap().as_deref(), Some(sh_label.as_str()));
    assert_eq!(rampart_label::get_label(&outside).unwrap(), None, "a symlink was followed out of the tree");
    let ls = oracle(&[(b"/usr/bin/ls".to_vec(), 0o100000)]).remove(0);
    assert_eq!(rampart_label::get_label(&root.join("usr/bin/ls")).unwrap().as_deref(), Some(ls.as_str()));

    // getlabel shows them: `CONTEXT PATH` or `?`.
    let out = getlabel_output(&paths);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut expect = Vec::new();
    for (p, w) in paths.iter().zip(&want) {
        expect.extend_from_slice(w.as_deref().unwrap_or("?").as_bytes());
        expect.push(b' ');
        expect.extend_from_slice(p.as_os_str().as_bytes());
        expect.push(b'\n');
    }
    assert_eq!(out.stdout, expect);
    // ... like `ls -Zd` for one path.
    let passwd = root.join("etc/passwd");
    if let Ok(ls_out) = Command::new("ls").arg("-Zd").arg(&passwd).output() {
        assert_eq!(getlabel_output(&[&passwd]).stdout, ls_out.stdout, "getlabel vs ls -Zd");
    }

    // A second run changes nothing; a wrong type is fixed, user kept.
    let out = rampart(&[OsStr::new("relabel"), OsStr::new("-Rv"), OsStr::new("--root"), root_arg, root_arg], b"");
    assert_eq!((out.code, out.stdout.len()), (0, 0), "{}", String::from_utf8_lossy(&out.stdout));
    rampart_label::set_label(&passwd, "staff_u:object_r:tmp_t:s0").unwrap();
    let out =
        rampart(&[OsStr::new("relabel"), OsStr::new("-v"), OsStr::new("--root"), root_arg, passwd.as_os_str()], b"");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let etc_t = oracle(&[(b"/etc/passwd".to_vec(), 0o100000)]).remove(0);
    let fixed = format!("staff_u:object_r:{}", etc_t.split(':').skip(2).collect::<Vec<_>>().join(":"));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("Relabeled {} from staff_u:object_r:tmp_t:s0 to {fixed}\n", passwd.display())
    );
    // -F sets the whole context.
    let out =
        rampart(&[OsStr::new("relabel"), OsStr::new("-F"), OsStr::new("--root"), root_arg, passwd.as_os_str()], b"");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(rampart_label::get_label(&passwd).unwrap(), Some(etc_t));

    // Errors: restorecon's status 255, the run goes on.
    let missing = root.join("etc/missing");
    let out = rampart(
        &[OsStr::new("relabel"), OsStr::new("--root"), root_arg, missing.as_os_str(), outside.as_os_str()],
        b"",
    );
    assert_eq!(out.code, 255, "{}", out.stderr);
    assert!(out.stderr.contains("lstat(") && out.stderr.contains("is not located in alt_rootpath"), "{}", out.stderr);
    assert_eq!(rampart_label::get_label(&outside).unwrap(), None);
    let out = getlabel_output(&[&passwd, &missing]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("cannot access"), "{}", out.stderr);
    assert!(out.stdout.ends_with(b"/etc/passwd\n"));

    let st = Command::new("umount").arg(&root).status().unwrap();
    assert!(st.success(), "umount failed");
    println!("relabel namespace test: {} entries, {} labeled as libselinux says", all.len(), would);
}
