//! Shared by the D-Bus and CLI tests: a fake runtime that answers
//! `control::Request`s like the real one would (one task owns the boards'
//! state), private `dbus-daemon`s (session-style and system-style with the
//! shipped policy), and helpers with timeouts.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::Duration;

use chessclock_core::views::{
    Correction, DeviceView, GameHeader, HistoryRow, HistoryView, SideView, StateView,
};
use chessclockd::config::Config;
use chessclockd::control::{
    BoardEvent, BoardSnapshot, Caller, Command, ControlError, ControlHandle, DeviceLink, Reply,
    Request,
};
use chessclockd::engine::Side;
use chessclockd::journal::StoredEvent;
use tokio::sync::{broadcast, mpsc};

/// Bus-heavy tests in one file run one at a time.
pub static BUS_LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Every test body runs under this limit.
pub const TEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Presets the fake runtime knows, with their main time in seconds.
const PRESETS: &[(&str, i64)] = &[
    ("fide-rapid", 900),
    ("fide-blitz", 180),
    ("fide-classical", 5400),
];

struct FakeBoard {
    snapshot: BoardSnapshot,
    /// The record, as the real runtime's History view has it: a row per
    /// request, with the request in words as its outcome.
    history: Vec<HistoryRow>,
    /// The scheduled start (unix µs, forced).
    scheduled: Option<(i64, bool)>,
    /// Notes written.
    created_wall_us: i64,
}

/// Starts a fake runtime for `boards`; returns the handle a control surface
/// uses. The task ends when every handle is dropped.
pub fn fake_runtime(boards: &[&str]) -> ControlHandle {
    let (requests, mut inbox) = mpsc::channel::<Request>(64);
    let (events, _) = broadcast::channel(256);
    let handle = ControlHandle {
        requests,
        events: events.clone(),
        boards: boards.iter().map(|b| b.to_string()).collect(),
        health: Default::default(),
        host: Default::default(),
        hall: Default::default(),
    };
    let mut state: BTreeMap<String, FakeBoard> = boards
        .iter()
        .map(|id| {
            (
                id.to_string(),
                FakeBoard {
                    snapshot: BoardSnapshot {
                        board: id.to_string(),
                        control: "5400+30".into(),
                        snapshot_ms: now_ms(),
                        view_us: 0,
                        started: false,
                        running: None,
                        paused: false,
                        white_remaining_ms: 5_400_000,
                        black_remaining_ms: 5_400_000,
                        white_moves: 0,
                        black_moves: 0,
                        white_stage: 1,
                        black_stage: 1,
                        flags: vec![],
                        devices: vec![DeviceLink {
                            role: "buttons".into(),
                            name: format!("/dev/chessclock/buttons-{id}"),
                            connected: true,
                            serial: Some("CC0001".into()),
                        }],
                        arbiter_called: false,
                    },
                    history: vec![],
                    scheduled: None,
                    created_wall_us: chessclock_host::clock::wall_now_us(),
                },
            )
        })
        .collect();
    tokio::spawn(async move {
        while let Some(request) = inbox.recv().await {
            let answer = answer(&mut state, &events, &request);
            let _ = request.reply.send(answer);
        }
    });
    handle
}

fn now_ms() -> i64 {
    chessclock_host::clock::monotonic_now_us() / 1000
}

fn parse_control(control: &str) -> Result<i64, ControlError> {
    if let Some((_, seconds)) = PRESETS.iter().find(|(name, _)| *name == control) {
        return Ok(seconds * 1000);
    }
    let first_field = control.split(':').next().unwrap_or("");
    let main = first_field.rsplit('/').next().unwrap_or("");
    let seconds = main.split(['+', 'd', 'b']).next().unwrap_or("");
    if control.chars().all(|c| "0123456789/+:db".contains(c)) {
        if let Ok(seconds) = seconds.parse::<i64>() {
            return Ok(seconds * 1000);
        }
    }
    if control.chars().all(|c| c.is_ascii_lowercase() || c == '-') {
        Err(ControlError::InvalidArgument(format!(
            "unknown preset `{control}`"
        )))
    } else {
        Err(ControlError::InvalidArgument(format!(
            "malformed time control `{control}`"
        )))
    }
}

