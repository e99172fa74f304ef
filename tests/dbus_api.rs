//! The D-Bus objects against a fake runtime: every method, property and
//! signal, typed errors that change nothing, the NTP rule for scheduled
//! starts, and compatibility with busctl and gdbus. Peer-to-peer for the
//! in-process cases, a private dbus-daemon for everything a bus adds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;

use std::collections::HashMap;

use chessclockd::control::ControlHandle;
use chessclockd::dbus::client::{BoardProxy, ManagerProxy};
use chessclockd::dbus::{board_path, serve_with, Error, NtpSource, ServeOptions};
use kit::dbus::*;
use zbus::proxy::CacheProperties;

/// Serves `handle` on one end of a socket pair; returns (server, client).
async fn p2p(
    handle: ControlHandle,
    config: chessclockd::config::Config,
    ntp: NtpSource,
) -> (zbus::Connection, zbus::Connection) {
    let (server_end, client_end) = std::os::unix::net::UnixStream::pair().unwrap();
    let server = serve_with(
        zbus::connection::Builder::unix_stream(server_end)
            .server(zbus::Guid::generate())
            .p2p(),
        handle,
        ServeOptions {
            config,
            request_name: false,
            ntp,
            read_limits: Default::default(),
        },
    );
    let client = zbus::connection::Builder::unix_stream(client_end)
        .p2p()
        .build();
    let (server, client) = tokio::join!(server, client);
    (server.expect("serve"), client.expect("client"))
}

async fn board_proxy<'a>(client: &zbus::Connection, id: &str) -> BoardProxy<'a> {
    BoardProxy::builder(client)
        .path(board_path(id))
        .cache_properties(CacheProperties::No)
        .build()
        .await
        .unwrap()
}

async fn manager_proxy<'a>(client: &zbus::Connection) -> ManagerProxy<'a> {
    ManagerProxy::builder(client)
        .cache_properties(CacheProperties::No)
        .build()
        .await
        .unwrap()
}

fn my_uid() -> u32 {
    nix::unistd::getuid().as_raw()
}

