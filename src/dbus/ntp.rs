//! Whether the system clock is NTP-synchronised, from systemd-timedated
//! (`org.freedesktop.timedate1`, property `NTPSynchronized`). A scheduled
//! start (Art. 6.6) trusts wall time, so it is refused unless this is true.

use zbus::Connection;

use super::error::Error;

/// Where the synchronisation status comes from.
#[derive(Clone, Debug)]
pub enum NtpSource {
    /// timedated on the system bus (the daemon's normal case).
    SystemBus,
    /// timedated (or a stand-in) reachable on this connection.
    Connection(Connection),
    /// A fixed answer: `None` means "unavailable". For configurations and
    /// tests without any timedated.
    Fixed(Option<bool>),
}

#[zbus::proxy(
    interface = "org.freedesktop.timedate1",
    default_service = "org.freedesktop.timedate1",
    default_path = "/org/freedesktop/timedate1"
)]
trait Timedate {
    #[zbus(property, name = "NTPSynchronized")]
    fn ntp_synchronized(&self) -> zbus::Result<bool>;
}

impl NtpSource {
    /// `Ok(true)` synchronised, `Ok(false)` not, `Err` why it is unknown.
    pub async fn synchronized(&self) -> Result<bool, String> {
        let connection = match self {
            NtpSource::Fixed(Some(answer)) => return Ok(*answer),
            NtpSource::Fixed(None) => return Err("no time service is configured".into()),
            NtpSource::SystemBus => Connection::system()
                .await
                .map_err(|e| format!("cannot reach the system bus: {e}"))?,
            NtpSource::Connection(connection) => connection.clone(),
        };
        let proxy = TimedateProxy::builder(&connection)
            .cache_properties(zbus::proxy::CacheProperties::No)
            .build()
            .await
            .map_err(|e| format!("cannot reach systemd-timedated: {e}"))?;
        proxy
            .ntp_synchronized()
            .await
            .map_err(|e| format!("cannot ask systemd-timedated: {e}"))
    }

    /// [`NtpSource::synchronized`] as a future that owns its source (for a
    /// task that asks again and again).
    pub async fn synchronized_owned(self) -> Result<bool, String> {
        self.synchronized().await
    }

    /// Refuses a scheduled start unless the clock is synchronised, `force`
    /// is set or `required` is off ([`crate::scheduled::check_synchronized`],
    /// the hall's rule too); timedated is asked only when it matters.
    pub async fn check_scheduled_start(&self, required: bool, force: bool) -> Result<(), Error> {
        if !required || force {
            return Ok(());
        }
        crate::scheduled::check_synchronized(
            required,
            force,
            self.synchronized().await,
            "chessclockctl start --force",
        )
        .map_err(Error::from)
    }
}
