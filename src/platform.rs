//! What the kernel says about itself, asked without changing anything.
//!
//! This module exists so that the configuration can check a value against
//! the kernel (the SCHED_FIFO priority range) without importing the runtime,
//! which itself imports the configuration. It promises to import nothing from
//! this crate, so it can never close an import circle, and to have no side
//! effects: each function only asks.

/// The lowest and highest SCHED_FIFO priorities this kernel accepts
/// (`sched_get_priority_min/max`; Linux: 1 and 99). `(1, 99)` if the kernel
/// does not say.
pub fn fifo_priority_range() -> (i32, i32) {
    // SAFETY: sched_get_priority_min/max take a policy number by value and
    // touch no memory; an unknown policy gives -1, handled below.
    let (min, max) = unsafe {
        (
            libc::sched_get_priority_min(libc::SCHED_FIFO),
            libc::sched_get_priority_max(libc::SCHED_FIFO),
        )
    };
    if min < 0 || max < min {
        (1, 99)
    } else {
        (min, max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fifo_range_is_a_valid_nonempty_range() {
        let (min, max) = fifo_priority_range();
        assert!(min >= 0 && min <= max, "({min}, {max})");
    }
}
