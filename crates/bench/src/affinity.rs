//! Pinning a thread to a CPU, for the chat room.
//!
//! Why: with two pairs of threads on two CPUs, the scheduler sometimes
//! keeps each pair on one CPU (a send wakes the peer on the same CPU) and
//! sometimes splits pairs across CPUs (every message crosses CPUs); the
//! two placements differ by about 2x in messages per second, whichever
//! variant runs, which drowned the checks' cost in a coin toss. Pinning
//! each pair to one CPU (pair `p` on the `p`-th allowed CPU) makes every
//! run use the same placement, while the pairs on different CPUs still
//! share whatever a variant shares (its lock, counter or refcount).

/// The CPUs this process may run on, in order (empty if unknown).
#[cfg(target_os = "linux")]
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is a plain bitmask for which all-zero bytes are a
    // valid (empty) value.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, writable cpu_set_t of the size passed.
    let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Vec::new();
    }
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: every index is below the set's size in bits.
    (0..max).filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) }).collect()
}

#[cfg(not(target_os = "linux"))]
pub fn allowed_cpus() -> Vec<usize> {
    Vec::new()
}

/// Pins the calling thread to `cpu`; false if that failed.
#[cfg(target_os = "linux")]
pub fn pin_current_thread(cpu: usize) -> bool {
    if cpu >= 8 * std::mem::size_of::<libc::cpu_set_t>() {
        return false;
    }
    // SAFETY: as in `allowed_cpus`: all-zero is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` is below the set's size in bits (checked above).
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: `set` is a valid cpu_set_t of the size passed; pid 0 is the
    // calling thread.
    unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0 }
}

#[cfg(not(target_os = "linux"))]
pub fn pin_current_thread(_cpu: usize) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_to_an_allowed_cpu() {
        let cpus = allowed_cpus();
        if let Some(&cpu) = cpus.first() {
            let pinned = std::thread::spawn(move || pin_current_thread(cpu)).join().unwrap();
            assert!(pinned);
        }
    }
}
