//! Who may read what, and the headers every answer carries (issue 29
//! item 8).
//!
//! Promises:
//! * live data ([`LIVE`]: `/events`, `/boards.json`, `/round.pgn`,
//!   `/broadcast.json`, `/review.json`, and each round's
//!   `/rounds/N/round.pgn`, a board's record, chart and time machine
//!   (`/board/<id>/...`): whole states, hosts, devices, calls, the moves
//!   as they are played, the desk's plan) is answered only to a logged-in arbiter (the session
//!   cookie) or a hall screen (a token of `--screen-tokens`, as `?token=`
//!   or `Authorization: Bearer`); anyone else gets `401` saying how to get
//!   in, and nothing of the data;
//! * the public routes (`/spectator`, `/screen`, `/public/...`: `/public/events`,
//!   `/public/boards.json`, `/public/round.pgn`) and the pages answer
//!   without a login and carry the public feed only: the spectators' view
//!   ([`crate::page::public_view`]) of each of the round's boards as it
//!   was the broadcast delay ago ([`crate::broadcast`]; a route of one
//!   board reads it through `Hub::public_board`);
//! * while the public feed is delayed, the current round's exports
//!   ([`DELAYED`] and `/rounds/N/...` of the current round N: a bulletin
//!   carries a finished game's moves, the results its end) are live data
//!   too; past rounds' stay open;
//! * every answer carries a Content-Security-Policy (scripts, styles and
//!   connections from the hub only, no inline script, `frame-ancestors
//!   'none'`, or for the public routes the `--public-frame-ancestors`
//!   given), `X-Content-Type-Options: nosniff` and `Referrer-Policy:
//!   no-referrer` (a screen's token in its address never leaves the hub).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::auth::ScreenTokens;
use crate::hub::Hub;

/// The routes of live data: an arbiter's or a hall screen's only.
pub const LIVE: [&str; 5] = [
    "/events",
    "/boards.json",
    "/round.pgn",
    "/broadcast.json",
    "/review.json",
];

/// The current round's exports, live data while the public feed is
/// delayed.
pub const DELAYED: [&str; 8] = [
    "/results.json",
    "/results.trf",
    "/results.trf16",
    "/results.trf26",
    "/results.res",
    "/results.csv",
    "/bulletin.pgn",
    "/event.pgn",
];

/// Whether `path` is the current round's export (`current`) while the
/// public feed is delayed (`delayed`).
pub fn is_delayed_export(path: &str, current: Option<u32>, delayed: bool) -> bool {
    delayed
        && (DELAYED.contains(&path)
            || current.is_some_and(|n| path.starts_with(&format!("/rounds/{n}/"))))
}

/// Whether `path` is live data: one of [`LIVE`], a round's PGN
/// (`/rounds/N/round.pgn`: the current round's is live), or a board's
/// data (`/board/<id>/...`; the page `/board/<id>` itself has none).
pub fn is_live(path: &str) -> bool {
    LIVE.contains(&path)
        || (path.starts_with("/rounds/") && path.ends_with("/round.pgn"))
        || path
            .strip_prefix("/board/")
            .is_some_and(|rest| rest.contains('/'))
}

/// The policy of every page but the public ones' framing.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; \
                   connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'";

/// Who reads live data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reader {
    /// A logged-in arbiter.
    Arbiter(String),
    /// A hall screen (a read token).
    Screen,
}

/// What the gate knows: the hub (its sessions), the screens' tokens and
/// who may frame the public pages.
pub struct Gate {
    pub hub: Arc<Hub>,
    pub screens: ScreenTokens,
    /// `frame-ancestors` of the public routes (`None`: `'none'`).
    pub public_frame_ancestors: Option<String>,
}

/// Checks a `--public-frame-ancestors` value: space-separated sources
/// (`https://club.example`, `'self'`...), no `;`, `,` or control
/// characters (it goes into a header whole).
pub fn check_frame_ancestors(value: &str) -> Result<String, String> {
    let value = value.trim();
    let bad = value.is_empty()
        || value
            .chars()
            .any(|c| c == ';' || c == ',' || c == '"' || c.is_control() || !c.is_ascii());
    if bad {
        return Err(format!(
            "--public-frame-ancestors `{}`: give the sites that may frame the spectators' \
             page, separated by spaces (e.g. `https://club.example 'self'`)",
            value.escape_debug()
        ));
    }
    Ok(value.to_owned())
}

impl Gate {
    /// Who this request is, if it may read live data.
    pub fn reader(&self, headers: &HeaderMap, query: Option<&str>) -> Option<Reader> {
        if let Some((_, session)) = crate::page::session_of(&self.hub, headers) {
            return Some(Reader::Arbiter(session.user));
        }
        if self.screens.is_empty() {
            return None;
        }
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim);
        let in_query = query
            .into_iter()
            .flat_map(|q| q.split('&'))
            .find_map(|pair| pair.strip_prefix("token="));
        bearer
            .into_iter()
            .chain(in_query)
            .any(|token| self.screens.check(token))
            .then_some(Reader::Screen)
    }

    fn refusal(&self) -> Response {
        let how = match (self.hub.access.is_some(), !self.screens.is_empty()) {
            (true, true) => "log in as an arbiter on the arbiters' page, or give a hall screen's token (?token=...)",
            (true, false) => "log in as an arbiter on the arbiters' page",
            (false, true) => "give a hall screen's token (?token=...)",
            (false, false) => "this hub has neither arbiters nor hall screens: start it with \
                 --passwords FILE (`chessclock-hall passwd FILE USER`) or --screen-tokens FILE",
        };
        (
            StatusCode::UNAUTHORIZED,
            axum::Json(json!({"ok": false, "error": format!(
                "live data is for the hall's arbiters: {how}; the spectators' view is at /spectator and /public/..."
            )})),
        )
            .into_response()
    }
}

