//! The lichess rounds the hub makes itself (`--lichess-broadcast ID`): a
//! round of the event larger than lichess's 100 boards goes to several
//! lichess rounds of the broadcast, one per hundred boards, made with
//! lichess's `POST /broadcast/{id}/new` as the push needs them and named
//! as organisers name them by hand.
//!
//! Promises:
//! * names: `Round N` for a round that fits in one lichess round, else
//!   `Round N I`, `Round N II`, `Round N III`... (Roman numerals, boards
//!   1-100 in I, 101-200 in II...), N the hub's round number; or after
//!   the organiser's `--lichess-round-name` ([`round_name`]). How many a
//!   round needs is its pairings' highest board (without pairings: the
//!   highest board number the hub knows) in hundreds, at most
//!   [`MAX_MADE`]; one made alone keeps its name when a later board needs
//!   a second (that one is `Round N II`): give the pairings to have them
//!   named at once;
//! * the rounds made are kept in the event's store with their round (so a
//!   hub started again with the same `--state-dir` pushes to them and
//!   makes none again; without one, a restart makes new ones); the next
//!   round of the event gets its own;
//! * nothing is pushed to a round that does not exist: a round that could
//!   not be made (no answer, an HTTP error, an answer without a round id)
//!   is tried again with the push's doubling wait, the error shown in the
//!   push's status and on each of its boards; without a round number the
//!   push waits (nothing to name the rounds after);
//! * the token goes in the `Authorization` header only, never in a log or
//!   a status.

use super::push::{send, Connector, PushTarget};
use super::*;

/// The most lichess rounds made for one round of the event (boards
/// 1-5,000): a board number beyond is a typing error, not a section.
pub const MAX_MADE: usize = 50;

/// A lichess round the hub made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct MadeRound {
    pub name: String,
    pub id: String,
}

/// Why the push has no lichess round (yet) for some boards.
pub(super) enum NotMade {
    /// Making one failed: tried again after the wait (the server's
    /// `Retry-After`, if it gave one).
    Failed(Option<Duration>, String),
    /// Nothing to make them for yet.
    Waiting(String),
}

/// Checks a broadcast's (tournament's) id: lichess's 8 letters and digits.
pub fn check_tournament(text: &str) -> Result<String, String> {
    let id = text.trim();
    if id.len() == 8 && id.chars().all(|c| c.is_ascii_alphanumeric()) {
        Ok(id.to_owned())
    } else {
        Err(format!(
            "--lichess-broadcast `{text}`: expected the broadcast's id, the 8 letters and \
             digits at the end of its URL (https://lichess.org/broadcast/NAME/ID)"
        ))
    }
}

/// The path that makes a round in broadcast `tournament`.
pub(super) fn new_round_tail(tournament: &str) -> String {
    format!("/broadcast/{tournament}/new")
}

/// `n` in Roman numerals (1 to 3,999; other numbers in digits).
pub fn roman(n: usize) -> String {
    if n == 0 || n >= 4000 {
        return n.to_string();
    }
    const DIGITS: [(usize, &str); 13] = [
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ];
    let mut rest = n;
    let mut text = String::new();
    for (value, digits) in DIGITS {
        while rest >= value {
            text.push_str(digits);
            rest -= value;
        }
    }
    text
}

/// The made rounds' names unless the organiser gives them
/// (`--lichess-round-name`).
pub const DEFAULT_NAMES: &str = "Round {round}";

/// The longest name given (lichess takes round names of up to 80
/// characters; a numeral such as ` XVIII` is added to it).
pub const MAX_NAMES: usize = 64;

/// Checks the organiser's names of the made rounds: `{round}` stands for
/// the round's number (`Open, round {round}`); without it the number
/// goes after the name (`Open` -> `Open 3`).
pub fn check_names(names: &str) -> Result<String, String> {
    let names = names.trim();
    if names.is_empty() || names.chars().count() > MAX_NAMES || names.chars().any(char::is_control)
    {
        return Err(format!(
            "--lichess-round-name `{names}`: expected a name of 1 to {MAX_NAMES} characters \
             on one line, `{{round}}` standing for the round's number (`Open, round {{round}}`)"
        ));
    }
    Ok(names.to_owned())
}

