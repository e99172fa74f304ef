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
//! `StateChanged` snapshot for every new view), writes the live PGN files
//! and carries the commands for the electronic-board tasks.
//!
//! Promises: a read sees only committed state; the state it shows is the
//! board's at the instant of the read, computed exactly as the engine would
//! (`BoardModel::state`); a reply whose caller went away is dropped.

use std::collections::HashMap;
use std::path::PathBuf;

use serde::Serialize;
use tokio::sync::{broadcast, mpsc as tokio_mpsc, oneshot};

use super::timing::{ControlMsg, TimingMsg};
use crate::clock::monotonic_now_us;
use crate::config::Config;
use crate::control::{BoardEvent, Command, ControlError, Reply, Request};
use crate::eboard::EboardHandle;
use chessclock_core::board::{BoardCommand, GameSpec};
use chessclock_core::views::{BoardModel, GameHeader, HistoryRow};

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
    ids: Vec<String>,
    views: Vec<View>,
    waiting: HashMap<u64, oneshot::Sender<Result<Reply, ControlError>>>,
    next_token: u64,
    timing: tokio_mpsc::UnboundedSender<TimingMsg>,
    events: broadcast::Sender<BoardEvent>,
    eboards: HashMap<usize, EboardHandle>,
    /// The live PGN files, written in order by one task.
    pgn_files: tokio_mpsc::UnboundedSender<(PathBuf, String, String)>,
}

impl Control {
    pub fn new(
        config: Config,
        timing: tokio_mpsc::UnboundedSender<TimingMsg>,
        events: broadcast::Sender<BoardEvent>,
        eboards: HashMap<usize, EboardHandle>,
    ) -> Control {
        let ids: Vec<String> = config.boards.iter().map(|b| b.id.clone()).collect();
        let (pgn_files, pending_files) = tokio_mpsc::unbounded_channel();
        tokio::spawn(write_pgn_files(pending_files));
        Control {
            pgn_files,
            views: ids.iter().map(|_| View::default()).collect(),
            ids,
            config,
            waiting: HashMap::new(),
            next_token: 1,
            timing,
            events,
            eboards,
        }
    }

    /// Runs until stopped (or every input is gone). Stops the e-board
    /// tasks on the way out.
    pub async fn run(mut self, mut inputs: ControlInputs) {
        loop {
            tokio::select! {
                biased;
                _ = &mut inputs.stop => break,
                Some(message) = inputs.from_timing.recv() => self.answer(message),
                Some(request) = inputs.requests.recv() => self.request(request),
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
                if let Some(view) = self.views.get_mut(board) {
                    view.header = Some(*header);
                    view.history.clear();
                }
            }
            ControlMsg::Pgn { board, text } => {
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
        let now = monotonic_now_us();
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
