//! The control protocol: the only code that parses bytes from the control
//! socket.
//!
//! # Wire format
//!
//! A client sends requests and reads replies, each a single line of JSON
//! ended by `'\n'`. A connection may carry one request or several (the
//! server answers them in order, up to a per-connection limit).
//!
//! ```text
//! {"op":"status"}                                  -> {"ok":true,"status":{...}}
//! {"op":"setenforce","enforcing":true}             -> {"ok":true}
//! {"op":"reload"}                                  -> {"ok":true,"seqno":42}
//! {"op":"setbool","name":"NAME","value":false}     -> {"ok":true,"seqno":43}
//! {"op":"exec-context","context":"CTX","force":false,"path":"P","apparmor":"PROFILE"} -> {"ok":true,"capabilities":N,"revoke":[FD...],"forbid":["truncate",...]}
//! {"op":"labels-changed"}                          -> {"ok":true}
//! anything wrong                                   -> {"ok":false,"error":"what happened and what to do"}
//! ```
//!
//! `force` (default `false`), `path` and `apparmor` may be left out, and
//! `context` when `apparmor` is given (the caller's domain is kept);
//! every other field is required, and fields a request does not define are refused, so a
//! typo is reported instead of silently ignored. Replies may grow new fields;
//! clients ignore fields they do not know.
//!
//! # Why line-delimited JSON
//!
//! - Framing is one byte: a reader never needs a length prefix it would
//!   have to trust, and a line longer than [`MAX_LINE`] is refused before
//!   it is parsed, so a client cannot make the daemon buffer more than
//!   that.
//! - After a malformed request the framing is intact (the next line is the
//!   next request), so one bad message costs one error reply, not the
//!   connection.
//! - It is readable and writable by hand (`socat - UNIX:/run/rampart/rampartd.sock`)
//!   and by any language, which matters for a root-only admin interface
//!   that scripts will drive.
//! - serde gives typed [`Request`] and [`Reply`] enums, so the daemon
//!   never handles an untyped value, and serde_json's error messages say
//!   what is wrong and where (line and column): both are read through
//!   flat structs, never a buffered tagged enum, which would lose the
//!   position.
//!
//! Everything that can be wrong with a line (too long, not UTF-8, a NUL
//! byte, not JSON, an unknown op, a missing field, a wrong type) becomes a
//! [`ProtocolError`] whose text says what was wrong and what a valid
//! request looks like. Nothing in this module panics on any input.

use std::fmt;
use std::io::{self, Read};

use serde::de::IntoDeserializer;
use serde::{Deserialize, Deserializer, Serialize};

use super::{ExecGrant, Status};

/// The longest request line the server accepts, in bytes, not counting
/// the terminating `'\n'`. A line that reaches this length without a
/// newline is refused and the connection closed.
pub const MAX_LINE: usize = 4096;

/// The longest reply line a [`Client`](super::Client) accepts. Replies
/// are small (a status is well under 1 KiB); the bound only keeps a
/// misbehaving peer from filling the client's memory.
pub const MAX_REPLY_LINE: usize = 1 << 20;

/// The error text sent to a peer that is not root.
pub const PERMISSION_DENIED: &str = "permission denied: the control socket accepts only root";

