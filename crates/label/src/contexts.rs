//! `FileContexts`: the loaded file_contexts configuration and its lookup,
//! with libselinux 3.4 semantics (`selabel_open(SELABEL_CTX_FILE)` +
//! `selabel_lookup`).
//!
//! Loading: the base file, then `.homedirs` and `.local` when present;
//! all specs are then stably partitioned so that specs whose regex has
//! no meta character come after all others (`sort_specs`). Lookup: the
//! path is cleaned (runs of `/` collapsed, one trailing `/` removed
//! unless the path is `/`), substituted (see [`crate::subs`]), and the
//! LAST spec in that order whose stem filter, file-type filter and
//! anchored regex accept it gives the answer; `<<none>>` means no label.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rampart_policy::Policy;
use regex::bytes::{Regex, RegexBuilder};
use rustc_hash::FxHashSet;

use crate::error::LabelError;
use crate::filetype::{FileType, S_IFMT};
use crate::index::{Index, Placement, SpecId};
use crate::pcre;
use crate::spec::{self, Origin};
use crate::subs::{SubList, Substitutions};

/// One file_contexts line.
#[derive(Clone, Debug)]
pub struct Spec {
    /// The regex as written (libselinux anchors it as `^REGEX$`).
    pub regex: String,
    /// The file type the line is restricted to, if any.
    pub file_type: Option<FileType>,
    /// The context; `None` for `<<none>>`.
    pub context: Option<String>,
    /// File and line.
    pub origin: Origin,
}

/// The result of a lookup.
#[derive(Clone, Copy, Debug)]
pub enum Lookup<'a> {
    /// This spec matched and gives a context.
    Label(&'a Spec),
    /// This spec matched and says `<<none>>`: the file is not to be
    /// labeled.
    Excluded(&'a Spec),
    /// No spec matched.
    NoMatch,
}

impl<'a> Lookup<'a> {
    /// The context, if any. libselinux reports [`Lookup::Excluded`] and
    /// [`Lookup::NoMatch`] the same way (`ENOENT`; `matchpathcon` prints
    /// `<<none>>` for both), so this is what must be compared with it.
    pub fn context(&self) -> Option<&'a str> {
        match self {
            Lookup::Label(s) => s.context.as_deref(),
            _ => None,
        }
    }

    /// The matching spec, if any.
    pub fn spec(&self) -> Option<&'a Spec> {
        match self {
            Lookup::Label(s) | Lookup::Excluded(s) => Some(s),
            Lookup::NoMatch => None,
        }
    }

    /// The context, or `<<none>>` as `matchpathcon` prints it.
    pub fn as_str(&self) -> &'a str {
        self.context().unwrap_or("<<none>>")
    }
}

/// Which files make up a file_contexts configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecFiles {
    /// Spec files in load order; `true` marks a file that must exist.
    pub files: Vec<(PathBuf, bool)>,
    /// The distribution's substitutions (`file_contexts.subs_dist`).
    pub subs_dist: Option<PathBuf>,
    /// The administrator's substitutions (`file_contexts.subs`).
    pub subs: Option<PathBuf>,
}

impl SpecFiles {
    /// Like `SELABEL_OPT_PATH`: `base`, then `base.homedirs` and
    /// `base.local` if present, with `base.subs_dist` and `base.subs`.
    pub fn from_base(base: &Path) -> SpecFiles {
        let with = |suffix: &str| {
            let mut s = base.as_os_str().to_owned();
            s.push(".");
            s.push(suffix);
            PathBuf::from(s)
        };
        SpecFiles {
            files: vec![(base.to_path_buf(), true), (with("homedirs"), false), (with("local"), false)],
            subs_dist: Some(with("subs_dist")),
            subs: Some(with("subs")),
        }
    }

    /// `DIR/file_contexts` and its companions (see
    /// [`SpecFiles::from_base`]), e.g. for
    /// `/etc/selinux/default/contexts/files`.
    pub fn from_dir(dir: &Path) -> SpecFiles {
        SpecFiles::from_base(&dir.join("file_contexts"))
    }

