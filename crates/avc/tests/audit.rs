//! Audit output: the kernel's AVC line format byte for byte, the sinks,
//! the asynchronous writer (never blocks, counts everything, rate limit,
//! suppression notices), and the real `audit2allow`/`audit2why` reading
//! Rampart's denials computed from the Debian reference policy.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use rampart_avc::audit::format::{self, avc_line, format_line};
use rampart_avc::audit::{
    AsyncConfig, AsyncSink, AuditCounters, AuditRecord, AuditStamp, AuditWriter, FileSink, JsonLinesSink, LineFormat,
    RateLimit, StderrSink, SuppressedNotice,
};
use rampart_avc::{AuditEvent, AuditInfo, AuditSink, Avc, AvcConfig, Mapping, Module, ModuleDecision, Query};
use rampart_policy::{Booleans, Policy};

// ---------------------------------------------------------------------
// Helpers

fn info(pid: u32, comm: &str, path: Option<&str>, extra: &[(&str, &str)]) -> AuditInfo {
    AuditInfo {
        pid: Some(pid),
        comm: Some(comm.to_owned()),
        path: path.map(str::to_owned),
        extra: extra.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
    }
}

#[allow(clippy::too_many_arguments)]
fn event<'a>(
    denied: bool,
    perms: &[&'a str],
    scontext: &'a str,
    tcontext: &'a str,
    tclass: &'a str,
    permissive: bool,
    module: &'a str,
    info: &'a AuditInfo,
) -> AuditEvent<'a> {
    AuditEvent { denied, perms: perms.to_vec(), scontext, tcontext, tclass, permissive, module, info }
}

const HTTPD: &str = "system_u:system_r:httpd_t:s0";
const SHADOW: &str = "system_u:object_r:shadow_t:s0";

