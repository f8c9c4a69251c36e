//! One metric against two swept keys: a grid of cells coloured and annotated with the value.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::ChartUnderHeader;
use super::common::{
    AXIS_PX, Canvas, FONT, Failure, Header, INK, LABEL_PX, MUTED, OrFailure, WIDTH, draw_no_data,
    fmt_value, one_value_per_x, text, text_width, wrap,
};

/// One metric against two swept keys.
#[derive(Debug, Clone, PartialEq)]
pub struct Heatmap {
    /// The scenario and the settings; a `\n` starts a smaller second line.
    pub title: String,
    /// The key along x, e.g. "eviction interval (s)".
    pub x_label: String,
    /// The key along y, e.g. "response cache update interval (s)".
    pub y_label: String,
    /// The x key's values as they should be printed, left to right.
    pub xs: Vec<String>,
    /// The y key's values, bottom to top.
    pub ys: Vec<String>,
    /// `values[y][x]`; `None` (or a non-finite value) is drawn as a grey, hatched "unresolved"
    /// cell.
    pub values: Vec<Vec<Option<f64>>>,
    /// The metric and its unit, e.g. "p99 exposure (s)"; heads the colour scale.
    pub value_label: String,
}

const CELL_PX: u32 = 48;
const X_AXIS_PX: u32 = 56;
const MARGIN: u32 = 10;
const SCALE_PX: u32 = 150;
const SCALE_BAR_PX: i32 = 22;

/// Light yellow (low) to dark red (high), ColorBrewer's YlOrRd: higher is worse for every metric
/// we plot (exposure, dead hits).
const RAMP: [(u8, u8, u8); 5] = [
    (255, 255, 204),
    (254, 217, 118),
    (253, 141, 60),
    (227, 26, 28),
    (128, 0, 38),
];
const UNRESOLVED_FILL: RGBColor = RGBColor(221, 221, 221);
const HATCH: RGBColor = RGBColor(170, 170, 170);

