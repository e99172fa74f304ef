//! chessclockd: a FIDE-grade chess clock built from USB press-button units,
//! LED display units and (optionally) DGT electronic boards.
//!
//! The crate is organised as a *pure core* and a *thin shell*:
//!
//! * pure cores, with no I/O and no clock of their own (time is always a
//!   parameter), in the `chessclock-core` crate and re-exported here:
//!   [`engine`] (the timing engine, FIDE Art. 6), [`timecontrol`]
//!   (notation), [`display`] (what a display shows at an instant),
//!   [`devices::session`] (one serial device's protocol state machine), the
//!   pure part of [`eboard`] (DGT board protocol and move detection);
//! * the shell that does I/O: [`runtime`] (timing thread with the device links, store),
//!   [`dbus`] (the D-Bus API), [`hall`] (the event's MQTT broker), [`ctl`] (the `chessclockctl` CLI), [`sim`]
//!   (simulated hardware on PTYs).
//!
//! Components talk over channels with one owner per piece of state; the
//! contract between the D-Bus layer and the runtime is [`control`].

pub mod bench;
pub mod clock;
pub mod config;
pub mod control;
pub mod ctl;
pub mod dbus;
pub mod devices;
pub mod eboard;
pub mod hall;
pub mod logging;
pub mod manpages;
pub mod notify;
pub mod platform;
pub mod replay;
pub mod runtime;
pub mod sim;

pub use chessclock_core::{display, engine, journal, time, timecontrol};
