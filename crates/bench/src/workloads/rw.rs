//! lmbench's "simple read" and "simple write" (seed 002): one byte read
//! from /dev/zero and one byte written to /dev/null, repeated; the open is
//! not timed, each read or write is preceded by the permission check of
//! the open file. One thread, as lmbench ran them.
//!
//! Why these two: they are the cheapest system calls that reach a file's
//! permission hook, so they show the check's cost at its largest share
//! (12-14% on x86 in 2007, up to 156% on SH, before the fix).

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};

use rampart_avc::{Object, Subject};

use super::join;
use crate::clock::Stopwatch;
use crate::error::BenchError;
use crate::setup::Access;
use crate::variants::{Checker, OpenCheck};

/// Nanoseconds per checked read and per checked write, in thread CPU
/// time (user + system; wall time without a CPU clock), so time spent
/// descheduled by other jobs is not counted.
#[derive(Clone, Copy, Debug)]
pub struct ReadWrite {
    pub read_ns: f64,
    pub write_ns: f64,
}

/// `ops` checked reads of /dev/zero, then `ops` checked writes to
/// /dev/null, in a fresh thread.
pub fn run<C: Checker>(checker: &C, read: Access, write: Access, ops: usize) -> Result<ReadWrite, BenchError> {
    std::thread::scope(|scope| {
        let handle = scope.spawn(move || -> Result<ReadWrite, BenchError> {
            let zero = File::open("/dev/zero").map_err(BenchError::io("cannot open /dev/zero"))?;
            let null =
                OpenOptions::new().write(true).open("/dev/null").map_err(BenchError::io("cannot open /dev/null"))?;
            let subject = Subject::new(read.ssid);
            let zero_label = Object::new(read.tsid);
            let null_label = Object::new(write.tsid);
            let mut reading = checker.open(0, &subject, &zero_label, read.class, read.perms)?;
            let mut writing = checker.open(0, &subject, &null_label, write.class, write.perms)?;
            let warm = ops.clamp(1, 10_000);
            time_reads(&mut reading, &zero, warm)?;
            time_writes(&mut writing, &null, warm)?;
            let read_ns = time_reads(&mut reading, &zero, ops)?;
            let write_ns = time_writes(&mut writing, &null, ops)?;
            Ok(ReadWrite { read_ns, write_ns })
        });
        join(handle)
    })
}

fn time_reads<O: OpenCheck>(open: &mut O, mut zero: &File, ops: usize) -> Result<f64, BenchError> {
    let mut buf = [0u8; 1];
    let mut denied = 0usize;
    let watch = Stopwatch::start();
    for _ in 0..ops {
        if open.permission() {
            let n = zero.read(&mut buf).map_err(BenchError::io("read of /dev/zero"))?;
            if n != 1 {
                return Err(BenchError::Workload(format!("read of /dev/zero returned {n} bytes")));
            }
        } else {
            denied += 1;
        }
    }
    let ns = watch.lap().best().as_secs_f64() * 1e9 / ops.max(1) as f64;
    if denied > 0 {
        return Err(BenchError::Workload(format!("{denied} reads of /dev/zero were denied")));
    }
    Ok(ns)
}

fn time_writes<O: OpenCheck>(open: &mut O, mut null: &File, ops: usize) -> Result<f64, BenchError> {
    let mut denied = 0usize;
    let watch = Stopwatch::start();
    for _ in 0..ops {
        if open.permission() {
            let n = null.write(b"x").map_err(BenchError::io("write to /dev/null"))?;
            if n != 1 {
                return Err(BenchError::Workload(format!("write to /dev/null wrote {n} bytes")));
            }
        } else {
            denied += 1;
        }
    }
    let ns = watch.lap().best().as_secs_f64() * 1e9 / ops.max(1) as f64;
    if denied > 0 {
        return Err(BenchError::Workload(format!("{denied} writes to /dev/null were denied")));
    }
    Ok(ns)
}
