//! The distribution of a metric over the trials, one step line per variant.

use plotters::prelude::*;

use super::ChartUnderHeader;
use super::common::{
    Canvas, Failure, Header, MUTED, OrFailure, Swatch, WIDTH, draw_mesh, draw_no_data, fmt_tick,
    padded, series_color, xy_chart,
};

/// Empirical CDFs of one metric (times in ms), one per variant.
#[derive(Debug, Clone, PartialEq)]
pub struct CdfPlot {
    /// The scenario and the settings; a `\n` starts a smaller second line.
    pub title: String,
    /// What the values are, e.g. "exposure (s)"; values are shown in seconds.
    pub x_label: String,
    pub series: Vec<CdfSeries>,
}

/// One variant's values over its trials.
#[derive(Debug, Clone, PartialEq)]
pub struct CdfSeries {
    pub label: String,
    /// The resolved values in ms, in any order.
    pub values_ms: Vec<i64>,
    /// Trials without a value: they count in the denominator, so the curve tops out at
    /// `values / (values + unresolved)`.
    pub unresolved: usize,
}

impl CdfSeries {
    fn trials(&self) -> usize {
        self.values_ms.len() + self.unresolved
    }

    /// The legend entry: the label, the number of trials and the unresolved ones.
    fn legend(&self) -> String {
        let n = self.trials();
        match self.unresolved {
            0 => format!("{} (n = {n})", self.label),
            u if u == n => format!("{} (n = {n}, all unresolved)", self.label),
            u => format!(
                "{} (n = {n}, {u} unresolved: {:.1} %)",
                self.label,
                100.0 * u as f64 / n as f64
            ),
        }
    }
}

/// The corners of the empirical CDF's step line, in ms: from `(v1, 0)` up to
/// `(v_last, resolved / (resolved + unresolved))`, one riser per distinct value. Empty when there
/// are no values. The renderer extends it to the left and right edges of the plot.
pub fn cdf_steps(values_ms: &[i64], unresolved: usize) -> Vec<(i64, f64)> {
    let mut sorted = values_ms.to_vec();
    sorted.sort_unstable();
    let total = (sorted.len() + unresolved) as f64;
    let mut steps = Vec::new();
    let mut below = 0.0;
    let mut i = 0;
    while i < sorted.len() {
        let v = sorted[i];
        let same = sorted[i..].iter().take_while(|&&w| w == v).count();
        i += same;
        let at = i as f64 / total;
        steps.push((v, below));
        steps.push((v, at));
        below = at;
    }
    steps
}

const HEIGHT_CHART: u32 = 500;
/// The top of the y axis, a little above 100 % so the 100 % line is not on the frame.
const Y_TOP: f64 = 1.04;

impl CdfPlot {
    /// The x range in seconds: from 0 (or the smallest value) to a little past the largest.
    fn x_range(&self) -> Option<(f64, f64)> {
        let values = self.series.iter().flat_map(|s| s.values_ms.iter().copied());
        let (min, max) = values.fold(None, |acc: Option<(i64, i64)>, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })?;
        let lo = (min.min(0)) as f64 / 1000.0;
        Some(padded(lo, max as f64 / 1000.0, 0.0, 0.05))
    }
}

impl ChartUnderHeader for CdfPlot {
    const KIND: &'static str = "CDF plot";

    fn header(&self) -> Header {
        let mut notes = vec![
            "Share of trials whose value is at or below x. Trials without a value (unresolved) \
             count in the total, so their curve stays below 100 %."
                .to_string(),
        ];
        if self.series.is_empty() {
            notes.clear();
        }
        let legend = self
            .series
            .iter()
            .enumerate()
            .map(|(i, s)| (Swatch::Line(series_color(i)), s.legend()))
            .collect();
        Header::new(&self.title, &notes, WIDTH).with_legend(legend, WIDTH)
    }

    fn chart_height(&self) -> u32 {
        HEIGHT_CHART
    }

