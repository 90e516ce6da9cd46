//! The enforcement benchmark's charts: first-touch event throughput
//! against client threads (issue 8), in absolute terms and over one
//! client's.
//!
//! Why both: issue 8's targets are ratios (N clients over one, beside
//! the trivial responder's), and a ratio hides a faster base; the
//! absolute chart shows which listener answers more events.

use std::path::{Path, PathBuf};

use super::EnforceReport;
use crate::chart::{line_color, LineChart, Series};
use crate::enforce::model::{Listener, Workload};
use crate::error::BenchError;
use crate::markdown::group;

/// First-touch events per second of all clients, by client count.
pub const THROUGHPUT: &str = "enforce_clients.png";
/// The same over one client's, with issue 8's 2.5x.
pub const SCALING: &str = "enforce_clients_scaling.png";
/// Issue 8: at least this many times one client's throughput at 8 and 16
/// clients.
const SCALING_TARGET: f64 = 2.5;

impl EnforceReport {
    /// The listeners that answered events (no listener has none), with
    /// rounds.
    fn charted(&self) -> Vec<Listener> {
        self.variants
            .iter()
            .filter(|v| v.listener != Listener::None && !v.rounds.is_empty())
            .map(|v| v.listener)
            .collect()
    }

    /// Draws [`THROUGHPUT`] and [`SCALING`] into `dir`; returns their
    /// paths.
    pub fn charts(&self, dir: &Path) -> Result<Vec<PathBuf>, BenchError> {
        std::fs::create_dir_all(dir).map_err(BenchError::io(format!("cannot create {}", dir.display())))?;
        let clients = self.clients();
        let lines = |f: &dyn Fn(Listener, usize) -> Option<f64>| -> Vec<Series> {
            self.charted()
                .into_iter()
                .enumerate()
                .map(|(i, l)| Series {
                    label: l.name().to_owned(),
                    values: clients.iter().map(|&n| f(l, n)).collect(),
                    color: line_color(i),
                })
                .collect()
        };
        let title = format!("First-touch opens, {} CPUs: every open a permission event", self.cpus);
        let throughput = dir.join(THROUGHPUT);
        LineChart {
            title: &title,
            x_desc: "client threads",
            y_desc: "events per second, all clients (higher is better)",
            xs: clients.clone(),
            series: lines(&|l, n| self.ops_per_s(l, Workload::FirstTouch(n))),
            target: None,
            format: group,
        }
        .draw(&throughput)?;
        let scaling = dir.join(SCALING);
        LineChart {
            title: &title,
            x_desc: "client threads",
            y_desc: "events per second over 1 client's",
            xs: clients.clone(),
            series: lines(&|l, n| self.scaling(l, Workload::FirstTouch(n), Workload::FirstTouch(1))),
            target: clients
                .iter()
                .any(|&n| n >= 8)
                .then(|| (SCALING_TARGET, "issue 8: 2.5x at 8 and 16 clients".into())),
            format: |v| format!("{v:.1}x"),
        }
        .draw(&scaling)?;
        Ok(vec![throughput, scaling])
    }
}
