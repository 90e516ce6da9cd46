//! Threads for supervised calls that may block for long (a TCP connect
//! the daemon makes for its caller: crate::sockets): each such call holds
//! a thread of its own until it returns, and answers its caller from
//! there.
//!
//! Why not the workers (crate::supervisor): a handshake with an
//! unreachable host blocks for minutes, and a few of them would hold
//! every worker, stalling every other launched process's supervised
//! calls. Why a pool rather than a thread per call: starting a thread
//! costs more than the connect it makes on a local network.
//!
//! How: a call is a job (a closure that makes the call and answers it),
//! counted from its queueing to its end; when there are more jobs than
//! threads, a thread is started, up to [`MOST_THREADS`]; beyond, jobs
//! queue until a thread is free. So a queued job never waits behind a
//! running one while fewer threads than that run. The counts only decide
//! when to start a thread: the channel carries every job, so none is
//! lost whatever they say (tests: a stress test, and a blocked job
//! holding back no other).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};

/// Most threads at once.
pub(crate) const MOST_THREADS: usize = 256;

/// A call to make, and answer, in a thread of the pool.
pub(crate) type Job = Box<dyn FnOnce() + Send>;

/// The pool.
pub(crate) struct CallThreads {
    send: Mutex<Sender<Job>>,
    receive: Arc<Mutex<Receiver<Job>>>,
    /// Jobs queued or running.
    busy: Arc<AtomicUsize>,
    threads: AtomicUsize,
}

impl CallThreads {
    pub(crate) fn new() -> CallThreads {
        let (send, receive) = channel();
        CallThreads {
            send: Mutex::new(send),
            receive: Arc::new(Mutex::new(receive)),
            busy: Arc::new(AtomicUsize::new(0)),
            threads: AtomicUsize::new(0),
        }
    }

    /// Runs `job` in a thread of the pool; gives it back if no thread
    /// could be started at all (the caller answers its call).
    pub(crate) fn run(&self, job: Job) -> Result<(), Job> {
        // Relaxed throughout: the counts only decide whether to start a
        // thread; the job itself goes through the channel, which orders it.
        let busy = self.busy.fetch_add(1, Ordering::Relaxed) + 1;
        if busy > self.threads.load(Ordering::Relaxed) && self.reserve_thread() {
            if let Err(e) = self.start() {
                if self.threads.fetch_sub(1, Ordering::Relaxed) == 1 {
                    eprintln!("rampartd: supervisor: no thread for a call that may block: {e}");
                    self.busy.fetch_sub(1, Ordering::Relaxed);
                    return Err(job);
                }
            }
        }
        // The receiving end lives as long as `self`: sending cannot fail.
        self.send.lock().unwrap_or_else(PoisonError::into_inner).send(job).map_err(|unsent| {
            self.busy.fetch_sub(1, Ordering::Relaxed);
            unsent.0
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
        let (receive, busy) = (Arc::clone(&self.receive), Arc::clone(&self.busy));
        std::thread::Builder::new().name("supervised call".into()).spawn(move || loop {
            let next = receive.lock().unwrap_or_else(PoisonError::into_inner).recv();
            let Ok(job) = next else { return };
            job();
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
        let pool = Arc::new(CallThreads::new());
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
                        assert!(pool.run(job).is_ok());
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
    }

    /// Jobs that block (a slow handshake) do not hold back a later one
    /// while fewer than the bound run: it gets a thread of its own.
    #[test]
    fn a_blocked_job_holds_back_no_other() {
        let pool = CallThreads::new();
        let gate = Arc::new((Mutex::new(false), Condvar::new()));
        let (started, all_started) = sync_channel(10);
        for _ in 0..10 {
            let (gate, started) = (Arc::clone(&gate), started.clone());
            let job: Job = Box::new(move || {
                started.send(()).unwrap();
                let (open, opened) = &*gate;
                let mut open = open.lock().unwrap();
                while !*open {
                    open = opened.wait(open).unwrap();
                }
            });
            assert!(pool.run(job).is_ok());
        }
        let blocked = (0..10).take_while(|_| all_started.recv_timeout(Duration::from_secs(5)).is_ok()).count();
        let (quick, quick_done) = sync_channel(1);
        assert!(pool.run(Box::new(move || quick.send(()).unwrap())).is_ok());
        let ran = quick_done.recv_timeout(Duration::from_secs(5));
        let (open, opened) = &*gate;
        *open.lock().unwrap() = true;
        opened.notify_all();
        assert_eq!(blocked, 10, "the ten blocking jobs run at once");
        assert!(ran.is_ok(), "the quick job ran while ten others were blocked");
        assert_eq!(pool.threads.load(Ordering::Relaxed), 11);
    }
}
