//! One way of showing time: at every instant of any game, the display
//! units, `chessclockctl status` and `watch`, the history and its CSV, and
//! the PGN's `%clk` write the same time (the displays' tenths below 20 s,
//! the PGN in whole seconds), and none ever shows a negative time.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

use chessclock_core::board::{Action, Board, BoardCommand, BoardInput, BoardSetup, GameSpec};
use chessclock_core::clocktext;
use chessclock_core::contract::Caller;
use chessclock_core::display::{ButtonSide, DisplayConfig, DisplayRules, Marks};
use chessclock_core::eboard::pgn::clock_text;
use chessclock_core::engine::{MatchControl, Settings, Side, MS};
use chessclock_core::timecontrol::parse;
use chessclock_core::views::{GameHeader, HistoryRow, HistoryView};
use chessclock_protocol::Capabilities;
use chessclockd::ctl::{output, watch};
use proptest::prelude::*;

const T0: i64 = 5_000_000_000;
const WALL0: i64 = 1_796_126_400_000_000;

fn setup(tenths_below_ms: u64) -> BoardSetup {
    BoardSetup {
        id: "b1".into(),
        buttons: None,
        displays: vec![],
        eboard: None,
        white_button: ButtonSide::Left,
        start_on_black_press: false,
        display: DisplayConfig {
            tenths_below_ms,
            ..DisplayConfig::default()
        },
        moves_from_eboard: false,
        default_time_ms: 0,
        resume_after_restart: false,
        pgn_file: false,
        pgn_tags: Default::default(),
        state_notice: None,
    }
}

/// Feeds `input` at `ms` and commits what it recorded; returns the rows
/// of the history it released.
fn step(board: &mut Board, ms: i64, input: BoardInput, rows: &mut Vec<HistoryRow>) {
    let mut actions = board.handle(T0 + ms * MS, WALL0 + ms * MS, input);
    loop {
        let mut last_seq = None;
        for action in actions.drain(..) {
            match action {
                Action::Store { seq, .. } => last_seq = Some(seq),
                Action::History(row) => rows.push(*row),
                _ => {}
            }
        }
        match last_seq {
            Some(seq) => {
                actions = board.handle(
                    T0 + ms * MS,
                    WALL0 + ms * MS,
                    BoardInput::Committed { seq, ok: true },
                )
            }
            None => break,
        }
    }
}

fn display_rules(tenths: bool, tenths_below_ms: u64) -> DisplayRules {
    DisplayRules::new(
        &DisplayConfig {
            tenths_below_ms,
            ..DisplayConfig::default()
        },
        &Capabilities {
            displays: 2,
            digits: 5,
            tenths,
            text_chars: 16,
            ..Capabilities::default()
        },
        ButtonSide::Left,
    )
}

/// The PGN's `H:MM:SS` as a display without tenths writes it.
fn without_hours(pgn: &str) -> String {
    pgn.strip_prefix("0:")
        .map(|rest| rest.trim_start_matches('0').to_owned())
        .map(|rest| {
            if rest.starts_with(':') {
                format!("0{rest}")
            } else {
                rest
            }
        })
        .unwrap_or_else(|| pgn.to_owned())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn every_surface_shows_the_same_time_at_every_instant(
        control in prop::sample::select(&["3", "25", "60+2", "300+3", "5d2", "300b3", "2/20:30", "*30", "4000", "-"][..]),
        tenths_below_ms in prop::sample::select(&[0u64, 10_000, 20_000, 60_000][..]),
        gaps in prop::collection::vec(1i64..9_000, 0..8),
        look in 0i64..40_000,
        since in 0i64..3_000,
    ) {
        let spec = GameSpec {
            text: control.to_owned(),
            control: MatchControl::same(parse(control).unwrap()),
            settings: Settings::default(),
        };
        let (mut board, _) = Board::new(setup(tenths_below_ms), spec, None, Caller::DAEMON, T0, WALL0);
        let mut rows = Vec::new();
        let caller = Caller::uid(1000);
        step(&mut board, 0, BoardInput::Command { token: None, caller: caller.clone(), command: BoardCommand::Start }, &mut rows);
        let tenths = display_rules(true, tenths_below_ms);
        let seconds = display_rules(false, tenths_below_ms);
        let marks = Marks::default();
        let mut now = 0;
        for gap in gaps {
            now += gap;
            step(&mut board, now, BoardInput::Tick, &mut rows);
            if let Some(side) = board.state(T0 + now * MS).running {
                let seen = rows.len();
                step(&mut board, now, BoardInput::Command { token: None, caller: caller.clone(), command: BoardCommand::Press(side) }, &mut rows);
                // The press's row (and its CSV cells) show the clocks as
                // the display shows them right after the press.
                let shown = tenths.render(&board.state(T0 + now * MS), &marks);
                let history = HistoryView { header: header(control, tenths_below_ms), events: rows.clone() };
                let records = history.records();
                for (row, record) in rows.iter().zip(&records).skip(seen) {
                    prop_assert_eq!(row.t_us, now * MS);
                    for (ms, cell, display) in [
                        (row.white_remaining_ms, record.white_ms, shown.left.time.as_str()),
                        (row.black_remaining_ms, record.black_ms, shown.right.time.as_str()),
                    ] {
                        prop_assert_eq!(ms, cell);
                        if let Some(ms) = ms {
                            let text = clocktext::remaining_ms(ms, history.header.style());
                            prop_assert_eq!(text.as_str(), display, "row {}", row.event.kind());
                        }
                    }
                }
            }
        }
        let before = now + since;
        let at = before + look;
        for t in [before, at] {
            step(&mut board, t, BoardInput::Tick, &mut rows);
        }
        let state = board.state(T0 + at * MS);
        let view = board.model(T0 + at * MS).state_view(T0 + at * MS);
        // What `watch` shows of a view read `look` ms earlier.
        let earlier = board.model(T0 + before * MS).state_view(T0 + before * MS);
        let shown = tenths.render(&state, &marks);
        for side in Side::BOTH {
            let display = if side == Side::White { shown.left.time.as_str() } else { shown.right.time.as_str() }.to_owned();
            let status = output::side_time(&view, side);
            prop_assert_eq!(&status, &display, "status vs display, {} at {} ms", side, at);
            let no_events_since = view.flags == earlier.flags
                && view.running == earlier.running
                && view.paused == earlier.paused
                && view.white.stage == earlier.white.stage
                && view.black.stage == earlier.black.stage;
            if no_events_since {
                let watched = output::side_time(&watch::advance(&earlier, look), side);
                prop_assert_eq!(&watched, &display, "watch vs display, {} at {} ms", side, at);
            }
            prop_assert!(!display.starts_with('-') && !status.starts_with('-'));
            if let Some(remaining) = state.side(side).remaining {
                let pgn = clock_text(remaining);
                prop_assert_eq!(without_hours(&pgn), seconds.time_text(state.side(side)), "pgn {}", pgn);
            }
        }
    }
}

fn header(control: &str, tenths_below_ms: u64) -> GameHeader {
    GameHeader {
        board: "b1".into(),
        control: control.into(),
        settings: Settings::default(),
        created_wall_us: WALL0,
        caller_uid: None,
        game: None,
        control_prose: None,
        tenths_below_ms: Some(tenths_below_ms),
    }
}
