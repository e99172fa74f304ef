//! The device shell end to end: a fake device on the master side of a PTY
//! speaks the protocol as firmware would, the `DeviceManager` opens the slave
//! through a symlink the test controls. Serialised (PTY pairs created by
//! parallel tests race); every wait has a deadline; nothing sleeps and hopes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

use std::future::Future;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use chessclock_protocol::{
    encode, Accumulator, Button, Capabilities, DisplayState, Feed, Frame, Hello, Icons, Leds,
    Message, NakCode, Panel, Roles, Text, MAX_WIRE_FRAME, PROTOCOL_VERSION,
};
use chessclockd::clock::monotonic_now_us;
use chessclockd::config::{BoardConfig, ButtonSide, Config, DeviceRef, DisplayRef};
use chessclockd::control::Command;
use chessclockd::devices::session::SessionConfig;
use chessclockd::devices::{
    DeviceCommand, DeviceEvent, DeviceKey, DeviceManager, DeviceOptions, DeviceRole, Due,
};
use chessclockd::display::{DisplayConfig, DisplaySide};
use chessclockd::engine::{Micros, Side, MS, SECOND};
use chessclockd::runtime::{Devices, Runtime};
use tokio::io::unix::AsyncFd;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};
use tokio::time::{timeout, Instant};

static PTY_TESTS: Mutex<()> = Mutex::new(());

/// Runs one test alone, on its own runtime, with a hard time limit.
fn serial_test<F: Future<Output = ()>>(test: F) {
    let _alone = PTY_TESTS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime
        .block_on(async { timeout(Duration::from_secs(20), test).await })
        .expect("test timed out");
}

/// The device clock of every fake: host monotonic time plus an offset, so
/// a device timestamp says exactly which host instant it was taken at.
const DEVICE_CLOCK_OFFSET: i64 = 123_456_789;

fn device_time(host: Micros) -> u64 {
    (host + DEVICE_CLOCK_OFFSET) as u64
}

fn hello(roles: Roles, serial: &str) -> Hello {
    Hello {
        protocol_version: PROTOCOL_VERSION,
        roles,
        capabilities: Capabilities {
            displays: 2,
            digits: 5,
            tenths: true,
            arbiter_button: true,
            ..Capabilities::default()
        },
        vendor: Text::truncated("chessclockd-test"),
        model: Text::truncated("fake"),
        serial: Text::truncated(serial),
        firmware: Text::truncated("0.0.1"),
        boot_id: 0xB007,
        first_unacked_event: 1,
    }
}

const BUTTONS: Roles = Roles::BUTTONS;
const DISPLAY: Roles = Roles::DISPLAY;
const COMBINED: Roles = Roles(0x03);

/// The firmware side of a PTY.
struct FakeDevice {
    master: AsyncFd<OwnedFd>,
    /// Kept open so the master never reads EIO while the daemon has the
    /// slave closed (between reconnects).
    _slave: OwnedFd,
    slave_path: PathBuf,
    accumulator: Accumulator,
    pending: Vec<Frame>,
    seq: u8,
}

impl FakeDevice {
    fn new() -> FakeDevice {
        let pty = nix::pty::openpty(None, None).expect("openpty");
        // Raw at once: bytes written before the daemon opens the port must
        // not be echoed back to us.
        let mut termios = nix::sys::termios::tcgetattr(&pty.slave).expect("tcgetattr");
        nix::sys::termios::cfmakeraw(&mut termios);
        nix::sys::termios::tcsetattr(&pty.slave, nix::sys::termios::SetArg::TCSANOW, &termios)
            .expect("tcsetattr");
        nix::fcntl::fcntl(
            &pty.master,
            nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
        )
        .expect("non-blocking master");
        let slave_path = nix::unistd::ttyname(&pty.slave).expect("ttyname");
        // The master descriptor is owned by `AsyncFd` and never changes.
        #[allow(deprecated)]
        let master = AsyncFd::new(pty.master).expect("register master");
        FakeDevice {
            master,
            _slave: pty.slave,
            slave_path,
            accumulator: Accumulator::new(),
            pending: Vec::new(),
            seq: 0,
        }
    }

    /// Plugs the device in at `link` (a symlink to the PTY slave).
    fn plug(link: &Path) -> FakeDevice {
        let device = FakeDevice::new();
        std::os::unix::fs::symlink(&device.slave_path, link).expect("symlink");
        device
    }

    async fn write_raw(&self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let mut guard = self.master.writable().await.expect("writable");
            match guard
                .try_io(|fd| nix::unistd::write(fd.get_ref(), bytes).map_err(std::io::Error::from))
            {
                Ok(Ok(n)) => bytes = &bytes[n..],
                Ok(Err(error)) => panic!("PTY write failed: {error}"),
                Err(_would_block) => {}
            }
        }
    }

    fn wire(&mut self, message: Message) -> Vec<u8> {
        let frame = Frame {
            seq: self.seq,
            message,
        };
        self.seq = self.seq.wrapping_add(1);
        let mut wire = [0u8; MAX_WIRE_FRAME];
        let n = encode(&frame, &mut wire).expect("encode");
        wire[..n].to_vec()
    }

    async fn send(&mut self, message: Message) {
        let wire = self.wire(message);
        self.write_raw(&wire).await;
    }

    /// The next frame from the host, or `None` after `within`.
    async fn recv(&mut self, within: Duration) -> Option<Frame> {
        let deadline = Instant::now() + within;
        loop {
            if !self.pending.is_empty() {
                return Some(self.pending.remove(0));
            }
            let mut buf = [0u8; 512];
            let read = tokio::select! {
                guard = self.master.readable() => {
                    let mut guard = guard.expect("readable");
                    match guard.try_io(|fd| nix::unistd::read(fd.get_ref(), &mut buf).map_err(std::io::Error::from)) {
                        Ok(Ok(n)) => n,
                        Ok(Err(error)) => panic!("PTY read failed: {error}"),
                        Err(_would_block) => continue,
                    }
                }
                _ = tokio::time::sleep_until(deadline) => return None,
            };
            let mut input = &buf[..read];
            loop {
                match self.accumulator.feed(input) {
                    Feed::NeedMore => break,
                    Feed::Frame(frame, rest) => {
                        self.pending.push(frame);
                        input = rest;
                    }
                    Feed::Error(error, _) => panic!("the host sent a bad frame: {error:?}"),
                }
            }
        }
    }

    /// The next frame the host sends that is not a heartbeat.
    async fn recv_significant(&mut self, within: Duration) -> Option<Message> {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.recv(left).await?.message {
                Message::HostHeartbeat => continue,
                message => return Some(message),
            }
        }
    }

    /// Says HELLO every 100 ms (as firmware does until welcomed) until the
    /// WELCOME arrives; returns it.
    async fn handshake(&mut self, hello: Hello) -> Message {
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            self.send(Message::Hello(hello)).await;
            // Heartbeats of an earlier session may still be queued.
            if let Some(message) = self.recv_significant(Duration::from_millis(100)).await {
                if let Message::Welcome { .. } = message {
                    return message;
                }
                panic!("expected WELCOME, got {message:?}");
            }
        }
        panic!("no WELCOME within 5 s");
    }

    /// Heartbeats carrying the device clock, `count` of them 10 ms apart.
    async fn heartbeats(&mut self, count: usize) {
        for _ in 0..count {
            self.send(Message::DeviceHeartbeat {
                device_time_us: device_time(monotonic_now_us()),
                low_power: false,
            })
            .await;
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    async fn press(&mut self, event: u16, button: Button, at: Micros) {
        self.send(Message::Button {
            event,
            button,
            pressed: true,
            device_time_us: device_time(at),
        })
        .await;
    }
}

fn board(id: &str, buttons: Option<&Path>, displays: &[&Path]) -> BoardConfig {
    BoardConfig {
        id: id.to_owned(),
        control: "fide-rapid".to_owned(),
        buttons: buttons.map(|p| DeviceRef::Path(p.to_path_buf())),
        displays: displays
            .iter()
            .map(|p| DeviceRef::Path(p.to_path_buf()).into())
            .collect(),
        eboard: None,
        white_button: ButtonSide::Left,
        start_on_black_press: false,
        event: None,
        site: None,
        round: None,
        white: None,
        black: None,
    }
}

/// Test timing: a long link timeout so a fake need not heartbeat, and a
/// long back-off so a quick reconnect can only come from hotplug.
fn options(min_backoff: Micros) -> DeviceOptions {
    DeviceOptions {
        session: SessionConfig {
            heartbeat_interval: 200 * MS,
            link_timeout: 10 * SECOND,
            hello_timeout: 2 * SECOND,
            error_report_interval: 20 * MS,
            ..SessionConfig::default()
        },
        min_backoff,
        max_backoff: 10 * SECOND,
        device_dirs: Vec::new(),
        candidate_prefixes: Vec::new(),
        inotify: true,
    }
}

struct Harness {
    manager: DeviceManager,
    events: UnboundedReceiver<DeviceEvent>,
}

impl Harness {
    fn start(boards: &[BoardConfig], watch_dirs: &[PathBuf], options: DeviceOptions) -> Harness {
        let (tx, events) = unbounded_channel();
        let manager = DeviceManager::start_with(boards, watch_dirs, tx, options);
        Harness { manager, events }
    }

    async fn next_event(&mut self) -> DeviceEvent {
        timeout(Duration::from_secs(5), self.events.recv())
            .await
            .expect("no device event within 5 s")
            .expect("event channel closed")
    }

    /// No event at all for `quiet` (used only to show something does *not*
    /// happen, e.g. a refused device is not retried).
    async fn assert_no_event(&mut self, quiet: Duration) {
        if let Ok(event) = timeout(quiet, self.events.recv()).await {
            panic!("unexpected event {event:?}");
        }
    }
}

fn key(board: &str, role: DeviceRole) -> DeviceKey {
    DeviceKey {
        board: board.to_owned(),
        role,
    }
}

fn display_state(time: &str) -> DisplayState {
    DisplayState {
        left: Panel {
            time: Text::truncated(time),
            moves: 12,
            stage: 1,
            ..Panel::default()
        },
        right: Panel {
            time: Text::truncated("0:59.9"),
            moves: 11,
            stage: 1,
            ..Panel::default()
        },
        text: Text::empty(),
        brightness: 200,
    }
}

#[test]
fn handshake_press_timing_duplicates_and_ack() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("buttons");
        let mut device = FakeDevice::plug(&link);
        let mut h = Harness::start(&[board("b1", Some(&link), &[])], &[], options(100 * MS));
        let buttons = key("b1", DeviceRole::Buttons);

        let welcome = device.handshake(hello(BUTTONS, "CC0001")).await;
        assert_eq!(
            welcome,
            Message::Welcome {
                protocol_version: PROTOCOL_VERSION,
                heartbeat_interval_ms: 200,
                link_timeout_ms: 10_000,
            }
        );
        match h.next_event().await {
            DeviceEvent::Connected {
                key: k,
                hello: got,
                path,
            } => {
                assert_eq!(k, buttons);
                assert_eq!(got.serial.as_str(), "CC0001");
                assert_eq!(path, link.display().to_string());
            }
            other => panic!("expected Connected, got {other:?}"),
        }

        // Heartbeats establish the device clock's offset...
        device.heartbeats(10).await;
        // ...then a press whose frame is delivered 50 ms late.
        let pressed_at = monotonic_now_us();
        tokio::time::sleep(Duration::from_millis(50)).await;
        device.press(1, Button::Left, pressed_at).await;
        match h.next_event().await {
            DeviceEvent::Button {
                key: k,
                event,
                button,
                pressed,
                at,
                arrival,
                ..
            } => {
                assert_eq!(
                    (k, event, button, pressed),
                    (buttons.clone(), 1, Button::Left, true)
                );
                assert!(
                    (at - pressed_at).abs() <= 1_000,
                    "mapped {at}, pressed {pressed_at}: off by {} µs",
                    at - pressed_at
                );
                assert!(arrival - pressed_at >= 50_000, "arrived after the delay");
                assert!(at <= arrival);
            }
            other => panic!("expected Button, got {other:?}"),
        }

        // No ACK before the runtime says the press is committed. A
        // retransmission is reported again (the board core's record of the
        // unit's events tells it is a duplicate), at the same instant.
        device.press(1, Button::Left, pressed_at).await; // retransmission
        device.press(2, Button::Right, monotonic_now_us()).await;
        match h.next_event().await {
            DeviceEvent::Button { event, button, .. } => {
                assert_eq!((event, button), (1, Button::Left), "the resend, reported")
            }
            other => panic!("expected the resent Button 1, got {other:?}"),
        }
        match h.next_event().await {
            DeviceEvent::Button { event, button, .. } => {
                assert_eq!((event, button), (2, Button::Right))
            }
            other => panic!("expected Button 2, got {other:?}"),
        }
        assert_eq!(
            device.recv_significant(Duration::from_millis(300)).await,
            None,
            "nothing acknowledged yet"
        );
        // The timing thread acknowledges from a plain thread.
        let handle = h.manager.handle();
        let k = buttons.clone();
        std::thread::spawn(move || handle.send(&k, DeviceCommand::Ack { event: 1 }))
            .join()
            .unwrap();
        assert_eq!(
            device.recv_significant(Duration::from_secs(2)).await,
            Some(Message::Ack { event: 1 })
        );
        // A retransmission after the ACK (ACK lost) is reported again; the
        // link acknowledges nothing by itself (the board core answers it).
        device.press(1, Button::Left, pressed_at).await;
        assert!(matches!(
            h.next_event().await,
            DeviceEvent::Button { event: 1, .. }
        ));
        assert_eq!(
            device.recv_significant(Duration::from_millis(300)).await,
            None
        );
    });
}

