//! The host rules of `protocol/vectors/vectors.json` (SPEC 1.1) against the
//! daemon's pure cores: the answer to a HELLO (the device session), the
//! time text, brightness and icons (the display rules). check_vectors.py
//! checks the same tables against its own reading of the SPEC.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

use chessclock_core::display::{scale_brightness, ButtonSide, DisplayConfig, DisplayRules, Marks};
use chessclock_core::engine::{ClockState, Side, SideState};
use chessclock_core::session::{Output, Session, SessionConfig};
use chessclock_protocol::{decode, Accumulator, Capabilities, Feed, Message, Roles};
use serde_json::Value;

fn vectors() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../protocol/vectors/vectors.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("vectors.json")).expect("JSON")
}

fn unhex(s: &str) -> Vec<u8> {
    s.split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).unwrap())
        .collect()
}

fn num(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

#[test]
fn handshake_vectors_match_the_session() {
    let v = vectors();
    let wires: Vec<(String, Vec<u8>)> = v["valid"]
        .as_array()
        .unwrap()
        .iter()
        .chain(v["invalid"].as_array().unwrap())
        .map(|x| {
            (
                x["name"].as_str().unwrap().to_owned(),
                unhex(x["wire"].as_str().unwrap()),
            )
        })
        .collect();
    let list = v["handshakes"].as_array().expect("handshakes[]");
    assert!(list.len() >= 10);
    for case in list {
        let name = case["name"].as_str().unwrap();
        let wanted = case["hello"].as_str().or(case["wire"].as_str()).unwrap();
        let wire = &wires.iter().find(|(n, _)| n == wanted).unwrap().1;
        let mut session = Session::new(SessionConfig {
            required_roles: Roles(num(case, "slot_roles") as u8),
            ..SessionConfig::default()
        });
        session.link_up(0);
        let elsewhere = case["linked_elsewhere"].as_bool().unwrap();
        match decode(&wire[..wire.len() - 1]) {
            Ok(frame) => {
                session.on_frame_with(frame, 1, |_| elsewhere.then(|| "another port".to_owned()))
            }
            Err(error) => {
                let mut acc = Accumulator::new();
                assert!(matches!(acc.feed(wire), Feed::Error(..)));
                session.on_bad_frame(error, acc.refused_header(), 1);
            }
        }
        let sent = session.drain_outputs().into_iter().find_map(|o| match o {
            Output::Send(frame) => Some(frame.message),
            _ => None,
        });
        let answer = &case["answer"];
        match (answer["message"].as_str().unwrap(), sent) {
            ("WELCOME", Some(Message::Welcome { .. })) => {}
            ("NAK", Some(Message::Nak { code, seq })) => {
                assert_eq!(u64::from(code.code()), num(answer, "code"), "{name}");
                assert_eq!(u64::from(seq), num(answer, "seq"), "{name}");
            }
            (want, got) => panic!("{name}: want {want}, the session sent {got:?}"),
        }
    }
}

fn side(remaining: Option<i64>, used: i64) -> SideState {
    SideState {
        remaining,
        used,
        moves: 0,
        stage: 1,
        flag_at: None,
        delay_left: None,
        periods_left: None,
        in_overtime: false,
    }
}

#[test]
fn time_text_vectors_match_the_display_rules() {
    let v = vectors();
    let list = v["time_text"].as_array().expect("time_text[]");
    assert!(list.len() >= 30);
    for case in list {
        let config = DisplayConfig {
            tenths_below_ms: num(case, "tenths_below_ms"),
            ..DisplayConfig::default()
        };
        let caps = Capabilities {
            displays: 2,
            digits: num(case, "digits") as u8,
            tenths: case["tenths"].as_bool().unwrap(),
            ..Capabilities::default()
        };
        let rules = DisplayRules::new(&config, &caps, ButtonSide::Left);
        let state = match case.get("remaining_us") {
            Some(r) => side(Some(r.as_i64().unwrap()), 0),
            None => side(None, case["used_us"].as_i64().unwrap()),
        };
        assert_eq!(
            rules.time_text(&state),
            case["text"].as_str().unwrap(),
            "{case}"
        );
    }
}

#[test]
fn brightness_vectors_match_the_scaling() {
    for case in vectors()["brightness"].as_array().unwrap() {
        assert_eq!(
            u64::from(scale_brightness(
                num(case, "setting") as u8,
                num(case, "levels") as u8
            )),
            num(case, "value"),
            "{case}"
        );
    }
}

#[test]
fn icon_vectors_match_the_display_rules() {
    let v = vectors();
    let list = v["icons"].as_array().expect("icons[]");
    assert!(list.len() >= 6);
    for case in list {
        let name = case["name"].as_str().unwrap();
        let parse = |s: &str| Side::parse(s).unwrap();
        let mut state = ClockState {
            t: 0,
            started: true,
            running: case["running"].as_str().map(parse),
            to_move: None,
            paused: case["paused"].as_bool().unwrap(),
            frozen: false,
            flags: vec![],
            white: side(Some(60_000_000), 0),
            black: side(Some(60_000_000), 0),
        };
        let mut marks = Marks {
            buttons_lost: !case["buttons_linked"].as_bool().unwrap(),
            ..Marks::default()
        };
        for flag in case["flags"].as_array().unwrap() {
            let fallen = parse(flag["side"].as_str().unwrap());
            if flag["given_back"] == true {
                // The arbiter gave this side time back: its flag goes, and
                // the mark passes to a flag still down (SPEC 8.2).
                state.flags.retain(|s| *s != fallen);
                match fallen {
                    Side::White => (marks.stage_flag_white, state.white.flag_at) = (false, None),
                    Side::Black => (marks.stage_flag_black, state.black.flag_at) = (false, None),
                }
                if marks.first_flag == Some(fallen) {
                    let other = fallen.other();
                    let down = state.flags.contains(&other)
                        || match other {
                            Side::White => marks.stage_flag_white,
                            Side::Black => marks.stage_flag_black,
                        };
                    marks.first_flag = down.then_some(other);
                }
                continue;
            }
            marks.first_flag.get_or_insert(fallen);
            let last = flag["last_stage"].as_bool().unwrap();
            match fallen {
                Side::White => marks.stage_flag_white = !last,
                Side::Black => marks.stage_flag_black = !last,
            }
            if last {
                state.flags.push(fallen);
                match fallen {
                    Side::White => state.white.flag_at = Some(1),
                    Side::Black => state.black.flag_at = Some(1),
                }
            }
        }
        let white_button = match case["white_button"].as_str().unwrap() {
            "left" => ButtonSide::Left,
            _ => ButtonSide::Right,
        };
        let caps = Capabilities {
            displays: 2,
            digits: 5,
            ..Capabilities::default()
        };
        let shown = DisplayRules::new(&DisplayConfig::default(), &caps, white_button)
            .render(&state, &marks);
        assert_eq!(
            u64::from(shown.left.icons.0),
            num(case, "left"),
            "{name}: left"
        );
        assert_eq!(
            u64::from(shown.right.icons.0),
            num(case, "right"),
            "{name}: right"
        );
    }
}
