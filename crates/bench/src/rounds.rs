//! Interleaved rounds: on a shared machine a slow moment should hit
//! every variant alike, so each round starts with a different one.

/// `ids` starting at position `round` (mod length).
pub fn rotated<T: Copy>(ids: &[T], round: usize) -> Vec<T> {
    let n = ids.len().max(1);
    (0..ids.len()).map(|i| ids[(i + round) % n]).collect()
}
