//! A unit's frames and outputs against the rules of SPEC.md sections 6 to 8,
//! as transcripts with explicit instants (no clock, no sleeps): HELLO every
//! 500 ms, heartbeat at once after WELCOME and every H, the queue kept across
//! link losses and resent every 100 ms, cumulative ACKs, LINK_LOST set by
//! the device itself after T, displays kept, one-panel units, the kinds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

use chessclock_firmware::config::{DisplayChip, Identity, UnitConfig};
use chessclock_firmware::debounce::ButtonEvent;
use chessclock_firmware::render::read_back;
use chessclock_firmware::unit::{Refused, Unit, QUEUE, TX_BUFFER};
use chessclock_protocol::{
    decode, encode, Button, DisplayState, Frame, Icons, Message, NakCode, Panel, Text,
};

fn identity() -> Identity {
    Identity::new("chessclockd", "test", "T0001", "0.1.0")
}

/// Frames sent at `now`, and whether the first came after a `0x00`.
fn frames(unit: &mut Unit, now: u64) -> Vec<Message> {
    let mut out = Vec::new();
    let mut buf = [0u8; TX_BUFFER];
    while let Some(n) = unit.transmit(now, &mut buf) {
        let body: Vec<u8> = buf[..n].iter().copied().filter(|&b| b != 0).collect();
        out.push(decode(&body).expect("valid frame").message);
    }
    out
}

fn raw(unit: &mut Unit, now: u64) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut buf = [0u8; TX_BUFFER];
    while let Some(n) = unit.transmit(now, &mut buf) {
        out.push(buf[..n].to_vec());
    }
    out
}

fn bytes(message: Message) -> Vec<u8> {
    let mut w = [0u8; 160];
    let n = encode(&Frame { seq: 0, message }, &mut w).unwrap();
    w[..n].to_vec()
}

fn welcome(h: u16, t: u16) -> Vec<u8> {
    bytes(Message::Welcome {
        protocol_version: 1,
        heartbeat_interval_ms: h,
        link_timeout_ms: t,
    })
}

fn press(button: Button, at_us: u64) -> ButtonEvent {
    ButtonEvent {
        button,
        pressed: true,
        at_us,
    }
}

fn hellos(m: &[Message]) -> usize {
    m.iter().filter(|m| matches!(m, Message::Hello(_))).count()
}

fn presses(m: &[Message]) -> Vec<(u16, u64)> {
    m.iter()
        .filter_map(|m| match m {
            Message::Button {
                event,
                device_time_us,
                ..
            } => Some((*event, *device_time_us)),
            _ => None,
        })
        .collect()
}

fn display(left: &str, right: &str) -> Vec<u8> {
    let panel = |t: &str, icons| Panel {
        time: Text::new(t).unwrap(),
        icons: Icons(icons),
        moves: 3,
        stage: 1,
    };
    bytes(Message::Display(DisplayState {
        left: panel(left, Icons::RUNNING.0),
        right: panel(right, 0),
        text: Text::empty(),
        brightness: 7,
    }))
}

#[test]
fn hello_at_once_then_every_500_ms_until_welcome() {
    let mut unit = Unit::new(UnitConfig::buttons(), &identity(), 1, 0);
    let first = raw(&mut unit, 0);
    assert_eq!(first.len(), 1);
    assert_eq!(first[0][0], 0x00, "a 0x00 ends any partial frame first");
    for t in (1..20).map(|k| k * 100_000) {
        let m = frames(&mut unit, t);
        assert_eq!(hellos(&m), usize::from(t % 500_000 == 0), "at {t} µs");
    }
    assert_eq!(unit.next_deadline(1_900_000), 2_000_000);
    assert!(unit.outputs(0).link_lost, "LINK_LOST until WELCOME");
}

