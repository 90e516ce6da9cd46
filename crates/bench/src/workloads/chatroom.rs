//! The chat room (seed 004, after IBM's "chatroom" modelled on the Volano
//! benchmark): pairs of threads exchange 100-byte messages over loopback
//! TCP (127.0.0.1); every send is preceded by a send check and every
//! receive followed by a receive check, as SELinux's socket hooks do. The
//! result is messages received per second, all pairs together.
//!
//! Why pairs exchanging bursts: like the original, the benchmark is mostly
//! the kernel and the scheduler (system calls, wakeups), with a check per
//! message on every CPU at once; with two pairs there are more threads
//! than CPUs, as in the chat room. Each pair trades bursts of
//! [`BURST`] messages in turn (the initiator sends a burst, the
//! responder receives it and sends one back), so both directions are used
//! and no socket buffer can fill. Bounded in messages and in time: the
//! initiator stops after `messages` messages or `limit`, whichever first,
//! and closes its side; the responder ends on end of file.
//!
//! Each pair is pinned to one CPU (see [`crate::affinity`]): otherwise
//! the scheduler's placement of the pairs, not the variant, decides the
//! throughput (it flips between two levels about 2x apart).
//!
//! Besides messages per second (wall time, as the seed reports), each run
//! gives the CPU time all threads spent per message: with more threads
//! than CPUs the throughput swings with scheduling luck from run to run,
//! while CPU time per message shows the checks' cost more steadily.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use super::join;
use super::rcutest::wall;
use crate::clock::Stopwatch;
use crate::error::BenchError;
use crate::setup::Access;
use crate::variants::{Checker, ThreadCheck};

/// Bytes per message (Volano-like chat lines).
pub const MESSAGE: usize = 100;
/// Messages per burst (3,200 bytes: far below any socket buffer).
pub const BURST: usize = 32;

/// One run of the chat room.
#[derive(Clone, Copy, Debug)]
pub struct ChatSample {
    /// Messages received per second of wall time, all pairs together.
    pub msgs_per_s: f64,
    /// Microseconds of CPU time (all threads, user + system) per message;
    /// NaN without a CPU clock.
    pub cpu_us_per_msg: f64,
    /// Every thread was pinned to its pair's CPU.
    pub pinned: bool,
}

/// Messages per second over `pairs` pairs, each exchanging up to
/// `messages` messages (both directions together) within `limit`.
pub fn run<C: Checker>(
    checker: &C,
    send: Access,
    recv: Access,
    pairs: usize,
    messages: usize,
    limit: Duration,
) -> Result<ChatSample, BenchError> {
    let mut sockets = Vec::with_capacity(pairs);
    for _ in 0..pairs {
        sockets.push(connected_pair()?);
    }
    let barrier = Barrier::new(2 * pairs);
    let cpus = crate::affinity::allowed_cpus();
    let cpu_of = |pair: usize| cpus.get(pair % cpus.len().max(1)).copied();
    let bursts = messages.div_ceil(2 * BURST).max(1);
    let results: Vec<(Side, bool)> = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(2 * pairs);
        for (pair, (a, b)) in sockets.into_iter().enumerate() {
            let barrier = &barrier;
            let cpu = cpu_of(pair);
            handles.push(scope.spawn(move || {
                let pinned = cpu.is_some_and(crate::affinity::pin_current_thread);
                let mut t = checker.thread(2 * pair);
                initiator(&mut t, a, send, recv, bursts, limit, barrier).map(|s| (s, pinned))
            }));
            handles.push(scope.spawn(move || {
                let pinned = cpu.is_some_and(crate::affinity::pin_current_thread);
                let mut t = checker.thread(2 * pair + 1);
                responder(&mut t, b, send, recv, barrier).map(|s| (s, pinned))
            }));
        }
        handles.into_iter().map(join).collect::<Result<Vec<_>, BenchError>>()
    })?;
    let pinned = results.iter().all(|r| r.1);
    let results: Vec<Side> = results.into_iter().map(|r| r.0).collect();
    let received: u64 = results.iter().map(|r| r.received).sum();
    let spans: Vec<(Instant, Instant)> = results.iter().map(|r| (r.start, r.end)).collect();
    let seconds = wall(&spans);
    if seconds <= 0.0 || received == 0 {
        return Err(BenchError::Workload("the chat room exchanged nothing measurable".into()));
    }
    let cpu: Option<f64> = results.iter().map(|r| r.cpu_s).sum();
    Ok(ChatSample {
        msgs_per_s: received as f64 / seconds,
        cpu_us_per_msg: cpu.map_or(f64::NAN, |c| c * 1e6 / received as f64),
        pinned,
    })
}