#[test]
fn garbage_and_bad_frames_are_counted_and_change_nothing() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("buttons");
        let mut device = FakeDevice::plug(&link);
        let mut h = Harness::start(&[board("b2", Some(&link), &[])], &[], options(100 * MS));
        device.handshake(hello(BUTTONS, "CC0002")).await;
        assert!(matches!(
            h.next_event().await,
            DeviceEvent::Connected { .. }
        ));

        // Garbage: a COBS block that claims more bytes than it has.
        device.write_raw(&[0x05, 0xAA, 0xBB, 0x00]).await;
        // A real frame with one bit flipped in its middle.
        let mut bad = device.wire(Message::Button {
            event: 1,
            button: Button::Left,
            pressed: true,
            device_time_us: 42,
        });
        let middle = bad.len() / 2;
        bad[middle] ^= 0x01;
        if bad[middle] == 0 {
            bad[middle] = 0x02;
        }
        device.write_raw(&bad).await;
        // A valid frame with a message id this version does not know.
        device.send(Message::Unknown { id: 0x7E }).await;

        let mut counted = 0;
        while counted < 3 {
            match h.next_event().await {
                DeviceEvent::Errors { key: k, count } => {
                    assert_eq!(k, key("b2", DeviceRole::Buttons));
                    counted += count;
                }
                other => panic!("only errors expected, got {other:?}"),
            }
        }
        assert_eq!(counted, 3, "each bad frame counted once");
        // The link is still up and the corrupted event 1 was not taken:
        // its retransmission is.
        device.press(1, Button::Right, monotonic_now_us()).await;
        match h.next_event().await {
            DeviceEvent::Button { event, button, .. } => {
                assert_eq!((event, button), (1, Button::Right))
            }
            other => panic!("expected Button 1, got {other:?}"),
        }
        h.assert_no_event(Duration::from_millis(200)).await;
    });
}

#[test]
fn unplug_then_replug_reconnects_through_inotify_and_restores_the_display() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("display");
        let mut device = FakeDevice::plug(&link);
        // A 10 s back-off: only hotplug can bring the device back quickly.
        let mut h = Harness::start(&[board("b3", None, &[&link])], &[], options(10 * SECOND));
        let display = key("b3", DeviceRole::Display(0));
        device.handshake(hello(DISPLAY, "CC0003")).await;
        assert!(matches!(
            h.next_event().await,
            DeviceEvent::Connected { .. }
        ));

        let state = display_state("1:29:59");
        h.manager.send(&display, DeviceCommand::Display(state));
        assert_eq!(
            device.recv_significant(Duration::from_secs(2)).await,
            Some(Message::Display(state))
        );

        // Unplug: the USB node and its symlink go away.
        drop(device);
        std::fs::remove_file(&link).unwrap();
        match h.next_event().await {
            DeviceEvent::Disconnected { key: k, reason } => {
                assert_eq!(k, display);
                assert!(!reason.is_empty());
            }
            other => panic!("expected Disconnected, got {other:?}"),
        }
        // The runtime keeps updating the display meanwhile: latest wins.
        let later = display_state("1:29:58");
        h.manager.send(&display, DeviceCommand::Display(later));

        // Replug: a new PTY behind the same symlink.
        let mut device = FakeDevice::plug(&link);
        let replugged = Instant::now();
        device.handshake(hello(DISPLAY, "CC0003")).await;
        assert_eq!(
            device.recv_significant(Duration::from_secs(1)).await,
            Some(Message::Display(later)),
            "display restored right after WELCOME"
        );
        let restored_after = replugged.elapsed();
        eprintln!("display restored {restored_after:?} after the replug");
        assert!(restored_after < Duration::from_secs(1));
        match h.next_event().await {
            DeviceEvent::Connected { key: k, .. } => assert_eq!(k, display),
            other => panic!("expected Connected, got {other:?}"),
        }
    });
}

