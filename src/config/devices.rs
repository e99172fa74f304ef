//! How the configuration names a device: a path or `serial:<number>`, and a
//! display entry with the side it shows.
//!
//! Promises: a device is written back as it was read (a plain string for a
//! display showing both sides), and a malformed entry is a serde error, so
//! the file's line and column are reported with it.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::display::DisplaySide;

/// A device: a path (`/dev/ttyACM0`, `/dev/serial/by-id/...`,
/// `/dev/chessclock/buttons-CC0001`) or `serial:<HELLO serial number>`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(try_from = "String", into = "String")]
pub enum DeviceRef {
    Path(PathBuf),
    Serial(String),
}

impl TryFrom<String> for DeviceRef {
    type Error = String;
    fn try_from(text: String) -> Result<Self, Self::Error> {
        if let Some(serial) = text.strip_prefix("serial:") {
            if serial.is_empty() {
                return Err("`serial:` needs a serial number after it".into());
            }
            Ok(DeviceRef::Serial(serial.to_owned()))
        } else if text.starts_with('/') {
            Ok(DeviceRef::Path(PathBuf::from(text)))
        } else {
            Err(format!(
                "device `{text}` must be an absolute path or `serial:<number>`"
            ))
        }
    }
}

/// One entry of a board's `displays`: the device and the side it shows.
/// Written as a plain device string (side `both`) or as a table
/// `{ device = "/dev/...", side = "black" }`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DisplayRef {
    pub device: DeviceRef,
    pub side: DisplaySide,
}

impl From<DeviceRef> for DisplayRef {
    fn from(device: DeviceRef) -> DisplayRef {
        DisplayRef {
            device,
            side: DisplaySide::Both,
        }
    }
}

impl Serialize for DisplayRef {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        if self.side == DisplaySide::Both {
            return self.device.serialize(serializer);
        }
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("device", &self.device)?;
        map.serialize_entry("side", &self.side)?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for DisplayRef {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = DisplayRef;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "a device (`/dev/...` or `serial:<number>`) or a table \
                     `{ device = \"...\", side = \"white\" | \"black\" | \"both\" }`",
                )
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<DisplayRef, E> {
                DeviceRef::try_from(text.to_owned())
                    .map(DisplayRef::from)
                    .map_err(E::custom)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<DisplayRef, A::Error> {
                use serde::de::Error;
                let mut device: Option<DeviceRef> = None;
                let mut side: Option<DisplaySide> = None;
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "device" if device.is_none() => device = Some(map.next_value()?),
                        "side" if side.is_none() => side = Some(map.next_value()?),
                        "device" | "side" => {
                            return Err(A::Error::custom(format!("duplicate field `{key}`")))
                        }
                        other => return Err(A::Error::unknown_field(other, &["device", "side"])),
                    }
                }
                Ok(DisplayRef {
                    device: device.ok_or_else(|| A::Error::missing_field("device"))?,
                    side: side.unwrap_or_default(),
                })
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

impl From<DeviceRef> for String {
    fn from(device: DeviceRef) -> String {
        match device {
            DeviceRef::Path(path) => path.display().to_string(),
            DeviceRef::Serial(serial) => format!("serial:{serial}"),
        }
    }
}
