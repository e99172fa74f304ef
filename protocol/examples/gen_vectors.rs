//! Writes `vectors/vectors.json` (SPEC.md, section 13): run once with
//! `cargo run -p chessclock-protocol --example gen_vectors`, then review the
//! diff. `tests/vectors.rs` checks every vector both ways against the crate.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

use chessclock_protocol::*;
use serde_json::{json, Map, Value};

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

fn welcome_answer() -> Value {
    json!({"message": "WELCOME"})
}

fn nak_answer(code: NakCode, seq: u8) -> Value {
    json!({"message": "NAK", "code": code.code(), "seq": seq})
}

/// What a version 1 host answers (SPEC 6.1 item 3, in its order).
fn handshakes() -> Value {
    let cases = [
        (
            "buttons_unit_in_buttons_slot",
            json!({"hello": "hello_buttons_example"}),
            1,
            false,
            welcome_answer(),
        ),
        (
            "display_unit_in_buttons_slot",
            json!({"hello": "hello_display"}),
            1,
            false,
            nak_answer(NakCode::Busy, 1),
        ),
        (
            "display_unit_in_display_slot",
            json!({"hello": "hello_display"}),
            2,
            false,
            welcome_answer(),
        ),
        (
            "combined_unit_in_buttons_slot",
            json!({"hello": "hello_largest"}),
            1,
            false,
            welcome_answer(),
        ),
        (
            "combined_unit_in_display_slot",
            json!({"hello": "hello_largest"}),
            2,
            false,
            welcome_answer(),
        ),
        (
            "combined_unit_in_combined_slot",
            json!({"hello": "hello_largest"}),
            3,
            false,
            welcome_answer(),
        ),
        (
            "reserved_role_bit_ignored",
            json!({"hello": "hello_reserved_role_bit"}),
            1,
            false,
            welcome_answer(),
        ),
        (
            "reserved_role_bit_is_no_display",
            json!({"hello": "hello_reserved_role_bit"}),
            2,
            false,
            nak_answer(NakCode::Busy, 2),
        ),
        (
            "no_known_role",
            json!({"hello": "hello_no_known_role"}),
            1,
            false,
            nak_answer(NakCode::Busy, 2),
        ),
        (
            "serial_with_a_dash",
            json!({"hello": "hello_serial_invalid_chars"}),
            1,
            false,
            nak_answer(NakCode::Malformed, 4),
        ),
        (
            "serial_empty",
            json!({"hello": "hello_serial_empty"}),
            1,
            false,
            nak_answer(NakCode::Malformed, 5),
        ),
        (
            "serial_of_17_characters",
            json!({"wire": "hello_serial_17_bytes"}),
            1,
            false,
            nak_answer(NakCode::Malformed, 9),
        ),
        (
            "another_protocol_version",
            json!({"hello": "hello_version_2"}),
            1,
            false,
            nak_answer(NakCode::UnsupportedVersion, 6),
        ),
        (
            "serial_linked_on_another_port",
            json!({"hello": "hello_buttons_example"}),
            1,
            true,
            nak_answer(NakCode::Busy, 0),
        ),
    ];
    Value::Array(
        cases
            .into_iter()
            .map(|(name, hello, roles, elsewhere, answer)| {
                let mut case = json!({"name": name, "slot_roles": roles, "linked_elsewhere": elsewhere, "answer": answer});
                if let (Value::Object(map), Value::Object(h)) = (&mut case, hello) {
                    map.extend(h);
                }
                case
            })
            .collect(),
    )
}

/// SPEC 8.1, at every boundary (written from the rules, checked against the
/// daemon by chessclock-core's tests and by check_vectors.py).
fn time_text() -> Value {
    const S: u64 = 1_000_000;
    let countdown = [
        (5, true, 20_000, 5_400 * S, "1:30:00"),
        (4, true, 20_000, 5_400 * S, "1.30"),
        (4, true, 20_000, 5_370 * S, "1.30"),
        (4, true, 20_000, 5_340 * S, "1.29"),
        (4, true, 20_000, 5_340 * S + 1, "1.30"),
        (4, true, 20_000, 3_600 * S + 1, "1.01"),
        (4, true, 20_000, 3_600 * S, "1.00"),
        (4, true, 20_000, 3_599 * S + 1, "1.00"),
        (4, true, 20_000, 3_599 * S, "59:59"),
        (4, true, 20_000, 360_000 * S, "99.59"),
        (3, true, 20_000, 5_400 * S, "1.30"),
        (0, true, 20_000, 5_400 * S, "1.30"),
        (5, true, 20_000, 35_999 * S, "9:59:59"),
        (5, true, 20_000, 35_999 * S + 1, "10.00"),
        (6, true, 20_000, 36_000 * S, "10:00:00"),
        (5, true, 20_000, 299 * S + 1, "5:00"),
        (5, true, 20_000, 20 * S, "0:20"),
        (5, true, 20_000, 19_900_001, "0:20"),
        (5, true, 20_000, 19_900_000, "0:19.9"),
        (5, true, 20_000, 19_650_000, "0:19.7"),
        (5, true, 20_000, 1, "0:00.1"),
        (5, true, 20_000, 0, "0:00.0"),
        (5, false, 20_000, 19_650_000, "0:20"),
        (5, false, 20_000, 1, "0:01"),
        (5, false, 20_000, 0, "0:00"),
        (4, true, 900_000, 840 * S, "14:00"),
        (4, true, 900_000, 599_900_001, "10:00"),
        (4, true, 900_000, 599_900_000, "9:59.9"),
        (5, true, 900_000, 840 * S, "14:00.0"),
        (5, true, 900_000, 900 * S, "15:00"),
        (5, true, 0, 1, "0:01"),
    ];
    let upcount = [
        (4, 3_600 * S - 1, "59:59"),
        (4, 3_600 * S, "1.00"),
        (4, 5_460 * S - 1, "1.30"),
        (4, 5_460 * S, "1.31"),
        (5, 5_460 * S, "1:31:00"),
        (5, 61 * S + 999_999, "1:01"),
    ];
    let mut cases: Vec<Value> = countdown
        .into_iter()
        .map(|(digits, tenths, below, remaining, text)| {
            json!({"digits": digits, "tenths": tenths, "tenths_below_ms": below, "remaining_us": remaining, "text": text})
        })
        .collect();
    cases.extend(upcount.into_iter().map(|(digits, used, text)| {
        json!({"digits": digits, "tenths": true, "tenths_below_ms": 20_000, "used_us": used, "text": text})
    }));
    Value::Array(cases)
}

