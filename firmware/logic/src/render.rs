//! A panel's `time` text as seven-segment digits (SPEC.md section 8.1).
//!
//! Promises, for any text and any panel width (1 to [`MAX_DIGITS`]):
//! * `0`-`9`, space and `-` each take one digit position; so does any other
//!   character but `:` and `.`, shown blank (the SPEC's "unknown characters
//!   show as blank");
//! * `:` and `.` take no position: they light the separator after the
//!   position on their left (and before the one on their right);
//! * the positions are aligned to the **right** of the panel; when the text
//!   has more positions than the panel, the leftmost are not shown, nor a
//!   separator whose left neighbour is not shown;
//! * never panics, allocates nothing.
//!
//! How a chip lights a separator is the driver's business
//! ([`crate::drivers`]): a MAX7219 module has a decimal point after every
//! digit, a TM1637 clock module only a colon after its second digit.

/// The widest panel supported (a MAX7219 module has 8 digits).
pub const MAX_DIGITS: usize = 8;

/// Segment bits of one digit: bit 0 = a (top), 1 = b (top right),
/// 2 = c (bottom right), 3 = d (bottom), 4 = e (bottom left), 5 = f (top
/// left), 6 = g (middle). This is the TM1637's own order.
pub type Segments = u8;

pub const SEG_A: Segments = 0x01;
pub const SEG_B: Segments = 0x02;
pub const SEG_C: Segments = 0x04;
pub const SEG_D: Segments = 0x08;
pub const SEG_E: Segments = 0x10;
pub const SEG_F: Segments = 0x20;
pub const SEG_G: Segments = 0x40;

/// Digits 0 to 9.
pub const DIGIT_SEGMENTS: [Segments; 10] = [
    SEG_A | SEG_B | SEG_C | SEG_D | SEG_E | SEG_F,
    SEG_B | SEG_C,
    SEG_A | SEG_B | SEG_D | SEG_E | SEG_G,
    SEG_A | SEG_B | SEG_C | SEG_D | SEG_G,
    SEG_B | SEG_C | SEG_F | SEG_G,
    SEG_A | SEG_C | SEG_D | SEG_F | SEG_G,
    SEG_A | SEG_C | SEG_D | SEG_E | SEG_F | SEG_G,
    SEG_A | SEG_B | SEG_C,
    SEG_A | SEG_B | SEG_C | SEG_D | SEG_E | SEG_F | SEG_G,
    SEG_A | SEG_B | SEG_C | SEG_D | SEG_F | SEG_G,
];

/// The minus sign.
pub const MINUS: Segments = SEG_G;

/// The separator after a digit position: a bit set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Separator(pub u8);

impl Separator {
    pub const NONE: Separator = Separator(0);
    /// A `:` in the text.
    pub const COLON: Separator = Separator(0x01);
    /// A `.` in the text.
    pub const DOT: Separator = Separator(0x02);

    pub fn is_lit(self) -> bool {
        self.0 != 0
    }
    pub fn contains(self, other: Separator) -> bool {
        self.0 & other.0 == other.0 && other.0 != 0
    }
}

/// What one panel shows: `width` digit positions, left to right.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PanelImage {
    pub width: u8,
    /// Segments of positions `0..width` (0 = leftmost).
    pub digits: [Segments; MAX_DIGITS],
    /// `after[i]`: the separator between position `i` and `i + 1` (for the
    /// last position: after it, which only a chip with a decimal point per
    /// digit can show).
    pub after: [Separator; MAX_DIGITS],
}

impl PanelImage {
    /// All positions blank.
    pub fn blank(width: usize) -> PanelImage {
        PanelImage {
            width: width.clamp(1, MAX_DIGITS) as u8,
            ..PanelImage::default()
        }
    }

    /// The positions in use (`0..width`).
    pub fn width(&self) -> usize {
        usize::from(self.width).min(MAX_DIGITS)
    }
}

/// The segments of one character that takes a digit position.
pub fn glyph(c: char) -> Segments {
    match c {
        '0'..='9' => {
            let d = (c as u32 - '0' as u32) as usize;
            DIGIT_SEGMENTS.get(d).copied().unwrap_or(0)
        }
        '-' => MINUS,
        _ => 0, // space, and any character the SPEC does not define
    }
}

fn is_separator(c: char) -> bool {
    c == ':' || c == '.'
}

/// Renders `text` right-aligned on a panel of `width` positions.
pub fn render(text: &str, width: usize) -> PanelImage {
    let mut image = PanelImage::blank(width);
    let width = image.width();
    let positions = text.chars().filter(|c| !is_separator(*c)).count();
    // Panel index of text position p is p + shift (may be negative: cut).
    let shift = width as isize - positions as isize;
    let mut p: isize = -1; // text position of the last character that took one
    for c in text.chars() {
        if is_separator(c) {
            let bit = if c == ':' {
                Separator::COLON
            } else {
                Separator::DOT
            };
            // The separator after position p (p = -1: before the first one,
            // i.e. after the blank position left of it, if the panel has one).
            let at = p + shift;
            if at >= 0 {
                if let Some(s) = image.after.get_mut(at as usize) {
                    s.0 |= bit.0;
                }
            }
        } else {
            p += 1;
            let at = p + shift;
            if at >= 0 {
                if let Some(d) = image.digits.get_mut(at as usize) {
                    *d = glyph(c);
                }
            }
        }
    }
    image
}

