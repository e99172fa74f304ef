//! One board's D-Bus object (`org.chessclockd.ChessClock1.Board`).
//!
//! The object owns no clock state: it forwards every method to the runtime
//! as a [`Command`] and shows the latest [`BoardSnapshot`] the runtime
//! broadcast. Arguments are validated here first, so a malformed call never
//! reaches the runtime and nothing changes.

use std::collections::HashMap;
use std::sync::Arc;

use zbus::message::Header;
use zbus::names::InterfaceName;
use zbus::object_server::SignalEmitter;
use zbus::{interface, Connection, Variant};

use super::error::Error;
use super::Context;
use crate::control::{BoardSnapshot, Command, ControlHandle, Reply};
use crate::engine::{Side, MS};
use crate::timecontrol::MAX_TIME;

/// The board interface's name.
pub const BOARD_INTERFACE: &str = "org.chessclockd.ChessClock1.Board";

/// The object at `/org/chessclockd/ChessClock1/board/<id>`.
pub struct Board {
    id: String,
    handle: ControlHandle,
    context: Arc<Context>,
    /// The latest snapshot from the runtime (`None` until the first one).
    snapshot: Option<BoardSnapshot>,
}

impl Board {
    pub(crate) fn new(
        id: String,
        handle: ControlHandle,
        context: Arc<Context>,
        snapshot: Option<BoardSnapshot>,
    ) -> Board {
        Board {
            id,
            handle,
            context,
            snapshot,
        }
    }

    /// Replaces the cached snapshot and returns the properties whose values
    /// changed, ready for one `PropertiesChanged` signal.
    /// A snapshot of a view older than the cached one's (a `StateChanged`
    /// queued before a read that filled or refreshed the cache) is ignored.
    /// Views are compared by when they were taken, never by `snapshot_ms`:
    /// a read computes its times at the instant of the read, so a newer
    /// view's `StateChanged`, taken a moment before that read but applied
    /// after it, has the earlier `snapshot_ms`, and judging by that kept
    /// the read's older view (a unit that linked while the daemon was
    /// starting stayed disconnected on the bus until the board's next
    /// change).
    pub(crate) fn replace_snapshot(
        &mut self,
        snapshot: BoardSnapshot,
    ) -> Vec<(&'static str, Variant<'static>)> {
        if let Some(cached) = &self.snapshot {
            if snapshot.view_us < cached.view_us {
                return Vec::new();
            }
        }
        let new_values = property_values(&snapshot);
        let old_values = self
            .snapshot
            .as_ref()
            .map(property_values)
            .unwrap_or_default();
        self.snapshot = Some(snapshot);
        new_values
            .into_iter()
            .filter(|(name, value)| {
                !old_values
                    .iter()
                    .any(|(old_name, old_value)| old_name == name && old_value == value)
            })
            .collect()
    }

    async fn change(
        &self,
        connection: &Connection,
        header: &Header<'_>,
        command: Command,
    ) -> Result<(), Error> {
        let caller = self.context.authorize(connection, header).await?;
        self.handle.call(&self.id, command, caller).await?;
        Ok(())
    }

    /// A read, within the caller's share of reading (see `limit`).
    async fn read_text(&self, header: &Header<'_>, command: Command) -> Result<String, Error> {
        let caller = header
            .sender()
            .map_or_else(|| "(unknown)".to_owned(), |s| s.to_string());
        let kind = command.name().to_owned();
        let estimate = self.context.admit_read(&caller, &self.id, &kind)?;
        let text = match self
            .handle
            .call(&self.id, command, crate::control::Caller::DAEMON)
            .await?
        {
            Reply::Json(text) | Reply::Text(text) => text,
            _ => {
                return Err(Error::Internal(
                    "the daemon did not answer with text as expected".into(),
                ))
            }
        };
        self.context
            .settle_read(&caller, &self.id, &kind, estimate, text.len());
        Ok(text)
    }

    /// The cached snapshot, or a fresh one while none has been broadcast.
    async fn current(&self) -> zbus::fdo::Result<BoardSnapshot> {
        if let Some(snapshot) = &self.snapshot {
            return Ok(snapshot.clone());
        }
        fetch_snapshot(&self.handle, &self.id)
            .await
            .map_err(zbus::fdo::Error::from)
    }

