//! The timeline of one trial of one shutdown: one lane per layer, a bar while the instance is
//! still listed as UP there, and the dead hits as marks on a lane of their own.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::Drawable;
use super::common::{
    Failure, Header, INK, LABEL_PX, MUTED, OrFailure, WIDTH, XyChart, draw_mesh, fmt_seconds,
    fmt_tick, text, text_width,
};

/// The timeline of one trial of one shutdown, times relative to `t_stop` (when the instance
/// stopped serving).
#[derive(Debug, Clone, PartialEq)]
pub struct TimelinePlot {
    /// The scenario and the settings; a `\n` starts a smaller second line.
    pub title: String,
    /// Stage instants relative to t_stop (ms, may be negative), in order, each optional
    /// (`None` = never, within the trial): e.g. `("strategy started", Some(-90000))`,
    /// `("left the registry", Some(-89995))`, `("left the read-only cache", ..)`,
    /// `("left the gateway's Eureka cache", ..)`, `("left the Ribbon list", ..)`.
    /// Each becomes a lane whose bar runs from the left edge to the instant.
    pub stages: Vec<(String, Option<i64>)>,
    /// Dead hits (request attempts refused), ms relative to t_stop: single ones at their
    /// instant, those counted at once (batched mode) as spans they are spread over. The plot
    /// bins them, so its size does not grow with the request rate.
    pub dead_hits: Vec<HitSpan>,
    /// Visible x range in ms relative to t_stop, margin included. An empty or inverted range is
    /// replaced by one that covers 0, the stages and the dead hits.
    pub x_range: (i64, i64),
}

/// `count` dead hits in `[from, to]` (ms relative to t_stop): one at an instant (`from == to`),
/// or a batched count, spread evenly over its span when binned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HitSpan {
    pub from: i64,
    pub to: i64,
    pub count: u64,
}

impl HitSpan {
    /// One dead hit at `t`.
    pub fn at(t: i64) -> HitSpan {
        HitSpan {
            from: t,
            to: t,
            count: 1,
        }
    }

    /// How many of the hits fall at or before `x`, rounded: spreading by these cumulative
    /// figures keeps every hit (the parts sum to `count`) and is deterministic.
    fn up_to(&self, x: f64) -> u64 {
        if x < self.from as f64 {
            0
        } else if x >= self.to as f64 {
            self.count
        } else {
            let share = (x - self.from as f64) / (self.to - self.from) as f64;
            ((self.count as f64 * share).round() as u64).min(self.count)
        }
    }
}

/// The height of one lane.
const LANE_PX: f64 = 46.0;
/// Room above the top lane for the "stopped serving" label, in lanes.
const HEADROOM: f64 = 0.7;
const X_AXIS_PX: u32 = 52;
const MARGIN_LEFT: u32 = 12;
const MARGIN_RIGHT: u32 = 36;
const MARGIN_TOP: u32 = 4;
const MARGIN_BOTTOM: u32 = 8;
/// Dead hits are counted per slice of time this many pixels wide.
const BIN_PX: u32 = 2;

/// While the instance is listed as UP.
const UP: RGBColor = RGBColor(46, 139, 87);
const UP_EDGE: RGBColor = RGBColor(20, 82, 48);
const DEAD: RGBColor = RGBColor(200, 30, 30);
const STRIPE: RGBColor = RGBColor(246, 246, 246);
const ON_BAR: RGBColor = RGBColor(255, 255, 255);

const DEAD_HITS_LANE: &str = "dead hits";

/// The dead hits counted per slice of the visible range.
#[derive(Debug, Clone, PartialEq)]
struct Bins {
    /// The visible range in ms.
    range: (i64, i64),
    counts: Vec<u32>,
    before: usize,
    after: usize,
}

impl Bins {
    fn width_ms(&self) -> f64 {
        (self.range.1 - self.range.0) as f64 / self.counts.len() as f64
    }

    fn max(&self) -> u32 {
        self.counts.iter().copied().max().unwrap_or(0)
    }
}

/// What the size and the drawing of a timeline share (`Drawable::Layout`).
pub(super) struct Layout {
    /// The lane labels, top to bottom.
    labels: Vec<String>,
    /// The width of the area left of the plot that holds them.
    label_area_px: u32,
    bins: Bins,
    header: Header,
}

/// The width of the area left of the plot that holds the lane `labels`.
fn label_area_px(labels: &[String]) -> u32 {
    let widest = labels
        .iter()
        .map(|l| text_width(l, LABEL_PX, false))
        .max()
        .unwrap_or(0);
    (widest + 18).clamp(90, WIDTH * 2 / 5)
}

