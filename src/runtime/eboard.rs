//! The runtime's electronic-board glue that needs no I/O: how an input
//! taken from the board is marked in the store, and how an Art. 6.4 / 6.9
//! flag report is published (State JSON, `chessclockctl status`, the
//! display's text line). The timing thread owns each board's follower and
//! calls these; they never look at a clock.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::control::BoardEvent;
use crate::eboard::{FlagReport, FlagVerdict};

pub use chessclock_core::journal::InputSource;

/// Writes a live PGN atomically into `dir` (`[daemon] pgn-dir`), creating
/// the directory first if it is missing (the shipped config names one under
/// the state directory that nothing else creates).
pub fn write_pgn(dir: &Path, file_name: &str, text: &str) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    crate::eboard::files::write_atomic(dir, file_name, text)
}

/// The verdict's stable name (`loss`, `draw`, `moves-completed`,
/// `game-already-over`), as in the State JSON and the D-Bus signal.
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

/// The report as the State JSON's `eboard.flag_report`: the flagged side,
/// whether it completed the moves its stage required (Art. 6.4; `null` in
/// sudden death), whether the opponent can mate (Art. 6.9) and the verdict.
pub fn flag_report_json(report: &FlagReport) -> Value {
    json!({
        "side": report.flagged,
        "moves_completed": report.stage.map(|s| s.fulfilled),
        "moves_required": report.stage.map(|s| s.required),
        "moves_on_board": report.stage.map(|s| s.completed),
        "opponent_can_mate": report.opponent_can_mate,
        "verdict": verdict_name(report.verdict),
    })
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

/// One line for `chessclockctl status` from the State JSON's `eboard`
/// object (`None` when the board has no electronic board).
pub fn status_line(eboard: &Value) -> Option<String> {
    let eboard = eboard.as_object()?;
    let link = if eboard.get("connected") == Some(&Value::Bool(true)) {
        "connected"
    } else {
        "not connected"
    };
    let mut line = format!(
        "e-board {}: {link}, {} half-moves",
        eboard.get("name").and_then(Value::as_str).unwrap_or("?"),
        eboard.get("ply").and_then(Value::as_u64).unwrap_or(0)
    );
    if let Some(end) = eboard.get("game_end").filter(|v| !v.is_null()) {
        let reason = end.get("reason").and_then(Value::as_str).unwrap_or("?");
        line.push_str(&format!("; game over on the board: {reason}"));
        if let Some(winner) = end.get("winner").and_then(Value::as_str) {
            line.push_str(&format!(" ({winner} wins)"));
        }
    }
    if eboard.get("next_game_waiting") == Some(&Value::Bool(true)) {
        line.push_str("; the board shows a new game: set it up with `chessclockctl new`");
    }
    if let Some(lever) = eboard.get("dgt_clock_lever").and_then(Value::as_str) {
        line.push_str(&format!("; DGT clock lever: {lever}"));
    }
    if let Some(report) = eboard.get("flag_report").filter(|v| !v.is_null()) {
        let side = report.get("side").and_then(Value::as_str).unwrap_or("?");
        let verdict = report.get("verdict").and_then(Value::as_str).unwrap_or("?");
        line.push_str(&format!("; {side}'s flag: {verdict}"));
        match report.get("moves_completed").and_then(Value::as_bool) {
            Some(true) => line.push_str(" (required moves completed, Art. 6.4)"),
            Some(false) => line.push_str(" (required moves not completed, Art. 6.4)"),
            None => {}
        }
        if report.get("opponent_can_mate") == Some(&Value::Bool(false)) {
            line.push_str(" (opponent cannot mate, Art. 6.9)");
        }
    }
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eboard::laws::{flag_report, position_from_fen};
    use crate::engine::Side;

    fn report(fen: &str, flagged: Side, required: Option<u32>, completed: u32) -> FlagReport {
        flag_report(
            &position_from_fen(fen).unwrap(),
            flagged,
            required,
            completed,
        )
    }

    const KQ_VS_K: &str = "4k3/8/8/8/8/8/8/3QK3 w - - 0 1";

    #[test]
    fn a_flag_against_a_bare_king_is_a_draw_on_the_display_and_in_the_json() {
        // White's flag; Black has a bare king: Art. 6.9 draw.
        let r = report(KQ_VS_K, Side::White, Some(40), 31);
        assert_eq!(verdict_display_text(&r), Some("DRAW 6.9"));
        assert_eq!(
            flag_report_event("b1", &r),
            BoardEvent::FlagReport {
                board: "b1".into(),
                side: Side::White,
                moves_completed: false,
                opponent_can_mate: false,
                verdict: "draw".into(),
            }
        );
        assert_eq!(
            flag_report_json(&r),
            json!({"side": "white", "moves_completed": false, "moves_required": 40,
                   "moves_on_board": 31, "opponent_can_mate": false, "verdict": "draw"})
        );
    }

    #[test]
    fn a_flag_against_a_queen_loses_and_completed_moves_are_reported() {
        let lost = report(KQ_VS_K, Side::Black, None, 12);
        assert_eq!(verdict_display_text(&lost), Some("LOSS"));
        let json = flag_report_json(&lost);
        assert_eq!(json["verdict"], "loss");
        assert_eq!(json["moves_completed"], Value::Null);
        assert_eq!(json["opponent_can_mate"], true);

        let completed = report(KQ_VS_K, Side::Black, Some(40), 40);
        assert_eq!(verdict_display_text(&completed), Some("MOVES OK 6.4"));
        assert!(matches!(
            flag_report_event("b1", &completed),
            BoardEvent::FlagReport {
                moves_completed: true,
                opponent_can_mate: true,
                ..
            }
        ));
        assert!(matches!(
            flag_report_event("b1", &lost),
            BoardEvent::FlagReport {
                moves_completed: false,
                ..
            }
        ));
        assert_eq!(flag_report_json(&completed)["verdict"], "moves-completed");
    }

    #[test]
    fn a_game_already_over_keeps_the_game_end_text() {
        // Fool's mate: White is mated.
        let mated = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3";
        let r = report(mated, Side::White, None, 2);
        assert_eq!(r.verdict, FlagVerdict::GameAlreadyOver);
        assert_eq!(verdict_display_text(&r), None);
        assert_eq!(flag_report_json(&r)["verdict"], "game-already-over");
    }

    #[test]
    fn the_pgn_directory_is_created_when_missing() {
        let dir = tempfile::tempdir().unwrap();
        let pgn_dir = dir.path().join("state").join("pgn");
        let written = write_pgn(&pgn_dir, "b1.pgn", "1. e4 *\n").unwrap();
        assert_eq!(written, pgn_dir.join("b1.pgn"));
        assert_eq!(std::fs::read_to_string(&written).unwrap(), "1. e4 *\n");
        write_pgn(&pgn_dir, "b1.pgn", "1. d4 *\n").unwrap();
        assert_eq!(std::fs::read_to_string(&written).unwrap(), "1. d4 *\n");
        // A file where the directory should be: a clear error, no panic.
        let blocked = dir.path().join("blocked");
        std::fs::write(&blocked, "").unwrap();
        assert!(write_pgn(&blocked, "b1.pgn", "*\n").is_err());
    }

    #[test]
    fn the_input_source_is_stored_as_a_plain_name() {
        assert_eq!(
            serde_json::to_value(InputSource::Eboard).unwrap(),
            json!("eboard")
        );
        assert_eq!(
            serde_json::from_value::<InputSource>(json!("eboard")).unwrap(),
            InputSource::Eboard
        );
    }

    #[test]
    fn status_lines_say_link_moves_and_reports() {
        assert_eq!(status_line(&Value::Null), None);
        let plain = json!({"name": "/dev/dgt", "connected": true, "ply": 7,
                           "game_end": null, "flag_report": null});
        assert_eq!(
            status_line(&plain).unwrap(),
            "e-board /dev/dgt: connected, 7 half-moves"
        );
        let flagged = json!({"name": "/dev/dgt", "connected": false, "ply": 61,
            "game_end": null,
            "flag_report": {"side": "white", "moves_completed": false,
                            "opponent_can_mate": false, "verdict": "draw"}});
        assert_eq!(
            status_line(&flagged).unwrap(),
            "e-board /dev/dgt: not connected, 61 half-moves; white's flag: draw \
             (required moves not completed, Art. 6.4) (opponent cannot mate, Art. 6.9)"
        );
        let mate = json!({"name": "b", "connected": true, "ply": 4,
            "game_end": {"reason": "checkmate", "winner": "black"}, "flag_report": null});
        assert_eq!(
            status_line(&mate).unwrap(),
            "e-board b: connected, 4 half-moves; game over on the board: checkmate (black wins)"
        );
        let next = json!({"name": "b", "connected": true, "ply": 33, "game_end": null,
            "flag_report": null, "next_game_waiting": true, "dgt_clock_lever": "ignored"});
        assert_eq!(
            status_line(&next).unwrap(),
            "e-board b: connected, 33 half-moves; the board shows a new game: set it up with \
             `chessclockctl new`; DGT clock lever: ignored"
        );
    }
}
