//! The commands that talk to one daemon: reads (boards, status, history,
//! export, games, presets) and changes (new, start, pause, resume, press,
//! undo, adjust, note, device), each change echoed board by board.
//!
//! Promises: what the CLI can check itself is checked before anything is
//! sent (a time is never a bare number; more than 999 moves, more than
//! 100 h, a stage the control lacks are refused with the engine's own
//! bounds); a change on several boards goes on after a board refuses, and
//! every refusal is printed (the exit status is then 1).

use std::io::Write;

use chessclock_core::engine::MS;
use chessclock_core::timecontrol::{MAX_MOVES, MAX_TIME};
use chessclock_core::views::{ControlView, HistoryRow, StateView};

use super::time::{self, LocalTime};
use super::{api, echo, output, print_presets, Cmd, CtlError, Ctx, DeviceAction, SideArg};

/// The longest time a command takes: the engine's bound, in ms.
const MAX_TIME_MS: i64 = MAX_TIME / MS;

/// Runs a command that needs the daemon.
pub async fn run(ctx: &Ctx<'_>, command: Cmd) -> Result<(), CtlError> {
    let mut out = std::io::stdout();
    let local = LocalTime::default();
    match command {
        Cmd::Boards { json } => {
            let ids = ctx.board_ids().await?;
            if json {
                writeln!(out, "{}", serde_json::json!(ids))?;
            } else {
                for id in ids {
                    writeln!(out, "{id}")?;
                }
            }
        }
        Cmd::Status { boards, json } => status(ctx, &boards, json, &local).await?,
        Cmd::New {
            targets,
            all,
            yes,
            force,
        } => new_game(ctx, targets, all, yes, force).await?,
        Cmd::Start {
            boards,
            all,
            at,
            force,
            cancel,
        } => start(ctx, &boards, all, at.as_deref(), force, cancel, &local).await?,
        Cmd::Pause { boards, all } => pause_or_resume(ctx, &boards, all, true).await?,
        Cmd::Resume { boards, all } => pause_or_resume(ctx, &boards, all, false).await?,
        Cmd::Press { board, side } => {
            let id = ctx.resolve(&board).await?;
            api(&id, ctx.board(&id).await?.press(side.as_str()).await)?;
            let after = ctx.state(&id).await?;
            let history = ctx.history(&id, None).await?;
            let row = echo::last_row(&history.events, |r| {
                matches!(r.event, chessclock_core::journal::StoredEvent::Press { side: s } if s == side.side())
                    && r.device.is_none()
            });
            writeln!(out, "{}", echo::pressed(side.side(), &after, row))?;
        }
        Cmd::Undo { board } => {
            let id = ctx.resolve(&board).await?;
            api(&id, ctx.board(&id).await?.undo_press().await)?;
            let after = ctx.state(&id).await?;
            let history = ctx.history(&id, None).await?;
            let row = echo::last_row(&history.events, |r| r.event.kind() == "press-undone");
            writeln!(out, "{}", echo::undone(&after, row))?;
        }
        Cmd::AckCall { board } => {
            let id = ctx.resolve(&board).await?;
            api(&id, ctx.board(&id).await?.ack_call().await)?;
            let after = ctx.state(&id).await?;
            writeln!(out, "{}", echo::call_acknowledged(&id, &after))?;
        }
        Cmd::Adjust {
            board,
            side,
            remaining,
            add,
            sub,
            moves,
            stage,
        } => {
            let request = AdjustRequest::parse(
                remaining.as_deref(),
                add.as_deref(),
                sub.as_deref(),
                moves,
                stage,
            )?;
            adjust(ctx, &board, side, request).await?;
        }
        Cmd::Note { board, text } => {
            let id = ctx.resolve(&board).await?;
            let text = text.join(" ");
            api(&id, ctx.board(&id).await?.note(&text).await)?;
            writeln!(out, "{}", echo::noted(&id, &text))?;
        }
        Cmd::History { board, json, game } => {
            let id = ctx.resolve(&board).await?;
            let history = ctx.history(&id, game).await?;
            if json {
                writeln!(out, "{}", output::records_json(&history))?;
            } else {
                write!(out, "{}", output::history_table(&history, &local))?;
            }
        }
        Cmd::Export {
            board,
            csv,
            pgn,
            game,
            ..
        } => {
            let id = ctx.resolve(&board).await?;
            if pgn {
                let proxy = ctx.board(&id).await?;
                let text = match game {
                    None => api(&id, proxy.pgn().await)?,
                    Some(game) => api(&id, proxy.game_pgn(game).await)?,
                };
                write!(out, "{text}")?;
                if !text.ends_with('\n') {
                    writeln!(out)?;
                }
            } else {
                let history = ctx.history(&id, game).await?;
                if csv {
                    write!(out, "{}", output::records_csv(&history))?;
                } else {
                    writeln!(out, "{}", output::records_json(&history))?;
                }
            }
        }
        Cmd::Games { board, json } => {
            let id = ctx.resolve(&board).await?;
            let games = ctx.games(&id).await?;
            if json {
                writeln!(
                    out,
                    "{}",
                    serde_json::to_string(&games).map_err(|e| CtlError::Api(e.to_string()))?
                )?;
            } else {
                write!(out, "{}", output::games_table(&games, &local))?;
            }
        }
        Cmd::Presets { json } => {
            let text = api("presets", ctx.manager.presets().await)?;
            let presets: Vec<chessclock_core::views::PresetView> =
                super::parse_json("daemon", "list of presets", &text)?;
            print_presets(&presets, json)?;
        }
        Cmd::Tags {
            board,
            event,
            site,
            date,
            round,
            white,
            black,
            tag,
        } => {
            let mut tags: Vec<(String, String)> = [
                ("Event", event),
                ("Site", site),
                ("Date", date),
                ("Round", round),
                ("White", white),
                ("Black", black),
            ]
            .into_iter()
            .filter_map(|(name, value)| value.map(|v| (name.to_owned(), v)))
            .collect();
            for pair in &tag {
                let (name, value) = pair.split_once('=').ok_or_else(|| {
                    CtlError::Usage(format!("--tag `{pair}`: expected NAME=VALUE"))
                })?;
                tags.push((name.to_owned(), value.to_owned()));
            }
            if tags.is_empty() {
                return Err(CtlError::Usage(
                    "tags: give at least one tag (--white, --black, --round, ..., --tag NAME=VALUE)"
                        .into(),
                ));
            }
            for (name, value) in &tags {
                crate::eboard::follower::check_tag(name, value).map_err(CtlError::Usage)?;
            }
            let id = ctx.resolve(&board).await?;
            let map: std::collections::HashMap<&str, &str> = tags
                .iter()
                .map(|(name, value)| (name.as_str(), value.as_str()))
                .collect();
            api(&id, ctx.board(&id).await?.set_tags(map).await)?;
            let set: Vec<String> = tags
                .iter()
                .map(|(name, value)| {
                    if value.is_empty() {
                        format!("{name} back to its default")
                    } else {
                        format!("{name} \"{value}\"")
                    }
                })
                .collect();
            writeln!(out, "{id}: tags set: {}", set.join(", "))?;
        }
        Cmd::GameResult {
            board,
            result,
            termination,
        } => {
            let termination = termination.unwrap_or_default();
            chessclock_core::contract::result_command(&result, &termination)
                .map_err(CtlError::Usage)?;
            let id = ctx.resolve(&board).await?;
            api(
                &id,
                ctx.board(&id)
                    .await?
                    .set_result(&result, &termination)
                    .await,
            )?;
            if result == "*" {
                writeln!(out, "{id}: result withdrawn")?;
            } else {
                writeln!(out, "{id}: result {result}; the clock is stopped")?;
            }
        }
        Cmd::Device { action } => match action {
            DeviceAction::Add { path } => {
                api(&path, ctx.manager.add_device(&path).await)?;
                writeln!(out, "{path}: told the daemon the device appeared")?;
            }
            DeviceAction::Remove { path } => {
                api(&path, ctx.manager.remove_device(&path).await)?;
                writeln!(out, "{path}: told the daemon the device went away")?;
            }
        },
        Cmd::Watch { .. }
        | Cmd::Replay { .. }
        | Cmd::Eboard { .. }
        | Cmd::Completions { .. }
        | Cmd::Man { .. } => {}
    }
    out.flush()?;
    Ok(())
}

