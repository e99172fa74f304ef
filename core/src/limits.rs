//! The bounds on everything a caller can store: one place for every limit
//! on the strings and counts that D-Bus, the hall (MQTT), the command line,
//! the configuration and a stored journal can put into a board's state.
//!
//! Promises:
//! * every string a caller can store has one limit here, and every
//!   interface refuses the same way, with the same words, because the check
//!   is made in the core ([`check_count`], [`check_chars`], [`check_bytes`])
//!   where the value is taken: tags by the board core's follower
//!   (`crate::eboard::follower`, so D-Bus `SetTags`, the hall's `set-tags`,
//!   `chessclockctl tags`, the configuration's tags and a restored journal
//!   alike), notes and the caller's name by the board core, a time control
//!   by [`crate::timecontrol::parse`]; the shells check the same functions
//!   early so that a refused request never crosses to the timing thread;
//! * a refusal names the thing and the limit: `too many tags: 50000 (at
//!   most 64)`, `tag `White`: the value has 300 characters (at most 255)`;
//! * the limits are generous for an event (a PGN header of dozens of tags,
//!   names and notes of hundreds of characters) and small enough that what a
//!   board carries on every change stays a few tens of kilobytes at most:
//!   the largest accepted tags make a PGN header of about 70 KB (64 tags of
//!   255 four-byte characters);
//! * the work per clock change does not depend on them (the timing thread
//!   renders no text of them; see `crate::eboard::pgn`).
//!
//! The documented list: `docs/dbus-api.md` (Limits), `docs/hall-mqtt.md`
//! and `docs/configuration.md`.

/// PGN tags a game may carry besides those the daemon writes itself: the
/// configured ones and those set since (D-Bus `SetTags`, the hall's
/// `set-tags`, `chessclockctl tags`) together, and so at most this many in
/// one request.
pub const MAX_TAGS: usize = 64;
/// A PGN tag's name, in characters (ASCII: a letter, then letters, digits
/// and `_`).
pub const MAX_TAG_NAME: usize = 64;
/// A PGN tag's value, in characters.
pub const MAX_TAG_VALUE: usize = 255;
/// An arbiter's note, in characters (one line).
pub const MAX_NOTE: usize = 500;
/// A time control as given (a notation or a preset name), in characters.
pub const MAX_CONTROL: usize = 256;
/// The name of who asks (the arbiter's name a hall command carries), in
/// bytes.
pub const MAX_CALLER_NAME: usize = 128;
/// A board id in the configuration, in bytes (it is a D-Bus object path
/// element and an MQTT topic level).
pub const MAX_BOARD_ID: usize = 64;
/// A device in the configuration (a path or `serial:...`), in bytes.
pub const MAX_DEVICE_NAME: usize = 256;

/// `count` things of `what` (plural) against `max`: `too many tags: 50000
/// (at most 64)`.
pub fn check_count(what: &str, count: usize, max: usize) -> Result<(), String> {
    if count > max {
        return Err(format!("too many {what}: {count} (at most {max})"));
    }
    Ok(())
}

/// A text of at most `max` characters: `{what} has 300 characters (at most
/// 255)`. Counts no further than one past the limit (a huge text costs no
/// more than a long one).
pub fn check_chars(what: &str, text: &str, max: usize) -> Result<(), String> {
    if text.len() <= max {
        // Never more characters than bytes.
        return Ok(());
    }
    let count = text.chars().count();
    if count > max {
        return Err(format!("{what} has {count} characters (at most {max})"));
    }
    Ok(())
}

/// A text of at most `max` bytes: `{what} has 300 bytes (at most 128)`.
pub fn check_bytes(what: &str, text: &str, max: usize) -> Result<(), String> {
    if text.len() > max {
        return Err(format!("{what} has {} bytes (at most {max})", text.len()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_name_the_thing_and_the_limit() {
        assert_eq!(
            check_count("tags", 50_000, MAX_TAGS),
            Err("too many tags: 50000 (at most 64)".into())
        );
        assert_eq!(check_count("tags", MAX_TAGS, MAX_TAGS), Ok(()));
        assert_eq!(
            check_chars("the note", &"é".repeat(501), MAX_NOTE),
            Err("the note has 501 characters (at most 500)".into())
        );
        // Characters, not bytes: 500 two-byte characters pass.
        assert_eq!(check_chars("the note", &"é".repeat(500), MAX_NOTE), Ok(()));
        assert_eq!(
            check_bytes("the arbiter's name", &"a".repeat(129), MAX_CALLER_NAME),
            Err("the arbiter's name has 129 bytes (at most 128)".into())
        );
        assert_eq!(check_bytes("x", &"a".repeat(128), MAX_CALLER_NAME), Ok(()));
    }
}