fn answer(
    state: &mut BTreeMap<String, FakeBoard>,
    events: &broadcast::Sender<BoardEvent>,
    request: &Request,
) -> Result<Reply, ControlError> {
    match &request.command {
        Command::DeviceAdded { path } | Command::DeviceRemoved { path } => {
            let board = state.values_mut().next().expect("one board at least");
            let connected = matches!(request.command, Command::DeviceAdded { .. });
            let link = DeviceLink {
                role: "display".into(),
                name: path.clone(),
                connected,
                serial: None,
            };
            if connected {
                board.snapshot.devices.push(link.clone());
            } else {
                let Some(known) = board.snapshot.devices.iter_mut().find(|d| &d.name == path)
                else {
                    return Err(ControlError::InvalidArgument(format!(
                        "no device {path} is known"
                    )));
                };
                known.connected = false;
            }
            record(board, request);
            let _ = events.send(BoardEvent::DeviceChanged {
                board: board.snapshot.board.clone(),
                link,
            });
            let _ = events.send(BoardEvent::StateChanged(board.snapshot.clone()));
            return Ok(Reply::Done);
        }
        _ => {}
    }
    let Some(board) = state.get_mut(&request.board) else {
        return Err(ControlError::UnknownBoard(format!(
            "no board `{}`",
            request.board
        )));
    };
    let snap = &mut board.snapshot;
    let mut extra_events = Vec::new();
    let mut correction = None;
    match &request.command {
        Command::State => {
            let view = state_view(snap, board.scheduled);
            return Ok(Reply::Json(serde_json::to_string(&view).expect("state")));
        }
        Command::History => {
            let view = HistoryView {
                header: GameHeader {
                    board: snap.board.clone(),
                    control: snap.control.clone(),
                    settings: Default::default(),
                    created_wall_us: board.created_wall_us,
                    caller_uid: None,
                    game: None,
                    control_prose: None,
                    tenths_below_ms: None,
                },
                events: board.history.clone(),
            };
            return Ok(Reply::Json(serde_json::to_string(&view).expect("history")));
        }
        Command::Games => {
            return Ok(Reply::Json(
                serde_json::json!([{
                    "game": 1, "board": snap.board, "control": snap.control,
                    "created_wall_us": board.created_wall_us, "started_wall_us": null,
                    "last_wall_us": null, "result": "unfinished", "moves": snap.white_moves,
                    "current": true
                }])
                .to_string(),
            ))
        }
        Command::GameHistory { game } | Command::GamePgn { game } => {
            return Err(ControlError::InvalidArgument(format!(
                "board `{}` has no game {game}",
                snap.board
            )))
        }
        Command::Pgn => {
            return Ok(Reply::Text(format!(
                "[Event \"fake\"]\n[TimeControl \"{}\"]\n\n*\n",
                snap.control
            )))
        }
        Command::Snapshot => return Ok(Reply::Snapshot(snap.clone())),
        Command::NewGame { control } => {
            let main_ms = parse_control(control)?;
            board.scheduled = None;
            *snap = BoardSnapshot {
                control: control.clone(),
                started: false,
                running: None,
                paused: false,
                white_remaining_ms: main_ms,
                black_remaining_ms: main_ms,
                white_moves: 0,
                black_moves: 0,
                white_stage: 1,
                black_stage: 1,
                flags: vec![],
                ..snap.clone()
            };
        }
        Command::Start => {
            if snap.started {
                return Err(ControlError::InvalidState(
                    "the game has already started; use resume".into(),
                ));
            }
            snap.started = true;
            snap.running = Some(Side::White);
            board.scheduled = None;
        }
        Command::StartAt {
            unix_time_us,
            force,
        } => {
            if snap.started {
                return Err(ControlError::InvalidState(
                    "the game has already started".into(),
                ));
            }
            board.scheduled = Some((*unix_time_us, *force));
        }
        Command::CancelStart => {
            if board.scheduled.take().is_none() {
                return Err(ControlError::InvalidState("no start is scheduled".into()));
            }
        }
        Command::Note { text } => {
            if text.trim().is_empty() {
                return Err(ControlError::InvalidArgument("the note is empty".into()));
            }
        }
        Command::UndoPress => {
            return Err(ControlError::InvalidState(
                "there is no press by the arbiter to undo".into(),
            ))
        }
        Command::AckCall if !snap.arbiter_called => {
            return Err(ControlError::InvalidState(
                "no arbiter call stands: there is nothing to acknowledge".into(),
            ))
        }
        Command::AckCall => {}
        Command::AdjustBy { side, delta_ms } => {
            let remaining = match side {
                Side::White => &mut snap.white_remaining_ms,
                Side::Black => &mut snap.black_remaining_ms,
            };
            let before = *remaining;
            if before + delta_ms < 0 {
                return Err(ControlError::InvalidArgument("less than nothing".into()));
            }
            *remaining += delta_ms;
            correction = Some(Correction {
                side: *side,
                remaining_before_ms: Some(before),
                remaining_after_ms: Some(*remaining),
                moves_before: 0,
                moves_after: 0,
                stage_before: 1,
                stage_after: 1,
            });
        }
        Command::Pause => {
            if snap.running.is_none() {
                return Err(ControlError::InvalidState("no clock is running".into()));
            }
            snap.paused = true;
            snap.running = None;
        }
        Command::Resume => {
            if !snap.paused {
                return Err(ControlError::InvalidState("the clock is not paused".into()));
            }
            snap.paused = false;
            snap.running = Some(if snap.white_moves > snap.black_moves {
                Side::Black
            } else {
                Side::White
            });
        }
        Command::Press { side } => {
            if snap.running != Some(*side) {
                return Err(ControlError::InvalidState(format!(
                    "{side}'s clock is not running"
                )));
            }
            let moves = match side {
                Side::White => {
                    snap.white_moves += 1;
                    snap.white_remaining_ms -= 1000;
                    snap.white_moves
                }
                Side::Black => {
                    snap.black_moves += 1;
                    snap.black_remaining_ms -= 1000;
                    snap.black_moves
                }
            };
            snap.running = Some(side.other());
            extra_events.push(BoardEvent::Pressed {
                board: snap.board.clone(),
                side: *side,
                move_number: moves,
                used_ms: 1000,
            });
        }
        Command::Adjust {
            side,
            remaining_ms,
            moves,
            stage,
        } => {
            let (r, m, s) = match side {
                Side::White => (
                    &mut snap.white_remaining_ms,
                    &mut snap.white_moves,
                    &mut snap.white_stage,
                ),
                Side::Black => (
                    &mut snap.black_remaining_ms,
                    &mut snap.black_moves,
                    &mut snap.black_stage,
                ),
            };
            let before = (*r, *m, *s);
            if let Some(value) = remaining_ms {
                *r = *value;
            }
            if let Some(value) = moves {
                *m = *value;
            }
            correction = Some(Correction {
                side: *side,
                remaining_before_ms: Some(before.0),
                remaining_after_ms: Some(*r),
                moves_before: before.1,
                moves_after: *m,
                stage_before: before.2,
                stage_after: stage.unwrap_or(before.2),
            });
            if let Some(value) = stage {
                *s = *value;
                extra_events.push(BoardEvent::StageChanged {
                    board: snap.board.clone(),
                    side: *side,
                    stage: *value,
                });
            }
        }
        // Recorded (below): tests read them back from the history.
        Command::SetTags { .. } | Command::SetResult { .. } => {}
        Command::DeviceAdded { .. } | Command::DeviceRemoved { .. } => unreachable!(),
    }
    snap.snapshot_ms = now_ms();
    // The view changed now (what orders the D-Bus objects' caches).
    snap.view_us = snap.snapshot_ms * 1_000;
    let snapshot = snap.clone();
    record(board, request);
    if let Some(row) = board.history.last_mut() {
        row.correction = correction;
    }
    for event in extra_events {
        let _ = events.send(event);
    }
    let _ = events.send(BoardEvent::StateChanged(snapshot));
    Ok(Reply::Done)
}

