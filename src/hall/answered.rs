//! The request ids a daemon has carried out, per board, kept for as long
//! as a replay of one could still be carried out: QoS 1 may deliver a
//! command twice, a broker or a bridge may hand an old one over again,
//! and a press or a correction must not be made twice.
//!
//! Promises (pure: the caller gives the time):
//! * an id is kept per board: commands to other boards never push it out;
//! * a command with a `deadline_ms` is kept until its deadline has passed
//!   on the daemon's wall clock (a replay after it is refused `expired` by
//!   the deadline itself); a deadline more than [`MAX_AHEAD_MS`] ahead is
//!   refused before anything runs ([`Answered::too_far_ahead`]), so no id is
//!   kept longer than that;
//! * a command without a deadline is kept for [`NO_DEADLINE_MS`] on the
//!   monotonic clock (a replay later than that is carried out again: a
//!   sender that may replay late sets `deadline_ms`, as the hub does);
//! * at most [`PER_BOARD`] ids a board: when that many are live, the board
//!   takes no new changing command (`busy`) until some are forgotten,
//!   rather than forget one that could still be replayed;
//! * only changes are kept, with their (small) replies: reads are not
//!   (reading twice changes nothing), so no `history` reply is held.

use std::collections::HashMap;

use chessclock_hall_proto::message::ReplyPayload;

/// How long the id of a command without a deadline is kept: an hour.
pub const NO_DEADLINE_MS: i64 = 60 * 60 * 1000;
/// How far ahead of the daemon's wall clock a command's deadline may lie:
/// an hour (the hub's lie seconds ahead).
pub const MAX_AHEAD_MS: i64 = 60 * 60 * 1000;
/// The most ids one board keeps at once.
pub const PER_BOARD: usize = 65_536;

/// Now on both of the daemon's clocks, ms.
#[derive(Clone, Copy, Debug)]
pub struct Now {
    pub wall_ms: i64,
    pub mono_ms: i64,
}

/// Until when an id is kept.
#[derive(Clone, Copy, Debug)]
enum Until {
    /// A deadline, on the wall clock.
    Wall(i64),
    /// Arrival + [`NO_DEADLINE_MS`], on the monotonic clock.
    Mono(i64),
}

impl Until {
    fn passed(self, now: Now) -> bool {
        match self {
            Until::Wall(ms) => now.wall_ms > ms,
            Until::Mono(ms) => now.mono_ms > ms,
        }
    }
}

#[derive(Default)]
struct Board {
    ids: HashMap<String, (Until, ReplyPayload)>,
    /// Ids added since the board was last swept of forgotten ones.
    added: usize,
}

impl Board {
    fn sweep(&mut self, now: Now) {
        self.ids.retain(|_, (until, _)| !until.passed(now));
        self.added = 0;
    }
}

/// The ids carried out, by board.
#[derive(Default)]
pub struct Answered {
    boards: HashMap<String, Board>,
}

impl Answered {
    /// The first reply to `id` on `board` if it was carried out and is
    /// still kept.
    pub fn seen(&self, board: &str, id: &str, now: Now) -> Option<&ReplyPayload> {
        let (until, reply) = self.boards.get(board)?.ids.get(id)?;
        // One kept by its deadline still answers: a second delivery of a
        // command carried out gets its first reply, not `expired`.
        match until {
            Until::Mono(_) if until.passed(now) => None,
            _ => Some(reply),
        }
    }

    /// Whether a command with this deadline would be kept too long: the
    /// refusal's words if so.
    pub fn too_far_ahead(deadline_ms: Option<i64>, now: Now) -> Option<String> {
        let deadline = deadline_ms?;
        (deadline.saturating_sub(now.wall_ms) > MAX_AHEAD_MS).then(|| {
            format!(
                "deadline_ms {deadline} is {} ms ahead of this daemon's clock: at most {} ms \
                 (an hour) ahead",
                deadline.saturating_sub(now.wall_ms),
                MAX_AHEAD_MS
            )
        })
    }

    /// Whether `board` keeps as many live ids as it may (after forgetting
    /// those whose time is up).
    pub fn full(&mut self, board: &str, now: Now) -> bool {
        let Some(kept) = self.boards.get_mut(board) else {
            return false;
        };
        if kept.ids.len() >= PER_BOARD {
            kept.sweep(now);
        }
        kept.ids.len() >= PER_BOARD
    }

