//! Rampart's AppArmor engine: reads the binary policy `apparmor_parser`
//! compiles (what the kernel loads through `.replace`) and decides file
//! accesses exactly as the Linux kernel's AppArmor does.
//!
//! Why from the binary: the compiler is the ecosystem's own, so profile
//! syntax, includes, variables and rule merging are its business; what
//! the kernel enforces is the DFA it emits. Reading that, with the
//! kernel's own verification and compatibility remap, gives the kernel's
//! answers without re-implementing the profile language.
//!
//! The code follows mainline Linux `security/apparmor` of 6.12 and later
//! (the `policy_compat.c` remap of 6.2+, `verify_dfa_accept_index` and
//! `verify_perms` of 6.8+, the diff-encode chain verification with
//! `MARK_DIFF_ENCODE_VERIFIED` and the x-table stacking fix of 2025):
//!
//! | module      | kernel file                                  |
//! |-------------|----------------------------------------------|
//! | `wire`      | policy_unpack.c: `aa_unpack_*`, `struct aa_ext` |
//! | [`dfa`]     | match.c, include/match.h                     |
//! | [`perms`]   | policy_compat.c, include/perms.h, file.h     |
//! | `unpack`    | policy_unpack.c: `unpack_profile`, `unpack_pdb`, `verify_profile` |
//! | [`policy`]  | policy.c: `aa_replace_profiles` (list order) |
//! | [`file`](mod@file) | file.c: `__aa_path_perm`, `aa_audit_file`, `profile_path_link`; audit.c: `aa_audit` |
//! | [`domain`]  | domain.c: `find_attach`, `x_table_lookup`, `x_to_label`, `profile_transition` |
//! | [`ipc`]     | ipc.c: `aa_may_signal`; label.c: `aa_label_match` |
//! | [`query`]   | (the `rampart apparmor` line protocol)       |
//! | [`audit`]   | audit.c `audit_pre`, file.c `file_audit_cb`: the records, auditd's format |
//!
//! The system's profiles (issue 11): [`profile_dir`] finds them in a
//! directory as `apparmor_parser` and the init scripts do, [`compile`]
//! runs the parser through a cache keyed by the preprocessed text,
//! [`profile_set`] builds one [`Policy`] and replaces it whole on
//! reload, and [`profile_flags`] sets complain and enforce modes in the
//! files as aa-complain and aa-enforce do.
//!
//! ```no_run
//! # use rampart_apparmor::*;
//! // apparmor_parser -Q -K --skip-cache -o /tmp/nscd.bin /etc/apparmor.d/usr.sbin.nscd
//! let policy = Policy::from_files(&["/tmp/nscd.bin"])?;
//! let nscd = policy.resolve("nscd").ok_or("no such profile")?;
//! let d = file::path_perm(nscd, b"/etc/passwd", perms::MAY_READ, true);
//! assert!(d.allowed);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// The workspace denies these outside tests; unit tests may unwrap.
#![forbid(unsafe_code)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod audit;
pub mod compile;
pub mod dfa;
pub mod domain;
mod error;
pub mod file;
pub mod ipc;
mod model;
pub mod net;
pub mod perms;
pub mod policy;
pub mod profile_dir;
pub mod profile_flags;
pub mod profile_set;
pub mod query;
mod unpack;
mod wire;

pub use error::LoadError;
pub use model::{Mode, PolicyDb, Profile, CLASS_FILE};
pub use policy::{FileLoadError, Namespace, Policy, Subject};
pub use profile_set::{LiveProfiles, ProfileSet, Source};
