//! Lookup structures over the avtab, built once at load.
//!
//! libsepol answers `compute_av` by probing a hash table for every pair
//! (source attribute, target attribute): with 50 source and 20 target
//! attributes that is 1000 probes per query. We index the access-vector
//! rules twice, by source and by target, each grouped by class and laid
//! out flat, so a query walks the rules of its class for the attributes
//! of the side with fewer of them and tests the other side's membership
//! with one bit test. The work is proportional to the rules that could
//! apply, not to the product of the attribute counts.

use std::collections::HashMap;

use crate::bitset::BitSet;
use crate::model::{avtab_kind, AvRule, RuleCond};

/// One access-vector rule seen from one side: `other` is the type on the
/// other side (value), `cond` encodes [`RuleCond`] (0 = always, else
/// `1 + 2 * cond + when`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct AvEntry {
    pub other: u32,
    pub kind: u16,
    pub cond: u32,
    pub data: u32,
    /// Position of the rule in `Policy::avtab`, for explanations.
    pub rule: u32,
}

pub(crate) fn encode_cond(c: RuleCond) -> u32 {
    match c {
        RuleCond::Always => 0,
        RuleCond::If { cond, when } => 1 + 2 * cond + u32::from(when),
    }
}

/// Rules grouped by (type on this side, class), as compressed rows.
#[derive(Debug, Default)]
pub(crate) struct Side {
    /// For each type index, its row, or `u32::MAX` when it has no rules.
    row_of: Vec<u32>,
    /// `nclasses + 1` offsets per row into `entries`.
    offsets: Vec<u32>,
    entries: Vec<AvEntry>,
    stride: usize,
}

impl Side {
    fn build(keyed: &mut [(u32, u32, AvEntry)], ntypes: usize, nclasses: usize) -> Side {
        // (this-side type index, class index, entry) sorted by type, class.
        keyed.sort_unstable_by_key(|&(t, c, e)| (t, c, e.other));
        let stride = nclasses + 1;
        let mut row_of = vec![u32::MAX; ntypes];
        let mut offsets = Vec::new();
        let mut entries = Vec::with_capacity(keyed.len());
        let mut i = 0;
        while i < keyed.len() {
            let t = keyed[i].0;
            let row = (offsets.len() / stride) as u32;
            row_of[t as usize] = row;
            let base = offsets.len();
            offsets.resize(base + stride, 0);
            let mut class = 0usize;
            while i < keyed.len() && keyed[i].0 == t {
                let c = keyed[i].1 as usize;
                while class <= c {
                    offsets[base + class] = entries.len() as u32;
                    class += 1;
                }
                entries.push(keyed[i].2);
                i += 1;
            }
            while class < stride {
                offsets[base + class] = entries.len() as u32;
                class += 1;
            }
        }
        Side { row_of, offsets, entries, stride }
    }

    /// The rules of type index `t` and class index `c` (both 0-based).
    #[inline]
    pub(crate) fn slice(&self, t: usize, c: usize) -> &[AvEntry] {
        let Some(&row) = self.row_of.get(t) else { return &[] };
        if row == u32::MAX || c + 1 >= self.stride {
            return &[];
        }
        let base = row as usize * self.stride + c;
        let (lo, hi) = (self.offsets[base] as usize, self.offsets[base + 1] as usize);
        &self.entries[lo..hi]
    }
}

/// Type rules (transition, member, change) keyed exactly by
/// (source, target, class, kind) values: the compiler expands attributes.
pub(crate) type TypeRules = HashMap<(u32, u32, u32, u16), Vec<(u32, RuleCond)>>;

#[derive(Debug, Default)]
pub(crate) struct AvIndex {
    pub by_source: Side,
    pub by_target: Side,
    /// For each type index, the indexes of its attributes and itself.
    pub attrs_of: Vec<Vec<u32>>,
    pub type_rules: TypeRules,
}

impl AvIndex {
    pub(crate) fn build(avtab: &[AvRule], type_attrs: &[BitSet], ntypes: usize, nclasses: usize) -> AvIndex {
        let mut by_s = Vec::new();
        let mut by_t = Vec::new();
        let mut type_rules: TypeRules = HashMap::new();
        for (i, r) in avtab.iter().enumerate() {
            if r.kind & avtab_kind::AV != 0 {
                let cond = encode_cond(r.cond);
                let e = |other: u32| AvEntry { other, kind: r.kind, cond, data: r.data, rule: i as u32 };
                by_s.push((r.source.0 - 1, r.class.0 - 1, e(r.target.0)));
                by_t.push((r.target.0 - 1, r.class.0 - 1, e(r.source.0)));
            } else if r.kind & avtab_kind::TYPE != 0 {
                type_rules.entry((r.source.0, r.target.0, r.class.0, r.kind)).or_default().push((r.data, r.cond));
            }
        }
        let attrs_of = type_attrs.iter().map(|b| b.iter().collect()).collect();
        AvIndex {
            by_source: Side::build(&mut by_s, ntypes, nclasses),
            by_target: Side::build(&mut by_t, ntypes, nclasses),
            attrs_of,
            type_rules,
        }
    }
}
