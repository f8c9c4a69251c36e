//! Plots of trial outcomes, drawn with plotters as SVG (default) or PNG.
//!
//! Four kinds of plot, each a plain data struct filled by the caller and drawn by one
//! `render_*` function (to a file) or one `*_svg_string` function (for inlining in the HTML
//! report):
//!
//! - [`TimelinePlot`]: the timeline of one trial of one shutdown: until when the instance was
//!   still listed as UP in each layer, and the dead hits, relative to when it stopped serving.
//! - [`CdfPlot`]: the distribution of a metric (exposure) over the trials, one step line per
//!   variant; unresolved trials keep the curve below 100 %.
//! - [`LinePlot`]: one metric against one swept key, one line per variant.
//! - [`Heatmap`]: one metric against two swept keys, cells annotated with their value.
//!
//! Times arrive in integer milliseconds and are shown in seconds. Every plot starts with the
//! caller's title (scenario and settings), wrapped to the width of the image; a `\n` in the title
//! starts a new, smaller line. No plot panics on empty data: an empty or all-unresolved input
//! draws a readable "no data" plot instead.
//!
//! Text: measured and (in PNG) rasterised with the one typeface compiled in (`fonts.rs`: DejaVu
//! Sans, `assets/fonts/`), never looked up on the machine, so a plot is the same bytes
//! everywhere. SVG keeps text as text (`font-family="sans-serif"`, drawn by the viewer, laid out
//! with DejaVu Sans's widths); PNG draws it through `png.rs`'s backend.
//!
//! SVG: `svg.rs`'s backend writes the bytes plotters' `SVGBackend` writes, without its
//! per-attribute strings.

mod cdf;
mod common;
mod fonts;
mod heatmap;
mod line;
mod png;
mod svg;
mod timeline;

use std::io;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;

use common::{Canvas, Failure, Header};
use plotters::prelude::*;

pub use cdf::{CdfPlot, CdfSeries, cdf_steps};
pub use heatmap::Heatmap;
pub use line::LinePlot;
pub use timeline::{HitSpan, TimelinePlot};

/// The image format of a rendered plot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ImageFormat {
    /// Scalable, small, text stays text; what the HTML report inlines.
    #[default]
    Svg,
    /// A raster image, text rendered with the bundled DejaVu Sans.
    Png,
}

impl ImageFormat {
    /// The file extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            ImageFormat::Svg => "svg",
            ImageFormat::Png => "png",
        }
    }
}