#[tokio::test]
async fn every_method_reaches_the_runtime_and_properties_follow() {
    tokio::time::timeout(TEST_TIMEOUT, async {
        let handle = fake_runtime(&["b1", "b2"]);
        let (_server, client) = p2p(
            handle.clone(),
            test_config(true),
            NtpSource::Fixed(Some(true)),
        )
        .await;
        let manager = manager_proxy(&client).await;
        let boards = manager.list_boards().await.unwrap();
        assert_eq!(
            boards
                .iter()
                .map(|p| p.as_str().to_owned())
                .collect::<Vec<_>>(),
            vec![board_path("b1"), board_path("b2")]
        );
        let (monotonic_ms, wall_us) = manager.now().await.unwrap();
        assert!((monotonic_ms - chessclock_host::clock::monotonic_now_us() / 1000).abs() < 5_000);
        assert!((wall_us - chessclock_host::clock::wall_now_us()).abs() < 5_000_000);
        assert_eq!(manager.version().await.unwrap(), env!("CARGO_PKG_VERSION"));

        let b1 = board_proxy(&client, "b1").await;
        assert_eq!(b1.id().await.unwrap(), "b1");
        b1.new_game("fide-blitz").await.unwrap();
        assert_eq!(b1.time_control().await.unwrap(), "fide-blitz");
        assert_eq!(b1.white_remaining_ms().await.unwrap(), 180_000);
        assert!(!b1.started().await.unwrap());
        assert_eq!(b1.running().await.unwrap(), "");

        b1.start().await.unwrap();
        assert!(b1.started().await.unwrap());
        assert_eq!(b1.running().await.unwrap(), "white");
        b1.press("white").await.unwrap();
        assert_eq!(b1.running().await.unwrap(), "black");
        assert_eq!(b1.white_moves().await.unwrap(), 1);
        assert_eq!(b1.white_remaining_ms().await.unwrap(), 179_000);
        let snapshot_ms = b1.snapshot_ms().await.unwrap();
        assert!((snapshot_ms - chessclock_host::clock::monotonic_now_us() / 1000).abs() < 5_000);

        b1.pause().await.unwrap();
        assert!(b1.paused().await.unwrap());
        assert_eq!(b1.running().await.unwrap(), "");
        b1.resume().await.unwrap();
        assert!(!b1.paused().await.unwrap());
        assert_eq!(b1.running().await.unwrap(), "black");

        b1.adjust("black", 120_000, 7).await.unwrap();
        assert_eq!(b1.black_remaining_ms().await.unwrap(), 120_000);
        assert_eq!(b1.black_moves().await.unwrap(), 7);
        b1.adjust("black", -1, 9).await.unwrap();
        assert_eq!(b1.black_remaining_ms().await.unwrap(), 120_000);
        assert_eq!(b1.black_moves().await.unwrap(), 9);
        b1.adjust_with_stage("white", -1, -1, 2).await.unwrap();
        assert_eq!(b1.white_stage().await.unwrap(), 2);
        assert_eq!(b1.black_stage().await.unwrap(), 1);
        assert_eq!(b1.flags().await.unwrap(), Vec::<String>::new());
        assert!(!b1.arbiter_called().await.unwrap());
        assert_eq!(
            b1.devices().await.unwrap(),
            vec![(
                "buttons".to_owned(),
                "/dev/chessclock/buttons-b1".to_owned(),
                true,
                "CC0001".to_owned()
            )]
        );

        let state: serde_json::Value = serde_json::from_str(&b1.state().await.unwrap()).unwrap();
        assert_eq!(state["running"], "black");
        assert_eq!(state["black"]["moves"], 9);
        let snapshot: serde_json::Value =
            serde_json::from_str(&b1.snapshot().await.unwrap()).unwrap();
        assert_eq!(snapshot["board"], "b1");
        assert_eq!(snapshot["white_stage"], 2);
        assert!(b1
            .pgn()
            .await
            .unwrap()
            .contains("[TimeControl \"fide-blitz\"]"));

        // Every change is in the history with the caller's uid.
        let b1_history = log_of(&b1.history().await.unwrap());
        assert_eq!(b1_history.len(), 8, "{b1_history:?}");
        assert!(b1_history.iter().all(|entry| entry["uid"] == my_uid()));
        assert!(b1_history[2]["command"].as_str().unwrap().contains("Press"));

        // A scheduled start with a synchronised clock.
        let b2 = board_proxy(&client, "b2").await;
        let at = chessclock_host::clock::wall_now_us() + 60_000_000;
        b2.start_at(at).await.unwrap();
        b2.start_at_forced(at, true).await.unwrap();
        let h2 = history(&handle, "b2").await;
        assert_eq!(h2.len(), 2);
        assert!(h2[0]["command"]
            .as_str()
            .unwrap()
            .contains(&format!("unix_time_us: {at}, force: false")));
        match manager.start_all_at(at, false).await {
            Err(Error::InvalidState(message)) => {
                assert!(message.contains("board b1"), "{message}");
                assert!(message.contains("1 of 2 boards refused"), "{message}");
            }
            other => panic!("expected InvalidState for b1, got {other:?}"),
        }
        assert_eq!(history(&handle, "b2").await.len(), 3);
        assert_eq!(history(&handle, "b1").await.len(), 8, "b1 refused: started");

        // Hotplug entry point.
        manager.add_device("/dev/ttyACM7").await.unwrap();
        assert!(b1.devices().await.unwrap().contains(&(
            "display".into(),
            "/dev/ttyACM7".into(),
            true,
            "".into()
        )));
        manager.remove_device("/dev/ttyACM7").await.unwrap();
        assert!(b1.devices().await.unwrap().contains(&(
            "display".into(),
            "/dev/ttyACM7".into(),
            false,
            "".into()
        )));

        // All boards at once.
        assert!(matches!(
            manager.pause_all().await,
            Err(Error::InvalidState(_))
        ));
        assert!(b1.paused().await.unwrap(), "b1 paused, b2 refused");
        manager.start_all().await.unwrap_err();
        assert!(b2.started().await.unwrap(), "b2 started, b1 refused");
    })
    .await
    .expect("test timed out");
}

