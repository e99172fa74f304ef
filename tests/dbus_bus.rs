//! The API on a real private dbus-daemon: the well-known name, every signal
//! (and one PropertiesChanged per state change), NTP status read from a
//! timedated on the bus, busctl and gdbus as clients, and the introspection
//! XML in `protocol/dbus/` matching the live objects.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;

use chessclockd::control::BoardEvent;
use chessclockd::dbus::client::{BoardProxy, ManagerProxy};
use chessclockd::dbus::{board_path, Error, NtpSource, BUS_NAME, MANAGER_PATH};
use chessclockd::engine::Side;
use kit::dbus::*;
use zbus::proxy::CacheProperties;

const BOARD_IFACE: &str = "org.chessclockd.ChessClock1.Board";
const MANAGER_IFACE: &str = "org.chessclockd.ChessClock1.Manager";

async fn board_proxy<'a>(client: &zbus::Connection, id: &str) -> BoardProxy<'a> {
    BoardProxy::builder(client)
        .path(board_path(id))
        .cache_properties(CacheProperties::No)
        .build()
        .await
        .unwrap()
}

#[tokio::test]
async fn signals_and_properties_changed_on_a_private_bus() {
    let _serial = BUS_LOCK.lock().await;
    tokio::time::timeout(TEST_TIMEOUT, async {
        let bus = PrivateBus::session();
        let (handle, _server) = serve_fake(&bus, &["b1", "b2"]).await;
        let client = bus.connect().await;
        let dbus = zbus::fdo::DBusProxy::new(&client).await.unwrap();
        assert!(dbus
            .name_has_owner(BUS_NAME.try_into().unwrap())
            .await
            .unwrap());

        let b1 = board_proxy(&client, "b1").await;
        let manager = ManagerProxy::new(&client).await.unwrap();
        let properties = zbus::fdo::PropertiesProxy::builder(&client)
            .destination(BUS_NAME)
            .path(board_path("b1"))
            .build()
            .await
            .unwrap();
        let mut changes = properties.receive_properties_changed().await.unwrap();
        let mut pressed = b1.receive_pressed().await.unwrap();
        let mut flags = b1.receive_flag_fell().await.unwrap();
        let mut stages = b1.receive_stage_changed().await.unwrap();
        let mut devices = b1.receive_device_changed().await.unwrap();
        let mut board_arbiter = b1.receive_arbiter_called_signal().await.unwrap();
        let mut manager_arbiter = manager.receive_arbiter_called().await.unwrap();

        b1.start().await.unwrap();
        let change = next(&mut changes).await;
        let args = change.args().unwrap();
        assert_eq!(args.interface_name().as_str(), BOARD_IFACE);
        let changed = args.changed_properties();
        assert_eq!(
            String::try_from(changed["Running"].try_clone().unwrap()).unwrap(),
            "white"
        );
        assert!(bool::try_from(&changed["Started"]).unwrap());
        assert!(
            !changed.contains_key("WhiteMoves"),
            "only changed properties"
        );

        b1.press("white").await.unwrap();
        let press = next(&mut pressed).await;
        let args = press.args().unwrap();
        assert_eq!(
            (args.side().as_str(), *args.move_number(), *args.used_ms()),
            ("white", 1, 1000)
        );
        // One PropertiesChanged carrying the whole change.
        let change = next(&mut changes).await;
        let args = change.args().unwrap();
        let changed = args.changed_properties();
        assert_eq!(u32::try_from(&changed["WhiteMoves"]).unwrap(), 1);
        assert_eq!(
            i64::try_from(&changed["WhiteRemainingMs"]).unwrap(),
            5_399_000
        );
        assert_eq!(
            String::try_from(changed["Running"].try_clone().unwrap()).unwrap(),
            "black"
        );
        assert!(!changed.contains_key("TimeControl"), "unchanged");

        b1.adjust_with_stage("black", -1, -1, 2).await.unwrap();
        let stage = next(&mut stages).await;
        assert_eq!(
            (
                stage.args().unwrap().side().as_str(),
                *stage.args().unwrap().stage()
            ),
            ("black", 2)
        );
        let change = next(&mut changes).await;
        assert_eq!(
            u32::try_from(&change.args().unwrap().changed_properties()["BlackStage"]).unwrap(),
            2
        );

        handle
            .events
            .send(BoardEvent::FlagFell {
                board: "b1".into(),
                side: Side::Black,
                at_ms: 123_456,
                stage: 2,
                last_stage: true,
            })
            .unwrap();
        let flag = next(&mut flags).await;
        let args = flag.args().unwrap();
        assert_eq!(
            (
                args.side().as_str(),
                *args.at_ms(),
                *args.stage(),
                *args.last_stage()
            ),
            ("black", 123_456, 2, true)
        );

        manager.add_device("/dev/ttyUSB3").await.unwrap();
        let device = next(&mut devices).await;
        let args = device.args().unwrap();
        assert_eq!(
            (
                args.role().as_str(),
                args.name().as_str(),
                *args.connected(),
                args.serial().as_str()
            ),
            ("display", "/dev/ttyUSB3", true, "")
        );
        let change = next(&mut changes).await;
        assert!(change
            .args()
            .unwrap()
            .changed_properties()
            .contains_key("Devices"));

        handle
            .events
            .send(BoardEvent::ArbiterCalled { board: "b1".into() })
            .unwrap();
        next(&mut board_arbiter).await;
        let call = next(&mut manager_arbiter).await;
        let args = call.args().unwrap();
        assert_eq!(args.board().as_str(), "b1");
        assert_eq!(args.path().as_str(), board_path("b1"));

        // A state change broadcast by the runtime alone reaches the cache.
        let mut snapshot = snapshot(&handle, "b1").await;
        snapshot.arbiter_called = true;
        snapshot.flags = vec![Side::Black];
        handle
            .events
            .send(BoardEvent::StateChanged(snapshot))
            .unwrap();
        let change = next(&mut changes).await;
        let changed = change.args().unwrap().changed_properties().clone();
        assert!(bool::try_from(&changed["ArbiterCalled"]).unwrap());
        assert!(b1.arbiter_called().await.unwrap());
        assert_eq!(b1.flags().await.unwrap(), vec!["black".to_owned()]);

        // A cached proxy follows PropertiesChanged without asking.
        let cached = BoardProxy::builder(&client)
            .path(board_path("b2"))
            .build()
            .await
            .unwrap();
        assert_eq!(cached.white_moves().await.unwrap(), 0);
        let b2 = board_proxy(&client, "b2").await;
        b2.start().await.unwrap();
        b2.press("white").await.unwrap();
        let mut moves = cached.receive_white_moves_changed().await;
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
        while cached.white_moves().await.unwrap() != 1 {
            assert!(tokio::time::Instant::now() < deadline, "cache not updated");
            next(&mut moves).await;
        }
    })
    .await
    .expect("test timed out");
}

