//! The shipped system-bus policy on a private system-style dbus-daemon, and
//! the daemon's own credential check behind it. Callers run as other users
//! (created if absent: tests run as root in CI) through `setpriv`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;

use chessclockd::dbus::{board_path, NtpSource, BUS_NAME, MANAGER_PATH};
use kit::dbus::*;

const BOARD_IFACE: &str = "org.chessclockd.ChessClock1.Board";
const MEMBER: &str = "ccarbiter";
const OUTSIDER: &str = "ccplayer";
const GROUP: &str = "chessclock";

fn ensure_test_accounts() -> (u32, u32) {
    assert!(
        nix::unistd::geteuid().is_root(),
        "the policy tests create users and switch to them: run them as root"
    );
    if chessclockd::dbus::auth::group_id(GROUP).is_none() {
        let status = std::process::Command::new("groupadd")
            .args(["--system", GROUP])
            .status()
            .expect("groupadd");
        assert!(
            status.success() || chessclockd::dbus::auth::group_id(GROUP).is_some(),
            "groupadd {GROUP} failed"
        );
    }
    for (user, groups) in [(MEMBER, Some(GROUP)), (OUTSIDER, None)] {
        if nix::unistd::User::from_name(user).unwrap().is_none() {
            let mut useradd = std::process::Command::new("useradd");
            useradd.args([
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
            ]);
            if let Some(groups) = groups {
                useradd.args(["--groups", groups]);
            }
            let status = useradd.arg(user).status().expect("useradd");
            assert!(
                status.success() || nix::unistd::User::from_name(user).unwrap().is_some(),
                "useradd {user} failed"
            );
        }
    }
    let uid = |name: &str| {
        nix::unistd::User::from_name(name)
            .unwrap()
            .expect("user exists")
            .uid
            .as_raw()
    };
    let member = uid(MEMBER);
    assert!(
        chessclockd::dbus::auth::groups_of_uid(member)
            .contains(&chessclockd::dbus::auth::group_id(GROUP).unwrap()),
        "{MEMBER} must be in group {GROUP}"
    );
    (member, uid(OUTSIDER))
}

/// Runs `program args` as `user` with that user's groups.
async fn run_as(user: &str, program: &str, args: &[&str]) -> (bool, String, String) {
    let mut command = tokio::process::Command::new("setpriv");
    command
        .args([
            &format!("--reuid={user}"),
            &format!("--regid={user}"),
            "--init-groups",
            "--",
            program,
        ])
        .args(args);
    run_with(&mut command).await
}

fn gdbus_call(bus: &PrivateBus, path: &str, method: &str, args: &[&str]) -> Vec<String> {
    let mut all: Vec<String> = [
        "call",
        "--address",
        &bus.address,
        "--dest",
        BUS_NAME,
        "--object-path",
        path,
        "--timeout",
        "5",
        "--method",
        method,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    all.extend(args.iter().map(|s| s.to_string()));
    all
}

async fn gdbus_as(user: &str, args: Vec<String>) -> (bool, String, String) {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_as(user, "gdbus", &args).await
}

fn shipped_policy() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config/org.chessclockd.ChessClock1.conf")
}

