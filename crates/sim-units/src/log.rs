//! The simulator's JSON Lines log: every frame received from the host (and,
//! when asked, every frame sent), every press with its true instant, plugs,
//! link changes and script steps. One object per line, written and flushed
//! by one writer thread so lines never interleave, in batches gathered over
//! 20 ms so the simulator disturbs what it measures as little as it can.
//!
//! Every record has `t_us` (CLOCK_MONOTONIC µs, the same clock as the
//! daemon's `clock::monotonic_now_us`, so logs of both can be joined), `unit`
//! and `kind`. Kinds and their extra fields:
//!
//! | kind | fields |
//! |---|---|
//! | `rx` | `seq`, `msg` (decoded, `msg.type` = message name) |
//! | `tx` | as `rx`, plus `bytes` (wire length), `flipped_bits`, `delayed_us`, `copies` (faults applied) |
//! | `rx-error` | `error` (`cobs`, `bad-crc`, `oversize`, `malformed`), `flipped_bits` |
//! | `press` | `button`, `event`, `device_us` (its timestamp); `t_us` is the true press instant |
//! | `ack` | `event`, `sends` (transmissions before the ACK) |
//! | `plug` / `unplug` | `pty`, `link` |
//! | `link` | `state` (`connecting`, `up`, `lost`) |
//! | `fault` | `fault`, parameters, `until_us` |
//! | `script` | `step`, `action`, `status` (`done`, `failed`), `error` |

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::mpsc;
use std::thread::JoinHandle;

use chessclock_protocol::{Button, DisplayState, FrameError, Hello, Message, NakCode, Panel};
use serde_json::{json, Value};

/// How long the writer gathers records after the first of a batch: a line
/// reaches the file at most this late.
const WRITE_BATCH: std::time::Duration = std::time::Duration::from_millis(20);

/// Where the log goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogTarget {
    Stdout,
    File(PathBuf),
}

impl std::str::FromStr for LogTarget {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(if s == "-" {
            LogTarget::Stdout
        } else {
            LogTarget::File(PathBuf::from(s))
        })
    }
}

/// A cheap handle to the log writer; a no-op when logging is off.
#[derive(Clone, Debug, Default)]
pub struct LogSink {
    /// `None` on the channel closes the writer (so a forgotten clone cannot
    /// keep it alive at shutdown).
    tx: Option<mpsc::Sender<Option<String>>>,
    pub log_sent: bool,
}

impl LogSink {
    /// Off.
    pub fn off() -> Self {
        LogSink::default()
    }

    /// Starts the writer thread; the file is created (truncated) now, so an
    /// unwritable path is reported before any unit starts.
    pub fn start(target: &LogTarget, log_sent: bool) -> io::Result<(LogSink, JoinHandle<()>)> {
        let out: Box<dyn Write + Send> = match target {
            LogTarget::Stdout => Box::new(io::stdout()),
            LogTarget::File(path) => Box::new(std::fs::File::create(path).map_err(|e| {
                io::Error::new(e.kind(), format!("log file {}: {e}", path.display()))
            })?),
        };
        let (tx, rx) = mpsc::channel::<Option<String>>();
        let writer = std::thread::Builder::new()
            .name("sim-log".into())
            .spawn(move || {
                // A failed log write must not stop the simulated hardware:
                // write errors are ignored.
                let mut out = io::BufWriter::new(out);
                while let Ok(Some(first)) = rx.recv() {
                    let _ = writeln!(out, "{first}");
                    // Woken for every record, this thread would compete
                    // with the units (and with a daemon being measured) for
                    // the CPU on every frame. Records sent while it sleeps
                    // cost their senders no wake-up; they are written as one
                    // batch, still in order.
                    std::thread::sleep(WRITE_BATCH);
                    let closed = loop {
                        match rx.try_recv() {
                            Ok(Some(line)) => {
                                let _ = writeln!(out, "{line}");
                            }
                            Ok(None) | Err(mpsc::TryRecvError::Disconnected) => break true,
                            Err(mpsc::TryRecvError::Empty) => break false,
                        }
                    };
                    let _ = out.flush();
                    if closed {
                        return;
                    }
                }
                let _ = out.flush();
            })?;
        Ok((
            LogSink {
                tx: Some(tx),
                log_sent,
            },
            writer,
        ))
    }

    pub fn enabled(&self) -> bool {
        self.tx.is_some()
    }

    /// Writes one record: `t_us`, `unit`, `kind`, then `fields` (an object).
    pub fn record(&self, t_us: i64, unit: &str, kind: &str, fields: Value) {
        let Some(tx) = &self.tx else { return };
        let mut record = json!({ "t_us": t_us, "unit": unit, "kind": kind });
        if let (Some(map), Value::Object(extra)) = (record.as_object_mut(), fields) {
            map.extend(extra);
        }
        let _ = tx.send(Some(record.to_string()));
    }

    /// Ends the writer thread after the records already sent.
    pub fn close(&self) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(None);
        }
    }
}

pub fn button_name(button: Button) -> String {
    match button {
        Button::Left => "left".into(),
        Button::Right => "right".into(),
        Button::Arbiter => "arbiter".into(),
        Button::Unknown(code) => format!("unknown-{code}"),
    }
}