    /// Keeps the reply to `id`, carried out on `board` at `now`.
    pub fn remember(
        &mut self,
        board: &str,
        id: String,
        deadline_ms: Option<i64>,
        now: Now,
        reply: ReplyPayload,
    ) {
        let until = match deadline_ms {
            Some(ms) => Until::Wall(ms),
            None => Until::Mono(now.mono_ms.saturating_add(NO_DEADLINE_MS)),
        };
        let kept = self.boards.entry(board.to_owned()).or_default();
        kept.ids.insert(id, (until, reply));
        kept.added += 1;
        // Forget the ids whose time is up now and then: amortised, each
        // sweep follows at least as many additions as it looks at ids.
        if kept.added >= kept.ids.len().max(256) / 2 {
            kept.sweep(now);
        }
    }

    /// How many ids `board` keeps (forgotten ones not yet swept included).
    #[cfg(test)]
    fn kept(&self, board: &str) -> usize {
        self.boards.get(board).map_or(0, |kept| kept.ids.len())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    const T0: i64 = 1_796_061_600_000;

    fn at(wall_ms: i64, mono_ms: i64) -> Now {
        Now { wall_ms, mono_ms }
    }

    fn reply(id: &str) -> ReplyPayload {
        ReplyPayload::ok(id.to_owned(), None)
    }

    /// Issue 29: the last 256 ids across all boards were kept, so an id
    /// replayed after 10,000 other commands was carried out again.
    #[test]
    fn an_id_is_kept_per_board_for_its_deadline_whatever_comes_after() {
        let mut answered = Answered::default();
        let now = at(T0, 5_000);
        answered.remember("b1", "adj-1".into(), Some(T0 + 4_000), now, reply("adj-1"));
        for i in 0..10_000 {
            let board = if i % 2 == 0 { "b1" } else { "b2" };
            answered.remember(board, format!("x{i}"), Some(T0 + 4_000), now, reply("x"));
        }
        let later = at(T0 + 3_999, 8_999);
        assert_eq!(
            answered.seen("b1", "adj-1", later).unwrap().id.as_deref(),
            Some("adj-1")
        );
        assert!(answered.seen("b2", "adj-1", later).is_none(), "per board");
        // Past the deadline the deadline refuses it: the ids may go, and
        // do as more come.
        for i in 0..6_000 {
            let now = at(T0 + 5_000, 10_000);
            answered.remember("b1", format!("y{i}"), Some(T0 + 10_000), now, reply("y"));
        }
        assert!(answered.kept("b1") <= 6_000, "{}", answered.kept("b1"));
    }

    #[test]
    fn without_a_deadline_an_id_is_kept_an_hour_on_the_monotonic_clock() {
        let mut answered = Answered::default();
        answered.remember("b1", "p1".into(), None, at(T0, 1_000), reply("p1"));
        // The wall clock stepping back or ahead changes nothing.
        assert!(answered
            .seen(
                "b1",
                "p1",
                at(T0 + 10 * NO_DEADLINE_MS, 1_000 + NO_DEADLINE_MS)
            )
            .is_some());
        assert!(answered
            .seen("b1", "p1", at(T0, 1_001 + NO_DEADLINE_MS))
            .is_none());
    }

    #[test]
    fn a_full_board_takes_no_more_until_ids_are_forgotten() {
        let mut answered = Answered::default();
        let now = at(T0, 0);
        for i in 0..PER_BOARD {
            assert!(!answered.full("b1", now));
            answered.remember("b1", format!("i{i}"), Some(T0 + 1_000), now, reply("i"));
        }
        assert!(answered.full("b1", now));
        assert!(!answered.full("b2", now));
        assert!(!answered.full("b1", at(T0 + 1_001, 1_001)));
        assert_eq!(answered.kept("b1"), 0);
    }

    #[test]
    fn a_deadline_more_than_an_hour_ahead_is_refused() {
        let now = at(T0, 0);
        assert!(Answered::too_far_ahead(None, now).is_none());
        assert!(Answered::too_far_ahead(Some(T0 + MAX_AHEAD_MS), now).is_none());
        let words = Answered::too_far_ahead(Some(T0 + MAX_AHEAD_MS + 1), now).unwrap();
        assert!(words.contains("an hour"), "{words}");
        assert!(Answered::too_far_ahead(Some(i64::MAX), now).is_some());
    }
}
