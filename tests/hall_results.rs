//! Results out, end to end (issue 30 item 4): a real mosquitto (the
//! test's own), the real daemon with three boards, the hub with a state
//! directory; round 2 of a TRF with two byes is loaded and sent from the
//! desk (`chessclock-hall round`), played and ended by an arbiter over the
//! broker. The hub's TRF26 and TRF16 exports are read back by a reader
//! written here from the format's description (FIDE C.02.03 annex A),
//! sharing no code with the hub's writer, and checked against every
//! board's own record (its state's result and its game's tags, from
//! `/boards.json`); the CSV, the round's bulletin and the event's PGN
//! too. Then a board's record changes after the round is closed: the
//! disagreement is flagged in `/results.json`, the TRF exports refuse
//! until a correction on the desk settles it, and the corrected export is
//! read back again. Serialised; every wait has a deadline and waits for a
//! condition.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use kit::daemon::{Client, Daemon, PrivateBus};
use kit::hall::round::{games, tag, Arbiter, HALL};
use kit::hall::{Broker, Hub, WAIT};

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/hall")
        .join(name)
}

/// Runs `chessclock-hall ARGS` with `stdin`: exit success, stdout, stderr.
async fn hall(args: Vec<String>, stdin: &str) -> (bool, String, String) {
    let stdin = stdin.to_owned();
    tokio::task::spawn_blocking(move || {
        use std::io::Write;
        let mut child = Command::new(crate::kit::binary("chessclock-hall"))
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        let output = child.wait_with_output().unwrap();
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    })
    .await
    .unwrap()
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| (*a).to_owned()).collect()
}

/// A daemon with boards b1-b3 on the test's broker.
async fn daemon(dir: &Path, broker: &Broker) -> (PrivateBus, Daemon, Client) {
    let bus = PrivateBus::session_in(dir);
    let config = dir.join("chessclockd.toml");
    let mut text = kit::daemon::daemon_table(&dir.join("state"));
    for board in ["b1", "b2", "b3"] {
        text.push_str(&format!(
            "\n[[board]]\nid = \"{board}\"\ncontrol = \"300\"\n"
        ));
    }
    text.push_str(&format!(
        "\n[hall]\nbroker = \"mqtt://127.0.0.1:{}\"\nname = \"{HALL}\"\nhost = \"pi1\"\n",
        broker.port
    ));
    std::fs::write(&config, text).unwrap();
    let daemon = Daemon::spawn(&config, &bus, dir.join("daemon.log"));
    let client = Client::connect_when(&bus, &daemon, WAIT, |_| true).await;
    (bus, daemon, client)
}

/// The independent reader: a TRF (16 or 26) as the format describes it.
mod trf {
    use std::collections::BTreeMap;

    /// One round of a player's line.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Round {
        /// The opponent's starting rank, 0 for none (`0000` or blank).
        pub opponent: u32,
        /// `w`, `b` or `-`.
        pub colour: char,
        /// The result code, upper case; `Z` for a blank.
        pub result: char,
    }

    #[derive(Debug)]
    pub struct Player {
        pub name: String,
        /// Tenths of a point, as written in columns 81-84.
        pub points: u32,
        pub rounds: Vec<Round>,
    }

    #[derive(Debug, Default)]
    pub struct File {
        pub players: BTreeMap<u32, Player>,
        /// Other records, by their code (columns 1-3): the rest of the line
        /// from column 5.
        pub records: Vec<(String, String)>,
    }

    /// Columns `from`-`to` (1-based, inclusive) of a line, trimmed.
    fn columns(line: &[char], from: usize, to: usize) -> String {
        line.iter()
            .skip(from - 1)
            .take(to + 1 - from)
            .collect::<String>()
            .trim()
            .to_owned()
    }

    /// Tenths of a point a result code is worth (the default scoring:
    /// win, forfeit win, full-point and pairing-allocated byes 1; draws
    /// and half-point byes 1/2).
    pub fn tenths(code: char) -> u32 {
        match code {
            '1' | '+' | 'W' | 'F' | 'U' => 10,
            '=' | 'D' | 'H' => 5,
            _ => 0,
        }
    }

    pub fn read(text: &str) -> File {
        let mut file = File::default();
        for line in text.lines() {
            let chars: Vec<char> = line.chars().collect();
            let code = columns(&chars, 1, 3);
            if code != "001" {
                file.records
                    .push((code, columns(&chars, 5, chars.len().max(5))));
                continue;
            }
            let rank: u32 = columns(&chars, 5, 8).parse().expect("a starting rank");
            let points = columns(&chars, 81, 84);
            let (whole, half) = points.split_once('.').expect("points as 11.5");
            let points = whole.parse::<u32>().unwrap() * 10 + half.parse::<u32>().unwrap();
            let mut rounds = Vec::new();
            let mut start = 92;
            while start <= chars.len() {
                let opponent = columns(&chars, start, start + 3);
                let colour = chars.get(start + 4).copied().unwrap_or(' ');
                let result = chars.get(start + 6).copied().unwrap_or(' ');
                rounds.push(Round {
                    opponent: if opponent.is_empty() {
                        0
                    } else {
                        opponent.parse().expect("an opponent's rank")
                    },
                    colour: if colour == ' ' { '-' } else { colour },
                    result: if result == ' ' {
                        'Z'
                    } else {
                        result.to_ascii_uppercase()
                    },
                });
                start += 10;
            }
            let player = Player {
                name: columns(&chars, 15, 47),
                points,
                rounds,
            };
            assert!(
                file.players.insert(rank, player).is_none(),
                "rank {rank} twice"
            );
        }
        file
    }
}

