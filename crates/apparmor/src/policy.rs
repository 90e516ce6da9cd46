//! The loaded policy: namespaces and their profiles, filled by blobs
//! the way writes to the kernel's `.replace` interface do
//! (`aa_replace_profiles` in policy.c).
//!
//! A blob is loaded whole or not at all. Each new profile goes to the
//! head of its namespace's list (`list_add_rcu`), a profile whose name
//! already exists is replaced in place (`__replace_profile`); the list
//! order matters to attachment, which walks it. A hat or child profile
//! needs its parent loaded before or in the same blob.

use std::path::Path;

use crate::error::LoadError;
use crate::model::Profile;
use crate::unpack::unpack;

/// The root namespace's name.
pub const ROOT_NS: &str = "root";

/// One namespace: its profiles, head of the list first.
#[derive(Clone, Debug, Default)]
pub struct Namespace {
    pub name: String,
    pub profiles: Vec<Profile>,
}

/// Every loaded profile, by namespace.
#[derive(Clone, Debug)]
pub struct Policy {
    namespaces: Vec<Namespace>,
}

impl Default for Policy {
    fn default() -> Self {
        Self::new()
    }
}

/// A file that could not be loaded: which, and why.
#[derive(Debug)]
pub enum FileLoadError {
    Io(String, std::io::Error),
    Policy(String, LoadError),
}

impl std::fmt::Display for FileLoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileLoadError::Io(p, e) => write!(f, "cannot read `{p}`: {e}"),
            FileLoadError::Policy(p, e) => write!(f, "`{p}`: {e}"),
        }
    }
}

impl std::error::Error for FileLoadError {}

impl Policy {
    /// An empty policy: only the root namespace (and its implicit
    /// `unconfined` profile).
    pub fn new() -> Self {
        Policy { namespaces: vec![Namespace { name: ROOT_NS.to_owned(), profiles: Vec::new() }] }
    }

    /// Loads policy files in order, each as one `.replace` write.
    pub fn from_files<P: AsRef<Path>>(paths: &[P]) -> Result<Self, FileLoadError> {
        let mut p = Policy::new();
        for path in paths {
            let shown = path.as_ref().display().to_string();
            let bytes = std::fs::read(path).map_err(|e| FileLoadError::Io(shown.clone(), e))?;
            p.load(&bytes).map_err(|e| FileLoadError::Policy(shown, e))?;
        }
        Ok(p)
    }

    /// Loads one blob (`.replace`); returns how many profiles it held.
    pub fn load(&mut self, bytes: &[u8]) -> Result<usize, LoadError> {
        self.load_names(bytes).map(|names| names.len())
    }

    /// Loads one blob (`.replace`); returns the hierarchical names of its
    /// profiles (`:ns:name` outside the root namespace), in blob order.
    pub fn load_names(&mut self, bytes: &[u8]) -> Result<Vec<String>, LoadError> {
        let (entries, header_ns) = unpack(bytes)?;
        // One namespace per load (aa_replace_profiles): the header's, or
        // the first `:ns:` profile name's; profiles without one go there
        // too, but a profile without one before the first with one, or
        // two different ones, is "policy load has mixed namespaces".
        let mut load_ns = header_ns;
        let mut plain = 0;
        for u in &entries {
            match (&load_ns, &u.ns_name) {
                (Some(l), Some(n)) if l != n => {
                    return Err(LoadError::new(0, "policy load has mixed namespaces").in_profile(&u.profile.name));
                }
                (None, Some(_)) if plain > 0 => {
                    return Err(LoadError::new(0, "policy load has mixed namespaces").in_profile(&u.profile.name));
                }
                (None, Some(n)) => load_ns = Some(n.clone()),
                (_, None) => plain += 1,
                _ => {}
            }
        }
        let ns = load_ns.unwrap_or_else(|| ROOT_NS.to_owned());
        let staged: Vec<(String, Profile)> = entries.into_iter().map(|u| (ns.clone(), u.profile)).collect();
        // parents must exist, loaded before or in this blob
        for (ns, p) in &staged {
            if let Some(parent) = p.parent() {
                let here = staged.iter().any(|(n, q)| n == ns && q.name == parent);
                if !here && self.find(ns, parent).is_none() {
                    return Err(
                        LoadError::new(0, format!("parent profile `{parent}` does not exist")).in_profile(&p.name)
                    );
                }
            }
        }
        let names = staged
            .iter()
            .map(|(ns, p)| if ns == ROOT_NS { p.name.clone() } else { format!(":{ns}:{}", p.name) })
            .collect();
        for (ns, p) in staged {
            let idx = match self.namespaces.iter().position(|x| x.name == ns) {
                Some(i) => i,
                None => {
                    self.namespaces.push(Namespace { name: ns, profiles: Vec::new() });
                    self.namespaces.len() - 1
                }
            };
            let list = &mut self.namespaces[idx].profiles;
            match list.iter().position(|q| q.name == p.name) {
                Some(i) => list[i] = p,
                None => list.insert(0, p),
            }
        }
        Ok(names)
    }

    /// The namespaces, root first.
    pub fn namespaces(&self) -> &[Namespace] {
        &self.namespaces
    }

    fn find(&self, ns: &str, name: &str) -> Option<&Profile> {
        self.namespaces.iter().find(|x| x.name == ns)?.profiles.iter().find(|p| p.name == name)
    }

    /// Looks a profile up by hierarchical name, `:ns:name` for another
    /// namespace than root. `None` also for `unconfined`, which is not a
    /// loaded profile (see [`Policy::resolve`]).
    pub fn profile(&self, name: &str) -> Option<&Profile> {
        match name.strip_prefix(':').and_then(|r| r.split_once(':')) {
            Some((ns, n)) => self.find(ns, n.trim_start_matches("//")),
            None => self.find(ROOT_NS, name),
        }
    }

    /// A query's subject: a loaded profile, or the namespace's unconfined
    /// profile for `unconfined` (a loaded profile of that name wins, as
    /// the kernel's lookup finds it first).
    pub fn resolve(&self, name: &str) -> Option<Subject<'_>> {
        if let Some(p) = self.profile(name) {
            return Some(Subject::Profile(p));
        }
        if name == "unconfined" {
            return Some(Subject::Unconfined);
        }
        None
    }

    /// Every profile of every namespace, in list order.
    pub fn profiles(&self) -> impl Iterator<Item = (&str, &Profile)> {
        self.namespaces.iter().flat_map(|ns| ns.profiles.iter().map(move |p| (ns.name.as_str(), p)))
    }
}

/// Whom a decision is for.
#[derive(Clone, Copy, Debug)]
pub enum Subject<'a> {
    /// The namespace's unconfined profile: no file mediation.
    Unconfined,
    Profile(&'a Profile),
}
