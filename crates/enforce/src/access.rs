//! What an open asks for, in SELinux terms: the object class from the
//! file type, and the permissions from the open flags, as the kernel's
//! `file_to_av`/`open_file_to_av` map them (`open`, plus `read` for
//! `FMODE_READ`, `append` or `write` for `FMODE_WRITE`).
//!
//! fanotify does not report the opener's flags. The daemon first checks
//! the most an open can ask ([`ClassPerms::any_open`]); only when some of
//! that is denied does it read the flags, from the opening thread's
//! `/proc/TID/task/TID/syscall` (events name the thread:
//! `FAN_REPORT_TID`; it is blocked in that call while the event waits).
//! That file names the call and its raw arguments. Only the 64-bit open
//! calls whose flags are an argument are believed: the flags of `openat2`
//! are in memory another thread may change while the daemon reads them;
//! a 32-bit call (`int 0x80`) shows its own numbering, which is not
//! told apart here; io_uring opens run in kernel workers. Those, and a
//! thread that cannot be read, count as asking for everything: no case
//! remains where uncertainty allows. The open an exec makes (the thread
//! is in `execve`) is a read (`FMODE_READ | FMODE_EXEC`), as the kernel
//! opens it.

use std::fs;

use rampart_avc::{ClassIdx, Mapping, Perms};

