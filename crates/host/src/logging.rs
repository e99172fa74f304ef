//! Where the daemon's and the CLI's logs go: the systemd journal when it is
//! there, plain stderr otherwise.
//!
//! Promises:
//! * [`init`] installs one global `tracing` subscriber and never panics: a
//!   second call, a missing or unreachable journal, or a malformed `RUST_LOG`
//!   become an error value or a fallback, never an abort.
//! * With the journal, events keep their structured fields under their own
//!   names (`BOARD=`, `SIDE=`, `USED_MS=`, `DEVICE=`, no `F_` prefix) and
//!   levels map to syslog priorities the way `journalctl -p` users expect:
//!   ERROR→err(3), WARN→warning(4), INFO→info(6), DEBUG and TRACE→debug(7).
//! * The filter is `RUST_LOG` when it is set and valid, else a default chosen
//!   by the verbosity (`-v` count): 0 = info, 1 = our crate at debug,
//!   2 = our crate at trace, 3 or more = everything at trace.
//!
//! [`LogChoice::Auto`] picks the journal when its socket exists *and* stderr
//! is not a terminal: under systemd the journal gets structured records, while
//! a person running the daemon in a terminal sees the log lines in front of
//! them.

use std::io::IsTerminal;
use std::path::Path;

use tracing_journald::{Priority, PriorityMappings};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::EnvFilter;

/// The journal's native socket; its presence means journald runs here.
pub const JOURNAL_SOCKET: &str = "/run/systemd/journal/socket";

/// Where logs should go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LogChoice {
    /// The journal when it is there and stderr is not a terminal, else stderr.
    #[default]
    Auto,
    /// The journal, falling back to stderr when it cannot be reached.
    Journald,
    /// Always stderr.
    Stderr,
}

/// Where logs actually went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogTarget {
    Journald,
    Stderr,
}

/// Why [`init`] did not install a subscriber.
#[derive(Debug, thiserror::Error)]
pub enum LoggingError {
    #[error("a global tracing subscriber is already installed: {0}")]
    AlreadyInitialised(String),
}

/// Installs the global subscriber with [`LogChoice::Auto`].
///
/// Returns where the logs go. Call it once, early in `main`.
pub fn init(verbosity: u8) -> Result<LogTarget, LoggingError> {
    init_with(verbosity, LogChoice::Auto)
}

/// Installs the global subscriber with an explicit choice of target.
pub fn init_with(verbosity: u8, choice: LogChoice) -> Result<LogTarget, LoggingError> {
    let (filter, bad_rust_log) = env_filter(verbosity);
    let wanted = choose_target(
        choice,
        Path::new(JOURNAL_SOCKET).exists(),
        std::io::stderr().is_terminal(),
    );

    let mut journal_failure = None;
    let target = if wanted == LogTarget::Journald {
        match journald_layer() {
            Ok(layer) => {
                tracing_subscriber::registry()
                    .with(filter)
                    .with(layer)
                    .try_init()
                    .map_err(|e| LoggingError::AlreadyInitialised(e.to_string()))?;
                LogTarget::Journald
            }
            Err(error) => {
                journal_failure = Some(error);
                init_stderr(env_filter(verbosity).0)?;
                LogTarget::Stderr
            }
        }
    } else {
        init_stderr(filter)?;
        LogTarget::Stderr
    };

    // Reported only now, so they reach the log that was just set up.
    if let Some(error) = journal_failure {
        tracing::warn!(%error, socket = JOURNAL_SOCKET, "journald unreachable, logging to stderr");
    }
    if let Some(error) = bad_rust_log {
        tracing::warn!(%error, "RUST_LOG is not a valid filter, using the default");
    }
    Ok(target)
}

/// Decides the target from the facts [`init`] observes (pure, for tests).
pub fn choose_target(
    choice: LogChoice,
    journal_socket_exists: bool,
    stderr_is_terminal: bool,
) -> LogTarget {
    match choice {
        LogChoice::Stderr => LogTarget::Stderr,
        LogChoice::Journald => LogTarget::Journald,
        LogChoice::Auto if journal_socket_exists && !stderr_is_terminal => LogTarget::Journald,
        LogChoice::Auto => LogTarget::Stderr,
    }
}