    async fn start_at_impl(
        &self,
        connection: &Connection,
        header: &Header<'_>,
        unix_time_usec: i64,
        force: bool,
    ) -> Result<(), Error> {
        let caller = self
            .context
            .authorize_scheduled_start(connection, header, unix_time_usec, force)
            .await?;
        self.handle
            .call(
                &self.id,
                Command::StartAt {
                    unix_time_us: unix_time_usec,
                    force,
                },
                caller,
            )
            .await?;
        Ok(())
    }

    async fn adjust_impl(
        &self,
        connection: &Connection,
        header: &Header<'_>,
        side: &str,
        remaining_ms: i64,
        moves: i32,
        stage: i32,
    ) -> Result<(), Error> {
        let caller = self.context.authorize(connection, header).await?;
        let command = adjust_command(side, remaining_ms, moves, stage)?;
        self.handle.call(&self.id, command, caller).await?;
        Ok(())
    }
}

/// Asks the runtime for a board's snapshot.
pub(crate) async fn fetch_snapshot(
    handle: &ControlHandle,
    board: &str,
) -> Result<BoardSnapshot, Error> {
    match handle
        .call(board, Command::Snapshot, crate::control::Caller::DAEMON)
        .await?
    {
        Reply::Snapshot(snapshot) => Ok(snapshot),
        _ => Err(Error::Internal(
            "the daemon did not answer with a snapshot as expected".into(),
        )),
    }
}

/// `white` or `black`, else `InvalidArgument`.
pub fn parse_side(side: &str) -> Result<Side, Error> {
    Side::parse(side).ok_or_else(|| {
        Error::InvalidArgument(format!(
            "unknown side `{side}`: the side must be \"white\" or \"black\""
        ))
    })
}

/// Validates `Adjust` arguments (-1 = unchanged) into a command.
pub fn adjust_command(
    side: &str,
    remaining_ms: i64,
    moves: i32,
    stage: i32,
) -> Result<Command, Error> {
    let side = parse_side(side)?;
    let remaining_ms = match remaining_ms {
        -1 => None,
        ms if ms < 0 => {
            return Err(Error::InvalidArgument(format!(
                "remaining_ms {ms} is negative: give the time left in milliseconds \
                 (0 or more), or -1 to leave it unchanged"
            )))
        }
        ms => Some(ms),
    };
    let moves = match moves {
        -1 => None,
        n if n < 0 => {
            return Err(Error::InvalidArgument(format!(
                "moves {n} is negative: give the number of completed moves (0 or more), \
                 or -1 to leave it unchanged"
            )))
        }
        n => Some(n as u32),
    };
    let stage = match stage {
        -1 => None,
        n if n < 1 => {
            return Err(Error::InvalidArgument(format!(
                "stage {n} is out of range: stages count from 1, or give -1 to leave it unchanged"
            )))
        }
        n => Some(n as u32),
    };
    if remaining_ms.is_none() && moves.is_none() && stage.is_none() {
        return Err(Error::InvalidArgument(
            "nothing to adjust: give remaining_ms, moves or stage (-1 leaves a value unchanged)"
                .into(),
        ));
    }
    Ok(Command::Adjust {
        side,
        remaining_ms,
        moves,
        stage,
    })
}

/// A scheduled start must be a plausible instant not in the past
/// ([`crate::scheduled::check_start_time`], the hall's rule too).
pub fn validate_start_time(unix_time_usec: i64, now_usec: i64) -> Result<(), Error> {
    crate::scheduled::check_start_time(unix_time_usec, now_usec).map_err(Error::from)
}

/// The D-Bus name and value of every property, from one snapshot.
fn property_values(snapshot: &BoardSnapshot) -> Vec<(&'static str, Variant<'static>)> {
    vec![
        ("TimeControl", Variant::from(snapshot.control.clone())),
        ("SnapshotMs", Variant::from(snapshot.snapshot_ms)),
        ("Started", Variant::from(snapshot.started)),
        ("Running", Variant::from(running_name(snapshot))),
        ("Paused", Variant::from(snapshot.paused)),
        (
            "WhiteRemainingMs",
            Variant::from(snapshot.white_remaining_ms),
        ),
        (
            "BlackRemainingMs",
            Variant::from(snapshot.black_remaining_ms),
        ),
        ("WhiteMoves", Variant::from(snapshot.white_moves)),
        ("BlackMoves", Variant::from(snapshot.black_moves)),
        ("WhiteStage", Variant::from(snapshot.white_stage)),
        ("BlackStage", Variant::from(snapshot.black_stage)),
        ("Flags", Variant::from(flag_names(snapshot))),
        ("Devices", Variant::from(device_tuples(snapshot))),
        ("ArbiterCalled", Variant::from(snapshot.arbiter_called)),
    ]
}

