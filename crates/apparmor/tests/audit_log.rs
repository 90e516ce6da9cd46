//! Audit as AppArmor writes it (issue 11, item 4): records built from
//! the engine's decisions are read back by python3-apparmor's log parser
//! (`apparmor.logparser.ReadLog`, what aa-logprof uses, on libapparmor's
//! `parse_record`), and every field it parses must be what was put in;
//! the complain-mode records must then reach aa-logprof's table of
//! accesses to turn into rules (`read_log`'s `PERMITTING` paths).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::PathBuf;
use std::process::Command;

use rampart_apparmor::audit::{file_line, FileAudit};
use rampart_apparmor::file::{link_perm, path_perm, FileDecision, RecordKind};
use rampart_apparmor::perms::{letters, MAY_READ, MAY_WRITE};
use rampart_apparmor::Policy;
use rampart_avc::audit::AuditStamp;

const PROFILES: &str = "\
profile web /usr/bin/web {
  /srv/** r,
  audit /srv/audited/** r,
}
profile \"learn mode\" flags=(complain) {
}
";

/// Reads the log with python3-apparmor; one tab-separated line per
/// record (strings as hex of their bytes), then the PERMITTING paths.
const READER: &str = r#"
import sys, LibAppArmor
from apparmor.logparser import ReadLog
from apparmor.profile_list import ProfileList
def h(s):
    return '-' if s is None else s.encode('utf-8', 'surrogateescape').hex()
log = sys.argv[1]
profiles = ProfileList()
profiles.add_profile('/etc/apparmor.d/web', 'web', '/usr/bin/web')
profiles.add_profile('/etc/apparmor.d/learn', 'learn mode', None)
reader = ReadLog(log, profiles, '/etc/apparmor.d')
for line in open(log, encoding='utf-8', errors='surrogateescape'):
    ev = reader.parse_event(line)
    rec = LibAppArmor.parse_record(line)
    print('\t'.join(str(x) for x in [ev['aamode'], ev['operation'], h(ev['profile']), h(ev['name']), ev['pid'],
        h(rec.comm), ''.join(sorted(ev['request_mask'] or '')), ''.join(sorted(ev['denied_mask'] or '')),
        ev.get('fsuid', '-'), ev.get('ouid', '-'), ev['info'] or '-', h(ev['name2'])]))
    LibAppArmor.free_record(rec)
tree = ReadLog(log, profiles, '/etc/apparmor.d').read_log('')
for profile, kinds in sorted(tree['PERMITTING'].items()):
    for name, by_owner in sorted(kinds['path'].items()):
        for owner, perms in sorted(by_owner.items()):
            print('PERMITTING', h(profile), h(name), owner, ''.join(sorted(perms)), sep='\t')
"#;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// What the parser reports for a mask: its letters, sorted.
fn sorted_letters(mask: u32) -> String {
    let mut l: Vec<char> = letters(mask).chars().filter(|&c| c != '-').collect();
    l.sort_unstable();
    l.into_iter().collect()
}

struct Case {
    profile: &'static str,
    name: &'static [u8],
    target: Option<&'static [u8]>,
    comm: &'static [u8],
    pid: u32,
    fsuid: u32,
    ouid: u32,
    decision: FileDecision,
    kind: RecordKind,
}

#[test]
#[ignore = "needs apparmor_parser, python3-apparmor and libapparmor: reads the records back"]
fn python3_apparmor_reads_every_field_back() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("aa-audit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, bin) = (dir.join("profiles"), dir.join("profiles.bin"));
    std::fs::write(&src, PROFILES).unwrap();
    common::apparmor_parser(&src, &bin, &[]);
    let policy = Policy::from_files(&[&bin]).unwrap();
    let web = policy.resolve("web").unwrap();
    let learn = policy.resolve("learn mode").unwrap();

    let case = |profile, name: &'static [u8], request, owner, kind, comm: &'static [u8]| {
        let subject = if profile == "web" { web } else { learn };
        let (fsuid, ouid) = if owner { (1000, 1000) } else { (1000, 0) };
        let decision = path_perm(subject, name, request, owner);
        Case { profile, name, target: None, comm, pid: 4242, fsuid, ouid, decision, kind }
    };
    let mut cases = vec![
        case("web", b"/etc/shadow", MAY_READ, false, RecordKind::Denied, b"web"),
        case("web", b"/srv/www/index.html", MAY_WRITE | MAY_READ, true, RecordKind::Denied, b"web"),
        case("web", b"/srv/audited/a", MAY_READ, false, RecordKind::Audit, b"web"),
        // a space and a byte that is not UTF-8: written in hex
        case("web", b"/etc/with space/caf\xe9", MAY_READ, false, RecordKind::Denied, b"we b\xff"),
        case("learn mode", b"/var/lib/learn/db", MAY_READ | MAY_WRITE, true, RecordKind::Allowed, b"learner"),
        case("learn mode", b"/tmp/caf\xe9 2", MAY_READ, false, RecordKind::Allowed, b"learner"),
    ];
    cases.push(Case {
        profile: "web",
        name: b"/srv/link",
        target: Some(b"/etc/passwd"),
        comm: b"ln",
        pid: 7,
        fsuid: 0,
        ouid: 0,
        decision: link_perm(web, b"/srv/link", b"/etc/passwd", true),
        kind: RecordKind::Denied,
    });

    let mut log = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let record = c.decision.record.unwrap_or_else(|| panic!("case {i}: no record"));
        assert_eq!(record.kind, c.kind, "case {i}");
        let line = file_line(
            &FileAudit {
                operation: if c.target.is_some() { "link" } else { "open" },
                namespace: None,
                profile: c.profile,
                name: c.name,
                target: c.target,
                pid: c.pid,
                comm: c.comm,
                fsuid: c.fsuid,
                ouid: c.ouid,
                record: &record,
            },
            &AuditStamp { secs: 1_700_000_000, millis: 123, serial: i as u64 + 1 },
        );
        log.extend_from_slice(line.as_bytes());
        log.push(b'\n');
    }
    let log_path = dir.join("audit.log");
    std::fs::write(&log_path, &log).unwrap();
    let o = Command::new("/usr/bin/python3").args(["-c", READER]).arg(&log_path).output().unwrap();
    assert!(o.status.success(), "python3-apparmor (scripts/install-deps.sh): {}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    let mut lines = out.lines();

    for (i, c) in cases.iter().enumerate() {
        let r = c.decision.record.unwrap();
        let mode = match c.kind {
            RecordKind::Audit => "AUDIT",
            RecordKind::Allowed => "PERMITTING",
            _ => "REJECTING",
        };
        // an audited grant has no denied mask
        let denied = if r.kind == RecordKind::Audit { String::new() } else { sorted_letters(r.denied) };
        let want = [
            mode.to_owned(),
            if c.target.is_some() { "link" } else { "open" }.to_owned(),
            hex(c.profile.as_bytes()),
            hex(c.name),
            c.pid.to_string(),
            hex(c.comm),
            sorted_letters(r.request),
            denied,
            c.fsuid.to_string(),
            c.ouid.to_string(),
            r.info.unwrap_or("-").to_owned(),
            c.target.map_or("-".to_owned(), hex),
        ]
        .join("\t");
        assert_eq!(lines.next(), Some(want.as_str()), "case {i}: {}", String::from_utf8_lossy(&log));
    }
    // aa-logprof's table: the complain-mode accesses, owner by fsuid == ouid
    let rest: Vec<&str> = lines.collect();
    let learn = hex(b"learn mode");
    assert_eq!(
        rest,
        vec![
            format!("PERMITTING\t{learn}\t{}\tFalse\tr", hex(b"/tmp/caf\xe9 2")),
            format!("PERMITTING\t{learn}\t{}\tTrue\trw", hex(b"/var/lib/learn/db")),
        ]
    );
}

/// Reads signal records with python3-apparmor: one line per record
/// (aamode, operation, profile, pid, comm, requested and denied masks,
/// signal, peer), then aa-logprof's signal table for complain mode.
const SIGNAL_READER: &str = r#"
import sys, LibAppArmor
from apparmor.logparser import ReadLog
from apparmor.profile_list import ProfileList
log = sys.argv[1]
profiles = ProfileList()
for name in ('sender', 'receiver', 'learner'):
    profiles.add_profile('/etc/apparmor.d/' + name, name, None)
reader = ReadLog(log, profiles, '/etc/apparmor.d')
for line in open(log):
    ev = reader.parse_event(line)
    rec = LibAppArmor.parse_record(line)
    print('\t'.join(str(x) for x in [ev['aamode'], ev['operation'], ev['profile'], ev['pid'], rec.comm,
        ev['request_mask'], ev['denied_mask'] or '-', ev['signal'], ev['peer']]))
    LibAppArmor.free_record(rec)
tree = ReadLog(log, profiles, '/etc/apparmor.d').read_log('')
for profile, kinds in sorted(tree['PERMITTING'].items()):
    for peer, by_access in sorted(kinds['signal'].items()):
        for access, signals in sorted(by_access.items()):
            print('PERMITTING', profile, peer, access, ','.join(sorted(signals)), sep='\t')
"#;

#[test]
#[ignore = "needs apparmor_parser, python3-apparmor and libapparmor: reads the records back"]
fn python3_apparmor_reads_signal_records_back() {
    use rampart_apparmor::audit::{peer_message, PeerAudit, PeerOperation};
    use rampart_apparmor::ipc::{signal_perm, AA_MAY_RECEIVE, AA_MAY_SEND};
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("aa-audit-sig-{}", std::process::id()));
    let policy = common::with_ipc_rules("signals.profile", &dir);
    // (profile, peer, signal, request, kind, aa-logprof's signal name)
    let cases = [
        ("sender", "receiver", 12, AA_MAY_SEND, RecordKind::Denied, "usr2"),
        ("sender", "receiver", 2, AA_MAY_SEND, RecordKind::Audit, "int"),
        ("receiver", "sender", 10, AA_MAY_RECEIVE, RecordKind::Denied, "usr1"),
        ("receiver", "unconfined", 36, AA_MAY_RECEIVE, RecordKind::Denied, "rtmin+4"),
        ("learner", "receiver", 15, AA_MAY_SEND, RecordKind::Allowed, "term"),
    ];
    let mut log = String::new();
    for (i, &(profile, peer, signal, request, kind, _)) in cases.iter().enumerate() {
        let d = signal_perm(policy.profile(profile).unwrap(), peer, signal, request);
        let record = d.record.unwrap_or_else(|| panic!("case {i}: no record"));
        assert_eq!(record.kind, kind, "case {i}");
        let stamp = AuditStamp { secs: 1_700_000_000, millis: 123, serial: i as u64 + 1 };
        let message = peer_message(&PeerAudit {
            operation: PeerOperation::Signal(signal),
            namespace: None,
            profile,
            pid: 4242,
            comm: b"kill",
            peer,
            record: &record,
        });
        log.push_str(&format!("type=AVC msg=audit({stamp}): {message}\n"));
    }
    let log_path = dir.join("audit.log");
    std::fs::write(&log_path, &log).unwrap();
    let o = Command::new("/usr/bin/python3").args(["-c", SIGNAL_READER]).arg(&log_path).output().unwrap();
    assert!(o.status.success(), "python3-apparmor (scripts/install-deps.sh): {}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    let mut lines = out.lines();
    for (i, &(profile, peer, _, request, kind, name)) in cases.iter().enumerate() {
        let mode = match kind {
            RecordKind::Audit => "AUDIT",
            RecordKind::Allowed => "PERMITTING",
            _ => "REJECTING",
        };
        let access = if request == AA_MAY_SEND { "send" } else { "receive" };
        let denied = if kind == RecordKind::Audit { "-" } else { access };
        let want = [mode, "signal", profile, "4242", "kill", access, denied, name, peer].join("\t");
        assert_eq!(lines.next(), Some(want.as_str()), "case {i}: {log}");
    }
    assert_eq!(lines.collect::<Vec<_>>(), ["PERMITTING\tlearner\treceiver\tsend\tterm"]);
}

/// Reads ptrace records with python3-apparmor: one line per record, then
/// aa-logprof's ptrace table for complain mode.
const PTRACE_READER: &str = r#"
import sys, LibAppArmor
from apparmor.logparser import ReadLog
from apparmor.profile_list import ProfileList
log = sys.argv[1]
profiles = ProfileList()
for name in ('tracer', 'tracee', 'watcher'):
    profiles.add_profile('/etc/apparmor.d/' + name, name, None)
reader = ReadLog(log, profiles, '/etc/apparmor.d')
for line in open(log):
    ev = reader.parse_event(line)
    rec = LibAppArmor.parse_record(line)
    print('\t'.join(str(x) for x in [ev['aamode'], ev['operation'], ev['profile'], ev['pid'], rec.comm,
        ev['request_mask'], ev['denied_mask'] or '-', ev['peer']]))
    LibAppArmor.free_record(rec)
tree = ReadLog(log, profiles, '/etc/apparmor.d').read_log('')
for profile, kinds in sorted(tree['PERMITTING'].items()):
    for peer, by_access in sorted(kinds['ptrace'].items()):
        for access in sorted(by_access):
            print('PERMITTING', profile, peer, access, sep='\t')
"#;

#[test]
#[ignore = "needs apparmor_parser, python3-apparmor and libapparmor: reads the records back"]
fn python3_apparmor_reads_ptrace_records_back() {
    use rampart_apparmor::audit::{peer_message, PeerAudit, PeerOperation};
    use rampart_apparmor::ipc::{tracee_perm, tracer_perm, AA_PTRACE_READ, AA_PTRACE_TRACE};
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("aa-audit-ptrace-{}", std::process::id()));
    let policy = common::with_ipc_rules("ptrace.profile", &dir);
    // (profile, peer, tracer's side, request, kind, the access aa-logprof reads)
    let cases = [
        ("tracer", "reader", true, AA_PTRACE_TRACE, RecordKind::Denied, "trace"),
        ("tracer", "reader2", true, AA_PTRACE_READ, RecordKind::Denied, "read"),
        ("tracee", "reader", false, AA_PTRACE_TRACE, RecordKind::Denied, "tracedby"),
        ("watcher", "tracee", true, AA_PTRACE_READ, RecordKind::Allowed, "read"),
    ];
    let mut log = String::new();
    for (i, &(profile, peer, tracer, request, kind, _)) in cases.iter().enumerate() {
        let p = policy.profile(profile).unwrap();
        let d = if tracer { tracer_perm(p, peer, request) } else { tracee_perm(p, peer, request) };
        // `reader2` is denied by a deny rule: quieted, no record.
        let Some(record) = d.record else {
            assert!(!d.allowed && peer == "reader2", "case {i}: no record");
            continue;
        };
        assert_eq!(record.kind, kind, "case {i}");
        let stamp = AuditStamp { secs: 1_700_000_000, millis: 7, serial: i as u64 + 1 };
        let audit = PeerAudit {
            operation: PeerOperation::Ptrace,
            namespace: None,
            profile,
            pid: 99,
            comm: b"ps",
            peer,
            record: &record,
        };
        log.push_str(&format!("type=AVC msg=audit({stamp}): {}\n", peer_message(&audit)));
    }
    let log_path = dir.join("audit.log");
    std::fs::write(&log_path, &log).unwrap();
    let o = Command::new("/usr/bin/python3").args(["-c", PTRACE_READER]).arg(&log_path).output().unwrap();
    assert!(o.status.success(), "python3-apparmor (scripts/install-deps.sh): {}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    let want: Vec<String> = cases
        .iter()
        .filter(|c| c.1 != "reader2")
        .map(|&(profile, peer, _, _, kind, access)| {
            let mode = if kind == RecordKind::Allowed { "PERMITTING" } else { "REJECTING" };
            [mode, "ptrace", profile, "99", "ps", access, access, peer].join("\t")
        })
        .chain(["PERMITTING\twatcher\ttracee\tread".to_owned()])
        .collect();
    assert_eq!(out.lines().collect::<Vec<_>>(), want, "{log}");
}

/// Reads socket records with python3-apparmor: one line per record, then
/// aa-logprof's network table for complain mode.
const NET_READER: &str = r#"
import sys, LibAppArmor
from apparmor.logparser import ReadLog
from apparmor.profile_list import ProfileList
log = sys.argv[1]
profiles = ProfileList()
for name in ('streamer', 'anything', 'nothing', 'learner'):
    profiles.add_profile('/etc/apparmor.d/' + name, name, None)
reader = ReadLog(log, profiles, '/etc/apparmor.d')
for line in open(log):
    ev = reader.parse_event(line)
    rec = LibAppArmor.parse_record(line)
    print('\t'.join(str(x) for x in [ev['aamode'], ev['operation'], ev['profile'], ev['pid'], rec.comm, ev['info'],
        ev['family'], ev['sock_type'], ev['protocol'], ev['request_mask'], ev['denied_mask'] or '-']))
    LibAppArmor.free_record(rec)
tree = ReadLog(log, profiles, '/etc/apparmor.d').read_log('')
for profile, kinds in sorted(tree['PERMITTING'].items()):
    for family, by_type in sorted(kinds['network'].items()):
        for sock_type, protocols in sorted(by_type.items()):
            for protocol in sorted(protocols):
                print('PERMITTING', profile, family, sock_type, protocol, sep='\t')
"#;

#[test]
#[ignore = "needs apparmor_parser, python3-apparmor and libapparmor: reads the records back"]
fn python3_apparmor_reads_socket_records_back() {
    use rampart_apparmor::audit::{net_message, NetAudit};
    use rampart_apparmor::net::create_perm;
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("aa-audit-net-{}", std::process::id()));
    let policy = common::with_ipc_rules("network.profile", &dir);
    // (profile, family, type, protocol, kind, what python3-apparmor reads:
    // info, family, sock_type, protocol)
    let cases = [
        ("streamer", 2, 2, 17, RecordKind::Denied, "failed type match", "inet", "dgram", "udp"),
        ("nothing", 1, 1, 0, RecordKind::Denied, "failed af match", "unix", "stream", "ip"),
        ("anything", 2, 2, 17, RecordKind::Audit, "None", "inet", "dgram", "udp"),
        ("learner", 10, 1, 6, RecordKind::Allowed, "failed af match", "inet6", "stream", "tcp"),
    ];
    let mut log = String::new();
    for (i, &(profile, family, ty, protocol, kind, ..)) in cases.iter().enumerate() {
        let d = create_perm(policy.profile(profile).unwrap(), family, ty, protocol);
        let record = d.record.unwrap_or_else(|| panic!("case {i}: no record"));
        assert_eq!(record.kind, kind, "case {i}");
        let stamp = AuditStamp { secs: 1_700_000_000, millis: 123, serial: i as u64 + 1 };
        let message = net_message(&NetAudit {
            operation: "create",
            namespace: None,
            profile,
            pid: 4242,
            comm: b"curl",
            family,
            ty,
            protocol,
            record: &record,
        });
        log.push_str(&format!("type=AVC msg=audit({stamp}): {message}\n"));
    }
    let log_path = dir.join("audit.log");
    std::fs::write(&log_path, &log).unwrap();
    let o = Command::new("/usr/bin/python3").args(["-c", NET_READER]).arg(&log_path).output().unwrap();
    assert!(o.status.success(), "python3-apparmor (scripts/install-deps.sh): {}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    let mut lines = out.lines();
    for (i, &(profile, _, _, _, kind, info, family, sock_type, protocol)) in cases.iter().enumerate() {
        let mode = match kind {
            RecordKind::Audit => "AUDIT",
            RecordKind::Allowed => "PERMITTING",
            _ => "REJECTING",
        };
        let denied = if kind == RecordKind::Audit { "-" } else { "create" };
        let want =
            [mode, "create", profile, "4242", "curl", info, family, sock_type, protocol, "create", denied].join("\t");
        assert_eq!(lines.next(), Some(want.as_str()), "case {i}: {log}");
    }
    assert_eq!(lines.collect::<Vec<_>>(), ["PERMITTING\tlearner\tinet6\tstream\ttcp"]);
}
