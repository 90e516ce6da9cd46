//! PNG charts of a report: a horizontal bar chart per workload
//! ([`bars`]), and throughput against threads or clients ([`lines`]).
//!
//! Why these choices: the charts are drawn with `plotters`' bitmap
//! backend and its `ab_glyph` text renderer over a font embedded from the
//! `dejavu` crate, so drawing needs no system font, no fontconfig and no
//! C library: it builds and runs the same on a bare Debian.

pub mod bars;
pub mod lines;

use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

pub use bars::BarChart;
pub use lines::LineChart;

use crate::error::BenchError;
use crate::markdown::group;
use crate::report::Report;
use crate::variants::VariantId;

const WIDTH: u32 = 1000;
const FONT: &str = "sans-serif";
const BLUE: RGBColor = RGBColor(52, 101, 164);
const ORANGE: RGBColor = RGBColor(230, 120, 30);
const TARGET: RGBColor = RGBColor(200, 30, 30);
/// Colors of the lines of a line chart, in series order: Tableau 10 (ten
/// that stay apart, for the nine AVC designs) with black for its red,
/// which targets use.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(0, 0, 0),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// The file of the AVC hits' chart against threads (per thread: the
/// figures are thread CPU time, so beyond the CPUs a sum of threads
/// would show throughput no wall clock saw).
pub const THREADS_CHART: &str = "seeds_threads.png";

/// The color of the `i`th line of a chart.
pub fn line_color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// One set of bars, or one line (a color in the legend).
pub struct Series {
    pub label: String,
    pub values: Vec<Option<f64>>,
    pub color: RGBColor,
}
fn register_fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // A failure shows later as an error drawing text.
        let _ = register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
        let _ = register_font(FONT, FontStyle::Bold, dejavu::sans::bold());
    });
}

/// Writes the charts of the SELinux seed workloads into `dir` (a bar
/// chart per workload, and the AVC hits' throughput against threads);
/// returns their paths.
pub fn write_all(report: &Report, dir: &Path) -> Result<Vec<PathBuf>, BenchError> {
    std::fs::create_dir_all(dir).map_err(BenchError::io(format!("cannot create {}", dir.display())))?;
    let mut written = Vec::new();
    let names = |ids: &[VariantId]| ids.iter().map(|v| v.name().to_owned()).collect::<Vec<_>>();
    let threads = |f: &dyn Fn(VariantId, usize) -> Option<f64>, ids: &[VariantId]| {
        vec![
            Series { label: "1 thread".into(), values: ids.iter().map(|&v| f(v, 1)).collect(), color: BLUE },
            Series { label: "2 threads".into(), values: ids.iter().map(|&v| f(v, 2)).collect(), color: ORANGE },
        ]
    };

    let hit_ids: Vec<VariantId> = report.hits.keys().copied().collect();
    let path = dir.join("seeds_hits.png");
    BarChart {
        title: "AVC hits: cost per check (seeds 000, 004)",
        x_desc: "ns per check per thread (lower is better)",
        categories: names(&hit_ids),
        series: threads(&|v, t| report.hit_ns(v, t), &hit_ids),
        target: None,
        format: |v| format!("{v:.1}"),
    }
    .draw(&path)?;
    written.push(path);

    let rcu_ids: Vec<VariantId> = report.rcutest.keys().copied().collect();
    let path = dir.join("seeds_rcutest.png");
    let writes = group(report.params.rcutest_writes as f64);
    let title = format!("rcutest: {writes} checked 1-byte writes per thread on tmpfs (seed 000)");
    BarChart {
        title: &title,
        x_desc: "seconds, real time (lower is better)",
        categories: names(&rcu_ids),
        series: threads(&|v, t| report.rcutest_s(v, t), &rcu_ids),
        target: None,
        format: |v| format!("{v:.3}"),
    }
    .draw(&path)?;
    written.push(path);

    let rw_ids: Vec<VariantId> = report.rw.keys().copied().filter(|&v| v != VariantId::None).collect();
    let path = dir.join("seeds_rw.png");
    BarChart {
        title: "lmbench simple read/write: overhead over no check (seed 002)",
        x_desc: "% over none (lower is better)",
        categories: names(&rw_ids),
        series: vec![
            Series {
                label: "read /dev/zero".into(),
                values: rw_ids.iter().map(|&v| report.rw_overhead_pct(v).map(|x| x.0)).collect(),
                color: BLUE,
            },
            Series {
                label: "write /dev/null".into(),
                values: rw_ids.iter().map(|&v| report.rw_overhead_pct(v).map(|x| x.1)).collect(),
                color: ORANGE,
            },
        ],
        target: Some((2.0, "target: 2%".into())),
        format: |v| format!("{v:+.1}%"),
    }
    .draw(&path)?;
    written.push(path);

    let chat_ids: Vec<VariantId> = report.chat.keys().copied().collect();
    let path = dir.join("seeds_chatroom.png");
    let title = format!("Chat room: {} thread pairs over loopback TCP (seed 004)", report.params.chat_pairs);
    BarChart {
        title: &title,
        x_desc: "messages per second (higher is better)",
        categories: names(&chat_ids),
        series: vec![Series {
            label: "messages/s".into(),
            values: chat_ids.iter().map(|&v| report.chat_msgs_per_s(v)).collect(),
            color: BLUE,
        }],
        target: None,
        format: group,
    }
    .draw(&path)?;
    written.push(path);

    let path = dir.join(THREADS_CHART);
    LineChart {
        title: "AVC hits: scaling efficiency (seeds 000, 004)",
        x_desc: "threads",
        y_desc: "checks per second per thread, % of one thread's",
        xs: report.params.threads.clone(),
        series: hit_ids
            .iter()
            .enumerate()
            .map(|(i, &v)| Series {
                label: v.name().to_owned(),
                values: report.params.threads.iter().map(|&t| report.hit_efficiency(v, t).map(|e| e * 100.0)).collect(),
                color: line_color(i),
            })
            .collect(),
        target: None,
        format: |v| format!("{v:.0}%"),
    }
    .draw(&path)?;
    written.push(path);
    Ok(written)
}
