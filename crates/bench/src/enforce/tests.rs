//! End to end: the quick harness with no listener and the trivial
//! responder, in the private namespace, gives positive numbers. Needs
//! root: `#[ignore]`d, and run as another user it fails saying so. No
//! timing is asserted.

use super::*;

#[test]
#[ignore = "needs root: fanotify in a private mount namespace"]
fn quick_none_and_trivial_end_to_end() {
    // SAFETY: geteuid takes no arguments and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        panic!("needs root (fanotify, mounts): run the ignored tests as root, as scripts/test.sh does");
    }
    let options = EnforceOptions {
        quick: true,
        rounds: Some(2),
        measure: Some(Duration::from_millis(100)),
        listeners: vec![Listener::None, Listener::Trivial],
        progress: false,
        pinned_pass: false,
        clients: vec![1, 2],
        ..EnforceOptions::default()
    };
    let report = run(&options).unwrap();
    assert_eq!(report.variants.len(), 2);
    for v in &report.variants {
        assert_eq!(v.status, Status::Ran, "{}", v.listener.name());
        assert_eq!(v.rounds.len(), 2);
        for w in options.workloads() {
            let ns = report.per_op_ns(v.listener, w).unwrap();
            let rate = report.ops_per_s(v.listener, w).unwrap();
            assert!(ns > 0.0 && ns.is_finite(), "{} {}: {ns}", v.listener.name(), w.name());
            assert!(rate > 0.0 && rate.is_finite(), "{} {}: {rate}", v.listener.name(), w.name());
        }
    }
    // The responder's marks were checked: one mount mark, on the tmpfs.
    let trivial = report.variant(Listener::Trivial).unwrap();
    assert!(trivial.marks.as_deref().unwrap().starts_with("1 mount mark"), "{:?}", trivial.marks);
    assert!(report.scaling(Listener::Trivial, Workload::FirstTouch(2), Workload::FirstTouch(1)).unwrap() > 0.0);
    // Nothing is left behind outside the namespace.
    let leftovers: Vec<_> = std::fs::read_dir("/tmp")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&format!("rampart-enforce.{}.", std::process::id())))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    assert!(report.text().contains("trivial"));
    assert_eq!(report.to_json()["variants"][0]["status"], "ran");
}