/// The colour of `t` in 0..=1 along the ramp.
fn ramp(t: f64) -> RGBColor {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.5
    };
    let scaled = t * (RAMP.len() - 1) as f64;
    let i = (scaled.floor() as usize).min(RAMP.len() - 2);
    let f = scaled - i as f64;
    let mix = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * f).round() as u8;
    let (a, b) = (RAMP[i], RAMP[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Black on light cells, white on dark ones.
fn ink_on(c: RGBColor) -> RGBColor {
    let luma = 0.299 * c.0 as f64 + 0.587 * c.1 as f64 + 0.114 * c.2 as f64;
    if luma < 140.0 { WHITE } else { INK }
}

impl Heatmap {
    fn value(&self, x: usize, y: usize) -> Option<f64> {
        self.values
            .get(y)
            .and_then(|row| row.get(x))
            .copied()
            .flatten()
            .filter(|v| v.is_finite())
    }

    fn cells(&self) -> impl Iterator<Item = (usize, usize, Option<f64>)> + '_ {
        (0..self.ys.len())
            .flat_map(move |y| (0..self.xs.len()).map(move |x| (x, y, self.value(x, y))))
    }

    /// The smallest and largest values present.
    fn value_range(&self) -> Option<(f64, f64)> {
        self.cells().filter_map(|(_, _, v)| v).fold(None, |acc, v| {
            Some(acc.map_or((v, v), |(lo, hi): (f64, f64)| (lo.min(v), hi.max(v))))
        })
    }

    fn color(&self, v: f64) -> RGBColor {
        match self.value_range() {
            Some((lo, hi)) if hi > lo => ramp((v - lo) / (hi - lo)),
            _ => ramp(0.5),
        }
    }

    /// Room for the y labels and the y description.
    fn y_label_area_px(&self) -> u32 {
        let widest = self
            .ys
            .iter()
            .map(|y| text_width(y, LABEL_PX, false))
            .max()
            .unwrap_or(0);
        (widest + 50).clamp(80, 320)
    }
}

impl ChartUnderHeader for Heatmap {
    const KIND: &'static str = "heatmap";

    fn check(&self) -> Result<(), String> {
        if self.values.len() != self.ys.len() {
            return Err(format!(
                "{} rows of values for {} y values",
                self.values.len(),
                self.ys.len()
            ));
        }
        for (y, row) in self.values.iter().enumerate() {
            one_value_per_x(
                format_args!("row {y} ({})", self.ys[y]),
                row.len(),
                self.xs.len(),
            )?;
        }
        Ok(())
    }

    fn header(&self) -> Header {
        Header::new(&self.title, &[], WIDTH)
    }

    fn chart_height(&self) -> u32 {
        // Tall enough for the y description, which is written along the axis.
        let y_desc = text_width(&self.y_label, AXIS_PX, false) + 24;
        let rows = (self.ys.len() as u32 * CELL_PX)
            .max(4 * CELL_PX)
            .max(y_desc);
        rows + X_AXIS_PX + 2 * MARGIN
    }

    fn draw_chart<DB: DrawingBackend>(&self, canvas: &Canvas<DB>) -> Result<(), Failure> {
        let root = canvas.root;
        let (grid, scale) = canvas.body.split_horizontally(WIDTH - SCALE_PX);
        let (nx, ny) = (self.xs.len(), self.ys.len());
        let (w, h) = (nx.max(1) as f64, ny.max(1) as f64);
        let mut chart = ChartBuilder::on(&grid)
            .margin(MARGIN)
            .margin_right(4)
            .x_label_area_size(X_AXIS_PX)
            .y_label_area_size(self.y_label_area_px())
            .build_cartesian_2d(0.0..w, 0.0..h)
            .msg()?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(0)
            .y_labels(0)
            .x_desc(self.x_label.as_str())
            .y_desc(self.y_label.as_str())
            .axis_desc_style((FONT, AXIS_PX))
            .draw()
            .msg()?;

        let area = chart.plotting_area().get_pixel_range();
        let cell_w = (area.0.end - area.0.start) / nx.max(1) as i32;
        let cell_h = (area.1.end - area.1.start) / ny.max(1) as i32;

        // Category labels at the cell centres, smaller when the columns are narrow.
        let widest_x = self.xs.iter().map(String::as_str).max_by_key(|s| s.len());
        let x_font = fit_font(widest_x.unwrap_or(""), cell_w - 6, LABEL_PX, 10.0);
        for (i, label) in self.xs.iter().enumerate() {
            let (x, _) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
            root.draw(&Text::new(
                label.clone(),
                (x, area.1.end + 8),
                text(x_font, INK, HPos::Center, VPos::Top),
            ))
            .msg()?;
        }
        for (j, label) in self.ys.iter().enumerate() {
            let (_, y) = chart.backend_coord(&(0.0, j as f64 + 0.5));
            root.draw(&Text::new(
                label.clone(),
                (area.0.start - 8, y),
                text(LABEL_PX, INK, HPos::Right, VPos::Center),
            ))
            .msg()?;
        }

        let value_font = (cell_h as f64 * 0.36).clamp(9.0, 15.0);
        for (x, y, value) in self.cells() {
            let (x0, y0) = (x as f64, y as f64);
            let fill = value.map_or(UNRESOLVED_FILL, |v| self.color(v));
            chart
                .draw_series([Rectangle::new(
                    [(x0, y0), (x0 + 1.0, y0 + 1.0)],
                    fill.filled(),
                )])
                .msg()?;
            let top_left = chart.backend_coord(&(x0, y0 + 1.0));
            let bottom_right = chart.backend_coord(&(x0 + 1.0, y0));
            if value.is_none() {
                hatch(root, top_left, bottom_right)?;
            }
            root.draw(&Rectangle::new(
                [top_left, bottom_right],
                WHITE.stroke_width(2),
            ))
            .msg()?;
            let (label, ink) = match value {
                Some(v) => (fmt_value(v), ink_on(fill)),
                None => ("unresolved".to_string(), INK),
            };
            let size = fit_font(&label, cell_w - 6, value_font, 8.0);
            if text_width(&label, size, false) as i32 > cell_w - 4 {
                continue; // Too narrow for any text: the colour has to do.
            }
            let centre = chart.backend_coord(&(x0 + 0.5, y0 + 0.5));
            if value.is_none() {
                // A plate under the word so the hatching does not cross it.
                let half = text_width(&label, size, false) as i32 / 2 + 3;
                let half_h = (size * 0.6) as i32 + 2;
                root.draw(&Rectangle::new(
                    [
                        (centre.0 - half, centre.1 - half_h),
                        (centre.0 + half, centre.1 + half_h),
                    ],
                    UNRESOLVED_FILL.filled(),
                ))
                .msg()?;
            }
            root.draw(&Text::new(
                label,
                centre,
                text(size, ink, HPos::Center, VPos::Center),
            ))
            .msg()?;
        }

        draw_scale(&scale, self, (area.1.start, area.1.end))?;

        if nx == 0 || ny == 0 {
            let centre = chart.backend_coord(&(w / 2.0, h / 2.0));
            draw_no_data(root, centre, "no data")?;
        }
        Ok(())
    }
}

/// The largest size from `max` down to `min` at which `s` fits in `width` pixels.
fn fit_font(s: &str, width: i32, max: f64, min: f64) -> f64 {
    let mut size = max;
    while size > min && text_width(s, size, false) as i32 > width {
        size -= 1.0;
    }
    size.max(min)
}

/// Diagonal lines across the cell between two pixel corners.
fn hatch<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    (x0, y0): (i32, i32),
    (x1, y1): (i32, i32),
) -> Result<(), Failure> {
    let (w, h) = (x1 - x0, y1 - y0);
    let step = 9;
    let mut d = -h;
    while d < w {
        // The line x = x0 + d + s, y = y1 - s for s in 0..=h, clipped to x0..=x1.
        let s0 = (-d).max(0);
        let s1 = h.min(w - d);
        if s0 < s1 {
            root.draw(&PathElement::new(
                vec![(x0 + d + s0, y1 - s0), (x0 + d + s1, y1 - s1)],
                HATCH.stroke_width(1),
            ))
            .msg()?;
        }
        d += step;
    }
    Ok(())
}

