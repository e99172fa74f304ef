//! The few hardware services the logic needs, as traits: an output line and
//! a busy-wait of a few microseconds. The RP2040 firmware implements them
//! with embassy-rp's GPIO and embassy-time; the host runner with fake chips
//! that decode what the drivers send ([`crate::host`]).
//!
//! Lines are set, never read: the display chips' acknowledge bits are not
//! needed (a missing chip shows as a blank panel, which the person at the
//! board sees at once). An open-drain line (TM1637 DIO) is "high" when
//! released.

/// One output line.
pub trait Line {
    fn set(&mut self, high: bool);
    fn set_high(&mut self) {
        self.set(true);
    }
    fn set_low(&mut self) {
        self.set(false);
    }
}

/// A short busy wait (bit timing of the display chips).
pub trait Delay {
    fn delay_us(&mut self, us: u32);
}

impl<T: Line + ?Sized> Line for &mut T {
    fn set(&mut self, high: bool) {
        (**self).set(high);
    }
}

impl<T: Delay + ?Sized> Delay for &mut T {
    fn delay_us(&mut self, us: u32) {
        (**self).delay_us(us);
    }
}
