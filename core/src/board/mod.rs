//! The board core: one pure state machine per board, the centre of the
//! daemon.
//!
//! `Board::handle(now, wall, input)` takes one input (an arbiter's command,
//! a device's event, the electronic board's event, the store's commit, the
//! passing of time) at monotonic instant `now` (µs, CLOCK_MONOTONIC in the
//! daemon) and wall-clock `wall` (µs since the Unix epoch, used only for
//! scheduled starts and records), and returns the [`Action`]s to carry out:
//! display and LED frames, journal records for the store, and the replies,
//! device ACKs, board events and readers' views that wait for the store's
//! `Committed(seq)`. [`Board::next_deadline`] says when it must be called
//! again with [`BoardInput::Tick`] (a flag, a display change, a scheduled
//! start). It reads no clock and does no I/O, so its tests are exact
//! transcripts (see `tests/`).
//!
//! It owns the game ([`game::Game`]: the engine as an event-sourced fold of
//! its inputs), the display marks, its view of the device slots and of the
//! electronic board, and the actions waiting for commits.
//!
//! # Promises
//! * An input's effect is reported (reply, ACK, events, view) only after
//!   its record is committed; the clock face (displays, LEDs) changes at
//!   once.
//! * A press counts at its device instant, however late its frame arrives,
//!   up to [`LATE_PRESS_WINDOW`] after it (and, after a restart within one
//!   boot, for the whole outage): it is placed in the game among the inputs
//!   and flags already processed, and the game is re-run. A flag shown and
//!   withdrawn that way stays in the record (its fall and its withdrawal).
//!   A press that arrives later still is recorded and shown to the arbiter,
//!   never applied.
//! * A resent press is recognised by the unit's event record (SPEC §7.2),
//!   restored from the journal after a restart: acknowledged again, never
//!   counted twice.
//! * After a restart within one boot the running side is charged the true
//!   time up to the restart (CLOCK_MONOTONIC survives a process restart);
//!   then the game is paused for the arbiter (Art. 6.10a) unless the config
//!   says to resume.
//! * Every value of a command is bounded by what a game can have; a refusal
//!   changes nothing and says why.

pub mod devices;
pub mod follow;
pub mod game;
mod outbox;
pub mod record;
mod restore;
#[cfg(test)]
mod tests;

use chessclock_protocol::{Button, Hello, Leds};

use crate::contract::{BoardEvent, Caller, ControlError, DeviceLink, Reply};
use crate::display::{ButtonSide, DisplayConfig, Marks};
use crate::eboard::{EboardCommand, EboardEvent, GameEndReason};
use crate::engine::{
    Adjustment, ClockState, EngineError, Input, MatchControl, Notice, Settings, Side, MS, SECOND,
};
use crate::journal::{DeviceOrigin, EventRow, InputSource, Record, StoredEvent};
use crate::session::{DeviceCommand, DeviceRole};
use crate::time::Micros;
use crate::timecontrol::{TimeControl, MAX_TIME};
use crate::views::{
    BoardModel, DeviceOriginView, FlagFall, GameHeader, HistoryRow, RestartInfo, ScheduledStart,
};

use self::devices::{Devices, Verdict};
use self::follow::Follow;
use self::game::Game;
use self::outbox::Outbox;

pub use self::restore::Resumed;

/// How late a press's frame may arrive and the press still be placed at its
/// device instant. A unit declares its link lost after 1 s without frames
/// (SPEC §6), says HELLO every 500 ms until welcomed and resends its queue
/// every 100 ms: a press made as a cable was pulled and resent after a
/// quick replug arrives within about 2 s; 5 s leaves room for a replug by
/// hand. Later presses are recorded and shown, not applied: the arbiter
/// decides (Art. 6.10b).
pub const LATE_PRESS_WINDOW: Micros = 5 * SECOND;

/// What a board needs of the configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct BoardSetup {
    pub id: String,
    /// The configured button unit (path or `serial:...`).
    pub buttons: Option<String>,
    pub displays: Vec<String>,
    pub eboard: Option<String>,
    pub white_button: ButtonSide,
    /// Club practice: Black's press starts White's clock.
    pub start_on_black_press: bool,
    pub display: DisplayConfig,
    /// `move-count = "eboard"`: the move count comes from the e-board.
    pub moves_from_eboard: bool,
    pub default_time_ms: u64,
    pub resume_after_restart: bool,
    /// Whether the live PGN is written for broadcast tools.
    pub pgn_file: bool,
}

/// A game's control, resolved by the shell from its text.
#[derive(Clone, Debug, PartialEq)]
pub struct GameSpec {
    /// The control as given (notation or preset name).
    pub text: String,
    pub control: MatchControl,
    pub settings: Settings,
}

/// Where a reply goes (the shell's own number for a waiting caller).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReplyToken(pub u64);

/// A change an arbiter (or a tool) asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum BoardCommand {
    NewGame(GameSpec),
    Start,
    /// Start at a wall-clock instant (Art. 6.6).
    StartAt {
        unix_time_us: i64,
        forced: bool,
    },
    Pause,
    Resume,
    Press(Side),
    /// `None` leaves a value unchanged.
    Adjust {
        side: Side,
        remaining_ms: Option<i64>,
        moves: Option<u32>,
        stage: Option<u32>,
    },
}

/// What a device slot reports (the shell maps ports to slots).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceInput {
    Connected {
        role: DeviceRole,
        hello: Hello,
        path: String,
    },
    Disconnected {
        role: DeviceRole,
        reason: String,
    },
    /// A BUTTON frame: `at` is its device instant mapped to monotonic µs,
    /// `arrival` when it was read. Every frame, resent ones too: the board
    /// core keeps the event record.
    Button {
        role: DeviceRole,
        serial: String,
        event: u16,
        button: Button,
        pressed: bool,
        at: Micros,
        arrival: Micros,
    },
    Errors {
        role: DeviceRole,
        count: u64,
    },
    Refused {
        role: DeviceRole,
        path: String,
        reason: String,
    },
}