fn record(board: &mut FakeBoard, request: &Request) {
    let snap = &board.snapshot;
    let note = |text: &str| StoredEvent::Note {
        text: text.to_owned(),
    };
    let event = match &request.command {
        Command::Start => StoredEvent::Start,
        Command::StartAt {
            unix_time_us,
            force,
        } => StoredEvent::StartAt {
            unix_time_us: *unix_time_us,
            forced: *force,
            replaces_unix_us: None,
        },
        Command::Pause => StoredEvent::Pause,
        Command::Resume => StoredEvent::Resume,
        Command::Press { side } => StoredEvent::Press { side: *side },
        Command::Adjust {
            side,
            remaining_ms,
            moves,
            stage,
        } => StoredEvent::Adjust {
            side: *side,
            remaining_us: remaining_ms.map(|ms| ms * 1000),
            moves: *moves,
            stage: *stage,
            source: None,
            by_us: None,
        },
        Command::AdjustBy { side, delta_ms } => StoredEvent::Adjust {
            side: *side,
            remaining_us: None,
            moves: None,
            stage: None,
            source: None,
            by_us: Some(delta_ms * 1000),
        },
        Command::CancelStart => StoredEvent::StartCancelled { unix_time_us: 0 },
        Command::AckCall => StoredEvent::CallAcknowledged,
        Command::Note { text } => note(text),
        other => note(&format!("fake runtime: {}", other.name())),
    };
    let wall = chessclock_host::clock::wall_now_us();
    board.history.push(HistoryRow {
        event,
        t_ms: 0,
        t_us: 0,
        wall_us: wall,
        caller_uid: request.caller.uid,
        caller_name: request.caller.name.clone(),
        device: None,
        // The request itself, for the tests to check what arrived.
        outcome: vec![format!("{:?}", request.command)],
        white_used_ms: 0,
        black_used_ms: 0,
        white_remaining_ms: Some(snap.white_remaining_ms),
        black_remaining_ms: Some(snap.black_remaining_ms),
        white_moves: snap.white_moves,
        black_moves: snap.black_moves,
        move_number: None,
        move_used_ms: None,
        ignored: None,
        correction: None,
    });
}

