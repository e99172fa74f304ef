//! Transcripts: `recv!(session, at_ms, message => [outputs])` feeds one
//! frame read at an exact instant and checks every output it caused.

use super::*;
use chessclock_protocol::{Capabilities, Panel, Text};

const T0: Micros = 1_000_000_000;

fn ms(n: i64) -> Micros {
    T0 + n * MS
}

fn hello(roles: Roles, serial: &str) -> Hello {
    Hello {
        protocol_version: PROTOCOL_VERSION,
        roles,
        capabilities: Capabilities {
            displays: 2,
            digits: 5,
            tenths: true,
            ..Capabilities::default()
        },
        vendor: Text::truncated("test"),
        model: Text::truncated("unit"),
        serial: Text::truncated(serial),
        firmware: Text::truncated("1.0"),
        boot_id: 1,
        first_unacked_event: 1,
    }
}

fn frame(message: Message) -> Frame {
    Frame { seq: 7, message }
}

fn sent(seq: u8, message: Message) -> Output {
    Output::Send(Frame { seq, message })
}

fn welcome() -> Message {
    Message::Welcome {
        protocol_version: PROTOCOL_VERSION,
        heartbeat_interval_ms: 250,
        link_timeout_ms: 1000,
    }
}

fn press(event: u16, device_time_us: u64) -> Message {
    Message::Button {
        event,
        button: Button::Left,
        pressed: true,
        device_time_us,
    }
}

fn heartbeat(device_time_us: u64) -> Message {
    Message::DeviceHeartbeat {
        device_time_us,
        low_power: false,
    }
}

macro_rules! recv {
    ($s:expr, $at:expr, $msg:expr => [$($out:expr),* $(,)?]) => {{
        $s.on_frame(frame($msg), $at);
        $s.on_tick($at);
        assert_eq!($s.drain_outputs(), vec![$($out),*], "after receiving at {}", $at);
    }};
}

macro_rules! tick {
    ($s:expr, $at:expr => [$($out:expr),* $(,)?]) => {{
        $s.on_tick($at);
        assert_eq!($s.drain_outputs(), vec![$($out),*], "after tick at {}", $at);
    }};
}

macro_rules! command {
    ($s:expr, $at:expr, $cmd:expr => [$($out:expr),* $(,)?]) => {{
        $s.on_command($cmd, $at);
        assert_eq!($s.drain_outputs(), vec![$($out),*], "after command at {}", $at);
    }};
}

fn buttons_session() -> Session {
    let mut s = Session::new(SessionConfig::default());
    s.link_up(ms(0));
    s
}

/// A button session that completed its handshake at `ms(10)` (its
/// WELCOME was frame 0).
fn up_session() -> Session {
    let mut s = buttons_session();
    let h = hello(Roles::BUTTONS, "CC0001");
    recv!(s, ms(10), Message::Hello(h) => [sent(0, welcome()), Output::Connected(h)]);
    s
}

#[test]
fn handshake_welcomes_a_device_with_the_right_version_and_roles() {
    let mut s = buttons_session();
    assert_eq!(s.next_deadline(), Some(ms(3_000)), "HELLO timeout");
    let h = hello(Roles::BUTTONS, "CC0001");
    recv!(s, ms(10), Message::Hello(h) => [sent(0, welcome()), Output::Connected(h)]);
    assert_eq!(s.hello(), Some(&h));
    // Next: the host heartbeat 250 ms after the WELCOME.
    assert_eq!(s.next_deadline(), Some(ms(260)));
    assert_eq!(s.stats().handshakes, 1);
}

#[test]
fn a_combined_unit_satisfies_a_buttons_slot() {
    let mut s = buttons_session();
    let h = hello(Roles(Roles::BUTTONS.0 | Roles::DISPLAY.0), "CC0003");
    recv!(s, ms(1), Message::Hello(h) => [sent(0, welcome()), Output::Connected(h)]);
}

/// SPEC 6.1 item 3: every refused HELLO is answered, each with its NAK.
#[test]
fn spec_6_1_wrong_roles_are_refused_with_a_nak_at_every_hello() {
    let mut s = Session::new(SessionConfig {
        required_roles: Roles(Roles::BUTTONS.0 | Roles::DISPLAY.0),
        ..SessionConfig::default()
    });
    s.link_up(ms(0));
    let h = hello(Roles::DISPLAY, "CC0002");
    let refusal = Refusal::WrongRoles {
        got: Roles::DISPLAY,
        want: Roles(3),
    };
    recv!(s, ms(5), Message::Hello(h) => [
        sent(0, Message::Nak { code: NakCode::Busy, seq: 7 }),
        Output::Refused { hello: h, refusal: refusal.clone() },
    ]);
    assert_eq!(
        refusal.to_string(),
        "device has roles display, this slot needs buttons+display"
    );
    assert_eq!(s.link(), &LinkState::Refused);
    assert_eq!(
        s.next_deadline(),
        None,
        "nothing timed: the device speaks next"
    );
    // It keeps saying HELLO: each one gets its NAK; the reason is reported
    // once.
    recv!(s, ms(505), Message::Hello(h) => [sent(1, Message::Nak { code: NakCode::Busy, seq: 7 })]);
    recv!(s, ms(1_005), Message::Hello(h) => [sent(2, Message::Nak { code: NakCode::Busy, seq: 7 })]);
    tick!(s, ms(60_000) => []);
    assert_eq!(s.stats().hellos_refused, 3);
}

