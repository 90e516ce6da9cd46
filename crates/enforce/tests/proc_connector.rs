//! The process events connector and pidfd identities against the real
//! kernel. Needs root (the connector needs CAP_NET_ADMIN); skipped
//! otherwise.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io;
use std::os::fd::AsFd;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use rampart_enforce::pidfd::{comm, pidfd_open, pidfs_id, process_id, start_time_ticks};
use rampart_enforce::proc_connector::{ProcConnector, ProcEvent};

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

fn poll_readable(conn: &ProcConnector, timeout: Duration) -> bool {
    let mut pfd = libc::pollfd { fd: conn.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    let ms = timeout.as_millis().clamp(1, 1000) as libc::c_int;
    // SAFETY: `pfd` is one valid pollfd that outlives the call.
    unsafe { libc::poll(&mut pfd, 1, ms) > 0 }
}

#[test]
fn sees_fork_exec_exit_of_a_child_in_order() {
    if !is_root() {
        eprintln!("skipped: the process events connector needs root");
        return;
    }
    let mut conn = ProcConnector::open().expect("open the process events connector");
    let me = std::process::id();
    let mut child = Command::new("/bin/sh").args(["-c", "exec /bin/true"]).spawn().unwrap();
    let pid = child.id();

    let deadline = Instant::now() + Duration::from_secs(2);
    let mut seen: Vec<ProcEvent> = Vec::new();
    let (mut fork, mut exec, mut exit) = (None, None, None);
    while exit.is_none() {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(!left.is_zero(), "within 2 s: fork {fork:?} exec {exec:?} exit {exit:?} for pid {pid}");
        if !poll_readable(&conn, left) {
            continue;
        }
        for ev in conn.drain().unwrap() {
            assert_ne!(ev, ProcEvent::Overrun, "events lost");
            match ev {
                ProcEvent::Fork { child_tgid, .. } if child_tgid == pid => fork = Some(seen.len()),
                ProcEvent::Exec { tgid, .. } if tgid == pid => exec = Some(seen.len()),
                ProcEvent::Exit { tgid, .. } if tgid == pid => exit = Some(seen.len()),
                _ => {}
            }
            seen.push(ev);
        }
    }
    let status = child.wait().unwrap();
    assert!(status.success());

    let (fork, exec, exit) = (fork.unwrap(), exec.unwrap(), exit.unwrap());
    assert!(fork < exec && exec < exit, "kernel order: {fork} {exec} {exit}");
    match seen[fork] {
        ProcEvent::Fork { parent_tgid, child_pid, .. } => {
            assert_eq!(parent_tgid, me);
            assert_eq!(child_pid, pid);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(seen[exec], ProcEvent::Exec { pid, tgid: pid });
    assert_eq!(seen[exit], ProcEvent::Exit { pid, tgid: pid, exit_code: 0 });
}

#[test]
fn nonblocking_recv_and_drain_return_when_idle() {
    if !is_root() {
        eprintln!("skipped: the process events connector needs root");
        return;
    }
    let mut conn = ProcConnector::open().unwrap();
    // Other tests fork concurrently, so only check that these return.
    conn.drain().unwrap();
    conn.recv(true).unwrap();
    // Two subscribers at once, each dropped (IGNORE) independently.
    let other = ProcConnector::open().unwrap();
    drop(other);
    drop(conn);
}

fn sleeper() -> Child {
    Command::new("/bin/sleep").arg("30").spawn().unwrap()
}

fn reap(mut child: Child) {
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn pidfs_ids_are_stable_unique_and_outlive_the_pid() {
    let a = sleeper();
    let b = sleeper();
    let (pa, pb) = (a.id(), b.id());

    let id_a = match process_id(pa) {
        Ok(id) => id,
        Err(e) if e.kind() == io::ErrorKind::Unsupported => {
            eprintln!("skipped: no pidfs on this kernel: {e}");
            reap(a);
            reap(b);
            return;
        }
        Err(e) => panic!("process_id({pa}): {e}"),
    };
    assert_eq!(process_id(pa).unwrap(), id_a, "stable");
    let id_b = process_id(pb).unwrap();
    assert_ne!(id_a, id_b, "unique");

    assert!(start_time_ticks(pa).unwrap() > 0);
    assert_eq!(comm(pa).as_deref(), Some("sleep"));

    // A pidfd taken while the process lives keeps its identity after the
    // process is reaped; the pid itself no longer opens.
    let held = pidfd_open(pa).unwrap();
    reap(a);
    assert_eq!(pidfs_id(held.as_fd()).unwrap(), id_a);
    match pidfd_open(pa) {
        Err(e) => assert_eq!(e.raw_os_error(), Some(libc::ESRCH), "{e}"),
        // The pid was reused already: it must name a different process.
        Ok(fd) => assert_ne!(pidfs_id(fd.as_fd()).unwrap(), id_a),
    }
    assert_eq!(comm(pa), None);
    assert!(start_time_ticks(pa).is_err());
    reap(b);
}