/// A stand-in for systemd-timedated on the private bus.
struct FakeTimedate {
    synchronized: bool,
}

#[zbus::interface(name = "org.freedesktop.timedate1")]
impl FakeTimedate {
    #[zbus(property, name = "NTPSynchronized")]
    fn ntp_synchronized(&self) -> bool {
        self.synchronized
    }
}

#[tokio::test]
async fn scheduled_start_reads_ntp_status_from_timedated() {
    let _serial = BUS_LOCK.lock().await;
    tokio::time::timeout(TEST_TIMEOUT, async {
        let bus = PrivateBus::session();
        let handle = fake_runtime(&["b1"]);
        let ntp_connection = bus.connect().await;
        let _server = serve_on_bus(
            &bus,
            handle.clone(),
            test_config(true),
            NtpSource::Connection(ntp_connection),
        )
        .await;
        let client = bus.connect().await;
        let b1 = board_proxy(&client, "b1").await;
        let at = chessclock_host::clock::wall_now_us() + 60_000_000;

        // No timedated at all: unknown, refused.
        match b1.start_at(at).await {
            Err(Error::NotSynchronized(message)) => {
                assert!(message.contains("cannot tell"), "{message}")
            }
            other => panic!("expected NotSynchronized, got {other:?}"),
        }

        let timedated = zbus::connection::Builder::address(bus.address.as_str())
            .serve_at(
                "/org/freedesktop/timedate1",
                FakeTimedate {
                    synchronized: false,
                },
            )
            .name("org.freedesktop.timedate1")
            .build()
            .await
            .unwrap();
        match b1.start_at(at).await {
            Err(Error::NotSynchronized(message)) => {
                assert!(message.contains("not NTP-synchronised"), "{message}")
            }
            other => panic!("expected NotSynchronized, got {other:?}"),
        }
        assert!(history(&handle, "b1").await.is_empty());

        timedated
            .object_server()
            .interface::<_, FakeTimedate>("/org/freedesktop/timedate1")
            .await
            .unwrap()
            .get_mut()
            .await
            .synchronized = true;
        b1.start_at(at).await.unwrap();
        assert_eq!(history(&handle, "b1").await.len(), 1);
    })
    .await
    .expect("test timed out");
}

