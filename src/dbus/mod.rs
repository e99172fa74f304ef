//! The D-Bus API of the daemon: bus name `org.chessclockd.ChessClock1`, a
//! manager object and one object per board (see `protocol/dbus/` for the
//! introspection XML and README for the names).
//!
//! Promises:
//! * one owner of state: the objects hold a [`ControlHandle`] and a cached
//!   snapshot that only the runtime's [`BoardEvent`] broadcast updates; every
//!   method is a [`crate::control::Command`] the runtime answers;
//! * reads are open; every change needs root or membership of
//!   `[daemon] admin-group`, decided from the caller's credentials, and
//!   carries the caller's uid to the runtime (recorded in the history);
//!   the group is the one configured now: after a reload ([`reconfigure`])
//!   the next call is decided by the new group;
//! * a board added by a reload gets its object under [`board_path`] and is
//!   listed by `ListBoards` (in config order, after the boards it had);
//! * bad arguments get `org.chessclockd.ChessClock1.Error.InvalidArgument`
//!   before the runtime sees them: nothing changes (a time control that is
//!   empty, has spaces at either end, or gives no time is one); arguments
//!   given to a method that takes none get
//!   `org.freedesktop.DBus.Error.InvalidArgs`;
//! * the state store's health ([`crate::control::StateHealth`]) is in every
//!   board's `State()` under `state_health` and in the manager's
//!   `StateHealth` property; when the configured hall could not be set up
//!   ([`crate::control::HallStatus`]), every `State()` says why under
//!   `hall_off`;
//! * `PropertiesChanged` for every state change (one signal per change, with
//!   every changed property), never per clock tick: clients extrapolate from
//!   `SnapshotMs` with `Manager.Now()`;
//! * a signal is never ahead of its state: a client that hears `Pressed`,
//!   `StageChanged` or any other board signal and then calls `State()` or
//!   reads a property sees the change (the runtime broadcasts the view
//!   before the events, and the signals go out in the broadcast's order).

pub mod auth;
pub mod board;
pub mod client;
pub mod error;
pub mod limit;
pub mod manager;
pub mod ntp;
pub mod presets;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast;
use zbus::connection;
use zbus::Connection;

pub use board::{Board, BOARD_INTERFACE};
pub use error::Error;
pub use manager::{Manager, MANAGER_INTERFACE};
pub use ntp::NtpSource;

use crate::config::{BusKind, Config};
use crate::control::{BoardEvent, BoardSnapshot, Caller, ControlHandle};

/// The well-known bus name.
pub const BUS_NAME: &str = "org.chessclockd.ChessClock1";
/// The manager object's path.
pub const MANAGER_PATH: &str = "/org/chessclockd/ChessClock1";
/// The prefix of board object paths (`<prefix>/<id>`).
pub const BOARD_PATH_PREFIX: &str = "/org/chessclockd/ChessClock1/board";

/// The object path of a board.
pub fn board_path(id: &str) -> String {
    format!("{BOARD_PATH_PREFIX}/{id}")
}

/// The board id of a board object path, if it is one.
pub fn board_id(path: &str) -> Option<&str> {
    path.strip_prefix(BOARD_PATH_PREFIX)?.strip_prefix('/')
}

/// Why the API could not be served.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(
        "board id `{0}` cannot be a D-Bus object path component: use only letters, digits and _"
    )]
    BadBoardId(String),
    #[error("cannot serve {BUS_NAME} on the {bus} bus: {source}")]
    Bus {
        bus: String,
        #[source]
        source: zbus::Error,
    },
}

/// How to serve, beyond the connection itself.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// The daemon's configuration (admin group, NTP requirement, presets).
    pub config: Config,
    /// Request [`BUS_NAME`] (off for peer-to-peer connections).
    pub request_name: bool,
    /// Where NTP synchronisation is read for scheduled starts.
    pub ntp: NtpSource,
    /// How much each caller (and everyone) may read.
    pub read_limits: limit::Limits,
}

impl ServeOptions {
    /// The daemon's options: own the name, ask timedated on the system bus.
    pub fn from_config(config: &Config) -> ServeOptions {
        ServeOptions {
            config: config.clone(),
            request_name: true,
            ntp: NtpSource::SystemBus,
            read_limits: limit::Limits::default(),
        }
    }
}