/// One request, as sent on the wire (`{"op":"...", ...}`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", try_from = "WireRequest")]
pub enum Request {
    /// `{"op":"status"}`: counters and mode; answered with
    /// [`Reply::Status`].
    #[serde(rename = "status")]
    Status,
    /// `{"op":"setenforce","enforcing":B}`: switch between enforcing and
    /// permissive; answered with [`Reply::Done`].
    #[serde(rename = "setenforce")]
    SetEnforce { enforcing: bool },
    /// `{"op":"reload"}`: reload the policy and file_contexts; answered
    /// with [`Reply::Seqno`].
    #[serde(rename = "reload")]
    Reload,
    /// `{"op":"setbool","name":N,"value":B}`: set one policy boolean;
    /// answered with [`Reply::Seqno`].
    #[serde(rename = "setbool")]
    SetBool { name: String, value: bool },
    /// `{"op":"exec-context","context":C,"force":B,"path":P}`: the next
    /// exec of the *connecting* process (its pid comes from the kernel,
    /// never from the message) enters `context`; answered with
    /// [`Reply::Done`]. `path`, optional, names the file the client will
    /// execute, so the daemon can check the transition before the exec
    /// even when the file is on a mount it does not watch. `apparmor`,
    /// optional, names the AppArmor profile the exec enters (`aa-exec
    /// -p`); with it `context` may be left out: the caller's SELinux
    /// domain is kept. `supervise`, optional, is the number of a seccomp
    /// listener descriptor the caller holds (crate::supervised): the
    /// daemon takes a copy (`pidfd_getfd`) and serves the supervised
    /// calls of every process under it. `supervise_opens`: that
    /// listener's filter also hands over every open asking to write or
    /// truncate (crate::supervised, "Opens").
    #[serde(rename = "exec-context")]
    ExecContext {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        context: Option<String>,
        #[serde(default)]
        force: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        apparmor: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        supervise: Option<i32>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        supervise_opens: bool,
    },
    /// `{"op":"labels-changed"}`: files were relabeled; answered with
    /// [`Reply::Done`].
    #[serde(rename = "labels-changed")]
    LabelsChanged,
}

/// How [`Request`] is read: one flat object, deserialized straight from
/// the text, then checked against the fields its op takes.
///
/// Why not the internally tagged enum itself: serde buffers such an
/// enum's fields before it picks the variant, and errors raised from that
/// buffer carry no position (`invalid type: string "yes", expected a
/// boolean`, neither line nor column). Read from a struct, every serde_json
/// error says where.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a request object")]
struct WireRequest {
    #[serde(deserialize_with = "op_name")]
    op: Op,
    enforcing: Option<bool>,
    name: Option<String>,
    value: Option<bool>,
    context: Option<String>,
    force: Option<bool>,
    path: Option<String>,
    apparmor: Option<String>,
    supervise: Option<i32>,
    supervise_opens: Option<bool>,
}

/// The `op` of a request, as on the wire.
#[derive(Clone, Copy, Deserialize)]
enum Op {
    #[serde(rename = "status")]
    Status,
    #[serde(rename = "setenforce")]
    SetEnforce,
    #[serde(rename = "reload")]
    Reload,
    #[serde(rename = "setbool")]
    SetBool,
    #[serde(rename = "exec-context")]
    ExecContext,
    #[serde(rename = "labels-changed")]
    LabelsChanged,
}

/// An [`Op`] from a string only: a derived enum would also take its
/// index (`"op":1`).
fn op_name<'de, D: Deserializer<'de>>(d: D) -> Result<Op, D::Error> {
    let name = String::deserialize(d)?;
    Op::deserialize(IntoDeserializer::<D::Error>::into_deserializer(name.as_str()))
}

impl TryFrom<WireRequest> for Request {
    type Error = String;

    fn try_from(wire: WireRequest) -> Result<Request, String> {
        let WireRequest { op, enforcing, name, value, context, force, path, apparmor, supervise, supervise_opens } =
            wire;
        let given = [
            ("enforcing", enforcing.is_some()),
            ("name", name.is_some()),
            ("value", value.is_some()),
            ("context", context.is_some()),
            ("force", force.is_some()),
            ("path", path.is_some()),
            ("apparmor", apparmor.is_some()),
            ("supervise", supervise.is_some()),
            ("supervise_opens", supervise_opens.is_some()),
        ];
        let request = match op {
            Op::Status => Request::Status,
            Op::SetEnforce => Request::SetEnforce { enforcing: required("setenforce", "enforcing", enforcing)? },
            Op::Reload => Request::Reload,
            Op::SetBool => Request::SetBool {
                name: required("setbool", "name", name)?,
                value: required("setbool", "value", value)?,
            },
            Op::ExecContext => Request::ExecContext {
                context: match apparmor {
                    Some(_) => context,
                    None => Some(required("exec-context", "context", context)?),
                },
                force: force.unwrap_or(false),
                path,
                apparmor,
                supervise,
                supervise_opens: supervise_opens.unwrap_or(false),
            },
            Op::LabelsChanged => Request::LabelsChanged,
        };
        let takes = request.fields();
        match given.iter().find(|(field, present)| *present && !takes.contains(field)) {
            None => Ok(request),
            Some((field, _)) if takes.is_empty() => {
                Err(format!("unknown field `{field}`: op `{}` takes none", request.op()))
            }
            Some((field, _)) => {
                Err(format!("unknown field `{field}`: op `{}` takes `{}`", request.op(), takes.join("`, `")))
            }
        }
    }
}