#[tokio::test]
async fn busctl_and_gdbus_can_call_methods_and_read_properties() {
    let _serial = BUS_LOCK.lock().await;
    tokio::time::timeout(TEST_TIMEOUT, async {
        let bus = PrivateBus::session();
        let (handle, _server) = serve_fake(&bus, &["b1"]).await;
        let address = format!("--address={}", bus.address);
        let b1 = board_path("b1");
        let busctl = |args: &[&str]| {
            let mut all = vec![address.as_str(), "--"];
            all.extend_from_slice(args);
            all.into_iter().map(str::to_owned).collect::<Vec<_>>()
        };
        let run_busctl = |args: Vec<String>| async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            run("busctl", &args).await
        };

        let (ok, out, err) = run_busctl(busctl(&[
            "call",
            BUS_NAME,
            MANAGER_PATH,
            MANAGER_IFACE,
            "ListBoards",
        ]))
        .await;
        assert!(ok, "{err}");
        assert_eq!(out.trim(), format!("ao 1 \"{b1}\""));

        for (method, signature, args) in [
            ("NewGame", "s", vec!["300+2"]),
            ("Start", "", vec![]),
            ("Press", "s", vec!["white"]),
            ("Adjust", "sxi", vec!["black", "250000", "-1"]),
            ("AdjustWithStage", "sxii", vec!["white", "-1", "-1", "2"]),
            ("Pause", "", vec![]),
            ("Resume", "", vec![]),
        ] {
            let mut call = busctl(&["call", BUS_NAME, &b1, BOARD_IFACE, method]);
            if !signature.is_empty() {
                call.push(signature.to_owned());
                call.extend(args.iter().map(|a| a.to_string()));
            }
            let (ok, _, err) = run_busctl(call).await;
            assert!(ok, "busctl {method}: {err}");
        }
        for (property, expected) in [
            ("TimeControl", "s \"300+2\""),
            ("WhiteMoves", "u 1"),
            ("BlackRemainingMs", "x 250000"),
            ("WhiteStage", "u 2"),
            ("Running", "s \"black\""),
            ("Paused", "b false"),
            ("Flags", "as 0"),
        ] {
            let (ok, out, err) = run_busctl(busctl(&[
                "get-property",
                BUS_NAME,
                &b1,
                BOARD_IFACE,
                property,
            ]))
            .await;
            assert!(ok, "{property}: {err}");
            assert_eq!(out.trim(), expected, "{property}");
        }
        let (ok, out, _) = run_busctl(busctl(&[
            "get-property",
            BUS_NAME,
            &b1,
            BOARD_IFACE,
            "Devices",
        ]))
        .await;
        assert!(ok);
        assert!(out.starts_with("a(ssbs) 1 \"buttons\""), "{out}");

        // A typed error, as busctl shows it; nothing changed.
        let before = snapshot(&handle, "b1").await;
        let (ok, _, err) = run_busctl(busctl(&[
            "call",
            BUS_NAME,
            &b1,
            BOARD_IFACE,
            "Adjust",
            "sxi",
            "white",
            "-5000",
            "-1",
        ]))
        .await;
        assert!(!ok);
        assert!(err.contains("negative"), "{err}");
        assert_eq!(snapshot(&handle, "b1").await, before);

        // gdbus: methods, properties, errors, introspection.
        let gdbus = |method: &str, args: &[&str]| {
            let mut all = vec![
                "call".to_owned(),
                "--address".to_owned(),
                bus.address.clone(),
                "--dest".to_owned(),
                BUS_NAME.to_owned(),
                "--object-path".to_owned(),
                b1.clone(),
                "--timeout".to_owned(),
                "5".to_owned(),
                "--method".to_owned(),
                method.to_owned(),
            ];
            all.extend(args.iter().map(|a| a.to_string()));
            all
        };
        let run_gdbus = |args: Vec<String>| async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            run("gdbus", &args).await
        };
        let (ok, out, err) =
            run_gdbus(gdbus("org.chessclockd.ChessClock1.Board.Press", &["black"])).await;
        assert!(ok, "{err}");
        assert_eq!(out.trim(), "()");
        let (ok, out, err) = run_gdbus(gdbus("org.chessclockd.ChessClock1.Board.State", &[])).await;
        assert!(ok, "{err}");
        assert!(out.contains("\"running\":\"white\""), "{out}");
        let (ok, out, err) = run_gdbus(gdbus(
            "org.freedesktop.DBus.Properties.Get",
            &[BOARD_IFACE, "BlackMoves"],
        ))
        .await;
        assert!(ok, "{err}");
        assert_eq!(out.trim(), "(<uint32 1>,)");
        let (ok, _, err) =
            run_gdbus(gdbus("org.chessclockd.ChessClock1.Board.Press", &["green"])).await;
        assert!(!ok);
        assert!(
            err.contains("org.chessclockd.ChessClock1.Error.InvalidArgument"),
            "{err}"
        );
        let (ok, out, err) = run(
            "gdbus",
            &[
                "introspect",
                "--address",
                &bus.address,
                "--dest",
                BUS_NAME,
                "--object-path",
                &b1,
            ],
        )
        .await;
        assert!(ok, "{err}");
        for member in [
            "NewGame",
            "StartAt",
            "StartAtForced",
            "Pressed",
            "FlagFell",
            "StageChanged",
            "DeviceChanged",
            "ArbiterCalled",
            "WhiteRemainingMs",
        ] {
            assert!(out.contains(member), "introspection lacks {member}");
        }
    })
    .await
    .expect("test timed out");
}

