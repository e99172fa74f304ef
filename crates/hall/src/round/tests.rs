//! Tests of the round: the running clock extrapolated, wall times, the clock
//! tags, pairings, results for the exports, and the push (its batches, its
//! target check, the games it refuses).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use super::push::{game_statuses, refused_games};
use super::*;

fn state(running: &str, white: i64, at: i64, pgn: Option<&str>) -> Value {
    json!({
        "snapshot": {"started": true, "paused": false, "running": running,
                     "white_remaining_ms": white, "black_remaining_ms": 60_000, "flags": []},
        "snapshot_wall_ms": at,
        "state": {"result": null},
        "pgn": pgn,
    })
}

fn games(boards: &BTreeMap<String, Value>, setup: &Setup) -> String {
    join(&round_games_of(setup, boards, None))
}

#[test]
fn the_running_clock_is_extrapolated() {
    let payload = state("white", 10_000, 1_000, None);
    assert_eq!(remaining_at(&payload, "white", 4_500), Some(6_500));
    assert_eq!(remaining_at(&payload, "black", 4_500), Some(60_000));
    assert_eq!(remaining_at(&payload, "white", 99_000), Some(0));
    assert_eq!(clock_text(6_500), "0:00:07");
    assert_eq!(clock_text(3_600_000), "1:00:00");
}

#[test]
fn wall_times_in_iso_and_http_form() {
    // 2026-11-30T13:02:03.456Z is 1_796_043_723_456 ms.
    assert_eq!(iso_time(1_796_043_723_456), "2026-11-30T13:02:03.456Z");
    assert_eq!(iso_time(0), "1970-01-01T00:00:00.000Z");
    assert_eq!(http_date(784_111_777_000), "Sun, 06 Nov 1994 08:49:37 GMT");
    assert_eq!(civil(-1), (1969, 12, 31));
    assert_eq!(civil(11_016), (2000, 2, 29));
}

#[test]
fn the_clock_tags_are_the_snapshots() {
    let mut boards = BTreeMap::new();
    boards.insert("b2".to_owned(), state("white", 10_000, 0, None));
    boards.insert(
        "b1".to_owned(),
        state(
            "black",
            10_000,
            1_796_043_723_456,
            Some("[Event \"Open\"]\n[Round \"?\"]\n[White \"A \\\"B\\\"\"]\n[Result \"*\"]\n[WhiteClock \"9:99:99\"]\n\n1. e4 {[%clk 0:00:10]} *\n"),
        ),
    );
    let setup = Setup {
        round: Some(3),
        ..Setup::default()
    };
    let text = games(&boards, &setup);
    // Board order by the number the id ends in: b1 first.
    let first = text.find("[Board \"b1\"]").unwrap();
    assert!(first < text.find("[Board \"b2\"]").unwrap(), "{text}");
    assert!(text.contains("[Event \"Open\"]\n[Round \"3.1\"]\n[White \"A \\\"B\\\"\"]\n[Result \"*\"]\n[WhiteClock \"0:00:10\"]\n[Board \"b1\"]\n[BlackClock \"0:01:00\"]\n[ReferenceTime \"B/2026-11-30T13:02:03.456Z\"]\n[ClockStatus \"running\"]\n\n1. e4 {[%clk 0:00:10]} *\n"), "{text}");
    assert!(text.contains("[Round \"3.2\"]"), "{text}");
    assert!(
        text.contains("[ReferenceTime \"W/1970-01-01T00:00:00.000Z\"]"),
        "{text}"
    );
    assert_eq!(text.matches("[Result ").count(), 2, "{text}");

    // A result: the clocks stop, the movetext ends with it.
    let mut ended = state("black", 10_000, 5_000, Some("[Result \"*\"]\n\n1. e4 *\n"));
    ended["state"]["result"] = json!({"result": "0-1", "termination": "normal"});
    boards.insert("b1".to_owned(), ended);
    let text = games(&boards, &setup);
    assert!(text.contains("[Result \"0-1\"]"), "{text}");
    assert!(
        text.contains("[ReferenceTime \"1970-01-01T00:00:05.000Z\"]"),
        "{text}"
    );
    assert!(text.contains("[ClockStatus \"stopped\"]"), "{text}");
    assert!(text.contains("\n1. e4 0-1\n"), "{text}");
}