/// The name of the lichess round of hundred `index` (0: boards 1-100) of
/// round `round`, after the organiser's `names` ([`check_names`]; by
/// default `Round {round}`): `Round 3` when the round is not split, else
/// `Round 3 I`, `Round 3 II`...
pub fn round_name(names: &str, round: u32, index: usize, split: bool) -> String {
    let name = if names.contains("{round}") {
        names.replace("{round}", &round.to_string())
    } else {
        format!("{names} {round}")
    };
    if split || index > 0 {
        format!("{name} {}", roman(index + 1))
    } else {
        name
    }
}

/// `text` as an `application/x-www-form-urlencoded` value.
fn form_value(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                out.push(byte as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// The new round's id in lichess's answer (`{"round": {"id": ...}, ...}`).
pub fn answered_id(body: &str) -> Result<String, String> {
    let value: Value = serde_json::from_str(body)
        .map_err(|error| format!("an answer that is not JSON: {error}"))?;
    match value["round"]["id"].as_str() {
        Some(id)
            if !id.is_empty()
                && id.len() <= 64
                && id.chars().all(|c| c.is_ascii_alphanumeric()) =>
        {
            Ok(id.to_owned())
        }
        Some(id) => Err(format!("an answer with a round id that is not one: `{id}`")),
        None => Err("an answer without `round.id`".to_owned()),
    }
}

/// How many lichess rounds the round needs: its pairings' highest board,
/// or the highest board number among the push requests, in hundreds.
fn needed(hub: &impl RoundSource, requests: &[(RequestKey, String)]) -> usize {
    let paired = lock(&hub.desk().setup)
        .pairings
        .as_ref()
        .and_then(|p| p.games.iter().map(|g| g.board).max())
        .map_or(0, |board| {
            (board.saturating_sub(1) / MAX_GAMES as u32) as usize + 1
        });
    let known = requests
        .iter()
        .filter(|((hundred, _), _)| *hundred != u32::MAX)
        .map(|((hundred, _), _)| *hundred as usize + 1)
        .max()
        .unwrap_or(0);
    paired.max(known).min(MAX_MADE)
}

/// The lichess rounds made for the hub's current round, as the push loop
/// keeps them.
#[derive(Default)]
pub(super) struct Made {
    round: Option<u32>,
    rounds: Vec<MadeRound>,
}

impl Made {
    /// Their ids, in board order.
    pub(super) fn ids(&self) -> Vec<String> {
        self.rounds.iter().map(|r| r.id.clone()).collect()
    }

    fn show(&self, hub: &impl RoundSource, target: &PushTarget) {
        let mut status = hub.desk().push_status();
        status.urls = target.urls_of(&self.ids());
        status.made = self.rounds.clone();
    }

    /// Makes the lichess rounds the current round needs and has not got
    /// yet (kept in the store as each is made).
    pub(super) async fn ensure(
        &mut self,
        hub: &impl RoundSource,
        target: &PushTarget,
        connector: &Connector,
        tournament: &str,
        names: &str,
        requests: &[(RequestKey, String)],
    ) -> Result<(), NotMade> {
        let Some(round) = hub.desk().current_round() else {
            if self.round.take().is_some() || !self.rounds.is_empty() {
                self.rounds.clear();
                self.show(hub, target);
            }
            return Err(NotMade::Waiting(
                "no round number to name the lichess rounds after: give --round, or load a \
                 round on the desk"
                    .to_owned(),
            ));
        };
        if self.round != Some(round) {
            self.rounds = hub
                .desk()
                .made_rounds(tournament, round)
                .map_err(|error| NotMade::Failed(None, error))?;
            self.round = Some(round);
            self.show(hub, target);
        }
        let needed = needed(hub, requests);
        while self.rounds.len() < needed {
            let index = self.rounds.len();
            let name = round_name(names, round, index, needed > 1);
            hub.desk().push_status().last_attempt_wall_ms = Some(hub.now_ms());
            let answer = send(
                target,
                &new_round_tail(tournament),
                "application/x-www-form-urlencoded",
                connector,
                format!("name={}", form_value(&name)),
            )
            .await;
            let failed = |after: Option<Duration>, status: Option<u16>, why: String| {
                let mut push = hub.desk().push_status();
                push.requests_failed += 1;
                push.last_http_status = status;
                NotMade::Failed(
                    after,
                    format!("making the lichess round \"{name}\" in broadcast {tournament}: {why}"),
                )
            };
            let (id, status) = match answer {
                Ok(answer) if (200..300).contains(&answer.status) => (
                    answered_id(&answer.body)
                        .map_err(|why| failed(None, Some(answer.status), why))?,
                    answer.status,
                ),
                Ok(answer) => {
                    let excerpt: String = answer.body.chars().take(300).collect();
                    return Err(failed(
                        answer.retry_after,
                        Some(answer.status),
                        format!("HTTP {}: {}", answer.status, excerpt.trim()),
                    ));
                }
                Err(why) => return Err(failed(None, None, why)),
            };
            tracing::info!(%tournament, round, name = %name, id = %id,
                "hub: made a lichess round");
            let made = MadeRound { name, id };
            // Kept in memory even if the store fails: this hub never makes
            // it twice.
            self.rounds.push(made.clone());
            self.show(hub, target);
            {
                let mut push = hub.desk().push_status();
                push.requests_ok += 1;
                push.last_http_status = Some(status);
            }
            hub.desk()
                .keep_made_round(tournament, round, &made)
                .map_err(|error| NotMade::Failed(None, error))?;
        }
        Ok(())
    }
}

impl Desk {
    /// The lichess rounds made in broadcast `tournament` for round
    /// `round` of the event, in board order.
    pub fn made_rounds(&self, tournament: &str, round: u32) -> Result<Vec<MadeRound>, String> {
        let mut guard = lock(&self.store);
        let Some(store) = guard.as_mut() else {
            return Ok(Vec::new());
        };
        let text = store
            .made_rounds(tournament, round)
            .map_err(|error| error.to_string())?;
        match text {
            None => Ok(Vec::new()),
            Some(text) => serde_json::from_str(&text).map_err(|error| {
                format!("the lichess rounds of round {round} in the event store: {error}")
            }),
        }
    }

    /// Keeps `made` after the lichess rounds made for round `round`.
    pub fn keep_made_round(
        &self,
        tournament: &str,
        round: u32,
        made: &MadeRound,
    ) -> Result<(), String> {
        let mut rounds = self.made_rounds(tournament, round)?;
        rounds.push(made.clone());
        let text = serde_json::to_string(&rounds).map_err(|error| error.to_string())?;
        let mut guard = lock(&self.store);
        let Some(store) = guard.as_mut() else {
            return Err("the hub has no event store: the lichess round is not kept".to_owned());
        };
        store
            .set_made_rounds(tournament, round, &text)
            .map_err(|error| format!("keeping the lichess round \"{}\": {error}", made.name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roman_numerals_one_to_twelve_and_beyond() {
        let first: Vec<String> = (1..=12).map(roman).collect();
        assert_eq!(
            first,
            ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII"]
        );
        assert_eq!(roman(49), "XLIX");
        assert_eq!(roman(50), "L");
        assert_eq!(roman(1994), "MCMXCIV");
        assert_eq!(roman(0), "0");
    }

    #[test]
    fn names_of_a_split_round_and_of_one_that_fits() {
        assert_eq!(round_name(DEFAULT_NAMES, 3, 0, false), "Round 3");
        assert_eq!(round_name(DEFAULT_NAMES, 3, 0, true), "Round 3 I");
        assert_eq!(round_name(DEFAULT_NAMES, 3, 1, true), "Round 3 II");
        // One made alone keeps its name; the next is II all the same.
        assert_eq!(round_name(DEFAULT_NAMES, 3, 1, false), "Round 3 II");
        let names: Vec<String> = (0..12)
            .map(|i| round_name(DEFAULT_NAMES, 7, i, true))
            .collect();
        assert_eq!(names[11], "Round 7 XII");
        assert_eq!(names[3], "Round 7 IV");
        // The organiser's: a section's name, the number where it says.
        let open = check_names(" Open, round {round} ").unwrap();
        assert_eq!(round_name(&open, 3, 1, true), "Open, round 3 II");
        assert_eq!(round_name("Open", 3, 0, true), "Open 3 I");
        assert_eq!(round_name("Open", 3, 0, false), "Open 3");
    }

    #[test]
    fn names_too_long_empty_or_on_two_lines_are_refused() {
        for bad in ["", "  ", "a\nb", "tab\there", &"x".repeat(MAX_NAMES + 1)] {
            let error = check_names(bad).unwrap_err();
            assert!(error.contains("--lichess-round-name"), "{error}");
        }
        assert_eq!(
            check_names(&"é".repeat(MAX_NAMES)).unwrap().chars().count(),
            MAX_NAMES
        );
    }

    #[test]
    fn bad_tournament_ids_are_refused() {
        assert_eq!(check_tournament("ABcd1234").unwrap(), "ABcd1234");
        assert_eq!(check_tournament(" ABcd1234\n").unwrap(), "ABcd1234");
        for bad in [
            "",
            "short",
            "toolong123",
            "abc/1234",
            "abc 1234",
            "abcd123é",
            "https://lichess.org/broadcast/x/ABcd1234",
            "../new12",
        ] {
            let error = check_tournament(bad).unwrap_err();
            assert!(error.contains("--lichess-broadcast"), "{bad}: {error}");
        }
    }

    #[test]
    fn the_answer_gives_the_round_id() {
        let answer = r#"{"round":{"id":"Xy12ab34","name":"Round 3 I","slug":"round-3-i"},
                         "tour":{"id":"ABcd1234"},"study":{"features":{}}}"#;
        assert_eq!(answered_id(answer).unwrap(), "Xy12ab34");
        assert!(answered_id("not json").is_err());
        assert!(answered_id(r#"{"tour":{"id":"ABcd1234"}}"#).is_err());
        assert!(answered_id(r#"{"round":{"id":"../../x"}}"#).is_err());
        assert!(answered_id(r#"{"round":{"id":""}}"#).is_err());
    }

    #[test]
    fn names_go_form_encoded() {
        assert_eq!(form_value("Round 3 II"), "Round+3+II");
        assert_eq!(
            form_value("Open, round 3 — I"),
            "Open%2C+round+3+%E2%80%94+I"
        );
    }

    #[test]
    fn made_rounds_are_kept_by_broadcast_and_round() {
        let desk = Desk::default();
        let made = |name: &str, id: &str| MadeRound {
            name: name.to_owned(),
            id: id.to_owned(),
        };
        assert_eq!(desk.made_rounds("ABcd1234", 3).unwrap(), Vec::new());
        desk.keep_made_round("ABcd1234", 3, &made("Round 3 I", "aaaa1111"))
            .unwrap();
        desk.keep_made_round("ABcd1234", 3, &made("Round 3 II", "bbbb2222"))
            .unwrap();
        assert_eq!(
            desk.made_rounds("ABcd1234", 3).unwrap(),
            vec![
                made("Round 3 I", "aaaa1111"),
                made("Round 3 II", "bbbb2222")
            ]
        );
        assert_eq!(desk.made_rounds("ABcd1234", 4).unwrap(), Vec::new());
        assert_eq!(desk.made_rounds("Other123", 3).unwrap(), Vec::new());
    }
}