/// The filter used when `RUST_LOG` is unset or invalid.
pub fn default_directive(verbosity: u8) -> &'static str {
    match verbosity {
        0 => "info",
        1 => "info,chessclockd=debug,chessclock_protocol=debug",
        2 => "debug,chessclockd=trace,chessclock_protocol=trace",
        _ => "trace",
    }
}

/// Level → journal priority: INFO is `info` (not the crate's default
/// `notice`) so `journalctl -p notice` shows only what needs attention.
pub fn priority_mappings() -> PriorityMappings {
    let mut mappings = PriorityMappings::new();
    mappings.error = Priority::Error;
    mappings.warn = Priority::Warning;
    mappings.info = Priority::Informational;
    mappings.debug = Priority::Debug;
    mappings.trace = Priority::Debug;
    mappings
}

fn journald_layer() -> std::io::Result<tracing_journald::Layer> {
    Ok(tracing_journald::layer()?
        .with_field_prefix(None)
        .with_priority_mappings(priority_mappings()))
}

fn init_stderr(filter: EnvFilter) -> Result<(), LoggingError> {
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false);
    tracing_subscriber::registry()
        .with(filter)
        .with(layer)
        .try_init()
        .map_err(|e| LoggingError::AlreadyInitialised(e.to_string()))
}

/// The filter, and the reason `RUST_LOG` was ignored if it was.
fn env_filter(verbosity: u8) -> (EnvFilter, Option<String>) {
    match std::env::var("RUST_LOG") {
        Ok(text) if !text.trim().is_empty() => match EnvFilter::try_new(&text) {
            Ok(filter) => (filter, None),
            Err(error) => (
                EnvFilter::new(default_directive(verbosity)),
                Some(format!("{text:?}: {error}")),
            ),
        },
        _ => (EnvFilter::new(default_directive(verbosity)), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_uses_the_journal_only_when_nobody_watches_stderr() {
        assert_eq!(
            choose_target(LogChoice::Auto, true, false),
            LogTarget::Journald
        );
        assert_eq!(
            choose_target(LogChoice::Auto, true, true),
            LogTarget::Stderr
        );
        assert_eq!(
            choose_target(LogChoice::Auto, false, false),
            LogTarget::Stderr
        );
    }

    #[test]
    fn explicit_choices_are_obeyed() {
        assert_eq!(
            choose_target(LogChoice::Stderr, true, false),
            LogTarget::Stderr
        );
        assert_eq!(
            choose_target(LogChoice::Journald, false, true),
            LogTarget::Journald
        );
    }

    #[test]
    fn levels_map_to_the_syslog_priorities_journalctl_users_expect() {
        let m = priority_mappings();
        assert_eq!(m.error as u8, b'3');
        assert_eq!(m.warn as u8, b'4');
        assert_eq!(m.info as u8, b'6');
        assert_eq!(m.debug as u8, b'7');
        assert_eq!(m.trace as u8, b'7');
    }

    #[test]
    fn every_default_directive_parses_and_verbosity_widens_it() {
        for v in 0..=4 {
            assert!(EnvFilter::try_new(default_directive(v)).is_ok(), "v={v}");
        }
        assert_eq!(default_directive(0), "info");
        assert!(default_directive(1).contains("chessclockd=debug"));
        assert_eq!(default_directive(3), "trace");
        assert_eq!(default_directive(200), "trace");
    }

    #[test]
    fn a_second_init_is_an_error_not_a_panic() {
        // Another test may have installed one already; either way the
        // second call must fail cleanly.
        let _ = init_with(0, LogChoice::Stderr);
        let second = init_with(0, LogChoice::Stderr);
        assert!(matches!(second, Err(LoggingError::AlreadyInitialised(_))));
    }
}
