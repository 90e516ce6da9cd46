//! One timed run: `threads` threads, each opening files along the
//! shuffled stream from its own offset, all under the same label, until
//! it has made its opens or the run's time is up, whichever comes first.
//!
//! Why a time limit: a design's cost per open differs by two orders of
//! magnitude between one thread and many (a contended shared count on 16
//! CPUs against an uncontended cached answer), so a count sized for one
//! would make the other's run last minutes or milliseconds. Each thread
//! reports its own opens, and the cost per open is its CPU time over
//! them (crate::clock). Each thread first opens every path once (warming
//! its caches, as the hit workload does); only the walk is timed.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::designs::{Design, DesignId, Designs, OpenPath};
use super::paths::{self, PathReq};
use super::report::AppArmorRun;
use super::{profile, Decide, Label};
use crate::error::BenchError;
use crate::params::Params;
use crate::rounds::rotated;
use crate::stats::Samples;
use crate::workloads::hits::HitSample;
use crate::workloads::{lined_up, Walked};

/// Opens between two looks at the clock.
const CHUNK: usize = 4096;

/// How much one run does per thread: at most `opens`, and no more once
/// `limit` of wall time has passed.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    pub opens: usize,
    pub limit: Duration,
}

/// Times one run of `threads` threads through `design`; the answers are
/// counted into a `black_box`, so no check can be optimised away.
pub fn run<D: Design>(
    design: &D,
    paths: &[PathReq],
    stream: &[usize],
    how: Decide,
    threads: usize,
    budget: Budget,
) -> Result<HitSample, BenchError> {
    if stream.is_empty() || threads == 0 {
        return Err(BenchError::Workload("the AppArmor workload needs paths and threads".into()));
    }
    if let Some(&bad) = stream.iter().find(|&&i| i >= paths.len()) {
        return Err(BenchError::Workload(format!("the stream names path {bad} of {}", paths.len())));
    }
    let laps = lined_up(
        threads,
        |index| {
            let mut t = design.thread(index);
            let warmed: u64 = paths.iter().map(|p| u64::from(t.open(p, how))).sum();
            std::hint::black_box(warmed);
            t
        },
        |t, index| walk(t, paths, stream, how, index * stream.len() / threads, budget),
    )?;
    Ok(HitSample::of(&laps))
}

/// Opens along `stream` from `offset`, wrapping around, in chunks, until
/// the budget is spent. Every index of `stream` is within `paths`.
#[inline(never)]
fn walk<T: OpenPath>(
    t: &mut T,
    paths: &[PathReq],
    stream: &[usize],
    how: Decide,
    offset: usize,
    budget: Budget,
) -> Walked {
    let started = Instant::now();
    let mut passed = 0u64;
    let mut done = 0usize;
    let mut pos = offset % stream.len();
    while done < budget.opens && started.elapsed() < budget.limit {
        let n = CHUNK.min(budget.opens - done).min(stream.len() - pos);
        for &i in &stream[pos..pos + n] {
            passed += u64::from(t.open(&paths[i], how));
        }
        done += n;
        pos = (pos + n) % stream.len();
    }
    Walked { done, passed }
}

impl Designs {
    /// [`run`] on design `id`.
    pub fn run(
        &self,
        id: DesignId,
        paths: &[PathReq],
        stream: &[usize],
        how: Decide,
        threads: usize,
        budget: Budget,
    ) -> Result<HitSample, BenchError> {
        match id {
            DesignId::Kref => run(&self.kref, paths, stream, how, threads, budget),
            DesignId::PercpuRef => run(&self.percpu_ref, paths, stream, how, threads, budget),
            DesignId::Rampart => run(&self.rampart, paths, stream, how, threads, budget),
        }
    }
}

/// The workload's rounds: each runs every design, with each decision
/// kind, at every thread count (designs in an order rotated per round,
/// thread counts ascending, so a design's 1-thread and N-thread runs are
/// close in time and their ratio is taken under the same conditions).
pub fn measure(
    params: &Params,
    loaded: profile::Loaded,
    progress: &mut dyn FnMut(&str),
) -> Result<AppArmorRun, BenchError> {
    let paths = paths::generate(params.apparmor_paths.max(1));
    let stream = paths::stream(paths.len(), params.stream_len.max(1));
    let label = Arc::new(Label::new(loaded.profile, &paths, 1)?);
    let refused = paths.iter().filter(|p| !label.decide_engine(&p.path)).count();
    let name = label.profile().name.clone();
    let designs = Designs::new(label);
    let budget = |how: Decide| Budget {
        opens: match how {
            Decide::Engine => params.apparmor_opens,
            Decide::Cached => params.apparmor_cached_opens,
        },
        limit: params.apparmor_run_limit,
    };
    let mut ns: BTreeMap<(DesignId, Decide), Samples> = BTreeMap::new();
    let mut on_cpu: BTreeMap<(DesignId, Decide), Samples> = BTreeMap::new();
    for round in 0..params.apparmor_rounds {
        progress(&format!("AppArmor opens (seed 003): round {}/{}", round + 1, params.apparmor_rounds));
        for id in rotated(&DesignId::ALL, round) {
            for how in Decide::ALL {
                for &threads in &params.threads {
                    let sample = designs.run(id, &paths, &stream, how, threads, budget(how))?;
                    ns.entry((id, how)).or_default().push(threads, sample.ns);
                    on_cpu.entry((id, how)).or_default().push(threads, sample.on_cpu);
                }
            }
        }
    }
    Ok(AppArmorRun {
        profile: name,
        origin: loaded.origin,
        paths: paths.len(),
        refused,
        stream_len: stream.len(),
        opens: Decide::ALL.into_iter().map(|how| (how, budget(how).opens)).collect(),
        run_limit: params.apparmor_run_limit,
        rounds: params.apparmor_rounds,
        threads: params.threads.clone(),
        ns,
        on_cpu,
        clock: crate::clock::clock_name().to_owned(),
    })
}
