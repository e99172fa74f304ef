use chessclock_protocol::*;
fn hex(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02X}"))
        .collect::<Vec<_>>()
        .join(" ")
}
fn main() {
    let frames = [
        Frame {
            seq: 0x05,
            message: Message::Button {
                event: 0x0102,
                button: Button::Left,
                pressed: true,
                device_time_us: 1_234_567,
            },
        },
        Frame {
            seq: 0x09,
            message: Message::Ack { event: 0x0102 },
        },
        Frame {
            seq: 0,
            message: Message::HostHeartbeat,
        },
        Frame {
            seq: 0,
            message: Message::Welcome {
                protocol_version: 1,
                heartbeat_interval_ms: 250,
                link_timeout_ms: 1000,
            },
        },
    ];
    for f in frames {
        let mut raw = [0u8; MAX_FRAME];
        let n = encode_raw(&f, &mut raw).unwrap();
        let mut w = [0u8; MAX_WIRE_FRAME];
        let m = encode(&f, &mut w).unwrap();
        println!("{:?}\n raw  {}\n wire {}", f, hex(&raw[..n]), hex(&w[..m]));
    }
    let body = [0x02u8, 0x05];
    println!("crc {:08X}", CRC.checksum(&body));
}