/// One input of [`Board::handle`].
#[derive(Clone, Debug, PartialEq)]
pub enum BoardInput {
    Command {
        token: Option<ReplyToken>,
        caller: Caller,
        command: BoardCommand,
    },
    Device(DeviceInput),
    Eboard(EboardEvent),
    /// The store committed (`ok`) or failed to commit every record up to
    /// `seq`.
    Committed {
        seq: u64,
        ok: bool,
    },
    /// Time passed (a deadline of [`Board::next_deadline`] came).
    Tick,
    /// The configuration changed (SIGHUP); a game in progress keeps its
    /// control.
    Reconfigure(Box<BoardSetup>, Box<GameSpec>),
}

/// What the shell carries out.
#[derive(Clone, Debug)]
pub enum Action {
    /// A frame for a device slot (display, LEDs, beep, ACK).
    Device {
        role: DeviceRole,
        command: DeviceCommand,
    },
    /// A journal record; the store answers `Committed { seq }`.
    Store { seq: u64, record: Record },
    /// The answer to a command.
    Reply {
        token: ReplyToken,
        result: Result<Reply, ControlError>,
    },
    /// Something every control surface hears about.
    Publish(BoardEvent),
    /// The readers' copy of the board, as of now.
    View(Box<BoardModel>),
    /// A row of the history, once committed.
    History(Box<HistoryRow>),
    /// A new game replaced the board's game: readers start a new history.
    NewHistory(Box<GameHeader>),
    /// For the board's electronic board task.
    Eboard(EboardCommand),
    /// The live PGN changed (readers; the broadcast file when configured).
    Pgn(String),
}

/// A scheduled start and who asked for it.
#[derive(Clone, Debug)]
struct Scheduled {
    start: ScheduledStart,
    caller: Caller,
}

/// See the module docs.
#[derive(Debug)]
pub struct Board {
    setup: BoardSetup,
    spec: GameSpec,
    game: Game,
    /// Monotonic µs of the game's instant 0.
    epoch: Micros,
    started_at: Option<Micros>,
    scheduled: Option<Scheduled>,
    marks: Marks,
    devices: Devices,
    eboard: Option<Follow>,
    header: GameHeader,
    flag_falls: Vec<FlagFall>,
    restart: Option<RestartInfo>,
    /// After a restart within one boot: the game-time span of the outage,
    /// in which presses resent by the units are placed whatever their age.
    outage: Option<(Micros, Micros)>,
    unplaced: u32,
    last_beep_second: Option<Micros>,
    outbox: Outbox,
    /// The machine's boot (for the records of new games).
    boot_id: Option<String>,
    /// Something readers see changed since the last view.
    dirty: bool,
    /// The last instant handled (monotonic): what the displays show now.
    last_now: Micros,
}

/// The engine's refusal as the caller's error.
fn engine_error(error: EngineError) -> ControlError {
    match error {
        EngineError::InvalidAdjustment(message) => ControlError::InvalidArgument(message),
        other => ControlError::InvalidState(other.to_string()),
    }
}

impl Board {
    /// A board with a new game of `spec`, created at `now`.
    pub fn new(
        setup: BoardSetup,
        spec: GameSpec,
        boot_id: Option<String>,
        caller: Caller,
        now: Micros,
        wall: i64,
    ) -> (Board, Vec<Action>) {
        let mut board = Board::blank(setup, spec, boot_id, now, wall, caller.uid);
        board.outbox.record(Record::NewGame {
            control: board.spec.text.clone(),
            settings: board.spec.settings,
            epoch: now,
            caller_uid: caller.uid,
            wall_us: wall,
            boot_id: board.boot_id.clone(),
        });
        // Readers see a new board at once: there is nothing in it yet that
        // a crash could take back.
        board
            .outbox
            .immediately(Action::NewHistory(Box::new(board.header.clone())));
        if let Some(pgn) = board.pgn() {
            board.outbox.immediately(Action::Pgn(pgn));
        }
        board.dirty = true;
        let mut actions = board.finish(now);
        board.publish_first_view(now, &mut actions);
        (board, actions)
    }

    fn blank(
        setup: BoardSetup,
        spec: GameSpec,
        boot_id: Option<String>,
        epoch: Micros,
        wall: i64,
        caller_uid: Option<u32>,
    ) -> Board {
        let devices = Devices::new(
            setup.buttons.as_deref(),
            &setup.displays,
            &setup.display,
            setup.white_button,
        );
        let eboard = setup
            .eboard
            .as_deref()
            .map(|name| Follow::new(name, &spec.control));
        let header = GameHeader {
            board: setup.id.clone(),
            control: spec.text.clone(),
            settings: spec.settings,
            created_wall_us: wall,
            caller_uid,
        };
        Board {
            marks: Marks {
                buttons_lost: setup.buttons.is_some(),
                ..Marks::default()
            },
            game: Game::new(spec.control.clone(), spec.settings),
            spec,
            epoch,
            started_at: None,
            scheduled: None,
            devices,
            eboard,
            header,
            flag_falls: Vec::new(),
            restart: None,
            outage: None,
            unplaced: 0,
            last_beep_second: None,
            outbox: Outbox::default(),
            boot_id,
            dirty: true,
            last_now: epoch,
            setup,
        }
    }

    pub fn id(&self) -> &str {
        &self.setup.id
    }

    pub fn setup(&self) -> &BoardSetup {
        &self.setup
    }

    /// Game time of monotonic instant `now`.
    fn t(&self, now: Micros) -> Micros {
        now.saturating_sub(self.epoch)
    }

    /// The clock's state at monotonic instant `now`.
    pub fn state(&self, now: Micros) -> ClockState {
        self.game.state(self.t(now))
    }