#[test]
fn heartbeat_at_once_after_welcome_then_every_h() {
    let mut unit = Unit::new(UnitConfig::buttons(), &identity(), 1, 0);
    frames(&mut unit, 0);
    unit.receive(&welcome(100, 1000), 50_000);
    let m = frames(&mut unit, 50_000);
    assert!(matches!(
        m[..],
        [Message::DeviceHeartbeat {
            device_time_us: 50_000,
            low_power: false
        }]
    ));
    assert!(!unit.outputs(50_000).link_lost);
    let mut beats = Vec::new();
    for t in (51_000..=460_000).step_by(1_000) {
        if !frames(&mut unit, t).is_empty() {
            beats.push(t);
        }
        if t % 200_000 == 0 {
            unit.receive(&bytes(Message::HostHeartbeat), t);
        }
    }
    assert_eq!(beats, [150_000, 250_000, 350_000, 450_000]);
}

#[test]
fn tiny_heartbeat_and_timeout_are_raised() {
    let mut unit = Unit::new(UnitConfig::buttons(), &identity(), 1, 0);
    frames(&mut unit, 0);
    unit.receive(&welcome(1, 2), 0);
    assert_eq!(unit.link().timing_us(), (10_000, 10_000));
}

#[test]
fn presses_in_handshake_are_queued_and_sent_oldest_first_after_the_heartbeat() {
    let mut unit = Unit::new(UnitConfig::buttons(), &identity(), 1, 0);
    frames(&mut unit, 0);
    for i in 0..QUEUE as u64 {
        assert_eq!(unit.button(press(Button::Left, 1_000 + i)), Ok(i as u16));
    }
    const { assert!(QUEUE >= 16, "SPEC 7.3: at least 16 queued events") };
    assert_eq!(
        unit.button(press(Button::Right, 9_999)),
        Err(Refused::QueueFull),
        "refused, the oldest kept"
    );
    assert!(
        presses(&frames(&mut unit, 500_000)).is_empty(),
        "nothing sent before WELCOME"
    );
    unit.receive(&welcome(250, 1000), 600_000);
    let m = frames(&mut unit, 600_000);
    assert!(matches!(m[0], Message::DeviceHeartbeat { .. }));
    let sent = presses(&m);
    assert_eq!(sent.len(), QUEUE);
    assert!(sent
        .iter()
        .enumerate()
        .all(|(i, &(e, t))| e == i as u16 && t == 1_000 + i as u64));
}

#[test]
fn resent_every_100_ms_until_a_cumulative_ack() {
    let mut unit = Unit::new(UnitConfig::buttons(), &identity(), 1, 0);
    frames(&mut unit, 0);
    unit.receive(&welcome(250, 1000), 0);
    frames(&mut unit, 0);
    unit.button(press(Button::Left, 10_000)).unwrap();
    unit.button(press(Button::Right, 20_000)).unwrap();
    assert_eq!(
        presses(&frames(&mut unit, 20_000)),
        [(0, 10_000), (1, 20_000)]
    );
    assert!(presses(&frames(&mut unit, 119_999)).is_empty());
    assert_eq!(
        presses(&frames(&mut unit, 120_000)),
        [(0, 10_000), (1, 20_000)],
        "the whole queue again, same numbers and stamps"
    );
    unit.receive(&bytes(Message::Ack { event: 0 }), 150_000);
    assert_eq!(presses(&frames(&mut unit, 250_000)), [(1, 20_000)]);
    // A stale ACK changes nothing; ACK 1 empties the queue.
    unit.receive(&bytes(Message::Ack { event: 40 }), 260_000);
    assert_eq!(unit.link().pending().count(), 1);
    unit.receive(&bytes(Message::Ack { event: 1 }), 270_000);
    assert_eq!(unit.link().pending().count(), 0);
    assert!(presses(&frames(&mut unit, 500_000)).is_empty());
}

