//! libselinux's lookup rules on small hand-made configurations, each
//! answer compared with libselinux itself (`selabel-oracle --path`):
//! spec order (exact after regex, last match wins, files in load order),
//! file types and mode 0, stems (including libselinux's odd stem of
//! `/st\w/z`), PCRE's `$` before a final newline, top-level `|`,
//! literal `{`, `<<none>>`, path cleaning, and substitutions
//! (`.subs_dist`, `.subs`, chains, `/` as original).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};

use common::{oracle, LabelQuery};
use rampart_label::{FileContexts, FileType, SpecFiles};

const C: &str = "system_u:object_r";

fn policy() -> rampart_policy::Policy {
    common::system_policy()
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rampart-label-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

/// Every probe under every type and mode 0, compared with the oracle.
fn compare(base: &Path, fc: &FileContexts, probes: &[Vec<u8>]) -> usize {
    let mut queries: Vec<LabelQuery> = Vec::new();
    for p in probes {
        queries.push((p.clone(), 0));
        for ft in FileType::ALL {
            queries.push((p.clone(), ft.mode_bits()));
        }
        // Permission bits are ignored; an unknown type matches only
        // specs without a type.
        queries.push((p.clone(), 0o100644));
        queries.push((p.clone(), 0o170000));
    }
    let want = oracle(&["--path", base.to_str().unwrap()], &queries, 1);
    let mut bad = 0;
    for ((path, mode), w) in queries.iter().zip(&want) {
        let got = fc.lookup_mode(path, *mode).as_str();
        if got != w {
            bad += 1;
            if bad <= 20 {
                eprintln!("MISMATCH {:?} mode {mode:o}: libselinux {w}, rampart {got}", String::from_utf8_lossy(path));
            }
        }
    }
    assert_eq!(bad, 0, "{bad} of {} lookups differ from libselinux", queries.len());
    queries.len()
}

#[test]
#[ignore = "needs the system policy: compared with libselinux"]
fn hand_made_configuration_matches_libselinux() {
    let dir = temp_dir("semantics");
    let base = dir.join("file_contexts");
    write(
        &dir,
        "file_contexts",
        &format!(
            "# comment\n\
             \n\
             /.*\t{C}:default_t:s0\n\
             /a   --  {C}:etc_t:s0   extra fields are ignored\n\
             /a   {C}:var_t:s0\n\
             /a/b {C}:bin_t:s0\n\
             /a//b {C}:lib_t:s0\n\
             /a/.* {C}:usr_t:s0\n\
             /x(/.*)?\t{C}:usr_t:s0\n\
             /x/y\t-d\t{C}:var_t:s0\n\
             /x/y\t--\t{C}:tmp_t:s0\n\
             /x/y\t-l\t{C}:etc_t:s0\n\
             /x/[^/]+\t-c\t{C}:bin_t:s0\n\
             /x/[^/]+\t-b\t{C}:lib_t:s0\n\
             /x/[^/]+\t-s\t{C}:var_t:s0\n\
             /x/[^/]+\t-p\t{C}:tmp_t:s0\n\
             /st\\w/z  {C}:lib_t:s0\n\
             /foo|/bar  {C}:tmp_t:s0\n\
             /n/[^/]+   {C}:var_t:s0\n\
             /emp/(x)?   {C}:var_t:s0\n\
             /brace{{1}}   {C}:var_t:s0\n\
             /lit{{x}}   {C}:bin_t:s0\n\
             /dol$   {C}:bin_t:s0\n\
             /q\\.d(/.*)?   {C}:etc_t:s0\n\
             /q\\.d/none(/.*)?   <<none>>\n\
             /exact/later  {C}:etc_t:s0\n\
             /exact/.*  {C}:bin_t:s0\n\
             /dig\\d+  {C}:etc_t:s0\n\
             /cls/[[:alpha:]_-]+  {C}:etc_t:s0\n\
             /cls/[]x]  {C}:bin_t:s0\n\
             /dot/.  {C}:tmp_t:s0\n\
             /m /a/b\n"
        )
        .replace("/m /a/b\n", ""),
    );
    write(&dir, "file_contexts.homedirs", &format!("/home/[^/]+/.*  {C}:user_home_t:s0\n/a/b  {C}:etc_t:s0\n"));
    write(&dir, "file_contexts.local", &format!("/home/[^/]+/keep  {C}:tmp_t:s0\n/x/y {C}:bin_t:s0\n"));
    write(
        &dir,
        "file_contexts.subs_dist",
        "# dist\n/m /a\n/m /x\n/d1 /a\n/r /\n/q /a/\n/var/run /run\n/bin /usr/bin\n",
    );
    write(&dir, "file_contexts.subs", "  # local\n/l1 /d1\n/home2 /home\n");

    let fc = FileContexts::load(&SpecFiles::from_base(&base), &policy()).unwrap();
    let mut probes: Vec<Vec<u8>> = [
        "/",
        "//",
        "///a",
        "/a",
        "/a/",
        "/a///",
        "/a\n",
        "/a\n\n",
        "/a/b",
        "/a/b/",
        "/a//b",
        "/a/c",
        "/ab",
        "/x",
        "/x/y",
        "/x/y/",
        "/x/z",
        "/x/y/z",
        "/st\\w/z",
        "/stx/z",
        "/st/z",
        "/foo",
        "/foo/zzz",
        "/zzz/bar",
        "/zzz/bar/",
        "/bar",
        "/n/a\nb",
        "/nn/x\n",
        "/nn/x",
        "/emp/",
        "/emp",
        "/emp/x",
        "/brace",
        "/bracee",
        "/lit{x}",
        "/litx",
        "/dol",
        "/dol\n",
        "/dol$",
        "/q.d",
        "/q.d/a",
        "/qxd",
        "/q.d/none",
        "/q.d/none/z",
        "/exact/later",
        "/exact/other",
        "/dig123",
        "/dig",
        "/cls/ab_-",
        "/cls/a1",
        "/cls/]",
        "/cls/x",
        "/dot/\n",
        "/dot/\u{e9}",
        "/home/u/f",
        "/home/u/keep",
        "/home2/u/keep",
        "/l1/b",
        "/l1//b",
        "/l1",
        "/m/b",
        "/r/a",
        "/r",
        "/q/b",
        "/d1",
        "/d1x",
        "/var/run/foo",
        "/var/runx",
        "/bin/ls",
        "relative/path",
        "a",
        "/\t",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    probes.push(b"/a/\xff\xfe".to_vec());
    probes.push(b"/home/\xc3\x28/x".to_vec());
    let n = compare(&base, &fc, &probes);
    println!("hand-made configuration: {} probes, {n} lookups, 100% identical to libselinux", probes.len());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Without `.homedirs`/`.local` and subs files; and `SpecFiles::base_only`.
#[test]
#[ignore = "needs the system policy: compared with libselinux"]
fn optional_files_and_base_only() {
    let dir = temp_dir("baseonly");
    let base = dir.join("fc");
    write(&dir, "fc", &format!("/.* {C}:default_t:s0\n/h(/.*)? {C}:etc_t:s0\n"));
    let fc = FileContexts::load(&SpecFiles::from_base(&base), &policy()).unwrap();
    assert_eq!(fc.files(), std::slice::from_ref(&base));
    compare(&base, &fc, &[b"/h/x".to_vec(), b"/z".to_vec()]);
    write(&dir, "fc.homedirs", &format!("/h/x {C}:bin_t:s0\n"));
    let all = FileContexts::load(&SpecFiles::from_base(&base), &policy()).unwrap();
    assert_eq!(all.lookup(b"/h/x", None).context(), Some("system_u:object_r:bin_t:s0"));
    let only = FileContexts::load(&SpecFiles::from_base(&base).base_only(), &policy()).unwrap();
    assert_eq!(only.lookup(b"/h/x", None).context(), Some("system_u:object_r:etc_t:s0"));
    std::fs::remove_dir_all(&dir).unwrap();
}
