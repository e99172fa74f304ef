//! `chessclockctl --hall URL watch`: the hall's boards as the hub
//! (`chessclock-hall`) knows them, read from its `/boards.json` over HTTP
//! and drawn by `watch`'s own view (`watch::render`).
//!
//! Promises: the hub's answer is outside input: a board whose state cannot
//! be read, or whose host is offline, becomes a line saying so, never a
//! panic; each board's clocks are advanced from the daemon's snapshot to
//! the moment of reading (the hub may hold a state minutes old while a
//! clock runs); the client is hyper's,
//! plain HTTP only (the hub serves the hall's own network); the hub's live
//! boards need a hall screen's token (`--hall-token-file`), sent as
//! `Authorization: Bearer`.

use std::time::Duration;

use chessclock_core::views::StateView;
use http_body_util::{BodyExt, Empty, Limited};
use hyper::body::Bytes;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

use super::rows::{advance, Row};
use super::CtlError;

/// How long one request to the hub may take.
pub const TIMEOUT: Duration = Duration::from_secs(5);
/// The largest answer taken from the hub.
const MAX_ANSWER: usize = 64 * 1024 * 1024;

/// The hub's base URL, checked: `http://HOST[:PORT][/PREFIX]` (a bare
/// `HOST:PORT` is taken as `http://`), without a trailing `/`.
pub fn base_url(text: &str) -> Result<String, CtlError> {
    let text = text.trim();
    let (scheme, rest) = text.split_once("://").unwrap_or(("http", text));
    if scheme != "http" {
        return Err(CtlError::Usage(format!(
            "--hall {text}: give the hub's http:// address (e.g. http://192.168.1.10:8080); \
             the hub serves plain HTTP on the hall's network"
        )));
    }
    let rest = rest.trim_end_matches('/');
    let url = format!("http://{rest}");
    let uri: hyper::Uri = format!("{url}/boards.json")
        .parse()
        .map_err(|e| CtlError::Usage(format!("--hall {text}: not a URL: {e}")))?;
    if rest.is_empty() || uri.host().is_none_or(str::is_empty) {
        return Err(CtlError::Usage(format!(
            "--hall {text}: no host in the URL"
        )));
    }
    Ok(url)
}

/// The hall screen token in `path`'s first line.
pub fn read_token(path: &std::path::Path) -> Result<String, CtlError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        CtlError::Usage(format!(
            "--hall-token-file {}: cannot read it: {e}",
            path.display()
        ))
    })?;
    let token = text.lines().next().unwrap_or("").trim();
    if token.is_empty() || !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(CtlError::Usage(format!(
            "--hall-token-file {}: its first line is not a token",
            path.display()
        )));
    }
    Ok(token.to_owned())
}

/// A client of the hub.
pub struct HubClient {
    base: String,
    token: Option<String>,
    client: Client<HttpConnector, Empty<Bytes>>,
}

impl HubClient {
    /// A client of the hub at `url`, reading as the hall screen of `token`.
    pub fn new(url: &str, token: Option<String>) -> Result<HubClient, CtlError> {
        Ok(HubClient {
            base: base_url(url)?,
            token,
            client: Client::builder(TokioExecutor::new()).build_http(),
        })
    }

    /// The hub's address, for messages and the view's labels.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// `GET PATH` as JSON.
    pub async fn get_json(&self, path: &str) -> Result<Value, CtlError> {
        let url = format!("{}{path}", self.base);
        let uri: hyper::Uri = url
            .parse()
            .map_err(|e| CtlError::Usage(format!("{url}: not a URL: {e}")))?;
        let fail = |why: String| CtlError::Api(format!("cannot read {url}: {why}"));
        let answer = async {
            let mut request = hyper::Request::get(uri);
            if let Some(token) = &self.token {
                request = request.header(hyper::header::AUTHORIZATION, format!("Bearer {token}"));
            }
            let request = request
                .body(Empty::new())
                .map_err(|e| fail(e.to_string()))?;
            let response = self
                .client
                .request(request)
                .await
                .map_err(|e| fail(e.to_string()))?;
            let status = response.status();
            let body = Limited::new(response.into_body(), MAX_ANSWER)
                .collect()
                .await
                .map_err(|e| fail(e.to_string()))?
                .to_bytes();
            if status == hyper::StatusCode::UNAUTHORIZED {
                return Err(fail(format!(
                    "the hub answered {status}: its live boards need a hall screen's token \
                     (--hall-token-file FILE, a token of the hub's --screen-tokens)"
                )));
            }
            if !status.is_success() {
                return Err(fail(format!("the hub answered {status}")));
            }
            serde_json::from_slice(&body).map_err(|e| fail(format!("the answer is not JSON: {e}")))
        };
        tokio::time::timeout(TIMEOUT, answer)
            .await
            .map_err(|_| fail(format!("no answer within {} s", TIMEOUT.as_secs())))?
    }

