//! The timing thread: the one owner of every board's [`Engine`].
//!
//! The thread runs a current-thread tokio runtime that hosts, besides this
//! loop, every device link (the button and display units' ports and their
//! sessions). So a press travels its whole way on one thread: the button
//! unit's port becomes readable, its link decodes the frame, this loop
//! accounts the press, and the display link writes the new face, with no
//! thread to wake in between (the latency floor is then the PTY or USB
//! round trip itself). The loop waits on its inputs (control requests,
//! device events, electronic-board events), on the store thread's ACKs and
//! on an absolute `timerfd` ([`DeadlineTimer`]) armed for exactly the next
//! deadline: an engine deadline (a flag, a stage, a byo-yomi period), a
//! display change, a scheduled start. It never blocks on a commit: the store
//! thread commits and reports; SQLite and D-Bus live on other threads.
//!
//! Presses from devices are accounted at the device's own timestamp (mapped
//! to CLOCK_MONOTONIC by the device session), not at their arrival. Because a
//! press frame may arrive late, the engine is asked to process the passing
//! of time ([`Engine::advance`]) only [`LATE_GRACE`] after a deadline: the
//! displays still show the flag at its exact instant (rendered from
//! [`Engine::state`], which changes nothing), and a press that happened
//! before the flag but arrived up to [`LATE_GRACE`] late still counts.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};

use chessclock_protocol::{Button, Capabilities, DisplayState, Hello, Leds};
use serde_json::{json, Value};
use tokio::sync::{mpsc as tokio_mpsc, oneshot};

use super::deadline::DeadlineTimer;
use super::store::{
    DeviceOrigin, EventRow, Job, PendingReply, Record, StoreMsg, StoredEvent, StoredGame,
};
use crate::clock::{monotonic_now_us, wall_now_us};
use crate::config::{BoardConfig, ButtonSide, Config, DeviceRef, MoveCountSource};
use crate::control::{
    BoardEvent, BoardSnapshot, Caller, Command, ControlError, DeviceLink, Reply, Request,
};
use crate::devices::{DeviceCommand, DeviceEvent, DeviceKey, DeviceRole};
use crate::display::{DisplayRules, Marks};
use crate::eboard::{BoardTracker, EboardCommand, EboardEvent, GameEndReason, PgnTags};
use crate::engine::report::StateReport;
use crate::engine::{
    Adjustment, ClockState, Engine, EngineError, Ignored, Input, MatchControl, Micros, Notice,
    Settings, Side, MS, SECOND,
};

/// How long after a deadline the engine is advanced (see the module docs).
pub const LATE_GRACE: Micros = 100 * MS;
/// Longest wait without a wake-up (the watchdog heartbeat).
const MAX_WAIT: Micros = 500 * MS;
/// Remembered device events per board (duplicates after a crash are acked,
/// not applied).
const SEEN_EVENTS: usize = 512;

/// Messages for the timing thread.
#[derive(Debug)]
pub enum TimingMsg {
    Request(Request),
    /// From the electronic board of `board`.
    Eboard {
        board: String,
        event: EboardEvent,
    },
    /// SIGHUP: a new config for boards without a game in progress.
    Reload(Box<Config>),
    /// A device node appeared or went away (udev via D-Bus `AddDevice`).
    Hotplug {
        path: std::path::PathBuf,
        added: bool,
    },
    Shutdown,
}

/// What the timing thread's event loop listens to and drives besides its
/// engines: its inputs, the devices' events, the device commands queued for
/// the devices (by the loop itself and by the store thread's ACKs), and the
/// devices themselves.
pub struct TimingIo {
    pub inputs: tokio_mpsc::UnboundedReceiver<TimingMsg>,
    pub device_events: tokio_mpsc::UnboundedReceiver<DeviceEvent>,
    pub device_out: tokio_mpsc::UnboundedReceiver<(DeviceKey, DeviceCommand)>,
    pub devices: super::DeviceDriver,
}

impl TimingIo {
    /// Hands queued device commands to the device links at once (same
    /// thread: no wake-up in between).
    fn forward_device_commands(&mut self) {
        while let Ok((key, command)) = self.device_out.try_recv() {
            self.devices.send(&key, command);
        }
    }
}

/// Turns a control text into a match control and engine settings.
pub type ControlResolver = fn(&Config, &str) -> Result<(MatchControl, Settings), String>;

/// One row of a board's history (what `History` shows).
#[derive(Clone, Debug)]
struct LogEntry {
    row: EventRow,
    outcome: Vec<String>,
    white_used: Micros,
    black_used: Micros,
    white_remaining: Option<Micros>,
    black_remaining: Option<Micros>,
}

#[derive(Clone, Debug)]
struct Slot {
    key: DeviceKey,
    name: String,
    connected: bool,
    serial: Option<String>,
    boot_id: u32,
    caps: Capabilities,
    errors: u64,
}

impl Slot {
    fn new(board: &str, role: DeviceRole, device: &DeviceRef) -> Slot {
        Slot {
            key: DeviceKey {
                board: board.to_owned(),
                role,
            },
            name: String::from(device.clone()),
            connected: false,
            serial: None,
            boot_id: 0,
            caps: Capabilities::default(),
            errors: 0,
        }
    }

    fn link(&self) -> DeviceLink {
        DeviceLink {
            role: match self.key.role {
                DeviceRole::Buttons => "buttons".into(),
                DeviceRole::Display(_) => "display".into(),
            },
            name: self.name.clone(),
            connected: self.connected,
            serial: self.serial.clone(),
        }
    }
}

struct DisplaySlot {
    slot: Slot,
    rules: DisplayRules,
    sent: Option<DisplayState>,
}

struct Board {
    config: BoardConfig,
    control_text: String,
    engine: Engine,
    /// Monotonic µs of the game's instant 0.
    epoch: Micros,
    /// The last instant given to the engine (input or advance).
    floor: Micros,
    started_at: Option<Micros>,
    scheduled_start: Option<(Micros, Caller)>,
    marks: Marks,
    log: Vec<LogEntry>,
    buttons: Option<Slot>,
    displays: Vec<DisplaySlot>,
    leds_sent: Option<Leds>,
    seen: VecDeque<(String, u32, u16)>,
    last_beep_second: Option<Micros>,
    game_created_wall: i64,
    game_caller: Option<u32>,
    /// The electronic board, when one is configured.
    eboard: Option<EboardState>,
}

/// What the runtime follows of a board's DGT board.
struct EboardState {
    link: DeviceLink,
    tracker: BoardTracker,
    /// Art. 6.4 / 6.9 at the last flag, as JSON.
    flag_report: Option<Value>,
}

impl EboardState {
    fn new(device: &DeviceRef, engine: &Engine) -> EboardState {
        let tags = PgnTags {
            time_control: crate::eboard::pgn::time_control_tag(&engine.control().white),
            ..PgnTags::default()
        };
        EboardState {
            link: DeviceLink {
                role: "eboard".into(),
                name: String::from(device.clone()),
                connected: false,
                serial: None,
            },
            tracker: BoardTracker::with_pgn(tags),
            flag_report: None,
        }
    }

    fn json(&self) -> Value {
        json!({
            "name": self.link.name,
            "connected": self.link.connected,
            "serial": self.link.serial,
            "usable": self.tracker.usable(),
            "ply": self.tracker.ply(),
            "fen": self.tracker.fen(),
            "game_end": self.tracker.game_end().map(|(reason, winner)| json!({
                "reason": match reason {
                    GameEndReason::Checkmate => "checkmate",
                    GameEndReason::Stalemate => "stalemate",
                },
                "winner": winner,
            })),
            "flag_report": self.flag_report,
        })
    }
}

/// Outputs of one step, carried out after it.
#[derive(Default)]
struct Outbox {
    jobs: Vec<Job>,
    device: Vec<(DeviceKey, DeviceCommand)>,
    eboard: Vec<(String, EboardCommand)>,
    /// Live PGNs to write once what caused them is committed.
    pgn: Vec<(String, std::path::PathBuf, String)>,
}

/// An input the engine took whose bookkeeping is still to do: its history
/// row, its reports and its store job (with the reply and the ACK). A
/// press's display frame goes out in between.
struct Unrecorded {
    /// The engine instant: as asked until applied, then as applied (never
    /// before the board's last event).
    t: Micros,
    /// The engine's notices; empty until applied.
    notices: Vec<Notice>,
    stored: StoredEvent,
    caller: Caller,
    origin: Option<DeviceOrigin>,
    /// Events to publish with it, before those of its notices.
    events: Vec<BoardEvent>,
    reply: Option<oneshot::Sender<Result<Reply, ControlError>>>,
    ack: Option<(DeviceKey, u16)>,
}

/// A press applied to the engine of the board at `index`, not yet recorded.
struct PendingPress {
    index: usize,
    applied: Unrecorded,
}