/// The classes the daemon checks and their permissions, by declared name.
pub const FILE_CLASSES: [&str; 7] = ["file", "dir", "lnk_file", "chr_file", "blk_file", "sock_file", "fifo_file"];
// In the policy's own order (common permissions, then the class's), so
// audit lines list permissions as the kernel's do: `{ read open }`.
// `create`, `setattr`, `unlink`, `link`, `rename` and the directory permissions:
// the supervised calls (crate::supervisor).
const FILE_PERMS: &[&str] = &[
    "read",
    "write",
    "create",
    "setattr",
    "relabelfrom",
    "relabelto",
    "append",
    "map",
    "unlink",
    "link",
    "rename",
    "execute",
    "execute_no_trans",
    "entrypoint",
    "execmod",
    "open",
    "watch",
    "watch_reads",
];
// `map` and `execute` of the other classes: a device mapped executable
// (crate::exec_memory).
const OPEN_PERMS: &[&str] = &[
    "read",
    "write",
    "create",
    "setattr",
    "relabelfrom",
    "relabelto",
    "append",
    "map",
    "unlink",
    "link",
    "rename",
    "execute",
    "open",
    "watch",
    "watch_reads",
];
const DIR_PERMS: &[&str] = &[
    "read",
    "write",
    "create",
    "setattr",
    "relabelfrom",
    "relabelto",
    "unlink",
    "link",
    "rename",
    "open",
    "watch",
    "watch_reads",
    "add_name",
    "remove_name",
    "reparent",
    "search",
    "rmdir",
];
const PROCESS_PERMS: &[&str] = &[
    "transition",
    "setexec",
    "noatsecure",
    "sigchld",
    "sigkill",
    "sigstop",
    "signull",
    "signal",
    "rlimitinh",
    "siginh",
    "ptrace",
    "setrlimit",
    "getrlimit",
    "setcap",
    "execmem",
    "execstack",
    "execheap",
    "setsched",
    "getsched",
    "getpgid",
    "getsession",
    "share",
    "setpgid",
];
/// A transition from a file on a mount that may not grant privileges
/// (crate::exec_mount) needs `nosuid_transition`; `nnp_transition` is
/// not checked: every launched process runs under no_new_privs, the
/// launcher's (docs/security.md).
const PROCESS2_PERMS: &[&str] = &["nosuid_transition"];
/// The capabilities, in the kernel's numbering: `capability` holds 0 to
/// 31, `capability2` 32 and up (what `rampart run` keeps: crate::sandbox).
pub const CAPABILITY_PERMS: &[&str] = &[
    "chown",
    "dac_override",
    "dac_read_search",
    "fowner",
    "fsetid",
    "kill",
    "setgid",
    "setuid",
    "setpcap",
    "linux_immutable",
    "net_bind_service",
    "net_broadcast",
    "net_admin",
    "net_raw",
    "ipc_lock",
    "ipc_owner",
    "sys_module",
    "sys_rawio",
    "sys_chroot",
    "sys_ptrace",
    "sys_pacct",
    "sys_admin",
    "sys_boot",
    "sys_nice",
    "sys_resource",
    "sys_time",
    "sys_tty_config",
    "mknod",
    "lease",
    "audit_write",
    "audit_control",
    "setfcap",
];
pub const CAPABILITY2_PERMS: &[&str] = &[
    "mac_override",
    "mac_admin",
    "syslog",
    "wake_alarm",
    "block_suspend",
    "audit_read",
    "perfmon",
    "bpf",
    "checkpoint_restore",
];
/// The socket classes, every one the kernel's
/// `socket_type_to_security_class` may name (crate::sockets): each is
/// checked for `create` only.
pub const SOCKET_CLASSES: [&str; 58] = [
    "socket",
    "tcp_socket",
    "udp_socket",
    "rawip_socket",
    "netlink_socket",
    "packet_socket",
    "key_socket",
    "unix_stream_socket",
    "unix_dgram_socket",
    "appletalk_socket",
    "netlink_route_socket",
    "netlink_tcpdiag_socket",
    "netlink_nflog_socket",
    "netlink_xfrm_socket",
    "netlink_selinux_socket",
    "netlink_iscsi_socket",
    "netlink_audit_socket",
    "netlink_fib_lookup_socket",
    "netlink_connector_socket",
    "netlink_netfilter_socket",
    "netlink_dnrt_socket",
    "netlink_kobject_uevent_socket",
    "netlink_generic_socket",
    "netlink_scsitransport_socket",
    "netlink_rdma_socket",
    "netlink_crypto_socket",
    "dccp_socket",
    "sctp_socket",
    "icmp_socket",
    "ax25_socket",
    "ipx_socket",
    "netrom_socket",
    "atmpvc_socket",
    "x25_socket",
    "rose_socket",
    "decnet_socket",
    "atmsvc_socket",
    "rds_socket",
    "irda_socket",
    "pppox_socket",
    "llc_socket",
    "can_socket",
    "tipc_socket",
    "bluetooth_socket",
    "iucv_socket",
    "rxrpc_socket",
    "isdn_socket",
    "phonet_socket",
    "ieee802154_socket",
    "caif_socket",
    "alg_socket",
    "nfc_socket",
    "vsock_socket",
    "kcm_socket",
    "qipcrtr_socket",
    "smc_socket",
    "xdp_socket",
    "mctp_socket",
];
/// `create`, `bind`, `connect`, `listen`, `name_bind` of every socket
/// class (the kernel's common socket permissions), `node_bind` of the
/// inet classes that have it, `name_connect` of the connected ones
/// (classmap.h).
const SOCKET_PERMS: &[&str] = &["create", "bind", "connect", "listen", "name_bind"];
const INET_SOCKET_PERMS: &[&str] = &["create", "bind", "connect", "listen", "name_bind", "node_bind"];
const CONNECTED_SOCKET_PERMS: &[&str] =
    &["create", "bind", "connect", "listen", "name_bind", "node_bind", "name_connect"];
const INET_SOCKET_CLASSES: [&str; 3] = ["udp_socket", "rawip_socket", "icmp_socket"];
/// A Unix socket's classes also ask about the peer socket: a stream
/// connect `connectto`, a datagram `sendto` (crate::unix_names).
const UNIX_STREAM_SOCKET_PERMS: &[&str] = &["create", "bind", "connect", "listen", "name_bind", "connectto"];
const UNIX_DGRAM_SOCKET_PERMS: &[&str] = &["create", "bind", "connect", "listen", "name_bind", "sendto"];
const CONNECTED_SOCKET_CLASSES: [&str; 3] = ["tcp_socket", "dccp_socket", "sctp_socket"];

