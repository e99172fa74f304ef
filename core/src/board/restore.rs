//! Rebuilding a board from its stored game after a daemon restart.
//!
//! The journal's rows are replayed in their stored order through the same
//! placement as live inputs, so the engine comes back exactly as it was
//! (late presses land where they landed). Rows that are not engine inputs
//! (flags by time, withdrawals, restarts, e-board moves) rebuild the record
//! and the marks.
//!
//! # Time across a restart
//! Game instants are stored as offsets from the game's instant 0; each run
//! maps them to CLOCK_MONOTONIC with an epoch. CLOCK_MONOTONIC survives a
//! process restart within one boot of the machine (the kernel's boot id
//! tells which boot), so when the stored game's boot is the current one its
//! stored epoch is used again: the running side is charged the true time up
//! to the restart, and presses the units made during the outage (they keep
//! them until acknowledged and resend them with their own timestamps) are
//! placed at their true instants. After a reboot the monotonic clock starts
//! afresh: the game continues from the last instant the daemon is known to
//! have run (its "alive" checkpoint), and the down time is the wall-clock
//! gap. Either way a game that was running is paused at the restart for
//! the arbiter (Art. 6.10a), unless the config says to resume.

use super::{Action, Board, BoardSetup, GameSpec};
use crate::contract::Caller;
use crate::engine::{Input, Notice};
use crate::journal::{Record, StoredEvent, StoredGame};
use crate::time::Micros;
use crate::views::{GameHeader, HistoryView, RestartInfo, ScheduledStart};

/// What the shell knows about this run when it restores a game.
#[derive(Clone, Debug)]
pub struct Resumed {
    /// The machine's boot (`/proc/sys/kernel/random/boot_id`), if known.
    pub boot_id: Option<String>,
    /// Monotonic µs now.
    pub now: Micros,
    /// Wall-clock µs now.
    pub wall: i64,
}