fn assert_invalid_argument<T: std::fmt::Debug>(result: Result<T, Error>, needle: &str) {
    match result {
        Err(Error::InvalidArgument(message)) => {
            assert!(message.contains(needle), "`{message}` lacks `{needle}`")
        }
        other => panic!("expected InvalidArgument ({needle}), got {other:?}"),
    }
}

#[tokio::test]
async fn invalid_arguments_get_typed_errors_and_change_nothing() {
    tokio::time::timeout(TEST_TIMEOUT, async {
        let handle = fake_runtime(&["b1"]);
        let (_server, client) =
            p2p(handle.clone(), test_config(false), NtpSource::Fixed(None)).await;
        let b1 = board_proxy(&client, "b1").await;
        let manager = manager_proxy(&client).await;
        b1.start().await.unwrap();
        let before = snapshot(&handle, "b1").await;
        let history_before = history(&handle, "b1").await;

        assert_invalid_argument(b1.press("green").await, "unknown side");
        assert_invalid_argument(b1.press("White").await, "\"white\" or \"black\"");
        assert_invalid_argument(b1.adjust("purple", 1000, -1).await, "unknown side");
        assert_invalid_argument(b1.adjust("white", -5000, -1).await, "negative");
        assert_invalid_argument(b1.adjust("white", -1, -3).await, "negative");
        assert_invalid_argument(b1.adjust("white", -1, -1).await, "nothing to adjust");
        assert_invalid_argument(b1.adjust_with_stage("white", -1, -1, 0).await, "stages");
        assert_invalid_argument(b1.new_game("").await, "empty");
        assert_invalid_argument(b1.new_game("5400\u{7}+30").await, "not valid");
        assert_invalid_argument(b1.new_game("5400+3x0").await, "unexpected `x`");
        assert_invalid_argument(b1.new_game("no-such-preset").await, "neither a preset");
        assert_invalid_argument(b1.start_at(1_000_000).await, "in the past");
        // Issue 28: SetTags took 50,000 tags; refused with the core's words
        // before the runtime hears of it (the fake runtime would take them).
        let names: Vec<String> = (0..50_000).map(|i| format!("Tag{i:05}")).collect();
        let flood: HashMap<&str, &str> = names.iter().map(|n| (n.as_str(), "x")).collect();
        assert_invalid_argument(
            b1.set_tags(flood).await,
            "too many tags: 50000 (at most 64)",
        );
        let long = "é".repeat(256);
        assert_invalid_argument(
            b1.set_tags(HashMap::from([("White", long.as_str())])).await,
            "tag `White`: the value has 256 characters (at most 255)",
        );
        assert_invalid_argument(
            b1.new_game(&"1".repeat(100_000)).await,
            "the time control has 100000 characters (at most 256)",
        );
        assert_invalid_argument(manager.add_device("ttyACM0").await, "absolute path");

        // Errors the runtime raises keep their type too.
        match b1.start().await {
            Err(Error::InvalidState(message)) => assert!(message.contains("already started")),
            other => panic!("expected InvalidState, got {other:?}"),
        }
        match b1.press("black").await {
            Err(Error::InvalidState(message)) => assert!(message.contains("not running")),
            other => panic!("expected InvalidState, got {other:?}"),
        }

        assert_eq!(snapshot(&handle, "b1").await, before);
        assert_eq!(history(&handle, "b1").await, history_before);
    })
    .await
    .expect("test timed out");
}