impl TimelinePlot {
    /// The visible range in ms: the caller's, or one covering everything if it is empty.
    fn visible_ms(&self) -> (i64, i64) {
        let (lo, hi) = self.x_range;
        if lo < hi {
            return (lo, hi);
        }
        let instants = self.stages.iter().filter_map(|(_, t)| *t);
        let all: Vec<i64> = instants
            .chain(self.dead_hits.iter().flat_map(|h| [h.from, h.to]))
            .chain([0])
            .collect();
        let min = all.iter().copied().min().unwrap_or(0);
        let max = all.iter().copied().max().unwrap_or(0);
        let margin = ((max - min) / 10).max(5_000);
        (min - margin, max + margin)
    }

    /// The lane labels, top to bottom: the stages, then the dead hits.
    fn lane_labels(&self) -> Vec<String> {
        let mut labels: Vec<String> = self.stages.iter().map(|(l, _)| l.clone()).collect();
        labels.push(format!("{DEAD_HITS_LANE} ({})", self.hit_count()));
        labels
    }

    /// Every dead hit, counted ones included.
    fn hit_count(&self) -> u64 {
        self.dead_hits.iter().map(|h| h.count).sum()
    }

    /// The width of the plotting area, right of the lane labels' `label_area_px`.
    fn plot_px(label_area_px: u32) -> u32 {
        WIDTH
            .saturating_sub(MARGIN_LEFT + MARGIN_RIGHT + label_area_px)
            .max(BIN_PX)
    }

    /// The dead hits binned over a plotting area `plot_px` wide.
    fn bins(&self, plot_px: u32) -> Bins {
        let range = self.visible_ms();
        let n = (plot_px / BIN_PX).max(1) as usize;
        let mut bins = Bins {
            range,
            counts: vec![0; n],
            before: 0,
            after: 0,
        };
        let span = (range.1 - range.0) as f64;
        let width = span / n as f64;
        for hit in &self.dead_hits {
            // Bin i covers [lo + i w, lo + (i + 1) w); the last one includes the range's end.
            let before = hit.up_to(range.0 as f64 - 0.5);
            let after = hit.count - hit.up_to(range.1 as f64);
            bins.before += before as usize;
            bins.after += after as usize;
            // One bin of slack on each side: the float index may round across a boundary.
            let index = |t: i64| ((t - range.0) as f64 / width).max(0.0) as usize;
            let first = index(hit.from).saturating_sub(1).min(n - 1);
            let last = (index(hit.to) + 1).min(n - 1);
            let mut counted = before;
            for (i, bin) in bins
                .counts
                .iter_mut()
                .enumerate()
                .take(last + 1)
                .skip(first)
            {
                let end = if i == n - 1 {
                    range.1 as f64
                } else {
                    range.0 as f64 + (i + 1) as f64 * width - 0.5
                };
                let upto = hit.up_to(end);
                *bin += (upto - counted) as u32;
                counted = upto;
            }
        }
        bins
    }

    /// How to read the plot, under the title.
    fn notes(&self, bins: &Bins) -> Vec<String> {
        let mut marks =
            "Red marks: request attempts refused by the stopped instance (dead hits)".to_string();
        if bins.max() > 1 {
            marks += &format!(
                "; a mark's height is the number of hits in its {:.2} s slice (tallest: {})",
                bins.width_ms() / 1000.0,
                bins.max()
            );
        }
        let outside = bins.before + bins.after;
        if outside > 0 {
            marks += &format!(
                "; {outside} more fall outside the visible range ({} before, {} after)",
                bins.before, bins.after
            );
        }
        vec![
            "Green bars: the instance is still listed as UP in that layer, until the instant shown."
                .to_string(),
            marks + ".",
        ]
    }

    fn lanes(&self) -> usize {
        self.stages.len() + 1
    }
}

impl Drawable for TimelinePlot {
    const KIND: &'static str = "timeline";

    type Layout = Layout;

    /// The lane labels, the bins and the header, each worked out once for the image (the
    /// bins were counted three times and the labels measured four, `Drawable::Layout`).
    fn layout(&self) -> Layout {
        let labels = self.lane_labels();
        let label_area_px = label_area_px(&labels);
        let bins = self.bins(Self::plot_px(label_area_px));
        let header = Header::new(&self.title, &self.notes(&bins), WIDTH);
        Layout {
            labels,
            label_area_px,
            bins,
            header,
        }
    }