/// A State view of the fake board, as the real runtime would build it.
fn state_view(snap: &BoardSnapshot, scheduled: Option<(i64, bool)>) -> StateView {
    let side = |s: Side| {
        let (remaining, moves, stage) = match s {
            Side::White => (snap.white_remaining_ms, snap.white_moves, snap.white_stage),
            Side::Black => (snap.black_remaining_ms, snap.black_moves, snap.black_stage),
        };
        SideView {
            remaining_ms: Some(remaining),
            used_ms: 0,
            moves,
            stage,
            flag_ms: None,
            delay_left_ms: None,
            periods_left: None,
            moves_left_in_block: None,
            in_overtime: false,
            max_stage: Some(2),
        }
    };
    let now = now_ms();
    let wall_ms = chessclock_host::clock::wall_now_us() / 1000;
    StateView {
        t: now,
        running: snap.running,
        paused: snap.paused,
        flags: snap.flags.clone(),
        white: side(Side::White),
        black: side(Side::Black),
        board: snap.board.clone(),
        control: snap.control.clone(),
        started: snap.started,
        frozen: false,
        to_move: snap
            .running
            .or(Some(if snap.white_moves > snap.black_moves {
                Side::Black
            } else {
                Side::White
            })),
        game_ms: 0,
        game_epoch_us: 0,
        time_since_start_ms: None,
        default_time_ms: 0,
        default_time_overrun: vec![],
        down_time_ms: None,
        arbiter_called: snap.arbiter_called,
        arbiter_called_at_ms: None,
        arbiter_call_acknowledged_by: None,
        arbiter_call_acknowledged_at_ms: None,
        scheduled_start_ms: scheduled.map(|(at, _)| now + (at / 1000 - wall_ms)),
        scheduled_start_unix_ms: scheduled.map(|(at, _)| at / 1000),
        devices: snap
            .devices
            .iter()
            .map(|d| DeviceView {
                role: d.role.clone(),
                name: d.name.clone(),
                connected: d.connected,
                serial: d.serial.clone(),
                errors: 0,
            })
            .collect(),
        eboard: None,
        flag_falls: vec![],
        restart: None,
        unplaced_presses: 0,
        control_prose: None,
        tenths_below_ms: Some(20_000),
        scheduled_start_forced: scheduled.map(|(_, forced)| forced),
        hourglass: false,
        state_health: None,
        over: None,
        players: Default::default(),
        result: None,
    }
}