async fn status(
    ctx: &Ctx<'_>,
    boards: &[String],
    json: bool,
    local: &LocalTime,
) -> Result<(), CtlError> {
    let ids = ctx.resolve_all(boards, boards.is_empty()).await?;
    let mut views = Vec::new();
    // The State JSON as sent: it also carries the daemon's `state_health`.
    let mut raws = Vec::new();
    for id in &ids {
        let text = api(id, ctx.board(id).await?.state().await)?;
        views.push(super::parse_json::<StateView>(id, "state", &text)?);
        raws.push(serde_json::from_str::<serde_json::Value>(&text).unwrap_or_default());
    }
    let mut out = std::io::stdout();
    if json {
        let now_ms = ctx.daemon_now_ms().await?;
        let mut entries = Vec::new();
        for (id, raw) in ids.iter().zip(&raws) {
            let snapshot = ctx.snapshot(id).await?;
            entries.push(serde_json::json!({
                "board": id,
                "daemon_now_ms": now_ms,
                "snapshot": snapshot,
                "state": raw,
            }));
        }
        let value = if boards.len() == 1 {
            entries.remove(0)
        } else {
            serde_json::Value::Array(entries)
        };
        writeln!(out, "{value}")?;
        return Ok(());
    }
    write!(out, "{}", output::status_table(&views))?;
    for view in &views {
        for note in output::state_notes(view, local) {
            writeln!(out, "{note}")?;
        }
    }
    // The daemon's health, not a board's: said once.
    if let Some(raw) = raws.first() {
        for note in output::health_notes(raw) {
            writeln!(out, "{note}")?;
        }
        for note in output::host_notes(raw) {
            writeln!(out, "{note}")?;
        }
    }
    Ok(())
}

