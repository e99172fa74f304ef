//! Client-side proxies of the API, for `chessclockctl` and tests. Methods
//! return the typed [`Error`], so callers see `InvalidArgument`,
//! `NotPermitted`, ... as variants.

pub use board::BoardProxy;
pub use manager::ManagerProxy;

/// The manager's proxy and its signal types.
pub mod manager {
    use zbus::OwnedObjectPath;

    use crate::dbus::error::Error;

    #[zbus::proxy(
        interface = "org.chessclockd.ChessClock1.Manager",
        default_service = "org.chessclockd.ChessClock1",
        default_path = "/org/chessclockd/ChessClock1"
    )]
    pub trait Manager {
        fn list_boards(&self) -> Result<Vec<OwnedObjectPath>, Error>;
        fn now(&self) -> Result<(i64, i64), Error>;
        fn start_all(&self) -> Result<(), Error>;
        fn start_all_at(&self, unix_time_usec: i64, force: bool) -> Result<(), Error>;
        fn pause_all(&self) -> Result<(), Error>;
        fn resume_all(&self) -> Result<(), Error>;
        fn presets(&self) -> Result<String, Error>;
        fn describe_control(&self, control: &str) -> Result<String, Error>;
        fn add_device(&self, path: &str) -> Result<(), Error>;
        fn remove_device(&self, path: &str) -> Result<(), Error>;
        #[zbus(property)]
        fn version(&self) -> zbus::Result<String>;
        #[zbus(property)]
        fn state_health(&self) -> zbus::Result<String>;
        #[zbus(property)]
        fn host_health(&self) -> zbus::Result<String>;
        #[zbus(signal)]
        fn arbiter_called(&self, board: String, path: OwnedObjectPath) -> zbus::Result<()>;
    }
}

/// A board's proxy and its signal types.
pub mod board {
    use crate::dbus::error::Error;

    #[zbus::proxy(
        interface = "org.chessclockd.ChessClock1.Board",
        default_service = "org.chessclockd.ChessClock1"
    )]
    pub trait Board {
        fn new_game(&self, control: &str) -> Result<(), Error>;
        fn start(&self) -> Result<(), Error>;
        fn start_at(&self, unix_time_usec: i64) -> Result<(), Error>;
        fn start_at_forced(&self, unix_time_usec: i64, force: bool) -> Result<(), Error>;
        fn pause(&self) -> Result<(), Error>;
        fn resume(&self) -> Result<(), Error>;
        fn press(&self, side: &str) -> Result<(), Error>;
        fn adjust(&self, side: &str, remaining_ms: i64, moves: i32) -> Result<(), Error>;
        fn adjust_with_stage(
            &self,
            side: &str,
            remaining_ms: i64,
            moves: i32,
            stage: i32,
        ) -> Result<(), Error>;
        fn adjust_by(&self, side: &str, delta_ms: i64) -> Result<(), Error>;
        fn undo_press(&self) -> Result<(), Error>;
        fn ack_call(&self) -> Result<(), Error>;
        fn cancel_start(&self) -> Result<(), Error>;
        fn note(&self, text: &str) -> Result<(), Error>;
        fn state(&self) -> Result<String, Error>;
        fn history(&self) -> Result<String, Error>;
        fn pgn(&self) -> Result<String, Error>;
        fn set_tags(&self, tags: std::collections::HashMap<&str, &str>) -> Result<(), Error>;
        fn set_result(&self, result: &str, termination: &str) -> Result<(), Error>;
        fn games(&self) -> Result<String, Error>;
        fn game_history(&self, game: i64) -> Result<String, Error>;
        fn game_pgn(&self, game: i64) -> Result<String, Error>;
        fn snapshot(&self) -> Result<String, Error>;

        #[zbus(property)]
        fn id(&self) -> zbus::Result<String>;
        #[zbus(property)]
        fn time_control(&self) -> zbus::Result<String>;
        #[zbus(property)]
        fn snapshot_ms(&self) -> zbus::Result<i64>;
        #[zbus(property)]
        fn started(&self) -> zbus::Result<bool>;
        #[zbus(property)]
        fn running(&self) -> zbus::Result<String>;
        #[zbus(property)]
        fn paused(&self) -> zbus::Result<bool>;
        #[zbus(property)]
        fn white_remaining_ms(&self) -> zbus::Result<i64>;
        #[zbus(property)]
        fn black_remaining_ms(&self) -> zbus::Result<i64>;
        #[zbus(property)]
        fn white_moves(&self) -> zbus::Result<u32>;
        #[zbus(property)]
        fn black_moves(&self) -> zbus::Result<u32>;
        #[zbus(property)]
        fn white_stage(&self) -> zbus::Result<u32>;
        #[zbus(property)]
        fn black_stage(&self) -> zbus::Result<u32>;
        #[zbus(property)]
        fn flags(&self) -> zbus::Result<Vec<String>>;
        #[zbus(property)]
        fn devices(&self) -> zbus::Result<Vec<(String, String, bool, String)>>;
        #[zbus(property)]
        fn arbiter_called(&self) -> zbus::Result<bool>;

        #[zbus(signal)]
        fn pressed(&self, side: String, move_number: u32, used_ms: i64) -> zbus::Result<()>;
        #[zbus(signal)]
        fn flag_fell(
            &self,
            side: String,
            at_ms: i64,
            stage: u32,
            last_stage: bool,
        ) -> zbus::Result<()>;
        #[zbus(signal)]
        fn stage_changed(&self, side: String, stage: u32) -> zbus::Result<()>;
        #[zbus(signal)]
        fn flag_withdrawn(&self, side: String, at_ms: i64) -> zbus::Result<()>;
        #[zbus(signal)]
        fn press_not_placed(&self, side: String, late_ms: i64) -> zbus::Result<()>;
        #[zbus(signal)]
        fn flag_report(
            &self,
            side: String,
            moves_completed: bool,
            opponent_can_mate: bool,
            verdict: String,
        ) -> zbus::Result<()>;
        #[zbus(signal)]
        fn device_changed(
            &self,
            role: String,
            name: String,
            connected: bool,
            serial: String,
        ) -> zbus::Result<()>;
        #[zbus(signal)]
        fn new_game_offered(&self) -> zbus::Result<()>;
        #[zbus(signal, name = "ArbiterCalled")]
        fn arbiter_called_signal(&self) -> zbus::Result<()>;
    }
}
