//! Samples per thread count, and medians, the only statistic reported:
//! on a shared machine a few runs are slowed by other jobs, and a median
//! ignores them where a mean would not.

use std::collections::BTreeMap;

/// The median of `values` (mean of the middle two for an even count);
/// NaN values are ignored; `None` if nothing is left.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 1 { v[mid] } else { (v[mid - 1] + v[mid]) / 2.0 })
}

/// Samples of a workload run at each thread count, one per round.
#[derive(Clone, Debug, Default)]
pub struct Samples {
    /// By thread count ([`crate::params::Params::threads`]).
    pub per_threads: BTreeMap<usize, Vec<f64>>,
}

impl Samples {
    pub fn push(&mut self, threads: usize, value: f64) {
        self.per_threads.entry(threads).or_default().push(value);
    }

    /// The samples at `threads` (none if it was not run).
    pub fn at(&self, threads: usize) -> &[f64] {
        self.per_threads.get(&threads).map_or(&[], Vec::as_slice)
    }
}

/// Below this on-CPU share (median of the 2-thread hit runs) the two
/// threads did not really run at the same time.
pub const BUSY_ON_CPU: f64 = 0.9;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[f64::NAN, 5.0]), Some(5.0));
    }
}
