//! The client side: what a process on the enforced file system does, timed
//! in wall time (a permission event's cost is mostly spent waiting for
//! the listener, which CPU time would not see).
//!
//! * [`open_loop`]: open(O_RDONLY) + close of one file, 1 or 2 threads.
//!   After warm-up this is the steady state: a listener that caches in
//!   the kernel (ignore marks) sees no events any more; one that does not
//!   sees one per open.
//! * [`first_touch`]: open + close of files never opened before (created
//!   with mknod, which is no open), each thread its own files: every open
//!   is a permission event whatever the listener caches. With 2 threads
//!   this is the event throughput.
//! * [`exec_loop`]: fork + execve + waitpid of a copy of /bin/true on the
//!   tmpfs (its libraries come from the root file system, which is not
//!   marked): an exec and an open event per run.
//!
//! Every loop ends at its deadline (or when its files run out) and stops
//! at the first failed call, which fails the measurement.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// One timed run of a workload. Its fields are the keys of a sample in
/// the report's JSON (`rounds`).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Sample {
    /// Operations done by all threads together.
    pub ops: u64,
    pub threads: usize,
    /// From the first thread's start to the last thread's end.
    pub wall_ns: u64,
    /// Voluntary context switches of the client threads while timed, all
    /// together: an open that waits for a listener's answer sleeps once,
    /// and more when other answers wake it for nothing (the openers' wait
    /// queue, docs/architecture.md). `None` where not counted (exec).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sleeps: Option<u64>,
}

impl Sample {
    /// Wall time per operation per thread (the latency one thread sees).
    pub fn per_op_ns(&self) -> f64 {
        if self.ops == 0 {
            return f64::NAN;
        }
        self.wall_ns as f64 * self.threads as f64 / self.ops as f64
    }

    /// Sleeps per operation, all threads together (NaN if not counted).
    pub fn sleeps_per_op(&self) -> f64 {
        match self.sleeps {
            Some(n) if self.ops > 0 => n as f64 / self.ops as f64,
            _ => f64::NAN,
        }
    }

    /// Operations per second, all threads together.
    pub fn ops_per_s(&self) -> f64 {
        if self.wall_ns == 0 {
            return f64::NAN;
        }
        self.ops as f64 * 1e9 / self.wall_ns as f64
    }
}

fn cstr(p: &Path) -> Result<CString, String> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| format!("path with a NUL byte: {}", p.display()))
}

/// open + close once; the error names the path.
fn open_close(path: &CString) -> Result<(), String> {
    // SAFETY: `path` is a valid NUL-terminated string.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(format!("open {}: {}", path.to_string_lossy(), std::io::Error::last_os_error()));
    }
    // SAFETY: `fd` was just opened by this thread and is closed once.
    unsafe { libc::close(fd) };
    Ok(())
}

/// The calling thread's voluntary context switches so far.
fn thread_sleeps() -> u64 {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_THREAD with a valid, writable rusage.
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) } != 0 {
        return 0;
    }
    u64::try_from(usage.ru_nvcsw).unwrap_or(0)
}

/// Runs `body(thread index, start)` on `threads` threads started together;
/// each returns its operation count. Threads are spawned from the calling
/// thread, so they share its mount namespace.
fn on_threads<F>(threads: usize, body: F) -> Result<Sample, String>
where
    F: Fn(usize) -> Result<u64, String> + Sync,
{
    let barrier = Barrier::new(threads);
    let results: Vec<Result<(u64, Instant, Instant, u64), String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (barrier, body) = (&barrier, &body);
                s.spawn(move || {
                    barrier.wait();
                    let (start, slept) = (Instant::now(), thread_sleeps());
                    let ops = body(t)?;
                    Ok((ops, start, Instant::now(), thread_sleeps().saturating_sub(slept)))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("workload thread panicked".into()))).collect()
    });
    let mut ops = 0;
    let mut sleeps = 0;
    let mut first: Option<Instant> = None;
    let mut last: Option<Instant> = None;
    for r in results {
        let (n, s, e, slept) = r?;
        ops += n;
        sleeps += slept;
        first = Some(first.map_or(s, |f| f.min(s)));
        last = Some(last.map_or(e, |l| l.max(e)));
    }
    let wall = match (first, last) {
        (Some(f), Some(l)) => l.duration_since(f),
        _ => return Err("no thread ran".into()),
    };
    Ok(Sample { ops, threads, wall_ns: u64::try_from(wall.as_nanos()).unwrap_or(u64::MAX), sleeps: Some(sleeps) })
}

/// open + close of `path` on `threads` threads for `duration`.
pub fn open_loop(path: &Path, threads: usize, duration: Duration) -> Result<Sample, String> {
    let c = cstr(path)?;
    on_threads(threads, |_| {
        let deadline = Instant::now() + duration;
        let mut ops = 0u64;
        loop {
            for _ in 0..32 {
                open_close(&c)?;
            }
            ops += 32;
            if Instant::now() >= deadline {
                return Ok(ops);
            }
        }
    })
}

