//! TM1637 four-digit "clock" modules (the common 0.36"/0.56" red modules
//! with a colon after the second digit), bit-banged on two lines: CLK (push
//! pull or open drain) and DIO (open drain, the module has pull-ups).
//!
//! Every update sends the whole picture and the display control, so a chip
//! that lost its state (a spike, a brown-out) is repaired by the next one:
//! data command `0x40` (write, auto-increment), address `0xC0` and the four
//! digit bytes, then `0x88 | brightness` (display on, 8 levels). Bytes go
//! least significant bit first, sampled by the chip on CLK rising; the
//! chip's acknowledge bit is clocked but not read. On this module only the
//! separator after position 1 exists (the colon, bit 7 of digit 1); a `.`
//! there lights it too, other separators are not shown.

use crate::pins::{Delay, Line};
use crate::render::PanelImage;

/// Digit positions of the module.
pub const DIGITS: usize = 4;
/// Brightness levels (pulse widths 1/16 to 14/16).
pub const LEVELS: u8 = 8;
/// Half a bit period, µs: slow enough for the 100 pF capacitors some
/// modules put on both lines.
pub const HALF_BIT_US: u32 = 10;

const CMD_DATA_AUTO: u8 = 0x40;
const CMD_ADDRESS: u8 = 0xC0;
const CMD_DISPLAY_ON: u8 = 0x88;
const COLON_BIT: u8 = 0x80;

/// One module.
pub struct Tm1637<C, D> {
    clk: C,
    dio: D,
}

impl<C: Line, D: Line> Tm1637<C, D> {
    /// Takes the two lines (both are released high here: bus idle).
    pub fn new(mut clk: C, mut dio: D) -> Self {
        clk.set_high();
        dio.set_high();
        Tm1637 { clk, dio }
    }

    /// The bytes of the four grid registers for `image` (its rightmost four
    /// positions if it is wider).
    pub fn grid_bytes(image: &PanelImage) -> [u8; DIGITS] {
        let width = image.width();
        let skip = width.saturating_sub(DIGITS);
        let mut out = [0u8; DIGITS];
        // A narrower image sits at the right of the module.
        let start = DIGITS.saturating_sub(width - skip);
        for (slot, i) in (start..DIGITS).zip(skip..width) {
            let mut byte = image.digits.get(i).copied().unwrap_or(0) & 0x7F;
            if slot == 1 && image.after.get(i).is_some_and(|s| s.is_lit()) {
                byte |= COLON_BIT;
            }
            if let Some(o) = out.get_mut(slot) {
                *o = byte;
            }
        }
        out
    }

    /// Shows `image` at `brightness` (0 dimmest .. 7; larger is 7).
    pub fn show(&mut self, image: &PanelImage, brightness: u8, delay: &mut impl Delay) {
        let grid = Self::grid_bytes(image);
        self.transfer(&[CMD_DATA_AUTO], delay);
        let mut data = [0u8; DIGITS + 1];
        data[0] = CMD_ADDRESS;
        data[1..].copy_from_slice(&grid);
        self.transfer(&data, delay);
        self.transfer(&[CMD_DISPLAY_ON | brightness.min(LEVELS - 1)], delay);
    }

    fn transfer(&mut self, bytes: &[u8], delay: &mut impl Delay) {
        // Start: DIO falls while CLK is high.
        self.clk.set_high();
        self.dio.set_high();
        delay.delay_us(HALF_BIT_US);
        self.dio.set_low();
        delay.delay_us(HALF_BIT_US);
        for &byte in bytes {
            for bit in 0..8 {
                self.clk.set_low();
                self.dio.set(byte >> bit & 1 == 1);
                delay.delay_us(HALF_BIT_US);
                self.clk.set_high();
                delay.delay_us(HALF_BIT_US);
            }
            // Acknowledge clock: DIO released, the chip pulls it low.
            self.clk.set_low();
            self.dio.set_high();
            delay.delay_us(HALF_BIT_US);
            self.clk.set_high();
            delay.delay_us(HALF_BIT_US);
        }
        // Stop: DIO rises while CLK is high.
        self.clk.set_low();
        self.dio.set_low();
        delay.delay_us(HALF_BIT_US);
        self.clk.set_high();
        delay.delay_us(HALF_BIT_US);
        self.dio.set_high();
        delay.delay_us(HALF_BIT_US);
    }
}