/// What every object shares. The settings a reload may change are in
/// `live` (see [`reconfigure`]); the rest is fixed for the connection's
/// lifetime.
#[derive(Debug)]
pub(crate) struct Context {
    pub(crate) live: std::sync::RwLock<Live>,
    pub(crate) ntp: NtpSource,
    pub(crate) reads: std::sync::Mutex<ReadShares>,
    pub(crate) health: crate::control::SharedHealth,
    pub(crate) host: crate::host::SharedHostHealth,
    /// Why the configured hall is off, if it is (`hall_off` in `State()`).
    pub(crate) hall: crate::control::HallStatus,
}

/// The configuration the objects decide with: who may change clocks,
/// whether a scheduled start needs NTP, the presets.
#[derive(Clone, Debug)]
pub(crate) struct Live {
    pub(crate) policy: auth::Policy,
    pub(crate) require_ntp: bool,
    pub(crate) config: Config,
}

impl Live {
    pub(crate) fn of(config: &Config) -> Live {
        Live {
            policy: auth::Policy {
                admin_group: config.daemon.admin_group.clone(),
            },
            require_ntp: config.daemon.require_ntp_for_scheduled_start,
            config: config.clone(),
        }
    }
}

/// The read limiter and the size of the last answer of each kind per board
/// (the estimate a read is admitted with).
#[derive(Debug)]
pub(crate) struct ReadShares {
    limiter: limit::ReadLimiter,
    last_size: HashMap<(String, String), usize>,
}

impl ReadShares {
    pub(crate) fn new(limits: limit::Limits) -> ReadShares {
        ReadShares {
            limiter: limit::ReadLimiter::new(limits),
            last_size: HashMap::new(),
        }
    }
}

