//! The packaged service files agree with each other and with the code: the
//! unit runs the binary Cargo builds as the user sysusers creates, with the
//! state directory and bus name the daemon uses; the arbiters' group is the
//! config's default; the hotplug unit's command line parses; the real-time
//! settings are the ones the timing thread needs. (`scripts/ci-packaging`
//! checks the same files with systemd's own tools.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

const UNIT: &str = include_str!("../systemd/chessclockd.service");
const HOTPLUG: &str = include_str!("../systemd/chessclockd-hotplug@.service");
const SYSUSERS: &str = include_str!("../systemd/chessclockd.sysusers");
const RULES: &str = include_str!("../udev/60-chessclockd.rules");
const POSTINST: &str = include_str!("../systemd/debian/postinst");
const BUS_NAME: &str = "org.chessclockd.ChessClock1";

/// `section -> key -> values` (a key may repeat).
fn parse_unit(text: &str) -> BTreeMap<String, BTreeMap<String, Vec<String>>> {
    let mut sections: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    let mut current = String::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = name.to_owned();
            continue;
        }
        let (key, value) = line
            .split_once('=')
            .unwrap_or_else(|| panic!("not a key=value line: {line:?}"));
        sections
            .entry(current.clone())
            .or_default()
            .entry(key.trim().to_owned())
            .or_default()
            .push(value.trim().to_owned());
    }
    sections
}

fn service_values(text: &str, key: &str) -> Vec<String> {
    parse_unit(text)
        .get("Service")
        .and_then(|s| s.get(key))
        .cloned()
        .unwrap_or_default()
}

fn service_value(text: &str, key: &str) -> String {
    let values = service_values(text, key);
    values
        .last()
        .cloned()
        .unwrap_or_else(|| panic!("[Service] has no {key}="))
}

#[test]
fn the_unit_is_a_watched_notify_service() {
    assert_eq!(service_value(UNIT, "Type"), "notify");
    assert_eq!(service_value(UNIT, "NotifyAccess"), "main");
    assert_eq!(service_value(UNIT, "Restart"), "on-failure");
    let watchdog = service_value(UNIT, "WatchdogSec");
    let seconds: u64 = watchdog
        .strip_suffix('s')
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("WatchdogSec={watchdog} is not N s"));
    // The runtime's heartbeat moves at least twice a second and the pings
    // come every half timeout: a few seconds leave room for a slow Pi.
    assert!((4..=60).contains(&seconds), "WatchdogSec={watchdog}");
    assert_eq!(service_value(UNIT, "BusName"), BUS_NAME);
}

#[test]
fn the_unit_lets_only_the_timing_thread_go_real_time() {
    let service = &parse_unit(UNIT)["Service"];
    assert!(service.contains_key("LimitRTPRIO"));
    assert!(service.contains_key("LimitMEMLOCK"));
    // CPUSchedulingPolicy= would make every tokio thread real-time;
    // RestrictRealtime= would forbid SCHED_FIFO altogether.
    assert!(!service.contains_key("CPUSchedulingPolicy"));
    assert!(!service.contains_key("RestrictRealtime"));
    let rtprio: u8 = service_value(UNIT, "LimitRTPRIO").parse().unwrap();
    let default_priority = chessclockd::config::DaemonConfig::default().rt_priority;
    assert!(
        rtprio >= default_priority,
        "LimitRTPRIO={rtprio} is below the config's default rt-priority {default_priority}"
    );
}

#[test]
fn the_unit_reaches_serial_devices_and_nothing_else() {
    assert_eq!(service_value(UNIT, "DevicePolicy"), "closed");
    let allowed = service_values(UNIT, "DeviceAllow");
    assert!(
        allowed.contains(&"char-ttyACM rw".to_owned()),
        "{allowed:?}"
    );
    assert!(
        allowed.contains(&"char-ttyUSB rw".to_owned()),
        "{allowed:?}"
    );
    // Hotplug watches /dev with inotify: a private /dev would hide it.
    assert!(service_values(UNIT, "PrivateDevices").is_empty());
    let groups = [
        service_values(UNIT, "Group"),
        service_values(UNIT, "SupplementaryGroups"),
    ]
    .concat();
    assert!(groups
        .iter()
        .any(|g| g.split_whitespace().any(|g| g == "dialout")));
}

#[test]
fn unit_sysusers_and_config_name_the_same_user_group_and_folders() {
    let user = service_value(UNIT, "User");
    assert!(
        SYSUSERS
            .lines()
            .any(|l| l.split_whitespace().take(2).eq(["u", user.as_str()])),
        "sysusers does not create User={user}"
    );
    assert!(
        SYSUSERS
            .lines()
            .any(|l| l.split_whitespace().eq(["m", user.as_str(), "dialout"])),
        "sysusers does not put {user} in dialout"
    );

    let defaults = chessclockd::config::DaemonConfig::default();
    assert!(
        SYSUSERS.lines().any(|l| l
            .split_whitespace()
            .take(2)
            .eq(["g", defaults.admin_group.as_str()])),
        "sysusers does not create the config's default admin group {}",
        defaults.admin_group
    );
    let state = service_value(UNIT, "StateDirectory");
    assert_eq!(
        Path::new("/var/lib").join(&state),
        defaults.state_dir,
        "StateDirectory= and the config's default state-dir differ"
    );
    let config_dir = service_value(UNIT, "ConfigurationDirectory");
    let exec = service_value(UNIT, "ExecStart");
    assert!(
        exec.contains(&format!("/etc/{config_dir}/")),
        "ExecStart= should read its config from ConfigurationDirectory=: {exec}"
    );
}

