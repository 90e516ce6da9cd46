//! An object's label as an event knows it: a SID, or, for a file without
//! a `security.selinux` xattr, only its file type (crate::path_labels
//! decides whether its path could change the answer).

use rampart_avc::Sid;
use rampart_label::FileType;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ObjectLabel {
    Sid(Sid),
    /// No xattr: one of the labels file_contexts gives files of this
    /// type (or the unlabeled context); the path was not looked up.
    Unresolved(FileType),
}
