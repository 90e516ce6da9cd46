//! One file_contexts line, split exactly like libselinux 3.4's
//! `read_spec_entries` and `process_line`, plus the two properties
//! libselinux derives from the raw regex text: "has meta characters"
//! (which orders specs) and the stem (which filters them at lookup).

use std::path::Path;
use std::sync::Arc;

use crate::error::LabelError;
use crate::filetype::FileType;

/// Where a spec came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    /// The spec file.
    pub file: Arc<Path>,
    /// 1-based line number.
    pub line: u32,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// The fields of one spec line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Fields {
    pub regex: String,
    pub file_type: Option<FileType>,
    /// `None` for `<<none>>`.
    pub context: Option<String>,
}

/// The C library's `isspace` in the "C" locale.
pub(crate) fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// libselinux's limit on one field (`UINT16_MAX` bytes).
const MAX_FIELD: usize = u16::MAX as usize;

/// Splits one line (without its newline). `Ok(None)` for blank and
/// comment lines. Like libselinux: fields are separated by C whitespace,
/// fields must be ASCII, a fourth field and beyond are ignored, a line
/// with one field is an error.
pub(crate) fn parse_line(line: &[u8], path: &Path, lineno: u32) -> Result<Option<Fields>, LabelError> {
    let syntax = |message: String| LabelError::Syntax { path: path.to_path_buf(), line: lineno, message };
    // getline() hands libselinux a C string: a NUL ends the line.
    let line = match line.iter().position(|&b| b == 0) {
        Some(n) => &line[..n],
        None => line,
    };
    let mut rest = line;
    let skip_space = |s: &[u8]| -> usize { s.iter().take_while(|&&b| is_c_space(b)).count() };
    rest = &rest[skip_space(rest)..];
    if rest.is_empty() || rest[0] == b'#' {
        return Ok(None);
    }
    let mut fields: Vec<&[u8]> = Vec::with_capacity(3);
    while fields.len() < 3 {
        rest = &rest[skip_space(rest)..];
        if rest.is_empty() {
            break;
        }
        let n = rest.iter().take_while(|&&b| !is_c_space(b)).count();
        let field = &rest[..n];
        if !field.is_ascii() {
            return Err(syntax("non-ASCII characters found".into()));
        }
        if field.len() >= MAX_FIELD {
            return Err(syntax(format!("a field is {} bytes long (the limit is {})", field.len(), MAX_FIELD - 1)));
        }
        fields.push(field);
        rest = &rest[n..];
    }
    // ASCII was checked, so these conversions cannot fail.
    let text = |f: &[u8]| String::from_utf8_lossy(f).into_owned();
    let (regex, type_field, context) = match fields.as_slice() {
        [regex, context] => (text(regex), None, text(context)),
        [regex, ty, context] => (text(regex), Some(text(ty)), text(context)),
        _ => return Err(syntax("line is missing fields".into())),
    };
    let file_type = match type_field {
        None => None,
        Some(t) => Some(FileType::from_spec_field(&t).ok_or_else(|| syntax(format!("invalid file type `{t}`")))?),
    };
    let context = (context != "<<none>>").then_some(context);
    Ok(Some(Fields { regex, file_type, context }))
}

/// The characters libselinux treats as regex meta characters.
const META: &[u8] = b".^$?*+|[({";

/// libselinux `spec_hasMetaChars`: whether the regex has an unescaped
/// meta character (a backslash skips the next byte). Specs without are
/// "exact" and are moved after all others.
pub(crate) fn has_meta_chars(regex: &[u8]) -> bool {
    let mut i = 0;
    while i < regex.len() {
        let c = regex[i];
        if META.contains(&c) {
            return true;
        }
        if c == b'\\' {
            i += 1;
        }
        i += 1;
    }
    false
}

/// libselinux `get_stem_from_spec`: the text before the second `/`
/// (searching from the second byte), when that text has no meta
/// character. Backslashes are NOT special here, exactly as in
/// libselinux.
pub(crate) fn spec_stem(regex: &[u8]) -> Option<&[u8]> {
    let slash = 1 + regex.get(1..)?.iter().position(|&b| b == b'/')?;
    let stem = &regex[..slash];
    if stem.iter().any(|b| META.contains(b)) {
        return None;
    }
    Some(stem)
}

/// libselinux `get_stem_from_file_name`: the text of a looked-up path
/// before its second `/`.
pub(crate) fn path_stem(path: &[u8]) -> Option<&[u8]> {
    let slash = 1 + path.get(1..)?.iter().position(|&b| b == b'/')?;
    Some(&path[..slash])
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Option<Fields>, LabelError> {
        parse_line(s.as_bytes(), Path::new("fc"), 7)
    }

    #[test]
    fn splits_like_libselinux() {
        assert_eq!(p("  # c").unwrap(), None);
        assert_eq!(p(" \t ").unwrap(), None);
        let f = p("/a(/.*)?\t-d\tu:r:t:s0 extra").unwrap().unwrap();
        assert_eq!(f.regex, "/a(/.*)?");
        assert_eq!(f.file_type, Some(FileType::Directory));
        assert_eq!(f.context.as_deref(), Some("u:r:t:s0"));
        let f = p("/b <<none>>").unwrap().unwrap();
        assert_eq!(f.context, None);
        assert_eq!(f.file_type, None);
        let e = p("/only").unwrap_err().to_string();
        assert!(e.starts_with("fc:7: line is missing fields"), "{e}");
        let e = p("/a -x u:r:t").unwrap_err().to_string();
        assert!(e.contains("invalid file type `-x`"), "{e}");
        assert!(p("/a\u{e9} u:r:t").is_err());
    }

    #[test]
    fn meta_and_stems() {
        assert!(!has_meta_chars(b"/usr/lib/foo\\.so"));
        assert!(has_meta_chars(b"/usr/lib(/.*)?"));
        assert!(!has_meta_chars(b"/a\\(b"));
        assert_eq!(spec_stem(b"/usr/lib(/.*)?"), Some(&b"/usr"[..]));
        assert_eq!(spec_stem(b"/usr(/.*)?"), None);
        assert_eq!(spec_stem(b"/usr"), None);
        assert_eq!(spec_stem(b"/u.r/x"), None);
        assert_eq!(spec_stem(b"/a\\w/x"), Some(&b"/a\\w"[..]));
        assert_eq!(path_stem(b"/usr/bin"), Some(&b"/usr"[..]));
        assert_eq!(path_stem(b"/usr"), None);
        assert_eq!(path_stem(b"/"), None);
        assert_eq!(path_stem(b""), None);
    }
}