/// `value`, or an error naming the field `op` is missing.
fn required<T>(op: &str, field: &str, value: Option<T>) -> Result<T, String> {
    value.ok_or_else(|| format!("missing field `{field}` for op `{op}`"))
}

impl Request {
    /// The fields besides `op` that the request takes on the wire.
    fn fields(&self) -> &'static [&'static str] {
        match self {
            Request::Status | Request::Reload | Request::LabelsChanged => &[],
            Request::SetEnforce { .. } => &["enforcing"],
            Request::SetBool { .. } => &["name", "value"],
            Request::ExecContext { .. } => &["context", "force", "path", "apparmor", "supervise", "supervise_opens"],
        }
    }

    /// The op name as on the wire, for messages.
    pub fn op(&self) -> &'static str {
        match self {
            Request::Status => "status",
            Request::SetEnforce { .. } => "setenforce",
            Request::Reload => "reload",
            Request::SetBool { .. } => "setbool",
            Request::ExecContext { .. } => "exec-context",
            Request::LabelsChanged => "labels-changed",
        }
    }

    /// The request as one wire line, `'\n'` included. Fails if it would
    /// be longer than [`MAX_LINE`] or carries a string the server would
    /// refuse, so a client learns that before sending.
    pub fn to_line(&self) -> Result<Vec<u8>, ProtocolError> {
        self.check_strings()?;
        let mut line = serde_json::to_vec(self).map_err(|e| ProtocolError::Encode(e.to_string()))?;
        if line.len() > MAX_LINE {
            return Err(ProtocolError::TooLong { limit: MAX_LINE });
        }
        line.push(b'\n');
        Ok(line)
    }

    /// Strings that reach the daemon go on to C interfaces and
    /// `/proc/<pid>/attr`-like semantics, where a NUL would truncate them
    /// silently; a JSON escape (`\u0000`) could smuggle one past the raw
    /// byte check, so the decoded values are checked too.
    fn check_strings(&self) -> Result<(), ProtocolError> {
        let (field, value) = match self {
            Request::SetBool { name, .. } => ("name", name),
            Request::ExecContext { path: Some(path), .. } if path.is_empty() || path.contains('\0') => ("path", path),
            Request::ExecContext { apparmor: Some(a), .. } if a.is_empty() || a.contains('\0') => ("apparmor", a),
            Request::ExecContext { context: Some(context), .. } => ("context", context),
            _ => return Ok(()),
        };
        if value.is_empty() {
            return Err(ProtocolError::EmptyField { op: self.op(), field });
        }
        if value.contains('\0') {
            return Err(ProtocolError::NulInField { op: self.op(), field });
        }
        Ok(())
    }
}

/// Parses one request line (without its `'\n'`).
pub fn parse_request(line: &[u8]) -> Result<Request, ProtocolError> {
    if line.len() > MAX_LINE {
        return Err(ProtocolError::TooLong { limit: MAX_LINE });
    }
    if let Some(at) = line.iter().position(|&b| b == 0) {
        return Err(ProtocolError::NulByte { at });
    }
    let text = std::str::from_utf8(line).map_err(|e| ProtocolError::NotUtf8 { at: e.valid_up_to() })?;
    if text.trim().is_empty() {
        return Err(ProtocolError::Empty);
    }
    // A derived struct also reads an array, field by position; a request
    // is an object.
    let body = text.trim_start();
    if body.starts_with('[') {
        let column = text.len() - body.len() + 1;
        return Err(ProtocolError::Json(format!(
            "invalid type: array, expected a request object at line 1 column {column}"
        )));
    }
    let request: Request = serde_json::from_str(text).map_err(|e| ProtocolError::Json(e.to_string()))?;
    request.check_strings()?;
    Ok(request)
}

