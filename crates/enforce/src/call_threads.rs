//! Threads for supervised calls that may block for long: a TCP connect
//! the daemon makes for its caller (crate::sockets), and, in a pool of
//! their own whose threads are set up as workers, the path calls of
//! crate::supervisor (a chmod waits on its file's inode lock, which a
//! process of the caller's domain may hold for seconds). Each such call
//! holds a thread until it returns, and answers its caller from there.
//!
//! Why not a few fixed threads: a handshake with an unreachable host
//! blocks for minutes, a chmod behind a 1 GiB write for a second, and a
//! few such calls would hold every thread, stalling every other launched
//! process's supervised calls. Why a pool rather than a thread per call:
//! starting a thread costs more than the call it makes. Why a share per
//! label: the threads are shared by every launched process, where the
//! kernel's calls share nothing; without shares a process could hold
//! them all, and every other domain's calls would wait behind its own.
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
//! job's thread takes it (both under one lock). A thread that a job
//! leaves unfit ([`After::EndThread`]) ends, and hands the rest of its
//! label's turn to the channel, where another thread takes it up. Tests: the shares' loom
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

/// Most jobs of one label waiting for one of its running ones to end;
/// further ones are refused (their calls answered `EAGAIN`). Each holds
/// what its call gathered (descriptors of the caller's root and
/// objects): without a bound, one domain's blocked calls could take
/// every descriptor the daemon may open.
pub(crate) const MOST_WAITING_PER_LABEL: usize = 1024;

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

    /// `job` of `label`, to run now (`Ok(Some)`), or queued behind the
    /// label's running jobs (`Ok(None)`): the thread that ends one of them
    /// takes it ([`Self::ended`]); `Err` gives it back when
    /// [`MOST_WAITING_PER_LABEL`] of the label's already wait.
    pub fn admit(&self, label: &K, job: J) -> Result<Option<J>, J> {
        let mut labels = self.labels.lock().unwrap_or_else(PoisonError::into_inner);
        let share = labels.entry(label.clone()).or_insert_with(|| Share { running: 0, waiting: VecDeque::new() });
        if share.running >= self.most {
            if share.waiting.len() >= MOST_WAITING_PER_LABEL {
                return Err(job);
            }
            share.waiting.push_back(job);
            return Ok(None);
        }
        share.running += 1;
        Ok(Some(job))
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

/// Whether the thread that ran a job may take another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum After {
    /// Its state is as its setup left it.
    Continue,
    /// It could not be restored (a worker that cannot take back the
    /// daemon's credentials): it ends, and its label's waiting jobs go to
    /// another thread.
    EndThread,
}

/// A call to make, and answer, in a thread of the pool, with the state
/// `S` its thread's setup made.
pub(crate) type JobWith<S> = Box<dyn FnOnce(&S) -> After + Send>;

/// What a thread of the pool makes itself before its first job (the
/// workers' private root and Landlock ruleset: crate::supervisor); it
/// lives in that thread only.
type Setup<S> = Box<dyn Fn() -> std::io::Result<S> + Send + Sync>;

/// What the threads share: the channel's receiving end, the shares, the
/// counts, and how to set up a thread.
struct Pool<K, S> {
    /// Both ends: a thread that ends hands its label's turn back to the
    /// channel ([`Pool::hand_over`]); the threads live as long as the
    /// daemon.
    send: Mutex<Sender<(K, JobWith<S>)>>,
    receive: Mutex<Receiver<(K, JobWith<S>)>>,
    shares: Shares<K, JobWith<S>>,
    /// Admitted jobs queued or running.
    busy: AtomicUsize,
    threads: AtomicUsize,
    setup: Setup<S>,
    name: &'static str,
}

/// The pool, its jobs told apart by label `K`, its threads each holding a
/// state `S`.
pub(crate) struct CallThreads<K, S = ()> {
    pool: Arc<Pool<K, S>>,
}

/// A job dropped unrun: no thread could be started for it and none runs,
/// or its label's queue is full. Its caller answers the call.
#[derive(Debug)]
pub(crate) struct NotRun;

impl<K: Clone + Eq + Hash + Send + 'static> CallThreads<K> {
    /// Threads with no state of their own (connects, the calls on
    /// processes of crate::supervisor).
    pub(crate) fn new() -> CallThreads<K> {
        CallThreads::with_setup("supervised call", || Ok(()))
    }

    /// Runs `job` of `label` (see [`Self::run_with`]).
    pub(crate) fn run(&self, label: K, job: Job) -> Result<(), NotRun> {
        self.run_with(
            label,
            Box::new(|_: &()| {
                job();
                After::Continue
            }),
        )
    }
}

impl<K: Clone + Eq + Hash + Send + 'static, S: 'static> CallThreads<K, S> {
    /// A pool whose threads, named `name`, each run `setup` once, in
    /// themselves, before their first job; a thread whose setup fails is
    /// not started.
    pub(crate) fn with_setup(
        name: &'static str,
        setup: impl Fn() -> std::io::Result<S> + Send + Sync + 'static,
    ) -> CallThreads<K, S> {
        let (send, receive) = channel();
        let pool = Pool {
            send: Mutex::new(send),
            receive: Mutex::new(receive),
            shares: Shares::new(MOST_PER_LABEL),
            busy: AtomicUsize::new(0),
            threads: AtomicUsize::new(0),
            setup: Box::new(setup),
            name,
        };
        CallThreads { pool: Arc::new(pool) }
    }

