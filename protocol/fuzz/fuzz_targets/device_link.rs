//! Any bytes from the "host", any presses and any instants into a
//! `DeviceLink`: nothing may panic, the queue never exceeds its capacity,
//! queued events stay consecutive, and `next_deadline` is honoured.
#![no_main]

use chessclock_protocol::device::DeviceLink;
use chessclock_protocol::{Accumulator, Button, Feed, Hello};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut link: DeviceLink<8> = DeviceLink::new(Hello::default(), 0);
    let mut acc = Accumulator::new();
    let mut now = 0u64;
    for op in data.chunks(4) {
        let kind = op.first().copied().unwrap_or(0);
        let arg = op.get(1..).unwrap_or(&[]);
        match kind % 4 {
            0 => {
                let mut rest = arg;
                loop {
                    match acc.feed(rest) {
                        Feed::NeedMore => break,
                        Feed::Frame(f, r) => {
                            let _ = link.receive(&f, now);
                            rest = r;
                        }
                        Feed::Error(e, r) => {
                            link.frame_error(e);
                            rest = r;
                        }
                    }
                }
            }
            1 => {
                let _ = link.press(Button::from_code(kind >> 6), kind & 0x20 != 0, now);
            }
            2 => {
                let step = arg.iter().fold(0u64, |a, b| a * 256 + u64::from(*b));
                now = now.saturating_add(step * 1_000);
            }
            _ => link.disconnected(now),
        }
        if link.next_deadline() > now {
            assert!(link.poll(now).is_none(), "work before next_deadline");
        }
        while link.poll(now).is_some() {}
        assert!(link.next_deadline() > now, "work left after draining poll");
        let events: Vec<u16> = link.pending().map(|e| e.event).collect();
        assert!(events.len() <= 8);
        for w in events.windows(2) {
            assert_eq!(w[1], w[0].wrapping_add(1));
        }
    }
});
