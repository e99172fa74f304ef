//! The daemon, wired: the runtime ([`crate::runtime`]), the D-Bus service
//! ([`crate::dbus`]), the hall ([`crate::hall`], with `[hall]` in the
//! config), systemd's readiness and watchdog ([`crate::notify`]) and SIGHUP
//! reloads, until a `shutdown` future completes (shutdown as a value).
//!
//! Promises: READY is sent once every configured device has linked or two
//! seconds have passed; a hall that cannot be set up is off (logged at
//! ERROR, `hall_off` in every `State()`) while the clocks run; the watchdog is pinged only while the timing thread
//! beats; on shutdown the runtime commits and stops before the hall says
//! `offline`, so the hall's last events go out first.

use std::future::Future;
use std::path::PathBuf;

use anyhow::Context;
use tokio::sync::oneshot;

use crate::config::{BusKind, Config};
use crate::control::{Command, ControlHandle, Reply};
use crate::runtime::lock::StateLock;
use crate::runtime::{Devices, Heartbeat, Runtime, StateOptions};

/// Options of [`run`] beyond the config file.
#[derive(Debug, Default)]
pub struct RunOptions {
    /// Overrides `daemon.state-dir`.
    pub state_dir: Option<PathBuf>,
    /// Overrides `daemon.bus`.
    pub bus: Option<BusKind>,
    /// Serve no D-Bus at all (tests, tools).
    pub no_bus: bool,
    /// Connect to this bus address instead of the system/session bus
    /// (`--demo` with its private dbus-daemon).
    pub bus_address: Option<String>,
    /// Where SIGHUP reloads the config from (`None`: SIGHUP is ignored).
    pub config_path: Option<PathBuf>,
    /// Receives the control handle once the runtime is up.
    pub handle: Option<oneshot::Sender<ControlHandle>>,
    /// Keep the state in memory only: no state directory, no lock, no
    /// crash safety (`--no-state`).
    pub no_state: bool,
    /// The state directory's lock, already taken by the caller (see
    /// [`StateOptions::lock`]).
    pub state_lock: Option<StateLock>,
}

/// Serves the D-Bus API for `handle` (the `dbus` module's `serve`), on
/// `address` when given (a private bus), else on the configured bus.
async fn serve_dbus(
    handle: ControlHandle,
    config: &Config,
    address: Option<&str>,
) -> anyhow::Result<zbus::Connection> {
    let connection = match address {
        None => crate::dbus::serve(handle, config).await?,
        Some(address) => {
            let builder = zbus::connection::Builder::address(address);
            crate::dbus::serve_with(
                builder,
                handle,
                crate::dbus::ServeOptions::from_config(config),
            )
            .await?
        }
    };
    Ok(connection)
}

