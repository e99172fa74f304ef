//! The reliability promise of SPEC.md section 7, end to end: a
//! `device::DeviceLink` and a host built from `host::EventFilter` talk over
//! byte channels that lose, corrupt and delay frames and get unplugged; every
//! press is delivered exactly once, in order, with its device timestamp.
//! Time is simulated (1 ms steps): no sleeps.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

use chessclock_protocol::device::{DeviceLink, LinkState};
use chessclock_protocol::host::{EventFilter, EventVerdict};
use chessclock_protocol::*;
use proptest::prelude::*;
use std::collections::VecDeque;

/// A deterministic pseudo-random source (the seed comes from proptest).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn chance(&mut self, per_mille: u64) -> bool {
        self.next() % 1000 < per_mille
    }
}

/// One direction of the cable: bytes with a delivery instant.
#[derive(Default)]
struct Wire {
    in_flight: VecDeque<(u64, Vec<u8>)>,
}

struct Line {
    loss_per_mille: u64,
    corrupt_per_mille: u64,
    max_delay_us: u64,
}

impl Wire {
    fn send(&mut self, frame: &Frame, now: u64, line: &Line, rng: &mut Lcg, plugged: bool) {
        if !plugged || rng.chance(line.loss_per_mille) {
            return;
        }
        let mut out = [0u8; MAX_WIRE_FRAME];
        let n = encode(frame, &mut out).unwrap();
        let mut bytes = out[..n].to_vec();
        if rng.chance(line.corrupt_per_mille) {
            let i = (rng.next() as usize) % bytes.len();
            bytes[i] ^= 1 << (rng.next() % 8);
        }
        // FIFO like a real serial line: never deliver before the previous.
        let last = self.in_flight.back().map_or(0, |(t, _)| *t);
        let at = (now + rng.next() % (line.max_delay_us + 1)).max(last);
        self.in_flight.push_back((at, bytes));
    }

    fn deliver(&mut self, now: u64, acc: &mut Accumulator, mut sink: impl FnMut(Frame)) {
        while self.in_flight.front().is_some_and(|(t, _)| *t <= now) {
            let (_, bytes) = self.in_flight.pop_front().unwrap();
            let mut rest: &[u8] = &bytes;
            loop {
                match acc.feed(rest) {
                    Feed::NeedMore => break,
                    Feed::Frame(f, r) => {
                        sink(f);
                        rest = r;
                    }
                    Feed::Error(_, r) => rest = r,
                }
            }
        }
    }
}

struct Host {
    filter: EventFilter,
    connected: bool,
    last_rx: u64,
    next_heartbeat: u64,
    last_committed: Option<u16>,
    delivered: Vec<(u16, Button, u64)>,
    seq: u8,
    outbox: Vec<Message>,
}

impl Host {
    fn receive(&mut self, frame: Frame, now: u64) {
        self.last_rx = now;
        match frame.message {
            Message::Hello(h) => {
                self.filter.on_hello(&h);
                self.connected = true;
                self.outbox.push(Message::Welcome {
                    protocol_version: 1,
                    heartbeat_interval_ms: 250,
                    link_timeout_ms: 1000,
                });
            }
            Message::Button {
                event,
                button,
                device_time_us,
                ..
            } if self.connected => match self.filter.check(event) {
                EventVerdict::New => {
                    self.delivered.push((event, button, device_time_us));
                    self.last_committed = Some(event);
                    self.outbox.push(Message::Ack { event });
                }
                EventVerdict::Duplicate => {
                    if let Some(event) = self.last_committed {
                        self.outbox.push(Message::Ack { event });
                    }
                }
                EventVerdict::Ahead => {}
            },
            _ => {}
        }
    }

    fn tick(&mut self, now: u64) {
        if self.connected && now >= self.last_rx + 4 * 250_000 {
            self.connected = false; // device lost; the filter is kept
        }
        if self.connected && now >= self.next_heartbeat {
            self.next_heartbeat = now + 250_000;
            self.outbox.push(Message::HostHeartbeat);
        }
    }
}