/// What the daemon checks of class `shm` or `sem` (crate::ipc_objects).
#[derive(Clone, Copy, Debug)]
pub(crate) struct IpcPerms {
    pub class: ClassIdx,
    pub create: Perms,
    pub destroy: Perms,
    pub getattr: Perms,
    pub setattr: Perms,
    pub read: Perms,
    pub write: Perms,
    pub associate: Perms,
    /// `NONE` but for `shm`.
    pub lock: Perms,
    /// `NONE` but for `msgq`.
    pub enqueue: Perms,
}

/// What the daemon checks of class `msg` (crate::ipc_objects).
#[derive(Clone, Copy, Debug)]
pub(crate) struct MsgPerms {
    pub class: ClassIdx,
    pub send: Perms,
    pub receive: Perms,
}

/// What the daemon checks of a socket class (crate::sockets).
#[derive(Clone, Copy, Debug)]
pub(crate) struct SocketPerms {
    pub class: ClassIdx,
    pub create: Perms,
    pub bind: Perms,
    pub connect: Perms,
    pub listen: Perms,
    pub name_bind: Perms,
    /// `NONE` where the class has no `node_bind`.
    pub node_bind: Perms,
    /// `NONE` where the class has no `name_connect`.
    pub name_connect: Perms,
    /// What a connect asks of the peer socket: `connectto` of
    /// `unix_stream_socket`, `sendto` of `unix_dgram_socket`; `NONE`
    /// elsewhere.
    pub peer: Perms,
}
/// What the control socket's ops are checked for (crate::control).
const SECURITY_PERMS: &[&str] = &["setenforce", "setbool", "load_policy"];
/// What System V shared memory and semaphore calls are checked for
/// (crate::ipc_objects).
const SHM_PERMS: &[&str] = &["create", "destroy", "getattr", "setattr", "read", "write", "associate", "lock"];
const SEM_PERMS: &[&str] = &["create", "destroy", "getattr", "setattr", "read", "write", "associate"];
const MSGQ_PERMS: &[&str] = &["create", "destroy", "getattr", "setattr", "read", "write", "associate", "enqueue"];
const MSG_PERMS: &[&str] = &["send", "receive"];

/// The AVC mapping the daemon uses.
pub fn mapping() -> Result<Mapping, rampart_avc::AvcError> {
    let mut classes: Vec<(&str, &[&str])> =
        FILE_CLASSES.iter().map(|&c| if c == "dir" { (c, DIR_PERMS) } else { (c, OPEN_PERMS) }).collect();
    // `file` also carries the exec permissions.
    if let Some(file) = classes.iter_mut().find(|(c, _)| *c == "file") {
        file.1 = FILE_PERMS;
    }
    classes.push(("process", PROCESS_PERMS));
    classes.push(("process2", PROCESS2_PERMS));
    classes.push(("security", SECURITY_PERMS));
    classes.push(("shm", SHM_PERMS));
    classes.push(("sem", SEM_PERMS));
    classes.push(("msgq", MSGQ_PERMS));
    classes.push(("msg", MSG_PERMS));
    classes.push(("capability", CAPABILITY_PERMS));
    classes.push(("capability2", CAPABILITY2_PERMS));
    classes.extend(SOCKET_CLASSES.iter().map(|&c| match c {
        c if CONNECTED_SOCKET_CLASSES.contains(&c) => (c, CONNECTED_SOCKET_PERMS),
        c if INET_SOCKET_CLASSES.contains(&c) => (c, INET_SOCKET_PERMS),
        "unix_stream_socket" => (c, UNIX_STREAM_SOCKET_PERMS),
        "unix_dgram_socket" => (c, UNIX_DGRAM_SOCKET_PERMS),
        c => (c, SOCKET_PERMS),
    }));
    Mapping::new(&classes)
}