/// What one thread of a pair reports.
struct Side {
    received: u64,
    start: Instant,
    end: Instant,
    /// Its CPU time over the run, if known.
    cpu_s: Option<f64>,
}

impl Side {
    fn new(received: u64, start: Instant, watch: &Stopwatch) -> Side {
        let lap = watch.lap();
        Side { received, start, end: Instant::now(), cpu_s: lap.cpu.map(|c| c.as_secs_f64()) }
    }
}

/// A connected loopback TCP pair.
fn connected_pair() -> Result<(TcpStream, TcpStream), BenchError> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(BenchError::io("cannot listen on 127.0.0.1"))?;
    let addr = listener.local_addr().map_err(BenchError::io("cannot read the listening address"))?;
    let a = TcpStream::connect(addr).map_err(BenchError::io(format!("cannot connect to {addr}")))?;
    let (b, _) = listener.accept().map_err(BenchError::io("cannot accept on 127.0.0.1"))?;
    for s in [&a, &b] {
        // Each message leaves at once, as chat lines do (and Nagle's delay
        // would measure the timer, not the checks).
        s.set_nodelay(true).map_err(BenchError::io("cannot set TCP_NODELAY"))?;
    }
    Ok((a, b))
}

fn check_all<T: ThreadCheck>(t: &mut T, a: Access, denied: &mut u64) {
    if !t.check(a.ssid, a.tsid, a.class, a.perms) {
        *denied += 1;
    }
}

fn warm<T: ThreadCheck>(t: &mut T, send: Access, recv: Access) {
    let mut ignored = 0;
    for _ in 0..1000 {
        check_all(t, send, &mut ignored);
        check_all(t, recv, &mut ignored);
    }
}

fn denial_error(denied: u64) -> BenchError {
    BenchError::Workload(format!("{denied} chat room checks were denied"))
}

fn initiator<T: ThreadCheck>(
    t: &mut T,
    mut stream: TcpStream,
    send: Access,
    recv: Access,
    bursts: usize,
    limit: Duration,
    barrier: &Barrier,
) -> Result<Side, BenchError> {
    let msg = [b'm'; MESSAGE];
    let mut buf = [0u8; MESSAGE];
    let (mut received, mut denied) = (0u64, 0u64);
    warm(t, send, recv);
    barrier.wait();
    let start = Instant::now();
    let watch = Stopwatch::start();
    for _ in 0..bursts {
        for _ in 0..BURST {
            // A denied send is still sent (and counted as an error below),
            // so the peer never waits for a message that will not come.
            check_all(t, send, &mut denied);
            stream.write_all(&msg).map_err(BenchError::io("chat room send"))?;
        }
        for _ in 0..BURST {
            stream.read_exact(&mut buf).map_err(BenchError::io("chat room receive"))?;
            check_all(t, recv, &mut denied);
            received += 1;
        }
        if start.elapsed() >= limit {
            break;
        }
    }
    let side = Side::new(received, start, &watch);
    stream.shutdown(Shutdown::Write).map_err(BenchError::io("chat room shutdown"))?;
    if denied > 0 {
        return Err(denial_error(denied));
    }
    Ok(side)
}

fn responder<T: ThreadCheck>(
    t: &mut T,
    mut stream: TcpStream,
    send: Access,
    recv: Access,
    barrier: &Barrier,
) -> Result<Side, BenchError> {
    let msg = [b'r'; MESSAGE];
    let mut buf = [0u8; MESSAGE];
    let (mut received, mut denied) = (0u64, 0u64);
    warm(t, send, recv);
    barrier.wait();
    let start = Instant::now();
    let watch = Stopwatch::start();
    'bursts: loop {
        for k in 0..BURST {
            match stream.read_exact(&mut buf) {
                Ok(()) => {}
                Err(e) if k == 0 && e.kind() == ErrorKind::UnexpectedEof => break 'bursts,
                Err(e) => return Err(BenchError::Io { what: "chat room receive".into(), source: e }),
            }
            check_all(t, recv, &mut denied);
            received += 1;
        }
        for _ in 0..BURST {
            check_all(t, send, &mut denied);
            stream.write_all(&msg).map_err(BenchError::io("chat room send"))?;
        }
    }
    let side = Side::new(received, start, &watch);
    if denied > 0 {
        return Err(denial_error(denied));
    }
    Ok(side)
}
