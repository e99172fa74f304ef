//! The control loop: the readers' side of the runtime, a task on the main
//! tokio runtime.
//!
//! It takes every [`Request`] of the control surfaces. Changes go to the
//! timing thread (resolved first: a time control's text becomes its
//! control here, off the timing thread) and their replies come back after
//! the commit. Reads (State, History, Snapshot, Pgn) are answered here,
//! from the typed views the board cores publish after each committed
//! change: a reader never reaches the timing thread, so a flood of readers
//! costs the clock nothing. It also broadcasts the board events (with a
//! `StateChanged` snapshot for every new view), renders and writes the
//! live PGN (the board cores hand over the game, never its text, so no PGN
//! is rendered on the timing thread) and carries the commands for the
//! electronic-board tasks.
//!
//! Promises: a read sees only committed state; the state it shows is the
//! board's at the instant of the read, computed exactly as the engine would
//! (`BoardModel::state`); a reply whose caller went away is dropped; the
//! board events are broadcast in the order the timing thread hands them
//! over, which puts a change's view (and its `StateChanged`) before the
//! events it caused (the board core's promise), so a read made on hearing
//! an event sees its change.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use tokio::sync::{broadcast, mpsc as tokio_mpsc, oneshot};

use super::store::StoreReader;
use super::time::TimeSource;
use super::timing::{ControlMsg, TimingMsg};
use crate::config::Config;
use crate::control::{BoardEvent, Command, ControlError, Reply, Request};
use crate::eboard::EboardHandle;
use chessclock_core::board::{Board, BoardCommand, GameSpec};
use chessclock_core::journal::StoredGame;
use chessclock_core::views::{BoardModel, GameHeader, GameSummary, HistoryRow};

/// What readers see of one board.
#[derive(Default)]
struct View {
    model: Option<BoardModel>,
    header: Option<GameHeader>,
    history: Vec<HistoryRow>,
    pgn: Option<String>,
}

/// The History view, serialised without copying the rows.
#[derive(Serialize)]
struct HistoryRef<'a> {
    #[serde(flatten)]
    header: &'a GameHeader,
    events: &'a [HistoryRow],
}

/// What the control loop listens to.
pub struct ControlInputs {
    pub requests: tokio_mpsc::Receiver<Request>,
    pub from_timing: tokio_mpsc::UnboundedReceiver<ControlMsg>,
    pub stop: oneshot::Receiver<()>,
}

/// The control loop's state.
pub struct Control {
    config: Config,
    /// Where reads take their instant (see `super::time`).
    time: TimeSource,
    ids: Vec<String>,
    views: Vec<View>,
    waiting: HashMap<u64, oneshot::Sender<Result<Reply, ControlError>>>,
    next_token: u64,
    timing: tokio_mpsc::UnboundedSender<TimingMsg>,
    events: broadcast::Sender<BoardEvent>,
    eboards: HashMap<usize, EboardHandle>,
    /// The live PGN files, written in order by one task.
    pgn_files: tokio_mpsc::UnboundedSender<(PathBuf, String, String)>,
    /// Past games, read on the blocking pool (`None`: no database file).
    reader: Option<Arc<Mutex<StoreReader>>>,
    /// The database's number of a game started in this run, once looked
    /// up: `(board, the game's created_wall_us, its number)`.
    game_numbers: tokio_mpsc::UnboundedSender<(usize, i64, i64)>,
    found_numbers: Option<tokio_mpsc::UnboundedReceiver<(usize, i64, i64)>>,
}

impl Control {
    pub fn new(
        config: Config,
        timing: tokio_mpsc::UnboundedSender<TimingMsg>,
        events: broadcast::Sender<BoardEvent>,
        eboards: HashMap<usize, EboardHandle>,
        state_path: Option<&Path>,
        time: TimeSource,
    ) -> Control {
        let ids: Vec<String> = config.boards.iter().map(|b| b.id.clone()).collect();
        let reader = state_path.and_then(|path| match StoreReader::open(path) {
            Ok(reader) => Some(Arc::new(Mutex::new(reader))),
            Err(error) => {
                tracing::warn!(%error, "past games cannot be read (no read-only connection)");
                None
            }
        });
        let (pgn_files, pending_files) = tokio_mpsc::unbounded_channel();
        tokio::spawn(write_pgn_files(pending_files));
        let (game_numbers, found_numbers) = tokio_mpsc::unbounded_channel();
        Control {
            game_numbers,
            found_numbers: Some(found_numbers),
            pgn_files,
            views: ids.iter().map(|_| View::default()).collect(),
            ids,
            config,
            time,
            waiting: HashMap::new(),
            next_token: 1,
            timing,
            events,
            eboards,
            reader,
        }
    }