/// One reply. On the wire every reply is an object with `"ok"`:
/// `{"ok":true}`, `{"ok":true,"status":{...}}`, `{"ok":true,"seqno":N}`
/// or `{"ok":false,"error":"..."}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "WireReply", try_from = "WireReply")]
pub enum Reply {
    /// `{"ok":true}`: done, nothing to report.
    Done,
    /// `{"ok":true,"status":{...}}`.
    Status(Status),
    /// `{"ok":true,"seqno":N}`: the policy sequence number after the
    /// change.
    Seqno(u64),
    /// `{"ok":true,"capabilities":N,"revoke":[FD...]}`: an exec context
    /// was set; bit `i` of N is capability `i` (`CAP_CHOWN` is 0), those
    /// the new domain may use, `revoke` (left out when empty) the
    /// caller's descriptors it may not use, and `forbid` (left out when
    /// empty) what it may do to no file at all.
    ExecGranted(ExecGrant),
    /// `{"ok":false,"error":"..."}`: what went wrong and what to do.
    Error(String),
}

impl Reply {
    /// An error reply.
    pub fn error(message: impl fmt::Display) -> Reply {
        Reply::Error(message.to_string())
    }

    /// The reply as one wire line, `'\n'` included.
    pub fn to_line(&self) -> Vec<u8> {
        let mut line = match serde_json::to_vec(self) {
            Ok(line) => line,
            // Serializing a WireReply cannot fail (no maps with non-string
            // keys, no custom Serialize); answer something valid anyway.
            Err(_) => br#"{"ok":false,"error":"internal error: the reply could not be encoded"}"#.to_vec(),
        };
        line.push(b'\n');
        line
    }

    /// Parses one reply line (without its `'\n'`).
    pub fn parse(line: &[u8]) -> Result<Reply, ProtocolError> {
        let text = std::str::from_utf8(line).map_err(|e| {
            ProtocolError::BadReply(format!("not valid UTF-8 (bad byte at offset {})", e.valid_up_to()))
        })?;
        serde_json::from_str(text).map_err(|e| ProtocolError::BadReply(e.to_string()))
    }
}

/// The flat wire shape of [`Reply`]. serde cannot tag an enum with a
/// boolean, so the enum goes through this struct, and the conversion back
/// refuses combinations that are not one of the four replies.
#[derive(Serialize, Deserialize)]
struct WireReply {
    ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<Status>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    seqno: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    capabilities: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    revoke: Option<Vec<i32>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    forbid: Option<Vec<crate::sandbox::Forbidden>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

impl From<Reply> for WireReply {
    fn from(reply: Reply) -> WireReply {
        let mut wire = WireReply {
            ok: true,
            status: None,
            seqno: None,
            capabilities: None,
            revoke: None,
            forbid: None,
            error: None,
        };
        match reply {
            Reply::Done => {}
            Reply::Status(status) => wire.status = Some(finite_status(status)),
            Reply::Seqno(seqno) => wire.seqno = Some(seqno),
            Reply::ExecGranted(grant) => {
                wire.capabilities = Some(grant.capabilities);
                wire.revoke = (!grant.revoke.is_empty()).then_some(grant.revoke);
                wire.forbid = (!grant.forbid.is_empty()).then_some(grant.forbid);
            }
            Reply::Error(error) => {
                wire.ok = false;
                wire.error = Some(error);
            }
        }
        wire
    }
}

impl TryFrom<WireReply> for Reply {
    type Error = String;