fn run(
    seed: u64,
    presses: &[u64],
    line: Line,
    unplugs: &[(u64, u64)],
) -> (Vec<(u16, Button, u64)>, DeviceLink) {
    let mut rng = Lcg(seed);
    let hello = Hello {
        protocol_version: 1,
        roles: Roles::BUTTONS,
        serial: Text::new("T1").unwrap(),
        boot_id: 7,
        ..Hello::default()
    };
    let mut device: DeviceLink = DeviceLink::new(hello, 0);
    let mut host = Host {
        filter: EventFilter::new(),
        connected: false,
        last_rx: 0,
        next_heartbeat: 0,
        last_committed: None,
        delivered: Vec::new(),
        seq: 0,
        outbox: Vec::new(),
    };
    let (mut up, mut down) = (Wire::default(), Wire::default());
    let (mut host_acc, mut dev_acc) = (Accumulator::new(), Accumulator::new());
    let clean = Line {
        loss_per_mille: 0,
        corrupt_per_mille: 0,
        max_delay_us: line.max_delay_us,
    };
    let last_press = presses.iter().copied().max().unwrap_or(0);
    let end = last_press.max(unplugs.iter().map(|u| u.1).max().unwrap_or(0)) + 5_000_000;
    let mut pending_presses: VecDeque<u64> = presses.iter().copied().collect();
    let mut was_plugged = true;
    let mut now = 0u64;
    while now <= end {
        let plugged = !unplugs.iter().any(|(a, b)| now >= *a && now < *b);
        if was_plugged && !plugged {
            up.in_flight.clear();
            down.in_flight.clear();
            device.disconnected(now);
        }
        was_plugged = plugged;
        // The last 4 s are loss-free so that everything can settle.
        let l = if now + 4_000_000 > end { &clean } else { &line };
        while pending_presses.front().is_some_and(|t| *t <= now) {
            let t = pending_presses.pop_front().unwrap();
            let button = if t % 2 == 0 {
                Button::Left
            } else {
                Button::Right
            };
            device.press(button, true, t).expect("queue large enough");
        }
        while let Some(f) = device.poll(now) {
            up.send(&f, now, l, &mut rng, plugged);
        }
        up.deliver(now, &mut host_acc, |f| host.receive(f, now));
        host.tick(now);
        for m in std::mem::take(&mut host.outbox) {
            let f = Frame {
                seq: host.seq,
                message: m,
            };
            host.seq = host.seq.wrapping_add(1);
            down.send(&f, now, l, &mut rng, plugged);
        }
        down.deliver(now, &mut dev_acc, |f| {
            device.receive(&f, now);
        });
        now += 1_000;
    }
    (host.delivered, device)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn every_press_arrives_exactly_once_in_order(
        seed in any::<u64>(),
        gaps in proptest::collection::vec(1u64..700, 1..25),
        loss in 0u64..300,
        corrupt in 0u64..200,
        unplug in proptest::option::of((500u64..6_000, 100u64..3_000)),
    ) {
        let mut t = 200_000;
        let presses: Vec<u64> = gaps.iter().map(|g| { t += g * 1_000 + 37; t }).collect();
        let unplugs: Vec<(u64, u64)> = unplug
            .map(|(at, len)| vec![(at * 1_000, (at + len) * 1_000)])
            .unwrap_or_default();
        let line = Line { loss_per_mille: loss, corrupt_per_mille: corrupt, max_delay_us: 3_000 };
        let (delivered, device) = run(seed, &presses, line, &unplugs);
        let expected: Vec<(u16, Button, u64)> = presses
            .iter()
            .enumerate()
            .map(|(i, t)| (i as u16, if t % 2 == 0 { Button::Left } else { Button::Right }, *t))
            .collect();
        prop_assert_eq!(delivered, expected);
        prop_assert_eq!(device.pending().count(), 0);
        prop_assert_eq!(device.state(), LinkState::Linked);
    }
}

#[test]
fn a_long_unplug_shows_link_lost_and_keeps_the_presses() {
    let line = Line {
        loss_per_mille: 0,
        corrupt_per_mille: 0,
        max_delay_us: 500,
    };
    // Presses at 1.5 s and 2 s fall inside the unplug (1 s to 4 s).
    let (delivered, device) = run(
        1,
        &[500_000, 1_500_000, 2_000_000],
        line,
        &[(1_000_000, 4_000_000)],
    );
    assert_eq!(
        delivered.iter().map(|d| d.2).collect::<Vec<_>>(),
        [500_000, 1_500_000, 2_000_000]
    );
    assert_eq!(device.stats().events_dropped, 0);
    assert!(device.stats().frames_sent > 20);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Any bytes from the host, presses and clock jumps: no panic, the queue
    /// stays within capacity and consecutive, `next_deadline` is honest.
    #[test]
    fn device_link_survives_any_input(
        ops in proptest::collection::vec((0u8..4, proptest::collection::vec(any::<u8>(), 0..40), 0u64..2_000_000), 0..80),
    ) {
        let mut link: DeviceLink<8> = DeviceLink::new(Hello::default(), 0);
        let mut acc = Accumulator::new();
        let mut now = 0u64;
        for (kind, bytes, step) in ops {
            match kind {
                0 => {
                    let mut rest: &[u8] = &bytes;
                    loop {
                        match acc.feed(rest) {
                            Feed::NeedMore => break,
                            Feed::Frame(f, r) => { let _ = link.receive(&f, now); rest = r; }
                            Feed::Error(e, r) => { link.frame_error(e); rest = r; }
                        }
                    }
                }
                1 => { let _ = link.press(Button::from_code(step as u8 % 4), step % 2 == 0, now); }
                2 => now += step,
                _ => link.disconnected(now),
            }
            if link.next_deadline() > now {
                prop_assert_eq!(link.poll(now), None);
            }
            while link.poll(now).is_some() {}
            prop_assert!(link.next_deadline() > now);
            let events: Vec<u16> = link.pending().map(|e| e.event).collect();
            prop_assert!(events.len() <= 8);
            for w in events.windows(2) {
                prop_assert_eq!(w[1], w[0].wrapping_add(1));
            }
        }
    }

    /// Any observations: no panic, never mapped after arrival.
    #[test]
    fn clock_sync_never_maps_after_arrival(
        obs in proptest::collection::vec((any::<u64>(), any::<i64>()), 0..200),
        query in (any::<u64>(), any::<i64>()),
    ) {
        let mut sync = chessclock_protocol::timesync::ClockSync::new();
        for (d, h) in obs {
            sync.observe(d, h);
            prop_assert!(sync.to_host(query.0, query.1) <= query.1);
        }
        let _ = sync.error_bound_us();
    }
}
