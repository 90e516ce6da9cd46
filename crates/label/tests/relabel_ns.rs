//! The relabel engine on a real tree, in a private mount namespace.
//!
//! The test re-executes itself under `unshare -m --propagation private`
//! (util-linux, as root), mounts a tmpfs on a directory it created, and
//! builds a small system tree in it: files, directories, symlinks (one
//! pointing outside the tmpfs), FIFOs, a socket, device nodes, names
//! with non-UTF-8 bytes and newlines, a nested mount, and files with
//! pre-set labels. The engine runs with `alt_root` = the tmpfs, so
//! `TMP/usr/bin/ls` is labeled as `/usr/bin/ls`; every written xattr is
//! compared with libselinux's answer (the oracle) for the re-rooted
//! path and type. Checked too: `-n` writes nothing, symlinks are
//! labeled themselves and never followed, the nested mount is skipped
//! unless asked, type-only changes and customizable types (`-F` off),
//! `-F`, errors and exit codes, and the `ObjectLabeler` cache. Nothing
//! outside the tmpfs is touched: the mount dies with the namespace, and
//! a sentinel file outside is checked to stay unlabeled.
//!
//! Needs root, `unshare` and the system policy: `#[ignore]`d, and run
//! (`--include-ignored`) without them it fails saying what is missing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use rampart_label::{
    get_label, set_label, Event, FileContexts, FileRef, LabelSource, ObjectLabeler, RelabelOptions, Relabeler,
    SpecFiles, Summary, S_IFMT,
};

const ENV: &str = "RAMPART_LABEL_NS_DIR";
const NAME: &str = "relabel_tmpfs_tree_in_private_namespace";

