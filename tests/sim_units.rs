//! The simulator's units over real PTYs, driven through the library API with
//! this test playing the host (the daemon's side of the protocol).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;
use std::sync::Mutex;
use std::time::Duration;

use chessclock_host::clock::monotonic_now_us;
use chessclock_protocol::{Button, DisplayState, Icons, Message, Roles, Text};
use chessclock_sim_units::{
    self as sim, Direction, LinkState, LogTarget, SimOptions, UnitKind, UnitSpec,
};
use kit::units::{eventually, log_lines, Host, WAIT};

/// PTY-heavy tests run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn lock() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn buttons_options(dir: &std::path::Path) -> SimOptions {
    let mut buttons: UnitSpec = "buttons=buttons,serial=CC0001,offset-us=7000000"
        .parse()
        .unwrap();
    buttons.link = Some(dir.join("cc/buttons"));
    SimOptions {
        units: vec![buttons],
        log: Some(LogTarget::File(dir.join("log.jsonl"))),
        log_sent: true,
        seed: Some(42),
    }
}

fn button_event(m: &Message) -> Option<(u16, u64)> {
    match m {
        Message::Button {
            event,
            device_time_us,
            ..
        } => Some((*event, *device_time_us)),
        _ => None,
    }
}

#[test]
fn handshake_then_a_press_is_resent_until_acknowledged_and_logged() {
    let _serial = lock();
    let dir = tempfile::tempdir().unwrap();
    let units = sim::spawn_units(&buttons_options(dir.path())).unwrap();
    let link = dir.path().join("cc/buttons");
    assert_eq!(units.path("buttons"), Some(&link));
    let mut host = Host::open(&link);

    let hello = host.handshake(250, 1000);
    assert_eq!(hello.serial.as_str(), "CC0001");
    assert_eq!(hello.roles, Roles::BUTTONS);
    assert!(hello.capabilities.arbiter_button);
    assert_eq!(hello.capabilities.displays, 0);
    units
        .wait_until("buttons", WAIT, |s| s.link_state == LinkState::Up)
        .unwrap();

    let before = monotonic_now_us();
    units.press(None, Button::Left).unwrap();
    let after = monotonic_now_us();
    let first = host.expect(WAIT, "BUTTON", |m| button_event(m).is_some());
    let (event, device_time) = button_event(&first.frame.message).unwrap();
    assert!(matches!(
        first.frame.message,
        Message::Button {
            button: Button::Left,
            pressed: true,
            ..
        }
    ));
    // The device clock started at 7 s: the stamp is in its time base.
    assert!(device_time >= 7_000_000, "{device_time}");
    // Not acknowledged: the same event comes again, same stamp.
    let again = host.expect(WAIT, "retransmission", |m| button_event(m).is_some());
    assert_eq!(
        button_event(&again.frame.message),
        Some((event, device_time))
    );
    assert!(
        again.at_us - first.at_us >= 80_000,
        "resent after the 100 ms interval"
    );

    host.send(Message::Ack { event });
    units
        .wait_until("buttons", WAIT, |s| s.unacked == 0 && s.stats.acks == 1)
        .unwrap();
    // Acknowledged: no more copies (heartbeats go on).
    let later = host.listen(Duration::from_millis(300));
    assert!(
        later
            .iter()
            .all(|a| button_event(&a.frame.message).is_none()),
        "{later:?}"
    );
    assert!(later
        .iter()
        .any(|a| matches!(a.frame.message, Message::DeviceHeartbeat { .. })));

    units.shutdown();
    assert!(
        std::fs::symlink_metadata(&link).is_err(),
        "symlink removed on exit"
    );
    let log = log_lines(&dir.path().join("log.jsonl"));
    let press = log
        .iter()
        .find(|r| r["kind"] == "press")
        .expect("press logged");
    let press_at = press["t_us"].as_i64().unwrap();
    assert!(
        before <= press_at && press_at <= after,
        "true press instant {press_at} in [{before}, {after}]"
    );
    assert_eq!(press["device_us"].as_u64(), Some(device_time));
    assert_eq!(press["button"], "left");
    assert!(log
        .iter()
        .any(|r| r["kind"] == "rx" && r["msg"]["type"] == "welcome"));
    assert!(log
        .iter()
        .any(|r| r["kind"] == "rx" && r["msg"]["type"] == "ack" && r["msg"]["event"] == event));
    let ack = log.iter().find(|r| r["kind"] == "ack").expect("ack logged");
    assert!(ack["sends"].as_u64().unwrap() >= 2);
    assert!(log.iter().any(|r| r["kind"] == "tx"
        && r["msg"]["type"] == "hello"
        && r["msg"]["serial"] == "CC0001"));
    assert!(log
        .iter()
        .all(|r| r["t_us"].is_i64() && r["unit"] == "buttons"));
}