fn running_name(snapshot: &BoardSnapshot) -> String {
    snapshot
        .running
        .map(|side| side.as_str().to_owned())
        .unwrap_or_default()
}

fn flag_names(snapshot: &BoardSnapshot) -> Vec<String> {
    snapshot
        .flags
        .iter()
        .map(|side| side.as_str().to_owned())
        .collect()
}

/// `(role, name, connected, serial)`; an unknown serial is the empty string.
fn device_tuples(snapshot: &BoardSnapshot) -> Vec<(String, String, bool, String)> {
    snapshot
        .devices
        .iter()
        .map(|link| {
            (
                link.role.clone(),
                link.name.clone(),
                link.connected,
                link.serial.clone().unwrap_or_default(),
            )
        })
        .collect()
}

/// Emits one `PropertiesChanged` carrying every changed property.
pub(crate) async fn emit_properties_changed(
    emitter: &SignalEmitter<'_>,
    changed: &[(&'static str, Variant<'static>)],
) -> zbus::Result<()> {
    if changed.is_empty() {
        return Ok(());
    }
    let map: HashMap<&str, Variant<'_>> = changed
        .iter()
        .map(|(name, value)| (*name, value.clone()))
        .collect();
    zbus::fdo::Properties::properties_changed(
        emitter,
        InterfaceName::from_static_str_unchecked(BOARD_INTERFACE),
        map,
        std::borrow::Cow::Borrowed(&[]),
    )
    .await
}

#[interface(name = "org.chessclockd.ChessClock1.Board")]
impl Board {
    /// Sets up a new game with a time control: notation (e.g. `5400+30`,
    /// `40/5400+30:1800+30`, `G/90;d5`) or a preset name.
    async fn new_game(
        &self,
        control: String,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &Connection,
    ) -> Result<(), Error> {
        let caller = self.context.authorize(connection, &header).await?;
        self.context.validate_control(&control)?;
        self.handle
            .call(&self.id, Command::NewGame { control }, caller)
            .await?;
        Ok(())
    }

    /// Starts White's clock now (Art. 6.6).
    async fn start(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &Connection,
    ) -> Result<(), Error> {
        self.change(connection, &header, Command::Start).await
    }

    /// Starts White's clock at a wall-clock instant (microseconds since the
    /// Unix epoch). Refused unless the system clock is NTP-synchronised.
    async fn start_at(
        &self,
        unix_time_usec: i64,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &Connection,
    ) -> Result<(), Error> {
        self.start_at_impl(connection, &header, unix_time_usec, false)
            .await
    }

    /// `StartAt`, with `force` overriding the NTP-synchronisation check.
    async fn start_at_forced(
        &self,
        unix_time_usec: i64,
        force: bool,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &Connection,
    ) -> Result<(), Error> {
        self.start_at_impl(connection, &header, unix_time_usec, force)
            .await
    }

    /// The arbiter stops the clocks.
    async fn pause(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &Connection,
    ) -> Result<(), Error> {
        self.change(connection, &header, Command::Pause).await
    }

    /// The arbiter restarts the clocks.
    async fn resume(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &Connection,
    ) -> Result<(), Error> {
        self.change(connection, &header, Command::Resume).await
    }

    /// Presses a side's button (`white` or `black`).
    async fn press(
        &self,
        side: String,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &Connection,
    ) -> Result<(), Error> {
        let caller = self.context.authorize(connection, &header).await?;
        let side = parse_side(&side)?;
        self.handle
            .call(&self.id, Command::Press { side }, caller)
            .await?;
        Ok(())
    }

    /// Sets a side's remaining time (ms) and/or completed moves; -1 leaves
    /// a value unchanged.
    async fn adjust(
        &self,
        side: String,
        remaining_ms: i64,
        moves: i32,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &Connection,
    ) -> Result<(), Error> {
        self.adjust_impl(connection, &header, &side, remaining_ms, moves, -1)
            .await
    }

