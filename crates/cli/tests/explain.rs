//! `rampart explain`: rules printed as sesearch prints them, constraints
//! as seinfo prints them, and each denial step on the test policy.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;

#[test]
#[ignore = "needs the system policy and setools: compared with sesearch/seinfo"]
fn granted_lists_the_rules_sesearch_finds() {
    let policy = system_policy();
    let rules = sesearch(&policy, &["-A", "-s", "sshd_t", "-t", "sshd_exec_t", "-c", "file", "-p", "read"]);
    assert!(!rules.is_empty());
    let out = with_policy(
        &policy,
        &["explain", "system_u:system_r:sshd_t:s0", "system_u:object_r:sshd_exec_t:s0", "file", "read"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.starts_with("result: granted\n"), "{}", out.stdout);
    let listed: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with("  allow ")).map(str::trim).collect();
    assert_eq!(listed, rules, "{}", out.stdout);
}

/// staff_t may create user_home_t files by its allow rules, but the
/// identity constraint `u1 == u2 or t1 == can_change_object_identity`
/// fails for a system_u file: staff_t is not in that attribute.
#[test]
#[ignore = "needs the system policy and setools: compared with sesearch/seinfo"]
fn constraint_denial_shows_the_constraint_and_false_comparisons() {
    let policy = system_policy();
    let path = policy.to_str().unwrap();
    let te = sesearch(&policy, &["-A", "-s", "staff_t", "-t", "user_home_t", "-c", "file", "-p", "create"]);
    assert!(!te.is_empty(), "the TE rules must grant create for this test");
    let constraints = tool("seinfo", &[path, "--constrain"]);
    let identity =
        "constrain file { create relabelfrom relabelto } (u1 == u2 or ( t1 == can_change_object_identity ));";
    assert!(constraints.lines().any(|l| l.trim() == identity), "seinfo has no `{identity}`");
    let attr = tool("seinfo", &[path, "-a", "can_change_object_identity", "-x"]);
    assert!(!attr.lines().any(|l| l.trim() == "staff_t"));

    let (s, t) = ("staff_u:staff_r:staff_t:s0", "system_u:object_r:user_home_t:s0");
    let check = with_policy(&policy, &["check", s, t, "file", "create"]);
    assert_eq!(check.code, 1, "{}", check.stdout);
    let out = with_policy(&policy, &["explain", s, t, "file", "create"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stdout.starts_with("result: denied\n"));
    assert!(out.stdout.contains(&format!("reason: a constraint removes `create`:\n  {identity}\n")), "{}", out.stdout);
    assert!(out.stdout.contains("    false  u1 == u2  (u1 = staff_u, u2 = system_u)\n"), "{}", out.stdout);
    assert!(out.stdout.contains("    false  t1 == can_change_object_identity  (t1 = staff_t)\n"), "{}", out.stdout);
    for rule in te {
        assert!(out.stdout.contains(&format!("  {rule}\n")), "missing `{rule}`:\n{}", out.stdout);
    }
    // The same user satisfies it.
    let ok = with_policy(&policy, &["explain", s, "staff_u:object_r:user_home_t:s0", "file", "create"]);
    assert_eq!(ok.code, 0, "{}", ok.stdout);
}

#[test]
#[ignore = "needs the system policy and setools: compared with sesearch/seinfo"]
fn conditional_rules_show_their_branch_state() {
    let policy = system_policy();
    let rule = "allow httpd_t port_type:tcp_socket name_connect; [ httpd_can_network_connect ]:True";
    let rules =
        sesearch(&policy, &["-A", "-s", "httpd_t", "-t", "ssh_port_t", "-c", "tcp_socket", "-p", "name_connect"]);
    assert_eq!(rules, vec![rule]);
    let q =
        ["explain", "system_u:system_r:httpd_t:s0", "system_u:object_r:ssh_port_t:s0", "tcp_socket", "name_connect"];
    let off = with_policy(&policy, &q);
    assert_eq!(off.code, 1);
    assert!(
        off.stdout.contains("reason: no allow rule grants `name_connect` from `httpd_t` to `ssh_port_t`"),
        "{}",
        off.stdout
    );
    assert!(off.stdout.contains(&format!("  {rule} (inactive: httpd_can_network_connect=off)\n")), "{}", off.stdout);
    let on = with_policy(&policy, &[&q[..], &["--bool", "httpd_can_network_connect=on"]].concat());
    assert_eq!(on.code, 0);
    assert!(on.stdout.contains(&format!("  {rule} (active: httpd_can_network_connect=on)\n")), "{}", on.stdout);
}

#[test]
#[ignore = "needs the system policy"]
fn no_rule_denial() {
    let policy = system_policy();
    let out = with_policy(
        &policy,
        &["explain", "system_u:system_r:httpd_t:s0", "system_u:object_r:shadow_t:s0", "file", "read"],
    );
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.contains("reason: no allow rule grants `read` from `httpd_t` to `shadow_t` for class `file`"),
        "{}",
        out.stdout
    );
}

