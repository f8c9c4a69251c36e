//! A self-contained `report.html`, in the manner of criterion's reports: a title, a table of
//! contents, and sections of paragraphs, figures (inline SVG) and tables.
//!
//! The file needs nothing else: no network, no external CSS, JavaScript or fonts (a system font
//! stack in an inline `<style>`), and the figures are inlined SVG that scale to the page width.
//! All text is escaped; only a figure's SVG is trusted markup (it comes from [`super::plot`]).
//! The output is a function of the report alone (no timestamps), so two runs of the same
//! experiment give identical files.

use std::fmt::Write as _;
use std::io;
use std::path::Path;

/// A whole report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HtmlReport {
    pub title: String,
    /// One line under the title: the scenario, the seed, the number of trials...
    pub subtitle: String,
    pub sections: Vec<Section>,
}

/// One section: a heading, then paragraphs, figures and tables in that order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Section {
    pub heading: String,
    pub paragraphs: Vec<String>,
    pub tables: Vec<Table>,
    pub figures: Vec<Figure>,
}

/// A table of text cells; cells that look like numbers are right-aligned.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    pub caption: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// A figure: inline SVG markup (e.g. from [`super::plot::cdf_svg_string`]) and a caption.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figure {
    pub caption: String,
    pub svg: String,
}

/// Writes [`render_html`] of `report` to `path`.
pub fn write_html(report: &HtmlReport, path: &Path) -> io::Result<()> {
    std::fs::write(path, render_html(report))
}

