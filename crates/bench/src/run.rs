//! The driver: every workload, every variant, interleaved rounds, one
//! process.
//!
//! Why interleaved: the machine is shared, and a burst of other work can
//! slow everything for seconds. Running all of one variant's repetitions
//! back to back would charge such a burst to that variant alone. Here
//! each round runs every variant once (in an order rotated per round), so
//! a slow period spreads over all variants and the medians over rounds
//! compare like with like; overheads against `none` are taken per round
//! (paired) before the median.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use rampart_policy::Policy;

use crate::apparmor::profile;
use crate::apparmor::report::AppArmorRun;
use crate::error::BenchError;
use crate::params::{Params, Size, Workload};
use crate::report::{Memory, Report};
use crate::rounds::rotated;
use crate::setup::Bench;
use crate::stats::Samples;
use crate::variants::{Checker, VariantId, Visit};
use crate::workloads::{chatroom, hits, rcutest, rw};

/// Runs every workload on every variant and gathers the report.
/// `progress` gets one line per round of each workload.
pub fn run(
    policy_path: PathBuf,
    policy: Arc<Policy>,
    size: Size,
    params: &Params,
    progress: &mut dyn FnMut(&str),
) -> Result<Report, BenchError> {
    let started = Instant::now();
    progress(&format!("deriving {} keys from {}", params.keys, policy_path.display()));
    let bench = Bench::new(policy_path, policy, params.keys, params.stream_len)?;
    let (tmp_dir, tmp_is_tmpfs) = rcutest::tmpfs_dir();

    let hit_ids: Vec<VariantId> = VariantId::ALL.into_iter().filter(|v| v.in_hits()).collect();
    let file_ids: Vec<VariantId> = VariantId::ALL.into_iter().filter(|v| v.in_files()).collect();
    let chat_ids: Vec<VariantId> = VariantId::ALL.into_iter().filter(|v| v.in_chat()).collect();

    // The working-set sweep: the same stream shape over the first `n` keys.
    let sweep: Vec<(usize, Vec<crate::setup::Access>)> =
        sweep_sizes(bench.keys.len()).into_iter().map(|n| (n, bench.stream_over(n, params.stream_len))).collect();
    let sweep_ids = [VariantId::UnsyncHashmap, VariantId::Rampart];

    let mut hit_samples: BTreeMap<VariantId, Samples> = BTreeMap::new();
    let mut hit_wall: BTreeMap<VariantId, Samples> = BTreeMap::new();
    let mut hit_on_cpu: BTreeMap<VariantId, Samples> = BTreeMap::new();
    let mut by_keys: BTreeMap<usize, BTreeMap<VariantId, Vec<f64>>> = BTreeMap::new();
    for round in 0..rounds(params, Workload::Hits, params.hit_rounds) {
        progress(&format!("AVC hits: round {}/{}", round + 1, params.hit_rounds));
        for id in rotated(&hit_ids, round) {
            for &threads in &params.threads {
                let mut visit = Hits { bench: &bench, stream: &bench.stream, threads, checks: params.hit_checks };
                let sample = bench.variants.visit(id, &mut visit)?;
                hit_samples.entry(id).or_default().push(threads, sample.ns);
                hit_wall.entry(id).or_default().push(threads, sample.wall_ns);
                hit_on_cpu.entry(id).or_default().push(threads, sample.on_cpu);
            }
        }
        for (n, stream) in &sweep {
            for id in rotated(&sweep_ids, round) {
                let mut visit = Hits { bench: &bench, stream, threads: 1, checks: params.hit_checks };
                let sample = bench.variants.visit(id, &mut visit)?;
                by_keys.entry(*n).or_default().entry(id).or_default().push(sample.ns);
            }
        }
    }

    let mut rcu_samples: BTreeMap<VariantId, Samples> = BTreeMap::new();
    let mut rcu_base: BTreeMap<VariantId, Samples> = BTreeMap::new();
    for round in 0..rounds(params, Workload::Rcutest, params.rcutest_rounds) {
        progress(&format!("rcutest: round {}/{}", round + 1, params.rcutest_rounds));
        for id in rotated(&file_ids, round) {
            for &threads in &params.threads {
                let mut visit = RcuTest { bench: &bench, dir: &tmp_dir, threads, writes: params.rcutest_writes };
                let r = bench.variants.visit(id, &mut visit)?;
                rcu_samples.entry(id).or_default().push(threads, r.variant_s);
                rcu_base.entry(id).or_default().push(threads, r.baseline_s);
            }
        }
    }

    let mut rw_samples: BTreeMap<VariantId, Vec<rw::ReadWrite>> = BTreeMap::new();
    let mut rw_base: BTreeMap<VariantId, Vec<rw::ReadWrite>> = BTreeMap::new();
    for round in 0..rounds(params, Workload::Rw, params.rw_rounds) {
        progress(&format!("read/write: round {}/{}", round + 1, params.rw_rounds));
        for id in rotated(&file_ids, round) {
            let mut visit = ReadWriteVisit { bench: &bench, ops: params.rw_ops };
            let r = bench.variants.visit(id, &mut visit)?;
            rw_samples.entry(id).or_default().push(r.variant);
            rw_base.entry(id).or_default().push(r.baseline);
        }
    }

    let mut chat_samples: BTreeMap<VariantId, Vec<f64>> = BTreeMap::new();
    let mut chat_cpu: BTreeMap<VariantId, Vec<f64>> = BTreeMap::new();
    let mut chat_pinned = true;
    for round in 0..rounds(params, Workload::Chat, params.chat_rounds) {
        progress(&format!("chat room: round {}/{}", round + 1, params.chat_rounds));
        for id in rotated(&chat_ids, round) {
            let mut visit = Chat { bench: &bench, params };
            let r = bench.variants.visit(id, &mut visit)?;
            chat_samples.entry(id).or_default().push(r.msgs_per_s);
            chat_cpu.entry(id).or_default().push(r.cpu_us_per_msg);
            chat_pinned &= r.pinned;
        }
    }

    let (apparmor, apparmor_skipped) = apparmor(params, progress)?;

    let memory = Memory::of(bench.variants.rampart.avc(), &bench.contexts);
    Ok(Report {
        size,
        params: params.clone(),
        policy: bench.policy_path.display().to_string(),
        date: today(),
        nproc: std::thread::available_parallelism().map_or(0, usize::from),
        keys: bench.keys.len(),
        contexts: bench.distinct_contexts(),
        classes: bench.distinct_classes(),
        tmp_dir: tmp_dir.display().to_string(),
        tmp_is_tmpfs,
        syscall_labels: bench.syscall_labels.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect(),
        clock: crate::clock::clock_name().to_owned(),
        hits: hit_samples,
        hits_wall: hit_wall,
        hits_on_cpu: hit_on_cpu,
        hits_by_keys: by_keys,
        rcutest: rcu_samples,
        rcutest_base: rcu_base,
        rw: rw_samples,
        rw_base,
        chat: chat_samples,
        chat_cpu,
        chat_pinned,
        memory,
        apparmor,
        apparmor_skipped,
        elapsed_s: started.elapsed().as_secs_f64(),
    })
}

