//! The timing thread: the thin shell around every board's core.
//!
//! It owns the board cores (`chessclock_core::board::Board`) and carries out
//! what they decide: frames to the device links (which run on this thread's
//! own current-thread tokio runtime, so a press travels from the button
//! unit's port to the display's port without waking another thread),
//! records to the store thread, and everything that waits for a commit
//! (replies, events, the readers' views) to the control loop. It waits on
//! its inputs, the devices' events, the store's commits, an absolute
//! `timerfd` ([`DeadlineTimer`]) armed for the earliest board deadline and
//! a set of the wall clock ([`WallWatch`]), after which every board hears
//! the new wall time at once (a scheduled start follows the wall clock).
//!
//! Promises: nothing here decides anything about a game (the board core
//! does); no JSON is built and no reader is answered on this thread; per
//! input the work is one board's `handle` plus sending its actions, so a
//! reader costs it nothing. A press's display frames are handed to the
//! links before its record goes to the store.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};

use tokio::sync::mpsc as tokio_mpsc;

use super::deadline::{DeadlineTimer, WallWatch};
use super::store::{Commit, Job, StoreMsg};
use super::time::TimeSource;
use crate::control::Caller;
use crate::devices::{DeviceEvent, DeviceKey, Due};
use crate::eboard::EboardEvent;
use crate::engine::{Micros, MS};
use chessclock_core::board::{
    Action, Board, BoardCommand, BoardInput, BoardSetup, DeviceInput, GameSpec, ReplyToken,
    WALL_SLACK,
};
use chessclock_core::contract::BoardEvent;
use chessclock_core::eboard::EboardCommand;
use chessclock_core::views::{BoardModel, GameHeader, HistoryRow};

/// Longest wait without a wake-up (the watchdog heartbeat).
const MAX_WAIT: Micros = 500 * MS;

/// Messages for the timing thread.
#[derive(Debug)]
pub enum TimingMsg {
    /// A change for board `board` (its index); the reply comes back with
    /// `token`.
    Command {
        board: usize,
        token: u64,
        caller: Caller,
        command: BoardCommand,
    },
    /// From the electronic board of board `board`.
    Eboard {
        board: usize,
        event: EboardEvent,
    },
    /// SIGHUP: new settings per board (by index), and the whole config
    /// for the control loop.
    Reload {
        boards: Vec<(usize, BoardSetup, GameSpec)>,
        config: Box<crate::config::Config>,
    },
    /// SIGHUP added a board: its core (built by the runtime) goes last in
    /// the list, its devices are linked, and the control loop learns it
    /// before any of its views (`added` is completed by the control loop).
    AddBoard(Box<AddedBoard>),
    /// A device node appeared or went away (udev via D-Bus `AddDevice`).
    Hotplug {
        path: std::path::PathBuf,
        added: bool,
    },
    Shutdown,
}

/// A board a reload adds (see [`TimingMsg::AddBoard`]).
#[derive(Debug)]
pub struct AddedBoard {
    pub config: crate::config::BoardConfig,
    pub board: Board,
    pub actions: Vec<Action>,
    pub eboard: Option<crate::eboard::EboardHandle>,
    pub added: tokio::sync::oneshot::Sender<()>,
}

/// What the timing thread hands to the control loop (all of it already
/// committed where it must be).
#[derive(Debug)]
pub enum ControlMsg {
    Reply {
        token: u64,
        result: Result<crate::control::Reply, crate::control::ControlError>,
    },
    Publish(BoardEvent),
    View {
        board: usize,
        model: Box<BoardModel>,
    },
    History {
        board: usize,
        row: Box<HistoryRow>,
    },
    ReviseHistory {
        board: usize,
        revision: Box<chessclock_core::views::RowRevision>,
    },
    NewHistory {
        board: usize,
        header: Box<GameHeader>,
    },
    /// The board's PGN changed: the game to render (the control loop
    /// renders it; the timing thread renders no PGN).
    Pgn {
        board: usize,
        game: Box<chessclock_core::eboard::PgnGame>,
    },
    Eboard {
        board: usize,
        command: EboardCommand,
    },
    /// A reload's config (presets, PGN directory).
    Config(Box<crate::config::Config>),
    /// A reload added board `board` (its index): sent before anything of
    /// the board.
    BoardAdded {
        board: usize,
        id: String,
        eboard: Option<crate::eboard::EboardHandle>,
    },
    /// Sent after what building an added board asked for (its first view):
    /// the control loop completes it, so the reload returns only once the
    /// board can be read.
    Added(tokio::sync::oneshot::Sender<()>),
}