/// The colour scale beside the grid: the metric's name on top, a gradient bar, five values.
fn draw_scale<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    plot: &Heatmap,
    (top, bottom): (i32, i32),
) -> Result<(), Failure> {
    // `area` is positioned in backend pixels; draw relative to its own origin.
    let origin = area.get_base_pixel();
    let (width, _) = area.dim_in_pixel();
    let (top, bottom) = (top - origin.1, bottom - origin.1);
    let left = 14;
    let mut y = top;
    for line in wrap(
        &plot.value_label,
        width.saturating_sub(left as u32 + 4),
        14.0,
        false,
    ) {
        area.draw(&Text::new(
            line,
            (left, y),
            text(14.0, INK, HPos::Left, VPos::Top),
        ))
        .msg()?;
        y += 18;
    }
    let bar_top = y + 8;
    let Some((lo, hi)) = plot.value_range() else {
        return area
            .draw(&Text::new(
                "no values",
                (left, bar_top),
                text(14.0, MUTED, HPos::Left, VPos::Top),
            ))
            .msg();
    };
    let bar_h = (bottom - bar_top).max(40);
    let steps = 48;
    for k in 0..steps {
        // k = 0 at the top: the highest value.
        let t = 1.0 - (k as f64 + 0.5) / steps as f64;
        let y0 = bar_top + bar_h * k / steps;
        let y1 = bar_top + bar_h * (k + 1) / steps;
        area.draw(&Rectangle::new(
            [(left, y0), (left + SCALE_BAR_PX, y1)],
            ramp(if hi > lo { t } else { 0.5 }).filled(),
        ))
        .msg()?;
    }
    area.draw(&Rectangle::new(
        [(left, bar_top), (left + SCALE_BAR_PX, bar_top + bar_h)],
        MUTED.stroke_width(1),
    ))
    .msg()?;
    let ticks: Vec<f64> = if hi > lo {
        (0..5).map(|k| hi - (hi - lo) * k as f64 / 4.0).collect()
    } else {
        vec![hi]
    };
    for (k, v) in ticks.iter().enumerate() {
        let y = if ticks.len() == 1 {
            bar_top + bar_h / 2
        } else {
            bar_top + bar_h * k as i32 / (ticks.len() as i32 - 1)
        };
        area.draw(&PathElement::new(
            vec![(left + SCALE_BAR_PX, y), (left + SCALE_BAR_PX + 5, y)],
            INK,
        ))
        .msg()?;
        area.draw(&Text::new(
            fmt_value(*v),
            (left + SCALE_BAR_PX + 8, y),
            text(14.0, INK, HPos::Left, VPos::Center),
        ))
        .msg()?;
    }
    Ok(())
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::common::hex;
    use super::super::{PlotError, heatmap_svg_string};
    use super::*;

    pub(in crate::report::plot) fn example() -> Heatmap {
        let xs: Vec<String> = ["15", "30", "60", "90"].map(String::from).to_vec();
        let ys: Vec<String> = ["5", "30"].map(String::from).to_vec();
        let values = vec![
            vec![Some(40.0), Some(55.5), Some(90.0), None],
            vec![Some(60.0), Some(80.0), Some(120.0), Some(180.25)],
        ];
        Heatmap {
            title: "p99 exposure, kill-9\nscenario default.toml".to_string(),
            x_label: "eviction interval (s)".to_string(),
            y_label: "read-only cache update (s)".to_string(),
            xs,
            ys,
            values,
            value_label: "p99 exposure (s)".to_string(),
        }
    }

    #[test]
    fn heatmap_has_one_cell_per_x_and_y() {
        let plot = example();
        let svg = heatmap_svg_string(&plot).unwrap();
        assert!(svg.contains("p99 exposure, kill-9"));
        assert!(
            svg.contains("eviction interval (s)") && svg.contains("read-only cache update (s)")
        );
        // The scale's heading (it may wrap where fonts are missing and widths are estimated).
        assert!(svg.contains(">\np99 exposure"));
        // Every cell has a white frame.
        let frames = svg
            .lines()
            .filter(|l| l.starts_with("<rect") && l.contains("stroke=\"#FFFFFF\""))
            .count();
        assert_eq!(frames, plot.xs.len() * plot.ys.len());
        assert_eq!(svg.matches(">\nunresolved\n<").count(), 1);
        for v in ["40", "55.5", "90", "120", "180"] {
            assert!(svg.contains(&format!(">\n{v}\n<")), "{v}");
        }
        assert!(svg.contains(&format!("fill=\"{}\"", hex(UNRESOLVED_FILL))));
        // The extremes of the ramp are the smallest and the largest values.
        assert_eq!(plot.color(40.0), ramp(0.0));
        assert_eq!(plot.color(180.25), ramp(1.0));
    }

    #[test]
    fn empty_and_unresolved_heatmaps_render() {
        let empty = Heatmap {
            title: "t".to_string(),
            x_label: "x".to_string(),
            y_label: "y".to_string(),
            xs: vec![],
            ys: vec![],
            values: vec![],
            value_label: "v".to_string(),
        };
        assert!(heatmap_svg_string(&empty).unwrap().contains("no data"));
        let mut plot = example();
        plot.values = vec![vec![None; 4]; 2];
        let svg = heatmap_svg_string(&plot).unwrap();
        assert_eq!(svg.matches(">\nunresolved\n<").count(), 8);
        assert!(svg.contains("no values"));
    }

    #[test]
    fn ragged_values_are_rejected() {
        let mut plot = example();
        plot.values[1].pop();
        let err = heatmap_svg_string(&plot).unwrap_err();
        assert!(matches!(err, PlotError::Data { .. }), "{err}");
        assert_eq!(
            err.to_string(),
            "plot the heatmap: row 1 (30) has 3 values for 4 x values"
        );
    }
}
