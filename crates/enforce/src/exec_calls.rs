//! Which exec event is a program, and which an interpreter its exec
//! opens.
//!
//! Why: an exec opens its program, then, in the same call, what the
//! program names to run it (a `#!` line's interpreter, an ELF's
//! `PT_INTERP`: `ld.so`), each one more exec event (`FAN_OPEN_EXEC_PERM`)
//! of the same thread. SELinux decides the exec by the program alone:
//! `execute`, then `execute_no_trans` or the transition computed from
//! the program's label. An interpreter needs only `execute` (the
//! kernel's `MAY_EXEC` as it opens it) and what its mapping asks
//! (crate::exec_memory). fanotify does not say which event is which. An
//! exec transition holds its process until it settles (crate::cgroups),
//! so its interpreters were known; every other exec's events were each
//! decided as a program's: an interpreter needed `execute_no_trans` (the
//! Debian policy grants `domain ld_so_t:file { execute map read ... }`
//! and no `execute_no_trans`: a confined domain's dynamically linked
//! programs could not run from a marked root filesystem), and a
//! `type_transition` on its label moved the process (Debian's `init_t
//! shell_exec_t:process initrc_t`, where the kernel keeps a `#!/bin/sh`
//! script labeled bin_t in init_t).
//!
//! How: the launcher's filter hands every x86-64 `execve` and `execveat`
//! to the daemon (crate::supervised; the 32-bit ones are refused), which
//! notes that the calling thread starts an exec ([`ExecCalls::started`])
//! before it lets the kernel make the call. The first exec event of
//! that thread after the note is its program; the next ones, until its
//! next exec call, its interpreters ([`ExecCalls::role`]). No other
//! thread can make a call for this one, and an exec event comes only
//! from an exec call (`uselib`, which opened a file for execution
//! outside one, is refused by the same filter; this kernel lacks it). Threads are known by their pidfs id, never reused:
//! an entry outlives its thread harmlessly, and the table is emptied
//! when full. A thread without an entry (outside the launcher's tree,
//! launched without the sandbox, or forgotten) is decided as before,
//! each event a program's: coarser, never laxer. Left: a program on an
//! unmarked filesystem makes no event, so its interpreter's, if marked,
//! is taken for the program's.

use std::sync::{Mutex, PoisonError};

use rustc_hash::FxHashMap;

/// Threads remembered at most; then the table starts again.
const MAX_THREADS: usize = 1 << 14;

/// What an exec event is to the exec call that made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The file the call named: decided as an exec.
    Program,
    /// A file the program names to run it: `execute` and its mapping.
    Interpreter,
    /// Not known: decided as a program.
    Unknown,
}

/// Where a thread's exec call stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// Called; no exec event yet.
    Called,
    /// Its program's event came.
    Opened,
}

/// The exec calls in progress, by thread (see the module docs).
#[derive(Default)]
pub struct ExecCalls {
    threads: Mutex<FxHashMap<u64, Stage>>,
}

impl ExecCalls {
    /// Thread `thread` (its pidfs id) calls execve or execveat: its next
    /// exec event is its program.
    pub fn started(&self, thread: u64) {
        let mut threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        if threads.len() >= MAX_THREADS {
            threads.clear();
        }
        threads.insert(thread, Stage::Called);
    }

    /// What an exec event of thread `thread` is (`None`: its id is not
    /// known).
    pub fn role(&self, thread: Option<u64>) -> Role {
        let Some(thread) = thread else { return Role::Unknown };
        let mut threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        match threads.get_mut(&thread) {
            Some(stage @ Stage::Called) => {
                *stage = Stage::Opened;
                Role::Program
            }
            Some(Stage::Opened) => Role::Interpreter,
            None => Role::Unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_event_after_a_call_is_the_program() {
        let calls = ExecCalls::default();
        assert_eq!(calls.role(Some(7)), Role::Unknown, "no call seen");
        assert_eq!(calls.role(None), Role::Unknown, "no id");
        calls.started(7);
        assert_eq!(calls.role(Some(7)), Role::Program);
        assert_eq!(calls.role(Some(7)), Role::Interpreter, "ld.so");
        assert_eq!(calls.role(Some(7)), Role::Interpreter, "a #! line's, then its ld.so");
        assert_eq!(calls.role(Some(8)), Role::Unknown, "another thread");
        // A failed exec, then another call: a program again.
        calls.started(7);
        assert_eq!(calls.role(Some(7)), Role::Program);
    }

    #[test]
    fn a_full_table_forgets_every_thread() {
        let calls = ExecCalls::default();
        for t in 0..MAX_THREADS as u64 {
            calls.started(t);
        }
        calls.started(u64::MAX);
        assert_eq!(calls.role(Some(0)), Role::Unknown, "forgotten: decided as a program");
        assert_eq!(calls.role(Some(u64::MAX)), Role::Program);
    }
}
