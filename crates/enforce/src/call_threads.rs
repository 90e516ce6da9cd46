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
//! How: calls are counted from their queueing to their answer; when
//! there are more than threads, a thread is started, up to
//! [`MOST_THREADS`]; beyond, calls queue until a thread is free. So a
//! queued call never waits behind a running one while fewer threads
//! than that run.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};

use crate::calls_in_flight::Entry;

/// Most threads at once.
pub(crate) const MOST_THREADS: usize = 256;

/// A call to make and answer.
pub(crate) struct Call {
    pub(crate) listener: Arc<OwnedFd>,
    pub(crate) id: u64,
    pub(crate) make: Box<dyn FnOnce() -> Result<i64, i32> + Send>,
    /// Lives until the call is answered (crate::calls_in_flight).
    pub(crate) entry: Option<Entry>,
}

/// The pool.
pub(crate) struct CallThreads {
    send: Mutex<Sender<Call>>,
    receive: Arc<Mutex<Receiver<Call>>>,
    /// Calls queued or running.
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

    /// Makes `call` in a thread of the pool, which answers it.
    pub(crate) fn run(&self, call: Call) {
        // Relaxed throughout: the counts only decide whether to start a
        // thread; the call itself goes through the channel, which orders it.
        let busy = self.busy.fetch_add(1, Ordering::Relaxed) + 1;
        let threads = self.threads.load(Ordering::Relaxed);
        if busy > threads && threads < MOST_THREADS {
            if let Err(e) = self.start() {
                if self.threads.load(Ordering::Relaxed) == 0 {
                    eprintln!("rampartd: supervisor: no thread for a call that may block ({e}); it fails with EAGAIN");
                    self.busy.fetch_sub(1, Ordering::Relaxed);
                    return answer(&call.listener, call.id, Err(libc::EAGAIN));
                }
            }
        }
        if let Err(unsent) = self.send.lock().unwrap_or_else(PoisonError::into_inner).send(call) {
            let call = unsent.0;
            self.busy.fetch_sub(1, Ordering::Relaxed);
            answer(&call.listener, call.id, Err(libc::EAGAIN));
        }
    }

    fn start(&self) -> std::io::Result<()> {
        let (receive, busy) = (Arc::clone(&self.receive), Arc::clone(&self.busy));
        std::thread::Builder::new().name("supervised call".into()).spawn(move || loop {
            let next = receive.lock().unwrap_or_else(PoisonError::into_inner).recv();
            let Ok(call) = next else { return };
            let result = (call.make)();
            answer(&call.listener, call.id, result);
            drop(call.entry);
            busy.fetch_sub(1, Ordering::Relaxed);
        })?;
        self.threads.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

fn answer(listener: &Arc<OwnedFd>, id: u64, result: Result<i64, i32>) {
    crate::supervisor::respond(listener.as_fd(), id, result);
}