/// Why a plot could not be drawn. Messages read after "failed to ...".
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// The data does not fit the plot (e.g. a heatmap row with the wrong number of cells).
    #[error("plot the {plot}: {problem}")]
    Data { plot: &'static str, problem: String },
    /// plotters failed while drawing.
    #[error("draw the {plot}: {message}")]
    Draw { plot: &'static str, message: String },
    /// The SVG file could not be written.
    #[error("write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The PNG file could not be encoded or written.
    #[error("write {} as PNG: {message}", path.display())]
    Png { path: PathBuf, message: String },
}

/// Draws the timeline of one trial into `path`.
pub fn render_timeline(
    plot: &TimelinePlot,
    format: ImageFormat,
    path: &Path,
) -> Result<(), PlotError> {
    render(plot, format, path)
}

/// The timeline of one trial as an SVG document.
pub fn timeline_svg_string(plot: &TimelinePlot) -> Result<String, PlotError> {
    svg_string(plot)
}

/// Draws the CDF plot into `path`.
pub fn render_cdf(plot: &CdfPlot, format: ImageFormat, path: &Path) -> Result<(), PlotError> {
    render(plot, format, path)
}

/// The CDF plot as an SVG document.
pub fn cdf_svg_string(plot: &CdfPlot) -> Result<String, PlotError> {
    svg_string(plot)
}

/// Draws the line plot into `path`.
pub fn render_line(plot: &LinePlot, format: ImageFormat, path: &Path) -> Result<(), PlotError> {
    render(plot, format, path)
}

/// The line plot as an SVG document.
pub fn line_svg_string(plot: &LinePlot) -> Result<String, PlotError> {
    svg_string(plot)
}

/// Draws the heatmap into `path`.
pub fn render_heatmap(plot: &Heatmap, format: ImageFormat, path: &Path) -> Result<(), PlotError> {
    render(plot, format, path)
}

/// The heatmap as an SVG document.
pub fn heatmap_svg_string(plot: &Heatmap) -> Result<String, PlotError> {
    svg_string(plot)
}

/// Writes `svg`, a document from one of the `*_svg_string` functions, to `path`: the file
/// `render_*` writes in [`ImageFormat::Svg`], for a caller that also inlines the document (a
/// plot drawn once, not once per use).
pub fn write_svg(svg: &str, path: &Path) -> Result<(), PlotError> {
    std::fs::write(path, svg).map_err(|source| PlotError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// What every plot kind provides to the two backends.
trait Drawable {
    /// The plot's name in error messages ("timeline", "CDF plot", ...).
    const KIND: &'static str;

    /// Rejects data that does not fit the plot (before anything is drawn).
    fn check(&self) -> Result<(), String> {
        Ok(())
    }

    /// What both [`Drawable::size`] and [`Drawable::draw`] need (the header's wrapped and measured
    /// text, a timeline's bins), worked out once per image: computed by each of them, the work
    /// done twice was 0.77 M of the 7.72 M instructions of `run bench/oracle-kill9.toml --trials
    /// 1` (callgrind).
    type Layout;

    /// Lays the plot out from its data.
    fn layout(&self) -> Self::Layout;

    /// The image size in pixels, decided from the data before drawing.
    fn size(&self, layout: &Self::Layout) -> (u32, u32);

    /// Draws the plot on a white canvas of [`Drawable::size`].
    fn draw<DB: DrawingBackend>(
        &self,
        layout: &Self::Layout,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), Failure>;
}

/// A plot that is its header over one chart: every kind but the timeline, whose layout also
/// holds its bins. The header is laid out once per image, sized into it and drawn above the
/// chart.
trait ChartUnderHeader {
    /// The plot's name in error messages, as [`Drawable::KIND`].
    const KIND: &'static str;

    /// Rejects data that does not fit the plot, as [`Drawable::check`].
    fn check(&self) -> Result<(), String> {
        Ok(())
    }

    /// The title, notes and legend above the chart.
    fn header(&self) -> Header;

    /// The chart's height in pixels, below the header.
    fn chart_height(&self) -> u32;

    /// Draws the chart below the header.
    fn draw_chart<DB: DrawingBackend>(&self, canvas: &Canvas<DB>) -> Result<(), Failure>;
}

impl<P: ChartUnderHeader> Drawable for P {
    const KIND: &'static str = <P as ChartUnderHeader>::KIND;

    fn check(&self) -> Result<(), String> {
        ChartUnderHeader::check(self)
    }

    type Layout = Header;

    fn layout(&self) -> Header {
        self.header()
    }

    fn size(&self, header: &Header) -> (u32, u32) {
        (common::WIDTH, header.height() + self.chart_height())
    }

    fn draw<DB: DrawingBackend>(
        &self,
        header: &Header,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), Failure> {
        let body = header.draw(root)?;
        self.draw_chart(&Canvas { body, root })
    }
}

fn svg_string<P: Drawable>(plot: &P) -> Result<String, PlotError> {
    plot.check().map_err(|problem| PlotError::Data {
        plot: P::KIND,
        problem,
    })?;
    let layout = plot.layout();
    // Room for a timeline of a few hundred marks (38 KB) or a CDF (18 KB) at once, rather than
    // the document copied at each doubling.
    let mut svg = String::with_capacity(64 * 1024);
    {
        let root = svg::SvgBackend::new(&mut svg, plot.size(&layout)).into_drawing_area();
        draw_on(plot, &layout, &root)?;
        root.present().map_err(|e| PlotError::Draw {
            plot: P::KIND,
            message: e.to_string(),
        })?;
    }
    Ok(svg)
}

fn render<P: Drawable>(plot: &P, format: ImageFormat, path: &Path) -> Result<(), PlotError> {
    match format {
        ImageFormat::Svg => write_svg(&svg_string(plot)?, path),
        ImageFormat::Png => {
            plot.check().map_err(|problem| PlotError::Data {
                plot: P::KIND,
                problem,
            })?;
            let layout = plot.layout();
            let drawn = {
                let root = png::PngBackend::new(path, plot.size(&layout)).into_drawing_area();
                draw_on(plot, &layout, &root).and_then(|()| {
                    root.present().map_err(|e| PlotError::Png {
                        path: path.to_path_buf(),
                        message: e.to_string(),
                    })
                })
            };
            if drawn.is_err() {
                // The backend saves what it has when dropped: no half-drawn image stays behind.
                let _ = std::fs::remove_file(path);
            }
            drawn
        }
    }
}

/// Fills the canvas white and draws the plot on it.
fn draw_on<P: Drawable, DB: DrawingBackend>(
    plot: &P,
    layout: &P::Layout,
    root: &DrawingArea<DB, Shift>,
) -> Result<(), PlotError> {
    use common::OrFailure;
    root.fill(&WHITE)
        .msg()
        .and_then(|()| plot.draw(layout, root))
        .map_err(|Failure(message)| PlotError::Draw {
            plot: P::KIND,
            message,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plot's document through plotters' own `SVGBackend`: what [`svg_string`] wrote before
    /// `svg.rs` (and must still write, byte for byte).
    fn plotters_svg_string<P: Drawable>(plot: &P) -> String {
        let layout = plot.layout();
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, plot.size(&layout)).into_drawing_area();
            draw_on(plot, &layout, &root).unwrap();
            root.present().unwrap();
        }
        svg
    }

    /// The PNG signature (RFC 2083 §3.1): the file is a PNG image.
    const PNG_MAGIC: &[u8] = b"\x89PNG\r\n\x1a\n";

    #[test]
    fn every_plot_kind_renders_a_png() {
        type Render = Box<dyn Fn(&Path) -> Result<(), PlotError>>;
        let kinds: [(&str, Render); 3] = [
            (
                "timeline",
                Box::new(|path: &Path| {
                    render_timeline(&timeline::tests::example(), ImageFormat::Png, path)
                }),
            ),
            (
                "cdf",
                Box::new(|path: &Path| render_cdf(&cdf::tests::example(), ImageFormat::Png, path)),
            ),
            (
                "heatmap",
                Box::new(|path: &Path| {
                    render_heatmap(&heatmap::tests::example(), ImageFormat::Png, path)
                }),
            ),
        ];
        for (kind, render) in kinds {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(format!("{kind}.png"));
            render(&path).unwrap();
            let bytes = std::fs::read(&path).unwrap();
            assert!(bytes.starts_with(PNG_MAGIC), "{kind}");
        }
    }

    #[test]
    fn every_plot_kind_is_the_document_plotters_svg_backend_writes() {
        let timeline = timeline::tests::example();
        assert_eq!(
            svg_string(&timeline).unwrap(),
            plotters_svg_string(&timeline)
        );
        let cdf = cdf::tests::example();
        assert_eq!(svg_string(&cdf).unwrap(), plotters_svg_string(&cdf));
        let line = line::tests::example();
        assert_eq!(svg_string(&line).unwrap(), plotters_svg_string(&line));
        let heatmap = heatmap::tests::example();
        assert_eq!(svg_string(&heatmap).unwrap(), plotters_svg_string(&heatmap));
    }
}
