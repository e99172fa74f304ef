//! Drivers of the display chips, over [`crate::pins`] lines: no HAL, no
//! clock. The RP2040 firmware gives them embassy-rp GPIO lines; the host
//! runner and tests give them [`model`] chips that decode what they send.

pub mod max7219;
pub mod tm1637;

#[cfg(any(test, feature = "std"))]
pub mod model;