/// One class's permission bits, resolved once.
#[derive(Clone, Copy, Debug)]
pub struct ClassPerms {
    pub class: ClassIdx,
    pub open: Perms,
    pub read: Perms,
    pub write: Perms,
    pub append: Perms,
    /// `map`: a file mapped (SELinux's `selinux_mmap_file` asks it of
    /// every file mapping; here of those made executable, and of the
    /// images an exec maps: crate::exec_memory).
    pub map: Perms,
    /// `execute`: an exec (files), a mapping made executable
    /// (crate::exec_memory).
    pub execute: Perms,
    pub execute_no_trans: Perms,
    pub entrypoint: Perms,
    /// `execmod` (files only): a written private mapping made
    /// executable (crate::exec_memory).
    pub execmod: Perms,
    pub setattr: Perms,
    pub relabelfrom: Perms,
    pub relabelto: Perms,
    pub unlink: Perms,
    pub link: Perms,
    pub rename: Perms,
    /// `create` (a supervised open's `O_CREAT`: crate::supervisor).
    pub create: Perms,
    /// `watch`, `watch_reads`: an inotify watch (crate::watches).
    pub watch: Perms,
    pub watch_reads: Perms,
}

/// The `dir` permissions the supervised calls check (crate::supervisor).
#[derive(Clone, Copy, Debug)]
pub struct DirOps {
    pub search: Perms,
    pub write: Perms,
    pub add_name: Perms,
    pub remove_name: Perms,
    pub reparent: Perms,
    pub rmdir: Perms,
}

impl ClassPerms {
    /// Everything an open of this class can ask for.
    pub fn any_open(&self) -> Perms {
        self.open | self.read | self.write | self.append
    }

    /// What an open with `flags` asks for.
    pub fn for_flags(&self, flags: u64) -> Perms {
        let flags = flags as i32;
        let mut perms = self.open;
        let acc = flags & libc::O_ACCMODE;
        if acc == libc::O_RDONLY || acc == libc::O_RDWR {
            perms |= self.read;
        }
        if acc == libc::O_WRONLY || acc == libc::O_RDWR || flags & libc::O_TRUNC != 0 {
            perms |= if flags & libc::O_APPEND != 0 { self.append } else { self.write };
        }
        perms
    }
}

/// The `process` permissions a signal needs, one per kind of signal.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SignalPerms {
    pub sigchld: Perms,
    pub sigkill: Perms,
    pub sigstop: Perms,
    pub signull: Perms,
    pub signal: Perms,
}

impl SignalPerms {
    /// What sending `sig` needs, as SELinux's `signal_to_av` says: 0
    /// (a probe) `signull`, SIGCHLD, SIGKILL and SIGSTOP their own,
    /// every other signal `signal`.
    pub fn of(&self, sig: i32) -> Perms {
        match sig {
            0 => self.signull,
            libc::SIGCHLD => self.sigchld,
            libc::SIGKILL => self.sigkill,
            libc::SIGSTOP => self.sigstop,
            _ => self.signal,
        }
    }
}

/// The checked classes, indexed by file type.
#[derive(Clone, Debug)]
pub struct Classes {
    by_kind: [Option<ClassPerms>; 7],
    pub process: ClassIdx,
    pub transition: Perms,
    pub setexec: Perms,
    /// An exec transition without it runs in secure-execution mode
    /// (crate::secure_exec).
    pub noatsecure: Perms,
    /// What sending a signal needs (crate::signals).
    pub(crate) signals: SignalPerms,
    /// An exec transition without it starts with the soft resource
    /// limits reset (crate::limits).
    pub rlimitinh: Perms,
    /// An exec transition without it starts with its signal state reset
    /// (crate::signal_state).
    pub siginh: Perms,
    /// A traced exec transition needs it from the tracer to the new
    /// domain (crate::entry::tracer).
    pub ptrace: Perms,
    /// `prlimit` of another process: setting, reading (crate::limits).
    pub setrlimit: Perms,
    pub getrlimit: Perms,
    /// `capset` of the process's own sets (crate::own_capabilities).
    pub setcap: Perms,
    /// Another process's scheduling: changing, reading (crate::sched).
    pub setsched: Perms,
    pub getsched: Perms,
    /// Another process's group, session (crate::process_ids).
    pub getpgid: Perms,
    pub getsession: Perms,
    /// A process's group changed (crate::process_ids).
    pub setpgid: Perms,
    /// An exec transition of a process sharing its working directory
    /// with another (crate::fs_sharing).
    pub share: Perms,
    /// Executable memory (crate::exec_memory).
    pub execmem: Perms,
    pub execstack: Perms,
    pub execheap: Perms,
    pub process2: ClassIdx,
    /// A transition from a mount that may not grant one needs it, or a
    /// bounded new domain (crate::exec_mount).
    pub nosuid_transition: Perms,
    pub security: ClassIdx,
    pub setenforce: Perms,
    pub setbool: Perms,
    pub load_policy: Perms,
    pub capability: ClassIdx,
    pub capability2: ClassIdx,
    pub(crate) dir_ops: DirOps,
    pub(crate) shm: IpcPerms,
    pub(crate) sem: IpcPerms,
    pub(crate) msgq: IpcPerms,
    pub(crate) msg: MsgPerms,
    /// Each of [`SOCKET_CLASSES`], in that order.
    sockets: Vec<SocketPerms>,
}