#[test]
fn pairings_name_boards_and_number_rounds() {
    let pairings = Pairings::parse("1,Ann,Bob\n2,Cid,Dee\n", 4).unwrap();
    let mut boards = BTreeMap::new();
    boards.insert("t2".to_owned(), state("white", 1_000, 0, None));
    boards.insert(
        "t1".to_owned(),
        state("white", 1_000, 0, Some("[White \"Zed\"]\n\n*\n")),
    );
    boards.insert("spare".to_owned(), state("white", 1_000, 0, None));
    let setup = Setup {
        round: Some(4),
        pairings: Some(pairings),
        map: BTreeMap::new(),
        ..Setup::default()
    };
    let text = games(&boards, &setup);
    // The board's own name wins; a board without one gets the pairing's.
    assert!(text.contains("[White \"Zed\"]"), "{text}");
    assert!(text.contains("[White \"Cid\"]\n[Black \"Dee\"]"), "{text}");
    assert!(text.contains("[Round \"4.1\"]") && text.contains("[Round \"4.2\"]"));
    // The spare board, off the pairings, comes last, without a number.
    assert!(text.rfind("[Board \"spare\"]").unwrap() > text.find("[Board \"t2\"]").unwrap());
    assert_eq!(text.matches("[Round \"?\"]").count(), 1, "{text}");
}

#[test]
fn results_by_the_board_map_and_numbers_needed_for_the_exports() {
    let mut boards = BTreeMap::new();
    let mut top = state("white", 1_000, 0, None);
    top["state"]["result"] = json!({"result": "1/2-1/2", "termination": "agreement"});
    boards.insert("top".to_owned(), top);
    boards.insert("b1".to_owned(), state("white", 1_000, 0, None));
    let setup = Setup {
        round: Some(1),
        pairings: Some(Pairings::parse("1,Ann,Bob\n2,Cid,Dee\n", 1).unwrap()),
        map: [(2, "top".to_owned())].into_iter().collect(),
        ..Setup::default()
    };
    let seats = seats(&setup, &boards);
    assert_eq!(
        seats.iter().map(|s| (s.id, s.number)).collect::<Vec<_>>(),
        vec![("b1", Some(1)), ("top", Some(2))]
    );
    let rows = rows(&setup, &boards).unwrap();
    assert_eq!(rows[0].result, None);
    assert_eq!(rows[1].id.as_deref(), Some("top"));
    assert_eq!(rows[1].result.as_deref(), Some("1/2-1/2"));
    assert_eq!(rows[1].termination.as_deref(), Some("agreement"));
    // A CSV without player numbers cannot give Vega's numbers.
    assert!(decided(&rows).unwrap_err().contains("white_id"));
    let numbered = Setup {
        pairings: Some(
            Pairings::parse(
                "board,white,black,white_id,black_id\n1,Ann,Bob,1,2\n2,Cid,Dee,3,4\n",
                1,
            )
            .unwrap(),
        ),
        ..setup
    };
    let numbered_rows = super::rows(&numbered, &boards).unwrap();
    assert_eq!(
        results::vega_res(1, &decided(&numbered_rows).unwrap()),
        "1 1\n3 4 5\n"
    );
    assert!(super::rows(&Setup::default(), &boards).is_none());
}

/// Boards `ids` with a state each (no pairings: the number an id ends in).
fn known(ids: impl IntoIterator<Item = String>) -> BTreeMap<String, Value> {
    ids.into_iter()
        .map(|id| (id, state("white", 60_000, 1_000, None)))
        .collect()
}