    fn try_from(wire: WireReply) -> Result<Reply, String> {
        match wire {
            WireReply { ok: false, error: Some(error), .. } => Ok(Reply::Error(error)),
            WireReply { ok: false, error: None, .. } => Err("\"ok\":false without an \"error\" text".to_string()),
            WireReply { ok: true, error: Some(_), .. } => Err("\"ok\":true with an \"error\" text".to_string()),
            WireReply { ok: true, capabilities: None, revoke: Some(_), .. }
            | WireReply { ok: true, capabilities: None, forbid: Some(_), .. } => {
                Err("\"revoke\" or \"forbid\" without \"capabilities\"".to_string())
            }
            WireReply { ok: true, status, seqno, capabilities, revoke, forbid, .. } => {
                match (status, seqno, capabilities) {
                    (None, None, None) => Ok(Reply::Done),
                    (Some(status), None, None) => Ok(Reply::Status(status)),
                    (None, Some(seqno), None) => Ok(Reply::Seqno(seqno)),
                    (None, None, Some(capabilities)) => {
                        let (revoke, forbid) = (revoke.unwrap_or_default(), forbid.unwrap_or_default());
                        Ok(Reply::ExecGranted(ExecGrant { capabilities, revoke, forbid }))
                    }
                    _ => Err("more than one of \"status\", \"seqno\" and \"capabilities\" in one reply".to_string()),
                }
            }
        }
    }
}

/// serde_json writes a NaN or infinity as `null`, which would then not
/// read back as an `f64`: a rate computed over an empty interval must not
/// make `rampart status` fail, so non-finite values are sent as 0.
fn finite_status(mut status: Status) -> Status {
    for x in [&mut status.events_per_second, &mut status.uptime_seconds] {
        if !x.is_finite() {
            *x = 0.0;
        }
    }
    status
}

/// What is wrong with a line. The text is sent to the client as is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProtocolError {
    /// A line reached the limit without a newline.
    TooLong { limit: usize },
    /// A raw NUL byte at this offset.
    NulByte { at: usize },
    /// Invalid UTF-8 at this offset.
    NotUtf8 { at: usize },
    /// An empty (or all-whitespace) line.
    Empty,
    /// Not JSON, or not a request: serde_json's message (it names the
    /// field, the expected type and the position).
    Json(String),
    /// A string field that must not be empty is.
    EmptyField { op: &'static str, field: &'static str },
    /// A string field contains NUL (written as `\u0000`).
    NulInField { op: &'static str, field: &'static str },
    /// A request could not be encoded (client side).
    Encode(String),
    /// A reply line is not a reply (client side).
    BadReply(String),
}

/// What a valid request looks like, appended to parse errors.
const EXAMPLE: &str = "send one JSON object per line, e.g. {\"op\":\"status\"}; ops: status, \
     setenforce {enforcing: bool}, reload, setbool {name: string, value: bool}, \
     exec-context {context: string (optional with apparmor), force: bool (optional), path: string (optional), \
     apparmor: string (optional)}, labels-changed";

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProtocolError::TooLong { limit } => write!(
                f,
                "request line too long: no newline within {limit} bytes; send each request as one JSON line \
                 of at most {limit} bytes ended by '\\n'"
            ),
            ProtocolError::NulByte { at } => {
                write!(f, "request contains a NUL byte at offset {at}; requests are JSON text without NUL bytes")
            }
            ProtocolError::NotUtf8 { at } => {
                write!(f, "request is not valid UTF-8 (bad byte at offset {at}); {EXAMPLE}")
            }
            ProtocolError::Empty => write!(f, "empty request line; {EXAMPLE}"),
            ProtocolError::Json(e) => write!(f, "malformed request: {e}; {EXAMPLE}"),
            ProtocolError::EmptyField { op, field } => {
                write!(f, "{op}: \"{field}\" is empty; give a non-empty string")
            }
            ProtocolError::NulInField { op, field } => {
                write!(f, "{op}: \"{field}\" contains a NUL character; remove it")
            }
            ProtocolError::Encode(e) => write!(f, "cannot encode the request: {e}"),
            ProtocolError::BadReply(e) => write!(f, "not a reply: {e}"),
        }
    }
}

impl std::error::Error for ProtocolError {}

/// Splits a byte stream into lines of bounded length. It keeps the bytes
/// after a line (a client may send several requests at once) for the next
/// call, and never holds more than `limit` plus one read's worth.
#[derive(Debug)]
pub struct LineReader {
    buf: Vec<u8>,
    limit: usize,
}

/// Why [`LineReader::read_line`] returned no line.
#[derive(Debug)]
pub enum LineError {
    /// `limit` bytes without a newline.
    TooLong { limit: usize },
    /// The peer closed the connection in the middle of a line.
    Truncated { len: usize },
    /// The read timed out (the stream's read timeout, or a deadline).
    TimedOut,
    /// Any other I/O error.
    Io(io::Error),
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LineError::TooLong { limit } => ProtocolError::TooLong { limit: *limit }.fmt(f),
            LineError::Truncated { len } => {
                write!(f, "connection closed after {len} bytes of an unfinished line; end each line with '\\n'")
            }
            LineError::TimedOut => write!(f, "timed out waiting for a complete line"),
            LineError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for LineError {}

impl LineReader {
    /// A reader for lines of at most `limit` bytes (without the `'\n'`).
    pub fn new(limit: usize) -> LineReader {
        LineReader { buf: Vec::new(), limit }
    }

