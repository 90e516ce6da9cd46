//! The lookup index: finds the highest-priority spec matching a path
//! without trying every regex.
//!
//! libselinux scans all specs from the last to the first and runs each
//! regex whose stem and file type fit (thousands of PCRE2 matches for a
//! path under `/usr`). The answer is defined by that scan: the matching
//! spec with the highest position. This index computes the same maximum
//! from fewer candidates:
//!
//! - specs that are one literal string (`/etc/passwd`, `/usr/lib/a\.so`)
//!   sit in a hash map and are found by the path itself (or the path
//!   without a final newline, which PCRE's `$` also accepts);
//! - every other spec sits in a byte trie under its literal prefix (the
//!   bytes every match starts with, from the parsed regex); a lookup
//!   walks the path through the trie and only specs whose prefix is a
//!   prefix of the path are candidates;
//! - candidates are tried from the highest position down, and a node
//!   stops as soon as its next candidate cannot beat the best match so
//!   far.
//!
//! Stem and file-type filters are applied exactly as libselinux applies
//! them, so results are identical whatever the index does; it only skips
//! work.

use regex::bytes::{RegexSet, RegexSetBuilder};
use rustc_hash::FxHashMap;

/// Spec positions (in libselinux's sorted order).
pub(crate) type SpecId = u32;

#[derive(Debug, Default)]
struct Node {
    /// Child nodes by next byte, sorted by byte.
    children: Vec<(u8, u32)>,
    /// Specs whose literal prefix ends here, highest position first.
    specs: Vec<SpecId>,
    /// For nodes with many specs: all their regexes in one set, in the
    /// order of `specs`, matched in a single pass.
    set: Option<RegexSet>,
}

/// Nodes with at least this many specs get a [`RegexSet`].
const SET_THRESHOLD: usize = 4;

/// The index over all specs.
#[derive(Debug, Default)]
pub(crate) struct Index {
    literals: FxHashMap<Box<[u8]>, Vec<SpecId>>,
    nodes: Vec<Node>,
}

/// Where a spec goes in the index.
pub(crate) enum Placement<'a> {
    /// The regex matches exactly this string (plus PCRE's optional final
    /// newline).
    Literal(&'a [u8]),
    /// The regex's matches all start with this prefix; the second field
    /// is the regex in `regex` crate syntax.
    Prefix(&'a [u8], &'a str),
}

impl Index {
    /// Builds the index; `placements` are in spec order.
    ///
    /// Fails only if the `regex` crate cannot build a set of patterns it
    /// compiled one by one (a size limit).
    pub(crate) fn build<'a>(placements: impl IntoIterator<Item = Placement<'a>>) -> Result<Index, regex::Error> {
        let mut ix = Index { literals: FxHashMap::default(), nodes: vec![Node::default()] };
        let mut patterns: Vec<Vec<&'a str>> = vec![Vec::new()];
        for (id, p) in placements.into_iter().enumerate() {
            let id = SpecId::try_from(id).unwrap_or(SpecId::MAX);
            match p {
                Placement::Literal(s) => ix.literals.entry(s.into()).or_default().push(id),
                Placement::Prefix(prefix, pattern) => {
                    let node = ix.insert_path(prefix);
                    patterns.resize(ix.nodes.len(), Vec::new());
                    ix.nodes[node].specs.push(id);
                    patterns[node].push(pattern);
                }
            }
        }
        for list in ix.literals.values_mut() {
            list.reverse();
        }
        patterns.resize(ix.nodes.len(), Vec::new());
        for (n, mut pats) in ix.nodes.iter_mut().zip(patterns) {
            n.specs.reverse();
            pats.reverse();
            n.specs.shrink_to_fit();
            n.children.shrink_to_fit();
            if n.specs.len() >= SET_THRESHOLD {
                n.set = Some(RegexSetBuilder::new(pats).unicode(false).dot_matches_new_line(true).build()?);
            }
        }
        Ok(ix)
    }

    fn insert_path(&mut self, prefix: &[u8]) -> usize {
        let mut node = 0usize;
        for &b in prefix {
            node = match self.nodes[node].children.binary_search_by_key(&b, |&(c, _)| c) {
                Ok(k) => self.nodes[node].children[k].1 as usize,
                Err(k) => {
                    let new = self.nodes.len();
                    self.nodes.push(Node::default());
                    self.nodes[node].children.insert(k, (b, u32::try_from(new).unwrap_or(u32::MAX)));
                    new
                }
            };
        }
        node
    }

    /// The highest spec that `eligible` accepts (stem and type filters)
    /// and `matches` accepts (the regex), among those that can match
    /// `key`.
    pub(crate) fn best(
        &self,
        key: &[u8],
        eligible: impl Fn(SpecId) -> bool,
        matches: impl Fn(SpecId) -> bool,
    ) -> Option<SpecId> {
        let mut best: Option<SpecId> = None;
        let try_literal = |k: &[u8], best: &mut Option<SpecId>| {
            if let Some(list) = self.literals.get(k) {
                if let Some(&id) = list.iter().find(|&&id| eligible(id)) {
                    *best = (*best).max(Some(id));
                }
            }
        };
        try_literal(key, &mut best);
        if let Some(k) = key.strip_suffix(b"\n") {
            try_literal(k, &mut best);
        }
        let visit = |node: &Node, best: &mut Option<SpecId>| {
            if node.specs.first().is_none_or(|&top| Some(top) <= *best) {
                return;
            }
            if let Some(set) = &node.set {
                // Set indices follow `specs`: highest position first.
                let found = set.matches(key).into_iter().map(|k| node.specs[k]).find(|&id| eligible(id));
                if let Some(id) = found {
                    *best = (*best).max(Some(id));
                }
                return;
            }
            for &id in &node.specs {
                if Some(id) <= *best {
                    break;
                }
                if eligible(id) && matches(id) {
                    *best = Some(id);
                    break;
                }
            }
        };
        let mut node = &self.nodes[0];
        visit(node, &mut best);
        for &b in key {
            match node.children.binary_search_by_key(&b, |&(c, _)| c) {
                Ok(k) => node = &self.nodes[node.children[k].1 as usize],
                Err(_) => break,
            }
            visit(node, &mut best);
        }
        best
    }

    /// Number of trie nodes (for statistics).
    pub(crate) fn node_count(&self) -> usize {
        self.nodes.len()
    }
}
