//! Threads for supervised calls that may block for long (a TCP connect
//! the daemon makes for its caller: crate::sockets): each such call holds
//! a thread of its own until it returns, and answers its caller from
//! there.
//!
//! Why not the workers (crate::supervisor): a handshake with an
//! unreachable host blocks for minutes, and a few of them would hold
//! every worker, stalling every other launched process's supervised
//! calls. Why a pool rather than a thread per call: starting a thread
//! costs more than the connect it makes on a local network. Why a share
//! per label: the threads are shared by every launched process, where
//! the kernel's connects share nothing; without shares a process could
//! hold them all with connects to a host that never answers, and every
//! other domain's connects would wait behind its own (minutes each).
//!
//! How: a call is a job (a closure that makes the call and answers it)
//! of a label (its caller's domain and profile). A label runs at most
//! [`MOST_PER_LABEL`] jobs at once; its further jobs wait in its own
//! queue, and a thread that ends one of its jobs takes the next from
//! there. An admitted job is counted from its queueing to its end; when
//! there are more than threads, a thread is started, up to
//! [`MOST_THREADS`]; beyond, admitted jobs queue until a thread is free.
//! So a label's job never waits behind another label's while fewer than
//! that many run. The counts only decide when to start a thread: the
//! channel carries every admitted job, so none is lost whatever they say;
//! a label's queue is pushed only while one of its jobs runs, and that
//! job's thread takes it (both under one lock). Tests: the shares' loom
//! model (`tests/loom.rs`), a stress test, a blocked job holding back no
//! other, a label over its share holding back no other label.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};

/// Most threads at once.
pub(crate) const MOST_THREADS: usize = 1024;

/// Most jobs of one label running at once.
pub(crate) const MOST_PER_LABEL: usize = 64;

/// A call to make, and answer, in a thread of the pool.
pub(crate) type Job = Box<dyn FnOnce() + Send>;

/// A label's jobs: how many run, and those waiting for one to end.
struct Share<J> {
    running: usize,
    waiting: VecDeque<J>,
}

/// Each label's share of the threads: at most `most` of its jobs `J` run
/// at once, the others wait in its queue. Model-checked (`tests/loom.rs`).
pub struct Shares<K, J> {
    labels: crate::sync::Mutex<HashMap<K, Share<J>>>,
    most: usize,
}

impl<K: Eq + Hash + Clone, J> Shares<K, J> {
    /// At most `most` (at least 1) jobs of a label at once.
    pub fn new(most: usize) -> Shares<K, J> {
        Shares { labels: crate::sync::Mutex::new(HashMap::new()), most: most.max(1) }
    }

    /// `job` of `label`, to run now (`Some`), or queued behind the
    /// label's running jobs (`None`): the thread that ends one of them
    /// takes it ([`Self::ended`]).
    pub fn admit(&self, label: &K, job: J) -> Option<J> {
        let mut labels = self.labels.lock().unwrap_or_else(PoisonError::into_inner);
        let share = labels.entry(label.clone()).or_insert_with(|| Share { running: 0, waiting: VecDeque::new() });
        if share.running >= self.most {
            share.waiting.push_back(job);
            return None;
        }
        share.running += 1;
        Some(job)
    }

    /// One of `label`'s running jobs ended: its next waiting job, which
    /// runs in its place (on the same thread), or `None` (one fewer runs).
    pub fn ended(&self, label: &K) -> Option<J> {
        let mut labels = self.labels.lock().unwrap_or_else(PoisonError::into_inner);
        let share = labels.get_mut(label)?;
        if let Some(next) = share.waiting.pop_front() {
            return Some(next);
        }
        share.running = share.running.saturating_sub(1);
        if share.running == 0 {
            labels.remove(label);
        }
        None
    }

    /// No label has a job running or waiting.
    pub fn is_empty(&self) -> bool {
        self.labels.lock().unwrap_or_else(PoisonError::into_inner).is_empty()
    }
}