    fn draw_chart<DB: DrawingBackend>(&self, canvas: &Canvas<DB>) -> Result<(), Failure> {
        let range = self.x_range();
        let (lo, hi) = range.unwrap_or((0.0, 1.0));
        let mut chart = xy_chart(&canvas.body, lo..hi, 0.0..Y_TOP)?;
        draw_mesh(
            chart
                .configure_mesh()
                .x_labels(12)
                .y_labels(11)
                .x_label_formatter(&fmt_tick)
                .y_label_formatter(&|v| format!("{:.0} %", v * 100.0))
                .x_desc(self.x_label.as_str())
                .y_desc("share of trials"),
        )?;

        // 100 %: where every curve would end if every trial resolved.
        chart
            .draw_series(DashedLineSeries::new(
                [(lo, 1.0), (hi, 1.0)],
                6,
                4,
                MUTED.stroke_width(1),
            ))
            .msg()?;

        for (i, series) in self.series.iter().enumerate() {
            let color = series_color(i);
            let steps = cdf_steps(&series.values_ms, series.unresolved);
            let last = steps.last().map_or(0.0, |s| s.1);
            let points: Vec<(f64, f64)> = [(lo, 0.0)]
                .into_iter()
                .chain(steps.iter().map(|&(v, y)| (v as f64 / 1000.0, y)))
                .chain([(hi, last)])
                .collect();
            chart
                .draw_series(LineSeries::new(points, color.stroke_width(2)))
                .msg()?;
        }

        if range.is_none() {
            let message = if self.series.is_empty() {
                "no data"
            } else {
                "no data: every trial is unresolved"
            };
            let centre = chart.backend_coord(&((lo + hi) / 2.0, 0.6));
            draw_no_data(canvas.root, centre, message)?;
        }
        Ok(())
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::cdf_svg_string;
    use super::super::common::hex;
    use super::*;

    pub(in crate::report::plot) fn example() -> CdfPlot {
        CdfPlot {
            title: "exposure by strategy\nscenario default.toml".to_string(),
            x_label: "exposure (s)".to_string(),
            series: vec![
                CdfSeries {
                    label: "kill-9".to_string(),
                    values_ms: (0..90).map(|i| 150_000 + i * 2_000).collect(),
                    unresolved: 10,
                },
                CdfSeries {
                    label: "kill-15".to_string(),
                    values_ms: (0..100).map(|i| 10_000 + i * 800).collect(),
                    unresolved: 0,
                },
            ],
        }
    }

    #[test]
    fn steps_top_out_below_one_when_some_trials_are_unresolved() {
        let steps = cdf_steps(&[30, 10, 20, 20], 1);
        assert_eq!(
            steps,
            vec![
                (10, 0.0),
                (10, 0.2),
                (20, 0.2),
                (20, 0.6),
                (30, 0.6),
                (30, 0.8)
            ]
        );
        assert_eq!(cdf_steps(&[5], 0).last(), Some(&(5, 1.0)));
        assert!(cdf_steps(&[], 3).is_empty());
        let s = &example().series[0];
        let last = cdf_steps(&s.values_ms, s.unresolved).last().unwrap().1;
        assert!((last - 0.9).abs() < 1e-12);
    }

    #[test]
    fn cdf_has_title_axes_and_one_line_per_series() {
        let plot = example();
        let svg = cdf_svg_string(&plot).unwrap();
        assert!(svg.contains("exposure by strategy") && svg.contains("scenario default.toml"));
        assert!(svg.contains("exposure (s)") && svg.contains("share of trials"));
        assert!(svg.contains("kill-9 (n = 100, 10 unresolved: 10.0 %)"));
        assert!(svg.contains("kill-15 (n = 100)"));
        for i in 0..plot.series.len() {
            let stroke = format!("stroke=\"{}\"", hex(series_color(i)));
            // The step line and its legend sample.
            let lines = svg
                .lines()
                .filter(|l| l.starts_with("<polyline"))
                .filter(|l| l.contains(&stroke))
                .count();
            assert_eq!(lines, 2, "series {i}");
        }
        assert!(svg.contains("100 %"));
    }

    #[test]
    fn empty_and_unresolved_cdfs_render_no_data() {
        let empty = CdfPlot {
            title: "t".to_string(),
            x_label: "x".to_string(),
            series: vec![],
        };
        assert!(cdf_svg_string(&empty).unwrap().contains("no data"));
        let unresolved = CdfPlot {
            series: vec![CdfSeries {
                label: "kill-9".to_string(),
                values_ms: vec![],
                unresolved: 5,
            }],
            ..empty
        };
        let svg = cdf_svg_string(&unresolved).unwrap();
        assert!(svg.contains("every trial is unresolved"));
        assert!(svg.contains("kill-9 (n = 5, all unresolved)"));
    }
}
