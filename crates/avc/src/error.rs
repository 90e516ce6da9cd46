//! Errors of the AVC's cold paths (interning, mapping, publication). The
//! check path has no errors: it always returns a decision.

/// Why an AVC operation failed. Nothing was changed when one is returned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AvcError {
    #[error("invalid context `{context}`: it must be non-empty, at most 4096 bytes, without NUL bytes")]
    InvalidContext { context: String },
    #[error("the SID table is full ({max} contexts); this many distinct labels suggests a labeling bug")]
    SidTableFull { max: usize },
    #[error("invalid class mapping: {0}; fix the classes passed to `Mapping::new`")]
    InvalidMapping(String),
    #[error(
        "the policy lacks {}class `{class}` and says `handle_unknown reject`; load a policy that defines it, or one built with handle_unknown deny or allow",
        match perm { Some(p) => format!("permission `{p}` of "), None => String::new() }
    )]
    RejectedUnknown { class: String, perm: Option<String> },
    #[error("boolean `{0}` is not defined in the loaded policy")]
    UnknownBoolean(String),
    #[error("type `{0}` is not defined in the loaded policy (or is an attribute)")]
    UnknownType(String),
    #[error("a module named `{0}` is already registered; unregister it first or pick another name")]
    DuplicateModule(String),
    #[error("no module named `{0}` is registered")]
    UnknownModule(String),
}
