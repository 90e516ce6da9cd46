//! Horizontal bar charts: one row per category, one bar per series.
//!
//! Why horizontal: the bars leave room for the variant names without
//! rotating text.

use std::path::Path;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{register_fonts, Series, FONT, TARGET, WIDTH};
use crate::error::BenchError;

/// A horizontal bar chart: one row per category, one bar per series.
pub struct BarChart<'a> {
    pub title: &'a str,
    pub x_desc: &'a str,
    pub categories: Vec<String>,
    pub series: Vec<Series>,
    /// A vertical line (value, legend label), e.g. a target.
    pub target: Option<(f64, String)>,
    pub format: fn(f64) -> String,
}

impl BarChart<'_> {
    /// Draws the chart into the PNG file `path`.
    pub fn draw(&self, path: &Path) -> Result<(), BenchError> {
        register_fonts();
        let err = |e: &dyn std::fmt::Display| BenchError::Chart { path: path.to_path_buf(), message: e.to_string() };
        let n = self.categories.len().max(1);
        let k = self.series.len().max(1);
        let row_px = 14 + 20 * k as u32;
        let height = 130 + row_px * n as u32;
        let values = self.series.iter().flat_map(|s| s.values.iter().flatten().copied());
        let (mut lo, mut hi) =
            values.chain(self.target.iter().map(|t| t.0)).fold((0f64, 0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
        if hi <= lo {
            hi = lo + 1.0;
        }
        // Room for the value labels beyond the bars.
        let span = hi - lo;
        hi += span * 0.3;
        if lo < 0.0 {
            lo -= span * 0.3;
        }

        let root = BitMapBackend::new(path, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(self.title, (FONT, 24).into_font())
            .margin(16)
            .x_label_area_size(50)
            .y_label_area_size(175)
            .build_cartesian_2d(lo..hi, 0f64..n as f64)
            .map_err(|e| err(&e))?;
        let format = self.format;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .y_label_formatter(&|_| String::new())
            .x_labels(8)
            .x_label_formatter(&|v| format(*v))
            .x_desc(self.x_desc)
            .axis_desc_style((FONT, 16))
            .label_style((FONT, 14))
            .draw()
            .map_err(|e| err(&e))?;

        let band = 0.8 / k as f64;
        for (j, series) in self.series.iter().enumerate() {
            let color = series.color;
            let bars: Vec<(f64, f64, f64)> = series
                .values
                .iter()
                .enumerate()
                .filter_map(|(i, v)| {
                    let top = (n - i) as f64 - 0.1 - j as f64 * band;
                    v.map(|v| (v, top - band, top))
                })
                .collect();
            chart
                .draw_series(
                    bars.iter().map(|&(v, y0, y1)| Rectangle::new([(0.0, y0 + 0.02), (v, y1 - 0.02)], color.filled())),
                )
                .map_err(|e| err(&e))?
                .label(series.label.clone())
                .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled()));
            let label_style =
                |anchor: HPos| TextStyle::from((FONT, 13).into_font()).pos(Pos::new(anchor, VPos::Center));
            chart
                .draw_series(bars.iter().map(|&(v, y0, y1)| {
                    let (anchor, dx) = if v < 0.0 { (HPos::Right, -4) } else { (HPos::Left, 4) };
                    EmptyElement::at((v, (y0 + y1) / 2.0)) + Text::new(format(v), (dx, 0), label_style(anchor))
                }))
                .map_err(|e| err(&e))?;
        }
        if let Some((t, label)) = &self.target {
            chart
                .draw_series(std::iter::once(PathElement::new(vec![(*t, 0.0), (*t, n as f64)], TARGET.stroke_width(2))))
                .map_err(|e| err(&e))?
                .label(label.clone())
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], TARGET.stroke_width(2)));
        }
        // One series needs no legend: the axis description says what the
        // bars are.
        if self.series.len() > 1 || self.target.is_some() {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::LowerRight)
                .background_style(WHITE.mix(0.9))
                .border_style(BLACK)
                .label_font((FONT, 14))
                .draw()
                .map_err(|e| err(&e))?;
        }

        // Category names, right-aligned left of the plot.
        for (i, name) in self.categories.iter().enumerate() {
            let (x, y) = chart.backend_coord(&(lo, (n - i) as f64 - 0.5));
            let style = TextStyle::from((FONT, 15).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
            root.draw(&Text::new(name.clone(), (x - 10, y), style)).map_err(|e| err(&e))?;
        }
        root.present().map_err(|e| err(&e))?;
        Ok(())
    }
}