impl Board {
    /// The board with its stored game `stored` (whose control `spec`
    /// resolves), as of `run`.
    pub fn restore(
        setup: BoardSetup,
        spec: GameSpec,
        stored: &StoredGame,
        run: &Resumed,
    ) -> (Board, Vec<Action>) {
        let Resumed { boot_id, now, wall } = run.clone();
        let last_row = stored.events.iter().map(|r| r.offset_us).max().unwrap_or(0);
        let alive = stored.alive_offset_us.max(last_row);
        let same_boot = boot_id.is_some()
            && stored.boot_id == boot_id
            && stored
                .epoch_mono_us
                .is_some_and(|epoch| epoch.saturating_add(alive) <= now);
        let epoch = match stored.epoch_mono_us {
            Some(epoch) if same_boot => epoch,
            _ => now.saturating_sub(alive),
        };
        let mut board = Board::blank(
            setup,
            spec,
            boot_id.clone(),
            epoch,
            stored.created_wall_us,
            stored.caller_uid,
        );
        board.header = GameHeader {
            board: board.setup.id.clone(),
            control: stored.control.clone(),
            settings: stored.settings,
            created_wall_us: stored.created_wall_us,
            caller_uid: stored.caller_uid,
            game: Some(stored.id),
            control_prose: Some(crate::views::match_prose(&board.spec.control)),
            tenths_below_ms: Some(board.setup.display.tenths_below_ms),
        };
        let mut rows = Vec::with_capacity(stored.events.len());
        let mut last_start_at = None;
        // The follower hears every row as it heard it live, acting on
        // nothing (the stored rows hold what was done).
        board.follower.begin_restore();
        for row in &stored.events {
            let mut outcome: Vec<Notice> = Vec::new();
            let before = matches!(
                row.event,
                StoredEvent::Adjust { .. } | StoredEvent::PressUndone { .. }
            )
            .then(|| board.game.state(row.offset_us));
            if let StoredEvent::PressUndone { side, press_at_us } = row.event {
                match board.game.remove(press_at_us, Input::Press(side)) {
                    Some(Ok(applied)) => {
                        board
                            .arbiter_presses
                            .retain(|&(at, s)| !(at == press_at_us && s == side));
                        if let Some(rerun) = &applied.rerun {
                            for fall in &rerun.withdrawn {
                                board
                                    .flag_falls
                                    .retain(|f| !(f.side == fall.side && f.at == fall.at));
                            }
                        }
                        board.recompute_marks();
                    }
                    Some(Err(error)) => tracing::error!(board = %board.setup.id, %error,
                        offset_us = row.offset_us, "a stored undo was refused while rebuilding the game"),
                    None => tracing::error!(board = %board.setup.id, offset_us = row.offset_us,
                        "a stored undo names a press the game does not have"),
                }
            }
            if let Some(input) = row.event.input() {
                match board.game.apply_placed(
                    row.offset_us,
                    input,
                    rows.len() as u64,
                    row.event.relative_by(),
                ) {
                    Ok(applied) => {
                        if let (Input::Press(side), None) = (input, &row.origin) {
                            if applied
                                .caused
                                .iter()
                                .any(|n| matches!(n, Notice::Pressed { .. }))
                            {
                                board.arbiter_presses.push((row.offset_us, side));
                            }
                        }
                        board.apply_marks(&applied.caused);
                        if let Some(rerun) = &applied.rerun {
                            for fall in &rerun.withdrawn {
                                board
                                    .flag_falls
                                    .retain(|f| !(f.side == fall.side && f.at == fall.at));
                            }
                            board.follower_rerun(row.offset_us, rerun, row.wall_us);
                            for replayed in &rerun.replayed {
                                if let Some(earlier) = rows.get_mut(replayed.tag as usize) {
                                    super::inputs::revision(replayed).apply(earlier);
                                }
                            }
                        } else {
                            board.follower_hears(
                                row.offset_us,
                                row.wall_us,
                                &applied.caused,
                                false,
                            );
                        }
                        outcome = applied.caused;
                    }
                    Err(error) => {
                        tracing::error!(board = %board.setup.id, %error, offset_us = row.offset_us,
                        "a stored event was refused while rebuilding the game")
                    }
                }
            }
            match &row.event {
                StoredEvent::StartAt {
                    unix_time_us,
                    forced,
                    ..
                } => last_start_at = Some((*unix_time_us, *forced, row.caller_uid)),
                StoredEvent::StartCancelled { .. } => last_start_at = None,
                StoredEvent::ArbiterCall => {
                    board.marks.arbiter_called = true;
                    board.marks.arbiter_called_at = Some(row.offset_us);
                }
                // An acknowledgment stands with its call, until a resume.
                StoredEvent::CallAcknowledged if board.marks.arbiter_called => {
                    let caller = Caller {
                        uid: row.caller_uid,
                        name: row.caller_name.clone(),
                    };
                    board.marks.arbiter_call_acknowledged =
                        Some((super::commands::caller_words(&caller), row.offset_us));
                }
                StoredEvent::Stage { stage, .. } if !board.stages_reached.contains(stage) => {
                    board.stages_reached.push(*stage);
                }
                StoredEvent::Restart {
                    down_us,
                    same_boot,
                    was_running,
                    ..
                } => {
                    board.marks.down_time = Some(*down_us);
                    board.restart = Some(RestartInfo {
                        down: *down_us,
                        same_boot: *same_boot,
                        was_running: *was_running,
                        paused_at: None,
                    });
                }
                // A pause from a device is the arbiter button (Art. 6.12b).
                StoredEvent::Pause if row.origin.is_some() => {
                    board.marks.arbiter_called = true;
                    board.marks.arbiter_called_at = Some(row.offset_us);
                }
                StoredEvent::Flag {
                    side,
                    stage,
                    last_stage,
                } => {
                    board.apply_marks(&[Notice::FlagFell {
                        side: *side,
                        at: row.offset_us,
                        stage: *stage,
                        last_stage: *last_stage,
                    }]);
                }
                StoredEvent::FlagWithdrawn { side, flag_at_us } => {
                    board
                        .flag_falls
                        .retain(|f| !(f.side == *side && f.at == *flag_at_us));
                    board.recompute_marks();
                }
                StoredEvent::PressNotPlaced { .. } => {
                    board.unplaced = board.unplaced.saturating_add(1)
                }
                StoredEvent::BoardMove { .. } | StoredEvent::BoardTakeBack { .. } => {
                    if let Some(event) = board_event_of(&row.event, board.mono(row.offset_us)) {
                        board.follower.on_board_event(&event);
                    }
                }
                StoredEvent::Tags { tags } => {
                    let tags: Vec<(String, String)> =
                        tags.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                    if let Err(error) = board.follower.set_tags(&tags) {
                        tracing::warn!(board = %board.setup.id, %error, "a stored tag was refused");
                    }
                }
                StoredEvent::GameResult {
                    result,
                    termination,
                } => {
                    board
                        .follower
                        .restore_result(board.mono(row.offset_us), *result, *termination)
                }
                _ => {}
            }
            if let Some(origin) = &row.origin {
                board
                    .devices
                    .resume(&origin.serial, origin.boot_id, origin.event);
            }
            let state = board.game.state(row.offset_us);
            rows.push(super::inputs::history_row(
                row,
                &outcome,
                &state,
                before.as_ref(),
            ));
        }
        board.history_len = rows.len() as u64;
        // The record as it was: every row committed already.
        board
            .outbox
            .immediately(Action::NewHistory(Box::new(board.header.clone())));
        for row in rows {
            board.outbox.immediately(Action::History(Box::new(row)));
        }
        board.outbox.record(Record::Epoch {
            game: stored.id,
            epoch,
            boot_id: boot_id.clone(),
        });
        let resume = board.follower.end_restore();
        if board.marks.game_end.is_none() {
            board.marks.game_end = board.end_text();
        }
        if let (Some(_), Some(resume)) = (&board.eboard, resume) {
            tracing::info!(board = %board.setup.id, plies = board.follower.ply(), "the electronic board resumes the stored game");
            board.outbox.soon(Action::Eboard(resume));
        }
        let t_restart = now.saturating_sub(epoch).max(board.game.processed_to());
        let was_running = board.game.state(alive).running;
        // Flags that fell while the daemon was down (within one boot), at
        // their exact instants.
        let notices = board.game.advance(t_restart);
        board.time_notices(now, wall, &notices);
        let started = board.game.state(t_restart).started;
        tracing::info!(board = %board.setup.id, events = stored.events.len(), same_boot,
            running = ?was_running, "game rebuilt from the state database");
        if started {
            let down = if same_boot {
                t_restart.saturating_sub(alive)
            } else {
                wall.saturating_sub(stored.alive_wall_us).max(0)
            };
            let running_now = board.game.state(t_restart).running.is_some();
            board.write_row(
                t_restart,
                wall,
                StoredEvent::Restart {
                    down_us: down,
                    same_boot,
                    was_running,
                    replayed: u32::try_from(stored.events.len()).unwrap_or(u32::MAX),
                    paused: running_now && !board.setup.resume_after_restart,
                },
                &Caller::DAEMON,
                None,
                &[],
            );
            board.restart = Some(RestartInfo {
                down,
                same_boot,
                was_running,
                paused_at: None,
            });
            if was_running.is_some() {
                board.marks.down_time = Some(down);
                if same_boot {
                    board.outage = Some((alive, t_restart));
                }
            }
            if running_now && !board.setup.resume_after_restart {
                let _ = board.input(
                    now,
                    wall,
                    t_restart,
                    Input::Pause,
                    StoredEvent::Pause,
                    Caller::DAEMON,
                    None,
                    None,
                );
                if let Some(restart) = board.restart.as_mut() {
                    restart.paused_at = Some(t_restart);
                }
                tracing::warn!(board = %board.setup.id, down_ms = down / crate::time::MS, same_boot,
                    "the daemon restarted during a game: the clock is PAUSED; the arbiter decides (Art. 6.10a)");
            }
        } else if let Some((unix_time_us, forced, caller_uid)) = last_start_at {
            let at = now.saturating_add(unix_time_us.saturating_sub(wall));
            if at >= now {
                board.scheduled = Some(super::Scheduled {
                    start: ScheduledStart {
                        at,
                        unix_time_us,
                        forced,
                    },
                    caller: Caller {
                        uid: caller_uid,
                        name: None,
                    },
                });
                tracing::info!(board = %board.setup.id, unix_time_us, "scheduled start restored");
            }
        }
        // Built from committed rows only.
        let pgn = board.pgn_game();
        board.outbox.immediately(Action::Pgn(pgn));
        board.dirty = true;
        let mut actions = board.finish(now);
        board.publish_first_view(now, &mut actions);
        (board, actions)
    }
}

