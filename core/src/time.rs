//! Time as the cores count it: signed microseconds, on a monotonic base the
//! caller chooses (instants) or as lengths (durations).
//!
//! Promises: every core takes its instants as parameters of this type and
//! reads no clock; arithmetic on them saturates where an input could make it
//! overflow.

/// Microseconds: instants (on the caller's monotonic base) and durations.
pub type Micros = i64;

/// One millisecond in [`Micros`].
pub const MS: Micros = 1_000;
/// One second in [`Micros`].
pub const SECOND: Micros = 1_000_000;
