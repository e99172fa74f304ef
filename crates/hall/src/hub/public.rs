//! The hub as the round's source ([`RoundSource`]), and its public feed
//! (issue 32): what of the hub's changes goes to
//! the public stream at once (the link, the round's boards' hosts and
//! seats), the delay in force, and the public's view of the boards (behind
//! the delay: [`crate::broadcast`]). Every public route reads the boards
//! through [`Hub::public_board`] or [`Hub::public_states`]; their states
//! reach the public stream only through the releaser (`crate::http`).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::broadcast;

use super::{board_host_message, Cut, Hub, Known};
use crate::round::{Desk, RoundSource};

impl Hub {
    /// Sends a message of the arbiters' stream to the public's too when
    /// it is for the public: the link, and a board's host status or the
    /// seats of the round's boards only (their states go behind the delay,
    /// by the releaser; a host's own message names it: never).
    pub(crate) fn tell_public(&self, message: &str) {
        let Ok(value) = serde_json::from_str::<Value>(message) else {
            return;
        };
        let public = match value["type"].as_str() {
            Some("link") => Some(message.to_owned()),
            Some("board-host") => value["board"]
                .as_str()
                .filter(|board| self.delayed.is_member(board))
                .map(|_| message.to_owned()),
            Some("seats") => Some(self.public_seats(&value).to_string()),
            _ => None,
        };
        if let Some(public) = public {
            let _ = self.public.send(Arc::from(public));
            self.public_changed.notify_one();
        }
    }

    /// A `seats` message with the round's boards only.
    pub(crate) fn public_seats(&self, seats: &Value) -> Value {
        let mut seats = seats.clone();
        if let Some(map) = seats["seats"].as_object_mut() {
            map.retain(|board, _| self.delayed.is_member(board));
        }
        seats
    }

    /// The public feed's cut now: the current round's own delay (set on
    /// the desk), else the hub's `--delay-seconds`.
    pub fn public_cut(&self) -> Cut {
        let delay_ms = self
            .desk
            .round_delay()
            .map_or_else(|| self.delayed.hub_delay_ms(), |s| i64::from(s) * 1000);
        Cut {
            now_ms: self.now_ms(),
            delay_ms,
            results_immediately: self.delayed.results_immediately(),
        }
    }

    /// The delay's settings: the hub's own delay and whether results go
    /// out at once.
    pub fn set_delay(&self, delay_ms: i64, results_immediately: bool) {
        self.delayed.configure(delay_ms, results_immediately);
    }

    /// One board's state as the public sees it now (`None`: not public,
    /// or no state of it old enough). Every public route of one board
    /// reads it here.
    pub fn public_board(&self, board: &str) -> Option<Value> {
        self.delayed.board(board, &self.public_cut())
    }

    /// Every public board's state as the public sees it now.
    pub fn public_states(&self) -> BTreeMap<String, Value> {
        self.delayed.view(&self.public_cut())
    }

    /// The public stream's first messages, without the states (the link,
    /// the round's boards' hosts, the public seats).
    pub(crate) fn public_first(&self) -> Vec<String> {
        let link = self.link().message().to_string();
        let seats = self.public_seats(&self.seats_message()).to_string();
        let known = self.known();
        let board_hosts: Vec<String> = known
            .board_ids()
            .filter_map(|board| board_host_message(&known, board))
            .map(|message| message.to_string())
            .collect();
        drop(known);
        std::iter::once(link)
            .chain(board_hosts.into_iter().filter(|m| {
                serde_json::from_str::<Value>(m).is_ok_and(|v| {
                    v["board"]
                        .as_str()
                        .is_some_and(|b| self.delayed.is_member(b))
                })
            }))
            .chain(std::iter::once(seats))
            .collect()
    }
}

/// A read of the boards' latest states (the hub's lock, held while it
/// lives).
pub struct BoardsRead<'a>(std::sync::MutexGuard<'a, Known>);

impl std::ops::Deref for BoardsRead<'_> {
    type Target = BTreeMap<String, Value>;

    fn deref(&self) -> &Self::Target {
        // Made whole when the read began.
        &self.0.trees
    }
}

impl RoundSource for Hub {
    type Boards<'a> = BoardsRead<'a>;

    fn desk(&self) -> &Desk {
        &self.desk
    }

    fn boards(&self) -> BoardsRead<'_> {
        let mut known = self.known();
        known.boards();
        BoardsRead(known)
    }

    fn changes(&self) -> broadcast::Receiver<Arc<str>> {
        self.changes.subscribe()
    }

    fn now_ms(&self) -> i64 {
        Hub::now_ms(self)
    }

    fn public_boards(&self) -> (Cut, BTreeMap<String, Value>) {
        let cut = self.public_cut();
        let mut shown = self.delayed.view(&cut);
        // Every board the hub knows (the round's numbering reads them
        // all), `null` where the public sees nothing yet.
        let ids = self.known().ids.clone();
        let boards = ids
            .iter()
            .map(|id| (id.clone(), shown.remove(id).unwrap_or(Value::Null)))
            .collect();
        (cut, boards)
    }

    fn public_changed(&self) -> &tokio::sync::Notify {
        &self.public_changed
    }

    fn public_cut(&self) -> Cut {
        Hub::public_cut(self)
    }
}
