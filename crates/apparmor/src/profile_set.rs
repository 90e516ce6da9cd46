//! The system's profiles as one [`Policy`], and its replacement on
//! reload.
//!
//! Loading follows the init scripts: every profile file of the directory
//! ([`crate::profile_dir`]) is compiled ([`crate::compile`], in
//! parallel, through the cache) and loaded in directory order, each like
//! one `apparmor_parser --replace` of the file. A file that fails to
//! compile or to load is reported (its path and the parser's or the
//! loader's message) and skipped, as `rc.apparmor.functions` goes on
//! with the others; only a directory that cannot be read, or a parser
//! that cannot run, fails the whole set.
//!
//! [`LiveProfiles`] holds the set in use. A reload builds a new set
//! aside and publishes it with one pointer swap: a check holds the set it
//! started with ([`LiveProfiles::current`]) to its end, so it sees the
//! old profiles or the new, never a mix.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use arc_swap::ArcSwap;

use crate::compile::{Compiled, Compiler, DEFAULT_CACHE, DEFAULT_FEATURES, DEFAULT_PARSER};
use crate::model::Mode;
use crate::policy::Policy;
use crate::profile_dir::{self, ProfileFile};

/// The profile directory by default.
pub const DEFAULT_DIR: &str = "/etc/apparmor.d";

/// Where the profiles come from and how they are compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    /// The profile directory; also the include base (`--base`, `-I`).
    pub dir: PathBuf,
    pub cache: PathBuf,
    pub parser: PathBuf,
    /// The feature set compiled for (crate::compile).
    pub features: PathBuf,
}

impl Source {
    /// `dir` with the default cache and parser.
    pub fn new(dir: impl Into<PathBuf>) -> Source {
        Source {
            dir: dir.into(),
            cache: DEFAULT_CACHE.into(),
            parser: DEFAULT_PARSER.into(),
            features: DEFAULT_FEATURES.into(),
        }
    }
}

/// A profile file that loaded.
#[derive(Clone, Debug)]
pub struct LoadedFile {
    pub path: PathBuf,
    /// Its profiles' names, hats and children included.
    pub profiles: Vec<String>,
    pub force_complain: bool,
    pub cache_hit: bool,
}

/// A profile file that did not load.
#[derive(Clone, Debug)]
pub struct Failure {
    pub path: PathBuf,
    pub message: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}; skipped (fix the profile and reload)", self.path.display(), self.message)
    }
}

/// Profiles by mode, as `aa-status` counts them (hats and children too).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModeCounts {
    pub enforce: usize,
    pub complain: usize,
    pub kill: usize,
    pub unconfined: usize,
}

/// The loaded profiles of one directory.
#[derive(Clone, Debug, Default)]
pub struct ProfileSet {
    pub policy: Policy,
    pub files: Vec<LoadedFile>,
    /// Files with a `disable/` link.
    pub disabled: Vec<PathBuf>,
    /// Backups the parser skips with a warning (`.rpmnew`, `~`, ...).
    pub skipped: Vec<PathBuf>,
    pub failures: Vec<Failure>,
}

impl ProfileSet {
    /// Compiles and loads the profiles of `source.dir`.
    pub fn load(source: &Source) -> Result<ProfileSet, String> {
        let listing = profile_dir::list(&source.dir)
            .map_err(|e| format!("AppArmor profile directory {}: {e}", source.dir.display()))?;
        let compiler = Compiler::new(&source.parser, &source.cache, &source.features)?;
        let compiled = compile_all(&compiler, &source.dir, &listing.profiles);
        let mut set = ProfileSet { disabled: listing.disabled, skipped: listing.skipped, ..ProfileSet::default() };
        for (file, result) in listing.profiles.into_iter().zip(compiled) {
            let loaded = result.and_then(|c| {
                let names = set.policy.load_names(&c.blob).map_err(|e| e.to_string())?;
                Ok((names, c.cache_hit))
            });
            match loaded {
                Ok((profiles, cache_hit)) => set.files.push(LoadedFile {
                    path: file.path,
                    profiles,
                    force_complain: file.force_complain,
                    cache_hit,
                }),
                Err(message) => set.failures.push(Failure { path: file.path, message }),
            }
        }
        Ok(set)
    }

    /// Every loaded profile by mode.
    pub fn mode_counts(&self) -> ModeCounts {
        let mut c = ModeCounts::default();
        for (_, p) in self.policy.profiles() {
            match p.mode {
                Mode::Enforce | Mode::User => c.enforce += 1,
                Mode::Complain => c.complain += 1,
                Mode::Kill => c.kill += 1,
                Mode::Unconfined => c.unconfined += 1,
            }
        }
        c
    }

    /// How many files came from the cache.
    pub fn cache_hits(&self) -> usize {
        self.files.iter().filter(|f| f.cache_hit).count()
    }

    /// The file a profile was loaded from (the last, if several define it).
    pub fn file_of(&self, profile: &str) -> Option<&Path> {
        self.files.iter().rev().find(|f| f.profiles.iter().any(|p| p == profile)).map(|f| f.path.as_path())
    }
}

/// Compiles `files` on as many threads as there are CPUs; results in
/// the order of `files`.
fn compile_all(compiler: &Compiler, base: &Path, files: &[ProfileFile]) -> Vec<Result<Compiled, String>> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(files.len()).max(1);
    let next = AtomicUsize::new(0);
    let mut results: Vec<Result<Compiled, String>> =
        files.iter().map(|_| Err("not compiled: a compiler thread failed".to_owned())).collect();
    let done: Vec<(usize, Result<Compiled, String>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    // Relaxed: the counter only hands out indices; the
                    // results come back through the join.
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(file) = files.get(i) else { break done };
                        done.push((i, compiler.compile(base, file)));
                    }
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
    });
    for (i, r) in done {
        results[i] = r;
    }
    results
}

/// The set in use, replaced whole on reload.
pub struct LiveProfiles {
    source: Source,
    current: ArcSwap<ProfileSet>,
    /// Serialises reloads: two overlapping reloads could otherwise publish
    /// in the wrong order, the older reading of the directory last.
    reloading: Mutex<()>,
}

impl LiveProfiles {
    /// Loads the set of `source`.
    pub fn load(source: Source) -> Result<LiveProfiles, String> {
        let set = ProfileSet::load(&source)?;
        Ok(LiveProfiles { source, current: ArcSwap::from_pointee(set), reloading: Mutex::new(()) })
    }

    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The set in use; hold it for the length of one check.
    pub fn current(&self) -> Arc<ProfileSet> {
        self.current.load_full()
    }

    /// Builds the set anew (unchanged files from the cache) and publishes
    /// it; on error the old set stays.
    pub fn reload(&self) -> Result<Arc<ProfileSet>, String> {
        let _one = self.reloading.lock().unwrap_or_else(PoisonError::into_inner);
        let set = Arc::new(ProfileSet::load(&self.source)?);
        self.current.store(Arc::clone(&set));
        Ok(set)
    }
}
