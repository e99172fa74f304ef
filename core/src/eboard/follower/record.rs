//! The follower's record as PGN: the broadcast and live texts, and which
//! tags may be set (the follower writes the clock, result and control tags
//! itself).

use super::*;
use crate::limits;

impl Follower {
    // ---- the PGN ----

    /// The broadcast PGN: confirmed moves only (see [`Follower::pgn`]).
    pub fn render(&self) -> String {
        self.pgn(false).render()
    }

    /// The live view: the tentative move too.
    pub fn render_live(&self) -> String {
        self.pgn(true).render()
    }

    /// The game as PGN: the tags (the configured and set ones, `Date` from
    /// the start unless set, `UTCDate`/`UTCTime`, the control's tags, the
    /// clock tags, `Termination` once there is a result) and the moves with
    /// their clocks. When the board never followed the game but presses were
    /// made, the moves are unknown: the movetext is comments only (valid PGN
    /// for every reader), one per press in order, `{1. White [%clk H:MM:SS]
    /// [%emt H:MM:SS]}`, `{1... Black ...}`, after one saying so.
    ///
    /// Cheap to build on every change (the timing thread does): the tags
    /// people set are shared, not copied, and nothing is rendered but the
    /// daemon's own few tags; [`PgnGame::render`] writes the text.
    pub fn pgn(&self, live: bool) -> PgnGame {
        let game = &self.game;
        let mut tags: Vec<(String, String)> = Vec::new();
        if let Some(wall) = game.started_wall {
            let (date, time) = utc_date_time(wall);
            if game.tag("Date").is_none() {
                tags.push(("Date".into(), date.clone()));
            }
            tags.push(("UTCDate".into(), date));
            tags.push(("UTCTime".into(), time));
        }
        tags.extend(game.control_tags.iter().cloned());
        if let Some(clock) = game.clock {
            if let Some(white) = clock.white {
                tags.push(("WhiteClock".into(), clock_text(white)));
            }
            if let Some(black) = clock.black {
                tags.push(("BlackClock".into(), clock_text(black)));
            }
            // A decided game's clock no longer matters, whatever the daemon's
            // clock still does (plain sudden death runs on after a flag).
            let running = clock.running.filter(|_| game.result.is_none());
            let status = if game.result.is_some() && clock.status != ClockStatus::NotStarted {
                ClockStatus::Stopped
            } else {
                clock.status
            };
            let prefix = match running {
                Some(Side::White) => "W/",
                Some(Side::Black) => "B/",
                None => "",
            };
            tags.push((
                "ReferenceTime".into(),
                format!("{prefix}{}", rfc3339_utc_ms(clock.wall_us)),
            ));
            tags.push(("ClockStatus".into(), status.as_str().into()));
        }
        if let Some((_, termination)) = game.result {
            tags.push(("Termination".into(), termination.pgn().into()));
        }
        let mut comments = Vec::new();
        let mut presses = Vec::new();
        let mut moves = Vec::new();
        if game.on_board || !game.moves.is_empty() {
            moves = game
                .moves
                .iter()
                .filter(|m| live || m.confirmed)
                .map(|m| PgnMove {
                    san: m.san.clone(),
                    clock: game.clocks.get(&m.ply).map(|c| c.clock),
                })
                .collect();
        } else if !game.presses.is_empty() {
            // The moves are unknown: the clock's record, one comment a press.
            comments.push("moves not recorded; the presses of the clock:".to_owned());
            presses = game
                .presses
                .iter()
                .map(|press| RecordedPress {
                    side: press.side,
                    clock: press.clock,
                })
                .collect();
        }
        PgnGame {
            set_tags: Arc::clone(&game.tags),
            tags,
            comments,
            presses,
            moves,
            result: game.result.map(|(r, _)| r),
        }
    }
}

/// Whether one request's tags may be set: at most [`limits::MAX_TAGS`] of
/// them (counted first, so a flood is refused before any is looked at),
/// each one as [`check_tag`] says. D-Bus `SetTags`, the hall's `set-tags`
/// and [`Follower::set_tags`] all ask this.
pub fn check_tags(tags: &[(String, String)]) -> Result<(), String> {
    limits::check_count("tags", tags.len(), limits::MAX_TAGS)?;
    for (name, value) in tags {
        check_tag(name, value)?;
    }
    Ok(())
}

/// Whether a tag may be set: a valid PGN name of at most
/// [`limits::MAX_TAG_NAME`] characters not written by the follower, a value
/// of at most [`limits::MAX_TAG_VALUE`] characters without control
/// characters, and a `Date` as `YYYY.MM.DD` (`?` for unknown digits).
pub fn check_tag(name: &str, value: &str) -> Result<(), String> {
    // Too long a name is not written back whole.
    if name.len() > limits::MAX_TAG_NAME {
        let start: String = name.chars().take(16).collect();
        limits::check_chars(
            &format!("tag `{start}…`: the name"),
            name,
            limits::MAX_TAG_NAME,
        )?;
    }
    if !valid_tag_name(name) {
        return Err(format!(
            "tag `{name}`: a tag name is a letter followed by letters, digits or `_`"
        ));
    }
    if RESERVED_TAGS.contains(&name) {
        return Err(format!(
            "tag `{name}` is written by the daemon itself (the clock, the result or the control)"
        ));
    }
    limits::check_chars(
        &format!("tag `{name}`: the value"),
        value,
        limits::MAX_TAG_VALUE,
    )?;
    if value.chars().any(char::is_control) {
        return Err(format!("tag `{name}`: the value holds a control character"));
    }
    if name == "Date" && !value.is_empty() {
        let ok = value.len() == 10
            && value.chars().enumerate().all(|(i, c)| match i {
                4 | 7 => c == '.',
                _ => c.is_ascii_digit() || c == '?',
            });
        if !ok {
            return Err(format!(
                "tag `Date`: `{value}` is not YYYY.MM.DD (use ? for unknown digits)"
            ));
        }
    }
    Ok(())
}