    /// The readers' copy as of `now`.
    pub fn model(&self, now: Micros) -> BoardModel {
        BoardModel {
            board: self.setup.id.clone(),
            control: self.spec.text.clone(),
            clock: self.game.engine().model(),
            epoch: self.epoch,
            taken_at: now,
            started_at: self.started_at,
            scheduled_start: self.scheduled.as_ref().map(|s| s.start.clone()),
            marks: self.marks.clone(),
            devices: self.devices.views(),
            eboard: self.eboard.as_ref().map(Follow::view),
            default_time_ms: self.setup.default_time_ms,
            flag_falls: self.flag_falls.clone(),
            restart: self.restart.clone(),
            unplaced_presses: self.unplaced,
            settings: self.spec.settings,
        }
    }

    /// Whether actions wait for a commit.
    pub fn waiting(&self) -> bool {
        self.outbox.waiting()
    }

    /// The live PGN, when the board has an electronic board.
    pub fn pgn(&self) -> Option<String> {
        self.eboard.as_ref().and_then(Follow::pgn)
    }

    /// The earliest monotonic instant at which [`BoardInput::Tick`] is due.
    pub fn next_deadline(&self) -> Option<Micros> {
        let processed = self.game.processed_to();
        let engine = self
            .game
            .next_deadline()
            .filter(|&d| d > processed)
            .map(|d| d.saturating_add(self.epoch));
        // What the faces show changes from what they show now.
        let state = self.game.state(self.t(self.last_now));
        let rising = state.running.map(Side::other).filter(|&other| {
            matches!(
                self.spec.control.for_side(other),
                TimeControl::Hourglass { .. }
            )
        });
        let displays = self
            .devices
            .displays
            .iter()
            .flat_map(|d| {
                [
                    d.rules.next_change(&state),
                    rising.and_then(|other| d.rules.next_change_rising(state.side(other), state.t)),
                ]
            })
            .flatten()
            .map(|t| t.saturating_add(self.epoch))
            .min();
        let beep = self.next_beep(&state);
        let start = self.scheduled.as_ref().map(|s| s.start.at);
        [engine, displays, beep, start].into_iter().flatten().min()
    }

    /// Takes one input at monotonic `now`, wall-clock `wall`.
    pub fn handle(&mut self, now: Micros, wall: i64, input: BoardInput) -> Vec<Action> {
        self.process_due(now, wall);
        match input {
            BoardInput::Tick => {}
            BoardInput::Committed { seq, ok } => self.committed(seq, ok),
            BoardInput::Command {
                token,
                caller,
                command,
            } => self.command(now, wall, token, caller, command),
            BoardInput::Device(input) => self.device(now, wall, input),
            BoardInput::Eboard(event) => self.eboard_event(now, wall, event),
            BoardInput::Reconfigure(setup, spec) => self.reconfigure(now, wall, *setup, *spec),
        }
        self.finish(now)
    }

    /// Makes sure the readers' first view goes out with the board's first
    /// actions (not behind the first commit).
    fn publish_first_view(&mut self, now: Micros, actions: &mut Vec<Action>) {
        if !actions.iter().any(|a| matches!(a, Action::View(_))) {
            actions.push(Action::View(Box::new(self.model(now))));
        }
    }

    /// Displays, LEDs, the readers' view; then what to carry out.
    fn finish(&mut self, now: Micros) -> Vec<Action> {
        self.last_now = self.last_now.max(now);
        self.refresh(self.last_now);
        if self.dirty {
            self.dirty = false;
            let model = self.model(now);
            self.outbox.soon(Action::View(Box::new(model)));
        }
        self.outbox.take()
    }

    fn committed(&mut self, seq: u64, ok: bool) {
        if !ok {
            tracing::error!(board = %self.setup.id, seq, "a record could not be saved");
        }
        let released = self.outbox.committed(seq, ok);
        for (serial, event) in released.acked {
            self.devices.acked(&serial, event);
        }
        for action in released.actions {
            self.outbox.immediately(action);
        }
    }

    // ---------------------------------------------------------------
    // Time passing.

    /// A scheduled start that came due; flags and periods that fell due.
    fn process_due(&mut self, now: Micros, wall: i64) {
        if let Some(scheduled) = self.scheduled.clone() {
            if scheduled.start.at <= now {
                self.scheduled = None;
                let t = self.t(scheduled.start.at).max(self.game.processed_to());
                let _ = self.input(
                    now,
                    wall,
                    t,
                    Input::Start,
                    StoredEvent::Start,
                    scheduled.caller,
                    None,
                    None,
                );
            }
        }
        let t = self.t(now);
        if self
            .game
            .next_deadline()
            .is_some_and(|d| d <= t && d > self.game.processed_to())
        {
            let notices = self.game.advance(t);
            self.time_notices(now, wall, &notices);
        }
    }

    /// What the passing of time caused: each flag is a record of its own, at
    /// its exact instant.
    fn time_notices(&mut self, now: Micros, wall: i64, notices: &[Notice]) {
        // A flag already in the record (seen before a restart) is not new.
        let notices: Vec<Notice> = notices
            .iter()
            .filter(|n| !self.known_flag(n))
            .cloned()
            .collect();
        let notices = notices.as_slice();
        if notices.is_empty() {
            return;
        }
        self.dirty = true;
        self.apply_marks(notices);
        let mut by_instant: Vec<(Micros, Vec<Notice>)> = Vec::new();
        for notice in notices {
            let at = match notice {
                Notice::FlagFell { at, .. }
                | Notice::StageChanged { at, .. }
                | Notice::Frozen { at } => *at,
                _ => self.game.processed_to(),
            };
            match by_instant.last_mut() {
                Some((t, group)) if *t == at => group.push(notice.clone()),
                _ => by_instant.push((at, vec![notice.clone()])),
            }
        }
        for (at, group) in by_instant {
            for notice in &group {
                if let Notice::FlagFell {
                    side,
                    stage,
                    last_stage,
                    ..
                } = notice
                {
                    self.write_row(
                        at,
                        wall,
                        StoredEvent::Flag {
                            side: *side,
                            stage: *stage,
                            last_stage: *last_stage,
                        },
                        &Caller::DAEMON,
                        None,
                        &group,
                    );
                }
            }
            self.report(now, &group);
        }
    }

