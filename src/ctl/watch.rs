//! `chessclockctl watch`: the arbiter's table. Every board of one or more
//! daemons (`-H` more than once, or a file of hosts) in one view, most
//! urgent first (an arbiter call, a flag, a dead device, low time...), in
//! colour, with a bell when a player calls the arbiter; it fits 80 columns.
//!
//! The view is a pure function of [`Row`]s ([`render`], the rows of
//! [`super::rows`]): any source of
//! State views can feed it (the daemons over D-Bus here; another source,
//! such as a hall hub, only has to produce [`Row`]s: `--hall URL` reads
//! the hub's, see [`super::hall`]). Between updates the
//! running clocks are extrapolated from each view's age, and every time is
//! written by the one formatter (`chessclock_core::clocktext`), as the
//! board's displays write it. Quits on `q`, Esc or Ctrl-C, restoring the
//! terminal.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chessclock_core::clocktext;
use chessclock_core::contract::BoardSnapshot;
use chessclock_core::engine::Side;
use chessclock_core::views::StateView;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use crossterm::style::{Attribute, Color, SetAttribute, SetForegroundColor};
use crossterm::{cursor, execute, queue, terminal};
use serde_json::Value;
use tokio::sync::mpsc;
use zbus::message::Type as MessageType;
use zbus::{MatchRule, MessageStream};

use super::hall::HubClient;
use super::output::{players_text, side_time, start_text, state_text};
pub use super::rows::{advance, Row};
use super::time::LocalTime;
use super::{connect, CtlError, Ctx, Target};
use crate::dbus::client::ManagerProxy;
use crate::dbus::{board_id, BUS_NAME, MANAGER_PATH};

/// How the view behaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Ring the terminal bell when a player calls the arbiter.
    pub bell: bool,
    /// Colour the urgent lines.
    pub color: bool,
}

/// How a line is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tone {
    Normal,
    /// A scheduled start, a paused board: worth a look.
    Notice,
    /// Low time, a restart: soon worth a look.
    Warning,
    /// A flag, a dead device, an unreachable host.
    Alert,
    /// A player called the arbiter.
    Arbiter,
}

/// A line of the frame and how to draw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    pub text: String,
    pub tone: Tone,
}

/// Below this a running clock is "low time" (an urgent line).
const LOW_TIME_MS: i64 = 60_000;

/// How urgent a row is (0: most) and what needs the arbiter, in words.
fn urgency(row: &Row) -> (u8, Tone, String) {
    let Some(view) = &row.view else {
        let why = row.error.as_deref().unwrap_or("no answer");
        return (3, Tone::Alert, format!("UNREACHABLE: {why}"));
    };
    if view.arbiter_called {
        // An acknowledged call stays first (the clock is stopped for it),
        // saying who is on the way.
        let by = view
            .arbiter_call_acknowledged_by
            .as_deref()
            .map_or(String::new(), |by| format!(" (acknowledged by {by})"));
        return (0, Tone::Arbiter, format!("ARBITER CALLED{by}"));
    }
    // The host cannot save its state as it should (a full disk): its
    // games go on, but the arbiter must make room at once.
    if let Some(trouble) = view.state_health.as_ref().and_then(|h| h.saving.as_ref()) {
        if !trouble.saving {
            return (
                1,
                Tone::Alert,
                format!("NOT SAVING: {}", trouble.reason.words()),
            );
        }
    }
    if let Some(first) = view.flags.first() {
        let mut text = format!("FLAG {first}");
        if view.flags.len() > 1 {
            text.push_str(" first, then ");
            text.push_str(
                &view.flags[1..]
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            );
        }
        return (1, Tone::Alert, text);
    }
    let down: Vec<&str> = view
        .devices
        .iter()
        .filter(|d| !d.connected)
        .map(|d| d.role.as_str())
        .chain(
            view.eboard
                .iter()
                .filter(|e| !e.connected)
                .map(|_| "eboard"),
        )
        .collect();
    if !down.is_empty() {
        return (2, Tone::Alert, format!("{} DOWN", down.join(", ")));
    }
    if view
        .state_health
        .as_ref()
        .is_some_and(|h| h.saving.as_ref().is_some_and(|t| t.saving))
    {
        return (
            2,
            Tone::Alert,
            "DISK FULL: saving into the reserve".to_owned(),
        );
    }
    if let Some(over) = view.over.as_ref().filter(|o| o.result.is_some()) {
        return (8, Tone::Normal, format!("OVER {}", over.why));
    }
    if let Some(restart) = view.restart.as_ref().filter(|_| view.paused) {
        return (
            4,
            Tone::Warning,
            format!(
                "RESTART: down {}",
                clocktext::remaining_ms(restart.down_ms, clocktext::Style::SECONDS)
            ),
        );
    }
    if let Some(side) = view.running {
        if view
            .side(side)
            .remaining_ms
            .is_some_and(|ms| ms < LOW_TIME_MS)
        {
            return (4, Tone::Warning, format!("low time: {side}"));
        }
        return (7, Tone::Normal, String::new());
    }
    if view.paused {
        return (5, Tone::Notice, String::new());
    }
    if !view.started && view.scheduled_start_ms.is_some() {
        let left = view.scheduled_start_ms.unwrap_or(0) - view.t;
        return (
            6,
            Tone::Notice,
            format!(
                "START in {}",
                clocktext::remaining_ms(left.max(0), clocktext::Style::SECONDS)
            ),
        );
    }
    (8, Tone::Normal, String::new())
}

