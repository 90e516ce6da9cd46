//! The tagged stream `apparmor_parser` writes and the kernel's
//! `policy_unpack.c` reads (`struct aa_ext` and the `aa_unpack_*`
//! helpers).
//!
//! Untrusted bytes enter here and in [`crate::dfa`] only. Each element is
//! a one-byte type code, optionally preceded by a name tag (`AA_NAME`, a
//! u16-length NUL-terminated string). Like the kernel, every `opt_*`
//! reader leaves the position unchanged when the next element is not
//! what was asked for, so optional fields can be probed; callers turn a
//! missing required field into an error at the current offset.

use crate::error::{LoadError, Result};

/// `K_ABI_MASK`: the ABI version bits of the header's `version` (read by
/// unpack.rs, and by perms.rs, whose permission mapping depends on the ABI).
pub(crate) const K_ABI_MASK: u32 = 0x3ff;

/// Element type codes (`enum aa_code`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
#[allow(dead_code)] // the full set, as in the kernel; lists and u16 are unused by profiles
pub(crate) enum Code {
    U8 = 0,
    U16 = 1,
    U32 = 2,
    U64 = 3,
    Name = 4,
    String = 5,
    Blob = 6,
    Struct = 7,
    StructEnd = 8,
    List = 9,
    ListEnd = 10,
    Array = 11,
    ArrayEnd = 12,
}