    // ---------------------------------------------------------------
    // Inputs.

    /// Applies one engine input at game time `t` and records it. Returns
    /// the input's own notices, or the engine's refusal (then nothing
    /// changed and nothing is recorded).
    #[allow(clippy::too_many_arguments)]
    fn input(
        &mut self,
        now: Micros,
        wall: i64,
        t: Micros,
        input: Input,
        stored: StoredEvent,
        caller: Caller,
        origin: Option<DeviceOrigin>,
        token: Option<ReplyToken>,
    ) -> Result<Vec<Notice>, ControlError> {
        if let Input::Press(side) = input {
            if t >= self.game.processed_to() {
                self.count_from_eboard(now, wall, t, side);
            }
        }
        let applied = match self.game.apply(t, input) {
            Ok(applied) => applied,
            Err(error) => {
                tracing::warn!(board = %self.setup.id, %error, ?input, "the engine refused an input");
                let error = engine_error(error);
                if let Some(token) = token {
                    self.outbox.soon(Action::Reply {
                        token,
                        result: Err(error.clone()),
                    });
                }
                return Err(error);
            }
        };
        self.dirty = true;
        // What time caused before the input comes first, as its own records.
        self.time_notices(now, wall, &applied.elapsed);
        self.apply_marks(&applied.caused);
        let outcome = applied.caused.clone();
        if let Some(rerun) = &applied.rerun {
            tracing::info!(board = %self.setup.id, ?input, late_ms = (self.game.processed_to() - t) / MS,
                later_inputs = rerun.later_inputs, "a late input was placed at its instant; the game was re-run");
        }
        let answer = match record::refusal(&applied.caused) {
            Some(message) => Err(ControlError::InvalidState(message)),
            None => Ok(Reply::Done),
        };
        self.write_row(t, wall, stored, &caller, origin, &outcome);
        if let Some(rerun) = applied.rerun {
            for fall in &rerun.withdrawn {
                self.flag_falls
                    .retain(|f| !(f.side == fall.side && f.at == fall.at));
                self.write_row(
                    t,
                    wall,
                    StoredEvent::FlagWithdrawn {
                        side: fall.side,
                        flag_at_us: fall.at,
                    },
                    &Caller::DAEMON,
                    None,
                    &[],
                );
                self.outbox
                    .after_commit(Action::Publish(BoardEvent::FlagWithdrawn {
                        board: self.setup.id.clone(),
                        side: fall.side,
                        at_ms: fall.at.saturating_add(self.epoch).div_euclid(MS),
                    }));
            }
            self.recompute_marks();
            let added: Vec<Notice> = rerun
                .added
                .iter()
                .map(|fall| Notice::FlagFell {
                    side: fall.side,
                    at: fall.at,
                    stage: fall.stage,
                    last_stage: fall.last_stage,
                })
                .collect();
            // Flags the re-run made fall at instants already passed.
            self.time_notices(now, wall, &added);
        }
        self.report(now, &outcome);
        if let Some(token) = token {
            self.outbox.after_commit(Action::Reply {
                token,
                result: answer,
            });
        }
        Ok(applied.caused)
    }

    /// Appends a row to the journal and (after its commit) to the history.
    fn write_row(
        &mut self,
        t: Micros,
        wall: i64,
        event: StoredEvent,
        caller: &Caller,
        origin: Option<DeviceOrigin>,
        notices: &[Notice],
    ) {
        let state = self.game.state(t);
        let row = HistoryRow {
            event: event.clone(),
            t_ms: t.div_euclid(MS),
            t_us: t,
            wall_us: wall,
            caller_uid: caller.uid,
            caller_name: caller.name.clone(),
            device: origin.as_ref().map(DeviceOriginView::from),
            outcome: notices.iter().map(record::describe).collect(),
            white_used_ms: state.white.used.div_euclid(MS),
            black_used_ms: state.black.used.div_euclid(MS),
            white_remaining_ms: state.white.remaining.map(crate::engine::report::ceil_ms),
            black_remaining_ms: state.black.remaining.map(crate::engine::report::ceil_ms),
        };
        self.outbox.record(Record::Event(EventRow {
            offset_us: t,
            wall_us: wall,
            event,
            caller_uid: caller.uid,
            caller_name: caller.name.clone(),
            origin,
        }));
        self.outbox.after_commit(Action::History(Box::new(row)));
    }

    fn known_flag(&self, notice: &Notice) -> bool {
        matches!(notice, Notice::FlagFell { side, at, .. }
            if self.flag_falls.iter().any(|f| f.side == *side && f.at == *at))
    }

    /// The marks the display shows follow the notices.
    fn apply_marks(&mut self, notices: &[Notice]) {
        for notice in notices {
            match notice {
                Notice::Started if self.started_at.is_none() => {
                    self.started_at = Some(self.game.processed_to());
                }
                Notice::FlagFell {
                    side,
                    at,
                    stage,
                    last_stage,
                } if !self
                    .flag_falls
                    .iter()
                    .any(|f| f.side == *side && f.at == *at) =>
                {
                    if self.marks.first_flag.is_none() {
                        self.marks.first_flag = Some(*side);
                    }
                    match side {
                        Side::White => self.marks.stage_flag_white = !last_stage,
                        Side::Black => self.marks.stage_flag_black = !last_stage,
                    }
                    self.flag_falls.push(FlagFall {
                        side: *side,
                        at: *at,
                        stage: *stage,
                        last_stage: *last_stage,
                    });
                }
                Notice::Adjusted(adjustment) if adjustment.remaining.is_some_and(|r| r > 0) => {
                    match adjustment.side {
                        Side::White => self.marks.stage_flag_white = false,
                        Side::Black => self.marks.stage_flag_black = false,
                    }
                    if self.marks.first_flag == Some(adjustment.side) {
                        self.marks.first_flag = None;
                    }
                }
                Notice::Resumed => {
                    self.marks.arbiter_called = false;
                    self.marks.down_time = None;
                }
                _ => {}
            }
        }
    }