impl Board {
    /// A stored game's history (a past game of the board, or its current
    /// one as committed): the rows as a restart rebuilds them, without
    /// anything the restart itself would add.
    pub fn stored_history(setup: BoardSetup, spec: GameSpec, stored: &StoredGame) -> HistoryView {
        let run = Resumed {
            boot_id: None,
            now: stored.alive_offset_us.max(0),
            wall: stored.alive_wall_us,
        };
        let (board, actions) = Board::restore(setup, spec, stored, &run);
        let events = actions
            .into_iter()
            .filter_map(|action| match action {
                Action::History(row) => Some(*row),
                _ => None,
            })
            .collect();
        HistoryView {
            header: board.header.clone(),
            events,
        }
    }

    /// A stored game's PGN, as the board keeps it (see [`Board::pgn`]).
    pub fn stored_pgn(setup: BoardSetup, spec: GameSpec, stored: &StoredGame) -> Option<String> {
        let run = Resumed {
            boot_id: None,
            now: stored.alive_offset_us.max(0),
            wall: stored.alive_wall_us,
        };
        Some(Board::restore(setup, spec, stored, &run).0.pgn())
    }
}

/// The detector event a stored board move stands for.
fn board_event_of(event: &StoredEvent, at: Micros) -> Option<crate::eboard::BoardEvent> {
    match event {
        StoredEvent::BoardMove {
            ply,
            side,
            side_moves,
            san,
            uci,
            fen_after,
            confirmed,
        } => Some(crate::eboard::BoardEvent::MoveDetected(
            crate::eboard::DetectedMove {
                ply: *ply,
                side: *side,
                side_moves: *side_moves,
                san: san.clone(),
                uci: uci.clone(),
                fen_after: fen_after.clone(),
                status: if *confirmed {
                    crate::eboard::MoveStatus::Confirmed
                } else {
                    crate::eboard::MoveStatus::Tentative
                },
                at,
            },
        )),
        StoredEvent::BoardTakeBack { to_ply, fen } => Some(crate::eboard::BoardEvent::TakeBack {
            to_ply: *to_ply,
            fen: fen.clone(),
            at,
        }),
        _ => None,
    }
}