/// Runs `each` for every board, printing its echo or its refusal; fails
/// (already reported) when any board refused.
async fn for_each_board<F, Fut>(ids: &[String], each: F) -> Result<(), CtlError>
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<String>, CtlError>>,
{
    let mut failed = 0;
    for id in ids {
        match each(id.clone()).await {
            Ok(lines) => {
                for line in lines {
                    println!("{line}");
                }
            }
            Err(error) => {
                failed += 1;
                if ids.len() == 1 {
                    return Err(error);
                }
                eprintln!("chessclockctl: {error}");
            }
        }
    }
    if failed > 0 {
        return Err(CtlError::Reported(failed));
    }
    Ok(())
}

/// Whether the board's game has started and not ended (a flag, a freeze,
/// the end on an electronic board or a result ends it).
fn in_progress(view: &StateView) -> bool {
    view.started
        && !view.frozen
        && view.flags.is_empty()
        && view.eboard.as_ref().is_none_or(|e| e.game_end.is_none())
        && view.result.is_none()
}

async fn new_game(
    ctx: &Ctx<'_>,
    mut targets: Vec<String>,
    all: bool,
    yes: bool,
    force: bool,
) -> Result<(), CtlError> {
    let Some(control) = targets.pop() else {
        return Err(CtlError::Usage(
            "give the board(s) and the control: chessclockctl new BOARD CONTROL".into(),
        ));
    };
    if all && !targets.is_empty() {
        return Err(CtlError::Usage(
            "give either board ids or --all, then the control".into(),
        ));
    }
    if !all && targets.is_empty() {
        let ids = ctx.board_ids().await?;
        return Err(CtlError::Usage(if ids.contains(&control) {
            format!(
                "give the control after the board: chessclockctl new {control} CONTROL \
                 (chessclockctl presets lists the presets)"
            )
        } else {
            format!("which board? chessclockctl new BOARD {control} (or --all {control})")
        }));
    }
    let ids = ctx.resolve_all(&targets, all).await?;
    let text = api(
        &ids.join(", "),
        ctx.manager.describe_control(&control).await,
    )?;
    let view: ControlView = super::parse_json("daemon", "control", &text)?;
    if let Some(why) = view.short_base().filter(|_| !yes) {
        return Err(CtlError::Usage(format!(
            "{why}: add --yes if that is what you mean"
        )));
    }
    for_each_board(&ids, |id| {
        let control = control.clone();
        let view = view.clone();
        async move {
            let before = ctx.state(&id).await?;
            let moves = format!(
                "{} move{}",
                before.white.moves,
                if before.white.moves == 1 { "" } else { "s" }
            );
            if in_progress(&before) && before.running.is_some() {
                // The daemon never replaces a running game: say so first.
                return Err(CtlError::Usage(format!(
                    "{id}: the game in progress ({moves}) is running: pause it first \
                     (chessclockctl pause {id}), then chessclockctl new {id} {control} --force"
                )));
            }
            if in_progress(&before) && !force {
                return Err(CtlError::Usage(format!(
                    "{id}: the game in progress ({moves}, paused) would be replaced: add --force \
                     (the old game stays readable: chessclockctl games {id})"
                )));
            }
            let scheduled = before.scheduled_start_unix_ms.filter(|_| !before.started);
            if scheduled.is_some() && !force {
                return Err(CtlError::Usage(format!(
                    "{id}: a start is scheduled; a new game cancels it: add --force \
                     (or chessclockctl start {id} --cancel first)"
                )));
            }
            api(&id, ctx.board(&id).await?.new_game(&control).await)?;
            let mut lines = vec![echo::new_game(&id, &view)];
            if scheduled.is_some() {
                lines.push(format!("{id}: the scheduled start was cancelled"));
            }
            Ok(lines)
        }
    })
    .await
}

