//! The manager object (`org.chessclockd.ChessClock1.Manager`): the list of
//! boards, actions on all boards at once, and the hotplug entry point.

use std::sync::Arc;

use zbus::message::Header;
use zbus::object_server::SignalEmitter;
use zbus::{interface, Connection, ObjectPath, OwnedObjectPath};

use super::error::Error;
use super::{board_path, Context};
use crate::control::{Caller, Command, ControlHandle};

/// The manager interface's name.
pub const MANAGER_INTERFACE: &str = "org.chessclockd.ChessClock1.Manager";

/// The object at `/org/chessclockd/ChessClock1`.
pub struct Manager {
    handle: ControlHandle,
    context: Arc<Context>,
}

impl Manager {
    pub(crate) fn new(handle: ControlHandle, context: Arc<Context>) -> Manager {
        Manager { handle, context }
    }

    /// What the objects share (a reload changes its live settings).
    pub(crate) fn context(&self) -> Arc<Context> {
        Arc::clone(&self.context)
    }

    /// Sends `command(board)` to every board; reports every board that
    /// refused, after trying all of them.
    async fn on_all_boards(
        &self,
        caller: Caller,
        command: impl Fn() -> Command,
    ) -> Result<(), Error> {
        let mut failures = Vec::new();
        let boards = self.handle.boards.list();
        for board in &boards {
            if let Err(error) = self.handle.call(board, command(), caller.clone()).await {
                failures.push(format!("board {board}: {error}"));
            }
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(Error::InvalidState(format!(
                "{} of {} boards refused (the others did it): {}",
                failures.len(),
                boards.len(),
                failures.join("; ")
            )))
        }
    }
}

fn validate_device_path(path: &str) -> Result<(), Error> {
    if !path.starts_with('/') || path.contains('\0') || path.len() > 4096 {
        return Err(Error::InvalidArgument(format!(
            "device path `{path}` must be an absolute path such as /dev/ttyACM0"
        )));
    }
    Ok(())
}

#[interface(name = "org.chessclockd.ChessClock1.Manager")]
impl Manager {
    // The read methods take the header only so that zbus checks the call's
    // signature (a method with no parameter at all accepts any arguments).

    /// The object paths of all boards, in configuration order.
    fn list_boards(&self, #[zbus(header)] _header: Header<'_>) -> Vec<OwnedObjectPath> {
        self.handle
            .boards
            .list()
            .iter()
            .filter_map(|id| OwnedObjectPath::try_from(board_path(id)).ok())
            .collect()
    }

    /// The daemon's clocks: monotonic milliseconds (the base of every
    /// `SnapshotMs`) and wall time in microseconds since the Unix epoch.
    /// Clients use it to extrapolate remaining times.
    #[zbus(out_args("monotonic_ms", "unix_time_usec"))]
    fn now(&self, #[zbus(header)] _header: Header<'_>) -> (i64, i64) {
        (
            chessclock_host::clock::monotonic_now_us() / 1000,
            chessclock_host::clock::wall_now_us(),
        )
    }

    /// Starts every board now.
    async fn start_all(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &Connection,
    ) -> Result<(), Error> {
        let caller = self.context.authorize(connection, &header).await?;
        self.on_all_boards(caller, || Command::Start).await
    }

    /// Starts every board at one wall-clock instant (microseconds since the
    /// Unix epoch); `force` overrides the NTP-synchronisation check.
    async fn start_all_at(
        &self,
        unix_time_usec: i64,
        force: bool,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &Connection,
    ) -> Result<(), Error> {
        let caller = self
            .context
            .authorize_scheduled_start(connection, &header, unix_time_usec, force)
            .await?;
        self.on_all_boards(caller, || Command::StartAt {
            unix_time_us: unix_time_usec,
            force,
        })
        .await
    }

    /// Resumes every paused board.
    async fn resume_all(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &Connection,
    ) -> Result<(), Error> {
        let caller = self.context.authorize(connection, &header).await?;
        self.on_all_boards(caller, || Command::Resume).await
    }

    /// The presets this daemon knows (built-in and its config's), as JSON:
    /// `[{"name", "control", "prose", "description", "source"}]`.
    fn presets(&self) -> Result<String, Error> {
        serde_json::to_string(&super::presets::list(&self.context.live().config))
            .map_err(|e| Error::Internal(format!("cannot encode the presets: {e}")))
    }

    /// What a control (notation or preset name) means to this daemon, as
    /// JSON: `{"control", "prose", "white": {"notation", "prose",
    /// "base_ms", "stages"}, "black": ...}`.
    fn describe_control(&self, control: String) -> Result<String, Error> {
        self.context.validate_control(&control)?;
        let description = super::presets::describe(&self.context.live().config, &control)
            .map_err(|why| Error::InvalidArgument(format!("control `{control}`: {why}")))?;
        serde_json::to_string(&description)
            .map_err(|e| Error::Internal(format!("cannot encode the control: {e}")))
    }

    /// Pauses every board.
    async fn pause_all(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &Connection,
    ) -> Result<(), Error> {
        let caller = self.context.authorize(connection, &header).await?;
        self.on_all_boards(caller, || Command::Pause).await
    }

    /// A device node appeared (the udev hotplug entry point).
    async fn add_device(
        &self,
        path: String,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &Connection,
    ) -> Result<(), Error> {
        let caller = self.context.authorize(connection, &header).await?;
        validate_device_path(&path)?;
        self.handle
            .call("", Command::DeviceAdded { path }, caller)
            .await?;
        Ok(())
    }

    /// A device node went away.
    async fn remove_device(
        &self,
        path: String,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &Connection,
    ) -> Result<(), Error> {
        let caller = self.context.authorize(connection, &header).await?;
        validate_device_path(&path)?;
        self.handle
            .call("", Command::DeviceRemoved { path }, caller)
            .await?;
        Ok(())
    }

    /// The daemon's version.
    #[zbus(property(emits_changed_signal = "const"))]
    fn version(&self) -> String {
        env!("CARGO_PKG_VERSION").to_owned()
    }

    /// What the state store found when the daemon opened its state, as JSON:
    /// `mode` (`durable` or `memory`), `path`, `findings` (each `kind`,
    /// `message` and maybe `board`; empty when nothing was lost),
    /// `evidence` (where copies of damaged files were kept) and, live,
    /// `saving` (`null` while every record is saved; else `reason`
    /// `no-space`, `read-only` or `io-error`, whether it still `saving`
    /// into the reserve, `waiting_records`, `reserve_left_bytes`,
    /// `since_wall_ms` and a one-line `message`). Changes are signalled.
    #[zbus(property(emits_changed_signal = "true"))]
    fn state_health(&self) -> String {
        self.context.state_health_json().to_string()
    }

    /// The host's health as JSON: `radios_policy` (`allow` or `forbid`,
    /// `[daemon] radios`), `radios` (each `kind`, `name`, `on`, `why`),
    /// `radios_unreadable`, `ntp_synchronized` (`true`, `false`, `null`
    /// when unknown, with `ntp_unknown` saying why) and `findings` (one
    /// line each: a radio on where they are forbidden, a clock not
    /// synchronised). Checked every 10 s; changes are signalled. Each
    /// board's `State()` carries it too, as `host_health`.
    #[zbus(property(emits_changed_signal = "true"))]
    fn host_health(&self) -> String {
        self.context.host_health_json().to_string()
    }

    /// A player called the arbiter at a board.
    #[zbus(signal)]
    pub async fn arbiter_called(
        emitter: &SignalEmitter<'_>,
        board: &str,
        path: ObjectPath<'_>,
    ) -> zbus::Result<()>;
}
