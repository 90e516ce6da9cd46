//! The client side of the control socket, used by the `rampart` command
//! (`status`, `setenforce`, `setbool`, `reload`, `run`).
//!
//! Every failure becomes a [`ControlError`] whose text tells the user what
//! went wrong and what to do: no daemon at the path, not root, a reply
//! that is not the protocol, a daemon that does not answer in time, or the
//! daemon's own refusal.

use std::io::{self, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::protocol::{LineError, LineReader, ProtocolError, Reply, Request, MAX_REPLY_LINE, PERMISSION_DENIED};
use super::{ExecGrant, Status};

/// How long [`Client`] waits for a reply unless told otherwise. A reload
/// of a large policy takes a second or two; this leaves room.
pub const DEFAULT_CLIENT_TIMEOUT: Duration = Duration::from_secs(30);

/// What went wrong talking to `rampartd`.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// Nothing listens at the path.
    #[error("no daemon listening at {path} (is rampartd running? pass --socket to use another socket)")]
    NotRunning { path: PathBuf },
    /// The socket or the daemon refused us for not being root, or (at the
    /// connect) the policy refused our domain the socket file.
    #[error("permission denied at {path}: the control socket accepts only root (from a confined domain, only where its policy lets it write the socket file); run this as root")]
    PermissionDenied { path: PathBuf },
    /// The request cannot be sent (too long, NUL in a string).
    #[error("invalid request: {0}")]
    InvalidRequest(ProtocolError),
    /// The reply is not the protocol.
    #[error("malformed reply from rampartd: {0}; is the daemon the same version as this client?")]
    MalformedReply(String),
    /// No reply in time.
    #[error("rampartd did not reply within {0:?}; it may be busy (reloading?) or hung, try again or check its log")]
    Timeout(Duration),
    /// The daemon closed the connection without replying.
    #[error("rampartd closed the connection without replying; check its log")]
    Closed,
    /// The daemon answered `{"ok":false}`; its text says why.
    #[error("rampartd: {0}")]
    Refused(String),
    /// Any other I/O error.
    #[error("control socket: {0}")]
    Io(io::Error),
}

impl From<io::Error> for ControlError {
    /// Unwraps the `ControlError` that [`Client::connect`] puts inside its
    /// `io::Error`, so `?` keeps the precise variant.
    fn from(e: io::Error) -> ControlError {
        if e.get_ref().is_some_and(|inner| inner.is::<ControlError>()) {
            let kind = e.kind();
            if let Some(Ok(control)) = e.into_inner().map(|inner| inner.downcast::<ControlError>()) {
                return *control;
            }
            return ControlError::Io(kind.into());
        }
        ControlError::Io(e)
    }
}

/// A connection to `rampartd`'s control socket. One connection may carry
/// several requests; the daemon closes it after a few seconds or a few
/// dozen requests, so open a new one per command.
#[derive(Debug)]
pub struct Client {
    stream: UnixStream,
    lines: LineReader,
    path: PathBuf,
    timeout: Duration,
}

impl Client {
    /// Connects to the control socket at `path`. The error's text (and,
    /// through `ControlError::from`, its variant) says whether no daemon
    /// listens there or we may not connect.
    pub fn connect(path: impl AsRef<Path>) -> io::Result<Client> {
        let path = path.as_ref();
        let stream = UnixStream::connect(path).map_err(|e| {
            let path = path.to_path_buf();
            match e.kind() {
                io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused => {
                    io::Error::new(e.kind(), ControlError::NotRunning { path })
                }
                io::ErrorKind::PermissionDenied => io::Error::new(e.kind(), ControlError::PermissionDenied { path }),
                _ => io::Error::new(e.kind(), format!("cannot connect to {}: {e}", path.display())),
            }
        })?;
        stream.set_read_timeout(Some(DEFAULT_CLIENT_TIMEOUT))?;
        stream.set_write_timeout(Some(DEFAULT_CLIENT_TIMEOUT))?;
        Ok(Client {
            stream,
            lines: LineReader::new(MAX_REPLY_LINE),
            path: path.to_path_buf(),
            timeout: DEFAULT_CLIENT_TIMEOUT,
        })
    }

    /// How long to wait for each reply (and for each write).
    pub fn set_timeout(&mut self, timeout: Duration) -> io::Result<()> {
        self.stream.set_read_timeout(Some(timeout))?;
        self.stream.set_write_timeout(Some(timeout))?;
        self.timeout = timeout;
        Ok(())
    }