/// The fake runtime's view of a board, straight from its owner.
pub async fn snapshot(handle: &ControlHandle, board: &str) -> BoardSnapshot {
    match handle
        .call(board, Command::Snapshot, Caller::DAEMON)
        .await
        .expect("snapshot")
    {
        Reply::Snapshot(snapshot) => snapshot,
        other => panic!("unexpected reply {other:?}"),
    }
}

/// The history as recorded by the fake runtime: per request, the caller's
/// uid and the request (`{"uid", "command"}`).
pub async fn history(handle: &ControlHandle, board: &str) -> Vec<serde_json::Value> {
    match handle
        .call(board, Command::History, Caller::DAEMON)
        .await
        .expect("history")
    {
        Reply::Json(text) => log_of(&text),
        other => panic!("unexpected reply {other:?}"),
    }
}

/// The fake's History JSON as `{"uid", "command"}` entries.
pub fn log_of(history_json: &str) -> Vec<serde_json::Value> {
    let view: HistoryView = serde_json::from_str(history_json).expect("history JSON");
    view.events
        .iter()
        .map(|row| serde_json::json!({"uid": row.caller_uid, "command": row.outcome[0]}))
        .collect()
}

/// A test configuration: session bus, no NTP requirement unless asked.
pub fn test_config(require_ntp: bool) -> Config {
    let mut config = Config::default();
    config.daemon.bus = chessclockd::config::BusKind::Session;
    config.daemon.require_ntp_for_scheduled_start = require_ntp;
    config
}

pub use crate::kit::bus::PrivateBus;

/// Serves the API for `handle` on a private bus, owning the name.
pub async fn serve_on_bus(
    bus: &PrivateBus,
    handle: ControlHandle,
    config: Config,
    ntp: chessclockd::dbus::NtpSource,
) -> zbus::Connection {
    chessclockd::dbus::serve_with(
        bus.builder(),
        handle,
        chessclockd::dbus::ServeOptions {
            config,
            request_name: true,
            ntp,
            read_limits: Default::default(),
        },
    )
    .await
    .expect("serve")
}

/// A fake runtime with `boards`, served on `bus` with the test config and
/// no NTP source: what most bus tests start from.
pub async fn serve_fake(bus: &PrivateBus, boards: &[&str]) -> (ControlHandle, zbus::Connection) {
    let handle = fake_runtime(boards);
    let server = serve_on_bus(
        bus,
        handle.clone(),
        test_config(false),
        chessclockd::dbus::NtpSource::Fixed(None),
    )
    .await;
    (handle, server)
}

/// Runs a program with a time limit; returns (status success, stdout, stderr).
pub async fn run(program: &str, args: &[&str]) -> (bool, String, String) {
    run_with(tokio::process::Command::new(program).args(args)).await
}

pub async fn run_with(command: &mut tokio::process::Command) -> (bool, String, String) {
    command.kill_on_drop(true).stdin(Stdio::null());
    let output = tokio::time::timeout(Duration::from_secs(15), command.output())
        .await
        .expect("the program timed out")
        .expect("the program could not run");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The next item of a stream (a minimal `StreamExt::next`), within 5 s.
pub async fn next<S: zbus::export::futures_core::Stream + Unpin>(stream: &mut S) -> S::Item {
    let item = std::future::poll_fn(|cx| std::pin::Pin::new(&mut *stream).poll_next(cx));
    tokio::time::timeout(Duration::from_secs(5), item)
        .await
        .expect("timed out waiting for a signal")
        .expect("the signal stream ended")
}