/// SPEC 6.1 item 3: a refused device gets a NAK at every HELLO, the reason is
/// reported once, and the port is not reopened in a loop.
#[test]
fn spec_6_1_a_device_with_the_wrong_role_gets_nak_busy_at_every_hello() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("buttons");
        let mut device = FakeDevice::plug(&link);
        let mut h = Harness::start(&[board("b4", Some(&link), &[])], &[], options(50 * MS));
        // A display unit plugged where the button unit belongs.
        device.send(Message::Hello(hello(DISPLAY, "CC0004"))).await;
        let mut hellos = 1;
        let event = loop {
            match timeout(Duration::from_millis(100), h.events.recv()).await {
                Ok(event) => break event.expect("channel open"),
                Err(_) => {
                    assert!(hellos < 50, "no refusal within 5 s");
                    device.send(Message::Hello(hello(DISPLAY, "CC0004"))).await;
                    hellos += 1;
                }
            }
        };
        match event {
            DeviceEvent::Refused {
                key: k,
                path,
                reason,
            } => {
                assert_eq!(k, key("b4", DeviceRole::Buttons));
                assert_eq!(path, link.display().to_string());
                assert!(
                    reason.contains("device has roles display, this slot needs buttons"),
                    "{reason}"
                );
                assert!(reason.contains("CC0004"), "{reason}");
            }
            other => panic!("expected Refused, got {other:?}"),
        }
        // SPEC 6.1: a refused HELLO gets NAK Busy.
        assert!(
            matches!(
                device.recv(Duration::from_secs(1)).await.map(|f| f.message),
                Some(Message::Nak {
                    code: NakCode::Busy,
                    ..
                })
            ),
            "NAK Busy expected"
        );
        // It keeps saying HELLO: each one is answered with NAK Busy naming
        // its frame, the reason is not reported again, and the port stays
        // open (with a 50 ms back-off a reopening loop would show here as
        // more events).
        while device.recv(Duration::from_millis(100)).await.is_some() {}
        for _ in 0..7 {
            let seq = device.seq;
            device.send(Message::Hello(hello(DISPLAY, "CC0004"))).await;
            assert_eq!(
                device.recv(Duration::from_secs(2)).await.map(|f| f.message),
                Some(Message::Nak {
                    code: NakCode::Busy,
                    seq
                }),
                "every refused HELLO gets its NAK"
            );
        }
        h.assert_no_event(Duration::from_millis(100)).await;

        // The right unit plugged in its place is taken at once.
        drop(device);
        std::fs::remove_file(&link).unwrap();
        let mut device = FakeDevice::plug(&link);
        device.handshake(hello(BUTTONS, "CC0005")).await;
        match h.next_event().await {
            DeviceEvent::Connected { hello, .. } => assert_eq!(hello.serial.as_str(), "CC0005"),
            other => panic!("expected Connected, got {other:?}"),
        }
    });
}

/// SPEC 6.1 item 3, 10.2: NAK UnsupportedVersion at every HELLO.
#[test]
fn spec_6_1_a_device_with_the_wrong_protocol_version_gets_a_nak_at_every_hello() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("buttons");
        let mut device = FakeDevice::plug(&link);
        let mut h = Harness::start(&[board("b5", Some(&link), &[])], &[], options(50 * MS));
        let future = Hello {
            protocol_version: PROTOCOL_VERSION + 1,
            ..hello(BUTTONS, "CC0006")
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        let nak = loop {
            assert!(Instant::now() < deadline, "no NAK within 5 s");
            device.send(Message::Hello(future)).await;
            if let Some(frame) = device.recv(Duration::from_millis(100)).await {
                break frame.message;
            }
        };
        assert!(
            matches!(
                nak,
                Message::Nak {
                    code: NakCode::UnsupportedVersion,
                    ..
                }
            ),
            "{nak:?}"
        );
        match h.next_event().await {
            DeviceEvent::Refused { reason, .. } => assert!(
                reason.contains(&format!(
                    "device speaks protocol version {}, this daemon speaks version {}",
                    PROTOCOL_VERSION + 1,
                    PROTOCOL_VERSION
                )),
                "{reason}"
            ),
            other => panic!("expected Refused, got {other:?}"),
        }
        while device.recv(Duration::from_millis(100)).await.is_some() {}
        for _ in 0..3 {
            let seq = device.seq;
            device.send(Message::Hello(future)).await;
            assert_eq!(
                device.recv(Duration::from_secs(2)).await.map(|f| f.message),
                Some(Message::Nak {
                    code: NakCode::UnsupportedVersion,
                    seq
                })
            );
        }
        h.assert_no_event(Duration::from_millis(100)).await;
    });
}

#[test]
fn a_serial_device_is_found_by_probing_the_watched_directory() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        // Another device first in name order, then ours.
        let mut other = FakeDevice::plug(&dir.path().join("a-other"));
        let mut ours = FakeDevice::plug(&dir.path().join("b-ours"));
        let mut config = board("b6", None, &[]);
        config.buttons = Some(DeviceRef::Serial("WANT42".into()));
        let mut h = Harness::start(&[config], &[dir.path().to_path_buf()], options(100 * MS));

        let deadline = Instant::now() + Duration::from_secs(8);
        let path = loop {
            assert!(Instant::now() < deadline, "serial device not found");
            other.send(Message::Hello(hello(BUTTONS, "OTHER1"))).await;
            ours.send(Message::Hello(hello(BUTTONS, "WANT42"))).await;
            if let Ok(Some(event)) = timeout(Duration::from_millis(100), h.events.recv()).await {
                match event {
                    DeviceEvent::Connected {
                        key: k,
                        hello,
                        path,
                    } => {
                        assert_eq!(k, key("b6", DeviceRole::Buttons));
                        assert_eq!(hello.serial.as_str(), "WANT42");
                        break path;
                    }
                    other => panic!("expected Connected, got {other:?}"),
                }
            }
        };
        assert_eq!(path, dir.path().join("b-ours").display().to_string());
        assert!(matches!(
            ours.recv_significant(Duration::from_secs(1)).await,
            Some(Message::Welcome { .. })
        ));
        // The other device was never welcomed.
        while let Some(frame) = other.recv(Duration::from_millis(50)).await {
            assert!(
                !matches!(frame.message, Message::Welcome { .. }),
                "{frame:?}"
            );
        }
    });
}

#[test]
fn a_combined_unit_serves_buttons_and_display_through_one_port() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("combined");
        let mut device = FakeDevice::plug(&link);
        let mut h = Harness::start(
            &[board("b7", Some(&link), &[&link])],
            &[],
            options(100 * MS),
        );
        device.handshake(hello(COMBINED, "CC0007")).await;
        let mut connected = vec![];
        for _ in 0..2 {
            match h.next_event().await {
                DeviceEvent::Connected { key, .. } => connected.push(key.role),
                other => panic!("expected Connected, got {other:?}"),
            }
        }
        assert_eq!(connected, vec![DeviceRole::Buttons, DeviceRole::Display(0)]);

        let state = display_state("4:59");
        h.manager.send(
            &key("b7", DeviceRole::Display(0)),
            DeviceCommand::Display(state),
        );
        assert_eq!(
            device.recv_significant(Duration::from_secs(2)).await,
            Some(Message::Display(state))
        );
        let leds = Leds {
            left: true,
            right: false,
            arbiter: false,
        };
        h.manager
            .send(&key("b7", DeviceRole::Buttons), DeviceCommand::Leds(leds));
        assert_eq!(
            device.recv_significant(Duration::from_secs(2)).await,
            Some(Message::Leds(leds))
        );
        device.press(1, Button::Arbiter, monotonic_now_us()).await;
        match h.next_event().await {
            DeviceEvent::Button { key: k, button, .. } => {
                assert_eq!(
                    (k, button),
                    (key("b7", DeviceRole::Buttons), Button::Arbiter)
                )
            }
            other => panic!("expected Button, got {other:?}"),
        }
        // Sends to unknown slots are dropped quietly.
        h.manager
            .send(&key("nope", DeviceRole::Buttons), DeviceCommand::Leds(leds));
    });
}

#[test]
fn the_explicit_hotplug_entry_point_reconnects_without_inotify() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("buttons");
        let mut device = FakeDevice::plug(&link);
        let mut no_inotify = options(10 * SECOND);
        no_inotify.inotify = false;
        let mut h = Harness::start(&[board("b8", Some(&link), &[])], &[], no_inotify);
        device.handshake(hello(BUTTONS, "CC0008")).await;
        assert!(matches!(
            h.next_event().await,
            DeviceEvent::Connected { .. }
        ));
        drop(device);
        std::fs::remove_file(&link).unwrap();
        h.manager.device_removed(&link);
        assert!(matches!(
            h.next_event().await,
            DeviceEvent::Disconnected { .. }
        ));
        let mut device = FakeDevice::plug(&link);
        // What the udev rule does through D-Bus.
        h.manager.device_added(&link);
        let replugged = Instant::now();
        device.handshake(hello(BUTTONS, "CC0008")).await;
        assert!(matches!(
            h.next_event().await,
            DeviceEvent::Connected { .. }
        ));
        assert!(
            replugged.elapsed() < Duration::from_secs(2),
            "reconnected by the notice, not by the 10 s back-off"
        );
    });
}

