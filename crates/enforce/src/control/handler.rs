//! What the control socket asks of the daemon: [`ControlHandler`], which
//! the daemon implements, and the [`Caller`] each request is authorized
//! for. Apart from the wire format (`protocol.rs`), so that the format
//! and the types it carries (`mod.rs`) depend on nothing that serves them.

use super::protocol::{Request, PERMISSION_DENIED};
use super::{ExecGrant, Status};

/// Who sent a request: the process that wrote its line, as it is when
/// the request is served (read through the pidfd the kernel attached to
/// the message, `SCM_PIDFD`; see `server.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caller {
    /// In the daemon's pid namespace (0 if the sender is not visible there).
    pub pid: u32,
    pub euid: u32,
    /// Its cgroup v2 id (its domain: `cgroups.rs`).
    pub cgroup_id: u64,
}

/// What an exec-context request says of the launcher's seccomp filter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Supervised {
    /// It handed its listener over: its calls go to the daemon. A launch
    /// without one (`rampart run --no-sandbox`) has no filter.
    pub calls: bool,
    /// Its filter also hands over its opens for writing.
    pub opens: bool,
}

/// The daemon's side of the control protocol. Every method is called
/// from the control thread; errors are sent back to the client as text.
pub trait ControlHandler: Send + Sync {
    /// Whether `caller` may make `request` (an error names what the policy
    /// denied). By default: root only.
    fn authorize(&self, _request: &Request, caller: &Caller) -> Result<(), String> {
        if caller.euid == 0 {
            Ok(())
        } else {
            Err(PERMISSION_DENIED.into())
        }
    }
    fn status(&self) -> Status;
    fn set_enforcing(&self, enforcing: bool) -> Result<(), String>;
    /// Reloads the policy file (and file_contexts); returns the new seqno.
    fn reload(&self) -> Result<u64, String>;
    fn set_boolean(&self, name: &str, value: bool) -> Result<u64, String>;
    /// Like writing `/proc/<pid>/attr/exec`: the next exec of `pid`
    /// enters `context`. `force` skips the policy checks (root only);
    /// `path`, if given, is the file that exec will run, checked now.
    /// Returns what the launcher must give up before its exec.
    fn set_exec_context(&self, pid: u32, context: &str, force: bool, path: Option<&str>) -> Result<ExecGrant, String>;
    /// [`ControlHandler::set_exec_context`] with an AppArmor profile to
    /// enter (`rampart run --apparmor`); without `context`, the caller's
    /// SELinux domain is kept. `supervised`: whether the caller handed
    /// over (already, through [`ControlHandler::supervise`]) a listener,
    /// and whether its filter also hands over its opens for writing. By
    /// default: no AppArmor.
    fn set_exec_labels(
        &self,
        pid: u32,
        context: Option<&str>,
        apparmor: Option<&str>,
        force: bool,
        path: Option<&str>,
        supervised: Supervised,
    ) -> Result<ExecGrant, String> {
        let _ = supervised;
        match (context, apparmor) {
            (Some(context), None) => self.set_exec_context(pid, context, force, path),
            _ => Err("this daemon does not run AppArmor profiles".into()),
        }
    }
    /// Serves the supervised calls (crate::supervised) of the processes
    /// under the seccomp listener that process `pid` holds as descriptor
    /// `fd`. By default: not supported.
    fn supervise(&self, _pid: u32, _fd: i32) -> Result<(), String> {
        Err("this daemon does not serve supervised calls".into())
    }
    /// Files were relabeled: drop cached labels and kernel-side grants.
    fn labels_changed(&self) -> Result<(), String>;
}
