//! chessclockd, the daemon's private library: what the `chessclockd` and
//! `chessclockctl` binaries are made of (and the bench and the tests reach
//! through). Not a public API: module paths change with the code.
//!
//! The pure cores live in `chessclock-core` and are re-exported here
//! ([`engine`], [`timecontrol`], [`display`], [`journal`], [`time`]); this
//! crate is the thin shell that does the I/O, each room importing only
//! rooms below it:
//! * [`config`]: the config file, with line:column errors;
//! * [`control`]: the channels between the control surfaces and the
//!   runtime that owns the boards;
//! * [`lateness`]: how late the timing thread's work was, counted;
//! * [`devices`]: the serial ports and the device links;
//! * [`eboard`]: DGT boards on serial ports, the PGN files;
//! * [`runtime`]: the timing thread, the store thread, the control loop;
//! * [`radios`]: the host's radios as the kernel reports them; [`host`]:
//!   the host's health (its radios, its clock's NTP synchronisation);
//! * [`dbus`]: the D-Bus API; [`hall`]: the daemon on the event's MQTT
//!   broker; [`notify`]: systemd's readiness and watchdog;
//! * [`daemon`]: all of it wired, until shutdown;
//! * [`ctl`]: the `chessclockctl` CLI; [`manpages`]: the programs' command
//!   lines, for their man pages;
//! * [`replay`]: the replay format's reader (`chessclockctl replay`).
//!
//! Components talk over channels with one owner per piece of state; the
//! contract between the D-Bus layer and the runtime is [`control`].

pub mod config;
pub mod control;
pub mod ctl;
pub mod daemon;
pub mod dbus;
pub mod devices;
pub mod eboard;
pub mod hall;
pub mod host;
pub mod lateness;
pub mod manpages;
pub mod notify;
pub mod platform;
pub mod radios;
pub mod replay;
pub mod runtime;
pub mod scheduled;

pub use chessclock_core::{display, engine, journal, time, timecontrol};
