//! The control socket end to end, as root: every op through the client and
//! on the raw wire, malformed and hostile clients (each followed by a good
//! client that must still be served), the root-only peer check exercised
//! by a real non-root process, timeouts and limits, and the socket file's
//! life cycle (stale file replaced, live server refused, removed on
//! shutdown). The tests that need root are `#[ignore]`d, and fail saying
//! so when run as another user.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::ffi::CString;
use std::fs;
use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use rampart_enforce::testing::MAX_LINE;
use rampart_enforce::{
    AppArmorStatus, Client, ControlError, ControlHandler, ControlServer, ExecGrant, Reply, Request, ServerConfig,
    Status, DEFAULT_SOCKET, PERMISSION_DENIED,
};

// ---------------------------------------------------------------------------
// Helpers

/// A fresh directory under /tmp, removed on drop. Mode 0755 so the
/// non-root tests can reach the socket inside.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
        let dir = PathBuf::from(format!(
            "/tmp/rampart-control-{tag}-{}-{nanos}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        fs::create_dir(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        TempDir(dir)
    }

    fn sock(&self) -> PathBuf {
        self.0.join("rampartd.sock")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Call {
    Status,
    SetEnforcing(bool),
    Reload,
    SetBoolean(String, bool),
    ExecContext(u32, String, bool),
    LabelsChanged,
}

/// Records every call; `no_such_bool` and the context `bad` are refused,
/// the context `panic` panics.
#[derive(Default)]
struct Fake {
    calls: Mutex<Vec<Call>>,
    seqno: AtomicU64,
}

impl Fake {
    fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }

    fn record(&self, call: Call) {
        self.calls.lock().unwrap().push(call);
    }
}

impl ControlHandler for Fake {
    fn status(&self) -> Status {
        self.record(Call::Status);
        Status {
            mode: "enforcing".into(),
            policy: "/etc/selinux/default/policy/policy.33".into(),
            policy_seqno: self.seqno.load(Ordering::Relaxed),
            events_per_second: 1234.5,
            queue_depth: 2,
            allowed: 1000,
            denied: 7,
            permissive_denials: 1,
            overloaded: 0,
            tracked_processes: 12,
            ignore_marks: 99,
            decided_without_path: 800,
            marked_devices: vec!["0:45".into()],
            protected_dirs: vec!["/etc/selinux".into()],
            supervised_opens: false,
            avc_lookups: 5000,
            avc_hits: 4990,
            avc_misses: 10,
            uptime_seconds: 3.25,
            apparmor: Some(Box::new(AppArmorStatus {
                dir: "/etc/apparmor.d".into(),
                profiles: 35,
                enforce: 13,
                complain: 22,
                failed_files: 1,
                ..AppArmorStatus::default()
            })),
        }
    }

    fn set_enforcing(&self, enforcing: bool) -> Result<(), String> {
        self.record(Call::SetEnforcing(enforcing));
        Ok(())
    }

    fn reload(&self) -> Result<u64, String> {
        self.record(Call::Reload);
        Ok(self.seqno.fetch_add(1, Ordering::Relaxed) + 1)
    }

    fn set_boolean(&self, name: &str, value: bool) -> Result<u64, String> {
        self.record(Call::SetBoolean(name.into(), value));
        if name == "no_such_bool" {
            return Err(format!("unknown boolean {name}; list them with `rampart policy info`"));
        }
        Ok(self.seqno.fetch_add(1, Ordering::Relaxed) + 1)
    }

    fn set_exec_context(&self, pid: u32, context: &str, force: bool, _path: Option<&str>) -> Result<ExecGrant, String> {
        self.record(Call::ExecContext(pid, context.into(), force));
        match context {
            "bad" => Err("invalid context bad; give user:role:type:level".into()),
            "panic" => panic!("fake handler panics on purpose"),
            _ => Ok(ExecGrant { capabilities: 1 << 21, ..ExecGrant::default() }),
        }
    }

    fn labels_changed(&self) -> Result<(), String> {
        self.record(Call::LabelsChanged);
        Ok(())
    }
}

/// Fails the test unless it runs as root: the control socket serves only
/// root, and the non-root peers are made by dropping from root.
fn require_root() {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        panic!(
            "needs root (the control socket serves only root): run the ignored tests as root, as scripts/test.sh does"
        );
    }
}

fn start(tag: &str) -> (TempDir, Arc<Fake>, ControlServer) {
    start_with(tag, ServerConfig::default())
}

