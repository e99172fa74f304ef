//! Sending a round's pairings to the boards: what each board would get
//! ([`plan_pairings`], the review's dry run) and the sending itself, from
//! `chessclock-hall pairings` over its own broker connection
//! ([`send_pairings`]) or from the hub's desk.
//!
//! Promises: a board whose game of this round (its `Round` tag is the
//! pairing's `R.B`) has started or is over is never touched: no
//! `new-game`, no `set-tags`; what a sending would change is said first
//! ([`Plan`]); a pairing board without a hall board is reported, never
//! guessed.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Value};

use super::{over, split_pgn};
use crate::pairings::{self, Pairings};

/// How `chessclock-hall pairings` sends a round's pairings.
pub struct Sending {
    pub hall: String,
    /// Recorded in each board's history as the caller.
    pub arbiter: String,
    /// The control for every board (a CSV's `control` column wins).
    pub control: Option<String>,
    /// The quiet after the retained states that ends waiting for them.
    pub settle: Duration,
    /// The longest wait for the broker and for the replies.
    pub wait: Duration,
    /// Only say what would be sent.
    pub dry_run: bool,
}

/// What became of one pairing board.
#[derive(Debug)]
pub struct Sent {
    pub board: u32,
    pub id: Option<String>,
    /// Whether commands went (or would go) to the board; `false`: the
    /// board is left as it is (its game of the round started, or nothing
    /// changes).
    pub sends: bool,
    pub outcome: Result<String, String>,
}

/// Sends the round's pairings to the hall's boards (`new-game` where a
/// control is given and no game runs, then `set-tags`) and waits for every
/// reply. One [`Sent`] per pairing board, in board order.
pub async fn send_pairings(
    options: rumqttc::v5::MqttOptions,
    sending: &Sending,
    pairings: &Pairings,
    map: &BTreeMap<u32, String>,
) -> anyhow::Result<Vec<Sent>> {
    use rumqttc::v5::mqttbytes::v5::Packet as Incoming;
    use rumqttc::v5::mqttbytes::QoS;
    use rumqttc::v5::{AsyncClient, Event};
    let (client, mut eventloop) = AsyncClient::new(options, 256);
    let prefix = format!("chessclock/{}/board/", sending.hall);
    let board_of = |topic: &str, leaf: &str| -> Option<String> {
        topic
            .strip_prefix(prefix.as_str())?
            .strip_suffix(leaf)
            .map(str::to_owned)
    };
    let mut states: BTreeMap<String, Value> = BTreeMap::new();
    let mut replies: BTreeMap<String, Value> = BTreeMap::new();
    let mut subacks = 0;
    let deadline = tokio::time::Instant::now() + sending.wait;
    // The retained states, until the broker has been quiet for `settle`
    // after the subscriptions.
    loop {
        let next = if subacks >= 2 {
            tokio::time::timeout(sending.settle, eventloop.poll()).await
        } else {
            tokio::time::timeout_at(deadline, eventloop.poll()).await
        };
        match next {
            Err(_) if subacks >= 2 => break,
            Err(_) => anyhow::bail!("the broker did not answer within {:?}", sending.wait),
            Ok(Err(error)) => anyhow::bail!("the broker: {error}"),
            Ok(Ok(Event::Incoming(Incoming::ConnAck(_)))) => {
                client
                    .subscribe(format!("{prefix}+/state"), QoS::AtLeastOnce)
                    .await?;
                client
                    .subscribe(format!("{prefix}+/reply"), QoS::AtLeastOnce)
                    .await?;
            }
            Ok(Ok(Event::Incoming(Incoming::SubAck(_)))) => subacks += 1,
            Ok(Ok(Event::Incoming(Incoming::Publish(publish)))) => {
                if let Some(board) = board_of(&String::from_utf8_lossy(&publish.topic), "/state") {
                    if let Ok(value) = serde_json::from_slice(&publish.payload) {
                        states.insert(board, value);
                    }
                }
            }
            Ok(Ok(_)) => {}
        }
    }
    let plans = plan_pairings(&states, pairings, map, sending.control.as_deref());
    let mut sent = Vec::new();
    let mut pending: BTreeMap<String, usize> = BTreeMap::new();
    for (index, plan) in plans.into_iter().enumerate() {
        sent.push(Sent {
            board: plan.board,
            id: plan.id.clone(),
            sends: !plan.commands.is_empty(),
            outcome: match &plan.problem {
                // A board left out (a kept game's warning is a note).
                Some(problem) if plan.id.is_none() || !plan.kept => Err(problem.clone()),
                _ => Ok(plan.text()),
            },
        });
        let Some(id) = plan.id.as_ref().filter(|_| !sending.dry_run) else {
            continue;
        };
        for (k, mut command) in plan.commands.into_iter().enumerate() {
            let request = format!("pairings-{}-{}-{k}", std::process::id(), plan.board);
            command["id"] = json!(request);
            command["arbiter"] = json!(sending.arbiter);
            client
                .publish(
                    format!("{prefix}{id}/command"),
                    QoS::AtLeastOnce,
                    false,
                    command.to_string(),
                )
                .await?;
            pending.insert(request, index);
        }
    }
    // The replies.
    let deadline = tokio::time::Instant::now() + sending.wait;
    while pending.keys().any(|id| !replies.contains_key(id)) {
        match tokio::time::timeout_at(deadline, eventloop.poll()).await {
            Err(_) => break,
            Ok(Err(error)) => anyhow::bail!("the broker: {error}"),
            Ok(Ok(Event::Incoming(Incoming::Publish(publish)))) => {
                if board_of(&String::from_utf8_lossy(&publish.topic), "/reply").is_some() {
                    if let Ok(value) = serde_json::from_slice::<Value>(&publish.payload) {
                        if let Some(id) = value["id"].as_str() {
                            replies.insert(id.to_owned(), value.clone());
                        }
                    }
                }
            }
            Ok(Ok(_)) => {}
        }
    }
    for (request, index) in &pending {
        let problem = match replies.get(request) {
            None => Some(format!("no reply within {:?}", sending.wait)),
            Some(reply) if reply["ok"] == true => None,
            Some(reply) => Some(format!(
                "{}: {}",
                reply["error"]["kind"].as_str().unwrap_or("error"),
                reply["error"]["message"].as_str().unwrap_or("")
            )),
        };
        if let (Some(problem), Ok(_)) = (problem, &sent[*index].outcome) {
            sent[*index].outcome = Err(problem);
        }
    }
    let _ = client.disconnect().await;
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        while eventloop.poll().await.is_ok() {}
    })
    .await;
    Ok(sent)
}