fn brightness() -> Value {
    Value::Array(
        [(255, 8, 7), (0, 8, 0), (200, 8, 5), (128, 2, 1), (127, 2, 0), (200, 16, 12), (255, 255, 254), (255, 1, 0), (200, 0, 0)]
            .into_iter()
            .map(|(setting, levels, value)| json!({"setting": setting, "levels": levels, "value": value}))
            .collect(),
    )
}

fn icons() -> Value {
    let (flag, first, stage, running, paused, no_buttons) = (
        Icons::FLAG.0,
        Icons::FIRST_FLAG.0,
        Icons::STAGE_FLAG.0,
        Icons::RUNNING.0,
        Icons::PAUSED.0,
        Icons::NO_BUTTONS.0,
    );
    let last = |side: &str| json!({"side": side, "last_stage": true});
    let non_last = |side: &str| json!({"side": side, "last_stage": false});
    // The arbiter gives this side time back: its flag no longer stands.
    let given_back = |side: &str| json!({"side": side, "given_back": true});
    let case = |name: &str,
                flags: Vec<Value>,
                running_side: Option<&str>,
                is_paused: bool,
                linked: bool,
                white: &str,
                left: u16,
                right: u16| {
        json!({"name": name, "flags": flags, "running": running_side, "paused": is_paused,
               "buttons_linked": linked, "white_button": white, "left": left, "right": right})
    };
    Value::Array(vec![
        case(
            "white_runs",
            vec![],
            Some("white"),
            false,
            true,
            "left",
            running,
            0,
        ),
        case("paused", vec![], None, true, true, "left", paused, paused),
        case(
            "button_unit_lost",
            vec![],
            Some("white"),
            false,
            false,
            "left",
            running | no_buttons,
            no_buttons,
        ),
        case(
            "first_flag_at_the_first_fall",
            vec![last("white")],
            Some("black"),
            false,
            true,
            "left",
            flag | first,
            running,
        ),
        case(
            "both_fell_first_stays_first",
            vec![last("white"), last("black")],
            None,
            false,
            true,
            "left",
            flag | first,
            flag,
        ),
        case(
            "first_flag_passes_when_time_is_given_back",
            vec![
                last("white"),
                last("black"),
                given_back("white"),
                last("white"),
            ],
            None,
            false,
            true,
            "left",
            flag,
            flag | first,
        ),
        case(
            "stage_flag_first",
            vec![non_last("black")],
            Some("white"),
            false,
            true,
            "left",
            running,
            stage | first,
        ),
        case(
            "stage_flag_then_last_flag",
            vec![non_last("black"), last("white")],
            None,
            false,
            true,
            "left",
            flag,
            stage | first,
        ),
        case(
            "white_on_the_right",
            vec![last("white")],
            None,
            false,
            true,
            "right",
            0,
            flag | first,
        ),
    ])
}