/// What the timing thread's event loop listens to and drives besides its
/// boards.
pub struct TimingIo {
    pub inputs: tokio_mpsc::UnboundedReceiver<TimingMsg>,
    pub device_events: tokio_mpsc::UnboundedReceiver<DeviceEvent>,
    pub commits: tokio_mpsc::UnboundedReceiver<Commit>,
    pub devices: super::DeviceDriver,
}

/// The timing thread's state.
pub struct Timing {
    boards: Vec<Board>,
    store: mpsc::Sender<StoreMsg>,
    control: tokio_mpsc::UnboundedSender<ControlMsg>,
    heartbeat: Arc<AtomicU64>,
    /// Where this thread reads the time and waits (see `super::time`).
    time: TimeSource,
    lateness: crate::lateness::Lateness,
    /// Records for the store, sent after the device links had their turn.
    store_jobs: Vec<Job>,
    /// Each board's [`Board::next_deadline`] as of its last input (a board
    /// changes only by `handle`, so this is exact between inputs).
    deadlines: Vec<Option<Micros>>,
    /// `(due, board)` for every board with a deadline, earliest first; an
    /// entry whose due no longer matches `deadlines` is stale and skipped.
    /// A wake-up visits only the boards whose deadline came, not all of
    /// them.
    due: BinaryHeap<Reverse<(Micros, usize)>>,
    /// Board id to index, for the devices' events.
    by_id: HashMap<String, usize>,
    /// The boards due in this tick (kept to reuse its allocation).
    came: Vec<(usize, Micros)>,
    /// The wall clock less the monotonic one when last looked at: a change
    /// beyond `WALL_SLACK` is a set of the wall clock.
    wall_offset: Micros,
}

impl Timing {
    /// Takes the boards (built or restored by the runtime) and what their
    /// construction asked for.
    pub fn new(
        boards: Vec<(Board, Vec<Action>)>,
        store: mpsc::Sender<StoreMsg>,
        control: tokio_mpsc::UnboundedSender<ControlMsg>,
        heartbeat: Arc<AtomicU64>,
        time: TimeSource,
    ) -> (Timing, Vec<(DeviceKey, crate::devices::DeviceCommand)>) {
        let mut timing = Timing {
            boards: Vec::with_capacity(boards.len()),
            store,
            control,
            heartbeat,
            time,
            lateness: crate::lateness::Lateness::default(),
            store_jobs: Vec::new(),
            deadlines: Vec::with_capacity(boards.len()),
            due: BinaryHeap::with_capacity(boards.len()),
            by_id: HashMap::with_capacity(boards.len()),
            came: Vec::new(),
            wall_offset: 0,
        };
        timing.wall_offset = timing.time.wall_us() - timing.time.monotonic_us();
        let mut first = Vec::new();
        for (index, (board, actions)) in boards.into_iter().enumerate() {
            timing.push_board(board);
            first.extend(timing.carry_out(index, actions));
        }
        timing.send_store_jobs();
        (timing, first)
    }

