//! `/dev/tty` for a supervised open (crate::supervised_open): the
//! caller's controlling terminal, which the daemon has no name for.
//!
//! Why: the kernel's open of `/dev/tty` (char device 5:0) opens the
//! *opener's* controlling terminal, so the daemon's reopen of the checked
//! inode would open the daemon's (it has none: `ENXIO`), and a confined
//! shell's `ssh` or `read </dev/tty` prompt would fail. The terminal is
//! found from the caller's `tty_nr` (`/proc/TID/stat`) as a device node
//! in the caller's root (`/dev/pts/N`, `/dev/ttyN`, `/dev/ttySN`,
//! `/dev/console`), opened there with the caller's credentials and
//! verified to be that device.
//!
//! What differs from the kernel: the descriptor is the terminal's own
//! node (`fstat` shows its device, not 5:0); a terminal the caller's
//! credentials cannot open through its node (after `su` to another user,
//! say) fails with `EACCES`, where the kernel checks only `/dev/tty`'s
//! mode. Opening with the caller's credentials is deliberate: `tty_nr` does
//! not say which devpts instance the terminal is in, so a caller that
//! mounted its own devpts could make the node in its root another
//! terminal with the same number (the launcher's filter refuses mounts
//! and new namespaces to the processes it supervises, so this is a second
//! line); the caller's credentials bound that to
//! a terminal it could open by its node anyway, and the open of the node
//! is decided too (crate::supervisor), besides the kernel's check of
//! `/dev/tty`: a domain that may open `/dev/tty` and not its terminal's
//! node is refused, where the kernel would let it through.
//!
//! `tty_nr` is read from the daemon's `/proc`, never the caller's root,
//! whose `/proc` the caller may have made.

use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};

/// `/dev/tty`'s device number.
const DEV_TTY: (u32, u32) = (5, 0);
/// The Unix98 pty slaves' major (`/dev/pts/N`, N the minor).
const PTS_MAJOR: u32 = 136;

/// `md` is the node `/dev/tty` (char device 5:0).
pub(crate) fn is_dev_tty(md: &std::fs::Metadata) -> bool {
    md.file_type().is_char_device() && (major(md.rdev()), minor(md.rdev())) == DEV_TTY
}

/// `md` is a terminal: a virtual console or serial line (major 4),
/// `/dev/tty`, `/dev/console` or `/dev/ptmx` (5), a pty slave (136 to
/// 143). SELinux labels a pty when it is made (`type_transition` on
/// devpts), which rampartd does not see: a terminal's node is not decided
/// by a label here (crate::supervisor's `object_sid`).
pub(crate) fn is_terminal(md: &std::fs::Metadata) -> bool {
    let m = major(md.rdev());
    md.file_type().is_char_device() && TERMINAL_MAJORS.iter().any(|&(low, high)| (low..=high).contains(&m))
}

/// The character majors of [`is_terminal`], as ranges (crate::device_program
/// allows them before its list).
pub(crate) const TERMINAL_MAJORS: [(u32, u32); 3] = [(4, 4), (5, 5), (PTS_MAJOR, 143)];

fn major(dev: u64) -> u32 {
    libc::major(dev)
}

fn minor(dev: u64) -> u32 {
    libc::minor(dev)
}

/// The controlling terminal's (major, minor) in a `/proc/TID/stat` text:
/// its 7th field, `tty_nr` (`None`: no controlling terminal, or a text
/// that is not a stat line).
pub(crate) fn tty_of_stat(stat: &str) -> Option<(u32, u32)> {
    // The command name (2nd field) is in parentheses and may hold
    // spaces and parentheses: the fields after it follow the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let tty_nr: u32 = rest.split_whitespace().nth(4)?.parse().ok()?;
    // new_encode_dev: minor's low 8 bits, major's 12, minor's high 12.
    let (major, minor) = ((tty_nr >> 8) & 0xfff, (tty_nr & 0xff) | ((tty_nr >> 12) & 0xfff00));
    (tty_nr != 0).then_some((major, minor))
}