/// Every BUTTON a device sends for a script of inputs (the reference
/// device, `DeviceLink`; check_vectors.py simulates SPEC 7.3 on its own).
fn retransmission() -> Value {
    use chessclock_protocol::device::DeviceLink;
    type Step = (u64, &'static str, u16);
    let scripts: [(&str, &str, Vec<Step>, u64); 4] = [
        ("new_event_does_not_restart_the_timer", "two presses 50 ms apart, no ACK: both go out at once and are resent together every 100 ms from the first", vec![(0, "welcome", 0), (0, "press", 0), (50_000, "press", 0)], 350_000),
        ("an_ack_emptying_the_queue_stops_the_timer", "event 0 acknowledged at 30 ms; a press at 60 ms starts the timer afresh", vec![(0, "welcome", 0), (0, "press", 0), (30_000, "ack", 0), (60_000, "press", 0), (170_000, "ack", 1)], 400_000),
        ("an_ack_removing_some_restarts_the_timer", "events 0 and 1 queued, 0 acknowledged at 90 ms: 1 is resent 100 ms after that ACK", vec![(0, "welcome", 0), (0, "press", 0), (10_000, "press", 0), (90_000, "ack", 0)], 300_000),
        ("queued_before_welcome_sent_after_it", "two presses before WELCOME: sent right after it (after the heartbeat), then resent", vec![(0, "press", 0), (20_000, "press", 0), (40_000, "welcome", 0)], 150_000),
    ];
    let mut out = Vec::new();
    for (name, comment, steps, until) in scripts {
        let mut link: DeviceLink<8> = DeviceLink::new(Hello::default(), 0);
        let mut sends = Vec::new();
        let mut next_step = 0usize;
        let mut now = 0u64;
        loop {
            while let Some(&(at, what, event)) = steps.get(next_step) {
                if at > now {
                    break;
                }
                next_step += 1;
                let message = match what {
                    "welcome" => Message::Welcome {
                        protocol_version: 1,
                        heartbeat_interval_ms: 250,
                        link_timeout_ms: 1000,
                    },
                    "ack" => Message::Ack { event },
                    _ => {
                        link.press(Button::Left, true, now).unwrap();
                        continue;
                    }
                };
                link.receive(&Frame { seq: 0, message }, now);
            }
            while let Some(frame) = link.poll(now) {
                if let Message::Button { event, .. } = frame.message {
                    sends.push(json!({"at_us": now, "event": event}));
                }
            }
            let step_at = steps.get(next_step).map_or(u64::MAX, |s| s.0);
            let next = link.next_deadline().max(now + 1).min(step_at);
            if next > until {
                break;
            }
            now = next;
        }
        let steps_json: Vec<Value> = steps
            .iter()
            .map(|&(at, what, event)| match what {
                "ack" => json!({"at_us": at, "do": what, "event": event}),
                _ => json!({"at_us": at, "do": what}),
            })
            .collect();
        out.push(json!({"name": name, "comment": comment, "steps": steps_json, "until_us": until, "sends": sends}));
    }
    Value::Array(out)
}

/// Observations and what the host makes of each button (the reference
/// host, `ClockSync`; check_vectors.py implements SPEC 9.2 on its own).
fn time_mapping() -> Value {
    use chessclock_protocol::timesync::{ClockSync, EventObservation};
    // Device clock = host clock - 5 s; heartbeats 250 ms apart, 100 µs late.
    let host = |d: u64| d as i64 + 5_000_000;
    let heartbeats = |from: u64, to: u64| -> Vec<(&'static str, u64, i64)> {
        (from..=to)
            .map(|k| ("heartbeat", k * 250_000, host(k * 250_000) + 100))
            .collect()
    };
    let mut glitch = heartbeats(1, 8);
    glitch.push(("button", 2_050_000 + 1_300_000, host(2_050_000) + 300));
    glitch.extend(heartbeats(9, 12));
    glitch.push(("button", 3_100_000, host(3_100_000) + 20_000));
    let mut early = heartbeats(1, 4);
    early.push(("button", 1_100_000, host(1_100_000) + 40));
    early.push(("button", 1_150_000, host(1_150_000) - 2_000));
    early.push(("button", 400_000, host(400_000) + 900_000));
    let unchecked = vec![
        ("button", 1_000_000, 7_000_000),
        ("heartbeat", 1_200_000, 6_200_500),
        ("button", 1_300_000, 6_330_000),
    ];
    let scenarios = [
        ("a_button_stamped_in_the_future_is_rejected", "issue 13: a stamp 1.3 s ahead is rejected (mapped to its arrival), the next press is mapped to its true instant + 100 µs", glitch),
        ("buttons_within_the_bound_are_used", "a press frame faster than the heartbeats is used; one 2 ms below them is rejected; a resent old stamp is used and harmless", early),
        ("a_button_before_any_heartbeat_is_unchecked", "nothing to check against: not used, mapped to its arrival", unchecked),
    ];
    let mut out = Vec::new();
    for (name, comment, observations) in scenarios {
        let mut sync = ClockSync::new();
        let mut list = Vec::new();
        for (kind, device, arrival) in observations {
            let mut item = json!({"kind": kind, "device_us": device, "arrival_us": arrival});
            if kind == "heartbeat" {
                sync.observe_heartbeat(device, arrival);
            } else {
                let used = match sync.observe_event(device, arrival) {
                    EventObservation::Used => "used",
                    EventObservation::Rejected { .. } => "rejected",
                    EventObservation::Unchecked => "unchecked",
                };
                item["expect"] = json!({"use": used, "mapped_us": sync.to_host(device, arrival)});
            }
            list.push(item);
        }
        out.push(json!({"name": name, "comment": comment, "observations": list}));
    }
    Value::Array(out)
}