/// The boards of each request, by their `Board` tags.
fn request_boards(requests: &[(RequestKey, String)]) -> Vec<Vec<String>> {
    requests
        .iter()
        .map(|(_, body)| {
            body.lines()
                .filter_map(|l| l.strip_prefix("[Board \"")?.strip_suffix("\"]"))
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

#[test]
fn push_requests_carry_at_most_100_games() {
    let setup = Setup::default();
    let boards = known((1..=201).map(|n| format!("b{n}")));
    let requests = request_boards(&requests_of(&setup, &boards, None));
    let sizes: Vec<usize> = requests.iter().map(Vec::len).collect();
    assert_eq!(sizes, [100, 100, 1]);
    assert_eq!(requests[0].first().map(String::as_str), Some("b1"));
    assert_eq!(requests[0].last().map(String::as_str), Some("b100"));
    assert_eq!(requests[2], ["b201"]);
    assert!(requests_of(&setup, &BTreeMap::new(), None).is_empty());
}

/// The hub learns a round's boards one state at a time (the hall publishes
/// them in the order of their ids: b1, b10, b100, b101, b11, ...): a board
/// still on its way does not push board 101 into the first request.
#[test]
fn a_board_goes_in_its_hundreds_request_whichever_boards_are_known() {
    let setup = Setup::default();
    let boards = known((1..=101).filter(|&n| n != 99).map(|n| format!("b{n}")));
    let requests = requests_of(&setup, &boards, None);
    let keys: Vec<RequestKey> = requests.iter().map(|(key, _)| *key).collect();
    assert_eq!(keys, [(0, 0), (1, 0)]);
    let boards_of = request_boards(&requests);
    assert_eq!(boards_of[0].len(), 99);
    assert!(!boards_of[0].contains(&"b101".to_owned()));
    assert_eq!(boards_of[1], ["b101"]);
    // Boards without a number go last; a hundred with more than 100 games
    // (two boards with one number) goes out in parts.
    let mut boards = known((1..=100).map(|n| format!("b{n}")));
    boards.extend(known(["a7".to_owned(), "hall".to_owned()]));
    let requests = requests_of(&setup, &boards, None);
    let keys: Vec<RequestKey> = requests.iter().map(|(key, _)| *key).collect();
    assert_eq!(keys, [(0, 0), (0, 1), (u32::MAX, 0)]);
    let sizes: Vec<usize> = request_boards(&requests).iter().map(Vec::len).collect();
    assert_eq!(sizes, [100, 1, 1]);
}

#[test]
fn a_push_target_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "lip_abc\n").unwrap();
    let second = Duration::from_secs(1);
    let target = PushTarget::new("https://lichess.org/", "AbC123", &token, second).unwrap();
    assert_eq!(
        target.urls(),
        ["https://lichess.org/api/broadcast/round/AbC123/push"]
    );
    assert!(!format!("{target:?}").contains("lip_abc"));
    // A section of several lichess rounds: boards 1-100 to the first.
    let split = PushTarget::new("https://lichess.org", "One1, Two2", &token, second).unwrap();
    assert_eq!(split.urls().len(), 2);
    assert!(split.urls()[1].ends_with("/round/Two2/push"));
    assert!(PushTarget::new("ftp://x", "a", &token, second).is_err());
    assert!(PushTarget::new("https://lichess.org", "a/b", &token, second).is_err());
    assert!(PushTarget::new("https://lichess.org", "a,", &token, second).is_err());
    std::fs::write(&token, "\n").unwrap();
    assert!(PushTarget::new("https://lichess.org", "a", &token, second).is_err());
    let none = dir.path().join("none");
    assert!(PushTarget::new("https://lichess.org", "a", &none, second).is_err());
    // The rounds the hub makes in a broadcast: its id checked, no round yet.
    std::fs::write(&token, "lip_abc\n").unwrap();
    let made = PushTarget::made_in(
        "https://lichess.org",
        "ABcd1234",
        DEFAULT_NAMES,
        &token,
        second,
    )
    .unwrap();
    assert!(made.urls().is_empty());
    assert_eq!(
        made.urls_of(&["Xy12ab34".to_owned()]),
        ["https://lichess.org/api/broadcast/round/Xy12ab34/push"]
    );
    assert!(!format!("{made:?}").contains("lip_abc"));
    assert!(format!("{made:?}").contains("/broadcast/ABcd1234/new"));
    for bad in ["", "ABcd123", "ABcd1234,X", "AB/d1234"] {
        let error = PushTarget::made_in("https://lichess.org", bad, DEFAULT_NAMES, &token, second)
            .unwrap_err();
        assert!(
            error.to_string().contains("--lichess-broadcast"),
            "{bad}: {error}"
        );
    }
}

#[test]
fn what_lichess_said_is_kept_per_game() {
    let body = "[Event \"?\"]\n[Round \"1.1\"]\n[Board \"b1\"]\n\n*\n\n\
                [Event \"?\"]\n[Round \"1.2\"]\n[Board \"b2\"]\n\n*\n";
    let answer = r#"{"games":[{"tags":{},"moves":3},{"tags":{},"error":"Illegal move"}]}"#;
    let said = game_statuses(body, answer, "r1", 7);
    assert_eq!(said.len(), 2);
    assert_eq!(said[0].0, "b1");
    assert!(said[0].1.accepted);
    assert_eq!(said[0].1.moves, Some(3));
    assert_eq!(said[1].1.error.as_deref(), Some("Illegal move"));
    assert!(!said[1].1.accepted);
    assert_eq!(said[1].1.number.as_deref(), Some("1.2"));
    assert_eq!(said[1].1.pushed_wall_ms, 7);
}

#[test]
fn refused_games_are_named() {
    let body = r#"{"games":[{"tags":{"White":"A","Black":"B"},"moves":3},
                            {"tags":{"White":"C","Black":"D"},"error":"Illegal move"}]}"#;
    assert_eq!(refused_games(body), vec!["C - D: Illegal move".to_owned()]);
    assert!(refused_games("not json").is_empty());
}

/// The desk's tag reader finds what the whole split finds, without
/// copying the game.
#[test]
fn a_tag_is_read_as_the_whole_split_reads_it() {
    let games = [
        "[Event \"x\"]\n[Round \"3.12\"]\n\n1. e4 *\n",
        "\n[Round \"?\"]\n1. e4 *",
        "[Event \"a \\\"b\\\" \\\\ c\"]\n[Round \"1\"]",
        "1. e4 [Round \"9\"] *",
        "[Event]\n[Round \"2\"]\n",
        "[Event x]\n[Round \"2\"]\n",
        "",
        "[Round \"4\"]\n1. e4\n[Round \"5\"]\n",
    ];
    for game in games {
        let (tags, _) = split_pgn(game);
        for name in ["Round", "Event", "White"] {
            let whole = tags.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
            assert_eq!(
                pgn_tag(game, name).map(|v| v.into_owned()),
                whole,
                "{name} of {game:?}"
            );
        }
    }
}