#[tokio::test]
async fn errors_carry_their_dbus_names() {
    tokio::time::timeout(TEST_TIMEOUT, async {
        let handle = fake_runtime(&["b1"]);
        // A board the runtime does not know: its answer is UnknownBoard.
        handle.boards.push("ghost".into());
        let (_server, client) =
            p2p(handle.clone(), test_config(false), NtpSource::Fixed(None)).await;
        let ghost = board_proxy(&client, "ghost").await;
        match ghost.pause().await {
            Err(Error::UnknownBoard(message)) => assert!(message.contains("ghost")),
            other => panic!("expected UnknownBoard, got {other:?}"),
        }
        // A runtime that has gone away: Internal, with the reason.
        let (requests, inbox) = tokio::sync::mpsc::channel(1);
        drop(inbox);
        let gone = ControlHandle {
            requests,
            events: tokio::sync::broadcast::channel(4).0,
            boards: ["b1".to_owned()].into_iter().collect(),
            health: Default::default(),
            host: Default::default(),
            hall: Default::default(),
        };
        let (_gone_server, gone_client) =
            p2p(gone, test_config(false), NtpSource::Fixed(None)).await;
        match board_proxy(&gone_client, "b1").await.state().await {
            Err(Error::Internal(message)) => assert!(message.contains("shutting down")),
            other => panic!("expected Internal, got {other:?}"),
        }
        // The raw error name on the wire.
        let reply = client
            .call_method(
                None::<&str>,
                board_path("b1").as_str(),
                Some("org.chessclockd.ChessClock1.Board"),
                "Press",
                &("sideways",),
            )
            .await;
        match reply {
            Err(zbus::Error::MethodError(name, Some(message), _)) => {
                assert_eq!(
                    name.as_str(),
                    "org.chessclockd.ChessClock1.Error.InvalidArgument"
                );
                assert!(message.contains("sideways"));
            }
            other => panic!("expected a method error, got {other:?}"),
        }
    })
    .await
    .expect("test timed out");
}

#[tokio::test]
async fn scheduled_starts_need_ntp_unless_forced() {
    tokio::time::timeout(TEST_TIMEOUT, async {
        for ntp in [NtpSource::Fixed(Some(false)), NtpSource::Fixed(None)] {
            let handle = fake_runtime(&["b1", "b2"]);
            let (_server, client) = p2p(handle.clone(), test_config(true), ntp).await;
            let b1 = board_proxy(&client, "b1").await;
            let manager = manager_proxy(&client).await;
            let at = chessclock_host::clock::wall_now_us() + 30_000_000;
            match b1.start_at(at).await {
                Err(Error::NotSynchronized(message)) => {
                    assert!(message.contains("--force"), "{message}")
                }
                other => panic!("expected NotSynchronized, got {other:?}"),
            }
            assert!(matches!(
                b1.start_at_forced(at, false).await,
                Err(Error::NotSynchronized(_))
            ));
            assert!(matches!(
                manager.start_all_at(at, false).await,
                Err(Error::NotSynchronized(_))
            ));
            assert!(history(&handle, "b1").await.is_empty());
            assert!(history(&handle, "b2").await.is_empty());
            b1.start_at_forced(at, true).await.unwrap();
            manager.start_all_at(at, true).await.unwrap();
            assert_eq!(history(&handle, "b1").await.len(), 2);
            assert_eq!(history(&handle, "b2").await.len(), 1);
        }
        // Not required: no check at all.
        let handle = fake_runtime(&["b1"]);
        let (_server, client) = p2p(
            handle.clone(),
            test_config(false),
            NtpSource::Fixed(Some(false)),
        )
        .await;
        let b1 = board_proxy(&client, "b1").await;
        b1.start_at(chessclock_host::clock::wall_now_us() + 30_000_000)
            .await
            .unwrap();
    })
    .await
    .expect("test timed out");
}

