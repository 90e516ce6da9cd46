//! File labels like libselinux: reads `file_contexts` and answers
//! "which context should this path have?" exactly as libselinux 3.4's
//! `selabel_lookup` does, reads and writes `security.selinux` xattrs,
//! labels objects for the enforcer, and relabels trees like
//! `restorecon`.
//!
//! Rampart targets kernels where SELinux is not active, so nothing here
//! asks the kernel: contexts are validated against a loaded
//! [`rampart_policy::Policy`], and new-file labels are computed with
//! [`rampart_policy::Policy::compute_create`].
//!
//! ```no_run
//! # use rampart_label::*;
//! let policy = rampart_policy::Policy::from_file(&rampart_policy::default_policy_path()?)?;
//! let fc = FileContexts::load(&SpecFiles::system(), &policy)?;
//! let label = fc.lookup(b"/usr/bin/ls", Some(FileType::Regular));
//! assert_eq!(label.context(), Some("system_u:object_r:bin_t:s0"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Modules: [`FileContexts`] (loading and lookup; the PCRE2 dialect is
//! translated by an internal parser and looked up through a prefix
//! index), [`subs`] (path aliases), [`xattr`] (the attribute itself),
//! [`ObjectLabeler`] (labels of existing objects, cached, and
//! [`new_file_label`]), [`Relabeler`] (the `restorecon` engine) and
//! [`ConsoleReporter`] (its `restorecon`-style output).

mod contexts;
mod error;
mod fdpath;
mod filetype;
mod index;
mod object;
mod pcre;
mod relabel;
mod report;
mod spec;
pub mod subs;
mod walk;
pub mod xattr;

pub use contexts::{normalize, selinux_type_dir, system_file_contexts_path, FileContexts, Lookup, Spec, SpecFiles};
pub use error::LabelError;
pub use fdpath::fd_link;
pub use filetype::{FileType, S_IFMT};
pub use object::{
    file_class, genfs_label, memory_file_label, new_file_label, FileRef, Label, LabelSource, ObjectLabeler,
    MAX_CACHED_INODES,
};
pub use relabel::{
    read_customizable_types, Change, Event, FailedOp, Progress, RelabelError, RelabelOptions, Relabeler, Summary,
    PROGRESS_EVERY,
};
pub use report::{progress_line, ConsoleReporter};
pub use spec::Origin;
pub use xattr::{get_label, set_label};
