//! `chessclock-firmware`: the logic of the open reference units (a
//! Raspberry Pi Pico with lever switches, LEDs, TM1637 or MAX7219 modules
//! and a buzzer), speaking the serial protocol of `protocol/SPEC.md`
//! through the protocol crate's [`chessclock_protocol::device::DeviceLink`].
//!
//! `no_std`, no allocation, no HAL: the hardware is behind [`pins`] traits
//! and every call takes the device clock as a number, so all of it runs and
//! is tested on the host. The RP2040 binary (`firmware/rp2040`, a separate
//! workspace) wires it to embassy-rp; the [`host`] runner (feature `std`)
//! wires it to a PTY with model chips, for end-to-end tests against the
//! real daemon.
//!
//! | module | what it is for |
//! |---|---|
//! | [`config`] | unit kinds, capabilities, HELLO, USB identity |
//! | [`debounce`] | first-edge stamps, debounce decides whether it was a press |
//! | [`unit`] | the link, the host's commands, what the hardware shows |
//! | [`render`] | time text to right-aligned seven-segment digits |
//! | [`drivers`] | TM1637 and MAX7219 over plain lines |
//! | [`beep`] | BEEP patterns, low battery |

#![cfg_attr(not(any(test, feature = "std")), no_std)]
#![forbid(unsafe_code)]

pub mod beep;
pub mod config;
pub mod debounce;
pub mod drivers;
pub mod pins;
pub mod render;
pub mod unit;

#[cfg(feature = "std")]
pub mod host;

pub use config::{DisplayChip, Identity, UnitConfig, UnitKind};
pub use debounce::{ButtonEvent, Buttons};
pub use unit::{Outputs, Unit};