    /// Carries out one board's actions: device frames are returned (to hand
    /// to the links at once), store records are queued, the rest goes to
    /// the control loop.
    fn carry_out(
        &mut self,
        index: usize,
        actions: Vec<Action>,
    ) -> Vec<(DeviceKey, crate::devices::DeviceCommand)> {
        let mut device = Vec::new();
        let mut replies = Vec::new();
        let id = self.boards[index].id().to_owned();
        for action in actions {
            let message = match action {
                Action::Device { role, command } => {
                    device.push((
                        DeviceKey {
                            board: id.clone(),
                            role,
                        },
                        command,
                    ));
                    continue;
                }
                Action::Store { seq, record } => {
                    self.store_jobs.push(Job {
                        board: index,
                        id: id.clone(),
                        seq,
                        record,
                    });
                    continue;
                }
                Action::Reply { token, result } => {
                    replies.push(ControlMsg::Reply {
                        token: token.0,
                        result,
                    });
                    continue;
                }
                Action::Publish(event) => ControlMsg::Publish(event),
                Action::View(model) => ControlMsg::View {
                    board: index,
                    model,
                },
                Action::History(row) => ControlMsg::History { board: index, row },
                Action::ReviseHistory(revision) => ControlMsg::ReviseHistory {
                    board: index,
                    revision,
                },
                Action::NewHistory(header) => ControlMsg::NewHistory {
                    board: index,
                    header,
                },
                Action::Pgn(game) => ControlMsg::Pgn { board: index, game },
                Action::Eboard(command) => ControlMsg::Eboard {
                    board: index,
                    command,
                },
                Action::Running(running) => {
                    if self
                        .store
                        .send(StoreMsg::Running {
                            id: id.clone(),
                            running,
                        })
                        .is_err()
                    {
                        tracing::error!(
                            "the store thread is gone: checkpoints are not being saved"
                        );
                    }
                    continue;
                }
            };
            // A closed channel: the control loop is gone (shutting down).
            let _ = self.control.send(message);
        }
        // The replies last: the control loop runs on another thread, and a
        // caller that reads right after its reply must find the view its
        // change made already queued ahead of its read.
        for reply in replies {
            let _ = self.control.send(reply);
        }
        device
    }

    /// Hands the queued records to the store thread, in order.
    pub(super) fn send_store_jobs(&mut self) {
        for job in self.store_jobs.drain(..) {
            if self.store.send(StoreMsg::Job(Box::new(job))).is_err() {
                tracing::error!("the store thread is gone: records are not being saved");
            }
        }
    }

    fn board_of(&self, key: &DeviceKey) -> Option<usize> {
        self.by_id.get(&key.board).copied()
    }

    /// Adds a board last in the list, with its deadline.
    fn push_board(&mut self, board: Board) {
        let index = self.boards.len();
        self.by_id.insert(board.id().to_owned(), index);
        self.boards.push(board);
        self.deadlines.push(None);
        self.update_deadline(index);
    }

    /// Reads board `index`'s deadline again (after an input) and queues it
    /// when it changed.
    fn update_deadline(&mut self, index: usize) {
        let Some(board) = self.boards.get(index) else {
            return;
        };
        let next = board.next_deadline();
        let Some(slot) = self.deadlines.get_mut(index) else {
            return;
        };
        if *slot != next {
            *slot = next;
            if let Some(due) = next {
                self.due.push(Reverse((due, index)));
            }
        }
    }

    /// One input for one board; its device frames go to the links at once.
    pub(super) fn handle(&mut self, io: &TimingIo, index: usize, now: Micros, input: BoardInput) {
        let due = match &input {
            BoardInput::Device(DeviceInput::Button { arrival, .. }) => Due::Press(*arrival),
            _ => Due::Unmeasured,
        };
        self.handle_due(io, index, now, input, due)
    }

    /// [`Timing::handle`] for an input whose effects were due at `due` (a
    /// board's deadline, which the wake-up may have passed): the links count
    /// the display frames' writes from there.
    fn handle_due(
        &mut self,
        io: &TimingIo,
        index: usize,
        now: Micros,
        input: BoardInput,
        due: Due,
    ) {
        let Some(board) = self.boards.get_mut(index) else {
            return;
        };
        let actions = board.handle(now, self.time.wall_us(), input);
        self.update_deadline(index);
        for (key, command) in self.carry_out(index, actions) {
            io.devices.send_due(&key, command, due);
        }
    }

    /// Drops stale entries off the top of the deadline queue: then its top
    /// is the earliest deadline of any board.
    fn prune_due(&mut self) {
        while let Some(&Reverse((due, index))) = self.due.peek() {
            if self.deadlines.get(index).copied().flatten() == Some(due) {
                return;
            }
            self.due.pop();
        }
    }

