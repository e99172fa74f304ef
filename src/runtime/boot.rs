//! Which boot of the machine this is.
//!
//! CLOCK_MONOTONIC counts from the machine's boot and survives a restart of
//! the daemon, not a reboot; the kernel's boot id (a random UUID made at
//! every boot) says whether a stored game's monotonic epoch still means
//! anything.

/// The kernel's boot id, or `None` where it cannot be read (then every
/// restart is treated like a reboot: nothing is assumed).
pub fn boot_id() -> Option<String> {
    match std::fs::read_to_string("/proc/sys/kernel/random/boot_id") {
        Ok(text) => {
            let id = text.trim();
            (!id.is_empty()).then(|| id.to_owned())
        }
        Err(error) => {
            tracing::warn!(%error, "cannot read the kernel's boot id; restarts are treated like reboots");
            None
        }
    }
}