pub fn frame_error_name(error: FrameError) -> &'static str {
    match error {
        FrameError::Cobs => "cobs",
        FrameError::BadCrc => "bad-crc",
        FrameError::Oversize => "oversize",
        FrameError::Malformed => "malformed",
    }
}

fn nak_name(code: NakCode) -> String {
    match code {
        NakCode::BadCrc => "bad-crc".into(),
        NakCode::Oversize => "oversize".into(),
        NakCode::UnknownMessage => "unknown-message".into(),
        NakCode::Malformed => "malformed".into(),
        NakCode::UnsupportedVersion => "unsupported-version".into(),
        NakCode::Busy => "busy".into(),
        NakCode::Unknown(code) => format!("unknown-{code}"),
    }
}

fn panel_json(panel: &Panel) -> Value {
    json!({
        "time": panel.time.as_str(),
        "icons": panel.icons.0,
        "icon_names": super::view::icon_names(panel.icons),
        "moves": panel.moves,
        "stage": panel.stage,
    })
}

pub fn display_json(state: &DisplayState) -> Value {
    json!({
        "left": panel_json(&state.left),
        "right": panel_json(&state.right),
        "text": state.text.as_str(),
        "brightness": state.brightness,
    })
}

fn hello_json(hello: &Hello) -> Value {
    let caps = hello.capabilities;
    json!({
        "type": "hello",
        "protocol_version": hello.protocol_version,
        "roles": hello.roles.0,
        "displays": caps.displays,
        "digits": caps.digits,
        "tenths": caps.tenths,
        "icons": caps.icons.0,
        "buzzer": caps.buzzer,
        "brightness_levels": caps.brightness_levels,
        "arbiter_button": caps.arbiter_button,
        "text_chars": caps.text_chars,
        "vendor": hello.vendor.as_str(),
        "model": hello.model.as_str(),
        "serial": hello.serial.as_str(),
        "firmware": hello.firmware.as_str(),
        "boot_id": hello.boot_id,
        "first_unacked_event": hello.first_unacked_event,
    })
}

/// A message as JSON: `{"type": "<name>", ...fields}`.
pub fn message_json(message: &Message) -> Value {
    match message {
        Message::Hello(hello) => hello_json(hello),
        Message::Button {
            event,
            button,
            pressed,
            device_time_us,
        } => json!({
            "type": "button", "event": event, "button": button_name(*button),
            "pressed": pressed, "device_time_us": device_time_us,
        }),
        Message::DeviceHeartbeat {
            device_time_us,
            low_power,
        } => json!({
            "type": "device-heartbeat", "device_time_us": device_time_us, "low_power": low_power,
        }),
        Message::Welcome {
            protocol_version,
            heartbeat_interval_ms,
            link_timeout_ms,
        } => json!({
            "type": "welcome", "protocol_version": protocol_version,
            "heartbeat_interval_ms": heartbeat_interval_ms, "link_timeout_ms": link_timeout_ms,
        }),
        Message::Ack { event } => json!({ "type": "ack", "event": event }),
        Message::Display(state) => {
            let mut value = display_json(state);
            value["type"] = json!("display");
            value
        }
        Message::Leds(leds) => json!({
            "type": "leds", "left": leds.left, "right": leds.right, "arbiter": leds.arbiter,
        }),
        Message::Beep { duration_ms, count } => {
            json!({ "type": "beep", "duration_ms": duration_ms, "count": count })
        }
        Message::HostHeartbeat => json!({ "type": "host-heartbeat" }),
        Message::Nak { code, seq } => json!({ "type": "nak", "code": nak_name(*code), "seq": seq }),
        Message::Unknown { id } => json!({ "type": "unknown", "id": id }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chessclock_protocol::Text;

    #[test]
    fn records_are_one_flat_json_object_per_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let (sink, writer) = LogSink::start(&LogTarget::File(path.clone()), false).unwrap();
        sink.record(
            12,
            "buttons",
            "press",
            json!({ "button": "left", "event": 3 }),
        );
        sink.record(
            13,
            "display",
            "rx",
            json!({ "msg": message_json(&Message::HostHeartbeat) }),
        );
        drop(sink);
        writer.join().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["t_us"], 12);
        assert_eq!(lines[0]["kind"], "press");
        assert_eq!(lines[0]["event"], 3);
        assert_eq!(lines[1]["msg"]["type"], "host-heartbeat");
    }

    #[test]
    fn display_message_json_names_fields_and_icons() {
        let mut state = DisplayState::default();
        state.left.time = Text::new("1:29:59").unwrap();
        state.left.icons = chessclock_protocol::Icons::RUNNING;
        state.text = Text::new("PAUSE").unwrap();
        let value = message_json(&Message::Display(state));
        assert_eq!(value["type"], "display");
        assert_eq!(value["left"]["time"], "1:29:59");
        assert_eq!(value["left"]["icon_names"], json!(["running"]));
        assert_eq!(value["text"], "PAUSE");
    }

    #[test]
    fn unwritable_log_path_is_an_error_naming_it() {
        let error =
            LogSink::start(&LogTarget::File("/nonexistent-dir/x.jsonl".into()), false).unwrap_err();
        assert!(error.to_string().contains("/nonexistent-dir/x.jsonl"));
    }
}