#[test]
fn duplicates_are_sent_when_asked() {
    let _serial = lock();
    let dir = tempfile::tempdir().unwrap();
    let units = sim::spawn_units(&buttons_options(dir.path())).unwrap();
    let mut host = Host::open(units.path("buttons").unwrap());
    host.handshake(250, 1000);
    units
        .duplicate("buttons", 2, Duration::from_secs(2))
        .unwrap();
    units.press(None, Button::Right).unwrap();
    let first = host.expect(WAIT, "BUTTON", |m| button_event(m).is_some());
    // The copies are byte-identical (same frame seq); retransmissions carry
    // a new seq, so they are not counted here.
    let copies: Vec<_> = host
        .listen(Duration::from_millis(300))
        .into_iter()
        .filter(|a| a.frame == first.frame)
        .collect();
    assert_eq!(copies.len(), 2, "two extra copies of {:?}", first.frame);
    host.send(Message::Ack {
        event: button_event(&first.frame.message).unwrap().0,
    });
    units
        .wait_until("buttons", WAIT, |s| s.unacked == 0)
        .unwrap();
}

#[test]
fn bit_errors_make_the_host_see_bad_frames_then_clean_ones_again() {
    let _serial = lock();
    let dir = tempfile::tempdir().unwrap();
    let units = sim::spawn_units(&buttons_options(dir.path())).unwrap();
    let mut host = Host::open(units.path("buttons").unwrap());
    host.handshake(20, 1000);
    units
        .corrupt(
            "buttons",
            0.02,
            Direction::ToHost,
            Duration::from_millis(400),
        )
        .unwrap();
    assert!(
        host.until(WAIT, |h| h.errors.len() >= 3),
        "errors seen: {:?}",
        host.errors
    );
    assert!(host.errors.iter().any(|e| matches!(
        e,
        chessclock_protocol::FrameError::BadCrc | chessclock_protocol::FrameError::Cobs
    )));
    // After the window, heartbeats decode again (the host keeps answering so
    // the link stays up).
    std::mem::take(&mut host.frames);
    let deadline = std::time::Instant::now() + WAIT;
    let errors_after_window = loop {
        host.send(Message::HostHeartbeat);
        let frames = host.listen(Duration::from_millis(50));
        if units.snapshot("buttons").unwrap().faults_active {
            assert!(
                std::time::Instant::now() < deadline,
                "fault window never ended"
            );
            continue;
        }
        let errors = host.errors.len();
        let clean = host.listen(Duration::from_millis(100));
        assert!(!frames.is_empty() || !clean.is_empty());
        break host.errors.len() - errors;
    };
    assert_eq!(errors_after_window, 0, "no errors once the window ended");
    let log = log_lines(&dir.path().join("log.jsonl"));
    assert!(log
        .iter()
        .any(|r| r["kind"] == "tx" && r["flipped_bits"].as_u64().unwrap_or(0) > 0));
    assert!(log
        .iter()
        .any(|r| r["kind"] == "fault" && r["fault"] == "corrupt"));
}

#[test]
fn delayed_delivery_keeps_the_true_press_timestamp() {
    let _serial = lock();
    let dir = tempfile::tempdir().unwrap();
    let units = sim::spawn_units(&buttons_options(dir.path())).unwrap();
    let mut host = Host::open(units.path("buttons").unwrap());
    host.handshake(250, 5000);
    units
        .delay(
            "buttons",
            Duration::from_millis(300),
            Duration::from_secs(1),
        )
        .unwrap();
    let before = monotonic_now_us();
    units.press(None, Button::Left).unwrap();
    let arrival = host.expect(WAIT, "delayed BUTTON", |m| button_event(m).is_some());
    assert!(
        arrival.at_us - before >= 300_000,
        "held {} µs",
        arrival.at_us - before
    );
    let (_, device_time) = button_event(&arrival.frame.message).unwrap();
    units.shutdown();
    let log = log_lines(&dir.path().join("log.jsonl"));
    let press = log.iter().find(|r| r["kind"] == "press").unwrap();
    assert_eq!(press["device_us"].as_u64(), Some(device_time));
    let sent = log
        .iter()
        .find(|r| r["kind"] == "tx" && r["msg"]["type"] == "button")
        .unwrap();
    assert_eq!(sent["delayed_us"], 300_000);
}

