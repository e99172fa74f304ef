//! A round's results out, in the formats the pairing programs and the
//! bulletins read, each reconciled with the boards' own records.
//!
//! HTTP routes (merged into the round's), the current round's; each also
//! as `/rounds/N/FILE` for round N of the event (a past round's from its
//! recorded games):
//! * `results.json`: every pairing's board, players and result, the
//!   round's byes and the `disagreements` (below);
//! * `results.trf` (also `results.trf16`): the pairings' TRF file with the
//!   round's results and points, as TRF16 ([`results::trf26::trf16`]);
//! * `results.trf26`: the same as TRF26, with the number of rounds, the
//!   encoded time control and the byes' records
//!   ([`results::trf26::trf26`]);
//! * `results.res`: Vega's `.res`;
//! * `results.csv`: one line a game and a bye (see [`csv_of`]);
//! * `bulletin.pgn`: the round's finished games, each its recorded final
//!   PGN with the desk's result (see [`bulletin_of`]);
//! * `/event.pgn`: every round's bulletin, round by round.
//!
//! `round.pgn` (the live round, for a broadcast) is the round's; as
//! `/rounds/N/round.pgn` it is served here too.
//!
//! Reconciliation: a game's result on the desk (the event store's) is
//! compared with the board's own record: its live state's result while it
//! still shows the round's game (its `Round` tag is `R.B`), else the
//! `Result` of the final PGN recorded from it. A difference is a
//! disagreement, listed in `results.json` (`{board, id, desk,
//! board_record, source, corrected}`), on the desk's page and in the CSV;
//! it is never settled silently: until an arbiter's correction gives the
//! game the result the desk has (`corrected`), the TRF and `.res` exports
//! answer `409` naming it, and the bulletin gives the game `*` with a
//! comment saying both results.

use super::*;
use crate::event::store::Correction;
use crate::pairings::Bye;
use crate::results::trf26;
use axum::extract::Path as UrlPath;

/// A result the desk and the board's own record do not agree on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Disagreement {
    /// The pairing board.
    pub board: u32,
    /// The hall board it was played on.
    pub id: Option<String>,
    /// The desk's result.
    pub desk: String,
    /// The board's.
    pub board_record: String,
    /// Where the board's comes from: `state` (its live state) or `pgn`
    /// (its final PGN as recorded).
    pub source: &'static str,
    /// An arbiter's correction gave the game the desk's result: settled.
    pub corrected: bool,
}

/// Each pairing's board and result, as far as known.
pub(super) struct Row<'a> {
    pub(super) pairing: &'a Pairing,
    pub(super) id: Option<String>,
    pub(super) result: Option<String>,
    pub(super) termination: Option<String>,
    pub(super) kept: Option<&'a GameRecord>,
    pub(super) disagreement: Option<Disagreement>,
}

/// A tag's value in a PGN text.
fn pgn_tag(text: &str, name: &str) -> Option<String> {
    split_pgn(text)
        .0
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v)
}

/// The board's own record of pairing board `board`'s game: the live
/// state's result while it shows the round's game, else the recorded final
/// PGN's `Result`.
fn board_record(
    round: u32,
    board: u32,
    payload: Option<&Value>,
    kept: &GameRecord,
) -> Option<(String, &'static str)> {
    if let Some(payload) = payload {
        let this_round = pgn_tag(payload["pgn"].as_str().unwrap_or(""), "Round")
            .is_some_and(|r| r == format!("{round}.{board}"));
        let result = payload["state"]["result"]["result"]
            .as_str()
            .filter(|r| Outcome::parse(r).is_some());
        if let (true, Some(result)) = (this_round, result) {
            return Some((result.to_owned(), "state"));
        }
    }
    kept.pgn
        .as_deref()
        .and_then(|pgn| pgn_tag(pgn, "Result"))
        .filter(|r| Outcome::parse(r).is_some())
        .map(|r| (r, "pgn"))
}

