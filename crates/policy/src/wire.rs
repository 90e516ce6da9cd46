//! The byte cursor every policy field is read through.
//!
//! Untrusted bytes enter here and nowhere else. Each read checks the
//! remaining length first, so a truncated file is an error naming the
//! section and offset. Counts that size an allocation go through
//! [`Cursor::count`], which refuses a count whose items could not fit in
//! the bytes that remain: no length field can make us allocate more than
//! the file itself justifies.

use crate::error::PolicyError;

/// A little-endian reader over a policy image that knows which section it
/// is in, for error messages.
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    section: &'static str,
}

pub(crate) type Result<T> = std::result::Result<T, PolicyError>;

impl<'a> Cursor<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, pos: 0, section: "header" }
    }

    /// Names the section that following reads belong to.
    pub(crate) fn section(&mut self, name: &'static str) {
        self.section = name;
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// An error at the current position.
    #[cold]
    pub(crate) fn err(&self, message: impl Into<String>) -> PolicyError {
        PolicyError::new(self.section, self.pos, message)
    }

    /// An error at an earlier position (the start of the offending field).
    #[cold]
    pub(crate) fn err_at(&self, at: usize, message: impl Into<String>) -> PolicyError {
        PolicyError::new(self.section, at, message)
    }

    #[inline]
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        match self.pos.checked_add(n).and_then(|end| self.bytes.get(self.pos..end)) {
            Some(slice) => {
                self.pos += n;
                Ok(slice)
            }
            None => Err(self.truncated(n)),
        }
    }

    #[cold]
    #[inline(never)]
    fn truncated(&self, n: usize) -> PolicyError {
        self.err(format!("truncated: needed {n} more bytes, {} left", self.remaining()))
    }

    #[inline]
    pub(crate) fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    #[inline]
    pub(crate) fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    #[inline]
    pub(crate) fn u64(&mut self) -> Result<u64> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    /// Raw bytes kept as they are (network-order addresses).
    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let b = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(b);
        Ok(a)
    }

    /// A count of items that will each take at least `min_item_bytes` of
    /// the file: refused if they could not possibly fit in what remains.
    pub(crate) fn count(&mut self, what: &str, min_item_bytes: usize) -> Result<usize> {
        let at = self.pos;
        let n = self.u32()? as usize;
        self.check_count(at, what, n, min_item_bytes)?;
        Ok(n)
    }

    /// Same check for a count that was read as part of a larger record.
    pub(crate) fn check_count(&self, at: usize, what: &str, n: usize, min_item_bytes: usize) -> Result<()> {
        if n.saturating_mul(min_item_bytes.max(1)) > self.remaining() {
            return Err(self.err_at(
                at,
                format!("truncated or corrupted: {what} count {n} cannot fit in the {} bytes left", self.remaining()),
            ));
        }
        Ok(())
    }

    /// A string of `len` bytes (names are not NUL-terminated in the file).
    /// Names must be non-empty and valid UTF-8; policy compilers only emit
    /// identifiers, so anything else means corruption.
    pub(crate) fn string(&mut self, len: usize, what: &str) -> Result<String> {
        let at = self.pos;
        if len == 0 {
            return Err(self.err_at(at, format!("empty {what}")));
        }
        let b = self.take(len)?;
        match std::str::from_utf8(b) {
            Ok(s) if !s.contains('\0') => Ok(s.to_owned()),
            _ => Err(self.err_at(at, format!("{what} is not a valid identifier"))),
        }
    }

    /// A length-prefixed string.
    pub(crate) fn string_u32(&mut self, what: &str) -> Result<String> {
        let len = self.u32()? as usize;
        self.string(len, what)
    }
}
