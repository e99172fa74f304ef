//! The broadcast's delay at the source (issue 32): every board's states
//! kept with their instants, from which the public feed (the spectators'
//! page and `/public/*`, the public round PGN, the lichess push) takes,
//! at each instant `now`, the latest state no newer than `now - delay`.
//!
//! Promises:
//! * nothing a public reader gets of a board is newer than the delay: a
//!   state's instant is the later of its arrival at the hub and its own
//!   snapshot's wall instant (a retained state found at a (re)connection:
//!   its snapshot's instant, never later than its arrival), and a state is
//!   shown only once `now - delay` has reached that instant; a board with
//!   no state that old is not shown at all;
//! * the state shown is shifted by the delay: its `snapshot_wall_ms` is
//!   its own plus the delay, so a reader ticking the running clock from it
//!   shows that clock as it was the delay ago (the PGN's `ReferenceTime`
//!   is made from it: the instant the public sees the state at);
//! * with `results_immediately`, a board whose latest state has a result
//!   shows that state at once (not shifted: its clocks are stopped), and
//!   the states before it are dropped (a board's next game starts behind
//!   the delay from the result on, never from the game before it);
//! * memory is bounded: a board keeps the state shown now and the states
//!   still to come, about one per [`COALESCE_MS`] (a state coming sooner
//!   takes the place of the last one kept, itself that recent: the public
//!   sees the later one at its own instant, with what both show; a
//!   result is always kept) and
//!   at most [`MAX_STATES`] (above that the oldest go, and
//!   the board shows nothing until its next state is old enough: never
//!   something early), each as the JSON text it came as (2-5 KB), parsed
//!   again only when a public reader is shown it: a parsed tree is several
//!   times the text, and copying one for every state taken was a quarter
//!   of the hub's time at a hall's peak (BENCHMARKS.md, "Hall at scale");
//! * with pairings, only the round's boards ([`Delayed::set_members`]) are
//!   public; a board leaving the round is withdrawn from the public feed.
//!
//! The releaser ([`Delayed::release`]) says which boards' public states
//! changed since it last ran and when it must run next: the hub's task
//! sends those on the public stream.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::Value;
use tokio::sync::Notify;

use crate::skim::Skim;

/// The most states kept per board.
pub const MAX_STATES: usize = 4096;

/// About the least time between two states kept of a board (ms): a
/// hall's peak (5 states a second a board) kept behind a 10 s delay was
/// 265 MB. A change may go out this much later than its own instant (with
/// the state that took its place): small beside a push interval.
pub const COALESCE_MS: i64 = 250;

/// One state, with its instant.
struct Kept {
    seq: u64,
    at_ms: i64,
    /// The state's JSON text as the hub took it (`null` if it was not
    /// JSON).
    text: Arc<str>,
    over: bool,
}

impl Kept {
    /// The state, parsed (`null` if its text is not JSON).
    fn payload(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
    }
}

#[derive(Default)]
struct Inner {
    boards: BTreeMap<String, VecDeque<Kept>>,
    /// Boards with states not yet public (or whose view must be told).
    pending: BTreeSet<String>,
    /// Boards with a state still to come, by that state's instant: the
    /// releaser looks at a board again when its next state falls due, not
    /// at every wake (with a delay, every board has one: walking them all
    /// at each state taken was most of the hub's time at a hall's peak).
    waiting: BTreeSet<(i64, String)>,
    /// Board -> the state (its `seq`) last told on the public stream.
    told: BTreeMap<String, u64>,
    /// The round's boards (`None`: every board, no pairings loaded).
    members: Option<BTreeSet<String>>,
    seq: u64,
}

/// The delay's settings and every board's states.
#[derive(Default)]
pub struct Delayed {
    inner: Mutex<Inner>,
    /// The hub's delay (`--delay-seconds`), in ms.
    hub_delay_ms: AtomicI64,
    /// `--results-immediately`.
    results_immediately: AtomicBool,
    /// Rung at every state and setting change: the releaser looks again.
    pub wake: Notify,
}

/// What the public sees of a board now: its state (shifted) if one is old
/// enough.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cut {
    /// Now, on the hub's wall clock (ms).
    pub now_ms: i64,
    /// The delay in force (ms).
    pub delay_ms: i64,
    pub results_immediately: bool,
}