pub(super) fn rows<'a>(setup: &'a Setup, boards: &BTreeMap<String, Value>) -> Option<Vec<Row<'a>>> {
    let pairings = setup.pairings.as_ref()?;
    let assigned = pairings::assign(
        pairings.games.iter().map(|g| g.board),
        boards.keys().map(String::as_str),
        &setup.map,
    );
    Some(
        pairings
            .games
            .iter()
            .map(|pairing| {
                let kept = setup.kept.get(&pairing.board);
                // The hall board the game was played on, else the one the
                // pairing board is given to now.
                let id = kept
                    .and_then(|k| k.board_id.clone())
                    .or_else(|| assigned.get(&pairing.board).cloned());
                let payload = id.as_ref().and_then(|id| boards.get(id));
                let state = payload.map(|payload| &payload["state"]["result"]);
                let live = (!setup.closed).then(|| {
                    (
                        state
                            .and_then(|r| r["result"].as_str())
                            .filter(|r| Outcome::parse(r).is_some())
                            .map(str::to_owned),
                        state
                            .and_then(|r| r["termination"].as_str())
                            .map(str::to_owned),
                    )
                });
                // The recorded result first: the board may have moved on
                // to another game since.
                let (result, termination) = match kept {
                    Some(kept) => (Some(kept.result.clone()), Some(kept.termination.clone())),
                    None => live.unwrap_or((None, None)),
                };
                let disagreement = kept.and_then(|kept| {
                    let (record, source) =
                        board_record(pairings.round, pairing.board, payload, kept)?;
                    (Outcome::parse(&record) != Outcome::parse(&kept.result)).then(|| {
                        Disagreement {
                            board: pairing.board,
                            id: id.clone(),
                            desk: kept.result.clone(),
                            board_record: record,
                            source,
                            corrected: false,
                        }
                    })
                });
                Row {
                    pairing,
                    id,
                    result,
                    termination,
                    kept,
                    disagreement,
                }
            })
            .collect(),
    )
}

/// Marks the disagreements an arbiter's correction settled: the last
/// correction of the board gave the desk's result.
fn settle(rows: &mut [Row<'_>], corrections: &[Correction]) {
    for row in rows {
        if let Some(disagreement) = row.disagreement.as_mut() {
            disagreement.corrected = corrections
                .iter()
                .rev()
                .find(|c| c.board == disagreement.board)
                .is_some_and(|c| c.after == disagreement.desk);
        }
    }
}

/// The disagreements no correction settled, as a refusal's text.
fn unsettled(rows: &[Row<'_>]) -> Option<String> {
    let lines: Vec<String> = rows
        .iter()
        .filter_map(|row| row.disagreement.as_ref())
        .filter(|d| !d.corrected)
        .map(|d| {
            format!(
                "board {}{}: the desk has {}, the board's {} says {}",
                d.board,
                d.id.as_deref()
                    .map(|id| format!(" ({id})"))
                    .unwrap_or_default(),
                d.desk,
                if d.source == "state" {
                    "state"
                } else {
                    "final PGN"
                },
                d.board_record
            )
        })
        .collect();
    (!lines.is_empty()).then(|| {
        format!(
            "the desk's results and the boards' records disagree; nothing is chosen for you: \
             settle each by a correction on the desk (the result that stands)\n{}\n",
            lines.join("\n")
        )
    })
}

pub(super) fn plain(status: StatusCode, text: String) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        text,
    )
        .into_response()
}

pub(super) const NO_PAIRINGS: &str =
    "no pairings: load the round's pairings on the desk (/desk, or start chessclock-hall with \
     --pairings FILE (TRF16 or CSV) and --round N)\n";

fn bye_json(bye: &Bye) -> Value {
    json!({"player": bye.player.name, "number": bye.player.number,
           "code": bye.code.to_string(), "kind": bye.kind()})
}

pub(super) fn results_json_of(
    setup: &Setup,
    boards: &BTreeMap<String, Value>,
    corrections: &[Correction],
) -> Response {
    let Some(mut rows) = rows(setup, boards) else {
        return plain(StatusCode::NOT_FOUND, NO_PAIRINGS.to_owned());
    };
    settle(&mut rows, corrections);
    let games: Vec<Value> = rows
        .iter()
        .map(|row| {
            json!({"board": row.pairing.board, "id": row.id,
                   "white": row.pairing.white.name, "black": row.pairing.black.name,
                   "white_number": row.pairing.white.number,
                   "black_number": row.pairing.black.number,
                   "result": row.result, "termination": row.termination,
                   "entered_by": row.kept.map(|k| k.entered_by.clone())})
        })
        .collect();
    let disagreements: Vec<&Disagreement> = rows
        .iter()
        .filter_map(|r| r.disagreement.as_ref())
        .collect();
    let pairings = setup.pairings.as_ref();
    let byes: Vec<Value> = pairings
        .iter()
        .flat_map(|p| p.byes.iter())
        .map(bye_json)
        .collect();
    axum::Json(
        json!({"round": pairings.map(|p| p.round), "games": games, "byes": byes,
                      "disagreements": disagreements}),
    )
    .into_response()
}