fn start_with(tag: &str, config: ServerConfig) -> (TempDir, Arc<Fake>, ControlServer) {
    let dir = TempDir::new(tag);
    let fake = Arc::new(Fake::default());
    let server = ControlServer::bind_with(&dir.sock(), fake.clone(), config).unwrap();
    (dir, fake, server)
}

/// Connects, writes `bytes` (ignoring a write refused because the server
/// already closed), optionally half-closes, and returns every reply line
/// until the server closes or stays silent for a while.
fn exchange(path: &Path, bytes: &[u8], half_close: bool) -> Vec<String> {
    let mut stream = UnixStream::connect(path).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let _ = stream.write_all(bytes);
    if half_close {
        let _ = stream.shutdown(Shutdown::Write);
    }
    read_lines(&mut stream)
}

fn read_lines(stream: &mut UnixStream) -> Vec<String> {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            // A reset after the reply (the server closed with our bytes
            // unread) ends the conversation like EOF.
            Err(e) if e.kind() == io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!("reading replies: {e}"),
        }
    }
    let text = String::from_utf8(out).unwrap();
    assert!(text.is_empty() || text.ends_with('\n'), "reply not newline-terminated: {text:?}");
    text.lines().map(str::to_string).collect()
}

fn error_of(line: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(v["ok"], false, "{line}");
    v["error"].as_str().unwrap().to_string()
}

/// A good client is still served.
fn assert_serving(path: &Path) {
    let status = Client::connect(path).unwrap().status().unwrap();
    assert_eq!(status.mode, "enforcing");
}

// ---------------------------------------------------------------------------
// Every op

#[test]
#[ignore = "needs root: the control socket serves only root"]
fn every_op_round_trips_through_the_client() {
    require_root();
    let (dir, fake, server) = start("ops");
    assert_eq!(server.path(), dir.sock());
    let mut client = Client::connect(dir.sock()).unwrap();
    let status = client.status().unwrap();
    assert_eq!(status, fake.status());
    client.set_enforcing(false).unwrap();
    client.set_enforcing(true).unwrap();
    assert_eq!(client.reload().unwrap(), 1);
    assert_eq!(client.set_boolean("httpd_can_network_connect", true).unwrap(), 2);
    assert_eq!(
        client.set_exec_context("system_u:system_r:httpd_t:s0", false, None).unwrap(),
        Some(ExecGrant { capabilities: 1 << 21, ..ExecGrant::default() })
    );
    client.set_exec_context("unconfined_u:unconfined_r:unconfined_t:s0", true, None).unwrap();
    client.labels_changed().unwrap();
    let me = std::process::id();
    assert_eq!(
        fake.calls(),
        vec![
            Call::Status,
            Call::Status, // the fake.status() above
            Call::SetEnforcing(false),
            Call::SetEnforcing(true),
            Call::Reload,
            Call::SetBoolean("httpd_can_network_connect".into(), true),
            // The pid is ours, taken from SO_PEERCRED.
            Call::ExecContext(me, "system_u:system_r:httpd_t:s0".into(), false),
            Call::ExecContext(me, "unconfined_u:unconfined_r:unconfined_t:s0".into(), true),
            Call::LabelsChanged,
        ]
    );
    assert_eq!(client.request(&Request::Reload).unwrap(), Reply::Seqno(3));
    assert_eq!(DEFAULT_SOCKET, "/run/rampart/rampartd.sock");
    server.shutdown();
}