fn resolve(m: &Mapping, name: &str) -> Option<ClassPerms> {
    let class = m.class(name)?;
    let p = |n: &str| m.perms(class, &[n]).unwrap_or(Perms::NONE);
    Some(ClassPerms {
        class,
        open: p("open"),
        read: p("read"),
        // A directory is never opened for writing; its `write` is the
        // supervised calls' (DirOps).
        write: if name == "dir" { Perms::NONE } else { p("write") },
        append: p("append"),
        map: p("map"),
        execute: p("execute"),
        execute_no_trans: p("execute_no_trans"),
        entrypoint: p("entrypoint"),
        execmod: p("execmod"),
        setattr: p("setattr"),
        relabelfrom: p("relabelfrom"),
        relabelto: p("relabelto"),
        unlink: p("unlink"),
        link: p("link"),
        rename: p("rename"),
        create: p("create"),
        watch: p("watch"),
        watch_reads: p("watch_reads"),
    })
}

impl Classes {
    pub fn new(m: &Mapping) -> Option<Classes> {
        let mut by_kind = [None; 7];
        for (slot, name) in by_kind.iter_mut().zip(FILE_CLASSES) {
            *slot = Some(resolve(m, name)?);
        }
        let process = m.class("process")?;
        let process2 = m.class("process2")?;
        let security = m.class("security")?;
        let ipc = |name: &str| -> Option<IpcPerms> {
            let class = m.class(name)?;
            let p = |n: &str| m.perms(class, &[n]);
            Some(IpcPerms {
                class,
                create: p("create")?,
                destroy: p("destroy")?,
                getattr: p("getattr")?,
                setattr: p("setattr")?,
                read: p("read")?,
                write: p("write")?,
                associate: p("associate")?,
                lock: p("lock").unwrap_or(Perms::NONE),
                enqueue: p("enqueue").unwrap_or(Perms::NONE),
            })
        };
        let (shm, sem, msgq) = (ipc("shm")?, ipc("sem")?, ipc("msgq")?);
        let msg = {
            let class = m.class("msg")?;
            MsgPerms { class, send: m.perms(class, &["send"])?, receive: m.perms(class, &["receive"])? }
        };
        let dir = m.class("dir")?;
        let d = |n: &str| m.perms(dir, &[n]).unwrap_or(Perms::NONE);
        let dir_ops = DirOps {
            search: d("search"),
            write: d("write"),
            add_name: d("add_name"),
            remove_name: d("remove_name"),
            reparent: d("reparent"),
            rmdir: d("rmdir"),
        };
        Some(Classes {
            by_kind,
            process,
            transition: m.perms(process, &["transition"])?,
            setexec: m.perms(process, &["setexec"])?,
            noatsecure: m.perms(process, &["noatsecure"])?,
            signals: SignalPerms {
                sigchld: m.perms(process, &["sigchld"])?,
                sigkill: m.perms(process, &["sigkill"])?,
                sigstop: m.perms(process, &["sigstop"])?,
                signull: m.perms(process, &["signull"])?,
                signal: m.perms(process, &["signal"])?,
            },
            rlimitinh: m.perms(process, &["rlimitinh"])?,
            siginh: m.perms(process, &["siginh"])?,
            ptrace: m.perms(process, &["ptrace"])?,
            setrlimit: m.perms(process, &["setrlimit"])?,
            getrlimit: m.perms(process, &["getrlimit"])?,
            setcap: m.perms(process, &["setcap"])?,
            setsched: m.perms(process, &["setsched"])?,
            getsched: m.perms(process, &["getsched"])?,
            getpgid: m.perms(process, &["getpgid"])?,
            getsession: m.perms(process, &["getsession"])?,
            setpgid: m.perms(process, &["setpgid"])?,
            share: m.perms(process, &["share"])?,
            execmem: m.perms(process, &["execmem"])?,
            execstack: m.perms(process, &["execstack"])?,
            execheap: m.perms(process, &["execheap"])?,
            process2,
            nosuid_transition: m.perms(process2, &["nosuid_transition"])?,
            security,
            setenforce: m.perms(security, &["setenforce"])?,
            setbool: m.perms(security, &["setbool"])?,
            load_policy: m.perms(security, &["load_policy"])?,
            capability: m.class("capability")?,
            capability2: m.class("capability2")?,
            dir_ops,
            shm,
            sem,
            msgq,
            msg,
            sockets: SOCKET_CLASSES
                .iter()
                .map(|&name| {
                    let class = m.class(name)?;
                    let p = |n: &str| m.perms(class, &[n]).unwrap_or(Perms::NONE);
                    Some(SocketPerms {
                        class,
                        create: m.perms(class, &["create"])?,
                        bind: p("bind"),
                        connect: p("connect"),
                        listen: p("listen"),
                        name_bind: p("name_bind"),
                        node_bind: p("node_bind"),
                        name_connect: p("name_connect"),
                        peer: match name {
                            "unix_stream_socket" => p("connectto"),
                            "unix_dgram_socket" => p("sendto"),
                            _ => Perms::NONE,
                        },
                    })
                })
                .collect::<Option<_>>()?,
        })
    }

