//! The loaded form of a profile: what `struct aa_profile` and its
//! `aa_ruleset` hold after unpacking and the compatibility remap.

use crate::dfa::Dfa;
use crate::perms::Perms;

/// `AA_CLASS_FILE`: index of the file start state.
pub const CLASS_FILE: usize = 2;
/// `AA_CLASS_XMATCH`.
pub const CLASS_XMATCH: usize = 11;
/// `AA_CLASS_LAST` (`AA_CLASS_DBUS`).
pub const CLASS_LAST: usize = 32;

/// A profile's mode (`enum profile_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Enforce,
    Complain,
    Kill,
    Unconfined,
    /// `APPARMOR_USER` (prompting); decided like enforce here.
    User,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Enforce => "enforce",
            Mode::Complain => "complain",
            Mode::Kill => "kill",
            Mode::Unconfined => "unconfined",
            Mode::User => "user",
        }
    }
}

/// `struct aa_policydb`: a DFA, its permission table (accept entries
/// index it), the per-class start states and the x-table.
#[derive(Clone, Debug)]
pub struct PolicyDb {
    pub dfa: Dfa,
    pub perms: Vec<Perms>,
    pub start: [u32; CLASS_LAST + 1],
    /// The named transition table (`trans`), for `-> name` exec rules.
    pub trans: Vec<String>,
}

impl PolicyDb {
    /// `aa_lookup_condperms`: the owner entry when the task's fsuid owns
    /// the file, else the other entry (file DFAs store pairs).
    pub fn lookup(&self, state: u32, owner: bool) -> Perms {
        let s = state as usize;
        let (Some(&index), Some(&flag)) = (self.dfa.accept.get(s), self.dfa.accept2.get(s)) else {
            return Perms::default();
        };
        let i = if flag & crate::perms::ACCEPT_FLAG_OWNER != 0 && !owner { index as usize + 1 } else { index as usize };
        self.perms.get(i).copied().unwrap_or_default()
    }
}

/// One profile (or hat, or child profile).
#[derive(Clone, Debug)]
pub struct Profile {
    /// Hierarchical name, `parent//child` for hats and children.
    pub name: String,
    pub rename: Option<String>,
    /// The attachment text (`attach`), what `aa-status` shows.
    pub attach: Option<String>,
    /// The attachment DFA (`xmatch`) and its literal length.
    pub xmatch: Option<PolicyDb>,
    pub xmatch_len: u32,
    pub disconnected: Option<String>,
    pub kill_signal: Option<u32>,
    pub hat: bool,
    pub raw_flags: u32,
    pub mode: Mode,
    /// `audit` flag: every access is audited (`AUDIT_ALL`).
    pub audit_all: bool,
    pub path_flags: Option<u32>,
    /// allow, audit, quiet, deprecated capability masks.
    pub caps: [u64; 4],
    pub xattrs: Vec<String>,
    pub rlimit_mask: u32,
    pub rlimits: Vec<u64>,
    pub secmarks: usize,
    pub policy: Option<PolicyDb>,
    /// File rules: their own DFA (ABI v5), or the policydb's file class.
    pub file: Option<PolicyDb>,
    pub file_in_policydb: bool,
    pub data: Vec<(String, Vec<u8>)>,
    /// The ABI version of the blob it came from.
    pub abi: u32,
}

impl Profile {
    pub(crate) fn new(name: String) -> Self {
        Profile {
            name,
            rename: None,
            attach: None,
            xmatch: None,
            xmatch_len: 0,
            disconnected: None,
            kill_signal: None,
            hat: false,
            raw_flags: 0,
            mode: Mode::Enforce,
            audit_all: false,
            path_flags: None,
            caps: [0; 4],
            xattrs: Vec::new(),
            rlimit_mask: 0,
            rlimits: Vec::new(),
            secmarks: 0,
            policy: None,
            file: None,
            file_in_policydb: false,
            data: Vec::new(),
            abi: 0,
        }
    }

    /// The base name (last component of the hierarchical name).
    pub fn base_name(&self) -> &str {
        match last_split(&self.name) {
            Some(i) => &self.name[i + 2..],
            None => &self.name,
        }
    }

    /// The parent's hierarchical name, for hats and children.
    pub fn parent(&self) -> Option<&str> {
        last_split(&self.name).map(|i| &self.name[..i])
    }

    /// Number of accepting states of the file DFA: a rough rule count.
    pub fn file_states(&self) -> usize {
        self.file.as_ref().map_or(0, |f| f.dfa.states())
    }
}

/// The offset of the last `//` separator of a hierarchical name, found
/// as the kernel's `__lookupn_profile` does: scanning from the left, so a
/// child named by path (`p///bin/x`) splits as `p` and `/bin/x`.
fn last_split(name: &str) -> Option<usize> {
    let mut at = None;
    let mut from = 0;
    while let Some(i) = name[from..].find("//") {
        at = Some(from + i);
        from += i + 2;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hierarchical_names_split_from_the_left() {
        let p = Profile::new("smbldap-useradd///etc/init.d/nscd".to_owned());
        assert_eq!(p.parent(), Some("smbldap-useradd"));
        assert_eq!(p.base_name(), "/etc/init.d/nscd");
        let p = Profile::new("a//b//c".to_owned());
        assert_eq!(p.parent(), Some("a//b"));
        assert_eq!(p.base_name(), "c");
        assert_eq!(Profile::new("/usr/bin/x".to_owned()).parent(), None);
    }
}