    /// After a re-run: the flag marks follow the flags that now stand.
    fn recompute_marks(&mut self) {
        let state = self.game.state(self.game.processed_to());
        self.marks.first_flag = state.flags.first().copied();
        if !state.flags.contains(&Side::White) {
            self.marks.stage_flag_white = false;
        }
        if !state.flags.contains(&Side::Black) {
            self.marks.stage_flag_black = false;
        }
        if state.flags.is_empty() {
            if let Some(eboard) = self.eboard.as_mut() {
                eboard.flag_report = None;
                if eboard.tracker.game_end().is_none() {
                    self.marks.game_end = None;
                }
            }
        }
    }

    /// Turns notices into board events, beeps, the e-board's PGN clocks and
    /// flag reports.
    fn report(&mut self, now: Micros, notices: &[Notice]) {
        if notices.is_empty() {
            return;
        }
        let id = self.setup.id.clone();
        let state = self.game.state(self.game.processed_to());
        let mut flag_reports = Vec::new();
        if let Some(eboard) = self.eboard.as_mut() {
            let (pgn_changed, reports) =
                eboard.on_notices(notices, &state, &self.spec.control, &mut self.marks);
            flag_reports = reports;
            if notices.iter().any(|n| matches!(n, Notice::Pressed { .. })) {
                self.outbox
                    .soon(Action::Eboard(EboardCommand::ClockPressed { at: now }));
            }
            if pgn_changed {
                if let Some(pgn) = eboard.pgn() {
                    self.outbox.after_commit(Action::Pgn(pgn));
                }
            }
        }
        for notice in notices {
            match notice {
                Notice::Pressed {
                    side,
                    move_number,
                    used,
                } => {
                    tracing::info!(board = %id, %side, move_number, used_ms = used / MS, "move completed");
                    self.outbox
                        .after_commit(Action::Publish(BoardEvent::Pressed {
                            board: id.clone(),
                            side: *side,
                            move_number: *move_number,
                            used_ms: used / MS,
                        }));
                }
                Notice::FlagFell {
                    side,
                    at,
                    stage,
                    last_stage,
                } => {
                    tracing::info!(board = %id, %side, game_ms = at / MS, stage, last_stage, "flag fell");
                    self.outbox
                        .after_commit(Action::Publish(BoardEvent::FlagFell {
                            board: id.clone(),
                            side: *side,
                            at_ms: at.saturating_add(self.epoch).div_euclid(MS),
                            stage: *stage,
                            last_stage: *last_stage,
                        }));
                }
                Notice::StageChanged { side, stage, .. } => {
                    self.outbox
                        .after_commit(Action::Publish(BoardEvent::StageChanged {
                            board: id.clone(),
                            side: *side,
                            stage: *stage,
                        }));
                    if self.setup.display.beep_on_control {
                        self.beep(200, 2);
                    }
                }
                _ => {}
            }
        }
        for report in &flag_reports {
            tracing::info!(board = %id, side = %report.flagged, verdict = follow::verdict_name(report.verdict),
                "flag fall checked on the electronic board (Art. 6.4, 6.9)");
            self.outbox
                .after_commit(Action::Publish(follow::flag_report_event(&id, report)));
        }
    }

    /// With `move-count = "eboard"`, the engine's move count becomes the
    /// board's just before a press (recorded like any correction, marked as
    /// the daemon's), so stage time comes at the real N-th move.
    fn count_from_eboard(&mut self, now: Micros, wall: i64, t: Micros, side: Side) {
        if !self.setup.moves_from_eboard {
            return;
        }
        let state = self.game.state(t);
        if state.running != Some(side) {
            return;
        }
        let Some(adjustment) = self
            .eboard
            .as_ref()
            .and_then(|e| e.adjustment_before_press(side, state.side(side).moves))
        else {
            return;
        };
        tracing::info!(board = %self.setup.id, %side, engine_moves = state.side(side).moves,
            board_moves = ?adjustment.moves.map(|m| m + 1), "move count taken from the electronic board");
        let _ = self.input(
            now,
            wall,
            t,
            Input::Adjust(adjustment),
            StoredEvent::Adjust {
                side,
                remaining_us: None,
                moves: adjustment.moves,
                stage: None,
                source: Some(InputSource::Eboard),
            },
            Caller::DAEMON,
            None,
            None,
        );
    }

    // ---------------------------------------------------------------
    // Commands.

    fn reply_now(&mut self, token: Option<ReplyToken>, result: Result<Reply, ControlError>) {
        if let Some(token) = token {
            self.outbox.soon(Action::Reply { token, result });
        }
    }

    fn command(
        &mut self,
        now: Micros,
        wall: i64,
        token: Option<ReplyToken>,
        caller: Caller,
        command: BoardCommand,
    ) {
        let t = self.t(now).max(self.game.processed_to());
        let (input, stored) = match command {
            BoardCommand::NewGame(spec) => {
                let result = self.new_game(now, wall, spec, &caller);
                match result {
                    Ok(()) => {
                        if let Some(token) = token {
                            self.outbox.after_commit(Action::Reply {
                                token,
                                result: Ok(Reply::Done),
                            });
                        }
                    }
                    Err(error) => self.reply_now(token, Err(error)),
                }
                return;
            }
            BoardCommand::StartAt {
                unix_time_us,
                forced,
            } => {
                let result = self.start_at(now, wall, unix_time_us, forced, &caller);
                match result {
                    Ok(()) => {
                        if let Some(token) = token {
                            self.outbox.after_commit(Action::Reply {
                                token,
                                result: Ok(Reply::Done),
                            });
                        }
                    }
                    Err(error) => self.reply_now(token, Err(error)),
                }
                return;
            }
            BoardCommand::Start => (Input::Start, StoredEvent::Start),
            BoardCommand::Pause => (Input::Pause, StoredEvent::Pause),
            BoardCommand::Resume => (Input::Resume, StoredEvent::Resume),
            BoardCommand::Press(side) => (Input::Press(side), StoredEvent::Press { side }),
            BoardCommand::Adjust {
                side,
                remaining_ms,
                moves,
                stage,
            } => match adjustment(side, remaining_ms, moves, stage) {
                Ok(adjustment) => (
                    Input::Adjust(adjustment),
                    StoredEvent::Adjust {
                        side,
                        remaining_us: adjustment.remaining,
                        moves,
                        stage,
                        source: None,
                    },
                ),
                Err(error) => {
                    self.reply_now(token, Err(error));
                    return;
                }
            },
        };
        let _ = self.input(now, wall, t, input, stored, caller, None, token);
    }