/// The test policy has one case per denial step.
#[test]
#[ignore = "needs checkpolicy: compiles the test policy"]
fn each_denial_step_on_the_test_policy() {
    let p = test_policy("deny");
    let k = "system_u:system_r:kernel_t";

    let out = with_policy(&p, &["explain", "system_u:system_r:child_t", "system_u:object_r:file_t", "file", "getattr"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.contains("reason: type `child_t` is bounded by `parent_t` (typebounds), and `parent_t` is not granted `getattr` on `file_t`\n"),
        "{}",
        out.stdout
    );

    let out = with_policy(&p, &["explain", k, "system_u:user_r:other_t", "process", "transition"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.contains("reason: the transition changes role from `system_r` to `user_r`, and no `allow system_r user_r;` rule permits it\n"),
        "{}",
        out.stdout
    );

    let out = with_policy(&p, &["explain", k, "user_u:object_r:other_t", "file", "write"]);
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains("  constrain file write (u1 == u2);\n"), "{}", out.stdout);
    assert!(out.stdout.contains("    false  u1 == u2  (u1 = system_u, u2 = user_u)\n"), "{}", out.stdout);
    assert!(out.stdout.contains("  allow kernel_t files:file { create getattr read write };\n"), "{}", out.stdout);
    assert!(
        out.stdout.contains("dontaudit rules that silence it:\n  dontaudit kernel_t other_t:file write;\n"),
        "{}",
        out.stdout
    );

    // `t1 == trusted` holds for kernel_t, so create survives the user change.
    let out = with_policy(&p, &["explain", k, "user_u:object_r:other_t", "file", "create"]);
    assert_eq!(out.code, 0, "{}", out.stdout);

    let out = with_policy(&p, &["explain", "system_u:system_r:lax_t", "system_u:object_r:file_t", "file", "write"]);
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains("note: type `lax_t` is permissive"), "{}", out.stdout);
}

#[test]
#[ignore = "needs checkpolicy: compiles the test policy"]
fn undefined_names_follow_handle_unknown() {
    let (deny, allow, reject) = (test_policy("deny"), test_policy("allow"), test_policy("reject"));
    let q = ["explain", "system_u:system_r:kernel_t", "system_u:object_r:file_t", "file", "frobnicate"];
    let out = with_policy(&allow, &q);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("handle_unknown `allow` grants"), "{}", out.stdout);
    let out = with_policy(&deny, &q);
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains("handle_unknown `deny` denies"), "{}", out.stdout);
    let out = with_policy(&reject, &q);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("permission `frobnicate` is not defined for class `file`"), "{}", out.stderr);
}

#[test]
fn explain_usage_errors() {
    for args in [
        &["explain", "a", "b", "file"][..],
        &["explain", "a", "b", "file", "read", "write"],
        &["explain", "--no-cache", "a", "b", "c", "d"],
    ] {
        let out = rampart(args, "");
        assert_eq!(out.code, 2, "{args:?}");
        assert!(out.stderr.starts_with("rampart: error: "), "{}", out.stderr);
    }
}