#[test]
fn wrong_version_gets_a_nak_and_is_refused() {
    let mut s = buttons_session();
    let h = Hello {
        protocol_version: PROTOCOL_VERSION + 1,
        ..hello(Roles::BUTTONS, "CC0001")
    };
    let refusal = Refusal::WrongVersion {
        got: PROTOCOL_VERSION + 1,
        want: PROTOCOL_VERSION,
    };
    recv!(s, ms(5), Message::Hello(h) => [
        sent(0, Message::Nak { code: NakCode::UnsupportedVersion, seq: 7 }),
        Output::Refused { hello: h, refusal: refusal.clone() },
    ]);
    assert!(refusal.to_string().contains("protocol version 2"));
    assert_eq!(s.next_deadline(), None);
}

#[test]
fn a_serial_slot_refuses_other_serials_as_wrong_serial() {
    let mut s = Session::new(SessionConfig {
        wanted_serial: Some("CC0009".into()),
        ..SessionConfig::default()
    });
    s.link_up(ms(0));
    // Another device of another kind: "not ours", not "wrong role".
    let other = hello(Roles::DISPLAY, "CC0002");
    s.on_frame(frame(Message::Hello(other)), ms(1));
    match s.drain_outputs().as_slice() {
        [Output::Refused { refusal, .. }] => assert!(refusal.is_wrong_serial()),
        outputs => panic!("unexpected {outputs:?}"),
    }
    let mut s = Session::new(SessionConfig {
        wanted_serial: Some("CC0009".into()),
        ..SessionConfig::default()
    });
    s.link_up(ms(0));
    let ours = hello(Roles::BUTTONS, "CC0009");
    recv!(s, ms(1), Message::Hello(ours) => [sent(0, welcome()), Output::Connected(ours)]);
}

#[test]
fn no_hello_times_out_and_leaves_the_link_down() {
    let mut s = buttons_session();
    tick!(s, ms(2_999) => []);
    tick!(s, ms(3_000) => [Output::HandshakeTimeout]);
    assert_eq!(s.link(), &LinkState::Down);
    assert_eq!(s.next_deadline(), None);
}

#[test]
fn messages_before_hello_are_counted_not_acted_on() {
    let mut s = buttons_session();
    s.on_frame(frame(press(1, 5_000)), ms(1));
    s.on_frame(frame(heartbeat(5_000)), ms(2));
    assert_eq!(s.errors().unexpected, 2);
    assert_eq!(s.next_deadline(), Some(ms(1)), "error report due");
    tick!(s, ms(2) => [Output::Errors { count: 2 }]);
}

#[test]
fn heartbeats_both_ways_and_loss_after_missed_heartbeats() {
    let mut s = up_session();
    tick!(s, ms(259) => []);
    tick!(s, ms(260) => [sent(1, Message::HostHeartbeat)]);
    recv!(s, ms(300), heartbeat(300_000) => []);
    tick!(s, ms(510) => [sent(2, Message::HostHeartbeat)]);
    // The device falls silent after ms(300): lost at ms(1300).
    tick!(s, ms(760) => [sent(3, Message::HostHeartbeat)]);
    tick!(s, ms(1_010) => [sent(4, Message::HostHeartbeat)]);
    tick!(s, ms(1_260) => [sent(5, Message::HostHeartbeat)]);
    assert_eq!(s.next_deadline(), Some(ms(1_300)));
    tick!(s, ms(1_300) => [Output::Disconnected {
        reason: "no frame from the device for 1000 ms (heartbeats missed)".into()
    }]);
    assert_eq!(s.link(), &LinkState::Down);
    assert_eq!(s.next_deadline(), None);
}

#[test]
fn other_frames_replace_the_heartbeat() {
    let mut s = up_session();
    command!(s, ms(200), DeviceCommand::Leds(Leds { left: true, right: false, arbiter: false }) => [
        sent(1, Message::Leds(Leds { left: true, right: false, arbiter: false }))
    ]);
    assert_eq!(s.next_deadline(), Some(ms(450)));
}

#[test]
fn a_press_is_mapped_to_its_device_instant_and_acked_only_on_command() {
    let mut s = up_session();
    // Device clock = host clock - T0 + 5 s, seen by heartbeats that
    // arrive with no delay.
    let dev = |host: Micros| (host - T0 + 5_000_000) as u64;
    recv!(s, ms(50), heartbeat(dev(ms(50))) => []);
    recv!(s, ms(100), heartbeat(dev(ms(100))) => []);
    // Pressed at ms(200), the frame arrives 50 ms late.
    recv!(s, ms(250), press(1, dev(ms(200))) => [Output::Button {
        serial: "CC0001".into(), event: 1, button: Button::Left, pressed: true, at: ms(200), arrival: ms(250)
    }]);
    // No ACK until the runtime committed the press.
    assert_eq!(
        s.next_deadline(),
        Some(ms(260)),
        "only the heartbeat is due"
    );
    command!(s, ms(252), DeviceCommand::Ack { event: 1 } => [sent(1, Message::Ack { event: 1 })]);
}

