//! The operator's notice of overload answers.
//!
//! Why: an event beyond the queue bound is answered with the configured
//! overload answer, not a decision ([`crate::responder`]). With `deny`
//! some opens fail for no reason in the policy, with `allow` some pass
//! unchecked; either way the operator must hear of it, and `status`
//! counts are only seen when asked for. Like the audit writer's "N audit
//! lines suppressed" and the kernel's "audit: backlog limit exceeded",
//! the notice counts instead of logging each event, and it is written
//! by the daemon's calling thread, never by a responder (stderr may
//! block; answers come first).

/// Overload answers reported so far.
pub struct OverloadNotice {
    reported: u64,
    answer: &'static str,
    bound: usize,
}

impl OverloadNotice {
    pub fn new(overload_allow: bool, bound: usize) -> OverloadNotice {
        OverloadNotice { reported: 0, answer: if overload_allow { "allow" } else { "deny" }, bound }
    }

    /// The notice for the overload answers since the last one, given
    /// the running total; `None` when there were none.
    pub fn since_last(&mut self, total: u64) -> Option<String> {
        let new = total.checked_sub(self.reported).filter(|&n| n > 0)?;
        self.reported = total;
        Some(format!(
            "rampartd: {new} events answered {} without a decision: more than {} events were queued \
             (raise queue-bound or threads if this recurs)",
            self.answer, self.bound
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_overload_answer_is_reported_once() {
        let mut n = OverloadNotice::new(false, 8);
        assert_eq!(n.since_last(0), None);
        let first = n.since_last(5).unwrap();
        assert!(first.starts_with("rampartd: 5 events answered deny without a decision"), "{first}");
        assert!(first.contains("more than 8 events"), "{first}");
        assert_eq!(n.since_last(5), None);
        assert!(n.since_last(7).unwrap().starts_with("rampartd: 2 events answered deny"));
    }

    #[test]
    fn the_configured_answer_is_named() {
        let mut n = OverloadNotice::new(true, 1);
        assert!(n.since_last(1).unwrap().contains("answered allow"));
    }
}