/// Escapes text for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = r#"
:root { color-scheme: light; }
* { box-sizing: border-box; }
body {
  margin: 0 auto; padding: 1.5rem 1.25rem 3rem; max-width: 1100px;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
    "Noto Sans", "Liberation Sans", "DejaVu Sans", sans-serif;
  font-size: 16px; line-height: 1.5; color: #212121; background: #fff;
}
h1 { font-size: 1.8rem; margin: 0 0 .25rem; }
.subtitle { margin: 0 0 1rem; color: #555; }
nav { margin: 0 0 1.5rem; padding: .5rem 1rem; background: #f6f6f6; border-radius: 6px; }
nav ol { margin: .25rem 0; padding-left: 1.5rem; }
nav a { color: #1f5fa0; text-decoration: none; }
nav a:hover { text-decoration: underline; }
section { margin: 2rem 0 0; padding-top: 1rem; border-top: 1px solid #ddd; }
h2 { font-size: 1.35rem; margin: 0 0 .75rem; }
p { margin: .5rem 0; max-width: 80ch; }
figure { margin: 1.25rem 0; }
figure .plot { border: 1px solid #e3e3e3; border-radius: 4px; overflow: hidden; }
figure svg { display: block; width: 100%; height: auto; }
figcaption { margin-top: .4rem; color: #555; font-size: .92rem; }
.table-wrap { overflow-x: auto; margin: 1.25rem 0; }
table { border-collapse: collapse; font-size: .92rem; }
caption { caption-side: top; text-align: left; font-weight: 600; padding: 0 0 .4rem; }
th, td { padding: .3rem .7rem; border-bottom: 1px solid #e3e3e3; text-align: left;
  white-space: nowrap; }
th { background: #f3f3f3; border-bottom: 2px solid #ccc; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tbody tr:nth-child(even) { background: #fafafa; }
footer { margin-top: 3rem; color: #888; font-size: .85rem; }
@media print { nav { display: none; } section { break-inside: avoid-page; } }
"#;

/// The whole document.
pub fn render_html(report: &HtmlReport) -> String {
    // Room for the figures, which are most of the document, and the style sheet: the document
    // is not copied again and again as it grows.
    let figures: usize = report
        .sections
        .iter()
        .flat_map(|s| &s.figures)
        .map(|f| f.svg.len())
        .sum();
    let mut out = String::with_capacity(figures + STYLE.len() + 4096);
    let title = escape(&report.title);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(out, "<title>{title}</title>");
    let _ = writeln!(out, "<style>{STYLE}</style>\n</head>\n<body>\n<header>");
    let _ = writeln!(out, "<h1>{title}</h1>");
    if !report.subtitle.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"subtitle\">{}</p>",
            escape(&report.subtitle)
        );
    }
    out.push_str("</header>\n");
    if report.sections.len() > 1 {
        out.push_str("<nav>\n<strong>Contents</strong>\n<ol>\n");
        for (i, section) in report.sections.iter().enumerate() {
            let _ = writeln!(
                out,
                "<li><a href=\"#{}\">{}</a></li>",
                anchor(i),
                escape(&section.heading)
            );
        }
        out.push_str("</ol>\n</nav>\n");
    }
    out.push_str("<main>\n");
    for (i, section) in report.sections.iter().enumerate() {
        render_section(&mut out, i, section);
    }
    out.push_str("</main>\n");
    let _ = writeln!(
        out,
        "<footer>Generated by eureka-sim {}.</footer>",
        env!("CARGO_PKG_VERSION")
    );
    out.push_str("</body>\n</html>\n");
    out
}

fn anchor(section: usize) -> String {
    format!("section-{}", section + 1)
}

fn render_section(out: &mut String, index: usize, section: &Section) {
    let _ = writeln!(out, "<section id=\"{}\">", anchor(index));
    let _ = writeln!(out, "<h2>{}</h2>", escape(&section.heading));
    for paragraph in &section.paragraphs {
        let _ = writeln!(out, "<p>{}</p>", escape(paragraph));
    }
    for figure in &section.figures {
        out.push_str("<figure>\n<div class=\"plot\">\n");
        push_inline_svg(out, &figure.svg);
        out.push_str("\n</div>\n");
        if !figure.caption.is_empty() {
            let _ = writeln!(out, "<figcaption>{}</figcaption>", escape(&figure.caption));
        }
        out.push_str("</figure>\n");
    }
    for table in &section.tables {
        render_table(out, table);
    }
    out.push_str("</section>\n");
}

fn render_table(out: &mut String, table: &Table) {
    out.push_str("<div class=\"table-wrap\">\n<table>\n");
    if !table.caption.is_empty() {
        let _ = writeln!(out, "<caption>{}</caption>", escape(&table.caption));
    }
    if !table.header.is_empty() {
        out.push_str("<thead><tr>");
        for cell in &table.header {
            let _ = write!(out, "<th scope=\"col\">{}</th>", escape(cell));
        }
        out.push_str("</tr></thead>\n");
    }
    out.push_str("<tbody>\n");
    for row in &table.rows {
        out.push_str("<tr>");
        for cell in row {
            if looks_numeric(cell) {
                let _ = write!(out, "<td class=\"num\">{}</td>", escape(cell));
            } else {
                let _ = write!(out, "<td>{}</td>", escape(cell));
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n</div>\n");
}

/// Numbers, possibly signed, with a unit or a percent sign after them ("12.5s", "-3", "40 %"),
/// and the "-" that stands for "no value" in a column of numbers.
fn looks_numeric(cell: &str) -> bool {
    let cell = cell.trim();
    if cell == "-" {
        return true;
    }
    let digits = cell.strip_prefix(['-', '+']).unwrap_or(cell);
    digits.starts_with(|c: char| c.is_ascii_digit())
        || (digits.starts_with('.') && digits[1..].starts_with(|c: char| c.is_ascii_digit()))
}

/// SVG markup ready to sit in an HTML5 document: without an XML prolog or a doctype, and
/// without namespace declarations, which HTML does not need (the parser puts `<svg>` in the
/// SVG namespace) and which would be the only URLs in the file. Sizing is left to the CSS
/// (`width: 100%; height: auto` with the SVG's own `viewBox`).
fn inline_svg(svg: &str) -> String {
    let mut svg = svg.trim();
    while svg.starts_with("<?") || svg.starts_with("<!") {
        match svg.find('>') {
            Some(end) => svg = svg[end + 1..].trim_start(),
            None => break,
        }
    }
    svg.replace(XMLNS, "")
        .replace(XMLNS_XLINK, "")
        .trim_end()
        .to_string()
}

const XMLNS: &str = " xmlns=\"http://www.w3.org/2000/svg\"";
const XMLNS_XLINK: &str = " xmlns:xlink=\"http://www.w3.org/1999/xlink\"";

/// Appends [`inline_svg`] of `svg` to `out`. A plot declares its namespace on its root tag
/// only, so when nothing after that tag mentions `xmlns` (one fast `contains` scan) only the
/// root tag is rewritten and the rest is copied once, instead of searched and copied by two
/// `replace`s and copied twice more (callgrind, `run bench/oracle-kill9.toml --trials 1`:
/// `render_html` 0.62 M -> 0.27 M instructions). No pattern can span the root tag's end: neither
/// holds a `>`.
fn push_inline_svg(out: &mut String, svg: &str) {
    let mut doc = svg.trim();
    while doc.starts_with("<?") || doc.starts_with("<!") {
        match doc.find('>') {
            Some(end) => doc = doc[end + 1..].trim_start(),
            None => break,
        }
    }
    let root_end = doc.find('>').map_or(doc.len(), |i| i + 1);
    let (root, rest) = doc.split_at(root_end);
    if rest.contains("xmlns") {
        out.push_str(&inline_svg(svg));
        return;
    }
    let root = root.replace(XMLNS, "").replace(XMLNS_XLINK, "");
    if rest.is_empty() {
        out.push_str(root.trim_end());
    } else {
        out.push_str(&root);
        out.push_str(rest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> HtmlReport {
        HtmlReport {
            title: "Exposure <kill-9> & friends".to_string(),
            subtitle: "scenario a&b.toml, seed 7".to_string(),
            sections: vec![
                Section {
                    heading: "Summary & <overview>".to_string(),
                    paragraphs: vec!["x < y && y > z".to_string()],
                    tables: vec![Table {
                        caption: "Statistics".to_string(),
                        header: vec!["metric".to_string(), "p99".to_string()],
                        rows: vec![
                            vec!["exposure".to_string(), "12.5s".to_string()],
                            vec!["dead <hits>".to_string(), "-".to_string()],
                        ],
                    }],
                    figures: vec![],
                },
                Section {
                    heading: "Distribution".to_string(),
                    paragraphs: vec![],
                    tables: vec![],
                    figures: vec![Figure {
                        caption: "CDF of exposure".to_string(),
                        svg: "<?xml version=\"1.0\"?>\n<svg width=\"10\" height=\"10\" \
                              viewBox=\"0 0 10 10\" xmlns=\"http://www.w3.org/2000/svg\">\
                              <rect id=\"marker\"/></svg>\n"
                            .to_string(),
                    }],
                },
            ],
        }
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            escape("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
        let html = render_html(&example());
        assert!(html.contains("<title>Exposure &lt;kill-9&gt; &amp; friends</title>"));
        assert!(html.contains("<h1>Exposure &lt;kill-9&gt; &amp; friends</h1>"));
        assert!(html.contains("scenario a&amp;b.toml"));
        assert!(html.contains("<p>x &lt; y &amp;&amp; y &gt; z</p>"));
        assert!(html.contains("<td>dead &lt;hits&gt;</td>"));
        assert!(!html.contains("<kill-9>") && !html.contains("<hits>"));
    }

    #[test]
    fn every_section_table_and_figure_is_there() {
        let report = example();
        let html = render_html(&report);
        for (i, section) in report.sections.iter().enumerate() {
            let heading = escape(&section.heading);
            assert!(html.contains(&format!("<h2>{heading}</h2>")));
            assert!(html.contains(&format!("<a href=\"#section-{}\">{heading}</a>", i + 1)));
        }
        assert!(html.contains("<caption>Statistics</caption>"));
        assert!(html.contains("<th scope=\"col\">p99</th>"));
        assert!(html.contains("<td class=\"num\">12.5s</td>"));
        assert!(html.contains("<td class=\"num\">-</td>"));
        assert!(html.contains("<svg width=\"10\" height=\"10\" viewBox=\"0 0 10 10\">"));
        assert!(html.contains("<rect id=\"marker\"/>"));
        assert!(html.contains("<figcaption>CDF of exposure</figcaption>"));
        assert!(!html.contains("<?xml"));
        assert_eq!(html.matches("<section").count(), 2);
    }

    #[test]
    fn the_report_is_self_contained_and_deterministic() {
        let html = render_html(&example());
        assert!(
            !html.contains("http://") && !html.contains("https://"),
            "{html}"
        );
        assert!(!html.contains("<script") && !html.contains("<link"));
        assert!(!html.contains("url("));
        assert_eq!(html, render_html(&example()));
    }

    #[test]
    fn real_plots_are_inlined_without_urls() {
        use crate::report::plot::{CdfPlot, CdfSeries, cdf_svg_string};
        let svg = cdf_svg_string(&CdfPlot {
            title: "exposure".to_string(),
            x_label: "exposure (s)".to_string(),
            series: vec![CdfSeries {
                label: "kill-9".to_string(),
                values_ms: vec![150_000, 200_000],
                unresolved: 1,
            }],
        })
        .unwrap();
        // plotters declares the SVG namespace, which an HTML document does not need.
        assert!(svg.contains("http://www.w3.org/2000/svg"));
        let report = HtmlReport {
            sections: vec![Section {
                heading: "CDF".to_string(),
                figures: vec![Figure {
                    caption: "c".to_string(),
                    svg,
                }],
                ..Section::default()
            }],
            ..HtmlReport::default()
        };
        let html = render_html(&report);
        assert!(!html.contains("http://") && !html.contains("https://"));
        assert!(html.contains("<svg width=\"1000\""));
        assert!(html.contains("kill-9 (n = 3, 1 unresolved: 33.3 %)"));
    }

    /// Rewriting the root tag only gives what removing the namespaces everywhere gives: with a
    /// prolog and a doctype, namespaces after the root tag, no tag at all, blank ends.
    #[test]
    fn inlining_the_root_tag_only_equals_replacing_everywhere() {
        let docs = [
            "",
            "  \n ",
            "no tag",
            "<svg xmlns=\"http://www.w3.org/2000/svg\">",
            "<svg xmlns=\"http://www.w3.org/2000/svg\"  \n",
            "<?xml version=\"1.0\"?>\n<!DOCTYPE svg>\n<svg width=\"1\" \
             xmlns=\"http://www.w3.org/2000/svg\" \
             xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n<rect/>\n</svg>\n",
            "<svg xmlns=\"http://www.w3.org/2000/svg\">\n<g xmlns=\"http://www.w3.org/2000/svg\"/>\
             <text>xmlns</text>\n</svg>  ",
            "<?unclosed",
        ];
        for doc in docs {
            let mut out = String::from("before");
            push_inline_svg(&mut out, doc);
            assert_eq!(out, format!("before{}", inline_svg(doc)), "{doc:?}");
        }
    }

    #[test]
    fn numbers_are_recognised() {
        for cell in ["12", "-3", "12.5s", ".5", "40 %", "-", "+1"] {
            assert!(looks_numeric(cell), "{cell}");
        }
        for cell in ["kill-9", "", "-x", "."] {
            assert!(!looks_numeric(cell), "{cell}");
        }
    }

    #[test]
    fn an_empty_report_is_still_a_document() {
        let html = render_html(&HtmlReport::default());
        assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</html>\n"));
        assert!(!html.contains("<nav>"));
    }

    #[test]
    fn write_html_writes_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.html");
        write_html(&example(), &path).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            render_html(&example())
        );
    }

    /// Renders one plot of each kind with plausible data into /tmp/plots/ (SVG and PNG) and a
    /// report.html that inlines them, to look at:
    /// `cargo test --lib report::html::tests::demo -- --ignored`.
    #[test]
    #[ignore = "writes /tmp/plots for a person to look at"]
    fn demo() {
        use crate::report::plot::*;

        let dir = Path::new("/tmp/plots");
        std::fs::create_dir_all(dir).unwrap();
        let settings = "scenario examples/gateway.toml, release 2023.0.x, 1000 trials, seed 42, \
                        eviction 60 s, response cache 30 s, client fetch 30 s, Ribbon refresh 30 s";
        let (timeline, cdf, line, dead_hits_line, heatmap) = demo_plots(settings);

        for format in [ImageFormat::Svg, ImageFormat::Png] {
            let file = |name: &str| dir.join(format!("{name}.{}", format.extension()));
            render_timeline(&timeline, format, &file("timeline")).unwrap();
            render_cdf(&cdf, format, &file("cdf")).unwrap();
            render_line(&line, format, &file("line_exposure")).unwrap();
            render_line(&dead_hits_line, format, &file("line_dead_hits")).unwrap();
            render_heatmap(&heatmap, format, &file("heatmap")).unwrap();
        }

        let figure = |caption: &str, svg: String| Figure {
            caption: caption.to_string(),
            svg,
        };
        let report = HtmlReport {
            title: "eureka-sim report: examples/gateway.toml".to_string(),
            subtitle: settings.to_string(),
            sections: vec![
                Section {
                    heading: "Exposure by strategy".to_string(),
                    paragraphs: vec![
                        "Exposure is how long after the instance stopped serving a caller could \
                         still pick it. 20 of the kill-9 trials did not resolve within the \
                         simulated time."
                            .to_string(),
                    ],
                    tables: vec![Table {
                        caption: "Exposure (s) over 1000 trials".to_string(),
                        header: ["strategy", "unresolved", "p50", "p90", "p99", "max"]
                            .map(String::from)
                            .to_vec(),
                        rows: vec![
                            ["kill-9", "20", "239.1", "311.8", "328.2", "329.9"]
                                .map(String::from)
                                .to_vec(),
                            ["kill-15", "0", "27.3", "62.0", "81.5", "89.4"]
                                .map(String::from)
                                .to_vec(),
                        ],
                    }],
                    figures: vec![figure("CDF of exposure", cdf_svg_string(&cdf).unwrap())],
                },
                Section {
                    heading: "One trial".to_string(),
                    paragraphs: vec!["Trial 17 of the pause strategy.".to_string()],
                    tables: vec![],
                    figures: vec![figure(
                        "Timeline of trial 17",
                        timeline_svg_string(&timeline).unwrap(),
                    )],
                },
                Section {
                    heading: "Sweeps".to_string(),
                    paragraphs: vec![],
                    tables: vec![],
                    figures: vec![
                        figure("p99 exposure", line_svg_string(&line).unwrap()),
                        figure("p99 dead hits", line_svg_string(&dead_hits_line).unwrap()),
                        figure(
                            "p99 exposure, two keys",
                            heatmap_svg_string(&heatmap).unwrap(),
                        ),
                    ],
                },
            ],
        };
        demo_edge_cases(dir, settings, &timeline, &line, &heatmap);
        write_html(&report, &dir.join("report.html")).unwrap();
        let html = render_html(&report);
        assert!(!html.contains("http://") && !html.contains("https://"));
    }

    /// The demo's plots, from a small deterministic generator.
    fn demo_plots(
        settings: &str,
    ) -> (
        crate::report::plot::TimelinePlot,
        crate::report::plot::CdfPlot,
        crate::report::plot::LinePlot,
        crate::report::plot::LinePlot,
        crate::report::plot::Heatmap,
    ) {
        use crate::report::plot::*;

        // A small deterministic generator (LCG): no dependency, the same pictures every time.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut uniform = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };

        let timeline = TimelinePlot {
            title: format!(
                "Timeline of trial 17: app-1 stopped with pause (wait 90 s)\n{settings}"
            ),
            stages: vec![
                ("strategy started".to_string(), Some(-90_000)),
                ("left the registry".to_string(), Some(-89_995)),
                ("left the read-only cache".to_string(), Some(-71_204)),
                ("left the gateway's Eureka cache".to_string(), Some(-48_410)),
                ("left the Ribbon list".to_string(), Some(-21_388)),
            ],
            dead_hits: {
                let mut hits: Vec<i64> = (0..400)
                    .map(|_| (uniform() * uniform() * 25_000.0) as i64)
                    .collect();
                hits.sort_unstable();
                hits.into_iter().map(HitSpan::at).collect()
            },
            x_range: (-100_000, 35_000),
        };
        let kill9: Vec<i64> = (0..980)
            .map(|_| 150_000 + (uniform() * 180_000.0) as i64)
            .collect();
        let kill15: Vec<i64> = (0..1000)
            .map(|_| 10_000 + (uniform() * uniform() * 80_000.0) as i64)
            .collect();
        let cdf = CdfPlot {
            title: format!("Exposure after the instance stopped serving, by strategy\n{settings}"),
            x_label: "exposure: last time a caller could still pick the instance (s)".to_string(),
            series: vec![
                CdfSeries {
                    label: "kill-9".to_string(),
                    values_ms: kill9,
                    unresolved: 20,
                },
                CdfSeries {
                    label: "kill-15".to_string(),
                    values_ms: kill15,
                    unresolved: 0,
                },
            ],
        };
        let (line, dead_hits_line) = demo_lines(settings);
        let xs_h: Vec<String> = ["15", "30", "60", "90", "120"].map(String::from).to_vec();
        let ys_h: Vec<String> = ["5", "15", "30", "60"].map(String::from).to_vec();
        let values = ys_h
            .iter()
            .enumerate()
            .map(|(j, _)| {
                xs_h.iter()
                    .enumerate()
                    .map(|(i, _)| {
                        (i + j != 7).then(|| 40.0 + 35.0 * i as f64 + 22.5 * j as f64 + uniform())
                    })
                    .collect()
            })
            .collect();
        let heatmap = Heatmap {
            title: format!(
                "p99 exposure of kill-9 by eviction and response-cache intervals\n{settings}"
            ),
            x_label: "eviction interval (s)".to_string(),
            y_label: "response cache update interval (s)".to_string(),
            xs: xs_h,
            ys: ys_h,
            values,
            value_label: "p99 exposure (s)".to_string(),
        };

        (timeline, cdf, line, dead_hits_line, heatmap)
    }

    /// The demo's sweep lines: exposure and dead hits by a key.
    fn demo_lines(
        settings: &str,
    ) -> (crate::report::plot::LinePlot, crate::report::plot::LinePlot) {
        use crate::report::plot::*;

        let xs = vec![0.0, 15.0, 30.0, 60.0, 90.0, 120.0];
        let line = LinePlot {
            title: format!("p99 exposure by eviction interval\n{settings}"),
            x_label: "eviction interval (s)".to_string(),
            y_label: "p99 exposure (s)".to_string(),
            xs: xs.clone(),
            series: vec![
                (
                    "kill-9".to_string(),
                    vec![
                        None,
                        Some(190.0),
                        Some(215.5),
                        Some(262.0),
                        Some(301.0),
                        Some(330.2),
                    ],
                ),
                (
                    "kill-15".to_string(),
                    vec![
                        Some(61.0),
                        Some(62.5),
                        Some(60.8),
                        Some(63.1),
                        Some(62.0),
                        Some(61.7),
                    ],
                ),
            ],
        };
        let dead_hits_line = LinePlot {
            title: format!("p99 dead hits by eviction interval\n{settings}"),
            y_label: "p99 dead hits".to_string(),
            series: vec![
                (
                    "kill-9".to_string(),
                    vec![
                        None,
                        Some(1900.0),
                        Some(2150.0),
                        Some(2620.0),
                        Some(3010.0),
                        Some(3302.0),
                    ],
                ),
                (
                    "kill-15".to_string(),
                    vec![
                        Some(610.0),
                        Some(625.0),
                        Some(608.0),
                        Some(631.0),
                        Some(620.0),
                        Some(617.0),
                    ],
                ),
            ],
            ..line.clone()
        };
        (line, dead_hits_line)
    }

    /// Edge cases, to look at: empty and unresolved data, crowded data, a long title.
    fn demo_edge_cases(
        dir: &Path,
        settings: &str,
        timeline: &crate::report::plot::TimelinePlot,
        line: &crate::report::plot::LinePlot,
        heatmap: &crate::report::plot::Heatmap,
    ) {
        use crate::report::plot::*;

        let long_title = format!(
            "A very long title that goes on and on to see how the header wraps: {settings}, \
             plus a few more settings that nobody needs\n{settings}"
        );
        let mut crowded = timeline.clone();
        crowded.title = long_title.clone();
        crowded.stages[0].1 = Some(-150_000);
        crowded.stages[4].1 = None;
        crowded.dead_hits = (0..50_000).map(|i| HitSpan::at(-20_000 + i * 2)).collect();
        render_timeline(
            &crowded,
            ImageFormat::Svg,
            &dir.join("edge_timeline_crowded.svg"),
        )
        .unwrap();
        let late = TimelinePlot {
            x_range: (5_000, 60_000),
            ..timeline.clone()
        };
        render_timeline(&late, ImageFormat::Svg, &dir.join("edge_timeline_late.svg")).unwrap();
        let empty_timeline = TimelinePlot {
            title: "empty timeline".to_string(),
            stages: vec![],
            dead_hits: vec![],
            x_range: (0, 0),
        };
        render_timeline(
            &empty_timeline,
            ImageFormat::Svg,
            &dir.join("edge_timeline_empty.svg"),
        )
        .unwrap();
        let unresolved_cdf = CdfPlot {
            title: long_title.clone(),
            x_label: "exposure (s)".to_string(),
            series: vec![
                CdfSeries {
                    label: "kill-9".to_string(),
                    values_ms: vec![],
                    unresolved: 1000,
                },
                CdfSeries {
                    label: "pause with a long name".to_string(),
                    values_ms: vec![],
                    unresolved: 3,
                },
            ],
        };
        render_cdf(
            &unresolved_cdf,
            ImageFormat::Svg,
            &dir.join("edge_cdf_unresolved.svg"),
        )
        .unwrap();
        let many = LinePlot {
            title: "many xs".to_string(),
            xs: (0..40).map(|i| i as f64 * 2.5).collect(),
            series: (0..12)
                .map(|k| {
                    (
                        format!("variant {k}"),
                        (0..40)
                            .map(|i| (i % 7 != k % 7).then(|| (i * (k + 1)) as f64 / 3.0))
                            .collect(),
                    )
                })
                .collect(),
            ..line.clone()
        };
        render_line(&many, ImageFormat::Svg, &dir.join("edge_line_many.svg")).unwrap();
        let wide = Heatmap {
            title: "wide heatmap".to_string(),
            xs: (0..16).map(|i| format!("{} ms", 1000 + i * 250)).collect(),
            ys: vec!["only".to_string()],
            values: vec![(0..16).map(|i| Some(1234.5 * i as f64)).collect()],
            ..heatmap.clone()
        };
        render_heatmap(&wide, ImageFormat::Svg, &dir.join("edge_heatmap_wide.svg")).unwrap();
        let empty_heatmap = Heatmap {
            title: "empty heatmap".to_string(),
            xs: vec![],
            ys: vec![],
            values: vec![],
            ..heatmap.clone()
        };
        render_heatmap(
            &empty_heatmap,
            ImageFormat::Svg,
            &dir.join("edge_heatmap_empty.svg"),
        )
        .unwrap();
    }
}