/// The AppArmor workload, if the run includes it. Without its profile
/// (no apparmor_parser or apparmor-profiles here) it is skipped, with the
/// reason, unless it was asked for by name or `--apparmor-policy`: the
/// other seeds still run on a machine without AppArmor.
fn apparmor(
    params: &Params,
    progress: &mut dyn FnMut(&str),
) -> Result<(Option<AppArmorRun>, Option<String>), BenchError> {
    if !params.runs(Workload::Apparmor) {
        return Ok((None, None));
    }
    let loaded = match profile::load(params.apparmor_policy.as_deref()) {
        Ok(l) => l,
        Err(e) if !params.workloads_named && params.apparmor_policy.is_none() => {
            progress(&format!("AppArmor opens (seed 003) skipped: {e}"));
            return Ok((None, Some(e.to_string())));
        }
        Err(e) => return Err(e),
    };
    Ok((Some(crate::apparmor::workload::measure(params, loaded, progress)?), None))
}

/// `rounds` if the run includes `w`, else none.
fn rounds(params: &Params, w: Workload, rounds: usize) -> usize {
    if params.runs(w) {
        rounds
    } else {
        0
    }
}

/// Distinct-key counts of the working-set sweep: 16 (all in L1), then
/// powers of four from 256 below the key count, and the key count itself.
fn sweep_sizes(keys: usize) -> Vec<usize> {
    let mut sizes: Vec<usize> = [16, 256, 1024, 4096, 16384].into_iter().filter(|&n| n < keys).collect();
    sizes.push(keys);
    sizes
}

struct Hits<'a> {
    bench: &'a Bench,
    stream: &'a [crate::setup::Access],
    threads: usize,
    checks: usize,
}

impl Visit for Hits<'_> {
    type Out = Result<hits::HitSample, BenchError>;
    fn visit<C: Checker>(&mut self, _id: VariantId, checker: &C) -> Self::Out {
        hits::run(checker, &self.bench.keys, self.stream, self.threads, self.checks)
    }
}

struct RcuTest<'a> {
    bench: &'a Bench,
    dir: &'a std::path::Path,
    threads: usize,
    writes: usize,
}

impl Visit for RcuTest<'_> {
    type Out = Result<rcutest::Paired, BenchError>;
    fn visit<C: Checker>(&mut self, _id: VariantId, checker: &C) -> Self::Out {
        let none = &self.bench.variants.none;
        rcutest::run_paired(checker, none, self.bench.syscalls.tmpfs_write, self.dir, self.threads, self.writes)
    }
}

struct ReadWriteVisit<'a> {
    bench: &'a Bench,
    ops: usize,
}

impl Visit for ReadWriteVisit<'_> {
    type Out = Result<rw::Paired, BenchError>;
    fn visit<C: Checker>(&mut self, _id: VariantId, checker: &C) -> Self::Out {
        let s = &self.bench.syscalls;
        rw::run_paired(checker, &self.bench.variants.none, s.dev_read, s.dev_write, self.ops)
    }
}

struct Chat<'a> {
    bench: &'a Bench,
    params: &'a Params,
}

impl Visit for Chat<'_> {
    type Out = Result<chatroom::ChatSample, BenchError>;
    fn visit<C: Checker>(&mut self, _id: VariantId, checker: &C) -> Self::Out {
        let p = self.params;
        let s = &self.bench.syscalls;
        chatroom::run(checker, s.sock_send, s.sock_recv, p.chat_pairs, p.chat_messages, p.chat_limit)
    }
}

/// Today's date (UTC) as YYYY-MM-DD, from the system clock.
pub fn today() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Howard Hinnant's `civil_from_days`: days since 1970-01-01 to (y, m, d).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(20_514), (2026, 3, 2));
    }

    #[test]
    fn rotation_keeps_every_variant() {
        let ids = [VariantId::None, VariantId::Rampart, VariantId::Kref];
        assert_eq!(rotated(&ids, 1), vec![VariantId::Rampart, VariantId::Kref, VariantId::None]);
        assert_eq!(rotated(&ids, 3), ids.to_vec());
    }
}