    /// `Adjust` plus the side's stage (1-based); -1 leaves a value unchanged.
    async fn adjust_with_stage(
        &self,
        side: String,
        remaining_ms: i64,
        moves: i32,
        stage: i32,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &Connection,
    ) -> Result<(), Error> {
        self.adjust_impl(connection, &header, &side, remaining_ms, moves, stage)
            .await
    }

    /// Adds `delta_ms` to a side's remaining time at the instant the board
    /// takes it (negative: takes it away), for a penalty or a bonus. The
    /// result must be 0 or more and at most 100 h.
    async fn adjust_by(
        &self,
        side: String,
        delta_ms: i64,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &Connection,
    ) -> Result<(), Error> {
        let caller = self.context.authorize(connection, &header).await?;
        let side = parse_side(&side)?;
        if delta_ms == 0 || delta_ms.unsigned_abs() > (MAX_TIME / MS).unsigned_abs() {
            return Err(Error::InvalidArgument(format!(
                "delta_ms {delta_ms} is out of range: give the milliseconds to add (or, \
                 negative, to take away), not 0 and at most {} h",
                MAX_TIME / (3_600 * crate::engine::SECOND)
            )));
        }
        self.handle
            .call(&self.id, Command::AdjustBy { side, delta_ms }, caller)
            .await?;
        Ok(())
    }

    /// Takes back the arbiter's last press (one made with `Press`), when
    /// no press came after it; the game is re-run without it.
    async fn undo_press(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &Connection,
    ) -> Result<(), Error> {
        self.change(connection, &header, Command::UndoPress).await
    }

    /// Acknowledges the player's standing arbiter call (Art. 6.12b): an
    /// arbiter is on the way. Recorded (`call-acknowledged`) with the
    /// caller; the call stands, the clocks stopped, until `Resume`.
    /// `InvalidState` when no call stands or one was already acknowledged.
    async fn ack_call(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &Connection,
    ) -> Result<(), Error> {
        self.change(connection, &header, Command::AckCall).await
    }

    /// Cancels the scheduled start (`StartAt`).
    async fn cancel_start(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &Connection,
    ) -> Result<(), Error> {
        self.change(connection, &header, Command::CancelStart).await
    }

    /// Writes an arbiter's note into the game's record (one line, at most
    /// 500 characters, `chessclock_core::limits::MAX_NOTE`).
    async fn note(
        &self,
        text: String,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &Connection,
    ) -> Result<(), Error> {
        self.change(connection, &header, Command::Note { text })
            .await
    }

    /// Every game of this board in the state database, oldest first, as
    /// JSON: `[{"game", "board", "control", "created_wall_us",
    /// "started_wall_us", "last_wall_us", "result", "moves", "current"}]`.
    async fn games(&self, #[zbus(header)] header: Header<'_>) -> Result<String, Error> {
        self.read_text(&header, Command::Games).await
    }

    /// The history of one game of this board (its number from `Games`), as
    /// JSON like `History`.
    async fn game_history(
        &self,
        game: i64,
        #[zbus(header)] header: Header<'_>,
    ) -> Result<String, Error> {
        self.read_text(&header, Command::GameHistory { game }).await
    }

    /// The PGN of one game of this board (its number from `Games`).
    async fn game_pgn(
        &self,
        game: i64,
        #[zbus(header)] header: Header<'_>,
    ) -> Result<String, Error> {
        self.read_text(&header, Command::GamePgn { game }).await
    }
    // The read methods take the header (the caller's share of reading)
    // also so that zbus checks the call's signature: a method with no
    // parameter at all accepts (and drops) any arguments, and a caller
    // must hear that `State("x")` is wrong.

    /// The state as JSON (the replay output schema plus additions; `t` is
    /// the daemon's monotonic milliseconds), with the state store's health
    /// under `"state_health"`.
    async fn state(&self, #[zbus(header)] header: Header<'_>) -> Result<String, Error> {
        let text = self.read_text(&header, Command::State).await?;
        Ok(self.context.with_state_health(&text))
    }

    /// The game history as JSON, each change with the caller's uid.
    async fn history(&self, #[zbus(header)] header: Header<'_>) -> Result<String, Error> {
        self.read_text(&header, Command::History).await
    }

    /// The game so far as PGN with clock comments (the broadcast text:
    /// confirmed moves only).
    async fn pgn(&self, #[zbus(header)] header: Header<'_>) -> Result<String, Error> {
        self.read_text(&header, Command::Pgn).await
    }

