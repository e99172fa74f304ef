//! A `start-at` from the hall is held to the rules D-Bus holds one to
//! ([`crate::scheduled`]): an instant not in the past, and a clock known to
//! be NTP-synchronised unless the command says `force` or `[daemon]
//! require-ntp-for-scheduled-start` is off. The synchronisation is the
//! host's health's (`handle.host`, checked every 10 s from timedated, the
//! source D-Bus asks): never a wait on the command's path.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::control::{Command, ControlError, ControlHandle};

/// `[daemon] require-ntp-for-scheduled-start` as the hall sees it: the
/// daemon sets it at the start and again on every reload.
#[derive(Clone, Debug)]
pub struct NtpRule(Arc<AtomicBool>);

impl NtpRule {
    pub fn new(required: bool) -> NtpRule {
        NtpRule(Arc::new(AtomicBool::new(required)))
    }

    /// A reload's value.
    pub fn set(&self, required: bool) {
        self.0.store(required, Ordering::Relaxed);
    }

    fn required(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Why `command` (a `start-at`) must not be carried out at wall instant
/// `now_us`, if it must not; `None` for any other command.
pub(super) fn refusal(
    command: &Command,
    rule: &NtpRule,
    handle: &ControlHandle,
    now_us: i64,
) -> Option<ControlError> {
    let Command::StartAt {
        unix_time_us,
        force,
    } = command
    else {
        return None;
    };
    crate::scheduled::check_start_time(*unix_time_us, now_us)
        .and_then(|()| {
            crate::scheduled::check_synchronized(
                rule.required(),
                *force,
                handle.host.get().synchronization(),
                "`\"force\": true` in the command",
            )
        })
        .err()
}
