//! The SVG backend: the bytes of plotters' `SVGBackend` (plotters-svg 0.3.7, `svg.rs`), written
//! straight into the document.
//!
//! Why not plotters' own: it builds every attribute as a `String` (`format!` per coordinate, per
//! colour, per opacity) and then copies it character by character through its escaper. A
//! timeline holds a few hundred dead-hit marks, so that was most of a short `run`'s report:
//! callgrind, `run bench/oracle-kill9.toml --trials 1`, `plotters_svg::SVGBackend::draw_rect`
//! alone 1.80 M of 10.12 M instructions. Here numbers and colours go into the document as they
//! are formatted, and only text (the one attribute that can hold `<`, `&`, quotes) is escaped:
//! 10.12 M -> 7.72 M for the whole run, the same bytes.
//!
//! The output must stay plotters' to the byte (the golden files and the reports do not change
//! with the backend): `same_bytes_as_plotters_svg_backend` draws every primitive through both.
//! Text is measured as plotters' SVG backend measures it (the trait's default
//! `estimate_text_size`, not overridden here), so the layout plotters computes is the same.

use std::fmt::Write as _;
use std::io::Error;

use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
    FontStyle, FontTransform,
};

/// ` name="`, the start of an attribute, as one string: one copy into the document, not three.
macro_rules! key {
    ($name:literal) => {
        concat!(" ", $name, "=\"")
    };
}

/// Draws into `buf`, which holds the whole document once [`DrawingBackend::present`] returned.
pub(super) struct SvgBackend<'a> {
    buf: &'a mut String,
    size: (u32, u32),
    /// Whether `</svg>` was written (the one tag left open between calls).
    closed: bool,
}

impl<'a> SvgBackend<'a> {
    /// Starts the document in `buf`: plotters' `<svg>` tag for an image of `size` pixels.
    pub(super) fn new(buf: &'a mut String, size: (u32, u32)) -> SvgBackend<'a> {
        let mut svg = SvgBackend {
            buf,
            size,
            closed: false,
        };
        let (w, h) = size;
        svg.open("svg");
        svg.attr_num(key!("width"), w);
        svg.attr_num(key!("height"), h);
        svg.buf.push_str(" viewBox=\"0 0 ");
        push_num(svg.buf, w);
        svg.buf.push(' ');
        push_num(svg.buf, h);
        svg.buf.push('"');
        svg.attr(key!("xmlns"), "http://www.w3.org/2000/svg");
        svg.buf.push_str(">\n");
        svg
    }

    fn open(&mut self, tag: &str) {
        self.buf.push('<');
        self.buf.push_str(tag);
    }

    /// An attribute whose value needs no escaping (a keyword or a number plotters formatted).
    fn attr(&mut self, key: &str, value: &str) {
        self.attr_start(key);
        self.buf.push_str(value);
        self.buf.push('"');
    }

    /// `key`, from [`key!`]: ` name="`.
    fn attr_start(&mut self, key: &str) {
        self.buf.push_str(key);
    }

    fn attr_num(&mut self, key: &str, value: impl Into<i64>) {
        self.attr_start(key);
        push_num(self.buf, value);
        self.buf.push('"');
    }

    fn attr_color(&mut self, key: &str, color: BackendColor) {
        self.attr_start(key);
        push_color(self.buf, color);
        self.buf.push('"');
    }

    /// `opacity`: the colour's alpha as `format!("{}")` writes it.
    fn attr_opacity(&mut self, color: BackendColor) {
        self.attr_start(key!("opacity"));
        if color.alpha == 1.0 {
            self.buf.push('1');
        } else {
            let _ = write!(self.buf, "{}", color.alpha);
        }
        self.buf.push('"');
    }

    /// `points`: every coordinate as `x,y ` (a trailing space included, as plotters writes it).
    fn attr_points(&mut self, path: impl IntoIterator<Item = BackendCoord>) {
        self.attr_start(key!("points"));
        for (x, y) in path {
            push_num(self.buf, x);
            self.buf.push(',');
            push_num(self.buf, y);
            self.buf.push(' ');
        }
        self.buf.push('"');
    }

    /// Opens element `tag`, unless `color` is fully transparent: then nothing is drawn (as
    /// plotters' SVG backend draws nothing) and the answer is `false`.
    fn open_visible(&mut self, tag: &str, color: BackendColor) -> bool {
        if color.alpha == 0.0 {
            return false;
        }
        self.open(tag);
        true
    }

    /// A filled shape: `color` inside and no outline; otherwise a `color` outline, nothing inside.
    fn attr_fill_or_stroke(&mut self, fill: bool, color: BackendColor) {
        if fill {
            self.attr_color(key!("fill"), color);
            self.attr(key!("stroke"), "none");
        } else {
            self.attr(key!("fill"), "none");
            self.attr_color(key!("stroke"), color);
        }
    }

    fn close_empty(&mut self) {
        self.buf.push_str("/>\n");
    }
}

/// Appends `value` in decimal, as `format!("{}")` does, without the formatting machinery.
fn push_num(buf: &mut String, value: impl Into<i64>) {
    let value: i64 = value.into();
    if value < 0 {
        buf.push('-');
    }
    let mut n = value.unsigned_abs();
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // Pushed as chars: checking a slice of ASCII bytes as UTF-8 costs more than the digits.
    buf.extend(digits[start..].iter().map(|&d| char::from(d)));
}

/// Appends `#RRGGBB`, upper-case hex, as plotters' `make_svg_color`.
fn push_color(buf: &mut String, color: BackendColor) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let (r, g, b) = color.rgb;
    buf.push('#');
    for byte in [r, g, b] {
        buf.push(char::from(HEX[usize::from(byte >> 4)]));
        buf.push(char::from(HEX[usize::from(byte & 15)]));
    }
}

