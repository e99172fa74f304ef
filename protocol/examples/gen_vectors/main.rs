//! Writes `vectors/vectors.json` (SPEC.md, section 13): run once with
//! `cargo run -p chessclock-protocol --example gen_vectors`, then review the
//! diff. `tests/vectors.rs` checks every vector both ways against the crate.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

use chessclock_protocol::*;
use serde_json::{json, Map, Value};

mod behaviour;
use behaviour::{brightness, handshakes, icons, retransmission, time_mapping, time_text};

fn hex(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02X}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn panel_json(p: &Panel) -> Value {
    json!({"time": p.time.as_str(), "icons": p.icons.0, "moves": p.moves, "stage": p.stage})
}

fn fields(m: &Message) -> Value {
    match m {
        Message::Hello(h) => {
            let c = &h.capabilities;
            json!({
                "protocol_version": h.protocol_version, "roles": h.roles.0,
                "displays": c.displays, "digits": c.digits, "tenths": c.tenths,
                "buzzer": c.buzzer, "arbiter_button": c.arbiter_button,
                "brightness_levels": c.brightness_levels, "text_chars": c.text_chars,
                "icons": c.icons.0, "boot_id": h.boot_id,
                "first_unacked_event": h.first_unacked_event,
                "vendor": h.vendor.as_str(), "model": h.model.as_str(),
                "serial": h.serial.as_str(), "firmware": h.firmware.as_str(),
            })
        }
        Message::Button {
            event,
            button,
            pressed,
            device_time_us,
        } => json!({"event": event, "button": button.code(), "pressed": pressed,
                     "device_time_us": device_time_us}),
        Message::DeviceHeartbeat {
            device_time_us,
            low_power,
        } => json!({"device_time_us": device_time_us, "low_power": low_power}),
        Message::Welcome {
            protocol_version,
            heartbeat_interval_ms,
            link_timeout_ms,
        } => json!({"protocol_version": protocol_version,
                     "heartbeat_interval_ms": heartbeat_interval_ms,
                     "link_timeout_ms": link_timeout_ms}),
        Message::Ack { event } => json!({ "event": event }),
        Message::Display(d) => json!({
            "left": panel_json(&d.left), "right": panel_json(&d.right),
            "text": d.text.as_str(), "brightness": d.brightness,
        }),
        Message::Leds(l) => json!({"left": l.left, "right": l.right, "arbiter": l.arbiter}),
        Message::Beep { duration_ms, count } => {
            json!({"duration_ms": duration_ms, "count": count})
        }
        Message::HostHeartbeat => json!({}),
        Message::Nak { code, seq } => json!({"code": code.code(), "seq": seq}),
        Message::Unknown { id } => json!({ "id": id }),
    }
}

fn valid(name: &str, comment: &str, frame: Frame) -> Value {
    let mut raw = [0u8; MAX_FRAME];
    let rn = encode_raw(&frame, &mut raw).unwrap();
    let mut wire = [0u8; MAX_WIRE_FRAME];
    let wn = encode(&frame, &mut wire).unwrap();
    json!({
        "name": name, "comment": comment, "message": frame.message.name(),
        "id": frame.message.id(), "seq": frame.seq, "fields": fields(&frame.message),
        "raw": hex(&raw[..rn]), "wire": hex(&wire[..wn]),
    })
}

/// `body` (id, seq, payload) with its CRC, COBS-encoded, delimited.
fn wire_of_body(body: &[u8]) -> Vec<u8> {
    let mut raw = body.to_vec();
    raw.extend_from_slice(&CRC.checksum(body).to_le_bytes());
    let mut out = vec![0u8; raw.len() + raw.len() / 254 + 2];
    let n = cobs::encode(&raw, &mut out);
    out.truncate(n);
    out.push(0);
    out
}

fn wire_of(frame: &Frame) -> Vec<u8> {
    let mut wire = [0u8; MAX_WIRE_FRAME];
    let n = encode(frame, &mut wire).unwrap();
    wire[..n].to_vec()
}

fn invalid(name: &str, comment: &str, wire: &[u8], error: FrameError) -> Value {
    assert_eq!(
        decode(&wire[..wire.len() - 1]).err(),
        Some(error),
        "vector {name}"
    );
    json!({"name": name, "comment": comment, "wire": hex(wire), "error": format!("{error:?}")})
}

