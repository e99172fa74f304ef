//! The protocol crate's reference device state machine as the firmware on
//! a PTY: it interoperates with the host's device link.

use super::*;

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
