//! Errors of the file_contexts reader, the xattr helpers and the relabel
//! engine.
//!
//! Every error says what went wrong, where (file and line for spec
//! files, the path for I/O) and what to do about it.

use std::path::PathBuf;

use rampart_policy::ContextError;

/// Why the file_contexts configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LabelError {
    /// A spec or substitution file could not be read.
    #[error("cannot read `{}`: {source}; check that it exists and is readable (Rampart reads the text files, so run as a user who can read /etc/selinux), or pass other files", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A line that is not `REGEX [TYPE] CONTEXT`.
    #[error("{}:{line}: {message}; expected `REGEX [TYPE] CONTEXT` (TYPE one of -- -d -l -c -b -s -p); fix or remove the line", path.display())]
    Syntax {
        /// The spec file.
        path: PathBuf,
        /// 1-based line number.
        line: u32,
        /// What is wrong.
        message: String,
    },
    /// A regex that PCRE2 rejects, or that Rampart cannot match exactly
    /// like PCRE2.
    #[error("{}:{line}: invalid regex `{regex}`: {message} (at byte {offset} of the regex); fix the regex", path.display())]
    Regex {
        /// The spec file.
        path: PathBuf,
        /// 1-based line number.
        line: u32,
        /// The regex as written.
        regex: String,
        /// 0-based byte offset in the regex.
        offset: usize,
        /// What is wrong.
        message: String,
    },
    /// A context that the policy rejects.
    #[error("{}:{line}: {source}; use a context the loaded policy defines (check with `rampart policy info`), or `<<none>>`", path.display())]
    Context {
        /// The spec file.
        path: PathBuf,
        /// 1-based line number.
        line: u32,
        /// The policy's reason.
        source: ContextError,
    },
    /// The regex engine refused to combine valid regexes (a size limit).
    #[error("cannot build the file_contexts lookup index: {message}; this is a Rampart limit, please report it with your file_contexts")]
    Index {
        /// The regex engine's message.
        message: String,
    },
    /// A compiled `file_contexts.bin` where a text file was expected.
    #[error("`{}` is a compiled file_contexts.bin; Rampart reads the text form: pass the file without `.bin`", path.display())]
    Compiled {
        /// The file.
        path: PathBuf,
    },
}
