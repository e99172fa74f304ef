//! The behaviour vectors (SPEC.md, section 13): what a host answers a
//! HELLO, the panel time text, brightness, icons, a device's
//! retransmissions and the host's time mapping, each computed with the
//! crate's own functions.

use super::*;

fn welcome_answer() -> Value {
    json!({"message": "WELCOME"})
}

fn nak_answer(code: NakCode, seq: u8) -> Value {
    json!({"message": "NAK", "code": code.code(), "seq": seq})
}

/// What a version 1 host answers (SPEC 6.1 item 3, in its order).
pub(super) fn handshakes() -> Value {
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
pub(super) fn time_text() -> Value {
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

pub(super) fn brightness() -> Value {
    Value::Array(
        [(255, 8, 7), (0, 8, 0), (200, 8, 5), (128, 2, 1), (127, 2, 0), (200, 16, 12), (255, 255, 254), (255, 1, 0), (200, 0, 0)]
            .into_iter()
            .map(|(setting, levels, value)| json!({"setting": setting, "levels": levels, "value": value}))
            .collect(),
    )
}

pub(super) fn icons() -> Value {
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
pub(super) fn retransmission() -> Value {
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
pub(super) fn time_mapping() -> Value {
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