impl Cut {
    /// The newest instant the public may see.
    pub fn until_ms(&self) -> i64 {
        self.now_ms.saturating_sub(self.delay_ms)
    }

    /// Whether a game recorded at `recorded_ms` (its final PGN, its
    /// result) may be shown.
    pub fn shows_record(&self, recorded_ms: i64) -> bool {
        self.results_immediately || recorded_ms <= self.until_ms()
    }
}

fn lock(mutex: &Mutex<Inner>) -> MutexGuard<'_, Inner> {
    // Each change under the lock leaves it whole (a push, a pop, an
    // insert): a panic elsewhere cannot leave it half-changed.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The index of the state a board shows under `cut`, and whether it is
/// shifted by the delay.
fn pick(states: &VecDeque<Kept>, cut: &Cut) -> Option<(usize, bool)> {
    let until = cut.until_ms();
    // A result goes out at once when asked (and stays until the next
    // game's first state is old enough).
    let early = |s: &Kept| cut.results_immediately && s.over && s.at_ms > until;
    states
        .iter()
        .rposition(|s| s.at_ms <= until || early(s))
        // A result shown early is not shifted: its clocks are stopped.
        .map(|index| (index, !early(&states[index])))
}

/// A state as the public sees it: `snapshot_wall_ms` moved on by the delay
/// when shifted.
fn shifted(mut payload: Value, shift: bool, delay_ms: i64) -> Value {
    if shift && delay_ms > 0 {
        if let Some(at) = payload["snapshot_wall_ms"].as_i64() {
            payload["snapshot_wall_ms"] = Value::from(at.saturating_add(delay_ms));
        }
    }
    payload
}

/// Drops the states before the one shown (never the one shown).
fn prune(states: &mut VecDeque<Kept>, cut: &Cut) {
    if let Some((index, _)) = pick(states, cut) {
        states.drain(..index);
    }
}

impl Delayed {
    /// The hub's own delay and whether results go out at once.
    pub fn configure(&self, delay_ms: i64, results_immediately: bool) {
        self.hub_delay_ms.store(delay_ms.max(0), Ordering::SeqCst);
        self.results_immediately
            .store(results_immediately, Ordering::SeqCst);
        self.wake.notify_one();
    }

    /// The hub's own delay (`--delay-seconds`), in ms.
    pub fn hub_delay_ms(&self) -> i64 {
        self.hub_delay_ms.load(Ordering::SeqCst)
    }

    pub fn results_immediately(&self) -> bool {
        self.results_immediately.load(Ordering::SeqCst)
    }

    /// Keeps a board's state taken at `now_ms` (`retained`: the broker's
    /// copy found at a subscription): `state` is its skim, `text` the
    /// JSON it was read from (what is kept).
    pub fn record(&self, board: &str, state: &Skim, text: Arc<str>, retained: bool, now_ms: i64) {
        let snapshot = state.snapshot_wall_ms;
        let at_ms = match (retained, snapshot) {
            // What it says held since its snapshot, and still holds.
            (true, Some(at)) => at.min(now_ms),
            // Never before it reached the hub, nor before its own instant
            // (a daemon's clock ahead of the hub's).
            (_, Some(at)) => at.max(now_ms),
            (_, None) => now_ms,
        };
        let over = state.has_result;
        let mut inner = lock(&self.inner);
        inner.seq += 1;
        let seq = inner.seq;
        // No key made again for a board already kept (every state).
        if !inner.boards.contains_key(board) {
            inner.boards.insert(board.to_owned(), VecDeque::new());
        }
        if !inner.pending.contains(board) {
            inner.pending.insert(board.to_owned());
        }
        let Some(states) = inner.boards.get_mut(board) else {
            return;
        };
        if over && self.results_immediately() {
            // The result supersedes what came before it.
            states.clear();
        }
        // A live state takes the place of the last one kept (what it shows
        // includes that one's) when both are within [`COALESCE_MS`] of the
        // one kept before them: kept states are that far apart, and each
        // keeps its instant once the next is kept (a board publishing
        // faster never holds its states back). The one replaced is less
        // than that old, so still to come behind a delay (whole seconds;
        // with none, the new one is due at once too). A result is never
        // replaced and never takes another's place.
        let n = states.len();
        let replaces = !retained
            && !over
            && n >= 2
            && !states[n - 1].over
            && (0..COALESCE_MS).contains(&(at_ms - states[n - 1].at_ms))
            && (0..COALESCE_MS).contains(&(states[n - 1].at_ms - states[n - 2].at_ms));
        if replaces {
            states.pop_back();
        }
        states.push_back(Kept {
            seq,
            at_ms,
            text,
            over,
        });
        while states.len() > MAX_STATES {
            states.pop_front();
        }
        drop(inner);
        self.wake.notify_one();
    }