/// The decided games with both players' numbers, or the boards that lack
/// them.
pub(super) fn decided(rows: &[Row<'_>]) -> Result<Vec<GameResult>, String> {
    let mut games = Vec::new();
    for row in rows {
        let Some(outcome) = row.result.as_deref().and_then(Outcome::parse) else {
            continue;
        };
        match (row.pairing.white.number, row.pairing.black.number) {
            (Some(white), Some(black)) => games.push(GameResult {
                white,
                black,
                outcome,
            }),
            _ => {
                return Err(format!(
                    "board {}: the pairings give no player numbers (a CSV needs white_id and \
                     black_id columns)\n",
                    row.pairing.board
                ))
            }
        }
    }
    Ok(games)
}

/// Which TRF.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Trf {
    V16,
    V26,
}

fn results_trf_of(
    setup: &Setup,
    boards: &BTreeMap<String, Value>,
    corrections: &[Correction],
    version: Trf,
) -> Response {
    let Some(mut rows) = rows(setup, boards) else {
        return plain(StatusCode::NOT_FOUND, NO_PAIRINGS.to_owned());
    };
    let Some(Pairings {
        source: Source::Trf(trf),
        round,
        byes,
        ..
    }) = setup.pairings.as_ref()
    else {
        return plain(
            StatusCode::NOT_FOUND,
            "the pairings came from a CSV: a TRF export needs the pairings' TRF file\n".to_owned(),
        );
    };
    settle(&mut rows, corrections);
    if let Some(message) = unsettled(&rows) {
        return plain(StatusCode::CONFLICT, message);
    }
    let games = match decided(&rows) {
        Ok(games) => games,
        Err(message) => return plain(StatusCode::CONFLICT, message),
    };
    match results::trf_with_results(trf, *round, &games) {
        Ok(text) => plain(
            StatusCode::OK,
            match version {
                Trf::V16 => trf26::trf16(&text),
                Trf::V26 => trf26::trf26(&text, *round, byes, setup.control.as_deref()),
            },
        ),
        Err(error) => plain(StatusCode::CONFLICT, format!("{error}\n")),
    }
}

fn results_res_of(
    setup: &Setup,
    boards: &BTreeMap<String, Value>,
    corrections: &[Correction],
) -> Response {
    let Some(mut rows) = rows(setup, boards) else {
        return plain(StatusCode::NOT_FOUND, NO_PAIRINGS.to_owned());
    };
    settle(&mut rows, corrections);
    if let Some(message) = unsettled(&rows) {
        return plain(StatusCode::CONFLICT, message);
    }
    let round = setup.pairings.as_ref().map_or(0, |p| p.round);
    match decided(&rows) {
        Ok(games) => plain(StatusCode::OK, results::vega_res(round, &games)),
        Err(message) => plain(StatusCode::CONFLICT, message),
    }
}