/// Checks a TRF export against the boards' own records: every player's
/// points are the sum of its line's results; each board's game of round 2
/// (its `Round` tag `2.N`, its players' names) is in both players' lines
/// with the board's result; the byes are carried.
fn check_against_boards(text: &str, boards: &Value) -> trf::File {
    let file = trf::read(text);
    assert_eq!(file.players.len(), 8, "{text}");
    for (rank, player) in &file.players {
        let sum: u32 = player.rounds.iter().map(|r| trf::tenths(r.result)).sum();
        assert_eq!(player.points, sum, "player {rank}'s points\n{text}");
    }
    let rank_of: BTreeMap<&str, u32> = file
        .players
        .iter()
        .map(|(rank, p)| (p.name.as_str(), *rank))
        .collect();
    let mut played = 0;
    for (id, board) in boards["boards"].as_object().unwrap() {
        let pgn = board["pgn"].as_str().unwrap();
        let round = tag(pgn, "Round").unwrap();
        assert!(round.starts_with("2."), "{id}: {pgn}");
        let white = rank_of[tag(pgn, "White").unwrap()];
        let black = rank_of[tag(pgn, "Black").unwrap()];
        let result = board["state"]["result"]["result"].as_str().unwrap();
        let (w, b) = match result {
            "1-0" => ('1', '0'),
            "0-1" => ('0', '1'),
            "1/2-1/2" => ('=', '='),
            other => panic!("{id}: result {other}"),
        };
        assert_eq!(
            file.players[&white].rounds[1],
            trf::Round {
                opponent: black,
                colour: 'w',
                result: w
            },
            "{id} ({result}): white, player {white}\n{text}"
        );
        assert_eq!(
            file.players[&black].rounds[1],
            trf::Round {
                opponent: white,
                colour: 'b',
                result: b
            },
            "{id} ({result}): black, player {black}\n{text}"
        );
        played += 1;
    }
    assert_eq!(played, 3);
    // The byes of round 2: 5 a half point (0 before), 8 the pairing's
    // (1/2 before).
    for (rank, code, points) in [(5, 'H', 5), (8, 'U', 15)] {
        let player = &file.players[&rank];
        assert_eq!(
            player.rounds[1],
            trf::Round {
                opponent: 0,
                colour: '-',
                result: code
            },
            "{text}"
        );
        assert_eq!(player.points, points, "{text}");
    }
    file
}