    /// Forgets a board (its state deleted).
    pub fn remove(&self, board: &str) {
        let mut inner = lock(&self.inner);
        inner.boards.remove(board);
        inner.pending.insert(board.to_owned());
        drop(inner);
        self.wake.notify_one();
    }

    /// The round's boards (`None`: every board is public).
    pub fn set_members(&self, members: Option<BTreeSet<String>>) {
        let mut inner = lock(&self.inner);
        if inner.members == members {
            return;
        }
        inner.members = members;
        let all: Vec<String> = inner
            .boards
            .keys()
            .chain(inner.told.keys())
            .cloned()
            .collect();
        inner.pending.extend(all);
        drop(inner);
        self.wake.notify_one();
    }

    /// Makes the releaser look at every board again (the delay changed).
    pub fn touch_all(&self) {
        let mut inner = lock(&self.inner);
        let all: Vec<String> = inner.boards.keys().cloned().collect();
        inner.pending.extend(all);
        drop(inner);
        self.wake.notify_one();
    }

    /// Whether `board` is public (one of the round's).
    pub fn is_member(&self, board: &str) -> bool {
        lock(&self.inner)
            .members
            .as_ref()
            .is_none_or(|m| m.contains(board))
    }

    /// Every public board's state as the public sees it under `cut`.
    pub fn view(&self, cut: &Cut) -> BTreeMap<String, Value> {
        let inner = lock(&self.inner);
        inner
            .boards
            .iter()
            .filter(|(board, _)| inner.members.as_ref().is_none_or(|m| m.contains(*board)))
            .filter_map(|(board, states)| {
                let (index, shift) = pick(states, cut)?;
                Some((
                    board.clone(),
                    shifted(states[index].payload(), shift, cut.delay_ms),
                ))
            })
            .collect()
    }

    /// One public board's state under `cut`.
    pub fn board(&self, board: &str, cut: &Cut) -> Option<Value> {
        let inner = lock(&self.inner);
        if !inner.members.as_ref().is_none_or(|m| m.contains(board)) {
            return None;
        }
        let states = inner.boards.get(board)?;
        let (index, shift) = pick(states, cut)?;
        Some(shifted(states[index].payload(), shift, cut.delay_ms))
    }

    /// The boards whose public state changed since the last release (each
    /// with its new state, `None`: withdrawn), and the instant the next one
    /// falls due (`None`: nothing waits).
    /// Each state is parsed and goes through `view` first (what the stream
    /// tells of it), then is shifted; with no `view` (no one listens) a
    /// state is only marked told, told as `null`, and not parsed.
    pub fn release(
        &self,
        cut: &Cut,
        view: Option<&dyn Fn(&Value) -> Value>,
    ) -> (Vec<(String, Option<Value>)>, Option<i64>) {
        let mut inner = lock(&self.inner);
        let until = cut.until_ms();
        let mut pending = std::mem::take(&mut inner.pending);
        // The boards whose next state fell due.
        while inner.waiting.first().is_some_and(|(at, _)| *at <= until) {
            if let Some((_, board)) = inner.waiting.pop_first() {
                pending.insert(board);
            }
        }
        let mut out = Vec::new();
        let Inner {
            boards,
            told,
            members,
            waiting,
            ..
        } = &mut *inner;
        for board in pending {
            let member = members.as_ref().is_none_or(|m| m.contains(&board));
            let Some(states) = boards.get_mut(&board).filter(|_| member) else {
                if told.remove(&board).is_some() {
                    out.push((board, None));
                }
                continue;
            };
            prune(states, cut);
            if let Some((index, shift)) = pick(states, cut) {
                let state = &states[index];
                if told.get(&board) != Some(&state.seq) {
                    told.insert(board.clone(), state.seq);
                    out.push((
                        board.clone(),
                        Some(view.map_or(Value::Null, |view| {
                            shifted(view(&state.payload()), shift, cut.delay_ms)
                        })),
                    ));
                }
            }
            if let Some(at) = states.iter().find(|s| s.at_ms > until).map(|s| s.at_ms) {
                waiting.insert((at, board));
            }
        }
        let next = waiting
            .first()
            .map(|(at, _)| at.saturating_add(cut.delay_ms));
        (out, next)
    }

