//! SPEC 2, 5.2, 6.1 and 10.2 on a PTY: which HELLOs the host welcomes and
//! which it refuses (NAK Busy, UnsupportedVersion, Malformed), a replugged
//! unit linked at its first HELLO, and two units with one serial.

use super::*;

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

/// SPEC 6.1 item 2 and 7.2: a unit already linked that says HELLO again
/// (same boot: its WELCOME was lost, or it timed the link out) is welcomed
/// again and reported to the board as connected with that HELLO, so the
/// board sends its whole state once more and moves the unit's event record
/// to the HELLO's `first_unacked_event` (before, the repeat was answered
/// with a bare WELCOME and the board never heard of it).
#[test]
fn spec_6_1_a_repeated_hello_while_linked_reaches_the_board_as_a_new_welcome() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("buttons");
        let mut h = Harness::start(&[board("b12", Some(&link), &[])], &[], options(10 * SECOND));
        let first = hello(BUTTONS, "CC0012");
        let (mut device, _) = plug_and_say_hello_once(&link, first).await;
        assert!(matches!(
            h.next_event().await,
            DeviceEvent::Connected { .. }
        ));
        let again = Hello {
            first_unacked_event: 5,
            ..first
        };
        device.send(Message::Hello(again)).await;
        let answer = device.recv_significant(Duration::from_secs(5)).await;
        assert!(
            matches!(answer, Some(Message::Welcome { .. })),
            "the repeated HELLO was not answered with WELCOME: {answer:?}"
        );
        match h.next_event().await {
            DeviceEvent::Connected { hello, .. } => assert_eq!(hello.first_unacked_event, 5),
            other => panic!("expected Connected for the repeated HELLO, got {other:?}"),
        }
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
