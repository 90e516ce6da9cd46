//! The AppArmor workload (seed 003): every design, from two threads and
//! with both decision kinds, answers every path exactly as the engine
//! does on the profile apparmor_parser compiled (so the comparison is
//! fair), and the paths hold both answers. The engine's own answers are
//! checked against python3-apparmor in crates/apparmor/tests. No test
//! here asserts a timing.
//!
//! Needs apparmor_parser and apparmor-profiles (`scripts/install-deps.sh`
//! installs them); a machine without them prints why and passes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use rampart_apparmor::{file, perms::MAY_READ, Policy};
use rampart_bench::apparmor::designs::{Design, DesignId, Designs, OpenPath};
use rampart_bench::apparmor::paths::{self, PathReq};
use rampart_bench::apparmor::{profile, Decide, Label};
use rampart_bench::{Params, Size, Workload};

const PARSER: &str = "/sbin/apparmor_parser";

/// Fails the test naming what to install when the compiler or the
/// profile is missing.
fn require_parser_and_profile() {
    for needed in [PARSER, profile::SOURCE] {
        assert!(
            Path::new(needed).exists(),
            "needs {needed}: install apparmor and apparmor-profiles with scripts/install-deps.sh"
        );
    }
}

/// The engine's answers, from a policy compiled here to a file and
/// loaded as `rampart apparmor` loads one (not through the workload's
/// loader).
fn engine_answers(paths: &[PathReq]) -> Vec<bool> {
    require_parser_and_profile();
    let out = std::env::temp_dir().join(format!("rampart-bench-lighttpd-{}.bin", std::process::id()));
    let status = Command::new(PARSER)
        .args(["-Q", "-K", "--skip-cache", "-I", "/etc/apparmor.d", "-I", "/usr/share/apparmor/extra-profiles", "-o"])
        .arg(&out)
        .arg(profile::SOURCE)
        .status()
        .unwrap();
    assert!(status.success());
    let policy = Policy::from_files(&[&out]).unwrap();
    std::fs::remove_file(&out).unwrap();
    let subject = policy.resolve(profile::PROFILE).unwrap();
    paths.iter().map(|p| file::path_perm(subject, &p.path, MAY_READ, false).allowed).collect()
}

fn answers<D: Design>(design: &D, index: usize, order: &[usize], paths: &[PathReq], how: Decide) -> Vec<bool> {
    let mut t = design.thread(index);
    order.iter().map(|&i| t.open(&paths[i], how)).collect()
}

#[test]
#[ignore = "needs apparmor_parser and apparmor-profiles"]
fn every_design_answers_as_the_engine_does() {
    let paths = paths::generate(2000);
    let expected = engine_answers(&paths);
    let refused = expected.iter().filter(|a| !**a).count();
    assert!(refused > 0 && refused < expected.len(), "the paths must hold both answers ({refused} refused)");

    let loaded = profile::load(None).unwrap();
    assert_eq!(loaded.profile.name, profile::PROFILE);
    let label = Arc::new(Label::new(loaded.profile, &paths, 1).unwrap());
    let designs = Designs::new(label);
    // Every path, then the stream (which repeats them in another order).
    let order: Vec<usize> = (0..paths.len()).chain(paths::stream(paths.len(), 5000)).collect();
    let want: Vec<bool> = order.iter().map(|&i| expected[i]).collect();
    for how in Decide::ALL {
        for id in DesignId::ALL {
            // Per-thread designs keep separate state per index: ask two.
            for index in [0, 1] {
                let got = match id {
                    DesignId::Kref => answers(&designs.kref, index, &order, &paths, how),
                    DesignId::PercpuRef => answers(&designs.percpu_ref, index, &order, &paths, how),
                    DesignId::Rampart => answers(&designs.rampart, index, &order, &paths, how),
                };
                let wrong = got.iter().zip(&want).filter(|(g, w)| g != w).count();
                assert_eq!(wrong, 0, "{} ({}), thread {index}: {wrong} answers differ", id.name(), how.name());
            }
        }
    }
}

#[test]
#[ignore = "needs apparmor_parser"]
fn a_precompiled_binary_without_the_profile_is_refused_with_the_command_to_make_one() {
    assert!(Path::new(PARSER).exists(), "needs {PARSER}: install apparmor with scripts/install-deps.sh");
    let dir = std::env::temp_dir().join(format!("rampart-bench-aa-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("other.profile");
    std::fs::write(&src, "profile other /usr/bin/other {\n  /etc/hostname r,\n}\n").unwrap();
    let bin = dir.join("other.bin");
    let status = Command::new(PARSER).args(["-Q", "-K", "--skip-cache", "-o"]).arg(&bin).arg(&src).status().unwrap();
    assert!(status.success());
    let err = profile::load(Some(&bin)).err().expect("a binary without the profile must be refused").to_string();
    assert!(err.contains(profile::PROFILE) && err.contains("apparmor_parser"), "{err}");
    let missing = profile::load(Some(&dir.join("absent.bin"))).err().expect("a missing file must be refused");
    assert!(missing.to_string().contains("absent.bin"), "{missing}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[ignore = "needs apparmor_parser and apparmor-profiles"]
fn the_workload_runs_alone_and_reports_its_targets() {
    require_parser_and_profile();
    let params = Params::for_size(Size::Smoke).with_threads(&[1, 2]).with_workloads(&[Workload::Apparmor]);
    let run = rampart_bench::apparmor::workload::measure(&params, profile::load(None).unwrap(), &mut |_| {}).unwrap();
    assert_eq!(run.threads, vec![1, 2]);
    for how in Decide::ALL {
        for id in DesignId::ALL {
            for t in [1, 2] {
                assert!(run.ns(id, how, t).is_some_and(|ns| ns > 0.0), "{} {} {t}", id.name(), how.name());
            }
        }
    }
    let targets = run.targets();
    assert_eq!(targets.len(), 3);
    assert!(targets.iter().all(|g| g.measured.is_some()));
    let json = serde_json::to_value(run.json()).unwrap();
    assert!(json["efficiency"]["kref"]["cached"]["2"].is_number(), "{json}");
    let md = run.markdown("rampart bench seeds --workloads apparmor", "today", 2, Some("img"));
    assert!(md.contains("| **`rampart`** | engine |"), "{md}");
    assert!(md.contains(&format!("(img/{})", rampart_bench::apparmor::report::CHART)), "{md}");
    let dir = std::env::temp_dir().join(format!("rampart-apparmor-chart-{}", std::process::id()));
    let png = run.chart(&dir).unwrap();
    assert_eq!(&std::fs::read(&png).unwrap()[1..4], b"PNG");
    std::fs::remove_dir_all(&dir).unwrap();
}