/// Appends `text` with the five XML specials escaped, as plotters' `escape_and_push`.
fn push_escaped(buf: &mut String, text: &str) {
    let mut rest = text;
    while let Some(i) = rest.find(['<', '>', '&', '"', '\'']) {
        buf.push_str(&rest[..i]);
        buf.push_str(match rest.as_bytes()[i] {
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'&' => "&amp;",
            b'"' => "&quot;",
            _ => "&apos;",
        });
        rest = &rest[i + 1..];
    }
    buf.push_str(rest);
}

impl DrawingBackend for SvgBackend<'_> {
    type ErrorType = Error;

    fn get_size(&self) -> (u32, u32) {
        self.size
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Error>> {
        Ok(())
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<Error>> {
        if !self.closed {
            self.buf.push_str("</svg>\n");
            self.closed = true;
        }
        Ok(())
    }

    fn draw_pixel(
        &mut self,
        (x, y): BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Error>> {
        if !self.open_visible("rect", color) {
            return Ok(());
        }
        self.attr_num(key!("x"), x);
        self.attr_num(key!("y"), y);
        self.attr(key!("width"), "1");
        self.attr(key!("height"), "1");
        self.attr(key!("stroke"), "none");
        self.attr_opacity(color);
        self.attr_color(key!("fill"), color);
        self.close_empty();
        Ok(())
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Error>> {
        let color = style.color();
        if !self.open_visible("line", color) {
            return Ok(());
        }
        self.attr_opacity(color);
        self.attr_color(key!("stroke"), color);
        self.attr_num(key!("stroke-width"), style.stroke_width());
        self.attr_num(key!("x1"), from.0);
        self.attr_num(key!("y1"), from.1);
        self.attr_num(key!("x2"), to.0);
        self.attr_num(key!("y2"), to.1);
        self.close_empty();
        Ok(())
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Error>> {
        let color = style.color();
        if !self.open_visible("rect", color) {
            return Ok(());
        }
        self.attr_num(key!("x"), upper_left.0);
        self.attr_num(key!("y"), upper_left.1);
        self.attr_num(key!("width"), bottom_right.0 - upper_left.0);
        self.attr_num(key!("height"), bottom_right.1 - upper_left.1);
        self.attr_opacity(color);
        self.attr_fill_or_stroke(fill, color);
        self.close_empty();
        Ok(())
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Error>> {
        let color = style.color();
        if !self.open_visible("polyline", color) {
            return Ok(());
        }
        self.attr(key!("fill"), "none");
        self.attr_opacity(color);
        self.attr_color(key!("stroke"), color);
        self.attr_num(key!("stroke-width"), style.stroke_width());
        self.attr_points(path);
        self.close_empty();
        Ok(())
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Error>> {
        let color = style.color();
        if !self.open_visible("polygon", color) {
            return Ok(());
        }
        self.attr_opacity(color);
        self.attr_color(key!("fill"), color);
        self.attr_points(path);
        self.close_empty();
        Ok(())
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Error>> {
        let color = style.color();
        if !self.open_visible("circle", color) {
            return Ok(());
        }
        self.attr_num(key!("cx"), center.0);
        self.attr_num(key!("cy"), center.1);
        self.attr_num(key!("r"), radius);
        self.attr_opacity(color);
        self.attr_fill_or_stroke(fill, color);
        self.attr_num(key!("stroke-width"), style.stroke_width());
        self.close_empty();
        Ok(())
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        (x, y): BackendCoord,
    ) -> Result<(), DrawingErrorKind<Error>> {
        let color = style.color();
        if !self.open_visible("text", color) {
            return Ok(());
        }
        let anchor = style.anchor();
        self.attr_num(key!("x"), x);
        self.attr_num(key!("y"), y);
        self.attr(
            key!("dy"),
            match anchor.v_pos {
                VPos::Top => "0.76em",
                VPos::Center => "0.5ex",
                VPos::Bottom => "-0.5ex",
            },
        );
        self.attr(
            key!("text-anchor"),
            match anchor.h_pos {
                HPos::Left => "start",
                HPos::Right => "end",
                HPos::Center => "middle",
            },
        );
        self.attr_start(key!("font-family"));
        push_escaped(self.buf, style.family().as_str());
        self.buf.push('"');
        self.attr_start(key!("font-size"));
        let _ = write!(self.buf, "{}", style.size() / 1.24);
        self.buf.push('"');
        self.attr_opacity(color);
        self.attr_color(key!("fill"), color);
        match style.style() {
            FontStyle::Normal => {}
            FontStyle::Bold => self.attr(key!("font-weight"), "bold"),
            other => self.attr(key!("font-style"), other.as_str()),
        }
        let degrees = match style.transform() {
            FontTransform::Rotate90 => Some(90),
            FontTransform::Rotate180 => Some(180),
            FontTransform::Rotate270 => Some(270),
            FontTransform::None => None,
        };
        if let Some(degrees) = degrees {
            self.attr_start(key!("transform"));
            let _ = write!(self.buf, "rotate({degrees}, {x}, {y})");
            self.buf.push('"');
        }
        self.buf.push_str(">\n");
        push_escaped(self.buf, text);
        self.buf.push_str("\n</text>\n");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use plotters::prelude::*;
    use plotters::style::text_anchor::Pos;

    use super::*;

    /// Every primitive plotters' SVG backend writes, through both backends: the same document.
    /// Colours with and without transparency, every anchor and font style, each rotation,
    /// negative coordinates, text with XML specials and non-ASCII, an invisible colour.
    fn draw_everything<DB: DrawingBackend>(b: &mut DB) {
        let colors = [
            RGBColor(0, 0, 0).to_backend_color(),
            RGBColor(255, 127, 14).to_backend_color(),
            RGBColor(31, 119, 180).mix(0.35).to_backend_color(),
            RGBColor(1, 2, 3).mix(0.0).to_backend_color(),
        ];
        for (i, &color) in colors.iter().enumerate() {
            let i = i as i32;
            let style = ShapeStyle {
                color: RGBAColor(color.rgb.0, color.rgb.1, color.rgb.2, color.alpha),
                filled: i % 2 == 0,
                stroke_width: i as u32 + 1,
            };
            b.draw_pixel((i, -i), color).unwrap();
            b.draw_line((-5, i), (1000, -20 * i), &style).unwrap();
            for fill in [true, false] {
                b.draw_rect((-3, 4 + i), (100 * i, 7), &style, fill)
                    .unwrap();
                b.draw_circle((i, 7), 12, &style, fill).unwrap();
            }
            b.draw_path([(0, 0), (-1, 2_000_000), (i, i)], &style)
                .unwrap();
            b.draw_path(Vec::new(), &style).unwrap();
            b.fill_polygon([(3, 4), (i, -7), (-i, 8)], &style).unwrap();
        }
        let texts = ["plain", "a <b> & \"c\" 'd' \u{2192} é", ""];
        let anchors = [
            Pos::new(HPos::Left, VPos::Top),
            Pos::new(HPos::Center, VPos::Center),
            Pos::new(HPos::Right, VPos::Bottom),
        ];
        let transforms = [
            FontTransform::None,
            FontTransform::Rotate90,
            FontTransform::Rotate180,
            FontTransform::Rotate270,
        ];
        let styles = [
            FontStyle::Normal,
            FontStyle::Bold,
            FontStyle::Italic,
            FontStyle::Oblique,
        ];
        for (i, text) in texts.iter().enumerate() {
            for (j, pos) in anchors.iter().enumerate() {
                for (k, transform) in transforms.iter().enumerate() {
                    let style = TextStyle {
                        font: ("sans-serif", 15.0 + i as f64 * 3.3)
                            .into_font()
                            .style(styles[(i + j + k) % styles.len()])
                            .transform(transform.clone()),
                        color: colors[(i + k) % colors.len()],
                        pos: *pos,
                    };
                    b.draw_text(text, &style, (i as i32 * 10 - 3, j as i32 * 7))
                        .unwrap();
                }
            }
        }
        b.present().unwrap();
    }

    #[test]
    fn same_bytes_as_plotters_svg_backend() {
        let mut theirs = String::new();
        draw_everything(&mut SVGBackend::with_string(&mut theirs, (1000, 483)));
        let mut ours = String::new();
        draw_everything(&mut SvgBackend::new(&mut ours, (1000, 483)));
        assert!(theirs.len() > 1000);
        assert_eq!(ours, theirs);
    }

    #[test]
    fn numbers_are_written_as_format_writes_them() {
        for n in [
            0,
            7,
            -7,
            10,
            -10,
            99,
            12345,
            i64::MAX,
            i64::MIN,
            i32::MIN.into(),
        ] {
            let mut s = String::new();
            push_num(&mut s, n);
            assert_eq!(s, n.to_string());
        }
    }
}
