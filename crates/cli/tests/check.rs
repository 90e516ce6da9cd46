//! `rampart check`: answers on the system policy checked against
//! `sesearch`, exit statuses, booleans, and undefined names under each
//! `handle_unknown` (on the test policy compiled with checkpolicy).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;

const SSHD: &str = "system_u:system_r:sshd_t:s0";
const SSHD_EXEC: &str = "system_u:object_r:sshd_exec_t:s0";
const HTTPD: &str = "system_u:system_r:httpd_t:s0";
const SHADOW: &str = "system_u:object_r:shadow_t:s0";
const SSH_PORT: &str = "system_u:object_r:ssh_port_t:s0";

#[test]
#[ignore = "needs the system policy and setools: compared with sesearch/seinfo"]
fn granted_matches_sesearch() {
    let policy = system_policy();
    let rules = sesearch(&policy, &["-A", "-s", "sshd_t", "-t", "sshd_exec_t", "-c", "file"]);
    assert!(rules.iter().all(|l| !l.contains('[')), "the query is meant to involve no conditional rule: {rules:?}");
    let expected = rule_perms(&rules);
    assert!(expected.contains("read") && expected.contains("execute"));

    let out = with_policy(&policy, &["check", SSHD, SSHD_EXEC, "file"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(line_set(&out.stdout, "allowed").unwrap(), expected);

    let out = with_policy(&policy, &["check", SSHD, SSHD_EXEC, "file", "read", "execute"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stdout.contains("denied:"));
}

#[test]
#[ignore = "needs the system policy and setools: compared with sesearch/seinfo"]
fn denied_when_sesearch_finds_no_rule() {
    let policy = system_policy();
    let rules = sesearch(&policy, &["-A", "-s", "httpd_t", "-t", "shadow_t", "-c", "file", "-p", "read"]);
    assert!(rules.is_empty(), "{rules:?}");
    let out = with_policy(&policy, &["check", HTTPD, SHADOW, "file", "read", "getattr"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stdout.contains("denied: { "), "{}", out.stdout);
    assert!(line_set(&out.stdout, "denied").unwrap().contains("read"));
    assert!(!line_set(&out.stdout, "allowed").unwrap().contains("read"));
}

/// dontaudit: the union of the dontaudit rules' permissions.
#[test]
#[ignore = "needs the system policy and setools: compared with sesearch/seinfo"]
fn dontaudit_matches_sesearch() {
    let policy = system_policy();
    let rules = sesearch(&policy, &["--dontaudit", "-s", "sshd_t", "-t", "shadow_t", "-c", "file"]);
    let rules: Vec<String> = rules.into_iter().filter(|l| !l.contains('[')).collect();
    assert!(!rule_perms(&rules).is_empty(), "the query is meant to have dontaudit rules");
    let out = with_policy(&policy, &["check", SSHD, SHADOW, "file"]);
    assert_eq!(out.code, 0);
    assert_eq!(line_set(&out.stdout, "dontaudit").unwrap(), rule_perms(&rules));
}

/// `allow httpd_t port_type:tcp_socket name_connect; [ httpd_can_network_connect ]:True`
/// is the only rule, and the boolean is off by default.
#[test]
#[ignore = "needs the system policy and setools: compared with sesearch/seinfo"]
fn bool_changes_the_answer() {
    let policy = system_policy();
    let rules =
        sesearch(&policy, &["-A", "-s", "httpd_t", "-t", "ssh_port_t", "-c", "tcp_socket", "-p", "name_connect"]);
    assert_eq!(rules, vec!["allow httpd_t port_type:tcp_socket name_connect; [ httpd_can_network_connect ]:True"]);
    let b = tool("seinfo", &[policy.to_str().unwrap(), "-b", "httpd_can_network_connect", "-x"]);
    assert!(b.contains("bool httpd_can_network_connect false;"), "{b}");

    let q = [HTTPD, SSH_PORT, "tcp_socket", "name_connect"];
    let off = with_policy(&policy, &[&["check"][..], &q].concat());
    assert_eq!(off.code, 1, "{}", off.stdout);
    assert_eq!(line_set(&off.stdout, "denied").unwrap(), set(&["name_connect"]));
    let on = with_policy(&policy, &[&["check", "--bool", "httpd_can_network_connect=on"][..], &q].concat());
    assert_eq!(on.code, 0, "{}{}", on.stdout, on.stderr);
    assert!(line_set(&on.stdout, "allowed").unwrap().contains("name_connect"));
    // The last setting wins; the option may follow the positionals.
    let off_again = with_policy(
        &policy,
        &[&["check"][..], &q, &["--bool=httpd_can_network_connect=on", "--bool", "httpd_can_network_connect=off"]]
            .concat(),
    );
    assert_eq!(off_again.code, 1);
}

#[test]
#[ignore = "needs the system policy"]
fn unknown_boolean_is_an_error() {
    let policy = system_policy();
    let out = with_policy(&policy, &["check", "--bool", "httpd_can_network_conect=on", HTTPD, SSH_PORT, "tcp_socket"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("boolean `httpd_can_network_conect` is not defined"), "{}", out.stderr);
    assert!(out.stderr.contains("did you mean `httpd_can_network_connect`?"), "{}", out.stderr);
}

#[test]
#[ignore = "needs the system policy"]
fn invalid_contexts_are_errors() {
    let policy = system_policy();
    for (s, t, what) in [
        (
            "system_u:system_r:nosuch_t:s0",
            SSHD_EXEC,
            "invalid source context `system_u:system_r:nosuch_t:s0`: type `nosuch_t` is not defined",
        ),
        (
            SSHD,
            "system_u:object_r:sshd_exec_t",
            "invalid target context `system_u:object_r:sshd_exec_t`: MLS is enabled",
        ),
        ("garbage", SSHD_EXEC, "invalid source context `garbage`"),
        ("", SSHD_EXEC, "invalid source context ``"),
    ] {
        let out = with_policy(&policy, &["check", s, t, "file", "read"]);
        assert_eq!(out.code, 2, "{s} {t}");
        assert!(out.stderr.contains(what), "{}", out.stderr);
        assert!(out.stdout.is_empty());
    }
}

/// The system policy has `handle_unknown allow`: undefined names are
/// granted, with a warning.
#[test]
#[ignore = "needs the system policy"]
fn undefined_names_with_handle_unknown_allow() {
    let policy = system_policy();
    let info = with_policy(&policy, &["policy", "info"]);
    assert!(
        info.stdout.contains("Handle unknown classes:     allow"),
        "the system policy (selinux-policy-default) should have handle_unknown allow:\n{}",
        info.stdout
    );
    let out = with_policy(&policy, &["check", SSHD, SSHD_EXEC, "file", "raed"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("permission `raed` is not defined for class `file` (did you mean `read`?)"),
        "{}",
        out.stderr
    );
    assert_eq!(line_set(&out.stdout, "undefined").unwrap(), set(&["raed"]));
    let out = with_policy(&policy, &["check", SSHD, SSHD_EXEC, "nosuchclass", "read"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("class `nosuchclass` is not defined"), "{}", out.stderr);
}

#[test]
#[ignore = "needs checkpolicy: compiles the test policy"]
fn undefined_names_with_handle_unknown_deny_and_reject() {
    let (deny, reject) = (test_policy("deny"), test_policy("reject"));
    let (k, f) = ("system_u:system_r:kernel_t", "system_u:object_r:file_t");
    let out = with_policy(&deny, &["check", k, f, "file", "read", "frobnicate"]);
    assert_eq!(out.code, 1);
    assert_eq!(line_set(&out.stdout, "denied").unwrap(), set(&["frobnicate"]));
    assert!(out.stderr.contains("handle_unknown deny"), "{}", out.stderr);
    let out = with_policy(&deny, &["check", k, f, "nosuchclass"]);
    assert_eq!(out.code, 0, "nothing asked, nothing denied");
    let out = with_policy(&deny, &["check", k, f, "nosuchclass", "read"]);
    assert_eq!(out.code, 1);

    let out = with_policy(&reject, &["check", k, f, "file", "read", "frobnicate"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("permission `frobnicate` is not defined for class `file`"), "{}", out.stderr);
    let out = with_policy(&reject, &["check", k, f, "nosuchclass"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("class `nosuchclass` is not defined"), "{}", out.stderr);
}

/// Values known from the test policy's source: dontaudit, permissive,
/// constraint removal.
#[test]
#[ignore = "needs checkpolicy: compiles the test policy"]
fn test_policy_answers() {
    let p = test_policy("deny");
    let out = with_policy(&p, &["check", "system_u:system_r:kernel_t", "user_u:object_r:other_t", "file"]);
    assert_eq!(out.code, 0);
    assert_eq!(
        out.stdout, "allowed: { create getattr read }\nauditallow: { }\ndontaudit: { write }\n",
        "write is removed by `constrain file write (u1 == u2)`"
    );
    let out =
        with_policy(&p, &["check", "system_u:system_r:lax_t", "system_u:object_r:file_t", "file", "read", "write"]);
    assert_eq!(out.code, 1);
    assert_eq!(out.stdout, "allowed: { read }\nauditallow: { }\ndontaudit: { }\npermissive: yes\ndenied: { write }\n");
}