#[test]
fn a_press_is_never_later_than_its_arrival() {
    let mut s = up_session();
    // Device clock = host clock - T0, seen by a prompt heartbeat.
    recv!(s, ms(20), heartbeat(20_000) => []);
    // Stamped 30 ms after it arrived (a firmware glitch): at its arrival.
    recv!(s, ms(50), press(1, 80_000) => [left(1, ms(50))]);
}

fn left(event: u16, at: Micros) -> Output {
    left_of("CC0001", event, at)
}

fn left_of(serial: &str, event: u16, at: Micros) -> Output {
    left_arrived(serial, event, at, at)
}

fn left_arrived(serial: &str, event: u16, at: Micros, arrival: Micros) -> Output {
    Output::Button {
        serial: serial.into(),
        event,
        button: Button::Left,
        pressed: true,
        at,
        arrival,
    }
}

/// The board core keeps the record of committed events (SPEC §7.2): the
/// session reports every frame of the welcomed unit, resent ones too, and
/// acknowledges exactly what it is told to.
#[test]
fn every_button_frame_is_reported_and_acked_only_on_command() {
    let mut s = up_session();
    // Device clock = host clock - T0: frames without delay map exactly.
    recv!(s, ms(15), heartbeat(15_000) => []);
    recv!(s, ms(20), press(1, 20_000) => [left(1, ms(20))]);
    // Retransmitted before the runtime acknowledged: reported again, with
    // the same device instant; no ACK of its own.
    recv!(s, ms(70), press(1, 20_000) => [Output::Button {
        serial: "CC0001".into(), event: 1, button: Button::Left, pressed: true, at: ms(20), arrival: ms(70)
    }]);
    command!(s, ms(71), DeviceCommand::Ack { event: 1 } => [sent(1, Message::Ack { event: 1 })]);
    assert_eq!(s.stats().button_events, 2);
    // After a replug by another unit, its frames carry its serial.
    s.link_down("unplugged");
    s.drain_outputs();
    s.link_up(ms(3_000));
    let other = hello(Roles::BUTTONS, "CC0077");
    recv!(s, ms(3_010), Message::Hello(other) => [sent(2, welcome()), Output::Connected(other)]);
    recv!(s, ms(3_015), heartbeat(3_015_000) => []);
    recv!(s, ms(3_020), press(1, 3_020_000) => [left_of("CC0077", 1, ms(3_020))]);
}

#[test]
fn an_ack_for_a_unit_that_is_away_is_not_sent() {
    let mut s = up_session();
    recv!(s, ms(15), heartbeat(15_000) => []);
    recv!(s, ms(20), press(1, 20_000) => [left(1, ms(20))]);
    s.link_down("port closed (read returned 0 bytes)");
    s.drain_outputs();
    // The commit's ACK while the unit is away goes nowhere: the unit
    // resends after its HELLO and the board core answers the duplicate.
    command!(s, ms(30), DeviceCommand::Ack { event: 1 } => []);
}

/// Regression (bench finding): the time mapping was reset on every
/// replug, so presses in the first second after a reconnect of the
/// same running device were accounted at their (late) arrival.
#[test]
fn the_time_mapping_survives_a_replug_of_the_same_device_boot() {
    let late = |event: u16, at: Micros, arrival: Micros| Output::Button {
        serial: "CC0001".into(),
        event,
        button: Button::Left,
        pressed: true,
        at,
        arrival,
    };
    let mut s = up_session();
    // Device clock 0 µs = host ms(0): a prompt heartbeat sets the offset.
    recv!(s, ms(20), heartbeat(20_000) => []);
    s.link_down("unplugged");
    s.drain_outputs();
    // Replugged: same serial, same boot. Its first heartbeat is read 30 ms
    // late; a press made at ms(550) arrives 50 ms later and is still
    // accounted at its true instant, by the offset kept from before.
    s.link_up(ms(500));
    let h = hello(Roles::BUTTONS, "CC0001");
    recv!(s, ms(510), Message::Hello(h) => [sent(1, welcome()), Output::Connected(h)]);
    recv!(s, ms(542), heartbeat(512_000) => []);
    recv!(s, ms(600), press(1, 550_000) => [late(1, ms(550), ms(600))]);
    // A rebooted device's clock has another origin: the old offset would
    // place its press at ms(20); its own heartbeat places it.
    s.link_down("unplugged");
    s.drain_outputs();
    s.link_up(ms(600));
    let rebooted = Hello {
        boot_id: 2,
        first_unacked_event: 0,
        ..hello(Roles::BUTTONS, "CC0001")
    };
    recv!(s, ms(610), Message::Hello(rebooted) => [sent(2, welcome()), Output::Connected(rebooted)]);
    recv!(s, ms(615), heartbeat(5) => []);
    recv!(s, ms(660), press(0, 20_000) => [late(0, ms(635) - 5, ms(660))]);
}