    /// Sets PGN tags of the current game (`Event`, `Site`, `Date`, `Round`,
    /// `White`, `Black`, or another valid tag name; an empty value gives a
    /// tag back to its configured default). Recorded in the game's journal.
    /// At most 64 tags a game, names of at most 64 characters, values of at
    /// most 255 (`chessclock_core::limits`).
    async fn set_tags(
        &self,
        tags: HashMap<String, String>,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &Connection,
    ) -> Result<(), Error> {
        let caller = self.context.authorize(connection, &header).await?;
        let mut tags: Vec<(String, String)> = tags.into_iter().collect();
        tags.sort();
        // The core's own check (the board core makes it again): a request
        // refused here never reaches the timing thread.
        crate::eboard::follower::check_tags(&tags).map_err(Error::InvalidArgument)?;
        self.handle
            .call(&self.id, Command::SetTags { tags }, caller)
            .await?;
        Ok(())
    }

    /// The game's result decided by the arbiter: `1-0`, `0-1`, `1/2-1/2`,
    /// or `*` to withdraw it; `termination` a PGN Termination value
    /// (`normal`, `time forfeit`, `rules infraction`, `adjudication`, ...,
    /// also `resignation`, `agreement`; empty: `normal`). The clock stops.
    async fn set_result(
        &self,
        result: String,
        termination: String,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &Connection,
    ) -> Result<(), Error> {
        let caller = self.context.authorize(connection, &header).await?;
        let command = chessclock_core::contract::result_command(&result, &termination)
            .map_err(Error::InvalidArgument)?;
        self.handle.call(&self.id, command, caller).await?;
        Ok(())
    }

    /// Every property at once, as JSON (consistent: one snapshot).
    async fn snapshot(&self, #[zbus(header)] _header: Header<'_>) -> Result<String, Error> {
        let snapshot = match &self.snapshot {
            Some(snapshot) => snapshot.clone(),
            None => fetch_snapshot(&self.handle, &self.id).await?,
        };
        serde_json::to_string(&snapshot)
            .map_err(|e| Error::Internal(format!("cannot encode the snapshot: {e}")))
    }

    /// The board id from the configuration.
    #[zbus(property(emits_changed_signal = "const"))]
    fn id(&self) -> String {
        self.id.clone()
    }

    /// The time control of the current game.
    #[zbus(property)]
    async fn time_control(&self) -> zbus::fdo::Result<String> {
        Ok(self.current().await?.control)
    }

    /// The daemon's monotonic milliseconds at which the times were taken.
    #[zbus(property)]
    async fn snapshot_ms(&self) -> zbus::fdo::Result<i64> {
        Ok(self.current().await?.snapshot_ms)
    }

    /// Whether the game has started.
    #[zbus(property)]
    async fn started(&self) -> zbus::fdo::Result<bool> {
        Ok(self.current().await?.started)
    }

    /// `white`, `black`, or empty when no clock runs.
    #[zbus(property)]
    async fn running(&self) -> zbus::fdo::Result<String> {
        Ok(running_name(&self.current().await?))
    }

    /// Whether the arbiter paused the clocks.
    #[zbus(property)]
    async fn paused(&self) -> zbus::fdo::Result<bool> {
        Ok(self.current().await?.paused)
    }

    /// White's remaining time at `SnapshotMs`.
    #[zbus(property)]
    async fn white_remaining_ms(&self) -> zbus::fdo::Result<i64> {
        Ok(self.current().await?.white_remaining_ms)
    }

    /// Black's remaining time at `SnapshotMs`.
    #[zbus(property)]
    async fn black_remaining_ms(&self) -> zbus::fdo::Result<i64> {
        Ok(self.current().await?.black_remaining_ms)
    }

    /// Moves completed by White.
    #[zbus(property)]
    async fn white_moves(&self) -> zbus::fdo::Result<u32> {
        Ok(self.current().await?.white_moves)
    }

    /// Moves completed by Black.
    #[zbus(property)]
    async fn black_moves(&self) -> zbus::fdo::Result<u32> {
        Ok(self.current().await?.black_moves)
    }

    /// White's stage (1-based).
    #[zbus(property)]
    async fn white_stage(&self) -> zbus::fdo::Result<u32> {
        Ok(self.current().await?.white_stage)
    }

    /// Black's stage (1-based).
    #[zbus(property)]
    async fn black_stage(&self) -> zbus::fdo::Result<u32> {
        Ok(self.current().await?.black_stage)
    }

