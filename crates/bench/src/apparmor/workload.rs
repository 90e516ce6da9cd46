//! One timed run: `threads` threads, each opening `opens` files along the
//! shuffled stream from its own offset, all under the same label.
//!
//! Each thread first opens every path once (warming its caches, as the
//! hit workload does), then the threads line up and only the walk is
//! timed, in thread CPU time (crate::clock).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::designs::{Design, DesignId, Designs, OpenPath};
use super::paths::{self, PathReq};
use super::report::AppArmorRun;
use super::{profile, Decide, Label};
use crate::error::BenchError;
use crate::params::Params;
use crate::report::Samples;
use crate::run::rotated;
use crate::workloads::hits::HitSample;
use crate::workloads::lined_up;

/// Times `opens` opens per thread through `design`; the answers are
/// counted into a `black_box`, so no check can be optimised away.
pub fn run<D: Design>(
    design: &D,
    paths: &[PathReq],
    stream: &[usize],
    how: Decide,
    threads: usize,
    opens: usize,
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
        |t, index| walk(t, paths, stream, how, index * stream.len() / threads, opens),
    )?;
    Ok(HitSample::of(&laps, opens))
}

/// `opens` opens along `stream` from `offset`, wrapping around; returns
/// how many were allowed. Every index of `stream` is within `paths`.
#[inline(never)]
fn walk<T: OpenPath>(t: &mut T, paths: &[PathReq], stream: &[usize], how: Decide, offset: usize, opens: usize) -> u64 {
    let mut allowed = 0u64;
    let mut left = opens;
    let mut pos = offset % stream.len();
    while left > 0 {
        let n = left.min(stream.len() - pos);
        for &i in &stream[pos..pos + n] {
            allowed += u64::from(t.open(&paths[i], how));
        }
        left -= n;
        pos = 0;
    }
    allowed
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
        opens: usize,
    ) -> Result<HitSample, BenchError> {
        match id {
            DesignId::Kref => run(&self.kref, paths, stream, how, threads, opens),
            DesignId::PercpuRef => run(&self.percpu_ref, paths, stream, how, threads, opens),
            DesignId::Rampart => run(&self.rampart, paths, stream, how, threads, opens),
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
    let opens = |how: Decide| match how {
        Decide::Engine => params.apparmor_opens,
        Decide::Cached => params.apparmor_cached_opens,
    };
    let mut ns: BTreeMap<(DesignId, Decide), Samples> = BTreeMap::new();
    let mut on_cpu: BTreeMap<(DesignId, Decide), Samples> = BTreeMap::new();
    for round in 0..params.apparmor_rounds {
        progress(&format!("AppArmor opens (seed 003): round {}/{}", round + 1, params.apparmor_rounds));
        for id in rotated(&DesignId::ALL, round) {
            for how in Decide::ALL {
                for &threads in &params.threads {
                    let sample = designs.run(id, &paths, &stream, how, threads, opens(how))?;
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
        opens: Decide::ALL.into_iter().map(|how| (how, opens(how))).collect(),
        rounds: params.apparmor_rounds,
        threads: params.threads.clone(),
        ns,
        on_cpu,
        clock: crate::clock::clock_name().to_owned(),
    })
}