/// `protocol/dbus/org.chessclockd.ChessClock1.xml` is the live objects'
/// introspection. Regenerate with `CHESSCLOCKD_UPDATE_XML=1`.
#[tokio::test]
async fn introspection_xml_matches_the_live_objects() {
    let _serial = BUS_LOCK.lock().await;
    tokio::time::timeout(TEST_TIMEOUT, async {
        let bus = PrivateBus::session();
        let (_handle, _server) = serve_fake(&bus, &["b1"]).await;
        let client = bus.connect().await;
        let mut interfaces = String::new();
        for (path, name) in [
            (MANAGER_PATH.to_owned(), MANAGER_IFACE),
            (board_path("b1"), BOARD_IFACE),
        ] {
            let xml = zbus::fdo::IntrospectableProxy::builder(&client)
                .destination(BUS_NAME)
                .path(path)
                .build()
                .await
                .unwrap()
                .introspect()
                .await
                .unwrap();
            let start = xml
                .find(&format!("<interface name=\"{name}\">"))
                .unwrap_or_else(|| panic!("{name} missing"));
            let end = start + xml[start..].find("</interface>").unwrap() + "</interface>".len();
            // Keep the indentation of the first line like the others'.
            let indent = &xml[..start][xml[..start].rfind('\n').map(|i| i + 1).unwrap_or(start)..];
            interfaces.push_str(indent);
            interfaces.push_str(&xml[start..end]);
            interfaces.push('\n');
        }
        let expected = format!(
            "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\"\n \
             \"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">\n\
             <!-- chessclockd D-Bus API: bus name {BUS_NAME}.\n     \
             Manager at {MANAGER_PATH}, boards at {MANAGER_PATH}/board/<id>.\n     \
             Generated from the live objects by tests/dbus_bus.rs; do not edit. -->\n\
             <node>\n{interfaces}</node>\n"
        );
        let file = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/protocol/dbus/org.chessclockd.ChessClock1.xml"
        );
        if std::env::var_os("CHESSCLOCKD_UPDATE_XML").is_some() {
            std::fs::create_dir_all(std::path::Path::new(file).parent().unwrap()).unwrap();
            std::fs::write(file, &expected).unwrap();
        }
        let shipped = std::fs::read_to_string(file).unwrap_or_default();
        assert!(
            shipped == expected,
            "{file} differs from the live objects; regenerate with \
             CHESSCLOCKD_UPDATE_XML=1 cargo test --test dbus_bus introspection"
        );
    })
    .await
    .expect("test timed out");
}

#[tokio::test]
async fn a_second_daemon_cannot_take_the_name() {
    let _serial = BUS_LOCK.lock().await;
    tokio::time::timeout(TEST_TIMEOUT, async {
        let bus = PrivateBus::session();
        let _first = serve_on_bus(
            &bus,
            fake_runtime(&["b1"]),
            test_config(false),
            NtpSource::Fixed(None),
        )
        .await;
        let second = chessclockd::dbus::serve_with(
            bus.builder(),
            fake_runtime(&["b1"]),
            chessclockd::dbus::ServeOptions {
                config: test_config(false),
                request_name: true,
                ntp: NtpSource::Fixed(None),
                read_limits: Default::default(),
            },
        )
        .await;
        match second {
            Err(error @ chessclockd::dbus::ServeError::Bus { .. }) => {
                let text = error.to_string();
                assert!(
                    text.starts_with("cannot serve org.chessclockd.ChessClock1 on the session bus"),
                    "{text}"
                );
            }
            other => panic!("expected ServeError::Bus, got {:?}", other.map(|_| ())),
        }
        // The first daemon still owns the name and answers.
        let client = bus.connect().await;
        let manager = chessclockd::dbus::client::ManagerProxy::new(&client)
            .await
            .unwrap();
        assert_eq!(manager.list_boards().await.unwrap().len(), 1);
        let bad = chessclockd::dbus::serve_with(
            bus.builder(),
            fake_runtime(&["board-1"]),
            chessclockd::dbus::ServeOptions {
                config: test_config(false),
                request_name: false,
                ntp: NtpSource::Fixed(None),
                read_limits: Default::default(),
            },
        )
        .await;
        assert!(matches!(
            bad,
            Err(chessclockd::dbus::ServeError::BadBoardId(id)) if id == "board-1"
        ));
    })
    .await
    .expect("test timed out");
}