    /// Sides whose flag has fallen, first fallen first.
    #[zbus(property)]
    async fn flags(&self) -> zbus::fdo::Result<Vec<String>> {
        Ok(flag_names(&self.current().await?))
    }

    /// Device links: (role, name, connected, serial or empty).
    #[zbus(property)]
    async fn devices(&self) -> zbus::fdo::Result<Vec<(String, String, bool, String)>> {
        Ok(device_tuples(&self.current().await?))
    }

    /// Whether a player has called the arbiter and it is not yet dealt with.
    #[zbus(property)]
    async fn arbiter_called(&self) -> zbus::fdo::Result<bool> {
        Ok(self.current().await?.arbiter_called)
    }

    /// A side's button was pressed: its move number and thinking time used.
    #[zbus(signal)]
    pub async fn pressed(
        emitter: &SignalEmitter<'_>,
        side: &str,
        move_number: u32,
        used_ms: i64,
    ) -> zbus::Result<()>;

    /// A flag the clock showed (fallen at `at_ms`, daemon monotonic ms) was
    /// withdrawn: a press made before it arrived late and was placed at its
    /// true instant.
    #[zbus(signal)]
    pub async fn flag_withdrawn(
        emitter: &SignalEmitter<'_>,
        side: &str,
        at_ms: i64,
    ) -> zbus::Result<()>;

    /// A press arrived `late_ms` after it was made, too late to be placed in
    /// the game: recorded for the arbiter, not applied.
    #[zbus(signal)]
    pub async fn press_not_placed(
        emitter: &SignalEmitter<'_>,
        side: &str,
        late_ms: i64,
    ) -> zbus::Result<()>;

    /// A side's flag fell at `at_ms` (daemon monotonic ms) in `stage`.
    #[zbus(signal)]
    pub async fn flag_fell(
        emitter: &SignalEmitter<'_>,
        side: &str,
        at_ms: i64,
        stage: u32,
        last_stage: bool,
    ) -> zbus::Result<()>;

    /// The electronic board's report on a flag fall: did `side` complete
    /// the moves its stage required (Art. 6.4; false in sudden death), can
    /// the opponent mate (Art. 6.9), and the verdict (`loss`, `draw`,
    /// `moves-completed`, `game-already-over`).
    #[zbus(signal)]
    pub async fn flag_report(
        emitter: &SignalEmitter<'_>,
        side: &str,
        moves_completed: bool,
        opponent_can_mate: bool,
        verdict: &str,
    ) -> zbus::Result<()>;

    /// A side entered a new stage.
    #[zbus(signal)]
    pub async fn stage_changed(
        emitter: &SignalEmitter<'_>,
        side: &str,
        stage: u32,
    ) -> zbus::Result<()>;

    /// A device link changed (role, name, connected, serial or empty).
    #[zbus(signal)]
    pub async fn device_changed(
        emitter: &SignalEmitter<'_>,
        role: &str,
        name: &str,
        connected: bool,
        serial: &str,
    ) -> zbus::Result<()>;