/// SPEC.md 9.2 item 8 (soak finding): right after a link-up the mapping
/// rests on the link's first heartbeat, and one read late (a host busy
/// starting up) placed a press the unit queued while unlinked as late. Such
/// a press waits until the link brought four heartbeats; presses behind it
/// wait too, so the order holds.
#[test]
fn spec_9_2_8_a_queued_press_waits_for_four_heartbeats_of_its_link() {
    let mut s = up_session();
    // Device clock = host clock - T0. The first heartbeat is read 20 ms
    // late: by it alone, every instant maps 20 ms late.
    recv!(s, ms(30), heartbeat(10_000) => []);
    // Pressed at ms(5), before the link: held, as is its resend.
    recv!(s, ms(31), press(1, 5_000) => []);
    assert_eq!(s.next_deadline(), Some(ms(260)), "the host heartbeat first");
    recv!(s, ms(131), press(1, 5_000) => []);
    // A live press 20 ms late waits behind it.
    recv!(s, ms(221), press(2, 200_000) => []);
    recv!(s, ms(260), heartbeat(260_000) => [sent(1, Message::HostHeartbeat)]);
    recv!(s, ms(510), heartbeat(510_000) => [sent(2, Message::HostHeartbeat)]);
    // The fourth heartbeat: both placed at their true instants.
    recv!(s, ms(760), heartbeat(760_000) => [
        left_arrived("CC0001", 1, ms(5), ms(31)),
        left_arrived("CC0001", 2, ms(200), ms(221)),
        sent(3, Message::HostHeartbeat),
    ]);
    assert_eq!(s.stats().button_events, 2);
    assert_eq!(s.stats().stamps_rejected, 0);
    // Settled: a later press is placed at once.
    recv!(s, ms(800), press(3, 790_000) => [left_arrived("CC0001", 3, ms(790), ms(800))]);
}

/// A unit that sends no heartbeats does not hold a press for long: four
/// heartbeat intervals after its arrival it is placed by what there is (no
/// mapping at all: its arrival).
#[test]
fn spec_9_2_8_a_held_press_is_placed_after_four_heartbeat_intervals_at_most() {
    let mut s = up_session();
    recv!(s, ms(20), press(1, 123) => []);
    assert_eq!(s.next_deadline(), Some(ms(260)));
    tick!(s, ms(260) => [sent(1, Message::HostHeartbeat)]);
    // Frames keep the link up, not heartbeats.
    recv!(s, ms(500), press(1, 123) => []);
    recv!(s, ms(750), press(1, 123) => [sent(2, Message::HostHeartbeat)]);
    recv!(s, ms(1_000), press(1, 123) => [sent(3, Message::HostHeartbeat)]);
    assert_eq!(s.next_deadline(), Some(ms(1_020)), "the press's deadline");
    tick!(s, ms(1_019) => []);
    tick!(s, ms(1_020) => [left_arrived("CC0001", 1, ms(20), ms(20))]);
}

/// A link that ends with presses held reports them first, mapped by the
/// clock of the boot that stamped them, before a new boot resets it.
#[test]
fn spec_9_2_8_held_presses_are_reported_when_the_link_ends() {
    let mut s = up_session();
    recv!(s, ms(20), heartbeat(20_000) => []);
    recv!(s, ms(40), press(1, 15_000) => []);
    s.link_down("unplugged");
    assert_eq!(
        s.drain_outputs(),
        vec![
            left_arrived("CC0001", 1, ms(15), ms(40)),
            Output::Disconnected {
                reason: "unplugged".into()
            },
        ]
    );
    // The unit restarts within the session (a UART bridge keeps the port).
    let mut s = up_session();
    recv!(s, ms(20), heartbeat(20_000) => []);
    recv!(s, ms(40), press(1, 15_000) => []);
    let rebooted = Hello {
        boot_id: 2,
        ..hello(Roles::BUTTONS, "CC0001")
    };
    s.on_frame(frame(Message::Hello(rebooted)), ms(50));
    let out = s.drain_outputs();
    assert_eq!(
        out.first(),
        Some(&left_arrived("CC0001", 1, ms(15), ms(40)))
    );
    assert!(
        matches!(out.get(1), Some(Output::Disconnected { .. })),
        "{out:?}"
    );
    // And a link that times out.
    let mut s = up_session();
    recv!(s, ms(20), heartbeat(20_000) => []);
    recv!(s, ms(40), press(1, 15_000) => []);
    s.on_tick(ms(1_040));
    let out = s.drain_outputs();
    assert_eq!(
        out.first(),
        Some(&left_arrived("CC0001", 1, ms(15), ms(40)))
    );
    assert!(
        matches!(out.last(), Some(Output::Disconnected { .. })),
        "{out:?}"
    );
}

fn panel_text(time: &str) -> DisplayState {
    DisplayState {
        left: Panel {
            time: Text::truncated(time),
            ..Panel::default()
        },
        ..DisplayState::default()
    }
}