/// A read head over one blob (`struct aa_ext`).
#[derive(Clone)]
pub(crate) struct Ext<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Ext<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, pos: 0 }
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    /// An error at the current position.
    #[cold]
    pub(crate) fn err(&self, message: impl Into<String>) -> LoadError {
        LoadError::new(self.pos, message)
    }

    /// `aa_inbounds`.
    fn inbounds(&self, n: usize) -> bool {
        n <= self.bytes.len() - self.pos
    }

    fn le16(&self) -> Option<u16> {
        let b = self.bytes.get(self.pos..self.pos.checked_add(2)?)?;
        Some(u16::from_le_bytes([b[0], b[1]]))
    }

    fn le32(&self) -> Option<u32> {
        let b = self.bytes.get(self.pos..self.pos.checked_add(4)?)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// `aa_unpack_u16_chunk`: a u16 length and that many bytes.
    fn u16_chunk(&mut self) -> Option<&'a [u8]> {
        let start = self.pos;
        let size = self.le16()? as usize;
        self.pos += 2;
        if !self.inbounds(size) {
            self.pos = start;
            return None;
        }
        let chunk = &self.bytes[self.pos..self.pos + size];
        self.pos += size;
        Some(chunk)
    }

    /// `aa_unpack_X`: the next byte is `code`.
    fn x(&mut self, code: Code) -> bool {
        if self.bytes.get(self.pos) == Some(&(code as u8)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// `aa_unpack_nameX`: an optional name tag (which must equal `name`
    /// when one is asked for) followed by the type code. The position is
    /// unchanged on failure.
    pub(crate) fn name_x(&mut self, code: Code, name: Option<&str>) -> bool {
        let start = self.pos;
        if self.x(Code::Name) {
            let tag = self.u16_chunk();
            if let Some(want) = name {
                let ok = match tag {
                    Some(t) if !t.is_empty() && t[t.len() - 1] == 0 => &t[..t.len() - 1] == want.as_bytes(),
                    _ => false,
                };
                if !ok {
                    self.pos = start;
                    return false;
                }
            }
        } else if name.is_some() {
            return false;
        }
        if self.x(code) {
            return true;
        }
        self.pos = start;
        false
    }

    pub(crate) fn opt_u8(&mut self, name: Option<&str>) -> Option<u8> {
        let start = self.pos;
        if self.name_x(Code::U8, name) {
            if let Some(&b) = self.bytes.get(self.pos) {
                self.pos += 1;
                return Some(b);
            }
        }
        self.pos = start;
        None
    }

    pub(crate) fn opt_u32(&mut self, name: Option<&str>) -> Option<u32> {
        let start = self.pos;
        if self.name_x(Code::U32, name) {
            if let Some(v) = self.le32() {
                self.pos += 4;
                return Some(v);
            }
        }
        self.pos = start;
        None
    }

    pub(crate) fn opt_u64(&mut self, name: Option<&str>) -> Option<u64> {
        let start = self.pos;
        if self.name_x(Code::U64, name) {
            if let Some(b) = self.bytes.get(self.pos..self.pos + 8) {
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                self.pos += 8;
                return Some(u64::from_le_bytes(a));
            }
        }
        self.pos = start;
        None
    }

    /// `aa_unpack_array`: the element count of an array.
    pub(crate) fn opt_array(&mut self, name: Option<&str>) -> Option<u16> {
        let start = self.pos;
        if self.name_x(Code::Array, name) {
            if let Some(n) = self.le16() {
                self.pos += 2;
                return Some(n);
            }
        }
        self.pos = start;
        None
    }

    /// `aa_unpack_blob`: a u32-sized byte string; also returns the offset
    /// of its first byte (the DFA alignment depends on it).
    pub(crate) fn opt_blob(&mut self, name: Option<&str>) -> Option<(usize, &'a [u8])> {
        let start = self.pos;
        if self.name_x(Code::Blob, name) {
            if let Some(size) = self.le32() {
                self.pos += 4;
                let size = size as usize;
                if self.inbounds(size) {
                    let at = self.pos;
                    self.pos += size;
                    return Some((at, &self.bytes[at..at + size]));
                }
            }
        }
        self.pos = start;
        None
    }

    /// `aa_unpack_str`: a NUL-terminated string; returned without the
    /// terminator, as raw bytes (the x-table embeds NULs).
    pub(crate) fn opt_str_bytes(&mut self, name: Option<&str>) -> Option<&'a [u8]> {
        let start = self.pos;
        if self.name_x(Code::String, name) {
            if let Some(s) = self.u16_chunk() {
                if let Some((&0, body)) = s.split_last() {
                    return Some(body);
                }
            }
        }
        self.pos = start;
        None
    }

    /// A string that must be text: names, attachments. The kernel only
    /// checks the terminator; we also refuse interior NULs and invalid
    /// UTF-8 (apparmor_parser writes neither), reporting the offset.
    pub(crate) fn opt_str(&mut self, name: Option<&str>) -> Result<Option<String>> {
        let at = self.pos;
        match self.opt_str_bytes(name) {
            None => Ok(None),
            Some(b) => match std::str::from_utf8(b) {
                Ok(s) if !s.contains('\0') => Ok(Some(s.to_owned())),
                _ => Err(LoadError::new(at, format!("string {} is not valid text", name.unwrap_or("element")))),
            },
        }
    }

    /// A required element: `what` names it in the error.
    pub(crate) fn need<T>(&self, v: Option<T>, what: &str) -> Result<T> {
        v.ok_or_else(|| self.err(format!("expected {what}")))
    }

    pub(crate) fn req_u8(&mut self, name: Option<&str>, what: &str) -> Result<u8> {
        let v = self.opt_u8(name);
        self.need(v, what)
    }

    pub(crate) fn req_u32(&mut self, name: Option<&str>, what: &str) -> Result<u32> {
        let v = self.opt_u32(name);
        self.need(v, what)
    }

    pub(crate) fn req_u64(&mut self, name: Option<&str>, what: &str) -> Result<u64> {
        let v = self.opt_u64(name);
        self.need(v, what)
    }

    pub(crate) fn req_array(&mut self, name: Option<&str>, what: &str) -> Result<u16> {
        let v = self.opt_array(name);
        self.need(v, what)
    }

    pub(crate) fn need_x(&mut self, code: Code, name: Option<&str>, what: &str) -> Result<()> {
        if self.name_x(code, name) {
            Ok(())
        } else {
            Err(self.err(format!("expected {what}")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_u32_and_reset() {
        let b = [4, 8, 0, b'v', b'e', b'r', b's', b'i', b'o', b'n', 0, 2, 5, 0, 0, 0];
        let mut e = Ext::new(&b);
        assert_eq!(e.opt_u32(Some("other")), None);
        assert_eq!(e.pos(), 0);
        assert_eq!(e.opt_u32(Some("version")), Some(5));
        assert!(e.at_end());
        // a truncated value leaves the head where it was
        let mut e = Ext::new(&b[..13]);
        assert_eq!(e.opt_u32(Some("version")), None);
        assert_eq!(e.pos(), 0);
    }

    #[test]
    fn unnamed_reader_skips_any_name() {
        let b = [4, 2, 0, b'x', 0, 0, 7];
        let mut e = Ext::new(&b);
        assert_eq!(e.opt_u8(None), Some(7));
    }

    #[test]
    fn string_needs_terminator() {
        let mut e = Ext::new(&[5, 2, 0, b'a', b'b']);
        assert_eq!(e.opt_str_bytes(None), None);
        let mut e = Ext::new(&[5, 2, 0, b'a', 0]);
        assert_eq!(e.opt_str_bytes(None), Some(&b"a"[..]));
    }
}