#[test]
fn unplug_removes_the_path_and_replug_restores_it_with_the_press_kept() {
    let _serial = lock();
    let dir = tempfile::tempdir().unwrap();
    let units = sim::spawn_units(&buttons_options(dir.path())).unwrap();
    let link = units.path("buttons").unwrap().clone();
    let first_pty = std::fs::read_link(&link).unwrap();
    let mut host = Host::open(&link);
    host.handshake(250, 1000);

    units.unplug("buttons", None).unwrap();
    assert!(
        eventually(WAIT, || std::fs::symlink_metadata(&link).is_err()),
        "symlink gone"
    );
    assert!(host.until(WAIT, |h| h.gone), "the host's port hangs up");
    // A press while unplugged is kept with its true instant.
    units.press(None, Button::Arbiter).unwrap();
    units
        .wait_until("buttons", WAIT, |s| !s.plugged && s.unacked == 1)
        .unwrap();

    units.replug("buttons").unwrap();
    assert!(
        eventually(WAIT, || std::fs::read_link(&link).is_ok()),
        "symlink back"
    );
    let snapshot = units.wait_until("buttons", WAIT, |s| s.plugged).unwrap();
    assert_eq!(
        snapshot.pty.as_ref(),
        std::fs::read_link(&link).ok().as_ref()
    );
    let mut host = Host::open(&link);
    let hello = host.handshake(250, 1000);
    assert_eq!(
        hello.first_unacked_event, 0,
        "the unacked press is announced"
    );
    let press = host.expect(WAIT, "the kept press", |m| {
        matches!(
            m,
            Message::Button {
                button: Button::Arbiter,
                ..
            }
        )
    });
    assert_eq!(button_event(&press.frame.message).unwrap().0, 0);

    // Unplug with automatic replug.
    drop(host);
    units
        .unplug("buttons", Some(Duration::from_millis(100)))
        .unwrap();
    units.wait_until("buttons", WAIT, |s| !s.plugged).unwrap();
    units.wait_until("buttons", WAIT, |s| s.plugged).unwrap();
    assert!(eventually(WAIT, || std::fs::read_link(&link).is_ok()));
    let _ = first_pty;
    units.shutdown();
    let log = log_lines(&dir.path().join("log.jsonl"));
    assert_eq!(log.iter().filter(|r| r["kind"] == "unplug").count(), 2);
    assert_eq!(log.iter().filter(|r| r["kind"] == "plug").count(), 3);
}

#[test]
fn display_shows_host_state_and_link_lost_after_the_timeout() {
    let _serial = lock();
    let dir = tempfile::tempdir().unwrap();
    let mut display = UnitSpec::new("display", UnitKind::Display);
    display.link = Some(dir.path().join("display"));
    let options = SimOptions {
        units: vec![display],
        log: None,
        log_sent: false,
        seed: Some(1),
    };
    let units = sim::spawn_units(&options).unwrap();
    let mut host = Host::open(units.path("display").unwrap());
    let hello = host.handshake(50, 200);
    assert!(hello.roles.contains(Roles::DISPLAY));
    assert_eq!(hello.capabilities.displays, 2);
    assert!(hello.capabilities.tenths);

    let mut state = DisplayState::default();
    state.left.time = Text::new("4:59").unwrap();
    state.left.icons = Icons::RUNNING;
    state.right.time = Text::new("5:00").unwrap();
    state.text = Text::new("GO").unwrap();
    host.send(Message::Display(state));
    let shown = units
        .wait_until("display", WAIT, |s| {
            s.display.is_some_and(|d| d.text.as_str() == "GO")
        })
        .unwrap();
    let shown = shown.display.unwrap();
    assert_eq!(shown.left.time.as_str(), "4:59");
    assert!(shown.left.icons.contains(Icons::RUNNING));
    assert!(!shown.left.icons.contains(Icons::LINK_LOST));

    // The host falls silent: after 200 ms the unit shows LINK_LOST itself,
    // keeps the picture, and says HELLO again.
    let lost = units
        .wait_until("display", WAIT, |s| s.link_state == LinkState::Lost)
        .unwrap();
    let lost_display = lost.display.unwrap();
    assert!(lost_display.left.icons.contains(Icons::LINK_LOST));
    assert!(lost_display.right.icons.contains(Icons::LINK_LOST));
    assert_eq!(lost_display.left.time.as_str(), "4:59");
    host.expect(WAIT, "HELLO after the link loss", |m| {
        matches!(m, Message::Hello(_))
    });
}

