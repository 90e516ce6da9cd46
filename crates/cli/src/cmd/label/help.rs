//! Help texts of the file-label commands (`crate::help` points here).

pub const LABEL: &str = "\
usage: rampart [--policy PATH] label [--file-contexts DIR_OR_FILE] [--type TYPE] PATH...
       rampart [--policy PATH] label [--file-contexts DIR_OR_FILE] --batch

Prints the context file_contexts gives each PATH, like matchpathcon
(libselinux 3.4), one line per PATH:

  /etc/passwd<TAB>system_u:object_r:etc_t:s0
  /proc/self<TAB><<none>>

<<none>> means no label (no matching line, or a line whose context is
<<none>>). As matchpathcon does: one trailing `/` is removed from PATH, the
file type is PATH's own (lstat: a symlink is looked up as a symlink, never
followed), or any type when PATH does not exist; PATH is not resolved
(no realpath). PATH is bytes; it need not be UTF-8.

With --batch, reads lines `PATH` or `PATH<TAB>TYPE` from stdin and prints
one line per input line: the context or <<none>>. Without TYPE the lookup
matches any type (mode 0, as selabel_lookup). A path that contains a tab
needs a TYPE, or a tab at the end of the line for any type. Lines with an
unknown TYPE or an empty path are answered `error: MESSAGE`. Output is
flushed whenever no more input is waiting, so a caller can write one line
and read its answer.

options:
  --type TYPE                  look PATH up as this type instead of its own:
                               file dir lnk_file chr_file blk_file
                               sock_file fifo_file
  --batch                      read queries from stdin (see above)
  --file-contexts DIR_OR_FILE  the file_contexts to use: a directory holding
                               `file_contexts`, or the file itself (with its
                               .homedirs, .local, .subs_dist and .subs
                               beside it, like matchpathcon -f); default: the
                               system one, /etc/selinux/TYPE/contexts/files
  --policy PATH                the policy every context is checked against

exit status: 0 done; 1 a lookup failed (an empty PATH, as matchpathcon);
2 error (usage, unreadable or invalid file_contexts, unreadable policy).
";

pub const GETLABEL: &str = "\
usage: rampart getlabel PATH...

Prints each PATH's security.selinux extended attribute, like `ls -Zd`:

  system_u:object_r:etc_t:s0 /etc/passwd
  ? /tmp/new-file

`?` means the file has no label (or its filesystem has no extended
attributes). Symlinks are not followed: a link shows its own label. The
attribute is read directly, so this works with SELinux disabled. Lines
come in argument order, with PATH as given.

exit status: 0 done; 1 a label could not be read (shown as `?`, the reason
on stderr); 2 a PATH cannot be accessed, or a usage error.
";

pub const RELABEL: &str = "\
usage: rampart [--policy PATH] relabel [-n] [-v] [-R] [-F] [-x] [--root DIR]
                                       [--file-contexts DIR_OR_FILE] PATH...

Sets each PATH's security.selinux attribute to its file_contexts label,
with restorecon's rules (libselinux 3.4): a file without a label in
file_contexts is skipped; a file without an attribute gets the whole
context; otherwise only the type is changed (user, role and range kept)
unless -F, and a file whose type is listed in customizable_types is left
alone unless -F. Symlinks are labeled themselves, never followed. Messages
are restorecon's; errors go to stderr and the run goes on.

When stderr is a terminal and -v is off, a progress line (files,
relabeled, errors, files per second) is shown there and stays as a
summary at the end.

options:
  -n             change nothing; with -v, print what would change
  -v             print every change: `Relabeled PATH from OLD to NEW`
  -R             walk directories recursively
  -F             force: set the whole context, ignore customizable_types
  -x             stay on PATH's filesystem (always so: there is no
                 seclabel check, so other mounts are never entered)
  --root DIR     PATHs are under DIR, a tree mounted or unpacked there:
                 DIR/etc/passwd is labeled as /etc/passwd would be (like
                 setfiles -r; DIR must end at a path component)
  --file-contexts DIR_OR_FILE
                 the file_contexts to use (see `rampart help label`)
  --policy PATH  the policy every context is checked against

Short options combine: -Rnv.

exit status: 0 done; 255 any file could not be handled (restorecon's
status); 2 usage error, unreadable file_contexts or policy, bad --root.
";
