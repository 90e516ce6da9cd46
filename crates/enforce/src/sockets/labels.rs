//! The labels of network names a bind checks: a port's (`portcon`, else
//! the `port` initial SID: `security_port_sid`) and an address's
//! (`nodecon`, else the `node` initial SID: `security_node_sid`), each the
//! first matching statement in the policy's order, as the kernel walks
//! them.

use std::net::IpAddr;

use rampart_avc::Sid;
use rampart_policy::{Context, Policy};

use crate::enforcer::Enforcer;

/// `SECINITSID_UNLABELED`, `SECINITSID_PORT` and `SECINITSID_NODE`
/// (flask's initial SIDs).
const INITIAL_UNLABELED: u32 = 3;
const INITIAL_PORT: u32 = 9;
const INITIAL_NODE: u32 = 12;

/// The label of `port` of IP protocol `protocol` (the socket's).
pub(crate) fn port_sid(e: &Enforcer, protocol: i32, port: u16) -> Result<Sid, String> {
    let (policy, _, _) = e.avc.policy_state();
    let found = policy
        .ocontexts
        .ports
        .iter()
        .find(|p| i64::from(p.protocol) == i64::from(protocol) && p.low <= u32::from(port) && u32::from(port) <= p.high)
        .map(|p| &p.context);
    intern(e, &policy, found.or_else(|| initial(&policy, INITIAL_PORT)), "port")
}

/// The label of address `ip`.
pub(crate) fn node_sid(e: &Enforcer, ip: IpAddr) -> Result<Sid, String> {
    let (policy, _, _) = e.avc.policy_state();
    let found = match ip {
        IpAddr::V4(v4) => {
            let a = v4.octets();
            policy
                .ocontexts
                .nodes
                .iter()
                .find(|(addr, mask, _)| (0..4).all(|i| a[i] & mask[i] == addr[i]))
                .map(|n| &n.2)
        }
        IpAddr::V6(v6) => {
            let a = v6.octets();
            policy
                .ocontexts
                .nodes6
                .iter()
                .find(|(addr, mask, _)| (0..16).all(|i| a[i] & mask[i] == addr[i]))
                .map(|n| &n.2)
        }
    };
    intern(e, &policy, found.or_else(|| initial(&policy, INITIAL_NODE)), "node")
}

/// Initial SID `sid`'s context; one the policy gives none is the
/// kernel's unknown SID, which it reads as `unlabeled` (`sidtab_search`).
fn initial(policy: &Policy, sid: u32) -> Option<&Context> {
    let find = |sid| policy.ocontexts.initial_sids.iter().find(|(n, _)| *n == sid).map(|(_, c)| c);
    find(sid).or_else(|| find(INITIAL_UNLABELED))
}

fn intern(e: &Enforcer, policy: &Policy, context: Option<&Context>, what: &str) -> Result<Sid, String> {
    let c = context.ok_or_else(|| format!("the policy has no `{what}` initial SID"))?;
    e.avc.intern(&policy.context_to_string(c)).map_err(|err| err.to_string())
}