/// The node of terminal (major, minor) under `/dev`, for the terminals
/// a session commonly has (absolute: resolved in the caller's root).
pub(crate) fn node_of(major: u32, minor: u32) -> Option<String> {
    match (major, minor) {
        (PTS_MAJOR, n) => Some(format!("/dev/pts/{n}")),
        (4, n @ 0..=63) => Some(format!("/dev/tty{n}")),
        (4, n @ 64..=255) => Some(format!("/dev/ttyS{}", n - 64)),
        (5, 1) => Some("/dev/console".into()),
        _ => None,
    }
}

/// The controlling terminal (major, minor) of thread `tid`, read in the
/// daemon's root (the caller's root may hold a `/proc` of its own
/// making): `ENXIO` where it has none.
pub(crate) fn of(tid: u32) -> Result<(u32, u32), i32> {
    let stat = std::fs::read_to_string(format!("/proc/{tid}/stat")).map_err(|_| libc::ESRCH)?;
    tty_of_stat(&stat).ok_or(libc::ENXIO)
}

/// Terminal `tty` (from [`of`]) opened with `flags` (its access mode,
/// `O_APPEND`, `O_NONBLOCK`, `O_SYNC`) by a thread already in the
/// caller's root and credentials: `ENXIO` where it is not one
/// [`node_of`] knows, or its node there is not that device.
pub(crate) fn open((major, minor): (u32, u32), flags: i32) -> Result<OwnedFd, i32> {
    let node = node_of(major, minor).ok_or(libc::ENXIO)?;
    let asked = flags & (libc::O_ACCMODE | libc::O_APPEND | libc::O_NONBLOCK | libc::O_SYNC);
    let fd = crate::supervised_open::openat2(
        libc::AT_FDCWD,
        OsStr::new(&node),
        asked | libc::O_NOCTTY | libc::O_NONBLOCK,
        0,
    )?;
    let md = std::fs::File::from(fd.try_clone().map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?)
        .metadata()
        .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
    if !md.file_type().is_char_device() || (self::major(md.rdev()), self::minor(md.rdev())) != (major, minor) {
        return Err(libc::ENXIO);
    }
    crate::supervised_open::finish(fd.as_fd(), flags & !libc::O_TRUNC)?;
    Ok(fd)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn tty_nr_is_read_after_the_command_name() {
        // pts/3: major 136, minor 3 -> 136 << 8 | 3 = 34819.
        let line = "4242 (a) (b) c) S 1 4242 4242 34819 4242 4194560 0 0";
        assert_eq!(tty_of_stat(line), Some((136, 3)));
        // pts/300: minor 300 = 0x12c -> low 0x2c, high 0x100 << 12.
        let nr = (136 << 8) | 0x2c | (0x100 << 12);
        assert_eq!(tty_of_stat(&format!("1 (sh) S 0 1 1 {nr} 1")), Some((136, 300)));
        assert_eq!(tty_of_stat("1 (sh) S 0 1 1 0 -1"), None, "no controlling terminal");
        assert_eq!(tty_of_stat("garbage"), None);
        assert_eq!(tty_of_stat("1 (sh) S 0"), None);
    }

    #[test]
    fn nodes_of_the_common_terminals() {
        assert_eq!(node_of(136, 7).as_deref(), Some("/dev/pts/7"));
        assert_eq!(node_of(4, 2).as_deref(), Some("/dev/tty2"));
        assert_eq!(node_of(4, 65).as_deref(), Some("/dev/ttyS1"));
        assert_eq!(node_of(5, 1).as_deref(), Some("/dev/console"));
        assert_eq!(node_of(5, 0), None, "/dev/tty itself is no terminal");
        assert_eq!(node_of(188, 0), None);
    }

    #[test]
    fn this_process_controlling_terminal_or_enxio() {
        let tty = match of(std::process::id()) {
            Ok(tty) => tty,
            Err(e) => return assert_eq!(e, libc::ENXIO),
        };
        match (node_of(tty.0, tty.1), open(tty, libc::O_RDWR)) {
            (None, r) => assert_eq!(r.err(), Some(libc::ENXIO)),
            (Some(node), Ok(fd)) => {
                let md = std::fs::File::from(fd).metadata().unwrap();
                assert_eq!(md.rdev(), std::fs::metadata(node).unwrap().rdev());
            }
            // A terminal this user cannot open by its node.
            (Some(_), Err(e)) => assert_eq!(e, libc::EACCES),
        }
    }
}
