//! Profiles from the system (issue 11, item 1): a copy of this machine's
//! /etc/apparmor.d (apparmor-profiles, scripts/install-deps.sh) with a
//! disabled profile, a force-complain profile, a profile that does not
//! compile and the leftovers the init scripts skip. The reference for
//! which profiles load is `apparmor_parser -N DIR`, the parser's own
//! walk of the directory; for modes and rules, the parser's output.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rampart_apparmor::file::path_perm;
use rampart_apparmor::perms::MAY_READ;
use rampart_apparmor::{query, LiveProfiles, Mode, ProfileSet, Source};

const PARSER: &str = "/sbin/apparmor_parser";

fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("aa-system-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A copy of /etc/apparmor.d under `root`/apparmor.d.
fn system_copy(root: &Path) -> PathBuf {
    let dir = root.join("apparmor.d");
    let ok = Command::new("cp").arg("-a").arg("/etc/apparmor.d").arg(&dir).status().unwrap().success();
    assert!(ok && dir.join("usr.sbin.nscd").exists(), "needs apparmor-profiles: run scripts/install-deps.sh");
    dir
}

fn source(dir: &Path, root: &Path) -> Source {
    Source { cache: root.join("cache"), parser: PARSER.into(), ..Source::new(dir) }
}

/// Names of the loaded profiles, hats left out (`-N` lists profiles
/// and their children, not hats).
fn loaded_names(set: &ProfileSet) -> BTreeSet<String> {
    set.policy.profiles().filter(|(_, p)| !p.hat).map(|(_, p)| p.name.clone()).collect()
}

#[test]
#[ignore = "needs apparmor_parser and /etc/apparmor.d"]
fn the_system_profiles_load_as_the_parser_walks_them() {
    let root = scratch("walk");
    let dir = system_copy(&root);
    std::os::unix::fs::symlink("../usr.sbin.nscd", dir.join("disable/usr.sbin.nscd")).unwrap();
    std::os::unix::fs::symlink("../lsb_release", dir.join("force-complain/lsb_release")).unwrap();
    std::fs::write(dir.join("zz.broken"), "profile zz_broken /usr/bin/zz {\n  /x rw\n}\n").unwrap();
    // what the init scripts skip: a profile under each of these names
    // would load if it were not skipped
    for (i, name) in
        [".hidden", "README", "a.dpkg-old", "a.dpkg-new", "a.pacnew", "a.rpmnew", "a.orig", "a~"].iter().enumerate()
    {
        std::fs::write(dir.join(name), format!("profile skipped_{i} {{\n}}\n")).unwrap();
    }

    let set = ProfileSet::load(&source(&dir, &root)).unwrap();

    let reference =
        Command::new(PARSER).arg("-N").arg("-I").arg(&dir).arg("--base").arg(&dir).arg(&dir).output().unwrap();
    let want: BTreeSet<String> = String::from_utf8(reference.stdout).unwrap().lines().map(str::to_owned).collect();
    assert!(want.len() > 20, "{want:?}");
    assert_eq!(loaded_names(&set), want);

    assert!(set.policy.profile("nscd").is_none());
    assert_eq!(set.disabled, vec![dir.join("usr.sbin.nscd")]);
    assert_eq!(set.policy.profile("lsb_release").unwrap().mode, Mode::Complain);
    // without force-complain/, lsb_release has no complain flag
    assert_eq!(set.policy.profile("/usr/bin/man").unwrap().mode, Mode::Enforce);
    assert!(set.files.iter().any(|f| f.path == dir.join("lsb_release") && f.force_complain));
    assert_eq!(set.skipped, vec![dir.join("a.orig"), dir.join("a.rpmnew"), dir.join("a~")]);

    assert_eq!(set.failures.len(), 1, "{:?}", set.failures);
    let f = &set.failures[0];
    assert_eq!(f.path, dir.join("zz.broken"));
    assert!(f.message.contains("zz.broken") && f.message.contains("syntax error"), "{}", f.message);
    assert!(f.to_string().starts_with(&format!("{}: ", dir.join("zz.broken").display())), "{f}");

    // aa-status counts every profile, hats and children too
    let c = set.mode_counts();
    assert_eq!(c.enforce + c.complain + c.kill + c.unconfined, set.policy.profiles().count());
    assert!(c.enforce > 0 && c.complain > 0, "{c:?}");
}

#[test]
#[ignore = "needs apparmor_parser and /etc/apparmor.d"]
fn the_cache_is_hit_unless_the_text_changed() {
    let root = scratch("cache");
    let dir = system_copy(&root);
    let src = source(&dir, &root);
    let cold = ProfileSet::load(&src).unwrap();
    assert!(cold.failures.is_empty(), "{:?}", cold.failures);
    assert_eq!(cold.cache_hits(), 0);

    let warm = ProfileSet::load(&src).unwrap();
    assert_eq!(warm.cache_hits(), warm.files.len());
    // the cached binaries are the ones compiled
    assert_eq!(query::info(&warm.policy), query::info(&cold.policy));

    // A rule added through an include (local/) changes the text.
    let lsb = |set: &ProfileSet| {
        let p = set.policy.resolve("lsb_release").unwrap();
        path_perm(p, b"/srv/rampart-cache-test", MAY_READ, true).allowed
    };
    assert!(!lsb(&warm));
    std::fs::write(dir.join("local/lsb_release"), "/srv/rampart-cache-test r,\n").unwrap();
    let changed = ProfileSet::load(&src).unwrap();
    let missed: Vec<_> = changed.files.iter().filter(|f| !f.cache_hit).map(|f| f.path.clone()).collect();
    assert_eq!(missed, vec![dir.join("lsb_release")]);
    assert!(lsb(&changed));

    // so does the mode
    std::os::unix::fs::symlink("../lsb_release", dir.join("force-complain/lsb_release")).unwrap();
    let complain = ProfileSet::load(&src).unwrap();
    assert_eq!(complain.files.len() - complain.cache_hits(), 1);
    assert_eq!(complain.policy.profile("lsb_release").unwrap().mode, Mode::Complain);
}

/// Two profiles edited together each generation: a check sees both
/// from the same generation, however reloads interleave with it.
#[test]
#[ignore = "needs apparmor_parser: compiles the profiles"]
fn a_reload_replaces_the_whole_set_at_once() {
    let root = scratch("swap");
    let dir = root.join("profiles");
    std::fs::create_dir_all(&dir).unwrap();
    let write_generation = |g: u32| {
        for p in ["a", "b"] {
            std::fs::write(dir.join(p), format!("profile {p} {{\n  /gen/{g} r,\n}}\n")).unwrap();
        }
    };
    const GENERATIONS: u32 = 6;
    let generation_of = |set: &ProfileSet, profile: &str| -> Vec<u32> {
        let p = set.policy.resolve(profile).unwrap();
        (0..GENERATIONS).filter(|g| path_perm(p, format!("/gen/{g}").as_bytes(), MAY_READ, true).allowed).collect()
    };
    write_generation(0);
    let live = Arc::new(LiveProfiles::load(source(&dir, &root)).unwrap());
    let held = live.current();
    let done = Arc::new(AtomicBool::new(false));
    let checker = {
        let (live, done) = (Arc::clone(&live), Arc::clone(&done));
        std::thread::spawn(move || {
            let mut checks = 0u64;
            // Relaxed: only ends the loop.
            while !done.load(Ordering::Relaxed) {
                let set = live.current();
                let (a, b) = (generation_of(&set, "a"), generation_of(&set, "b"));
                assert_eq!(a.len(), 1);
                assert_eq!(a, b, "a check saw two generations");
                checks += 1;
            }
            checks
        })
    };
    for g in 1..GENERATIONS {
        write_generation(g);
        let set = live.reload().unwrap();
        assert_eq!(generation_of(&set, "a"), vec![g]);
    }
    done.store(true, Ordering::Relaxed);
    assert!(checker.join().unwrap() > 0);
    // a set held across reloads is unchanged
    assert_eq!(generation_of(&held, "b"), vec![0]);
    assert_eq!(generation_of(&live.current(), "b"), vec![GENERATIONS - 1]);
}

#[test]
fn a_missing_directory_or_parser_says_what() {
    let root = scratch("missing");
    let e = ProfileSet::load(&source(&root.join("nope"), &root)).unwrap_err();
    assert!(e.contains("nope") && e.contains("No such file"), "{e}");
    let mut s = source(&root, &root);
    s.parser = root.join("no-parser");
    let e = ProfileSet::load(&s).unwrap_err();
    assert!(e.contains("no-parser") && e.contains("install the apparmor package"), "{e}");
}