#[allow(clippy::too_many_arguments)]
async fn start(
    ctx: &Ctx<'_>,
    boards: &[String],
    all: bool,
    at: Option<&str>,
    force: bool,
    cancel: bool,
    local: &LocalTime,
) -> Result<(), CtlError> {
    let ids = ctx.resolve_all(boards, all).await?;
    let at_us = match at {
        Some(text) => {
            let spec = time::StartTime::parse(text).map_err(CtlError::Usage)?;
            Some(
                spec.resolve(chessclock_host::clock::wall_now_us())
                    .map_err(CtlError::Usage)?,
            )
        }
        None => None,
    };
    let mut before = Vec::new();
    for id in &ids {
        before.push(ctx.state(id).await?);
    }
    if all && !cancel {
        // One call for every board: one instant for the whole round.
        let result = match at_us {
            Some(us) => api("all boards", ctx.manager.start_all_at(us, force).await),
            None => api("all boards", ctx.manager.start_all().await),
        };
        for (id, was) in ids.iter().zip(&before) {
            let after = settled_start(ctx, id, ctx.state(id).await?).await?;
            if after.started != was.started
                || after.scheduled_start_unix_ms != was.scheduled_start_unix_ms
            {
                println!("{}", start_echo(was, &after, at_us.is_some(), local));
            }
        }
        return result;
    }
    let before = &before;
    for_each_board(&ids, |id| async move {
        let was = before
            .iter()
            .find(|v| v.board == id)
            .cloned()
            .ok_or_else(|| CtlError::Api(format!("{id}: no state")))?;
        let proxy = ctx.board(&id).await?;
        if cancel {
            api(&id, proxy.cancel_start().await)?;
            return Ok(vec![echo::cancelled(&was, local)]);
        }
        match at_us {
            Some(us) => api(&id, proxy.start_at_forced(us, force).await)?,
            None => api(&id, proxy.start().await)?,
        }
        let after = settled_start(ctx, &id, ctx.state(&id).await?).await?;
        Ok(vec![start_echo(&was, &after, at_us.is_some(), local)])
    })
    .await
}