    /// How many states are kept, all boards together (for the benchmarks).
    pub fn kept(&self) -> usize {
        lock(&self.inner).boards.values().map(VecDeque::len).sum()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;
    use crate::skim::skim;
    use serde_json::json;

    fn state(wall: i64, white_ms: i64, result: bool) -> Value {
        json!({"snapshot": {"started": true, "running": "white",
                            "white_remaining_ms": white_ms},
               "snapshot_wall_ms": wall,
               "state": {"result": if result { json!({"result": "1-0"}) } else { Value::Null }}})
    }

    fn record(delayed: &Delayed, board: &str, state: Value, retained: bool, now_ms: i64) {
        let text: Arc<str> = state.to_string().into();
        delayed.record(board, &skim(&text).unwrap(), text.clone(), retained, now_ms);
    }

    fn cut(now_ms: i64, delay_ms: i64, results_immediately: bool) -> Cut {
        Cut {
            now_ms,
            delay_ms,
            results_immediately,
        }
    }

    #[test]
    fn the_public_sees_the_latest_state_no_newer_than_the_delay_shifted() {
        let delayed = Delayed::default();
        record(&delayed, "b1", state(1_000, 60_000, false), false, 1_000);
        record(&delayed, "b1", state(5_000, 55_000, false), false, 5_000);
        // Nothing old enough yet: nothing shown.
        assert!(delayed.view(&cut(3_000, 3_000, false)).is_empty());
        let view = delayed.view(&cut(4_000, 3_000, false));
        assert_eq!(view["b1"]["snapshot"]["white_remaining_ms"], 60_000);
        assert_eq!(
            view["b1"]["snapshot_wall_ms"], 4_000,
            "shifted by the delay"
        );
        let (told, next) = delayed.release(&cut(4_000, 3_000, false), Some(&Value::clone));
        assert_eq!(told.len(), 1);
        assert_eq!(next, Some(8_000), "the second state falls due at 5 s + 3 s");
        // Nothing new before it is due.
        assert!(delayed
            .release(&cut(7_999, 3_000, false), Some(&Value::clone))
            .0
            .is_empty());
        let (told, next) = delayed.release(&cut(8_000, 3_000, false), Some(&Value::clone));
        assert_eq!(
            told[0].1.as_ref().unwrap()["snapshot"]["white_remaining_ms"],
            55_000
        );
        assert_eq!(next, None);
        // The first state is gone: only the one shown is kept.
        assert_eq!(delayed.kept(), 1);
    }

    #[test]
    fn a_state_is_never_older_than_its_arrival_nor_its_own_instant() {
        let delayed = Delayed::default();
        // A daemon's clock 10 s ahead: held until its own instant.
        record(&delayed, "b1", state(20_000, 60_000, false), false, 10_000);
        assert!(delayed.view(&cut(22_000, 3_000, false)).is_empty());
        assert_eq!(delayed.view(&cut(23_000, 3_000, false)).len(), 1);
        // A retained state from long ago is as old as it says.
        record(&delayed, "b2", state(1_000, 60_000, false), true, 50_000);
        assert!(delayed.view(&cut(50_000, 3_000, false)).contains_key("b2"));
    }

    #[test]
    fn results_go_out_at_once_when_asked_and_the_next_game_starts_from_them() {
        let delayed = Delayed::default();
        delayed.configure(3_000, true);
        record(&delayed, "b1", state(1_000, 60_000, false), false, 1_000);
        record(&delayed, "b1", state(2_000, 59_000, true), false, 2_000);
        let c = cut(2_000, 3_000, true);
        let view = delayed.view(&c);
        assert!(view["b1"]["state"]["result"].is_object());
        assert_eq!(view["b1"]["snapshot_wall_ms"], 2_000, "not shifted");
        // The next game: its first state waits for the delay.
        record(&delayed, "b1", state(2_500, 300_000, false), false, 2_500);
        assert!(delayed.view(&cut(3_000, 3_000, true))["b1"]["state"]["result"].is_object());
        assert_eq!(
            delayed.view(&cut(5_500, 3_000, true))["b1"]["snapshot"]["white_remaining_ms"],
            300_000
        );
        // Without the setting the result waits too.
        let later = Delayed::default();
        record(&later, "b1", state(1_000, 60_000, false), false, 1_000);
        record(&later, "b1", state(2_000, 59_000, true), false, 2_000);
        assert!(later.view(&cut(4_999, 3_000, false))["b1"]["state"]["result"].is_null());
    }

    #[test]
    fn boards_outside_the_round_are_withdrawn_and_memory_is_bounded() {
        let delayed = Delayed::default();
        record(&delayed, "b1", state(0, 1, false), false, 0);
        record(&delayed, "b2", state(0, 1, false), false, 0);
        assert_eq!(
            delayed
                .release(&cut(0, 0, false), Some(&Value::clone))
                .0
                .len(),
            2
        );
        delayed.set_members(Some(BTreeSet::from(["b1".to_owned()])));
        let (told, _) = delayed.release(&cut(0, 0, false), Some(&Value::clone));
        assert_eq!(told, vec![("b2".to_owned(), None)]);
        assert_eq!(delayed.view(&cut(0, 0, false)).len(), 1);
        assert!(delayed.board("b2", &cut(0, 0, false)).is_none());
        for i in 0..(MAX_STATES as i64 + 10) {
            let at = i * COALESCE_MS;
            record(&delayed, "b1", state(at, 1, false), false, at);
        }
        assert!(delayed.kept() <= MAX_STATES + 1);
    }

    #[test]
    fn a_state_soon_after_the_one_before_takes_its_place_but_never_a_result() {
        let delayed = Delayed::default();
        let white = |d: &Delayed, now: i64| {
            d.view(&cut(now, 3_000, false))["b1"]["snapshot"]["white_remaining_ms"].clone()
        };
        record(&delayed, "b1", state(1_000, 60_000, false), false, 1_000);
        record(&delayed, "b1", state(1_100, 59_000, false), false, 1_100);
        record(&delayed, "b1", state(1_200, 58_000, false), false, 1_200);
        assert_eq!(delayed.kept(), 2, "1.1 s's gave its place to 1.2 s's");
        // Each shown at its own instant, never early.
        assert_eq!(white(&delayed, 4_199), 60_000);
        assert_eq!(white(&delayed, 4_200), 58_000);
        // A board publishing every 100 ms keeps a state every few hundred
        // ms, each at its own instant: none is held back for good.
        let busy = Delayed::default();
        for at in (10_000..20_000).step_by(100) {
            record(&busy, "b1", state(at, 100_000 - at, false), false, at);
        }
        let kept = busy.kept();
        assert!((20..=60).contains(&kept), "{kept} states kept of 100");
        for now in (13_000..23_000).step_by(50) {
            let shown = white(&busy, now).as_i64().unwrap();
            let until = now - 3_000;
            assert!(
                100_000 - shown <= until,
                "at {now}: a state from after {until}"
            );
            assert!(
                100_000 - shown > until.min(19_900) - 2 * COALESCE_MS,
                "at {now}: {shown} held back"
            );
        }
        // A result is never replaced, and never takes another's place.
        record(&delayed, "b1", state(1_600, 57_000, false), false, 1_600);
        record(&delayed, "b1", state(1_601, 57_000, false), false, 1_601);
        assert_eq!(delayed.kept(), 4);
        record(&delayed, "b1", state(1_700, 56_000, true), false, 1_700);
        assert_eq!(delayed.kept(), 5);
        record(&delayed, "b1", state(1_800, 56_000, false), false, 1_800);
        record(&delayed, "b1", state(1_850, 56_000, false), false, 1_850);
        assert_eq!(
            delayed.kept(),
            6,
            "the result stays; 1.85 s's replaces 1.8 s's"
        );
        // Retained states (a reconnection) are kept as they come.
        record(&delayed, "b2", state(100, 1, false), true, 9_000);
        record(&delayed, "b2", state(200, 1, false), true, 9_000);
        record(&delayed, "b2", state(300, 1, false), true, 9_000);
        assert_eq!(delayed.kept(), 9);
    }
}
