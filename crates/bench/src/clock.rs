//! Time as the benchmarks take it: wall time, and the calling thread's
//! CPU time.
//!
//! Why CPU time: the machines are shared, and on two cores one other busy
//! job leaves a two-thread run one core for part of the time. Wall time
//! then charges the checks for time the thread spent waiting to run;
//! thread CPU time (user plus system, `CLOCK_THREAD_CPUTIME_ID`) does not,
//! while cache-line contention, which stalls a running thread, still
//! counts. The ratio of the two (the on-CPU share) is reported beside it,
//! so a reader can see whether two threads really ran at the same time.

use std::time::{Duration, Instant};

/// The calling thread's CPU time (user + system), if the platform has it.
#[cfg(target_os = "linux")]
pub fn thread_cpu_time() -> Option<Duration> {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, exclusively borrowed timespec that lives
    // across the call; clock_gettime only writes into it.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return None;
    }
    Some(Duration::new(u64::try_from(ts.tv_sec).ok()?, u32::try_from(ts.tv_nsec).ok()?))
}

#[cfg(not(target_os = "linux"))]
pub fn thread_cpu_time() -> Option<Duration> {
    None
}

/// Started on the thread that will read it.
pub struct Stopwatch {
    wall: Instant,
    cpu: Option<Duration>,
}

/// What a stopwatch measured.
#[derive(Clone, Copy, Debug)]
pub struct Lap {
    pub wall: Duration,
    /// The thread's CPU time over the lap; `None` without a CPU clock.
    pub cpu: Option<Duration>,
}

impl Lap {
    /// CPU time if known, else wall time.
    pub fn best(&self) -> Duration {
        self.cpu.unwrap_or(self.wall)
    }

    /// CPU time over wall time (1.0 without a CPU clock).
    pub fn on_cpu(&self) -> f64 {
        match self.cpu {
            Some(cpu) if !self.wall.is_zero() => cpu.as_secs_f64() / self.wall.as_secs_f64(),
            _ => 1.0,
        }
    }
}

impl Stopwatch {
    pub fn start() -> Stopwatch {
        let cpu = thread_cpu_time();
        Stopwatch { wall: Instant::now(), cpu }
    }

    /// Must be called on the thread that started it.
    pub fn lap(&self) -> Lap {
        let wall = self.wall.elapsed();
        let cpu = match (self.cpu, thread_cpu_time()) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a)),
            _ => None,
        };
        Lap { wall, cpu }
    }
}

/// Which clock the per-check figures use, for the report.
pub fn clock_name() -> &'static str {
    if thread_cpu_time().is_some() {
        "thread CPU time"
    } else {
        "wall time"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_advances_with_work() {
        let w = Stopwatch::start();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        let lap = w.lap();
        // Only that the clocks move: no test asserts a timing.
        assert!(lap.wall > Duration::ZERO);
        if let Some(cpu) = lap.cpu {
            assert!(cpu > Duration::ZERO);
        }
    }
}
