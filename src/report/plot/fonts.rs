//! The one typeface of every plot, compiled in: DejaVu Sans and DejaVu Sans Bold 2.37, unmodified
//! (`assets/fonts/`, with their license: Bitstream Vera and Arev, which allow bundling them).
//!
//! Why not the system's fonts: plotters' `ttf` feature finds a font through fontconfig and
//! measures each glyph with FreeType, which cost 30 % of a 200-trial `run`'s instructions
//! (157 M of 517 M under callgrind, `run bench/oracle-kill9.toml`: the race against the
//! SimPy oracle), needs fontconfig at build and run time, and made the plots' layout depend on
//! the fonts the machine has. With the faces here, text widths (the SVG layout) and PNG pixels
//! are the same on every machine.
//!
//! Sizes follow plotters' own convention, so that the layout is the one the `ttf` feature gave
//! with the same font: a text style of size `s` has an em of `s / 1.24` pixels (plotters' SVG
//! backend writes `font-size = s / 1.24`, and its `ttf` backend measured and drew with that em),
//! a text's box is `s / 1.24` high, and a glyph's baseline lies `0.76 em` below the box's top
//! (`plotters-0.3.7/src/style/font/ttf.rs`, `estimate_layout` and `draw`).

use std::sync::LazyLock;

use ab_glyph::{Font, FontRef, GlyphId, PxScale, point};

static REGULAR: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");
static BOLD: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans-Bold.ttf");

/// plotters' ratio of a text style's size to its em.
const SIZE_PER_EM: f64 = 1.24;

/// The two faces, parsed on first use (a table directory read: no glyph is loaded until asked).
static FACES: LazyLock<[Face; 2]> = LazyLock::new(|| [Face::new(REGULAR), Face::new(BOLD)]);

/// One face and the figures its metrics are scaled by.
pub(super) struct Face {
    font: FontRef<'static>,
    units_per_em: f32,
    /// Ascent minus descent in font units: ab_glyph's `PxScale` is in these (a scale of `h`
    /// pixels makes them `h` pixels high), not in ems.
    height_units: f32,
    /// U+FFFD, drawn for a character the face lacks (as plotters' `ttf` backend did).
    placeholder: Option<GlyphId>,
}

/// A text being measured a piece at a time (a line growing word by word): its width in font
/// units so far and its last glyph, against which the next one is kerned. Advances and kerning
/// are whole font units, so the `f32` sum is exact in any grouping: extending a run gives the
/// width of the whole text to the bit.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Run {
    units: f32,
    last: Option<GlyphId>,
}

/// The regular face, or the bold one.
pub(super) fn face(bold: bool) -> &'static Face {
    &FACES[usize::from(bold)]
}

impl Face {
    fn new(bytes: &'static [u8]) -> Face {
        // The bytes are compiled in: a face that does not parse is a broken build, which
        // `the_bundled_faces_parse` catches before any user could.
        let font = FontRef::try_from_slice(bytes).expect("the bundled DejaVu Sans parses");
        let units_per_em = font.units_per_em().unwrap_or(2048.0);
        let height_units = font.height_unscaled();
        let placeholder = Some(font.glyph_id('\u{FFFD}')).filter(|g| g.0 != 0);
        Face {
            font,
            units_per_em,
            height_units,
            placeholder,
        }
    }

    /// The glyphs of `text`: the face's own, else the placeholder, else none.
    fn glyphs<'a>(&'a self, text: &'a str) -> impl Iterator<Item = GlyphId> + 'a {
        text.chars().filter_map(|c| {
            let id = self.font.glyph_id(c);
            if id.0 == 0 {
                self.placeholder
            } else {
                Some(id)
            }
        })
    }

    /// The width of `text` in pixels at text size `size`: the advances and the `kern` table's
    /// pairs, summed in font units and scaled once, truncated, as plotters' `ttf` backend
    /// measured it (so the SVG layout is the one it gave with DejaVu Sans).
    pub(super) fn width(&self, text: &str, size: f64) -> i32 {
        self.run_width(self.extend(Run::default(), text), size)
    }

    /// `run` followed by `text` (kerned against the run's last glyph).
    pub(super) fn extend(&self, run: Run, text: &str) -> Run {
        let Run {
            mut units,
            mut last,
        } = run;
        for glyph in self.glyphs(text) {
            units += self.font.h_advance_unscaled(glyph);
            if let Some(p) = last {
                units += self.font.kern_unscaled(p, glyph);
            }
            last = Some(glyph);
        }
        Run { units, last }
    }

    /// The width of `run` in pixels at text size `size` ([`Face::width`] of its text).
    pub(super) fn run_width(&self, run: Run, size: f64) -> i32 {
        let pixel_per_em = size / SIZE_PER_EM;
        (run.units * pixel_per_em as f32 / self.units_per_em) as i32
    }