#[test]
fn link_lost_after_t_shows_the_icon_keeps_the_picture_and_the_queue() {
    let config = UnitConfig::combined(DisplayChip::Tm1637, 2);
    let mut unit = Unit::new(config, &identity(), 1, 0);
    frames(&mut unit, 0);
    unit.receive(&welcome(250, 1000), 0);
    unit.receive(&display("4:59", "5:00"), 10_000);
    frames(&mut unit, 10_000);
    unit.button(press(Button::Left, 20_000)).unwrap();
    frames(&mut unit, 20_000);
    // Valid frames keep the link; the last one at 10 ms.
    assert!(!unit.outputs(1_009_999).link_lost);
    let m = frames(&mut unit, 1_010_000);
    assert_eq!(hellos(&m), 1, "HELLO at once on link loss: {m:?}");
    let out = unit.outputs(1_010_000);
    assert!(out.link_lost);
    assert_eq!(
        read_back(&out.panels[0]).as_str(),
        "4:59",
        "last picture kept"
    );
    assert!(out.running[0]);
    assert_eq!(unit.link().pending().count(), 1, "queue kept");
    // The HELLO names the oldest unacknowledged event.
    unit.receive(&bytes(Message::Ack { event: 0 }), 1_100_000);
    assert_eq!(
        unit.link().pending().count(),
        1,
        "no ACK taken before WELCOME"
    );
    unit.receive(&welcome(250, 1000), 1_200_000);
    assert_eq!(presses(&frames(&mut unit, 1_200_000)), [(0, 20_000)]);
    assert!(!unit.outputs(1_200_000).link_lost);
}

#[test]
fn bad_frames_do_not_keep_the_link_alive() {
    let mut unit = Unit::new(UnitConfig::buttons(), &identity(), 1, 0);
    frames(&mut unit, 0);
    unit.receive(&welcome(250, 1000), 0);
    let mut bad = bytes(Message::HostHeartbeat);
    bad[2] ^= 0x40;
    for t in (100_000..1_000_000).step_by(100_000) {
        unit.receive(&bad, t);
        frames(&mut unit, t);
    }
    frames(&mut unit, 1_000_000);
    assert!(unit.outputs(1_000_000).link_lost);
    assert_eq!(unit.link().stats().frame_errors, 9);
}

#[test]
fn host_gone_is_handshake_at_once_and_reconnect_resyncs() {
    let mut unit = Unit::new(UnitConfig::buttons(), &identity(), 1, 0);
    raw(&mut unit, 0);
    unit.receive(&welcome(250, 1000), 0);
    raw(&mut unit, 0);
    unit.host_gone(100_000);
    assert!(unit.outputs(100_000).link_lost);
    unit.host_connected(300_000);
    let r = raw(&mut unit, 300_000);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0][0], 0x00);
    assert!(matches!(
        decode(&r[0][1..r[0].len() - 1]).unwrap().message,
        Message::Hello(_)
    ));
}

#[test]
fn a_welcome_of_another_version_is_naked_and_the_unit_stays_in_handshake() {
    let mut unit = Unit::new(UnitConfig::buttons(), &identity(), 1, 0);
    frames(&mut unit, 0);
    unit.receive(
        &bytes(Message::Welcome {
            protocol_version: 2,
            heartbeat_interval_ms: 250,
            link_timeout_ms: 1000,
        }),
        10,
    );
    assert_eq!(
        frames(&mut unit, 10),
        [Message::Nak {
            code: NakCode::UnsupportedVersion,
            seq: 0
        }]
    );
    assert!(unit.outputs(10).link_lost);
    assert_eq!(hellos(&frames(&mut unit, 500_000)), 1);
}

#[test]
fn a_one_panel_unit_shows_the_left_panel() {
    let mut unit = Unit::new(
        UnitConfig::display(DisplayChip::Max7219, 1),
        &identity(),
        1,
        0,
    );
    let hello = frames(&mut unit, 0);
    let Message::Hello(h) = hello[0] else {
        panic!("{hello:?}")
    };
    assert_eq!((h.capabilities.displays, h.capabilities.digits), (1, 8));
    unit.receive(&display("1:02:03", "0:59.9"), 10);
    let out = unit.outputs(10);
    assert_eq!(out.panel_count, 1);
    assert_eq!(read_back(&out.panels[0]).as_str(), "1:02:03");
    assert_eq!(out.running, [true, false]);
}

