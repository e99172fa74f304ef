//! Property tests of the codec: encode→decode is the identity, the
//! accumulator finds the same frames whatever the read boundaries, and no
//! input makes anything panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

use chessclock_protocol::*;
use proptest::prelude::*;

fn text<const N: usize>() -> impl Strategy<Value = Text<N>> {
    prop_oneof![
        "[ -~]{0,16}".prop_map(|s| Text::<N>::truncated(&s)),
        any::<String>().prop_map(|s| Text::<N>::truncated(&s)),
    ]
}

fn panel() -> impl Strategy<Value = Panel> {
    (text::<10>(), any::<u16>(), any::<u16>(), any::<u8>()).prop_map(
        |(time, icons, moves, stage)| Panel {
            time,
            icons: Icons(icons),
            moves,
            stage,
        },
    )
}

fn hello() -> impl Strategy<Value = Hello> {
    (
        (
            any::<u8>(),
            any::<u8>(),
            any::<u8>(),
            any::<u8>(),
            any::<[bool; 3]>(),
        ),
        (
            any::<u8>(),
            any::<u8>(),
            any::<u16>(),
            any::<u32>(),
            any::<u16>(),
        ),
        (text::<16>(), text::<16>(), text::<16>(), text::<16>()),
    )
        .prop_map(
            |(
                (protocol_version, roles, displays, digits, [tenths, buzzer, arbiter_button]),
                (brightness_levels, text_chars, icons, boot_id, first_unacked_event),
                (vendor, model, serial, firmware),
            )| Hello {
                protocol_version,
                roles: Roles(roles),
                capabilities: Capabilities {
                    displays,
                    digits,
                    tenths,
                    icons: Icons(icons),
                    buzzer,
                    brightness_levels,
                    arbiter_button,
                    text_chars,
                },
                vendor,
                model,
                serial,
                firmware,
                boot_id,
                first_unacked_event,
            },
        )
}

fn button() -> impl Strategy<Value = Button> {
    prop_oneof![
        Just(Button::Left),
        Just(Button::Right),
        Just(Button::Arbiter),
        (3u8..=255).prop_map(Button::Unknown),
    ]
}

fn nak_code() -> impl Strategy<Value = NakCode> {
    any::<u8>().prop_map(NakCode::from_code)
}

const KNOWN_IDS: [u8; 10] = [
    ids::HELLO,
    ids::BUTTON,
    ids::DEVICE_HEARTBEAT,
    ids::NAK,
    ids::WELCOME,
    ids::ACK,
    ids::DISPLAY,
    ids::LEDS,
    ids::BEEP,
    ids::HOST_HEARTBEAT,
];

fn message() -> impl Strategy<Value = Message> {
    prop_oneof![
        hello().prop_map(Message::Hello),
        (any::<u16>(), button(), any::<bool>(), any::<u64>()).prop_map(
            |(event, button, pressed, device_time_us)| Message::Button {
                event,
                button,
                pressed,
                device_time_us
            }
        ),
        (any::<u64>(), any::<bool>()).prop_map(|(device_time_us, low_power)| {
            Message::DeviceHeartbeat {
                device_time_us,
                low_power,
            }
        }),
        (any::<u8>(), any::<u16>(), any::<u16>()).prop_map(|(v, h, l)| Message::Welcome {
            protocol_version: v,
            heartbeat_interval_ms: h,
            link_timeout_ms: l
        }),
        any::<u16>().prop_map(|event| Message::Ack { event }),
        (panel(), panel(), text::<16>(), any::<u8>()).prop_map(
            |(left, right, text, brightness)| {
                Message::Display(DisplayState {
                    left,
                    right,
                    text,
                    brightness,
                })
            }
        ),
        any::<[bool; 3]>().prop_map(|[left, right, arbiter]| Message::Leds(Leds {
            left,
            right,
            arbiter
        })),
        (any::<u16>(), any::<u8>())
            .prop_map(|(duration_ms, count)| Message::Beep { duration_ms, count }),
        Just(Message::HostHeartbeat),
        (nak_code(), any::<u8>()).prop_map(|(code, seq)| Message::Nak { code, seq }),
        any::<u8>()
            .prop_filter("unknown ids only", |id| !KNOWN_IDS.contains(id))
            .prop_map(|id| Message::Unknown { id }),
    ]
}

