//! A board's state taken from the broker ([`Hub::take_state`]): kept in
//! the hub's table, given to the round's desk and to the broadcast's delay
//! buffer, and told on the `/events` stream.

use std::sync::Arc;

use serde_json::Value;

use super::{board_host_message, state_message, Hub};

impl Hub {
    /// A board's state (an empty payload: its removal) at `now_ms`: kept,
    /// given to the round's desk, and the `/events` messages it makes.
    /// The payload is parsed once and never copied (but for a new board's
    /// first state) or written out again:
    /// the `/events` message carries its bytes as they came (what a hall
    /// of 1,000 boards at its peak spent most of the hub's time on,
    /// BENCHMARKS.md "Hall at scale").
    pub(super) fn take_state(
        &self,
        board: &str,
        payload: &[u8],
        retained: bool,
        now_ms: i64,
    ) -> Vec<String> {
        let mut changes = Vec::new();
        if payload.is_empty() {
            let mut known = self.known();
            let boards_before = known.boards.len();
            if known.boards.remove(board).is_some() {
                known.ids = Arc::new(known.boards.keys().cloned().collect());
            }
            known.received.remove(board);
            known.positions.remove(board);
            changes.push(state_message(board, None, Some(now_ms), None));
            let gone = known.boards.len() != boards_before;
            drop(known);
            if gone {
                changes.extend(self.remake_seats().map(|m| m.to_string()));
            }
            self.delayed.remove(board);
            // The state message (first) is the arbiters' only.
            for change in changes.iter().skip(1) {
                self.tell_public(change);
            }
            return changes;
        }
        // A payload that is not JSON is kept as `null` (the board is there,
        // its state unreadable) and told as `null`.
        // (UTF-8 checked once: `from_str` does not check it again.)
        let (value, text) = match std::str::from_utf8(payload)
            .ok()
            .and_then(|text| Some((serde_json::from_str::<Value>(text).ok()?, text)))
        {
            Some((value, text)) => (value, text),
            None => (Value::Null, "null"),
        };
        // The desk first, while the hub's lock is not held (the desk's
        // readers take the hub's inside theirs), for a board the hub
        // already has; a new board's number needs it among the boards.
        let (ids, known_before) = {
            let known = self.known();
            (known.ids.clone(), known.boards.contains_key(board))
        };
        if known_before {
            self.desk.observe(&ids, board, &value, now_ms);
        }
        // The card's position, before the lock: a game's replay.
        let position = crate::picture::position::position(&value);
        // Kept for the public feed, which the releaser tells behind the
        // delay (the public's reads are all of the delay buffer).
        self.delayed
            .record(board, &value, Arc::from(text), retained, now_ms);
        let mut known = self.known();
        let host = value["host"].as_str().map(str::to_owned);
        // A live state: its host was alive now. A retained one may be from
        // a host long dead.
        if let Some(host) = host.as_ref().filter(|_| !retained) {
            known.seen.insert(host.clone(), now_ms);
        }
        changes.push(state_message(
            board,
            Some(text),
            Some(now_ms),
            Some(&position),
        ));
        if position.is_null() {
            known.positions.remove(board);
        } else {
            known.positions.insert(board.to_owned(), position);
        }
        let new_host = known
            .boards
            .get(board)
            .is_none_or(|before| before["host"].as_str() != host.as_deref());
        known.received.insert(board.to_owned(), now_ms);
        // A new board's first state is read again below, once the hub
        // has it among its boards.
        let first = (!known_before).then(|| value.clone());
        known.boards.insert(board.to_owned(), value);
        if !known_before {
            known.ids = Arc::new(known.boards.keys().cloned().collect());
        }
        if new_host {
            changes.extend(board_host_message(&known, board).map(|m| m.to_string()));
        }
        let ids = known.ids.clone();
        drop(known);
        if let Some(value) = first {
            self.desk.observe(&ids, board, &value, now_ms);
            // A board came: the boards' numbers may change.
            changes.extend(self.remake_seats().map(|m| m.to_string()));
        }
        // The state message (first) is the arbiters' only.
        for change in changes.iter().skip(1) {
            self.tell_public(change);
        }
        changes
    }
}
