//! What the schema alone cannot check: the kernel's real-time priority
//! range, presets and board controls that must resolve, board ids, PGN tags
//! and devices used by two boards, and the bounds on every string the
//! configuration gives a board (`chessclock_core::limits`).
//!
//! Promises: the first problem found is returned with the `Place` in the
//! file it belongs to, so the error can point at the key; the kernel's
//! priority range is asked of [`crate::platform`], never of the runtime
//! (which imports this module).

use chessclock_core::limits;

use super::errors::Place;
use super::{check_topic_level, BrokerAddress, Config, DeviceRef};

impl Config {
    /// Checks what the schema alone cannot: board ids, devices used twice,
    /// presets and board controls that do not resolve.
    /// What is valid but most likely a slip, each with its place: a board
    /// control under a minute of base time (`15+10` is 15 seconds), the
    /// same rule `chessclockctl new` applies (it refuses without `--yes`;
    /// the file says `short-control = true`). `--check-config` prints these
    /// and the daemon logs them; neither refuses the file.
    pub(super) fn slips(&self) -> Vec<(String, Place)> {
        let mut slips = Vec::new();
        for (index, board) in self.boards.iter().enumerate() {
            if board.short_control {
                continue;
            }
            let Ok((control, _)) = self.resolve_control(&board.control) else {
                continue;
            };
            let view = chessclock_core::views::ControlView::of(&board.control, &control);
            if let Some(why) = view.short_base() {
                slips.push((
                    format!(
                        "board `{}`: control: {why}; add `short-control = true` to the board \
                         if that is what you mean",
                        board.id
                    ),
                    Place::Board(index, "control".to_owned()),
                ));
            }
        }
        slips
    }

    pub fn validate(&self) -> Result<(), String> {
        self.check().map_err(|(message, _)| message)
    }

    /// [`Config::validate`], each failure with the place in the file it
    /// belongs to (for `file:line:column`).
    pub(super) fn check(&self) -> Result<(), (String, Place)> {
        let (_, max_priority) = crate::platform::fifo_priority_range();
        if i32::from(self.daemon.rt_priority) > max_priority {
            return Err((
                format!(
                    "[daemon] rt-priority {} is above this kernel's highest SCHED_FIFO priority, \
                     {max_priority}: give 1 to {max_priority}, or 0 to run without real-time priority",
                    self.daemon.rt_priority
                ),
                Place::Key("daemon", "rt-priority"),
            ));
        }
        for name in self.presets.keys() {
            limits::check_chars("a preset's name", name, limits::MAX_CONTROL)
                .map_err(|e| (format!("[presets] {e}"), Place::Preset(name.clone())))?;
            self.resolve_control(name).map_err(|e| {
                (
                    format!("[presets] `{name}`: {e}"),
                    Place::Preset(name.clone()),
                )
            })?;
        }
        if let Some(hall) = &self.hall {
            let at = |key| Place::Key("hall", key);
            let address = BrokerAddress::parse(&hall.broker)
                .map_err(|e| (format!("[hall] {e}"), at("broker")))?;
            check_topic_level("[hall] name", &hall.name).map_err(|e| (e, at("name")))?;
            if let Some(host) = &hall.host {
                check_topic_level("[hall] host", host).map_err(|e| (e, at("host")))?;
            }
            if !(1..=3600).contains(&hall.keepalive_seconds) {
                return Err((
                    format!(
                        "[hall] keepalive-seconds {} is out of range: give 1 to 3600",
                        hall.keepalive_seconds
                    ),
                    at("keepalive-seconds"),
                ));
            }
            if hall.buffer == 0 || hall.buffer > 1_000_000 {
                return Err((
                    format!(
                        "[hall] buffer {} is out of range: give 1 to 1000000 messages",
                        hall.buffer
                    ),
                    at("buffer"),
                ));
            }
            match (address.tls, &hall.ca) {
                (true, None) => {
                    return Err((
                        "[hall] an mqtts:// broker needs `ca`, the PEM file of the CA that \
                         signed its certificate"
                            .into(),
                        at("broker"),
                    ))
                }
                (false, Some(_)) => {
                    return Err((
                        "[hall] `ca` is for an mqtts:// broker; this one is mqtt:// (no TLS)"
                            .into(),
                        at("ca"),
                    ))
                }
                _ => {}
            }
        }
        let mut ids = std::collections::BTreeSet::new();
        let mut devices: std::collections::HashMap<&DeviceRef, &str> =
            std::collections::HashMap::new();
        for (index, board) in self.boards.iter().enumerate() {
            let at = |key: &str| Place::Board(index, key.to_owned());
            check_board_id(&board.id).map_err(|e| (e, at("id")))?;
            if !ids.insert(board.id.as_str()) {
                return Err((format!("board id `{}` is used twice", board.id), at("id")));
            }
            self.resolve_control(&board.control)
                .map_err(|e| (format!("board `{}`: control: {e}", board.id), at("control")))?;
            for (name, value) in self.pgn_tags(board) {
                chessclock_core::eboard::follower::check_tag(&name, &value).map_err(|e| {
                    (
                        format!("board `{}`: {e}", board.id),
                        at(&name.to_lowercase()),
                    )
                })?;
            }
            let mut own: Vec<&DeviceRef> = Vec::new();
            own.extend(board.buttons.iter());
            own.extend(board.displays.iter().map(|d| &d.device));
            own.extend(board.eboard.iter());
            let mut seen: Vec<&DeviceRef> = Vec::new();
            for device in own {
                // a combined unit may be both the buttons and a display
                if seen.contains(&device) {
                    continue;
                }
                let name = String::from(device.clone());
                limits::check_bytes("a device's name", &name, limits::MAX_DEVICE_NAME)
                    .map_err(|e| (format!("board `{}`: {e}", board.id), at(&name)))?;
                seen.push(device);
                if let Some(other) = devices.insert(device, board.id.as_str()) {
                    return Err((
                        format!(
                            "device `{name}` is used by both board `{other}` and board `{}`",
                            board.id
                        ),
                        at(&name),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Why a board id is refused, if it is.
fn check_board_id(id: &str) -> Result<(), String> {
    if id.is_empty() {
        return Err("a board id must not be empty".into());
    }
    limits::check_bytes("a board id", id, limits::MAX_BOARD_ID)?;
    if let Some(bad) = id
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
    {
        return Err(format!(
            "board id `{id}` may only contain A-Z, a-z, 0-9 and `_` (found `{bad}`)"
        ));
    }
    Ok(())
}