    /// Sends one request and reads its reply. `{"ok":false}` replies come
    /// back as [`ControlError::Refused`] (or
    /// [`ControlError::PermissionDenied`]), so `Ok` is always a success
    /// ([`Reply::Done`], [`Reply::Status`] or [`Reply::Seqno`]).
    pub fn request(&mut self, request: &Request) -> Result<Reply, ControlError> {
        let line = request.to_line().map_err(ControlError::InvalidRequest)?;
        // If the daemon has already answered and closed (a non-root peer
        // is refused before its request is read), the write fails but the
        // answer is waiting: read it rather than report a broken pipe.
        let written = self.stream.write_all(&line);
        let reply = match self.lines.read_line(&mut self.stream) {
            Ok(Some(reply)) => reply,
            Ok(None) | Err(LineError::Truncated { .. }) => {
                return Err(match written {
                    Err(e) if !is_disconnect(&e) => ControlError::Io(e),
                    _ => ControlError::Closed,
                });
            }
            Err(LineError::TimedOut) => return Err(ControlError::Timeout(self.timeout)),
            Err(LineError::TooLong { limit }) => {
                return Err(ControlError::MalformedReply(format!("reply longer than {limit} bytes")))
            }
            Err(LineError::Io(e)) if is_disconnect(&e) => return Err(ControlError::Closed),
            Err(LineError::Io(e)) => return Err(ControlError::Io(e)),
        };
        match Reply::parse(&reply).map_err(|e| ControlError::MalformedReply(e.to_string()))? {
            Reply::Error(e) if e == PERMISSION_DENIED => {
                Err(ControlError::PermissionDenied { path: self.path.clone() })
            }
            Reply::Error(e) => Err(ControlError::Refused(e)),
            ok => Ok(ok),
        }
    }

    /// `{"op":"status"}`.
    pub fn status(&mut self) -> Result<Status, ControlError> {
        match self.request(&Request::Status)? {
            Reply::Status(status) => Ok(status),
            other => Err(unexpected("status", &other)),
        }
    }

    /// `{"op":"setenforce","enforcing":B}`.
    pub fn set_enforcing(&mut self, enforcing: bool) -> Result<(), ControlError> {
        self.expect_done(&Request::SetEnforce { enforcing })
    }

    /// `{"op":"reload"}`; the new policy sequence number.
    pub fn reload(&mut self) -> Result<u64, ControlError> {
        self.expect_seqno(&Request::Reload)
    }

    /// `{"op":"setbool","name":N,"value":B}`; the new policy sequence
    /// number.
    pub fn set_boolean(&mut self, name: &str, value: bool) -> Result<u64, ControlError> {
        self.expect_seqno(&Request::SetBool { name: name.to_string(), value })
    }

    /// `{"op":"exec-context","context":C,"force":B,"path":P}`: this
    /// process's next exec (of `path`, if given) enters `context` (the
    /// daemon takes our pid from the kernel). Returns what to give up
    /// before the exec, or `None` from a daemon that does not say.
    pub fn set_exec_context(
        &mut self,
        context: &str,
        force: bool,
        path: Option<&str>,
    ) -> Result<Option<ExecGrant>, ControlError> {
        self.set_exec_labels(Some(context), None, force, path, None, false)
    }

    /// [`Client::set_exec_context`] with an AppArmor profile to enter
    /// (`"apparmor":P`); without `context` the SELinux domain is kept.
    /// `supervise`: the number of this process's seccomp listener, for
    /// the daemon to serve (crate::supervised); `supervise_opens`: its
    /// filter also hands over opens for writing.
    pub fn set_exec_labels(
        &mut self,
        context: Option<&str>,
        apparmor: Option<&str>,
        force: bool,
        path: Option<&str>,
        supervise: Option<i32>,
        supervise_opens: bool,
    ) -> Result<Option<ExecGrant>, ControlError> {
        let request = Request::ExecContext {
            context: context.map(str::to_owned),
            force,
            path: path.map(str::to_owned),
            apparmor: apparmor.map(str::to_owned),
            supervise,
            supervise_opens,
        };
        match self.request(&request)? {
            Reply::ExecGranted(grant) => Ok(Some(grant)),
            Reply::Done => Ok(None),
            other => Err(unexpected(request.op(), &other)),
        }
    }

    /// `{"op":"labels-changed"}`.
    pub fn labels_changed(&mut self) -> Result<(), ControlError> {
        self.expect_done(&Request::LabelsChanged)
    }

    fn expect_done(&mut self, request: &Request) -> Result<(), ControlError> {
        match self.request(request)? {
            Reply::Done => Ok(()),
            other => Err(unexpected(request.op(), &other)),
        }
    }

    fn expect_seqno(&mut self, request: &Request) -> Result<u64, ControlError> {
        match self.request(request)? {
            Reply::Seqno(n) => Ok(n),
            other => Err(unexpected(request.op(), &other)),
        }
    }
}

fn is_disconnect(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset)
}

fn unexpected(op: &str, reply: &Reply) -> ControlError {
    let got = match reply {
        Reply::Done => "a bare ok",
        Reply::Status(_) => "a status",
        Reply::Seqno(_) => "a seqno",
        Reply::ExecGranted(_) => "an exec grant",
        Reply::Error(_) => "an error",
    };
    ControlError::MalformedReply(format!("{got} reply to {op}"))
}
