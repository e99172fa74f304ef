//! The typed D-Bus errors of the API (`org.chessclockd.ChessClock1.Error.*`).
//!
//! Every failure a caller can see is one of these names, with a message that
//! says what was wrong and what to do about it.

use crate::control::ControlError;

/// The prefix of every error name.
pub const ERROR_PREFIX: &str = "org.chessclockd.ChessClock1.Error";

/// A failure returned over D-Bus. The variant is the error name's last
/// component; the string is the human-readable message.
#[derive(Debug, zbus::DBusError)]
#[zbus(prefix = "org.chessclockd.ChessClock1.Error")]
pub enum Error {
    /// Transport-level failures inside zbus itself.
    #[zbus(error)]
    ZBus(zbus::Error),
    /// An argument is malformed or out of range; nothing was changed.
    InvalidArgument(String),
    /// The caller may not change clocks.
    NotPermitted(String),
    /// The request does not fit the board's current state.
    InvalidState(String),
    /// No board with that id.
    UnknownBoard(String),
    /// A scheduled start needs an NTP-synchronised clock (Art. 6.6).
    NotSynchronized(String),
    /// A failure inside the daemon.
    Internal(String),
    /// The caller (or everyone together) read more than its share; the
    /// message says when to try again.
    RateLimited(String),
}

impl From<ControlError> for Error {
    fn from(error: ControlError) -> Error {
        match error {
            ControlError::InvalidArgument(message) => Error::InvalidArgument(message),
            ControlError::InvalidState(message) => Error::InvalidState(message),
            ControlError::NotPermitted(message) => Error::NotPermitted(message),
            ControlError::UnknownBoard(message) => Error::UnknownBoard(message),
            ControlError::NotSynchronized(message) => Error::NotSynchronized(message),
            ControlError::Internal(message) => Error::Internal(message),
        }
    }
}

impl From<Error> for zbus::fdo::Error {
    fn from(error: Error) -> zbus::fdo::Error {
        match error {
            Error::ZBus(error) => zbus::fdo::Error::ZBus(error),
            other => zbus::fdo::Error::Failed(other.to_string()),
        }
    }
}

/// The short name (`InvalidArgument`, ...) of an error name in our namespace,
/// or `None` for a foreign error name.
pub fn short_name(error_name: &str) -> Option<&str> {
    error_name
        .strip_prefix(ERROR_PREFIX)
        .and_then(|rest| rest.strip_prefix('.'))
}