    fn size(&self, layout: &Layout) -> (u32, u32) {
        let chart = (self.lanes() as f64 + HEADROOM) * LANE_PX;
        let height =
            layout.header.height() + MARGIN_TOP + chart.ceil() as u32 + X_AXIS_PX + MARGIN_BOTTOM;
        (WIDTH, height)
    }

    fn draw<DB: DrawingBackend>(
        &self,
        layout: &Layout,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), Failure> {
        let body = layout.header.draw(root)?;
        let bins = &layout.bins;
        let (lo_ms, hi_ms) = bins.range;
        let (lo, hi) = (lo_ms as f64 / 1000.0, hi_ms as f64 / 1000.0);
        let n = self.lanes();
        let top = n as f64 + HEADROOM;

        let mut chart = ChartBuilder::on(&body)
            .margin_left(MARGIN_LEFT)
            .margin_right(MARGIN_RIGHT)
            .margin_top(MARGIN_TOP)
            .margin_bottom(MARGIN_BOTTOM)
            .x_label_area_size(X_AXIS_PX)
            .y_label_area_size(layout.label_area_px)
            .build_cartesian_2d(lo..hi, 0.0..top)
            .msg()?;

        // Alternate lanes on a light stripe, under the grid.
        chart
            .draw_series((0..n).filter(|k| k % 2 == 1).map(|k| {
                let bottom = (n - 1 - k) as f64;
                Rectangle::new([(lo, bottom), (hi, bottom + 1.0)], STRIPE.filled())
            }))
            .msg()?;
        draw_mesh(
            chart
                .configure_mesh()
                .disable_y_mesh()
                .y_labels(0)
                .x_labels(14)
                .x_label_formatter(&fmt_tick)
                .x_desc("seconds relative to when the instance stopped serving"),
        )?;

        let view = View::of(&chart, bins.range, n);
        for (k, label) in layout.labels.iter().enumerate() {
            let (_, y) = chart.backend_coord(&(lo, (n - 1 - k) as f64 + 0.5));
            root.draw(&Text::new(
                label.clone(),
                (view.left_px - 10, y),
                text(LABEL_PX, INK, HPos::Right, VPos::Center),
            ))
            .msg()?;
        }

        self.draw_stages(&mut chart, root, &view)?;
        self.draw_dead_hits(&mut chart, root, bins, &view)?;
        view.draw_stop_line(&mut chart, root)?;
        Ok(())
    }
}

/// The chart a timeline draws on: seconds against lanes.
type Chart<'a, DB> = XyChart<'a, DB>;

/// What the parts of a timeline share: the view in seconds and in ms, the number of lanes,
/// and the plotting area's left and right edges in pixels.
#[derive(Debug, Clone, Copy)]
struct View {
    lo: f64,
    hi: f64,
    lo_ms: i64,
    hi_ms: i64,
    n: usize,
    left_px: i32,
    right_px: i32,
}

impl View {
    /// The view of `chart`, drawn from `lo_ms` to `hi_ms` (seconds on the axis), with `n` lanes.
    fn of<DB: DrawingBackend>(chart: &Chart<'_, DB>, (lo_ms, hi_ms): (i64, i64), n: usize) -> View {
        let pixels = chart.plotting_area().get_x_axis_pixel_range();
        View {
            lo: lo_ms as f64 / 1000.0,
            hi: hi_ms as f64 / 1000.0,
            lo_ms,
            hi_ms,
            n,
            left_px: pixels.start,
            right_px: pixels.end,
        }
    }
}