    /// Like `SELABEL_OPT_BASEONLY`: without `.homedirs` and `.local`.
    pub fn base_only(mut self) -> SpecFiles {
        self.files.truncate(1);
        self
    }

    /// The system configuration: `SELINUXTYPE` from
    /// `/etc/selinux/config` (default `default`), then
    /// `/etc/selinux/TYPE/contexts/files/file_contexts`.
    pub fn system() -> SpecFiles {
        SpecFiles::from_base(&system_file_contexts_path(Path::new("/etc/selinux")))
    }
}

/// `ROOT/TYPE/contexts/files/file_contexts` for the `SELINUXTYPE` of
/// `ROOT/config` (libselinux `selinux_file_context_path`).
pub fn system_file_contexts_path(selinux_root: &Path) -> PathBuf {
    selinux_type_dir(selinux_root).join("contexts/files/file_contexts")
}

/// `ROOT/TYPE` for the `SELINUXTYPE=` of `ROOT/config` (the last one
/// wins; `default` when there is none), like libselinux's
/// `selinux_policy_root`.
pub fn selinux_type_dir(selinux_root: &Path) -> PathBuf {
    let ty = std::fs::read_to_string(selinux_root.join("config"))
        .ok()
        .and_then(|text| {
            text.lines()
                .map(str::trim)
                .filter_map(|l| l.strip_prefix("SELINUXTYPE="))
                .map(|v| v.trim().trim_matches('"').to_owned())
                .rfind(|v| !v.is_empty())
        })
        .unwrap_or_else(|| "default".to_owned());
    selinux_root.join(ty)
}

/// How a spec is matched at lookup.
#[derive(Debug)]
struct Matcher {
    /// `S_IF*` bits, 0 for any type.
    mode: u32,
    /// libselinux's stem of the regex text.
    stem: Option<Box<[u8]>>,
    /// `^REGEX$` in PCRE2 semantics, translated to `regex` syntax.
    pattern: Box<str>,
    /// The compiled pattern, built at first use: most specs are never
    /// tried one by one (the index answers through its sets, or their
    /// prefix never occurs), and each compiled regex costs several KiB.
    regex: OnceLock<Option<Regex>>,
}

impl Matcher {
    /// Whether the regex matches `key`. Patterns that passed loading
    /// always compile (their size is bounded, see `pcre`); if one did
    /// not, it would match nothing.
    fn is_match(&self, key: &[u8]) -> bool {
        self.regex.get_or_init(|| build_regex(&self.pattern).ok()).as_ref().is_some_and(|r| r.is_match(key))
    }
}

fn build_regex(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern).unicode(false).dot_matches_new_line(true).build()
}

/// A loaded, validated file_contexts configuration.
#[derive(Debug)]
pub struct FileContexts {
    specs: Vec<Spec>,
    matchers: Vec<Matcher>,
    subs: Substitutions,
    index: Index,
    files: Vec<PathBuf>,
}

/// What the loader has built for one spec before sorting.
struct Loaded {
    spec: Spec,
    matcher: Matcher,
    shape: pcre::Shape,
    meta: bool,
}

impl FileContexts {
    /// Loads `files`, checking every context against `policy`.
    pub fn load(files: &SpecFiles, policy: &Policy) -> Result<FileContexts, LabelError> {
        FileContexts::load_inner(files, Some(policy))
    }

    /// Loads `files` without checking contexts (what libselinux does
    /// without `SELABEL_OPT_VALIDATE`). Regexes and syntax are still
    /// checked.
    pub fn load_unvalidated(files: &SpecFiles) -> Result<FileContexts, LabelError> {
        FileContexts::load_inner(files, None)
    }

