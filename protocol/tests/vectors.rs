//! Checks every vector of `vectors/vectors.json` both ways: the fields,
//! turned into a frame here (independently of the generator), must encode to
//! the vector's bytes, and the bytes must decode to those fields; invalid
//! frames must be refused with the stated error; streams must yield the
//! stated frames and errors whatever the read boundaries.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

use chessclock_protocol::*;
use serde_json::Value;

fn vectors() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/vectors/vectors.json");
    let text = std::fs::read_to_string(path).expect("vectors/vectors.json readable");
    serde_json::from_str(&text).expect("vectors/vectors.json is JSON")
}

fn unhex(s: &str) -> Vec<u8> {
    s.split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).expect("hex byte"))
        .collect()
}

fn num(v: &Value, key: &str) -> u64 {
    v.get(key)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("integer field {key} in {v}"))
}

fn flag(v: &Value, key: &str) -> bool {
    v.get(key)
        .and_then(Value::as_bool)
        .unwrap_or_else(|| panic!("boolean field {key} in {v}"))
}

fn text<const N: usize>(v: &Value, key: &str) -> Text<N> {
    let s = v
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("string field {key} in {v}"));
    Text::new(s).unwrap_or_else(|| panic!("{key} too long"))
}

fn panel(v: &Value) -> Panel {
    Panel {
        time: text(v, "time"),
        icons: Icons(num(v, "icons") as u16),
        moves: num(v, "moves") as u16,
        stage: num(v, "stage") as u8,
    }
}

fn message(kind: &str, f: &Value) -> Message {
    match kind {
        "HELLO" => Message::Hello(Hello {
            protocol_version: num(f, "protocol_version") as u8,
            roles: Roles(num(f, "roles") as u8),
            capabilities: Capabilities {
                displays: num(f, "displays") as u8,
                digits: num(f, "digits") as u8,
                tenths: flag(f, "tenths"),
                icons: Icons(num(f, "icons") as u16),
                buzzer: flag(f, "buzzer"),
                brightness_levels: num(f, "brightness_levels") as u8,
                arbiter_button: flag(f, "arbiter_button"),
                text_chars: num(f, "text_chars") as u8,
            },
            vendor: text(f, "vendor"),
            model: text(f, "model"),
            serial: text(f, "serial"),
            firmware: text(f, "firmware"),
            boot_id: num(f, "boot_id") as u32,
            first_unacked_event: num(f, "first_unacked_event") as u16,
        }),
        "BUTTON" => Message::Button {
            event: num(f, "event") as u16,
            button: match num(f, "button") {
                0 => Button::Left,
                1 => Button::Right,
                2 => Button::Arbiter,
                c => Button::Unknown(c as u8),
            },
            pressed: flag(f, "pressed"),
            device_time_us: num(f, "device_time_us"),
        },
        "DEVICE_HEARTBEAT" => Message::DeviceHeartbeat {
            device_time_us: num(f, "device_time_us"),
            low_power: flag(f, "low_power"),
        },
        "WELCOME" => Message::Welcome {
            protocol_version: num(f, "protocol_version") as u8,
            heartbeat_interval_ms: num(f, "heartbeat_interval_ms") as u16,
            link_timeout_ms: num(f, "link_timeout_ms") as u16,
        },
        "ACK" => Message::Ack {
            event: num(f, "event") as u16,
        },
        "DISPLAY" => Message::Display(DisplayState {
            left: panel(&f["left"]),
            right: panel(&f["right"]),
            text: text(f, "text"),
            brightness: num(f, "brightness") as u8,
        }),
        "LEDS" => Message::Leds(Leds {
            left: flag(f, "left"),
            right: flag(f, "right"),
            arbiter: flag(f, "arbiter"),
        }),
        "BEEP" => Message::Beep {
            duration_ms: num(f, "duration_ms") as u16,
            count: num(f, "count") as u8,
        },
        "HOST_HEARTBEAT" => Message::HostHeartbeat,
        "NAK" => Message::Nak {
            code: match num(f, "code") {
                1 => NakCode::BadCrc,
                2 => NakCode::Oversize,
                3 => NakCode::UnknownMessage,
                4 => NakCode::Malformed,
                5 => NakCode::UnsupportedVersion,
                6 => NakCode::Busy,
                c => NakCode::Unknown(c as u8),
            },
            seq: num(f, "seq") as u8,
        },
        "UNKNOWN" => Message::Unknown {
            id: num(f, "id") as u8,
        },
        other => panic!("unknown message kind {other}"),
    }
}

fn frame_of(v: &Value) -> Frame {
    let kind = v["message"].as_str().expect("message kind");
    Frame {
        seq: num(v, "seq") as u8,
        message: message(kind, &v["fields"]),
    }
}