    /// The hub's boards as the view's rows, as of now.
    pub async fn rows(&self) -> Result<Vec<Row>, CtlError> {
        let boards = self.get_json("/boards.json").await?;
        Ok(rows(
            &boards,
            chessclock_host::clock::wall_now_us().div_euclid(1000),
        ))
    }
}

/// The view's rows for the hub's `/boards.json` answer at wall instant
/// `now_ms`: each board's State view advanced to `now_ms` (the daemon's
/// `clock` mapping gives the wall instant of the view's `t`); a board
/// whose host is offline, or whose state cannot be read, as an error line.
pub fn rows(boards: &Value, now_ms: i64) -> Vec<Row> {
    let hosts = &boards["hosts"];
    let Some(all) = boards["boards"].as_object() else {
        return Vec::new();
    };
    all.iter()
        .map(|(board, payload)| {
            let host = payload["host"].as_str().unwrap_or("").to_owned();
            let status = hosts[host.as_str()].as_str().unwrap_or("online");
            let error_row = |error: String| Row {
                source: host.clone(),
                board: board.clone(),
                view: None,
                age_ms: 0,
                error: Some(error),
            };
            if status != "online" {
                return error_row(format!("host {host} {status}"));
            }
            let view: StateView = match serde_json::from_value(payload["state"].clone()) {
                Ok(view) => view,
                Err(_) => return error_row("no readable state from the hub".into()),
            };
            let offset = payload["clock"]["wall_ms"]
                .as_i64()
                .zip(payload["clock"]["mono_ms"].as_i64())
                .map(|(wall, mono)| wall.saturating_sub(mono));
            let age = offset.map_or(0, |offset| {
                now_ms.saturating_sub(view.t.saturating_add(offset)).max(0)
            });
            Row {
                source: host.clone(),
                board: board.clone(),
                view: Some(advance(&view, age)),
                age_ms: 0,
                error: None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;
    use serde_json::json;

    #[test]
    fn hub_addresses_are_checked() {
        assert_eq!(base_url("http://hub:8080/").unwrap(), "http://hub:8080");
        assert_eq!(base_url("10.0.0.2:8080").unwrap(), "http://10.0.0.2:8080");
        assert_eq!(base_url("http://hub/hall").unwrap(), "http://hub/hall");
        assert!(matches!(base_url("https://hub"), Err(CtlError::Usage(_))));
        assert!(matches!(base_url("http://"), Err(CtlError::Usage(_))));
        assert!(matches!(base_url("http://a b"), Err(CtlError::Usage(_))));
    }

    #[test]
    fn rows_come_from_the_hubs_boards_with_their_clocks_advanced() {
        let state = json!({
            "t": 1_000, "running": "white", "paused": false, "flags": [],
            "white": {"remaining_ms": 60_000, "used_ms": 0, "moves": 3, "stage": 1,
                      "delay_left_ms": null, "in_overtime": false},
            "black": {"remaining_ms": 50_000, "used_ms": 0, "moves": 3, "stage": 1,
                      "delay_left_ms": null, "in_overtime": false},
            "board": "b1", "control": "300", "started": true, "frozen": false,
            "to_move": "white", "game_ms": 0, "game_epoch_us": 0,
            "time_since_start_ms": 0, "default_time_ms": 0, "default_time_overrun": [],
            "down_time_ms": null, "arbiter_called": false, "scheduled_start_ms": null,
            "devices": [], "eboard": null,
        });
        let boards = json!({
            "boards": {
                "b1": {"host": "pi1", "state": state,
                       "clock": {"mono_ms": 1_000, "wall_ms": 100_000}},
                "b2": {"host": "pi2", "state": state},
                "b3": {"host": "pi1", "state": "garbage"},
            },
            "hosts": {"pi1": "online", "pi2": "offline"},
        });
        let rows = rows(&boards, 104_000);
        assert_eq!(rows.len(), 3);
        let b1 = rows.iter().find(|r| r.board == "b1").unwrap();
        assert_eq!(b1.source, "pi1");
        let view = b1.view.as_ref().unwrap_or_else(|| panic!("{b1:?}"));
        // 4 s after the state's instant: White's clock ran 4 s.
        assert_eq!(view.white.remaining_ms, Some(56_000));
        assert_eq!(view.black.remaining_ms, Some(50_000));
        let b2 = rows.iter().find(|r| r.board == "b2").unwrap();
        assert_eq!(b2.error.as_deref(), Some("host pi2 offline"));
        let b3 = rows.iter().find(|r| r.board == "b3").unwrap();
        assert!(b3.error.is_some() && b3.view.is_none());
        assert!(super::rows(&json!("nonsense"), 0).is_empty());
    }
}
