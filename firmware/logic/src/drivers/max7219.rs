//! MAX7219 eight-digit seven-segment modules, one per panel, daisy-chained
//! on three lines (DIN, CLK, CS): the module wired to the Pico is the
//! **left** panel, the one on its DOUT the right panel.
//!
//! Each register write shifts one 16-bit word per module, most significant
//! bit first, sampled on CLK rising, and latches on CS rising; the word for
//! the far module goes first. Every update rewrites the configuration
//! (no decode, scan all 8 digits, intensity, normal operation, test off)
//! before the digits, so a module that lost its state is repaired by the next
//! update. On the usual modules digit register 1 (DIG0) is the rightmost
//! digit. The decimal point after every digit shows any separator.

use crate::pins::{Delay, Line};
use crate::render::{
    PanelImage, Segments, MAX_DIGITS, SEG_A, SEG_B, SEG_C, SEG_D, SEG_E, SEG_F, SEG_G,
};

/// Digit positions of one module.
pub const DIGITS: usize = 8;
/// Intensity levels (duty 1/32 to 31/32).
pub const LEVELS: u8 = 16;
/// Modules on one chain (one per panel).
pub const MAX_PANELS: usize = 2;
/// Half a clock period, µs (the chip takes 10 MHz; a module's long wires
/// do not).
pub const HALF_BIT_US: u32 = 1;

const REG_DIGIT0: u8 = 0x01;
const REG_DECODE_MODE: u8 = 0x09;
const REG_INTENSITY: u8 = 0x0A;
const REG_SCAN_LIMIT: u8 = 0x0B;
const REG_SHUTDOWN: u8 = 0x0C;
const REG_DISPLAY_TEST: u8 = 0x0F;
const DP: u8 = 0x80;

/// The MAX7219's no-decode segment byte (DP A B C D E F G, bit 7 to 0) for
/// the crate's segment bits.
pub fn segment_byte(s: Segments, point: bool) -> u8 {
    let map = [
        (SEG_A, 0x40),
        (SEG_B, 0x20),
        (SEG_C, 0x10),
        (SEG_D, 0x08),
        (SEG_E, 0x04),
        (SEG_F, 0x02),
        (SEG_G, 0x01),
    ];
    let mut out = if point { DP } else { 0 };
    for (bit, reg) in map {
        if s & bit != 0 {
            out |= reg;
        }
    }
    out
}

/// A chain of one or two modules.
pub struct Max7219<I, C, S> {
    din: I,
    clk: C,
    cs: S,
    panels: usize,
}

impl<I: Line, C: Line, S: Line> Max7219<I, C, S> {
    /// `panels`: modules on the chain (1 or 2).
    pub fn new(mut din: I, mut clk: C, mut cs: S, panels: usize) -> Self {
        din.set_low();
        clk.set_low();
        cs.set_high();
        Max7219 {
            din,
            clk,
            cs,
            panels: panels.clamp(1, MAX_PANELS),
        }
    }

    /// The eight digit register values (register 1 first) for `image`.
    pub fn digit_registers(image: &PanelImage) -> [u8; DIGITS] {
        let width = image.width().min(MAX_DIGITS);
        let mut out = [0u8; DIGITS];
        // Panel position i (0 = leftmost) of a `width`-wide image is module
        // digit `DIGITS - width + i` from the left, i.e. register index
        // `width - 1 - i` counted from the right.
        for i in 0..width {
            let from_right = width - 1 - i;
            if let Some(o) = out.get_mut(from_right) {
                let seg = image.digits.get(i).copied().unwrap_or(0);
                let point = image.after.get(i).is_some_and(|s| s.is_lit());
                *o = segment_byte(seg, point);
            }
        }
        out
    }

    /// Shows `images[0]` on the left module and `images[1]` (if any) on the
    /// right one, at `brightness` (0 dimmest .. 15; larger is 15).
    pub fn show(&mut self, images: &[PanelImage], brightness: u8, delay: &mut impl Delay) {
        let intensity = brightness.min(LEVELS - 1);
        for (reg, value) in [
            (REG_SHUTDOWN, 1),
            (REG_DISPLAY_TEST, 0),
            (REG_DECODE_MODE, 0),
            (REG_SCAN_LIMIT, (DIGITS - 1) as u8),
            (REG_INTENSITY, intensity),
        ] {
            self.write_all(reg, [value; MAX_PANELS], delay);
        }
        let mut regs = [[0u8; DIGITS]; MAX_PANELS];
        for (r, image) in regs.iter_mut().zip(images) {
            *r = Self::digit_registers(image);
        }
        for (d, (left, right)) in regs[0].iter().zip(regs[1].iter()).enumerate() {
            self.write_all(REG_DIGIT0 + d as u8, [*left, *right], delay);
        }
    }

    /// Writes `reg` on every module: `values[0]` for the left (near) one.
    fn write_all(&mut self, reg: u8, values: [u8; MAX_PANELS], delay: &mut impl Delay) {
        self.cs.set_low();
        delay.delay_us(HALF_BIT_US);
        for module in (0..self.panels).rev() {
            let word = u16::from(reg) << 8 | u16::from(values.get(module).copied().unwrap_or(0));
            for bit in (0..16).rev() {
                self.clk.set_low();
                self.din.set(word >> bit & 1 == 1);
                delay.delay_us(HALF_BIT_US);
                self.clk.set_high();
                delay.delay_us(HALF_BIT_US);
            }
        }
        self.clk.set_low();
        self.cs.set_high();
        delay.delay_us(HALF_BIT_US);
    }
}
