//! A board's state taken from the broker ([`Hub::take_state`]): kept in
//! the hub's table, given to the round's desk and to the broadcast's delay
//! buffer, and told on the `/events` stream.

use std::sync::Arc;

use super::{board_host_message, state_message, Hub, Latest};
use crate::skim::{skim, Skim};

impl Hub {
    /// A board's state (an empty payload: its removal) at `now_ms`: kept,
    /// given to the round's desk, and the `/events` messages it makes.
    /// The payload is skimmed, not parsed, and never written out again:
    /// the `/events` message carries its bytes as they came, and the
    /// hub's table and the delay buffer share one copy of its text (what a
    /// hall of 1,000 boards at its peak spent most of the hub's time on,
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
            let gone = known.forget(board);
            changes.push(state_message(board, None, Some(now_ms), None));
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
        // its state unreadable) and told as `null`. The state is skimmed,
        // not parsed ([`crate::skim`]): its tree is made when a reader asks.
        let (skimmed, text) = match std::str::from_utf8(payload)
            .ok()
            .and_then(|text| Some((skim(text)?, text)))
        {
            Some((skimmed, text)) => (skimmed, text),
            None => (Skim::default(), "null"),
        };
        // The desk first, while the hub's lock is not held (the desk's
        // readers take the hub's inside theirs), for a board the hub
        // already has; a new board's number needs it among the boards.
        let (ids, known_before) = {
            let known = self.known();
            (known.ids.clone(), known.has_board(board))
        };
        if known_before {
            self.desk.observe(&ids, board, &skimmed, text, now_ms);
        }
        // The card's position, before the lock: a game's replay.
        let position =
            crate::picture::position::position_of(skimmed.fen.as_deref(), skimmed.pgn.as_deref());
        let text: Arc<str> = Arc::from(text);
        // Kept for the public feed, which the releaser tells behind the
        // delay (the public's reads are all of the delay buffer).
        self.delayed
            .record(board, &skimmed, text.clone(), retained, now_ms);
        let host = skimmed.host.as_deref().map(str::to_owned);
        let mut known = self.known();
        // A live state: its host was alive now. A retained one may be from
        // a host long dead.
        if let Some(host) = host.as_ref().filter(|_| !retained) {
            match known.seen.get_mut(host) {
                Some(seen) => *seen = now_ms,
                None => {
                    known.seen.insert(host.clone(), now_ms);
                }
            }
        }
        changes.push(state_message(
            board,
            Some(&text),
            Some(now_ms),
            Some(&position),
        ));
        // (A new board names a host the hub had not for it.)
        let new_host = known.host_of(board) != host.as_deref();
        let came = known.keep(
            board,
            Latest {
                text: text.clone(),
                host,
                received_ms: now_ms,
                position,
            },
        );
        if new_host {
            changes.extend(board_host_message(&known, board).map(|m| m.to_string()));
        }
        let ids = known.ids.clone();
        drop(known);
        if came {
            self.desk.observe(&ids, board, &skimmed, &text, now_ms);
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
