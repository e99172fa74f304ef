//! What the board core follows of a board's DGT electronic board: the link,
//! the game the board shows ([`BoardTracker`]), the live PGN and the Art.
//! 6.4 / 6.9 report at a flag fall. Pure glue between the board's events,
//! the engine's notices and the board core's record.

use crate::contract::BoardEvent;
use crate::display::Marks;
use crate::eboard::{
    BoardEvent as DetectorEvent, BoardTracker, EboardEvent, FlagReport, FlagVerdict, GameEndReason,
    MoveStatus, PgnTags,
};
use crate::engine::{Adjustment, ClockState, MatchControl, Notice, Side};
use crate::journal::StoredEvent;
use crate::views::{EboardView, FlagReportView, GameEndView};

/// A board's electronic board.
#[derive(Clone, Debug)]
pub(super) struct Follow {
    pub name: String,
    pub connected: bool,
    pub serial: Option<String>,
    pub tracker: BoardTracker,
    pub flag_report: Option<FlagReport>,
}

/// What one event of the board changed.
#[derive(Debug, Default)]
pub(super) struct Followed {
    pub link_changed: bool,
    /// A journal row to keep (a move or a takeback), so a restart can follow
    /// the game again.
    pub record: Option<StoredEvent>,
    pub game_end: Option<(GameEndReason, Option<Side>)>,
    pub pgn_changed: bool,
}

/// The verdict's stable name, as in the State view and the D-Bus signal.
pub fn verdict_name(verdict: FlagVerdict) -> &'static str {
    match verdict {
        FlagVerdict::MovesCompleted => "moves-completed",
        FlagVerdict::Loss => "loss",
        FlagVerdict::Draw => "draw",
        FlagVerdict::GameAlreadyOver => "game-already-over",
    }
}

/// The display's text line for a flag report: short enough for small units.
/// `None` when the game had already ended on the board (its own text stays).
pub fn verdict_display_text(report: &FlagReport) -> Option<&'static str> {
    match report.verdict {
        FlagVerdict::MovesCompleted => Some("MOVES OK 6.4"),
        FlagVerdict::Loss => Some("LOSS"),
        FlagVerdict::Draw => Some("DRAW 6.9"),
        FlagVerdict::GameAlreadyOver => None,
    }
}

/// The report in the State view.
pub fn flag_report_view(report: &FlagReport) -> FlagReportView {
    FlagReportView {
        side: report.flagged,
        moves_completed: report.stage.map(|s| s.fulfilled),
        moves_required: report.stage.map(|s| s.required),
        moves_on_board: report.stage.map(|s| s.completed),
        opponent_can_mate: report.opponent_can_mate,
        verdict: verdict_name(report.verdict).to_owned(),
    }
}

/// The report as a board event (the D-Bus `FlagReport` signal):
/// `moves_completed` is false in sudden death, where no moves are required.
pub fn flag_report_event(board: &str, report: &FlagReport) -> BoardEvent {
    BoardEvent::FlagReport {
        board: board.to_owned(),
        side: report.flagged,
        moves_completed: report.stage.is_some_and(|s| s.fulfilled),
        opponent_can_mate: report.opponent_can_mate,
        verdict: verdict_name(report.verdict).to_owned(),
    }
}

impl Follow {
    pub fn new(name: &str, control: &MatchControl) -> Follow {
        let tags = PgnTags {
            time_control: crate::eboard::pgn::time_control_tag(&control.white),
            ..PgnTags::default()
        };
        Follow {
            name: name.to_owned(),
            connected: false,
            serial: None,
            tracker: BoardTracker::with_pgn(tags),
            flag_report: None,
        }
    }

    /// A new game on the clock: the board follows it from the start
    /// position again; the link stays as it is.
    pub fn renew(&self, control: &MatchControl, at: crate::time::Micros) -> Follow {
        let mut new = Follow::new(&self.name, control);
        new.connected = self.connected;
        new.serial.clone_from(&self.serial);
        if self.connected {
            new.tracker.apply(&EboardEvent::Connected {
                path: std::path::PathBuf::from(&self.name),
                at,
            });
        }
        new
    }

