//! The seven file types a file_contexts line can restrict itself to, and
//! their `st_mode` bits.

use std::fmt;

/// A file type (`S_IFMT` class of `st_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FileType {
    /// `--`: regular file (`S_IFREG`).
    Regular,
    /// `-d`: directory (`S_IFDIR`).
    Directory,
    /// `-l`: symbolic link (`S_IFLNK`).
    Symlink,
    /// `-c`: character device (`S_IFCHR`).
    CharDevice,
    /// `-b`: block device (`S_IFBLK`).
    BlockDevice,
    /// `-s`: socket (`S_IFSOCK`).
    Socket,
    /// `-p`: named pipe (`S_IFIFO`).
    Fifo,
}

/// `S_IFMT`: the file-type bits of `st_mode`.
pub const S_IFMT: u32 = 0o170000;

impl FileType {
    /// All seven, in file_contexts field order.
    pub const ALL: [FileType; 7] = [
        FileType::Regular,
        FileType::Directory,
        FileType::Symlink,
        FileType::CharDevice,
        FileType::BlockDevice,
        FileType::Socket,
        FileType::Fifo,
    ];

    /// The `S_IF*` value.
    pub fn mode_bits(self) -> u32 {
        match self {
            FileType::Regular => 0o100000,
            FileType::Directory => 0o040000,
            FileType::Symlink => 0o120000,
            FileType::CharDevice => 0o020000,
            FileType::BlockDevice => 0o060000,
            FileType::Socket => 0o140000,
            FileType::Fifo => 0o010000,
        }
    }

    /// The type of an `st_mode` (other bits ignored); `None` for an
    /// unknown or zero type.
    pub fn from_mode(mode: u32) -> Option<FileType> {
        let t = mode & S_IFMT;
        FileType::ALL.into_iter().find(|ft| ft.mode_bits() == t)
    }

    /// The type of a `std::fs::Metadata` (from `lstat` or `stat`).
    pub fn from_metadata(md: &std::fs::Metadata) -> Option<FileType> {
        use std::os::unix::fs::MetadataExt;
        FileType::from_mode(md.mode())
    }

    /// The type field of a file_contexts line (`--`, `-d`, ...), as
    /// libselinux's `string_to_mode`.
    pub fn from_spec_field(field: &str) -> Option<FileType> {
        Some(match field {
            "--" => FileType::Regular,
            "-d" => FileType::Directory,
            "-l" => FileType::Symlink,
            "-c" => FileType::CharDevice,
            "-b" => FileType::BlockDevice,
            "-s" => FileType::Socket,
            "-p" => FileType::Fifo,
            _ => return None,
        })
    }

    /// The file_contexts field for this type.
    pub fn spec_field(self) -> &'static str {
        match self {
            FileType::Regular => "--",
            FileType::Directory => "-d",
            FileType::Symlink => "-l",
            FileType::CharDevice => "-c",
            FileType::BlockDevice => "-b",
            FileType::Socket => "-s",
            FileType::Fifo => "-p",
        }
    }

    /// The `matchpathcon -m` / `semanage fcontext -f` word (`file`,
    /// `dir`, ...).
    pub fn name(self) -> &'static str {
        match self {
            FileType::Regular => "file",
            FileType::Directory => "dir",
            FileType::Symlink => "link",
            FileType::CharDevice => "chr_file",
            FileType::BlockDevice => "blk_file",
            FileType::Socket => "sock_file",
            FileType::Fifo => "fifo_file",
        }
    }

    /// The policy's object class for this type (`file`, `dir`,
    /// `lnk_file`, ...), for [`crate::new_file_label`].
    pub fn class_name(self) -> &'static str {
        match self {
            FileType::Regular => "file",
            FileType::Directory => "dir",
            FileType::Symlink => "lnk_file",
            FileType::CharDevice => "chr_file",
            FileType::BlockDevice => "blk_file",
            FileType::Socket => "sock_file",
            FileType::Fifo => "fifo_file",
        }
    }
}

impl fmt::Display for FileType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for ft in FileType::ALL {
            assert_eq!(FileType::from_mode(ft.mode_bits() | 0o755), Some(ft));
            assert_eq!(FileType::from_spec_field(ft.spec_field()), Some(ft));
        }
        assert_eq!(FileType::from_mode(0o644), None);
        assert_eq!(FileType::from_spec_field("-x"), None);
    }
}
