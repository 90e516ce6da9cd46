//! What the reference test assumes about apparmor_parser, checked with
//! apparmor_parser itself: two spellings that must compile to the same
//! binary policy do (the parser is the reference, not Rampart).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

fn compile(text: &str, tag: &str) -> Vec<u8> {
    let dir = std::env::temp_dir().join(format!("rampart-aa-parser-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join(format!("{tag}.profile"));
    let out = dir.join(format!("{tag}.bin"));
    std::fs::write(&src, text).unwrap();
    common::apparmor_parser(&src, &out, &[]);
    std::fs::read(out).unwrap()
}

fn same(a: &str, b: &str, tag: &str) {
    assert!(
        compile(a, &format!("{tag}-a")) == compile(b, &format!("{tag}-b")),
        "{tag}: the parser compiles them differently"
    );
}

fn differ(a: &str, b: &str, tag: &str) {
    assert!(
        compile(a, &format!("{tag}-a")) != compile(b, &format!("{tag}-b")),
        "{tag}: the parser compiles them the same"
    );
}

#[test]
#[ignore = "needs apparmor_parser: compiles the profiles"]
fn inheriting_exec_implies_mmap() {
    same("profile t { /a ix, }", "profile t { /a mix, }", "ix");
    same("profile t { /a pix, }", "profile t { /a mpix, }", "pix");
    differ("profile t { /a Px, }", "profile t { /a mPx, }", "Px");
}

#[test]
#[ignore = "needs apparmor_parser: compiles the profiles"]
fn multi_value_variables_drop_doubled_slashes() {
    same(
        "@{E}=\"\"\n@{run}=/run/ /var/run/\nprofile t { @{E}/@{run}/f r, }",
        "profile t { /{run,var/run}/f r, }",
        "vars",
    );
    // a leading // from a one-value variable stays (filter_slashes)
    same("@{E}=\"\"\n@{P}=/run/\nprofile t { @{E}/@{P}/f r, }", "profile t { //run/f r, }", "leading");
    same("profile t { /a//b///c r, }", "profile t { /a/b/c r, }", "inner");
}