    /// Runs until stopped (or every input is gone). Stops the e-board
    /// tasks on the way out.
    pub async fn run(mut self, mut inputs: ControlInputs) {
        let Some(mut found_numbers) = self.found_numbers.take() else {
            return;
        };
        loop {
            tokio::select! {
                biased;
                _ = &mut inputs.stop => break,
                Some(message) = inputs.from_timing.recv() => self.answer(message),
                Some(request) = inputs.requests.recv() => self.request(request),
                Some((board, created, number)) = found_numbers.recv() => {
                    self.number_game(board, created, number);
                }
                else => break,
            }
        }
        // Replies already committed still reach their callers.
        while let Ok(message) = inputs.from_timing.try_recv() {
            self.answer(message);
        }
        for eboard in self.eboards.values() {
            let _ = eboard.commands.send(crate::eboard::EboardCommand::Stop);
        }
    }

    fn index(&self, board: &str) -> Option<usize> {
        self.ids.iter().position(|id| id == board)
    }

    fn answer(&mut self, message: ControlMsg) {
        match message {
            ControlMsg::Reply { token, result } => {
                if let Some(reply) = self.waiting.remove(&token) {
                    let _ = reply.send(result);
                }
            }
            // No receivers is fine: nobody listens yet.
            ControlMsg::Publish(event) => {
                let _ = self.events.send(event);
            }
            ControlMsg::View { board, model } => {
                let snapshot = model.snapshot(model.taken_at);
                if let Some(view) = self.views.get_mut(board) {
                    view.model = Some(*model);
                }
                let _ = self.events.send(BoardEvent::StateChanged(snapshot));
            }
            ControlMsg::History { board, row } => {
                if let (Some(view), Some(id)) = (self.views.get_mut(board), self.ids.get(board)) {
                    let _ = self.events.send(BoardEvent::Recorded {
                        board: id.clone(),
                        row: row.clone(),
                    });
                    view.history.push(*row);
                }
            }
            ControlMsg::ReviseHistory { board, revision } => {
                if let Some(row) = self
                    .views
                    .get_mut(board)
                    .and_then(|view| view.history.get_mut(revision.index as usize))
                {
                    revision.apply(row);
                }
            }
            ControlMsg::NewHistory { board, header } => {
                if header.game.is_none() {
                    self.look_up_number(board, header.created_wall_us);
                }
                if let Some(view) = self.views.get_mut(board) {
                    view.header = Some(*header);
                    view.history.clear();
                }
            }
            ControlMsg::Pgn { board, game } => {
                let text = game.render();
                if let (Some(dir), Some(id)) = (&self.config.daemon.pgn_dir, self.ids.get(board)) {
                    let _ = self
                        .pgn_files
                        .send((dir.clone(), format!("{id}.pgn"), text.clone()));
                }
                if let Some(view) = self.views.get_mut(board) {
                    view.pgn = Some(text);
                }
            }
            ControlMsg::Eboard { board, command } => {
                if let Some(eboard) = self.eboards.get(&board) {
                    let _ = eboard.commands.send(command);
                }
            }
            ControlMsg::Config(config) => self.config = *config,
            ControlMsg::BoardAdded { board, id, eboard } => {
                // The timing thread and this loop grow their lists in step
                // (one channel, in order): a mismatch is a bug, not input.
                if board != self.ids.len() {
                    tracing::error!(board = %id, index = board, known = self.ids.len(),
                        "the added board's position does not match; it is not served");
                    return;
                }
                self.ids.push(id);
                self.views.push(View::default());
                if let Some(eboard) = eboard {
                    self.eboards.insert(board, eboard);
                }
            }
            ControlMsg::Added(added) => {
                let _ = added.send(());
            }
        }
    }