#[test]
/// The link reports the resent press again, at the same instant: the board
/// core's record of the unit's events tells it is a duplicate (see the
/// board core's transcripts).
fn a_silent_device_is_lost_and_its_resent_press_keeps_its_instant() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("buttons");
        let mut device = FakeDevice::plug(&link);
        let mut quick = options(100 * MS);
        quick.session.link_timeout = 300 * MS;
        let mut h = Harness::start(&[board("b9", Some(&link), &[])], &[], quick);
        let buttons = key("b9", DeviceRole::Buttons);
        device.handshake(hello(BUTTONS, "CC0009")).await;
        assert!(matches!(
            h.next_event().await,
            DeviceEvent::Connected { .. }
        ));
        // SPEC 6: a DEVICE_HEARTBEAT at once after WELCOME (the reference
        // of the clock mapping).
        device.heartbeats(1).await;
        let pressed_at = monotonic_now_us();
        device.press(1, Button::Left, pressed_at).await;
        let first_at = match h.next_event().await {
            DeviceEvent::Button {
                event: 1,
                at,
                serial,
                ..
            } => {
                assert_eq!(serial, "CC0009");
                at
            }
            other => panic!("expected Button 1, got {other:?}"),
        };
        // The device falls silent (firmware stuck, cable half out).
        match h.next_event().await {
            DeviceEvent::Disconnected { key: k, reason } => {
                assert_eq!(k, buttons);
                assert!(reason.contains("heartbeats missed"), "{reason}");
            }
            other => panic!("expected Disconnected, got {other:?}"),
        }
        // It comes back (same boot) and resends the unacknowledged press.
        device.handshake(hello(BUTTONS, "CC0009")).await;
        assert!(matches!(
            h.next_event().await,
            DeviceEvent::Connected { .. }
        ));
        // SPEC 6: a DEVICE_HEARTBEAT at once after WELCOME (the reference
        // of the clock mapping).
        device.heartbeats(1).await;
        device.press(1, Button::Left, pressed_at).await;
        device.press(2, Button::Right, monotonic_now_us()).await;
        // SPEC 9.2 item 8: the resent press (stamped before this link's
        // first heartbeat) and the one behind it are placed once the link
        // brought four heartbeats.
        device.heartbeats(3).await;
        match h.next_event().await {
            // The same clock mapping maps the same device instant, give or
            // take what the heartbeats since have taught it (on a loaded
            // machine a young mapping's offset moves by a few ms); mapped
            // to its arrival instead, the resend would be at least the
            // link timeout (300 ms) later.
            DeviceEvent::Button { event: 1, at, .. } => assert!(
                at.abs_diff(first_at) <= 20_000,
                "the resend maps to the press's own instant: {at} vs {first_at}"
            ),
            other => panic!("expected the resent Button 1, got {other:?}"),
        }
        match h.next_event().await {
            DeviceEvent::Button { event, .. } => assert_eq!(event, 2),
            other => panic!("expected Button 2, got {other:?}"),
        }
        h.manager.send(&buttons, DeviceCommand::Ack { event: 2 });
        assert_eq!(
            device.recv_significant(Duration::from_secs(2)).await,
            Some(Message::Ack { event: 2 })
        );
    });
}

#[test]
fn late_frames_are_mapped_to_their_true_instants_within_a_millisecond() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("buttons");
        let mut device = FakeDevice::plug(&link);
        let mut h = Harness::start(&[board("b10", Some(&link), &[])], &[], options(100 * MS));
        device.handshake(hello(BUTTONS, "CC0010")).await;
        assert!(matches!(
            h.next_event().await,
            DeviceEvent::Connected { .. }
        ));
        device.heartbeats(5).await;
        let mut errors = Vec::new();
        for event in 1..=20u16 {
            let delay = Duration::from_millis(5 * u64::from(event % 11));
            let pressed_at = monotonic_now_us();
            tokio::time::sleep(delay).await;
            device.press(event, Button::Left, pressed_at).await;
            match h.next_event().await {
                DeviceEvent::Button {
                    event: got,
                    at,
                    arrival,
                    ..
                } => {
                    assert_eq!(got, event);
                    assert!(at <= arrival);
                    errors.push(at - pressed_at);
                }
                other => panic!("expected Button, got {other:?}"),
            }
            device.heartbeats(1).await;
        }
        let worst = errors.iter().map(|e| e.abs()).max().unwrap();
        let mean = errors.iter().sum::<i64>() / errors.len() as i64;
        eprintln!(
            "mapping error over {} presses: mean {mean} µs, worst {worst} µs",
            errors.len()
        );
        assert!(worst <= 1_000, "errors {errors:?}");
    });
}

/// The protocol crate's reference device state machine, driven on the PTY
/// with a device clock: HELLO, heartbeats, retransmission, ACK handling all
/// as a conforming firmware does them.
struct ReferenceFirmware {
    pty: FakeDevice,
    link: chessclock_protocol::device::DeviceLink,
    shown: Vec<chessclock_protocol::device::Command>,
}

impl ReferenceFirmware {
    fn plug(path: &Path, hello: Hello) -> ReferenceFirmware {
        let pty = FakeDevice::plug(path);
        let link =
            chessclock_protocol::device::DeviceLink::new(hello, device_time(monotonic_now_us()));
        ReferenceFirmware {
            pty,
            link,
            shown: Vec::new(),
        }
    }

    /// Runs the firmware for `duration`: sends what it has to send, takes
    /// what the host sends.
    async fn run_for(&mut self, duration: Duration) {
        let until = Instant::now() + duration;
        while Instant::now() < until {
            let now = device_time(monotonic_now_us());
            while let Some(frame) = self.link.poll(now) {
                let mut wire = [0u8; MAX_WIRE_FRAME];
                let n = encode(&frame, &mut wire).expect("encode");
                self.pty.write_raw(&wire[..n]).await;
            }
            if let Some(frame) = self.pty.recv(Duration::from_millis(5)).await {
                let now = device_time(monotonic_now_us());
                if let Some(command) = self.link.receive(&frame, now) {
                    self.shown.push(command);
                }
            }
        }
    }
}

#[test]
fn the_reference_firmware_state_machine_interoperates() {
    serial_test(async {
        use chessclock_protocol::device::{Command, LinkState};
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("combined");
        let mut firmware = ReferenceFirmware::plug(
            &link,
            Hello {
                first_unacked_event: 0,
                ..hello(COMBINED, "REF001")
            },
        );
        let mut h = Harness::start(
            &[board("b11", Some(&link), &[&link])],
            &[],
            options(100 * MS),
        );
        let buttons = key("b11", DeviceRole::Buttons);
        let display = key("b11", DeviceRole::Display(0));
        let state = display_state("0:04.9");
        h.manager.send(&display, DeviceCommand::Display(state));
        // The device says HELLO every 500 ms: the first may predate the open.
        firmware.run_for(Duration::from_millis(1_200)).await;
        assert_eq!(firmware.link.state(), LinkState::Linked);
        assert!(firmware.shown.contains(&Command::Display(state)));
        for _ in 0..2 {
            assert!(matches!(
                h.next_event().await,
                DeviceEvent::Connected { .. }
            ));
        }
        // Heartbeats flowed for a while; now a press.
        let pressed_at = monotonic_now_us();
        let event = firmware
            .link
            .press(Button::Right, true, device_time(pressed_at))
            .unwrap();
        firmware.run_for(Duration::from_millis(50)).await;
        match h.next_event().await {
            DeviceEvent::Button {
                key: k,
                event: e,
                button,
                at,
                ..
            } => {
                assert_eq!((k, e, button), (buttons.clone(), event, Button::Right));
                assert!(
                    (at - pressed_at).abs() <= 1_000,
                    "off by {} µs",
                    at - pressed_at
                );
            }
            other => panic!("expected Button, got {other:?}"),
        }
        // Unacknowledged: the firmware resends every 100 ms; each copy is
        // reported with the same event number (the board core drops them).
        firmware.run_for(Duration::from_millis(350)).await;
        assert!(firmware.link.stats().retransmissions >= 2);
        assert_eq!(firmware.link.pending().count(), 1);
        while let Ok(Some(copy)) = timeout(Duration::from_millis(50), h.events.recv()).await {
            assert!(
                matches!(copy, DeviceEvent::Button { event: e, .. } if e == event),
                "only copies of the press: {copy:?}"
            );
        }
        h.manager.send(&buttons, DeviceCommand::Ack { event });
        firmware.run_for(Duration::from_millis(100)).await;
        assert_eq!(firmware.link.pending().count(), 0, "ACK taken");
        assert_eq!(firmware.link.stats().frame_errors, 0);
        assert_eq!(firmware.link.stats().link_losses, 0);
        // Copies sent before the ACK arrived may still be in flight; nothing
        // else comes.
        while let Ok(Some(copy)) = timeout(Duration::from_millis(100), h.events.recv()).await {
            assert!(
                matches!(copy, DeviceEvent::Button { event: e, .. } if e == event),
                "only copies of the press: {copy:?}"
            );
        }
    });
}

/// Plugs a unit at `link` that says HELLO exactly once, at the instant it
/// is plugged (before the host has even opened the port), and never again;
/// returns it once it was welcomed, and how long after its HELLO that was.
async fn plug_and_say_hello_once(link: &Path, hello: Hello) -> (FakeDevice, Duration) {
    let mut device = FakeDevice::plug(link);
    let said = Instant::now();
    device.send(Message::Hello(hello)).await;
    let answer = device.recv_significant(Duration::from_secs(5)).await;
    assert!(
        matches!(answer, Some(Message::Welcome { .. })),
        "the one HELLO was not answered with WELCOME: {answer:?}"
    );
    (device, said.elapsed())
}

/// SPEC 6.1 item 4: the host keeps what the port held at the open, so a
/// replugged unit links at its first HELLO, every time, even when the cable
/// flaps faster than the HELLO interval (the unit here never repeats its
/// HELLO: before, the host threw it away and linked only at the second).
#[test]
fn spec_6_1_a_replugged_unit_links_at_its_first_hello_even_when_the_cable_flaps() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("buttons");
        // A 10 s back-off: only hotplug can bring the device back quickly.
        let mut h = Harness::start(&[board("b11", Some(&link), &[])], &[], options(10 * SECOND));
        let mut took = Vec::new();
        for _cycle in 0..6 {
            let (device, after) = plug_and_say_hello_once(&link, hello(BUTTONS, "CC0011")).await;
            took.push(after);
            assert!(matches!(
                h.next_event().await,
                DeviceEvent::Connected { .. }
            ));
            // Unplugged at once (a flapping cable).
            drop(device);
            std::fs::remove_file(&link).unwrap();
            assert!(matches!(
                h.next_event().await,
                DeviceEvent::Disconnected { .. }
            ));
        }
        // Each unit said HELLO once: that it was welcomed at all is the
        // proof; how soon is a figure (BENCHMARKS-style, not a bound).
        eprintln!("WELCOME after the first HELLO of each replug: {took:?}");
    });
}