/// SPEC 6.1 item 2: DISPLAY and LEDS once each after a WELCOME; a state
/// rendered before the unit was known waits for the runtime's rendering.
#[test]
fn spec_6_1_display_and_leds_go_out_once_after_welcome() {
    let mut s = Session::new(SessionConfig {
        required_roles: Roles(3),
        ..SessionConfig::default()
    });
    let state = panel_text("1:29:59");
    let leds = Leds {
        left: false,
        right: true,
        arbiter: false,
    };
    // Commands while no device is there: kept, nothing sent.
    command!(s, ms(0), DeviceCommand::Display(state) => []);
    command!(s, ms(0), DeviceCommand::Leds(leds) => []);
    command!(s, ms(0), DeviceCommand::Beep { duration_ms: 100, count: 1 } => []);
    assert_eq!(s.display(), Some(&state));
    s.link_up(ms(1));
    let h = hello(Roles(3), "CC0003");
    // The display state was rendered before any unit was known: the
    // runtime renders it for this one next, so only LEDS go out now.
    recv!(s, ms(2), Message::Hello(h) => [
        sent(0, welcome()),
        Output::Connected(h),
        sent(1, Message::Leds(leds)),
    ]);
    // The runtime's rendering for the unit, and its LEDs again: one DISPLAY,
    // no second LEDS.
    let rendered = panel_text("1:30.00");
    command!(s, ms(3), DeviceCommand::Display(rendered) => [sent(2, Message::Display(rendered))]);
    command!(s, ms(3), DeviceCommand::Leds(leds) => []);
    command!(s, ms(4), DeviceCommand::Display(rendered) => []);
    // Replugged, the same unit: both restored at once, and the runtime's
    // unchanged state after its Connected is not sent again.
    s.link_down("unplugged");
    s.drain_outputs();
    s.link_up(ms(500));
    recv!(s, ms(510), Message::Hello(h) => [
        sent(3, welcome()),
        Output::Connected(h),
        sent(4, Message::Display(rendered)),
        sent(5, Message::Leds(leds)),
    ]);
    command!(s, ms(511), DeviceCommand::Display(rendered) => []);
    command!(s, ms(511), DeviceCommand::Leds(leds) => []);
    // Another unit (other capabilities) on the port: its picture waits for
    // the runtime's rendering for it.
    s.link_down("unplugged");
    s.drain_outputs();
    s.link_up(ms(600));
    let four = Hello {
        capabilities: Capabilities {
            digits: 4,
            ..h.capabilities
        },
        serial: Text::truncated("CC0004"),
        ..h
    };
    recv!(s, ms(610), Message::Hello(four) => [
        sent(6, welcome()),
        Output::Connected(four),
        sent(7, Message::Leds(leds)),
    ]);
}

#[test]
fn bad_frames_are_counted_coalesced_and_change_nothing() {
    let mut s = up_session();
    s.on_frame_error(FrameError::BadCrc, ms(20));
    s.on_frame_error(FrameError::Cobs, ms(20));
    s.on_frame(frame(Message::Unknown { id: 0x7f }), ms(21));
    s.on_frame(frame(Message::HostHeartbeat), ms(21));
    tick!(s, ms(21) => [Output::Errors { count: 4 }]);
    s.on_frame_error(FrameError::Malformed, ms(30));
    s.on_frame_error(FrameError::Oversize, ms(40));
    // Coalesced: not before 100 ms after the last report.
    assert_eq!(s.next_deadline(), Some(ms(121)));
    tick!(s, ms(120) => []);
    tick!(s, ms(121) => [Output::Errors { count: 2 }]);
    let e = s.errors();
    assert_eq!(
        (
            e.bad_crc,
            e.cobs,
            e.malformed,
            e.oversize,
            e.unknown_message,
            e.unexpected
        ),
        (1, 1, 1, 1, 1, 1)
    );
    assert_eq!(e.total(), 6);
    // Still up; errors do not count as liveness: lost 1 s after the HELLO.
    assert!(s.hello().is_some());
    tick!(s, ms(1_010) => [Output::Disconnected {
        reason: "no frame from the device for 1000 ms (heartbeats missed)".into()
    }]);
}

#[test]
fn a_repeated_hello_is_welcomed_again_in_full_with_the_state() {
    let mut s = up_session();
    command!(s, ms(20), DeviceCommand::Leds(Leds { left: true, right: false, arbiter: false }) => [
        sent(1, Message::Leds(Leds { left: true, right: false, arbiter: false }))
    ]);
    // The WELCOME was lost: the device says HELLO again, same boot.
    let h = hello(Roles::BUTTONS, "CC0001");
    recv!(s, ms(500), Message::Hello(h) => [
        sent(2, welcome()),
        Output::Rewelcomed(h),
        sent(3, Message::Leds(Leds { left: true, right: false, arbiter: false })),
    ]);
    // The runtime's LEDs after the reconnect: already sent, not again.
    command!(s, ms(501), DeviceCommand::Leds(Leds { left: true, right: false, arbiter: false }) => []);
    assert_eq!(s.stats().handshakes, 2);
}

#[test]
fn a_hello_with_a_new_boot_id_is_a_device_restart() {
    let mut s = up_session();
    let h = Hello {
        boot_id: 99,
        ..hello(Roles::BUTTONS, "CC0001")
    };
    recv!(s, ms(500), Message::Hello(h) => [
        Output::Disconnected { reason: "device restarted (HELLO with a new boot id)".into() },
        sent(1, welcome()),
        Output::Connected(h),
    ]);
}

#[test]
fn role_names_are_readable() {
    assert_eq!(role_names(Roles(0)), "none");
    assert_eq!(role_names(Roles(0x81)), "buttons+unknown(0x80)");
}

