//! Responder threads: read permission events and answer them.
//!
//! Two roles. **Pollers** (`pollers`, one by default) wait on the
//! fanotify groups: after answering they keep polling for `spin`, then
//! block in `epoll_wait`. **Helpers** (the other responders) sleep on a
//! condition variable and are woken only when a read brings more than one
//! event (events are queuing faster than one thread answers them: the
//! reader answers the first and hands the others off, [`crate::handoff`],
//! to a woken helper or a spinning poller), and by the enforcer before a
//! slow decision (an exec, or reading a denied opener's flags from
//! `/proc`; [`Enforcer::helpers`]), which should not hold the next
//! process's open. A woken helper takes what was handed off, then reads
//! without blocking until the queue is empty, then sleeps again.
//!
//! Why not every responder in `epoll_wait`: fanotify wakes every waiter
//! of a group as it queues an event, so a responder sleeping there is
//! woken, on the other CPU, for each event the spinning poller takes,
//! and that wake-up is paid on the opening process's path. Measured here
//! (docs/benchmarks.md): a second responder in `epoll_wait` made a
//! first-touch open 11.9 µs instead of 10.7 and cut two-process
//! throughput from 117k to 96k events/s. And waking a helper whenever
//! the queue was not empty (two processes opening in turn) made two
//! processes slower on two CPUs, not faster: 93k events/s against 107k
//! for waking only on a batch, as deciding is CPU-bound and the
//! processes need the CPUs too.
//!
//! Spinning: in a burst (a process opening file after file) the next
//! event comes within microseconds, and a running poller takes it
//! without waking anyone, which on a virtual machine costs more than
//! deciding the event. The price is bounded: `pollers` CPUs for `spin`
//! after each event. A spinning poller looks for the next event with a
//! non-blocking read (`--spin-check read`, the default), which takes the
//! group's queue lock on every look, the lock every opener takes to
//! queue its event and every answer to find its own: with several
//! pollers spinning, that lock's cache line keeps moving between CPUs
//! (seed 004's lesson). `--spin-check epoll` looks with `epoll_wait`
//! without a timeout instead, which reads the ready list without a lock
//! while it is empty, at one more system call per event. So the default
//! follows the pollers ([`crate::config::default_spin_check`]): a read
//! with one (2 CPUs: read ahead at 2 clients), epoll with several (16
//! CPUs, four pollers: epoll ahead at 4 and 8 clients, docs/benchmarks.md).
//!
//! Reads are small (`--read-batch`, 4 events at most): before the hand-off a
//! thread that read a burst answered it one event after the other, while
//! the other pollers, woken for the same events, found the queue empty.
//! On 16 CPUs at 16 clients four events per read gave 2.57x one client's
//! throughput, 42 gave 2.27x and one 1.97x (a read per event costs more
//! than it spreads), and at 4 clients one event per read did best (2.53x
//! against 2.17x). The hand-off keeps the batched read and spreads its
//! events: on 16 CPUs it raised 16 clients' first touches from 147k and
//! 195k to 224k and 206k per second (two alternations), the other counts
//! within the noise; on 2 CPUs it changes nothing measurable
//! (docs/benchmarks.md).
//!
//! And a read takes one event while another poller is free to take the
//! next ([`read_size`]): a batch there only queues events behind this
//! thread's answer, or hands them off, where a spinning poller would have
//! read them at once. On 16 CPUs, four pollers, one event per read gave 4
//! clients 207k first touches per second against 175k and 178k for
//! batches of four (runs beside it), alike at 1, 2 and 8 clients, while
//! at 16 the batch and hand-off win (above). Events in flight count the
//! busy responders: a hint, as any batch size answers every event.
//!
//! The backlog signal is a hint: a missed one delays help by at most
//! `WAIT_MS` (a second), never an answer, because pollers alone read
//! everything.

use std::io;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::config::SpinCheck;
use crate::enforcer::Enforcer;
use crate::event::{self, PermEvent};
use crate::fanotify::Group;
use crate::groups::{Groups, LiveView};
use crate::own_threads;
use crate::pidfd::RecentThreads;

/// How long a responder waits before checking for shutdown (SIGUSR1 and
/// [`crate::backlog::Backlog::wake_all`] end the wait sooner).
const WAIT_MS: i32 = 1000;