#[test]
fn exec_lines_run_binaries_this_crate_builds() {
    let daemon = service_value(UNIT, "ExecStart");
    assert!(daemon.starts_with("/usr/bin/chessclockd "), "{daemon}");
    // Cargo knows the binaries by these names (the test would not link otherwise).
    let built = [
        ("chessclockd", env!("CARGO_BIN_EXE_chessclockd")),
        ("chessclockctl", env!("CARGO_BIN_EXE_chessclockctl")),
    ];
    for (name, path) in built {
        assert!(Path::new(path).ends_with(name));
    }
    for line in service_values(HOTPLUG, "ExecStart")
        .iter()
        .chain(&service_values(HOTPLUG, "ExecStop"))
    {
        let command = line.trim_start_matches(['-', '@', ':', '+', '!']);
        assert!(command.starts_with("/usr/bin/chessclockctl "), "{line}");
    }
}

#[test]
fn the_hotplug_command_lines_parse() {
    // The template's command lines, with the instance filled in, must be
    // accepted by chessclockctl (asked for --help so no bus is needed).
    for line in service_values(HOTPLUG, "ExecStart")
        .iter()
        .chain(&service_values(HOTPLUG, "ExecStop"))
    {
        let command = line
            .trim_start_matches(['-', '@', ':', '+', '!'])
            .replace("%I", "ttyACM0");
        let mut words = command.split_whitespace().skip(1).collect::<Vec<_>>();
        // `device add /dev/ttyACM0 --help` parses every word before --help.
        words.push("--help");
        let output = Command::new(env!("CARGO_BIN_EXE_chessclockctl"))
            .args(&words)
            .output()
            .expect("run chessclockctl");
        assert!(
            output.status.success(),
            "chessclockctl {} failed: {}{}",
            words.join(" "),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[test]
fn the_hotplug_unit_follows_its_device() {
    let unit = &parse_unit(HOTPLUG)["Unit"];
    assert_eq!(unit["BindsTo"], ["dev-%i.device"]);
    assert!(unit["After"].iter().any(|a| a.contains("dev-%i.device")));
    assert_eq!(service_value(HOTPLUG, "Type"), "oneshot");
    assert_eq!(service_value(HOTPLUG, "RemainAfterExit"), "yes");
    assert!(RULES.contains("ENV{SYSTEMD_WANTS}+=\"chessclockd-hotplug@%k.service\""));
}

#[test]
fn udev_rules_name_give_and_hide_our_devices() {
    for needle in [
        "ATTRS{idVendor}==\"1209\"",
        "ATTRS{product}==\"chessclock buttons\"",
        "ATTRS{product}==\"chessclock display\"",
        "ATTRS{product}==\"chessclock combined\"",
        "ATTRS{idVendor}==\"0403\", ATTRS{idProduct}==\"6001\"",
        "SYMLINK+=\"chessclock/$env{CHESSCLOCK_NAME}\"",
        "GROUP=\"dialout\", MODE=\"0660\"",
        "ENV{ID_MM_DEVICE_IGNORE}=\"1\"",
        "TAG+=\"systemd\"",
        "LABEL=\"chessclockd_end\"",
    ] {
        assert!(
            RULES.contains(needle),
            "60-chessclockd.rules lacks {needle}"
        );
    }
}

#[test]
fn postinst_creates_users_then_triggers_udev_then_starts_the_service() {
    let lines: Vec<&str> = POSTINST.lines().collect();
    let first_command = |needle: &str| {
        lines
            .iter()
            .position(|l| !l.trim_start().starts_with('#') && l.contains(needle))
            .unwrap_or_else(|| panic!("postinst does not run {needle}"))
    };
    // cargo-deb puts the generated part (sysusers again, enable, start) at
    // the token, and replaces every occurrence, comments included.
    assert_eq!(POSTINST.matches("#DEBHELPER#").count(), 1);
    let generated = lines
        .iter()
        .position(|l| l.trim() == "#DEBHELPER#")
        .unwrap();
    assert!(first_command("systemd-sysusers") < first_command("udevadm trigger"));
    assert!(
        first_command("udevadm trigger") < generated,
        "udev must be triggered before the generated part starts the service"
    );
}

#[test]
fn the_dbus_policy_lets_the_daemon_user_own_the_name() {
    let policy = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("config/org.chessclockd.ChessClock1.conf"),
    )
    .expect("config/org.chessclockd.ChessClock1.conf (the D-Bus policy) is missing");
    let user = service_value(UNIT, "User");
    let start = policy
        .find(&format!("<policy user=\"{user}\">"))
        .unwrap_or_else(|| panic!("the D-Bus policy has no <policy user=\"{user}\">"));
    let block = &policy[start..start + policy[start..].find("</policy>").unwrap()];
    assert!(
        block.contains(&format!("<allow own=\"{BUS_NAME}\"/>")),
        "the D-Bus policy does not let {user} own {BUS_NAME}"
    );
}