/// The timing thread's state.
pub struct Timing {
    config: Config,
    resolve: ControlResolver,
    boards: Vec<Board>,
    store: mpsc::Sender<StoreMsg>,
    device_out: tokio_mpsc::UnboundedSender<(DeviceKey, DeviceCommand)>,
    eboard_out: tokio_mpsc::UnboundedSender<(String, EboardCommand)>,
    heartbeat: Arc<AtomicU64>,
    lateness: super::realtime::Lateness,
    /// Jobs for the store thread, sent after the device links had their
    /// turn: waking the store thread is not on a press's way to the display.
    store_jobs: Vec<Job>,
}

fn engine_error(error: EngineError) -> ControlError {
    match error {
        EngineError::InvalidAdjustment(message) => ControlError::InvalidArgument(message),
        other => ControlError::InvalidState(other.to_string()),
    }
}

fn ignored_message(input: &Input, reason: Ignored) -> String {
    match reason {
        Ignored::NotStarted => {
            "the game has not started yet: start it first (chessclockctl start)".into()
        }
        Ignored::AlreadyStarted => "the game has already started".into(),
        Ignored::Paused => "the clock is paused: resume it first (chessclockctl resume)".into(),
        Ignored::NotPaused => "the clock is not paused".into(),
        Ignored::NotRunningSide => match input {
            Input::Press(side) => {
                format!("{side}'s clock is not running: only the side to move can press")
            }
            _ => "that side's clock is not running".into(),
        },
        Ignored::Frozen => {
            "the clock stopped after a flag fell: adjust the time or start a new game".into()
        }
    }
}

fn stored_input(event: &StoredEvent) -> Option<Input> {
    match *event {
        StoredEvent::Start => Some(Input::Start),
        StoredEvent::Press { side } => Some(Input::Press(side)),
        StoredEvent::Pause => Some(Input::Pause),
        StoredEvent::Resume => Some(Input::Resume),
        StoredEvent::Adjust {
            side,
            remaining_us,
            moves,
            stage,
            ..
        } => Some(Input::Adjust(Adjustment {
            side,
            remaining: remaining_us,
            moves,
            stage,
        })),
        StoredEvent::StartAt { .. }
        | StoredEvent::Restart { .. }
        | StoredEvent::BoardMove { .. }
        | StoredEvent::BoardTakeBack { .. } => None,
    }
}

/// The detector event a stored board move stands for (to rebuild the
/// tracker after a restart).
fn board_event_of(event: &StoredEvent, at: Micros) -> Option<crate::eboard::BoardEvent> {
    match event {
        StoredEvent::BoardMove {
            ply,
            side,
            side_moves,
            san,
            uci,
            fen_after,
            confirmed,
        } => Some(crate::eboard::BoardEvent::MoveDetected(
            crate::eboard::DetectedMove {
                ply: *ply,
                side: *side,
                side_moves: *side_moves,
                san: san.clone(),
                uci: uci.clone(),
                fen_after: fen_after.clone(),
                status: if *confirmed {
                    crate::eboard::MoveStatus::Confirmed
                } else {
                    crate::eboard::MoveStatus::Tentative
                },
                at,
            },
        )),
        StoredEvent::BoardTakeBack { to_ply, fen } => Some(crate::eboard::BoardEvent::TakeBack {
            to_ply: *to_ply,
            fen: fen.clone(),
            at,
        }),
        _ => None,
    }
}

fn describe(notice: &Notice) -> String {
    match notice {
        Notice::Started => "started".into(),
        Notice::Pressed {
            side,
            move_number,
            used,
        } => format!("{side} completed move {move_number} in {} ms", used / MS),
        Notice::Ignored { reason, .. } => format!("ignored: {reason:?}"),
        Notice::FlagFell {
            side,
            at,
            stage,
            last_stage,
        } => format!(
            "{side}'s flag fell at {} ms in stage {stage}{}",
            at / MS,
            if *last_stage {
                ""
            } else {
                " (not the last stage)"
            }
        ),
        Notice::StageChanged { side, stage, .. } => format!("{side} entered stage {stage}"),
        Notice::Paused => "paused".into(),
        Notice::Resumed => "resumed".into(),
        Notice::Adjusted(adjustment) => format!("adjusted {adjustment:?}"),
        Notice::Frozen { at } => format!("frozen at {} ms", at / MS),
    }
}

fn ms_ceil(us: Micros) -> i64 {
    (us + MS - 1).div_euclid(MS)
}

impl Board {
    fn new(
        config: &Config,
        board: &BoardConfig,
        engine: Engine,
        control: String,
        epoch: Micros,
    ) -> Board {
        let buttons = board
            .buttons
            .as_ref()
            .map(|device| Slot::new(&board.id, DeviceRole::Buttons, device));
        let displays = board
            .displays
            .iter()
            .enumerate()
            .map(|(index, display)| DisplaySlot {
                slot: Slot::new(&board.id, DeviceRole::Display(index), &display.device),
                rules: DisplayRules::for_side(
                    &config.display,
                    &default_display_caps(),
                    board.white_button,
                    display.side,
                ),
                sent: None,
            })
            .collect();
        let eboard = board
            .eboard
            .as_ref()
            .map(|device| EboardState::new(device, &engine));
        Board {
            config: board.clone(),
            control_text: control,
            engine,
            epoch,
            floor: 0,
            started_at: None,
            scheduled_start: None,
            marks: Marks {
                buttons_lost: board.buttons.is_some(),
                ..Marks::default()
            },
            log: Vec::new(),
            buttons,
            displays,
            leds_sent: None,
            seen: VecDeque::new(),
            last_beep_second: None,
            game_created_wall: wall_now_us(),
            game_caller: None,
            eboard,
        }
    }

    fn id(&self) -> &str {
        &self.config.id
    }

    fn t(&self, mono: Micros) -> Micros {
        (mono - self.epoch).max(self.floor)
    }

    fn state(&self, mono: Micros) -> ClockState {
        self.engine.state(self.t(mono))
    }

    fn side_of_button(&self, button: Button) -> Option<Side> {
        let left = match self.config.white_button {
            ButtonSide::Left => Side::White,
            ButtonSide::Right => Side::Black,
        };
        match button {
            Button::Left => Some(left),
            Button::Right => Some(left.other()),
            _ => None,
        }
    }

    fn in_progress(&self, mono: Micros) -> bool {
        let state = self.state(mono);
        state.started && !state.frozen && state.flags.is_empty()
    }

    fn links(&self) -> Vec<DeviceLink> {
        self.buttons
            .iter()
            .map(Slot::link)
            .chain(self.displays.iter().map(|d| d.slot.link()))
            .chain(self.eboard.iter().map(|e| e.link.clone()))
            .collect()
    }

    fn snapshot(&self, mono: Micros) -> BoardSnapshot {
        let state = self.state(mono);
        BoardSnapshot {
            board: self.id().to_owned(),
            control: self.control_text.clone(),
            snapshot_ms: mono / MS,
            started: state.started,
            running: state.running,
            paused: state.paused,
            white_remaining_ms: state.white.remaining.map_or(0, ms_ceil),
            black_remaining_ms: state.black.remaining.map_or(0, ms_ceil),
            white_moves: state.white.moves,
            black_moves: state.black.moves,
            white_stage: state.white.stage,
            black_stage: state.black.stage,
            flags: state.flags.clone(),
            devices: self.links(),
            arbiter_called: self.marks.arbiter_called,
        }
    }

    /// The state in the replay output schema (`t` and `flag_ms` in the
    /// daemon's monotonic milliseconds), plus the daemon's additions.
    fn state_json(&self, mono: Micros, default_time_ms: u64) -> String {
        let t = self.t(mono);
        let state = self.engine.state(t);
        let since_start = self.started_at.map(|start| t - start);
        let default_time = i64::try_from(default_time_ms).unwrap_or(i64::MAX / MS) * MS;
        let overrun: Vec<Side> = match since_start {
            Some(since) if default_time > 0 && since > default_time => Side::BOTH
                .into_iter()
                .filter(|&side| {
                    state.side(side).moves == 0 && (side == Side::White || state.white.moves > 0)
                })
                .collect(),
            _ => Vec::new(),
        };
        let devices: Vec<Value> = self
            .buttons
            .iter()
            .chain(self.displays.iter().map(|d| &d.slot))
            .map(|slot| {
                let link = slot.link();
                json!({
                    "role": link.role, "name": link.name, "connected": link.connected,
                    "serial": link.serial, "errors": slot.errors,
                })
            })
            .collect();
        // The replay schema on the daemon's monotonic time base.
        let mut shifted = state.clone();
        shifted.t += self.epoch;
        for side in [&mut shifted.white, &mut shifted.black] {
            side.flag_at = side.flag_at.map(|at| at + self.epoch);
        }
        let mut report = serde_json::to_value(StateReport::new(&shifted)).unwrap_or(Value::Null);
        for side in Side::BOTH {
            let own = state.side(side);
            if let Some(Value::Object(map)) = report.get_mut(side.as_str()) {
                map.insert("delay_left_ms".into(), json!(own.delay_left.map(ms_ceil)));
                map.insert("periods_left".into(), json!(own.periods_left));
                map.insert("in_overtime".into(), json!(own.in_overtime));
            }
        }
        let extra = json!({
            "board": self.id(),
            "control": self.control_text,
            "started": state.started,
            "frozen": state.frozen,
            "to_move": state.to_move,
            "game_ms": t.div_euclid(MS),
            "game_epoch_us": self.epoch,
            "time_since_start_ms": since_start.map(|s| s.div_euclid(MS)),
            "default_time_ms": default_time_ms,
            "default_time_overrun": overrun,
            "down_time_ms": self.marks.down_time.map(ms_ceil),
            "arbiter_called": self.marks.arbiter_called,
            "scheduled_start_ms": self.scheduled_start.map(|(at, _)| at.div_euclid(MS)),
            "devices": devices,
            "eboard": self.eboard.as_ref().map(EboardState::json),
        });
        if let (Value::Object(map), Value::Object(extra)) = (&mut report, extra) {
            map.extend(extra);
        }
        report.to_string()
    }