#[test]
#[ignore = "needs root: the control socket serves only root"]
fn raw_wire_format() {
    require_root();
    let (dir, fake, _server) = start("wire");
    let replies = exchange(
        &dir.sock(),
        b"{\"op\":\"setenforce\",\"enforcing\":false}\n\
          {\"op\":\"reload\"}\n\
          {\"op\":\"setbool\",\"name\":\"b\",\"value\":true}\n\
          {\"op\":\"exec-context\",\"context\":\"u:r:t:s0\",\"force\":false}\n\
          {\"op\":\"exec-context\",\"context\":\"u:r:t:s0\"}\n\
          {\"op\":\"labels-changed\"}\n\
          {\"op\":\"status\"}\n",
        true,
    );
    assert_eq!(replies.len(), 7, "{replies:?}");
    assert_eq!(replies[0], r#"{"ok":true}"#);
    assert_eq!(replies[1], r#"{"ok":true,"seqno":1}"#);
    assert_eq!(replies[2], r#"{"ok":true,"seqno":2}"#);
    // The capabilities the new domain may use (the fake grants 21,
    // CAP_SYS_ADMIN).
    assert_eq!(replies[3], r#"{"ok":true,"capabilities":2097152}"#);
    assert_eq!(replies[4], r#"{"ok":true,"capabilities":2097152}"#);
    assert_eq!(replies[5], r#"{"ok":true}"#);
    let status: serde_json::Value = serde_json::from_str(&replies[6]).unwrap();
    assert_eq!(status["ok"], true);
    assert_eq!(status["status"]["mode"], "enforcing");
    assert_eq!(status["status"]["policy_seqno"], 2);
    assert_eq!(status["status"]["avc_hits"], 4990);
    assert_eq!(fake.calls().len(), 7);
}

#[test]
#[ignore = "needs root: the control socket serves only root"]
fn handler_errors_and_panics_are_error_replies() {
    require_root();
    let (dir, fake, _server) = start("handler-errors");
    let mut client = Client::connect(dir.sock()).unwrap();
    let err = client.set_boolean("no_such_bool", true).unwrap_err();
    assert!(matches!(err, ControlError::Refused(_)), "{err:?}");
    assert_eq!(err.to_string(), "rampartd: unknown boolean no_such_bool; list them with `rampart policy info`");
    let err = client.set_exec_context("bad", false, None).unwrap_err();
    assert!(err.to_string().contains("invalid context bad; give user:role:type:level"), "{err}");
    // A panicking handler costs one error reply, not the server.
    let err = client.set_exec_context("panic", false, None).unwrap_err();
    assert!(err.to_string().contains("exec-context: internal error in rampartd"), "{err}");
    assert_eq!(client.reload().unwrap(), 1);
    assert_serving(&dir.sock());
    assert_eq!(fake.calls().len(), 5);
}

// ---------------------------------------------------------------------------
// Malformed and hostile clients

#[test]
#[ignore = "needs root: the control socket serves only root"]
fn malformed_lines_get_error_replies_and_the_server_goes_on() {
    require_root();
    let (dir, fake, _server) = start("malformed");
    let cases: &[(&[u8], &str)] = &[
        (b"\x00\xff\xfe\x01garbage\x7f\n", "NUL byte at offset 0"),
        (b"\xff\xfe\xfd\n", "not valid UTF-8"),
        (b"not json at all\n", "malformed request: expected ident at line 1 column 2"),
        (b"garbage\n", "malformed request: expected value at line 1 column 1"),
        (b"{\"op\":\"status\"\n", "malformed request: EOF while parsing an object"),
        (b"\n", "empty request line"),
        (b"{\"op\":\"frobnicate\"}\n", "unknown variant `frobnicate`"),
        (b"{\"op\":42}\n", "malformed request"),
        (b"{\"enforcing\":true}\n", "missing field `op`"),
        (b"{\"op\":\"setenforce\"}\n", "missing field `enforcing`"),
        (b"{\"op\":\"setenforce\",\"enforcing\":1}\n", "invalid type: integer `1`, expected a boolean"),
        (b"{\"op\":\"setbool\",\"name\":\"b\",\"value\":\"true\"}\n", "expected a boolean"),
        (b"{\"op\":\"setbool\",\"value\":true}\n", "missing field `name`"),
        (b"{\"op\":\"exec-context\",\"context\":[1]}\n", "invalid type: sequence, expected a string"),
        (b"{\"op\":\"exec-context\",\"context\":\"u:r:t:s0\",\"pid\":1}\n", "unknown field `pid`"),
        (b"{\"op\":\"status\",\"pid\":1}\n", "unknown field `pid`"),
        (b"{\"op\":\"sta\x00tus\"}\n", "NUL byte at offset 10"),
        (b"{\"op\":\"setbool\",\"name\":\"a\\u0000b\",\"value\":true}\n", "\"name\" contains a NUL"),
        (b"{\"op\":\"setbool\",\"name\":\"\",\"value\":true}\n", "\"name\" is empty"),
    ];
    for (bytes, expected) in cases {
        let replies = exchange(&dir.sock(), bytes, true);
        assert_eq!(replies.len(), 1, "{:?} -> {replies:?}", String::from_utf8_lossy(bytes));
        let error = error_of(&replies[0]);
        assert!(error.contains(expected), "{:?} -> {error}", String::from_utf8_lossy(bytes));
        assert_serving(&dir.sock());
    }
    // Parse errors tell the user what a request looks like.
    let replies = exchange(&dir.sock(), b"hello\n", true);
    assert!(error_of(&replies[0]).contains("send one JSON object per line, e.g. {\"op\":\"status\"}"));
    // None of it reached the handler (only the good clients' status calls).
    assert!(fake.calls().iter().all(|c| *c == Call::Status));
}

#[test]
#[ignore = "needs root: the control socket serves only root"]
fn a_bad_line_does_not_cost_the_connection() {
    require_root();
    let (dir, _fake, _server) = start("bad-then-good");
    let replies = exchange(&dir.sock(), b"not json\n{\"op\":\"reload\"}\n\xff\n{\"op\":\"reload\"}\n", true);
    assert_eq!(replies.len(), 4, "{replies:?}");
    assert!(error_of(&replies[0]).contains("malformed request"));
    assert_eq!(replies[1], r#"{"ok":true,"seqno":1}"#);
    assert!(error_of(&replies[2]).contains("not valid UTF-8"));
    assert_eq!(replies[3], r#"{"ok":true,"seqno":2}"#);
}

#[test]
#[ignore = "needs root: the control socket serves only root"]
fn an_overlong_line_gets_an_error_and_a_close() {
    require_root();
    let (dir, fake, _server) = start("overlong");
    // 1 MiB without a newline: refused after MAX_LINE bytes, connection
    // closed (our remaining writes fail, which exchange() ignores).
    let replies = exchange(&dir.sock(), &vec![b'x'; 1 << 20], false);
    assert_eq!(replies.len(), 1, "{replies:?}");
    let error = error_of(&replies[0]);
    assert!(error.contains(&format!("request line too long: no newline within {MAX_LINE} bytes")), "{error}");
    // Exactly MAX_LINE + 1 bytes then a newline: too long too; MAX_LINE is fine.
    let mut line = vec![b' '; MAX_LINE + 1];
    line.push(b'\n');
    let replies = exchange(&dir.sock(), &line, true);
    assert!(error_of(&replies[0]).contains("too long"), "{replies:?}");
    let mut line = vec![b' '; MAX_LINE - 15];
    line.extend_from_slice(b"{\"op\":\"status\"}\n");
    assert_eq!(line.len(), MAX_LINE + 1);
    let replies = exchange(&dir.sock(), &line, true);
    assert!(replies[0].starts_with(r#"{"ok":true,"status":"#), "{replies:?}");
    // A long line after a good one: the good one is answered first.
    let mut bytes = b"{\"op\":\"reload\"}\n".to_vec();
    bytes.extend(vec![b'y'; 3 * MAX_LINE]);
    let replies = exchange(&dir.sock(), &bytes, false);
    assert_eq!(replies.len(), 2, "{replies:?}");
    assert_eq!(replies[0], r#"{"ok":true,"seqno":1}"#);
    assert!(error_of(&replies[1]).contains("too long"));
    assert_serving(&dir.sock());
    assert_eq!(fake.calls().iter().filter(|c| **c == Call::Reload).count(), 1);
}

#[test]
#[ignore = "needs root: the control socket serves only root"]
fn a_partial_line_then_close() {
    require_root();
    let (dir, fake, _server) = start("partial");
    // Half-closed: the client can still read why its line was dropped.
    let replies = exchange(&dir.sock(), b"{\"op\":\"rel", true);
    assert_eq!(replies.len(), 1, "{replies:?}");
    assert!(error_of(&replies[0]).contains("connection closed after 10 bytes of an unfinished line"));
    // Fully closed without reading: the server's reply goes nowhere.
    for _ in 0..5 {
        let mut s = UnixStream::connect(dir.sock()).unwrap();
        s.write_all(b"{\"op\":\"setenforce\",\"enf").unwrap();
        drop(s);
    }
    // Connected and gone without a byte.
    for _ in 0..5 {
        drop(UnixStream::connect(dir.sock()).unwrap());
    }
    assert_serving(&dir.sock());
    assert_eq!(fake.calls(), vec![Call::Status]);
}

#[test]
#[ignore = "needs root: the control socket serves only root"]
fn a_client_that_never_reads_its_replies_cannot_block_the_server() {
    require_root();
    let config = ServerConfig {
        write_timeout: Duration::from_millis(200),
        max_requests: usize::MAX,
        connection_timeout: Duration::from_secs(60),
        ..ServerConfig::default()
    };
    let (dir, _fake, _server) = start_with("no-reader", config);
    let t = Instant::now();
    let mut hog = UnixStream::connect(dir.sock()).unwrap();
    hog.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
    // Status requests by the thousand, replies never read: the replies
    // fill the socket buffer, the server's write times out and it drops
    // the client, which then sees a broken pipe (not its own timeout).
    let err = hog.write_all(&b"{\"op\":\"status\"}\n".repeat(100_000)).unwrap_err();
    assert!(
        matches!(err.kind(), io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset),
        "{err:?} after {:?}",
        t.elapsed()
    );
    assert_serving(&dir.sock());
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
}

#[test]
#[ignore = "needs root: the control socket serves only root"]
fn slow_and_silent_clients_time_out() {
    require_root();
    let config = ServerConfig {
        line_timeout: Duration::from_millis(300),
        connection_timeout: Duration::from_secs(2),
        ..ServerConfig::default()
    };
    let (dir, fake, _server) = start_with("timeouts", config);

    // Silent: connects and sends nothing.
    let t = Instant::now();
    let mut silent = UnixStream::connect(dir.sock()).unwrap();
    silent.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let replies = read_lines(&mut silent);
    assert!(error_of(&replies[0]).contains("timed out: no complete request line within 300ms"), "{replies:?}");
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());

    // Trickling: one byte every 50 ms never completes a line in time,
    // although no single read waits longer than the timeout.
    let mut slow = UnixStream::connect(dir.sock()).unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let t = Instant::now();
    for &b in b"{\"op\":\"status\"}".iter().cycle().take(40) {
        if slow.write_all(&[b]).is_err() {
            break;
        }
        thread::sleep(Duration::from_millis(50));
    }
    let replies = read_lines(&mut slow);
    assert!(error_of(&replies[0]).contains("timed out"), "{replies:?}");
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());

    // A good client waiting behind a silent one is served once the silent
    // one times out.
    let _silent = UnixStream::connect(dir.sock()).unwrap();
    let t = Instant::now();
    assert_serving(&dir.sock());
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());

    // A busy connection is closed at the connection deadline.
    let mut busy = UnixStream::connect(dir.sock()).unwrap();
    busy.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let t = Instant::now();
    let mut answered = 0;
    let last = loop {
        // Once the deadline has passed the server has closed: the write
        // may fail, the error reply is there to read all the same.
        let _ = busy.write_all(b"{\"op\":\"labels-changed\"}\n");
        let mut line = Vec::new();
        let mut byte = [0u8];
        while matches!(busy.read(&mut byte), Ok(1)) && byte[0] != b'\n' {
            line.push(byte[0]);
        }
        let line = String::from_utf8(line).unwrap();
        if line != r#"{"ok":true}"# {
            break line;
        }
        answered += 1;
        thread::sleep(Duration::from_millis(250));
    };
    assert!(answered >= 4, "{answered}");
    assert!(error_of(&last).contains("connection open longer than 2s"), "{last}");
    assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
    assert!(fake.calls().contains(&Call::LabelsChanged));
}

#[test]
#[ignore = "needs root: the control socket serves only root"]
fn requests_per_connection_are_bounded() {
    require_root();
    let config = ServerConfig { max_requests: 3, ..ServerConfig::default() };
    let (dir, fake, _server) = start_with("max-requests", config);
    let replies = exchange(&dir.sock(), &b"{\"op\":\"reload\"}\n".repeat(10), false);
    assert_eq!(replies.len(), 4, "{replies:?}");
    assert_eq!(replies[2], r#"{"ok":true,"seqno":3}"#);
    assert!(error_of(&replies[3]).contains("too many requests on one connection (limit 3); reconnect"));
    assert_eq!(fake.calls().len(), 3);
    assert_serving(&dir.sock());
}

// ---------------------------------------------------------------------------
// Root only

/// Forks a child that drops to uid/gid 65534 and then, with raw system
/// calls only (the test process has threads, so the child must not touch
/// the allocator or locks), connects, sends a request and copies whatever
/// it reads back to a pipe. Returns the child's report.
fn as_nobody(path: &Path, request: &[u8]) -> String {
    let sock = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: sockaddr_un is plain data; all zeroes is a valid value.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    for (dst, &src) in addr.sun_path.iter_mut().zip(sock.as_bytes_with_nul()) {
        *dst = src as libc::c_char;
    }
    let mut pipe = [0; 2];
    // SAFETY: `pipe` is a valid two-int array.
    assert_eq!(unsafe { libc::pipe(pipe.as_mut_ptr()) }, 0);
    // SAFETY: the child only makes async-signal-safe system calls on
    // memory prepared before the fork, then _exit()s.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        // SAFETY: raw system calls on valid, pre-allocated buffers.
        unsafe {
            let out = pipe[1];
            let say = |msg: &[u8]| {
                libc::write(out, msg.as_ptr().cast(), msg.len());
            };
            if libc::setgroups(0, std::ptr::null()) != 0 || libc::setgid(65534) != 0 || libc::setuid(65534) != 0 {
                say(b"CHILD: cannot drop to uid 65534");
                libc::_exit(1);
            }
            if libc::getuid() != 65534 || libc::geteuid() != 65534 {
                say(b"CHILD: still root");
                libc::_exit(1);
            }
            let fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0);
            let len = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
            if libc::connect(fd, (&addr as *const libc::sockaddr_un).cast(), len) != 0 {
                say(b"CHILD: connect failed");
                libc::_exit(2);
            }
            libc::write(fd, request.as_ptr().cast(), request.len());
            let mut buf = [0u8; 1024];
            loop {
                let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
                if n <= 0 {
                    break;
                }
                libc::write(out, buf.as_ptr().cast(), n as usize);
            }
            libc::_exit(0);
        }
    }
    // SAFETY: closing our copy of the write end, which we own.
    unsafe { libc::close(pipe[1]) };
    let mut report = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        // SAFETY: reading into a valid buffer from the pipe we own.
        let n = unsafe { libc::read(pipe[0], buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            break;
        }
        report.extend_from_slice(&buf[..n as usize]);
    }
    let mut status = 0;
    // SAFETY: waiting for our own child; closing the read end we own.
    unsafe {
        libc::waitpid(pid, &mut status, 0);
        libc::close(pipe[0]);
    }
    String::from_utf8_lossy(&report).into_owned()
}

#[test]
#[ignore = "needs root: drops to uid 65534 against a root-only socket"]
fn non_root_peers_are_refused_by_the_server() {
    require_root();
    let (dir, fake, _server) = start("non-root");
    // Open the file mode so that only the SO_PEERCRED check stands between
    // a non-root process and the daemon.
    fs::set_permissions(dir.sock(), fs::Permissions::from_mode(0o666)).unwrap();
    for request in [&b"{\"op\":\"setenforce\",\"enforcing\":false}\n"[..], b"{\"op\":\"status\"}\n", b""] {
        let report = as_nobody(&dir.sock(), request);
        assert_eq!(report, format!("{{\"ok\":false,\"error\":\"{PERMISSION_DENIED}\"}}\n"));
    }
    assert_eq!(PERMISSION_DENIED, "permission denied: the control socket accepts only root");
    assert!(fake.calls().is_empty(), "{:?}", fake.calls());
    // Root still gets in.
    assert_serving(&dir.sock());
}

#[test]
#[ignore = "needs root: drops to uid 65534 against a root-only socket"]
fn the_socket_file_itself_keeps_non_root_out() {
    require_root();
    let (dir, _fake, _server) = start("mode");
    let report = as_nobody(&dir.sock(), b"{\"op\":\"status\"}\n");
    assert_eq!(report, "CHILD: connect failed");
}

/// Run by `client_errors_for_non_root_users` as uid 65534 (through
/// `setpriv`): prints what the client reports. Does nothing in a normal
/// test run.
#[test]
fn non_root_client_helper() {
    let Ok(path) = std::env::var("RAMPART_CONTROL_TEST_SOCKET") else {
        return;
    };
    let result = match Client::connect(&path) {
        Err(e) => Err(ControlError::from(e)),
        Ok(mut client) => client.set_enforcing(false),
    };
    match result {
        Ok(()) => println!("HELPER: ok"),
        Err(e @ ControlError::PermissionDenied { .. }) => println!("HELPER: PermissionDenied: {e}"),
        Err(e) => println!("HELPER: other: {e:?}"),
    }
}

fn run_helper_as_nobody(path: &Path) -> String {
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(std::env::current_exe().unwrap())
        .args(["non_root_client_helper", "--exact", "--nocapture", "--test-threads=1"])
        .env("RAMPART_CONTROL_TEST_SOCKET", path)
        .output()
        .expect("setpriv (util-linux) runs the helper as uid 65534");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    // The harness prints "test non_root_client_helper ... " on the same line.
    stdout
        .lines()
        .find_map(|l| l.find("HELPER: ").map(|i| l[i..].to_string()))
        .unwrap_or_else(|| panic!("helper printed no result: {stdout} {}", String::from_utf8_lossy(&out.stderr)))
}

#[test]
#[ignore = "needs root and setpriv: drops to uid 65534 against a root-only socket"]
fn client_errors_for_non_root_users() {
    require_root();
    let (dir, fake, _server) = start("client-non-root");
    // Mode 0600: connect(2) itself is refused.
    let line = run_helper_as_nobody(&dir.sock());
    assert_eq!(
        line,
        format!(
            "HELPER: PermissionDenied: permission denied at {}: the control socket accepts only root (from a confined domain, only where its policy lets it write the socket file); run this as root",
            dir.sock().display()
        )
    );
    // Mode 0666: the daemon refuses; the client maps that reply too.
    fs::set_permissions(dir.sock(), fs::Permissions::from_mode(0o666)).unwrap();
    let line = run_helper_as_nobody(&dir.sock());
    assert!(line.starts_with("HELPER: PermissionDenied: permission denied at"), "{line}");
    assert!(fake.calls().is_empty());
}

// ---------------------------------------------------------------------------
// The socket file

#[test]
#[ignore = "needs root: the control socket serves only root"]
fn bind_creates_the_directory_and_a_0600_socket() {
    require_root();
    let dir = TempDir::new("mkdir");
    let path = dir.0.join("run/rampart/rampartd.sock");
    let server = ControlServer::bind(&path, Arc::new(Fake::default())).unwrap();
    let parent = fs::metadata(dir.0.join("run/rampart")).unwrap();
    assert!(parent.is_dir());
    assert_eq!(parent.permissions().mode() & 0o7777, 0o755);
    let meta = fs::symlink_metadata(&path).unwrap();
    assert!(meta.file_type().is_socket());
    assert_eq!(meta.permissions().mode() & 0o7777, 0o600);
    assert_serving(&path);
    server.shutdown();
    assert!(!path.exists());
}

#[test]
#[ignore = "needs root: the control socket serves only root"]
fn a_stale_socket_file_is_replaced() {
    require_root();
    let dir = TempDir::new("stale");
    // A socket file nobody listens on, as a crashed daemon leaves it.
    drop(UnixListener::bind(dir.sock()).unwrap());
    assert!(fs::symlink_metadata(dir.sock()).unwrap().file_type().is_socket());
    let server = ControlServer::bind(&dir.sock(), Arc::new(Fake::default())).unwrap();
    assert_serving(&dir.sock());
    assert_eq!(fs::symlink_metadata(dir.sock()).unwrap().permissions().mode() & 0o777, 0o600);
    drop(server);
    assert!(!dir.sock().exists());
}

#[test]
#[ignore = "needs root: the control socket serves only root"]
fn a_live_server_is_not_replaced() {
    require_root();
    let (dir, fake, first) = start("live");
    let err = ControlServer::bind(&dir.sock(), Arc::new(Fake::default())).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::AddrInUse);
    assert_eq!(
        err.to_string(),
        format!("another rampartd is listening on {}; stop it first or pass --socket", dir.sock().display())
    );
    // The first one is untouched, and it was the one answering.
    assert_serving(&dir.sock());
    assert_eq!(fake.calls(), vec![Call::Status]);
    first.shutdown();
    // Once it is gone, a new server may take the path.
    let second = ControlServer::bind(&dir.sock(), Arc::new(Fake::default())).unwrap();
    assert_serving(&dir.sock());
    second.shutdown();
}

#[test]
fn a_path_that_is_not_a_socket_is_left_alone() {
    let dir = TempDir::new("not-socket");
    fs::write(dir.sock(), b"precious").unwrap();
    let err = ControlServer::bind(&dir.sock(), Arc::new(Fake::default())).unwrap_err();
    assert!(err.to_string().contains("exists and is not a socket; remove it or pass --socket"), "{err}");
    assert_eq!(fs::read(dir.sock()).unwrap(), b"precious");
    // Nor is a symlink followed.
    let link = dir.0.join("link.sock");
    std::os::unix::fs::symlink(dir.sock(), &link).unwrap();
    assert!(ControlServer::bind(&link, Arc::new(Fake::default())).is_err());
    assert_eq!(fs::read(dir.sock()).unwrap(), b"precious");
}

#[test]
fn shutdown_and_drop_remove_the_socket() {
    let (dir, _fake, server) = start("shutdown");
    assert!(dir.sock().exists());
    server.shutdown();
    assert!(!dir.sock().exists());
    let err = Client::connect(dir.sock()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "no daemon listening at {} (is rampartd running? pass --socket to use another socket)",
            dir.sock().display()
        )
    );
    assert!(matches!(ControlError::from(err), ControlError::NotRunning { .. }));

    let server = ControlServer::bind(&dir.sock(), Arc::new(Fake::default())).unwrap();
    drop(server);
    assert!(!dir.sock().exists());
}

#[test]
fn shutdown_with_a_client_connected_finishes() {
    let config = ServerConfig { line_timeout: Duration::from_millis(200), ..ServerConfig::default() };
    let (dir, _fake, server) = start_with("shutdown-busy", config);
    let idle = UnixStream::connect(dir.sock()).unwrap();
    let t = Instant::now();
    server.shutdown();
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    assert!(!dir.sock().exists());
    drop(idle);
}

#[test]
fn shutdown_leaves_a_file_that_replaced_its_socket() {
    let (dir, _fake, server) = start("replaced");
    fs::remove_file(dir.sock()).unwrap();
    fs::write(dir.sock(), b"someone else's").unwrap();
    server.shutdown();
    assert_eq!(fs::read(dir.sock()).unwrap(), b"someone else's");
}

#[test]
fn a_stale_socket_with_no_server_reports_not_running() {
    let dir = TempDir::new("no-daemon");
    let err = ControlError::from(Client::connect(dir.sock()).unwrap_err());
    assert!(matches!(err, ControlError::NotRunning { .. }), "{err:?}");
    drop(UnixListener::bind(dir.sock()).unwrap());
    let err = ControlError::from(Client::connect(dir.sock()).unwrap_err());
    assert!(err.to_string().starts_with("no daemon listening at"), "{err}");
}

// ---------------------------------------------------------------------------
// Client against a misbehaving daemon

/// A fake daemon that answers every connection with `reply` (or nothing).
fn fake_daemon(dir: &TempDir, reply: &'static [u8]) -> thread::JoinHandle<()> {
    let listener = UnixListener::bind(dir.sock()).unwrap();
    thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut buf = [0u8; 256];
        let _ = s.read(&mut buf);
        s.write_all(reply).unwrap();
        if reply.is_empty() {
            thread::sleep(Duration::from_millis(800));
        }
    })
}

#[test]
fn client_reports_malformed_replies_timeouts_and_closes() {
    let cases: &[(&[u8], &str)] = &[
        (b"garbage\n", "malformed reply from rampartd: not a reply: expected value at line 1 column 1"),
        (b"{\"ok\":false}\n", "malformed reply from rampartd: not a reply: \"ok\":false without an \"error\" text"),
        (b"\xff\n", "malformed reply from rampartd: not a reply: not valid UTF-8"),
        (b"{\"ok\":true,\"seqno\":1}\n", "malformed reply from rampartd: a seqno reply to status"),
        (b"{\"ok\":true", "rampartd closed the connection without replying"),
        (b"", "rampartd did not reply within 300ms"),
    ];
    for (reply, expected) in cases {
        let dir = TempDir::new("bad-daemon");
        let daemon = fake_daemon(&dir, reply);
        let mut client = Client::connect(dir.sock()).unwrap();
        client.set_timeout(Duration::from_millis(300)).unwrap();
        let err = client.status().unwrap_err();
        assert!(err.to_string().contains(expected), "{:?}: {err}", String::from_utf8_lossy(reply));
        daemon.join().unwrap();
    }
}

#[test]
#[ignore = "needs root: the control socket serves only root"]
fn client_refuses_to_send_what_the_server_would_refuse() {
    require_root();
    let (dir, fake, _server) = start("client-check");
    let mut client = Client::connect(dir.sock()).unwrap();
    let err = client.set_boolean(&"b".repeat(MAX_LINE), true).unwrap_err();
    assert!(matches!(err, ControlError::InvalidRequest(_)));
    assert!(err.to_string().contains("too long"), "{err}");
    let err = client.set_exec_context("u:r:t\0:s0", false, None).unwrap_err();
    assert!(err.to_string().contains("NUL"), "{err}");
    // The connection is still good.
    client.labels_changed().unwrap();
    assert_eq!(fake.calls(), vec![Call::LabelsChanged]);
}