/// What sending the pairings does to one pairing board.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Plan {
    pub board: u32,
    /// The hall board (none: no hall board for it).
    pub id: Option<String>,
    pub white: String,
    pub black: String,
    /// The commands a sending publishes (none: the board is left as it
    /// is), without their `id` and `arbiter`.
    pub commands: Vec<Value>,
    /// What they do, or why nothing is done.
    pub notes: Vec<String>,
    /// The board's game of this round has started or is over: kept.
    pub kept: bool,
    /// What the arbiter must look at: no hall board, or a kept game whose
    /// players are not the pairing's.
    pub problem: Option<String>,
}

impl Plan {
    /// The notes as one line (with the problem, if any).
    pub fn text(&self) -> String {
        let mut text = self.notes.join("; ");
        if let Some(problem) = &self.problem {
            if !text.is_empty() {
                text.push_str("; ");
            }
            text.push_str("WARNING: ");
            text.push_str(problem);
        }
        text
    }
}

/// What sending `pairings` to boards whose latest states are `states`
/// would do, board by board in pairing order (the review's dry run):
/// * a board whose game of this round (its `Round` tag is the pairing's
///   `R.B`) has started or is over is kept: nothing is sent to it (a
///   problem is told when its players are not the pairing's);
/// * a board already named for the pairing, not started, with the
///   round's control, gets nothing (nothing would change);
/// * a board whose game runs (another round's, or an unnamed one) gets
///   the tags only, its control left as it is;
/// * any other board gets `new-game` with the control (the pairing's, or
///   `control`; for a board whose last game is over, else that game's
///   control), when one is known, then `set-tags`.
pub fn plan_pairings(
    states: &BTreeMap<String, Value>,
    pairings: &Pairings,
    map: &BTreeMap<u32, String>,
    control: Option<&str>,
) -> Vec<Plan> {
    let assigned = pairings::assign(
        pairings.games.iter().map(|g| g.board),
        states.keys().map(String::as_str),
        map,
    );
    let mut plans = Vec::new();
    for pairing in &pairings.games {
        let mut plan = Plan {
            board: pairing.board,
            id: None,
            white: pairing.white.name.clone(),
            black: pairing.black.name.clone(),
            commands: Vec::new(),
            notes: Vec::new(),
            kept: false,
            problem: None,
        };
        let Some(id) = assigned.get(&pairing.board) else {
            let near: Vec<&String> = states
                .keys()
                .filter(|id| pairings::id_number(id) == Some(pairing.board))
                .collect();
            plan.problem = Some(if near.is_empty() {
                "no hall board for it (no board id ends in its number; give --boards)".to_owned()
            } else {
                format!("several hall boards could be it ({near:?}); give --boards")
            });
            plans.push(plan);
            continue;
        };
        plan.id = Some(id.clone());
        let payload = states.get(id).unwrap_or(&Value::Null);
        let tags = pairing.tags(pairings.round);
        let (live, _) = split_pgn(payload["pgn"].as_str().unwrap_or(""));
        let live_tag = |name: &str| -> Option<&str> {
            live.iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        let this_round = live_tag("Round") == tags.get("Round").map(String::as_str);
        let started = payload["snapshot"]["started"] == true;
        let finished = over(payload);
        let control = pairing.control.as_deref().or(control);
        let live_control = payload["snapshot"]["control"].as_str();
        if this_round && (started || finished) {
            plan.kept = true;
            let result = payload["state"]["result"]["result"].as_str();
            plan.notes.push(match (finished, result) {
                (true, Some(result)) => format!(
                    "its game of round {} is over ({result}): left as it is",
                    tags["Round"]
                ),
                (true, None) => format!(
                    "its game of round {} is over (a flag fell): left as it is",
                    tags["Round"]
                ),
                _ => format!(
                    "its game of round {} has started: left as it is",
                    tags["Round"]
                ),
            });
            let players = (live_tag("White"), live_tag("Black"));
            if players != (Some(&pairing.white.name[..]), Some(&pairing.black.name[..])) {
                plan.problem = Some(format!(
                    "the game on it is {} - {}, the pairing {} - {}: correct it by hand",
                    players.0.unwrap_or("?"),
                    players.1.unwrap_or("?"),
                    pairing.white.name,
                    pairing.black.name
                ));
            }
            plans.push(plan);
            continue;
        }
        let named = tags
            .iter()
            .all(|(name, value)| live_tag(name) == Some(value.as_str()));
        let same_control = control.is_none_or(|c| live_control == Some(c));
        if named && same_control && !started {
            plan.notes.push(format!(
                "unchanged: Round {}, {} - {}",
                tags["Round"], pairing.white.name, pairing.black.name
            ));
            plans.push(plan);
            continue;
        }
        let plays = started && !finished;
        // Another round's finished game makes way for the new one: with
        // the round's control, else the one it was played with. Never
        // renamed in place (its result would count for this round).
        let control = control.or(live_control.filter(|_| finished));
        if finished && control.is_none() {
            plan.problem = Some(
                "its last game is over and no control is known for the new one: give a control"
                    .to_owned(),
            );
            plans.push(plan);
            continue;
        }
        if let Some(control) = control {
            if plays {
                plan.notes.push(format!(
                    "a game is running: its control ({}) is left as it is",
                    live_control.unwrap_or("?")
                ));
            } else {
                plan.commands
                    .push(json!({"command": "new-game", "control": control}));
                plan.notes.push(format!("new game {control}"));
            }
        }
        plan.notes.push(format!(
            "Round {}, {} - {}",
            tags["Round"], pairing.white.name, pairing.black.name
        ));
        plan.commands
            .push(json!({"command": "set-tags", "tags": tags}));
        plans.push(plan);
    }
    plans
}