/// Runs the daemon until `shutdown` completes: state, devices, timing
/// thread, D-Bus. SIGHUP reloads `options.config_path`.
pub async fn run(
    mut config: Config,
    options: RunOptions,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    if let Some(bus) = options.bus {
        config.daemon.bus = bus;
    }
    // First of all: SIGHUP's default action ends the process, so a
    // `systemctl reload` while the daemon starts would kill it. Caught
    // now, it is handled once the daemon is up.
    let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
        .context("cannot install the SIGHUP handler")?;
    let mut runtime = Runtime::start_with(
        config.clone(),
        StateOptions {
            dir: options.state_dir.clone(),
            no_state: options.no_state,
            lock: options.state_lock,
        },
        Devices::Manager,
    )?;
    let bus = if options.no_bus {
        None
    } else {
        Some(serve_dbus(runtime.handle(), &config, options.bus_address.as_deref()).await?)
    };
    // The host's radios and clock synchronisation, checked on this
    // runtime every 10 s (never on the timing thread).
    tokio::spawn(crate::host::watch(
        runtime.handle().host,
        std::path::PathBuf::from("/sys"),
        || crate::dbus::NtpSource::SystemBus.synchronized_owned(),
    ));
    // The hall (`[hall]`): after the runtime, so it sees every board. A
    // hall that cannot be set up (its credentials or CA file) never stops
    // the clocks: it is off, said at ERROR and in every `State()`.
    let hall_ntp = crate::hall::NtpRule::new(config.daemon.require_ntp_for_scheduled_start);
    let hall = match &config.hall {
        Some(hall) => {
            match crate::hall::Hall::start(hall, runtime.handle(), runtime.time(), hall_ntp.clone())
            {
                Ok(hall) => Some(hall),
                Err(error) => {
                    let reason = format!("{error:#}");
                    tracing::error!(
                        %reason,
                        "hall: OFF: cannot be set up; the clocks run without it \
                         (fix [hall] and restart the daemon)"
                    );
                    runtime.handle().hall.set_off(reason);
                    None
                }
            }
        }
        None => None,
    };
    tokio::pin!(shutdown);
    let handle = runtime.handle();
    let stopped_early = tokio::select! {
        _ = wait_for_devices(&handle, std::time::Duration::from_secs(2)) => false,
        _ = &mut shutdown => true,
    };
    let watchdog = tokio::spawn(watchdog_loop(runtime.heartbeat()));
    if !stopped_early {
        notify_ready(&runtime);
        if let Some(tx) = options.handle {
            let _ = tx.send(runtime.handle());
        }
        loop {
            tokio::select! {
                _ = &mut shutdown => break,
                _ = hangup.recv() => match &options.config_path {
                    Some(path) => match Config::load(path) {
                        Ok(mut new) => {
                            tracing::info!(path = %path.display(), "SIGHUP: reloading the config");
                            if let Some(kind) = options.bus {
                                // `--session`/`--system` win over the file, now as at the start.
                                new.daemon.bus = kind;
                            }
                            let reloaded = runtime.reload(new).await;
                            runtime.handle().host.set_policy(reloaded.config.daemon.radios);
                            hall_ntp.set(reloaded.config.daemon.require_ntp_for_scheduled_start);
                            if let Some(bus) = &bus {
                                crate::dbus::reconfigure(bus, &runtime.handle(), &reloaded.config, &reloaded.added).await;
                            }
                            tracing::info!(boards = runtime.handle().boards.len(), "SIGHUP: config reloaded");
                        }
                        Err(error) => tracing::error!(%error, "SIGHUP: the config has errors; keeping the old one"),
                    },
                    None => tracing::info!("SIGHUP: no config file to reload"),
                },
            }
        }
    }
    tracing::info!("shutting down");
    let _ = crate::notify::Notifier::from_env().stopping("saving state");
    watchdog.abort();
    runtime.shutdown().await;
    // After the runtime: its last events go out before `offline`.
    if let Some(hall) = hall {
        hall.stop().await;
    }
    Ok(())
}

/// Gives the configured devices a moment to link (a HELLO comes every
/// 500 ms) so that READY means "devices tried": returns once every device
/// of every board is connected, or after `limit`.
async fn wait_for_devices(handle: &ControlHandle, limit: std::time::Duration) {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let mut all_linked = true;
        for board in handle.boards.list() {
            match handle
                .call(&board, Command::Snapshot, crate::control::Caller::DAEMON)
                .await
            {
                Ok(Reply::Snapshot(snapshot)) => {
                    all_linked &= snapshot.devices.iter().all(|d| d.connected)
                }
                _ => all_linked = false,
            }
        }
        if all_linked || tokio::time::Instant::now() >= deadline {
            if !all_linked {
                tracing::warn!("not every configured device is linked yet; going on (they reconnect by themselves)");
            }
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Tells systemd the daemon is ready (bus name owned, device tasks started).
fn notify_ready(runtime: &Runtime) {
    let health = runtime.health();
    let status = format!(
        "{} board(s), state in {}{}",
        runtime.handle().boards.len(),
        runtime.state_path().display(),
        match health.display_notice() {
            Some(_) if health.is_damaged() => " (DAMAGED: see chessclockctl status)",
            Some(_) => " (in memory only: no crash safety)",
            None => "",
        }
    );
    match crate::notify::Notifier::from_env().ready(&status) {
        Ok(_) => tracing::info!(%status, "ready"),
        Err(error) => tracing::warn!(%error, "cannot tell systemd we are ready"),
    }
}

/// Pings the systemd watchdog only while the timing thread's heartbeat
/// moves (returns at once when no watchdog is configured).
async fn watchdog_loop(heartbeat: Heartbeat) {
    let watchdog = crate::notify::Watchdog::with_counter(
        crate::notify::Notifier::from_env(),
        crate::notify::watchdog_interval(),
        move || heartbeat.count(),
    );
    watchdog.run(std::future::pending()).await;
}