fn text<const N: usize>(s: &str) -> Text<N> {
    Text::new(s).unwrap()
}

fn main() {
    let hello_example = Hello {
        protocol_version: 1,
        roles: Roles::BUTTONS,
        capabilities: Capabilities {
            arbiter_button: true,
            ..Capabilities::default()
        },
        vendor: text("ACME"),
        model: text("B1"),
        serial: text("BU00042"),
        firmware: text("1.0.0"),
        boot_id: 0x1234_5678,
        first_unacked_event: 0,
    };
    let hello_display = Hello {
        protocol_version: 1,
        roles: Roles::DISPLAY,
        capabilities: Capabilities {
            displays: 2,
            digits: 5,
            tenths: true,
            icons: Icons(0x01FF),
            buzzer: true,
            brightness_levels: 8,
            arbiter_button: false,
            text_chars: 8,
        },
        vendor: text("ACME"),
        model: text("LED-2x5"),
        serial: text("DU7F3A"),
        firmware: text("2.1.0-rc1"),
        boot_id: 0xDEAD_BEEF,
        first_unacked_event: 0,
    };
    let long = text::<16>("ABCDEFGHIJKLMNOP");
    let hello_max = Hello {
        protocol_version: 1,
        roles: Roles::COMBINED,
        capabilities: Capabilities {
            displays: 2,
            digits: 6,
            tenths: true,
            icons: Icons(0xFFFF),
            buzzer: true,
            brightness_levels: 255,
            arbiter_button: true,
            text_chars: 16,
        },
        vendor: long,
        model: long,
        serial: long,
        firmware: long,
        boot_id: u32::MAX,
        first_unacked_event: 65535,
    };
    let display = DisplayState {
        left: Panel {
            time: text("1:29:59"),
            icons: Icons::RUNNING.union(Icons::BONUS),
            moves: 12,
            stage: 1,
        },
        right: Panel {
            time: text("0:19.7"),
            icons: Icons(0),
            moves: 11,
            stage: 1,
        },
        text: Text::empty(),
        brightness: 5,
    };
    let display_paused = DisplayState {
        left: Panel {
            time: text("0:00"),
            icons: Icons::FLAG.union(Icons::FIRST_FLAG).union(Icons::PAUSED),
            moves: 40,
            stage: 2,
        },
        right: Panel {
            time: text("12:00"),
            icons: Icons::PAUSED.union(Icons::STAGE_FLAG),
            moves: 0xFFFF,
            stage: 0,
        },
        text: text("ARBITER"),
        brightness: 0,
    };
    let display_no_buttons = DisplayState {
        left: Panel {
            time: text("4:59"),
            icons: Icons::RUNNING.union(Icons::NO_BUTTONS),
            moves: 3,
            stage: 1,
        },
        right: Panel {
            time: text("5:00"),
            icons: Icons::NO_BUTTONS,
            moves: 2,
            stage: 1,
        },
        text: text("NO BUTTONS"),
        brightness: 5,
    };
    let display_four_digits = DisplayState {
        left: Panel {
            time: text("1.30"),
            icons: Icons::RUNNING,
            moves: 20,
            stage: 1,
        },
        right: Panel {
            time: text("59:59"),
            icons: Icons(0),
            moves: 19,
            stage: 1,
        },
        text: Text::empty(),
        brightness: 7,
    };
    let f = |seq, message| Frame { seq, message };
    let valid_list = [
        (
            "hello_buttons_example",
            "SPEC.md section 12, step 1",
            f(0, Message::Hello(hello_example)),
        ),
        (
            "hello_display",
            "a two-panel display unit with every icon",
            f(1, Message::Hello(hello_display)),
        ),
        (
            "hello_largest",
            "the largest HELLO: 16-byte strings, all bits set (83-byte payload)",
            f(255, Message::Hello(hello_max)),
        ),
        (
            "button_left_press",
            "SPEC.md section 12, step 4",
            f(
                5,
                Message::Button {
                    event: 258,
                    button: Button::Left,
                    pressed: true,
                    device_time_us: 1_234_567,
                },
            ),
        ),
        (
            "button_right_release",
            "a release",
            f(
                6,
                Message::Button {
                    event: 259,
                    button: Button::Right,
                    pressed: false,
                    device_time_us: 1_334_567,
                },
            ),
        ),
        (
            "button_arbiter_wrapped",
            "event number 65535 (the next is 0); a large device time",
            f(
                0,
                Message::Button {
                    event: 65535,
                    button: Button::Arbiter,
                    pressed: true,
                    device_time_us: 4_000_000_000_000,
                },
            ),
        ),
        (
            "button_reserved_code",
            "button code 7 is reserved: decodes, the host ignores and ACKs it",
            f(
                7,
                Message::Button {
                    event: 1,
                    button: Button::Unknown(7),
                    pressed: true,
                    device_time_us: 0,
                },
            ),
        ),
        (
            "device_heartbeat",
            "device clock 1 s",
            f(
                3,
                Message::DeviceHeartbeat {
                    device_time_us: 1_000_000,
                    low_power: false,
                },
            ),
        ),
        (
            "device_heartbeat_low_power",
            "low-power flag set",
            f(
                4,
                Message::DeviceHeartbeat {
                    device_time_us: 86_400_000_000,
                    low_power: true,
                },
            ),
        ),
        (
            "welcome_default",
            "SPEC.md section 12, step 2",
            f(
                0,
                Message::Welcome {
                    protocol_version: 1,
                    heartbeat_interval_ms: 250,
                    link_timeout_ms: 1000,
                },
            ),
        ),
        (
            "ack",
            "SPEC.md section 12, step 5",
            f(9, Message::Ack { event: 258 }),
        ),
        (
            "ack_zero",
            "ACK of event 0: payload of zero bytes, COBS at work",
            f(0, Message::Ack { event: 0 }),
        ),
        (
            "display_running",
            "left running with increment, right in tenths",
            f(10, Message::Display(display)),
        ),
        (
            "display_flags_paused",
            "flags, paused, text, no move counter on the right",
            f(11, Message::Display(display_paused)),
        ),
        (
            "display_blank",
            "everything empty",
            f(12, Message::Display(DisplayState::default())),
        ),
        (
            "leds_left",
            "left LED on",
            f(
                13,
                Message::Leds(Leds {
                    left: true,
                    right: false,
                    arbiter: false,
                }),
            ),
        ),
        (
            "leds_all",
            "all LEDs on",
            f(
                14,
                Message::Leds(Leds {
                    left: true,
                    right: true,
                    arbiter: true,
                }),
            ),
        ),
        (
            "beep",
            "three beeps of 100 ms",
            f(
                15,
                Message::Beep {
                    duration_ms: 100,
                    count: 3,
                },
            ),
        ),
        (
            "host_heartbeat",
            "SPEC.md section 12, step 6",
            f(0, Message::HostHeartbeat),
        ),
        (
            "nak_unsupported_version",
            "refusing a HELLO of seq 0",
            f(
                1,
                Message::Nak {
                    code: NakCode::UnsupportedVersion,
                    seq: 0,
                },
            ),
        ),
        (
            "nak_busy",
            "refusing a HELLO of seq 4",
            f(
                2,
                Message::Nak {
                    code: NakCode::Busy,
                    seq: 4,
                },
            ),
        ),
        (
            "unknown_id",
            "id 0x7E is not defined in version 1: ignored and counted",
            f(8, Message::Unknown { id: 0x7E }),
        ),
        (
            "display_no_buttons",
            "SPEC 8.2 (1.1): the board's button unit is not linked: NO_BUTTONS on both panels, never LINK_LOST",
            f(16, Message::Display(display_no_buttons)),
        ),
        (
            "display_four_digits",
            "SPEC 8.1 (1.1): a 4-digit unit, 1 h 29 min 30 s left as H.MM, the other side below one hour",
            f(17, Message::Display(display_four_digits)),
        ),
        (
            "nak_malformed_hello",
            "SPEC 6.1 (1.1): refusing a HELLO of seq 3 whose serial is not valid",
            f(
                3,
                Message::Nak {
                    code: NakCode::Malformed,
                    seq: 3,
                },
            ),
        ),
        (
            "hello_reserved_role_bit",
            "roles 0x05: a button unit with a reserved bit set, which a host ignores (SPEC 2)",
            f(2, Message::Hello(Hello { roles: Roles(0x05), ..hello_example })),
        ),
        (
            "hello_no_known_role",
            "roles 0x04: no role a host knows (refused with NAK Busy, SPEC 2)",
            f(2, Message::Hello(Hello { roles: Roles(0x04), ..hello_example })),
        ),
        (
            "hello_serial_invalid_chars",
            "serial `BU-42`: a valid frame, refused by a host with NAK Malformed (SPEC 5.2)",
            f(4, Message::Hello(Hello { serial: text("BU-42"), ..hello_example })),
        ),
        (
            "hello_serial_empty",
            "an empty serial: a valid frame, refused by a host with NAK Malformed (SPEC 5.2)",
            f(5, Message::Hello(Hello { serial: Text::empty(), ..hello_example })),
        ),
        (
            "hello_version_2",
            "protocol_version 2: refused by a version 1 host with NAK UnsupportedVersion",
            f(6, Message::Hello(Hello { protocol_version: 2, ..hello_example })),
        ),
    ];
    let mut valid_json: Vec<Value> = valid_list
        .iter()
        .map(|(n, c, fr)| valid(n, c, *fr))
        .collect();
    // An unknown id with a payload: decodes (payload unchecked), cannot be
    // re-encoded to the same bytes.
    let unknown_payload = wire_of_body(&[0xC0, 0x21, 0x01, 0x02, 0x03]);
    assert_eq!(
        decode(&unknown_payload[..unknown_payload.len() - 1]),
        Ok(f(0x21, Message::Unknown { id: 0xC0 }))
    );
    valid_json.push(json!({
        "name": "unknown_id_with_payload", "comment": "decode only: an unknown id's payload is not checked",
        "decode_only": true, "message": "UNKNOWN", "id": 0xC0, "seq": 0x21, "fields": {"id": 0xC0},
        "raw": hex(&{ let mut r = vec![0xC0, 0x21, 1, 2, 3]; r.extend_from_slice(&CRC.checksum(&[0xC0, 0x21, 1, 2, 3]).to_le_bytes()); r }),
        "wire": hex(&unknown_payload),
    }));

    let ack_wire = wire_of(&f(9, Message::Ack { event: 258 }));
    let mut bad_crc = ack_wire.clone();
    let last = bad_crc.len() - 2;
    bad_crc[last] ^= 0x01;
    let mut bad_payload = ack_wire.clone();
    bad_payload[3] ^= 0x80; // event byte
    let mut oversize = vec![0x41u8; 130];
    oversize.push(0);
    let mut max_cobs_bad = vec![0x41u8; 129];
    max_cobs_bad.push(0);
    let invalid_list = vec![
        invalid(
            "bad_crc_last_byte",
            "the ACK vector with the CRC's last byte changed",
            &bad_crc,
            FrameError::BadCrc,
        ),
        invalid(
            "bad_crc_payload_bit",
            "the ACK vector with one payload bit flipped",
            &bad_payload,
            FrameError::BadCrc,
        ),
        invalid(
            "cobs_code_past_end",
            "code byte 05 promises 4 bytes, 2 follow",
            &[0x05, 0x01, 0x02, 0x00],
            FrameError::Cobs,
        ),
        invalid(
            "oversize_130",
            "130 non-zero bytes before the delimiter: more than a 128-byte frame can encode to",
            &oversize,
            FrameError::Oversize,
        ),
        invalid(
            "longest_cobs_but_invalid",
            "129 bytes (the largest allowed) that are not valid COBS",
            &max_cobs_bad,
            FrameError::Cobs,
        ),
        invalid(
            "too_short",
            "a decoded frame of 5 bytes (id, seq, 3 bytes): shorter than id + seq + CRC-32",
            &[0x06, 0x86, 0x01, 0x02, 0x03, 0x04, 0x00],
            FrameError::Malformed,
        ),
        invalid(
            "ack_payload_too_long",
            "ACK with 3 payload bytes, valid CRC",
            &wire_of_body(&[0x82, 0x00, 0x01, 0x02, 0x03]),
            FrameError::Malformed,
        ),
        invalid(
            "button_payload_too_short",
            "BUTTON with 11 payload bytes, valid CRC",
            &wire_of_body(&[0x02, 0x00, 1, 0, 0, 1, 1, 2, 3, 4, 5, 6, 7]),
            FrameError::Malformed,
        ),
        invalid(
            "button_pressed_not_bool",
            "BUTTON with pressed = 2",
            &wire_of_body(&[0x02, 0x00, 1, 0, 0, 2, 1, 2, 3, 4, 5, 6, 7, 8]),
            FrameError::Malformed,
        ),
        invalid(
            "host_heartbeat_with_payload",
            "HOST_HEARTBEAT must be empty",
            &wire_of_body(&[0x86, 0x00, 0x00]),
            FrameError::Malformed,
        ),
        invalid(
            "display_time_too_long",
            "DISPLAY whose left time has 11 bytes (maximum 10)",
            &wire_of_body(&[
                0x83, 0x00, 11, b'1', b'1', b':', b'1', b'1', b':', b'1', b'1', b'.', b'1', b'1',
                0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            ]),
            FrameError::Malformed,
        ),
        invalid(
            "hello_vendor_not_utf8",
            "HELLO whose vendor is the byte FF",
            &wire_of_body(&[
                0x01, 0x00, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xFF, 0, 1, b'S', 0,
            ]),
            FrameError::Malformed,
        ),
        invalid(
            "hello_serial_17_bytes",
            "HELLO whose serial has 17 characters (maximum 16): Malformed; a host answers NAK Malformed with seq 9 (SPEC 5.2, 6.1)",
            &wire_of_body(&hello_serial_17()),
            FrameError::Malformed,
        ),
        invalid(
            "hello_string_past_end",
            "HELLO whose firmware length byte says 5, 1 byte follows",
            &wire_of_body(&[
                0x01, 0x00, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, b'S', 5, b'x',
            ]),
            FrameError::Malformed,
        ),
    ];

    let hb = wire_of(&f(
        3,
        Message::DeviceHeartbeat {
            device_time_us: 1_000_000,
            low_power: false,
        },
    ));
    let press = wire_of(&f(
        5,
        Message::Button {
            event: 258,
            button: Button::Left,
            pressed: true,
            device_time_us: 1_234_567,
        },
    ));
    let cat = |parts: &[&[u8]]| -> Vec<u8> { parts.concat() };
    let streams = [
        ("two_frames_with_idle_delimiters", "leading and repeated 00 bytes are empty frames, skipped",
         cat(&[&[0, 0], &hb, &[0, 0, 0], &press]),
         vec![json!({"frame": "device_heartbeat"}), json!({"frame": "button_left_press"})]),
        ("garbage_then_frame", "line noise before a frame is one refused frame",
         cat(&[&[0x11, 0x22, 0x33, 0x00], &press]),
         vec![json!({"error": "Cobs"}), json!({"frame": "button_left_press"})]),
        ("oversize_then_frame", "an overlong frame is reported once, then reception resumes",
         cat(&[&oversize, &press]),
         vec![json!({"error": "Oversize"}), json!({"frame": "button_left_press"})]),
        ("corrupted_then_frame", "a frame with a bad CRC does not hide the next one",
         cat(&[&bad_crc, &hb]),
         vec![json!({"error": "BadCrc"}), json!({"frame": "device_heartbeat"})]),
        ("truncated_then_frame", "a frame cut off (e.g. by an unplug) runs into the next: one error, then the next frame after the next delimiter",
         cat(&[&press[..8], &hb, &press]),
         vec![json!({"error": stream_error(&cat(&[&press[..8], &hb]))}), json!({"frame": "button_left_press"})]),
    ];
    let streams_json: Vec<Value> = streams
        .iter()
        .map(|(n, c, b, e)| json!({"name": n, "comment": c, "bytes": hex(b), "expect": e}))
        .collect();

    let mut doc = Map::new();
    doc.insert("format".into(), json!([
        "chessclock protocol v1 test vectors (SPEC.md section 13). Hex strings are bytes separated by spaces.",
        "valid[]: a frame. 'raw' is the decoded frame (id, seq, payload, CRC-32/ISO-HDLC little-endian); 'wire' is its COBS encoding plus the 00 delimiter.",
        "valid[].fields: the message fields by SPEC.md name; enums as their wire codes (button, NAK code); booleans as true/false; strings as UTF-8; icons and roles as integers; the bit sets HELLO flags, DEVICE_HEARTBEAT status and LEDS leds as one boolean per bit (tenths/buzzer/arbiter_button, low_power, left/right/arbiter).",
        "A conforming encoder turns (message, seq, fields) into exactly 'wire'; a conforming decoder turns 'wire' into exactly (message, seq, fields). decode_only vectors are checked one way.",
        "invalid[]: one delimited frame a receiver must refuse with 'error': Cobs, BadCrc, Oversize or Malformed (SPEC.md 4.4).",
        "streams[]: a byte stream and, in order, the frames (by valid[] name) and errors a receiver must find in it, whatever the read boundaries.",
        "handshakes[] (SPEC 2, 5.2, 6.1, 10.2): a HELLO ('hello': a valid[] name, or 'wire': an invalid[] name) given to a host port whose slot needs 'slot_roles' (a role bit set), with 'linked_elsewhere' true when another port of the host has a unit of that serial linked; 'answer' is what the host sends: {message: WELCOME} or {message: NAK, code, seq}.",
        "time_text[] (SPEC 8.1): a unit's 'digits' and 'tenths' flag, the host's 'tenths_below_ms', and a countdown 'remaining_us' or an upcount 'used_us'; 'text' is the panel time the host sends.",
        "brightness[] (SPEC 5.7): a host 'setting' 0..255 and a unit's 'levels'; 'value' is the DISPLAY brightness byte.",
        "icons[] (SPEC 8.2): the flags fallen in order ('side', 'last_stage'), the 'running' side or null, 'paused', 'buttons_linked' and 'white_button' (left/right); the icon bits of the 'left' and 'right' panels of a two-panel unit showing both sides (BONUS and ARBITER not involved).",
        "retransmission[] (SPEC 6.1, 7.3): a device's inputs at device instants (µs): 'welcome' (v1, heartbeat 250 ms, link timeout 1000 ms), 'press' (a new event), 'ack' (of 'event'); 'sends' is every BUTTON the device sends up to 'until_us', as (at_us, event), in order.",
        "time_mapping[] (SPEC 9.2): observations in arrival order, each 'heartbeat' or 'button' with 'device_us' and 'arrival_us' (host µs), no rate estimated yet (under 30 s), delta 1000 µs; each button's 'expect': 'use' (used, rejected or unchecked by item 7) and 'mapped_us' (item 4 and 5).",
        "All integers are below 2^53."
    ]));
    doc.insert("protocol_version".into(), json!(PROTOCOL_VERSION));
    doc.insert("crc".into(), json!({"name": "CRC-32/ISO-HDLC", "check_123456789": format!("{:08X}", CRC.checksum(b"123456789"))}));
    doc.insert("valid".into(), Value::Array(valid_json));
    doc.insert("invalid".into(), Value::Array(invalid_list));
    doc.insert("streams".into(), Value::Array(streams_json));
    doc.insert("handshakes".into(), handshakes());
    doc.insert("time_text".into(), time_text());
    doc.insert("brightness".into(), brightness());
    doc.insert("icons".into(), icons());
    doc.insert("retransmission".into(), retransmission());
    doc.insert("time_mapping".into(), time_mapping());
    let text = serde_json::to_string_pretty(&Value::Object(doc)).unwrap() + "\n";
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/vectors/vectors.json");
    std::fs::create_dir_all(concat!(env!("CARGO_MANIFEST_DIR"), "/vectors")).unwrap();
    std::fs::write(path, text).unwrap();
    println!("wrote {path}");
}

/// What the decoder says about one delimited chunk (for the truncation vector).
fn stream_error(chunk: &[u8]) -> String {
    let mut acc = Accumulator::new();
    match acc.feed(chunk) {
        Feed::Error(e, _) => format!("{e:?}"),
        other => panic!("expected an error, got {other:?}"),
    }
}

/// A HELLO body (id, seq 9, payload) whose serial has 17 characters.
fn hello_serial_17() -> Vec<u8> {
    let mut body = vec![
        0x01, 9, 1, 0x01, 0, 0, 0, 0, 0, 0, 0, 0x78, 0x56, 0x34, 0x12, 0, 0,
    ];
    body.extend_from_slice(&[4, b'A', b'C', b'M', b'E']);
    body.extend_from_slice(&[2, b'B', b'1']);
    body.push(17);
    body.extend_from_slice(b"BU000420000000042");
    body.extend_from_slice(&[5, b'1', b'.', b'0', b'.', b'0']);
    body
}
