//! Printing relabel events the way `restorecon` does, so that a
//! `rampart relabel [-n] [-v] [-R] PATH...` command is a few lines:
//!
//! ```no_run
//! # use rampart_label::*;
//! # fn f(fc: &FileContexts, paths: Vec<std::path::PathBuf>) -> std::process::ExitCode {
//! let mut opts = RelabelOptions::restorecon();
//! opts.recursive = true; // -R
//! opts.dry_run = false; // -n
//! let mut out = ConsoleReporter::new("rampart", true /* -v */);
//! let summary = Relabeler::new(fc, opts).run(&paths, &mut |e| out.event(e));
//! out.finish(&summary);
//! std::process::ExitCode::from(summary.exit_code())
//! # }
//! ```
//!
//! Changes (`-v`) and notes go to stdout, errors to stderr prefixed with
//! the program name, exactly like `restorecon`'s log callback. When
//! stderr is a terminal and `-v` is off, a one-line progress display
//! (files, changes, files per second) is redrawn on stderr at most ten
//! times a second.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use crate::relabel::{Event, Progress, Summary};

/// Prints events on stdout/stderr.
#[derive(Debug)]
pub struct ConsoleReporter {
    program: String,
    verbose: bool,
    progress: bool,
    last_draw: Option<Instant>,
    drawn: bool,
}

impl ConsoleReporter {
    /// `verbose` is `-v`; the progress line is on when stderr is a
    /// terminal and `verbose` is off (`restorecon` makes `-p` and `-v`
    /// exclusive).
    pub fn new(program: &str, verbose: bool) -> ConsoleReporter {
        let progress = !verbose && std::io::stderr().is_terminal();
        ConsoleReporter { program: program.to_owned(), verbose, progress, last_draw: None, drawn: false }
    }

    /// Forces the progress line on or off.
    pub fn with_progress(mut self, on: bool) -> ConsoleReporter {
        self.progress = on;
        self
    }

    /// Handles one event.
    pub fn event(&mut self, e: &Event<'_>) {
        match e {
            Event::Relabeled(c) if self.verbose => self.stdout_line(&c.message()),
            Event::Customized { path, current } if self.verbose => {
                let mut m = std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()).to_vec();
                m.extend_from_slice(b" not reset as customized by admin to ");
                m.extend_from_slice(current.as_bytes());
                self.stdout_line(&m);
            }
            Event::NoDefaultLabel { path } => {
                let mut m = b"Warning no default label for ".to_vec();
                m.extend_from_slice(path);
                self.stdout_line(&m);
            }
            Event::Error(err) => {
                self.clear_progress();
                let mut m = format!("{}: ", self.program).into_bytes();
                m.extend_from_slice(&err.message());
                m.push(b'\n');
                let _ = std::io::stderr().write_all(&m);
            }
            Event::Progress(p) if self.progress => self.draw(p),
            _ => {}
        }
    }

    /// Ends the progress line.
    pub fn finish(&mut self, summary: &Summary) {
        if self.progress && self.drawn {
            let p = Progress {
                visited: summary.visited,
                relabeled: summary.relabeled,
                errors: summary.errors,
                elapsed: summary.elapsed,
            };
            let _ = write!(std::io::stderr(), "\r{}\n", progress_line(&p));
            self.drawn = false;
        }
    }

    fn stdout_line(&mut self, m: &[u8]) {
        self.clear_progress();
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(m);
        let _ = out.write_all(b"\n");
    }

    fn clear_progress(&mut self) {
        if self.drawn {
            let _ = write!(std::io::stderr(), "\r\x1b[K");
            self.drawn = false;
        }
    }

    fn draw(&mut self, p: &Progress) {
        let now = Instant::now();
        if self.last_draw.is_some_and(|t| now.duration_since(t) < Duration::from_millis(100)) {
            return;
        }
        self.last_draw = Some(now);
        let _ = write!(std::io::stderr(), "\r{}\x1b[K", progress_line(p));
        self.drawn = true;
    }
}

/// `12345 files, 67 relabeled, 0 errors, 45678 files/s`.
pub fn progress_line(p: &Progress) -> String {
    format!("{} files, {} relabeled, {} errors, {:.0} files/s", p.visited, p.relabeled, p.errors, p.rate())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn progress_line_has_counts_and_rate() {
        let p = Progress { visited: 2048, relabeled: 3, errors: 1, elapsed: Duration::from_secs(2) };
        assert_eq!(progress_line(&p), "2048 files, 3 relabeled, 1 errors, 1024 files/s");
    }
}