fn error_name(e: FrameError) -> String {
    format!("{e:?}")
}

#[test]
fn crc_check_value_matches_spec() {
    let v = vectors();
    assert_eq!(v["crc"]["name"], "CRC-32/ISO-HDLC");
    assert_eq!(v["crc"]["check_123456789"], "CBF43926");
    assert_eq!(CRC.checksum(b"123456789"), 0xCBF4_3926);
}

#[test]
fn valid_vectors_both_ways() {
    let v = vectors();
    let list = v["valid"].as_array().expect("valid[]");
    assert!(list.len() >= 20, "too few valid vectors");
    for vec in list {
        let name = vec["name"].as_str().unwrap();
        let frame = frame_of(vec);
        let wire = unhex(vec["wire"].as_str().unwrap());
        let raw = unhex(vec["raw"].as_str().unwrap());
        assert_eq!(wire.last(), Some(&0), "{name}: delimiter");
        assert_eq!(decode(&wire[..wire.len() - 1]), Ok(frame), "{name}: decode");
        assert_eq!(decode_raw(&raw), Ok(frame), "{name}: decode_raw");
        assert_eq!(num(vec, "id") as u8, frame.message.id(), "{name}: id");
        let mut acc = Accumulator::new();
        assert_eq!(
            acc.feed(&wire),
            Feed::Frame(frame, &[]),
            "{name}: accumulator"
        );
        if vec.get("decode_only").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        let mut out = [0u8; MAX_WIRE_FRAME];
        let n = encode(&frame, &mut out).expect("fits");
        assert_eq!(&out[..n], &wire[..], "{name}: encode");
        let mut out_raw = [0u8; MAX_FRAME];
        let n = encode_raw(&frame, &mut out_raw).expect("fits");
        assert_eq!(&out_raw[..n], &raw[..], "{name}: encode_raw");
        // The CRC in the vector is the CRC of the bytes before it.
        let (body, crc) = raw.split_at(raw.len() - 4);
        assert_eq!(
            CRC.checksum(body).to_le_bytes(),
            crc,
            "{name}: CRC little-endian"
        );
    }
}

#[test]
fn invalid_vectors_are_refused_with_the_stated_error() {
    let v = vectors();
    let list = v["invalid"].as_array().expect("invalid[]");
    assert!(list.len() >= 10);
    for vec in list {
        let name = vec["name"].as_str().unwrap();
        let wire = unhex(vec["wire"].as_str().unwrap());
        let expected = vec["error"].as_str().unwrap();
        let got = decode(&wire[..wire.len() - 1]).expect_err(name);
        assert_eq!(error_name(got), expected, "{name}: decode");
        let mut acc = Accumulator::new();
        match acc.feed(&wire) {
            Feed::Error(e, rest) => {
                assert_eq!(error_name(e), expected, "{name}: accumulator");
                assert!(rest.is_empty());
            }
            other => panic!("{name}: accumulator gave {other:?}"),
        }
    }
}

#[derive(Debug, PartialEq)]
enum Found {
    Frame(Frame),
    Error(String),
}

fn run_stream(chunks: &[&[u8]]) -> Vec<Found> {
    let mut acc = Accumulator::new();
    let mut found = Vec::new();
    for chunk in chunks {
        let mut rest: &[u8] = chunk;
        loop {
            match acc.feed(rest) {
                Feed::NeedMore => break,
                Feed::Frame(f, r) => {
                    found.push(Found::Frame(f));
                    rest = r;
                }
                Feed::Error(e, r) => {
                    found.push(Found::Error(error_name(e)));
                    rest = r;
                }
            }
        }
    }
    found
}

#[test]
fn stream_vectors_whatever_the_read_boundaries() {
    let v = vectors();
    let valid = v["valid"].as_array().unwrap();
    let by_name = |n: &str| {
        frame_of(
            valid
                .iter()
                .find(|x| x["name"] == n)
                .unwrap_or_else(|| panic!("no valid vector {n}")),
        )
    };
    let list = v["streams"].as_array().expect("streams[]");
    assert!(list.len() >= 4);
    for s in list {
        let name = s["name"].as_str().unwrap();
        let bytes = unhex(s["bytes"].as_str().unwrap());
        let expected: Vec<Found> = s["expect"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| match (e.get("frame"), e.get("error")) {
                (Some(f), None) => Found::Frame(by_name(f.as_str().unwrap())),
                (None, Some(err)) => Found::Error(err.as_str().unwrap().to_string()),
                _ => panic!("{name}: bad expectation {e}"),
            })
            .collect();
        assert_eq!(run_stream(&[&bytes]), expected, "{name}: one read");
        let single: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(run_stream(&single), expected, "{name}: byte by byte");
        for cut in 0..=bytes.len() {
            let (a, b) = bytes.split_at(cut);
            assert_eq!(run_stream(&[a, b]), expected, "{name}: split at {cut}");
        }
    }
}