    /// Runs `job` of `label` in a thread of the pool, now or after one of
    /// the label's running jobs; drops it if no thread could be started
    /// at all (the caller answers its call).
    pub(crate) fn run_with(&self, label: K, job: JobWith<S>) -> Result<(), NotRun> {
        let pool = &self.pool;
        let job = match pool.shares.admit(&label, job) {
            Ok(Some(job)) => job,
            Ok(None) => return Ok(()),
            Err(_) => return Err(NotRun),
        };
        // Relaxed throughout: the counts only decide whether to start a
        // thread; the job itself goes through the channel, which orders it.
        let busy = pool.busy.fetch_add(1, Ordering::Relaxed) + 1;
        if busy > pool.threads.load(Ordering::Relaxed) && pool.reserve_thread() {
            if let Err(e) = Pool::start(pool) {
                if pool.threads.fetch_sub(1, Ordering::Relaxed) == 1 {
                    eprintln!("rampartd: supervisor: no thread for a supervised call: {e}");
                    pool.busy.fetch_sub(1, Ordering::Relaxed);
                    pool.shares.ended(&label);
                    return Err(NotRun);
                }
            }
        }
        // The receiving end lives as long as the pool: sending cannot fail.
        pool.send.lock().unwrap_or_else(PoisonError::into_inner).send((label, job)).map_err(|unsent| {
            pool.busy.fetch_sub(1, Ordering::Relaxed);
            pool.shares.ended(&(unsent.0).0);
            NotRun
        })
    }
}