    fn history_json(&self) -> String {
        let events: Vec<Value> =
            self.log
                .iter()
                .map(|entry| {
                    let mut event = serde_json::to_value(&entry.row.event).unwrap_or(Value::Null);
                    if let Value::Object(map) = &mut event {
                        map.insert("t_ms".into(), json!(entry.row.offset_us.div_euclid(MS)));
                        map.insert("t_us".into(), json!(entry.row.offset_us));
                        map.insert("wall_us".into(), json!(entry.row.wall_us));
                        map.insert("caller_uid".into(), json!(entry.row.caller_uid));
                        map.insert(
                        "device".into(),
                        entry.row.origin.as_ref().map_or(Value::Null, |o| {
                            json!({"serial": o.serial, "event": o.event, "late_us": o.late_us})
                        }),
                    );
                        map.insert("outcome".into(), json!(entry.outcome));
                        map.insert(
                            "white_used_ms".into(),
                            json!(entry.white_used.div_euclid(MS)),
                        );
                        map.insert(
                            "black_used_ms".into(),
                            json!(entry.black_used.div_euclid(MS)),
                        );
                        map.insert(
                            "white_remaining_ms".into(),
                            json!(entry.white_remaining.map(ms_ceil)),
                        );
                        map.insert(
                            "black_remaining_ms".into(),
                            json!(entry.black_remaining.map(ms_ceil)),
                        );
                    }
                    event
                })
                .collect();
        json!({
            "board": self.id(),
            "control": self.control_text,
            "settings": self.engine.settings(),
            "created_wall_us": self.game_created_wall,
            "caller_uid": self.game_caller,
            "events": events,
        })
        .to_string()
    }

    fn log_entry(&mut self, row: EventRow, notices: &[Notice]) {
        let state = self.engine.state(row.offset_us.max(self.floor));
        self.log.push(LogEntry {
            row,
            outcome: notices.iter().map(describe).collect(),
            white_used: state.white.used,
            black_used: state.black.used,
            white_remaining: state.white.remaining,
            black_remaining: state.black.remaining,
        });
    }

    fn remember(&mut self, origin: &DeviceOrigin) {
        self.seen
            .push_back((origin.serial.clone(), origin.boot_id, origin.event));
        while self.seen.len() > SEEN_EVENTS {
            self.seen.pop_front();
        }
    }
}

/// Capabilities assumed for a display before its HELLO arrives.
fn default_display_caps() -> Capabilities {
    Capabilities {
        displays: 2,
        digits: 5,
        tenths: true,
        text_chars: 16,
        ..Capabilities::default()
    }
}

impl Timing {
    /// Builds every board: each stored game is replayed into a fresh engine
    /// (and comes back paused, see the store docs); boards without one get a
    /// new game with their configured control.
    pub fn new(
        config: Config,
        resolve: ControlResolver,
        stored: Vec<StoredGame>,
        store: mpsc::Sender<StoreMsg>,
        device_out: tokio_mpsc::UnboundedSender<(DeviceKey, DeviceCommand)>,
        eboard_out: tokio_mpsc::UnboundedSender<(String, EboardCommand)>,
        heartbeat: Arc<AtomicU64>,
    ) -> Timing {
        let mut timing = Timing {
            config,
            resolve,
            boards: Vec::new(),
            store,
            device_out,
            eboard_out,
            heartbeat,
            lateness: super::realtime::Lateness::default(),
            store_jobs: Vec::new(),
        };
        let mut outbox = Outbox::default();
        let now = monotonic_now_us();
        let boards = timing.config.boards.clone();
        for board_config in &boards {
            let restored = stored
                .iter()
                .find(|game| game.board == board_config.id)
                .and_then(|game| timing.restore(board_config, game, now, &mut outbox));
            let board = match restored {
                Some(board) => board,
                None => {
                    let (board, job) = timing.fresh_board(board_config, now, Caller { uid: None });
                    outbox.jobs.push(job);
                    board
                }
            };
            timing.boards.push(board);
        }
        for index in 0..timing.boards.len() {
            timing.refresh(index, now, &mut outbox);
        }
        timing.flush(outbox);
        timing
    }

    /// The displays' notice about the saved state (the store's health, e.g.
    /// `STATE DAMAGED`), on every board until its next new game.
    pub fn set_state_notice(&mut self, notice: Option<String>) {
        let mut outbox = Outbox::default();
        let now = monotonic_now_us();
        for index in 0..self.boards.len() {
            self.boards[index].marks.state_notice = notice.clone();
            self.refresh(index, now, &mut outbox);
        }
        self.flush(outbox);
    }

    fn make_engine(&self, control: &str) -> Result<Engine, String> {
        let (control, settings) = (self.resolve)(&self.config, control)?;
        Ok(Engine::new(control, settings))
    }

    /// A board with a new game of its configured control (fallback: the
    /// built-in `fide-rapid`... or 15+10 if even that fails).
    fn fresh_board(&self, config: &BoardConfig, now: Micros, caller: Caller) -> (Board, Job) {
        let (engine, control) = match self.make_engine(&config.control) {
            Ok(engine) => (engine, config.control.clone()),
            Err(error) => {
                tracing::error!(board = %config.id, control = %config.control, %error,
                    "the board's configured control is invalid; using 900+10");
                let fallback = "900+10".to_owned();
                match self.make_engine(&fallback) {
                    Ok(engine) => (engine, fallback),
                    Err(_) => (
                        Engine::new(
                            MatchControl::same(crate::timecontrol::TimeControl::Upcount),
                            Settings::default(),
                        ),
                        "-".to_owned(),
                    ),
                }
            }
        };
        let settings = engine.settings();
        let mut board = Board::new(&self.config, config, engine, control.clone(), now);
        board.game_caller = caller.uid;
        let job = Job {
            board: config.id.clone(),
            record: Some(Record::NewGame {
                control,
                settings,
                epoch: now,
                caller_uid: caller.uid,
                wall_us: board.game_created_wall,
            }),
            ..Job::default()
        };
        (board, job)
    }