    fn request(&mut self, request: Request) {
        let Request {
            board,
            command,
            caller,
            reply,
        } = request;
        let hotplug = match &command {
            Command::DeviceAdded { path } => Some((path.clone(), true)),
            Command::DeviceRemoved { path } => Some((path.clone(), false)),
            _ => None,
        };
        if let Some((path, added)) = hotplug {
            let message = TimingMsg::Hotplug {
                path: PathBuf::from(path),
                added,
            };
            let answer = match self.timing.send(message) {
                Ok(()) => Ok(Reply::Done),
                Err(_) => Err(ControlError::Internal(
                    "the timing thread has stopped".into(),
                )),
            };
            let _ = reply.send(answer);
            return;
        }
        let Some(index) = self.index(&board) else {
            let _ = reply.send(Err(ControlError::UnknownBoard(format!(
                "no board `{board}`; this daemon runs: {}",
                self.ids.join(", ")
            ))));
            return;
        };
        let change = match command {
            Command::State | Command::History | Command::Snapshot | Command::Pgn => {
                let _ = reply.send(self.read(index, &command));
                return;
            }
            Command::Games | Command::GameHistory { .. } | Command::GamePgn { .. } => {
                self.read_stored(index, command, reply);
                return;
            }
            Command::AdjustBy { side, delta_ms } => BoardCommand::AdjustBy { side, delta_ms },
            Command::UndoPress => BoardCommand::UndoPress,
            Command::AckCall => BoardCommand::AckCall,
            Command::CancelStart => BoardCommand::CancelStart,
            Command::Note { text } => BoardCommand::Note(text),
            Command::NewGame { control } => match self.resolve(&control) {
                Ok(spec) => BoardCommand::NewGame(spec),
                Err(error) => {
                    let _ = reply.send(Err(error));
                    return;
                }
            },
            Command::SetTags { tags } => BoardCommand::SetTags(tags),
            Command::SetResult {
                result,
                termination,
            } => BoardCommand::SetResult {
                result,
                termination,
            },
            Command::Start => BoardCommand::Start,
            Command::StartAt {
                unix_time_us,
                force,
            } => BoardCommand::StartAt {
                unix_time_us,
                forced: force,
            },
            Command::Pause => BoardCommand::Pause,
            Command::Resume => BoardCommand::Resume,
            Command::Press { side } => BoardCommand::Press(side),
            Command::Adjust {
                side,
                remaining_ms,
                moves,
                stage,
            } => BoardCommand::Adjust {
                side,
                remaining_ms,
                moves,
                stage,
            },
            Command::DeviceAdded { .. } | Command::DeviceRemoved { .. } => return,
        };
        let token = self.next_token;
        self.next_token += 1;
        let message = TimingMsg::Command {
            board: index,
            token,
            caller,
            command: change,
        };
        match self.timing.send(message) {
            Ok(()) => {
                self.waiting.insert(token, reply);
            }
            Err(_) => {
                let _ = reply.send(Err(ControlError::Internal(
                    "the timing thread has stopped".into(),
                )));
            }
        }
    }

    /// A control's text (notation or preset) as the board core takes it.
    fn resolve(&self, control: &str) -> Result<GameSpec, ControlError> {
        // Too long a text is not written back in the error.
        chessclock_core::limits::check_chars(
            "the time control",
            control,
            chessclock_core::limits::MAX_CONTROL,
        )
        .map_err(ControlError::InvalidArgument)?;
        let (resolved, settings) = self
            .config
            .resolve_control(control)
            .map_err(|e| ControlError::InvalidArgument(format!("control `{control}`: {e}")))?;
        Ok(GameSpec {
            text: control.to_owned(),
            control: resolved,
            settings,
        })
    }

    fn read(&self, index: usize, command: &Command) -> Result<Reply, ControlError> {
        let view = &self.views[index];
        let id = &self.ids[index];
        let not_yet = || ControlError::Internal(format!("board `{id}` is still starting"));
        let now = self.time.monotonic_us();
        match command {
            Command::State => {
                let model = view.model.as_ref().ok_or_else(not_yet)?;
                json(&model.state_view(now))
            }
            Command::Snapshot => {
                let model = view.model.as_ref().ok_or_else(not_yet)?;
                Ok(Reply::Snapshot(model.snapshot(now)))
            }
            Command::History => {
                let header = view.header.as_ref().ok_or_else(not_yet)?;
                json(&HistoryRef {
                    header,
                    events: &view.history,
                })
            }
            Command::Pgn => view.pgn.clone().map(Reply::Text).ok_or_else(|| {
                ControlError::InvalidState(format!(
                    "board `{id}` has no live PGN (it needs an electronic board in the config)"
                ))
            }),
            _ => Err(ControlError::Internal("not a read".into())),
        }
    }
}

