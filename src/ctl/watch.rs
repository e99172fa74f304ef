//! `chessclockctl watch`: a live view of every board. It redraws when the
//! daemon signals a change and on a local ~10 Hz tick, extrapolating the
//! running clock from the last snapshot (the daemon sends no per-tick
//! signals). Quits on `q`, Esc or Ctrl-C, restoring the terminal.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use crossterm::{cursor, execute, terminal};
use tokio::sync::mpsc;
use zbus::message::Type as MessageType;
use zbus::{MatchRule, MessageStream};

use super::output::{Snapshot, Table};
use super::{CtlError, Ctx};
use crate::dbus::{board_id, BUS_NAME, MANAGER_PATH};

/// Puts the terminal back however the view ends.
struct TerminalGuard;

impl TerminalGuard {
    fn enter() -> std::io::Result<TerminalGuard> {
        terminal::enable_raw_mode()?;
        let mut stdout = std::io::stdout();
        if let Err(e) = execute!(stdout, terminal::EnterAlternateScreen, cursor::Hide) {
            let _ = terminal::disable_raw_mode();
            return Err(e);
        }
        Ok(TerminalGuard)
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        let _ = execute!(
            std::io::stdout(),
            cursor::Show,
            terminal::LeaveAlternateScreen
        );
        let _ = terminal::disable_raw_mode();
    }
}

/// Maps the daemon's monotonic clock onto this process's: the daemon's
/// "now" is sampled once, halfway through the call.
struct DaemonClock {
    anchor: Instant,
    daemon_ms_at_anchor: i64,
}

impl DaemonClock {
    async fn sync(ctx: &Ctx<'_>) -> Result<DaemonClock, CtlError> {
        let before = Instant::now();
        let daemon_ms = ctx.daemon_now_ms().await?;
        let round_trip = before.elapsed();
        Ok(DaemonClock {
            anchor: before + round_trip / 2,
            daemon_ms_at_anchor: daemon_ms,
        })
    }

    fn now_ms(&self) -> i64 {
        self.daemon_ms_at_anchor + self.anchor.elapsed().as_millis() as i64
    }
}

fn is_quit(key: &KeyEvent) -> bool {
    matches!(key.code, KeyCode::Char('q') | KeyCode::Esc)
        || (key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL))
}

/// Reads keys on a thread of its own (crossterm's reads block).
fn spawn_key_reader() -> mpsc::Receiver<()> {
    let (quit, quit_requested) = mpsc::channel(1);
    std::thread::spawn(move || loop {
        if quit.is_closed() {
            return;
        }
        match crossterm::event::poll(Duration::from_millis(200)) {
            Ok(true) => {
                if let Ok(Event::Key(key)) = crossterm::event::read() {
                    if is_quit(&key) {
                        let _ = quit.blocking_send(());
                        return;
                    }
                }
            }
            Ok(false) => {}
            Err(_) => {
                let _ = quit.blocking_send(());
                return;
            }
        }
    });
    quit_requested
}

/// Listens for every signal of the daemon's objects.
async fn subscribe(ctx: &Ctx<'_>) -> Result<MessageStream, CtlError> {
    let rule = MatchRule::builder()
        .msg_type(MessageType::Signal)
        .sender(BUS_NAME)
        .path_namespace(MANAGER_PATH)
        .build()
        .map_err(|e| CtlError::Api(format!("cannot listen for changes: {e}")))?;
    MessageStream::for_match_rule(rule, ctx.connection, std::num::NonZeroUsize::new(64))
        .await
        .map_err(|e| CtlError::Api(format!("cannot listen for changes: {e}")))
}

/// `watch --json`: every board's snapshot as one JSON line, then a line for
/// each board that changes (with `once`, only the first lines).
pub async fn stream_json(ctx: &Ctx<'_>, once: bool) -> Result<(), CtlError> {
    let mut signals = subscribe(ctx).await?;
    let mut stdout = std::io::stdout();
    let mut last: BTreeMap<String, Snapshot> = BTreeMap::new();
    for id in ctx.board_ids().await? {
        let snapshot = ctx.snapshot(&id).await?;
        writeln!(stdout, "{}", snapshot.raw)?;
        last.insert(id, snapshot);
    }
    stdout.flush()?;
    if once {
        return Ok(());
    }
    loop {
        let Some(path) = next_signal(&mut signals).await else {
            return Err(CtlError::Api(
                "the connection to the daemon was lost".into(),
            ));
        };
        let Some(id) = board_id(&path) else { continue };
        let snapshot = ctx.snapshot(id).await?;
        // Several signals may announce one change: print it once.
        if last.get(id) != Some(&snapshot) {
            writeln!(stdout, "{}", snapshot.raw)?;
            stdout.flush()?;
            last.insert(id.to_owned(), snapshot);
        }
    }
}

/// Runs the live view until the user quits.
pub async fn run(ctx: &Ctx<'_>) -> Result<(), CtlError> {
    let ids = ctx.board_ids().await?;
    let mut boards: BTreeMap<String, Snapshot> = BTreeMap::new();
    for id in &ids {
        boards.insert(id.clone(), ctx.snapshot(id).await?);
    }
    let mut signals = subscribe(ctx).await?;
    let mut clock = DaemonClock::sync(ctx).await?;
    let mut last_sync = Instant::now();

    let _terminal = TerminalGuard::enter()?;
    let mut quit = spawn_key_reader();
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    let mut stdout = std::io::stdout();
    loop {
        let views: Vec<Snapshot> = ids
            .iter()
            .filter_map(|id| boards.get(id).cloned())
            .collect();
        let frame = Table::render(&views, clock.now_ms());
        execute!(
            stdout,
            cursor::MoveTo(0, 0),
            terminal::Clear(terminal::ClearType::All)
        )?;
        write!(
            stdout,
            "chessclockd: {} board(s)   q to quit\r\n\r\n{}",
            views.len(),
            frame.replace('\n', "\r\n")
        )?;
        stdout.flush()?;

        tokio::select! {
            _ = quit.recv() => return Ok(()),
            _ = tick.tick() => {}
            signal = next_signal(&mut signals) => {
                let Some(path) = signal else {
                    return Err(CtlError::Api("the connection to the daemon was lost".into()));
                };
                if let Some(id) = board_id(&path) {
                    if let Ok(snapshot) = ctx.snapshot(id).await {
                        boards.insert(id.to_owned(), snapshot);
                    }
                }
            }
        }
        // Keep the two clocks from drifting apart over a long round.
        if last_sync.elapsed() > Duration::from_secs(30) {
            if let Ok(synced) = DaemonClock::sync(ctx).await {
                clock = synced;
            }
            last_sync = Instant::now();
        }
    }
}

/// The object path of the next signal, `None` when the stream ends.
async fn next_signal(signals: &mut MessageStream) -> Option<String> {
    loop {
        let message = std::future::poll_fn(|cx| {
            zbus::export::futures_core::Stream::poll_next(std::pin::Pin::new(&mut *signals), cx)
        })
        .await?;
        let Ok(message) = message else { continue };
        if let Some(path) = message.header().path() {
            return Some(path.as_str().to_owned());
        }
    }
}
