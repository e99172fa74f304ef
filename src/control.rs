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

use std::sync::{Arc, RwLock};

pub use chessclock_core::contract::{
    BoardEvent, BoardSnapshot, Caller, Command, ControlError, DeviceLink, FindingKind, Reply,
    SaveFailure, SavingTrouble, StateFinding, StateHealth, StateMode,
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
    /// The board ids, in config order; a SIGHUP reload may add boards
    /// (at the end), never remove or reorder them.
    pub boards: BoardIds,
    /// What the state store found when it opened the state, and (live)
    /// whether it saves as it should.
    pub health: SharedHealth,
    /// The host's radios and clock synchronisation (checked by
    /// [`crate::host::watch`], which the daemon runs).
    pub host: crate::host::SharedHostHealth,
    /// Why the hall (`[hall]`) is off although configured, if it is.
    pub hall: HallStatus,
}

/// Why the configured hall could not be set up (an unreadable credentials
/// file, a CA that holds no certificate): set once at start-up by the
/// daemon, read by the D-Bus layer into every `State()` (`hall_off`). The
/// clocks run without the hall; `[hall]` changes need a restart anyway.
#[derive(Clone, Debug, Default)]
pub struct HallStatus(Arc<RwLock<Option<String>>>);

impl HallStatus {
    /// The hall is off for `reason`.
    pub fn set_off(&self, reason: String) {
        match self.0.write() {
            Ok(mut slot) => *slot = Some(reason),
            Err(poisoned) => *poisoned.into_inner() = Some(reason),
        }
    }

    /// Why the hall is off, if it is. A poisoned lock still holds a whole
    /// value (it is only ever replaced whole), so it is read anyway.
    pub fn off(&self) -> Option<String> {
        match self.0.read() {
            Ok(slot) => slot.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

/// The state store's health, shared: what opening the state found (fixed)
/// and its trouble saving (live: the store thread sets it at the first
/// failed commit and clears it once all is saved). One writer, any number
/// of readers; a read is one `Arc` clone, so no reader ever waits for the
/// store and the store never waits for a reader.
#[derive(Clone, Debug)]
pub struct SharedHealth(Arc<tokio::sync::watch::Sender<Arc<StateHealth>>>);

impl Default for SharedHealth {
    fn default() -> SharedHealth {
        SharedHealth::new(StateHealth::default())
    }
}

impl SharedHealth {
    pub fn new(health: StateHealth) -> SharedHealth {
        SharedHealth(Arc::new(tokio::sync::watch::Sender::new(Arc::new(health))))
    }

    /// The health now.
    pub fn get(&self) -> Arc<StateHealth> {
        Arc::clone(&self.0.borrow())
    }

    /// Sets the live trouble saving (`None`: all saved); readers that
    /// [`SharedHealth::subscribe`]d hear of a change.
    pub fn set_saving(&self, saving: Option<SavingTrouble>) {
        self.0.send_if_modified(|health| {
            if health.saving == saving {
                return false;
            }
            Arc::make_mut(health).saving = saving;
            true
        });
    }

    /// Wakes its holder at each change.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<Arc<StateHealth>> {
        self.0.subscribe()
    }
}

/// The ids of the running boards, shared by every clone of a
/// [`ControlHandle`]: a board added by a reload is seen by all of them.
#[derive(Clone, Debug, Default)]
pub struct BoardIds(Arc<RwLock<Vec<String>>>);

impl BoardIds {
    pub fn new(ids: Vec<String>) -> BoardIds {
        BoardIds(Arc::new(RwLock::new(ids)))
    }

    /// The ids now, in order. A poisoned lock still holds a valid list
    /// (writers only push), so it is read anyway.
    pub fn list(&self) -> Vec<String> {
        match self.0.read() {
            Ok(ids) => ids.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    pub fn len(&self) -> usize {
        self.list().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn contains(&self, id: &str) -> bool {
        self.list().iter().any(|known| known == id)
    }

    /// Adds a board at the end (the runtime, on reload).
    pub fn push(&self, id: String) {
        match self.0.write() {
            Ok(mut ids) => ids.push(id),
            Err(poisoned) => poisoned.into_inner().push(id),
        }
    }
}

impl FromIterator<String> for BoardIds {
    fn from_iter<I: IntoIterator<Item = String>>(ids: I) -> BoardIds {
        BoardIds::new(ids.into_iter().collect())
    }
}

impl From<Vec<String>> for BoardIds {
    fn from(ids: Vec<String>) -> BoardIds {
        BoardIds::new(ids)
    }
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