    /// Socket class `name` (one of [`SOCKET_CLASSES`]).
    pub(crate) fn socket(&self, name: &str) -> Option<SocketPerms> {
        let i = SOCKET_CLASSES.iter().position(|&c| c == name)?;
        self.sockets.get(i).copied()
    }

    /// The class of an object with `st_mode` `mode`.
    pub fn of_mode(&self, mode: u32) -> Option<ClassPerms> {
        let i = match mode & libc::S_IFMT {
            libc::S_IFREG => 0,
            libc::S_IFDIR => 1,
            libc::S_IFLNK => 2,
            libc::S_IFCHR => 3,
            libc::S_IFBLK => 4,
            libc::S_IFSOCK => 5,
            libc::S_IFIFO => 6,
            _ => return None,
        };
        self.by_kind[i]
    }

    pub fn file(&self) -> Option<ClassPerms> {
        self.by_kind[0]
    }
}

/// How long to wait for a thread that is still "running": the opener
/// queues the event, then goes to sleep, and a fast responder can look in
/// between (or the opener was preempted there, on a busy machine).
const RUNNING_WAIT: std::time::Duration = std::time::Duration::from_millis(50);

/// `__FMODE_EXEC` (asm-generic/fcntl.h): the flag the kernel's exec
/// opens carry (`do_open_execat`), as [`opener_flags`] reports them.
pub const FMODE_EXEC_FLAG: u64 = 0o40;

/// The open flags of the call thread `tid` is blocked in, when they can
/// be known (see the module docs).
pub fn opener_flags(tid: u32) -> Option<u64> {
    let line = read_blocked_syscall(&format!("/proc/{tid}/task/{tid}/syscall"))?;
    match parse_syscall_line(&line)? {
        OpenCall::Flags(flags) => Some(flags),
        OpenCall::Exec => Some(libc::O_RDONLY as u64 | FMODE_EXEC_FLAG),
        OpenCall::FlagsInMemory => None,
    }
}