/// Whether `path` is a public route (the spectators' page, the hall
/// screen and their data).
fn public(path: &str) -> bool {
    path == "/spectator" || path == "/screen" || path.starts_with("/public/")
}

/// The middleware: live data only to its readers; the headers on every
/// answer.
pub async fn guard(State(gate): State<Arc<Gate>>, mut request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    let delayed = || gate.hub.public_cut().delay_ms > 0;
    if is_live(&path) || is_delayed_export(&path, gate.hub.desk().current_round(), delayed()) {
        match gate.reader(request.headers(), request.uri().query()) {
            Some(reader) => {
                request.extensions_mut().insert(reader);
            }
            None => return headers(&gate, &path, gate.refusal()),
        }
    }
    let response = next.run(request).await;
    headers(&gate, &path, response)
}

fn headers(gate: &Gate, path: &str, mut response: Response) -> Response {
    let framing = match (&gate.public_frame_ancestors, public(path)) {
        (Some(ancestors), true) => ancestors.as_str(),
        _ => "'none'",
    };
    let policy = format!("{CSP}; frame-ancestors {framing}");
    let set = response.headers_mut();
    if let Ok(policy) = HeaderValue::from_str(&policy) {
        set.insert(header::CONTENT_SECURITY_POLICY, policy);
    }
    if framing == "'none'" {
        // For browsers without CSP's frame-ancestors.
        set.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    }
    set.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    set.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn every_rounds_pgn_and_the_desks_plan_are_live_data() {
        for path in [
            "/events",
            "/round.pgn",
            "/rounds/1/round.pgn",
            "/review.json",
            "/board/b1/record.json",
            "/board/b1/at.json",
            "/board/b1/chart.svg",
            "/board/b1/replay.jsonl",
        ] {
            assert!(is_live(path), "{path}");
        }
        for path in [
            "/rounds.json",
            "/rounds/1/results.trf",
            "/results.res",
            "/public/events",
            "/board/b1",
            "/board.js",
        ] {
            assert!(!is_live(path), "{path}");
        }
    }

    /// Issue 31 item 4: the hall screen is the spectators', framed as
    /// they may be, never live data.
    #[test]
    fn the_hall_screen_is_public_and_not_live() {
        for path in ["/screen", "/spectator", "/public/picture/board.svg"] {
            assert!(public(path) && !is_live(path), "{path}");
        }
        assert!(!public("/screens") && !public("/"));
    }

    #[test]
    fn the_current_rounds_exports_are_live_data_while_the_feed_is_delayed() {
        for path in [
            "/bulletin.pgn",
            "/results.json",
            "/rounds/3/bulletin.pgn",
            "/event.pgn",
        ] {
            assert!(is_delayed_export(path, Some(3), true), "{path}");
            assert!(!is_delayed_export(path, Some(3), false), "{path}");
        }
        assert!(!is_delayed_export("/rounds/2/bulletin.pgn", Some(3), true));
        assert!(!is_delayed_export("/rounds.json", Some(3), true));
        assert!(!is_delayed_export("/public/round.pgn", Some(3), true));
    }

    #[test]
    fn frame_ancestors_go_into_a_header_whole_or_not_at_all() {
        assert_eq!(
            check_frame_ancestors(" https://club.example 'self' ").unwrap(),
            "https://club.example 'self'"
        );
        for bad in ["", "a; script-src *", "a, b", "a\r\nX: y", "é"] {
            assert!(check_frame_ancestors(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_screen_token_is_taken_from_the_query_or_a_bearer_header() {
        let token = "screen-0123456789abcdef";
        let gate = Gate {
            hub: Hub::with_access("open", None),
            screens: ScreenTokens::parse(token, "t").unwrap(),
            public_frame_ancestors: None,
        };
        let none = HeaderMap::new();
        assert_eq!(gate.reader(&none, None), None);
        assert_eq!(
            gate.reader(&none, Some(&format!("a=1&token={token}"))),
            Some(Reader::Screen)
        );
        assert_eq!(
            gate.reader(&none, Some("token=screen-0123456789abcdeX")),
            None
        );
        let mut bearer = HeaderMap::new();
        bearer.insert(
            header::AUTHORIZATION,
            format!("Bearer {token}").parse().unwrap(),
        );
        assert_eq!(gate.reader(&bearer, None), Some(Reader::Screen));
        let empty = Gate {
            screens: ScreenTokens::default(),
            ..gate
        };
        assert_eq!(empty.reader(&bearer, Some(&format!("token={token}"))), None);
    }
}
