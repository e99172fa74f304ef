//! End to end with the reference firmware: the real `chessclockd` binary, a
//! private dbus-daemon, and the RP2040 firmware's logic (`firmware/logic`,
//! the same `Unit`, debouncer, renderer and display drivers) running on the
//! host with fake levers and TM1637 / MAX7219 chip models, on PTYs. What is
//! checked is what a person at the board would see: the digits the chip
//! models decode, the LEDs, and the daemon's record of each press.
//!
//! Serialised (PTYs, buses); every wait has a deadline and waits for a
//! condition. Press instants are the levers' first contact edges on
//! CLOCK_MONOTONIC, the daemon's clock.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use chessclock_firmware::config::{DisplayChip, UnitConfig};
use chessclock_firmware::host::{HostUnit, HostUnitSpec, Snapshot};
use chessclock_protocol::Button;
use chessclockd::engine::{Micros, MS, SECOND};
use serde_json::Value;

use kit::daemon::{devices_linked, Client, Daemon, PrivateBus};

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
const WAIT: Duration = Duration::from_secs(10);

struct Setup {
    dir: tempfile::TempDir,
    bus: PrivateBus,
    buttons: HostUnit,
    display: HostUnit,
    config: PathBuf,
}

impl Setup {
    /// A button unit and a display unit of `display` modules, on one board.
    fn new(control: &str, display: UnitConfig) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let bus = PrivateBus::session_in(dir.path());
        let link = |name: &str| dir.path().join("dev").join(name);
        let buttons = HostUnit::start(HostUnitSpec::new(
            UnitConfig::buttons(),
            link("buttons"),
            [0xB0, 0x77, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01],
            0x0B00_7001,
        ))
        .expect("host button unit");
        let display = HostUnit::start(HostUnitSpec::new(
            display,
            link("display"),
            [0xD1, 0x5B, 0x1A, 0x40, 0x00, 0x00, 0x00, 0x02],
            0x0D15_0001,
        ))
        .expect("host display unit");
        let config = dir.path().join("chessclockd.toml");
        std::fs::write(
            &config,
            format!(
                r#"{daemon}
[[board]]
id = "b1"
control = "{control}"
buttons = "{buttons}"
displays = ["{display}"]
"#,
                daemon = kit::daemon::daemon_table(&dir.path().join("state")),
                buttons = buttons.spec().link.display(),
                display = display.spec().link.display(),
            ),
        )
        .unwrap();
        Setup {
            dir,
            bus,
            buttons,
            display,
            config,
        }
    }

    fn daemon(&self) -> Daemon {
        Daemon::spawn(&self.config, &self.bus, self.dir.path().join("daemon.log"))
    }
}

fn wait(unit: &HostUnit, what: &str, ready: impl Fn(&Snapshot) -> bool) -> Snapshot {
    unit.wait_until(WAIT, ready)
        .unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// Presses on `unit` and waits for the ACK (the daemon committed it).
fn press(unit: &HostUnit, button: Button) -> Micros {
    let at = unit.press(button);
    let before = unit.snapshot().next_event;
    wait(unit, "the press acknowledged", |s| {
        s.next_event != before && s.unacked == 0
    });
    at
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f).await.unwrap()
}