    fn load_inner(files: &SpecFiles, policy: Option<&Policy>) -> Result<FileContexts, LabelError> {
        let subs = Substitutions {
            dist: files.subs_dist.as_deref().map(SubList::read).transpose()?.unwrap_or_default(),
            local: files.subs.as_deref().map(SubList::read).transpose()?.unwrap_or_default(),
        };
        let mut loaded = Vec::new();
        let mut used_files = Vec::new();
        let mut checked: FxHashSet<String> = FxHashSet::default();
        for (path, required) in &files.files {
            let text = match std::fs::read(path) {
                Ok(t) => t,
                Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(source) => return Err(LabelError::Io { path: path.clone(), source }),
            };
            if text.starts_with(&0xf97c_ff8a_u32.to_le_bytes()) {
                return Err(LabelError::Compiled { path: path.clone() });
            }
            let file: Arc<Path> = Arc::from(path.as_path());
            load_text(&text, &file, policy, &mut checked, &mut loaded)?;
            used_files.push(path.clone());
        }
        // libselinux sort_specs: a stable partition, regex specs first.
        let (mut regexes, exact): (Vec<Loaded>, Vec<Loaded>) = loaded.into_iter().partition(|l| l.meta);
        regexes.extend(exact);
        let index = Index::build(regexes.iter().map(|l| match &l.shape.literal {
            Some(lit) => Placement::Literal(lit),
            None => Placement::Prefix(&l.shape.prefix, &l.matcher.pattern),
        }))
        .map_err(|e| LabelError::Index { message: e.to_string() })?;
        let (specs, matchers) = regexes.into_iter().map(|l| (l.spec, l.matcher)).unzip();
        Ok(FileContexts { specs, matchers, subs, index, files: used_files })
    }

    /// Compiles every spec's regex now (lookups compile each on first
    /// use, and do not keep these) and returns the specs whose
    /// translation the `regex` crate refuses, with its message. Loading
    /// bounds each translation's size so that there are none (see
    /// `pcre`); a non-empty answer is a bug, which the tests and the
    /// `file_contexts` fuzz target look for.
    pub fn uncompilable(&self) -> Vec<(&Spec, String)> {
        self.specs
            .iter()
            .zip(&self.matchers)
            .filter_map(|(spec, m)| build_regex(&m.pattern).err().map(|e| (spec, e.to_string())))
            .collect()
    }

    /// All specs, in libselinux's order (the last matching one wins).
    pub fn specs(&self) -> &[Spec] {
        &self.specs
    }

    /// Every context a lookup for a file of type `file_type` can give
    /// (the contexts of the specs for that type or for any type), in spec
    /// order, repeated when specs share one. A lookup gives one of these
    /// or none, whatever the path.
    pub fn contexts_for(&self, file_type: FileType) -> impl Iterator<Item = &str> {
        self.specs
            .iter()
            .filter(move |s| s.file_type.is_none_or(|t| t == file_type))
            .filter_map(|s| s.context.as_deref())
    }

    /// The spec files that were read.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// The substitutions in use.
    pub fn substitutions(&self) -> &Substitutions {
        &self.subs
    }

    /// The label for `path` as a file of type `file_type` (`None`: any
    /// type, like `selabel_lookup` with mode 0). `path` is bytes, so
    /// non-UTF-8 names work; like libselinux it is read up to the first
    /// NUL.
    pub fn lookup(&self, path: &[u8], file_type: Option<FileType>) -> Lookup<'_> {
        self.lookup_mode(path, file_type.map_or(0, FileType::mode_bits))
    }

    /// [`FileContexts::lookup`] with a raw `st_mode` (only the `S_IFMT`
    /// bits count; 0 means any type), exactly as `selabel_lookup`.
    pub fn lookup_mode(&self, path: &[u8], mode: u32) -> Lookup<'_> {
        let path = match path.iter().position(|&b| b == 0) {
            Some(n) => &path[..n],
            None => path,
        };
        let key = normalize(path);
        if key.is_empty() {
            // libselinux: EINVAL.
            return Lookup::NoMatch;
        }
        let key = match self.subs.apply(&key) {
            Some(s) => Cow::Owned(s),
            None => key,
        };
        match self.best(&key, mode & S_IFMT) {
            Some(id) => {
                let spec = &self.specs[id as usize];
                if spec.context.is_some() {
                    Lookup::Label(spec)
                } else {
                    Lookup::Excluded(spec)
                }
            }
            None => Lookup::NoMatch,
        }
    }

    fn best(&self, key: &[u8], mode: u32) -> Option<SpecId> {
        let key_stem = spec::path_stem(key);
        let eligible = |id: SpecId| {
            let m = &self.matchers[id as usize];
            (mode == 0 || m.mode == 0 || m.mode == mode) && m.stem.as_deref().is_none_or(|s| Some(s) == key_stem)
        };
        self.index.best(key, eligible, |id| self.matchers[id as usize].is_match(key))
    }

    /// Statistics: number of specs and of index nodes.
    pub fn stats(&self) -> (usize, usize) {
        (self.specs.len(), self.index.node_count())
    }
}