fn record<'f>(file: &'f trf::File, code: &str) -> Vec<&'f str> {
    file.records
        .iter()
        .filter(|(c, _)| c == code)
        .map(|(_, rest)| rest.as_str())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_results_go_out_as_trf26_trf16_csv_and_pgn_and_read_back_as_the_boards_say() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let (_bus, daemon, _client) = daemon(dir.path(), &broker).await;
    let trf = fixture("round2-byes.trf").display().to_string();
    let state = dir.path().join("hub-state").display().to_string();
    let passwords = dir.path().join("passwd").display().to_string();
    let (ok, out, err) = hall(strings(&["passwd", &passwords, "ann"]), "s3cret pass\n").await;
    assert!(ok, "{out}{err}");
    let password = dir.path().join("password");
    std::fs::write(&password, "s3cret pass\n").unwrap();
    let password = password.display().to_string();
    let port = kit::hall::round::free_port();
    let hub = Hub::start_on(
        broker.port,
        port,
        dir.path().join("hub.log"),
        &["--state-dir", &state, "--passwords", &passwords],
    )
    .await;
    hub.wait_for("/boards.json", "the three boards", |b| b.contains("\"b3\""))
        .await;
    let url = format!("http://127.0.0.1:{port}");
    let desk = |rest: &[&str]| {
        let mut args = strings(&[
            "round",
            "--hub",
            &url,
            "--user",
            "ann",
            "--password-file",
            &password,
        ]);
        args.extend(strings(rest));
        args
    };
    let (ok, out, err) = hall(
        desk(&[
            "load",
            "--round",
            "2",
            "--pairings",
            &trf,
            "--control",
            "600+5",
        ]),
        "",
    )
    .await;
    assert!(ok, "{out}{err}");
    let (ok, out, err) = hall(desk(&["send", "--round", "2", "--yes"]), "").await;
    assert!(ok, "{out}{err}");
    hub.wait_for("/boards.json", "round 2 on the boards", |b| {
        let v: Value = serde_json::from_str(b).unwrap();
        ["b1", "b2", "b3"].iter().all(|id| {
            v["boards"][id]["pgn"]
                .as_str()
                .is_some_and(|p| p.contains("[Round \"2."))
        })
    })
    .await;
    let mut arbiter = Arbiter::connect(broker.port).await;
    for (board, result) in [("b1", "0-1"), ("b2", "1/2-1/2"), ("b3", "1-0")] {
        let reply = arbiter.command(board, json!({"command": "start"})).await;
        assert_eq!(reply["ok"], true, "{reply}");
        let reply = arbiter
            .command(board, json!({"command": "set-result", "result": result}))
            .await;
        assert_eq!(reply["ok"], true, "{reply}");
    }
    hub.wait_for("/results.json", "three results", |body| {
        let v: Value = serde_json::from_str(body).unwrap();
        v["games"]
            .as_array()
            .is_some_and(|g| g.len() == 3 && g.iter().all(|g| g["result"].is_string()))
    })
    .await;
    let (_, _, boards) = hub.get("/boards.json", "").await;
    let boards: Value = serde_json::from_str(&boards).unwrap();

    // TRF26: the results and points as the boards say, the byes, and the
    // records TRF26 adds.
    let (status, _, trf26) = hub.get_anonymous("/results.trf26", "").await;
    assert_eq!(status, 200, "{trf26}");
    let file = check_against_boards(&trf26, &boards);
    assert_eq!(record(&file, "142"), ["5"], "{trf26}");
    assert_eq!(record(&file, "222"), ["600+5"], "{trf26}");
    assert_eq!(record(&file, "240"), ["H 002    5"], "{trf26}");
    assert_eq!(record(&file, "012"), ["Hall Open 2026"], "{trf26}");
    // TRF16: the same players' lines, none of TRF26's records.
    let (status, _, trf16) = hub.get_anonymous("/results.trf", "").await;
    assert_eq!(status, 200, "{trf16}");
    let file16 = check_against_boards(&trf16, &boards);
    for code in ["142", "222", "240", "###"] {
        assert!(record(&file16, code).is_empty(), "{code}: {trf16}");
    }
    assert_eq!(record(&file16, "XXR"), ["5"], "{trf16}");
    assert_eq!(hub.get_anonymous("/results.trf16", "").await.2, trf16);
    assert_eq!(
        hub.get_anonymous("/rounds/2/results.trf26", "").await.2,
        trf26
    );

    // CSV and Vega.
    let (status, head, csv) = hub.get_anonymous("/results.csv", "").await;
    assert_eq!(status, 200, "{csv}");
    assert!(head.contains("content-type: text/csv"), "{head}");
    assert!(
        csv.contains("2,1,\"Eta, Ed\",7,\"Alpha, Anna\",1,0-1,normal,"),
        "{csv}"
    );
    assert!(
        csv.contains("2,,\"Theta, Tom\",8,,,U,pairing-allocated bye,,\n"),
        "{csv}"
    );
    assert_eq!(
        hub.get_anonymous("/results.res", "").await.2,
        "3 2\n7 1 0\n4 2 5\n6 3 1\n"
    );

    // The bulletin: the finished games, with the desk's results, open to
    // anyone; the event's PGN holds them all.
    let (status, _, bulletin) = hub.get_anonymous("/bulletin.pgn", "").await;
    assert_eq!(status, 200, "{bulletin}");
    let round = games(&bulletin);
    assert_eq!(round.len(), 3, "{bulletin}");
    for (game, (number, result)) in round.iter().zip([(1, "0-1"), (2, "1/2-1/2"), (3, "1-0")]) {
        assert_eq!(
            tag(game, "Round"),
            Some(format!("2.{number}").as_str()),
            "{game}"
        );
        assert_eq!(tag(game, "Result"), Some(result), "{game}");
        assert!(game.trim_end().ends_with(result), "{game}");
        assert_eq!(tag(game, "ClockStatus"), None, "{game}");
    }
    assert_eq!(
        hub.get_anonymous("/rounds/2/bulletin.pgn", "").await.2,
        bulletin
    );
    assert_eq!(hub.get_anonymous("/event.pgn", "").await.2, bulletin);

    // Closed; then board 2's own record changes (an arbiter on the
    // board): the desk keeps its result, the disagreement is flagged and
    // nothing is chosen for the pairing program.
    let (ok, out, err) = hall(desk(&["close", "--round", "2"]), "").await;
    assert!(ok, "{out}{err}");
    let reply = arbiter
        .command("b2", json!({"command": "set-result", "result": "1-0"}))
        .await;
    assert_eq!(reply["ok"], true, "{reply}");
    let results = hub
        .wait_for("/results.json", "the disagreement", |body| {
            let v: Value = serde_json::from_str(body).unwrap();
            v["disagreements"].as_array().is_some_and(|d| !d.is_empty())
        })
        .await;
    let results: Value = serde_json::from_str(&results).unwrap();
    assert_eq!(
        results["disagreements"],
        json!([{"board": 2, "id": "b2", "desk": "1/2-1/2", "board_record": "1-0",
                "source": "state", "corrected": false}]),
        "{results}"
    );
    assert_eq!(results["games"][1]["result"], "1/2-1/2", "{results}");
    for path in ["/results.trf26", "/results.trf", "/results.res"] {
        let (status, _, body) = hub.get_anonymous(path, "").await;
        assert_eq!(status, 409, "{path}: {body}");
        assert!(
            body.contains("board 2 (b2): the desk has 1/2-1/2, the board's state says 1-0"),
            "{path}: {body}"
        );
    }
    let (_, _, csv) = hub.get_anonymous("/results.csv", "").await;
    assert!(csv.contains(",1/2-1/2,normal,arbiter,1-0\n"), "{csv}");

    // The arbiter settles it on the desk: the board's result stands.
    let (ok, out, err) = hall(
        desk(&["correct", "--round", "2", "--board", "2", "--result", "1-0"]),
        "",
    )
    .await;
    assert!(ok, "{out}{err}");
    let (status, _, results) = hub.get_anonymous("/results.json", "").await;
    assert_eq!(status, 200);
    let results: Value = serde_json::from_str(&results).unwrap();
    assert_eq!(results["disagreements"], json!([]), "{results}");
    let (_, _, boards) = hub.get("/boards.json", "").await;
    let boards: Value = serde_json::from_str(&boards).unwrap();
    let (status, _, trf26) = hub.get_anonymous("/results.trf26", "").await;
    assert_eq!(status, 200, "{trf26}");
    let file = check_against_boards(&trf26, &boards);
    assert_eq!(file.players[&4].rounds[1].result, '1', "{trf26}");
    assert_eq!(file.players[&4].points, 20, "{trf26}");
    drop(hub);
    assert!(daemon.terminate().success());
}
