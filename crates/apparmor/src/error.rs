//! Errors of the binary policy reader.
//!
//! Every error says what is wrong and at which byte offset of the blob,
//! like the kernel's `audit_iface` (which logs `offset=` and an `info`
//! string), so a corrupted or unsupported file can be located with
//! `xxd -s OFFSET`.

use std::fmt;

/// A binary policy that could not be loaded: truncated, corrupted, of an
/// unsupported ABI version, or rejected by the kernel's verification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError(Box<Inner>);

/// Boxed so `Result<_, LoadError>` stays small on the read path.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Inner {
    profile: Option<String>,
    offset: usize,
    message: String,
}

impl LoadError {
    pub(crate) fn new(offset: usize, message: impl Into<String>) -> Self {
        Self(Box::new(Inner { profile: None, offset, message: message.into() }))
    }

    /// Names the profile being unpacked when the error was found.
    pub(crate) fn in_profile(mut self, name: &str) -> Self {
        if self.0.profile.is_none() {
            self.0.profile = Some(name.to_owned());
        }
        self
    }

    /// Puts the kernel's `info` string for the enclosing step first.
    pub(crate) fn prefix(mut self, info: &str) -> Self {
        self.0.message = format!("{info}: {}", self.0.message);
        self
    }

    /// Byte offset in the blob where the offending element starts.
    pub fn offset(&self) -> usize {
        self.0.offset
    }

    /// What is wrong, without location.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The profile being read, when its name had been read already.
    pub fn profile(&self) -> Option<&str> {
        self.0.profile.as_deref()
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid AppArmor binary policy: {} (byte offset {}", self.0.message, self.0.offset)?;
        if let Some(p) = &self.0.profile {
            write!(f, ", profile `{p}`")?;
        }
        f.write_str("); the file is truncated or corrupted, or not what `apparmor_parser -o` writes (ABI v5 to v9)")
    }
}

impl std::error::Error for LoadError {}

pub(crate) type Result<T> = std::result::Result<T, LoadError>;