    fn in_progress(&self, now: Micros) -> bool {
        let state = self.state(now);
        state.started && !state.frozen && state.flags.is_empty()
    }

    fn new_game(
        &mut self,
        now: Micros,
        wall: i64,
        spec: GameSpec,
        caller: &Caller,
    ) -> Result<(), ControlError> {
        if self.in_progress(now) && self.state(now).running.is_some() {
            return Err(ControlError::InvalidState(format!(
                "a game is running on board `{}`: pause it first (chessclockctl pause {})",
                self.setup.id, self.setup.id
            )));
        }
        tracing::info!(board = %self.setup.id, control = %spec.text, uid = ?caller.uid, "new game");
        self.replace_game(now, wall, spec, caller.uid);
        Ok(())
    }

    /// The board's game becomes a new one of `spec` (devices, links and
    /// the units' event records stay).
    fn replace_game(&mut self, now: Micros, wall: i64, spec: GameSpec, caller_uid: Option<u32>) {
        let mut fresh = Board::blank(
            self.setup.clone(),
            spec,
            self.boot_id.clone(),
            now,
            wall,
            caller_uid,
        );
        fresh.devices.carry_over(&self.devices);
        fresh.marks.buttons_lost = self.marks.buttons_lost;
        fresh.outbox = std::mem::take(&mut self.outbox);
        if let Some(old) = &self.eboard {
            fresh.eboard = Some(old.renew(&fresh.spec.control, now));
            fresh.outbox.soon(Action::Eboard(EboardCommand::NewGame));
        }
        *self = fresh;
        self.outbox.record(Record::NewGame {
            control: self.spec.text.clone(),
            settings: self.spec.settings,
            epoch: now,
            caller_uid,
            wall_us: wall,
            boot_id: self.boot_id.clone(),
        });
        self.outbox
            .after_commit(Action::NewHistory(Box::new(self.header.clone())));
        if let Some(pgn) = self.pgn() {
            self.outbox.after_commit(Action::Pgn(pgn));
        }
        self.dirty = true;
    }

    fn start_at(
        &mut self,
        now: Micros,
        wall: i64,
        unix_time_us: i64,
        forced: bool,
        caller: &Caller,
    ) -> Result<(), ControlError> {
        if self.state(now).started {
            return Err(ControlError::InvalidState(format!(
                "the game on board `{}` has already started",
                self.setup.id
            )));
        }
        let ahead = unix_time_us.saturating_sub(wall);
        if ahead < -SECOND {
            return Err(ControlError::InvalidArgument(format!(
                "the start time is {} s in the past",
                -ahead / SECOND
            )));
        }
        if ahead > MAX_TIME {
            return Err(ControlError::InvalidArgument(format!(
                "the start time is more than {} hours away",
                MAX_TIME / (3_600 * SECOND)
            )));
        }
        let at = now.saturating_add(ahead.max(0));
        self.scheduled = Some(Scheduled {
            start: ScheduledStart {
                at,
                unix_time_us,
                forced,
            },
            caller: caller.clone(),
        });
        let t = self.t(now).max(self.game.processed_to());
        self.write_row(
            t,
            wall,
            StoredEvent::StartAt {
                unix_time_us,
                forced,
            },
            caller,
            None,
            &[],
        );
        self.dirty = true;
        tracing::info!(board = %self.setup.id, unix_time_us, in_ms = ahead / MS, forced, "start scheduled");
        Ok(())
    }

    // ---------------------------------------------------------------
    // Devices.

    fn device_changed(&mut self, role: DeviceRole) {
        if let Some(slot) = self.devices.slot(role) {
            let view = slot.view();
            self.outbox.soon(Action::Publish(BoardEvent::DeviceChanged {
                board: self.setup.id.clone(),
                link: view.link(),
            }));
        }
        self.dirty = true;
    }