#[test]
fn bad_options_are_refused_with_a_reason() {
    let _serial = lock();
    let empty = SimOptions {
        units: vec![],
        ..SimOptions::demo()
    };
    assert!(sim::spawn_units(&empty)
        .unwrap_err()
        .to_string()
        .contains("no units"));
    let twins = SimOptions {
        units: vec![
            UnitSpec::new("a", UnitKind::Buttons),
            UnitSpec::new("a", UnitKind::Display),
        ],
        ..SimOptions::demo()
    };
    assert!(sim::spawn_units(&twins)
        .unwrap_err()
        .to_string()
        .contains("two units"));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("taken");
    std::fs::write(&file, b"x").unwrap();
    let mut unit = UnitSpec::new("a", UnitKind::Buttons);
    unit.link = Some(file.clone());
    let clash = SimOptions {
        units: vec![unit],
        ..SimOptions::demo()
    };
    let error = sim::spawn_units(&clash).unwrap_err().to_string();
    assert!(error.contains("not a symlink"), "{error}");
    assert_eq!(std::fs::read(&file).unwrap(), b"x");
    let units = sim::spawn_units(&SimOptions::demo()).unwrap();
    assert!(matches!(
        units.press(Some("nope"), Button::Left),
        Err(sim::SimError::UnknownUnit(_))
    ));
    assert_eq!(units.paths().len(), 2);
}

#[test]
fn a_port_nobody_reads_drops_its_backlog_and_recovers_when_the_host_comes() {
    let _serial = lock();
    let dir = tempfile::tempdir().unwrap();
    let units = sim::spawn_units(&buttons_options(dir.path())).unwrap();
    // Each HELLO written 3001 times (~190 KB each time): more than the PTY
    // holds, with nobody reading.
    units
        .duplicate("buttons", 3000, Duration::from_millis(1200))
        .unwrap();
    let log_path = dir.path().join("log.jsonl");
    assert!(
        eventually(WAIT, || log_lines(&log_path)
            .iter()
            .any(|r| r["kind"] == "tx-overflow")),
        "backlog dropped rather than grown"
    );
    units
        .wait_until("buttons", WAIT, |s| !s.faults_active)
        .unwrap();
    let mut host = Host::open(units.path("buttons").unwrap());
    let hello = host.handshake(250, 1000);
    assert_eq!(hello.serial.as_str(), "CC0001");
    units.press(None, Button::Left).unwrap();
    host.expect(WAIT, "BUTTON after the flood", |m| {
        button_event(m).is_some()
    });
}

#[test]
fn power_cycle_starts_a_new_boot_and_low_power_is_reported() {
    let _serial = lock();
    let dir = tempfile::tempdir().unwrap();
    let units = sim::spawn_units(&buttons_options(dir.path())).unwrap();
    let link = units.path("buttons").unwrap().clone();
    let mut host = Host::open(&link);
    let first = host.handshake(100, 1000);

    units.set_low_power("buttons", true).unwrap();
    host.expect(WAIT, "low-power heartbeat", |m| {
        matches!(
            m,
            Message::DeviceHeartbeat {
                low_power: true,
                ..
            }
        )
    });

    // A press the host never acknowledges dies with the power.
    units.press(None, Button::Left).unwrap();
    host.expect(WAIT, "BUTTON", |m| button_event(m).is_some());
    units
        .power_cycle("buttons", Duration::from_millis(50))
        .unwrap();
    units.wait_until("buttons", WAIT, |s| !s.plugged).unwrap();
    let back = units.wait_until("buttons", WAIT, |s| s.plugged).unwrap();
    assert_eq!(back.unacked, 0);
    assert!(!back.low_power);
    assert!(eventually(WAIT, || std::fs::read_link(&link).is_ok()));
    let mut host = Host::open(&link);
    let second = host.handshake(100, 1000);
    assert_ne!(second.boot_id, first.boot_id, "a new boot");
    assert_eq!(second.first_unacked_event, 0);
    let heartbeat = host.expect(WAIT, "heartbeat", |m| {
        matches!(m, Message::DeviceHeartbeat { .. })
    });
    let Message::DeviceHeartbeat {
        device_time_us,
        low_power,
        ..
    } = heartbeat.frame.message
    else {
        unreachable!()
    };
    assert!(!low_power);
    // The clock restarted from its offset (7 s) at power-up.
    assert!(
        (7_000_000..9_000_000).contains(&device_time_us),
        "{device_time_us}"
    );
}

#[test]
fn units_start_and_stop_from_inside_an_async_runtime() {
    let _serial = lock();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let links = dir.path().join("demo");
    runtime.block_on(async {
        let units = sim::spawn_units(&SimOptions::demo_in(&links)).unwrap();
        let pty = std::fs::read_link(links.join("buttons")).unwrap();
        assert!(pty.starts_with("/dev/pts"), "{}", pty.display());
        units.shutdown();
    });
    assert!(std::fs::symlink_metadata(links.join("buttons")).is_err());
    assert!(std::fs::symlink_metadata(links.join("display")).is_err());
}