/// The pool, its jobs told apart by label `K`.
pub(crate) struct CallThreads<K> {
    send: Mutex<Sender<(K, Job)>>,
    receive: Arc<Mutex<Receiver<(K, Job)>>>,
    shares: Arc<Shares<K, Job>>,
    /// Admitted jobs queued or running.
    busy: Arc<AtomicUsize>,
    threads: AtomicUsize,
}

impl<K: Clone + Eq + Hash + Send + 'static> CallThreads<K> {
    pub(crate) fn new() -> CallThreads<K> {
        let (send, receive) = channel();
        CallThreads {
            send: Mutex::new(send),
            receive: Arc::new(Mutex::new(receive)),
            shares: Arc::new(Shares::new(MOST_PER_LABEL)),
            busy: Arc::new(AtomicUsize::new(0)),
            threads: AtomicUsize::new(0),
        }
    }

    /// Runs `job` of `label` in a thread of the pool, now or after one of
    /// the label's running jobs; gives it back if no thread could be
    /// started at all (the caller answers its call).
    pub(crate) fn run(&self, label: K, job: Job) -> Result<(), Job> {
        let Some(job) = self.shares.admit(&label, job) else { return Ok(()) };
        // Relaxed throughout: the counts only decide whether to start a
        // thread; the job itself goes through the channel, which orders it.
        let busy = self.busy.fetch_add(1, Ordering::Relaxed) + 1;
        if busy > self.threads.load(Ordering::Relaxed) && self.reserve_thread() {
            if let Err(e) = self.start() {
                if self.threads.fetch_sub(1, Ordering::Relaxed) == 1 {
                    eprintln!("rampartd: supervisor: no thread for a call that may block: {e}");
                    self.busy.fetch_sub(1, Ordering::Relaxed);
                    self.shares.ended(&label);
                    return Err(job);
                }
            }
        }
        // The receiving end lives as long as `self`: sending cannot fail.
        self.send.lock().unwrap_or_else(PoisonError::into_inner).send((label, job)).map_err(|unsent| {
            self.busy.fetch_sub(1, Ordering::Relaxed);
            let (label, job) = unsent.0;
            self.shares.ended(&label);
            job
        })
    }

    /// Counts one more thread, unless [`MOST_THREADS`] run: in one step,
    /// so that callers starting threads at once never pass the bound
    /// (a load and a later add did: the stress test saw more).
    fn reserve_thread(&self) -> bool {
        self.threads.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| (n < MOST_THREADS).then_some(n + 1)).is_ok()
    }

    /// Starts a thread counted by [`Self::reserve_thread`].
    fn start(&self) -> std::io::Result<()> {
        let (receive, busy, shares) = (Arc::clone(&self.receive), Arc::clone(&self.busy), Arc::clone(&self.shares));
        std::thread::Builder::new().name("supervised call".into()).spawn(move || loop {
            let next = receive.lock().unwrap_or_else(PoisonError::into_inner).recv();
            let Ok((label, job)) = next else { return };
            job();
            // The label's waiting jobs, in this thread, until none is left.
            while let Some(waiting) = shares.ended(&label) {
                waiting();
            }
            busy.fetch_sub(1, Ordering::Relaxed);
        })?;
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use std::sync::mpsc::sync_channel;
    use std::sync::Condvar;
    use std::time::Duration;

    /// Stress: every job of many, submitted from several threads at once,
    /// runs once; no more threads than the bound are started.
    #[test]
    fn every_job_runs_once() {
        let pool = Arc::new(CallThreads::<u32>::new());
        let ran = Arc::new(AtomicUsize::new(0));
        let (done, finished) = sync_channel(4000);
        let submitters: Vec<_> = (0..4)
            .map(|_| {
                let (pool, ran, done) = (Arc::clone(&pool), Arc::clone(&ran), done.clone());
                std::thread::spawn(move || {
                    for i in 0..1000 {
                        let (ran, done) = (Arc::clone(&ran), done.clone());
                        let job: Job = Box::new(move || {
                            if i % 97 == 0 {
                                std::thread::sleep(Duration::from_millis(2));
                            }
                            ran.fetch_add(1, Ordering::Relaxed);
                            done.send(()).unwrap();
                        });
                        // Two labels: some jobs wait for their label's share.
                        assert!(pool.run(i % 2, job).is_ok());
                    }
                })
            })
            .collect();
        for s in submitters {
            s.join().unwrap();
        }
        for _ in 0..4000 {
            finished.recv_timeout(Duration::from_secs(20)).expect("every job runs");
        }
        assert_eq!(ran.load(Ordering::Relaxed), 4000);
        assert!(pool.threads.load(Ordering::Relaxed) <= MOST_THREADS);
        // A job answers before its thread counts it out: wait (bounded)
        // for the last few threads to get there.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while pool.busy.load(Ordering::Relaxed) != 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(pool.busy.load(Ordering::Relaxed), 0, "every job counted out");
        assert!(pool.shares.is_empty(), "every share given back");
    }

    /// Where blocked jobs wait (a handshake with a host that does not
    /// answer) until it opens.
    #[derive(Clone, Default)]
    struct Gate(Arc<(Mutex<bool>, Condvar)>);

    impl Gate {
        /// A job that says it started, then waits for the gate.
        fn blocked_job(&self, started: std::sync::mpsc::SyncSender<()>) -> Job {
            let gate = self.clone();
            Box::new(move || {
                started.send(()).unwrap();
                let (open, opened) = &*gate.0;
                let mut open = open.lock().unwrap();
                while !*open {
                    open = opened.wait(open).unwrap();
                }
            })
        }

        fn open(&self) {
            let (open, opened) = &*self.0;
            *open.lock().unwrap() = true;
            opened.notify_all();
        }
    }

    /// Jobs that block (a slow handshake) do not hold back a later one
    /// while fewer than the bound run: it gets a thread of its own.
    #[test]
    fn a_blocked_job_holds_back_no_other() {
        let pool = CallThreads::new();
        let gate = Gate::default();
        let (started, all_started) = sync_channel(10);
        for _ in 0..10 {
            let job = gate.blocked_job(started.clone());
            assert!(pool.run(7, job).is_ok());
        }
        let blocked = (0..10).take_while(|_| all_started.recv_timeout(Duration::from_secs(5)).is_ok()).count();
        let (quick, quick_done) = sync_channel(1);
        assert!(pool.run(7, Box::new(move || quick.send(()).unwrap())).is_ok());
        let ran = quick_done.recv_timeout(Duration::from_secs(5));
        gate.open();
        assert_eq!(blocked, 10, "the ten blocking jobs run at once");
        assert!(ran.is_ok(), "the quick job ran while ten others were blocked");
        assert_eq!(pool.threads.load(Ordering::Relaxed), 11);
    }

    /// A label that holds its whole share with blocked jobs (connects to a
    /// host that never answers) holds back no other label's job; its own
    /// further jobs wait, and run once its jobs end.
    #[test]
    fn a_label_over_its_share_holds_back_no_other() {
        let pool = CallThreads::new();
        let gate = Gate::default();
        let (started, all_started) = sync_channel(MOST_PER_LABEL + 8);
        for _ in 0..MOST_PER_LABEL + 8 {
            let job = gate.blocked_job(started.clone());
            assert!(pool.run("attacker", job).is_ok());
        }
        let first =
            (0..MOST_PER_LABEL).take_while(|_| all_started.recv_timeout(Duration::from_secs(5)).is_ok()).count();
        let early = all_started.recv_timeout(Duration::from_millis(200));
        let (quick, quick_done) = sync_channel(1);
        assert!(pool.run("other", Box::new(move || quick.send(()).unwrap())).is_ok());
        let other_ran = quick_done.recv_timeout(Duration::from_secs(5));
        gate.open();
        let rest = (0..8).take_while(|_| all_started.recv_timeout(Duration::from_secs(5)).is_ok()).count();
        assert_eq!(first, MOST_PER_LABEL, "the label's share runs at once");
        assert!(early.is_err(), "no job beyond the share starts while the share is held");
        assert!(other_ran.is_ok(), "another label's job ran while the share was held");
        assert_eq!(rest, 8, "the waiting jobs ran once the share was given back");
        assert!(pool.threads.load(Ordering::Relaxed) <= MOST_PER_LABEL + 1);
    }
}