    /// The box plotters lays `text` out in at size `size`: `((0, 0), (width, em))`.
    pub(super) fn layout_box(&self, text: &str, size: f64) -> ((i32, i32), (i32, i32)) {
        (
            (0, 0),
            (self.width(text, size), (size / SIZE_PER_EM) as i32),
        )
    }

    /// Rasterises `text` at size `size` with its box's top-left corner at (0, 0): calls
    /// `put(x, y, coverage)` for every pixel a glyph covers (anti-aliased, coverage in 0..=1).
    /// Each glyph sits at the pen's whole pixel, on the baseline `0.76 em` down, as plotters'
    /// `ttf` backend placed FreeType's glyphs; ab_glyph rasterises the outline (its bearings
    /// kept).
    pub(super) fn draw<E>(
        &self,
        text: &str,
        size: f64,
        mut put: impl FnMut(i32, i32, f32) -> Result<(), E>,
    ) -> Result<(), E> {
        let em = (size / SIZE_PER_EM) as f32;
        let per_unit = em / self.units_per_em;
        let scale = PxScale::from(em * self.height_units / self.units_per_em);
        let baseline = em - (0.24 * em).trunc();
        let mut x = 0f32;
        let mut prev = None;
        for glyph in self.glyphs(text) {
            if let Some(p) = prev {
                x += self.font.kern_unscaled(p, glyph) * per_unit;
            }
            let placed = glyph.with_scale_and_position(scale, point(x.trunc(), baseline));
            if let Some(outline) = self.font.outline_glyph(placed) {
                let bounds = outline.px_bounds();
                let (left, top) = (bounds.min.x as i32, bounds.min.y as i32);
                let mut result = Ok(());
                outline.draw(|dx, dy, coverage| {
                    if result.is_ok() && coverage > 0.0 {
                        result = put(left + dx as i32, top + dy as i32, coverage.min(1.0));
                    }
                });
                result?;
            }
            x += self.font.h_advance_unscaled(glyph) * per_unit;
            prev = Some(glyph);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_faces_parse() {
        for bold in [false, true] {
            let f = face(bold);
            assert_eq!(f.units_per_em, 2048.0);
            assert!(f.placeholder.is_some());
        }
    }

    /// Widths from the fonts' own tables, derived by hand: DejaVu Sans advances 'i' by 569
    /// units and 'm' by 1995 (hmtx, 2048 per em), with no kerning between them; at size 24.8
    /// (an em of 20 px) "mi" is (1995 + 569) * 20 / 2048 = 25.04 px, truncated to 25. Bold is
    /// wider.
    #[test]
    fn widths_are_the_tables_advances_scaled_to_the_em() {
        let regular = face(false);
        assert_eq!(regular.width("", 24.8), 0);
        assert_eq!(
            regular.font.h_advance_unscaled(regular.font.glyph_id('m')),
            1995.0
        );
        assert_eq!(
            regular.font.h_advance_unscaled(regular.font.glyph_id('i')),
            569.0
        );
        assert_eq!(regular.width("mi", 24.8), 25);
        assert!(face(true).width("mi", 24.8) > 25);
        // A character the face lacks is measured as U+FFFD, not skipped.
        assert_eq!(
            regular.width("\u{10FFFF}", 24.8),
            regular.width("\u{FFFD}", 24.8)
        );
        assert!(regular.width("\u{FFFD}", 24.8) > 0);
    }

    /// A drawn text stays inside its box's width (a glyph may overhang by a pixel of
    /// anti-aliasing) and its ink lies around the baseline, 0.76 em below the top.
    #[test]
    fn drawn_text_sits_in_its_box_on_the_baseline() {
        let f = face(false);
        let size = 24.8; // em 20 px, baseline at 20 - 4 = 16 px
        let mut pixels = Vec::new();
        f.draw::<()>("Hxg", size, |x, y, c| {
            pixels.push((x, y, c));
            Ok(())
        })
        .unwrap();
        let ((_, _), (w, h)) = f.layout_box("Hxg", size);
        assert_eq!(h, 20);
        let (min_x, max_x) = pixels
            .iter()
            .fold((i32::MAX, i32::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
        assert!(
            min_x >= 0 && max_x <= w + 1,
            "{min_x}..{max_x} in width {w}"
        );
        // 'H' stands on the baseline: its cap height (1493 units, 14.6 px) above y = 16.
        let top = pixels.iter().map(|p| p.1).min().unwrap();
        assert!((1..=2).contains(&top), "top of 'H' at {top}");
        // 'g' descends below it (descender about 0.24 em).
        let bottom = pixels.iter().map(|p| p.1).max().unwrap();
        assert!((18..=21).contains(&bottom), "bottom of 'g' at {bottom}");
        assert!(pixels.iter().all(|p| p.2 > 0.0 && p.2 <= 1.0));
    }
}