impl TimelinePlot {
    /// One bar per stage, from the left edge to its instant.
    fn draw_stages<DB: DrawingBackend>(
        &self,
        chart: &mut Chart<'_, DB>,
        root: &DrawingArea<DB, Shift>,
        view: &View,
    ) -> Result<(), Failure> {
        let View {
            lo,
            hi,
            lo_ms,
            hi_ms,
            n,
            left_px,
            right_px,
        } = *view;
        // One bar per stage, from the left edge to its instant.
        for (k, (_, instant)) in self.stages.iter().enumerate() {
            let centre = (n - 1 - k) as f64 + 0.5;
            let bar =
                |end: f64| Rectangle::new([(lo, centre - 0.28), (end, centre + 0.28)], UP.filled());
            let (note, end) = match *instant {
                None => ("never left".to_string(), Some(hi)),
                Some(t) if t < lo_ms => (format!("{} (before the view)", fmt_seconds(t)), None),
                Some(t) if t > hi_ms => (format!("{} (after the view)", fmt_seconds(t)), Some(hi)),
                Some(t) => (fmt_seconds(t), Some(t as f64 / 1000.0)),
            };
            let Some(end) = end else {
                let (_, y) = chart.backend_coord(&(lo, centre));
                root.draw(&Text::new(
                    note,
                    (left_px + 6, y),
                    text(14.0, INK, HPos::Left, VPos::Center),
                ))
                .msg()?;
                continue;
            };
            chart.draw_series([bar(end)]).msg()?;
            if instant.is_some_and(|t| t <= hi_ms) {
                chart
                    .draw_series([PathElement::new(
                        vec![(end, centre - 0.38), (end, centre + 0.38)],
                        UP_EDGE.stroke_width(2),
                    )])
                    .msg()?;
            }
            let (x, y) = chart.backend_coord(&(end, centre));
            let fits_right = x + 8 + text_width(&note, 14.0, false) as i32 <= right_px;
            let style = if fits_right && instant.is_some_and(|t| t <= hi_ms) {
                (x + 8, text(14.0, INK, HPos::Left, VPos::Center))
            } else {
                (x - 8, text(14.0, ON_BAR, HPos::Right, VPos::Center))
            };
            root.draw(&Text::new(note, (style.0, y), style.1)).msg()?;
        }

        Ok(())
    }

    /// The dead hits: one mark per non-empty slice; heights show density when slices hold
    /// more than one hit. Bounded by the number of slices, so the file stays small.
    fn draw_dead_hits<DB: DrawingBackend>(
        &self,
        chart: &mut Chart<'_, DB>,
        root: &DrawingArea<DB, Shift>,
        bins: &Bins,
        view: &View,
    ) -> Result<(), Failure> {
        let View { lo, left_px, .. } = *view;
        let max = bins.max();
        let width_s = bins.width_ms() / 1000.0;
        chart
            .draw_series(
                bins.counts
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| **c > 0)
                    .map(|(i, &c)| {
                        let x0 = lo + i as f64 * width_s;
                        let share = if max <= 1 {
                            1.0
                        } else {
                            0.15 + 0.85 * c as f64 / max as f64
                        };
                        Rectangle::new(
                            [(x0, 0.12), (x0 + width_s, 0.12 + 0.76 * share)],
                            DEAD.filled(),
                        )
                    }),
            )
            .msg()?;
        if max == 0 {
            let (_, y) = chart.backend_coord(&(lo, 0.5));
            let note = if self.stages.is_empty() && self.dead_hits.is_empty() {
                "no data: no stages and no dead hits"
            } else if self.dead_hits.is_empty() {
                "none"
            } else {
                "none in view"
            };
            root.draw(&Text::new(
                note,
                (left_px + 6, y),
                text(14.0, MUTED, HPos::Left, VPos::Center),
            ))
            .msg()?;
        }

        Ok(())
    }
}