/// libselinux 3.4's key cleaning: every run of `/` becomes one `/`,
/// then one trailing `/` is removed unless the path is `/`.
pub fn normalize(path: &[u8]) -> Cow<'_, [u8]> {
    let has_double = path.windows(2).any(|w| w == b"//");
    let trailing = path.len() > 1 && path.last() == Some(&b'/');
    if !has_double && !trailing {
        return Cow::Borrowed(path);
    }
    let mut out = Vec::with_capacity(path.len());
    for &b in path {
        if b == b'/' && out.last() == Some(&b'/') {
            continue;
        }
        out.push(b);
    }
    if out.len() > 1 && out.last() == Some(&b'/') {
        out.pop();
    }
    Cow::Owned(out)
}

/// Parses one text spec file into `out`.
fn load_text(
    text: &[u8],
    file: &Arc<Path>,
    policy: Option<&Policy>,
    checked: &mut FxHashSet<String>,
    out: &mut Vec<Loaded>,
) -> Result<(), LabelError> {
    let mut lineno: u32 = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let (line, tail) = match rest.iter().position(|&b| b == b'\n') {
            Some(n) => (&rest[..n], &rest[n + 1..]),
            None => (rest, &[][..]),
        };
        rest = tail;
        lineno = lineno.saturating_add(1);
        let Some(fields) = spec::parse_line(line, file, lineno)? else { continue };
        if let (Some(policy), Some(ctx)) = (policy, fields.context.as_deref()) {
            if !checked.contains(ctx) {
                policy.parse_context(ctx).map_err(|source| LabelError::Context {
                    path: file.to_path_buf(),
                    line: lineno,
                    source,
                })?;
                checked.insert(ctx.to_owned());
            }
        }
        let origin = Origin { file: Arc::clone(file), line: lineno };
        out.push(compile(fields, origin)?);
    }
    Ok(())
}

/// Parses and translates one spec's regex.
fn compile(fields: spec::Fields, origin: Origin) -> Result<Loaded, LabelError> {
    let regex_err = |offset: usize, message: String| LabelError::Regex {
        path: origin.file.to_path_buf(),
        line: origin.line,
        regex: fields.regex.clone(),
        offset,
        message,
    };
    let raw = fields.regex.as_bytes();
    let mut anchored = Vec::with_capacity(raw.len() + 2);
    anchored.push(b'^');
    anchored.extend_from_slice(raw);
    anchored.push(b'$');
    let ast = pcre::parse(&anchored).map_err(|e| regex_err(e.offset.saturating_sub(1).min(raw.len()), e.message))?;
    let shape = pcre::shape(&ast);
    let matcher = Matcher {
        mode: fields.file_type.map_or(0, FileType::mode_bits),
        stem: spec::spec_stem(raw).map(Box::from),
        pattern: pcre::to_rust(&ast).into_boxed_str(),
        regex: OnceLock::new(),
    };
    let meta = spec::has_meta_chars(raw);
    let spec = Spec { regex: fields.regex, file_type: fields.file_type, context: fields.context, origin };
    Ok(Loaded { spec, matcher, shape, meta })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn is_shareable_between_threads() {
        fn check<T: Send + Sync>() {}
        check::<FileContexts>();
    }

    #[test]
    fn normalizes_like_libselinux() {
        let n = |p: &str| String::from_utf8(normalize(p.as_bytes()).into_owned()).unwrap();
        assert_eq!(n("/"), "/");
        assert_eq!(n("//"), "/");
        assert_eq!(n("/a///b//"), "/a/b");
        assert_eq!(n("/a/"), "/a");
        assert_eq!(n("a//"), "a");
        assert_eq!(n(""), "");
    }
}