/// Cuts `text` to `width` characters.
fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        super::output::pad(text, width)
    } else {
        let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// The frame: a header line, then one line per row, most urgent first, each
/// at most `width` characters (80 fits every column).
pub fn render(rows: &[Row], width: usize, local: &LocalTime) -> Vec<Line> {
    let width = width.max(40);
    let (board_w, state_w, clock_w, moves_w) = (16, 15, 9, 4);
    let alert_w = width.saturating_sub(board_w + state_w + 2 * clock_w + moves_w + 5);
    let mut ranked: Vec<(u8, Tone, String, &Row)> = rows
        .iter()
        .map(|row| {
            let (rank, tone, alert) = urgency(row);
            (rank, tone, alert, row)
        })
        .collect();
    ranked.sort_by(|a, b| (a.0, &a.3.source, &a.3.board).cmp(&(b.0, &b.3.source, &b.3.board)));
    let calls = ranked.iter().filter(|r| r.1 == Tone::Arbiter).count();
    let sources: BTreeSet<&str> = rows.iter().map(|r| r.source.as_str()).collect();
    let mut lines = vec![Line {
        text: fit(
            &format!(
                "chessclockd: {} board{}{}{}   q quits",
                rows.len(),
                if rows.len() == 1 { "" } else { "s" },
                if sources.len() > 1 {
                    format!(" on {} hosts", sources.len())
                } else {
                    String::new()
                },
                if calls > 0 {
                    format!(
                        "   {calls} ARBITER CALL{}",
                        if calls == 1 { "" } else { "S" }
                    )
                } else {
                    String::new()
                }
            ),
            width,
        )
        .trim_end()
        .to_owned(),
        tone: if calls > 0 {
            Tone::Arbiter
        } else {
            Tone::Normal
        },
    }];
    lines.push(Line {
        text: format!(
            "{} {} {} {} {} {}",
            fit("BOARD", board_w),
            fit("STATE", state_w),
            fit("WHITE", clock_w),
            fit("BLACK", clock_w),
            fit("MV", moves_w),
            fit("NEEDS", alert_w)
        )
        .trim_end()
        .to_owned(),
        tone: Tone::Normal,
    });
    for (_, tone, alert, row) in ranked {
        let label = if row.source.is_empty() {
            row.board.clone()
        } else {
            format!("{}/{}", row.source, row.board)
        };
        let text = match &row.view {
            None => format!("{} {}", fit(&label, board_w), alert),
            Some(view) => {
                let view = advance(view, row.age_ms);
                let clock = |side: Side| {
                    let marker = if view.running == Some(side) { ">" } else { " " };
                    format!("{marker}{}", side_time(&view, side))
                };
                let state = if view.arbiter_called {
                    state_text(&view).replace(", ARBITER CALLED", "")
                } else {
                    state_text(&view)
                };
                let alert = if alert.is_empty() {
                    start_text(&view, local)
                        .filter(|_| !view.started)
                        .map(|when| format!("start {when}"))
                        .unwrap_or_default()
                } else {
                    alert
                };
                // The players after what needs the arbiter (cut first when
                // the line is too long).
                let alert = match (players_text(&view), alert.is_empty()) {
                    (Some(players), true) => players,
                    (Some(players), false) => format!("{alert}; {players}"),
                    (None, _) => alert,
                };
                format!(
                    "{} {} {} {} {} {}",
                    fit(&label, board_w),
                    fit(&state, state_w),
                    fit(&clock(Side::White), clock_w),
                    fit(&clock(Side::Black), clock_w),
                    fit(&view.white.moves.max(view.black.moves).to_string(), moves_w),
                    alert
                )
            }
        };
        lines.push(Line {
            text: fit(&text, width).trim_end().to_owned(),
            tone,
        });
    }
    lines
}

/// The boards whose player called the arbiter.
fn calls(rows: &[Row]) -> BTreeSet<(String, String)> {
    rows.iter()
        .filter(|r| r.view.as_ref().is_some_and(|v| v.arbiter_called))
        .map(|r| (r.source.clone(), r.board.clone()))
        .collect()
}

/// Reads a file of hosts: one `[USER@]HOST` a line, `#` comments, blank
/// lines skipped.
pub fn read_hosts_file(path: &Path) -> Result<Vec<String>, CtlError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        CtlError::Usage(format!(
            "cannot read the hosts file {}: {e}",
            path.display()
        ))
    })?;
    let mut hosts = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if line.split_whitespace().count() > 1 {
            return Err(CtlError::Usage(format!(
                "{}:{}: one host a line ([USER@]HOST), not `{line}`",
                path.display(),
                number + 1
            )));
        }
        hosts.push(line.to_owned());
    }
    Ok(hosts)
}

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
async fn subscribe(connection: &zbus::Connection) -> Result<MessageStream, CtlError> {
    let rule = MatchRule::builder()
        .msg_type(MessageType::Signal)
        .sender(BUS_NAME)
        .path_namespace(MANAGER_PATH)
        .build()
        .map_err(|e| CtlError::Api(format!("cannot listen for changes: {e}")))?;
    MessageStream::for_match_rule(rule, connection, std::num::NonZeroUsize::new(64))
        .await
        .map_err(|e| CtlError::Api(format!("cannot listen for changes: {e}")))
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

/// What a source tells the view.
enum Update {
    State {
        source: String,
        board: String,
        view: Box<StateView>,
    },
    Failed {
        source: String,
        error: String,
    },
    /// The source is readable again (its error goes).
    Recovered {
        source: String,
    },
}

/// Every board's State of one daemon, read now.
async fn read_all(ctx: &Ctx<'_>) -> Result<Vec<StateView>, CtlError> {
    let mut views = Vec::new();
    for id in ctx.board_ids().await? {
        views.push(ctx.state(&id).await?);
    }
    Ok(views)
}

/// One daemon as a source: its boards' State views, again after each of
/// its signals; reconnects after a failure.
async fn follow(target: Target, updates: mpsc::UnboundedSender<Update>) {
    let source = target.label();
    loop {
        let result: Result<(), CtlError> = async {
            let connection = connect(&target).await?;
            let manager = ManagerProxy::builder(&connection)
                .cache_properties(zbus::proxy::CacheProperties::No)
                .build()
                .await
                .map_err(|e| CtlError::Api(e.to_string()))?;
            let ctx = Ctx {
                connection: &connection,
                manager: &manager,
            };
            let mut signals = subscribe(&connection).await?;
            for view in read_all(&ctx).await? {
                let board = view.board.clone();
                let _ = updates.send(Update::State {
                    source: source.clone(),
                    board,
                    view: Box::new(view),
                });
            }
            while let Some(path) = next_signal(&mut signals).await {
                let Some(id) = board_id(&path) else { continue };
                let view = ctx.state(id).await?;
                if updates
                    .send(Update::State {
                        source: source.clone(),
                        board: id.to_owned(),
                        view: Box::new(view),
                    })
                    .is_err()
                {
                    return Ok(());
                }
            }
            Err(CtlError::Api(
                "the connection to the daemon was lost".into(),
            ))
        }
        .await;
        let error = match result {
            Ok(()) => return,
            Err(error) => error.to_string(),
        };
        if updates
            .send(Update::Failed {
                source: source.clone(),
                error,
            })
            .is_err()
        {
            return;
        }
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
}

/// `watch`: the live view, one frame (`once`), or JSON lines (`json`, one
/// daemon).
pub async fn main(
    targets: &[Target],
    once: bool,
    json: bool,
    options: Options,
) -> Result<(), CtlError> {
    if json {
        let [target] = targets else {
            return Err(CtlError::Usage(
                "watch --json reads one daemon: give at most one host".into(),
            ));
        };
        let connection = connect(target).await?;
        let manager = ManagerProxy::builder(&connection)
            .cache_properties(zbus::proxy::CacheProperties::No)
            .build()
            .await
            .map_err(|e| CtlError::Api(e.to_string()))?;
        let ctx = Ctx {
            connection: &connection,
            manager: &manager,
        };
        return stream_json(&ctx, once).await;
    }
    let local = LocalTime::default();
    if once {
        let mut rows = Vec::new();
        let mut failed = 0;
        for target in targets {
            match once_rows(target).await {
                Ok(mut more) => rows.append(&mut more),
                Err(error) => {
                    failed += 1;
                    eprintln!("chessclockctl: {error}");
                    rows.push(Row {
                        source: target.label(),
                        board: String::new(),
                        view: None,
                        age_ms: 0,
                        error: Some(error.to_string()),
                    });
                }
            }
        }
        let mut out = std::io::stdout();
        for line in render(&rows, 80, &local) {
            writeln!(out, "{}", line.text)?;
        }
        if failed == targets.len() {
            return Err(CtlError::Reported(failed));
        }
        return Ok(());
    }
    live(Sources::Daemons(targets), options, &local).await
}

/// How often the hub is read again.
const HALL_POLL: Duration = Duration::from_millis(500);

/// The hub as a source: its boards, read every [`HALL_POLL`] (each view
/// advanced to the moment of reading); a board of an offline host, or the
/// hub away, as its source's error.
async fn follow_hall(hub: Arc<HubClient>, updates: mpsc::UnboundedSender<Update>) {
    let mut poll = tokio::time::interval(HALL_POLL);
    loop {
        poll.tick().await;
        let sent = match hub.rows().await {
            Ok(rows) => {
                let mut sent = updates.send(Update::Recovered {
                    source: hub.base().to_owned(),
                });
                for row in rows {
                    let update = match row.view {
                        Some(view) => Update::State {
                            source: row.source,
                            board: row.board,
                            view: Box::new(view),
                        },
                        None => Update::Failed {
                            source: row.source,
                            error: row.error.unwrap_or_default(),
                        },
                    };
                    sent = sent.and(updates.send(update));
                }
                sent
            }
            Err(error) => updates.send(Update::Failed {
                source: hub.base().to_owned(),
                error: error.to_string(),
            }),
        };
        if sent.is_err() {
            return;
        }
    }
}

/// `--hall URL watch`: the hub's boards, live, one frame (`once`), or
/// JSON lines of the boards' snapshots (`json`).
pub async fn main_hall(
    url: &str,
    token: Option<String>,
    once: bool,
    json: bool,
    options: Options,
) -> Result<(), CtlError> {
    let hub = Arc::new(HubClient::new(url, token)?);
    let local = LocalTime::default();
    if json {
        let mut last: BTreeMap<String, Value> = BTreeMap::new();
        let mut poll = tokio::time::interval(HALL_POLL);
        let mut out = std::io::stdout();
        loop {
            poll.tick().await;
            let boards = hub.get_json("/boards.json").await?;
            if let Some(all) = boards["boards"].as_object() {
                for (board, payload) in all {
                    let snapshot = &payload["snapshot"];
                    if last.get(board) != Some(snapshot) {
                        writeln!(out, "{snapshot}")?;
                        last.insert(board.clone(), snapshot.clone());
                    }
                }
            }
            out.flush()?;
            if once {
                return Ok(());
            }
        }
    }
    if once {
        let rows = hub.rows().await?;
        let mut out = std::io::stdout();
        for line in render(&rows, 80, &local) {
            writeln!(out, "{}", line.text)?;
        }
        return Ok(());
    }
    live(Sources::Hall(hub), options, &local).await
}

async fn once_rows(target: &Target) -> Result<Vec<Row>, CtlError> {
    let connection = connect(target).await?;
    let manager = ManagerProxy::builder(&connection)
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
        .map_err(|e| CtlError::Api(e.to_string()))?;
    let ctx = Ctx {
        connection: &connection,
        manager: &manager,
    };
    Ok(read_all(&ctx)
        .await?
        .into_iter()
        .map(|view| Row {
            source: target.label(),
            board: view.board.clone(),
            view: Some(view),
            age_ms: 0,
            error: None,
        })
        .collect())
}

fn set_tone(out: &mut impl Write, tone: Tone) -> std::io::Result<()> {
    let color = match tone {
        Tone::Normal => return queue!(out, SetAttribute(Attribute::Reset)),
        Tone::Notice => Color::Cyan,
        Tone::Warning => Color::Yellow,
        Tone::Alert => Color::Red,
        Tone::Arbiter => Color::Magenta,
    };
    queue!(out, SetForegroundColor(color))?;
    if tone >= Tone::Alert {
        queue!(out, SetAttribute(Attribute::Bold))?;
    }
    Ok(())
}

/// Where the live view's boards come from.
enum Sources<'a> {
    /// Daemons over D-Bus.
    Daemons(&'a [Target]),
    /// A hall's hub.
    Hall(Arc<HubClient>),
}

async fn live(sources: Sources<'_>, options: Options, local: &LocalTime) -> Result<(), CtlError> {
    let (updates, mut incoming) = mpsc::unbounded_channel();
    let mut followers = Vec::new();
    match sources {
        Sources::Daemons(targets) => {
            for target in targets {
                followers.push(tokio::spawn(follow(target.clone(), updates.clone())));
            }
        }
        Sources::Hall(hub) => followers.push(tokio::spawn(follow_hall(hub, updates.clone()))),
    }
    drop(updates);
    // (source, board) -> (view, received); source -> error.
    let mut boards: BTreeMap<(String, String), (StateView, Instant)> = BTreeMap::new();
    let mut errors: BTreeMap<String, String> = BTreeMap::new();
    let mut called = BTreeSet::new();
    let _terminal = TerminalGuard::enter()?;
    let mut quit = spawn_key_reader();
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    let mut out = std::io::stdout();
    let result = loop {
        let mut rows: Vec<Row> = boards
            .iter()
            .filter(|((source, _), _)| !errors.contains_key(source))
            .map(|((source, board), (view, at))| Row {
                source: source.clone(),
                board: board.clone(),
                view: Some(view.clone()),
                age_ms: i64::try_from(at.elapsed().as_millis()).unwrap_or(i64::MAX),
                error: None,
            })
            .collect();
        for (source, error) in &errors {
            rows.push(Row {
                source: source.clone(),
                board: String::new(),
                view: None,
                age_ms: 0,
                error: Some(error.clone()),
            });
        }
        let now_called = calls(&rows);
        let ring = options.bell && now_called.difference(&called).next().is_some();
        called = now_called;
        let width = terminal::size().map_or(80, |(w, _)| usize::from(w));
        queue!(
            out,
            cursor::MoveTo(0, 0),
            terminal::Clear(terminal::ClearType::All)
        )?;
        for line in render(&rows, width, local) {
            if options.color {
                set_tone(&mut out, line.tone)?;
            }
            write!(out, "{}\r\n", line.text)?;
            if options.color {
                queue!(out, SetAttribute(Attribute::Reset))?;
            }
        }
        if ring {
            write!(out, "\x07")?;
        }
        out.flush()?;
        tokio::select! {
            _ = quit.recv() => break Ok(()),
            _ = tick.tick() => {}
            update = incoming.recv() => match update {
                Some(Update::State { source, board, view }) => {
                    errors.remove(&source);
                    boards.insert((source, board), (*view, Instant::now()));
                }
                Some(Update::Failed { source, error }) => {
                    errors.insert(source, error);
                }
                Some(Update::Recovered { source }) => {
                    errors.remove(&source);
                }
                None => break Err(CtlError::Api("every source stopped".into())),
            },
        }
    };
    for follower in followers {
        follower.abort();
    }
    result
}

/// `watch --json`: every board's snapshot as one JSON line, then a line for
/// each board that changes (with `once`, only the first lines).
pub async fn stream_json(ctx: &Ctx<'_>, once: bool) -> Result<(), CtlError> {
    let mut signals = subscribe(ctx.connection).await?;
    let mut stdout = std::io::stdout();
    let mut last: BTreeMap<String, BoardSnapshot> = BTreeMap::new();
    let line = |snapshot: &BoardSnapshot| {
        serde_json::to_string(snapshot).map_err(|e| CtlError::Api(e.to_string()))
    };
    for id in ctx.board_ids().await? {
        let snapshot = ctx.snapshot(&id).await?;
        writeln!(stdout, "{}", line(&snapshot)?)?;
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
            writeln!(stdout, "{}", line(&snapshot)?)?;
            stdout.flush()?;
            last.insert(id.to_owned(), snapshot);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ctl::output::tests::view;

    fn row(source: &str, view: StateView) -> Row {
        Row {
            source: source.into(),
            board: view.board.clone(),
            view: Some(view),
            age_ms: 0,
            error: None,
        }
    }

    /// An acknowledged call stays first (the clock is stopped for it) and
    /// says who is on the way.
    #[test]
    fn an_acknowledged_call_names_who_acknowledged_it() {
        let mut called = view("b2");
        called.arbiter_call_acknowledged_by = Some("ann".into());
        let (rank, tone, alert) = urgency(&row("pi1", called));
        assert_eq!((rank, tone), (0, Tone::Arbiter));
        assert_eq!(alert, "ARBITER CALLED (acknowledged by ann)");
    }

    #[test]
    fn the_most_urgent_boards_come_first_and_lines_fit_80_columns() {
        let mut calm = view("b1");
        calm.arbiter_called = false;
        calm.devices[0].connected = true;
        let called = view("b2");
        let mut flagged = view("b3");
        flagged.arbiter_called = false;
        flagged.devices[0].connected = true;
        flagged.flags = vec![Side::Black];
        flagged.running = None;
        let rows = vec![
            row("pi-board-hall-a", calm),
            row("pi2", flagged),
            row("pi3", called),
            Row {
                source: "pi4".into(),
                board: String::new(),
                view: None,
                age_ms: 0,
                error: Some("cannot connect".into()),
            },
        ];
        let lines = render(&rows, 80, &LocalTime::default());
        let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        assert!(texts[0].contains("4 boards on 4 hosts") && texts[0].contains("1 ARBITER CALL"));
        assert!(
            texts[2].starts_with("pi3/b2") && texts[2].contains("ARBITER CALLED"),
            "{texts:?}"
        );
        assert_eq!(lines[2].tone, Tone::Arbiter);
        assert!(
            texts[3].starts_with("pi2/b3") && texts[3].contains("FLAG black"),
            "{texts:?}"
        );
        assert!(
            texts[4].starts_with("pi4") && texts[4].contains("UNREACHABLE"),
            "{texts:?}"
        );
        assert!(texts[5].starts_with("pi-board-hall-a…"), "{texts:?}");
        for line in &lines {
            assert!(line.text.chars().count() <= 80, "{}", line.text);
        }
    }

    /// Issue 28 item 1: a host that cannot save its state is an alert line
    /// in `watch` (below an arbiter call, above everything else).
    #[test]
    fn a_host_not_saving_its_state_is_an_alert() {
        let mut full = view("b1");
        full.arbiter_called = false;
        full.devices[0].connected = true;
        let mut health = crate::control::StateHealth {
            saving: Some(crate::control::SavingTrouble {
                reason: crate::control::SaveFailure::NoSpace,
                saving: false,
                waiting_records: 12,
                reserve_left_bytes: 0,
                since_wall_ms: 0,
                message: "not saving: no space".into(),
            }),
            ..Default::default()
        };
        full.state_health = Some(health.clone());
        let lines = render(&[row("pi1", full.clone())], 80, &LocalTime::default());
        let line = lines.iter().find(|l| l.text.starts_with("pi1/b1")).unwrap();
        assert!(line.text.contains("NOT SAVING: no space"), "{}", line.text);
        assert_eq!(line.tone, Tone::Alert);
        // Saving into the reserve: still an alert, named so.
        if let Some(trouble) = health.saving.as_mut() {
            trouble.saving = true;
        }
        full.state_health = Some(health);
        let lines = render(&[row("pi1", full)], 80, &LocalTime::default());
        let line = lines.iter().find(|l| l.text.starts_with("pi1/b1")).unwrap();
        assert!(line.text.contains("DISK FULL"), "{}", line.text);
    }

    #[test]
    fn the_running_clock_is_extrapolated_and_rounded_up() {
        let mut running = view("b1");
        running.arbiter_called = false;
        running.devices[0].connected = true;
        let rows = vec![Row {
            age_ms: 1_500,
            ..row("", running)
        }];
        let lines = render(&rows, 80, &LocalTime::default());
        // 59.001 s 1.5 s ago: 57.501 s shows 0:58.
        assert!(lines[2].text.contains(">0:58"), "{:?}", lines[2]);
        assert_eq!(lines[2].tone, Tone::Warning, "under a minute");
    }

    #[test]
    fn a_hosts_file_has_one_host_a_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hosts");
        std::fs::write(&path, "# round 3\npi1\n\n arbiter@pi2  # hall B\n").unwrap();
        assert_eq!(read_hosts_file(&path).unwrap(), ["pi1", "arbiter@pi2"]);
        std::fs::write(&path, "pi1 pi2\n").unwrap();
        assert!(read_hosts_file(&path)
            .unwrap_err()
            .to_string()
            .contains(":1: one host a line"));
    }
}