/// How a responder runs.
pub struct Settings {
    pub bound: u64,
    pub overload_allow: bool,
    /// After an event, a poller keeps polling this long before sleeping.
    pub spin: Duration,
    /// Events one read takes at most: few, so one thread does not take a
    /// burst the others could share (`--read-batch`).
    pub read_batch: usize,
    /// Responders that poll (`--pollers`): with others free, a read takes
    /// one event ([`read_size`]).
    pub pollers: usize,
    /// How a spinning poller looks for the next event (`--spin-check`).
    pub spin_check: SpinCheck,
}

/// A responder's role (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Poller,
    Helper,
}

/// One responder thread's loop, until `stop`.
pub fn run(enforcer: Arc<Enforcer>, stop: Arc<AtomicBool>, settings: Settings, role: Role) {
    let _registered = own_threads::register_current();
    let buf = vec![0u8; settings.read_batch * event::METADATA_LEN];
    let mut r = Responder {
        groups: enforcer.marks.target(),
        enforcer: &enforcer,
        settings,
        buf,
        events: Vec::with_capacity(32),
        spare: Vec::with_capacity(32),
        threads: RecentThreads::default(),
    };
    match role {
        Role::Poller => r.poll(&stop),
        Role::Helper => r.help(&stop),
    }
}

struct Responder<'a> {
    enforcer: &'a Enforcer,
    groups: &'a Groups,
    settings: Settings,
    buf: Vec<u8>,
    events: Vec<PermEvent>,
    /// The events of a read this thread hands off, before they are given.
    spare: Vec<(Arc<Group>, PermEvent)>,
    threads: RecentThreads,
}