#[test]
#[ignore = "needs root and the system policy: mounts a tmpfs in a private mount namespace"]
fn relabel_tmpfs_tree_in_private_namespace() {
    if let Some(dir) = std::env::var_os(ENV) {
        inner(Path::new(&dir));
        return;
    }
    common::require_root("mount, mknod, security.* xattrs");
    let probe = Command::new("unshare").args(["-m", "--propagation", "private", "true"]).status();
    if !probe.is_ok_and(|s| s.success()) {
        common::missing("`unshare -m --propagation private` (util-linux, and CAP_SYS_ADMIN)");
    }
    let dir = std::env::temp_dir().join(format!("rampart-label-ns-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("mnt")).unwrap();
    std::fs::write(dir.join("outside"), b"sentinel").unwrap();
    let status = Command::new("unshare")
        .args(["-m", "--propagation", "private"])
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", NAME, "--include-ignored", "--nocapture", "--test-threads=1"])
        .env(ENV, &dir)
        .status()
        .unwrap();
    // The tmpfs went away with the namespace: the mount point is an
    // empty directory of the real filesystem again, and the sentinel
    // outside the tmpfs was never labeled.
    let left: Vec<_> = std::fs::read_dir(dir.join("mnt")).unwrap().collect();
    assert!(left.is_empty(), "the tmpfs leaked out of the namespace");
    assert_eq!(get_label(&dir.join("outside")).unwrap(), None, "a file outside the tmpfs was labeled");
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(status.success(), "the namespaced test failed: {status}");
}

fn sh(cmd: &str, args: &[&OsStr]) {
    let st = Command::new(cmd).args(args).status().unwrap();
    assert!(st.success(), "{cmd} {args:?} failed");
}

fn p(root: &Path, rel: &[u8]) -> PathBuf {
    root.join(OsStr::from_bytes(rel))
}

/// Every entry under `root` on its device, with the lookup path it
/// stands for and its lstat mode.
fn entries(root: &Path) -> Vec<(PathBuf, Vec<u8>, u32)> {
    let mut out = Vec::new();
    common::walk(root, &mut out);
    let dev = std::fs::symlink_metadata(root).unwrap().dev();
    out.into_iter()
        .filter(|(path, _)| std::fs::symlink_metadata(path).unwrap().dev() == dev)
        .map(|(path, mode)| {
            let rel = path.as_os_str().as_bytes()[root.as_os_str().len()..].to_vec();
            let lookup = if rel.is_empty() { b"/".to_vec() } else { rel };
            (path, lookup, mode)
        })
        .collect()
}

fn labels(root: &Path) -> BTreeMap<PathBuf, Option<String>> {
    let mut all = Vec::new();
    common::walk(root, &mut all);
    all.into_iter().map(|(path, _)| (path.clone(), get_label(&path).unwrap())).collect()
}

struct Collected {
    summary: Summary,
    messages: Vec<String>,
    errors: Vec<String>,
    customized: Vec<PathBuf>,
    no_default: Vec<Vec<u8>>,
}

fn run(fc: &FileContexts, opts: RelabelOptions, paths: &[PathBuf]) -> Collected {
    let mut messages = Vec::new();
    let mut errors = Vec::new();
    let mut customized = Vec::new();
    let mut no_default = Vec::new();
    let summary = Relabeler::new(fc, opts).run(paths, &mut |e| match e {
        Event::Relabeled(c) => messages.push(String::from_utf8_lossy(&c.message()).into_owned()),
        Event::Error(err) => errors.push(err.to_string()),
        Event::Customized { path, .. } => customized.push(path.to_path_buf()),
        Event::NoDefaultLabel { path } => no_default.push(path.to_vec()),
        _ => {}
    });
    Collected { summary, messages, errors, customized, no_default }
}

fn inner(dir: &Path) {
    assert!(dir.starts_with(std::env::temp_dir()), "refusing to work outside the temp dir: {}", dir.display());
    let root = dir.join("mnt");
    let outer_dev = std::fs::metadata(dir).unwrap().dev();
    sh(
        "mount",
        &[
            "-t".as_ref(),
            "tmpfs".as_ref(),
            "-o".as_ref(),
            "size=32m,mode=755".as_ref(),
            "rampart-label-test".as_ref(),
            root.as_os_str(),
        ],
    );
    assert_ne!(std::fs::metadata(&root).unwrap().dev(), outer_dev, "tmpfs not mounted");
    let policy = common::system_policy();
    let fc = FileContexts::load(&SpecFiles::system(), &policy).unwrap();

    // The tree.
    for d in [
        "usr/bin",
        "usr/lib/systemd/system",
        "usr/share/doc",
        "etc",
        "var/log",
        "run/systemd",
        "run/dbus",
        "home/alice/.ssh",
        "dev",
        "srv/nested",
        "opt/x",
        "root",
    ] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    let files: [&[u8]; 12] = [
        b"usr/bin/ls",
        b"usr/bin/we ird",
        b"usr/lib/libfoo.so.1",
        b"usr/lib/systemd/system/foo.service",
        b"usr/share/doc/caf\xe9",
        b"etc/shadow",
        b"etc/passwd",
        b"etc/hosts",
        b"etc/a\nb",
        b"var/log/messages",
        b"run/foo",
        b"home/alice/.ssh/authorized_keys",
    ];
    for f in files {
        std::fs::write(p(&root, f), b"x").unwrap();
    }
    std::fs::write(root.join("root/.bashrc"), b"x").unwrap();
    std::os::unix::fs::symlink("ls", root.join("usr/bin/sh-link")).unwrap();
    std::os::unix::fs::symlink("../run", root.join("var/run")).unwrap();
    std::os::unix::fs::symlink("usr/bin", root.join("bin")).unwrap();
    std::os::unix::fs::symlink(dir.join("outside"), root.join("etc/evil")).unwrap();
    sh("mkfifo", &[root.join("run/initctl").as_os_str(), root.join("var/fifo").as_os_str()]);
    let sock = std::os::unix::net::UnixListener::bind(root.join("run/dbus/system_bus_socket")).unwrap();
    sh("mknod", &[root.join("dev/null").as_os_str(), "c".as_ref(), "1".as_ref(), "3".as_ref()]);
    sh("mknod", &[root.join("dev/sda").as_os_str(), "b".as_ref(), "8".as_ref(), "0".as_ref()]);
    let nested = root.join("srv/nested");
    sh(
        "mount",
        &[
            "-t".as_ref(),
            "tmpfs".as_ref(),
            "-o".as_ref(),
            "size=1m".as_ref(),
            "rampart-nested".as_ref(),
            nested.as_os_str(),
        ],
    );
    std::fs::write(nested.join("file"), b"x").unwrap();
    // Pre-set labels: right type, other user; wrong type, other user; a
    // customizable type.
    set_label(&root.join("usr/bin/ls"), "unconfined_u:object_r:bin_t:s0").unwrap();
    set_label(&root.join("etc/shadow"), "unconfined_u:object_r:etc_t:s0").unwrap();
    set_label(&root.join("etc/passwd"), "system_u:object_r:public_content_t:s0").unwrap();
    let preset = ["usr/bin/ls", "etc/shadow", "etc/passwd"].map(|r| root.join(r));

    // libselinux's answers for every entry (re-rooted path, lstat type).
    let all = entries(&root);
    let queries: Vec<common::LabelQuery> = all.iter().map(|(_, l, m)| (l.clone(), m & S_IFMT)).collect();
    let want: BTreeMap<PathBuf, String> =
        all.iter().map(|(path, _, _)| path.clone()).zip(common::oracle(&[], &queries, 1)).collect();
    assert_eq!(want[&root.join("usr/bin/ls")], "system_u:object_r:bin_t:s0");
    assert_eq!(want[&root.join("run/foo")], "<<none>>");
    let outside_before = get_label(&dir.join("outside")).unwrap();
    assert_eq!(outside_before, None);

    let rooted = |recursive, dry_run, force, cross| RelabelOptions {
        recursive,
        dry_run,
        force,
        cross_filesystems: cross,
        realpath: true,
        alt_root: Some(root.clone()),
        customizable_types: vec!["public_content_t".into(), "swapfile_t".into()],
    };
    let to_change = all
        .iter()
        .filter(|(path, _, _)| want[path] != "<<none>>" && !preset[0].eq(path) && !preset[2].eq(path))
        .count();

    // -n: reports, writes nothing.
    let before = labels(&root);
    let dry = run(&fc, rooted(true, true, false, false), std::slice::from_ref(&root));
    assert_eq!(labels(&root), before, "dry run wrote labels");
    assert_eq!(dry.summary.relabeled as usize, to_change);
    assert!(dry.messages.iter().all(|m| m.starts_with("Would relabel ")), "{:?}", dry.messages);
    assert_eq!(dry.summary.exit_code(), 0);

    // The real run.
    let real = run(&fc, rooted(true, false, false, false), std::slice::from_ref(&root));
    assert!(real.errors.is_empty(), "{:?}", real.errors);
    assert_eq!(real.summary.exit_code(), 0);
    assert_eq!(real.summary.visited as usize, all.len());
    assert_eq!(real.summary.relabeled as usize, to_change);
    assert_eq!(real.customized, vec![root.join("etc/passwd")]);
    let lib = root.join("usr/lib/libfoo.so.1");
    let expect_msg = format!("Relabeled {} from <no context> to system_u:object_r:lib_t:s0", lib.display());
    assert!(real.messages.contains(&expect_msg), "{expect_msg} not in {:?}", real.messages);
    let mut compared = 0;
    for (path, _, _) in &all {
        let got = get_label(path).unwrap();
        let expected = if *path == preset[0] {
            Some("unconfined_u:object_r:bin_t:s0".to_owned())
        } else if *path == preset[1] {
            Some("unconfined_u:object_r:shadow_t:s0".to_owned())
        } else if *path == preset[2] {
            Some("system_u:object_r:public_content_t:s0".to_owned())
        } else if want[path] == "<<none>>" {
            None
        } else {
            Some(want[path].clone())
        };
        assert_eq!(got, expected, "{}", path.display());
        compared += 1;
    }
    assert_eq!(get_label(&nested).unwrap(), None, "the nested mount point was labeled");
    assert_eq!(get_label(&nested.join("file")).unwrap(), None, "the nested mount was entered");
    assert_eq!(get_label(&dir.join("outside")).unwrap(), None, "the symlink was followed");
    assert_eq!(
        get_label(&root.join("etc/evil")).unwrap().as_deref(),
        Some(want[&root.join("etc/evil")].as_str()),
        "the symlink itself must be labeled"
    );

    // Idempotent.
    let again = run(&fc, rooted(true, false, false, false), std::slice::from_ref(&root));
    assert_eq!(again.summary.relabeled, 0);

    // -F and crossing into the nested mount.
    let forced = run(&fc, rooted(true, false, true, true), std::slice::from_ref(&root));
    assert!(forced.errors.is_empty(), "{:?}", forced.errors);
    assert_eq!(forced.summary.relabeled, 3 + 2, "the 3 preset files and the nested mount (point and file)");
    for f in &preset {
        assert_eq!(get_label(f).unwrap().as_deref(), Some(want[f].as_str()), "{}", f.display());
    }
    let nested_want =
        common::oracle(&[], &[(b"/srv/nested".to_vec(), 0o040000), (b"/srv/nested/file".to_vec(), 0o100000)], 1);
    assert_eq!(get_label(&nested).unwrap().as_deref(), Some(nested_want[0].as_str()));
    assert_eq!(get_label(&nested.join("file")).unwrap().as_deref(), Some(nested_want[1].as_str()));

    // One file, not recursive, named through a symlinked directory:
    // restorecon resolves the directory part (realpath) only.
    set_label(&root.join("usr/bin/ls"), "system_u:object_r:etc_t:s0").unwrap();
    set_label(&root.join("usr/bin/sh-link"), "system_u:object_r:etc_t:s0").unwrap();
    let one = run(&fc, rooted(false, false, false, false), &[root.join("bin/ls"), root.join("usr/bin/sh-link")]);
    assert_eq!(one.summary.relabeled, 2, "{:?}", one.messages);
    assert!(one.messages[0].starts_with(&format!("Relabeled {} from", root.join("usr/bin/ls").display())));
    assert_eq!(get_label(&root.join("usr/bin/ls")).unwrap().as_deref(), Some("system_u:object_r:bin_t:s0"));
    assert_eq!(get_label(&root.join("usr/bin/sh-link")).unwrap().as_deref(), Some("system_u:object_r:bin_t:s0"));

    // A starting path without a label: skipped with restorecon's
    // warning, not an error.
    let none = run(&fc, rooted(false, false, false, false), &[root.join("run/foo")]);
    assert_eq!(none.no_default, vec![b"/run/foo".to_vec()]);
    assert_eq!((none.summary.no_label, none.summary.exit_code()), (1, 0));

    // Errors: exit status 255 like restorecon, the run goes on.
    set_label(&root.join("etc/hosts"), "garbage").unwrap();
    let bad = run(
        &fc,
        rooted(false, false, false, false),
        &[root.join("missing"), dir.join("outside"), root.join("etc/hosts"), lib.clone()],
    );
    assert_eq!(bad.summary.errors, 3, "{:?}", bad.errors);
    assert_eq!(bad.summary.exit_code(), 255);
    assert!(
        bad.errors[0].starts_with(&format!("lstat({}) failed: ", root.join("missing").display())),
        "{:?}",
        bad.errors
    );
    assert!(bad.errors[1].contains("is not located in alt_rootpath"), "{:?}", bad.errors);
    assert!(bad.errors[2].starts_with(&format!("Could not set context for {}:  ", root.join("etc/hosts").display())));
    assert_eq!(get_label(&dir.join("outside")).unwrap(), None);
    let fixed = run(&fc, rooted(false, false, true, false), &[root.join("etc/hosts")]);
    assert_eq!(fixed.summary.exit_code(), 0);
    assert_eq!(get_label(&root.join("etc/hosts")).unwrap().as_deref(), Some(want[&root.join("etc/hosts")].as_str()));

    // The object labeler: xattr first, else file_contexts by path;
    // cached per inode, refreshed by ctime, invalidated on request.
    let labeler = ObjectLabeler::new(std::sync::Arc::new(fc));
    let ls = root.join("usr/bin/ls");
    let md = std::fs::symlink_metadata(&ls).unwrap();
    let l = labeler.label_of(FileRef::Path(&ls), &md);
    assert_eq!((l.context.as_deref(), l.source), (Some("system_u:object_r:bin_t:s0"), LabelSource::Xattr));
    let fresh = root.join("usr/bin/fresh");
    std::fs::write(&fresh, b"x").unwrap();
    let md = std::fs::symlink_metadata(&fresh).unwrap();
    let l = labeler.label_of(FileRef::Path(&fresh), &md);
    let by_path = labeler.contexts().lookup(fresh.as_os_str().as_bytes(), Some(rampart_label::FileType::Regular));
    // (Under /tmp file_contexts usually says <<none>>: unlabeled.)
    let source = if by_path.context().is_some() { LabelSource::FileContexts } else { LabelSource::None };
    assert_eq!((l.context.as_deref(), l.source), (by_path.context(), source));
    std::thread::sleep(std::time::Duration::from_millis(20));
    set_label(&fresh, "system_u:object_r:tmp_t:s0").unwrap();
    let md2 = std::fs::symlink_metadata(&fresh).unwrap();
    assert_ne!((md.ctime(), md.ctime_nsec()), (md2.ctime(), md2.ctime_nsec()));
    let l = labeler.label_of(FileRef::Path(&fresh), &md2);
    assert_eq!(l.context.as_deref(), Some("system_u:object_r:tmp_t:s0"));
    let file = std::fs::File::open(&fresh).unwrap();
    use std::os::fd::AsFd;
    labeler.invalidate(md2.dev(), md2.ino());
    let l = labeler.label_of(FileRef::Fd(file.as_fd()), &file.metadata().unwrap());
    assert_eq!((l.context.as_deref(), l.source), (Some("system_u:object_r:tmp_t:s0"), LabelSource::Xattr));
    assert!(labeler.cached() >= 1);
    labeler.clear();
    assert_eq!(labeler.cached(), 0);

    println!(
        "relabel namespace test: {} entries, {} labels compared with libselinux, {} relabeled ({} would be with -n)",
        all.len(),
        compared,
        real.summary.relabeled,
        dry.summary.relabeled
    );
    drop(file);
    drop(sock);
    sh("umount", &[nested.as_os_str()]);
    sh("umount", &[root.as_os_str()]);
}