/// A reader in a loop is held to its share of reading; the arbiter's
/// changes still go through.
#[tokio::test]
async fn a_reader_in_a_loop_is_held_to_its_share() {
    tokio::time::timeout(TEST_TIMEOUT, async {
        let handle = fake_runtime(&["b1"]);
        let (server_end, client_end) = std::os::unix::net::UnixStream::pair().unwrap();
        let server = serve_with(
            zbus::connection::Builder::unix_stream(server_end)
                .server(zbus::Guid::generate())
                .p2p(),
            handle.clone(),
            ServeOptions {
                config: test_config(false),
                request_name: false,
                ntp: NtpSource::Fixed(None),
                // A state a second: a state is about 900 bytes.
                read_limits: chessclockd::dbus::limit::Limits {
                    per_caller: 1_000.0,
                    per_caller_burst: 3_000.0,
                    total: 100_000.0,
                    total_burst: 100_000.0,
                    callers: 16,
                },
            },
        );
        let client = zbus::connection::Builder::unix_stream(client_end)
            .p2p()
            .build();
        let (_server, client) = tokio::join!(server, client);
        let client = client.unwrap();
        let b1 = board_proxy(&client, "b1").await;
        let mut served = 0;
        let refusal = loop {
            match b1.state().await {
                Ok(_) => served += 1,
                Err(error) => break error,
            }
            assert!(served < 1_000, "never limited");
        };
        assert!(served >= 2, "the burst is served first ({served})");
        match refusal {
            Error::RateLimited(message) => assert!(message.contains("try again in"), "{message}"),
            other => panic!("expected RateLimited, got {other:?}"),
        }
        // Changes are not reads: they still go through.
        b1.start().await.unwrap();
    })
    .await
    .expect("test timed out");
}

/// Issue 14, item 5: a method that takes no argument refuses arguments
/// (zbus would otherwise drop them silently).
#[tokio::test]
async fn read_methods_without_arguments_refuse_arguments() {
    tokio::time::timeout(TEST_TIMEOUT, async {
        let handle = fake_runtime(&["b1"]);
        let (_server, client) = p2p(handle, test_config(false), NtpSource::Fixed(None)).await;
        let board = board_path("b1");
        let calls = [
            (board.as_str(), "org.chessclockd.ChessClock1.Board", "State"),
            (
                board.as_str(),
                "org.chessclockd.ChessClock1.Board",
                "History",
            ),
            (board.as_str(), "org.chessclockd.ChessClock1.Board", "Pgn"),
            (
                board.as_str(),
                "org.chessclockd.ChessClock1.Board",
                "Snapshot",
            ),
            (board.as_str(), "org.chessclockd.ChessClock1.Board", "Pause"),
            (
                "/org/chessclockd/ChessClock1",
                "org.chessclockd.ChessClock1.Manager",
                "ListBoards",
            ),
            (
                "/org/chessclockd/ChessClock1",
                "org.chessclockd.ChessClock1.Manager",
                "Now",
            ),
            (
                "/org/chessclockd/ChessClock1",
                "org.chessclockd.ChessClock1.Manager",
                "PauseAll",
            ),
        ];
        for (path, interface, method) in calls {
            let extra = client
                .call_method(None::<&str>, path, Some(interface), method, &("extra",))
                .await;
            match extra {
                Err(zbus::Error::FDO(error)) => assert!(
                    matches!(*error, zbus::fdo::Error::InvalidArgs(_)),
                    "{method}: {error:?}"
                ),
                Err(zbus::Error::MethodError(name, _, _)) => assert_eq!(
                    name.as_str(),
                    "org.freedesktop.DBus.Error.InvalidArgs",
                    "{method}"
                ),
                other => panic!("{method} with an argument: {other:?}"),
            }
        }
        // Without arguments the reads answer.
        for (path, interface, method) in &calls[..4] {
            client
                .call_method(None::<&str>, *path, Some(*interface), *method, &())
                .await
                .unwrap_or_else(|e| panic!("{method}: {e}"));
        }
    })
    .await
    .expect("test timed out");
}