/// SPEC 6.1 item 3 and 5.2: a serial that is empty, has a character outside
/// A-Z a-z 0-9, or is 17 bytes long (a Malformed frame) gets NAK Malformed,
/// at every HELLO.
#[test]
fn spec_6_1_invalid_serials_get_nak_malformed() {
    for bad in ["", "BU-42", "BU 42", "ÄB"] {
        let mut s = buttons_session();
        let h = hello(Roles::BUTTONS, bad);
        s.on_frame(frame(Message::Hello(h)), ms(5));
        let outputs = s.drain_outputs();
        assert_eq!(
            outputs[0],
            sent(
                0,
                Message::Nak {
                    code: NakCode::Malformed,
                    seq: 7
                }
            ),
            "serial {bad:?}"
        );
        assert!(
            matches!(
                &outputs[1],
                Output::Refused {
                    refusal: Refusal::InvalidSerial { .. },
                    ..
                }
            ),
            "serial {bad:?}: {outputs:?}"
        );
        recv!(s, ms(505), Message::Hello(h) => [sent(1, Message::Nak { code: NakCode::Malformed, seq: 7 })]);
        assert_eq!(s.hello(), None);
    }
    // 17 bytes cannot be decoded: the accumulator gives the header of the
    // Malformed frame, and it is answered the same way.
    let mut s = buttons_session();
    s.on_bad_frame(
        FrameError::Malformed,
        Some((chessclock_protocol::ids::HELLO, 9)),
        ms(5),
    );
    assert_eq!(
        s.drain_outputs(),
        vec![sent(
            0,
            Message::Nak {
                code: NakCode::Malformed,
                seq: 9
            }
        )]
    );
    assert_eq!(s.errors().malformed, 1);
    // Other malformed frames get no NAK (SPEC 10.2: MAY), only a count.
    s.on_bad_frame(
        FrameError::Malformed,
        Some((chessclock_protocol::ids::BUTTON, 3)),
        ms(6),
    );
    s.on_bad_frame(FrameError::BadCrc, None, ms(6));
    tick!(s, ms(6) => [Output::Errors { count: 3 }]);
}

/// SPEC 6.1 item 3: a second unit with a serial already linked elsewhere is
/// refused with NAK Busy, and welcomed at its first HELLO after the first
/// unit went away, without a replug.
#[test]
fn spec_6_1_a_duplicate_serial_is_busy_until_the_other_unit_is_gone() {
    let mut s = buttons_session();
    let h = hello(Roles::BUTTONS, "CC0001");
    let elsewhere =
        |serial: &str| (serial == "CC0001").then(|| "board b2, /dev/ttyACM1".to_owned());
    s.on_frame_with(frame(Message::Hello(h)), ms(5), elsewhere);
    let outputs = s.drain_outputs();
    assert_eq!(
        outputs[0],
        sent(
            0,
            Message::Nak {
                code: NakCode::Busy,
                seq: 7
            }
        )
    );
    match &outputs[1] {
        Output::Refused { refusal, .. } => {
            assert!(refusal.is_temporary());
            assert!(
                refusal.to_string().contains("board b2, /dev/ttyACM1"),
                "{refusal}"
            );
        }
        other => panic!("{other:?}"),
    }
    s.on_frame_with(frame(Message::Hello(h)), ms(505), elsewhere);
    assert_eq!(
        s.drain_outputs(),
        vec![sent(
            1,
            Message::Nak {
                code: NakCode::Busy,
                seq: 7
            }
        )]
    );
    // The other unit is gone: the next HELLO is welcomed.
    s.on_frame_with(frame(Message::Hello(h)), ms(1_005), |_| None);
    assert_eq!(
        s.drain_outputs(),
        vec![sent(2, welcome()), Output::Connected(h)]
    );
}

/// SPEC 2: reserved role bits are ignored; a HELLO with no known role is
/// refused with NAK Busy.
#[test]
fn spec_2_reserved_role_bits_are_ignored() {
    let mut s = buttons_session();
    let h = hello(Roles(0x05), "CC0001");
    recv!(s, ms(1), Message::Hello(h) => [sent(0, welcome()), Output::Connected(h)]);
    let mut s = buttons_session();
    let none = hello(Roles(0x04), "CC0001");
    s.on_frame(frame(Message::Hello(none)), ms(1));
    let outputs = s.drain_outputs();
    assert_eq!(
        outputs[0],
        sent(
            0,
            Message::Nak {
                code: NakCode::Busy,
                seq: 7
            }
        )
    );
    assert!(matches!(
        &outputs[1],
        Output::Refused {
            refusal: Refusal::WrongRoles { .. },
            ..
        }
    ));
}

/// SPEC 2: a combined unit in a buttons-only slot is welcomed and used for
/// its buttons: no DISPLAY goes to it (the slot has no display state).
#[test]
fn spec_2_a_combined_unit_in_a_buttons_slot_gets_no_display() {
    let mut s = buttons_session();
    let leds = Leds {
        left: true,
        right: false,
        arbiter: false,
    };
    command!(s, ms(0), DeviceCommand::Leds(leds) => []);
    let h = hello(Roles::COMBINED, "CC0003");
    recv!(s, ms(1), Message::Hello(h) => [
        sent(0, welcome()),
        Output::Connected(h),
        sent(1, Message::Leds(leds)),
    ]);
    recv!(s, ms(2), heartbeat(2_000) => []);
    recv!(s, ms(3), press(1, 3_000) => [left_of("CC0003", 1, ms(3))]);
}

