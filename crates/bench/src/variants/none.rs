//! `none`: no check at all, the baseline every overhead is measured
//! against. The arguments still go through `black_box`, so the loop that
//! feeds the checks (reading the key stream) costs the same as for the
//! other variants and is not optimised away.

use std::hint::black_box;

use rampart_avc::{ClassIdx, Object, Perms, Sid, Subject};

use super::checker::{Checker, OpenCheck, ThreadCheck};
use crate::error::BenchError;

pub struct NoCheck;

impl Checker for NoCheck {
    type Thread<'a> = &'a NoCheck;
    type Open<'a> = Unchecked;

    fn thread(&self, _index: usize) -> &NoCheck {
        self
    }

    fn open<'a>(
        &'a self,
        _index: usize,
        _subject: &'a Subject,
        _object: &'a Object,
        _class: ClassIdx,
        _perms: Perms,
    ) -> Result<Unchecked, BenchError> {
        Ok(Unchecked)
    }
}

impl ThreadCheck for &NoCheck {
    #[inline]
    fn check(&mut self, ssid: Sid, tsid: Sid, class: ClassIdx, perms: Perms) -> bool {
        black_box((ssid, tsid, class, perms));
        true
    }
}

/// An open object nobody checks.
pub struct Unchecked;

impl OpenCheck for Unchecked {
    #[inline]
    fn permission(&mut self) -> bool {
        true
    }
}