/// SPEC 6.1 item 3: two units with one serial on two boards: the second is
/// refused with NAK Busy at every HELLO while the first is linked, and
/// welcomed at its first HELLO after the first went away, without a replug.
#[test]
fn spec_6_1_two_units_with_one_serial_the_second_is_busy_until_the_first_is_gone() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let link_a = dir.path().join("buttons-a");
        let link_b = dir.path().join("buttons-b");
        let mut first = FakeDevice::plug(&link_a);
        let mut second = FakeDevice::plug(&link_b);
        let mut h = Harness::start(
            &[
                board("b20", Some(&link_a), &[]),
                board("b21", Some(&link_b), &[]),
            ],
            &[],
            options(10 * SECOND),
        );
        let unit = hello(BUTTONS, "CC0020");
        first.handshake(unit).await;
        match h.next_event().await {
            DeviceEvent::Connected { key: k, .. } => assert_eq!(k, key("b20", DeviceRole::Buttons)),
            other => panic!("expected Connected, got {other:?}"),
        }
        // The second one's HELLOs: NAK Busy each.
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut answered = 0;
        while answered < 3 {
            assert!(Instant::now() < deadline, "no NAK within 5 s");
            let seq = second.seq;
            second.send(Message::Hello(unit)).await;
            if let Some(message) = second.recv_significant(Duration::from_millis(200)).await {
                if answered == 0
                    && message
                        != (Message::Nak {
                            code: NakCode::Busy,
                            seq,
                        })
                {
                    // A NAK for a HELLO that waited at the open comes first.
                    assert!(
                        matches!(
                            message,
                            Message::Nak {
                                code: NakCode::Busy,
                                ..
                            }
                        ),
                        "{message:?}"
                    );
                    continue;
                }
                assert_eq!(
                    message,
                    Message::Nak {
                        code: NakCode::Busy,
                        seq
                    }
                );
                answered += 1;
            }
        }
        match h.next_event().await {
            DeviceEvent::Refused { key: k, reason, .. } => {
                assert_eq!(k, key("b21", DeviceRole::Buttons));
                assert!(
                    reason.contains("serial `CC0020` is already linked"),
                    "{reason}"
                );
                assert!(reason.contains("board b20"), "names the holder: {reason}");
            }
            other => panic!("expected Refused, got {other:?}"),
        }
        h.assert_no_event(Duration::from_millis(100)).await;
        // The first unit goes away; the second's next HELLO is welcomed.
        drop(first);
        std::fs::remove_file(&link_a).unwrap();
        assert!(matches!(
            h.next_event().await,
            DeviceEvent::Disconnected { .. }
        ));
        second.handshake(unit).await;
        match h.next_event().await {
            DeviceEvent::Connected { key: k, .. } => assert_eq!(k, key("b21", DeviceRole::Buttons)),
            other => panic!("expected Connected, got {other:?}"),
        }
    });
}

/// COBS-encodes `raw` and appends the delimiter (for frames the crate's
/// encoder refuses to build, such as a 17-byte serial).
fn cobs_wire(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut block: Vec<u8> = Vec::new();
    for &b in raw {
        if b == 0 {
            out.push(block.len() as u8 + 1);
            out.append(&mut block);
        } else {
            block.push(b);
            if block.len() == 254 {
                out.push(0xFF);
                out.append(&mut block);
            }
        }
    }
    out.push(block.len() as u8 + 1);
    out.append(&mut block);
    out.push(0);
    out
}

/// SPEC 5.2, 6.1 item 3 and 10.2: a serial that is empty, has a character
/// outside A-Z a-z 0-9, or has 17 characters (a Malformed frame) gets NAK
/// Malformed naming the HELLO's frame, and is never welcomed.
#[test]
fn spec_6_1_invalid_serials_get_nak_malformed() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("buttons");
        let mut device = FakeDevice::plug(&link);
        let mut h = Harness::start(&[board("b12", Some(&link), &[])], &[], options(10 * SECOND));
        let mut naks = 0;
        for serial in ["", "BU-0042", "BU 42"] {
            let deadline = Instant::now() + Duration::from_secs(5);
            loop {
                assert!(
                    Instant::now() < deadline,
                    "no NAK for {serial:?} within 5 s"
                );
                let seq = device.seq;
                device.send(Message::Hello(hello(BUTTONS, serial))).await;
                match device.recv_significant(Duration::from_millis(200)).await {
                    Some(Message::Nak {
                        code: NakCode::Malformed,
                        seq: got,
                    }) if got == seq => break,
                    Some(Message::Nak {
                        code: NakCode::Malformed,
                        ..
                    }) => continue,
                    None => continue,
                    Some(other) => panic!("serial {serial:?}: {other:?}"),
                }
            }
            naks += 1;
        }
        // 17 characters: the frame itself is Malformed; its CRC is valid, so
        // the host names it.
        let mut body = vec![0x01, 0x42, 1, 0x01, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0];
        body.push(0); // vendor ""
        body.push(0); // model ""
        body.push(17);
        body.extend_from_slice(b"ABCDEFGHIJKLMNOPQ");
        body.push(0); // firmware ""
        let mut raw = body.clone();
        raw.extend_from_slice(&chessclock_protocol::CRC.checksum(&body).to_le_bytes());
        device.write_raw(&cobs_wire(&raw)).await;
        assert_eq!(
            device.recv_significant(Duration::from_secs(2)).await,
            Some(Message::Nak {
                code: NakCode::Malformed,
                seq: 0x42
            })
        );
        naks += 1;
        assert_eq!(naks, 4);
        match h.next_event().await {
            DeviceEvent::Refused { reason, .. } => {
                assert!(reason.contains("is not 1 to 16 of A-Z a-z 0-9"), "{reason}")
            }
            other => panic!("expected Refused, got {other:?}"),
        }
        // Never welcomed; a valid serial next is.
        device.handshake(hello(BUTTONS, "BU0042")).await;
        loop {
            match h.next_event().await {
                DeviceEvent::Connected { hello, .. } => {
                    assert_eq!(hello.serial.as_str(), "BU0042");
                    break;
                }
                DeviceEvent::Refused { .. } | DeviceEvent::Errors { .. } => {}
                other => panic!("expected Connected, got {other:?}"),
            }
        }
    });
}

/// SPEC 2: a reserved role bit is ignored (roles 0x05 serve a buttons slot);
/// a HELLO without a known role is refused with NAK Busy.
#[test]
fn spec_2_reserved_role_bits_are_ignored_and_no_role_is_busy() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("buttons");
        let mut device = FakeDevice::plug(&link);
        let mut h = Harness::start(&[board("b13", Some(&link), &[])], &[], options(10 * SECOND));
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            assert!(Instant::now() < deadline, "no NAK within 5 s");
            device
                .send(Message::Hello(hello(Roles(0x04), "CC0013")))
                .await;
            if let Some(message) = device.recv_significant(Duration::from_millis(200)).await {
                assert!(
                    matches!(
                        message,
                        Message::Nak {
                            code: NakCode::Busy,
                            ..
                        }
                    ),
                    "{message:?}"
                );
                break;
            }
        }
        assert!(matches!(h.next_event().await, DeviceEvent::Refused { .. }));
        while device.recv(Duration::from_millis(100)).await.is_some() {}
        device.handshake(hello(Roles(0x05), "CC0013")).await;
        match h.next_event().await {
            DeviceEvent::Connected { hello, .. } => assert_eq!(hello.roles, Roles(0x05)),
            other => panic!("expected Connected, got {other:?}"),
        }
    });
}

/// SPEC 2: a combined unit in a buttons-only slot is welcomed and used for
/// its buttons and LEDs; no DISPLAY is sent to it.
#[test]
fn spec_2_a_combined_unit_in_a_buttons_only_slot_is_used_for_its_buttons() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("clock");
        let mut device = FakeDevice::plug(&link);
        let mut h = Harness::start(&[board("b14", Some(&link), &[])], &[], options(10 * SECOND));
        device.handshake(hello(COMBINED, "CC0014")).await;
        assert!(matches!(
            h.next_event().await,
            DeviceEvent::Connected { .. }
        ));
        let leds = Leds {
            left: false,
            right: true,
            arbiter: false,
        };
        h.manager
            .send(&key("b14", DeviceRole::Buttons), DeviceCommand::Leds(leds));
        assert_eq!(
            device.recv_significant(Duration::from_secs(2)).await,
            Some(Message::Leds(leds))
        );
        device.heartbeats(2).await;
        device.press(1, Button::Right, monotonic_now_us()).await;
        match h.next_event().await {
            DeviceEvent::Button { key: k, button, .. } => {
                assert_eq!(
                    (k, button),
                    (key("b14", DeviceRole::Buttons), Button::Right)
                )
            }
            other => panic!("expected Button, got {other:?}"),
        }
        assert_eq!(
            device.recv_significant(Duration::from_millis(300)).await,
            None,
            "no DISPLAY (and no ACK before the commit)"
        );
    });
}