/// Regression (issue 13, SPEC 9.2 item 7): one BUTTON stamped 1.3 s in the
/// future lowered the time mapping, and a normal press a second later was
/// accounted 1.0-1.3 s early.
#[test]
fn regression_a_future_stamped_button_does_not_make_later_presses_early() {
    // No host heartbeats in the way of the transcript.
    let mut s = Session::new(SessionConfig {
        heartbeat_interval: 10_000 * MS,
        link_timeout: 20_000 * MS,
        ..SessionConfig::default()
    });
    s.link_up(ms(0));
    let h = hello(Roles::BUTTONS, "CC0001");
    s.on_frame(frame(Message::Hello(h)), ms(10));
    s.drain_outputs();
    // Device clock = host clock - T0; heartbeats arrive 100 µs late.
    let dev = |host: Micros| (host - T0) as u64;
    for k in 1..=4 {
        recv!(s, ms(k * 250), heartbeat(dev(ms(k * 250)) - 100) => []);
    }
    // Pressed at ms(1_050), stamped 1.3 s later than that (a firmware
    // glitch), arriving at ms(1_051): accounted at its arrival, no earlier.
    recv!(s, ms(1_051), press(1, dev(ms(2_350))) => [Output::Button {
        serial: "CC0001".into(), event: 1, button: Button::Left, pressed: true, at: ms(1_051), arrival: ms(1_051)
    }]);
    assert_eq!(s.stats().stamps_rejected, 1);
    recv!(s, ms(1_250), heartbeat(dev(ms(1_250)) - 100) => []);
    // A normal press a second later, its frame 30 ms late: at its instant.
    recv!(s, ms(2_080), press(2, dev(ms(2_050))) => [Output::Button {
        serial: "CC0001".into(), event: 2, button: Button::Left, pressed: true, at: ms(2_050) + 100, arrival: ms(2_080)
    }]);
    assert_eq!(s.stats().stamps_rejected, 1);
}

/// Bad frames counted just before the link ends are reported with its end,
/// not lost with the session (a corrupted line often ends in a timeout).
#[test]
fn bad_frames_counted_before_the_link_ends_are_reported_not_lost() {
    let mut s = up_session();
    s.on_frame_error(FrameError::BadCrc, ms(20));
    tick!(s, ms(20) => [Output::Errors { count: 1 }]);
    // Within the report's rate limit, then no frame until the timeout.
    s.on_frame_error(FrameError::Cobs, ms(30));
    s.on_frame_error(FrameError::Cobs, ms(40));
    tick!(s, ms(1_010) => [
        Output::Errors { count: 2 },
        Output::Disconnected { reason: "no frame from the device for 1000 ms (heartbeats missed)".into() },
    ]);
    // The same when the shell closes the port.
    let mut s = up_session();
    s.on_frame_error(FrameError::Malformed, ms(20));
    s.on_frame_error(FrameError::Malformed, ms(21));
    s.link_down("unplugged");
    assert_eq!(
        s.drain_outputs(),
        vec![
            Output::Errors { count: 2 },
            Output::Disconnected {
                reason: "unplugged".into()
            },
        ]
    );
}

/// A HELLO repeated while a press is held (the unit timed the link out and
/// came back, same boot): the WELCOME starts the count of the link's
/// heartbeats again, the held press stays held and is placed once the new
/// link brought four; its resend in the queue after the WELCOME changes
/// nothing.
#[test]
fn spec_9_2_8_a_repeated_hello_keeps_the_held_press_until_four_new_heartbeats() {
    let mut s = up_session();
    recv!(s, ms(15), heartbeat(15_000) => []);
    recv!(s, ms(20), press(1, 5_000) => []);
    let h = hello(Roles::BUTTONS, "CC0001");
    recv!(s, ms(100), Message::Hello(h) => [sent(1, welcome()), Output::Rewelcomed(h)]);
    recv!(s, ms(101), heartbeat(101_000) => []);
    recv!(s, ms(102), press(1, 5_000) => []);
    recv!(s, ms(351), heartbeat(351_000) => [sent(2, Message::HostHeartbeat)]);
    recv!(s, ms(601), heartbeat(601_000) => [sent(3, Message::HostHeartbeat)]);
    recv!(s, ms(851), heartbeat(851_000) => [
        left_arrived("CC0001", 1, ms(5), ms(20)),
        sent(4, Message::HostHeartbeat),
    ]);
    assert_eq!(s.stats().button_events, 1);
}

/// The hold is bounded: a unit that floods distinct queued presses before
/// any heartbeat gets its oldest placed (at its arrival: there is no
/// mapping) as each one beyond the bound comes in.
#[test]
fn spec_9_2_8_the_hold_is_bounded() {
    let mut s = up_session();
    for event in 0..MAX_HELD as u16 {
        recv!(s, ms(20), press(event, 1_000 + u64::from(event)) => []);
    }
    recv!(s, ms(21), press(MAX_HELD as u16, 2_000) => [left_arrived("CC0001", 0, ms(20), ms(20))]);
    assert_eq!(s.stats().button_events, 1);
    // The placed press's resend is a duplicate for the board core: reported
    // at once, not held again (which would push the next one out).
    recv!(s, ms(30), press(0, 1_000) => [left_arrived("CC0001", 0, ms(30), ms(30))]);
    assert_eq!(s.stats().button_events, 2);
}

