//! The contract between the control surfaces (D-Bus, the udev entry point)
//! and the runtime that owns the boards.
//!
//! One owner: the runtime owns every board's engine and devices. A control
//! surface sends a [`Request`] over an mpsc channel and awaits the reply on a
//! oneshot; it learns about changes from the [`BoardEvent`] broadcast. No
//! shared locked state.
//!
//! The pure values of the contract (commands, replies, errors, events,
//! snapshots) live in `chessclock_core::contract` and are re-exported here;
//! this module adds the channels.

use tokio::sync::{broadcast, mpsc, oneshot};

use std::sync::Arc;

pub use chessclock_core::contract::{
    BoardEvent, BoardSnapshot, Caller, Command, ControlError, DeviceLink, FindingKind, Reply,
    StateFinding, StateHealth, StateMode,
};

/// A request for the runtime.
#[derive(Debug)]
pub struct Request {
    pub board: String,
    pub command: Command,
    pub caller: Caller,
    pub reply: oneshot::Sender<Result<Reply, ControlError>>,
}

/// What a control surface holds: where to send requests, where to listen.
#[derive(Clone, Debug)]
pub struct ControlHandle {
    pub requests: mpsc::Sender<Request>,
    pub events: broadcast::Sender<BoardEvent>,
    /// The board ids, in config order (fixed for the daemon's lifetime,
    /// except through SIGHUP reload).
    pub boards: Vec<String>,
    /// What the state store found when it opened the state (fixed for the
    /// daemon's lifetime).
    pub health: Arc<StateHealth>,
}

impl ControlHandle {
    /// Sends `command` for `board` and waits for the answer.
    pub async fn call(
        &self,
        board: &str,
        command: Command,
        caller: Caller,
    ) -> Result<Reply, ControlError> {
        let (reply, answer) = oneshot::channel();
        self.requests
            .send(Request {
                board: board.to_owned(),
                command,
                caller,
                reply,
            })
            .await
            .map_err(|_| ControlError::Internal("the daemon is shutting down".into()))?;
        answer
            .await
            .map_err(|_| ControlError::Internal("the daemon dropped the request".into()))?
    }
}