impl<K: Clone + Eq + Hash + Send + 'static, S: 'static> Pool<K, S> {
    /// Counts one more thread, unless [`MOST_THREADS`] run: in one step,
    /// so that callers starting threads at once never pass the bound
    /// (a load and a later add did: the stress test saw more).
    fn reserve_thread(&self) -> bool {
        self.threads.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| (n < MOST_THREADS).then_some(n + 1)).is_ok()
    }

    /// Starts a thread counted by [`Self::reserve_thread`], and waits for
    /// its setup: `Err` if it could not be started or set up.
    fn start(pool: &Arc<Self>) -> std::io::Result<()> {
        let (ready, set_up) = std::sync::mpsc::sync_channel(1);
        let serving = Arc::clone(pool);
        std::thread::Builder::new().name(pool.name.into()).spawn(move || {
            let state = match (serving.setup)() {
                Ok(state) => state,
                Err(e) => {
                    // The starter waits for this: it cannot have gone.
                    let _ = ready.send(Err(e));
                    return;
                }
            };
            let _ = ready.send(Ok(()));
            serving.serve(&state);
        })?;
        set_up.recv().unwrap_or_else(|_| Err(std::io::Error::other("a call thread ended in its setup")))
    }

    /// A thread's life: the next job and its label's waiting ones, until
    /// a job leaves the thread unfit.
    fn serve(&self, state: &S) {
        loop {
            let next = self.receive.lock().unwrap_or_else(PoisonError::into_inner).recv();
            let Ok((label, job)) = next else { return };
            if job(state) == After::EndThread {
                return self.hand_over(label);
            }
            // The label's waiting jobs, in this thread, until none is left.
            while let Some(waiting) = self.shares.ended(&label) {
                if waiting(state) == After::EndThread {
                    return self.hand_over(label);
                }
            }
            self.busy.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// The calling thread ends amid `label`'s jobs: it leaves the count,
    /// and hands the rest of the label's turn to the channel, as a job
    /// that does nothing, after which the thread that takes it runs the
    /// label's waiting jobs (the turn stays counted busy and running).
    /// No thread is started from one left unfit, which may hold a
    /// caller's credentials and root: the next job admitted starts one
    /// where none is idle.
    fn hand_over(&self, label: K) {
        self.threads.fetch_sub(1, Ordering::Relaxed);
        let turn: JobWith<S> = Box::new(|_: &S| After::Continue);
        // Both ends live in the pool: sending cannot fail.
        let _ = self.send.lock().unwrap_or_else(PoisonError::into_inner).send((label, turn));
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
        assert!(pool.pool.threads.load(Ordering::Relaxed) <= MOST_THREADS);
        // A job answers before its thread counts it out: wait (bounded)
        // for the last few threads to get there.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while pool.pool.busy.load(Ordering::Relaxed) != 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(pool.pool.busy.load(Ordering::Relaxed), 0, "every job counted out");
        assert!(pool.pool.shares.is_empty(), "every share given back");
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
        assert_eq!(pool.pool.threads.load(Ordering::Relaxed), 11);
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
        assert!(pool.pool.threads.load(Ordering::Relaxed) <= MOST_PER_LABEL + 1);
    }

    /// A job that leaves its thread unfit ends that thread, whose place
    /// goes to a thread set up afresh; the label's jobs that were waiting
    /// behind it run. No job is lost, and no thread runs a job after it
    /// was left unfit.
    #[test]
    fn a_thread_left_unfit_ends_and_its_labels_jobs_go_on() {
        let setups = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&setups);
        // Each thread's state: its number, in the order of setup.
        let pool = CallThreads::<&str, usize>::with_setup("test", move || Ok(counted.fetch_add(1, Ordering::Relaxed)));
        let gate = Gate::default();
        let (started, all_started) = sync_channel(MOST_PER_LABEL);
        for _ in 0..MOST_PER_LABEL {
            let job = gate.blocked_job(started.clone());
            assert!(pool
                .run_with(
                    "label",
                    Box::new(move |_: &usize| {
                        job();
                        After::Continue
                    })
                )
                .is_ok());
        }
        let running =
            (0..MOST_PER_LABEL).take_while(|_| all_started.recv_timeout(Duration::from_secs(5)).is_ok()).count();
        assert_eq!(running, MOST_PER_LABEL, "the label's share runs");
        // Two more wait behind them: each ends its thread.
        let (ran, ran_on) = sync_channel(2);
        for _ in 0..2 {
            let ran = ran.clone();
            assert!(pool
                .run_with(
                    "label",
                    Box::new(move |thread: &usize| {
                        ran.send(*thread).unwrap();
                        After::EndThread
                    })
                )
                .is_ok());
        }
        gate.open();
        let unfit: Vec<usize> =
            (0..2).map(|_| ran_on.recv_timeout(Duration::from_secs(5)).expect("a waiting job ran")).collect();
        // Then a job on each thread left: none runs on an unfit one.
        let (after, after_on) = sync_channel(MOST_PER_LABEL);
        for _ in 0..MOST_PER_LABEL {
            let after = after.clone();
            assert!(pool
                .run_with(
                    "other",
                    Box::new(move |thread: &usize| {
                        after.send(*thread).unwrap();
                        After::Continue
                    })
                )
                .is_ok());
        }
        for _ in 0..MOST_PER_LABEL {
            let thread = after_on.recv_timeout(Duration::from_secs(5)).expect("every later job ran");
            assert!(!unfit.contains(&thread), "a job ran on thread {thread}, which a job left unfit");
        }
        // An unfit thread counts itself out after its job answered: wait
        // (bounded) for both.
        let counted_out = || setups.load(Ordering::Relaxed) == pool.pool.threads.load(Ordering::Relaxed) + 2;
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while !counted_out() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(counted_out(), "the two unfit threads ended, counted out");
    }

    /// A label's queue is bounded: beyond [`MOST_WAITING_PER_LABEL`]
    /// waiting jobs, the next is refused (its call answered at once),
    /// another label's is not; the waiting ones all run once the share
    /// is given back.
    #[test]
    fn a_labels_queue_is_bounded() {
        let pool = CallThreads::new();
        let gate = Gate::default();
        let (started, all_started) = sync_channel(MOST_PER_LABEL);
        for _ in 0..MOST_PER_LABEL {
            assert!(pool.run("attacker", gate.blocked_job(started.clone())).is_ok());
        }
        let running =
            (0..MOST_PER_LABEL).take_while(|_| all_started.recv_timeout(Duration::from_secs(5)).is_ok()).count();
        let ran = Arc::new(AtomicUsize::new(0));
        for _ in 0..MOST_WAITING_PER_LABEL {
            let ran = Arc::clone(&ran);
            assert!(pool
                .run(
                    "attacker",
                    Box::new(move || {
                        ran.fetch_add(1, Ordering::Relaxed);
                    })
                )
                .is_ok());
        }
        let refused = pool.run("attacker", Box::new(|| panic!("a job beyond the bound ran"))).is_err();
        let (quick, quick_done) = sync_channel(1);
        let other = pool.run("other", Box::new(move || quick.send(()).unwrap())).is_ok();
        let other_ran = quick_done.recv_timeout(Duration::from_secs(5));
        gate.open();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while ran.load(Ordering::Relaxed) < MOST_WAITING_PER_LABEL && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(running, MOST_PER_LABEL);
        assert!(refused, "the job past the bound was refused");
        assert!(other && other_ran.is_ok(), "another label's job ran");
        assert_eq!(ran.load(Ordering::Relaxed), MOST_WAITING_PER_LABEL, "every waiting job ran");
    }

    /// A pool whose threads cannot be set up runs nothing, and says so.
    #[test]
    fn a_thread_that_cannot_be_set_up_takes_no_job() {
        let pool = CallThreads::<u8, ()>::with_setup("test", || Err(std::io::Error::other("no")));
        let (ran, ran_on) = sync_channel(1);
        let outcome = pool.run_with(
            1,
            Box::new(move |_: &()| {
                ran.send(()).unwrap();
                After::Continue
            }),
        );
        assert!(outcome.is_err(), "no thread, no job");
        assert!(ran_on.recv_timeout(Duration::from_millis(200)).is_err(), "the job never ran");
        assert_eq!(pool.pool.threads.load(Ordering::Relaxed), 0);
        assert!(pool.pool.shares.is_empty(), "its share was given back");
    }
}