    /// Every board whose deadline came (and only those), each once per
    /// pass: a board still due after its tick is visited on the next wake.
    fn tick(&mut self, io: &TimingIo, now: Micros) {
        let mut came = std::mem::take(&mut self.came);
        loop {
            self.prune_due();
            match self.due.peek() {
                Some(&Reverse((due, index))) if due <= now => {
                    self.due.pop();
                    // Popped: queued again by `update_deadline`, whatever
                    // its deadline after the tick.
                    if let Some(slot) = self.deadlines.get_mut(index) {
                        *slot = None;
                    }
                    came.push((index, due));
                }
                _ => break,
            }
        }
        for &(index, due) in &came {
            self.handle_due(io, index, now, BoardInput::Tick, Due::Deadline(due));
        }
        came.clear();
        self.came = came;
        // Stale entries leave when they reach the top; a queue grown well
        // past the boards' number is rebuilt from the deadlines.
        if self.due.len() > 4 * self.boards.len() + 64 {
            self.due = self
                .deadlines
                .iter()
                .enumerate()
                .filter_map(|(index, due)| due.map(|due| Reverse((due, index))))
                .collect();
        }
    }

    /// When the wall clock was set (or slewed past `WALL_SLACK`) since the
    /// last look, every board hears it at once (a `Tick`), so a start
    /// scheduled on the wall clock follows it; else nothing: one reading of
    /// the wall clock per wake-up.
    fn follow_wall(&mut self, io: &TimingIo, now: Micros) {
        let offset = self.time.wall_us().saturating_sub(now);
        if offset.saturating_sub(self.wall_offset).saturating_abs() <= WALL_SLACK {
            return;
        }
        tracing::info!(
            moved_ms = offset.saturating_sub(self.wall_offset) / MS,
            "the wall clock was set"
        );
        self.wall_offset = offset;
        for index in 0..self.boards.len() {
            self.handle(io, index, now, BoardInput::Tick);
        }
    }

    fn next_wake(&mut self) -> Option<Micros> {
        self.prune_due();
        self.due.peek().map(|&Reverse((due, _))| due)
    }

    /// Waits until what building the boards recorded is committed (a
    /// restored game's restart and pause), so the daemon is ready only once
    /// what readers will see is durable.
    pub async fn settle(&mut self, io: &mut TimingIo) {
        while self.boards.iter().any(Board::waiting) {
            let Some(commit) = io.commits.recv().await else {
                tracing::error!("the store thread stopped while the games were being restored");
                return;
            };
            let now = self.time.monotonic_us();
            self.handle(
                io,
                commit.board,
                now,
                BoardInput::Committed {
                    seq: commit.seq,
                    ok: commit.ok,
                },
            );
            self.send_store_jobs();
        }
    }

