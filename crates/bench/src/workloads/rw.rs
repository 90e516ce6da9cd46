//! lmbench's "simple read" and "simple write" (seed 002): one byte read
//! from /dev/zero and one byte written to /dev/null, repeated; the open is
//! not timed, each read or write is preceded by the permission check of
//! the open file. One thread, as lmbench ran them.
//!
//! Each run alternates blocks with and without the check (see
//! [`run_paired`]), so the overhead is a ratio taken under the same
//! machine conditions.
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

/// Calls per block: the variant and the baseline alternate every block.
pub const BLOCK: usize = 10_000;

/// A run of the variant and of the baseline (`none`) in the same thread,
/// in alternating blocks of [`BLOCK`] calls.
#[derive(Clone, Copy, Debug)]
pub struct Paired {
    pub variant: ReadWrite,
    pub baseline: ReadWrite,
}

/// `ops` checked reads of /dev/zero and `ops` checked writes to /dev/null
/// through `checker`, and as many through `baseline`, in a fresh thread.
///
/// Why alternate: a 1-byte read costs about 200 ns, and the machine's
/// speed drifts by a few percent from one second to the next (other jobs,
/// frequency), more than the overhead being measured. Blocks of
/// [`BLOCK`] calls (about 2 ms) alternate between the two, the first of
/// each pair of blocks swapping sides, so both see the same drift and
/// the ratio of their sums is the overhead.
pub fn run_paired<C: Checker, B: Checker>(
    checker: &C,
    baseline: &B,
    read: Access,
    write: Access,
    ops: usize,
) -> Result<Paired, BenchError> {
    std::thread::scope(|scope| {
        let handle = scope.spawn(move || -> Result<Paired, BenchError> {
            let zero = File::open("/dev/zero").map_err(BenchError::io("cannot open /dev/zero"))?;
            let null =
                OpenOptions::new().write(true).open("/dev/null").map_err(BenchError::io("cannot open /dev/null"))?;
            let subject = Subject::new(read.ssid);
            let zero_label = Object::new(read.tsid);
            let null_label = Object::new(write.tsid);
            let mut reading = checker.open(0, &subject, &zero_label, read.class, read.perms)?;
            let mut writing = checker.open(0, &subject, &null_label, write.class, write.perms)?;
            let mut base_reading = baseline.open(0, &subject, &zero_label, read.class, read.perms)?;
            let mut base_writing = baseline.open(0, &subject, &null_label, write.class, write.perms)?;
            let warm = ops.clamp(1, BLOCK);
            time_reads(&mut reading, &zero, warm)?;
            time_reads(&mut base_reading, &zero, warm)?;
            time_writes(&mut writing, &null, warm)?;
            time_writes(&mut base_writing, &null, warm)?;
            let blocks = ops.div_ceil(BLOCK).max(1);
            let block = ops.div_ceil(blocks).max(1);
            let (mut v, mut b) = (ReadWrite { read_ns: 0.0, write_ns: 0.0 }, ReadWrite { read_ns: 0.0, write_ns: 0.0 });
            for i in 0..blocks {
                if i % 2 == 0 {
                    v.read_ns += time_reads(&mut reading, &zero, block)?;
                    b.read_ns += time_reads(&mut base_reading, &zero, block)?;
                } else {
                    b.read_ns += time_reads(&mut base_reading, &zero, block)?;
                    v.read_ns += time_reads(&mut reading, &zero, block)?;
                }
            }
            for i in 0..blocks {
                if i % 2 == 0 {
                    v.write_ns += time_writes(&mut writing, &null, block)?;
                    b.write_ns += time_writes(&mut base_writing, &null, block)?;
                } else {
                    b.write_ns += time_writes(&mut base_writing, &null, block)?;
                    v.write_ns += time_writes(&mut writing, &null, block)?;
                }
            }
            let per_call = |rw: ReadWrite| {
                let n = (blocks * block) as f64;
                ReadWrite { read_ns: rw.read_ns / n, write_ns: rw.write_ns / n }
            };
            Ok(Paired { variant: per_call(v), baseline: per_call(b) })
        });
        join(handle)
    })
}

/// Total nanoseconds of `ops` checked reads.
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
    let ns = watch.lap().best().as_secs_f64() * 1e9;
    if denied > 0 {
        return Err(BenchError::Workload(format!("{denied} reads of /dev/zero were denied")));
    }
    Ok(ns)
}

/// Total nanoseconds of `ops` checked writes.
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
    let ns = watch.lap().best().as_secs_f64() * 1e9;
    if denied > 0 {
        return Err(BenchError::Workload(format!("{denied} writes to /dev/null were denied")));
    }
    Ok(ns)
}