/// open + close of fresh files under `dir` (created here, removed after):
/// each of `threads` threads opens its own `files_per_thread` files once,
/// in order, until they run out or `duration` passes.
pub fn first_touch(dir: &Path, threads: usize, files_per_thread: usize, duration: Duration) -> Result<Sample, String> {
    std::fs::create_dir(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let result = first_touch_in(dir, threads, files_per_thread, duration);
    let removed = std::fs::remove_dir_all(dir).map_err(|e| format!("cannot remove {}: {e}", dir.display()));
    let sample = result?;
    removed?;
    Ok(sample)
}

fn first_touch_in(dir: &Path, threads: usize, files_per_thread: usize, duration: Duration) -> Result<Sample, String> {
    let mut sets: Vec<Vec<CString>> = Vec::with_capacity(threads);
    for t in 0..threads {
        let sub = dir.join(format!("t{t}"));
        std::fs::create_dir(&sub).map_err(|e| format!("cannot create {}: {e}", sub.display()))?;
        let mut files = Vec::with_capacity(files_per_thread);
        for i in 0..files_per_thread {
            let c = cstr(&sub.join(format!("f{i}")))?;
            // SAFETY: `c` is a valid NUL-terminated path; mknod creates a
            // regular file without opening it (so no permission event).
            if unsafe { libc::mknod(c.as_ptr(), libc::S_IFREG | 0o644, 0) } != 0 {
                return Err(format!("mknod {}: {}", c.to_string_lossy(), std::io::Error::last_os_error()));
            }
            files.push(c);
        }
        sets.push(files);
    }
    on_threads(threads, |t| {
        let deadline = Instant::now() + duration;
        let files = sets.get(t).ok_or("no file set")?;
        let mut ops = 0u64;
        for chunk in files.chunks(16) {
            for f in chunk {
                open_close(f)?;
            }
            ops += chunk.len() as u64;
            if Instant::now() >= deadline {
                break;
            }
        }
        Ok(ops)
    })
}

/// fork + execve(`exe`) + waitpid, for `duration`; every run must exit 0.
pub fn exec_loop(exe: &Path, duration: Duration) -> Result<Sample, String> {
    let path = cstr(exe)?;
    let argv: [*const libc::c_char; 2] = [path.as_ptr(), std::ptr::null()];
    let envp: [*const libc::c_char; 1] = [std::ptr::null()];
    let start = Instant::now();
    let deadline = start + duration;
    let mut ops = 0u64;
    loop {
        exec_once(&path, &argv, &envp)?;
        ops += 1;
        if Instant::now() >= deadline {
            break;
        }
    }
    let wall = start.elapsed();
    Ok(Sample { ops, threads: 1, wall_ns: u64::try_from(wall.as_nanos()).unwrap_or(u64::MAX), sleeps: None })
}

fn exec_once(path: &CString, argv: &[*const libc::c_char; 2], envp: &[*const libc::c_char; 1]) -> Result<(), String> {
    // SAFETY: the child calls only execve and _exit (async-signal-safe) on
    // memory prepared before the fork.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: NUL-terminated path and NULL-terminated argv/envp arrays
        // that live until execve replaces the image.
        unsafe {
            libc::execve(path.as_ptr(), argv.as_ptr(), envp.as_ptr());
            libc::_exit(127);
        }
    }
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: `status` is a valid, writable int; `pid` is our child.
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        if rc == pid {
            break;
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(format!("waitpid: {err}"));
        }
    }
    if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        return Err(format!("{} did not exit 0 (wait status {status:#x})", path.to_string_lossy()));
    }
    Ok(())
}

/// Warm-up before timing: opens of the steady file and a few execs, so
/// that caches (the listener's, the kernel's ignore marks, the page
/// cache) are in their steady state.
pub fn warm_up(steady: &Path, exe: &Path) -> Result<(), String> {
    open_loop(steady, 1, Duration::from_millis(30))?;
    exec_loop(exe, Duration::from_millis(10))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_rates() {
        let s = Sample { ops: 2000, threads: 2, wall_ns: 1_000_000, sleeps: Some(3000) };
        assert_eq!(s.per_op_ns(), 1000.0);
        assert_eq!(s.ops_per_s(), 2_000_000.0);
        assert_eq!(s.sleeps_per_op(), 1.5);
        assert!(Sample { sleeps: None, ..s }.sleeps_per_op().is_nan());
        assert!(Sample { ops: 0, threads: 1, wall_ns: 5, sleeps: Some(0) }.per_op_ns().is_nan());
    }

    /// A thread that sleeps is counted: each of two threads waits on the
    /// other's turn through a channel, so every operation sleeps at least
    /// once in one of them.
    #[test]
    fn sleeps_are_counted_per_thread() {
        let (tx, rx) = std::sync::mpsc::sync_channel::<()>(0);
        let rx = std::sync::Mutex::new(rx);
        let s = on_threads(2, |t| {
            for _ in 0..50 {
                if t == 0 {
                    std::thread::sleep(Duration::from_micros(200));
                    tx.send(()).map_err(|e| e.to_string())?;
                } else {
                    rx.lock().unwrap().recv().map_err(|e| e.to_string())?;
                }
            }
            Ok(50)
        })
        .unwrap();
        assert_eq!(s.ops, 100);
        assert!(s.sleeps.is_some_and(|n| n >= 50), "{s:?}");
    }
}
