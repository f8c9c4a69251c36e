//! What the plots share: fonts, colours, the wrapped title header, number formats.

use std::error::Error;

use plotters::chart::MeshStyle;
use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::drawing::DrawingAreaErrorKind;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::fonts::{self, Run};

/// The font family of every text; SVG keeps it as `font-family="sans-serif"`.
pub(super) const FONT: &str = "sans-serif";

/// The width of every plot in pixels; the HTML report scales SVGs to the page.
pub(super) const WIDTH: u32 = 1000;

/// Tick labels and legends.
pub(super) const LABEL_PX: f64 = 15.0;
/// Axis descriptions.
pub(super) const AXIS_PX: f64 = 16.0;

pub(super) const INK: RGBColor = RGBColor(33, 33, 33);
pub(super) const MUTED: RGBColor = RGBColor(96, 96, 96);
pub(super) const GRID: RGBColor = RGBColor(225, 225, 225);

/// Categorical colours (Tableau 10): distinct, and distinguishable by most colour-blind readers
/// for the first few, which is all a comparison of variants usually needs.
pub(super) const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// The colour of series `i`.
pub(super) fn series_color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// `#RRGGBB`, as plotters writes colours into SVG.
#[cfg(test)]
pub(super) fn hex(color: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", color.0, color.1, color.2)
}

/// Why drawing failed, in plotters' words. (No font can be missing: the one typeface is
/// compiled in, `fonts.rs`.)
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Failure(pub(super) String);

/// Turns plotters' drawing errors into a [`Failure`].
pub(super) trait OrFailure<T> {
    fn msg(self) -> Result<T, Failure>;
}

impl<T, E: Error + Send + Sync> OrFailure<T> for Result<T, DrawingAreaErrorKind<E>> {
    fn msg(self) -> Result<T, Failure> {
        self.map_err(|e| Failure(e.to_string()))
    }
}

/// Where a plot's chart is drawn: `body`, the image below the header, and `root`, the whole
/// image, for what is placed by pixel (labels outside the plotting area, "no data").
pub(super) struct Canvas<'a, DB: DrawingBackend> {
    pub(super) body: DrawingArea<DB, Shift>,
    pub(super) root: &'a DrawingArea<DB, Shift>,
}

/// The chart of a CDF or line plot on `body`: the same margins and label areas, so that plots
/// of one report line up.
pub(super) fn xy_chart<'a, DB: DrawingBackend>(
    body: &'a DrawingArea<DB, Shift>,
    x: std::ops::Range<f64>,
    y: std::ops::Range<f64>,
) -> Result<XyChart<'a, DB>, Failure> {
    ChartBuilder::on(body)
        .margin_left(12)
        .margin_right(36)
        .margin_top(6)
        .margin_bottom(8)
        .x_label_area_size(50)
        .y_label_area_size(86)
        .build_cartesian_2d(x, y)
        .msg()
}

/// A chart of numbers against numbers (seconds, shares, metric values).
pub(super) type XyChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Draws `mesh` in the plots' common style: labels and axis descriptions in the one font, a
/// light grid at the labelled ticks only.
pub(super) fn draw_mesh<DB: DrawingBackend>(
    mesh: &mut MeshStyle<'_, '_, RangedCoordf64, RangedCoordf64, DB>,
) -> Result<(), Failure> {
    mesh.label_style((FONT, LABEL_PX))
        .axis_desc_style((FONT, AXIS_PX))
        .bold_line_style(GRID)
        .light_line_style(TRANSPARENT)
        .draw()
        .msg()
}

/// Rejects a row of data (`what`) without one value per x value.
pub(super) fn one_value_per_x(
    what: std::fmt::Arguments,
    values: usize,
    xs: usize,
) -> Result<(), String> {
    if values == xs {
        return Ok(());
    }
    Err(format!("{what} has {values} values for {xs} x values"))
}

/// A text style: family, size, colour, anchor.
pub(super) fn text(size: f64, color: RGBColor, h: HPos, v: VPos) -> TextStyle<'static> {
    TextStyle {
        font: (FONT, size).into_font(),
        color: color.to_backend_color(),
        pos: Pos::new(h, v),
    }
}

/// The width of `s` in pixels at text size `size`, in the bundled DejaVu Sans (bold or not):
/// the width a PNG draws it at, and the one an SVG viewer does with that font.
pub(super) fn text_width(s: &str, size: f64, bold: bool) -> u32 {
    fonts::face(bold).width(s, size).max(0) as u32
}

