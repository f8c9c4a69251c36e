//! PNG: plotters' bitmap backend, its text drawn with the bundled faces (`fonts.rs`) instead of
//! a font plotters would look up. Everything but text is the bitmap backend's own drawing.

use std::path::Path;

use plotters::prelude::*;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind, FontStyle,
};

use super::fonts::face;

/// [`BitMapBackend`] writing `path`, with [`DrawingBackend::draw_text`] and
/// [`DrawingBackend::estimate_text_size`] from the bundled faces.
pub(super) struct PngBackend<'a>(BitMapBackend<'a>);

type Error = <BitMapBackend<'static> as DrawingBackend>::ErrorType;

impl<'a> PngBackend<'a> {
    pub(super) fn new(path: &'a Path, size: (u32, u32)) -> PngBackend<'a> {
        PngBackend(BitMapBackend::new(path, size))
    }
}

impl DrawingBackend for PngBackend<'_> {
    type ErrorType = Error;

    fn get_size(&self) -> (u32, u32) {
        self.0.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Error>> {
        self.0.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<Error>> {
        self.0.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.0.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.0.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.0.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.0.draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.0.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.0.fill_polygon(vert, style)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        (iw, ih): (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.0.blit_bitmap(pos, (iw, ih), src)
    }

    /// The anchoring of plotters' default `draw_text` (the box's width and height against the
    /// anchor, then the style's rotation), with the glyphs of the bundled face of the style's
    /// weight.
    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Error>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let face = face(matches!(style.style(), FontStyle::Bold));
        let ((min_x, min_y), (max_x, max_y)) = face.layout_box(text, style.size());
        let (width, height) = (max_x - min_x, max_y - min_y);
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -width,
            HPos::Center => -width / 2,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -height / 2,
            VPos::Bottom => -height,
        };
        let transform = style.transform();
        let (w, h) = self.get_size();
        face.draw(text, style.size(), |x, y, coverage| {
            let (x, y) = transform.transform(x + dx - min_x, y + dy - min_y);
            let (x, y) = (pos.0 + x, pos.1 + y);
            if x >= 0 && x < w as i32 && y >= 0 && y < h as i32 {
                let ink = BackendColor {
                    alpha: color.alpha * f64::from(coverage),
                    rgb: color.rgb,
                };
                self.0.draw_pixel((x, y), ink)
            } else {
                Ok(())
            }
        })
    }

    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> Result<(u32, u32), DrawingErrorKind<Error>> {
        let ((min_x, min_y), (max_x, max_y)) =
            face(matches!(style.style(), FontStyle::Bold)).layout_box(text, style.size());
        Ok(((max_x - min_x) as u32, (max_y - min_y) as u32))
    }
}