/// SPEC 9.2 item 7 (regression, issue 13): a BUTTON stamped 1.3 s in the
/// future is not used for the time mapping; it is accounted at its arrival
/// and the next, normal press at its true instant.
#[test]
fn spec_9_2_a_press_stamped_in_the_future_does_not_move_the_mapping() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("buttons");
        let mut device = FakeDevice::plug(&link);
        let mut h = Harness::start(&[board("b15", Some(&link), &[])], &[], options(10 * SECOND));
        device.handshake(hello(BUTTONS, "CC0015")).await;
        assert!(matches!(
            h.next_event().await,
            DeviceEvent::Connected { .. }
        ));
        device.heartbeats(10).await;
        let glitch_at = monotonic_now_us();
        device.press(1, Button::Left, glitch_at + 1_300_000).await;
        match h.next_event().await {
            DeviceEvent::Button {
                event: 1,
                at,
                arrival,
                ..
            } => {
                assert_eq!(at, arrival, "an impossible stamp maps to the arrival");
                assert!(at >= glitch_at);
            }
            other => panic!("expected Button 1, got {other:?}"),
        }
        device.heartbeats(5).await;
        let pressed_at = monotonic_now_us();
        tokio::time::sleep(Duration::from_millis(30)).await;
        device.press(2, Button::Right, pressed_at).await;
        match h.next_event().await {
            DeviceEvent::Button {
                event: 2,
                at,
                arrival,
                ..
            } => {
                assert!(arrival - pressed_at >= 30_000);
                assert!(
                    (at - pressed_at).abs() <= 1_000,
                    "mapped {} µs off its true instant",
                    at - pressed_at
                );
            }
            other => panic!("expected Button 2, got {other:?}"),
        }
    });
}

/// SPEC 6.1 item 2 with the whole runtime behind the port: after WELCOME the
/// unit gets its DISPLAY and its LEDS once each (the runtime's rendering for
/// this unit), and nothing more until the host falls idle (its first
/// HOST_HEARTBEAT); the picture fits the unit's 4 digits (SPEC 8.1) and its
/// 8 brightness levels (SPEC 5.7).
#[test]
fn spec_6_1_display_and_leds_go_out_once_after_welcome_from_the_runtime() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("clock");
        let mut device = FakeDevice::plug(&link);
        let mut config = chessclockd::config::Config::default();
        config.daemon.rt_priority = 0;
        config.daemon.mlock = false;
        let mut b = board("b30", Some(&link), &[&link]);
        b.control = "fide-classical".into();
        config.boards.push(b);
        let runtime = chessclockd::runtime::Runtime::start(
            config,
            Some(dir.path().join("state")),
            chessclockd::runtime::Devices::Manager,
        )
        .unwrap();
        let unit = Hello {
            capabilities: Capabilities {
                displays: 2,
                digits: 4,
                tenths: true,
                brightness_levels: 8,
                text_chars: 8,
                ..Capabilities::default()
            },
            ..hello(COMBINED, "CC0030")
        };
        device.handshake(unit).await;
        let mut displays = Vec::new();
        let mut leds = 0;
        loop {
            match device.recv(Duration::from_secs(5)).await.map(|f| f.message) {
                Some(Message::Display(state)) => displays.push(state),
                Some(Message::Leds(_)) => leds += 1,
                Some(Message::HostHeartbeat) => break,
                Some(Message::Welcome { .. }) => {} // an answer to an earlier HELLO
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(displays.len(), 1, "{displays:?}");
        assert_eq!(leds, 1);
        // 90 min + 30 s shown on 4 digits: hours and minutes, rounded up.
        assert_eq!(displays[0].left.time.as_str(), "1.31");
        assert_eq!(displays[0].right.time.as_str(), "1.31");
        assert_eq!(displays[0].brightness, 5, "200 of 255 on 8 levels");
        assert!(!displays[0]
            .left
            .icons
            .contains(chessclock_protocol::Icons::LINK_LOST));
        runtime.shutdown().await;
    });
}

// ---------------------------------------------------------------------------
// SPEC 5.7 and 8: what the whole runtime (timing thread, store, device
// manager) sends the display units on their PTYs. Times are set by the
// arbiter's corrections while no clock runs, so every expected text is
// exact; where a clock runs, the tests wait for a picture, never for a time.
// ---------------------------------------------------------------------------

const ROOT: chessclockd::control::Caller = chessclockd::control::Caller::uid(0);

/// A display unit's HELLO: `displays` panels of `digits` digits, the tenths
/// flag, `levels` brightness levels.
fn display_unit(serial: &str, displays: u8, digits: u8, tenths: bool, levels: u8) -> Hello {
    Hello {
        capabilities: Capabilities {
            displays,
            digits,
            tenths,
            brightness_levels: levels,
            text_chars: 16,
            ..Capabilities::default()
        },
        ..hello(DISPLAY, serial)
    }
}

/// A board of display units only (no button unit configured).
fn display_board(id: &str, displays: &[(&Path, DisplaySide)]) -> BoardConfig {
    let mut board = board(id, None, &[]);
    board.control = "60".into();
    board.displays = displays
        .iter()
        .map(|(path, side)| DisplayRef {
            device: DeviceRef::Path(path.to_path_buf()),
            side: *side,
        })
        .collect();
    board
}

fn runtime_config(boards: Vec<BoardConfig>, display: DisplayConfig) -> Config {
    let mut config = Config::default();
    config.daemon.rt_priority = 0;
    config.daemon.mlock = false;
    config.display = display;
    config.boards = boards;
    config
}

fn start_runtime(dir: &Path, config: Config) -> Runtime {
    Runtime::start(config, Some(dir.join("state")), Devices::Manager).unwrap()
}

async fn command(runtime: &Runtime, board: &str, command: Command) {
    let reply = timeout(
        Duration::from_secs(5),
        runtime.handle().call(board, command.clone(), ROOT),
    )
    .await
    .expect("a reply within 5 s");
    if let Err(error) = reply {
        panic!("{command:?} refused: {error}");
    }
}

/// The arbiter sets both remaining times (ms) while no clock runs.
async fn set_times(runtime: &Runtime, board: &str, white_ms: i64, black_ms: i64) {
    for (side, ms) in [(Side::White, white_ms), (Side::Black, black_ms)] {
        let adjust = Command::Adjust {
            side,
            remaining_ms: Some(ms),
            moves: None,
            stage: None,
        };
        command(runtime, board, adjust).await;
    }
}

/// Waits until unit `index` of `units` is sent a DISPLAY that `want`
/// accepts and returns it; every unit says a heartbeat every 100 ms
/// meanwhile, so none loses its link. Fails after 5 s with the last
/// DISPLAY seen. Every DISPLAY received is checked against SPEC 8.2: the
/// host never sends LINK_LOST or LOW_POWER.
async fn display_until(
    units: &mut [FakeDevice],
    index: usize,
    what: &str,
    want: impl Fn(&DisplayState) -> bool,
) -> DisplayState {
    let mut seen = displays_until(units, index, what, want).await;
    seen.pop().unwrap()
}

/// [`display_until`], returning every DISPLAY unit `index` was sent on the
/// way, the accepted one last.
async fn displays_until(
    units: &mut [FakeDevice],
    index: usize,
    what: &str,
    want: impl Fn(&DisplayState) -> bool,
) -> Vec<DisplayState> {
    let mut seen: Vec<DisplayState> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut next_beat = Instant::now();
    loop {
        let now = Instant::now();
        if now >= next_beat {
            for unit in units.iter_mut() {
                unit.send(Message::DeviceHeartbeat {
                    device_time_us: device_time(monotonic_now_us()),
                    low_power: false,
                })
                .await;
            }
            next_beat = now + Duration::from_millis(100);
        }
        assert!(
            now < deadline,
            "{what}: not sent within 5 s; the last DISPLAY was {:?}",
            seen.last()
        );
        let wait = next_beat.min(deadline).saturating_duration_since(now);
        if let Some(Frame {
            message: Message::Display(state),
            ..
        }) = units[index].recv(wait).await
        {
            for panel in [&state.left, &state.right] {
                assert_eq!(
                    panel.icons.0 & Icons::DEVICE_OWN.0,
                    0,
                    "SPEC 8.2: the host sent LINK_LOST or LOW_POWER: {state:?}"
                );
            }
            let done = want(&state);
            seen.push(state);
            if done {
                return seen;
            }
        }
    }
}

/// (White ms, Black ms) set by the arbiter, and the (left, right) texts
/// each of `N` units shows then.
type Step<const N: usize> = ((i64, i64), [(&'static str, &'static str); N]);

/// The panels' time texts, left and right.
fn times(state: &DisplayState) -> (&str, &str) {
    (state.left.time.as_str(), state.right.time.as_str())
}

/// Waits until unit `index` shows exactly `left` and `right`.
async fn shows(units: &mut [FakeDevice], index: usize, left: &str, right: &str) {
    let what = format!("unit {index} showing {left:?} | {right:?}");
    display_until(units, index, &what, |s| times(s) == (left, right)).await;
}

/// Plugs and welcomes each of `hellos` at its own link under `dir`.
async fn plug_units(dir: &Path, hellos: &[(&str, Hello)]) -> Vec<FakeDevice> {
    let mut units = Vec::new();
    for (name, hello) in hellos {
        let mut unit = FakeDevice::plug(&dir.join(name));
        unit.handshake(*hello).await;
        units.push(unit);
    }
    units
}