impl Control {
    /// Finds the database's number of board `board`'s newest game (a game
    /// started in this run: its `NewHistory` comes after its commit), on
    /// the blocking pool, so that `history` and `export` of the current
    /// game say which game they are.
    fn look_up_number(&self, board: usize, created_wall_us: i64) {
        let (Some(reader), Some(id)) = (self.reader.clone(), self.ids.get(board).cloned()) else {
            return;
        };
        let found = self.game_numbers.clone();
        tokio::task::spawn_blocking(move || {
            let Ok(reader) = reader.lock() else {
                return;
            };
            if let Ok(Some(&number)) = reader.games(&id).as_deref().map(<[i64]>::last) {
                let _ = found.send((board, created_wall_us, number));
            }
        });
    }

    /// Gives the current game of `board` its number, unless a newer game
    /// replaced it meanwhile.
    fn number_game(&mut self, board: usize, created_wall_us: i64, number: i64) {
        if let Some(header) = self
            .views
            .get_mut(board)
            .and_then(|view| view.header.as_mut())
            .filter(|h| h.created_wall_us == created_wall_us && h.game.is_none())
        {
            header.game = Some(number);
        }
    }

    /// A read of the state database (past games): on the blocking pool,
    /// answered from there; the control loop goes on at once.
    fn read_stored(
        &self,
        index: usize,
        command: Command,
        reply: oneshot::Sender<Result<Reply, ControlError>>,
    ) {
        let id = self.ids[index].clone();
        let Some(reader) = self.reader.clone() else {
            let _ = reply.send(Err(ControlError::InvalidState(
                "past games are not available: the daemon runs without a state database file"
                    .into(),
            )));
            return;
        };
        let config = self.config.clone();
        tokio::spawn(async move {
            let answer = tokio::task::spawn_blocking(move || {
                let Ok(reader) = reader.lock() else {
                    return Err(ControlError::Internal("the game reader is broken".into()));
                };
                stored_read(&reader, &config, &id, &command)
            })
            .await
            .unwrap_or_else(|_| Err(ControlError::Internal("the game reader failed".into())));
            let _ = reply.send(answer);
        });
    }
}

/// Answers a read of stored games for board `id` (blocking).
fn stored_read(
    reader: &StoreReader,
    config: &Config,
    id: &str,
    command: &Command,
) -> Result<Reply, ControlError> {
    let setup = config
        .boards
        .iter()
        .find(|b| b.id == id)
        .map(|b| super::board_setup(config, b, None))
        .ok_or_else(|| ControlError::UnknownBoard(format!("no board `{id}`")))?;
    let database = |e: super::store::StoreError| {
        ControlError::Internal(format!("cannot read the state database: {e}"))
    };
    let load = |game: i64| -> Result<(StoredGame, GameSpec), ControlError> {
        let stored = reader.game(game).map_err(|_| {
            ControlError::InvalidArgument(format!(
                "board `{id}` has no game {game} (chessclockctl games {id} lists them)"
            ))
        })?;
        if stored.board != id {
            return Err(ControlError::InvalidArgument(format!(
                "game {game} is a game of board `{}`, not of `{id}` (chessclockctl games {id} \
                 lists this board's)",
                stored.board
            )));
        }
        let spec = super::game_spec(config, &stored.control).map_err(|e| {
            ControlError::InvalidState(format!(
                "game {game}'s control `{}` no longer resolves: {e}",
                stored.control
            ))
        })?;
        Ok((stored, spec))
    };
    match command {
        Command::Games => {
            let ids = reader.games(id).map_err(database)?;
            let last = ids.last().copied();
            let mut games = Vec::with_capacity(ids.len());
            for game in ids {
                let (stored, spec) = load(game)?;
                let history = Board::stored_history(setup.clone(), spec, &stored);
                games.push(GameSummary::of(game, &history, Some(game) == last));
            }
            json(&games)
        }
        Command::GameHistory { game } => {
            let (stored, spec) = load(*game)?;
            json(&Board::stored_history(setup, spec, &stored))
        }
        Command::GamePgn { game } => {
            let (stored, spec) = load(*game)?;
            Board::stored_pgn(setup, spec, &stored)
                .map(Reply::Text)
                .ok_or_else(|| {
                    ControlError::InvalidState(format!(
                        "game {game} of board `{id}` has no PGN (it needs an electronic board \
                         in the config)"
                    ))
                })
        }
        _ => Err(ControlError::Internal("not a read of stored games".into())),
    }
}