impl View {
    /// t = 0: the instance stopped serving.
    fn draw_stop_line<DB: DrawingBackend>(
        &self,
        chart: &mut Chart<'_, DB>,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), Failure> {
        if self.lo <= 0.0 && 0.0 <= self.hi {
            let line_top = self.n as f64 + 0.12;
            chart
                .draw_series([PathElement::new(
                    vec![(0.0, 0.0), (0.0, line_top)],
                    INK.stroke_width(2),
                )])
                .msg()?;
            let label = "stopped serving";
            let (x, y) = chart.backend_coord(&(0.0, line_top));
            let half = text_width(label, LABEL_PX, false) as i32 / 2;
            let (x, h) = if x - half < self.left_px {
                (x.max(self.left_px), HPos::Left)
            } else if x + half > self.right_px {
                (x.min(self.right_px), HPos::Right)
            } else {
                (x, HPos::Center)
            };
            root.draw(&Text::new(
                label,
                (x, y - 4),
                text(LABEL_PX, INK, h, VPos::Bottom),
            ))
            .msg()?;
        }

        Ok(())
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::common::hex;
    use super::super::timeline_svg_string;
    use super::*;

    pub(in crate::report::plot) fn example() -> TimelinePlot {
        TimelinePlot {
            title: "kill-15 of app-1 & friends\nscenario <default>, eviction 60 s".to_string(),
            stages: vec![
                ("strategy started".to_string(), Some(-90_000)),
                ("left the registry".to_string(), Some(-89_995)),
                ("left the read-only cache".to_string(), Some(-60_000)),
                ("left the gateway's Eureka cache".to_string(), Some(-35_000)),
                ("left the Ribbon list".to_string(), None),
            ],
            dead_hits: (0..300).map(|i| HitSpan::at(i * 100)).collect(),
            x_range: (-100_000, 40_000),
        }
    }

    #[test]
    fn timeline_has_title_lanes_marker_and_hits() {
        let plot = example();
        let svg = timeline_svg_string(&plot).unwrap();
        // Text is escaped by the backend.
        assert!(svg.contains("kill-15 of app-1 &amp; friends"), "{svg}");
        assert!(svg.contains("scenario &lt;default&gt;, eviction 60 s"));
        assert!(svg.contains("seconds relative to when the instance stopped serving"));
        assert!(svg.contains(">\nstopped serving\n<"));
        for (label, _) in &plot.stages {
            assert!(svg.contains(&label.replace('\'', "&apos;")), "{label}");
        }
        assert!(svg.contains("dead hits (300)"));
        // One bar per stage, all in view, and the never-left one labelled.
        assert_eq!(svg.matches(&format!("fill=\"{}\"", hex(UP))).count(), 5);
        assert!(svg.contains("never left"));
        assert!(svg.contains("-90.0 s") && svg.contains("-89.995 s") && svg.contains("-35.0 s"));
        // One mark per non-empty slice of the dead-hit lane.
        let slices = plot.layout().bins.counts.iter().filter(|c| **c > 0).count();
        assert!(slices > 50, "{slices}");
        assert_eq!(
            svg.matches(&format!("fill=\"{}\"", hex(DEAD))).count(),
            slices
        );
    }

    /// A batched count is spread evenly over its span: 600 hits over 60 s in 1-s-wide bins
    /// give each bin of the span its share (within one of the even share), none outside, and
    /// every hit is kept.
    #[test]
    fn a_counted_span_is_spread_over_its_bins() {
        let mut plot = example();
        plot.dead_hits = vec![HitSpan {
            from: -60_000,
            to: 0,
            count: 600,
        }];
        let bins = plot.layout().bins;
        let total: u64 = bins.counts.iter().map(|&c| u64::from(c)).sum();
        assert_eq!(total, 600);
        assert_eq!((bins.before, bins.after), (0, 0));
        let per_ms = 600.0 / 60_000.0;
        for (i, &c) in bins.counts.iter().enumerate() {
            let lo = -100_000.0 + i as f64 * bins.width_ms();
            let hi = lo + bins.width_ms();
            let overlap = (hi.min(0.0) - lo.max(-60_000.0)).max(0.0);
            let even = overlap * per_ms;
            assert!(
                (f64::from(c) - even).abs() <= 1.0,
                "bin {i}: {c} vs {even:.2}"
            );
        }
    }

    #[test]
    fn thousands_of_dead_hits_stay_small() {
        let mut plot = example();
        plot.dead_hits = (0..50_000).map(|i| HitSpan::at(-100_000 + i * 3)).collect();
        let svg = timeline_svg_string(&plot).unwrap();
        assert!(svg.len() < 300_000, "{} bytes", svg.len());
        let bins = plot.layout().bins;
        assert_eq!(
            bins.counts.iter().map(|&c| c as usize).sum::<usize>() + bins.before + bins.after,
            50_000
        );
        assert!(bins.after > 0 && bins.before == 0);
        // The note may wrap anywhere between words.
        assert!(svg.contains("outside"));
    }

    #[test]
    fn stages_outside_the_view_are_said_so() {
        let mut plot = example();
        plot.stages[0].1 = Some(-200_000);
        plot.stages[1].1 = Some(100_000);
        let svg = timeline_svg_string(&plot).unwrap();
        assert!(svg.contains("-200.0 s (before the view)"));
        assert!(svg.contains("100.0 s (after the view)"));
    }

    #[test]
    fn empty_timeline_renders_no_data() {
        let plot = TimelinePlot {
            title: "nothing".to_string(),
            stages: vec![],
            dead_hits: vec![],
            x_range: (0, 0),
        };
        let svg = timeline_svg_string(&plot).unwrap();
        assert!(svg.contains("no data") && svg.contains("stopped serving"));
        let only_stages = TimelinePlot {
            stages: vec![("left the registry".to_string(), None)],
            ..plot
        };
        assert!(
            timeline_svg_string(&only_stages)
                .unwrap()
                .contains("never left")
        );
    }
}
