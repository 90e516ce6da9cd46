//! Cache-line padding, so a value written by one thread never shares a
//! cache line with a value another thread reads or writes (seed 004: the
//! cost of a shared line is paid by every CPU that touches it).

use std::ops::Deref;

/// `T` alone on its cache line(s). 128 bytes because x86-64 prefetches
/// lines in adjacent pairs and recent ARM cores use 128-byte lines.
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct CachePadded<T>(pub T);

impl<T> Deref for CachePadded<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}