/// The thread's syscall line once it is blocked (not "running").
fn read_blocked_syscall(path: &str) -> Option<String> {
    let start = std::time::Instant::now();
    for attempt in 0.. {
        let line = fs::read_to_string(path).ok()?;
        if !line.starts_with("running") {
            return Some(line);
        }
        if start.elapsed() > RUNNING_WAIT {
            return None;
        }
        if attempt < 50 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
    }
    None
}

/// An open-type call in `/proc/.../syscall` format.
#[derive(Debug, PartialEq, Eq)]
enum OpenCall {
    /// The flags, an argument of the call.
    Flags(u64),
    /// `openat2`: the flags are in the caller's memory.
    FlagsInMemory,
    /// `execve`/`execveat`: the kernel opens the program for reading.
    Exec,
}

fn parse_syscall_line(line: &str) -> Option<OpenCall> {
    let mut words = line.split_ascii_whitespace();
    let nr: i64 = words.next()?.parse().ok()?;
    let args: Vec<u64> =
        words.take(6).map(|w| u64::from_str_radix(w.trim_start_matches("0x"), 16)).collect::<Result<_, _>>().ok()?;
    let arg = |i: usize| args.get(i).copied();
    match nr {
        libc::SYS_open => arg(1).map(OpenCall::Flags),
        libc::SYS_openat => arg(2).map(OpenCall::Flags),
        libc::SYS_creat => Some(OpenCall::Flags((libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC) as u64)),
        libc::SYS_openat2 => Some(OpenCall::FlagsInMemory),
        libc::SYS_open_by_handle_at => arg(2).map(OpenCall::Flags),
        libc::SYS_execve | libc::SYS_execveat => Some(OpenCall::Exec),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syscall_lines() {
        let openat = format!("{} 0xffffff9c 0x7ffc 0x241 0x1b6 0x0 0x0 0x7ffc 0x7f00\n", libc::SYS_openat);
        assert_eq!(parse_syscall_line(&openat), Some(OpenCall::Flags(0x241)));
        let how = format!("{} 0xffffff9c 0x7ffc 0x7ffd1000 0x18 0x0 0x0 0x7ffc 0x7f00", libc::SYS_openat2);
        assert_eq!(parse_syscall_line(&how), Some(OpenCall::FlagsInMemory));
        let exec = format!("{} 0x55d0 0x7ffc 0x7ffd 0x0 0x0 0x0 0x7ffc 0x7f00", libc::SYS_execve);
        assert_eq!(parse_syscall_line(&exec), Some(OpenCall::Exec));
        if cfg!(target_arch = "x86_64") {
            // int 0x80 open (i386 number 5) reads as x86-64 fstat: unknown.
            assert_eq!(parse_syscall_line("5 0x8000 0x2 0x0 0x0 0x0 0x0 0xffd0 0xf7f0"), None);
        }
        assert_eq!(parse_syscall_line("0 0x3 0x1 0x2 0x0 0x0 0x0 0x1 0x2"), None, "read is not an open");
        assert_eq!(parse_syscall_line("running"), None);
        assert_eq!(parse_syscall_line("-1 0x7ffc 0x7f00"), None);
        assert_eq!(parse_syscall_line(&format!("{} 0xzz", libc::SYS_openat)), None);
    }

    #[test]
    fn flags_map_like_the_kernel() {
        let m = mapping().unwrap();
        let c = resolve(&m, "file").unwrap();
        assert_eq!(c.for_flags(libc::O_RDONLY as u64), c.open | c.read);
        assert_eq!(c.for_flags(libc::O_WRONLY as u64), c.open | c.write);
        assert_eq!(c.for_flags((libc::O_WRONLY | libc::O_APPEND) as u64), c.open | c.append);
        assert_eq!(c.for_flags(libc::O_RDWR as u64), c.open | c.read | c.write);
        assert_eq!(c.for_flags((libc::O_RDONLY | libc::O_TRUNC) as u64), c.open | c.read | c.write);
    }
}