fn frame() -> impl Strategy<Value = Frame> {
    (any::<u8>(), message()).prop_map(|(seq, message)| Frame { seq, message })
}

fn wire(frame: &Frame) -> Vec<u8> {
    let mut out = [0u8; MAX_WIRE_FRAME];
    let n = encode(frame, &mut out).expect("MAX_WIRE_FRAME always suffices");
    out[..n].to_vec()
}

/// Every frame and error the accumulator finds in `chunks`, in order.
fn accumulate(chunks: &[&[u8]]) -> (Vec<Frame>, usize) {
    let mut acc = Accumulator::new();
    let mut frames = Vec::new();
    let mut errors = 0;
    for chunk in chunks {
        let mut rest: &[u8] = chunk;
        loop {
            match acc.feed(rest) {
                Feed::NeedMore => break,
                Feed::Frame(f, r) => {
                    assert!(r.len() < rest.len(), "no progress");
                    frames.push(f);
                    rest = r;
                }
                Feed::Error(_, r) => {
                    assert!(r.len() < rest.len(), "no progress");
                    errors += 1;
                    rest = r;
                }
            }
        }
    }
    (frames, errors)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn encode_then_decode_is_identity(f in frame()) {
        let w = wire(&f);
        prop_assert!(w.len() <= MAX_WIRE_FRAME);
        prop_assert_eq!(*w.last().unwrap(), 0);
        prop_assert!(!w[..w.len() - 1].contains(&0));
        prop_assert_eq!(decode(&w[..w.len() - 1]), Ok(f));
    }

    #[test]
    fn encode_never_overruns_a_small_buffer(f in frame(), size in 0usize..MAX_WIRE_FRAME) {
        let mut out = vec![0u8; size];
        match encode(&f, &mut out) {
            Ok(n) => prop_assert_eq!(&out[..n], &wire(&f)[..]),
            Err(BufferTooSmall) => prop_assert!(wire(&f).len() > size),
        }
    }

    #[test]
    fn accumulator_yields_the_frames_whatever_the_splits(
        frames in proptest::collection::vec(frame(), 0..12),
        idle in proptest::collection::vec(0usize..3, 12),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..20),
    ) {
        let mut stream = Vec::new();
        for (i, f) in frames.iter().enumerate() {
            stream.extend(std::iter::repeat_n(0u8, idle[i]));
            stream.extend(wire(f));
        }
        let mut points: Vec<usize> = cuts.iter().map(|c| c.index(stream.len() + 1)).collect();
        points.sort_unstable();
        let mut chunks = Vec::new();
        let mut start = 0;
        for p in points {
            chunks.push(&stream[start..p]);
            start = p;
        }
        chunks.push(&stream[start..]);
        let (got, errors) = accumulate(&chunks);
        prop_assert_eq!(errors, 0);
        prop_assert_eq!(got, frames);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let _ = decode(&bytes);
        let _ = decode_raw(&bytes);
        let _ = accumulate(&[&bytes]);
    }

    #[test]
    fn garbage_then_delimiter_resynchronises(
        garbage in proptest::collection::vec(any::<u8>(), 0..400),
        f in frame(),
    ) {
        let mut stream = garbage.clone();
        stream.push(0);
        stream.extend(wire(&f));
        let (got, _) = accumulate(&[&stream]);
        prop_assert_eq!(got.last(), Some(&f));
    }

    #[test]
    fn a_flipped_bit_is_never_taken_for_another_frame(f in frame(), bit in any::<prop::sample::Index>()) {
        let mut w = wire(&f);
        let body = w.len() - 1;
        let i = bit.index(body * 8);
        w[i / 8] ^= 1 << (i % 8);
        // A flip may create a 0x00 (splitting the frame), but no piece may
        // decode to a valid frame other than the original.
        let (got, _) = accumulate(&[&w]);
        for g in got {
            prop_assert_eq!(g, f);
        }
    }
}
