//! Errors of the policy reader and of context parsing.
//!
//! Every error says what went wrong, where (section and byte offset for
//! policy files) and, through its `Display`, what to do about it.

use std::fmt;

/// A policy file that could not be read: truncated, corrupted, or of a
/// version we do not support.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError(Box<PolicyErrorInner>);

/// Boxed so `Result<u32, PolicyError>` stays small on the read path.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PolicyErrorInner {
    section: &'static str,
    offset: usize,
    message: String,
}

impl PolicyError {
    pub(crate) fn new(section: &'static str, offset: usize, message: impl Into<String>) -> Self {
        Self(Box::new(PolicyErrorInner { section, offset, message: message.into() }))
    }

    /// The section of the policy file being read when the error was found.
    pub fn section(&self) -> &'static str {
        self.0.section
    }

    /// Byte offset in the file where the offending field starts.
    pub fn offset(&self) -> usize {
        self.0.offset
    }

    /// What is wrong, without location.
    pub fn message(&self) -> &str {
        &self.0.message
    }
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid policy: {} (section `{}`, byte offset {}); the file is truncated or corrupted, or not a kernel binary policy of version 30 to 33: rebuild it or pass another with --policy",
            self.0.message, self.0.section, self.0.offset
        )
    }
}

impl std::error::Error for PolicyError {}

/// A security context string that the policy rejects.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid context `{context}`: {reason}")]
pub struct ContextError {
    context: String,
    reason: String,
}

impl ContextError {
    pub(crate) fn new(context: &str, reason: impl Into<String>) -> Self {
        Self { context: context.to_owned(), reason: reason.into() }
    }

    /// Why the context was rejected.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}