/// SPEC 8.1: a unit renders for its declared digits. From one hour a
/// 4-digit unit gets `H.MM` (minutes rounded up: `1.30` for 1:29:30, `1.00`
/// for the last second above one hour, then `59:59`); a 5-digit unit gets
/// `H:MM:SS` up to `9:59:59` and `10.00` at ten hours; a 6-digit unit
/// `H:MM:SS` there too. Tenths (threshold set to 2 h here) only where they
/// fit: below 10 min on 4 digits, below 1 h on 5 and 6.
#[test]
fn spec_8_1_a_four_digit_unit_is_sent_hours_as_h_mm() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let paths = ["d4", "d5", "d6"].map(|name| dir.path().join(name));
        let board = display_board(
            "b40",
            &[
                (&paths[0], DisplaySide::Both),
                (&paths[1], DisplaySide::Both),
                (&paths[2], DisplaySide::Both),
            ],
        );
        let display = DisplayConfig {
            tenths_below_ms: 2 * 3_600_000,
            ..DisplayConfig::default()
        };
        let runtime = start_runtime(dir.path(), runtime_config(vec![board], display));
        let mut units = plug_units(
            dir.path(),
            &[
                ("d4", display_unit("CC0040", 2, 4, true, 0)),
                ("d5", display_unit("CC0041", 2, 5, true, 0)),
                ("d6", display_unit("CC0042", 2, 6, true, 0)),
            ],
        )
        .await;
        // (White ms, Black ms) and what the 4-, 5- and 6-digit units show.
        let steps: [Step<3>; 5] = [
            (
                (5_370_000, 36_000_000),
                [
                    ("1.30", "10.00"),
                    ("1:29:30", "10.00"),
                    ("1:29:30", "10:00:00"),
                ],
            ),
            (
                (3_599_500, 35_999_000),
                [
                    ("1.00", "10.00"),
                    ("59:59.5", "9:59:59"),
                    ("59:59.5", "9:59:59"),
                ],
            ),
            (
                (3_599_000, 3_600_000),
                [
                    ("59:59", "1.00"),
                    ("59:59.0", "1:00:00"),
                    ("59:59.0", "1:00:00"),
                ],
            ),
            (
                (600_000, 3_601_000),
                [
                    ("10:00", "1.01"),
                    ("10:00.0", "1:00:01"),
                    ("10:00.0", "1:00:01"),
                ],
            ),
            (
                (599_900, 359_999_000),
                [
                    ("9:59.9", "99.59"),
                    ("9:59.9", "100.00"),
                    ("9:59.9", "99:59:59"),
                ],
            ),
        ];
        for ((white, black), shown) in steps {
            set_times(&runtime, "b40", white, black).await;
            for (index, (left, right)) in shown.into_iter().enumerate() {
                shows(&mut units, index, left, right).await;
            }
        }
        runtime.shutdown().await;
    });
}

/// SPEC 8.1: a remaining time is rounded up to the unit shown (so `0:00`
/// only with the flag), and tenths start once the rounded-up tenths are
/// below the threshold (default 20 s: `0:20` is followed by `0:19.9`,
/// never by `0:20.0`), on a unit with the tenths flag only.
#[test]
fn spec_8_1_times_are_rounded_up_and_tenths_start_below_the_threshold() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let tenths = dir.path().join("tenths");
        let whole = dir.path().join("whole");
        let board = display_board(
            "b41",
            &[(&tenths, DisplaySide::Both), (&whole, DisplaySide::Both)],
        );
        let runtime = start_runtime(
            dir.path(),
            runtime_config(vec![board], DisplayConfig::default()),
        );
        let mut units = plug_units(
            dir.path(),
            &[
                ("tenths", display_unit("CC0043", 2, 5, true, 0)),
                ("whole", display_unit("CC0044", 2, 5, false, 0)),
            ],
        )
        .await;
        // (White ms, Black ms), then what the unit with tenths and the
        // unit without show.
        let steps: [Step<2>; 4] = [
            ((19_950, 59_001), [("0:20", "1:00"), ("0:20", "1:00")]),
            ((19_901, 59_000), [("0:20", "0:59"), ("0:20", "0:59")]),
            ((19_900, 20_001), [("0:19.9", "0:21"), ("0:20", "0:21")]),
            ((1, 101), [("0:00.1", "0:00.2"), ("0:01", "0:01")]),
        ];
        for ((white, black), shown) in steps {
            set_times(&runtime, "b41", white, black).await;
            for (index, (left, right)) in shown.into_iter().enumerate() {
                shows(&mut units, index, left, right).await;
            }
        }

        // White's last 0.3 s run out: `0:00.0` comes with the flag, never
        // before it, and the shown time never goes up.
        set_times(&runtime, "b41", 300, 60_000).await;
        shows(&mut units, 0, "0:00.3", "1:00").await;
        command(&runtime, "b41", Command::Start).await;
        let run = displays_until(&mut units, 0, "White's flag", |s| {
            s.left.icons.contains(Icons::FLAG)
        })
        .await;
        let (flagged, before) = run.split_last().unwrap();
        assert_eq!(flagged.left.time.as_str(), "0:00.0");
        let tenths = |text: &str| -> u32 {
            let (_, rest) = text.split_once(':').unwrap();
            rest.replace('.', "").parse().unwrap()
        };
        let mut shown = 3;
        for state in before {
            let text = state.left.time.as_str();
            assert_ne!(text, "0:00.0", "zero shown before the flag: {before:?}");
            assert!(tenths(text) <= shown, "the time went up: {before:?}");
            shown = tenths(text);
        }
        runtime.shutdown().await;
    });
}

/// SPEC 8.2: the displays of a board whose button unit has no link get
/// NO_BUTTONS on both panels and the text `NO BUTTONS`, never LINK_LOST
/// (checked on every DISPLAY by [`display_until`]); both go when the button
/// unit links and come back when it is unplugged.
#[test]
fn spec_8_2_a_board_without_its_button_unit_sends_no_buttons_never_link_lost() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let buttons = dir.path().join("buttons");
        let display = dir.path().join("display");
        let mut board = board("b42", Some(&buttons), &[&display]);
        board.control = "60".into();
        let runtime = start_runtime(
            dir.path(),
            runtime_config(vec![board], DisplayConfig::default()),
        );
        let mut units = plug_units(
            dir.path(),
            &[("display", display_unit("CC0045", 2, 5, true, 0))],
        )
        .await;
        let no_buttons = |s: &DisplayState| {
            s.left.icons.contains(Icons::NO_BUTTONS) && s.right.icons.contains(Icons::NO_BUTTONS)
        };
        let lost = display_until(&mut units, 0, "NO_BUTTONS", no_buttons).await;
        assert_eq!(lost.text.as_str(), "NO BUTTONS");
        assert_eq!(times(&lost), ("1:00", "1:00"));

        // The button unit is plugged and links: the mark goes.
        let mut unit = FakeDevice::plug(&buttons);
        unit.handshake(hello(BUTTONS, "CC0046")).await;
        units.push(unit);
        let linked = display_until(&mut units, 0, "NO_BUTTONS gone", |s| {
            s.left.icons.0 & Icons::NO_BUTTONS.0 == 0 && s.right.icons.0 & Icons::NO_BUTTONS.0 == 0
        })
        .await;
        assert_eq!(linked.text.as_str(), "");

        // Unplugged: the mark comes back, still without LINK_LOST.
        drop(units.pop());
        std::fs::remove_file(&buttons).unwrap();
        let lost = display_until(&mut units, 0, "NO_BUTTONS again", no_buttons).await;
        assert_eq!(lost.text.as_str(), "NO BUTTONS");
        runtime.shutdown().await;
    });
}

/// A board with one two-panel display unit (5 digits, tenths) showing both
/// sides, linked: the runtime and the unit.
async fn one_display_board(dir: &Path, id: &str, serial: &str) -> (Runtime, Vec<FakeDevice>) {
    let display = dir.join("display");
    let board = display_board(id, &[(&display, DisplaySide::Both)]);
    let runtime = start_runtime(dir, runtime_config(vec![board], DisplayConfig::default()));
    let units = plug_units(dir, &[("display", display_unit(serial, 2, 5, true, 0))]).await;
    (runtime, units)
}

fn has_flag(panel: &Panel) -> bool {
    panel.icons.contains(Icons::FLAG)
}

fn has_first_flag(panel: &Panel) -> bool {
    panel.icons.contains(Icons::FIRST_FLAG)
}

/// SPEC 8.2: FIRST_FLAG is set with the first flag, alongside its FLAG, on
/// that side only, and stays there when the other flag falls.
#[test]
fn spec_8_2_first_flag_marks_the_side_that_fell_first_and_keeps_it() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let (runtime, mut units) = one_display_board(dir.path(), "b43", "CC0047").await;

        set_times(&runtime, "b43", 200, 300).await;
        shows(&mut units, 0, "0:00.2", "0:00.3").await;
        command(&runtime, "b43", Command::Start).await;
        let run = displays_until(&mut units, 0, "White's flag", |s| has_flag(&s.left)).await;
        let (fallen, before) = run.split_last().unwrap();
        for state in before {
            assert!(
                !has_first_flag(&state.left) && !has_first_flag(&state.right),
                "{run:?}"
            );
        }
        assert!(
            has_first_flag(&fallen.left),
            "FIRST_FLAG with the flag: {fallen:?}"
        );
        assert!(
            !has_flag(&fallen.right) && !has_first_flag(&fallen.right),
            "{fallen:?}"
        );

        // White moves after its flag; Black's flag falls second.
        command(&runtime, "b43", Command::Press { side: Side::White }).await;
        let run = displays_until(&mut units, 0, "Black's flag", |s| has_flag(&s.right)).await;
        for state in &run {
            assert!(
                has_flag(&state.left) && has_first_flag(&state.left),
                "{run:?}"
            );
            assert!(
                !has_first_flag(&state.right),
                "never on both sides: {run:?}"
            );
        }
        runtime.shutdown().await;
    });
}