/// The state after a start. A start at an instant already reached happens
/// with its command, and the reply comes only with the view that shows it
/// (the board core's promise). A start scheduled a moment ahead is due by
/// the time of the read but starts at the daemon's next deadline: waits (at
/// most 2 s) until the board shows it started, so the echo says "started"
/// rather than "starts in 0:00".
async fn settled_start(ctx: &Ctx<'_>, id: &str, after: StateView) -> Result<StateView, CtlError> {
    let due = |view: &StateView| {
        !view.started
            && view
                .scheduled_start_unix_ms
                .is_some_and(|at| at.saturating_mul(1000) <= chessclock_host::clock::wall_now_us())
    };
    let mut view = after;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    while due(&view) && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        view = ctx.state(id).await?;
    }
    Ok(view)
}

/// What a start did, as the state after it shows: a start at an instant
/// already reached (`--at +0s`) starts at once and says so, not "starts as
/// scheduled".
fn start_echo(before: &StateView, after: &StateView, scheduled: bool, local: &LocalTime) -> String {
    let pending = after.scheduled_start_ms.is_some() || after.scheduled_start_unix_ms.is_some();
    if scheduled && (pending || !after.started) {
        echo::scheduled(before, after, local)
    } else {
        echo::started(after)
    }
}

async fn pause_or_resume(
    ctx: &Ctx<'_>,
    boards: &[String],
    all: bool,
    pause: bool,
) -> Result<(), CtlError> {
    let ids = ctx.resolve_all(boards, all).await?;
    if all {
        let mut before = Vec::new();
        for id in &ids {
            before.push(ctx.state(id).await?);
        }
        let result = if pause {
            api("all boards", ctx.manager.pause_all().await)
        } else {
            api("all boards", ctx.manager.resume_all().await)
        };
        for (id, was) in ids.iter().zip(&before) {
            let after = settled_start(ctx, id, ctx.state(id).await?).await?;
            if after.paused != was.paused {
                println!(
                    "{}",
                    if pause {
                        echo::paused(&after)
                    } else {
                        echo::resumed(&after)
                    }
                );
            }
        }
        return result;
    }
    for_each_board(&ids, |id| async move {
        let proxy = ctx.board(&id).await?;
        if pause {
            api(&id, proxy.pause().await)?;
        } else {
            api(&id, proxy.resume().await)?;
        }
        let after = ctx.state(&id).await?;
        Ok(vec![if pause {
            echo::paused(&after)
        } else {
            echo::resumed(&after)
        }])
    })
    .await
}

/// What `adjust` asks for, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdjustRequest {
    pub remaining_ms: Option<i64>,
    /// `--add` (positive) or `--sub` (negative).
    pub delta_ms: Option<i64>,
    pub moves: Option<u32>,
    pub stage: Option<u32>,
}

impl AdjustRequest {
    /// Checks the options with the engine's own bounds.
    pub fn parse(
        remaining: Option<&str>,
        add: Option<&str>,
        sub: Option<&str>,
        moves: Option<u32>,
        stage: Option<u32>,
    ) -> Result<AdjustRequest, CtlError> {
        let time = |option: &str, text: &str| -> Result<i64, CtlError> {
            let ms = chessclock_core::timetext::parse_clock_ms(text)
                .map_err(|e| CtlError::Usage(format!("--{option} {e}")))?;
            if ms > MAX_TIME_MS {
                return Err(CtlError::Usage(format!(
                    "--{option} {text}: more than a game can have (at most {} h)",
                    MAX_TIME_MS / 3_600_000
                )));
            }
            Ok(ms)
        };
        let remaining_ms = remaining.map(|t| time("remaining", t)).transpose()?;
        let delta_ms = match (add, sub) {
            (Some(text), _) => Some(time("add", text)?),
            (None, Some(text)) => Some(-time("sub", text)?),
            (None, None) => None,
        };
        if delta_ms == Some(0) {
            return Err(CtlError::Usage(
                "--add/--sub 0: nothing to add or take away".into(),
            ));
        }
        if let Some(moves) = moves.filter(|&m| m > MAX_MOVES) {
            return Err(CtlError::Usage(format!(
                "--moves {moves}: more than a game can have (at most {MAX_MOVES})"
            )));
        }
        if stage == Some(0) {
            return Err(CtlError::Usage("--stage 0: stages count from 1".into()));
        }
        Ok(AdjustRequest {
            remaining_ms,
            delta_ms,
            moves,
            stage,
        })
    }
}