#[tokio::test]
async fn shipped_policy_lets_the_group_change_and_everyone_read() {
    let _serial = BUS_LOCK.lock().await;
    let (member_uid, _) = ensure_test_accounts();
    tokio::time::timeout(TEST_TIMEOUT, async {
        let bus = PrivateBus::system_with_policy(&shipped_policy());
        let handle = fake_runtime(&["b1"]);
        let _server = serve_on_bus(
            &bus,
            handle.clone(),
            test_config(false),
            NtpSource::Fixed(None),
        )
        .await;
        let b1 = board_path("b1");

        // Root may change a clock.
        let (ok, _, err) = gdbus_as(
            "root",
            gdbus_call(&bus, &b1, &format!("{BOARD_IFACE}.Start"), &[]),
        )
        .await;
        assert!(ok, "root: {err}");

        // A member of the group may change a clock; the history has its uid.
        let (ok, _, err) = gdbus_as(
            MEMBER,
            gdbus_call(&bus, &b1, &format!("{BOARD_IFACE}.Press"), &["white"]),
        )
        .await;
        assert!(ok, "{MEMBER}: {err}");
        let entries = history(&handle, "b1").await;
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[1]["uid"], member_uid);
        assert_eq!(snapshot(&handle, "b1").await.white_moves, 1);

        // Anyone else gets AccessDenied from the bus; the clock is unchanged.
        let before = snapshot(&handle, "b1").await;
        for (method, args) in [
            ("Press", vec!["black"]),
            ("Pause", vec![]),
            ("NewGame", vec!["300+2"]),
        ] {
            let (ok, _, err) = gdbus_as(
                OUTSIDER,
                gdbus_call(&bus, &b1, &format!("{BOARD_IFACE}.{method}"), &args),
            )
            .await;
            assert!(!ok, "{OUTSIDER} could call {method}");
            assert!(
                err.contains("org.freedesktop.DBus.Error.AccessDenied"),
                "{method}: {err}"
            );
        }
        let (ok, _, err) = gdbus_as(
            OUTSIDER,
            gdbus_call(
                &bus,
                MANAGER_PATH,
                "org.chessclockd.ChessClock1.Manager.AddDevice",
                &["/dev/ttyACM0"],
            ),
        )
        .await;
        assert!(!ok && err.contains("AccessDenied"), "{err}");
        // chessclockctl explains the refusal; reading works for everyone.
        // A copy other users can reach whatever the checkout's permissions.
        let ctl_copy = bus.dir().join("chessclockctl");
        std::fs::copy(env!("CARGO_BIN_EXE_chessclockctl"), &ctl_copy).unwrap();
        let ctl = ctl_copy.to_str().unwrap();
        let address = format!("--address={}", bus.address);
        let (ok, _, err) = run_as(OUTSIDER, ctl, &[&address, "pause", "b1"]).await;
        assert!(!ok);
        assert!(
            err.contains("changing a clock needs root or membership of group `chessclock`"),
            "{err}"
        );
        assert!(
            err.contains("(org.freedesktop.DBus.Error.AccessDenied)"),
            "{err}"
        );
        let (ok, out, err) = run_as(OUTSIDER, ctl, &[&address, "status", "b1"]).await;
        assert!(ok, "{err}");
        assert!(out.contains("black to move"), "{out}");
        assert_eq!(snapshot(&handle, "b1").await, before);
        assert_eq!(history(&handle, "b1").await.len(), 2);

        // Everyone may read: properties, reading methods, introspection.
        for user in [OUTSIDER, MEMBER] {
            let (ok, out, err) = gdbus_as(
                user,
                gdbus_call(
                    &bus,
                    &b1,
                    "org.freedesktop.DBus.Properties.Get",
                    &[BOARD_IFACE, "WhiteMoves"],
                ),
            )
            .await;
            assert!(ok, "{user}: {err}");
            assert_eq!(out.trim(), "(<uint32 1>,)");
            for method in ["State", "History", "Pgn", "Snapshot"] {
                let (ok, _, err) = gdbus_as(
                    user,
                    gdbus_call(&bus, &b1, &format!("{BOARD_IFACE}.{method}"), &[]),
                )
                .await;
                assert!(ok, "{user} {method}: {err}");
            }
            let (ok, out, err) = gdbus_as(
                user,
                gdbus_call(
                    &bus,
                    MANAGER_PATH,
                    "org.chessclockd.ChessClock1.Manager.ListBoards",
                    &[],
                ),
            )
            .await;
            assert!(ok, "{user}: {err}");
            assert!(out.contains(&b1), "{out}");
            let (ok, out, err) = gdbus_as(
                user,
                gdbus_call(
                    &bus,
                    &b1,
                    "org.freedesktop.DBus.Properties.GetAll",
                    &[BOARD_IFACE],
                ),
            )
            .await;
            assert!(ok, "{user}: {err}");
            assert!(out.contains("'BlackRemainingMs'"), "{out}");
            let (ok, _, err) = run_as(
                user,
                "busctl",
                &[
                    &format!("--address={}", bus.address),
                    "introspect",
                    BUS_NAME,
                    &b1,
                ],
            )
            .await;
            assert!(ok, "{user} introspect: {err}");
        }
    })
    .await
    .expect("test timed out");
}

/// Behind a permissive bus, the daemon still refuses non-members itself.
#[tokio::test]
async fn the_daemon_checks_credentials_itself() {
    let _serial = BUS_LOCK.lock().await;
    let (member_uid, outsider_uid) = ensure_test_accounts();
    tokio::time::timeout(TEST_TIMEOUT, async {
        let dir = tempfile::tempdir().unwrap();
        let permissive = dir.path().join("permissive.conf");
        std::fs::write(
            &permissive,
            format!(
                "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n \
                 \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n\
                 <busconfig><policy context=\"default\">\
                 <allow own=\"{BUS_NAME}\"/><allow send_destination=\"{BUS_NAME}\"/>\
                 </policy></busconfig>\n"
            ),
        )
        .unwrap();
        let bus = PrivateBus::system_with_policy(&permissive);
        let handle = fake_runtime(&["b1"]);
        let _server =
            serve_on_bus(&bus, handle.clone(), test_config(false), NtpSource::Fixed(None)).await;
        let b1 = board_path("b1");

        let (ok, _, err) = gdbus_as(
            OUTSIDER,
            gdbus_call(&bus, &b1, &format!("{BOARD_IFACE}.Start"), &[]),
        )
        .await;
        assert!(!ok);
        assert!(
            err.contains("org.chessclockd.ChessClock1.Error.NotPermitted"),
            "{err}"
        );
        assert!(err.contains(&format!("uid {outsider_uid}")), "{err}");
        assert!(history(&handle, "b1").await.is_empty());
        assert!(!snapshot(&handle, "b1").await.started);

        let (ok, _, err) = gdbus_as(
            MEMBER,
            gdbus_call(&bus, &b1, &format!("{BOARD_IFACE}.Start"), &[]),
        )
        .await;
        assert!(ok, "{err}");
        let entries = history(&handle, "b1").await;
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0]["uid"], member_uid);
    })
    .await
    .expect("test timed out");
}