/// SPEC 8.1: a one-panel unit shows the side it is configured for in
/// `left`, with a blank `right` panel; `side = "both"` shows the side whose
/// clock runs, else the side to move (issue 14: Black's time on a one-panel
/// unit).
#[test]
fn spec_8_1_a_one_panel_unit_shows_the_side_it_is_configured_for() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let paths = ["white", "black", "both"].map(|name| dir.path().join(name));
        let board = display_board(
            "b44",
            &[
                (&paths[0], DisplaySide::White),
                (&paths[1], DisplaySide::Black),
                (&paths[2], DisplaySide::Both),
            ],
        );
        let runtime = start_runtime(
            dir.path(),
            runtime_config(vec![board], DisplayConfig::default()),
        );
        let mut units = plug_units(
            dir.path(),
            &[
                ("white", display_unit("CC0048", 1, 5, true, 0)),
                ("black", display_unit("CC0049", 1, 5, true, 0)),
                ("both", display_unit("CC0050", 1, 5, true, 0)),
            ],
        )
        .await;
        let blank = Panel {
            time: Text::empty(),
            icons: Icons(0),
            moves: 0xFFFF,
            stage: 0,
        };
        set_times(&runtime, "b44", 61_000, 182_000).await;
        for (index, left) in [(0, "1:01"), (1, "3:02"), (2, "1:01")] {
            let shown =
                display_until(&mut units, index, left, |s| s.left.time.as_str() == left).await;
            assert_eq!(shown.right, blank, "unit {index}: {shown:?}");
        }
        // White moves: Black's clock runs, and the `both` unit follows it.
        command(&runtime, "b44", Command::Start).await;
        command(&runtime, "b44", Command::Press { side: Side::White }).await;
        let shown = display_until(&mut units, 2, "Black's running clock", |s| {
            s.left.icons.contains(Icons::RUNNING) && s.left.time.as_str().starts_with("3:0")
        })
        .await;
        assert_eq!(shown.right, blank);
        let shown = display_until(&mut units, 1, "Black's running clock", |s| {
            s.left.icons.contains(Icons::RUNNING)
        })
        .await;
        assert!(shown.left.time.as_str().starts_with("3:0"), "{shown:?}");
        assert_eq!(shown.right, blank);
        runtime.shutdown().await;
    });
}

/// SPEC 5.7: `[display] brightness` b (0..=255) is sent as
/// `round(b × (L − 1) / 255)` to a unit with L levels (0 when L is 0), and a
/// reload applies a new setting to every unit.
#[test]
fn spec_5_7_brightness_is_scaled_to_the_units_declared_levels() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let levels = [0u8, 2, 8, 255];
        let names = ["l0", "l2", "l8", "l255"];
        let paths = names.map(|name| dir.path().join(name));
        let displays: Vec<(&Path, DisplaySide)> = paths
            .iter()
            .map(|p| (p.as_path(), DisplaySide::Both))
            .collect();
        let board = display_board("b45", &displays);
        let setting = |brightness| DisplayConfig {
            brightness,
            ..DisplayConfig::default()
        };
        let config = runtime_config(vec![board], setting(128));
        let mut runtime = start_runtime(dir.path(), config.clone());
        let hellos: Vec<(&str, Hello)> = names
            .iter()
            .zip(levels)
            .enumerate()
            .map(|(i, (name, l))| (*name, display_unit(&format!("CC005{i}"), 2, 5, true, l)))
            .collect();
        let mut units = plug_units(dir.path(), &hellos).await;
        // (setting, what each unit is sent): 128 × 1 / 255 = 0.502 → 1,
        // 128 × 7 / 255 = 3.51 → 4, 128 × 254 / 255 = 127.498 → 127.
        let steps: [(u8, [u8; 4]); 3] = [
            (128, [0, 1, 4, 127]),
            (255, [0, 1, 7, 254]),
            (1, [0, 0, 0, 1]),
        ];
        // A unit is sent a DISPLAY when its picture changes: where the
        // scaled value stays the same, nothing new is sent.
        let mut before: Option<[u8; 4]> = None;
        for (b, expected) in steps {
            if b != 128 {
                let mut new = config.clone();
                new.display = setting(b);
                runtime.reload(new).await;
            }
            for (index, want) in expected.into_iter().enumerate() {
                if before.is_some_and(|before| before[index] == want) {
                    continue;
                }
                let what = format!("brightness {want} of {} levels at {b}", levels[index]);
                let shown = display_until(&mut units, index, &what, |s| {
                    before.is_none_or(|before| s.brightness != before[index])
                })
                .await;
                assert_eq!(shown.brightness, want, "{what}: {shown:?}");
            }
            before = Some(expected);
        }
        runtime.shutdown().await;
    });
}

/// SPEC 8.2: FIRST_FLAG goes away with its side's flag when the arbiter
/// gives that side time back; the flag that then stands fell first, and
/// keeps the mark when the corrected side's flag falls again.
#[test]
fn spec_8_2_first_flag_goes_with_the_time_given_back() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let (runtime, mut units) = one_display_board(dir.path(), "b46", "CC0056").await;

        set_times(&runtime, "b46", 100, 100).await;
        shows(&mut units, 0, "0:00.1", "0:00.1").await;
        command(&runtime, "b46", Command::Start).await;
        display_until(&mut units, 0, "White's flag", |s| has_flag(&s.left)).await;
        command(&runtime, "b46", Command::Press { side: Side::White }).await;
        display_until(&mut units, 0, "Black's flag", |s| has_flag(&s.right)).await;

        // White is given 0.3 s back: its flag and the mark go.
        let give_back = Command::Adjust {
            side: Side::White,
            remaining_ms: Some(300),
            moves: None,
            stage: None,
        };
        command(&runtime, "b46", give_back).await;
        let corrected = display_until(&mut units, 0, "White's flag withdrawn", |s| {
            !has_flag(&s.left)
        })
        .await;
        assert!(!has_first_flag(&corrected.left), "{corrected:?}");
        assert!(
            has_flag(&corrected.right) && has_first_flag(&corrected.right),
            "Black's flag, still down, is now the first: {corrected:?}"
        );

        // Black moves: White's clock runs out again, second this time.
        command(&runtime, "b46", Command::Press { side: Side::Black }).await;
        let fallen =
            display_until(&mut units, 0, "White's second flag", |s| has_flag(&s.left)).await;
        assert!(
            has_first_flag(&fallen.right) && !has_first_flag(&fallen.left),
            "Black's flag stood first: {fallen:?}"
        );
        runtime.shutdown().await;
    });
}

/// Sends `time` to `slot`'s display, due at `due`; true when the unit
/// reads exactly that display frame next.
async fn show(
    manager: &DeviceManager,
    device: &mut FakeDevice,
    slot: &DeviceKey,
    time: &str,
    due: Due,
) -> bool {
    let state = display_state(time);
    manager.send_due(slot, DeviceCommand::Display(state), due);
    device.recv_significant(Duration::from_secs(2)).await == Some(Message::Display(state))
}

/// The links count each display frame from the instant its change was due
/// to its write: a deadline's frame and a press's frame in their own
/// counts, a frame sent without a due instant in neither, and a display
/// the unit already shows (nothing written) not at all.
#[test]
fn display_writes_are_counted_from_the_instant_they_were_due() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("display");
        let mut device = FakeDevice::plug(&link);
        let mut h = Harness::start(&[board("b12", None, &[&link])], &[], options(100 * MS));
        device.handshake(hello(DISPLAY, "CC0012")).await;
        assert!(matches!(
            h.next_event().await,
            DeviceEvent::Connected { .. }
        ));
        let display = key("b12", DeviceRole::Display(0));
        assert!(show(&h.manager, &mut device, &display, "5:00", Due::Unmeasured).await);
        let deadline = monotonic_now_us() - 30 * MS;
        assert!(
            show(
                &h.manager,
                &mut device,
                &display,
                "4:59",
                Due::Deadline(deadline)
            )
            .await
        );
        let arrival = monotonic_now_us() - 7 * MS;
        assert!(
            show(
                &h.manager,
                &mut device,
                &display,
                "4:58",
                Due::Press(arrival)
            )
            .await
        );
        // The same state again: the unit shows it already, nothing is
        // written, and the instant must not stay for a later frame.
        h.manager.send_due(
            &display,
            DeviceCommand::Display(display_state("4:58")),
            Due::Press(arrival),
        );
        let written_by = monotonic_now_us();
        // The unit restarts: its welcome brings the display again, written
        // without a command behind it, so counted nowhere.
        device.handshake(hello(DISPLAY, "CC0012")).await;
        assert_eq!(
            device.recv_significant(Duration::from_secs(2)).await,
            Some(Message::Display(display_state("4:58")))
        );
        let [after_deadlines, after_presses] = h.manager.display_writes();
        assert_eq!((after_deadlines.count(), after_presses.count()), (1, 1));
        assert!((30 * MS..written_by - deadline).contains(&after_deadlines.max_us()));
        assert!((7 * MS..written_by - arrival).contains(&after_presses.max_us()));
    });
}
