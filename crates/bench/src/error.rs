//! The one error type of the benchmarks. Benchmarks fail on setup (policy,
//! files, sockets) or on a broken invariant (a variant denied an access
//! the workload needs), never silently.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("the policy has no usable keys: {0}")]
    Policy(String),
    #[error(transparent)]
    Avc(#[from] rampart_avc::AvcError),
    #[error("{what}: {source}")]
    Io { what: String, source: std::io::Error },
    #[error("cannot write {}: {message}", .path.display())]
    Chart { path: PathBuf, message: String },
    #[error("{0}")]
    Workload(String),
}

impl BenchError {
    /// An I/O error with what was being done.
    pub fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> BenchError {
        let what = what.into();
        move |source| BenchError::Io { what, source }
    }
}
