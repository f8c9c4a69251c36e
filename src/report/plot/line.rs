//! One metric against one swept key, one line per variant.
//!
//! One y axis per plot: a sweep that reports two metrics (p99 exposure in seconds and p99 dead
//! hits) draws two plots, one above the other, rather than a secondary axis, which is easy to
//! misread.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::ChartUnderHeader;
use super::common::{
    Canvas, Failure, GRID, Header, INK, LABEL_PX, OrFailure, Swatch, WIDTH, draw_mesh,
    draw_no_data, fmt_tick, one_value_per_x, padded, series_color, text, xy_chart,
};

/// One metric against one swept key.
#[derive(Debug, Clone, PartialEq)]
pub struct LinePlot {
    /// The scenario and the settings; a `\n` starts a smaller second line.
    pub title: String,
    /// The swept key and its unit, e.g. "eviction interval (s)".
    pub x_label: String,
    /// The metric and its unit, e.g. "p99 exposure (s)".
    pub y_label: String,
    /// The key's values, in the unit of `x_label`.
    pub xs: Vec<f64>,
    /// One line per variant: its label and one value per x (`None`: unresolved, drawn as a gap
    /// with a cross at the top of the plot). Non-finite values count as `None`.
    pub series: Vec<(String, Vec<Option<f64>>)>,
}

const HEIGHT_CHART: u32 = 480;
/// The largest number of x values that get a tick each.
const MAX_EXACT_TICKS: usize = 16;

fn finite(v: Option<f64>) -> Option<f64> {
    v.filter(|v| v.is_finite())
}

impl LinePlot {
    /// The points of series `i` that have an x and a value.
    fn points(&self, values: &[Option<f64>]) -> Vec<Option<(f64, f64)>> {
        self.xs
            .iter()
            .zip(values)
            .map(|(&x, &y)| finite(y).filter(|_| x.is_finite()).map(|y| (x, y)))
            .collect()
    }

    fn ranges(&self) -> Option<((f64, f64), (f64, f64))> {
        let xs = self.xs.iter().copied().filter(|x| x.is_finite());
        let (x_lo, x_hi) = min_max(xs)?;
        let ys = self
            .series
            .iter()
            .flat_map(|(_, ys)| self.points(ys))
            .flatten()
            .map(|(_, y)| y);
        let (y_lo, y_hi) = min_max(ys).unwrap_or((0.0, 1.0));
        let x = padded(x_lo, x_hi, 0.04, 0.04);
        // From zero when all values are positive: the size of a value matters, not its wiggle.
        let y = padded(y_lo.min(0.0), y_hi.max(0.0), 0.0, 0.12);
        Some((x, y))
    }
}

fn min_max(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((v.min(lo), v.max(hi))),
    })
}

impl ChartUnderHeader for LinePlot {
    const KIND: &'static str = "line plot";

    fn check(&self) -> Result<(), String> {
        for (label, ys) in &self.series {
            one_value_per_x(format_args!("series \"{label}\""), ys.len(), self.xs.len())?;
        }
        Ok(())
    }

    fn header(&self) -> Header {
        let mut legend: Vec<(Swatch, String)> = self
            .series
            .iter()
            .enumerate()
            .map(|(i, (label, values))| {
                let label = if values.iter().all(|&y| finite(y).is_none()) {
                    format!("{label} (no values)")
                } else {
                    label.clone()
                };
                (Swatch::Line(series_color(i)), label)
            })
            .collect();
        let unresolved = self
            .series
            .iter()
            .any(|(_, ys)| ys.iter().any(|&y| finite(y).is_none()));
        if unresolved {
            legend.push((
                Swatch::Cross(INK),
                "unresolved (no value; drawn at the top, the line has a gap)".to_string(),
            ));
        }
        Header::new(&self.title, &[], WIDTH).with_legend(legend, WIDTH)
    }

    fn chart_height(&self) -> u32 {
        HEIGHT_CHART
    }