/// Text of at most [`MAX_DIGITS`] positions and a colon and a dot after each.
pub type ReadBack = chessclock_protocol::Text<{ 3 * MAX_DIGITS }>;

/// Reads a rendered panel back as text (the inverse of [`render`] for the
/// characters the SPEC defines): what a person would read off the panel.
/// Leading blank positions are dropped; a segment pattern that is no
/// character reads as `?`. For tests and the host runner's snapshots.
pub fn read_back(image: &PanelImage) -> ReadBack {
    let mut out = [0u8; 3 * MAX_DIGITS];
    let mut len = 0;
    let mut push = |b: u8| {
        if let Some(slot) = out.get_mut(len) {
            *slot = b;
            len += 1;
        }
    };
    let width = image.width();
    let first = (0..width)
        .find(|&i| image.digits[i] != 0 || image.after[i].is_lit())
        .unwrap_or(width);
    for i in first..width {
        let s = image.digits[i];
        let c = match s {
            0 => b' ',
            MINUS => b'-',
            _ => DIGIT_SEGMENTS
                .iter()
                .position(|&d| d == s)
                .map_or(b'?', |d| b'0' + d as u8),
        };
        push(c);
        let sep = image.after[i];
        if sep.contains(Separator::COLON) {
            push(b':');
        }
        if sep.contains(Separator::DOT) {
            push(b'.');
        }
    }
    ReadBack::from_utf8(out.get(..len).unwrap_or(&[])).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digits(image: &PanelImage) -> [Segments; MAX_DIGITS] {
        image.digits
    }

    #[test]
    fn short_text_is_right_aligned_and_the_colon_lights_between_its_neighbours() {
        let image = render("4:59", 4);
        assert_eq!(
            &digits(&image)[..4],
            &[0, DIGIT_SEGMENTS[4], DIGIT_SEGMENTS[5], DIGIT_SEGMENTS[9]]
        );
        assert_eq!(image.after[1], Separator::COLON);
        assert!(image
            .after
            .iter()
            .enumerate()
            .all(|(i, s)| i == 1 || !s.is_lit()));
    }

    #[test]
    fn tenths_dot_and_colon_on_an_eight_digit_panel() {
        let image = render("0:19.7", 8);
        assert_eq!(
            &digits(&image)[..8],
            &[
                0,
                0,
                0,
                0,
                DIGIT_SEGMENTS[0],
                DIGIT_SEGMENTS[1],
                DIGIT_SEGMENTS[9],
                DIGIT_SEGMENTS[7]
            ]
        );
        assert_eq!(image.after[4], Separator::COLON);
        assert_eq!(image.after[6], Separator::DOT);
    }

    #[test]
    fn too_long_text_loses_its_leftmost_positions_and_their_separators() {
        let image = render("1:29:59", 4);
        assert_eq!(
            &digits(&image)[..4],
            &[
                DIGIT_SEGMENTS[2],
                DIGIT_SEGMENTS[9],
                DIGIT_SEGMENTS[5],
                DIGIT_SEGMENTS[9]
            ]
        );
        // The colon after the cut "1" is not shown; the one after "29" is.
        assert_eq!(image.after[1], Separator::COLON);
        assert_eq!(image.after.iter().filter(|s| s.is_lit()).count(), 1);
    }

    #[test]
    fn unknown_characters_take_a_position_and_show_blank() {
        let image = render("AB-1", 4);
        assert_eq!(&digits(&image)[..4], &[0, 0, MINUS, DIGIT_SEGMENTS[1]]);
        let image = render("1é2", 3);
        assert_eq!(
            &digits(&image)[..3],
            &[DIGIT_SEGMENTS[1], 0, DIGIT_SEGMENTS[2]]
        );
    }

    #[test]
    fn empty_text_is_blank_and_a_leading_separator_needs_a_blank_neighbour() {
        assert_eq!(render("", 4), PanelImage::blank(4));
        let image = render(":5", 4);
        assert_eq!(image.after[2], Separator::COLON);
        let image = render(":5", 1);
        assert!(!image.after[0].is_lit());
    }

    #[test]
    fn read_back_inverts_render() {
        for text in ["4:59", "0:19.7", "12:00", "-", "1:00:00"] {
            assert_eq!(read_back(&render(text, 8)).as_str(), text);
        }
        assert_eq!(read_back(&render("1:29:59", 4)).as_str(), "29:59");
    }
}