#[test]
fn a_combined_unit_has_both_roles_on_one_port_and_its_clock_drifts() {
    let _serial = lock();
    let spec: UnitSpec = "clock=combined,serial=CC0003,drift-ppm=50000"
        .parse()
        .unwrap();
    let options = SimOptions {
        units: vec![spec],
        log: None,
        log_sent: false,
        seed: Some(3),
    };
    let units = sim::spawn_units(&options).unwrap();
    let mut host = Host::open(units.path("clock").unwrap());
    let hello = host.handshake(100, 2000);
    assert_eq!(hello.roles, Roles(0x03));
    assert_eq!(hello.capabilities.displays, 2);
    assert!(hello.capabilities.arbiter_button);

    units.press(None, Button::Right).unwrap();
    let press = host.expect(WAIT, "BUTTON", |m| button_event(m).is_some());
    host.send(Message::Ack {
        event: button_event(&press.frame.message).unwrap().0,
    });
    let mut state = DisplayState::default();
    state.right.icons = Icons::RUNNING;
    host.send(Message::Display(state));
    units
        .wait_until("clock", WAIT, |s| {
            s.unacked == 0
                && s.display
                    .is_some_and(|d| d.right.icons.contains(Icons::RUNNING))
        })
        .unwrap();

    // A clock 5% fast: over about a second of heartbeats the device counts
    // about 50 ms more than the host (wide bounds: the host's arrival times
    // jitter on a loaded machine).
    let heartbeat = |m: &Message| match m {
        Message::DeviceHeartbeat { device_time_us, .. } => Some(*device_time_us),
        _ => None,
    };
    let first = host.expect(WAIT, "heartbeat", |m| heartbeat(m).is_some());
    let mut last = first.clone();
    while last.at_us - first.at_us < 1_000_000 {
        host.send(Message::HostHeartbeat);
        last = host.expect(WAIT, "heartbeat", |m| heartbeat(m).is_some());
    }
    let device = heartbeat(&last.frame.message).unwrap() - heartbeat(&first.frame.message).unwrap();
    let host_elapsed = (last.at_us - first.at_us) as u64;
    let gained = device as i64 - host_elapsed as i64;
    let expected = host_elapsed as i64 / 20;
    assert!(
        (gained - expected).abs() < 25_000,
        "gained {gained} µs over {host_elapsed} µs"
    );
}

/// A unit with a boot delay keeps its port silent until then: the host that
/// opened the port at once is welcomed by nothing earlier (the bench spreads
/// its units' boots with this, so their heartbeats are not in phase).
#[test]
fn a_unit_with_a_boot_delay_says_its_first_hello_only_after_it() {
    let _serial = lock();
    let dir = tempfile::tempdir().unwrap();
    let mut options = buttons_options(dir.path());
    options.units[0].boot_delay_us = 300_000;
    let spawned_us = monotonic_now_us();
    let units = sim::spawn_units(&options).unwrap();
    let link = dir.path().join("cc/buttons");
    // The port is there from the start, as the unit's USB device is.
    let mut host = Host::open(&link);
    let hello = host.handshake(250, 1000);
    let linked_us = monotonic_now_us();
    assert_eq!(hello.serial.as_str(), "CC0001");
    assert!(
        linked_us - spawned_us >= 300_000,
        "HELLO after {} µs, before the 300 ms boot delay",
        linked_us - spawned_us
    );
    units
        .wait_until("buttons", WAIT, |s| s.link_state == LinkState::Up)
        .unwrap();
    drop(units);
    let plug = log_lines(&dir.path().join("log.jsonl"))
        .into_iter()
        .find(|r| r["kind"] == "plug")
        .expect("a plug record");
    assert!(
        plug["t_us"].as_i64().unwrap() - spawned_us >= 300_000,
        "{plug}"
    );
}

/// A unit stopped while it still boots leaves no link behind (the
/// simulator removes every link it made when it stops).
#[test]
fn a_unit_stopped_while_it_boots_removes_its_link() {
    let _serial = lock();
    let dir = tempfile::tempdir().unwrap();
    let mut options = buttons_options(dir.path());
    options.units[0].boot_delay_us = 60_000_000;
    let units = sim::spawn_units(&options).unwrap();
    let link = dir.path().join("cc/buttons");
    assert!(
        std::fs::symlink_metadata(&link).is_ok(),
        "the port is there at once"
    );
    drop(units);
    assert!(
        std::fs::symlink_metadata(&link).is_err(),
        "the link outlived the unit"
    );
}