/// A CSV field: quoted when it holds `,`, `"` or a line break; a text a
/// spreadsheet would read as a formula (`=`, `+`, `-`, `@` first) gets a
/// `'` before it.
fn csv_field(text: &str) -> String {
    let text = if text.starts_with(['=', '+', '-', '@']) {
        format!("'{text}")
    } else {
        text.to_owned()
    };
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

/// The CSV header of [`csv_of`].
pub const CSV_HEADER: &str =
    "round,board,white,white_id,black,black_id,result,termination,entered_by,board_record\n";

/// The round's results as CSV ([`CSV_HEADER`]): one line a game in board
/// order (`result` empty while undecided; `board_record` the board's own
/// record where it disagrees with the desk's, with `(corrected)` once a
/// correction settled it), then one a bye (no board, the player as
/// `white`, the bye's letter as `result`, its kind as `termination`).
fn csv_of(setup: &Setup, boards: &BTreeMap<String, Value>, corrections: &[Correction]) -> Response {
    let Some(mut rows) = rows(setup, boards) else {
        return plain(StatusCode::NOT_FOUND, NO_PAIRINGS.to_owned());
    };
    settle(&mut rows, corrections);
    let round = setup.pairings.as_ref().map_or(0, |p| p.round);
    let number = |n: Option<u32>| n.map(|n| n.to_string()).unwrap_or_default();
    let mut text = CSV_HEADER.to_owned();
    for row in &rows {
        let record = row
            .disagreement
            .as_ref()
            .map(|d| {
                let settled = if d.corrected { " (corrected)" } else { "" };
                format!("{}{settled}", d.board_record)
            })
            .unwrap_or_default();
        let fields = [
            round.to_string(),
            row.pairing.board.to_string(),
            csv_field(&row.pairing.white.name),
            number(row.pairing.white.number),
            csv_field(&row.pairing.black.name),
            number(row.pairing.black.number),
            row.result.clone().unwrap_or_default(),
            csv_field(row.termination.as_deref().unwrap_or("")),
            csv_field(row.kept.map_or("", |k| k.entered_by.as_str())),
            record,
        ];
        text.push_str(&fields.join(","));
        text.push('\n');
    }
    for bye in setup.pairings.iter().flat_map(|p| p.byes.iter()) {
        text.push_str(&format!(
            "{round},,{},{},,,{},{},,\n",
            csv_field(&bye.player.name),
            number(bye.player.number),
            bye.code,
            bye.kind()
        ));
    }
    ([(header::CONTENT_TYPE, "text/csv; charset=utf-8")], text).into_response()
}

/// Live-broadcast tags a bulletin leaves out.
const LIVE_TAGS: [&str; 2] = ["ClockStatus", "ReferenceTime"];

/// The round's bulletin: its finished games in board order, each the final
/// PGN recorded from its board (or, without one, the pairing's tags), with
/// `Round` `R.B`, the desk's result in `Result` and at the end of the
/// movetext, and without the live broadcast's `ClockStatus` and
/// `ReferenceTime`. A game whose result the desk and the board disagree
/// on, unsettled, gets `*` and a comment giving both.
pub(super) fn bulletin_of(
    setup: &Setup,
    boards: &BTreeMap<String, Value>,
    corrections: &[Correction],
) -> Vec<String> {
    let Some(mut rows) = rows(setup, boards) else {
        return Vec::new();
    };
    settle(&mut rows, corrections);
    let round = setup.pairings.as_ref().map_or(0, |p| p.round);
    rows.iter()
        .filter_map(|row| {
            let kept = row.kept?;
            let (mut tags, body) = match &kept.pgn {
                Some(pgn) => split_pgn(pgn),
                None => (Vec::new(), String::new()),
            };
            tags.retain(|(name, _)| !LIVE_TAGS.contains(&name.as_str()));
            let (result, comment) = match row.disagreement.as_ref().filter(|d| !d.corrected) {
                Some(d) => (
                    "*".to_owned(),
                    Some(format!(
                        "{{the desk has {}, the board {}: not settled}}",
                        d.desk, d.board_record
                    )),
                ),
                None => (kept.result.clone(), None),
            };
            let mut set = vec![
                ("Round", format!("{round}.{}", row.pairing.board)),
                ("Result", result.clone()),
            ];
            for (side, player) in [("White", &row.pairing.white), ("Black", &row.pairing.black)] {
                let has = tags.iter().any(|(n, v)| n == side && !unknown(Some(v)));
                if !has {
                    set.push((side, player.name.clone()));
                }
            }
            for (name, value) in set {
                match tags.iter_mut().find(|(n, _)| n == name) {
                    Some(existing) => existing.1 = value,
                    None => tags.push((name.to_owned(), value)),
                }
            }
            let trimmed = body.trim_end();
            let last = trimmed.rsplit(char::is_whitespace).next().unwrap_or("");
            let moves = if matches!(last, "*" | "1-0" | "0-1" | "1/2-1/2") {
                trimmed[..trimmed.len() - last.len()].trim()
            } else {
                trimmed.trim()
            };
            let mut text = String::new();
            for (name, value) in tags {
                text.push_str(&format!("[{name} \"{}\"]\n", tag_value(&value)));
            }
            text.push('\n');
            for part in [comment.as_deref(), Some(moves)].into_iter().flatten() {
                if !part.is_empty() {
                    text.push_str(part);
                    text.push(' ');
                }
            }
            text.push_str(&result);
            text.push('\n');
            Some(text)
        })
        .collect()
}

fn pgn_answer(text: String) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "application/x-chess-pgn; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

/// One export of a round, by its file name.
pub(super) fn export(
    setup: &Setup,
    boards: &BTreeMap<String, Value>,
    corrections: &[Correction],
    file: &str,
) -> Response {
    match file {
        "round.pgn" => pgn_answer(join(&round_games_of(setup, boards, None))),
        "bulletin.pgn" => pgn_answer(join(&bulletin_of(setup, boards, corrections))),
        "results.json" => results_json_of(setup, boards, corrections),
        "results.trf" | "results.trf16" => results_trf_of(setup, boards, corrections, Trf::V16),
        "results.trf26" => results_trf_of(setup, boards, corrections, Trf::V26),
        "results.res" => results_res_of(setup, boards, corrections),
        "results.csv" => csv_of(setup, boards, corrections),
        _ => plain(
            StatusCode::NOT_FOUND,
            format!(
                "no `{file}`: round.pgn, bulletin.pgn, results.json, results.trf, \
                 results.trf16, results.trf26, results.res, results.csv\n"
            ),
        ),
    }
}

impl Desk {
    /// Round `number`'s corrections (none when the store cannot say).
    fn corrections_of(&self, number: u32) -> Vec<Correction> {
        lock(&self.store)
            .as_ref()
            .and_then(|store| store.corrections(number).ok())
            .unwrap_or_default()
    }

    /// The event's round numbers, in order.
    fn round_numbers(&self) -> Result<Vec<u32>, String> {
        let guard = lock(&self.store);
        let store = guard
            .as_ref()
            .ok_or_else(|| "the hub has no event store (it could not be made)".to_owned())?;
        store
            .rounds()
            .map(|rounds| rounds.iter().map(|r| r.number).collect())
            .map_err(|e| e.to_string())
    }
}

/// `f` over round `number` (the current round when `None`): its setup, the
/// boards' states (none for a past round) and its corrections; `None` when
/// the event has no such round.
fn with_round<S: RoundSource, T>(
    hub: &S,
    number: Option<u32>,
    f: impl FnOnce(&Setup, &BTreeMap<String, Value>, &[Correction]) -> T,
) -> Result<Option<T>, String> {
    let desk = hub.desk();
    let current = desk.current_round();
    match number.filter(|n| Some(*n) != current) {
        None => {
            // The corrections first: the store's lock is never taken
            // while the boards' is held.
            let corrections = current.map(|n| desk.corrections_of(n)).unwrap_or_default();
            let setup = lock(&desk.setup);
            let boards = hub.boards();
            Ok(Some(f(&setup, &boards, &corrections)))
        }
        Some(number) => {
            let Some(setup) = desk.archived(number)? else {
                return Ok(None);
            };
            let corrections = desk.corrections_of(number);
            Ok(Some(f(&setup, &BTreeMap::new(), &corrections)))
        }
    }
}

/// The exports' routes.
pub fn routes<S: RoundSource>() -> Router<Arc<S>> {
    let mut router = Router::new();
    for file in [
        "bulletin.pgn",
        "results.json",
        "results.trf",
        "results.trf16",
        "results.trf26",
        "results.res",
        "results.csv",
    ] {
        router = router.route(
            &format!("/{file}"),
            get(move |State(hub): State<Arc<S>>| async move { current_file(&*hub, file) }),
        );
    }
    router
        .route("/event.pgn", get(event_pgn::<S>))
        .route("/rounds/{round}/{file}", get(round_file::<S>))
}

fn current_file<S: RoundSource>(hub: &S, file: &str) -> Response {
    match with_round(hub, None, |setup, boards, corrections| {
        export(setup, boards, corrections, file)
    }) {
        Ok(Some(answer)) => answer,
        Ok(None) => plain(StatusCode::NOT_FOUND, NO_PAIRINGS.to_owned()),
        Err(error) => plain(StatusCode::INTERNAL_SERVER_ERROR, format!("{error}\n")),
    }
}

async fn round_file<S: RoundSource>(
    State(hub): State<Arc<S>>,
    UrlPath((round, file)): UrlPath<(String, String)>,
) -> Response {
    let Ok(number) = round.parse::<u32>() else {
        return plain(StatusCode::NOT_FOUND, format!("no round `{round}`\n"));
    };
    match with_round(&*hub, Some(number), |setup, boards, corrections| {
        export(setup, boards, corrections, &file)
    }) {
        Ok(Some(answer)) => answer,
        Ok(None) => plain(
            StatusCode::NOT_FOUND,
            format!("no round {number} in the event\n"),
        ),
        Err(error) => plain(StatusCode::INTERNAL_SERVER_ERROR, format!("{error}\n")),
    }
}

/// Every round's bulletin, round by round.
async fn event_pgn<S: RoundSource>(State(hub): State<Arc<S>>) -> Response {
    let numbers = match hub.desk().round_numbers() {
        Ok(numbers) => numbers,
        Err(error) => return plain(StatusCode::INTERNAL_SERVER_ERROR, format!("{error}\n")),
    };
    let mut games = Vec::new();
    for number in numbers {
        match with_round(&*hub, Some(number), bulletin_of) {
            Ok(Some(round)) => games.extend(round),
            Ok(None) => {}
            Err(error) => return plain(StatusCode::INTERNAL_SERVER_ERROR, format!("{error}\n")),
        }
    }
    pgn_answer(join(&games))
}
