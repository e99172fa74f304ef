//! Behavioural models of the display chips, fed the lines the drivers set:
//! they decode the bit-banged protocol the way the chip's datasheet says it
//! does, so a test (or the host runner) reads what the module would light.
//! Host only.

use std::cell::RefCell;
use std::rc::Rc;

use crate::pins::Line;
use crate::render::{PanelImage, Separator, MAX_DIGITS};

/// A TM1637 as its datasheet describes the two-wire interface.
#[derive(Debug, Default)]
pub struct Tm1637Chip {
    clk: bool,
    dio: bool,
    in_transfer: bool,
    bit: u8,
    byte: u8,
    bytes_in_transfer: usize,
    address: usize,
    auto_increment: bool,
    addressing: bool,
    pub ram: [u8; 6],
    pub on: bool,
    pub brightness: u8,
    /// Display-control commands seen (one per update).
    pub updates: u64,
    /// Protocol oddities: data bytes outside an address command.
    pub stray_bytes: u64,
}

impl Tm1637Chip {
    pub fn new() -> Tm1637Chip {
        Tm1637Chip {
            clk: true,
            dio: true,
            auto_increment: true,
            ..Tm1637Chip::default()
        }
    }

    fn set_clk(&mut self, high: bool) {
        let rising = high && !self.clk;
        self.clk = high;
        if !rising || !self.in_transfer {
            return;
        }
        if self.bit < 8 {
            if self.dio {
                self.byte |= 1 << self.bit;
            }
            self.bit += 1;
        } else {
            // Ninth clock: the acknowledge.
            let byte = self.byte;
            self.bit = 0;
            self.byte = 0;
            self.take(byte);
        }
    }

    fn set_dio(&mut self, high: bool) {
        let was = self.dio;
        self.dio = high;
        if self.clk && was && !high {
            self.in_transfer = true;
            self.bit = 0;
            self.byte = 0;
            self.bytes_in_transfer = 0;
            self.addressing = false;
        } else if self.clk && !was && high {
            self.in_transfer = false;
        }
    }

    fn take(&mut self, byte: u8) {
        let first = self.bytes_in_transfer == 0;
        self.bytes_in_transfer += 1;
        if first {
            match byte & 0xC0 {
                0x40 => self.auto_increment = byte & 0x04 == 0,
                0xC0 => {
                    self.address = usize::from(byte & 0x0F);
                    self.addressing = true;
                }
                0x80 => {
                    self.on = byte & 0x08 != 0;
                    self.brightness = byte & 0x07;
                    self.updates += 1;
                }
                _ => self.stray_bytes += 1,
            }
            return;
        }
        if !self.addressing {
            self.stray_bytes += 1;
            return;
        }
        if let Some(cell) = self.ram.get_mut(self.address) {
            *cell = byte;
        }
        if self.auto_increment {
            self.address += 1;
        }
    }

    /// What a 4-digit clock module shows (blank when the display is off).
    pub fn image(&self) -> PanelImage {
        let mut image = PanelImage::blank(4);
        if !self.on {
            return image;
        }
        for (i, byte) in self.ram.iter().take(4).enumerate() {
            image.digits[i] = byte & 0x7F;
            if i == 1 && byte & 0x80 != 0 {
                image.after[1] = Separator::COLON;
            }
        }
        image
    }
}

/// One MAX7219's registers.
#[derive(Debug, Default, Clone, Copy)]
pub struct Max7219Regs {
    pub digits: [u8; 8],
    pub decode_mode: u8,
    pub intensity: u8,
    pub scan_limit: u8,
    pub shutdown: u8,
    pub display_test: u8,
}

impl Max7219Regs {
    /// What the module shows, leftmost digit first (DIG7 .. DIG0).
    pub fn image(&self) -> PanelImage {
        let mut image = PanelImage::blank(8);
        if self.shutdown & 1 == 0 || self.decode_mode != 0 {
            return image;
        }
        for i in 0..MAX_DIGITS {
            let reg = self.digits.get(7 - i).copied().unwrap_or(0);
            if usize::from(self.scan_limit) < 7 - i {
                continue;
            }
            let mut seg = 0;
            for (bit, from) in [
                (0x01, 0x40),
                (0x02, 0x20),
                (0x04, 0x10),
                (0x08, 0x08),
                (0x10, 0x04),
                (0x20, 0x02),
                (0x40, 0x01),
            ] {
                if reg & from != 0 {
                    seg |= bit;
                }
            }
            image.digits[i] = seg;
            if reg & 0x80 != 0 {
                image.after[i] = Separator::DOT;
            }
        }
        image
    }
}

/// A chain of MAX7219s: index 0 is the module wired to the controller.
#[derive(Debug)]
pub struct Max7219Chain {
    clk: bool,
    cs: bool,
    din: bool,
    shift: u64,
    bits: u32,
    pub modules: Vec<Max7219Regs>,
    /// Latches with a bit count that is not 16 per module.
    pub bad_latches: u64,
}

impl Max7219Chain {
    pub fn new(modules: usize) -> Max7219Chain {
        Max7219Chain {
            clk: false,
            cs: true,
            din: false,
            shift: 0,
            bits: 0,
            modules: vec![Max7219Regs::default(); modules.clamp(1, 4)],
            bad_latches: 0,
        }
    }

