//! The round's desk over the event's store ([`crate::event::store`]):
//! loading a round's pairings, recording its results as the boards give
//! them, closing it, and every past round's exports.
//!
//! HTTP routes (merged into the round's):
//! * `/rounds.json`: the event's rounds (status, when, games recorded),
//!   the current round and the event's players;
//! * `/review.json`: the current round's review: which board gets which
//!   game, what is missing, and what sending the pairings would do
//!   ([`super::plan_pairings`]);
//! * round N's exports (`/rounds/N/...`) are `exports`'s; a past
//!   round's from the recorded games.
//!
//! Promises: a result is recorded when a board's state carries it, for
//! the pairing board that hall board plays, only while its game is of
//! the round (its `Round` tag is `R.B`, or it has none) and the round is
//! not closed; its final PGN and summary go with it; a result withdrawn
//! on the board (`*` on its started game of the round) is withdrawn from
//! the record; a board that moves on to another game leaves the record
//! as it is. Nothing here panics on a payload's shape.

use super::*;
use crate::event::store::{Recorded, RoundRecord, RoundStatus, StoreError};
use crate::skim::Skim;

/// Why a round's pairings were not loaded.
#[derive(Debug)]
pub enum LoadError {
    /// The file (its line and column).
    Input(String),
    /// The round is closed.
    Closed(u32),
    /// Recorded results whose boards the new pairings give to others.
    Conflict(Vec<u32>),
    Store(String),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Input(error) => write!(f, "{error}"),
            LoadError::Closed(round) => write!(
                f,
                "round {round} is closed: its pairings cannot change (correct a result instead)"
            ),
            LoadError::Conflict(boards) => write!(
                f,
                "boards {boards:?} have recorded results, and these pairings give them other \
                 players: correct the file, or the results first"
            ),
            LoadError::Store(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for LoadError {}

/// The current round's review.
#[derive(Debug, serde::Serialize)]
pub struct Review {
    pub round: u32,
    pub status: Option<RoundStatus>,
    /// Board by board, what sending the pairings does.
    pub plans: Vec<Plan>,
    /// Hall boards no pairing board is given to.
    pub unpaired: Vec<String>,
    /// How many boards a sending would change.
    pub changes: usize,
    /// How many games of the round are kept (started or over).
    pub kept: usize,
}

fn store_error(error: StoreError) -> String {
    error.to_string()
}

/// The store in a desk's lock (none: it could not be made).
fn store_of<'a>(guard: &'a mut MutexGuard<'_, Option<Store>>) -> Result<&'a mut Store, String> {
    guard
        .as_mut()
        .ok_or_else(|| "the hub has no event store (it could not be made)".to_owned())
}

impl Desk {
    /// The pairing board `board` plays among the hall boards `ids`
    /// (see [`pairings::assign`]), worked out again only when the boards,
    /// the pairings or the map changed.
    fn number_of(
        &self,
        ids: &Arc<Vec<String>>,
        board: &str,
        pairings: &Pairings,
        map: &BTreeMap<u32, String>,
    ) -> Option<u32> {
        let mut numbers = lock(&self.numbers);
        let fresh = numbers.as_ref().is_some_and(|n| {
            Arc::ptr_eq(&n.ids, ids)
                && n.round == pairings.round
                && n.boards
                    .iter()
                    .copied()
                    .eq(pairings.games.iter().map(|g| g.board))
                && &n.map == map
        });
        if !fresh {
            let assigned = pairings::assign(
                pairings.games.iter().map(|g| g.board),
                ids.iter().map(String::as_str),
                map,
            );
            *numbers = Some(Numbers {
                ids: ids.clone(),
                round: pairings.round,
                boards: pairings.games.iter().map(|g| g.board).collect(),
                map: map.clone(),
                by_id: assigned.into_iter().map(|(n, id)| (id, n)).collect(),
            });
        }
        numbers.as_ref()?.by_id.get(board).copied()
    }

    /// A desk keeping its event in `store`.
    pub fn with_store(store: Store) -> Desk {
        Desk::with(Some(store))
    }

    pub(super) fn with(store: Option<Store>) -> Desk {
        Desk {
            setup: Mutex::new(Setup::default()),
            push: Mutex::new(PushStatus::default()),
            served: Mutex::new(BTreeMap::new()),
            store: Mutex::new(store),
            hints: Mutex::new(BTreeMap::new()),
            numbers: Mutex::new(None),
        }
    }

    /// Puts `store` in place of the desk's (at the hub's start) and takes
    /// its current round, if any. The round's number, when there is one.
    pub fn attach(&self, store: Store) -> Result<Option<u32>, String> {
        *lock(&self.store) = Some(store);
        self.restore()
    }

    /// Takes the store's current round (its pairings, map, control and
    /// recorded results) as the desk's.
    pub fn restore(&self) -> Result<Option<u32>, String> {
        let mut setup = lock(&self.setup);
        let mut guard = lock(&self.store);
        let store = store_of(&mut guard)?;
        let Some(number) = store.current().map_err(store_error)? else {
            return Ok(None);
        };
        let Some(round) = store.round(number).map_err(store_error)? else {
            return Ok(None);
        };
        let pairings = Pairings::parse(&round.pairings, number)
            .map_err(|error| format!("round {number}'s pairings in the event store: {error}"))?;
        setup.round = Some(number);
        setup.pairings = Some(pairings);
        setup.map = round.map;
        setup.control = round.control;
        setup.kept = store.games(number).map_err(store_error)?;
        setup.closed = round.status == RoundStatus::Closed;
        setup.delay_s = store.round_delay(number).map_err(store_error)?;
        Ok(Some(number))
    }

    /// Makes round `number` of the event the current one, if the event
    /// has it (else `false`, nothing changed).
    pub fn switch_round(&self, number: u32) -> Result<bool, String> {
        {
            let mut guard = lock(&self.store);
            let store = store_of(&mut guard)?;
            if store.round(number).map_err(store_error)?.is_none() {
                return Ok(false);
            }
            store.set_current(number).map_err(store_error)?;
        }
        self.restore().map(|_| true)
    }

    /// The current round's number.
    pub fn current_round(&self) -> Option<u32> {
        let setup = lock(&self.setup);
        setup.round.or(setup.pairings.as_ref().map(|p| p.round))
    }

    /// Loads round `number`'s pairings (a TRF16/TRF26 file or a CSV), its
    /// board map and control: kept in the store and made the current
    /// round. Loading a round again keeps its status and results (unless
    /// the new pairings give a board with a result to other players).
    pub fn load_round(
        &self,
        number: u32,
        text: &str,
        map: BTreeMap<u32, String>,
        control: Option<String>,
        now_ms: i64,
    ) -> Result<Pairings, LoadError> {
        let pairings =
            Pairings::parse(text, number).map_err(|error| LoadError::Input(error.to_string()))?;
        let mut setup = lock(&self.setup);
        let mut guard = lock(&self.store);
        let store = store_of(&mut guard).map_err(LoadError::Store)?;
        let store_err = |e: StoreError| LoadError::Store(e.to_string());
        let before = store.round(number).map_err(store_err)?;
        if let Some(closed) = before.as_ref().filter(|r| r.status == RoundStatus::Closed) {
            if closed.pairings != text {
                return Err(LoadError::Closed(number));
            }
            // The same file again (a hub restarted with the same
            // --pairings): the closed round, as it is, made current.
            store.set_current(number).map_err(store_err)?;
            setup.round = Some(number);
            setup.pairings = Some(pairings.clone());
            setup.map = closed.map.clone();
            setup.control = closed.control.clone();
            setup.kept = store.games(number).map_err(store_err)?;
            setup.closed = true;
            setup.delay_s = store.round_delay(number).map_err(store_err)?;
            return Ok(pairings);
        }
        let kept = store.games(number).map_err(store_err)?;
        if let Some(before) = &before {
            let old = Pairings::parse(&before.pairings, number).ok();
            let conflicts: Vec<u32> = kept
                .keys()
                .copied()
                .filter(|board| {
                    let players = |p: Option<&Pairing>| {
                        p.map(|p| (p.white.name.clone(), p.black.name.clone()))
                    };
                    players(old.as_ref().and_then(|o| o.board(*board)))
                        != players(pairings.board(*board))
                })
                .collect();
            if !conflicts.is_empty() {
                return Err(LoadError::Conflict(conflicts));
            }
        }
        let players: Vec<pairings::Player> = pairings
            .games
            .iter()
            .flat_map(|g| [g.white.clone(), g.black.clone()])
            .collect();
        let record = RoundRecord {
            number,
            pairings: text.to_owned(),
            map: map.clone(),
            control: control.clone(),
            start_at_ms: None,
            status: RoundStatus::Loaded,
            loaded_ms: now_ms,
            sent_ms: None,
            closed_ms: None,
        };
        store.put_round(&record, &players).map_err(store_err)?;
        store.set_current(number).map_err(store_err)?;
        setup.round = Some(number);
        setup.pairings = Some(pairings.clone());
        setup.map = map;
        setup.control = control;
        setup.kept = kept;
        setup.closed = false;
        setup.delay_s = store.round_delay(number).map_err(store_err)?;
        Ok(pairings)
    }

    /// The arbiter who sent `board` a `set-result` from the hub: who
    /// entered the result it brings.
    pub fn note_arbiter(&self, board: &str, arbiter: &str) {
        lock(&self.hints).insert(board.to_owned(), arbiter.to_owned());
    }

    /// A board's state, as it arrived (`ids`: every hall board the hub
    /// knows; `skimmed`: [`crate::skim`] of its JSON `text`): its result
    /// recorded for the current round, or withdrawn. The whole state is
    /// parsed only when it brings a result.
    pub fn observe(
        &self,
        ids: &Arc<Vec<String>>,
        board: &str,
        skimmed: &Skim,
        text: &str,
        now_ms: i64,
    ) {
        let mut setup = lock(&self.setup);
        if setup.closed {
            return;
        }
        let Some(pairings) = setup.pairings.as_ref() else {
            return;
        };
        let round = pairings.round;
        let Some(number) = self.number_of(ids, board, pairings, &setup.map) else {
            return;
        };
        let round_tag = pgn_tag(skimmed.pgn.as_deref().unwrap_or(""), "Round");
        let live_round = round_tag.as_deref().filter(|v| !unknown(Some(v)));
        let expected = format!("{round}.{number}");
        if live_round.is_some_and(|r| r != expected) {
            // Another round's game (the last round's, still on the board).
            return;
        }
        let parsed = if skimmed.has_result {
            serde_json::from_str(text).unwrap_or(Value::Null)
        } else {
            Value::Null
        };
        let payload = &parsed;
        let state = &payload["state"]["result"];
        let result = state["result"]
            .as_str()
            .filter(|r| Outcome::parse(r).is_some());
        let mut guard = lock(&self.store);
        let Ok(store) = store_of(&mut guard) else {
            return;
        };
        let changed = match result {
            Some(result) => {
                let termination = state["termination"].as_str().unwrap_or("normal");
                let hint = lock(&self.hints).remove(board);
                let entered_by = hint.unwrap_or_else(|| {
                    if termination == "time forfeit" {
                        "flag".to_owned()
                    } else if payload["state"]["eboard"].is_object() {
                        "e-board".to_owned()
                    } else {
                        "arbiter".to_owned()
                    }
                });
                let seat = Seat {
                    id: board,
                    number: Some(number),
                    pairing: pairings.board(number),
                    payload,
                };
                let record = GameRecord {
                    board_id: Some(board.to_owned()),
                    result: result.to_owned(),
                    termination: termination.to_owned(),
                    entered_by,
                    recorded_ms: now_ms,
                    pgn: Some(game(&seat, Some(round))),
                    summary: Some(
                        json!({
                            "why": payload["state"]["over"]["why"],
                            "white_remaining_ms": payload["snapshot"]["white_remaining_ms"],
                            "black_remaining_ms": payload["snapshot"]["black_remaining_ms"],
                            "snapshot_wall_ms": payload["snapshot_wall_ms"],
                        })
                        .to_string(),
                    ),
                };
                match store.record(round, number, &record) {
                    Ok(Recorded::New | Recorded::Changed) => {
                        tracing::info!(
                            round,
                            board = number,
                            id = board,
                            result,
                            by = record.entered_by,
                            "desk: result recorded"
                        );
                        true
                    }
                    Ok(Recorded::Disputed) => {
                        tracing::warn!(
                            round,
                            board = number,
                            id = board,
                            result,
                            "desk: the board's result differs from an arbiter's correction: \
                             the correction stands (flagged in the results)"
                        );
                        false
                    }
                    Ok(_) => false,
                    Err(error) => {
                        tracing::error!(%error, round, board = number, "desk: cannot record a result");
                        false
                    }
                }
            }
            None if skimmed.started
                && live_round == Some(expected.as_str())
                && setup.kept.contains_key(&number) =>
            {
                match store.withdraw(round, number) {
                    Ok(withdrawn) => withdrawn,
                    Err(error) => {
                        tracing::error!(%error, round, board = number, "desk: cannot withdraw a result");
                        false
                    }
                }
            }
            None => false,
        };
        if changed {
            match store.games(round) {
                Ok(kept) => setup.kept = kept,
                Err(error) => tracing::error!(%error, round, "desk: cannot read the results"),
            }
        }
    }

    /// Marks the current round `number` sent to the boards.
    pub fn mark_sent(&self, number: u32, now_ms: i64) -> Result<(), String> {
        let mut guard = lock(&self.store);
        let store = store_of(&mut guard)?;
        if store.round(number).map_err(store_error)?.map(|r| r.status) == Some(RoundStatus::Loaded)
        {
            store
                .set_status(number, RoundStatus::Sent, now_ms)
                .map_err(store_error)?;
        }
        Ok(())
    }

    /// Sets round `number`'s scheduled start.
    pub fn set_start(&self, number: u32, at_ms: Option<i64>) -> Result<(), String> {
        store_of(&mut lock(&self.store))?
            .set_start(number, at_ms)
            .map_err(store_error)
    }

    /// Closes round `number`: its results are frozen.
    pub fn close_round(&self, number: u32, now_ms: i64) -> Result<(), String> {
        let mut setup = lock(&self.setup);
        let mut guard = lock(&self.store);
        let store = store_of(&mut guard)?;
        let Some(round) = store.round(number).map_err(store_error)? else {
            return Err(format!("no round {number} in the event"));
        };
        if round.status == RoundStatus::Closed {
            return Ok(());
        }
        store
            .set_status(number, RoundStatus::Closed, now_ms)
            .map_err(store_error)?;
        if setup.round == Some(number) {
            setup.closed = true;
            setup.kept = store.games(number).map_err(store_error)?;
        }
        Ok(())
    }

    /// A correction of round `number`'s board `board` (closed or not):
    /// applied and kept in the round's corrections.
    pub fn correct(
        &self,
        number: u32,
        board: u32,
        result: &str,
        termination: &str,
        by: &str,
        now_ms: i64,
    ) -> Result<(), String> {
        if Outcome::parse(result).is_none() {
            return Err(format!("`{result}` is not a result (1-0, 0-1, 1/2-1/2)"));
        }
        let mut setup = lock(&self.setup);
        let mut guard = lock(&self.store);
        let store = store_of(&mut guard)?;
        if store.round(number).map_err(store_error)?.is_none() {
            return Err(format!("no round {number} in the event"));
        }
        store
            .correct(number, board, result, termination, by, now_ms)
            .map_err(store_error)?;
        if setup.round == Some(number) {
            setup.kept = store.games(number).map_err(store_error)?;
        }
        Ok(())
    }

    /// The event: its rounds, the current one, its players.
    pub fn event_json(&self) -> Value {
        let current = self.current_round();
        let mut guard = lock(&self.store);
        let store = match store_of(&mut guard) {
            Ok(store) => store,
            Err(error) => return json!({"error": error}),
        };
        let rounds: Vec<Value> = match store.rounds() {
            Ok(rounds) => rounds
                .iter()
                .map(|r| {
                    let games = Pairings::parse(&r.pairings, r.number)
                        .map(|p| p.games.len())
                        .unwrap_or(0);
                    let recorded = store.games(r.number).map(|g| g.len()).unwrap_or(0);
                    let corrections = store.corrections(r.number).unwrap_or_default();
                    json!({"round": r.number, "status": r.status, "games": games,
                           "results": recorded, "control": r.control,
                           "start_at_ms": r.start_at_ms, "loaded_ms": r.loaded_ms,
                           "sent_ms": r.sent_ms, "closed_ms": r.closed_ms,
                           "corrections": corrections})
                })
                .collect(),
            Err(error) => return json!({"error": error.to_string()}),
        };
        let players: Vec<Value> = store
            .players()
            .unwrap_or_default()
            .into_iter()
            .map(|(name, number)| json!({"name": name, "number": number}))
            .collect();
        json!({"current": current, "rounds": rounds, "players": players})
    }

    /// The current round's review over the boards' latest states.
    pub fn review(&self, boards: &BTreeMap<String, Value>) -> Option<Review> {
        let setup = lock(&self.setup);
        let pairings = setup.pairings.as_ref()?;
        let plans = plan_pairings(boards, pairings, &setup.map, setup.control.as_deref());
        let unpaired = boards
            .keys()
            .filter(|id| !plans.iter().any(|p| p.id.as_ref() == Some(id)))
            .cloned()
            .collect();
        let status = store_of(&mut lock(&self.store))
            .ok()
            .and_then(|store| store.round(pairings.round).ok().flatten())
            .map(|r| r.status);
        Some(Review {
            round: pairings.round,
            status,
            changes: plans.iter().filter(|p| !p.commands.is_empty()).count(),
            kept: plans.iter().filter(|p| p.kept).count(),
            plans,
            unpaired,
        })
    }

    /// Round `number` as kept, for its exports: its pairings and recorded
    /// results (none of the boards' live states).
    pub(super) fn archived(&self, number: u32) -> Result<Option<Setup>, String> {
        let mut guard = lock(&self.store);
        let store = store_of(&mut guard)?;
        let Some(round) = store.round(number).map_err(store_error)? else {
            return Ok(None);
        };
        let pairings = Pairings::parse(&round.pairings, number)
            .map_err(|error| format!("round {number}'s pairings: {error}"))?;
        Ok(Some(Setup {
            round: Some(number),
            pairings: Some(pairings),
            map: round.map,
            control: round.control,
            kept: store.games(number).map_err(store_error)?,
            closed: true,
            delay_s: store.round_delay(number).map_err(store_error)?,
        }))
    }
}

/// The desk's read routes.
pub fn routes<S: RoundSource>() -> Router<Arc<S>> {
    Router::new()
        .route("/rounds.json", get(rounds_json::<S>))
        .route("/review.json", get(review_json::<S>))
}

async fn rounds_json<S: RoundSource>(State(hub): State<Arc<S>>) -> Response {
    axum::Json(hub.desk().event_json()).into_response()
}

async fn review_json<S: RoundSource>(State(hub): State<Arc<S>>) -> Response {
    // A copy: the desk's lock is never taken inside the hub's.
    let boards = (*hub.boards()).clone();
    let review = hub.desk().review(&boards);
    match review {
        Some(review) => axum::Json(review).into_response(),
        None => plain(StatusCode::NOT_FOUND, NO_PAIRINGS.to_owned()),
    }
}
