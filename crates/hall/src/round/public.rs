//! The round's PGN over HTTP, the arbiters' and the public's, whole or by
//! a range of boards, and the desk's per-round broadcast delay.
//!
//! Routes:
//! * `/round.pgn` (live data: a login or a screen token, see
//!   [`crate::gate`]): the round as the hub knows it now;
//! * `/public/round.pgn` (no login): the round as the public sees it,
//!   behind the delay ([`super::public_games`]);
//!
//! each with `?boards=A-B` (or `?boards=N`) for the games of pairing
//! boards A to B only (a poller such as chess.com reads one range), and
//! with an `ETag` per text and range and `Last-Modified`; a poller sending
//! `If-None-Match` gets `304` while its text has not changed.

use super::*;
use axum::http::Uri;

/// The most texts whose `Last-Modified` is remembered (one per route and
/// range asked for); above it the memory starts again.
const MAX_SERVED: usize = 64;

/// A range of pairing boards, both ends included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoardRange {
    pub first: u32,
    pub last: u32,
}

impl BoardRange {
    pub fn contains(&self, number: u32) -> bool {
        (self.first..=self.last).contains(&number)
    }
}

/// Reads `A-B` or `N` (boards from 1).
pub fn parse_boards(text: &str) -> Result<BoardRange, String> {
    let bad = || {
        format!(
            "boards `{}`: give a range of board numbers, as `1-50` or `7`",
            text.escape_debug()
        )
    };
    let (first, last) = match text.split_once('-') {
        Some((first, last)) => (first.trim(), last.trim()),
        None => (text.trim(), text.trim()),
    };
    let first: u32 = first.parse().map_err(|_| bad())?;
    let last: u32 = last.parse().map_err(|_| bad())?;
    if first == 0 || last < first {
        return Err(bad());
    }
    Ok(BoardRange { first, last })
}

/// The `boards` of a query, if given.
fn range_of(uri: &Uri) -> Result<Option<BoardRange>, String> {
    uri.query()
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|pair| pair.strip_prefix("boards="))
        .map(|value| parse_boards(&value.replace("%2D", "-").replace("%2d", "-")))
        .transpose()
}

/// The pairing board of a game (its `Round` tag's `B` of `R.B`).
fn board_of(game: &str) -> Option<u32> {
    let round = split_pgn(game)
        .0
        .into_iter()
        .find(|(name, _)| name == "Round")?
        .1;
    round.split_once('.')?.1.parse().ok()
}

/// The games of `range` (all when `None`).
fn in_range(games: Vec<String>, range: Option<BoardRange>) -> Vec<String> {
    match range {
        None => games,
        Some(range) => games
            .into_iter()
            .filter(|game| board_of(game).is_some_and(|n| range.contains(n)))
            .collect(),
    }
}

pub(super) async fn live_pgn<S: RoundSource>(
    State(hub): State<Arc<S>>,
    uri: Uri,
    request: HeaderMap,
) -> Response {
    let range = match range_of(&uri) {
        Ok(range) => range,
        Err(error) => return plain(StatusCode::BAD_REQUEST, format!("{error}\n")),
    };
    let text = join(&in_range(round_games(&*hub), range));
    answer(&*hub, "live", range, text, &request)
}

pub(super) async fn public_pgn<S: RoundSource>(
    State(hub): State<Arc<S>>,
    uri: Uri,
    request: HeaderMap,
) -> Response {
    let range = match range_of(&uri) {
        Ok(range) => range,
        Err(error) => return plain(StatusCode::BAD_REQUEST, format!("{error}\n")),
    };
    let text = join(&in_range(public_games(&*hub), range));
    answer(&*hub, "public", range, text, &request)
}

/// A PGN text with its `ETag` and `Last-Modified` (when this route and
/// range's text last changed), or `304` to a poller that has it.
fn answer<S: RoundSource>(
    hub: &S,
    route: &str,
    range: Option<BoardRange>,
    text: String,
    request: &HeaderMap,
) -> Response {
    let hash = fnv(&text);
    let key = match range {
        Some(r) => format!("{route} {}-{}", r.first, r.last),
        None => route.to_owned(),
    };
    let since = {
        let mut served = lock(&hub.desk().served);
        if served.len() >= MAX_SERVED && !served.contains_key(&key) {
            served.clear();
        }
        let served = served.entry(key).or_default();
        if served.hash != hash || served.since_ms == 0 {
            served.hash = hash;
            served.since_ms = hub.now_ms();
        }
        served.since_ms
    };
    let etag = format!("\"{hash:016x}\"");
    let headers = [
        (header::ETAG, etag.clone()),
        (header::LAST_MODIFIED, http_date(since)),
        (header::CACHE_CONTROL, "no-cache".to_owned()),
    ];
    let matches = request
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|tags| tags.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    if matches {
        return (StatusCode::NOT_MODIFIED, headers).into_response();
    }
    (
        headers,
        [(
            header::CONTENT_TYPE,
            "application/x-chess-pgn; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

impl Desk {
    /// The current round's own broadcast delay in seconds, as set on the
    /// desk (`None`: the hub's `--delay-seconds` holds).
    pub fn round_delay(&self) -> Option<u32> {
        lock(&self.setup).delay_s
    }

    /// Sets (`None`: clears) round `number`'s broadcast delay, kept in the
    /// event; the current round's holds at once.
    pub fn set_round_delay(&self, number: u32, seconds: Option<u32>) -> Result<(), String> {
        let mut setup = lock(&self.setup);
        {
            let guard = lock(&self.store);
            let store = guard
                .as_ref()
                .ok_or_else(|| "the hub has no event store (it could not be made)".to_owned())?;
            if store.round(number).map_err(|e| e.to_string())?.is_none() {
                return Err(format!(
                    "no round {number} in the event: load its pairings first"
                ));
            }
            store
                .set_round_delay(number, seconds)
                .map_err(|e| e.to_string())?;
        }
        if setup.round.or(setup.pairings.as_ref().map(|p| p.round)) == Some(number) {
            setup.delay_s = seconds;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn a_range_of_boards_is_read_or_refused_clearly() {
        assert_eq!(
            parse_boards("1-50").unwrap(),
            BoardRange { first: 1, last: 50 }
        );
        assert_eq!(parse_boards("7").unwrap(), BoardRange { first: 7, last: 7 });
        for bad in ["", "0-5", "9-3", "a-b", "1-", "-4"] {
            assert!(parse_boards(bad).unwrap_err().contains("1-50"), "{bad}");
        }
        let games = vec![
            "[Event \"?\"]\n[Round \"3.2\"]\n\n*\n".to_owned(),
            "[Event \"?\"]\n[Round \"3.60\"]\n\n*\n".to_owned(),
            "[Event \"?\"]\n[Round \"?\"]\n\n*\n".to_owned(),
        ];
        let some = in_range(games.clone(), Some(BoardRange { first: 1, last: 50 }));
        assert_eq!(some, games[..1]);
        assert_eq!(in_range(games.clone(), None).len(), 3);
    }
}
