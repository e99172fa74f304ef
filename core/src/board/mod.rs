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
//! * An event is never ahead of its state: the board events an input
//!   raises, and a command's reply, go out after the readers' view taken
//!   at the end of that input, so whoever hears one and then reads the
//!   board sees what it announces, however many records the input wrote
//!   and however the store commits them.
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

mod buttons;
mod commands;
pub mod devices;
mod eboard;
mod face;
pub mod follow;
pub mod game;
mod inputs;
mod outbox;
pub mod record;
mod restore;
#[cfg(test)]
mod tests;
mod time;

pub use time::WALL_SLACK;

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
    BoardModel, Correction, DeviceOriginView, FlagFall, GameHeader, HistoryRow, IgnoredReason,
    RestartInfo, ScheduledStart,
};

use self::devices::{Devices, Verdict};
use self::follow::EboardLink;
use self::game::Game;
use self::outbox::Outbox;
use crate::eboard::{Follower, FollowerConfig};

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
    pub displays: Vec<DisplaySetup>,
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
    /// The PGN tags of the board's games from the configuration (`Event`,
    /// `Site`, `Round`, `White`, `Black`).
    pub pgn_tags: std::collections::BTreeMap<String, String>,
    /// A notice about the saved state for the displays' text line
    /// (`STATE DAMAGED`, `NOT SAVED`), when there is one.
    pub state_notice: Option<String>,
}