/// Issue 14, item 5: NewGame refuses an empty or padded control and one that
/// gives no time, and nothing reaches the runtime.
#[tokio::test]
async fn new_game_refuses_empty_padded_and_zero_time_controls() {
    tokio::time::timeout(TEST_TIMEOUT, async {
        let handle = fake_runtime(&["b1"]);
        let (_server, client) =
            p2p(handle.clone(), test_config(false), NtpSource::Fixed(None)).await;
        let board = board_proxy(&client, "b1").await;
        let before = history(&handle, "b1").await;
        for control in [
            "",
            "   ",
            " fide-rapid",
            "fide-rapid ",
            "300\t",
            "0",
            "0+0",
            "40/0:1800",
            "*0",
            "G/0;d5",
        ] {
            match board.new_game(control).await {
                Err(Error::InvalidArgument(message)) => assert!(!message.is_empty(), "{control:?}"),
                other => panic!("{control:?}: {other:?}"),
            }
        }
        assert_eq!(history(&handle, "b1").await, before, "nothing changed");
        board.new_game("fide-rapid").await.unwrap();
    })
    .await
    .expect("test timed out");
}

/// Issue 14, item 3: the state health is in every State() and in the
/// manager's StateHealth property.
#[tokio::test]
async fn the_state_health_is_in_state_and_a_manager_property() {
    tokio::time::timeout(TEST_TIMEOUT, async {
        let mut handle = fake_runtime(&["b1"]);
        handle.health =
            chessclockd::control::SharedHealth::new(chessclockd::control::StateHealth {
                mode: chessclockd::control::StateMode::Durable,
                path: Some("/var/lib/chessclockd/chessclockd.sqlite3".into()),
                findings: vec![chessclockd::control::StateFinding {
                    kind: chessclockd::control::FindingKind::EventsMissing,
                    message: "26 of the 51 committed events are missing".into(),
                    board: None,
                }],
                evidence: Some("/var/lib/chessclockd/damaged-1".into()),
                saving: None,
            });
        let health = handle.health.clone();
        let (_server, client) = p2p(handle, test_config(false), NtpSource::Fixed(None)).await;
        let state: serde_json::Value =
            serde_json::from_str(&board_proxy(&client, "b1").await.state().await.unwrap()).unwrap();
        assert_eq!(
            state["state_health"]["findings"][0]["kind"], "events-missing",
            "{state}"
        );
        assert_eq!(
            state["state_health"]["evidence"],
            "/var/lib/chessclockd/damaged-1"
        );
        let property: serde_json::Value =
            serde_json::from_str(&manager_proxy(&client).await.state_health().await.unwrap())
                .unwrap();
        assert_eq!(property, state["state_health"]);
        assert_eq!(state["state_health"]["saving"], serde_json::Value::Null);

        // Issue 28 item 1: the store's trouble saving is live: the
        // manager signals the change and the next State() has it.
        let manager = ManagerProxy::builder(&client)
            .cache_properties(CacheProperties::Yes)
            .build()
            .await
            .unwrap();
        let mut changes = manager.receive_state_health_changed().await;
        // The cached value comes first.
        let first = futures_util::StreamExt::next(&mut changes)
            .await
            .expect("the value");
        assert_eq!(first.get().await.unwrap(), property.to_string());
        health.set_saving(Some(chessclockd::control::SavingTrouble {
            reason: chessclockd::control::SaveFailure::NoSpace,
            saving: false,
            waiting_records: 3,
            reserve_left_bytes: 0,
            since_wall_ms: 1_796_126_400_000,
            message: "not saving: no space; 3 records wait in memory".into(),
        }));
        let changed = futures_util::StreamExt::next(&mut changes)
            .await
            .expect("a change");
        let property: serde_json::Value =
            serde_json::from_str(&changed.get().await.unwrap()).unwrap();
        assert_eq!(property["saving"]["reason"], "no-space", "{property}");
        let state: serde_json::Value =
            serde_json::from_str(&board_proxy(&client, "b1").await.state().await.unwrap()).unwrap();
        assert_eq!(
            state["state_health"]["saving"]["waiting_records"], 3,
            "{state}"
        );
    })
    .await
    .expect("test timed out");
}
