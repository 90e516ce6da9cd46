//! `rampart getlabel PATH...`: the `security.selinux` xattr of each
//! path, printed like `ls -Zd`: `CONTEXT PATH`, `?` for a file without
//! one (or on a filesystem without xattrs, which `ls` also shows as
//! `?`). Symlinks are not followed (`lgetxattr`), so a link shows its
//! own label. Paths are printed as given, raw bytes, one per line, in
//! argument order.
//!
//! Exit status like `ls`: 0; 2 when a path cannot be accessed (`lstat`
//! fails; nothing printed for it); 1 when a label cannot be read for
//! another reason (printed as `?`, the error on stderr).

use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use crate::error::os_message;

/// Prints the label of every path; returns the exit status.
pub fn run(paths: &[PathBuf], out: impl Write) -> io::Result<u8> {
    let mut out = io::BufWriter::with_capacity(1 << 16, out);
    let mut status = 0u8;
    for path in paths {
        let shown = path.as_os_str().as_bytes();
        if let Err(e) = std::fs::symlink_metadata(path) {
            out.flush()?;
            complain(&["cannot access '".as_bytes(), shown, b"': ", os_message(&e).as_bytes()]);
            status = 2;
            continue;
        }
        let label = match rampart_label::get_label(path) {
            Ok(Some(ctx)) => ctx,
            Ok(None) => "?".to_owned(),
            Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => "?".to_owned(),
            Err(e) => {
                out.flush()?;
                complain(&["cannot read the label of '".as_bytes(), shown, b"': ", os_message(&e).as_bytes()]);
                status = status.max(1);
                "?".to_owned()
            }
        };
        out.write_all(label.as_bytes())?;
        out.write_all(b" ")?;
        out.write_all(shown)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(status)
}

/// `rampart: PARTS...` on stderr; a closed stderr is not an error.
fn complain(parts: &[&[u8]]) {
    let mut m = b"rampart: ".to_vec();
    parts.iter().for_each(|p| m.extend_from_slice(p));
    m.push(b'\n');
    let _ = io::stderr().write_all(&m);
}