    /// The thread's event loop, run on the timing thread's own
    /// current-thread tokio runtime together with the device links.
    /// Returns on [`TimingMsg::Shutdown`] or when every sender is gone,
    /// after the store committed what was queued and the last ACKs were
    /// handed to the devices.
    pub async fn run(mut self, mut io: TimingIo) {
        let mut timer = DeadlineTimer::on(&self.time);
        let mut wall = WallWatch::on(&self.time);
        loop {
            self.heartbeat.fetch_add(1, Ordering::Relaxed);
            let now = self.time.monotonic_us();
            self.follow_wall(&io, now);
            self.tick(&io, now);
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
                    let now = self.time.monotonic_us();
                    if let Some((index, input)) = self.device_input(event) {
                        self.handle(&io, index, now, input);
                        // The links write the press's frames before its
                        // record goes to the store.
                        tokio::task::yield_now().await;
                    }
                }
                Some(commit) = io.commits.recv() => {
                    let now = self.time.monotonic_us();
                    self.handle(&io, commit.board, now, BoardInput::Committed { seq: commit.seq, ok: commit.ok });
                }
                message = io.inputs.recv() => match message {
                    None | Some(TimingMsg::Shutdown) => break,
                    Some(TimingMsg::Hotplug { path, added }) => io.devices.hotplug(&path, added),
                    Some(TimingMsg::Command { board, token, caller, command }) => {
                        let now = self.time.monotonic_us();
                        self.handle(&io, board, now, BoardInput::Command {
                            token: Some(ReplyToken(token)),
                            caller,
                            command,
                        });
                        tokio::task::yield_now().await;
                    }
                    Some(TimingMsg::Eboard { board, event }) => {
                        let now = self.time.monotonic_us();
                        self.handle(&io, board, now, BoardInput::Eboard(event));
                    }
                    Some(TimingMsg::Reload { boards, config }) => {
                        let _ = self.control.send(ControlMsg::Config(config));
                        let now = self.time.monotonic_us();
                        for (index, setup, spec) in boards {
                            self.handle(&io, index, now, BoardInput::Reconfigure(Box::new(setup), Box::new(spec)));
                        }
                    }
                    Some(TimingMsg::AddBoard(added)) => self.add_board(&mut io, *added),
                },
                // A set of the wall clock: `follow_wall` above sees it.
                () = wall.set() => {}
                _ = timer.expired() => {
                    if timed {
                        self.lateness.record(self.time.monotonic_us() - until);
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
        if let Some([after_deadlines, after_presses]) = io.devices.display_writes() {
            for (writes, message) in [
                (
                    after_deadlines,
                    "display frames written after their deadline",
                ),
                (after_presses, "display frames written after their press"),
            ] {
                tracing::info!(
                    frames = writes.count(),
                    p50_us = writes.percentile_us(50),
                    p99_us = writes.percentile_us(99),
                    max_us = writes.max_us(),
                    "{message}"
                );
            }
        }
        self.send_store_jobs();
        let _ = self.store.send(StoreMsg::Shutdown);
        // The store commits what is queued, reports and exits (closing the
        // commits channel); the boards release the last ACKs.
        while let Some(commit) = io.commits.recv().await {
            let now = self.time.monotonic_us();
            self.handle(
                &io,
                commit.board,
                now,
                BoardInput::Committed {
                    seq: commit.seq,
                    ok: commit.ok,
                },
            );
        }
        let Timing { store, control, .. } = self;
        drop((store, control));
        io.devices.close().await;
    }

    /// Takes a board a reload added: the control loop hears of it first,
    /// then its links start, then what building it asked for is carried
    /// out (its first record and display frames).
    fn add_board(&mut self, io: &mut TimingIo, added: AddedBoard) {
        let AddedBoard {
            config,
            board,
            actions,
            eboard,
            added,
        } = added;
        let index = self.boards.len();
        let _ = self.control.send(ControlMsg::BoardAdded {
            board: index,
            id: board.id().to_owned(),
            eboard,
        });
        self.push_board(board);
        io.devices.add_board(&config);
        for (key, command) in self.carry_out(index, actions) {
            io.devices.send(&key, command);
        }
        self.send_store_jobs();
        let _ = self.control.send(ControlMsg::Added(added));
    }

    /// The board and input a device event is for.
    fn device_input(&self, event: DeviceEvent) -> Option<(usize, BoardInput)> {
        let (key, input) = match event {
            DeviceEvent::Connected { key, hello, path } => {
                let role = key.role;
                (key, DeviceInput::Connected { role, hello, path })
            }
            DeviceEvent::Disconnected { key, reason } => {
                let role = key.role;
                (key, DeviceInput::Disconnected { role, reason })
            }
            DeviceEvent::Button {
                key,
                serial,
                event,
                button,
                pressed,
                at,
                arrival,
            } => {
                let role = key.role;
                (
                    key,
                    DeviceInput::Button {
                        role,
                        serial,
                        event,
                        button,
                        pressed,
                        at,
                        arrival,
                    },
                )
            }
            DeviceEvent::Errors { key, count } => {
                let role = key.role;
                (key, DeviceInput::Errors { role, count })
            }
            DeviceEvent::Refused { key, path, reason } => {
                let role = key.role;
                (key, DeviceInput::Refused { role, path, reason })
            }
        };
        match self.board_of(&key) {
            Some(index) => Some((index, BoardInput::Device(input))),
            None => {
                tracing::warn!(board = %key.board, "an event from a device of an unknown board");
                None
            }
        }
    }
}
