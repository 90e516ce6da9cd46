//! New-file labels through the policy's type transitions (including
//! filename transitions), and object labels of files without xattrs.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::HashSet;
use std::sync::Arc;

use rampart_label::{
    file_class, new_file_label, FileContexts, FileRef, FileType, LabelSource, ObjectLabeler, SpecFiles,
};
use rampart_policy::{Booleans, Policy};

fn policy() -> Policy {
    common::system_policy()
}

#[test]
#[ignore = "needs the system policy"]
fn new_file_labels_follow_type_and_filename_transitions() {
    let p = policy();
    let bools = Booleans::defaults(&p);
    let s = p.parse_context("unconfined_u:unconfined_r:unconfined_t:s0-s0:c0.c1023").unwrap();
    let home = p.parse_context("unconfined_u:object_r:user_home_dir_t:s0").unwrap();
    let dir = file_class(&p, FileType::Directory).unwrap();
    let maildir = new_file_label(&p, &bools, &s, &home, dir, Some("Maildir")).unwrap();
    assert_eq!(p.context_to_string(&maildir), "unconfined_u:object_r:mail_home_rw_t:s0");
    let other = new_file_label(&p, &bools, &s, &home, dir, Some("notes")).unwrap();
    assert_ne!(p.type_name(other.ty), "mail_home_rw_t");
    let file = file_class(&p, FileType::Regular).unwrap();
    let etc = p.parse_context("system_u:object_r:etc_t:s0").unwrap();
    let nm = p.parse_context("system_u:system_r:NetworkManager_t:s0").unwrap();
    let conf = new_file_label(&p, &bools, &nm, &etc, file, Some("resolv.conf")).unwrap();
    assert_eq!(p.type_name(conf.ty), "net_conf_t");
    for ft in FileType::ALL {
        assert!(file_class(&p, ft).is_some(), "{ft}");
    }
}

#[test]
#[ignore = "needs the system policy"]
fn unlabeled_files_fall_back_to_file_contexts() {
    let p = policy();
    let fc = Arc::new(FileContexts::load(&SpecFiles::system(), &p).unwrap());
    let labeler = ObjectLabeler::new(Arc::clone(&fc));
    // /usr/bin/ls normally has no security.selinux on a machine without
    // SELinux; if it has one, that one wins.
    let ls = std::path::Path::new("/usr/bin/ls");
    let md = std::fs::symlink_metadata(ls).unwrap();
    let l = labeler.label_of(FileRef::Path(ls), &md);
    match rampart_label::get_label(ls).unwrap() {
        Some(x) => assert_eq!((l.context.as_deref(), l.source), (Some(x.as_str()), LabelSource::Xattr)),
        None => assert_eq!(
            (l.context.as_deref(), l.source),
            (Some("system_u:object_r:bin_t:s0"), LabelSource::FileContexts)
        ),
    }
    assert_eq!(labeler.label_of(FileRef::Path(ls), &md), l, "cached answer");
    assert_eq!(labeler.cached(), 1);
    use std::os::unix::fs::MetadataExt;
    labeler.invalidate(md.dev(), md.ino());
    assert_eq!(labeler.cached(), 0);
}

#[test]
#[ignore = "needs the system policy"]
fn the_cache_is_bounded() {
    let p = policy();
    let fc = Arc::new(FileContexts::load(&SpecFiles::system(), &p).unwrap());
    let labeler = ObjectLabeler::with_limit(Arc::clone(&fc), 3);
    let mut seen = Vec::new();
    for path in ["/usr/bin/ls", "/usr/bin/cat", "/usr/bin/env", "/usr/bin/true", "/etc/passwd", "/etc/hosts"] {
        let path = std::path::Path::new(path);
        let md = std::fs::symlink_metadata(path).unwrap();
        let uncached = labeler.label_uncached(FileRef::Path(path), &md);
        assert_eq!(labeler.label_of(FileRef::Path(path), &md), uncached, "{}", path.display());
        assert!(labeler.cached() <= 3, "{} inodes cached", labeler.cached());
        seen.push((path, md, uncached));
    }
    assert_eq!(labeler.cached(), 3);
    // Evicted inodes are labeled again, with the same answer.
    for (path, md, label) in &seen {
        assert_eq!(&labeler.label_of(FileRef::Path(path), md), label, "{}", path.display());
    }
}

#[test]
fn restorecon_defaults_and_spec_file_sets() {
    let opts = rampart_label::RelabelOptions::restorecon();
    assert!(opts.realpath && !opts.recursive && !opts.dry_run && !opts.force && !opts.cross_filesystems);
    let system = rampart_label::system_file_contexts_path(std::path::Path::new("/etc/selinux"));
    if system.exists() {
        assert!(opts.customizable_types.iter().any(|t| t == "public_content_t"), "{:?}", opts.customizable_types);
        assert_eq!(SpecFiles::system(), SpecFiles::from_dir(system.parent().unwrap()));
    }
    let b = SpecFiles::from_base(std::path::Path::new("/x/fc"));
    assert_eq!(b.files.len(), 3);
    assert_eq!(b.subs_dist.as_deref(), Some(std::path::Path::new("/x/fc.subs_dist")));
    assert_eq!(b.clone().base_only().files, vec![(std::path::PathBuf::from("/x/fc"), true)]);
}

#[test]
#[ignore = "needs the system policy"]
fn a_path_label_is_always_one_of_the_contexts_for_its_file_type() {
    let p = policy();
    let fc = FileContexts::load(&SpecFiles::system(), &p).unwrap();
    let labeler = ObjectLabeler::new(Arc::new(FileContexts::load(&SpecFiles::system(), &p).unwrap()));
    let per_type: Vec<(FileType, HashSet<&str>)> =
        FileType::ALL.into_iter().map(|ft| (ft, fc.contexts_for(ft).collect())).collect();
    let paths = common::every(&common::machine_paths(), 7);
    assert!(paths.len() > 1000, "{} paths", paths.len());
    let mut labeled = 0;
    for (path, mode) in &paths {
        let ft = FileType::from_mode(*mode).unwrap();
        let md = std::fs::symlink_metadata(path).unwrap();
        let from_path = labeler.path_label(FileRef::Path(path), &md);
        assert_eq!(from_path.context.as_deref(), fc.lookup_mode(&common::bytes(path), *mode).context());
        if let Some(ctx) = from_path.context.as_deref() {
            labeled += 1;
            let set = &per_type.iter().find(|(t, _)| *t == ft).unwrap().1;
            assert!(set.contains(ctx), "{}: {ctx} is not among the contexts for {ft}", path.display());
        }
    }
    assert!(labeled > 1000, "{labeled} labeled paths");
    // Typed specs count only for their type: the Debian policy labels
    // some paths one way as directories and another as regular files.
    let only_dirs: Vec<&str> = fc
        .specs()
        .iter()
        .filter(|s| s.file_type == Some(FileType::Directory))
        .filter_map(|s| s.context.as_deref())
        .filter(|c| !per_type[0].1.contains(c))
        .collect();
    assert!(!only_dirs.is_empty(), "some context is given to directories only");
}
