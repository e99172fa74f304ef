//! The firmware logic against `protocol/vectors/vectors.json`: a unit built
//! like the SPEC's worked example sends the example's frames byte for byte;
//! every host-to-device vector, fed as wire bytes, has the effect the SPEC
//! gives it (or is refused and counted, changing nothing); the byte streams
//! give the stated frames and errors whatever the read boundaries.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

use chessclock_firmware::config::{DisplayChip, Identity, UnitConfig};
use chessclock_firmware::debounce::ButtonEvent;
use chessclock_firmware::render::read_back;
use chessclock_firmware::unit::{Outputs, Unit, TX_BUFFER};
use chessclock_protocol::{decode, Button, Frame, Message, NakCode};
use serde_json::Value;

fn vectors() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../protocol/vectors/vectors.json"
    );
    let text = std::fs::read_to_string(path).expect("protocol/vectors/vectors.json readable");
    serde_json::from_str(&text).expect("vectors.json is JSON")
}

fn unhex(s: &str) -> Vec<u8> {
    s.split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).expect("hex byte"))
        .collect()
}

fn valid(name: &str) -> Value {
    vectors()["valid"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == name)
        .unwrap_or_else(|| panic!("no valid vector {name}"))
        .clone()
}

fn wire(name: &str) -> Vec<u8> {
    unhex(valid(name)["wire"].as_str().unwrap())
}

/// Everything the unit transmits at `now`, as separate byte strings.
fn sent(unit: &mut Unit, now: u64) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut buf = [0u8; TX_BUFFER];
    while let Some(n) = unit.transmit(now, &mut buf) {
        out.push(buf[..n].to_vec());
    }
    out
}

fn frames(unit: &mut Unit, now: u64) -> Vec<Frame> {
    sent(unit, now)
        .into_iter()
        .map(|bytes| {
            let body: Vec<u8> = bytes.into_iter().filter(|&b| b != 0).collect();
            decode(&body).expect("the unit sends valid frames")
        })
        .collect()
}

/// The SPEC's example button unit (section 12).
fn example_buttons(now: u64) -> Unit {
    let identity = Identity::new("ACME", "B1", "BU00042", "1.0.0");
    Unit::new(UnitConfig::buttons(), &identity, 0x1234_5678, now)
}

fn display_unit() -> Unit {
    let identity = Identity::new("chessclockd", "pico-display", "DU7F3A", "0.1.0");
    Unit::new(
        UnitConfig::display(DisplayChip::Max7219, 2),
        &identity,
        7,
        0,
    )
}

fn linked(mut unit: Unit, now: u64) -> Unit {
    sent(&mut unit, now);
    unit.receive(&wire("welcome_default"), now);
    sent(&mut unit, now);
    unit
}

#[test]
fn the_example_units_hello_is_the_vector_after_a_resync_zero() {
    let mut unit = example_buttons(0);
    let out = sent(&mut unit, 0);
    assert_eq!(out.len(), 1);
    let mut expected = vec![0x00];
    expected.extend(wire("hello_buttons_example"));
    assert_eq!(out[0], expected, "HELLO bytes");
}

#[test]
fn welcome_vector_links_and_the_heartbeat_at_once_is_the_vector() {
    let mut unit = example_buttons(0);
    // HELLO at 0, 500 and 1000 ms take seq 0, 1, 2 ...
    for t in [0, 500_000, 1_000_000] {
        assert_eq!(sent(&mut unit, t).len(), 1, "one HELLO at {t}");
        assert!(sent(&mut unit, t + 1).is_empty());
    }
    unit.receive(&wire("welcome_default"), 1_000_000);
    assert!(!unit.link().link_lost());
    // ... so the heartbeat at once is seq 3 at 1 000 000 µs: SPEC 12 step 3.
    assert_eq!(sent(&mut unit, 1_000_000), vec![wire("device_heartbeat")]);
}

#[test]
fn button_vector_event_258_and_ack_vector_acknowledges_it() {
    let mut unit = linked(example_buttons(1_230_000), 1_230_000);
    for i in 0..258u16 {
        let event = unit
            .button(ButtonEvent {
                button: Button::Right,
                pressed: true,
                at_us: u64::from(i),
            })
            .unwrap();
        assert_eq!(event, i);
        let ack = Frame {
            seq: 0,
            message: Message::Ack { event: i },
        };
        let mut w = [0u8; 16];
        let n = chessclock_protocol::encode(&ack, &mut w).unwrap();
        sent(&mut unit, 1_230_000);
        unit.receive(&w[..n], 1_230_000);
    }
    assert_eq!(unit.link().pending().count(), 0);
    unit.button(ButtonEvent {
        button: Button::Left,
        pressed: true,
        at_us: 1_234_567,
    })
    .unwrap();
    let out = frames(&mut unit, 1_240_000);
    let press = out
        .iter()
        .find(|f| matches!(f.message, Message::Button { .. }))
        .expect("BUTTON sent at once");
    let vector = decode(&wire("button_left_press")[..wire("button_left_press").len() - 1]).unwrap();
    assert_eq!(press.message, vector.message);
    unit.receive(&wire("ack"), 1_250_000);
    assert_eq!(
        unit.link().pending().count(),
        0,
        "ACK 258 removes event 258"
    );
}