/// A configured display unit and the side it shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DisplaySetup {
    /// Path or `serial:...` from the config.
    pub name: String,
    pub side: crate::display::DisplaySide,
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
    /// PGN tags of the current game (an empty value gives a tag back to its
    /// configured default).
    SetTags(Vec<(String, String)>),
    /// The arbiter's result; `None` withdraws it.
    SetResult {
        result: Option<crate::eboard::GameResult>,
        termination: Option<crate::eboard::Termination>,
    },
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
    /// Adds `delta_ms` to the side's remaining time at the instant of the
    /// command (negative: takes it away): a penalty or a bonus.
    AdjustBy {
        side: Side,
        delta_ms: i64,
    },
    /// Takes back the arbiter's last press (one made with a command), when
    /// no press came after it.
    UndoPress,
    /// Cancels the scheduled start.
    CancelStart,
    /// Acknowledges the standing arbiter call (Art. 6.12b): recorded with
    /// who acknowledged it; the call stays until a resume answers it.
    AckCall,
    /// A note for the record.
    Note(String),
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
    /// `seq`. `ok` also when the store keeps the records to save them later
    /// (a full disk: it says so in the state's health): the game goes on,
    /// its presses acknowledged, rather than stop at a full disk.
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
    /// An earlier row of the history, changed by a re-run.
    ReviseHistory(Box<crate::views::RowRevision>),
    /// A new game replaced the board's game: readers start a new history.
    NewHistory(Box<GameHeader>),
    /// For the board's electronic board task.
    Eboard(EboardCommand),
    /// The live PGN changed (readers; the broadcast file when configured):
    /// the game to render, which the shell renders away from the timing
    /// thread ([`crate::eboard::PgnGame::render`]).
    Pgn(Box<crate::eboard::PgnGame>),
    /// Whether a clock of the board runs: the store keeps the game's
    /// "alive" checkpoint (the last instant the daemon is known to have
    /// run, for a restart after a reboot) only while one does.
    Running(bool),
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
    eboard: Option<EboardLink>,
    /// What the board core follows of the game's moves and its PGN (also
    /// without an electronic board: then the clock record).
    follower: Follower,
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
    /// Whether the store was last told that a clock runs (it keeps the
    /// game's "alive" checkpoint only then).
    store_running: bool,
    /// Rows in the game's history so far (the next row's index).
    history_len: u64,
    /// The game instants and sides of the presses made by command (the
    /// arbiter's), which [`BoardCommand::UndoPress`] may take back.
    arbiter_presses: Vec<(Micros, Side)>,
    /// The stages some side has reached (who reached one first).
    stages_reached: Vec<u32>,
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
        let pgn = board.pgn_game();
        board.outbox.immediately(Action::Pgn(pgn));
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
        let eboard = setup.eboard.as_deref().map(EboardLink::new);
        let follower = Follower::new(
            FollowerConfig::default(),
            setup.eboard.is_some(),
            setup.pgn_tags.clone(),
            &spec.control,
        );
        let header = GameHeader {
            board: setup.id.clone(),
            control: spec.text.clone(),
            settings: spec.settings,
            created_wall_us: wall,
            caller_uid,
            game: None,
            control_prose: Some(crate::views::match_prose(&spec.control)),
            tenths_below_ms: Some(setup.display.tenths_below_ms),
        };
        Board {
            marks: Marks {
                buttons_lost: setup.buttons.is_some(),
                state_notice: setup.state_notice.clone(),
                ..Marks::default()
            },
            game: Game::new(spec.control.clone(), spec.settings),
            spec,
            epoch,
            started_at: None,
            scheduled: None,
            devices,
            eboard,
            follower,
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
            store_running: false,
            history_len: 0,
            arbiter_presses: Vec::new(),
            stages_reached: Vec::new(),
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
            eboard: self.eboard.as_ref().map(|e| e.view(&self.follower)),
            default_time_ms: self.setup.default_time_ms,
            flag_falls: self.flag_falls.clone(),
            restart: self.restart.clone(),
            unplaced_presses: self.unplaced,
            settings: self.spec.settings,
            result: self
                .follower
                .result()
                .map(|(result, termination)| crate::views::ResultView {
                    result: result.pgn().to_owned(),
                    termination: termination.words().to_owned(),
                }),
            control_prose: crate::views::match_prose(&self.spec.control),
            tenths_below_ms: self.setup.display.tenths_below_ms,
            players: crate::views::Players::from_tags(self.follower.tags()),
        }
    }

    /// Whether actions wait for a commit.
    pub fn waiting(&self) -> bool {
        self.outbox.waiting()
    }

    /// The board's PGN for broadcast (confirmed moves; without an
    /// electronic board, the clock record).
    pub fn pgn(&self) -> String {
        self.follower.render()
    }

    /// [`Board::pgn`] before it is rendered: what [`Action::Pgn`] carries.
    pub fn pgn_game(&self) -> Box<crate::eboard::PgnGame> {
        Box::new(self.follower.pgn(false))
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
        let follower = self.follower.next_deadline();
        let countdown = self.next_countdown_change(self.last_now);
        [engine, displays, beep, start, follower, countdown]
            .into_iter()
            .flatten()
            .min()
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
        if self.scheduled.as_ref().is_some_and(|s| s.start.at <= now) {
            // A start scheduled for an instant already reached (`--at
            // +0s`) starts now, with the command that set it.
            self.process_due(now, wall);
        }
        self.follow_actions(now, wall, &Caller::DAEMON);
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
        let running = self.state(self.last_now).running.is_some();
        if running != self.store_running {
            self.store_running = running;
            self.outbox.immediately(Action::Running(running));
        }
        self.refresh(self.last_now);
        // An event, and a command's reply, always go out behind a view taken
        // after they were raised (see `Outbox::publish`, `Outbox::reply`):
        // the view first, then the events, then the reply.
        if self.dirty || self.outbox.has_events() {
            self.dirty = false;
            let model = self.model(now);
            self.outbox.soon(Action::View(Box::new(model)));
        }
        self.outbox.after_view();
        self.outbox.take()
    }

    fn committed(&mut self, seq: u64, ok: bool) {
        if !ok {
            tracing::error!(board = %self.setup.id, seq, "a record could not be saved");
        }
        let mut released = self.outbox.committed(seq, ok);
        for (serial, event) in released.acked {
            self.devices.acked(&serial, event);
        }
        if let Some(at) = released.pgn_at {
            let at = at.min(released.actions.len());
            released.actions.insert(at, Action::Pgn(self.pgn_game()));
        }
        for action in released.actions {
            self.outbox.immediately(action);
        }
    }
}