impl Responder<'_> {
    fn poll(&mut self, stop: &AtomicBool) {
        let mut view = LiveView::default();
        let mut spin_until: Option<Instant> = None;
        // Relaxed: `stop` only ends the loop; the join orders everything else.
        while !stop.load(Ordering::Relaxed) {
            // What another responder read and left comes first: it was
            // queued before anything still in the group.
            if let Some((group, event)) = self.enforcer.handed_off.take() {
                self.answer(&group, event);
                spin_until = self.spin_deadline();
                continue;
            }
            let spinning = spin_until.is_some_and(|t| Instant::now() < t);
            if !spinning {
                spin_until = None;
            }
            let waited = if spinning {
                self.groups.refresh_if_changed(&mut view);
                match (self.settings.spin_check, view.single()) {
                    // One group (no rotation in progress): read it directly.
                    (SpinCheck::Read, Some(g)) => Ok(Some(g)),
                    _ => self.groups.wait(&mut view, 0),
                }
            } else {
                self.groups.wait(&mut view, WAIT_MS)
            };
            let group = match waited {
                Ok(Some(group)) => group,
                Ok(None) => {
                    if spinning {
                        // Yield rather than spin: a runnable process on this
                        // CPU (often the one just answered) goes first.
                        std::thread::yield_now();
                    }
                    continue;
                }
                Err(e) => {
                    pause_after(&e, "waiting for fanotify events");
                    continue;
                }
            };
            match self.read_and_answer(group) {
                Ok(()) => spin_until = self.spin_deadline(),
                Err(e) => {
                    if e.kind() == io::ErrorKind::WouldBlock && spinning {
                        std::thread::yield_now();
                    }
                    pause_after(&e, "reading fanotify events");
                }
            }
        }
    }

    /// Until when a poller that just answered keeps polling (`--spin-us`).
    fn spin_deadline(&self) -> Option<Instant> {
        (!self.settings.spin.is_zero()).then(|| Instant::now() + self.settings.spin)
    }

    fn help(&mut self, stop: &AtomicBool) {
        let mut view = LiveView::default();
        // Relaxed: see `poll`.
        while !stop.load(Ordering::Relaxed) {
            // Read before looking, so a signal given after the looks is
            // not slept through.
            let seen = self.enforcer.helpers.generation();
            if let Some((group, event)) = self.enforcer.handed_off.take() {
                self.answer(&group, event);
                continue;
            }
            let group = match self.groups.wait(&mut view, 0) {
                Ok(Some(group)) => group,
                Ok(None) => {
                    self.enforcer.helpers.sleep(seen, Duration::from_millis(WAIT_MS as u64));
                    continue;
                }
                Err(e) => {
                    pause_after(&e, "waiting for fanotify events");
                    continue;
                }
            };
            if let Err(e) = self.read_and_answer(group) {
                pause_after(&e, "reading fanotify events");
            }
        }
    }

    /// Reads one batch from `group` and answers it ([`Self::answer_all`]).
    /// A malformed record ends the batch (the records before it are kept)
    /// and is reported once they are answered: stderr may block.
    fn read_and_answer(&mut self, group: &Arc<Group>) -> io::Result<()> {
        // Relaxed: a hint for the size of the read (module docs).
        let in_flight = self.enforcer.counters.in_flight.load(Ordering::Relaxed);
        let size = read_size(self.settings.read_batch, self.settings.pollers, in_flight);
        let len = (size * event::METADATA_LEN).min(self.buf.len());
        let n = group.read(self.buf.get_mut(..len).unwrap_or_default())?;
        let malformed = event::parse(self.buf.get(..n).unwrap_or_default(), &mut self.events).err();
        self.answer_all(group);
        if let Some(e) = malformed {
            eprintln!("rampartd: {e}");
        }
        Ok(())
    }

    /// Answers every event read: the first (or, beyond the queue bound,
    /// the overload answer) here; the others are handed off to whichever
    /// responder is free ([`crate::handoff`]), a helper is woken for them,
    /// and this thread then takes what is left of them.
    fn answer_all(&mut self, group: &Arc<Group>) {
        let counters = &self.enforcer.counters;
        let n = self.events.len() as u64;
        // Relaxed: a gauge for the bound and for `status`.
        let depth = counters.in_flight.fetch_add(n, Ordering::Relaxed) + n;
        let mut over = depth.saturating_sub(self.settings.bound) as usize;
        let mut own = None;
        for ev in self.events.drain(..) {
            if over > 0 {
                over -= 1;
                // Relaxed: a count, bumped before the answer (as
                // `Enforcer::answer` does).
                counters.overloaded.fetch_add(1, Ordering::Relaxed);
                let _ = group.respond(ev.fd.as_fd(), self.settings.overload_allow);
                counters.in_flight.fetch_sub(1, Ordering::Relaxed);
            } else if own.is_none() {
                own = Some(ev);
            } else {
                self.spare.push((Arc::clone(group), ev));
            }
        }
        if !self.spare.is_empty() {
            self.enforcer.handed_off.give(self.spare.drain(..));
            self.enforcer.helpers.signal();
        }
        if let Some(ev) = own {
            self.answer(group, ev);
        }
        // The hand-off's promise: nothing given is left behind.
        while let Some((group, ev)) = self.enforcer.handed_off.take() {
            self.answer(&group, ev);
        }
    }

    /// Decides and answers one event counted in flight.
    fn answer(&mut self, group: &Group, event: PermEvent) {
        self.enforcer.handle(group, event, &mut self.threads);
        // Relaxed: see `answer_all`.
        self.enforcer.counters.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Events the next read takes: one while fewer events are in flight than
/// there are other pollers (one of them is free to read the next), else
/// up to `read_batch`, the rest handed off (module docs).
fn read_size(read_batch: usize, pollers: usize, in_flight: u64) -> usize {
    let other_pollers = pollers.saturating_sub(1) as u64;
    if in_flight < other_pollers {
        1
    } else {
        read_batch
    }
}

/// After a failed wait or read: nothing for `EINTR` (shutdown's SIGUSR1)
/// and `EAGAIN` (another responder read it first), a message and a short
/// pause for anything else.
fn pause_after(e: &io::Error, what: &str) {
    if matches!(e.kind(), io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock) {
        return;
    }
    eprintln!("rampartd: {what}: {e}");
    std::thread::sleep(Duration::from_millis(10));
}

#[cfg(test)]
mod tests {
    use super::read_size;

    #[test]
    fn a_read_takes_one_event_while_another_poller_is_free() {
        // One poller: nobody else reads, so it takes the batch.
        assert_eq!(read_size(4, 1, 0), 4);
        // Four pollers: one event while fewer than three are in flight.
        assert_eq!(read_size(4, 4, 0), 1);
        assert_eq!(read_size(4, 4, 2), 1);
        assert_eq!(read_size(4, 4, 3), 4);
        assert_eq!(read_size(4, 4, 40), 4);
    }
}