#[test]
fn display_vectors_show_right_aligned_with_their_icons() {
    let mut unit = linked(display_unit(), 0);
    unit.receive(&wire("display_running"), 1_000);
    let out: Outputs = unit.outputs(1_000);
    assert_eq!(out.panel_count, 2);
    assert_eq!(read_back(&out.panels[0]).as_str(), "1:29:59");
    assert_eq!(read_back(&out.panels[1]).as_str(), "0:19.7");
    assert_eq!(out.running, [true, false]);
    assert_eq!(out.flag, [false, false]);
    assert!(!out.paused && !out.link_lost);
    assert_eq!(out.brightness, 5);

    unit.receive(&wire("display_flags_paused"), 2_000);
    // Left: FLAG | FIRST_FLAG | PAUSED: the flag LED blinks (4 Hz).
    let on = unit.outputs(2_000);
    let off = unit.outputs(130_000);
    assert!(on.flag[0] && !off.flag[0]);
    assert_eq!(unit.next_deadline(2_000), 125_000);
    // Right: STAGE_FLAG | PAUSED: slow blink.
    assert!(on.flag[1] && !unit.outputs(600_000).flag[1]);
    assert!(on.paused);
    assert_eq!(read_back(&on.panels[0]).as_str(), "0:00");
    assert_eq!(read_back(&on.panels[1]).as_str(), "12:00");

    unit.receive(&wire("display_blank"), 3_000);
    let out = unit.outputs(3_000);
    assert_eq!(read_back(&out.panels[0]).as_str(), "");
    assert_eq!(out.flag, [false, false]);
}

#[test]
fn leds_beep_heartbeat_and_nak_vectors() {
    let mut unit = linked(example_buttons(0), 0);
    unit.receive(&wire("leds_left"), 10);
    let l = unit.outputs(10).leds;
    assert!(l.left && !l.right && !l.arbiter);
    unit.receive(&wire("leds_all"), 20);
    let l = unit.outputs(20).leds;
    assert!(l.left && l.right && l.arbiter);

    let received = unit.link().stats().frames_received;
    unit.receive(&wire("host_heartbeat"), 900_000);
    assert_eq!(unit.link().stats().frames_received, received + 1);
    // The heartbeat was a valid frame: no link loss at 1000 ms after WELCOME.
    sent(&mut unit, 1_100_000);
    assert!(!unit.link().link_lost());

    unit.receive(&wire("nak_unsupported_version"), 1_100_000);
    unit.receive(&wire("nak_busy"), 1_100_000);
    assert_eq!(unit.link().stats().naks_received, 2);

    let mut display = linked(display_unit(), 0);
    display.receive(&wire("beep"), 1_000_000);
    let buzz = |t| display.outputs(t).buzzer;
    assert!(buzz(1_000_000) && !buzz(1_150_000) && buzz(1_250_000) && buzz(1_450_000));
    assert!(!buzz(1_500_000));
    display.set_muted(true);
    assert!(
        !display.outputs(1_000_000).buzzer,
        "the alarm switch silences it"
    );
}

#[test]
fn unknown_ids_are_ignored_counted_and_naked() {
    let mut unit = linked(display_unit(), 0);
    unit.receive(&wire("display_running"), 10);
    let before = unit.outputs(10);
    for (n, name) in ["unknown_id", "unknown_id_with_payload"]
        .into_iter()
        .enumerate()
    {
        unit.receive(&wire(name), 20);
        assert_eq!(unit.link().stats().unknown_messages, n as u64 + 1);
        assert_eq!(unit.outputs(10), before, "{name} changes nothing");
        // The reference device answers an unknown id with NAK UnknownMessage
        // naming the frame's sequence number (SPEC 10.2).
        let seq = valid(name)["seq"].as_u64().unwrap() as u8;
        let out = frames(&mut unit, 40);
        assert_eq!(
            out.iter().map(|f| f.message).collect::<Vec<_>>(),
            [Message::Nak {
                code: NakCode::UnknownMessage,
                seq
            }],
            "{name}"
        );
    }
}

#[test]
fn every_invalid_vector_is_counted_and_changes_nothing() {
    let invalid = vectors()["invalid"].as_array().unwrap().clone();
    assert!(invalid.len() >= 10);
    let mut unit = linked(display_unit(), 0);
    unit.receive(&wire("display_running"), 10);
    let before = unit.outputs(10);
    let received = unit.link().stats().frames_received;
    for (i, v) in invalid.iter().enumerate() {
        unit.receive(&unhex(v["wire"].as_str().unwrap()), 20);
        assert_eq!(
            unit.link().stats().frame_errors,
            i as u64 + 1,
            "{} must be refused",
            v["name"]
        );
    }
    assert_eq!(unit.link().stats().frames_received, received);
    assert_eq!(unit.outputs(10), before);
}

#[test]
fn streams_give_their_frames_and_errors_whatever_the_splits() {
    for s in vectors()["streams"].as_array().unwrap() {
        let bytes = unhex(s["bytes"].as_str().unwrap());
        let expect = s["expect"].as_array().unwrap();
        let frames = expect.iter().filter(|e| e.get("frame").is_some()).count() as u64;
        let errors = expect.iter().filter(|e| e.get("error").is_some()).count() as u64;
        for split in 0..=bytes.len() {
            let mut unit = display_unit();
            unit.receive(&bytes[..split], 0);
            unit.receive(&bytes[split..], 0);
            let stats = unit.link().stats();
            assert_eq!(stats.frames_received, frames, "{} split {split}", s["name"]);
            assert_eq!(stats.frame_errors, errors, "{} split {split}", s["name"]);
            // They are device-to-host frames: wrong direction at a device.
            assert_eq!(stats.unknown_messages, frames);
        }
    }
}