async fn wait_state(client: &Client, what: &str, ready: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        let state = client.state().await;
        if ready(&state) {
            return state;
        }
        assert!(Instant::now() < deadline, "{what}: last state {state}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// `(monotonic instant, event)` of every history event of kind `kind`.
fn events(history: &Value, epoch: Micros, kind: &str) -> Vec<(Micros, Value)> {
    history["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["do"] == kind)
        .map(|e| (e["t_us"].as_i64().unwrap() + epoch, e.clone()))
        .collect()
}

fn within(recorded: Micros, pressed: Micros, bound: Micros) {
    assert!(
        (recorded - pressed).abs() <= bound,
        "press recorded at {recorded} µs, its first edge at {pressed} µs ({} µs apart, bound {bound})",
        recorded - pressed
    );
}

/// The time text a display shows for `remaining_ms` below one hour: the
/// daemon rounds up to the second.
fn clock_text(remaining_ms: i64) -> String {
    let s = (remaining_ms.max(0) + 999) / 1000;
    format!("{}:{:02}", s / 60, s % 60)
}

/// Gives the time mapping a couple of seconds of heartbeats (one slow
/// wake-up of a loaded machine must not set the offset).
async fn let_clock_sync_settle() {
    tokio::time::sleep(Duration::from_secs(2)).await;
}

fn device_connected(state: &Value, role: &str) -> Option<bool> {
    state["devices"]
        .as_array()?
        .iter()
        .find(|d| d["role"] == role)
        .and_then(|d| d["connected"].as_bool())
}

fn tm1637_pair() -> UnitConfig {
    UnitConfig::display(DisplayChip::Tm1637, 2)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn firmware_units_show_the_daemons_times_and_light_the_running_side() {
    let _serial = SERIAL.lock().await;
    let setup = std::sync::Arc::new(Setup::new("60", tm1637_pair()));
    let daemon = setup.daemon();
    let client = Client::connect_when(&setup.bus, &daemon, WAIT, devices_linked).await;
    // Before the start both panels show the full time.
    let s = setup.clone();
    blocking(move || {
        wait(&s.display, "1:00 on both TM1637 modules", |s| {
            s.linked && s.panels == ["1:00", "1:00"]
        })
    })
    .await;

    client.board.start().await.unwrap();
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let s = setup.clone();
    blocking(move || press(&s.buttons, Button::Left)).await;
    // Black runs: its LED on the button unit, its running LED on the display.
    let s = setup.clone();
    let shown = blocking(move || {
        wait(&s.buttons, "black's LED", |s| {
            s.outputs.is_some_and(|o| o.leds.right && !o.leds.left)
        });
        wait(&s.display, "black's running LED", |s| {
            s.outputs.is_some_and(|o| o.running == [false, true])
        })
    })
    .await;
    assert!(!shown.outputs.unwrap().link_lost);

    client.board.pause().await.unwrap();
    let state = client.state().await;
    let white = clock_text(state["white"]["remaining_ms"].as_i64().unwrap());
    let black = clock_text(state["black"]["remaining_ms"].as_i64().unwrap());
    assert_eq!(white, "0:59", "{state}");
    let s = setup.clone();
    let expected = vec![white, black];
    let shown = blocking(move || {
        wait(&s.display, "the paused times", |s| {
            s.panels == expected && s.outputs.is_some_and(|o| o.paused)
        })
    })
    .await;
    assert_eq!(shown.outputs.unwrap().running, [false, false]);
    assert!(shown.chip_updates > 0);
    assert!(daemon.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lever_presses_are_accounted_at_their_first_edge_and_a_spike_is_no_press() {
    let _serial = SERIAL.lock().await;
    let setup = std::sync::Arc::new(Setup::new("60", tm1637_pair()));
    let daemon = setup.daemon();
    let client = Client::connect_when(&setup.bus, &daemon, WAIT, devices_linked).await;
    let_clock_sync_settle().await;
    client.board.start().await.unwrap();
    let epoch = client.state().await["game_epoch_us"].as_i64().unwrap();

    tokio::time::sleep(Duration::from_millis(700)).await;
    let s = setup.clone();
    let (white_pressed, after_glitch) = blocking(move || {
        s.buttons.glitch(Button::Left);
        // The spike settles (as no press) 5 ms after its last edge.
        std::thread::sleep(Duration::from_millis(20));
        let after_glitch = s.buttons.snapshot().next_event;
        (press(&s.buttons, Button::Left), after_glitch)
    })
    .await;
    assert_eq!(after_glitch, 0, "a 1 ms spike must not become a press");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let s = setup.clone();
    let black_pressed = blocking(move || press(&s.buttons, Button::Right)).await;

    let history = client.history().await;
    let presses = events(&history, epoch, "press");
    assert_eq!(presses.len(), 2, "{history}");
    // Bounces went on for 1.4 ms and the debounce for 5 ms more: the
    // accounted instant is the first edge all the same.
    within(presses[0].0, white_pressed, MS);
    within(presses[1].0, black_pressed, MS);
    assert_eq!(presses[0].1["side"], "white");
    assert_eq!(presses[1].1["side"], "black");
    assert_eq!(setup.buttons.snapshot().next_event, 2);
    assert!(daemon.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flag_falls_at_its_instant_and_the_display_shows_it() {
    let _serial = SERIAL.lock().await;
    let setup = std::sync::Arc::new(Setup::new("3", tm1637_pair()));
    let daemon = setup.daemon();
    let client = Client::connect_when(&setup.bus, &daemon, WAIT, devices_linked).await;
    let_clock_sync_settle().await;
    client.board.start().await.unwrap();
    let epoch = client.state().await["game_epoch_us"].as_i64().unwrap();
    let start = events(&client.history().await, epoch, "start")[0].0;

    tokio::time::sleep(Duration::from_millis(700)).await;
    let s = setup.clone();
    blocking(move || press(&s.buttons, Button::Left)).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let s = setup.clone();
    blocking(move || press(&s.buttons, Button::Right)).await;

    let presses = events(&client.history().await, epoch, "press");
    assert_eq!(presses.len(), 2);
    let flag_at = presses[1].0 + 3 * SECOND - (presses[0].0 - start);
    let state = wait_state(&client, "white's flag", |s| {
        s["flags"] == serde_json::json!(["white"])
    })
    .await;
    assert_eq!(state["white"]["flag_ms"], flag_at.div_euclid(MS));
    // White's panel: 0:00 and its flag LED (blinking: it fell first).
    let s = setup.clone();
    let shown = blocking(move || {
        wait(&s.display, "0:00 with white's flag LED", |s| {
            s.panels.first().is_some_and(|p| p == "0:00") && s.outputs.is_some_and(|o| o.flag[0])
        })
    })
    .await;
    assert!(!shown.outputs.unwrap().flag[1], "black's flag did not fall");
    assert!(daemon.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unplugged_units_keep_their_presses_and_come_back_with_the_picture() {
    let _serial = SERIAL.lock().await;
    let setup = std::sync::Arc::new(Setup::new("60", tm1637_pair()));
    let daemon = setup.daemon();
    let client = Client::connect_when(&setup.bus, &daemon, WAIT, devices_linked).await;
    let_clock_sync_settle().await;
    client.board.start().await.unwrap();
    let epoch = client.state().await["game_epoch_us"].as_i64().unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let s = setup.clone();
    let white_pressed = blocking(move || press(&s.buttons, Button::Left)).await;

    setup.buttons.unplug();
    wait_state(&client, "the button unit seen gone", |s| {
        device_connected(s, "buttons") == Some(false)
    })
    .await;
    // The daemon tells the display; the unit blinks its link LED (NO_BUTTONS).
    let s = setup.clone();
    blocking(move || {
        wait(&s.display, "NO BUTTONS shown, not LINK_LOST", |s| {
            s.outputs.is_some_and(|o| o.no_buttons && !o.link_lost)
        })
    })
    .await;
    // Black presses while the cable is out: queued with its stamp.
    let black_pressed = setup.buttons.press(Button::Right);
    let s = setup.clone();
    blocking(move || {
        wait(&s.buttons, "the press queued", |s| {
            s.unacked == 1 && !s.plugged
        })
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    setup.buttons.replug();
    let s = setup.clone();
    blocking(move || {
        wait(&s.buttons, "the queued press acknowledged", |s| {
            s.linked && s.unacked == 0
        })
    })
    .await;
    let history = client.history().await;
    let presses = events(&history, epoch, "press");
    assert_eq!(presses.len(), 2, "{history}");
    within(presses[0].0, white_pressed, MS);
    assert_eq!(presses[1].1["side"], "black");
    // Delivered half a second late, accounted at its first edge. After the
    // replug's HELLO the mapping has only the heartbeats since: allow a few
    // of their transport delays.
    within(presses[1].0, black_pressed, 5 * MS);

    // The display unit unplugged and back: the picture restored at once.
    setup.display.unplug();
    wait_state(&client, "the display seen gone", |s| {
        device_connected(s, "display") == Some(false)
    })
    .await;
    client.board.pause().await.unwrap();
    setup.display.replug();
    let replugged = Instant::now();
    let state = wait_state(&client, "all back", devices_linked).await;
    let expected = vec![
        clock_text(state["white"]["remaining_ms"].as_i64().unwrap()),
        clock_text(state["black"]["remaining_ms"].as_i64().unwrap()),
    ];
    let s = setup.clone();
    blocking(move || {
        wait(&s.display, "the paused picture after the replug", |s| {
            s.linked
                && s.panels == expected
                && s.outputs
                    .is_some_and(|o| o.paused && !o.link_lost && !o.no_buttons)
        })
    })
    .await;
    assert!(replugged.elapsed() < Duration::from_secs(2));
    assert!(daemon.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_power_cycled_unit_starts_a_new_boot_with_event_zero() {
    let _serial = SERIAL.lock().await;
    let setup = std::sync::Arc::new(Setup::new(
        "60",
        UnitConfig::display(DisplayChip::Max7219, 1),
    ));
    let daemon = setup.daemon();
    let client = Client::connect_when(&setup.bus, &daemon, WAIT, devices_linked).await;
    client.board.start().await.unwrap();
    let epoch = client.state().await["game_epoch_us"].as_i64().unwrap();
    let s = setup.clone();
    blocking(move || press(&s.buttons, Button::Left)).await;
    assert_eq!(setup.buttons.snapshot().next_event, 1);
    let old = setup.buttons.snapshot();

    setup.buttons.power_cycle(0x0B00_7002);
    let s = setup.clone();
    let fresh = blocking(move || {
        wait(&s.buttons, "linked after the power cycle", |s| {
            s.boot_id == 0x0B00_7002 && s.linked
        })
    })
    .await;
    assert_eq!(fresh.next_event, 0, "event numbers restart");
    assert!(
        fresh.boot_monotonic_us > old.boot_monotonic_us,
        "the clock restarted"
    );
    wait_state(&client, "buttons back", devices_linked).await;
    let_clock_sync_settle().await;
    // Event 0 again: new, because the boot is new.
    let s = setup.clone();
    let black_pressed = blocking(move || press(&s.buttons, Button::Right)).await;
    let history = client.history().await;
    let presses = events(&history, epoch, "press");
    assert_eq!(presses.len(), 2, "{history}");
    assert_eq!(presses[1].1["side"], "black");
    within(presses[1].0, black_pressed, MS);
    // The one-panel MAX7219 unit shows the left panel: White's time (the
    // MAX7219 has decimal points only, so `:` reads as `.`).
    let state = client.state().await;
    let white = clock_text(state["white"]["remaining_ms"].as_i64().unwrap()).replace(':', ".");
    client.board.pause().await.unwrap();
    let state = client.state().await;
    let white_paused =
        clock_text(state["white"]["remaining_ms"].as_i64().unwrap()).replace(':', ".");
    assert_eq!(white, white_paused, "white's clock is not running");
    let s = setup.clone();
    blocking(move || {
        wait(&s.display, "white's time on the single panel", |s| {
            s.panels == [white_paused.clone()]
        })
    })
    .await;
    assert!(daemon.terminate().success());
}
