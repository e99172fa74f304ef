use super::*;

fn roundtrip(frame: Frame) {
    let mut wire = [0u8; MAX_WIRE_FRAME];
    let n = encode(&frame, &mut wire).unwrap();
    assert!(n <= MAX_WIRE_FRAME);
    assert_eq!(wire[n - 1], 0);
    assert!(!wire[..n - 1].contains(&0));
    assert_eq!(decode(&wire[..n - 1]), Ok(frame));
}

#[test]
fn crc_is_crc32_iso_hdlc() {
    assert_eq!(CRC.checksum(b"123456789"), 0xCBF4_3926);
}

#[test]
fn largest_hello_fits() {
    let t = Text::<16>::new("ABCDEFGHIJKLMNOP").unwrap();
    let hello = Hello {
        protocol_version: 1,
        roles: Roles::COMBINED,
        vendor: t,
        model: t,
        serial: t,
        firmware: t,
        ..Hello::default()
    };
    roundtrip(Frame {
        seq: 255,
        message: Message::Hello(hello),
    });
}

#[test]
fn decode_refuses_bad_input() {
    assert_eq!(decode(&[]), Err(FrameError::Cobs));
    assert_eq!(decode(&[1, 0, 1]), Err(FrameError::Cobs));
    assert_eq!(decode(&[0xFF; 200]), Err(FrameError::Oversize));
    assert_eq!(decode(&[3, 1, 2]), Err(FrameError::Malformed));
    let mut wire = [0u8; MAX_WIRE_FRAME];
    let n = encode(
        &Frame {
            seq: 1,
            message: Message::Ack { event: 9 },
        },
        &mut wire,
    )
    .unwrap();
    wire[2] ^= 0x40;
    assert_eq!(decode(&wire[..n - 1]), Err(FrameError::BadCrc));
}

#[test]
fn encode_reports_small_buffer() {
    let f = Frame {
        seq: 0,
        message: Message::HostHeartbeat,
    };
    let mut out = [0u8; 4];
    assert_eq!(encode(&f, &mut out), Err(BufferTooSmall));
}