async fn adjust(
    ctx: &Ctx<'_>,
    board: &str,
    side: SideArg,
    request: AdjustRequest,
) -> Result<(), CtlError> {
    let id = ctx.resolve(board).await?;
    let before = ctx.state(&id).await?;
    let own = before.side(side.side());
    if let (Some(stage), Some(max)) = (request.stage, own.max_stage) {
        if stage > max {
            return Err(CtlError::Usage(format!(
                "--stage {stage}: {side}'s control `{}` has {max} stage{}",
                before.control,
                if max == 1 { "" } else { "s" },
                side = side.as_str()
            )));
        }
    }
    if own.remaining_ms.is_none() && (request.remaining_ms.is_some() || request.delta_ms.is_some())
    {
        return Err(CtlError::Usage(format!(
            "{id}: {}'s clock counts up (no time limit): there is no remaining time to set",
            side.as_str()
        )));
    }
    let proxy = ctx.board(&id).await?;
    let mut lines = Vec::new();
    let mut rows_seen = ctx.history(&id, None).await?.events.len();
    let mut echo_rows = |history: &[HistoryRow], lines: &mut Vec<String>| {
        for row in history.iter().skip(rows_seen) {
            if row.event.kind() == "adjust"
                && row.event.side() == Some(side.side())
                && row.correction.is_some()
            {
                lines.push(echo::corrected(&id, row, before.style()));
            }
        }
        rows_seen = history.len();
    };
    if let Some(delta_ms) = request.delta_ms {
        api(&id, proxy.adjust_by(side.as_str(), delta_ms).await)?;
        let history = ctx.history(&id, None).await?;
        echo_rows(&history.events, &mut lines);
    }
    if request.remaining_ms.is_some() || request.moves.is_some() || request.stage.is_some() {
        let to_i32 =
            |value: Option<u32>| value.map_or(-1, |n| i32::try_from(n).unwrap_or(i32::MAX));
        let remaining = request.remaining_ms.unwrap_or(-1);
        if request.stage.is_none() {
            api(
                &id,
                proxy
                    .adjust(side.as_str(), remaining, to_i32(request.moves))
                    .await,
            )?;
        } else {
            api(
                &id,
                proxy
                    .adjust_with_stage(
                        side.as_str(),
                        remaining,
                        to_i32(request.moves),
                        to_i32(request.stage),
                    )
                    .await,
            )?;
        }
        let history = ctx.history(&id, None).await?;
        echo_rows(&history.events, &mut lines);
    }
    if lines.is_empty() {
        lines.push(format!("{id} {} corrected", side.as_str()));
    }
    for line in lines {
        println!("{line}");
    }
    let after = ctx.state(&id).await?;
    if let Some(warning) = echo::move_count_warning(&after) {
        eprintln!("chessclockctl: {warning}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjustments_are_checked_with_the_engines_bounds() {
        let ok = AdjustRequest::parse(Some("4:30"), None, None, Some(13), None).unwrap();
        assert_eq!(ok.remaining_ms, Some(270_000));
        let sub = AdjustRequest::parse(None, None, Some("1:00"), None, None).unwrap();
        assert_eq!(sub.delta_ms, Some(-60_000));
        let err = |r, a, s, m, st| {
            AdjustRequest::parse(r, a, s, m, st)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err(Some("270"), None, None, None, None),
            "--remaining `270`: a bare number is ambiguous (seconds? milliseconds?): \
             write 4:30, 1:04:30, 270s, 4m30s or 1500ms"
        );
        assert_eq!(
            err(None, None, None, Some(1000), None),
            "--moves 1000: more than a game can have (at most 999)"
        );
        assert_eq!(
            err(Some("101:00:00"), None, None, None, None),
            "--remaining 101:00:00: more than a game can have (at most 100 h)"
        );
        assert_eq!(
            err(None, None, None, None, Some(0)),
            "--stage 0: stages count from 1"
        );
    }
}