/// SPEC 7.3 (1.1): the reference device sends each BUTTON when the
/// retransmission vectors say (a new event does not restart the timer).
#[test]
fn retransmission_vectors_match_the_reference_device() {
    use chessclock_protocol::device::DeviceLink;
    let v = vectors();
    let list = v["retransmission"].as_array().expect("retransmission[]");
    assert!(list.len() >= 4);
    for case in list {
        let name = case["name"].as_str().unwrap();
        let steps = case["steps"].as_array().unwrap();
        let until = num(case, "until_us");
        let mut link: DeviceLink<8> = DeviceLink::new(Hello::default(), 0);
        let mut sends = Vec::new();
        let mut next = 0usize;
        let mut now = 0u64;
        loop {
            while let Some(step) = steps.get(next).filter(|s| num(s, "at_us") <= now) {
                next += 1;
                match step["do"].as_str().unwrap() {
                    "welcome" => {
                        link.receive(
                            &Frame {
                                seq: 0,
                                message: Message::Welcome {
                                    protocol_version: 1,
                                    heartbeat_interval_ms: 250,
                                    link_timeout_ms: 1000,
                                },
                            },
                            now,
                        );
                    }
                    "ack" => {
                        link.receive(
                            &Frame {
                                seq: 0,
                                message: Message::Ack {
                                    event: num(step, "event") as u16,
                                },
                            },
                            now,
                        );
                    }
                    "press" => {
                        link.press(Button::Left, true, now).unwrap();
                    }
                    other => panic!("{name}: unknown step {other}"),
                }
            }
            while let Some(frame) = link.poll(now) {
                if let Message::Button { event, .. } = frame.message {
                    sends.push((now, event));
                }
            }
            let step_at = steps.get(next).map_or(u64::MAX, |s| num(s, "at_us"));
            let wake = link.next_deadline().max(now + 1).min(step_at);
            if wake > until {
                break;
            }
            now = wake;
        }
        let want: Vec<(u64, u16)> = case["sends"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (num(s, "at_us"), num(s, "event") as u16))
            .collect();
        assert_eq!(sends, want, "{name}");
    }
}

/// SPEC 9.2 (1.1): the reference host's mapping uses, rejects and maps each
/// button observation as the vectors say.
#[test]
fn time_mapping_vectors_match_the_reference_host() {
    use chessclock_protocol::timesync::{ClockSync, EventObservation};
    let v = vectors();
    let list = v["time_mapping"].as_array().expect("time_mapping[]");
    assert!(list.len() >= 3);
    for case in list {
        let name = case["name"].as_str().unwrap();
        let mut sync = ClockSync::new();
        for ob in case["observations"].as_array().unwrap() {
            let device = num(ob, "device_us");
            let arrival = num(ob, "arrival_us") as i64;
            if ob["kind"] == "heartbeat" {
                sync.observe_heartbeat(device, arrival);
                continue;
            }
            let used = match sync.observe_event(device, arrival) {
                EventObservation::Used => "used",
                EventObservation::Rejected { .. } => "rejected",
                EventObservation::Unchecked => "unchecked",
            };
            assert_eq!(used, ob["expect"]["use"], "{name}: {ob}");
            assert_eq!(
                sync.to_host(device, arrival),
                ob["expect"]["mapped_us"].as_i64().unwrap(),
                "{name}: {ob}"
            );
        }
    }
}

/// SPEC 10.2 (1.1): a Malformed HELLO with a valid CRC can be named in a NAK.
#[test]
fn a_malformed_hello_vector_has_a_readable_header() {
    let v = vectors();
    let vector = v["invalid"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "hello_serial_17_bytes")
        .expect("hello_serial_17_bytes");
    let wire = unhex(vector["wire"].as_str().unwrap());
    assert_eq!(frame_header(&wire[..wire.len() - 1]), Some((ids::HELLO, 9)));
    let mut acc = Accumulator::new();
    assert!(matches!(
        acc.feed(&wire),
        Feed::Error(FrameError::Malformed, _)
    ));
    assert_eq!(acc.refused_header(), Some((ids::HELLO, 9)));
    // A frame with a bad CRC names nothing.
    let bad = unhex(
        v["invalid"].as_array().unwrap()[0]["wire"]
            .as_str()
            .unwrap(),
    );
    assert_eq!(frame_header(&bad[..bad.len() - 1]), None);
}