/// The held presses are kept in event order: a press whose first send was
/// lost comes in after the next one, and both go to the board core in the
/// order it expects them (SPEC.md 7.2).
#[test]
fn spec_9_2_8_held_presses_are_placed_in_event_order() {
    let mut s = up_session();
    recv!(s, ms(10), heartbeat(10_000) => []);
    recv!(s, ms(31), press(2, 6_000) => []);
    recv!(s, ms(32), press(1, 5_000) => []);
    recv!(s, ms(260), heartbeat(260_000) => [sent(1, Message::HostHeartbeat)]);
    recv!(s, ms(510), heartbeat(510_000) => [sent(2, Message::HostHeartbeat)]);
    recv!(s, ms(760), heartbeat(760_000) => [
        left_arrived("CC0001", 1, ms(5), ms(32)),
        left_arrived("CC0001", 2, ms(6), ms(31)),
        sent(3, Message::HostHeartbeat),
    ]);
}

/// At the deadline the held press and every press waiting behind it are
/// placed, in order.
#[test]
fn spec_9_2_8_the_deadline_frees_the_presses_behind_the_held_one_too() {
    let mut s = up_session();
    recv!(s, ms(20), heartbeat(20_000) => []);
    recv!(s, ms(21), press(1, 5_000) => []);
    recv!(s, ms(31), press(2, 30_000) => []);
    for at in [260, 510, 760, 1_010] {
        s.on_tick(ms(at));
    }
    s.drain_outputs();
    assert_eq!(s.next_deadline(), Some(ms(1_021)));
    tick!(s, ms(1_021) => [
        left_arrived("CC0001", 1, ms(5), ms(21)),
        left_arrived("CC0001", 2, ms(30), ms(31)),
    ]);
}

/// The shell replacing the link (a new port for the unit) reports the
/// presses held on the old one first.
#[test]
fn spec_9_2_8_a_replaced_link_reports_what_it_held() {
    let mut s = up_session();
    recv!(s, ms(20), heartbeat(20_000) => []);
    recv!(s, ms(40), press(1, 15_000) => []);
    s.link_up(ms(100));
    assert_eq!(
        s.drain_outputs(),
        vec![
            left_arrived("CC0001", 1, ms(15), ms(40)),
            Output::Disconnected {
                reason: "link replaced".into()
            },
        ]
    );
}

/// SPEC.md 9.2 item 8: the ACK still due to a press of a boot that is gone
/// (the unit came back with a new boot id) is not sent to the new boot,
/// which numbers its own events from its own start: it would acknowledge a
/// press of its own the host may not have. The new boot's own ACK goes out.
#[test]
fn spec_9_2_8_an_ack_due_to_an_old_boot_is_not_sent_to_the_new_one() {
    let mut s = up_session();
    recv!(s, ms(15), heartbeat(15_000) => []);
    recv!(s, ms(20), press(1, 5_000) => []);
    let rebooted = Hello {
        boot_id: 2,
        ..hello(Roles::BUTTONS, "CC0001")
    };
    recv!(s, ms(50), Message::Hello(rebooted) => [
        left_arrived("CC0001", 1, ms(5), ms(20)),
        Output::Disconnected { reason: "device restarted (HELLO with a new boot id)".into() },
        sent(1, welcome()),
        Output::Connected(rebooted),
    ]);
    // The old boot's press committed: its ACK goes nowhere.
    command!(s, ms(60), DeviceCommand::Ack { event: 1 } => []);
    // The new boot's press 1, live: placed at once, acknowledged.
    recv!(s, ms(61), heartbeat(1_000) => []);
    recv!(s, ms(63), press(1, 3_000) => [left_arrived("CC0001", 1, ms(63), ms(63))]);
    command!(s, ms(70), DeviceCommand::Ack { event: 1 } => [sent(2, Message::Ack { event: 1 })]);
}

/// Event order is not arrival order: the deadline is the earliest of all
/// held presses, not the first in order's.
#[test]
fn spec_9_2_8_the_deadline_is_the_earliest_held_arrivals() {
    let mut s = up_session();
    recv!(s, ms(20), heartbeat(20_000) => []);
    recv!(s, ms(31), press(2, 6_000) => []);
    recv!(s, ms(200), press(1, 5_000) => []);
    assert_eq!(s.next_deadline(), Some(ms(260)), "the host heartbeat");
    tick!(s, ms(260) => [sent(1, Message::HostHeartbeat)]);
    recv!(s, ms(510), press(2, 6_000) => [sent(2, Message::HostHeartbeat)]);
    recv!(s, ms(760), press(2, 6_000) => [sent(3, Message::HostHeartbeat)]);
    recv!(s, ms(1_010), press(2, 6_000) => [sent(4, Message::HostHeartbeat)]);
    assert_eq!(
        s.next_deadline(),
        Some(ms(1_031)),
        "press 2's, not press 1's"
    );
    tick!(s, ms(1_031) => [
        left_arrived("CC0001", 1, ms(5), ms(200)),
        left_arrived("CC0001", 2, ms(6), ms(31)),
    ]);
}
