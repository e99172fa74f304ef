//! The broadcast: the round's PGN built from the board states the hub
//! follows, served at `/round.pgn` for a broadcast to poll.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use serde_json::Value;

use super::hub::Hub;

/// The broadcast's HTTP routes, merged into the hub's.
pub fn routes() -> Router<Arc<Hub>> {
    Router::new().route("/round.pgn", get(pgn))
}

async fn pgn(State(hub): State<Arc<Hub>>) -> impl IntoResponse {
    let now = crate::clock::wall_now_us().div_euclid(1000);
    let text = round_pgn(&hub.known().boards, now);
    (
        [(
            header::CONTENT_TYPE,
            "application/x-chess-pgn; charset=utf-8",
        )],
        text,
    )
}

/// `H:MM:SS` of a time in ms (rounded up to the second, as a clock shows
/// it; never negative).
fn clock_text(ms: i64) -> String {
    let seconds = ms.max(0).saturating_add(999) / 1000;
    format!(
        "{}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

/// A side's remaining time at wall instant `now_ms`, extrapolated from a
/// state payload's snapshot while that side runs.
pub fn remaining_at(payload: &Value, side: &str, now_ms: i64) -> Option<i64> {
    let snapshot = &payload["snapshot"];
    let remaining = snapshot[format!("{side}_remaining_ms")].as_i64()?;
    let over = payload["state"]["result"].is_object()
        || snapshot["flags"].as_array().is_some_and(|f| !f.is_empty());
    let runs = snapshot["running"].as_str() == Some(side)
        && snapshot["paused"] != true
        && snapshot["started"] == true
        && !over;
    if !runs {
        return Some(remaining);
    }
    let since = payload["snapshot_wall_ms"]
        .as_i64()
        .map_or(0, |at| now_ms.saturating_sub(at).max(0));
    Some(remaining.saturating_sub(since).max(0))
}

/// A PGN tag value with `\` and `"` escaped.
fn tag_value(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The round's PGN: one game per board (in board id order): the board's
/// own PGN when it has one (an electronic board), else the seven tag
/// roster and `*`; every game with `Board`, `WhiteClock`, `BlackClock` (as
/// of `now_ms`, wall ms, extrapolated for the running side) and
/// `ReferenceTime` (the wall instant of those clocks, UTC) tags. Games are
/// separated by a blank line.
pub fn round_pgn(boards: &BTreeMap<String, Value>, now_ms: i64) -> String {
    let mut games = Vec::new();
    for (board, payload) in boards {
        let mut extra = vec![("Board".to_owned(), board.clone())];
        for (tag, side) in [("WhiteClock", "white"), ("BlackClock", "black")] {
            if let Some(ms) = remaining_at(payload, side, now_ms) {
                extra.push((tag.to_owned(), clock_text(ms)));
            }
        }
        extra.push(("ReferenceTime".to_owned(), reference_time(now_ms)));
        let own = payload["pgn"].as_str().filter(|p| !p.trim().is_empty());
        let (tags, body) = match own {
            Some(text) => split_pgn(text),
            None => {
                let result = payload["state"]["result"]["result"]
                    .as_str()
                    .unwrap_or("*")
                    .to_owned();
                let tags = [
                    ("Event", "?"),
                    ("Site", "?"),
                    ("Date", "????.??.??"),
                    ("Round", "?"),
                    ("White", "?"),
                    ("Black", "?"),
                    ("Result", result.as_str()),
                ]
                .iter()
                .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
                .collect();
                (tags, result)
            }
        };
        let mut text = String::new();
        let mut all: Vec<(String, String)> = tags
            .into_iter()
            .filter(|(name, _)| !extra.iter().any(|(own, _)| own == name))
            .collect();
        all.extend(extra);
        for (name, value) in all {
            text.push_str(&format!("[{name} \"{}\"]\n", tag_value(&value)));
        }
        text.push('\n');
        text.push_str(body.trim());
        text.push('\n');
        games.push(text);
    }
    games.join("\n")
}

/// The tags and the movetext of one PGN game.
fn split_pgn(text: &str) -> (Vec<(String, String)>, String) {
    let mut tags = Vec::new();
    let mut body = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        let tag = trimmed
            .strip_prefix('[')
            .and_then(|t| t.strip_suffix(']'))
            .and_then(|t| t.split_once(' '))
            .and_then(|(name, value)| {
                let value = value.trim().strip_prefix('"')?.strip_suffix('"')?;
                Some((
                    name.to_owned(),
                    value.replace("\\\"", "\"").replace("\\\\", "\\"),
                ))
            });
        match tag {
            Some(tag) if body.trim().is_empty() => tags.push(tag),
            _ => {
                body.push_str(line);
                body.push('\n');
            }
        }
    }
    (tags, body)
}

/// `HH:MM:SS` (UTC) of a wall instant in ms.
fn reference_time(now_ms: i64) -> String {
    let seconds = now_ms.div_euclid(1000).rem_euclid(86_400);
    format!(
        "{:02}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;
    use serde_json::json;

    fn state(running: &str, white: i64, at: i64, pgn: Option<&str>) -> Value {
        json!({
            "snapshot": {"started": true, "paused": false, "running": running,
                         "white_remaining_ms": white, "black_remaining_ms": 60_000, "flags": []},
            "snapshot_wall_ms": at,
            "state": {"result": null},
            "pgn": pgn,
        })
    }

    #[test]
    fn the_running_clock_is_extrapolated() {
        let payload = state("white", 10_000, 1_000, None);
        assert_eq!(remaining_at(&payload, "white", 4_500), Some(6_500));
        assert_eq!(remaining_at(&payload, "black", 4_500), Some(60_000));
        assert_eq!(remaining_at(&payload, "white", 99_000), Some(0));
        assert_eq!(clock_text(6_500), "0:00:07");
        assert_eq!(clock_text(3_600_000), "1:00:00");
    }

    #[test]
    fn the_round_pgn_has_every_board_with_clock_tags() {
        let mut boards = BTreeMap::new();
        boards.insert("b1".to_owned(), state("white", 10_000, 0, None));
        boards.insert(
            "b2".to_owned(),
            state(
                "black",
                10_000,
                0,
                Some("[Event \"Open\"]\n[White \"A \\\"B\\\"\"]\n[WhiteClock \"9:99:99\"]\n\n1. e4 {[%clk 0:00:10]} *\n"),
            ),
        );
        let text = round_pgn(&boards, 2_000);
        assert!(text.contains("[Board \"b1\"]\n[WhiteClock \"0:00:08\"]\n[BlackClock \"0:01:00\"]\n[ReferenceTime \"00:00:02\"]\n\n*\n"), "{text}");
        assert!(text.contains("[Event \"Open\"]\n[White \"A \\\"B\\\"\"]\n[Board \"b2\"]\n[WhiteClock \"0:00:10\"]\n[BlackClock \"0:00:58\"]"), "{text}");
        assert!(text.contains("1. e4 {[%clk 0:00:10]} *"), "{text}");
        assert!(!text.contains("9:99:99"), "{text}");
        assert_eq!(text.matches("[Result ").count(), 1, "{text}");
    }
}