    fn device(&mut self, now: Micros, wall: i64, input: DeviceInput) {
        match input {
            DeviceInput::Connected { role, hello, path } => {
                if role == DeviceRole::Buttons {
                    self.marks.buttons_lost = false;
                }
                self.devices
                    .connected(role, &hello, &self.setup.display, self.setup.white_button);
                tracing::info!(board = %self.setup.id, %role, path, serial = hello.serial.as_str(), "device connected");
                self.device_changed(role);
            }
            DeviceInput::Disconnected { role, reason } => {
                if let Some(slot) = self.devices.slot_mut(role) {
                    slot.connected = false;
                    tracing::warn!(board = %self.setup.id, device = %slot.name, reason, "device disconnected");
                }
                if role == DeviceRole::Buttons {
                    self.marks.buttons_lost = true;
                }
                self.device_changed(role);
            }
            DeviceInput::Refused { role, path, reason } => {
                tracing::warn!(board = %self.setup.id, %role, path, reason,
                    "a device on this board's port was refused and is left alone");
            }
            DeviceInput::Errors { role, count } => {
                if let Some(slot) = self.devices.slot_mut(role) {
                    slot.errors = slot.errors.saturating_add(count);
                    tracing::warn!(board = %self.setup.id, device = %slot.name, count, total = slot.errors,
                        "refused frames from a device");
                }
                self.dirty = true;
            }
            DeviceInput::Button {
                role,
                serial,
                event,
                button,
                pressed,
                at,
                arrival,
            } => self.button(now, wall, role, serial, event, button, pressed, at, arrival),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn button(
        &mut self,
        now: Micros,
        wall: i64,
        role: DeviceRole,
        serial: String,
        event: u16,
        button: Button,
        pressed: bool,
        at: Micros,
        arrival: Micros,
    ) {
        match self.devices.check_event(&serial, event) {
            Verdict::New => {}
            Verdict::Repeat { ack } => {
                tracing::info!(board = %self.setup.id, device = %serial, event, "a press already recorded was sent again; acknowledging it");
                self.outbox.soon(Action::Device {
                    role,
                    command: DeviceCommand::Ack { event: ack },
                });
                return;
            }
            Verdict::Pending | Verdict::Ahead => return,
        }
        let side = match button {
            Button::Arbiter => None,
            Button::Left | Button::Right => self.side_of_button(button),
            _ => {
                tracing::warn!(board = %self.setup.id, device = %serial, ?button, "unknown button");
                self.outbox.ack_after_commit(role, serial, event);
                return;
            }
        };
        if !pressed {
            self.outbox.ack_after_commit(role, serial, event);
            return;
        }
        // A press is never later than its frame's arrival, nor than now.
        let arrival = arrival.min(now);
        let t = self.t(at.min(arrival));
        let arrived = self.t(arrival);
        let origin = DeviceOrigin {
            serial: serial.clone(),
            boot_id: self.devices.boot_of(&serial),
            event,
            late_us: arrival.saturating_sub(at).max(0),
        };
        let in_outage = self.outage.is_some_and(|(from, to)| t >= from && t <= to);
        if t < self.game.processed_to() && t < arrived - LATE_PRESS_WINDOW && !in_outage {
            self.not_placed(now, wall, side, t, arrived, origin, role);
            return;
        }
        let (input, stored) = match side {
            None => {
                self.marks.arbiter_called = true;
                tracing::warn!(board = %self.setup.id, "arbiter called (Art. 6.12b): clock paused");
                (Input::Pause, StoredEvent::Pause)
            }
            Some(side) => {
                let state = self.game.state(t);
                if side == Side::Black
                    && self.setup.start_on_black_press
                    && self.started_at.is_none()
                    && !state.started
                {
                    // Club practice: Black's press starts White's clock.
                    (Input::Start, StoredEvent::Start)
                } else {
                    (Input::Press(side), StoredEvent::Press { side })
                }
            }
        };
        let t = if input == Input::Start {
            t.max(self.game.processed_to())
        } else {
            t
        };
        let applied = self.input(
            now,
            wall,
            t,
            input,
            stored,
            Caller::DAEMON,
            Some(origin),
            None,
        );
        if side.is_none() {
            self.outbox
                .after_commit(Action::Publish(BoardEvent::ArbiterCalled {
                    board: self.setup.id.clone(),
                }));
        }
        // A refusal (the engine refuses no press or pause) is in the log;
        // either way the unit's queue moves on.
        let _ = applied;
        self.outbox.ack_after_commit(role, serial, event);
    }

    #[allow(clippy::too_many_arguments)]
    fn not_placed(
        &mut self,
        now: Micros,
        wall: i64,
        side: Option<Side>,
        t: Micros,
        arrived: Micros,
        origin: DeviceOrigin,
        role: DeviceRole,
    ) {
        let _ = now;
        self.unplaced = self.unplaced.saturating_add(1);
        self.dirty = true;
        let serial = origin.serial.clone();
        let event = origin.event;
        tracing::warn!(board = %self.setup.id, side = ?side, late_ms = (arrived - t) / MS,
            "a press arrived too late to be placed; recorded for the arbiter, not applied");
        if let Some(side) = side {
            self.write_row(
                arrived.max(self.game.processed_to()),
                wall,
                StoredEvent::PressNotPlaced {
                    side,
                    device_at_us: t,
                },
                &Caller::DAEMON,
                Some(origin),
                &[],
            );
            self.outbox
                .after_commit(Action::Publish(BoardEvent::PressNotPlaced {
                    board: self.setup.id.clone(),
                    side,
                    late_ms: (arrived - t) / MS,
                }));
        }
        self.outbox.ack_after_commit(role, serial, event);
    }

    fn side_of_button(&self, button: Button) -> Option<Side> {
        let left = match self.setup.white_button {
            ButtonSide::Left => Side::White,
            ButtonSide::Right => Side::Black,
        };
        match button {
            Button::Left => Some(left),
            Button::Right => Some(left.other()),
            _ => None,
        }
    }

    // ---------------------------------------------------------------
    // The electronic board.

    fn eboard_event(&mut self, now: Micros, wall: i64, event: EboardEvent) {
        let Some(eboard) = self.eboard.as_mut() else {
            return;
        };
        let followed = eboard.on_event(&event);
        let link = DeviceLink {
            role: "eboard".into(),
            name: eboard.name.clone(),
            connected: eboard.connected,
            serial: eboard.serial.clone(),
        };
        let pgn = followed.pgn_changed.then(|| eboard.pgn()).flatten();
        match &event {
            EboardEvent::Connected { path, .. } => {
                tracing::info!(board = %self.setup.id, device = %path.display(), "electronic board connected")
            }
            EboardEvent::Disconnected { path, reason, .. } => {
                tracing::warn!(board = %self.setup.id, device = %path.display(), reason, "electronic board disconnected")
            }
            EboardEvent::Board(crate::eboard::BoardEvent::Unrecognised { .. }) => {
                tracing::warn!(board = %self.setup.id, "the electronic board shows a position that fits no legal move: the arbiter should look")
            }
            _ => {}
        }
        let t = self.t(now).max(self.game.processed_to());
        if let Some(stored) = followed.record {
            self.write_row(t, wall, stored, &Caller::DAEMON, None, &[]);
        }
        if let Some(pgn) = pgn {
            self.outbox.after_commit(Action::Pgn(pgn));
        }
        if followed.link_changed {
            self.outbox.soon(Action::Publish(BoardEvent::DeviceChanged {
                board: self.setup.id.clone(),
                link,
            }));
        }
        self.dirty = true;
        if let Some((reason, winner)) = followed.game_end {
            // Art. 6.2a1: checkmate or stalemate on the board ends the game.
            let text = match reason {
                GameEndReason::Checkmate => "MATE",
                GameEndReason::Stalemate => "STALEMATE",
            };
            self.marks.game_end = Some(text.to_owned());
            tracing::info!(board = %self.setup.id, ?reason, ?winner, "the game ended on the electronic board: clock stopped");
            if self.state(now).running.is_some() {
                let _ = self.input(
                    now,
                    wall,
                    t,
                    Input::Pause,
                    StoredEvent::Pause,
                    Caller::DAEMON,
                    None,
                    None,
                );
            }
        }
    }

    // ---------------------------------------------------------------
    // The clock face.

    /// Sends what the displays and LEDs should show now, if it changed;
    /// beeps in the last seconds.
    fn refresh(&mut self, now: Micros) {
        let state = self.state(now);
        for display in &mut self.devices.displays {
            let shown = display.rules.render(&state, &self.marks);
            if display.sent != Some(shown) {
                display.sent = Some(shown);
                self.outbox.immediately(Action::Device {
                    role: display.slot.role,
                    command: DeviceCommand::Display(shown),
                });
            }
        }
        if self.devices.buttons.is_some() {
            let left = match self.setup.white_button {
                ButtonSide::Left => Side::White,
                ButtonSide::Right => Side::Black,
            };
            let leds = Leds {
                left: state.running == Some(left),
                right: state.running == Some(left.other()),
                arbiter: self.marks.arbiter_called,
            };
            if self.devices.leds_sent != Some(leds) {
                self.devices.leds_sent = Some(leds);
                self.outbox.immediately(Action::Device {
                    role: DeviceRole::Buttons,
                    command: DeviceCommand::Leds(leds),
                });
            }
        }
        let beep_last = i64::from(self.setup.display.beep_last_seconds);
        if beep_last > 0 {
            let second = state
                .running
                .and_then(|side| state.side(side).remaining)
                .map(|r| (r.max(0) + SECOND - 1) / SECOND);
            if second != self.last_beep_second {
                self.last_beep_second = second;
                if second.is_some_and(|s| s > 0 && s <= beep_last) {
                    self.beep(80, 1);
                }
            }
        }
    }

    /// The next instant a last-seconds beep is due, if any.
    fn next_beep(&self, state: &ClockState) -> Option<Micros> {
        let beep_last = i64::from(self.setup.display.beep_last_seconds);
        if beep_last == 0 {
            return None;
        }
        let side = state.running?;
        let remaining = state.side(side).remaining?;
        if remaining <= 0 {
            return None;
        }
        let second = (remaining + SECOND - 1) / SECOND;
        let boundary = (second - 1) * SECOND;
        (second - 1 <= beep_last).then(|| {
            state
                .t
                .saturating_add(remaining - boundary)
                .saturating_add(self.epoch)
        })
    }

    fn beep(&mut self, duration_ms: u16, count: u8) {
        let roles: Vec<DeviceRole> = self
            .devices
            .buttons
            .iter()
            .chain(self.devices.displays.iter().map(|d| &d.slot))
            .filter(|s| s.connected && s.caps.buzzer)
            .map(|s| s.role)
            .collect();
        for role in roles {
            self.outbox.immediately(Action::Device {
                role,
                command: DeviceCommand::Beep { duration_ms, count },
            });
        }
    }

    // ---------------------------------------------------------------
    // Reload.

    fn reconfigure(&mut self, now: Micros, wall: i64, setup: BoardSetup, spec: GameSpec) {
        if setup.buttons != self.setup.buttons
            || setup.displays != self.setup.displays
            || setup.eboard != self.setup.eboard
        {
            tracing::warn!(board = %self.setup.id, "changed devices need a daemon restart");
        }
        let devices = (
            self.setup.buttons.clone(),
            self.setup.displays.clone(),
            self.setup.eboard.clone(),
        );
        self.setup = BoardSetup {
            buttons: devices.0,
            displays: devices.1,
            eboard: devices.2,
            ..setup
        };
        self.devices
            .reconfigure(&self.setup.display, self.setup.white_button);
        if self.in_progress(now) {
            tracing::info!(board = %self.setup.id, "config reload: the game in progress keeps its control");
        } else if !self.state(now).started && spec.text != self.spec.text {
            self.replace_game(now, wall, spec, None);
        }
        self.dirty = true;
    }
}

/// An arbiter's correction from a command's values, bounded by what a game
/// can have.
fn adjustment(
    side: Side,
    remaining_ms: Option<i64>,
    moves: Option<u32>,
    stage: Option<u32>,
) -> Result<Adjustment, ControlError> {
    let remaining = match remaining_ms {
        None => None,
        Some(ms) if ms < 0 => {
            return Err(ControlError::InvalidArgument(
                "remaining time must not be negative".into(),
            ))
        }
        Some(ms) if ms > MAX_TIME / MS => {
            return Err(ControlError::InvalidArgument(format!(
                "a remaining time of {ms} ms is more than a game can have (at most {} h)",
                MAX_TIME / (3_600 * SECOND)
            )))
        }
        Some(ms) => Some(ms * MS),
    };
    if remaining.is_none() && moves.is_none() && stage.is_none() {
        return Err(ControlError::InvalidArgument(
            "nothing to adjust: give the remaining time, the moves or the stage".into(),
        ));
    }
    Ok(Adjustment {
        side,
        remaining,
        moves,
        stage,
    })
}