    /// The electronic board shows the starting position after a finished
    /// game: the arbiter may set up the next game (`NewGame`).
    #[zbus(signal)]
    pub async fn new_game_offered(emitter: &SignalEmitter<'_>) -> zbus::Result<()>;

    /// A player called the arbiter at this board.
    #[zbus(signal, name = "ArbiterCalled")]
    pub async fn arbiter_called_signal(emitter: &SignalEmitter<'_>) -> zbus::Result<()>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjust_validates_every_argument() {
        assert!(matches!(
            adjust_command("green", 1000, -1, -1),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            adjust_command("white", -2, -1, -1),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            adjust_command("white", -1, -2, -1),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            adjust_command("white", -1, -1, 0),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            adjust_command("white", -1, -1, -1),
            Err(Error::InvalidArgument(_))
        ));
        assert_eq!(
            adjust_command("black", 300_000, -1, -1).unwrap(),
            Command::Adjust {
                side: Side::Black,
                remaining_ms: Some(300_000),
                moves: None,
                stage: None
            }
        );
        assert_eq!(
            adjust_command("white", -1, 20, 2).unwrap(),
            Command::Adjust {
                side: Side::White,
                remaining_ms: None,
                moves: Some(20),
                stage: Some(2)
            }
        );
    }

    fn snapshot(ms: i64, white_moves: u32) -> BoardSnapshot {
        BoardSnapshot {
            board: "b1".into(),
            control: "300+2".into(),
            snapshot_ms: ms,
            view_us: ms * 1000,
            started: true,
            running: Some(Side::White),
            paused: false,
            white_remaining_ms: 300_000,
            black_remaining_ms: 300_000,
            white_moves,
            black_moves: 0,
            white_stage: 1,
            black_stage: 1,
            flags: vec![],
            devices: vec![],
            arbiter_called: false,
        }
    }

    fn board() -> Board {
        let (requests, _) = tokio::sync::mpsc::channel(1);
        let (events, _) = tokio::sync::broadcast::channel(1);
        Board::new(
            "b1".into(),
            ControlHandle {
                requests,
                events,
                boards: ["b1".to_owned()].into_iter().collect(),
                health: Default::default(),
                host: Default::default(),
                hall: Default::default(),
            },
            Arc::new(Context {
                live: std::sync::RwLock::new(super::super::Live::of(&{
                    let mut config = crate::config::Config::default();
                    config.daemon.require_ntp_for_scheduled_start = false;
                    config
                })),
                ntp: super::super::NtpSource::Fixed(None),
                reads: std::sync::Mutex::new(super::super::ReadShares::new(
                    super::super::limit::Limits::default(),
                )),
                health: Default::default(),
                host: Default::default(),
                hall: Default::default(),
            }),
            None,
        )
    }

    #[test]
    fn only_changed_properties_are_announced_and_stale_snapshots_ignored() {
        let mut board = board();
        assert_eq!(board.replace_snapshot(snapshot(1000, 0)).len(), 14);
        let changed: Vec<&str> = board
            .replace_snapshot(snapshot(2000, 1))
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        assert_eq!(changed, vec!["SnapshotMs", "WhiteMoves"]);
        assert!(board.replace_snapshot(snapshot(1500, 7)).is_empty());
        assert_eq!(board.snapshot.as_ref().unwrap().white_moves, 1);
        assert!(board.replace_snapshot(snapshot(2000, 1)).is_empty());
    }

    /// The race the bench's rig met about once in 250 starts: the cache is
    /// filled by a read of the view the readers had (taken at 1.000 s, read
    /// at 1.003 s), while a newer view (taken at 1.002 s: the display unit
    /// linked) is still queued behind the read; its `StateChanged` must
    /// replace the read, although its `snapshot_ms` is earlier.
    #[test]
    fn a_newer_view_replaces_a_read_of_an_older_one_whatever_their_instants() {
        let mut board = board();
        let link = |connected: bool| crate::control::DeviceLink {
            role: "display".into(),
            name: "/dev/chessclock/display".into(),
            connected,
            serial: connected.then(|| "CC2".to_owned()),
        };
        let mut read = snapshot(1003, 0);
        read.view_us = 1_000_000;
        read.devices = vec![link(false)];
        board.replace_snapshot(read);
        let mut newer = snapshot(1002, 0);
        newer.view_us = 1_002_000;
        newer.devices = vec![link(true)];
        let changed: Vec<&str> = board
            .replace_snapshot(newer.clone())
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        assert!(changed.contains(&"Devices"), "{changed:?}");
        assert_eq!(board.snapshot.as_ref(), Some(&newer));
        // The StateChanged of the view the read showed, queued before it,
        // changes nothing now.
        let mut older = snapshot(1000, 0);
        older.view_us = 1_000_000;
        older.devices = vec![link(false)];
        assert!(board.replace_snapshot(older).is_empty());
        assert_eq!(board.snapshot.as_ref(), Some(&newer));
    }

    #[test]
    fn sides_are_exact_lower_case_names() {
        assert_eq!(parse_side("white").unwrap(), Side::White);
        assert_eq!(parse_side("black").unwrap(), Side::Black);
        assert!(parse_side("White").is_err());
        assert!(parse_side("").is_err());
    }

    #[test]
    fn start_times_in_the_past_are_refused() {
        let now = 1_800_000_000_000_000;
        assert!(validate_start_time(now + 60_000_000, now).is_ok());
        assert!(validate_start_time(now - 500_000, now).is_ok());
        assert!(matches!(
            validate_start_time(now - 2_000_000, now),
            Err(Error::InvalidArgument(_))
        ));
        // Seconds instead of microseconds are far in the past.
        assert!(validate_start_time(1_800_000_000, now).is_err());
    }
}