    pub fn view(&self) -> EboardView {
        EboardView {
            name: self.name.clone(),
            connected: self.connected,
            serial: self.serial.clone(),
            usable: self.tracker.usable(),
            ply: self.tracker.ply(),
            fen: self.tracker.fen().map(str::to_owned),
            game_end: self.tracker.game_end().map(|(reason, winner)| GameEndView {
                reason: match reason {
                    GameEndReason::Checkmate => "checkmate".into(),
                    GameEndReason::Stalemate => "stalemate".into(),
                },
                winner,
            }),
            flag_report: self.flag_report.as_ref().map(flag_report_view),
        }
    }

    /// Follows one event of the board's task.
    pub fn on_event(&mut self, event: &EboardEvent) -> Followed {
        self.tracker.apply(event);
        let mut followed = Followed::default();
        match event {
            EboardEvent::Connected { .. } => {
                self.connected = true;
                followed.link_changed = true;
            }
            EboardEvent::Disconnected { .. } => {
                self.connected = false;
                followed.link_changed = true;
            }
            EboardEvent::SerialNumber(serial) => {
                self.serial = Some(serial.clone());
                followed.link_changed = true;
            }
            EboardEvent::Board(DetectorEvent::GameEnd { reason, winner, .. }) => {
                followed.game_end = Some((*reason, *winner));
            }
            _ => {}
        }
        followed.record = match event {
            EboardEvent::Board(DetectorEvent::MoveDetected(m)) => Some(StoredEvent::BoardMove {
                ply: m.ply,
                side: m.side,
                side_moves: m.side_moves,
                san: m.san.clone(),
                uci: m.uci.clone(),
                fen_after: m.fen_after.clone(),
                confirmed: m.status == MoveStatus::Confirmed,
            }),
            EboardEvent::Board(DetectorEvent::TakeBack { to_ply, fen, .. }) => {
                Some(StoredEvent::BoardTakeBack {
                    to_ply: *to_ply,
                    fen: fen.clone(),
                })
            }
            _ => None,
        };
        followed.pgn_changed = matches!(event, EboardEvent::Board(_));
        followed
    }

    /// With `move-count = "eboard"`: the correction to apply just before a
    /// press of `side`, whose clock runs with `engine_moves` completed.
    pub fn adjustment_before_press(&self, side: Side, engine_moves: u32) -> Option<Adjustment> {
        self.tracker.adjustment_before_press(side, engine_moves)
    }

    /// Follows the engine's notices (the PGN's clock comments, the flag
    /// report). `state` is the engine's state right after them. Returns
    /// whether the PGN changed and the new flag reports.
    pub fn on_notices(
        &mut self,
        notices: &[Notice],
        state: &ClockState,
        control: &MatchControl,
        marks: &mut Marks,
    ) -> (bool, Vec<FlagReport>) {
        let mut pgn_changed = false;
        let mut reports = Vec::new();
        for notice in notices {
            pgn_changed |= self.tracker.on_engine_notice(notice, state);
            match notice {
                Notice::FlagFell { side, stage, .. } => {
                    let report = self
                        .tracker
                        .flag_report(*side, control.for_side(*side), *stage);
                    if let Some(text) = report.as_ref().and_then(verdict_display_text) {
                        marks.game_end = Some(text.to_owned());
                    }
                    if let Some(report) = report {
                        reports.push(report);
                    }
                    self.flag_report = report;
                }
                // Time given back after the flag withdraws its report.
                Notice::Adjusted(adjustment)
                    if adjustment.remaining.is_some_and(|r| r > 0)
                        && self
                            .flag_report
                            .as_ref()
                            .is_some_and(|r| r.flagged == adjustment.side) =>
                {
                    self.flag_report = None;
                    if self.tracker.game_end().is_none() {
                        marks.game_end = None;
                    }
                }
                _ => {}
            }
        }
        (pgn_changed, reports)
    }

    /// The live PGN's text.
    pub fn pgn(&self) -> Option<String> {
        self.tracker.pgn().map(|pgn| pgn.render())
    }
}
