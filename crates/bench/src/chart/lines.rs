//! Line charts of a measure against thread or client counts.
//!
//! Why an evenly spaced x axis: the counts are 1, 2 and powers of two up
//! to the CPUs, so one step per count is a log2 scale whose ticks are
//! exactly the counts that ran; a linear axis would crowd 1, 2 and 4 into
//! a corner. A count a series lacks breaks its line rather than joining
//! its neighbours, so a missing run never looks like a measurement.

use std::path::Path;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{register_fonts, Series, FONT, TARGET, WIDTH};
use crate::error::BenchError;

const HEIGHT: u32 = 560;
/// The legend's column, right of the plot: lines that meet near 100%
/// leave no free corner inside it.
const LEGEND_WIDTH: u32 = 270;

/// A line per series over the counts `xs` (each series has a value, or
/// none, per count).
pub struct LineChart<'a> {
    pub title: &'a str,
    pub x_desc: &'a str,
    pub y_desc: &'a str,
    pub xs: Vec<usize>,
    pub series: Vec<Series>,
    /// A horizontal line (value, legend label), e.g. a target.
    pub target: Option<(f64, String)>,
    pub format: fn(f64) -> String,
}

impl LineChart<'_> {
    /// Draws the chart into the PNG file `path`.
    pub fn draw(&self, path: &Path) -> Result<(), BenchError> {
        register_fonts();
        let err = |e: &dyn std::fmt::Display| BenchError::Chart { path: path.to_path_buf(), message: e.to_string() };
        let values = self.series.iter().flat_map(|s| s.values.iter().flatten().copied());
        let hi = values.chain(self.target.iter().map(|t| t.0)).filter(|v| v.is_finite()).fold(0f64, f64::max);
        // Room above the highest point for the legend.
        let hi = if hi > 0.0 { hi * 1.25 } else { 1.0 };
        let last = self.xs.len().saturating_sub(1) as f64;

        let root = BitMapBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let (plot, side) = root.split_horizontally(WIDTH - LEGEND_WIDTH);
        let mut chart = ChartBuilder::on(&plot)
            .caption(self.title, (FONT, 24).into_font())
            .margin(16)
            .x_label_area_size(50)
            .y_label_area_size(90)
            .build_cartesian_2d(-0.25..last + 0.25, 0f64..hi)
            .map_err(|e| err(&e))?;
        let format = self.format;
        let xs = &self.xs;
        // Labels only at whole steps: those are the counts that ran.
        let x_label = |v: &f64| {
            let step = v.round();
            if (v - step).abs() > 1e-6 || step < 0.0 {
                return String::new();
            }
            xs.get(step as usize).map(usize::to_string).unwrap_or_default()
        };
        chart
            .configure_mesh()
            .x_labels(self.xs.len().max(2))
            .x_label_formatter(&x_label)
            .disable_x_mesh()
            .y_labels(8)
            .y_label_formatter(&|v| format(*v))
            .x_desc(self.x_desc)
            .y_desc(self.y_desc)
            .axis_desc_style((FONT, 16))
            .label_style((FONT, 14))
            .draw()
            .map_err(|e| err(&e))?;

        for series in &self.series {
            let color = series.color;
            let style = color.stroke_width(3);
            for run in runs(&series.values) {
                chart.draw_series(std::iter::once(PathElement::new(run.clone(), style))).map_err(|e| err(&e))?;
                chart.draw_series(run.iter().map(|&p| Circle::new(p, 4, color.filled()))).map_err(|e| err(&e))?;
            }
        }
        let mut legend: Vec<(String, ShapeStyle)> =
            self.series.iter().map(|s| (s.label.clone(), s.color.stroke_width(3))).collect();
        if let Some((t, label)) = &self.target {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(-0.25, *t), (last + 0.25, *t)],
                    TARGET.stroke_width(2),
                )))
                .map_err(|e| err(&e))?;
            legend.push((label.clone(), TARGET.stroke_width(2)));
        }
        // The legend, a line and a name per row, in the side column.
        for (i, (label, style)) in legend.into_iter().enumerate() {
            let y = 70 + 24 * i as i32;
            side.draw(&PathElement::new(vec![(0, y), (22, y)], style)).map_err(|e| err(&e))?;
            let text = TextStyle::from((FONT, 14).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
            side.draw(&Text::new(label, (30, y), text)).map_err(|e| err(&e))?;
        }
        root.present().map_err(|e| err(&e))?;
        Ok(())
    }
}

/// The stretches of consecutive counts that have a finite value, as
/// points (step, value).
fn runs(values: &[Option<f64>]) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut current = Vec::new();
    for (i, v) in values.iter().enumerate() {
        match v {
            Some(v) if v.is_finite() => current.push((i as f64, *v)),
            _ if !current.is_empty() => out.push(std::mem::take(&mut current)),
            _ => {}
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_count_breaks_the_line() {
        let runs = runs(&[Some(1.0), Some(2.0), None, Some(f64::NAN), Some(4.0)]);
        assert_eq!(runs, vec![vec![(0.0, 1.0), (1.0, 2.0)], vec![(4.0, 4.0)]]);
        assert!(super::runs(&[None, None]).is_empty());
    }

    #[test]
    fn draws_a_png() {
        let dir = std::env::temp_dir().join(format!("rampart-lines-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("x.png");
        LineChart {
            title: "t",
            x_desc: "clients",
            y_desc: "events/s",
            xs: vec![1, 2, 4],
            series: vec![Series { label: "a".into(), values: vec![Some(1.0), None, Some(3.0)], color: BLACK }],
            target: Some((2.0, "target".into())),
            format: |v| format!("{v:.1}"),
        }
        .draw(&path)
        .unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