impl Context {
    /// The live settings now. A poisoned lock still holds a whole value
    /// (it is only ever replaced whole), so it is used anyway.
    pub(crate) fn live(&self) -> Live {
        match self.live.read() {
            Ok(live) => live.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    fn set_live(&self, live: Live) {
        match self.live.write() {
            Ok(mut slot) => *slot = live,
            Err(poisoned) => *poisoned.into_inner() = live,
        }
    }

    /// The state store's health as JSON (the manager's `StateHealth`).
    pub(crate) fn state_health_json(&self) -> serde_json::Value {
        serde_json::to_value(self.health.get().as_ref()).unwrap_or(serde_json::Value::Null)
    }

    pub(crate) fn host_health_json(&self) -> serde_json::Value {
        serde_json::to_value(self.host.get().as_ref()).unwrap_or(serde_json::Value::Null)
    }

    /// A board's `State()` text with the state's and the host's health
    /// added (the D-Bus layer owns them: the same values as the manager's
    /// properties) and, when the configured hall could not be set up, why
    /// (`hall_off`).
    pub(crate) fn with_state_health(&self, state: &str) -> String {
        match serde_json::from_str::<serde_json::Value>(state) {
            Ok(serde_json::Value::Object(mut map)) => {
                map.insert("state_health".into(), self.state_health_json());
                map.insert("host_health".into(), self.host_health_json());
                if let Some(reason) = self.hall.off() {
                    map.insert("hall_off".into(), reason.into());
                }
                serde_json::Value::Object(map).to_string()
            }
            _ => state.to_owned(),
        }
    }

    /// Admits a read of `kind` on `board` by `caller`, estimated at the
    /// size of the last such answer; returns the estimate.
    pub(crate) fn admit_read(&self, caller: &str, board: &str, kind: &str) -> Result<usize, Error> {
        let Ok(mut reads) = self.reads.lock() else {
            return Err(Error::Internal("the read limiter is broken".into()));
        };
        let estimate = reads
            .last_size
            .get(&(board.to_owned(), kind.to_owned()))
            .copied()
            .unwrap_or(1);
        let now = chessclock_host::clock::monotonic_now_us();
        match reads.limiter.admit(caller, estimate as u64, now) {
            Ok(()) => Ok(estimate),
            Err(wait) => Err(Error::RateLimited(format!(
                "too many reads: try again in {} ms (reads of the clocks are \
                 limited per caller so that readers cannot slow the daemon down)",
                (wait + crate::engine::MS - 1) / crate::engine::MS
            ))),
        }
    }

    /// The answer of an admitted read was `size` bytes.
    pub(crate) fn settle_read(
        &self,
        caller: &str,
        board: &str,
        kind: &str,
        estimate: usize,
        size: usize,
    ) {
        if let Ok(mut reads) = self.reads.lock() {
            reads.limiter.settle(caller, size as i64 - estimate as i64);
            reads
                .last_size
                .insert((board.to_owned(), kind.to_owned()), size);
        }
    }

    /// The caller of a changing method, if allowed.
    pub(crate) async fn authorize(
        &self,
        connection: &Connection,
        header: &zbus::message::Header<'_>,
    ) -> Result<Caller, Error> {
        let credentials = auth::caller_credentials(connection, header).await?;
        self.decide(&credentials, auth::group_id, auth::groups_of_uid)
    }

    /// The decision for `credentials` under the policy of now, not of the
    /// start: a reload that changes `admin-group` decides the very next
    /// call. `group_id` resolves the group's name (the system's database
    /// in the daemon).
    pub(crate) fn decide(
        &self,
        credentials: &auth::Credentials,
        group_id: impl FnOnce(&str) -> Option<u32>,
        lookup_groups: impl FnOnce(u32) -> Vec<u32>,
    ) -> Result<Caller, Error> {
        let policy = self.live().policy;
        policy.decide(credentials, group_id(&policy.admin_group), lookup_groups)
    }

    /// The caller of a scheduled start, if allowed, once the instant is
    /// sane and the wall clock is trusted (or `force` overrides that).
    pub(crate) async fn authorize_scheduled_start(
        &self,
        connection: &Connection,
        header: &zbus::message::Header<'_>,
        unix_time_usec: i64,
        force: bool,
    ) -> Result<Caller, Error> {
        let caller = self.authorize(connection, header).await?;
        board::validate_start_time(unix_time_usec, chessclock_host::clock::wall_now_us())?;
        self.ntp
            .check_scheduled_start(self.live().require_ntp, force)
            .await?;
        Ok(caller)
    }

    /// A first check of a time control before the runtime sees it.
    pub(crate) fn validate_control(&self, control: &str) -> Result<(), Error> {
        validate_control_text(&self.live().config, control)
    }
}

/// Checks a control string's shape: a preset name or a notation.
pub fn validate_control_text(config: &Config, control: &str) -> Result<(), Error> {
    let hint = "give a notation such as `5400+30`, `40/5400+30:1800+30`, `G/90;d5`, `-`, \
                or a preset name (chessclockctl new BOARD PRESET)";
    // The limit first: too long a text is not written back in an error.
    chessclock_core::limits::check_chars(
        "the time control",
        control,
        chessclock_core::limits::MAX_CONTROL,
    )
    .map_err(Error::InvalidArgument)?;
    if control.trim().is_empty() {
        return Err(Error::InvalidArgument(format!(
            "the time control is empty: {hint}"
        )));
    }
    if control.trim() != control {
        return Err(Error::InvalidArgument(format!(
            "the time control `{}` has spaces at its start or end: give `{}`",
            control.escape_default(),
            control.trim().escape_default()
        )));
    }
    if control.chars().any(|c| c.is_control() || !c.is_ascii()) {
        return Err(Error::InvalidArgument(format!(
            "the time control `{}` is not valid: {hint}",
            control.escape_default()
        )));
    }
    config
        .resolve_control(control)
        .map(|_| ())
        .map_err(|why| Error::InvalidArgument(format!("{why}; {hint}")))
}

/// Serves the API on the bus the configuration names, owning [`BUS_NAME`].
/// The runtime calls this once, after creating the [`ControlHandle`] and
/// while it answers requests: `serve` first reads every board's snapshot
/// (waiting up to 2 s; objects of boards it could not read ask the runtime
/// on demand). The returned connection keeps the API alive.
pub async fn serve(handle: ControlHandle, config: &Config) -> Result<Connection, ServeError> {
    let builder = match config.daemon.bus {
        BusKind::System => connection::Builder::system(),
        BusKind::Session => connection::Builder::session(),
    };
    serve_with(builder, handle, ServeOptions::from_config(config)).await
}

/// [`serve`] on a given connection builder (a private bus address, or one
/// end of a peer-to-peer socket pair with `request_name: false`).
pub async fn serve_with(
    builder: connection::Builder<'static>,
    handle: ControlHandle,
    options: ServeOptions,
) -> Result<Connection, ServeError> {
    for id in handle.boards.list() {
        check_board_id(&id)?;
    }
    let bus = match options.config.daemon.bus {
        BusKind::System => "system",
        BusKind::Session => "session",
    };
    let context = Arc::new(Context {
        live: std::sync::RwLock::new(Live::of(&options.config)),
        ntp: options.ntp,
        reads: std::sync::Mutex::new(ReadShares::new(options.read_limits)),
        health: handle.health.clone(),
        host: handle.host.clone(),
        hall: handle.hall.clone(),
    });
    // Subscribe first: every change after this point arrives as an event,
    // so the snapshots read next are never newer than the last event.
    let events = handle.events.subscribe();
    let mut initial = initial_snapshots(&handle).await;
    let mut builder = builder.serve_at(
        MANAGER_PATH,
        Manager::new(handle.clone(), Arc::clone(&context)),
    );
    for id in handle.boards.list() {
        builder = builder.serve_at(
            board_path(&id),
            Board::new(
                id.clone(),
                handle.clone(),
                Arc::clone(&context),
                initial.remove(&id),
            ),
        );
    }
    if options.request_name {
        // zbus's default lets a later owner take the name over: a second
        // daemon must fail instead of silently stealing every board.
        builder = builder
            .name(BUS_NAME)
            .allow_name_replacements(false)
            .replace_existing_names(false);
    }
    let connection = builder.build().await.map_err(|source| ServeError::Bus {
        bus: bus.to_owned(),
        source,
    })?;
    tokio::spawn(announce_health(
        connection.clone(),
        handle.health.subscribe(),
    ));
    tokio::spawn(announce_host_health(
        connection.clone(),
        handle.host.subscribe(),
    ));
    tokio::spawn(pump_events(connection.clone(), handle, events));
    Ok(connection)
}

/// The manager's `StateHealth` changes (the store's trouble saving comes or
/// goes): PropertiesChanged, so `chessclockctl` and other tools hear it at
/// once.
async fn announce_health(
    connection: Connection,
    mut health: tokio::sync::watch::Receiver<Arc<crate::control::StateHealth>>,
) {
    while health.changed().await.is_ok() {
        let manager = match connection
            .object_server()
            .interface::<_, Manager>(MANAGER_PATH)
            .await
        {
            Ok(manager) => manager,
            Err(_) => return,
        };
        let emitter = manager.signal_emitter().clone();
        let changed = manager.get().await.state_health_changed(&emitter).await;
        if let Err(error) = changed {
            tracing::warn!(%error, "D-Bus: cannot signal the state health's change");
        }
    }
}

/// The manager's `HostHealth` changes (a radio comes on, the clock loses
/// its synchronisation): PropertiesChanged.
async fn announce_host_health(
    connection: Connection,
    mut health: tokio::sync::watch::Receiver<Arc<crate::host::HostHealth>>,
) {
    while health.changed().await.is_ok() {
        let manager = match connection
            .object_server()
            .interface::<_, Manager>(MANAGER_PATH)
            .await
        {
            Ok(manager) => manager,
            Err(_) => return,
        };
        let emitter = manager.signal_emitter().clone();
        let changed = manager.get().await.host_health_changed(&emitter).await;
        if let Err(error) = changed {
            tracing::warn!(%error, "D-Bus: cannot signal the host health's change");
        }
    }
}

fn check_board_id(id: &str) -> Result<(), ServeError> {
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(ServeError::BadBoardId(id.to_owned()));
    }
    Ok(())
}

/// Applies a reload to a served API: the objects decide with `config`
/// from the next call on (`admin-group`, `require-ntp-for-scheduled-start`,
/// presets), and every board of `added` gets its object (under
/// [`board_path`], listed by `ListBoards` once the runtime lists it in
/// `handle.boards`). A board whose object cannot be served is logged and
/// left off the bus; the others are still served.
pub async fn reconfigure(
    connection: &Connection,
    handle: &ControlHandle,
    config: &Config,
    added: &[String],
) {
    let manager = match connection
        .object_server()
        .interface::<_, Manager>(MANAGER_PATH)
        .await
    {
        Ok(manager) => manager,
        Err(error) => {
            tracing::error!(%error, "D-Bus: no manager object; the reload is not applied to the bus");
            return;
        }
    };
    let context = manager.get().await.context();
    context.set_live(Live::of(config));
    for id in added {
        if let Err(error) = check_board_id(id) {
            tracing::error!(board = %id, %error, "D-Bus: the added board is not served");
            continue;
        }
        let snapshot = board::fetch_snapshot(handle, id).await.ok();
        let object = Board::new(id.clone(), handle.clone(), Arc::clone(&context), snapshot);
        match connection
            .object_server()
            .at(board_path(id).as_str(), object)
            .await
        {
            Ok(None) => tracing::info!(board = %id, path = %board_path(id), "D-Bus: board added"),
            Ok(Some(_)) => tracing::warn!(board = %id, "D-Bus: the board already had an object"),
            Err(error) => {
                tracing::error!(board = %id, %error, "D-Bus: cannot serve the added board")
            }
        }
    }
}

/// How long `serve` waits for the runtime's first snapshots. A runtime that
/// answers only after `serve` returns gets objects that ask it lazily.
const INITIAL_SNAPSHOT_WAIT: Duration = Duration::from_secs(2);

/// Every board's snapshot, read before the objects exist so that no call
/// can race the first fill of the caches.
async fn initial_snapshots(handle: &ControlHandle) -> HashMap<String, BoardSnapshot> {
    let mut snapshots = HashMap::new();
    let fill = async {
        for id in handle.boards.list() {
            match board::fetch_snapshot(handle, &id).await {
                Ok(snapshot) => {
                    snapshots.insert(id.clone(), snapshot);
                }
                Err(error) => tracing::warn!("D-Bus: cannot read board {id}: {error}"),
            }
        }
    };
    if tokio::time::timeout(INITIAL_SNAPSHOT_WAIT, fill)
        .await
        .is_err()
    {
        tracing::warn!("D-Bus: the runtime did not answer; board properties are read on demand");
    }
    snapshots
}

/// Copies the runtime's broadcast onto the objects and the bus. Stops when
/// the runtime closes the broadcast or the connection is gone.
async fn pump_events(
    connection: Connection,
    handle: ControlHandle,
    mut events: broadcast::Receiver<BoardEvent>,
) {
    loop {
        match events.recv().await {
            Ok(event) => {
                if let Err(error) = forward_event(&connection, event).await {
                    if is_connection_gone(&error) {
                        return;
                    }
                    tracing::warn!("D-Bus: cannot emit a signal: {error}");
                }
            }
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                tracing::warn!("D-Bus: missed {missed} board events; re-reading every board");
                refresh_all(&connection, &handle).await;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}

fn is_connection_gone(error: &zbus::Error) -> bool {
    match error {
        zbus::Error::InputOutput(io) => matches!(
            io.kind(),
            std::io::ErrorKind::BrokenPipe
                | std::io::ErrorKind::ConnectionReset
                | std::io::ErrorKind::NotConnected
        ),
        _ => false,
    }
}

async fn refresh_all(connection: &Connection, handle: &ControlHandle) {
    for id in handle.boards.list() {
        match board::fetch_snapshot(handle, &id).await {
            Ok(snapshot) => {
                let _ = update_snapshot(connection, snapshot).await;
            }
            Err(error) => tracing::warn!("D-Bus: cannot read board {id}: {error}"),
        }
    }
}

async fn update_snapshot(connection: &Connection, snapshot: BoardSnapshot) -> zbus::Result<()> {
    let path = board_path(&snapshot.board);
    let Ok(board) = connection
        .object_server()
        .interface::<_, Board>(path.as_str())
        .await
    else {
        return Ok(());
    };
    let changed = board.get_mut().await.replace_snapshot(snapshot);
    board::emit_properties_changed(board.signal_emitter(), &changed).await
}

async fn forward_event(connection: &Connection, event: BoardEvent) -> zbus::Result<()> {
    // A history row has no signal of its own: `History()` reads it.
    if matches!(event, BoardEvent::Recorded { .. }) {
        return Ok(());
    }
    let board_of = |event: &BoardEvent| match event {
        BoardEvent::Pressed { board, .. }
        | BoardEvent::FlagFell { board, .. }
        | BoardEvent::StageChanged { board, .. }
        | BoardEvent::DeviceChanged { board, .. }
        | BoardEvent::ArbiterCalled { board }
        | BoardEvent::FlagWithdrawn { board, .. }
        | BoardEvent::PressNotPlaced { board, .. }
        | BoardEvent::NewGameOffered { board }
        | BoardEvent::FlagReport { board, .. }
        | BoardEvent::Recorded { board, .. } => board.clone(),
        BoardEvent::StateChanged(snapshot) => snapshot.board.clone(),
    };
    let path = board_path(&board_of(&event));
    let Ok(board) = connection
        .object_server()
        .interface::<_, Board>(path.as_str())
        .await
    else {
        tracing::debug!("D-Bus: event for a board without an object: {path}");
        return Ok(());
    };
    let emitter = board.signal_emitter();
    match event {
        BoardEvent::StateChanged(snapshot) => {
            let changed = board.get_mut().await.replace_snapshot(snapshot);
            board::emit_properties_changed(emitter, &changed).await
        }
        BoardEvent::Pressed {
            side,
            move_number,
            used_ms,
            ..
        } => Board::pressed(emitter, side.as_str(), move_number, used_ms).await,
        BoardEvent::FlagFell {
            side,
            at_ms,
            stage,
            last_stage,
            ..
        } => Board::flag_fell(emitter, side.as_str(), at_ms, stage, last_stage).await,
        BoardEvent::StageChanged { side, stage, .. } => {
            Board::stage_changed(emitter, side.as_str(), stage).await
        }
        BoardEvent::FlagWithdrawn { side, at_ms, .. } => {
            Board::flag_withdrawn(emitter, side.as_str(), at_ms).await
        }
        BoardEvent::PressNotPlaced { side, late_ms, .. } => {
            Board::press_not_placed(emitter, side.as_str(), late_ms).await
        }
        BoardEvent::FlagReport {
            side,
            moves_completed,
            opponent_can_mate,
            verdict,
            ..
        } => {
            Board::flag_report(
                emitter,
                side.as_str(),
                moves_completed,
                opponent_can_mate,
                &verdict,
            )
            .await
        }
        BoardEvent::DeviceChanged { link, .. } => {
            Board::device_changed(
                emitter,
                &link.role,
                &link.name,
                link.connected,
                link.serial.as_deref().unwrap_or(""),
            )
            .await
        }
        BoardEvent::NewGameOffered { .. } => Board::new_game_offered(emitter).await,
        BoardEvent::ArbiterCalled { board: id } => {
            Board::arbiter_called_signal(emitter).await?;
            let manager = zbus::object_server::SignalEmitter::new(connection, MANAGER_PATH)?;
            let object = zbus::ObjectPath::try_from(path.as_str())?;
            Manager::arbiter_called(&manager, &id, object).await
        }
        BoardEvent::Recorded { .. } => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(admin_group: &str) -> Context {
        let mut config = Config::default();
        config.daemon.admin_group = admin_group.to_owned();
        Context {
            live: std::sync::RwLock::new(Live::of(&config)),
            ntp: NtpSource::Fixed(None),
            reads: std::sync::Mutex::new(ReadShares::new(limit::Limits::default())),
            health: Default::default(),
            host: Default::default(),
            hall: Default::default(),
        }
    }

    /// `arbiters` is gid 990, `seniors` 991; other names do not exist.
    fn gid(name: &str) -> Option<u32> {
        match name {
            "arbiters" => Some(990),
            "seniors" => Some(991),
            _ => None,
        }
    }

    #[test]
    fn a_reloaded_admin_group_decides_the_next_call() {
        let context = context("arbiters");
        let arbiter = auth::Credentials {
            uid: 1001,
            groups: Some(vec![100, 990]),
        };
        let no_lookup = |_| Vec::new();
        assert!(context.decide(&arbiter, gid, no_lookup).is_ok());

        // The reload: the arbiter's group is no longer the admin group.
        let mut config = Config::default();
        config.daemon.admin_group = "seniors".into();
        context.set_live(Live::of(&config));
        match context.decide(&arbiter, gid, no_lookup) {
            Err(Error::NotPermitted(message)) => {
                assert!(message.contains("`seniors`"), "{message}")
            }
            other => panic!("expected NotPermitted, got {other:?}"),
        }
        // A member of the new group may.
        let senior = auth::Credentials {
            uid: 1002,
            groups: Some(vec![991]),
        };
        assert!(context.decide(&senior, gid, no_lookup).is_ok());
        // A group that does not exist: only root.
        config.daemon.admin_group = "nobody-here".into();
        context.set_live(Live::of(&config));
        assert!(context.decide(&senior, gid, no_lookup).is_err());
        let root = auth::Credentials {
            uid: 0,
            groups: Some(vec![0]),
        };
        assert!(context.decide(&root, gid, no_lookup).is_ok());
        // The NTP requirement and the presets come with the same reload.
        config.daemon.require_ntp_for_scheduled_start = false;
        config.presets.insert(
            "club".into(),
            crate::config::ControlSpec::Notation("600+5".into()),
        );
        context.set_live(Live::of(&config));
        assert!(!context.live().require_ntp);
        assert!(context.validate_control("club").is_ok());
    }
}