    fn draw_chart<DB: DrawingBackend>(&self, canvas: &Canvas<DB>) -> Result<(), Failure> {
        let root = canvas.root;
        let ranges = self.ranges();
        let ((x_lo, x_hi), (y_lo, y_hi)) = ranges.unwrap_or(((0.0, 1.0), (0.0, 1.0)));
        let mut chart = xy_chart(&canvas.body, x_lo..x_hi, y_lo..y_hi)?;
        // A few swept values: a tick (and a grid line) at each of them, not at round numbers.
        let mut exact: Vec<f64> = self.xs.iter().copied().filter(|x| x.is_finite()).collect();
        exact.sort_by(f64::total_cmp);
        exact.dedup();
        let exact_ticks = !exact.is_empty() && exact.len() <= MAX_EXACT_TICKS;
        draw_mesh(
            chart
                .configure_mesh()
                .x_labels(if exact_ticks { 0 } else { 12 })
                .y_labels(10)
                .x_label_formatter(&fmt_tick)
                .y_label_formatter(&fmt_tick)
                .x_desc(self.x_label.as_str())
                .y_desc(self.y_label.as_str()),
        )?;
        if exact_ticks {
            let bottom = chart.plotting_area().get_y_axis_pixel_range().end;
            for &x in &exact {
                chart
                    .draw_series([PathElement::new(vec![(x, y_lo), (x, y_hi)], GRID)])
                    .msg()?;
                let (px, _) = chart.backend_coord(&(x, y_lo));
                root.draw(&PathElement::new(
                    vec![(px, bottom), (px, bottom + 5)],
                    BLACK,
                ))
                .msg()?;
                root.draw(&Text::new(
                    fmt_tick(&x),
                    (px, bottom + 8),
                    text(LABEL_PX, BLACK, HPos::Center, VPos::Top),
                ))
                .msg()?;
            }
        }

        let cross = (y_hi - y_lo) * 0.025;
        // Crosses of several series at the same x stack downwards instead of hiding each other.
        let mut crosses_at = vec![0usize; self.xs.len()];
        for (i, (_, values)) in self.series.iter().enumerate() {
            let color = series_color(i);
            let points = self.points(values);
            // One polyline per run of resolved values, so unresolved ones leave a gap.
            let runs: Vec<Vec<(f64, f64)>> = points
                .split(|p| p.is_none())
                .map(|run| run.iter().flatten().copied().collect::<Vec<_>>())
                .filter(|run| !run.is_empty())
                .collect();
            for run in &runs {
                chart
                    .draw_series(LineSeries::new(run.iter().copied(), color.stroke_width(2)))
                    .msg()?;
            }
            chart
                .draw_series(
                    runs.iter()
                        .flatten()
                        .map(|&p| Circle::new(p, 4, color.filled())),
                )
                .msg()?;
            // Unresolved: a cross at the top, at that x (two strokes).
            let dx = (x_hi - x_lo) * 0.006;
            let crosses = self
                .xs
                .iter()
                .zip(&points)
                .zip(crosses_at.iter_mut())
                .filter(|((x, p), _)| p.is_none() && x.is_finite())
                .flat_map(|((&x, _), stacked)| {
                    let y = y_hi - cross * (1.2 + 1.6 * *stacked as f64);
                    *stacked += 1;
                    [
                        vec![(x - dx, y - cross / 2.0), (x + dx, y + cross / 2.0)],
                        vec![(x - dx, y + cross / 2.0), (x + dx, y - cross / 2.0)],
                    ]
                })
                .map(|stroke| PathElement::new(stroke, color.stroke_width(2)));
            chart.draw_series(crosses).msg()?;
        }

        let resolved = self
            .series
            .iter()
            .any(|(_, ys)| self.points(ys).iter().any(Option::is_some));
        if !resolved {
            let message = if ranges.is_none() || self.series.is_empty() {
                "no data"
            } else {
                "no data: every value is unresolved"
            };
            let centre = chart.backend_coord(&((x_lo + x_hi) / 2.0, (y_lo + y_hi) / 2.0));
            draw_no_data(root, centre, message)?;
        }
        Ok(())
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::common::hex;
    use super::super::{PlotError, line_svg_string};
    use super::*;

    pub(in crate::report::plot) fn example() -> LinePlot {
        LinePlot {
            title: "p99 exposure by eviction interval\nscenario default.toml".to_string(),
            x_label: "eviction interval (s)".to_string(),
            y_label: "p99 exposure (s)".to_string(),
            xs: vec![15.0, 30.0, 60.0, 90.0, 120.0],
            series: vec![
                (
                    "kill-9".to_string(),
                    vec![Some(120.0), Some(150.0), None, Some(240.0), Some(300.0)],
                ),
                (
                    "kill-15".to_string(),
                    vec![Some(20.0), Some(25.0), Some(31.0), Some(33.0), Some(35.0)],
                ),
            ],
        }
    }

    #[test]
    fn line_plot_has_title_axes_and_lines_per_series() {
        let svg = line_svg_string(&example()).unwrap();
        assert!(svg.contains("p99 exposure by eviction interval"));
        assert!(svg.contains("eviction interval (s)") && svg.contains("p99 exposure (s)"));
        assert!(svg.contains(">\nkill-9\n<") && svg.contains(">\nkill-15\n<"));
        assert!(svg.contains("unresolved"));
        // The x ticks are the swept values.
        for x in ["15", "30", "60", "90", "120"] {
            assert!(svg.contains(&format!(">\n{x}\n<")), "{x}");
        }
        let polylines = |i: usize| {
            let stroke = format!("stroke=\"{}\"", hex(series_color(i)));
            svg.lines()
                .filter(|l| l.starts_with("<polyline") && l.contains(&stroke))
                .count()
        };
        // kill-9: two runs around the gap, its legend sample and the two strokes of one cross.
        assert_eq!(polylines(0), 2 + 1 + 2);
        assert_eq!(polylines(1), 1 + 1);
        assert_eq!(
            svg.matches(&format!("fill=\"{}\"", hex(series_color(1))))
                .count(),
            5
        );
    }

    #[test]
    fn empty_line_plots_render_no_data() {
        let mut plot = example();
        plot.xs.clear();
        plot.series.clear();
        assert!(line_svg_string(&plot).unwrap().contains("no data"));
        let mut plot = example();
        plot.series = vec![(
            "kill-9".to_string(),
            vec![None, Some(f64::NAN), None, None, None],
        )];
        let svg = line_svg_string(&plot).unwrap();
        assert!(svg.contains("every value is unresolved") && svg.contains("kill-9 (no values)"));
    }

    #[test]
    fn mismatched_series_are_rejected() {
        let mut plot = example();
        plot.series[1].1.pop();
        let err = line_svg_string(&plot).unwrap_err();
        assert!(matches!(err, PlotError::Data { .. }));
        assert_eq!(
            err.to_string(),
            "plot the line plot: series \"kill-15\" has 4 values for 5 x values"
        );
    }
}