/// Greedy word wrap to `max_width` pixels; a word wider than the line is broken by characters.
/// The line is measured as it grows ([`fonts::Run`]), not from its start for every word: the
/// same widths as [`text_width`] of each candidate line, at a cost linear in the text.
pub(super) fn wrap(s: &str, max_width: u32, size: f64, bold: bool) -> Vec<String> {
    let face = fonts::face(bold);
    let fits = |run: Run| face.run_width(run, size).max(0) as u32 <= max_width;
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut run = Run::default();
    for word in s.split_whitespace() {
        let candidate = if line.is_empty() {
            face.extend(Run::default(), word)
        } else {
            face.extend(face.extend(run, " "), word)
        };
        if fits(candidate) {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
            run = candidate;
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        // The word alone: break it if it still does not fit.
        run = Run::default();
        let mut chars = 0;
        for c in word.chars() {
            let mut utf8 = [0; 4];
            let c_str = c.encode_utf8(&mut utf8);
            let longer = face.extend(run, c_str);
            if chars >= 1 && !fits(longer) {
                lines.push(std::mem::take(&mut line));
                run = face.extend(Run::default(), c_str);
                chars = 1;
            } else {
                run = longer;
                chars += 1;
            }
            line.push(c);
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// The kind of a header line.
#[derive(Debug, Clone, Copy, PartialEq)]
enum LineKind {
    /// The first line of the title.
    Title,
    /// Further lines of the title (after a `\n`): the settings.
    Subtitle,
    /// How to read the plot.
    Note,
}

impl LineKind {
    fn size(self) -> f64 {
        match self {
            LineKind::Title => 22.0,
            LineKind::Subtitle => 16.0,
            LineKind::Note => 14.0,
        }
    }

    fn advance(self) -> u32 {
        (self.size() * 1.35).round() as u32
    }

    fn bold(self) -> bool {
        self == LineKind::Title
    }

    fn color(self) -> RGBColor {
        match self {
            LineKind::Title => INK,
            LineKind::Subtitle => RGBColor(66, 66, 66),
            LineKind::Note => MUTED,
        }
    }
}

/// The sample drawn before a legend entry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Swatch {
    /// A short thick line: a series.
    Line(RGBColor),
    /// A cross: an unresolved value.
    Cross(RGBColor),
}

/// The title (wrapped), the notes and the legend above a plot. The legend sits outside the
/// plotting area, where it can never hide a curve.
pub(super) struct Header {
    lines: Vec<(String, LineKind)>,
    /// Legend entries, laid out in centred rows.
    legend: Vec<Vec<(Swatch, String)>>,
}

const LEGEND_ROW: u32 = 24;
const SWATCH_PX: i32 = 26;
const SWATCH_GAP: i32 = 7;
const ENTRY_GAP: i32 = 28;

fn entry_width(label: &str) -> i32 {
    SWATCH_PX + SWATCH_GAP + text_width(label, LABEL_PX, false) as i32
}

const HEADER_TOP: u32 = 12;
const HEADER_BOTTOM: u32 = 8;

impl Header {
    /// Lays out `title` (first line large, lines after a `\n` smaller) and `notes` for a plot
    /// `width` pixels wide.
    pub(super) fn new(title: &str, notes: &[String], width: u32) -> Header {
        let max = width.saturating_sub(40).max(100);
        let mut lines = Vec::new();
        for (i, part) in title.lines().enumerate() {
            let kind = if i == 0 {
                LineKind::Title
            } else {
                LineKind::Subtitle
            };
            for line in wrap(part, max, kind.size(), kind.bold()) {
                lines.push((line, kind));
            }
        }
        for note in notes {
            for line in wrap(note, max, LineKind::Note.size(), false) {
                lines.push((line, LineKind::Note));
            }
        }
        Header {
            lines,
            legend: Vec::new(),
        }
    }

    /// Adds a legend, wrapped into rows that fit `width`.
    pub(super) fn with_legend(mut self, entries: Vec<(Swatch, String)>, width: u32) -> Header {
        let max = width.saturating_sub(40) as i32;
        let mut row: Vec<(Swatch, String)> = Vec::new();
        let mut used = 0;
        for (swatch, label) in entries {
            let w = entry_width(&label);
            if !row.is_empty() && used + ENTRY_GAP + w > max {
                self.legend.push(std::mem::take(&mut row));
                used = 0;
            }
            used += if row.is_empty() { w } else { ENTRY_GAP + w };
            row.push((swatch, label));
        }
        if !row.is_empty() {
            self.legend.push(row);
        }
        self
    }

    /// The height of the header in pixels.
    pub(super) fn height(&self) -> u32 {
        let legend = match self.legend.len() {
            0 => 0,
            n => 6 + n as u32 * LEGEND_ROW,
        };
        HEADER_TOP
            + self.lines.iter().map(|(_, k)| k.advance()).sum::<u32>()
            + legend
            + HEADER_BOTTOM
    }

    /// Draws the header at the top of `root` and returns the area below it.
    pub(super) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<DrawingArea<DB, Shift>, Failure> {
        let (width, _) = root.dim_in_pixel();
        let mut y = HEADER_TOP as i32;
        for (line, kind) in &self.lines {
            let mut style = text(kind.size(), kind.color(), HPos::Center, VPos::Top);
            if kind.bold() {
                style.font = style.font.style(FontStyle::Bold);
            }
            root.draw(&Text::new(line.clone(), (width as i32 / 2, y), style))
                .msg()?;
            y += kind.advance() as i32;
        }
        if !self.legend.is_empty() {
            y += 6;
        }
        for row in &self.legend {
            let total: i32 = row.iter().map(|(_, l)| entry_width(l)).sum::<i32>()
                + ENTRY_GAP * (row.len() as i32 - 1);
            let mut x = (width as i32 - total) / 2;
            let mid = y + LEGEND_ROW as i32 / 2;
            for (swatch, label) in row {
                draw_swatch(root, *swatch, (x, mid))?;
                root.draw(&Text::new(
                    label.clone(),
                    (x + SWATCH_PX + SWATCH_GAP, mid),
                    text(LABEL_PX, INK, HPos::Left, VPos::Center),
                ))
                .msg()?;
                x += entry_width(label) + ENTRY_GAP;
            }
            y += LEGEND_ROW as i32;
        }
        Ok(root.split_vertically(self.height()).1)
    }
}

/// A legend sample whose left end is at `(x, y)`.
fn draw_swatch<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    swatch: Swatch,
    (x, y): (i32, i32),
) -> Result<(), Failure> {
    match swatch {
        Swatch::Line(color) => root
            .draw(&PathElement::new(
                vec![(x, y), (x + SWATCH_PX, y)],
                color.stroke_width(3),
            ))
            .msg(),
        Swatch::Cross(color) => {
            let (c, r) = (x + SWATCH_PX / 2, 5);
            root.draw(&PathElement::new(
                vec![(c - r, y - r), (c + r, y + r)],
                color.stroke_width(2),
            ))
            .msg()?;
            root.draw(&PathElement::new(
                vec![(c - r, y + r), (c + r, y - r)],
                color.stroke_width(2),
            ))
            .msg()
        }
    }
}

/// Writes `message` in the middle of `area` (a "no data" plot).
pub(super) fn draw_no_data<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    center: (i32, i32),
    message: &str,
) -> Result<(), Failure> {
    let style = text(20.0, MUTED, HPos::Center, VPos::Center);
    area.draw(&Text::new(message.to_string(), center, style))
        .msg()
}

/// A tick label: integers without decimals, others with up to two, never "-0".
pub(super) fn fmt_tick(v: &f64) -> String {
    let v = if v.abs() < 1e-9 { 0.0 } else { *v };
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else if (v * 10.0 - (v * 10.0).round()).abs() < 1e-9 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A value printed in a cell or next to a point: three significant figures or an integer.
pub(super) fn fmt_value(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 || (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Milliseconds as seconds, exactly, with at least one decimal: `-90000` -> `"-90.0 s"`,
/// `-89995` -> `"-89.995 s"` (two stages 5 ms apart must not print the same instant).
pub(super) fn fmt_seconds(ms: i64) -> String {
    let sign = if ms < 0 { "-" } else { "" };
    let (whole, frac) = (ms.unsigned_abs() / 1000, ms.unsigned_abs() % 1000);
    let frac = format!("{frac:03}");
    let frac = frac.trim_end_matches('0');
    let frac = if frac.is_empty() { "0" } else { frac };
    format!("{sign}{whole}.{frac} s")
}

/// `lo..hi` widened by `pad` of its span on each side; a degenerate or inverted range becomes
/// `lo - 1 .. lo + 1` (or `0..1` when not finite).
pub(super) fn padded(lo: f64, hi: f64, pad_lo: f64, pad_hi: f64) -> (f64, f64) {
    if !lo.is_finite() || !hi.is_finite() {
        return (0.0, 1.0);
    }
    if hi <= lo {
        return (lo - 1.0, lo + 1.0);
    }
    let span = hi - lo;
    (lo - span * pad_lo, hi + span * pad_hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_have_no_needless_decimals() {
        assert_eq!(fmt_tick(&-0.0), "0");
        assert_eq!(fmt_tick(&-1e-12), "0");
        assert_eq!(fmt_tick(&30.0), "30");
        assert_eq!(fmt_tick(&2.5), "2.5");
        assert_eq!(fmt_tick(&0.25), "0.25");
        assert_eq!(fmt_seconds(-89_995), "-89.995 s");
        assert_eq!(fmt_seconds(-90_000), "-90.0 s");
        assert_eq!(fmt_seconds(-20), "-0.02 s");
        assert_eq!(fmt_seconds(0), "0.0 s");
        assert_eq!(fmt_seconds(1_500), "1.5 s");
        assert_eq!(fmt_value(12.345), "12.3");
        assert_eq!(fmt_value(250.0), "250");
    }

    #[test]
    fn long_titles_wrap_within_the_width() {
        let title = "word ".repeat(100);
        let lines = wrap(&title, 300, 16.0, false);
        assert!(lines.len() > 3);
        assert!(lines.iter().all(|l| text_width(l, 16.0, false) <= 300));
        let unbroken = "x".repeat(200);
        assert!(wrap(&unbroken, 300, 16.0, false).len() > 1);
        assert!(wrap("", 300, 16.0, false).is_empty());
    }

    /// The wrap that measures each candidate line whole with [`text_width`] (as this module
    /// did before it measured lines as they grow): the reference the incremental one must equal.
    fn wrap_measuring_each_line(s: &str, max_width: u32, size: f64, bold: bool) -> Vec<String> {
        let mut lines = Vec::new();
        let mut line = String::new();
        for word in s.split_whitespace() {
            let candidate = if line.is_empty() {
                word.to_string()
            } else {
                format!("{line} {word}")
            };
            if text_width(&candidate, size, bold) <= max_width {
                line = candidate;
                continue;
            }
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            for c in word.chars() {
                line.push(c);
                if line.chars().count() > 1 && text_width(&line, size, bold) > max_width {
                    line.pop();
                    lines.push(std::mem::take(&mut line));
                    line.push(c);
                }
            }
        }
        if !line.is_empty() {
            lines.push(line);
        }
        lines
    }

    /// Growing a line's measure word by word breaks lines exactly where measuring every
    /// candidate line whole does: kerning across the joins included (AV, To, "Wa"), bold or
    /// not, long words broken by characters, characters the face lacks.
    #[test]
    fn wrapping_as_the_line_grows_breaks_where_measuring_whole_lines_does() {
        let texts = [
            "kill-9: svc-0 stopped with kill-9 - trial 30 (seed 1662269552329397664) AVAVAV To Wa",
            "Green bars: the instance is still listed as UP in that layer, until the instant shown.",
            "zone-outage-self-preservation: exposure of svc-z1-0 (kill-9) over 40 trials \u{2192} ok",
            &"averyveryverylongwordwithoutanyspaceAVToWa".repeat(4),
            "\u{10FFFF}\u{10FFFF} x \u{FFFD}",
        ];
        for text in texts {
            for (width, size, bold) in [(300, 16.0, false), (977, 22.0, true), (120, 14.0, true)] {
                assert_eq!(
                    wrap(text, width, size, bold),
                    wrap_measuring_each_line(text, width, size, bold),
                    "{text:?} in {width} px at {size} (bold {bold})"
                );
            }
        }
    }

    #[test]
    fn degenerate_ranges_are_widened() {
        assert_eq!(padded(5.0, 5.0, 0.1, 0.1), (4.0, 6.0));
        assert_eq!(padded(f64::NAN, 1.0, 0.1, 0.1), (0.0, 1.0));
        assert_eq!(padded(0.0, 10.0, 0.0, 0.1), (0.0, 11.0));
    }
}
