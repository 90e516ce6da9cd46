//! Writing the results into docs/benchmarks.md without disturbing the
//! rest of it.
//!
//! Why markers: the file holds other benchmark sections written by hand
//! or by other tools; this one owns only the text between
//! `<!-- seeds:begin -->` and `<!-- seeds:end -->` (the SELinux seed
//! workloads) and between `<!-- seeds-apparmor:begin -->` and
//! `<!-- seeds-apparmor:end -->` (the AppArmor workload, so it can be
//! rerun alone), each replaced whole when its workloads ran (appended,
//! with the markers, the first time).

use std::path::{Path, PathBuf};

use crate::error::BenchError;
use crate::report::Report;

pub const BEGIN: &str = "<!-- seeds:begin -->";
pub const END: &str = "<!-- seeds:end -->";
pub const APPARMOR_BEGIN: &str = "<!-- seeds-apparmor:begin -->";
pub const APPARMOR_END: &str = "<!-- seeds-apparmor:end -->";

/// `existing` with the seeds section replaced by `section` (or appended).
pub fn replace_section(existing: &str, section: &str) -> String {
    replace_between(existing, BEGIN, END, section)
}

/// `existing` with what lies between the markers `begin` and `end`
/// replaced by `section` (or the markers and `section` appended).
pub fn replace_between(existing: &str, begin: &str, end: &str, section: &str) -> String {
    let body = format!("{begin}\n{}\n{end}", section.trim_end());
    if let Some(b) = existing.find(begin) {
        if let Some(e) = existing[b..].find(end) {
            let after = &existing[b + e + end.len()..];
            return format!("{}{body}{after}", &existing[..b]);
        }
    }
    let head = existing.trim_end();
    if head.is_empty() {
        format!("{body}\n")
    } else {
        format!("{head}\n\n{body}\n")
    }
}

/// Writes the sections of the workloads that ran into `out` (created if
/// absent) and the charts of the workloads that ran into `img/` beside
/// it; returns the files written.
pub fn write(report: &Report, out: &Path, command: &str) -> Result<Vec<PathBuf>, BenchError> {
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !dir.is_dir() {
        return Err(BenchError::Workload(format!(
            "the folder of `{}` does not exist; run from the repository root or pass `--out PATH`",
            out.display()
        )));
    }
    let img = dir.join("img");
    let mut written = if report.ran_seeds() { crate::chart::write_all(report, &img)? } else { Vec::new() };
    if let Some(run) = &report.apparmor {
        written.push(run.chart(&img)?);
    }
    let existing = match std::fs::read_to_string(out) {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(BenchError::Io { what: format!("cannot read {}", out.display()), source: e }),
    };
    let mut text = existing;
    if report.ran_seeds() {
        text = replace_section(&text, &report.markdown(command, Some("img")));
    }
    if let Some(section) = report.apparmor_markdown(command, Some("img")) {
        text = replace_between(&text, APPARMOR_BEGIN, APPARMOR_END, &section);
    }
    std::fs::write(out, text).map_err(BenchError::io(format!("cannot write {}", out.display())))?;
    written.push(out.to_path_buf());
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_only_between_markers() {
        let doc = format!("# B\n\nintro\n\n{BEGIN}\nold\n{END}\n\n## Other\nkept\n");
        let new = replace_section(&doc, "new\n");
        assert_eq!(new, format!("# B\n\nintro\n\n{BEGIN}\nnew\n{END}\n\n## Other\nkept\n"));
        assert_eq!(replace_section(&new, "new\n"), new);
    }

    #[test]
    fn appends_when_absent() {
        assert_eq!(replace_section("# B\ntext\n\n", "s"), format!("# B\ntext\n\n{BEGIN}\ns\n{END}\n"));
        assert_eq!(replace_section("", "s"), format!("{BEGIN}\ns\n{END}\n"));
        // An unterminated begin marker is left alone; a full section appended.
        let broken = format!("x\n{BEGIN}\n");
        assert!(replace_section(&broken, "s").ends_with(&format!("{BEGIN}\ns\n{END}\n")));
    }
}
