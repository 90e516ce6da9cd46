//! `rampart relabel [-n] [-v] [-R] [-F] [-x] [--root DIR] PATH...`:
//! `restorecon` on the rampart-label relabel engine, wired as the
//! example in `rampart_label::report` shows.
//!
//! Output is restorecon's: with `-v`, `Relabeled PATH from OLD to NEW`
//! (`Would relabel` with `-n`) and `PATH not reset as customized by
//! admin to CUR` on stdout, `Warning no default label for PATH` for a
//! starting path without one, errors on stderr as `rampart: MESSAGE`.
//! When stderr is a terminal and `-v` is off, a progress line (files,
//! relabeled, errors, files per second) is redrawn there, and the run
//! ends with that line as a summary; nothing extra is printed
//! otherwise, so piped output is restorecon's. Exit status: 0, or 255
//! after any error (restorecon's `exit(-1)`).
//!
//! The walk never leaves the starting path's filesystem: `-x` is
//! accepted for restorecon compatibility and is the default, because
//! the engine has no "skip filesystems without seclabel" rule (it would
//! walk into /proc and /sys). Customizable types come from
//! `/etc/selinux/TYPE/contexts/customizable_types`.

use std::path::Path;

use rampart_label::{
    read_customizable_types, selinux_type_dir, ConsoleReporter, Event, FileContexts, Progress, RelabelOptions,
    Relabeler,
};

use crate::cli::RelabelArgs;

/// Runs the engine; returns restorecon's exit status.
pub fn run(fc: &FileContexts, args: &RelabelArgs) -> u8 {
    let mut opts = RelabelOptions::restorecon();
    opts.customizable_types =
        read_customizable_types(&selinux_type_dir(Path::new("/etc/selinux")).join("contexts/customizable_types"));
    opts.recursive = args.recursive;
    opts.dry_run = args.dry_run;
    opts.force = args.force;
    // `-x` or not, the walk stays on the starting filesystem (see above).
    let _ = args.one_filesystem;
    opts.cross_filesystems = false;
    opts.alt_root = args.root.clone();
    let mut out = ConsoleReporter::new("rampart", args.verbose);
    let summary = Relabeler::new(fc, opts).run(&args.paths, &mut |e| out.event(e));
    // A last progress event, so that the summary line is drawn even for
    // runs too short to have shown progress (only when progress is on).
    out.event(&Event::Progress(Progress {
        visited: summary.visited,
        relabeled: summary.relabeled,
        errors: summary.errors,
        elapsed: summary.elapsed,
    }));
    out.finish(&summary);
    if !args.dry_run && summary.relabeled > 0 {
        tell_the_daemon();
    }
    summary.exit_code()
}

/// A running rampartd caches labels and has placed ignore marks from
/// them: tell it labels changed (best effort; no daemon is no error).
fn tell_the_daemon() {
    let socket = Path::new(rampart_enforce::DEFAULT_SOCKET);
    if !socket.exists() {
        return;
    }
    let told = rampart_enforce::Client::connect(socket)
        .map_err(rampart_enforce::ControlError::from)
        .and_then(|mut c| c.labels_changed());
    if let Err(e) = told {
        crate::error::warn(&format!("could not tell rampartd that labels changed ({e}); run `rampart reload`"));
    }
}