    fn set_clk(&mut self, high: bool) {
        let rising = high && !self.clk;
        self.clk = high;
        if rising && !self.cs {
            self.shift = self.shift << 1 | u64::from(self.din);
            self.bits += 1;
        }
    }

    fn set_cs(&mut self, high: bool) {
        let rising = high && !self.cs;
        self.cs = high;
        if !high {
            self.shift = 0;
            self.bits = 0;
        }
        if !rising {
            return;
        }
        if self.bits != 16 * self.modules.len() as u32 {
            self.bad_latches += 1;
        }
        for (k, m) in self.modules.iter_mut().enumerate() {
            let word = (self.shift >> (16 * k)) as u16;
            let value = word as u8;
            match (word >> 8) as u8 & 0x0F {
                r @ 0x01..=0x08 => m.digits[usize::from(r - 1)] = value,
                0x09 => m.decode_mode = value,
                0x0A => m.intensity = value & 0x0F,
                0x0B => m.scan_limit = value & 0x07,
                0x0C => m.shutdown = value,
                0x0F => m.display_test = value,
                _ => {}
            }
        }
    }
}

/// Which line of a chip a [`ChipLine`] drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire {
    Tm1637Clk,
    Tm1637Dio,
    MaxDin,
    MaxClk,
    MaxCs,
}

/// A shared chip.
#[derive(Clone, Debug)]
pub enum Chip {
    Tm1637(Rc<RefCell<Tm1637Chip>>),
    Max7219(Rc<RefCell<Max7219Chain>>),
}

/// An output line wired to a chip model.
#[derive(Clone, Debug)]
pub struct ChipLine {
    pub chip: Chip,
    pub wire: Wire,
}

impl Line for ChipLine {
    fn set(&mut self, high: bool) {
        match (&self.chip, self.wire) {
            (Chip::Tm1637(c), Wire::Tm1637Clk) => c.borrow_mut().set_clk(high),
            (Chip::Tm1637(c), Wire::Tm1637Dio) => c.borrow_mut().set_dio(high),
            (Chip::Max7219(c), Wire::MaxClk) => c.borrow_mut().set_clk(high),
            (Chip::Max7219(c), Wire::MaxCs) => c.borrow_mut().set_cs(high),
            (Chip::Max7219(c), Wire::MaxDin) => c.borrow_mut().din = high,
            _ => {}
        }
    }
}

/// A delay that does not wait (the models have no timing).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoDelay;

impl crate::pins::Delay for NoDelay {
    fn delay_us(&mut self, _us: u32) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drivers::{max7219::Max7219, tm1637::Tm1637};
    use crate::render::{read_back, render};

    fn tm1637() -> (Rc<RefCell<Tm1637Chip>>, Tm1637<ChipLine, ChipLine>) {
        let chip = Rc::new(RefCell::new(Tm1637Chip::new()));
        let line = |wire| ChipLine {
            chip: Chip::Tm1637(chip.clone()),
            wire,
        };
        let driver = Tm1637::new(line(Wire::Tm1637Clk), line(Wire::Tm1637Dio));
        (chip, driver)
    }

    #[test]
    fn tm1637_shows_the_time_with_its_colon_and_brightness() {
        let (chip, mut driver) = tm1637();
        driver.show(&render("4:59", 4), 3, &mut NoDelay);
        let c = chip.borrow();
        assert_eq!(read_back(&c.image()).as_str(), "4:59");
        assert!(c.on);
        assert_eq!(c.brightness, 3);
        assert_eq!(c.stray_bytes, 0);
        drop(c);
        driver.show(&render("12:00", 4), 200, &mut NoDelay);
        assert_eq!(read_back(&chip.borrow().image()).as_str(), "12:00");
        assert_eq!(chip.borrow().brightness, 7);
        assert_eq!(chip.borrow().updates, 2);
    }

    #[test]
    fn tm1637_shows_only_the_colon_after_its_second_digit() {
        let (chip, mut driver) = tm1637();
        // Tenths text on a module without decimal points: digits shown,
        // the dot after position 2 has nowhere to light.
        driver.show(&render("9.5", 4), 7, &mut NoDelay);
        assert_eq!(read_back(&chip.borrow().image()).as_str(), "95");
    }

    #[test]
    fn max7219_chain_left_module_is_the_near_one() {
        let chain = Rc::new(RefCell::new(Max7219Chain::new(2)));
        let line = |wire| ChipLine {
            chip: Chip::Max7219(chain.clone()),
            wire,
        };
        let mut driver = Max7219::new(line(Wire::MaxDin), line(Wire::MaxClk), line(Wire::MaxCs), 2);
        driver.show(
            &[render("1:29:59", 8), render("0:19.7", 8)],
            9,
            &mut NoDelay,
        );
        let c = chain.borrow();
        assert_eq!(c.bad_latches, 0);
        // The MAX7219 has decimal points only: every separator reads as `.`.
        assert_eq!(read_back(&c.modules[0].image()).as_str(), "1.29.59");
        assert_eq!(read_back(&c.modules[1].image()).as_str(), "0.19.7");
        assert_eq!(c.modules[0].intensity, 9);
        assert_eq!(c.modules[1].scan_limit, 7);
    }
}