    fn restore(
        &self,
        config: &BoardConfig,
        game: &StoredGame,
        now: Micros,
        outbox: &mut Outbox,
    ) -> Option<Board> {
        let (control, _) = match (self.resolve)(&self.config, &game.control) {
            Ok(resolved) => resolved,
            Err(error) => {
                tracing::error!(board = %config.id, control = %game.control, %error,
                    "cannot rebuild the stored game (its control no longer resolves); starting a new game, the old one stays in the database");
                return None;
            }
        };
        let mut board = Board::new(
            &self.config,
            config,
            Engine::new(control, game.settings),
            game.control.clone(),
            0,
        );
        board.game_created_wall = game.created_wall_us;
        board.game_caller = game.caller_uid;
        let mut last_start_at = None;
        let mut board_moves: Vec<String> = Vec::new();
        for row in &game.events {
            let mut notices = Vec::new();
            if let Some(input) = stored_input(&row.event) {
                let at = row.offset_us.max(board.floor);
                match board.engine.apply(at, input) {
                    Ok(applied) => {
                        board.floor = at;
                        notices = applied;
                    }
                    Err(error) => {
                        tracing::error!(board = %config.id, %error, offset_us = row.offset_us,
                        "a stored event was refused while rebuilding the game")
                    }
                }
            }
            match &row.event {
                StoredEvent::StartAt { unix_time_us } => last_start_at = Some(*unix_time_us),
                StoredEvent::Restart { down_us } => board.marks.down_time = Some(*down_us),
                // A pause from a device is the arbiter button (Art. 6.12b).
                StoredEvent::Pause if row.origin.is_some() => board.marks.arbiter_called = true,
                StoredEvent::BoardMove { .. } | StoredEvent::BoardTakeBack { .. } => {
                    if let (Some(eboard), Some(event)) = (
                        board.eboard.as_mut(),
                        board_event_of(&row.event, row.offset_us),
                    ) {
                        eboard.tracker.apply_board(&event);
                        match &row.event {
                            StoredEvent::BoardMove { ply, uci, .. } => {
                                board_moves.truncate(ply.saturating_sub(1) as usize);
                                board_moves.push(uci.clone());
                            }
                            StoredEvent::BoardTakeBack { to_ply, .. } => {
                                board_moves.truncate(*to_ply as usize)
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
            if let Some(origin) = &row.origin {
                board.remember(origin);
            }
            follow_replayed_notices(&mut board, &notices);
            apply_marks(&mut board, &notices);
            board.log_entry(row.clone(), &notices);
        }
        let alive = game.alive_offset_us.max(board.floor);
        board.epoch = now - alive;
        if board.eboard.is_some() && !board_moves.is_empty() {
            tracing::info!(board = %config.id, plies = board_moves.len(), "the electronic board resumes the stored game");
            outbox.eboard.push((
                config.id.clone(),
                EboardCommand::Resume { moves: board_moves },
            ));
        }
        let down_us = (wall_now_us() - game.alive_wall_us).max(0);
        outbox.jobs.push(Job {
            board: config.id.clone(),
            record: Some(Record::Epoch {
                game: game.id,
                epoch: board.epoch,
            }),
            ..Job::default()
        });
        let state = board.engine.state(alive);
        tracing::info!(board = %config.id, events = game.events.len(), down_ms = down_us / MS,
            running = ?state.running, "game rebuilt from the state database");
        if state.started {
            let wall = wall_now_us();
            let restart = EventRow {
                offset_us: alive,
                wall_us: wall,
                event: StoredEvent::Restart { down_us },
                caller_uid: None,
                origin: None,
            };
            board.log_entry(restart.clone(), &[]);
            outbox.jobs.push(Job {
                board: config.id.clone(),
                record: Some(Record::Event(restart)),
                ..Job::default()
            });
            if state.running.is_some() {
                board.marks.down_time = Some(down_us);
            }
            if state.running.is_some() && !self.config.daemon.resume_after_restart {
                let mut events = Vec::new();
                Self::apply_input(
                    &self.config,
                    &mut board,
                    alive,
                    Input::Pause,
                    StoredEvent::Pause,
                    Caller { uid: None },
                    None,
                    &mut events,
                    outbox,
                    None,
                    None,
                );
                tracing::warn!(board = %config.id, down_ms = down_us / MS,
                    "the daemon restarted during a game: the clock is PAUSED; the arbiter decides (Art. 6.10a)");
            }
        } else if let Some(unix_time_us) = last_start_at {
            let at = now + (unix_time_us - wall_now_us());
            if at >= now {
                board.scheduled_start = Some((at, Caller { uid: None }));
                tracing::info!(board = %config.id, unix_time_us, "scheduled start restored");
            }
        }
        // Tells the store whether this game's clock runs (alive checkpoints).
        outbox.jobs.push(Job {
            board: config.id.clone(),
            events: vec![BoardEvent::StateChanged(board.snapshot(now))],
            ..Job::default()
        });
        Some(board)
    }

    /// The thread's event loop, run on the timing thread's own
    /// current-thread tokio runtime together with the device links. Returns
    /// on [`TimingMsg::Shutdown`] or when every sender is gone, after the
    /// store committed what was queued and the last ACKs were handed to the
    /// devices.
    pub async fn run(mut self, mut io: TimingIo) {
        let mut timer = DeadlineTimer::new();
        // Whether boards may have something due or a face to redraw: not
        // after merely passing an ACK or a hotplug notice to the links.
        let mut boards_touched = true;
        loop {
            self.heartbeat.fetch_add(1, Ordering::Relaxed);
            let now = monotonic_now_us();
            if boards_touched {
                self.process_due(now);
            }
            boards_touched = true;
            io.forward_device_commands();
            self.send_store_jobs();
            let deadline = self.next_wake();
            let until = deadline.map_or(now + MAX_WAIT, |d| d.min(now + MAX_WAIT));
            let timed = deadline == Some(until);
            timer.arm(until);
            tokio::select! {
                biased;
                // Device events first: a press that arrived before a request
                // is accounted before the request sees the board.
                Some(event) = io.device_events.recv() => {
                    let now = monotonic_now_us();
                    // Whatever fell due before the event is applied first
                    // (a flag before a late press); usually nothing has.
                    if deadline.is_some_and(|due| due <= now) {
                        self.process_due(now);
                    }
                    let press = self.handle_device(event, now);
                    // A press's display frames go out before anything else
                    // is done, its recording included: the links run as
                    // soon as this yields.
                    io.forward_device_commands();
                    tokio::task::yield_now().await;
                    if let Some(press) = press {
                        self.record_press(press, monotonic_now_us());
                    }
                }
                message = io.inputs.recv() => match message {
                    None | Some(TimingMsg::Shutdown) => break,
                    Some(TimingMsg::Hotplug { path, added }) => {
                        io.devices.hotplug(&path, added);
                        boards_touched = false;
                    }
                    Some(message) => {
                        let now = monotonic_now_us();
                        self.process_due(now);
                        self.handle(message, now);
                        io.forward_device_commands();
                        tokio::task::yield_now().await;
                    }
                },
                // ACKs from the store thread (and commands queued above).
                Some((key, command)) = io.device_out.recv() => {
                    io.devices.send(&key, command);
                    boards_touched = false;
                }
                _ = timer.expired() => {
                    if timed {
                        self.lateness.record(monotonic_now_us() - until);
                    }
                }
            }
        }
        tracing::info!(
            wakeups = self.lateness.count(),
            p50_us = self.lateness.percentile_us(50),
            p99_us = self.lateness.percentile_us(99),
            max_us = self.lateness.max_us(),
            "timing thread done; lateness of its deadline wake-ups"
        );
        self.send_store_jobs();
        let Timing {
            store, device_out, ..
        } = self;
        let _ = store.send(StoreMsg::Shutdown);
        drop((store, device_out));
        // The store thread commits what is queued, sends the ACKs of those
        // events and exits, closing the channel.
        while let Some((key, command)) = io.device_out.recv().await {
            io.devices.send(&key, command);
        }
        io.devices.close().await;
    }

    /// The earliest monotonic instant something is due.
    fn next_wake(&self) -> Option<Micros> {
        let now = monotonic_now_us();
        self.boards
            .iter()
            .flat_map(|board| {
                let state = board.state(now);
                // A deadline at or before the last instant already given to
                // the engine was processed; never spin on one.
                let engine = board
                    .engine
                    .next_deadline()
                    .filter(|&d| d > board.floor)
                    .map(|d| d + board.epoch + LATE_GRACE);
                // Hourglass: the waiting side's time grows and shows too.
                let rising = state.running.map(|side| side.other()).filter(|&other| {
                    matches!(
                        board.engine.control().for_side(other),
                        crate::timecontrol::TimeControl::Hourglass { .. }
                    )
                });
                let displays = board
                    .displays
                    .iter()
                    .flat_map(|d| {
                        [
                            d.rules.next_change(&state),
                            rising.and_then(|other| {
                                d.rules.next_change_rising(state.side(other), state.t)
                            }),
                        ]
                    })
                    .flatten()
                    .map(|t| t + board.epoch)
                    .min();
                // The deadline itself too (not only after the grace): what
                // it changes (a byo-yomi period, a flag) shows at once.
                let exact = board
                    .engine
                    .next_deadline()
                    .map(|d| d + board.epoch)
                    .filter(|&d| d > now);
                let start = board.scheduled_start.map(|(at, _)| at);
                [engine, exact, displays, start]
            })
            .flatten()
            .min()
    }

    fn process_due(&mut self, now: Micros) {
        let mut outbox = Outbox::default();
        for index in 0..self.boards.len() {
            let board = &mut self.boards[index];
            if let Some((at, caller)) = board.scheduled_start {
                if at <= now {
                    board.scheduled_start = None;
                    let t = (at - board.epoch).max(board.floor);
                    let mut events = Vec::new();
                    Self::apply_input(
                        &self.config,
                        board,
                        t,
                        Input::Start,
                        StoredEvent::Start,
                        caller,
                        None,
                        &mut events,
                        &mut outbox,
                        None,
                        None,
                    );
                }
            }
            let board = &mut self.boards[index];
            let t = board.t(now);
            if let Some(deadline) = board.engine.next_deadline() {
                if deadline + LATE_GRACE <= t {
                    let to = (t - LATE_GRACE).max(board.floor);
                    let notices = board.engine.advance(to);
                    board.floor = to;
                    if !notices.is_empty() {
                        let mut events = Vec::new();
                        apply_marks(board, &notices);
                        report_notices(&self.config, board, &notices, &mut events, &mut outbox);
                        events.push(BoardEvent::StateChanged(board.snapshot(now)));
                        outbox.jobs.push(Job {
                            board: board.id().to_owned(),
                            events,
                            ..Job::default()
                        });
                    }
                }
            }
            self.refresh(index, now, &mut outbox);
        }
        self.flush(outbox);
    }

    /// Sends what the displays and LEDs should show now, if it changed.
    fn refresh(&mut self, index: usize, now: Micros, outbox: &mut Outbox) {
        let beep_last = self.config.display.beep_last_seconds;
        let board = &mut self.boards[index];
        let state = board.state(now);
        for display in &mut board.displays {
            // A unit not linked gets its picture when it links, rendered
            // for it (its rules come from its HELLO).
            if !display.slot.connected {
                continue;
            }
            let shown = display.rules.render(&state, &board.marks);
            if display.sent != Some(shown) {
                display.sent = Some(shown);
                outbox
                    .device
                    .push((display.slot.key.clone(), DeviceCommand::Display(shown)));
            }
        }
        if let Some(buttons) = board.buttons.as_ref().filter(|b| b.connected) {
            let left_side = match board.config.white_button {
                ButtonSide::Left => Side::White,
                ButtonSide::Right => Side::Black,
            };
            let leds = Leds {
                left: state.running == Some(left_side),
                right: state.running == Some(left_side.other()),
                arbiter: board.marks.arbiter_called,
            };
            if board.leds_sent != Some(leds) {
                board.leds_sent = Some(leds);
                outbox
                    .device
                    .push((buttons.key.clone(), DeviceCommand::Leds(leds)));
            }
        }
        if beep_last > 0 {
            let second = state
                .running
                .and_then(|side| state.side(side).remaining)
                .map(|r| (r.max(0) + SECOND - 1) / SECOND);
            if second != board.last_beep_second {
                board.last_beep_second = second;
                if let Some(second) = second {
                    if second > 0 && second <= i64::from(beep_last) {
                        beep(board, outbox, 80, 1);
                    }
                }
            }
        }
    }

    fn flush(&mut self, outbox: Outbox) {
        for command in outbox.device {
            let _ = self.device_out.send(command);
        }
        for command in outbox.eboard {
            let _ = self.eboard_out.send(command);
        }
        let pgn_jobs = outbox.pgn.into_iter().map(|(board, dir, text)| Job {
            pgn: Some((dir, format!("{board}.pgn"), text)),
            board,
            ..Job::default()
        });
        self.store_jobs
            .extend(outbox.jobs.into_iter().chain(pgn_jobs));
    }

    /// Hands the queued jobs to the store thread, in order.
    fn send_store_jobs(&mut self) {
        for job in self.store_jobs.drain(..) {
            if self.store.send(StoreMsg::Job(Box::new(job))).is_err() {
                tracing::error!("the store thread is gone: events are not being saved");
            }
        }
    }

    fn handle(&mut self, message: TimingMsg, now: Micros) {
        match message {
            TimingMsg::Request(request) => self.handle_request(request, now),
            TimingMsg::Eboard { board, event } => self.handle_eboard(&board, event, now),
            TimingMsg::Reload(config) => self.reload(*config, now),
            TimingMsg::Hotplug { .. } | TimingMsg::Shutdown => {}
        }
    }

    fn board_index(&self, id: &str) -> Option<usize> {
        self.boards.iter().position(|b| b.id() == id)
    }

    /// Applies one engine input at engine instant `t` and queues its commit
    /// and its reports (reply, ack, events) behind it.
    #[allow(clippy::too_many_arguments)]
    fn apply_input(
        config: &Config,
        board: &mut Board,
        t: Micros,
        input: Input,
        stored: StoredEvent,
        caller: Caller,
        origin: Option<DeviceOrigin>,
        events: &mut Vec<BoardEvent>,
        outbox: &mut Outbox,
        reply: Option<oneshot::Sender<Result<Reply, ControlError>>>,
        ack: Option<(DeviceKey, u16)>,
    ) {
        let unrecorded = Unrecorded {
            t,
            notices: Vec::new(),
            stored,
            caller,
            origin,
            events: std::mem::take(events),
            reply,
            ack,
        };
        if let Some(applied) = Self::apply_to_engine(config, board, input, unrecorded, outbox) {
            Self::record(config, board, applied, outbox);
        }
    }

    /// The first half of [`Self::apply_input`]: the engine takes the input
    /// (and the marks the display shows follow its notices). Returns what is
    /// left to record, or `None` when the engine refused the input (the
    /// refusal is then queued as the reply and the ACK).
    fn apply_to_engine(
        config: &Config,
        board: &mut Board,
        input: Input,
        mut unrecorded: Unrecorded,
        outbox: &mut Outbox,
    ) -> Option<Unrecorded> {
        let t = unrecorded.t.max(board.floor);
        if let Input::Press(side) = input {
            Self::count_from_eboard(config, board, t, side, outbox);
        }
        match board.engine.apply(t, input) {
            Ok(notices) => {
                board.floor = t;
                apply_marks(board, &notices);
                unrecorded.t = t;
                unrecorded.notices = notices;
                Some(unrecorded)
            }
            Err(error) => {
                tracing::warn!(board = %board.id(), %error, ?input, "the engine refused an input");
                outbox.jobs.push(Job {
                    board: board.id().to_owned(),
                    reply: unrecorded.reply.map(|r| (r, Err(engine_error(error)))),
                    ack: unrecorded.ack,
                    ..Job::default()
                });
                None
            }
        }
    }

    /// The second half of [`Self::apply_input`]: the history row, the
    /// reports of the notices, and the store job carrying the reply and the
    /// ACK. Nothing here changes what the displays show, except an
    /// electronic board's verdict after a flag.
    fn record(config: &Config, board: &mut Board, applied: Unrecorded, outbox: &mut Outbox) {
        let Unrecorded {
            t,
            notices,
            stored,
            caller,
            origin,
            mut events,
            reply,
            ack,
        } = applied;
        if let Some(origin) = &origin {
            board.remember(origin);
        }
        let answer = match notices.iter().find_map(|n| match n {
            Notice::Ignored { input, reason } => Some(ignored_message(input, *reason)),
            _ => None,
        }) {
            Some(message) => Err(ControlError::InvalidState(message)),
            None => Ok(Reply::Done),
        };
        let row = EventRow {
            offset_us: t,
            wall_us: wall_now_us(),
            event: stored,
            caller_uid: caller.uid,
            origin,
        };
        board.log_entry(row.clone(), &notices);
        let mono = t + board.epoch;
        report_notices(config, board, &notices, &mut events, outbox);
        events.push(BoardEvent::StateChanged(board.snapshot(mono)));
        outbox.jobs.push(Job {
            board: board.id().to_owned(),
            record: Some(Record::Event(row)),
            reply: reply.map(|r| (r, answer)),
            ack,
            events,
            pgn: None,
        });
    }

    /// With `move-count = "eboard"`, corrects the engine's move count to
    /// the board's just before a press (recorded like any adjustment), so
    /// stage time is added at the real N-th move even after a forgotten press.
    fn count_from_eboard(
        config: &Config,
        board: &mut Board,
        t: Micros,
        side: Side,
        outbox: &mut Outbox,
    ) {
        if config.engine.move_count != MoveCountSource::Eboard {
            return;
        }
        let Some(eboard) = &board.eboard else {
            return;
        };
        let state = board.engine.state(t);
        if state.running != Some(side) {
            return;
        }
        let Some(adjustment) = eboard
            .tracker
            .adjustment_before_press(side, state.side(side).moves)
        else {
            return;
        };
        tracing::info!(board = %board.id(), %side, engine_moves = state.side(side).moves,
            board_moves = ?adjustment.moves.map(|m| m + 1), "move count taken from the electronic board");
        let mut events = Vec::new();
        Self::apply_input(
            config,
            board,
            t,
            Input::Adjust(adjustment),
            StoredEvent::Adjust {
                side,
                remaining_us: None,
                moves: adjustment.moves,
                stage: None,
                source: Some(super::eboard::InputSource::Eboard),
            },
            Caller { uid: None },
            None,
            &mut events,
            outbox,
            None,
            None,
        );
    }

    fn handle_eboard(&mut self, id: &str, event: EboardEvent, now: Micros) {
        let Some(index) = self.board_index(id) else {
            return;
        };
        let mut outbox = Outbox::default();
        let pgn_dir = self.config.daemon.pgn_dir.clone();
        let board = &mut self.boards[index];
        let t_now = board.t(now);
        let Some(eboard) = board.eboard.as_mut() else {
            return;
        };
        eboard.tracker.apply(&event);
        let mut link_changed = false;
        let mut game_end = None;
        match &event {
            EboardEvent::Connected { path, .. } => {
                eboard.link.connected = true;
                link_changed = true;
                tracing::info!(board = id, device = %path.display(), "electronic board connected");
            }
            EboardEvent::Disconnected { path, reason, .. } => {
                eboard.link.connected = false;
                link_changed = true;
                tracing::warn!(board = id, device = %path.display(), reason, "electronic board disconnected");
            }
            EboardEvent::SerialNumber(serial) => {
                eboard.link.serial = Some(serial.clone());
                link_changed = true;
            }
            EboardEvent::Board(crate::eboard::BoardEvent::GameEnd { reason, winner, .. }) => {
                game_end = Some((*reason, *winner));
            }
            EboardEvent::Board(crate::eboard::BoardEvent::Unrecognised { .. }) => {
                tracing::warn!(board = id, "the electronic board shows a position that fits no legal move: the arbiter should look");
            }
            _ => {}
        }
        let link = eboard.link.clone();
        let board_record = match &event {
            EboardEvent::Board(crate::eboard::BoardEvent::MoveDetected(m)) => {
                Some(StoredEvent::BoardMove {
                    ply: m.ply,
                    side: m.side,
                    side_moves: m.side_moves,
                    san: m.san.clone(),
                    uci: m.uci.clone(),
                    fen_after: m.fen_after.clone(),
                    confirmed: m.status == crate::eboard::MoveStatus::Confirmed,
                })
            }
            EboardEvent::Board(crate::eboard::BoardEvent::TakeBack { to_ply, fen, .. }) => {
                Some(StoredEvent::BoardTakeBack {
                    to_ply: *to_ply,
                    fen: fen.clone(),
                })
            }
            _ => None,
        };
        let pgn = match (&event, &pgn_dir, eboard.tracker.pgn()) {
            (EboardEvent::Board(_), Some(dir), Some(pgn)) => Some((dir.clone(), pgn.render())),
            _ => None,
        };
        if let Some(stored) = board_record {
            let row = EventRow {
                offset_us: t_now,
                wall_us: wall_now_us(),
                event: stored,
                caller_uid: None,
                origin: None,
            };
            board.log_entry(row.clone(), &[]);
            outbox.jobs.push(Job {
                board: id.to_owned(),
                record: Some(Record::Event(row)),
                ..Job::default()
            });
        }
        if let Some((dir, text)) = pgn {
            outbox.pgn.push((id.to_owned(), dir, text));
        }
        let mut events = Vec::new();
        if link_changed {
            events.push(BoardEvent::DeviceChanged {
                board: id.to_owned(),
                link,
            });
        }
        if let Some((reason, winner)) = game_end {
            // Art. 6.2a1: checkmate or stalemate on the board ends the game.
            let text = match reason {
                GameEndReason::Checkmate => "MATE",
                GameEndReason::Stalemate => "STALEMATE",
            };
            board.marks.game_end = Some(text.to_owned());
            tracing::info!(
                board = id,
                ?reason,
                ?winner,
                "the game ended on the electronic board: clock stopped"
            );
            if board.state(now).running.is_some() {
                let t = board.t(now);
                Self::apply_input(
                    &self.config,
                    board,
                    t,
                    Input::Pause,
                    StoredEvent::Pause,
                    Caller { uid: None },
                    None,
                    &mut events,
                    &mut outbox,
                    None,
                    None,
                );
            }
        }
        if !events.is_empty() {
            events.push(BoardEvent::StateChanged(self.boards[index].snapshot(now)));
            outbox.jobs.push(Job {
                board: id.to_owned(),
                events,
                ..Job::default()
            });
        }
        self.refresh(index, now, &mut outbox);
        self.flush(outbox);
    }

    fn reply_now(
        &self,
        board: &str,
        reply: oneshot::Sender<Result<Reply, ControlError>>,
        answer: Result<Reply, ControlError>,
        outbox: &mut Outbox,
    ) {
        let pending: PendingReply = (reply, answer);
        outbox.jobs.push(Job {
            board: board.to_owned(),
            reply: Some(pending),
            ..Job::default()
        });
    }

    fn handle_request(&mut self, request: Request, now: Micros) {
        let mut outbox = Outbox::default();
        let Request {
            board: id,
            command,
            caller,
            reply,
        } = request;
        let Some(index) = self.board_index(&id) else {
            let known: Vec<&str> = self.boards.iter().map(|b| b.id()).collect();
            self.reply_now(
                &id,
                reply,
                Err(ControlError::UnknownBoard(format!(
                    "no board `{id}`; this daemon runs: {}",
                    known.join(", ")
                ))),
                &mut outbox,
            );
            self.flush(outbox);
            return;
        };
        let mut events = Vec::new();
        let input = match &command {
            Command::Start => Some((Input::Start, StoredEvent::Start)),
            Command::Pause => Some((Input::Pause, StoredEvent::Pause)),
            Command::Resume => Some((Input::Resume, StoredEvent::Resume)),
            Command::Press { side } => {
                Some((Input::Press(*side), StoredEvent::Press { side: *side }))
            }
            Command::Adjust {
                side,
                remaining_ms,
                moves,
                stage,
            } => {
                if remaining_ms.is_some_and(|ms| ms < 0) {
                    self.reply_now(
                        &id,
                        reply,
                        Err(ControlError::InvalidArgument(
                            "remaining time must not be negative".into(),
                        )),
                        &mut outbox,
                    );
                    self.flush(outbox);
                    return;
                }
                let remaining = remaining_ms.map(|ms| ms.saturating_mul(MS));
                Some((
                    Input::Adjust(Adjustment {
                        side: *side,
                        remaining,
                        moves: *moves,
                        stage: *stage,
                    }),
                    StoredEvent::Adjust {
                        side: *side,
                        remaining_us: remaining,
                        moves: *moves,
                        stage: *stage,
                        source: None,
                    },
                ))
            }
            _ => None,
        };
        if let Some((input, stored)) = input {
            let board = &mut self.boards[index];
            let t = board.t(now);
            Self::apply_input(
                &self.config,
                board,
                t,
                input,
                stored,
                caller,
                None,
                &mut events,
                &mut outbox,
                Some(reply),
                None,
            );
            self.refresh(index, now, &mut outbox);
            self.flush(outbox);
            return;
        }
        let answer = match command {
            Command::NewGame { control } => {
                self.new_game(index, &control, caller, now, &mut outbox)
            }
            Command::StartAt { unix_time_us, .. } => {
                self.start_at(index, unix_time_us, caller, now, &mut outbox)
            }
            Command::State => Ok(Reply::Json(
                self.boards[index].state_json(now, self.config.daemon.default_time_ms),
            )),
            Command::History => Ok(Reply::Json(self.boards[index].history_json())),
            Command::Snapshot => Ok(Reply::Snapshot(self.boards[index].snapshot(now))),
            Command::Pgn => match self.boards[index]
                .eboard
                .as_ref()
                .and_then(|e| e.tracker.pgn())
            {
                Some(pgn) => Ok(Reply::Text(pgn.render())),
                None => Err(ControlError::InvalidState(format!(
                    "board `{id}` has no live PGN (it needs an electronic board in the config)"
                ))),
            },
            Command::DeviceAdded { .. } | Command::DeviceRemoved { .. } => Ok(Reply::Done),
            _ => Err(ControlError::Internal("unexpected command".into())),
        };
        self.reply_now(&id, reply, answer, &mut outbox);
        self.refresh(index, now, &mut outbox);
        self.flush(outbox);
    }

    fn new_game(
        &mut self,
        index: usize,
        control: &str,
        caller: Caller,
        now: Micros,
        outbox: &mut Outbox,
    ) -> Result<Reply, ControlError> {
        let board = &self.boards[index];
        if board.in_progress(now) && board.state(now).running.is_some() {
            return Err(ControlError::InvalidState(format!(
                "a game is running on board `{}`: pause it first (chessclockctl pause {})",
                board.id(),
                board.id()
            )));
        }
        let engine = self
            .make_engine(control)
            .map_err(|e| ControlError::InvalidArgument(format!("control `{control}`: {e}")))?;
        let settings = engine.settings();
        let old = &self.boards[index];
        let mut board = Board::new(&self.config, &old.config, engine, control.to_owned(), now);
        // Keep what the devices told us.
        board.buttons = old.buttons.clone();
        board.marks.buttons_lost = old.marks.buttons_lost;
        for (new, old) in board.displays.iter_mut().zip(&old.displays) {
            new.slot = old.slot.clone();
            new.rules = old.rules.clone();
        }
        board.game_caller = caller.uid;
        if let (Some(new), Some(old)) = (board.eboard.as_mut(), old.eboard.as_ref()) {
            new.link = old.link.clone();
            if old.link.connected {
                // The tracker follows the board again from the start position.
                new.tracker.apply(&EboardEvent::Connected {
                    path: std::path::PathBuf::from(&old.link.name),
                    at: now,
                });
            }
            outbox
                .eboard
                .push((board.id().to_owned(), EboardCommand::NewGame));
        }
        outbox.jobs.push(Job {
            board: board.id().to_owned(),
            record: Some(Record::NewGame {
                control: control.to_owned(),
                settings,
                epoch: now,
                caller_uid: caller.uid,
                wall_us: board.game_created_wall,
            }),
            events: vec![BoardEvent::StateChanged(board.snapshot(now))],
            ..Job::default()
        });
        tracing::info!(board = %board.id(), control, uid = ?caller.uid, "new game");
        self.boards[index] = board;
        Ok(Reply::Done)
    }

    fn start_at(
        &mut self,
        index: usize,
        unix_time_us: i64,
        caller: Caller,
        now: Micros,
        outbox: &mut Outbox,
    ) -> Result<Reply, ControlError> {
        let board = &mut self.boards[index];
        if board.state(now).started {
            return Err(ControlError::InvalidState(format!(
                "the game on board `{}` has already started",
                board.id()
            )));
        }
        let ahead = unix_time_us - wall_now_us();
        if ahead < -SECOND {
            return Err(ControlError::InvalidArgument(format!(
                "the start time is {} s in the past",
                -ahead / SECOND
            )));
        }
        let at = now + ahead.max(0);
        board.scheduled_start = Some((at, caller));
        let row = EventRow {
            offset_us: board.t(now),
            wall_us: wall_now_us(),
            event: StoredEvent::StartAt { unix_time_us },
            caller_uid: caller.uid,
            origin: None,
        };
        board.log_entry(row.clone(), &[]);
        outbox.jobs.push(Job {
            board: board.id().to_owned(),
            record: Some(Record::Event(row)),
            events: vec![BoardEvent::StateChanged(board.snapshot(now))],
            ..Job::default()
        });
        tracing::info!(board = %board.id(), unix_time_us, in_ms = ahead / MS, "start scheduled");
        Ok(Reply::Done)
    }

    fn slot_mut(board: &mut Board, role: DeviceRole) -> Option<&mut Slot> {
        match role {
            DeviceRole::Buttons => board.buttons.as_mut(),
            DeviceRole::Display(n) => board.displays.get_mut(n).map(|d| &mut d.slot),
        }
    }

    /// Handles a device event. A press is applied to the engine and the
    /// displays' frames are queued, but its recording is returned, to be
    /// done once the links wrote those frames ([`Self::record_press`]).
    fn handle_device(&mut self, event: DeviceEvent, now: Micros) -> Option<PendingPress> {
        let mut outbox = Outbox::default();
        let key = match &event {
            DeviceEvent::Connected { key, .. }
            | DeviceEvent::Disconnected { key, .. }
            | DeviceEvent::Button { key, .. }
            | DeviceEvent::Errors { key, .. }
            | DeviceEvent::Refused { key, .. } => key.clone(),
        };
        let Some(index) = self.board_index(&key.board) else {
            tracing::warn!(board = %key.board, "an event from a device of an unknown board");
            return None;
        };
        let mut press = None;
        match event {
            DeviceEvent::Connected { key, hello, path } => {
                self.connected(index, &key, &hello, &path, now, &mut outbox)
            }
            DeviceEvent::Disconnected { key, reason } => {
                let board = &mut self.boards[index];
                if let Some(slot) = Self::slot_mut(board, key.role) {
                    slot.connected = false;
                    let link = slot.link();
                    tracing::warn!(board = %key.board, device = %link.name, reason, "device disconnected");
                    if key.role == DeviceRole::Buttons {
                        board.marks.buttons_lost = true;
                    }
                    outbox
                        .jobs
                        .push(device_changed_job(board, &key.board, link, now));
                }
            }
            DeviceEvent::Refused { key, path, reason } => {
                tracing::warn!(board = %key.board, role = ?key.role, path, reason,
                    "a device on this board's port was refused and is left alone");
            }
            DeviceEvent::Errors { key, count } => {
                let board = &mut self.boards[index];
                if let Some(slot) = Self::slot_mut(board, key.role) {
                    slot.errors = slot.errors.saturating_add(count);
                    tracing::warn!(board = %key.board, device = %slot.name, count, total = slot.errors,
                        "refused frames from a device");
                }
            }
            DeviceEvent::Button {
                key,
                event,
                button,
                pressed,
                at,
                arrival,
            } => {
                press = self
                    .button(index, key, event, button, pressed, at, arrival, &mut outbox)
                    .map(|applied| PendingPress { index, applied });
            }
        }
        self.refresh(index, now, &mut outbox);
        self.flush(outbox);
        press
    }

    /// Records a press [`Self::handle_device`] applied: its history row,
    /// events and store job (which carries the ACK), and whatever its
    /// reports change on the displays.
    fn record_press(&mut self, press: PendingPress, now: Micros) {
        let mut outbox = Outbox::default();
        let board = &mut self.boards[press.index];
        Self::record(&self.config, board, press.applied, &mut outbox);
        self.refresh(press.index, now, &mut outbox);
        self.flush(outbox);
    }

    fn connected(
        &mut self,
        index: usize,
        key: &DeviceKey,
        hello: &Hello,
        path: &str,
        now: Micros,
        outbox: &mut Outbox,
    ) {
        let display_config = self.config.display.clone();
        let board = &mut self.boards[index];
        let white_button = board.config.white_button;
        match key.role {
            DeviceRole::Buttons => {
                board.marks.buttons_lost = false;
                board.leds_sent = None;
            }
            DeviceRole::Display(n) => {
                let side = board
                    .config
                    .displays
                    .get(n)
                    .map(|d| d.side)
                    .unwrap_or_default();
                if let Some(display) = board.displays.get_mut(n) {
                    display.rules = DisplayRules::for_side(
                        &display_config,
                        &hello.capabilities,
                        white_button,
                        side,
                    );
                    // Restore at once, whatever was sent before.
                    display.sent = None;
                }
            }
        }
        if let Some(slot) = Self::slot_mut(board, key.role) {
            slot.connected = true;
            slot.serial = Some(hello.serial.as_str().to_owned());
            slot.boot_id = hello.boot_id;
            slot.caps = hello.capabilities;
            let link = slot.link();
            tracing::info!(board = %key.board, device = %link.name, path, serial = hello.serial.as_str(), "device connected");
            outbox
                .jobs
                .push(device_changed_job(board, &key.board, link, now));
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn button(
        &mut self,
        index: usize,
        key: DeviceKey,
        event: u16,
        button: Button,
        pressed: bool,
        at: Micros,
        arrival: Micros,
        outbox: &mut Outbox,
    ) -> Option<Unrecorded> {
        let config = &self.config;
        let board = &mut self.boards[index];
        let (serial, boot_id) = board
            .buttons
            .as_ref()
            .filter(|slot| slot.key == key)
            .map(|slot| {
                (
                    slot.serial.clone().unwrap_or_else(|| "unknown".into()),
                    slot.boot_id,
                )
            })
            .unwrap_or_else(|| (format!("{:?}", key.role), 0));
        let ack_only = |outbox: &mut Outbox| {
            outbox.jobs.push(Job {
                board: key.board.clone(),
                ack: Some((key.clone(), event)),
                ..Job::default()
            })
        };
        if !pressed {
            ack_only(outbox);
        } else if board.seen.contains(&(serial.clone(), boot_id, event)) {
            tracing::info!(board = %key.board, device = %serial, event, "a press already recorded was sent again; acknowledging it");
            ack_only(outbox);
        } else {
            let t = at - board.epoch;
            if t < board.floor {
                tracing::warn!(board = %key.board, device = %serial, event, early_us = board.floor - t,
                    "a press is earlier than the clock's last event; accounted at that event's instant");
            }
            let origin = DeviceOrigin {
                serial: serial.clone(),
                boot_id,
                event,
                late_us: (arrival - at).max(0),
            };
            let mut events = Vec::new();
            let input = match button {
                Button::Arbiter => {
                    board.marks.arbiter_called = true;
                    events.push(BoardEvent::ArbiterCalled {
                        board: key.board.clone(),
                    });
                    tracing::warn!(board = %key.board, "arbiter called (Art. 6.12b): clock paused");
                    Some((Input::Pause, StoredEvent::Pause))
                }
                other => board.side_of_button(other).map(|side| {
                    if side == Side::Black
                        && board.config.start_on_black_press
                        && board.started_at.is_none()
                        && !board.state(t).started
                    {
                        // Club practice: Black's press starts White's clock.
                        (Input::Start, StoredEvent::Start)
                    } else {
                        (Input::Press(side), StoredEvent::Press { side })
                    }
                }),
            };
            match input {
                Some((input, stored)) => {
                    if let Input::Press(side) = input {
                        tracing::debug!(board = %key.board, %side, device = %serial, late_us = origin.late_us, "press");
                    }
                    let unrecorded = Unrecorded {
                        t,
                        notices: Vec::new(),
                        stored,
                        caller: Caller { uid: None },
                        origin: Some(origin),
                        events,
                        reply: None,
                        ack: Some((key.clone(), event)),
                    };
                    return Self::apply_to_engine(config, board, input, unrecorded, outbox);
                }
                None => {
                    tracing::warn!(board = %key.board, device = %serial, ?button, "unknown button");
                    ack_only(outbox);
                }
            }
        }
        None
    }

    fn reload(&mut self, config: Config, now: Micros) {
        let mut outbox = Outbox::default();
        self.config.display = config.display.clone();
        self.config.presets = config.presets.clone();
        self.config.engine = config.engine;
        self.config.daemon.default_time_ms = config.daemon.default_time_ms;
        self.config.daemon.resume_after_restart = config.daemon.resume_after_restart;
        for new in &config.boards {
            let Some(index) = self.board_index(&new.id) else {
                tracing::warn!(board = %new.id, "a new board in the config needs a daemon restart");
                continue;
            };
            if self.boards[index].in_progress(now) {
                tracing::info!(board = %new.id, "config reload skipped: a game is in progress");
                continue;
            }
            let board = &mut self.boards[index];
            if board.config.buttons != new.buttons || board.config.displays != new.displays {
                tracing::warn!(board = %new.id, "changed devices need a daemon restart");
            }
            board.config.white_button = new.white_button;
            let control_changed = board.config.control != new.control;
            board.config.control = new.control.clone();
            for (n, display) in board.displays.iter_mut().enumerate() {
                let side = board
                    .config
                    .displays
                    .get(n)
                    .map(|d| d.side)
                    .unwrap_or_default();
                display.rules = DisplayRules::for_side(
                    &self.config.display,
                    &display.slot.caps,
                    new.white_button,
                    side,
                );
                if !display.slot.connected {
                    display.rules.tenths = true;
                    display.rules.text_chars = 16;
                }
            }
            let started = board.state(now).started;
            if control_changed && !started {
                let control = new.control.clone();
                let _ = self.new_game(index, &control, Caller { uid: None }, now, &mut outbox);
            }
            tracing::info!(board = %new.id, "config reloaded");
            self.refresh(index, now, &mut outbox);
        }
        for board in &self.boards {
            if !config.boards.iter().any(|b| b.id == board.id()) {
                tracing::warn!(board = %board.id(), "a board removed from the config keeps running until the daemon restarts");
            }
        }
        self.flush(outbox);
    }
}

fn beep(board: &Board, outbox: &mut Outbox, duration_ms: u16, count: u8) {
    let slots = board
        .buttons
        .iter()
        .chain(board.displays.iter().map(|d| &d.slot));
    for slot in slots.filter(|s| s.connected && s.caps.buzzer) {
        outbox
            .device
            .push((slot.key.clone(), DeviceCommand::Beep { duration_ms, count }));
    }
}

fn apply_marks(board: &mut Board, notices: &[Notice]) {
    for notice in notices {
        match notice {
            Notice::Started if board.started_at.is_none() => {
                board.started_at = Some(board.floor);
            }
            Notice::FlagFell {
                side, last_stage, ..
            } => {
                if board.marks.first_flag.is_none() {
                    board.marks.first_flag = Some(*side);
                }
                match side {
                    Side::White => board.marks.stage_flag_white = !last_stage,
                    Side::Black => board.marks.stage_flag_black = !last_stage,
                }
            }
            Notice::Adjusted(adjustment) if adjustment.remaining.is_some_and(|r| r > 0) => {
                match adjustment.side {
                    Side::White => board.marks.stage_flag_white = false,
                    Side::Black => board.marks.stage_flag_black = false,
                }
                if board.marks.first_flag == Some(adjustment.side) {
                    board.marks.first_flag = None;
                }
            }
            Notice::Resumed => {
                board.marks.arbiter_called = false;
                board.marks.down_time = None;
            }
            _ => {}
        }
    }
}

/// Rebuilding a stored game: the electronic board's PGN clocks and flag
/// report follow the replayed notices as they followed the live ones.
fn follow_replayed_notices(board: &mut Board, notices: &[Notice]) {
    let Some(eboard) = board.eboard.as_mut() else {
        return;
    };
    let state = board.engine.state(board.floor);
    for notice in notices {
        eboard.tracker.on_engine_notice(notice, &state);
        follow_flag(eboard, &mut board.marks, &board.engine, notice);
    }
}

/// At a flag fall, the board's Art. 6.4 / 6.9 report (kept for the State
/// JSON and shown on the display); time given back after the flag
/// withdraws it. Returns a new report.
fn follow_flag(
    eboard: &mut EboardState,
    marks: &mut Marks,
    engine: &Engine,
    notice: &Notice,
) -> Option<crate::eboard::FlagReport> {
    match notice {
        Notice::FlagFell { side, stage, .. } => {
            let control = engine.control().for_side(*side);
            let report = eboard.tracker.flag_report(*side, control, *stage);
            eboard.flag_report = report.as_ref().map(super::eboard::flag_report_json);
            if let Some(text) = report
                .as_ref()
                .and_then(super::eboard::verdict_display_text)
            {
                marks.game_end = Some(text.to_owned());
            }
            report
        }
        Notice::Adjusted(adjustment)
            if adjustment.remaining.is_some_and(|r| r > 0)
                && eboard
                    .flag_report
                    .as_ref()
                    .is_some_and(|r| r["side"] == adjustment.side.as_str()) =>
        {
            eboard.flag_report = None;
            if eboard.tracker.game_end().is_none() {
                marks.game_end = None;
            }
            None
        }
        _ => None,
    }
}

/// Turns engine notices into board events (and beeps); the marks were
/// updated from them already ([`apply_marks`]).
fn report_notices(
    config: &Config,
    board: &mut Board,
    notices: &[Notice],
    events: &mut Vec<BoardEvent>,
    outbox: &mut Outbox,
) {
    let id = board.id().to_owned();
    let mut flag_reports = Vec::new();
    if let Some(eboard) = board.eboard.as_mut() {
        let state = board.engine.state(board.floor);
        let mut pgn_changed = false;
        for notice in notices {
            pgn_changed |= eboard.tracker.on_engine_notice(notice, &state);
            if let Notice::Pressed { .. } = notice {
                outbox.eboard.push((
                    id.clone(),
                    EboardCommand::ClockPressed {
                        at: board.floor + board.epoch,
                    },
                ));
            }
            if let Some(report) = follow_flag(eboard, &mut board.marks, &board.engine, notice) {
                tracing::info!(board = %id, side = %report.flagged, ?report, "flag fall checked on the electronic board (Art. 6.4, 6.9)");
                flag_reports.push(report);
            }
        }
        if let (true, Some(dir), Some(pgn)) =
            (pgn_changed, &config.daemon.pgn_dir, eboard.tracker.pgn())
        {
            outbox.pgn.push((id.clone(), dir.clone(), pgn.render()));
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
                events.push(BoardEvent::Pressed {
                    board: id.clone(),
                    side: *side,
                    move_number: *move_number,
                    used_ms: used / MS,
                });
            }
            Notice::FlagFell {
                side,
                at,
                stage,
                last_stage,
            } => {
                tracing::info!(board = %id, %side, game_ms = at / MS, stage, last_stage, "flag fell");
                events.push(BoardEvent::FlagFell {
                    board: id.clone(),
                    side: *side,
                    at_ms: (at + board.epoch).div_euclid(MS),
                    stage: *stage,
                    last_stage: *last_stage,
                });
            }
            Notice::StageChanged { side, stage, .. } => {
                events.push(BoardEvent::StageChanged {
                    board: id.clone(),
                    side: *side,
                    stage: *stage,
                });
                if config.display.beep_on_control {
                    beep(board, outbox, 200, 2);
                }
            }
            _ => {}
        }
    }
    events.extend(
        flag_reports
            .iter()
            .map(|report| super::eboard::flag_report_event(&id, report)),
    );
}

/// A device's link changed: tell the control surfaces (the link itself and
/// the board's new properties).
fn device_changed_job(board: &Board, board_id: &str, link: DeviceLink, now: Micros) -> Job {
    Job {
        board: board_id.to_owned(),
        events: vec![
            BoardEvent::DeviceChanged {
                board: board_id.to_owned(),
                link,
            },
            BoardEvent::StateChanged(board.snapshot(now)),
        ],
        ..Job::default()
    }
}