fn tmp_path(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    // Relaxed: only uniqueness matters.
    let n = N.fetch_add(1, Ordering::Relaxed);
    let p = std::env::temp_dir().join(format!("rampart-audit-{}-{n}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

fn read_lines(p: &Path) -> Vec<String> {
    std::fs::read_to_string(p).unwrap().lines().map(str::to_owned).collect()
}

/// A `Write` whose bytes the test can read back.
#[derive(Clone, Default)]
struct SharedBuf(Arc<Mutex<Vec<u8>>>);

impl Write for SharedBuf {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl SharedBuf {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

/// An [`AuditWriter`] that sleeps before each record: a slow disk.
struct SlowWriter {
    delay: Duration,
    lines: Arc<Mutex<Vec<String>>>,
}

impl AuditWriter for SlowWriter {
    fn write_record(&mut self, record: &AuditRecord) -> io::Result<()> {
        thread::sleep(self.delay);
        self.lines.lock().unwrap().push(record.line(LineFormat::Kernel));
        Ok(())
    }

    fn write_notice(&mut self, notice: &SuppressedNotice) -> io::Result<()> {
        self.lines.lock().unwrap().push(notice.line());
        Ok(())
    }
}

/// Sums `N` over the `rampart: N audit lines suppressed (rate_limit=R
/// queue_full=Q)` lines, checking each adds up: (N, R, Q, count).
fn notices(lines: &[String]) -> (u64, u64, u64, usize) {
    let mut sum = (0, 0, 0, 0);
    for l in lines.iter().filter(|l| l.starts_with("rampart: ")) {
        let words: Vec<&str> = l.split(' ').collect();
        assert_eq!(words[2..5], ["audit", "lines", "suppressed"], "{l}");
        let n: u64 = words[1].parse().unwrap();
        let r: u64 = words[5].strip_prefix("(rate_limit=").unwrap().parse().unwrap();
        let q: u64 = words[6].strip_prefix("queue_full=").unwrap().strip_suffix(')').unwrap().parse().unwrap();
        assert_eq!(n, r + q, "{l}");
        sum = (sum.0 + n, sum.1 + r, sum.2 + q, sum.3 + 1);
    }
    sum
}

// ---------------------------------------------------------------------
// Format

#[test]
fn denied_line_is_the_kernels() {
    let i = info(1234, "cat", Some("/etc/shadow"), &[("dev", "tmpfs"), ("ino", "42")]);
    let e = event(true, &["read"], HTTPD, SHADOW, "file", false, "selinux", &i);
    assert_eq!(
        avc_line(&e),
        "avc:  denied  { read } for  pid=1234 comm=\"cat\" path=\"/etc/shadow\" dev=\"tmpfs\" ino=42 \
         scontext=system_u:system_r:httpd_t:s0 tcontext=system_u:object_r:shadow_t:s0 tclass=file permissive=0"
    );
}

#[test]
fn granted_line_has_no_permissive_field() {
    let i = info(1, "load_policy", None, &[]);
    let e = event(
        false,
        &["setsecparam"],
        "staff_u:sysadm_r:sysadm_t:s0",
        "system_u:object_r:security_t:s0",
        "security",
        false,
        "selinux",
        &i,
    );
    assert_eq!(
        avc_line(&e),
        "avc:  granted  { setsecparam } for  pid=1 comm=\"load_policy\" scontext=staff_u:sysadm_r:sysadm_t:s0 \
         tcontext=system_u:object_r:security_t:s0 tclass=security"
    );
}

#[test]
fn permissive_and_multiple_perms() {
    let i = info(77, "httpd", Some("/etc/shadow"), &[]);
    let e = event(true, &["read", "write", "open"], HTTPD, SHADOW, "file", true, "selinux", &i);
    assert_eq!(
        avc_line(&e),
        "avc:  denied  { read write open } for  pid=77 comm=\"httpd\" path=\"/etc/shadow\" \
         scontext=system_u:system_r:httpd_t:s0 tcontext=system_u:object_r:shadow_t:s0 tclass=file permissive=1"
    );
}

#[test]
fn untrusted_strings_are_hex_when_the_kernel_would() {
    // A space, a double quote, a control character, non-ASCII: the whole
    // string in upper-case hex, unquoted (audit_log_untrustedstring).
    let cases = [
        ("my app", "6D7920617070"),
        ("say\"hi", "736179226869"),
        ("tab\there", "7461620968657265"),
        ("café", "636166C3A9"),
        ("plain-name_1.2", "\"plain-name_1.2\""),
    ];
    for (raw, want) in cases {
        let i = info(5, raw, Some(raw), &[("name", raw)]);
        let e = event(true, &["getattr"], HTTPD, SHADOW, "file", false, "selinux", &i);
        assert_eq!(
            avc_line(&e),
            format!(
                "avc:  denied  {{ getattr }} for  pid=5 comm={want} path={want} name={want} \
                 scontext={HTTPD} tcontext={SHADOW} tclass=file permissive=0"
            )
        );
    }
    assert_eq!(format::untrusted("/srv/my files/x"), "2F7372762F6D792066696C65732F78");
    // No field can be forged through a string.
    let i = info(5, "x scontext=system_u:system_r:kernel_t:s0", None, &[]);
    let e = event(true, &["read"], HTTPD, SHADOW, "file", false, "selinux", &i);
    assert!(!avc_line(&e).contains("kernel_t"));
}

#[test]
fn numbers_and_addresses_are_unquoted() {
    let i = info(
        9,
        "nc",
        None,
        &[("capability", "21"), ("laddr", "10.0.0.1"), ("lport", "8080"), ("faddr", "::1"), ("ioctlcmd", "541b")],
    );
    let e =
        event(true, &["name_connect"], HTTPD, "system_u:object_r:ssh_port_t:s0", "tcp_socket", false, "selinux", &i);
    assert_eq!(
        avc_line(&e),
        "avc:  denied  { name_connect } for  pid=9 comm=\"nc\" capability=21 laddr=10.0.0.1 lport=8080 faddr=::1 \
         ioctlcmd=541b scontext=system_u:system_r:httpd_t:s0 tcontext=system_u:object_r:ssh_port_t:s0 \
         tclass=tcp_socket permissive=0"
    );
}

#[test]
fn other_modules_are_named_at_the_end() {
    let i = info(3, "cat", None, &[]);
    let e = event(true, &["read"], HTTPD, SHADOW, "file", false, "fence", &i);
    assert!(avc_line(&e).ends_with(" tclass=file permissive=0 module=fence"), "{}", avc_line(&e));
    let g = event(false, &["read"], HTTPD, SHADOW, "file", false, "fence", &i);
    assert!(avc_line(&g).ends_with(" tclass=file module=fence"), "{}", avc_line(&g));
}

#[test]
fn no_perms_is_null_and_no_info_is_kernel_spacing() {
    let i = AuditInfo::default();
    let e = event(true, &[], HTTPD, SHADOW, "file", false, "selinux", &i);
    assert_eq!(
        avc_line(&e),
        "avc:  denied  null scontext=system_u:system_r:httpd_t:s0 tcontext=system_u:object_r:shadow_t:s0 \
         tclass=file permissive=0"
    );
    let e = event(true, &["read"], HTTPD, SHADOW, "file", false, "selinux", &i);
    assert!(avc_line(&e).starts_with("avc:  denied  { read } for  scontext="));
}

#[test]
fn prefixed_variants() {
    let i = info(1234, "cat", Some("/etc/shadow"), &[]);
    let e = event(true, &["read"], HTTPD, SHADOW, "file", false, "selinux", &i);
    let stamp = AuditStamp { secs: 1_700_000_000, millis: 5, serial: 42 };
    let body = avc_line(&e);
    assert_eq!(format_line(LineFormat::Kernel, &e, &stamp), body);
    assert_eq!(format_line(LineFormat::Auditd, &e, &stamp), format!("type=AVC msg=audit(1700000000.005:42): {body}"));
    assert_eq!(
        format_line(LineFormat::Dmesg, &e, &stamp),
        format!("audit: type=1400 audit(1700000000.005:42): {body}")
    );
    let r = AuditRecord::new(&e, stamp);
    assert_eq!(r.line(LineFormat::Auditd), format!("type=AVC msg=audit(1700000000.005:42): {body}"));
}

// ---------------------------------------------------------------------
// Sinks

#[test]
fn json_lines_carry_every_field() {
    let buf = SharedBuf::default();
    let sink = JsonLinesSink::new(buf.clone());
    let i = info(1234, "my app", Some("/etc/shadow"), &[("dev", "tmpfs"), ("ino", "42")]);
    sink.audit(&event(true, &["read", "write"], HTTPD, SHADOW, "file", true, "fence", &i));
    let j = AuditInfo::default();
    sink.audit(&event(false, &["setsecparam"], HTTPD, SHADOW, "security", false, "selinux", &j));
    let text = buf.text();
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    let a = &lines[0];
    assert_eq!(a["type"], "avc");
    assert_eq!(a["denied"], true);
    assert_eq!(a["perms"], serde_json::json!(["read", "write"]));
    assert_eq!(a["scontext"], HTTPD);
    assert_eq!(a["tcontext"], SHADOW);
    assert_eq!(a["tclass"], "file");
    assert_eq!(a["permissive"], true);
    assert_eq!(a["module"], "fence");
    assert_eq!(a["pid"], 1234);
    assert_eq!(a["comm"], "my app");
    assert_eq!(a["path"], "/etc/shadow");
    assert_eq!(a["extra"], serde_json::json!({"dev": "tmpfs", "ino": "42"}));
    assert_eq!(a["serial"], 1);
    assert!(a["timestamp"].as_f64().unwrap() > 1.6e9);
    let b = &lines[1];
    assert_eq!(b["serial"], 2);
    assert_eq!(b["denied"], false);
    assert!(b["pid"].is_null() && b["comm"].is_null() && b["path"].is_null());
}

/// A suppression notice in a JSON log: `type`, its time, and the lines
/// lost, in total and by cause (the documented object).
#[test]
fn json_lines_carry_suppression_notices() {
    let buf = SharedBuf::default();
    let mut sink = JsonLinesSink::new(buf.clone());
    let time = std::time::UNIX_EPOCH + Duration::from_millis(1_700_000_000_123);
    AuditWriter::write_notice(&mut sink, &SuppressedNotice { rate_limited: 3, queue_full: 1, time }).unwrap();
    AuditWriter::flush(&mut sink).unwrap();
    let text = buf.text();
    let n: serde_json::Value = serde_json::from_str(text.strip_suffix('\n').unwrap()).unwrap();
    let want = serde_json::json!({"type": "suppressed", "timestamp": 1_700_000_000.123, "count": 4, "rate_limit": 3, "queue_full": 1});
    assert_eq!(n, want, "{text}");
}

#[test]
fn file_sink_appends_lines_synchronously() {
    let p = tmp_path("sync.log");
    std::fs::write(&p, "existing line\n").unwrap();
    let sink = FileSink::open(&p, LineFormat::Auditd).unwrap();
    let i = info(1, "cat", None, &[]);
    for _ in 0..3 {
        sink.audit(&event(true, &["read"], HTTPD, SHADOW, "file", false, "selinux", &i));
    }
    let lines = read_lines(&p);
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0], "existing line");
    for (n, l) in lines[1..].iter().enumerate() {
        assert!(l.starts_with("type=AVC msg=audit("), "{l}");
        assert!(l.contains(&format!(":{}): avc:  denied  {{ read }} for  pid=1", n + 1)), "{l}");
    }
    assert_eq!(sink.failures(), 0);
    // Stderr works both ways too (output not captured).
    let stderr = StderrSink::default();
    stderr.audit(&event(true, &["read"], HTTPD, SHADOW, "file", false, "selinux", &i));
    assert_eq!(stderr.failures(), 0);
    std::fs::remove_file(&p).unwrap();
}

#[test]
fn async_sink_writes_everything_in_order_and_drains_on_drop() {
    let p = tmp_path("async.log");
    let sink = AsyncSink::new(FileSink::open(&p, LineFormat::Auditd).unwrap(), AsyncConfig::default()).unwrap();
    let i = info(1, "cat", None, &[]);
    for _ in 0..500 {
        sink.audit(&event(true, &["read"], HTTPD, SHADOW, "file", false, "selinux", &i));
    }
    let c = sink.counters();
    drop(sink); // no flush: dropping drains the queue and joins the writer
    let lines = read_lines(&p);
    assert_eq!(c.submitted, 500);
    assert_eq!(lines.len(), 500);
    for (n, l) in lines.iter().enumerate() {
        assert!(l.contains(&format!(":{}): avc:  denied ", n + 1)), "serials in order: {l}");
    }
    std::fs::remove_file(&p).unwrap();
}

#[test]
fn audit_never_blocks_on_a_slow_writer() {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let writer = SlowWriter { delay: Duration::from_millis(200), lines: Arc::clone(&lines) };
    let capacity = 4;
    let config = AsyncConfig { queue_capacity: capacity, rate_limit: None, ..AsyncConfig::default() };
    let sink = AsyncSink::new(writer, config).unwrap();
    let i = info(1, "cat", Some("/etc/shadow"), &[]);
    let e = event(true, &["read"], HTTPD, SHADOW, "file", false, "selinux", &i);
    let submitted = 2000u64;
    let start = Instant::now();
    let mut slowest = Duration::ZERO;
    for _ in 0..submitted {
        let t = Instant::now();
        sink.audit(&e);
        slowest = slowest.max(t.elapsed());
    }
    let total = start.elapsed();
    // One record costs the writer 200 ms; a blocking audit() would take
    // minutes here. Generous bounds for a loaded 2-core machine.
    assert!(slowest < Duration::from_millis(150), "slowest audit() call took {slowest:?}");
    assert!(total < Duration::from_millis(2000), "{submitted} audit() calls took {total:?}");
    let c = sink.counters();
    assert_eq!(c.submitted, submitted);
    assert!(c.dropped >= submitted - capacity as u64 - 1, "{c:?}");
    // The queue (4) plus the record being written (1) got through.
    assert!(sink.flush(), "flush within its timeout");
    let c = sink.counters();
    println!("slow writer: slowest call {slowest:?}, all calls {total:?}, {c:?}");
    assert_eq!(c.written + c.dropped + c.suppressed, c.submitted, "{c:?}");
    assert_eq!(c.accounted(), c.submitted);
    assert!((capacity as u64..=capacity as u64 + 1).contains(&c.written), "{c:?}");
    assert_eq!(c.failed, 0);
    // The writer reported the loss.
    let lines = lines.lock().unwrap().clone();
    let (n, r, q, count) = notices(&lines);
    assert!(count >= 1, "{lines:?}");
    assert_eq!((n, r, q), (c.dropped, 0, c.dropped), "{lines:?}");
    assert_eq!(lines.len() as u64, c.written + count as u64);
}

#[test]
fn shutdown_waits_a_bounded_time() {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let writer = SlowWriter { delay: Duration::from_secs(3), lines };
    let config = AsyncConfig { shutdown_timeout: Duration::from_millis(100), ..AsyncConfig::default() };
    let sink = AsyncSink::new(writer, config).unwrap();
    let i = AuditInfo::default();
    for _ in 0..5 {
        sink.audit(&event(true, &["read"], HTTPD, SHADOW, "file", false, "selinux", &i));
    }
    assert!(!sink.flush_within(Duration::from_millis(50)));
    let start = Instant::now();
    assert!(!sink.shutdown(), "the writer cannot finish 15 s of writes in 100 ms");
    assert!(start.elapsed() < Duration::from_secs(2), "{:?}", start.elapsed());
}

#[test]
fn rate_limit_keeps_about_the_limit_and_reports_the_rest() {
    let p = tmp_path("rate.log");
    let config = AsyncConfig {
        queue_capacity: 16384,
        rate_limit: Some(RateLimit::per_second(100)),
        notice_interval: Duration::from_millis(200),
        ..AsyncConfig::default()
    };
    let sink = AsyncSink::new(FileSink::open(&p, LineFormat::Kernel).unwrap(), config).unwrap();
    let i = info(1, "flood", None, &[]);
    let e = event(true, &["read"], HTTPD, SHADOW, "file", false, "selinux", &i);
    let start = Instant::now();
    for _ in 0..10_000 {
        sink.audit(&e);
    }
    let elapsed = start.elapsed();
    assert!(elapsed < Duration::from_millis(900), "the loop must fit in the first second: {elapsed:?}");
    // The notice is periodic: it appears without a flush.
    thread::sleep(Duration::from_millis(600));
    let early = read_lines(&p);
    assert!(notices(&early).3 >= 1, "no suppression notice after 600 ms");

    assert!(sink.flush());
    let c = sink.counters();
    println!("rate limit 100/s, 10000 events in {elapsed:?}: {c:?}");
    // A full bucket (100) plus what refilled while the loop ran.
    let refill = (elapsed.as_secs_f64() * 100.0).ceil() as u64 + 1;
    assert!((100..=100 + refill).contains(&c.written), "{c:?}");
    assert_eq!(c.submitted, 10_000);
    assert_eq!(c.dropped, 0);
    assert_eq!(c.written + c.dropped + c.suppressed, c.submitted);
    let lines = read_lines(&p);
    let avc = lines.iter().filter(|l| l.starts_with("avc:  denied  { read } for  pid=1 ")).count() as u64;
    assert_eq!(avc, c.written);
    let (n, r, q, count) = notices(&lines);
    assert_eq!((n, r, q), (c.suppressed, c.suppressed, 0), "{:?}", lines.iter().filter(|l| l.starts_with("rampart")));
    assert_eq!(count as u64, c.notices);
    assert_eq!(lines.len() as u64, c.written + c.notices);

    // A second later the bucket is full again: about 100 more.
    thread::sleep(Duration::from_millis(1000));
    let before = sink.counters().written;
    let start = Instant::now();
    for _ in 0..1000 {
        sink.audit(&e);
    }
    let refill = (start.elapsed().as_secs_f64() * 100.0).ceil() as u64 + 1;
    assert!(sink.flush());
    let more = sink.counters().written - before;
    assert!((100..=100 + refill).contains(&more), "{more} written in the next second");
    drop(sink);
    std::fs::remove_file(&p).unwrap();
}

#[test]
fn counters_add_up_under_concurrent_callers() {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let writer = SlowWriter { delay: Duration::from_micros(200), lines: Arc::clone(&lines) };
    let config = AsyncConfig {
        queue_capacity: 64,
        rate_limit: Some(RateLimit { per_second: 2000, burst: 200 }),
        ..AsyncConfig::default()
    };
    let sink = Arc::new(AsyncSink::new(writer, config).unwrap());
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let sink = Arc::clone(&sink);
            thread::spawn(move || {
                let i = info(1, "t", None, &[]);
                for _ in 0..5000 {
                    sink.audit(&event(true, &["read"], HTTPD, SHADOW, "file", false, "selinux", &i));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert!(sink.flush());
    let c: AuditCounters = sink.counters();
    println!("4 threads x 5000: {c:?}");
    assert_eq!(c.submitted, 20_000);
    assert_eq!(c.written + c.dropped + c.suppressed, c.submitted, "{c:?}");
    assert!(c.suppressed > 0);
    let lines = lines.lock().unwrap();
    let (n, r, q, _) = notices(&lines);
    assert_eq!((n, r, q), (c.suppressed + c.dropped, c.suppressed, c.dropped));
}

// ---------------------------------------------------------------------
// The real audit2allow and audit2why

const DEBIAN_POLICY: &str = "/etc/selinux/default/policy/policy.33";

fn tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{cmd:?} failed: {}\n{stdout}\n{stderr}", out.status);
    stdout
}

/// A stacked module: denies sshd_t reading etc_t files, which SELinux
/// allows, so the denial is the module's.
struct Fence;

impl Module for Fence {
    fn name(&self) -> &str {
        "fence"
    }

    fn check(&self, q: &Query<'_>) -> ModuleDecision {
        if q.class_name == "file" && q.target_type() == Some("etc_t") && q.source_type() == Some("sshd_t") {
            ModuleDecision { allowed: !q.perm("read"), ..ModuleDecision::ALLOW_ALL }
        } else {
            ModuleDecision::ALLOW_ALL
        }
    }
}

/// One audited access: contexts, class, perms, and what the Debian policy
/// must say about it.
struct Case {
    serial_hint: &'static str,
    s: &'static str,
    t: &'static str,
    class: &'static str,
    perms: &'static [&'static str],
    info: AuditInfo,
}

#[test]
#[ignore = "needs the system policy and audit2allow/audit2why: they read our lines"]
fn audit2allow_and_audit2why_read_our_lines() {
    let (Some(audit2allow), Some(audit2why)) = (tool("audit2allow"), tool("audit2why")) else {
        panic!(
            "missing prerequisite: audit2allow/audit2why (policycoreutils-python-utils); \
             install it with scripts/install-deps.sh"
        );
    };
    if !Path::new(DEBIAN_POLICY).is_file() {
        panic!(
            "missing prerequisite: {DEBIAN_POLICY} (selinux-policy-default); install it with scripts/install-deps.sh"
        );
    }
    let policy = Arc::new(Policy::from_file(Path::new(DEBIAN_POLICY)).unwrap());
    let bools = Booleans::defaults(&policy);

    // 1. Confirm each denial (and grant) with the policy engine itself.
    let decide = |s: &str, t: &str, class: &str, perms: &[&str], bools: &Booleans| {
        let (s, t) = (policy.parse_context(s).unwrap(), policy.parse_context(t).unwrap());
        let c = policy.class_by_name(class).unwrap();
        let bits = perms.iter().fold(0, |acc, p| acc | policy.perm_bit(c, p).unwrap());
        let d = policy.compute_av(bools, &s, &t, c);
        (d, bits)
    };
    // TE: no rule lets httpd_t read shadow_t, and the denial is audited.
    let (d, bits) = decide(HTTPD, SHADOW, "file", &["read"], &bools);
    assert_eq!(d.allowed & bits, 0);
    assert_eq!(d.auditdeny & bits, bits, "not dontaudit'ed");
    // TE, two permissions: httpd_t may only map etc_t files.
    let etc = "system_u:object_r:etc_t:s0";
    let (d, bits) = decide(HTTPD, etc, "file", &["write", "append"], &bools);
    assert_eq!((d.allowed & bits, d.auditdeny & bits), (0, bits));
    // Boolean: httpd_can_network_connect (default off) allows name_connect
    // to any port type, ssh_port_t among them.
    let ssh_port = "system_u:object_r:ssh_port_t:s0";
    let (d, bits) = decide(HTTPD, ssh_port, "tcp_socket", &["name_connect"], &bools);
    assert_eq!((d.allowed & bits, d.auditdeny & bits), (0, bits));
    let b = *policy.names.bools.get("httpd_can_network_connect").unwrap();
    let on = bools.with(&policy, &[(b, true)]);
    assert_eq!(decide(HTTPD, ssh_port, "tcp_socket", &["name_connect"], &on).0.allowed & bits, bits);
    // Constraint (UBAC): user_t may read its own user's home files, not
    // another SELinux user's.
    let user = "user_u:user_r:user_t:s0";
    let (d, bits) = decide(user, "user_u:object_r:user_home_t:s0", "file", &["read"], &bools);
    assert_eq!(d.allowed & bits, bits);
    let staff_home = "staff_u:object_r:user_home_t:s0";
    let (d, bits) = decide(user, staff_home, "file", &["read"], &bools);
    assert_eq!((d.allowed & bits, d.auditdeny & bits), (0, bits));
    // Grant with auditallow: setsecparam by sysadm_t.
    let sysadm = "staff_u:sysadm_r:sysadm_t:s0";
    let security = "system_u:object_r:security_t:s0";
    let (d, bits) = decide(sysadm, security, "security", &["setsecparam"], &bools);
    assert_eq!((d.allowed & bits, d.auditallow & bits), (bits, bits));
    // Stacked module: SELinux lets sshd_t read etc_t files; the "fence"
    // module denies it on top of SELinux.
    let sshd = "system_u:system_r:sshd_t:s0";
    let (d, bits) = decide(sshd, etc, "file", &["read"], &bools);
    assert_eq!(d.allowed & bits, bits);

    // 2. The same accesses through the AVC, audited to an auditd-format
    //    file by an AsyncSink.
    let log = tmp_path("audit.log");
    let sink = Arc::new(
        AsyncSink::new(
            FileSink::open(&log, LineFormat::Auditd).unwrap(),
            AsyncConfig { rate_limit: None, ..AsyncConfig::default() },
        )
        .unwrap(),
    );
    let mapping = Mapping::new(&[
        ("file", &["read", "write", "append", "open", "getattr"]),
        ("tcp_socket", &["name_connect"]),
        ("security", &["setsecparam"]),
    ])
    .unwrap();
    let avc = Avc::new(AvcConfig::new(Arc::clone(&policy), mapping, sink.clone())).unwrap();
    avc.register_module(Arc::new(Fence)).unwrap();
    let cases = [
        Case {
            serial_hint: "te",
            s: HTTPD,
            t: SHADOW,
            class: "file",
            perms: &["read"],
            info: info(1234, "httpd", Some("/etc/shadow"), &[("dev", "tmpfs"), ("ino", "42")]),
        },
        Case {
            serial_hint: "te2",
            s: HTTPD,
            t: etc,
            class: "file",
            perms: &["write", "append"],
            info: info(1235, "my httpd", Some("/etc/my site.conf"), &[("dev", "sda1"), ("ino", "4242")]),
        },
        Case {
            serial_hint: "bool",
            s: HTTPD,
            t: ssh_port,
            class: "tcp_socket",
            perms: &["name_connect"],
            info: info(1236, "httpd", None, &[("dest", "22")]),
        },
        Case {
            serial_hint: "constraint",
            s: user,
            t: staff_home,
            class: "file",
            perms: &["read"],
            info: info(1237, "cat", Some("/home/staff/notes"), &[("dev", "sda1"), ("ino", "99")]),
        },
        Case {
            serial_hint: "granted",
            s: sysadm,
            t: security,
            class: "security",
            perms: &["setsecparam"],
            info: info(1238, "setsecparam", None, &[]),
        },
        Case {
            serial_hint: "module",
            s: sshd,
            t: etc,
            class: "file",
            perms: &["read"],
            info: info(1239, "sshd", Some("/etc/ssh/sshd_config"), &[]),
        },
    ];
    let mut serial_of = BTreeMap::new();
    for (n, case) in cases.iter().enumerate() {
        let (s, t) = (avc.intern(case.s).unwrap(), avc.intern(case.t).unwrap());
        let class = avc.mapping().class(case.class).unwrap();
        let perms = avc.mapping().perms(class, case.perms).unwrap();
        let decision = avc.has_perm(s, t, class, perms, &case.info);
        assert_eq!(decision.passes(), case.serial_hint == "granted", "{}", case.serial_hint);
        serial_of.insert(case.serial_hint, n as u64 + 1);
    }
    assert!(sink.flush());
    assert_eq!(sink.counters().written, cases.len() as u64);
    // A permissive denial and a suppression notice in the same file, as
    // they would appear in a real log.
    {
        let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        let i = info(1240, "httpd", Some("/etc/shadow"), &[]);
        let e = event(true, &["getattr"], HTTPD, SHADOW, "file", true, "selinux", &i);
        let stamp = AuditStamp::now(100);
        writeln!(f, "{}", format_line(LineFormat::Auditd, &e, &stamp)).unwrap();
        let n = SuppressedNotice { rate_limited: 3, queue_full: 1, time: std::time::SystemTime::now() };
        writeln!(f, "{}", n.line()).unwrap();
    }
    let text = std::fs::read_to_string(&log).unwrap();
    println!("--- {} ---\n{text}", log.display());
    let lines: Vec<&str> = text.lines().collect();
    let line_of = |hint: &str| -> &str {
        let serial = serial_of[hint];
        lines.iter().find(|l| l.contains(&format!(":{serial}): avc:"))).unwrap()
    };
    assert!(line_of("te").ends_with(
        "avc:  denied  { read } for  pid=1234 comm=\"httpd\" path=\"/etc/shadow\" dev=\"tmpfs\" ino=42 \
         scontext=system_u:system_r:httpd_t:s0 tcontext=system_u:object_r:shadow_t:s0 tclass=file permissive=0"
    ));
    assert!(line_of("te2")
        .contains(" { write append } for  pid=1235 comm=6D79206874747064 path=2F6574632F6D7920736974652E636F6E66 "));
    assert!(line_of("granted").contains("avc:  granted  { setsecparam } for  pid=1238 "));
    assert!(line_of("granted").ends_with(" tclass=security"));
    assert!(line_of("module").ends_with(" tclass=file permissive=0 module=fence"), "{}", line_of("module"));

    // 3. audit2allow (the policy file must be given: SELinux is not
    //    enabled in this kernel, and without -p the tool fails with "You
    //    must specify the -p option with the path to the policy file").
    let mut cmd = Command::new(&audit2allow);
    cmd.args(["-p", DEBIAN_POLICY, "-i"]).arg(&log);
    println!("$ {cmd:?}");
    let out = run(&mut cmd);
    println!("{out}");
    let rules: Vec<&str> = out.lines().filter(|l| l.starts_with("allow ")).collect();
    let comment_before = |rule: &str| -> String {
        let at = out.lines().position(|l| l == rule).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        let mut start = at;
        while start > 0 && !lines[start - 1].starts_with("allow ") && !lines[start - 1].starts_with("#=====") {
            start -= 1;
        }
        lines[start..at].join("\n")
    };
    let want = [
        "allow httpd_t shadow_t:file { getattr read };",
        "allow httpd_t etc_t:file { append write };",
        "allow httpd_t ssh_port_t:tcp_socket name_connect;",
        "allow user_t user_home_t:file read;",
        "allow sshd_t etc_t:file read;",
    ];
    let mut sorted_rules = rules.clone();
    sorted_rules.sort_unstable();
    let mut sorted_want = want.to_vec();
    sorted_want.sort_unstable();
    assert_eq!(sorted_rules, sorted_want, "audit2allow rules (the granted line yields none)");
    assert!(comment_before("allow httpd_t ssh_port_t:tcp_socket name_connect;")
        .contains("This avc can be allowed using the boolean 'httpd_can_network_connect'"));
    assert!(comment_before("allow user_t user_home_t:file read;").contains("This avc is a constraint violation"));
    assert!(!comment_before("allow httpd_t shadow_t:file { getattr read };").contains("!!!!"));
    // The module's denial: SELinux's policy already allows it, and says so.
    assert!(comment_before("allow sshd_t etc_t:file read;").contains("This avc is allowed in the current policy"));

    // The plain TE denial alone gives exactly the rule the brief names.
    let one = tmp_path("one.log");
    std::fs::write(&one, format!("{}\n", line_of("te"))).unwrap();
    let mut cmd = Command::new(&audit2allow);
    cmd.args(["-p", DEBIAN_POLICY, "-i"]).arg(&one);
    let out_one = run(&mut cmd);
    println!("$ {cmd:?}\n{out_one}");
    assert_eq!(
        out_one.lines().filter(|l| l.starts_with("allow ")).collect::<Vec<_>>(),
        ["allow httpd_t shadow_t:file read;"]
    );

    // 4. audit2why: one block per denial, introduced by the line itself.
    let mut cmd = Command::new(&audit2why);
    cmd.args(["-p", DEBIAN_POLICY, "-i"]).arg(&log);
    println!("$ {cmd:?}");
    let why = run(&mut cmd);
    println!("{why}");
    let mut blocks: BTreeMap<u64, String> = BTreeMap::new();
    let mut current: Option<u64> = None;
    for l in why.lines() {
        if let Some(rest) = l.strip_prefix("type=AVC msg=audit(") {
            let serial = rest.split(':').nth(1).and_then(|s| s.split(')').next()).unwrap().parse().unwrap();
            current = Some(serial);
        }
        if let Some(s) = current {
            let block = blocks.entry(s).or_default();
            block.push_str(l);
            block.push('\n');
        }
    }
    let why_of = |hint: &str| blocks.get(&serial_of[hint]).cloned().unwrap_or_default();
    assert!(why_of("te").contains("Missing type enforcement (TE) allow rule."), "{}", why_of("te"));
    assert!(why_of("te2").contains("Missing type enforcement (TE) allow rule."), "{}", why_of("te2"));
    assert!(
        why_of("bool").contains("The boolean httpd_can_network_connect was set incorrectly."),
        "{}",
        why_of("bool")
    );
    assert!(why_of("bool").contains("setsebool -P httpd_can_network_connect 1"));
    let c = why_of("constraint");
    assert!(c.contains("#Constraint rule:") && c.contains("Constraint DENIED"), "{c}");
    assert!(c.contains("Possible cause is the source user (user_u) and target user (staff_u) are different."), "{c}");
    // Denied by the stacked module, allowed by SELinux: audit2why can only
    // say the policy allows it; `module=fence` tells the reader who denied.
    assert!(why_of("module").contains("module=fence"));
    assert!(why_of("module").contains("Unknown - would be allowed by active policy"), "{}", why_of("module"));
    assert!(blocks.get(&100).is_some_and(|b| b.contains("Missing type enforcement")), "the permissive=1 line");
    // audit2why runs granted lines through the same analysis.
    assert!(why_of("granted").contains("would be allowed by active policy"), "{}", why_of("granted"));

    // 5. The dmesg variant reads the same.
    let dmesg = tmp_path("dmesg.log");
    let i = info(1234, "httpd", Some("/etc/shadow"), &[]);
    let e = event(true, &["read"], HTTPD, SHADOW, "file", false, "selinux", &i);
    std::fs::write(&dmesg, format!("{}\n", format_line(LineFormat::Dmesg, &e, &AuditStamp::now(7)))).unwrap();
    let mut cmd = Command::new(&audit2allow);
    cmd.args(["-p", DEBIAN_POLICY, "-i"]).arg(&dmesg);
    let out = run(&mut cmd);
    println!("$ {cmd:?}\n{out}");
    assert!(out.lines().any(|l| l == "allow httpd_t shadow_t:file read;"));

    drop(avc);
    for p in [&log, &one, &dmesg] {
        std::fs::remove_file(p).unwrap();
    }
}
