//! `rampart demo` end to end (the main job's command): every scene ends
//! as the policy and the profile say, and both modules' denials reach the
//! audit log. The expectations come from the references: the Debian
//! policy's rules as sesearch reads them (httpd_t reads
//! httpd_sys_content_t, not shadow_t) and the shipped lighttpd profile's
//! web-data abstraction (`/srv/www/htdocs/** r`, nothing for the demo's
//! own tmpfs path).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

mod common;

/// The demo's scenes: (title, exit status; -1 when it could not start).
fn scenes(stdout: &str) -> Vec<(String, i32)> {
    let mut out = Vec::new();
    let mut title = None;
    for line in stdout.lines() {
        if let Some(t) = line.strip_prefix("## ") {
            title = Some(t.to_owned());
        } else if let Some(code) = line.strip_prefix("(exit status ").and_then(|r| r.strip_suffix(')')) {
            let t = title.take().expect("an exit status after a title");
            out.push((t, code.parse().unwrap_or(-1)));
        } else if line.starts_with("(could not run: ") {
            // The exec itself was refused (EPERM).
            out.push((title.take().expect("a failure after a title"), -1));
        }
    }
    out
}

#[test]
#[ignore = "needs root, the system policy (selinux-policy-default), setools, apparmor and apparmor-profiles: mounts and fanotify"]
fn the_demo_confines_by_label_and_by_path() {
    common::require_root("the demo mounts a tmpfs and listens to fanotify");
    let policy = common::system_policy();
    for (path, package) in [
        ("/sbin/apparmor_parser", "apparmor"),
        ("/usr/share/apparmor/extra-profiles/usr.sbin.lighttpd", "apparmor-profiles"),
    ] {
        if !Path::new(path).exists() {
            common::missing(package);
        }
    }
    // The references' answers.
    let reads = |target: &str| {
        let rules = common::sesearch(&policy, &["-A", "-s", "httpd_t", "-t", target, "-c", "file", "-p", "read"]);
        !rules.is_empty()
    };
    assert!(reads("httpd_sys_content_t") && !reads("shadow_t"), "the policy changed: revisit the demo");
    let web_data = std::fs::read_to_string("/etc/apparmor.d/abstractions/web-data").unwrap();
    assert!(web_data.lines().any(|l| l.trim() == "/srv/www/htdocs/** r,"), "web-data changed: revisit the demo");

    let out = common::rampart(&["demo"], "");
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let got = scenes(&out.stdout);
    let status_of = |needle: &str| {
        let hits: Vec<i32> = got.iter().filter(|(t, _)| t.contains(needle)).map(|(_, c)| *c).collect();
        assert_eq!(hits.len(), 1, "one scene titled with {needle:?}:\n{}", out.stdout);
        hits[0]
    };
    // SELinux alone.
    assert_eq!(status_of("httpd reads its content: allowed"), 0, "{}", out.stdout);
    assert_eq!(status_of("the same httpd reads the shadow file: denied"), 1, "{}", out.stdout);
    assert_ne!(status_of("an unconfined shell runs the init script interpreter directly"), 0, "{}", out.stdout);
    assert_eq!(status_of("an unconfined shell reads the shadow file"), 0, "{}", out.stdout);
    // Stacked: the shipped profile and httpd_t.
    assert_eq!(status_of("both allow (abstractions/web-data"), 0, "{}", out.stdout);
    assert_eq!(status_of("SELinux allows (its label), AppArmor denies"), 1, "{}", out.stdout);
    assert_eq!(status_of("AppArmor allows (its path), SELinux denies"), 1, "{}", out.stdout);
    assert_eq!(status_of("the shadow file: both deny"), 1, "{}", out.stdout);
    assert!(out.stdout.contains("<h1>hello from httpd_t</h1>"), "{}", out.stdout);
    assert!(!out.stdout.contains("$6$not-a-real-hash:19000:0:99999:7:::\n(exit status 1)"), "{}", out.stdout);
    // aa-status's process part lists the sleeper under the profile.
    assert!(out.stdout.lines().any(|l| l.starts_with("   /usr/bin/sleep (") && l.ends_with(") /usr/sbin/lighttpd")));
    // Each module's denials, in the same log.
    let denied = |pred: &dyn Fn(&str) -> bool| out.stdout.lines().filter(|l| pred(l)).count();
    let aa = denied(&|l| l.contains("apparmor=\"DENIED\"") && l.contains("profile=\"/usr/sbin/lighttpd\""));
    let avc =
        denied(&|l| l.contains("avc:  denied  { read open }") && l.contains("scontext=system_u:system_r:httpd_t:s0"));
    assert_eq!(aa, 2, "the other name of index.html and the shadow file:\n{}", out.stdout);
    assert!(avc >= 3, "the shadow file twice and leaked-shadow:\n{}", out.stdout);
}
