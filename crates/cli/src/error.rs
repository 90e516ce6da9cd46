//! The one error type of the command: every failure ends the process with
//! exit status 2 (status 1 is reserved for "denied") and a message on
//! stderr.

use std::fmt;

#[derive(Debug)]
pub enum CliError {
    /// The command line itself is wrong.
    Usage(String),
    /// The command line parses, but names something the policy rejects
    /// (a context, class, permission or boolean), or the policy cannot be
    /// loaded.
    Input(String),
    /// Reading stdin or writing stdout failed.
    Io(std::io::Error),
}

impl CliError {
    pub fn usage(msg: impl Into<String>) -> Self {
        CliError::Usage(msg.into())
    }

    pub fn input(msg: impl Into<String>) -> Self {
        CliError::Input(msg.into())
    }

    /// 2 for every error, like grep, diff and other tools whose status 1
    /// is a normal answer.
    pub fn exit_code(&self) -> u8 {
        2
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Usage(m) | CliError::Input(m) => f.write_str(m),
            CliError::Io(e) => write!(f, "i/o error: {e}"),
        }
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        CliError::Io(e)
    }
}

impl From<rampart_policy::LoadError> for CliError {
    fn from(e: rampart_policy::LoadError) -> Self {
        CliError::Input(e.to_string())
    }
}

/// Prints a warning to stderr; a closed stderr is not an error.
pub fn warn(msg: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "warning: {msg}");
}

/// An OS error as `strerror` words it, without Rust's ` (os error N)`.
pub(crate) fn os_message(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error ") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}