fn json(value: &impl Serialize) -> Result<Reply, ControlError> {
    serde_json::to_string(value)
        .map(Reply::Json)
        .map_err(|e| ControlError::Internal(format!("cannot encode the view: {e}")))
}

/// Writes the live PGN files in the order they changed, off the async
/// workers (each write fsyncs); a file whose next text is already queued
/// is skipped.
async fn write_pgn_files(mut files: tokio_mpsc::UnboundedReceiver<(PathBuf, String, String)>) {
    while let Some(first) = files.recv().await {
        let mut batch = vec![first];
        while let Ok(more) = files.try_recv() {
            batch.push(more);
        }
        let mut latest: Vec<(PathBuf, String, String)> = Vec::new();
        for (dir, file, text) in batch {
            latest.retain(|(d, f, _)| !(d == &dir && f == &file));
            latest.push((dir, file, text));
        }
        let written = tokio::task::spawn_blocking(move || {
            for (dir, file, text) in latest {
                if let Err(error) = super::eboard::write_pgn(&dir, &file, &text) {
                    tracing::warn!(dir = %dir.display(), file, %error, "cannot write the live PGN");
                }
            }
        })
        .await;
        if written.is_err() {
            tracing::error!("the live PGN writer failed");
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

    use std::sync::atomic::AtomicU64;

    use serde_json::Value;

    use super::super::store::StoreMsg;
    use super::super::timing::{Timing, TimingIo};
    use super::super::{board_setup, game_spec, DeviceBackend, DeviceDriver};
    use super::*;
    use crate::config::{BoardConfig, ButtonSide, DeviceRef};
    use crate::control::Caller;
    use crate::devices::{DeviceCommand, DeviceKey};
    use crate::engine::Side;
    use chessclock_core::board::{BoardInput, ReplyToken};
    use chessclock_host::clock::{monotonic_now_us, wall_now_us};

    struct NoDevices;

    impl DeviceBackend for NoDevices {
        fn send(&self, _: &DeviceKey, _: DeviceCommand) {}
        fn device_added(&self, _: &Path) {}
        fn device_removed(&self, _: &Path) {}
    }

    /// The timing thread's side of one board and the control loop, joined
    /// by hand: the test decides when each record commits and when a
    /// reader's request is taken.
    struct Rig {
        timing: Timing,
        io: TimingIo,
        store: std::sync::mpsc::Receiver<StoreMsg>,
        to_control: tokio_mpsc::UnboundedReceiver<ControlMsg>,
        control: Control,
        heard: broadcast::Receiver<BoardEvent>,
        /// Events checked so far (other than state snapshots and rows).
        checked: Vec<String>,
    }

    impl Rig {
        fn new(control_text: &str) -> Rig {
            let mut config = Config::default();
            config.boards.push(BoardConfig {
                short_control: false,
                id: "b1".into(),
                control: control_text.into(),
                buttons: Some(DeviceRef::Path("/dev/fake-buttons".into())),
                displays: vec![],
                eboard: None,
                white_button: ButtonSide::Left,
                start_on_black_press: false,
                event: None,
                site: None,
                round: None,
                white: None,
                black: None,
            });
            let setup = board_setup(&config, &config.boards[0], None);
            let spec = game_spec(&config, control_text).unwrap();
            let (board, actions) = Board::new(
                setup,
                spec,
                None,
                Caller::DAEMON,
                monotonic_now_us(),
                wall_now_us(),
            );
            let (store_tx, store) = std::sync::mpsc::channel();
            let (control_tx, to_control) = tokio_mpsc::unbounded_channel();
            let (timing, _) = Timing::new(
                vec![(board, actions)],
                store_tx,
                control_tx,
                Arc::new(AtomicU64::new(0)),
                TimeSource::System,
            );
            let (_inputs_tx, inputs) = tokio_mpsc::unbounded_channel();
            let (_devices_tx, device_events) = tokio_mpsc::unbounded_channel();
            let (_commits_tx, commits) = tokio_mpsc::unbounded_channel();
            let io = TimingIo {
                inputs,
                device_events,
                commits,
                devices: DeviceDriver::Custom(Box::new(NoDevices)),
            };
            let (timing_tx, _) = tokio_mpsc::unbounded_channel();
            let (events, heard) = broadcast::channel(256);
            let control = Control::new(
                config,
                timing_tx,
                events,
                HashMap::new(),
                None,
                TimeSource::System,
            );
            let mut rig = Rig {
                timing,
                io,
                store,
                to_control,
                control,
                heard,
                checked: Vec::new(),
            };
            rig.settle();
            rig
        }

        /// A command for the board, then everything it caused settled.
        fn command(&mut self, token: u64, command: BoardCommand) {
            let input = BoardInput::Command {
                token: Some(ReplyToken(token)),
                caller: Caller::uid(0),
                command,
            };
            self.timing.handle(&self.io, 0, monotonic_now_us(), input);
            self.timing.send_store_jobs();
            self.settle();
        }

        /// Commits the records one at a time (the store may commit an
        /// input's records apart) and hands the control loop the timing
        /// thread's messages one at a time; after each message, a reader
        /// that heard an event reads the board at once: the earliest a
        /// D-Bus client (or the hall, which re-reads the state on an event)
        /// can.
        fn settle(&mut self) {
            loop {
                while let Ok(message) = self.to_control.try_recv() {
                    self.control.answer(message);
                    self.read_on_every_event();
                }
                match self.store.try_recv() {
                    Ok(StoreMsg::Job(job)) => {
                        let committed = BoardInput::Committed {
                            seq: job.seq,
                            ok: true,
                        };
                        self.timing
                            .handle(&self.io, job.board, monotonic_now_us(), committed);
                        self.timing.send_store_jobs();
                    }
                    Ok(_) => {}
                    Err(_) => return,
                }
            }
        }

        fn state(&self) -> Value {
            match self.control.read(0, &Command::State).unwrap() {
                Reply::Json(json) => serde_json::from_str(&json).unwrap(),
                other => panic!("unexpected {other:?}"),
            }
        }

        fn read_on_every_event(&mut self) {
            while let Ok(event) = self.heard.try_recv() {
                let state = self.state();
                let side_of = |side: Side| &state[side.as_str()];
                match &event {
                    BoardEvent::Pressed {
                        side, move_number, ..
                    } => assert!(
                        side_of(*side)["moves"].as_u64() >= Some(u64::from(*move_number)),
                        "{event:?} heard, then the state read {state}"
                    ),
                    BoardEvent::StageChanged { side, stage, .. } => assert!(
                        side_of(*side)["stage"].as_u64() >= Some(u64::from(*stage)),
                        "{event:?} heard, then the state read {state}"
                    ),
                    BoardEvent::FlagFell { side, .. } => assert!(
                        state["flags"]
                            .as_array()
                            .is_some_and(|f| f.iter().any(|s| s == side.as_str())),
                        "{event:?} heard, then the state read {state}"
                    ),
                    BoardEvent::StateChanged(_) | BoardEvent::Recorded { .. } => continue,
                    _ => {}
                }
                self.checked.push(format!("{event:?}"));
            }
        }
    }

    /// The D-Bus promise (and the hall's, which reads the state when it
    /// hears an event): whoever hears `Pressed` or `StageChanged` and then
    /// calls `State()` sees the move and the stage. The reader's call is
    /// taken in the worst place, right after the event went out; the
    /// records commit one at a time.
    #[tokio::test]
    async fn a_state_read_right_after_an_event_sees_what_it_announces() {
        let mut rig = Rig::new("2/60:60");
        rig.command(1, BoardCommand::Start);
        rig.command(2, BoardCommand::Press(Side::White));
        rig.command(3, BoardCommand::Press(Side::Black));
        // White's second move reaches the second stage.
        rig.command(4, BoardCommand::Press(Side::White));
        let state = rig.state();
        assert_eq!(state["white"]["moves"], 2, "{state}");
        assert_eq!(state["white"]["stage"], 2, "{state}");
        let stages = rig
            .checked
            .iter()
            .filter(|e| e.starts_with("StageChanged"))
            .count();
        let presses = rig
            .checked
            .iter()
            .filter(|e| e.starts_with("Pressed"))
            .count();
        assert_eq!((presses, stages), (3, 1), "{:?}", rig.checked);
    }
}