    /// The next line without its `'\n'`, or `None` at a clean end of
    /// stream (the peer closed between lines).
    pub fn read_line<R: Read>(&mut self, reader: &mut R) -> Result<Option<Vec<u8>>, LineError> {
        let mut chunk = [0u8; 4096];
        // Bytes of `buf` already known to hold no newline.
        let mut scanned = 0;
        loop {
            if let Some(i) = self.buf[scanned..].iter().position(|&b| b == b'\n') {
                let end = scanned + i;
                if end > self.limit {
                    return Err(LineError::TooLong { limit: self.limit });
                }
                let mut line: Vec<u8> = self.buf.drain(..=end).collect();
                line.pop();
                return Ok(Some(line));
            }
            scanned = self.buf.len();
            if self.buf.len() > self.limit {
                return Err(LineError::TooLong { limit: self.limit });
            }
            match reader.read(&mut chunk) {
                Ok(0) if self.buf.is_empty() => return Ok(None),
                Ok(0) => return Err(LineError::Truncated { len: self.buf.len() }),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
                    return Err(LineError::TimedOut)
                }
                Err(e) => return Err(LineError::Io(e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(line: &[u8]) -> String {
        parse_request(line).unwrap_err().to_string()
    }

    #[test]
    fn every_request_round_trips() {
        let all = [
            Request::Status,
            Request::SetEnforce { enforcing: true },
            Request::SetEnforce { enforcing: false },
            Request::Reload,
            Request::SetBool { name: "httpd_can_network_connect".into(), value: true },
            Request::ExecContext {
                context: Some("system_u:system_r:httpd_t:s0".into()),
                force: true,
                path: None,
                apparmor: None,
                supervise: None,
                supervise_opens: false,
            },
            Request::ExecContext {
                context: None,
                force: false,
                path: Some("/bin/x".into()),
                apparmor: Some("p/q".into()),
                supervise: Some(7),
                supervise_opens: true,
            },
            Request::LabelsChanged,
        ];
        for request in all {
            let line = request.to_line().unwrap();
            assert_eq!(line.last(), Some(&b'\n'));
            assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
            assert_eq!(parse_request(&line[..line.len() - 1]).unwrap(), request);
        }
    }

    #[test]
    fn wire_spelling() {
        assert_eq!(Request::Status.to_line().unwrap(), b"{\"op\":\"status\"}\n");
        assert_eq!(
            parse_request(br#"{"op":"setenforce","enforcing":false}"#).unwrap(),
            Request::SetEnforce { enforcing: false }
        );
        assert_eq!(
            parse_request(br#" {"value":true,"op":"setbool","name":"b"} "#).unwrap(),
            Request::SetBool { name: "b".into(), value: true }
        );
        assert_eq!(
            parse_request(br#"{"op":"exec-context","context":"u:r:t:s0"}"#).unwrap(),
            Request::ExecContext {
                context: Some("u:r:t:s0".into()),
                force: false,
                path: None,
                apparmor: None,
                supervise: None,
                supervise_opens: false
            }
        );
        assert_eq!(
            parse_request(br#"{"op":"exec-context","context":"u:r:t:s0","path":"/bin/x"}"#).unwrap(),
            Request::ExecContext {
                context: Some("u:r:t:s0".into()),
                force: false,
                path: Some("/bin/x".into()),
                apparmor: None,
                supervise: None,
                supervise_opens: false
            }
        );
        assert_eq!(
            parse_request(br#"{"op":"exec-context","apparmor":"/usr/bin/x","path":"/bin/x"}"#).unwrap(),
            Request::ExecContext {
                context: None,
                force: false,
                path: Some("/bin/x".into()),
                apparmor: Some("/usr/bin/x".into()),
                supervise: None,
                supervise_opens: false
            }
        );
        assert!(err(br#"{"op":"exec-context","path":"/bin/x"}"#).contains("missing field `context`"));
        assert_eq!(parse_request(b"{\"op\":\"labels-changed\"}\r").unwrap(), Request::LabelsChanged);
    }

    #[test]
    fn bad_requests_say_what_is_wrong() {
        assert!(err(b"").contains("empty request line"));
        assert!(err(b"   ").contains("empty request line"));
        assert!(err(b"hello").contains("malformed request"));
        assert!(err(b"\xff\xfe{}").contains("not valid UTF-8 (bad byte at offset 0)"));
        assert!(err(b"{\"op\":\"sta\0tus\"}").contains("NUL byte at offset 10"));
        assert!(err(br#"{"op":"frobnicate"}"#).contains("unknown variant `frobnicate`"));
        assert!(err(br#"{"enforcing":true}"#).contains("missing field `op`"));
        assert!(err(br#"{"op":"setenforce"}"#).contains("missing field `enforcing`"));
        assert!(err(br#"{"op":"setenforce","enforcing":"yes"}"#)
            .contains("invalid type: string \"yes\", expected a boolean"));
        assert!(err(br#"{"op":"setbool","name":7,"value":true}"#).contains("invalid type"));
        assert!(err(br#"{"op":"setbool","name":"b","value":true,"extra":1}"#).contains("unknown field `extra`"));
        assert!(err(br#"{"op":"status","pid":1}"#).contains("unknown field `pid`"));
        assert!(err(br#"{"op":"exec-context","context":"a","force":true,"pid":1}"#).contains("unknown field `pid`"));
        assert!(err(br#"{"op":"setbool","name":"a\u0000b","value":true}"#).contains("\"name\" contains a NUL"));
        assert!(err(br#"{"op":"exec-context","context":""}"#).contains("\"context\" is empty"));
        assert!(err(br#"[1,2]"#).contains("malformed request"));
        assert!(err(br#"{"op":"status"} {"op":"status"}"#).contains("trailing characters"));
        assert!(err(&[b' '; MAX_LINE + 1]).contains("too long"));
        // Fields of another op, an op that is not a string, not an object.
        assert!(
            err(br#"{"op":"status","enforcing":true}"#).contains("unknown field `enforcing`: op `status` takes none")
        );
        assert!(err(br#"{"op":"setenforce","enforcing":true,"name":"b"}"#).contains("takes `enforcing`"));
        assert!(err(br#"{"op":1,"enforcing":true}"#).contains("invalid type: integer `1`"));
        assert!(err(br#" ["setenforce",true,null,null,null,null,null]"#).contains("array, expected a request object"));
        assert!(err(br#""status""#).contains("expected a request object"));
        // Where: serde_json's line and column.
        for bad in [&br#"{"op":"setenforce","enforcing":"yes"}"#[..], br#"{"op":"frob"}"#, br#"{"op":"reload","x":1}"#]
        {
            assert!(err(bad).contains("at line 1 column"), "{}", err(bad));
        }
        // Every parse error tells the client what a valid request looks like.
        assert!(err(b"hello").contains("{\"op\":\"status\"}"));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let mut line = Vec::new();
        line.extend(std::iter::repeat(b'[').take(MAX_LINE));
        assert!(err(&line).contains("malformed request"));
    }

    #[test]
    fn client_refuses_requests_the_server_would() {
        let long = Request::SetBool { name: "x".repeat(MAX_LINE), value: true };
        assert_eq!(long.to_line().unwrap_err(), ProtocolError::TooLong { limit: MAX_LINE });
        let nul = Request::ExecContext {
            context: Some("a\0b".into()),
            force: false,
            path: None,
            apparmor: None,
            supervise: None,
            supervise_opens: false,
        };
        assert!(nul.to_line().unwrap_err().to_string().contains("NUL"));
    }

    #[test]
    fn replies_round_trip() {
        let status = Status {
            mode: "enforcing".into(),
            policy: "/etc/selinux/default/policy/policy.33".into(),
            policy_seqno: 7,
            events_per_second: 12.5,
            allowed: 3,
            ..Status::default()
        };
        for reply in [
            Reply::Done,
            Reply::Status(status),
            Reply::Seqno(9),
            Reply::ExecGranted(ExecGrant { capabilities: 1 << 7 | 1 << 38, ..ExecGrant::default() }),
            Reply::ExecGranted(ExecGrant {
                capabilities: 0,
                revoke: vec![3, 9],
                forbid: vec![crate::sandbox::Forbidden::Truncate, crate::sandbox::Forbidden::Setattr],
            }),
            Reply::error("no such boolean"),
        ] {
            let line = reply.to_line();
            assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
            assert_eq!(Reply::parse(&line[..line.len() - 1]).unwrap(), reply);
        }
        assert_eq!(Reply::Done.to_line(), b"{\"ok\":true}\n");
        assert_eq!(Reply::Seqno(3).to_line(), b"{\"ok\":true,\"seqno\":3}\n");
        assert_eq!(Reply::error("x\ny").to_line(), b"{\"ok\":false,\"error\":\"x\\ny\"}\n");
    }

    #[test]
    fn non_finite_rates_are_sent_as_zero() {
        let status = Status { events_per_second: f64::NAN, uptime_seconds: f64::INFINITY, ..Status::default() };
        let line = Reply::Status(status).to_line();
        match Reply::parse(&line[..line.len() - 1]).unwrap() {
            Reply::Status(s) => {
                assert_eq!(s.events_per_second, 0.0);
                assert_eq!(s.uptime_seconds, 0.0);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn inconsistent_replies_are_refused() {
        for bad in [
            &br#"{"ok":false}"#[..],
            br#"{"ok":true,"error":"x"}"#,
            br#"{"ok":true,"seqno":1,"status":{}}"#,
            br#"{"seqno":1}"#,
            br#"{"ok":"yes"}"#,
            b"\xff",
        ] {
            assert!(Reply::parse(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
        // Newer daemons may add fields.
        assert_eq!(Reply::parse(br#"{"ok":true,"seqno":1,"took_ms":3}"#).unwrap(), Reply::Seqno(1));
    }

    #[test]
    fn a_status_from_a_daemon_before_decided_without_path_still_parses() {
        let old = br#"{"ok":true,"status":{"mode":"enforcing","policy":"p","policy_seqno":1,"events_per_second":0.0,"queue_depth":0,"allowed":5,"denied":0,"permissive_denials":0,"overloaded":0,"tracked_processes":0,"ignore_marks":2,"avc_lookups":5,"avc_hits":4,"avc_misses":1,"uptime_seconds":1.0}}"#;
        match Reply::parse(old).unwrap() {
            Reply::Status(s) => assert_eq!((s.allowed, s.decided_without_path), (5, 0)),
            other => panic!("not a status: {other:?}"),
        }
    }

    /// Hands out its bytes a few at a time, like a socket.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.0.len().min(self.1).min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn line_reader_splits_and_bounds() {
        for step in [1, 3, 4096] {
            let mut src = Trickle(b"a\n\nbc\nlast", step);
            let mut lines = LineReader::new(8);
            assert_eq!(lines.read_line(&mut src).unwrap().unwrap(), b"a");
            assert_eq!(lines.read_line(&mut src).unwrap().unwrap(), b"");
            assert_eq!(lines.read_line(&mut src).unwrap().unwrap(), b"bc");
            assert!(matches!(lines.read_line(&mut src), Err(LineError::Truncated { len: 4 })));
        }
        let mut lines = LineReader::new(4);
        assert_eq!(lines.read_line(&mut Trickle(b"abcd\n", 1)).unwrap().unwrap(), b"abcd");
        assert!(lines.read_line(&mut Trickle(b"", 1)).unwrap().is_none());
        let mut lines = LineReader::new(4);
        assert!(matches!(lines.read_line(&mut Trickle(b"abcde\n", 1)), Err(LineError::TooLong { limit: 4 })));
        let mut lines = LineReader::new(4);
        assert!(matches!(lines.read_line(&mut Trickle(b"abcdef\n", 4096)), Err(LineError::TooLong { limit: 4 })));
        // An endless line stops at the limit, not at the end of memory.
        let mut lines = LineReader::new(MAX_LINE);
        assert!(matches!(lines.read_line(&mut io::repeat(b'x')), Err(LineError::TooLong { .. })));
    }
}