#[test]
fn display_leds_and_beep_obeyed_in_handshake_and_only_by_the_right_role() {
    // DISPLAY before any WELCOME is shown (SPEC 6.3), with LINK_LOST.
    let mut display = Unit::new(
        UnitConfig::display(DisplayChip::Tm1637, 2),
        &identity(),
        1,
        0,
    );
    display.receive(&display_bytes(), 0);
    let out = display.outputs(0);
    assert_eq!(read_back(&out.panels[1]).as_str(), "5:00");
    assert!(out.link_lost);
    display.receive(
        &bytes(Message::Leds(chessclock_protocol::Leds {
            left: true,
            right: true,
            arbiter: true,
        })),
        0,
    );
    assert!(
        !display.outputs(0).leds.left,
        "a display unit has no button LEDs"
    );
    assert_eq!(
        display.button(press(Button::Left, 1)),
        Err(Refused::NoSuchButton)
    );

    let mut buttons = Unit::new(UnitConfig::buttons(), &identity(), 1, 0);
    buttons.receive(&display_bytes(), 0);
    assert_eq!(buttons.outputs(0).panel_count, 0);
    assert_eq!(buttons.display_state(), &DisplayState::default());
    buttons.receive(
        &bytes(Message::Beep {
            duration_ms: 100,
            count: 1,
        }),
        0,
    );
    assert!(!buttons.outputs(10).buzzer, "no buzzer fitted");
    assert_eq!(
        buttons.button(ButtonEvent {
            button: Button::Left,
            pressed: false,
            at_us: 5
        }),
        Err(Refused::Release)
    );
}

fn display_bytes() -> Vec<u8> {
    display("4:59", "5:00")
}

#[test]
fn low_power_goes_into_heartbeats_and_onto_the_panels() {
    let mut unit = Unit::new(
        UnitConfig::combined(DisplayChip::Tm1637, 2),
        &identity(),
        1,
        0,
    );
    frames(&mut unit, 0);
    unit.receive(&welcome(250, 1000), 0);
    unit.set_low_power(true);
    assert!(matches!(
        frames(&mut unit, 0)[..],
        [Message::DeviceHeartbeat {
            low_power: true,
            ..
        }]
    ));
    assert!(unit.outputs(0).low_power);
}

#[test]
fn a_power_cycle_is_a_new_boot_with_events_from_zero() {
    let mut a = Unit::new(UnitConfig::buttons(), &identity(), 0xAAAA, 0);
    frames(&mut a, 0);
    a.receive(&welcome(250, 1000), 0);
    frames(&mut a, 0);
    for i in 0..3 {
        a.button(press(Button::Left, i)).unwrap();
    }
    let mut b = Unit::new(UnitConfig::buttons(), &identity(), 0xBBBB, 0);
    let Message::Hello(h) = frames(&mut b, 0)[0] else {
        panic!()
    };
    assert_eq!((h.boot_id, h.first_unacked_event), (0xBBBB, 0));
    assert_eq!(b.button(press(Button::Right, 9)), Ok(0));
}

#[test]
fn no_buttons_from_the_host_blinks_the_link_led_and_is_not_link_lost() {
    let mut unit = Unit::new(
        UnitConfig::display(DisplayChip::Tm1637, 2),
        &identity(),
        1,
        0,
    );
    frames(&mut unit, 0);
    unit.receive(&welcome(1_000, 3_000), 10);
    frames(&mut unit, 10);
    let partner_lost = |t: &str| Panel {
        time: Text::new(t).unwrap(),
        icons: Icons(Icons::NO_BUTTONS.0),
        moves: 0,
        stage: 1,
    };
    unit.receive(
        &bytes(Message::Display(DisplayState {
            left: partner_lost("5:00"),
            right: partner_lost("4:59"),
            text: Text::new("NO BUTTONS").unwrap(),
            brightness: 7,
        })),
        20,
    );
    let lit = unit.outputs(20);
    assert!(lit.no_buttons && !lit.link_lost);
    assert!(lit.link_led, "on in the first half-period");
    assert_eq!(unit.next_deadline(20).min(500_000), 500_000);
    let dark = unit.outputs(500_000);
    assert!(dark.no_buttons && !dark.link_led, "off in the second");
    assert!(unit.outputs(1_000_000).link_led);
    // The button unit back: the host clears the icon, the LED goes out.
    unit.receive(&display("5:00", "4:59"), 1_100_000);
    let back = unit.outputs(1_100_000);
    assert!(!back.no_buttons && !back.link_led);
}
